//! `sliceKubeconfig`: a ServiceAccount, Roles and RoleBindings in the fake cluster and a bound
//! token, used with the real kube client: it acts in the slice's namespaces only, and asking
//! again revokes the previous one.

use egs_tests::fake_kube::FakeKube;
use egs_tests::kube_backend::KubeBackend;
use egs_tests::on_both_backends;
use egs_tests::{TestApp, fixtures};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use serde_json::{Value, json};

pub(crate) const ISSUE: &str = "mutation($input: SliceKubeconfigInput!) { sliceKubeconfig(input: $input) { kubeconfig serviceAccount namespaces expiresAt userErrors { field message code } } }";

/// A kube client from a kubeconfig EGS returned.
pub(crate) async fn client_from(kubeconfig: &str) -> kube::Client {
    let parsed = kube::config::Kubeconfig::from_yaml(kubeconfig).expect("a valid kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(parsed, &Default::default()).await.expect("a usable kubeconfig");
    kube::Client::try_from(config).expect("a client")
}

pub(crate) async fn pod_names(client: &kube::Client, namespace: &str) -> Result<Vec<String>, u16> {
    let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
    match pods.list(&ListParams::default()).await {
        Ok(list) => Ok(list.items.into_iter().filter_map(|p| p.metadata.name).collect()),
        Err(kube::Error::Api(status)) => Err(status.code),
        Err(other) => panic!("not an API answer: {other}"),
    }
}

/// A Kubernetes cluster with slice `team-a` (namespace `team-a`); returns
/// (cluster id, slice id).
async fn setup(app: &TestApp, kube: &KubeBackend) -> (String, String) {
    kube.add_namespace("team-a").await;
    kube.add_namespace("other").await;
    let cluster = fixtures::register_kube_cluster(app, "kube", &kube.kubeconfig(), "ADMISSION_PLUGINS").await;
    let slice = fixtures::create_slice(app, "team-a", &cluster, json!({})).await;
    (cluster, slice)
}

async fn issue(app: &TestApp, token: &str, slice: &str, cluster: &str) -> Value {
    app.mutate(token, "sliceKubeconfig", ISSUE, json!({ "sliceId": slice, "clusterId": cluster })).await
}

async fn the_kubeconfig_acts_in_the_slice_namespaces_and_nowhere_else(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let (cluster, slice) = setup(&app, &kube).await;
    // A second namespace, not yet on the cluster: EGS creates it.
    app.mutate(
        &app.admin_token,
        "addSliceNamespace",
        "mutation($input: SliceNamespaceInput!) { addSliceNamespace(input: $input) { slice { id } userErrors { field message code } } }",
        json!({ "sliceId": slice, "clusterId": cluster, "name": "team-a-data" }),
    )
    .await;
    kube.add_pod("team-a", "notebook", None, &[], 0, "Pending").await;
    kube.add_pod("other", "secret-job", None, &[], 0, "Pending").await;

    let issued = issue(&app, &app.admin_token, &slice, &cluster).await;
    assert_eq!(issued["serviceAccount"], "team-a/egs-slice-team-a", "{issued}");
    assert_eq!(issued["namespaces"], json!(["team-a", "team-a-data"]));
    assert!(issued["expiresAt"].is_string());

    let kubeconfig = issued["kubeconfig"].as_str().expect("a kubeconfig");
    let parsed = kube::config::Kubeconfig::from_yaml(kubeconfig).expect("a valid kubeconfig");
    let context = parsed.contexts[0].context.as_ref().expect("a context");
    assert!(parsed.auth_infos[0].auth_info.as_ref().is_some_and(|a| a.token.is_some()), "the user is a token");
    assert_eq!(context.namespace.as_deref(), Some("team-a"));
    assert_eq!(parsed.clusters[0].cluster.as_ref().and_then(|c| c.server.as_deref()), Some(kube.url()));

    // The cluster's state: one ServiceAccount, a Role and RoleBinding per namespace.
    assert!(kube.get("serviceaccounts", Some("team-a"), "egs-slice-team-a").await.is_some());
    assert!(kube.get("serviceaccounts", Some("team-a-data"), "egs-slice-team-a").await.is_none());
    assert!(kube.get("namespaces", None, "team-a-data").await.is_some(), "the missing namespace is created");
    for ns in ["team-a", "team-a-data"] {
        let role = kube.get("roles", Some(ns), "egs-slice-team-a").await.unwrap_or_else(|| panic!("a role in {ns}"));
        let rules = role["rules"].to_string();
        for resource in ["pods/log", "deployments", "jobs", "gpuprovisioningrequests"] {
            assert!(rules.contains(resource), "{resource} in {rules}");
        }
        for resource in ["secrets", "pods/exec", "pods/attach", "pods/portforward"] {
            assert!(!rules.contains(resource), "{resource} needs the slice policy: {rules}");
        }
        let binding = kube.get("rolebindings", Some(ns), "egs-slice-team-a").await.unwrap_or_else(|| panic!("a role binding in {ns}"));
        assert_eq!(binding["roleRef"]["name"], "egs-slice-team-a");
        assert_eq!(binding["subjects"], json!([{ "kind": "ServiceAccount", "name": "egs-slice-team-a", "namespace": "team-a" }]));
    }
    assert!(kube.get("roles", Some("other"), "egs-slice-team-a").await.is_none());

    let client = client_from(kubeconfig).await;
    assert_eq!(pod_names(&client, "team-a").await, Ok(vec!["notebook".to_owned()]));
    assert_eq!(pod_names(&client, "team-a-data").await, Ok(vec![]));
    assert_eq!(pod_names(&client, "other").await, Err(403));
    assert_eq!(pod_names(&client, "kube-system").await, Err(403));

    // With the policy on, the next kubeconfig's Role grants Secrets and a way into pods.
    app.mutate(
        &app.admin_token,
        "setSlicePolicy",
        "mutation($input: SetSlicePolicyInput!) { setSlicePolicy(input: $input) { slice { policy { kubeconfigSecretsAndExec } } userErrors { field message code } } }",
        json!({ "sliceId": slice, "policy": { "kubeconfigSecretsAndExec": true } }),
    )
    .await;
    issue(&app, &app.admin_token, &slice, &cluster).await;
    let rules = kube.get("roles", Some("team-a"), "egs-slice-team-a").await.expect("the role")["rules"].to_string();
    for resource in ["secrets", "pods/exec", "pods/attach", "pods/portforward"] {
        assert!(rules.contains(resource), "{resource} in {rules}");
    }
    app.finish().await;
}
on_both_backends!(the_kubeconfig_acts_in_the_slice_namespaces_and_nowhere_else);

async fn asking_again_revokes_the_previous_kubeconfig(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let (cluster, slice) = setup(&app, &kube).await;
    let (_, owner) = fixtures::member(&app, "olga", &slice, "OWNER").await;

    let first = issue(&app, &owner, &slice, &cluster).await;
    let old = client_from(first["kubeconfig"].as_str().expect("kubeconfig")).await;
    assert_eq!(pod_names(&old, "team-a").await, Ok(vec![]));
    let old_uid = kube.get("serviceaccounts", Some("team-a"), "egs-slice-team-a").await.expect("the account")["metadata"]["uid"].clone();

    let second = issue(&app, &owner, &slice, &cluster).await;
    let new = client_from(second["kubeconfig"].as_str().expect("kubeconfig")).await;
    assert_ne!(first["kubeconfig"], second["kubeconfig"]);
    let new_uid = kube.get("serviceaccounts", Some("team-a"), "egs-slice-team-a").await.expect("the account")["metadata"]["uid"].clone();
    assert_ne!(old_uid, new_uid, "the account is made anew");

    // A real API server checks bound tokens against its cache of ServiceAccounts, which
    // learns of the new account (a new uid) within moments, not in the same instant.
    egs_tests::wait_for("the previous kubeconfig to be refused", || async { pod_names(&old, "team-a").await == Err(401) }).await;
    assert_eq!(pod_names(&new, "team-a").await, Ok(vec![]));
    app.finish().await;
}
on_both_backends!(asking_again_revokes_the_previous_kubeconfig);

async fn a_namespace_that_is_not_the_slices_gets_no_role_and_no_label(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let (cluster, slice) = setup(&app, &kube).await;
    // An existing namespace no one handed to the slice, and one that is another slice's.
    kube.add_namespace_labelled("shared-tools", json!({ "team": "platform" })).await;
    kube.add_namespace_labelled("team-b-home", json!({ "egs.io/slice": "team-b" })).await;
    let add = "mutation($input: SliceNamespaceInput!) { addSliceNamespace(input: $input) { slice { id } userErrors { field message code } } }";
    // The gateway's own namespace is refused outright.
    let own = app.ok(&app.admin_token, add, json!({ "input": { "sliceId": slice, "clusterId": cluster, "name": "egs" } })).await;
    assert_eq!(own["addSliceNamespace"]["userErrors"][0]["code"], "INVALID_INPUT", "{own}");
    assert!(own["addSliceNamespace"]["userErrors"][0]["message"].as_str().unwrap_or_default().contains("gateway's own namespace"), "{own}");
    for name in ["shared-tools", "team-b-home"] {
        app.mutate(&app.admin_token, "addSliceNamespace", add, json!({ "sliceId": slice, "clusterId": cluster, "name": name })).await;
        let refused = app.ok(&app.admin_token, ISSUE, json!({ "input": { "sliceId": slice, "clusterId": cluster } })).await;
        let message = refused["sliceKubeconfig"]["userErrors"][0]["message"].as_str().unwrap_or_default().to_owned();
        assert!(refused["sliceKubeconfig"]["kubeconfig"].is_null(), "{refused}");
        assert!(message.contains(name) && (message.contains("not the slice's") || message.contains("belongs to slice `team-b`")), "{message}");
        assert!(kube.get("roles", Some(name), "egs-slice-team-a").await.is_none(), "no Role in {name}");
        assert!(kube.get("rolebindings", Some(name), "egs-slice-team-a").await.is_none(), "no RoleBinding in {name}");
        let labels = kube.get("namespaces", None, name).await.expect("the namespace")["metadata"]["labels"].clone();
        assert_ne!(labels["egs.io/slice"], "team-a", "{name} was not taken: {labels}");
        let remove = "mutation($input: SliceNamespaceInput!) { removeSliceNamespace(input: $input) { slice { id } userErrors { message } } }";
        app.mutate(&app.admin_token, "removeSliceNamespace", remove, json!({ "sliceId": slice, "clusterId": cluster, "name": name })).await;
    }
    // A namespace EGS creates is the slice's and enforces the Pod Security level.
    app.mutate(&app.admin_token, "addSliceNamespace", add, json!({ "sliceId": slice, "clusterId": cluster, "name": "team-a-new" })).await;
    let issued = issue(&app, &app.admin_token, &slice, &cluster).await;
    assert!(issued["kubeconfig"].is_string(), "{issued}");
    let made = kube.get("namespaces", None, "team-a-new").await.expect("created")["metadata"]["labels"].clone();
    assert_eq!((made["egs.io/slice"].as_str(), made["pod-security.kubernetes.io/enforce"].as_str()), (Some("team-a"), Some("baseline")), "{made}");
    app.finish().await;
}
on_both_backends!(a_namespace_that_is_not_the_slices_gets_no_role_and_no_label);

async fn a_kubeconfig_lives_no_longer_than_its_askers_token_or_access(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let (cluster, slice) = setup(&app, &kube).await;
    let (olga_id, olga) = fixtures::member(&app, "olga", &slice, "OWNER").await;
    fixtures::member(&app, "owen", &slice, "OWNER").await;
    // Olga's one-hour token asks for a month: she gets an hour.
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { message } } }";
    let short = app.mutate(&olga, "createToken", create, json!({ "name": "short", "role": "USER", "ttl": "PT1H" })).await["secret"]
        .as_str()
        .expect("a token")
        .to_owned();
    let issued = app.mutate(&short, "sliceKubeconfig", ISSUE, json!({ "sliceId": slice, "clusterId": cluster, "expiresIn": "30d" })).await;
    let left = fixtures::time(&issued["expiresAt"]) - chrono::Utc::now();
    assert!(left <= chrono::Duration::minutes(61), "capped at the asking token's expiry: {issued}");
    let old = client_from(issued["kubeconfig"].as_str().expect("kubeconfig")).await;
    assert_eq!(pod_names(&old, "team-a").await, Ok(vec![]));
    // Demoted, olga's kubeconfig stops working.
    let set_role = "mutation($input: AddSliceMemberInput!) { addSliceMember(input: $input) { slice { id } userErrors { message } } }";
    app.mutate(&app.admin_token, "addSliceMember", set_role, json!({ "sliceId": slice, "userId": olga_id, "role": "EDITOR" })).await;
    egs_tests::wait_for("the demoted owner's kubeconfig to be refused", || async { pod_names(&old, "team-a").await == Err(401) }).await;
    // Removed: the next owner's kubeconfig goes too.
    let (oscar_id, _) = fixtures::member(&app, "oscar", &slice, "OWNER").await;
    let again = issue(&app, &app.admin_token, &slice, &cluster).await;
    let current = client_from(again["kubeconfig"].as_str().expect("kubeconfig")).await;
    assert_eq!(pod_names(&current, "team-a").await, Ok(vec![]));
    let remove = "mutation($input: RemoveSliceMemberInput!) { removeSliceMember(input: $input) { slice { id } userErrors { message } } }";
    app.mutate(&app.admin_token, "removeSliceMember", remove, json!({ "sliceId": slice, "userId": oscar_id })).await;
    egs_tests::wait_for("the kubeconfig to be refused after an owner was removed", || async { pod_names(&current, "team-a").await == Err(401) })
        .await;
    // Deleted: the slice's kubeconfigs go with it, though its namespace stays on the cluster.
    let last = client_from(issue(&app, &app.admin_token, &slice, &cluster).await["kubeconfig"].as_str().expect("kubeconfig")).await;
    assert_eq!(pod_names(&last, "team-a").await, Ok(vec![]));
    let delete = "mutation($input: DeleteSliceInput!) { deleteSlice(input: $input) { slice { id } userErrors { message } } }";
    app.mutate(&app.admin_token, "deleteSlice", delete, json!({ "id": slice })).await;
    egs_tests::wait_for("the kubeconfig to be refused after the slice was deleted", || async { pod_names(&last, "team-a").await == Err(401) }).await;
    app.finish().await;
}
on_both_backends!(a_kubeconfig_lives_no_longer_than_its_askers_token_or_access);

