//! Health, readiness and metrics endpoints.

use egs_tests::TestApp;
use egs_tests::api_only;
use serde_json::{Value, json};

#[tokio::test]
async fn healthz_and_readyz_report_the_database_and_migrations() {
    let app = TestApp::spawn().await;
    let health = app.client.get(app.url("/healthz")).send().await.expect("answer");
    assert_eq!(health.status().as_u16(), 200);
    let expected_redis = if std::env::var("EGS_TEST_REDIS_URL").is_ok_and(|u| !u.is_empty()) { "ok" } else { "not configured" };
    // Redis is checked in the background; its first answer comes within a second.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let body = loop {
        let ready = app.client.get(app.url("/readyz")).send().await.expect("answer");
        assert_eq!(ready.status().as_u16(), 200);
        let body: Value = ready.json().await.expect("json");
        if body["redis"] != "unknown" || std::time::Instant::now() > deadline {
            break body;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert_eq!(body["ready"], true, "{body}");
    assert_eq!(body["status"], "ok", "{body}");
    assert_eq!(body["database"], "ok");
    assert_eq!(body["migrations"], "ok");
    assert_eq!(body["redis"], expected_redis);
    assert_eq!(body["degraded"], json!([]));
    app.finish().await;
}

#[tokio::test]
async fn metrics_count_requests_by_operation_and_gprs_by_phase() {
    let app = TestApp::spawn_with(api_only).await;
    let two = egs_tests::fixtures::two_slices(&app).await;
    egs_tests::fixtures::create_gpr(&app, &two.token_a, &two.slice_a, "one", json!({})).await;
    // A name the portal sends is its own label.
    app.ok(&app.admin_token, "query CreateGprSlices { viewer { id } }", json!({})).await;
    let text = app.metrics_text().await;
    assert!(text.contains("egs_graphql_requests_total{operation=\"CreateGprSlices\",type=\"query\",outcome=\"ok\"} 1"), "{text}");
    assert!(text.contains("egs_graphql_request_duration_seconds_bucket{"), "{text}");
    assert!(text.contains("egs_gprs{phase=\"QUEUED\"} 1"), "{text}");
    // Ticks are timed where the scheduler runs; this replica runs none (`api_only`).
    assert_eq!(tick_count(&text), Some(0), "{text}");
    assert!(text.contains("egs_gprs{phase=\"PROVISIONED\"} 0"), "{text}");
    assert!(text.contains("egs_db_statements_total "), "{text}");
    app.finish().await;
}

fn tick_count(metrics: &str) -> Option<u64> {
    metrics.lines().find_map(|l| l.strip_prefix("egs_scheduler_tick_duration_seconds_count ")).and_then(|n| n.trim().parse().ok())
}

#[tokio::test]
async fn the_leaders_ticks_are_timed() {
    let app = TestApp::spawn().await;
    let two = egs_tests::fixtures::two_slices(&app).await;
    let gpr = egs_tests::fixtures::create_gpr(&app, &two.token_a, &two.slice_a, "one", json!({})).await;
    egs_tests::fixtures::provisioned(&app, &two.token_a, gpr["id"].as_str().expect("id")).await;
    let text = app.metrics_text().await;
    assert!(tick_count(&text).is_some_and(|n| n >= 1), "the ticks that provisioned the GPR: {text}");
    assert!(text.contains("egs_scheduler_tick_duration_seconds_bucket{le=\"0.0005\"}"), "{text}");
    app.finish().await;
}

#[tokio::test]
async fn only_the_operations_of_egs_clients_are_labels() {
    let app = TestApp::spawn_with(api_only).await;
    // 250 made-up names from nobody, and 250 from a signed-in caller: none becomes a series.
    for n in 0..250 {
        let response = app.post(None, json!({ "query": format!("query Flood{n} {{ __typename }}") })).await;
        assert_eq!(response.status(), 200);
        app.ok(&app.admin_token, &format!("query Mine{n} {{ __typename }}"), json!({})).await;
    }
    app.ok(&app.admin_token, "query CreateGprSlices { viewer { id } }", json!({})).await;
    let text = app.metrics_text().await;
    assert!(!text.contains("Flood") && !text.contains("Mine"), "no label names a made-up operation: {text}");
    assert!(text.contains("egs_graphql_requests_total{operation=\"unauthenticated\",type=\"query\",outcome=\"ok\"} 250"), "{text}");
    assert!(text.contains("egs_graphql_requests_total{operation=\"other\",type=\"query\",outcome=\"ok\"} 250"), "{text}");
    assert!(
        text.contains("egs_graphql_requests_total{operation=\"CreateGprSlices\",type=\"query\",outcome=\"ok\"} 1"),
        "the portal's operation still has its own: {text}"
    );
    app.finish().await;
}

#[tokio::test]
async fn metrics_need_an_admin_token_on_the_public_listener_or_a_private_listener() {
    let app = TestApp::spawn().await;
    let two = egs_tests::fixtures::two_slices(&app).await;
    let get = |token: Option<&str>| {
        let mut request = app.client.get(app.url("/metrics"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        async move { request.send().await.expect("answer").status().as_u16() }
    };
    assert_eq!(get(None).await, 401, "no token");
    assert_eq!(get(Some("garbage")).await, 401, "a bad token");
    assert_eq!(get(Some(&two.token_a)).await, 403, "a user's token");
    assert_eq!(get(Some(&app.admin_token)).await, 200, "an admin's token");

    // With --metrics-listen, /metrics is served there without a token and not on the public listener.
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("addr").port();
    let private = app.spawn_replica_with(|s| s.metrics_listen = Some(format!("127.0.0.1:{port}").parse().expect("addr"))).await;
    let scraped = app.client.get(format!("http://127.0.0.1:{port}/metrics")).send().await.expect("answer");
    assert_eq!(scraped.status().as_u16(), 200);
    assert!(scraped.text().await.expect("text").contains("egs_"), "the exposition");
    let public = app.client.get(private.url("/metrics")).bearer_auth(&app.admin_token).send().await.expect("answer");
    assert_eq!(public.status().as_u16(), 404, "not on the public listener");
    private.finish().await;
    app.finish().await;
}
