//! Tokens: every malformed, forged, expired or revoked token is refused with 401.

use egs_tests::TestApp;
use egs_tests::fixtures::{self, TwoSlices};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

fn signing_key(app: &TestApp) -> Vec<u8> {
    std::fs::read_to_string(app.data_dir.join("signing.key")).expect("the gateway keeps its key in the data dir").trim().as_bytes().to_vec()
}

fn claims_of(token: &str) -> Value {
    use base64::Engine;
    let payload = token.split('.').nth(1).expect("a JWT");
    serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload).expect("base64")).expect("json")
}

async fn status_with(app: &TestApp, token: &str) -> (u16, Value) {
    let response = app.post(Some(token), json!({ "query": "{ viewer { name } }" })).await;
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn forged_expired_and_foreign_tokens_are_refused() {
    let app = TestApp::spawn().await;
    let key = signing_key(&app);
    let good = claims_of(&app.admin_token);
    let now = chrono::Utc::now().timestamp();
    let sign =
        |claims: &Value, alg: Algorithm, key: &[u8]| jsonwebtoken::encode(&Header::new(alg), claims, &EncodingKey::from_secret(key)).expect("sign");

    let mut expired = good.clone();
    expired["exp"] = json!(now - 3600);
    let mut early = good.clone();
    early["nbf"] = json!(now + 3600);
    let mut foreign = good.clone();
    foreign["aud"] = json!("someone-else");
    let mut unknown = good.clone();
    unknown["jti"] = json!("not-a-token-we-issued");
    let tampered = {
        let mut parts: Vec<String> = app.admin_token.split('.').map(str::to_owned).collect();
        use base64::Engine;
        let mut claims = good.clone();
        claims["role"] = json!("ADMIN");
        claims["sub"] = json!("mallory");
        parts[1] = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(claims.to_string());
        parts.join(".")
    };
    let none_alg = {
        use base64::Engine;
        let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        format!("{}.{}.", engine.encode(r#"{"alg":"none","typ":"JWT"}"#), engine.encode(good.to_string()))
    };
    // The same token with one character of its signature changed.
    let resigned = {
        let (head, signature) = app.admin_token.rsplit_once('.').expect("a JWT");
        let mut signature: Vec<char> = signature.chars().collect();
        signature[0] = if signature[0] == 'A' { 'B' } else { 'A' };
        format!("{head}.{}", signature.into_iter().collect::<String>())
    };
    // The good token first, so that its verification is cached when its forgeries arrive.
    assert_eq!(status_with(&app, &app.admin_token).await.0, 200);
    let cases = [
        ("signature changed", resigned, "signature"),
        ("expired", sign(&expired, Algorithm::HS256, &key), "expired"),
        ("not yet valid", sign(&early, Algorithm::HS256, &key), "not valid yet"),
        ("wrong audience", sign(&foreign, Algorithm::HS256, &key), "not issued for EGS"),
        ("wrong key", sign(&good, Algorithm::HS256, b"another-key-another-key-another-key!!"), "signature"),
        ("wrong algorithm", sign(&good, Algorithm::HS512, &key), "algorithm"),
        ("unknown id", sign(&unknown, Algorithm::HS256, &key), "not known"),
        ("tampered", tampered, "signature"),
        ("alg none", none_alg, ""),
        ("garbage", "not-a-jwt".to_owned(), "malformed"),
    ];
    for (case, token, why) in cases {
        let (status, body) = status_with(&app, &token).await;
        assert_eq!(status, 401, "{case}: {body}");
        assert_eq!(body["errors"][0]["extensions"]["code"], "UNAUTHENTICATED", "{case}: {body}");
        assert!(body["errors"][0]["message"].as_str().unwrap_or_default().contains(why), "{case}: {body}");
        assert!(body.get("data").is_none(), "{case}");
    }
    app.finish().await;
}

#[tokio::test]
async fn no_token_can_introspect_but_not_read() {
    let app = TestApp::spawn().await;
    let response = app.post(None, json!({ "query": "{ __schema { queryType { name } } }" })).await;
    assert_eq!(response.status().as_u16(), 200);
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["data"]["__schema"]["queryType"]["name"], "Query");

    let body: Value = app.post(None, json!({ "query": "{ slices { totalCount } }" })).await.json().await.expect("json");
    assert_eq!(body["errors"][0]["extensions"]["code"], "UNAUTHENTICATED", "{body}");
    assert_eq!(body["data"], Value::Null);
    app.finish().await;
}

#[tokio::test]
async fn a_revoked_token_stops_working_at_once() {
    let app = TestApp::spawn().await;
    let TwoSlices { token_a, .. } = fixtures::two_slices(&app).await;
    assert_eq!(status_with(&app, &token_a).await.0, 200);
    let tokens = app.ok(&token_a, "{ viewer { token { id } } }", json!({})).await;
    let id = tokens["viewer"]["token"]["id"].clone();
    app.mutate(
        &app.admin_token,
        "revokeToken",
        "mutation($input: RevokeTokenInput!) { revokeToken(input: $input) { token { revokedAt } userErrors { field message code } } }",
        json!({ "id": id }),
    )
    .await;
    let (status, body) = status_with(&app, &token_a).await;
    assert_eq!(status, 401, "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap_or_default().contains("revoked"), "{body}");
    app.finish().await;
}

#[tokio::test]
async fn users_list_and_revoke_only_their_own_tokens() {
    let app = TestApp::spawn().await;
    let two = fixtures::two_slices(&app).await;
    let mine = app.ok(&two.token_a, "{ tokens { totalCount edges { node { user { name } } } } }", json!({})).await;
    assert_eq!(mine["tokens"]["totalCount"], 1, "{mine}");
    assert_eq!(mine["tokens"]["edges"][0]["node"]["user"]["name"], "alice");

    let bobs = app.ok(&two.token_b, "{ viewer { token { id } } }", json!({})).await["viewer"]["token"]["id"].clone();
    let attempt = app
        .gql(
            &two.token_a,
            "mutation($input: RevokeTokenInput!) { revokeToken(input: $input) { token { id } userErrors { code } } }",
            json!({ "input": { "id": bobs } }),
        )
        .await;
    assert_eq!(attempt["errors"][0]["extensions"]["code"], "NOT_FOUND", "{attempt}");
    assert_eq!(status_with(&app, &two.token_b).await.0, 200, "bob's token still works");
    app.finish().await;
}

#[tokio::test]
async fn a_user_cannot_mint_an_admin_token_or_widen_a_scoped_one() {
    let app = TestApp::spawn().await;
    let two = fixtures::two_slices(&app).await;
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { field code message } } }";
    let body = app.gql(&two.token_a, create, json!({ "input": { "name": "escalate", "role": "ADMIN" } })).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "FORBIDDEN", "{body}");

    let body = app
        .gql(
            &two.token_a,
            create,
            json!({ "input": { "name": "other-slice", "role": "USER", "sliceScopes": [{ "sliceId": two.slice_b, "role": "VIEWER" }] } }),
        )
        .await;
    assert_eq!(body["data"]["createToken"]["userErrors"][0]["code"], "INVALID_INPUT", "{body}");
    assert_eq!(body["data"]["createToken"]["secret"], Value::Null);

    let viewer_only = app
        .mutate(
            &two.token_a,
            "createToken",
            create,
            json!({ "name": "read-only", "role": "USER", "sliceScopes": [{ "sliceId": two.slice_a, "role": "VIEWER" }] }),
        )
        .await["secret"]
        .as_str()
        .expect("secret")
        .to_owned();
    let refused = app
        .gql(&viewer_only, fixtures::CREATE_GPR, json!({ "input": { "sliceId": two.slice_a, "name": "x", "nodeCount": 1, "duration": "1h" } }))
        .await;
    assert_eq!(refused["errors"][0]["extensions"]["code"], "FORBIDDEN", "a viewer-scoped token cannot create GPRs: {refused}");
    app.finish().await;
}