#[tokio::test]
async fn only_admins_and_slice_owners_get_one_and_bad_asks_are_user_errors() {
    let app = TestApp::spawn().await;
    // Fake-only: it injects a refusal below.
    let kube = KubeBackend::start_fake().await;
    let fake = kube.fake().expect("the fake");
    let (cluster, slice) = setup(&app, &kube).await;
    let (_, viewer) = fixtures::member(&app, "vera", &slice, "VIEWER").await;
    let (_, editor) = fixtures::member(&app, "eddie", &slice, "EDITOR").await;
    let other_slice = fixtures::create_slice(&app, "team-b", &cluster, json!({})).await;
    let (_, stranger) = fixtures::member(&app, "sam", &other_slice, "OWNER").await;
    let input = json!({ "input": { "sliceId": slice, "clusterId": cluster } });

    for (token, code) in [(&viewer, "FORBIDDEN"), (&editor, "FORBIDDEN"), (&stranger, "NOT_FOUND")] {
        let refused = app.gql(token, ISSUE, input.clone()).await;
        assert_eq!(refused["errors"][0]["extensions"]["code"], code, "{refused}");
    }
    assert!(fake.get("serviceaccounts", Some("team-a"), "egs-slice-team-a").is_none(), "nothing was written");

    // No namespace on that cluster.
    let elsewhere = fixtures::register_kube_cluster(&app, "kube-2", &fake.kubeconfig(), "ADMISSION_PLUGINS").await;
    let none = app.ok(&app.admin_token, ISSUE, json!({ "input": { "sliceId": slice, "clusterId": elsewhere } })).await;
    assert_eq!(none["sliceKubeconfig"]["kubeconfig"], Value::Null);
    assert_eq!(none["sliceKubeconfig"]["userErrors"][0]["field"], json!(["input", "clusterId"]), "{none}");
    assert!(none["sliceKubeconfig"]["userErrors"][0]["message"].as_str().is_some_and(|m| m.contains("no namespace")), "{none}");

    // A lifetime beyond a year.
    let long = app.ok(&app.admin_token, ISSUE, json!({ "input": { "sliceId": slice, "clusterId": cluster, "expiresIn": "400d" } })).await;
    assert_eq!(long["sliceKubeconfig"]["userErrors"][0]["field"], json!(["input", "expiresIn"]), "{long}");

    // A simulated cluster has no API server to issue one.
    let simulated = fixtures::register_cluster(&app, "sim").await;
    let sim = app.ok(&app.admin_token, ISSUE, json!({ "input": { "sliceId": slice, "clusterId": simulated } })).await;
    assert_eq!(sim["sliceKubeconfig"]["userErrors"][0]["code"], "INVALID_INPUT", "{sim}");

    // The cluster refusing is a user error too, not a crash.
    fake.fail_next("POST", "/serviceaccounts", 403, 1);
    let refused = app.ok(&app.admin_token, ISSUE, json!({ "input": { "sliceId": slice, "clusterId": cluster, "expiresIn": "1h" } })).await;
    assert_eq!(refused["sliceKubeconfig"]["userErrors"][0]["field"], json!(["input", "clusterId"]), "{refused}");

    let owner_ok = issue(&app, &app.admin_token, &slice, &cluster).await;
    assert!(owner_ok["kubeconfig"].is_string());
    app.finish().await;
}

