//! The WebSocket transport against the real gateway (`/graphql/ws`): authentication in
//! `connection_init` with real tokens, the spec's close codes, queries and mutations over the
//! socket, and closing with 1001 on shutdown.

use egs_tests::TestApp;
use egs_tests::fixtures::{self, TwoSlices};
use egs_tests::ws::Socket;
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

#[tokio::test]
async fn a_real_token_in_connection_init_is_acknowledged() {
    let app = TestApp::spawn().await;
    let mut socket = Socket::open(&app, &app.admin_token).await;
    // `{"token": ...}` works as well.
    let mut other = Socket::connect(&app, "graphql-transport-ws").await;
    other.send(json!({ "type": "connection_init", "payload": { "token": app.admin_token } })).await;
    assert_eq!(other.recv().await, json!({ "type": "connection_ack" }));
    socket.send(json!({ "type": "ping" })).await;
    assert_eq!(socket.recv().await, json!({ "type": "pong" }));
    app.finish().await;
}

#[tokio::test]
async fn a_bad_or_missing_token_is_closed_with_4403() {
    let app = TestApp::spawn().await;
    for payload in [json!({ "authorization": "Bearer not-a-token" }), json!({ "authorization": format!("Basic {}", app.admin_token) }), json!({})] {
        let mut socket = Socket::connect(&app, "graphql-transport-ws").await;
        socket.send(json!({ "type": "connection_init", "payload": payload })).await;
        assert_eq!(socket.closed().await, (4403, "Forbidden".to_owned()), "{payload}");
    }
    app.finish().await;
}