/// Tokens in steady use (a fleet of agents) are read again together once their cached records
/// age, not one read per token: ten tokens cost two statements (the tokens, their users), not
/// twelve.
#[tokio::test]
async fn tokens_in_steady_use_are_read_again_together() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let two = fixtures::two_slices(&app).await;
    let cluster = fixtures::register_cluster(&app, "fleet").await;
    fixtures::add_nodes(&app, &cluster, "n", 8, fixtures::SHAPE_H100, 1).await;
    let mut tokens = vec![two.token_a.clone(), two.token_b.clone()];
    for n in 0..8 {
        tokens.push(fixtures::agent_token(&app, &cluster, &format!("n-{n}")).await);
    }
    let typename = async |token: &str| app.post(Some(token), json!({ "query": "{ __typename }" })).await.status().as_u16();
    for token in &tokens {
        assert_eq!(typename(token).await, 200);
    }
    // Past the cache's period (5 s): every record must be read again before its next use.
    tokio::time::sleep(std::time::Duration::from_millis(5_100)).await;
    let before = app.statements.get();
    for token in &tokens {
        assert_eq!(typename(token).await, 200);
    }
    let spent = app.statements.get() - before;
    // Two, and room for a background tailer's poll landing in between.
    assert!(spent <= 4, "{spent} statements to read {} tokens' records again", tokens.len());
    app.finish().await;
}