#[tokio::test]
async fn a_proxy_password_in_a_kubeconfig_never_reaches_an_error() {
    let app = TestApp::spawn().await;
    let fake = FakeKube::start().await;
    fake.add_namespace("team-a");
    // The cluster is reached through a proxy that is not there, with a password in its URL.
    let kubeconfig = fake.kubeconfig().replace("    server:", "    proxy-url: http://alice:s3cret-proxy@127.0.0.1:9\n    server:");
    let cluster = fixtures::register_kube_cluster(&app, "kube", &kubeconfig, "ADMISSION_PLUGINS").await;
    let slice = fixtures::create_slice(&app, "team-a", &cluster, json!({})).await;
    let body = app.gql(&app.admin_token, ISSUE, json!({ "input": { "sliceId": slice, "clusterId": cluster } })).await;
    let text = body.to_string();
    assert!(body["data"]["sliceKubeconfig"]["userErrors"][0]["message"].is_string() || body["errors"][0].is_object(), "it fails: {body}");
    assert!(!text.contains("s3cret-proxy") && !text.contains("alice:"), "the proxy password is echoed: {body}");
    app.finish().await;
}

#[tokio::test]
async fn the_pod_security_level_of_slice_namespaces_is_a_setting() {
    let app = TestApp::spawn_with(|settings| settings.kubernetes.slice_pod_security = "restricted".into()).await;
    let kube = KubeBackend::start_fake().await;
    let (cluster, slice) = setup(&app, &kube).await;
    let add = "mutation($input: SliceNamespaceInput!) { addSliceNamespace(input: $input) { slice { id } userErrors { field message code } } }";
    app.mutate(&app.admin_token, "addSliceNamespace", add, json!({ "sliceId": slice, "clusterId": cluster, "name": "team-a-strict" })).await;
    assert!(issue(&app, &app.admin_token, &slice, &cluster).await["kubeconfig"].is_string());
    let made = kube.get("namespaces", None, "team-a-strict").await.expect("created")["metadata"]["labels"].clone();
    assert_eq!(made["pod-security.kubernetes.io/enforce"], "restricted", "{made}");
    app.finish().await;
}
