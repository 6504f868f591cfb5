//! GraphQL over HTTP as the spec says: media types, status codes, GET for queries only.

use egs_tests::{GRAPHQL_RESPONSE_JSON, TestApp};
use serde_json::{Value, json};

async fn read(response: reqwest::Response) -> (u16, String, Value) {
    let status = response.status().as_u16();
    let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let body = response.json().await.unwrap_or(Value::Null);
    (status, content_type, body)
}

#[tokio::test]
async fn a_document_that_does_not_parse_is_400_with_no_data_entry() {
    let app = TestApp::spawn().await;
    let (status, content_type, body) = read(app.post(Some(&app.admin_token), json!({ "query": "{ viewer { id " })).await).await;
    assert_eq!(status, 400);
    assert!(content_type.starts_with(GRAPHQL_RESPONSE_JSON), "{content_type}");
    assert!(body.get("data").is_none(), "a request error has no data entry: {body}");
    assert_eq!(body["errors"][0]["extensions"]["code"], "INVALID_INPUT");
    app.finish().await;
}

#[tokio::test]
async fn an_invalid_document_is_400_for_graphql_response_json_and_200_for_plain_json() {
    let app = TestApp::spawn().await;
    let query = json!({ "query": "{ viewer { noSuchField } }" });
    let (status, _, body) = read(app.post(Some(&app.admin_token), query.clone()).await).await;
    assert_eq!(status, 400);
    assert!(body["errors"][0]["message"].as_str().unwrap_or_default().contains("noSuchField"), "{body}");

    let legacy = app
        .client
        .post(app.url("/graphql"))
        .header("accept", "application/json")
        .bearer_auth(&app.admin_token)
        .json(&query)
        .send()
        .await
        .expect("answer");
    let (status, content_type, body) = read(legacy).await;
    assert_eq!(status, 200, "legacy clients get 200");
    assert!(content_type.starts_with("application/json"), "{content_type}");
    assert!(body["errors"].is_array());
    app.finish().await;
}

#[tokio::test]
async fn malformed_json_batches_and_wrong_content_types_are_refused_clearly() {
    let app = TestApp::spawn().await;
    let send = |content_type: &'static str, payload: &'static str| {
        app.client
            .post(app.url("/graphql"))
            .header("accept", GRAPHQL_RESPONSE_JSON)
            .header("content-type", content_type)
            .bearer_auth(&app.admin_token)
            .body(payload)
            .send()
    };
    let (status, _, body) = read(send("application/json", "{\"query\": ").await.expect("answer")).await;
    assert_eq!(status, 400);
    assert!(body["errors"][0]["message"].as_str().unwrap_or_default().contains("not valid JSON"), "{body}");

    let (status, _, body) = read(send("application/json", "[{\"query\":\"{ viewer { id } }\"}]").await.expect("answer")).await;
    assert_eq!(status, 400);
    assert!(body["errors"][0]["message"].as_str().unwrap_or_default().contains("batched"), "{body}");

    let (status, _, _) = read(send("text/plain", "{ viewer { id } }").await.expect("answer")).await;
    assert_eq!(status, 415);

    let (status, _, body) = read(send("application/json", "{\"query\": 42}").await.expect("answer")).await;
    assert_eq!(status, 400, "{body}");
    app.finish().await;
}

#[tokio::test]
async fn get_runs_queries_and_refuses_mutations_with_405() {
    let app = TestApp::spawn().await;
    let get = |query: &str| {
        app.client.get(app.url("/graphql")).query(&[("query", query)]).header("accept", GRAPHQL_RESPONSE_JSON).bearer_auth(&app.admin_token).send()
    };
    let (status, _, body) = read(get("{ viewer { name role } }").await.expect("answer")).await;
    assert_eq!(status, 200);
    assert_eq!(body["data"]["viewer"], json!({ "name": "admin", "role": "ADMIN" }));

    let response = get("mutation { createUser(input: { name: \"mallory\" }) { user { id } } }").await.expect("answer");
    assert_eq!(response.status().as_u16(), 405);
    assert_eq!(response.headers().get("allow").and_then(|v| v.to_str().ok()), Some("POST"));
    let users = app.ok(&app.admin_token, "{ users { name } }", json!({})).await;
    assert_eq!(users["users"], json!([{ "name": "admin" }]), "the mutation sent over GET changed nothing");
    app.finish().await;
}

#[tokio::test]
async fn unacceptable_accept_header_is_406() {
    let app = TestApp::spawn().await;
    let response = app
        .client
        .post(app.url("/graphql"))
        .header("accept", "text/csv")
        .bearer_auth(&app.admin_token)
        .json(&json!({ "query": "{ viewer { id } }" }))
        .send()
        .await
        .expect("answer");
    assert_eq!(response.status().as_u16(), 406);
    app.finish().await;
}

