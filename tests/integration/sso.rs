//! Single sign-on with a real OpenID Provider (panva's oidc-provider, started on loopback): the
//! authorization code flow with PKCE walked as a browser walks it, users made on their first
//! sign-in, the admins' group rules granting and taking back slice roles and the admin role,
//! and forged or replayed callbacks signing nobody in.

use egs_tests::fixtures::*;
use egs_tests::{OidcProvider, TestApp};
use reqwest::redirect::Policy;
use serde_json::{Value, json};

const VIEWER: &str = "{ viewer { id name role memberships { role slice { name } } } }";
const CREATE_RULE: &str = "mutation($input: CreateSsoGroupRuleInput!) { createSsoGroupRule(input: $input) { rule { id group role grantsAdmin slice { name } } userErrors { field message code } } }";
const DELETE_RULE: &str =
    "mutation($input: SsoGroupRuleRef!) { deleteSsoGroupRule(input: $input) { rule { id } userErrors { field message code } } }";

/// A gateway whose single sign-on uses a provider on `port` (started after, as it must know
/// the gateway's callback URL).
async fn gateway(port: u16) -> (TestApp, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let secret = dir.path().join("client-secret");
    std::fs::write(&secret, OidcProvider::CLIENT_SECRET).expect("the secret file");
    let app = TestApp::spawn_with(|s| {
        s.oidc.issuer = Some(format!("http://127.0.0.1:{port}"));
        s.oidc.client_id = Some(OidcProvider::CLIENT_ID.into());
        s.oidc.client_secret_file = Some(secret);
        s.oidc.scopes = "openid profile email groups".into();
        s.oidc.groups_claim = "groups".into();
    })
    .await;
    (app, dir)
}

/// Where a redirect points, made absolute.
fn location(from: &reqwest::Url, response: &reqwest::Response) -> reqwest::Url {
    let to = response.headers()[reqwest::header::LOCATION].to_str().expect("a location");
    from.join(to).expect("a URL")
}

/// The value of `name` in a form of the provider's page.
fn form_field<'a>(html: &'a str, marker: &str) -> Option<&'a str> {
    let start = html.find(marker)? + marker.len();
    Some(&html[start..start + html[start..].find('"')?])
}

/// What the browser ends on: the session token, or the error the portal is told.
#[derive(Debug, PartialEq)]
enum Outcome {
    Token(String),
    Error(String),
}

/// Walks a browser through sign-in as `login` (the provider's development pages take any
/// login and password, then ask for consent): from the gateway to the provider and back.
/// `stop_at_callback` returns the callback URL instead of following it (to replay it).
async fn walk(browser: &reqwest::Client, start: reqwest::Url, login: &str, stop_at_callback: bool) -> Result<Outcome, reqwest::Url> {
    let mut url = start;
    let mut form: Option<Vec<(&str, String)>> = None;
    for _ in 0..20 {
        let response = match form.take() {
            Some(fields) => browser.post(url.clone()).form(&fields).send().await,
            None => browser.get(url.clone()).send().await,
        }
        .expect("the request");
        if response.status().is_redirection() {
            let next = location(&url, &response);
            if let Some(fragment) = next.fragment() {
                if let Some(token) = fragment.strip_prefix("sso-token=") {
                    return Ok(Outcome::Token(token.to_owned()));
                }
                if let Some(error) = fragment.strip_prefix("sso-error=") {
                    let decoded: String = url::form_urlencoded::parse(format!("e={error}").as_bytes()).map(|(_, v)| v.into_owned()).collect();
                    return Ok(Outcome::Error(decoded));
                }
            }
            if stop_at_callback && next.path() == "/auth/oidc/callback" {
                return Err(next);
            }
            url = next;
            continue;
        }
        let html = response.text().await.expect("a page");
        let action = form_field(&html, "action=\"").unwrap_or_else(|| panic!("a form on {url}: {html}"));
        url = url.join(action).expect("the form's URL");
        form = Some(match form_field(&html, "name=\"prompt\" value=\"") {
            Some("login") => vec![("prompt", "login".into()), ("login", login.to_owned()), ("password", "any".into())],
            Some("consent") => vec![("prompt", "consent".into())],
            other => panic!("an unexpected prompt {other:?}: {html}"),
        });
    }
    panic!("sign-in did not finish in 20 steps");
}

