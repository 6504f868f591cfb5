//! A tiny schema served on a loopback port, driven by a real WebSocket client.

use super::egs::token_from;
use super::outbox::truncate;
use super::*;
use async_graphql::Data;
use async_graphql::{Context, EmptyMutation, Object, Schema, Subscription};
use axum::extract::ws::WebSocketUpgrade;
use futures_util::Stream;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::{self, Message as WsMessage};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

struct TestQuery;

#[Object]
impl TestQuery {
    async fn hello(&self, ctx: &Context<'_>) -> String {
        format!("hello, {}", ctx.data_opt::<User>().map_or("stranger", |user| user.0.as_str()))
    }
}

struct TestSubscription;

#[Subscription]
impl TestSubscription {
    /// `count` integers from 0, one every `every_ms`.
    async fn ticks(&self, count: i32, every_ms: u64) -> impl Stream<Item = i32> {
        futures_util::stream::unfold(0, move |n| async move {
            if n >= count {
                return None;
            }
            if n > 0 {
                tokio::time::sleep(Duration::from_millis(every_ms)).await;
            }
            Some((n, n + 1))
        })
    }

    /// `count` strings of `size` bytes, as fast as possible: fills socket buffers quickly.
    async fn blobs(&self, count: u32, size: usize) -> impl Stream<Item = String> {
        futures_util::stream::iter((0..count).map(move |_| "x".repeat(size)))
    }
}

type TestSchema = Schema<TestQuery, EmptyMutation, TestSubscription>;

struct User(String);

/// Serves the test schema; `connection_init` wants `{"token": "secret"}` (`"db-down"`
/// plays a database outage).
struct Server {
    addr: SocketAddr,
    sockets: Arc<Sockets>,
}