#[tokio::test]
async fn oversized_bodies_are_413_and_deep_or_costly_queries_are_refused_before_execution() {
    let app = TestApp::spawn().await;
    let huge = format!("{{ viewer {{ id }} }} #{}", "x".repeat(2 * 1024 * 1024));
    let response = app.post(Some(&app.admin_token), json!({ "query": huge })).await;
    assert_eq!(response.status().as_u16(), 413);
    assert!(response.headers()["content-type"].to_str().unwrap_or_default().contains("json"), "a JSON body");
    let body: Value = response.json().await.expect("JSON, not plain text");
    assert_eq!(body["errors"][0]["extensions"]["code"], "INVALID_INPUT", "{body}");

    let deep = format!("{{ gprs {{ edges {{ node {{ {} id {} }} }} }} }}", "slice { gprs { edges { node { ".repeat(6), "} } } } ".repeat(6));
    let (status, _, body) = read(app.post(Some(&app.admin_token), json!({ "query": deep })).await).await;
    assert_eq!(status, 400, "{body}");
    assert!(body["errors"][0]["message"].as_str().unwrap_or_default().to_lowercase().contains("nested"), "{body}");
    app.finish().await;
}

#[tokio::test]
async fn the_playground_is_served_offline_with_its_own_assets() {
    let app = TestApp::spawn().await;
    let page = app.client.get(app.url("/graphql")).header("accept", "text/html").send().await.expect("answer");
    assert_eq!(page.status().as_u16(), 200);
    let html = page.text().await.expect("html");
    assert!(html.contains("/graphql/assets/graphiql.js") && html.contains("/graphql/assets/graphiql.css"), "{html}");
    assert!(!html.contains("https://") && !html.contains("http://"), "the page loads nothing from the internet: {html}");
    for (asset, kind) in [("graphiql.js", "text/javascript"), ("graphiql.css", "text/css")] {
        let response = app.client.get(app.url(&format!("/graphql/assets/{asset}"))).send().await.expect("answer");
        assert_eq!(response.status().as_u16(), 200, "{asset}");
        assert!(response.headers()["content-type"].to_str().unwrap_or_default().starts_with(kind));
        let text = response.text().await.expect("asset");
        assert!(text.len() > 100_000, "{asset} is the real bundle");
        for cdn in ["unpkg.com", "cdn.jsdelivr.net/npm/graphiql", "fonts.googleapis.com"] {
            assert!(!text.contains(cdn), "{asset} refers to {cdn}");
        }
    }
    app.finish().await;
}

#[tokio::test]
async fn the_portal_is_served_at_the_root_and_on_its_routes_with_its_assets() {
    let app = TestApp::spawn().await;
    let page = app.client.get(app.url("/")).header("accept", "text/html").send().await.expect("answer");
    assert_eq!(page.status().as_u16(), 200);
    let csp = page.headers()["content-security-policy"].to_str().unwrap_or_default().to_owned();
    assert!(csp.contains("default-src 'self'") && csp.contains("connect-src 'self' ws: wss:"), "{csp}");
    assert!(csp.contains("frame-ancestors 'none'"), "the portal cannot be framed: {csp}");
    let playground = app.client.get(app.url("/graphql")).header("accept", "text/html").send().await.expect("answer");
    let csp = playground.headers().get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    assert!(csp.contains("frame-ancestors 'none'"), "nor can the playground: {csp}");
    assert_eq!(page.headers()["cache-control"], "no-cache");
    let html = page.text().await.expect("html");
    assert!(!html.contains("https://") && !html.contains("http://"), "the portal loads nothing from the internet: {html}");
    // The built page names its hashed script and stylesheet; both are served with their types.
    let assets: Vec<&str> = html.split('"').filter(|part| part.starts_with("/assets/")).collect();
    assert!(assets.iter().any(|a| a.ends_with(".js")) && assets.iter().any(|a| a.ends_with(".css")), "{html}");
    for asset in assets {
        let response = app.client.get(app.url(asset)).send().await.expect("answer");
        assert_eq!(response.status().as_u16(), 200, "{asset}");
        let kind = response.headers()["content-type"].to_str().unwrap_or_default().to_owned();
        assert!(kind.starts_with(if asset.ends_with(".js") { "text/javascript" } else { "text/css" }), "{asset}: {kind}");
        assert!(response.headers()["cache-control"].to_str().unwrap_or_default().contains("immutable"));
        let text = response.text().await.expect("asset");
        assert!(!text.contains("fonts.googleapis.com") && !text.contains("unpkg.com"), "{asset} loads from the internet");
        // Browsers that take gzip get it (this client does not decompress, so the bytes are raw).
        let zipped = app.client.get(app.url(asset)).header("accept-encoding", "gzip").send().await.expect("answer");
        assert_eq!(zipped.headers().get("content-encoding").map(|v| v.to_str().unwrap_or_default()), Some("gzip"), "{asset}");
        assert!(zipped.bytes().await.expect("bytes").len() < text.len() / 2, "{asset} compresses");
    }
    // A browser opening a portal route gets the app, which routes on the client…
    let route = app.client.get(app.url("/queue/U2xpY2U6MQ")).header("accept", "text/html,application/xhtml+xml").send().await.expect("answer");
    assert_eq!(route.status().as_u16(), 200);
    assert_eq!(route.text().await.expect("html"), html);
    // …while API clients get plain 404s for paths that do not exist.
    for (method, path) in [("GET", "/no-such-thing"), ("POST", "/queue/1"), ("GET", "/assets/missing.js")] {
        let request = app.client.request(method.parse().expect("method"), app.url(path)).header("accept", "application/json");
        let response = request.send().await.expect("answer");
        assert_eq!(response.status().as_u16(), 404, "{method} {path}");
    }
    app.finish().await;
}