fn new_browser() -> reqwest::Client {
    reqwest::Client::builder().cookie_store(true).redirect(Policy::none()).build().expect("a client")
}

async fn sign_in(app: &TestApp, login: &str) -> Outcome {
    let start = reqwest::Url::parse(&app.url("/auth/oidc/login")).expect("a URL");
    walk(&new_browser(), start, login, false).await.expect("not stopped")
}

async fn token(app: &TestApp, login: &str) -> String {
    match sign_in(app, login).await {
        Outcome::Token(token) => token,
        other => panic!("{login} was not signed in: {other:?}"),
    }
}

fn memberships(viewer: &Value) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = viewer["memberships"]
        .as_array()
        .expect("memberships")
        .iter()
        .map(|m| (m["slice"]["name"].as_str().unwrap_or_default().to_owned(), m["role"].as_str().unwrap_or_default().to_owned()))
        .collect();
    found.sort();
    found
}

#[tokio::test]
async fn signing_in_makes_the_user_once_and_the_group_rules_grant_and_take_back_roles() {
    let port = OidcProvider::reserve_port();
    let (app, _secret) = gateway(port).await;
    let groups = json!({ "alice": ["ml-team", "everyone"], "root": ["platform"], "eve": ["everyone"], "carol": [] });
    let _provider = OidcProvider::start(port, &app.url("/auth/oidc/callback"), groups).await;
    let info: Value = reqwest::get(app.url("/auth/oidc")).await.expect("info").json().await.expect("json");
    assert_eq!(info["enabled"], true);

    let cluster = register_cluster(&app, "c1").await;
    let team_a = create_slice(&app, "team-a", &cluster, json!({})).await;
    let team_b = create_slice(&app, "team-b", &cluster, json!({})).await;
    let ml =
        app.mutate(&app.admin_token, "createSsoGroupRule", CREATE_RULE, json!({ "group": "ml-team", "sliceId": team_a, "role": "EDITOR" })).await;
    assert_eq!(ml["rule"]["slice"]["name"], "team-a");
    app.mutate(&app.admin_token, "createSsoGroupRule", CREATE_RULE, json!({ "group": "platform", "grantsAdmin": true })).await;
    app.mutate(&app.admin_token, "createSsoGroupRule", CREATE_RULE, json!({ "group": "everyone", "sliceId": team_b, "role": "VIEWER" })).await;

    // alice: made on her first sign-in, with what her groups grant.
    let alice = token(&app, "alice").await;
    let me = app.ok(&alice, VIEWER, json!({})).await["viewer"].clone();
    assert_eq!((me["name"].as_str(), me["role"].as_str()), (Some("alice"), Some("USER")));
    assert_eq!(memberships(&me), vec![("team-a".into(), "EDITOR".into()), ("team-b".into(), "VIEWER".into())]);
    // Signing in again is the same user, with one more session.
    let again = token(&app, "alice").await;
    assert_ne!(again, alice);
    assert_eq!(app.ok(&again, VIEWER, json!({})).await["viewer"]["id"], me["id"]);

    // The platform group's members are admins; the rest are users.
    let root = token(&app, "root").await;
    assert_eq!(app.ok(&root, "{ viewer { role } users { name } }", json!({})).await["viewer"]["role"], "ADMIN");
    let eve = token(&app, "eve").await;
    assert_eq!(memberships(&app.ok(&eve, VIEWER, json!({})).await["viewer"]), vec![("team-b".into(), "VIEWER".into())]);
    let refused = app.gql(&eve, "{ users { name } }", json!({})).await;
    assert_eq!(refused["errors"][0]["extensions"]["code"], "FORBIDDEN");

    // A local user's name is never taken over: the identity gets a name of its own.
    app.mutate(
        &app.admin_token,
        "createUser",
        "mutation($input: CreateUserInput!) { createUser(input: $input) { user { id } userErrors { field message code } } }",
        json!({ "name": "carol" }),
    )
    .await;
    let carol = token(&app, "carol").await;
    assert_eq!(app.ok(&carol, VIEWER, json!({})).await["viewer"]["name"], "carol-2");

    // An owner's grant is the owner's: a rule taken away takes back only what rules gave.
    let users = app.ok(&app.admin_token, "{ users { id name } }", json!({})).await;
    let alice_id = users["users"].as_array().expect("users").iter().find(|u| u["name"] == "alice").expect("alice")["id"].clone();
    let other = create_slice(&app, "team-c", &cluster, json!({})).await;
    app.mutate(
        &app.admin_token,
        "addSliceMember",
        "mutation($input: AddSliceMemberInput!) { addSliceMember(input: $input) { slice { id } userErrors { field message code } } }",
        json!({ "sliceId": other, "userId": alice_id, "role": "VIEWER" }),
    )
    .await;
    let removed = app.mutate(&app.admin_token, "deleteSsoGroupRule", DELETE_RULE, json!({ "id": ml["rule"]["id"] })).await;
    assert_eq!(removed["rule"]["id"], ml["rule"]["id"]);
    let later = token(&app, "alice").await;
    assert_eq!(
        memberships(&app.ok(&later, VIEWER, json!({})).await["viewer"]),
        vec![("team-b".into(), "VIEWER".into()), ("team-c".into(), "VIEWER".into())]
    );
    // Her earlier sessions see the change too: team-a's GPRs are hidden from them now.
    let hidden = app.gql(&alice, "query($id: ID!) { slice(id: $id) { name } }", json!({ "id": team_a })).await;
    assert_eq!(hidden["errors"][0]["extensions"]["code"], "NOT_FOUND", "{hidden}");

    // Groups that stop making someone an admin take the admin tokens back (while some rule
    // grants the admin role, the rules manage it; with none, an admin's choice stands).
    let platform = app.ok(&app.admin_token, "{ ssoGroupRules { id group } }", json!({})).await["ssoGroupRules"]
        .as_array()
        .expect("rules")
        .iter()
        .find(|r| r["group"] == "platform")
        .expect("the platform rule")["id"]
        .clone();
    app.mutate(&app.admin_token, "deleteSsoGroupRule", DELETE_RULE, json!({ "id": platform })).await;
    let kept = token(&app, "root").await;
    assert_eq!(app.ok(&kept, "{ viewer { role } }", json!({})).await["viewer"]["role"], "ADMIN", "no rule manages the admin role now");
    app.mutate(&app.admin_token, "createSsoGroupRule", CREATE_RULE, json!({ "group": "security", "grantsAdmin": true })).await;
    let demoted = token(&app, "root").await;
    assert_eq!(app.ok(&demoted, "{ viewer { role } }", json!({})).await["viewer"]["role"], "USER");
    let old = app.gql(&root, "{ users { name } }", json!({})).await;
    assert_eq!(old["errors"][0]["extensions"]["code"], "UNAUTHENTICATED", "the old admin session was revoked: {old}");
    app.finish().await;
}