async fn serve(config: WsConfig) -> Server {
    let sockets = Arc::new(Sockets::new(config.clone()));
    let template = GraphqlWs::new(Schema::new(TestQuery, EmptyMutation, TestSubscription), config).on_connection_init(|payload| async move {
        match payload.as_ref().and_then(|p| p.get("token")).and_then(Value::as_str) {
            Some("secret") => {
                let mut session = Data::default();
                session.insert(User("alice".into()));
                Ok(session)
            }
            Some("db-down") => Err(InitError::Unavailable("the database is unavailable".into())),
            _ => Err(InitError::Forbidden("bad token".into())),
        }
    });
    let signal = sockets.clone();
    let router = axum::Router::new().route(
        "/ws",
        axum::routing::get(move |upgrade: WebSocketUpgrade| {
            let ws: GraphqlWs<TestSchema> = template.clone().going_away(signal.subscribe());
            async move { ws.upgrade(upgrade) }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("an address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    Server { addr, sockets }
}

fn request(addr: SocketAddr, protocols: &str) -> tungstenite::handshake::client::Request {
    let mut request = format!("ws://{addr}/ws").into_client_request().expect("a request");
    if !protocols.is_empty() {
        request.headers_mut().insert("sec-websocket-protocol", protocols.parse().expect("a header"));
    }
    request
}

struct Client(WebSocketStream<MaybeTlsStream<TcpStream>>);

impl Client {
    async fn connect(server: &Server, protocol: &str) -> Client {
        let (socket, response) = tokio_tungstenite::connect_async(request(server.addr, protocol)).await.expect("the upgrade succeeds");
        assert_eq!(response.headers().get("sec-websocket-protocol").map(|v| v.as_bytes()), Some(protocol.as_bytes()));
        Client(socket)
    }

    /// Connected and acknowledged on `graphql-transport-ws`.
    async fn ready(server: &Server) -> Client {
        let mut client = Self::connect(server, TRANSPORT_WS).await;
        client.send(json!({ "type": "connection_init", "payload": { "token": "secret" } })).await;
        assert_eq!(client.recv().await, json!({ "type": "connection_ack" }));
        client
    }

    async fn send(&mut self, message: Value) {
        self.send_text(&message.to_string()).await;
    }

    async fn send_text(&mut self, text: &str) {
        self.0.send(WsMessage::text(text)).await.expect("the message goes out");
    }

    async fn subscribe(&mut self, id: &str, query: &str) {
        self.send(json!({ "id": id, "type": "subscribe", "payload": { "query": query } })).await;
    }

    /// The next protocol message.
    async fn recv(&mut self) -> Value {
        self.recv_within(Duration::from_secs(5)).await.expect("a message within 5 s")
    }

    async fn recv_within(&mut self, limit: Duration) -> Option<Value> {
        let deadline = Instant::now() + limit;
        loop {
            let frame = tokio::time::timeout_at(deadline, self.0.next()).await.ok()?;
            match frame {
                Some(Ok(WsMessage::Text(text))) => return Some(serde_json::from_str(&text).expect("JSON")),
                Some(Ok(WsMessage::Ping(_) | WsMessage::Pong(_))) => continue,
                other => panic!("expected a message, got {other:?}"),
            }
        }
    }

    /// Reads until the server's close frame; its code and reason.
    async fn closed(&mut self) -> (u16, String) {
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(10), self.0.next()).await.expect("closed within 10 s");
            match frame {
                Some(Ok(WsMessage::Close(Some(frame)))) => {
                    // Reading on sends our answer, completing the closing handshake.
                    let _ = tokio::time::timeout(Duration::from_secs(1), async { while let Some(Ok(_)) = self.0.next().await {} }).await;
                    return (frame.code.into(), frame.reason.to_string());
                }
                Some(Ok(WsMessage::Close(None))) => panic!("closed without a code"),
                Some(Ok(_)) => continue,
                Some(Err(e)) => panic!("the socket failed before its close frame: {e}"),
                None => panic!("the socket ended without a close frame"),
            }
        }
    }
}

fn quick() -> WsConfig {
    WsConfig { init_timeout: Duration::from_secs(5), ..WsConfig::default() }
}

fn next(id: &str, data: Value) -> Value {
    json!({ "id": id, "type": "next", "payload": { "data": data } })
}

#[tokio::test]
async fn a_query_over_the_socket_answers_next_then_complete_with_the_session_data() {
    let server = serve(quick()).await;
    let mut client = Client::ready(&server).await;
    client.subscribe("q", "{ hello }").await;
    assert_eq!(client.recv().await, next("q", json!({ "hello": "hello, alice" })));
    assert_eq!(client.recv().await, json!({ "id": "q", "type": "complete" }));
}

#[tokio::test]
async fn a_subscription_streams_its_values_then_completes() {
    let server = serve(quick()).await;
    let mut client = Client::ready(&server).await;
    client.subscribe("t", "subscription { ticks(count: 3, everyMs: 10) }").await;
    for n in 0..3 {
        assert_eq!(client.recv().await, next("t", json!({ "ticks": n })));
    }
    assert_eq!(client.recv().await, json!({ "id": "t", "type": "complete" }));
}

#[tokio::test]
async fn complete_from_the_client_stops_the_stream_and_frees_its_id() {
    let server = serve(quick()).await;
    let mut client = Client::ready(&server).await;
    client.subscribe("t", "subscription { ticks(count: 1000, everyMs: 20) }").await;
    assert_eq!(client.recv().await, next("t", json!({ "ticks": 0 })));
    client.send(json!({ "id": "t", "type": "complete" })).await;
    client.send(json!({ "type": "ping", "payload": { "marker": 1 } })).await;
    // A value already on its way may still arrive; then nothing more.
    loop {
        let message = client.recv().await;
        if message["type"] == "pong" {
            break;
        }
        assert_eq!(message["type"], "next", "{message}");
    }
    assert_eq!(client.recv_within(Duration::from_millis(300)).await, None);
    // The id is free again: reusing it is not a duplicate.
    client.subscribe("t", "{ hello }").await;
    assert_eq!(client.recv().await, next("t", json!({ "hello": "hello, alice" })));
}

#[tokio::test]
async fn a_document_that_does_not_validate_is_one_error_message() {
    let server = serve(quick()).await;
    let mut client = Client::ready(&server).await;
    client.subscribe("bad", "{ nope }").await;
    let message = client.recv().await;
    assert_eq!((message["type"].as_str(), message["id"].as_str()), (Some("error"), Some("bad")), "{message}");
    assert!(message["payload"][0]["message"].as_str().is_some_and(|m| m.contains("nope")), "{message}");
    // No `complete` follows an `error`.
    client.send(json!({ "type": "ping" })).await;
    assert_eq!(client.recv().await, json!({ "type": "pong" }));
}

#[tokio::test]
async fn ping_gets_pong_with_the_same_payload_and_the_server_keeps_the_connection_alive() {
    let server = serve(WsConfig { keep_alive: Duration::from_millis(100), ..quick() }).await;
    let mut client = Client::connect(&server, TRANSPORT_WS).await;
    // Allowed before the ack.
    client.send(json!({ "type": "ping", "payload": { "n": 1 } })).await;
    assert_eq!(client.recv().await, json!({ "type": "pong", "payload": { "n": 1 } }));
    client.send(json!({ "type": "connection_init", "payload": { "token": "secret" } })).await;
    assert_eq!(client.recv().await, json!({ "type": "connection_ack" }));
    assert_eq!(client.recv().await, json!({ "type": "ping" }));
    client.send(json!({ "type": "pong" })).await;
    assert_eq!(client.recv().await, json!({ "type": "ping" }));
}

#[tokio::test]
async fn a_message_that_is_not_json_closes_with_4400() {
    let server = serve(quick()).await;
    let mut client = Client::ready(&server).await;
    client.send_text("{ not json").await;
    let (code, reason) = client.closed().await;
    assert_eq!(code, 4400);
    assert!(reason.starts_with("Invalid message received"), "{reason}");
}

#[tokio::test]
async fn an_unknown_message_type_closes_with_4400() {
    let server = serve(quick()).await;
    let mut client = Client::ready(&server).await;
    client.send(json!({ "type": "subscribe_please", "id": "1" })).await;
    assert_eq!(client.closed().await.0, 4400);
}

#[tokio::test]
async fn a_legacy_message_on_the_new_protocol_closes_with_4400() {
    let server = serve(quick()).await;
    let mut client = Client::ready(&server).await;
    client.send(json!({ "type": "start", "id": "1", "payload": { "query": "{ hello }" } })).await;
    let (code, reason) = client.closed().await;
    assert_eq!((code, reason.as_str()), (4400, "`start` is not a graphql-transport-ws message"));
}

#[tokio::test]
async fn subscribe_without_an_id_closes_with_4400() {
    let server = serve(quick()).await;
    let mut client = Client::ready(&server).await;
    client.send(json!({ "type": "subscribe", "payload": { "query": "{ hello }" } })).await;
    let (code, reason) = client.closed().await;
    assert_eq!(code, 4400);
    assert!(reason.contains("missing field `id`"), "{reason}");
}

#[tokio::test]
async fn subscribe_before_the_ack_closes_with_4401() {
    let server = serve(quick()).await;
    let mut client = Client::connect(&server, TRANSPORT_WS).await;
    client.subscribe("1", "{ hello }").await;
    assert_eq!(client.closed().await, (4401, "Unauthorized".to_owned()));
}

#[tokio::test]
async fn a_bad_or_missing_token_closes_with_4403() {
    let server = serve(quick()).await;
    for payload in [json!({ "token": "wrong" }), json!(null)] {
        let mut client = Client::connect(&server, TRANSPORT_WS).await;
        client.send(json!({ "type": "connection_init", "payload": payload })).await;
        assert_eq!(client.closed().await, (4403, "Forbidden".to_owned()));
    }
    let mut client = Client::connect(&server, TRANSPORT_WS).await;
    client.send(json!({ "type": "connection_init" })).await;
    assert_eq!(client.closed().await, (4403, "Forbidden".to_owned()));
}

#[tokio::test]
async fn an_outage_while_authenticating_closes_with_1011() {
    let server = serve(quick()).await;
    let mut client = Client::connect(&server, TRANSPORT_WS).await;
    client.send(json!({ "type": "connection_init", "payload": { "token": "db-down" } })).await;
    assert_eq!(client.closed().await, (1011, "the database is unavailable".to_owned()));
}

#[tokio::test]
async fn no_connection_init_in_time_closes_with_4408() {
    let server = serve(WsConfig { init_timeout: Duration::from_millis(200), ..quick() }).await;
    let mut client = Client::connect(&server, TRANSPORT_WS).await;
    let started = Instant::now();
    assert_eq!(client.closed().await, (4408, "Connection initialisation timeout".to_owned()));
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_running_id_subscribed_again_closes_with_4409() {
    let server = serve(quick()).await;
    let mut client = Client::ready(&server).await;
    client.subscribe("dup", "subscription { ticks(count: 1000, everyMs: 50) }").await;
    assert_eq!(client.recv().await, next("dup", json!({ "ticks": 0 })));
    client.subscribe("dup", "{ hello }").await;
    assert_eq!(client.closed().await, (4409, "Subscriber for dup already exists".to_owned()));
}

#[tokio::test]
async fn a_second_connection_init_closes_with_4429() {
    let server = serve(quick()).await;
    let mut client = Client::ready(&server).await;
    client.send(json!({ "type": "connection_init", "payload": { "token": "secret" } })).await;
    assert_eq!(client.closed().await, (4429, "Too many initialisation requests".to_owned()));
}

#[tokio::test]
async fn a_message_over_the_size_limit_closes_with_1009() {
    let server = serve(WsConfig { max_message_bytes: 1024, ..quick() }).await;
    let mut client = Client::ready(&server).await;
    client.subscribe("big", &format!("{{ hello }} # {}", "x".repeat(4096))).await;
    assert_eq!(client.closed().await, (1009, "messages are limited to 1024 bytes".to_owned()));
}

#[tokio::test]
async fn operations_over_the_connection_limit_get_an_error_and_the_others_go_on() {
    let server = serve(WsConfig { max_operations: 2, ..quick() }).await;
    let mut client = Client::ready(&server).await;
    for id in ["a", "b", "c"] {
        client.subscribe(id, "subscription { ticks(count: 1000, everyMs: 50) }").await;
    }
    let mut refused = None;
    let mut running = std::collections::HashSet::new();
    while refused.is_none() || running.len() < 2 {
        let message = client.recv().await;
        match message["type"].as_str() {
            Some("error") => refused = Some(message),
            Some("next") => {
                running.insert(message["id"].as_str().unwrap_or_default().to_owned());
            }
            _ => panic!("unexpected {message}"),
        }
    }
    let refused = refused.unwrap_or_default();
    assert_eq!(refused["id"], "c");
    assert_eq!(refused["payload"][0]["extensions"]["code"], "RATE_LIMITED");
    assert_eq!(running, ["a", "b"].map(str::to_owned).into());
}

#[tokio::test]
async fn without_an_acceptable_subprotocol_the_upgrade_is_refused_with_400() {
    let server = serve(quick()).await;
    for protocols in ["", "graphql-sse, mqtt"] {
        match tokio_tungstenite::connect_async(request(server.addr, protocols)).await {
            Err(tungstenite::Error::Http(response)) => {
                assert_eq!(response.status(), 400);
                let body = String::from_utf8_lossy(response.body().as_deref().unwrap_or_default()).into_owned();
                assert!(body.contains("graphql-transport-ws"), "{body}");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn graphql_transport_ws_is_preferred_when_both_are_offered() {
    let server = serve(quick()).await;
    let (_, response) = tokio_tungstenite::connect_async(request(server.addr, "graphql-ws, graphql-transport-ws")).await.expect("upgraded");
    assert_eq!(response.headers().get("sec-websocket-protocol").map(|v| v.as_bytes()), Some(TRANSPORT_WS.as_bytes()));
}

#[tokio::test]
async fn the_legacy_protocol_inits_starts_streams_data_and_stops() {
    let server = serve(quick()).await;
    let mut client = Client::connect(&server, LEGACY_WS).await;
    // Legacy clients start without waiting for the ack.
    client.send(json!({ "type": "connection_init", "payload": { "token": "secret" } })).await;
    client.send(json!({ "id": "1", "type": "start", "payload": { "query": "subscription { ticks(count: 1000, everyMs: 20) }" } })).await;
    assert_eq!(client.recv().await, json!({ "type": "connection_ack" }));
    assert_eq!(client.recv().await, json!({ "type": "ka" }));
    for n in 0..2 {
        assert_eq!(client.recv().await, json!({ "id": "1", "type": "data", "payload": { "data": { "ticks": n } } }));
    }
    client.send(json!({ "id": "1", "type": "stop" })).await;
    loop {
        let message = client.recv().await;
        if message == json!({ "id": "1", "type": "complete" }) {
            break;
        }
        assert_eq!(message["type"], "data", "{message}");
    }
    assert_eq!(client.recv_within(Duration::from_millis(300)).await, None);
    client.send(json!({ "id": "2", "type": "start", "payload": { "query": "{ hello }" } })).await;
    assert_eq!(client.recv().await, json!({ "id": "2", "type": "data", "payload": { "data": { "hello": "hello, alice" } } }));
    assert_eq!(client.recv().await, json!({ "id": "2", "type": "complete" }));
    client.send(json!({ "type": "connection_terminate" })).await;
    assert_eq!(client.closed().await.0, 1000);
}

#[tokio::test]
async fn the_legacy_protocol_refuses_a_bad_token_with_connection_error_then_4403() {
    let server = serve(quick()).await;
    let mut client = Client::connect(&server, LEGACY_WS).await;
    client.send(json!({ "type": "connection_init", "payload": { "token": "wrong" } })).await;
    assert_eq!(client.recv().await, json!({ "type": "connection_error", "payload": { "message": "bad token" } }));
    assert_eq!(client.closed().await, (4403, "Forbidden".to_owned()));
}

#[tokio::test]
async fn shutting_down_closes_open_sockets_with_1001() {
    let server = serve(quick()).await;
    let mut client = Client::ready(&server).await;
    client.subscribe("t", "subscription { ticks(count: 1000, everyMs: 50) }").await;
    assert_eq!(client.recv().await, next("t", json!({ "ticks": 0 })));
    server.sockets.shut_down();
    assert_eq!(client.closed().await.0, 1001);
    tokio::time::timeout(Duration::from_secs(5), server.sockets.closed()).await.expect("every socket closed");
}

/// A client whose TCP receive buffer is small, so a flood fills it quickly.
async fn connect_small_buffer(server: &Server) -> Client {
    let socket = tokio::net::TcpSocket::new_v4().expect("a socket");
    socket.set_recv_buffer_size(4096).expect("a small buffer");
    let tcp = socket.connect(server.addr).await.expect("connects");
    let (socket, _) = tokio_tungstenite::client_async(request(server.addr, TRANSPORT_WS), MaybeTlsStream::Plain(tcp)).await.expect("upgraded");
    Client(socket)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_client_is_closed_with_1013_while_another_keeps_receiving_on_time() {
    let config = WsConfig { stall_timeout: Duration::from_millis(300), queue_capacity: 16, close_grace: Duration::from_secs(20), ..quick() };
    let server = serve(config).await;
    let mut stalled = connect_small_buffer(&server).await;
    stalled.send(json!({ "type": "connection_init", "payload": { "token": "secret" } })).await;
    assert_eq!(stalled.recv().await, json!({ "type": "connection_ack" }));
    stalled.subscribe("flood", "subscription { blobs(count: 1000000, size: 16384) }").await;

    // The stalled client now reads nothing; the other one must not notice.
    let mut steady = Client::ready(&server).await;
    steady.subscribe("steady", "subscription { ticks(count: 40, everyMs: 50) }").await;
    let started = Instant::now();
    let mut previous = started;
    for n in 0..40 {
        assert_eq!(steady.recv().await, next("steady", json!({ "ticks": n })));
        assert!(previous.elapsed() < Duration::from_millis(750), "tick {n} came {:?} after the one before", previous.elapsed());
        previous = Instant::now();
    }
    assert_eq!(steady.recv().await, json!({ "id": "steady", "type": "complete" }));
    assert!(started.elapsed() < Duration::from_secs(6), "40 ticks 50 ms apart took {:?}", started.elapsed());

    // Reading again, the stalled client finds what was buffered, then the close frame.
    let (code, reason) = stalled.closed().await;
    assert_eq!((code, reason.as_str()), (1013, STALLED_REASON));
}

#[test]
fn tokens_come_from_authorization_or_token() {
    for payload in [
        json!({ "authorization": "Bearer abc" }),
        json!({ "Authorization": "bearer  abc " }),
        json!({ "token": "abc" }),
        json!({ "authorization": "Bearer abc", "token": "ignored" }),
    ] {
        assert_eq!(token_from(Some(&payload)).as_deref(), Some("abc"), "{payload}");
    }
    for payload in [json!({}), json!({ "authorization": "Basic abc" }), json!({ "authorization": "Bearer " }), json!({ "token": 7 }), json!("abc")] {
        assert_eq!(token_from(Some(&payload)), None, "{payload}");
    }
    assert_eq!(token_from(None), None);
}

#[test]
fn close_reasons_are_cut_on_a_character_boundary() {
    assert_eq!(truncate("héllo", 2), "h");
    assert_eq!(truncate("héllo", 3), "hé");
    assert_eq!(truncate("abc", 123), "abc");
}