#[tokio::test]
async fn a_revocation_reaches_every_replica_at_once() {
    let first = TestApp::spawn().await;
    let second = first.spawn_replica().await;
    let two = fixtures::two_slices(&first).await;
    // The second replica has now cached alice's token as valid.
    assert_eq!(status_with(&second, &two.token_a).await.0, 200);
    let id = first.ok(&two.token_a, "{ viewer { token { id } } }", json!({})).await["viewer"]["token"]["id"].clone();
    first
        .mutate(
            &first.admin_token,
            "revokeToken",
            "mutation($input: RevokeTokenInput!) { revokeToken(input: $input) { token { id } userErrors { code } } }",
            json!({ "id": id }),
        )
        .await;
    if std::env::var("EGS_TEST_REDIS_URL").is_ok_and(|u| !u.is_empty()) {
        // Through Redis: well inside the 5 s the replica would otherwise trust its cache.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
        loop {
            let (status, _) = status_with(&second, &two.token_a).await;
            if status == 401 {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "the second replica still accepts a revoked token");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    } else {
        // Without Redis a replica trusts its cache for at most the cache TTL.
        tokio::time::sleep(std::time::Duration::from_millis(5_100)).await;
        assert_eq!(status_with(&second, &two.token_a).await.0, 401);
    }
    second.finish().await;
    first.finish().await;
}

#[tokio::test]
async fn an_agent_token_reports_only_its_own_node_and_reads_nothing() {
    let app = TestApp::spawn().await;
    let two = fixtures::two_slices(&app).await;
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { field message code } } }";
    let agent = app
        .mutate(
            &app.admin_token,
            "createToken",
            create,
            json!({ "name": "agent h100-0", "role": "AGENT", "clusterId": two.cluster, "nodeName": "h100-0" }),
        )
        .await["secret"]
        .as_str()
        .expect("secret")
        .to_owned();
    let upsert = "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { name lastHeartbeatAt } userErrors { code } } }";
    let node = |name: &str| json!({ "name": name, "instanceType": "p5.48xlarge", "gpuShape": fixtures::SHAPE_H100, "gpusPerNode": 8, "gpuMemoryMib": 81559 });
    let own = app.mutate(&agent, "upsertNodes", upsert, json!({ "clusterId": two.cluster, "nodes": [node("h100-0")] })).await;
    assert!(own["nodes"][0]["lastHeartbeatAt"].is_string(), "an agent's report is a heartbeat: {own}");

    let other = app.gql(&agent, upsert, json!({ "input": { "clusterId": two.cluster, "nodes": [node("h100-1")] } })).await;
    assert_eq!(other["errors"][0]["extensions"]["code"], "FORBIDDEN", "{other}");
    for query in ["{ slices { totalCount } }", "{ gprs { totalCount } }", "{ clusters { name } }"] {
        let body = app.gql(&agent, query, json!({})).await;
        assert_eq!(body["errors"][0]["extensions"]["code"], "FORBIDDEN", "{query}: {body}");
    }
    app.finish().await;
}

#[tokio::test]
async fn cors_allows_only_the_configured_origins() {
    let app = TestApp::spawn_with(|settings| settings.cors_origins = vec!["https://portal.example".into()]).await;
    let preflight = |origin: &'static str| {
        app.client
            .request(reqwest::Method::OPTIONS, app.url("/graphql"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "authorization,content-type")
            .send()
    };
    let allowed = preflight("https://portal.example").await.expect("answer");
    assert_eq!(allowed.headers().get("access-control-allow-origin").and_then(|v| v.to_str().ok()), Some("https://portal.example"));
    let refused = preflight("https://evil.example").await.expect("answer");
    assert!(refused.headers().get("access-control-allow-origin").is_none());
    app.finish().await;
}