/// Kubeconfigs outlive no access they were issued under when the groups take it back: an
/// owner the rules demote loses the slice's, an admin they no longer make one loses those
/// issued as an admin; one issued by someone who keeps access stays.
#[tokio::test]
async fn groups_that_take_back_ownership_or_the_admin_role_revoke_the_kubeconfigs_issued_under_it() {
    use super::slice_kubeconfig::{ISSUE, client_from, pod_names};
    let port = OidcProvider::reserve_port();
    let (app, _secret) = gateway(port).await;
    let groups = json!({ "root": ["platform"], "olga": ["team-owners"] });
    let _provider = OidcProvider::start(port, &app.url("/auth/oidc/callback"), groups).await;
    let kube = egs_tests::fake_kube::FakeKube::start().await;
    for ns in ["team-a", "team-b", "team-c"] {
        kube.add_namespace_labelled(ns, json!({ "egs.io/slice": ns }));
    }
    let cluster = register_kube_cluster(&app, "kube", &kube.kubeconfig(), "ADMISSION_PLUGINS").await;
    let team_a = create_slice(&app, "team-a", &cluster, json!({})).await;
    let team_b = create_slice(&app, "team-b", &cluster, json!({})).await;
    let team_c = create_slice(&app, "team-c", &cluster, json!({})).await;
    // A second owner, so the rule's grant is not team-a's last owner (which it keeps).
    member(&app, "owen", &team_a, "OWNER").await;
    let owners =
        app.mutate(&app.admin_token, "createSsoGroupRule", CREATE_RULE, json!({ "group": "team-owners", "sliceId": team_a, "role": "OWNER" })).await;
    let platform = app.mutate(&app.admin_token, "createSsoGroupRule", CREATE_RULE, json!({ "group": "platform", "grantsAdmin": true })).await;

    let olga = token(&app, "olga").await;
    let root = token(&app, "root").await;
    let kubeconfig =
        |issued: Value| async move { client_from(issued["kubeconfig"].as_str().unwrap_or_else(|| panic!("a kubeconfig: {issued}"))).await };
    let of_olga = kubeconfig(app.mutate(&olga, "sliceKubeconfig", ISSUE, json!({ "sliceId": team_a, "clusterId": cluster })).await).await;
    let of_root = kubeconfig(app.mutate(&root, "sliceKubeconfig", ISSUE, json!({ "sliceId": team_b, "clusterId": cluster })).await).await;
    let of_local_admin =
        kubeconfig(app.mutate(&app.admin_token, "sliceKubeconfig", ISSUE, json!({ "sliceId": team_c, "clusterId": cluster })).await).await;
    for (client, ns) in [(&of_olga, "team-a"), (&of_root, "team-b"), (&of_local_admin, "team-c")] {
        assert_eq!(pod_names(client, ns).await, Ok(vec![]), "{ns} works at first");
    }

    // The rules change; each is told at their next sign-in.
    app.mutate(&app.admin_token, "deleteSsoGroupRule", DELETE_RULE, json!({ "id": owners["rule"]["id"] })).await;
    app.mutate(&app.admin_token, "deleteSsoGroupRule", DELETE_RULE, json!({ "id": platform["rule"]["id"] })).await;
    app.mutate(&app.admin_token, "createSsoGroupRule", CREATE_RULE, json!({ "group": "security", "grantsAdmin": true })).await;
    token(&app, "olga").await;
    egs_tests::wait_for("the demoted owner's kubeconfig to be refused", || async { pod_names(&of_olga, "team-a").await == Err(401) }).await;
    let demoted = token(&app, "root").await;
    assert_eq!(app.ok(&demoted, "{ viewer { role } }", json!({})).await["viewer"]["role"], "USER");
    egs_tests::wait_for("the demoted admin's kubeconfig to be refused", || async { pod_names(&of_root, "team-b").await == Err(401) }).await;
    // The local admin's stays: nobody who issued it lost anything.
    assert_eq!(pod_names(&of_local_admin, "team-c").await, Ok(vec![]));
    // Nor is it recorded as anyone's but the local admin's: root's record went with his.
    use sea_orm::EntityTrait;
    let left = || async {
        egs_entities::slice_kubeconfig::Entity::find().all(&app.db).await.expect("rows").into_iter().map(|k| k.service_account).collect::<Vec<_>>()
    };
    egs_tests::wait_for("the revoked kubeconfigs' records to go", || async { left().await == ["team-c/egs-slice-team-c"] }).await;

    // A demotion whose revocation never ran (the gateway stopped between the two) is finished
    // at the next sign-in, whatever that sign-in changes: olga owns team-b by hand, issues a
    // kubeconfig, and her membership is changed under the gateway.
    use sea_orm::{ActiveModelTrait, ColumnTrait, QueryFilter, Set};
    let olga_now = token(&app, "olga").await;
    let olga_id = app.ok(&olga_now, "{ viewer { id } }", json!({})).await["viewer"]["id"].as_str().expect("an id").to_owned();
    let add = "mutation($input: AddSliceMemberInput!) { addSliceMember(input: $input) { slice { id } userErrors { message } } }";
    app.mutate(&app.admin_token, "addSliceMember", add, json!({ "sliceId": team_b, "userId": olga_id, "role": "OWNER" })).await;
    let on_b = kubeconfig(app.mutate(&olga_now, "sliceKubeconfig", ISSUE, json!({ "sliceId": team_b, "clusterId": cluster })).await).await;
    assert_eq!(pod_names(&on_b, "team-b").await, Ok(vec![]));
    let olga_row =
        egs_entities::user::Entity::find().filter(egs_entities::user::Column::Name.eq("olga")).one(&app.db).await.expect("users").expect("olga");
    let team_b_row = egs_entities::slice::Entity::find()
        .filter(egs_entities::slice::Column::Name.eq("team-b"))
        .one(&app.db)
        .await
        .expect("slices")
        .expect("team-b");
    let membership =
        egs_entities::slice_member::Entity::find_by_id((team_b_row.id, olga_row.id)).one(&app.db).await.expect("members").expect("olga's");
    let mut demoted_by_hand: egs_entities::slice_member::ActiveModel = membership.into();
    demoted_by_hand.role = Set(egs_entities::SliceRole::Viewer);
    demoted_by_hand.update(&app.db).await.expect("demoted");
    assert_eq!(pod_names(&on_b, "team-b").await, Ok(vec![]), "nothing has told the gateway yet");
    token(&app, "olga").await;
    egs_tests::wait_for("the unfinished revocation to be finished", || async { pod_names(&on_b, "team-b").await == Err(401) }).await;
    app.finish().await;
}