#[tokio::test]
async fn a_client_that_never_inits_is_closed_with_4408() {
    let app = TestApp::spawn_with(|settings| settings.ws.init_timeout_secs = 1).await;
    let mut socket = Socket::connect(&app, "graphql-transport-ws").await;
    let started = std::time::Instant::now();
    assert_eq!(socket.closed().await, (4408, "Connection initialisation timeout".to_owned()));
    assert!(started.elapsed() >= Duration::from_millis(900) && started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    app.finish().await;
}

#[tokio::test]
async fn a_query_over_the_socket_answers_as_the_caller() {
    let app = TestApp::spawn().await;
    let TwoSlices { token_a, .. } = fixtures::two_slices(&app).await;
    let over_http = app.ok(&token_a, "{ viewer { id name role } }", json!({})).await;
    let mut socket = Socket::open(&app, &token_a).await;
    let payload = socket.run("me", "{ viewer { id name role } }", json!({})).await;
    assert_eq!(payload, json!({ "data": over_http }));
    assert_eq!(payload["data"]["viewer"]["name"], "alice");
    app.finish().await;
}

#[tokio::test]
async fn a_mutation_over_the_socket_takes_effect() {
    let app = TestApp::spawn().await;
    let mut socket = Socket::open(&app, &app.admin_token).await;
    let payload = socket
        .run(
            "m",
            "mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { cluster { id name } userErrors { code } } }",
            json!({ "input": { "name": "over-the-socket", "provider": "SIMULATED" } }),
        )
        .await;
    let registered = &payload["data"]["registerCluster"];
    assert_eq!(registered["userErrors"], json!([]), "{payload}");
    let id = registered["cluster"]["id"].clone();
    let seen = app.ok(&app.admin_token, "query($id: ID!) { node(id: $id) { ... on Cluster { name } } }", json!({ "id": id })).await;
    assert_eq!(seen["node"]["name"], "over-the-socket");
    app.finish().await;
}

#[tokio::test]
async fn a_document_that_does_not_validate_is_an_error_message_with_a_code() {
    let app = TestApp::spawn().await;
    let mut socket = Socket::open(&app, &app.admin_token).await;
    socket.subscribe("bad", "{ noSuchField }", json!({})).await;
    let message = socket.recv().await;
    assert_eq!((message["type"].as_str(), message["id"].as_str()), (Some("error"), Some("bad")), "{message}");
    assert_eq!(message["payload"][0]["extensions"]["code"], "INVALID_INPUT", "{message}");
    app.finish().await;
}

#[tokio::test]
async fn a_token_revoked_while_the_socket_is_open_stops_working_there_too() {
    let app = TestApp::spawn().await;
    let TwoSlices { token_a, .. } = fixtures::two_slices(&app).await;
    let mut socket = Socket::open(&app, &token_a).await;
    let before = socket.run("1", "{ viewer { token { id } } }", json!({})).await;
    app.mutate(
        &app.admin_token,
        "revokeToken",
        "mutation($input: RevokeTokenInput!) { revokeToken(input: $input) { token { revokedAt } userErrors { field message code } } }",
        json!({ "id": before["data"]["viewer"]["token"]["id"] }),
    )
    .await;
    socket.subscribe("2", "{ viewer { name } }", json!({})).await;
    // Refused as an operation, unless the connection's own check closed it first.
    let frame = tokio::time::timeout(Duration::from_secs(10), socket.ws.next()).await.expect("an answer within 10 s");
    match frame.expect("a frame").expect("readable") {
        Message::Text(text) => {
            let refused: Value = serde_json::from_str(&text).expect("JSON");
            assert_eq!((refused["type"].as_str(), refused["id"].as_str()), (Some("error"), Some("2")), "{refused}");
            assert_eq!(refused["payload"][0]["extensions"]["code"], "UNAUTHENTICATED", "{refused}");
            assert!(refused["payload"][0]["message"].as_str().unwrap_or_default().contains("revoked"), "{refused}");
        }
        Message::Close(Some(close)) => assert_eq!(u16::from(close.code), 4403, "{close:?}"),
        other => panic!("unexpected: {other:?}"),
    }
    app.finish().await;
}

#[tokio::test]
async fn a_running_subscription_ends_with_4403_soon_after_its_token_is_revoked() {
    let app = TestApp::spawn().await;
    let TwoSlices { token_a, slice_a, .. } = fixtures::two_slices(&app).await;
    let mut socket = Socket::open(&app, &token_a).await;
    let me = socket.run("1", "{ viewer { token { id } } }", json!({})).await;
    // A live stream that would otherwise run for ever.
    socket.subscribe("2", "subscription($slice: ID!) { gprEvents(sliceId: $slice) { kind } }", json!({ "slice": slice_a })).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.mutate(
        &app.admin_token,
        "revokeToken",
        "mutation($input: RevokeTokenInput!) { revokeToken(input: $input) { token { revokedAt } userErrors { field message code } } }",
        json!({ "id": me["data"]["viewer"]["token"]["id"] }),
    )
    .await;
    let revoked = std::time::Instant::now();
    assert_eq!(socket.closed().await, (4403, "Forbidden".to_owned()));
    assert!(revoked.elapsed() < Duration::from_secs(5), "closed {:?} after the revocation", revoked.elapsed());
    app.finish().await;
}

#[tokio::test]
async fn the_legacy_protocol_runs_a_query_with_a_real_token() {
    let app = TestApp::spawn().await;
    let mut socket = Socket::connect(&app, "graphql-ws").await;
    socket.send(json!({ "type": "connection_init", "payload": { "Authorization": format!("Bearer {}", app.admin_token) } })).await;
    socket.send(json!({ "id": "1", "type": "start", "payload": { "query": "{ viewer { role } }" } })).await;
    assert_eq!(socket.recv().await, json!({ "type": "connection_ack" }));
    assert_eq!(socket.recv().await, json!({ "type": "ka" }));
    assert_eq!(socket.recv().await, json!({ "id": "1", "type": "data", "payload": { "data": { "viewer": { "role": "ADMIN" } } } }));
    assert_eq!(socket.recv().await, json!({ "id": "1", "type": "complete" }));
    app.finish().await;
}

#[tokio::test]
async fn shutting_down_closes_open_sockets_with_1001() {
    let mut app = TestApp::spawn().await;
    let mut socket = Socket::open(&app, &app.admin_token).await;
    app.stop().await;
    assert_eq!(socket.closed().await.0, 1001);
    app.finish().await;
}

#[tokio::test]
async fn a_refusal_over_the_socket_keeps_its_own_code() {
    let app = TestApp::spawn().await;
    let TwoSlices { token_a, .. } = fixtures::two_slices(&app).await;
    let mut socket = Socket::open(&app, &token_a).await;
    socket.subscribe("1", "{ nodes(first: 100) { nodes { gpus { node { gpus { node { gpus { uuid } } } } } } } }", json!({})).await;
    let refused = socket.recv().await;
    assert_eq!((refused["type"].as_str(), refused["id"].as_str()), (Some("error"), Some("1")), "{refused}");
    assert_eq!(refused["payload"][0]["extensions"]["code"], "TOO_COMPLEX", "not INVALID_INPUT: {refused}");
    // A document that does not parse still says INVALID_INPUT.
    socket.subscribe("2", "{ viewer {", json!({})).await;
    let invalid = socket.recv().await;
    assert_eq!(invalid["payload"][0]["extensions"]["code"], "INVALID_INPUT", "{invalid}");
    app.finish().await;
}

const CREATE_TOKEN: &str =
    "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret token { id } userErrors { field message code } } }";
const SLICE_EVENTS: &str = "subscription($slice: ID!) { gprEvents(sliceId: $slice) { kind gpr { name } } }";

#[tokio::test]
async fn a_user_holds_at_most_the_connections_and_operations_allowed_whatever_tokens_they_use() {
    let app = TestApp::spawn_with(|s| {
        s.per_user.connections = 2;
        s.per_user.subscriptions = 2;
    })
    .await;
    let TwoSlices { token_a, token_b, slice_a, .. } = fixtures::two_slices(&app).await;
    // A second token of the same user counts against the same places.
    let second = app.mutate(&token_a, "createToken", CREATE_TOKEN, json!({ "name": "second", "role": "USER" })).await;
    let token_a2 = second["secret"].as_str().expect("secret").to_owned();

    let mut one = Socket::open(&app, &token_a).await;
    let mut two = Socket::open(&app, &token_a2).await;
    let mut third = Socket::connect(&app, "graphql-transport-ws").await;
    third.send(json!({ "type": "connection_init", "payload": { "authorization": format!("Bearer {token_a}") } })).await;
    let (code, reason) = third.closed().await;
    assert_eq!(code, 1008, "{reason}");
    assert!(reason.starts_with("LIMIT_EXCEEDED") && reason.contains('2'), "{reason}");
    // Another user is not crowded out.
    let mut bob = Socket::open(&app, &token_b).await;
    assert_eq!(bob.run("b", "{ viewer { name } }", json!({})).await["data"]["viewer"]["name"], "bob");

    // Two live subscriptions across the two connections; a third operation of any kind is refused.
    one.subscribe("s1", SLICE_EVENTS, json!({ "slice": slice_a })).await;
    two.subscribe("s2", SLICE_EVENTS, json!({ "slice": slice_a })).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    one.subscribe("s3", "{ viewer { name } }", json!({})).await;
    let refused = one.recv().await;
    assert_eq!((refused["type"].as_str(), refused["id"].as_str()), (Some("error"), Some("s3")), "{refused}");
    assert_eq!(refused["payload"][0]["extensions"]["code"], "LIMIT_EXCEEDED", "{refused}");
    assert!(refused["payload"][0]["message"].as_str().is_some_and(|m| m.contains("complete one first")), "{refused}");

    // Completing one gives its place back.
    one.send(json!({ "id": "s1", "type": "complete" })).await;
    let mut answered = None;
    for attempt in 0..20 {
        one.subscribe(&format!("q{attempt}"), "{ viewer { name } }", json!({})).await;
        let reply = one.recv().await;
        if reply["type"] == "next" {
            answered = Some(reply);
            assert_eq!(one.recv().await["type"], "complete");
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(answered.expect("a place came back")["payload"]["data"]["viewer"]["name"], "alice");

    // Closing a connection gives its place back too.
    drop(two);
    let mut reconnected = None;
    for _ in 0..40 {
        let mut socket = Socket::connect(&app, "graphql-transport-ws").await;
        socket.send(json!({ "type": "connection_init", "payload": { "authorization": format!("Bearer {token_a}") } })).await;
        let frame = tokio::time::timeout(Duration::from_secs(5), socket.ws.next()).await.expect("an answer");
        if let Some(Ok(Message::Text(text))) = frame {
            assert_eq!(serde_json::from_str::<Value>(&text).expect("JSON"), json!({ "type": "connection_ack" }));
            reconnected = Some(socket);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(reconnected.is_some(), "a closed connection's place came back");
    app.finish().await;
}

#[tokio::test]
async fn subscriptions_end_within_seconds_on_every_replica_after_their_user_leaves_the_slice() {
    let app = TestApp::spawn().await;
    let TwoSlices { slice_a, .. } = fixtures::two_slices(&app).await;
    let (dora_id, dora) = fixtures::member(&app, "dora", &slice_a, "VIEWER").await;
    let (_, carol) = fixtures::member(&app, "carol", &slice_a, "EDITOR").await;
    let replica = app.spawn_replica().await;
    let over_redis = std::env::var_os("EGS_TEST_REDIS_URL").is_some();

    let mut here = Socket::open(&app, &dora).await;
    let mut there = Socket::open(&replica, &dora).await;
    let mut stays = Socket::open(&app, &carol).await;
    here.subscribe("1", SLICE_EVENTS, json!({ "slice": slice_a })).await;
    there.subscribe("1", SLICE_EVENTS, json!({ "slice": slice_a })).await;
    here.subscribe("queue", "subscription($slice: ID!) { queueChanged(sliceId: $slice) { id } }", json!({ "slice": slice_a })).await;
    assert_eq!(here.recv().await["id"], "queue", "the queue's first view");
    // Every kind of live operation ends the same way, whatever it streams.
    here.subscribe("metrics", "subscription($slice: ID) { gpuMetrics(sliceId: $slice) { samples { gpuId } } }", json!({ "slice": slice_a })).await;
    here.subscribe("alerts", "subscription($slice: ID) { alerts(sliceId: $slice) { id } }", json!({ "slice": slice_a })).await;
    here.subscribe("inventory", "subscription { inventoryChanged { kind } }", json!({})).await;
    stays.subscribe("1", SLICE_EVENTS, json!({ "slice": slice_a })).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Whatever the new operations sent first (a metrics update) is not what this test watches.
    while let Ok(Some(Ok(frame))) = tokio::time::timeout(Duration::from_millis(300), here.ws.next()).await {
        assert!(!frame.to_string().contains("FORBIDDEN"), "refused before losing access: {frame}");
    }

    app.mutate(
        &app.admin_token,
        "removeSliceMember",
        "mutation($input: RemoveSliceMemberInput!) { removeSliceMember(input: $input) { slice { id } userErrors { field message code } } }",
        json!({ "sliceId": slice_a, "userId": dora_id }),
    )
    .await;
    let removed = std::time::Instant::now();
    let mut ended = Vec::new();
    for (socket, ids) in [(&mut here, vec!["1", "queue", "metrics", "alerts", "inventory"]), (&mut there, vec!["1"])] {
        let mut open: Vec<&str> = ids;
        while !open.is_empty() {
            let message = socket.recv().await;
            let id = message["id"].as_str().unwrap_or_default().to_owned();
            match message["type"].as_str() {
                Some("next") => {
                    assert_eq!(message["payload"]["errors"][0]["extensions"]["code"], "FORBIDDEN", "{message}");
                    assert!(message["payload"]["errors"][0]["message"].as_str().is_some_and(|m| m.contains("access")), "{message}");
                }
                Some("complete") => {
                    open.retain(|open| *open != id);
                    ended.push(removed.elapsed());
                }
                // An operation that had sent nothing yet ends with one `error` message.
                Some("error") => {
                    assert_eq!(message["payload"][0]["extensions"]["code"], "FORBIDDEN", "{message}");
                    open.retain(|open| *open != id);
                    ended.push(removed.elapsed());
                }
                _ => panic!("unexpected: {message}"),
            }
        }
    }
    let limit = if over_redis { Duration::from_secs(5) } else { Duration::from_secs(8) };
    assert!(ended.iter().all(|took| *took < limit), "ended after {ended:?} (Redis: {over_redis})");

    // Subscribing again is judged afresh: refused.
    here.subscribe("2", SLICE_EVENTS, json!({ "slice": slice_a })).await;
    let refused = here.recv().await;
    assert_eq!(refused["payload"]["errors"][0]["extensions"]["code"], "NOT_FOUND", "the slice is hidden from her now: {refused}");
    // Another member's stream goes on.
    fixtures::create_gpr(&app, &carol, &slice_a, "after-removal", json!({})).await;
    let event = stays.recv().await;
    assert_eq!(
        (event["type"].as_str(), event["payload"]["data"]["gprEvents"]["gpr"]["name"].as_str()),
        (Some("next"), Some("after-removal")),
        "{event}"
    );
    replica.finish().await;
    app.finish().await;
}

#[tokio::test]
async fn a_message_over_the_gateways_limit_closes_with_1009_not_a_dropped_socket() {
    let app = TestApp::spawn().await;
    let mut socket = Socket::open(&app, &app.admin_token).await;
    // Twice the default 1 MiB limit, as one subscribe message.
    let query = format!("{{ viewer {{ id }} }} # {}", "x".repeat(2 * 1024 * 1024));
    socket.subscribe("1", &query, json!({})).await;
    let (code, reason) = socket.closed().await;
    assert_eq!(code, 1009, "{reason}");
    assert!(reason.contains("limited to"), "{reason}");
    app.finish().await;
}