#[tokio::test]
async fn introspection_can_be_switched_off() {
    let queries = ["{ __schema { queryType { name } } }", r#"{ __type(name: "Gpr") { name } }"#];
    let open = TestApp::spawn().await;
    let closed = TestApp::spawn_with(|settings| settings.no_introspection = true).await;
    for query in queries {
        let answered = open.ok(&open.admin_token, query, json!({})).await;
        assert!(answered.to_string().contains("Query") || answered.to_string().contains("Gpr"), "on by default: {answered}");
        // Switched off, the schema is not described to anyone (admins included).
        let refused = closed.ok(&closed.admin_token, query, json!({})).await;
        assert!(refused.as_object().is_some_and(|fields| fields.values().all(Value::is_null)), "{query}: {refused}");
    }
    // Everything else works as before.
    let viewer = closed.ok(&closed.admin_token, "{ viewer { role } }", json!({})).await;
    assert_eq!(viewer["viewer"]["role"], "ADMIN");
    open.finish().await;
    closed.finish().await;
}

#[tokio::test]
async fn a_token_minted_with_a_token_expires_with_it_is_revoked_with_it_and_a_scoped_one_manages_only_itself() {
    let app = TestApp::spawn().await;
    let two = fixtures::two_slices(&app).await;
    let create =
        "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret token { id expiresAt } userErrors { field code message } } }";
    let mint = |token: String, input: Value| {
        let app = &app;
        async move { app.mutate(&token, "createToken", create, input).await }
    };
    let tokens = |token: String| {
        let app = &app;
        async move {
            let data = app.ok(&token, "{ tokens(first: 50) { nodes { id } } }", json!({})).await;
            data["tokens"]["nodes"].as_array().expect("tokens").iter().map(|t| t["id"].as_str().expect("id").to_owned()).collect::<Vec<_>>()
        }
    };
    // A two-minute token mints a two-year one: the child lives no longer than its parent.
    let short = mint(two.token_a.clone(), json!({ "name": "short", "role": "USER", "ttl": "2m" })).await;
    let short_secret = short["secret"].as_str().expect("secret").to_owned();
    let long = mint(short_secret.clone(), json!({ "name": "long", "role": "USER", "ttl": "730d" })).await;
    let long_secret = long["secret"].as_str().expect("secret").to_owned();
    let (short_end, long_end) = (short["token"]["expiresAt"].as_str().expect("at"), long["token"]["expiresAt"].as_str().expect("at"));
    let parse = |t: &str| chrono::DateTime::parse_from_rfc3339(t).expect("time");
    assert!(parse(long_end) <= parse(short_end), "the child outlives its parent: {long_end} > {short_end}");
    assert_eq!(status_with(&app, &long_secret).await.0, 200);

    // The parent's revocation takes the child (and its children) with it.
    let grandchild = mint(long_secret.clone(), json!({ "name": "grandchild", "role": "USER" })).await["secret"].as_str().expect("secret").to_owned();
    let revoke = "mutation($input: RevokeTokenInput!) { revokeToken(input: $input) { token { id } userErrors { code } } }";
    app.mutate(&app.admin_token, "revokeToken", revoke, json!({ "id": short["token"]["id"] })).await;
    assert_eq!(status_with(&app, &long_secret).await.0, 401, "the child is revoked with its parent");
    assert_eq!(status_with(&app, &grandchild).await.0, 401, "and its child too");

    // A viewer-scoped token lists only itself and what it minted, and cannot revoke the others.
    let viewer =
        mint(two.token_a.clone(), json!({ "name": "viewer", "role": "USER", "sliceScopes": [{ "sliceId": two.slice_a, "role": "VIEWER" }] })).await;
    let viewer_secret = viewer["secret"].as_str().expect("secret").to_owned();
    let all = tokens(two.token_a.clone()).await;
    assert!(all.len() >= 4, "alice's own token sees all her tokens: {all:?}");
    let seen = tokens(viewer_secret.clone()).await;
    assert_eq!(seen, vec![viewer["token"]["id"].as_str().expect("id").to_owned()], "the viewer token sees only itself");
    let others = app.ok(&two.token_a, "{ viewer { token { id } } }", json!({})).await["viewer"]["token"]["id"].clone();
    let body = app.gql(&viewer_secret, revoke, json!({ "input": { "id": others } })).await;
    let code = body["data"]["revokeToken"]["userErrors"][0]["code"].clone();
    let code = if code.is_null() { body["errors"][0]["extensions"]["code"].clone() } else { code };
    assert_eq!(code, "NOT_FOUND", "{body}");
    assert_eq!(status_with(&app, &two.token_a).await.0, 200, "alice's main token still works");
    app.finish().await;
}