#[tokio::test]
async fn only_verified_unclaimed_e_mails_are_stored_and_an_ambiguous_address_adds_nobody() {
    let port = OidcProvider::reserve_port();
    let (app, _secret) = gateway(port).await;
    let _provider = OidcProvider::start(port, &app.url("/auth/oidc/callback"), json!({})).await;
    let create_user = "mutation($input: CreateUserInput!) { createUser(input: $input) { user { id } userErrors { field message code } } }";
    // An admin gave Pat's address to Pat's local account.
    let pat = app.mutate(&app.admin_token, "createUser", create_user, json!({ "name": "pat-local", "email": "Pat@Example.com" })).await;
    let pat_id = pat["user"]["id"].as_str().expect("an id").to_owned();
    // Nobody else may have it, whatever its case.
    let taken = app.ok(&app.admin_token, create_user, json!({ "input": { "name": "other", "email": "pat@example.COM" } })).await;
    assert_eq!(taken["createUser"]["userErrors"][0]["code"], "CONFLICT", "{taken}");

    // An identity whose provider vouches for pat@example.com does not take it from her, one
    // the provider did not verify stores none, and a free verified one is stored.
    token(&app, "pat").await;
    token(&app, "unverified-sam").await;
    token(&app, "quinn").await;
    let users = app.ok(&app.admin_token, "{ users { name email } }", json!({})).await;
    let email_of = |name: &str| users["users"].as_array().into_iter().flatten().find(|u| u["name"] == name).map(|u| u["email"].clone());
    assert_eq!(email_of("pat-local"), Some(json!("Pat@Example.com")), "{users}");
    assert_eq!(email_of("pat"), Some(Value::Null), "{users}");
    assert_eq!(email_of("unverified-sam"), Some(Value::Null), "{users}");
    assert_eq!(email_of("quinn"), Some(json!("quinn@example.com")), "{users}");

    // Adding a member by the address finds its one holder.
    let cluster = register_cluster(&app, "c1").await;
    let slice = create_slice(&app, "team", &cluster, json!({})).await;
    let add = "mutation($input: AddSliceMemberInput!) { addSliceMember(input: $input) { slice { members { user { id } role } } userErrors { field message code } } }";
    let added = app.mutate(&app.admin_token, "addSliceMember", add, json!({ "sliceId": slice, "user": "PAT@example.com", "role": "EDITOR" })).await;
    let members = added["slice"]["members"].as_array().expect("members").clone();
    assert!(members.iter().any(|m| m["user"]["id"] == pat_id.as_str() && m["role"] == "EDITOR"), "{added}");
    // Two holders (stored before addresses were unique): refused, nobody added.
    use sea_orm::{ActiveModelTrait, Set};
    egs_entities::user::ActiveModel {
        name: Set("legacy-dup".into()),
        email: Set(Some("quinn@EXAMPLE.com".into())),
        role: Set(egs_entities::Role::User),
        created_at: Set(chrono::Utc::now()),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .expect("a legacy duplicate");
    let ambiguous = app.ok(&app.admin_token, add, json!({ "input": { "sliceId": slice, "user": "quinn@example.com", "role": "EDITOR" } })).await;
    assert_eq!(ambiguous["addSliceMember"]["userErrors"][0]["code"], "CONFLICT", "{ambiguous}");
    assert!(ambiguous["addSliceMember"]["userErrors"][0]["message"].as_str().unwrap_or_default().contains("more than one user"), "{ambiguous}");
    let after = app.ok(&app.admin_token, "query($id: ID!) { slice(id: $id) { members { user { name } } } }", json!({ "id": slice })).await;
    let names: Vec<&str> = after["slice"]["members"].as_array().into_iter().flatten().filter_map(|m| m["user"]["name"].as_str()).collect();
    assert!(!names.contains(&"quinn") && !names.contains(&"legacy-dup"), "{after}");
    app.finish().await;
}

#[tokio::test]
async fn tokens_made_with_a_session_say_they_end_with_it_and_an_admins_agent_tokens_do_not() {
    let port = OidcProvider::reserve_port();
    let (app, _secret) = gateway(port).await;
    let _provider = OidcProvider::start(port, &app.url("/auth/oidc/callback"), json!({ "root": ["platform"] })).await;
    app.mutate(&app.admin_token, "createSsoGroupRule", CREATE_RULE, json!({ "group": "platform", "grantsAdmin": true })).await;
    let cluster = register_cluster(&app, "c1").await;
    let session = token(&app, "root").await;
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret notice token { expiresAt } userErrors { message } } }";
    let hours_left = |token: &Value| (time(&token["expiresAt"]) - chrono::Utc::now()).num_hours();
    let ci = app.mutate(&session, "createToken", create, json!({ "name": "ci", "role": "ADMIN", "ttl": "P30D" })).await;
    assert!(hours_left(&ci["token"]) <= 12, "capped by the session: {ci}");
    let notice = ci["notice"].as_str().unwrap_or_default();
    assert!(notice.contains("single sign-on session") && notice.contains("12 h") && notice.contains("not when asked"), "{ci}");
    let agent = app.mutate(&session, "createToken", create, json!({ "name": "agents", "role": "AGENT", "clusterId": cluster, "ttl": "P30D" })).await;
    assert!(hours_left(&agent["token"]) > 29 * 24, "an admin's agent token lives as asked: {agent}");
    assert!(agent["notice"].is_null(), "{agent}");
    // Signing in six more times prunes the session: the CI token goes with it, the agent's stays.
    for _ in 0..6 {
        token(&app, "root").await;
    }
    let ci_secret = ci["secret"].as_str().expect("secret");
    let gone = app.gql(ci_secret, "{ viewer { name } }", json!({})).await;
    assert_eq!(gone["errors"][0]["extensions"]["code"], "UNAUTHENTICATED", "{gone}");
    let report = "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { id } userErrors { message } } }";
    let node = json!({ "clusterId": cluster, "nodes": [{ "name": "n1", "instanceType": "p5", "gpuShape": "H100", "gpusPerNode": 1, "gpuMemoryMib": 81559 }] });
    app.mutate(agent["secret"].as_str().expect("secret"), "upsertNodes", report, node).await;
    app.finish().await;
}

#[tokio::test]
async fn a_forged_replayed_or_refused_sign_in_signs_nobody_in_and_rules_are_for_admins() {
    let port = OidcProvider::reserve_port();
    let (app, _secret) = gateway(port).await;
    let _provider = OidcProvider::start(port, &app.url("/auth/oidc/callback"), json!({ "mallory": ["platform"] })).await;
    let count_users = || async { app.ok(&app.admin_token, "{ users { name } }", json!({})).await["users"].as_array().map_or(0, Vec::len) };
    let before = count_users().await;

    // A callback that did not start here (no state cookie), or with another state.
    let browser = new_browser();
    let bare = browser.get(app.url("/auth/oidc/callback?code=x&state=y")).send().await.expect("callback");
    let error = location(&reqwest::Url::parse(&app.url("/")).expect("url"), &bare);
    assert!(error.fragment().is_some_and(|f| f.starts_with("sso-error=")), "{error}");
    let start = reqwest::Url::parse(&app.url("/auth/oidc/login")).expect("a URL");
    let callback = walk(&browser, start.clone(), "mallory", true).await.expect_err("stopped at the callback");
    let mut forged = callback.clone();
    let pairs: Vec<(String, String)> =
        callback.query_pairs().map(|(k, v)| (k.to_string(), if k == "state" { "forged".into() } else { v.into_owned() })).collect();
    forged.query_pairs_mut().clear().extend_pairs(pairs);
    let refused = walk(&browser, forged, "mallory", false).await.expect("followed");
    assert!(matches!(&refused, Outcome::Error(e) if e.contains("did not start here")), "{refused:?}");
    // The real callback, replayed after the forged one cleared the cookie: refused too.
    assert!(matches!(walk(&browser, callback, "mallory", false).await.expect("followed"), Outcome::Error(_)));
    assert_eq!(count_users().await, before, "nobody was made");

    // A callback works once: replayed, it is refused (its state went with the cookie).
    let browser = new_browser();
    let callback = walk(&browser, start, "mallory", true).await.expect_err("stopped at the callback");
    let answered = browser.get(callback.clone()).send().await.expect("the callback");
    let signed_in = location(&callback, &answered);
    assert!(signed_in.fragment().is_some_and(|f| f.starts_with("sso-token=")), "{signed_in}");
    assert!(matches!(walk(&browser, callback, "mallory", false).await.expect("followed"), Outcome::Error(_)), "a replay");
    assert_eq!(count_users().await, before + 1);

    // The rules are the admins', and bad ones change nothing.
    let cluster = register_cluster(&app, "c1").await;
    let slice = create_slice(&app, "team-a", &cluster, json!({})).await;
    let mallory = token(&app, "mallory").await;
    let forbidden = app.gql(&mallory, CREATE_RULE, json!({ "input": { "group": "x", "grantsAdmin": true } })).await;
    assert_eq!(forbidden["errors"][0]["extensions"]["code"], "FORBIDDEN");
    assert_eq!(app.gql(&mallory, "{ ssoGroupRules { id } }", json!({})).await["errors"][0]["extensions"]["code"], "FORBIDDEN");
    for (input, field) in [
        (json!({ "group": "", "grantsAdmin": true }), "group"),
        (json!({ "group": "g", "sliceId": slice, "role": "OWNER", "grantsAdmin": true }), "grantsAdmin"),
        (json!({ "group": "g" }), "sliceId"),
        (json!({ "group": "g", "sliceId": slice }), "role"),
    ] {
        let answer = app.ok(&app.admin_token, CREATE_RULE, json!({ "input": input })).await["createSsoGroupRule"].clone();
        assert_eq!(answer["userErrors"][0]["field"], json!(["input", field]), "{input}: {answer}");
    }
    let made = app.mutate(&app.admin_token, "createSsoGroupRule", CREATE_RULE, json!({ "group": "g", "sliceId": slice, "role": "VIEWER" })).await;
    let twice = app.ok(&app.admin_token, CREATE_RULE, json!({ "input": { "group": "g", "sliceId": slice, "role": "EDITOR" } })).await;
    assert_eq!(twice["createSsoGroupRule"]["userErrors"][0]["code"], "CONFLICT");
    let rules = app.ok(&app.admin_token, "{ ssoGroupRules { id } }", json!({})).await["ssoGroupRules"].clone();
    assert_eq!(rules, json!([{ "id": made["rule"]["id"] }]), "only the good rule was stored");
    app.finish().await;
}

#[tokio::test]
async fn without_an_issuer_single_sign_on_is_off_and_says_so() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let info: Value = reqwest::get(app.url("/auth/oidc")).await.expect("info").json().await.expect("json");
    assert_eq!(info["enabled"], false);
    let response = new_browser().get(app.url("/auth/oidc/login")).send().await.expect("login");
    let to = location(&reqwest::Url::parse(&app.url("/")).expect("url"), &response);
    assert!(to.fragment().is_some_and(|f| f.starts_with("sso-error=") && f.contains("not%20configured") || f.contains("not+configured")), "{to}");
    app.finish().await;
}
