//! The one WebSocket client of the tests and benchmarks: `/graphql/ws` over a real socket.
//!
//! Benchmarks drive the raw stream with [`connect`] and the message builders; tests use
//! [`Socket`], which waits with a timeout, answers pings and asserts as it reads.

use crate::TestApp;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::{self, Message};

pub type Stream = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The current protocol; the legacy one is `graphql-ws`.
pub const TRANSPORT_WS: &str = "graphql-transport-ws";

/// Opens `/graphql/ws` of the gateway at `base` (its `http://` URL) asking for `protocol`.
/// Read buffers are 8 KiB, as the gateway's: tungstenite zero-fills its whole read buffer
/// (128 KiB by default) before every read, which would make thousands of clients, not the
/// gateway, the bottleneck of a benchmark.
pub async fn connect(base: &str, protocol: &str) -> Result<(Stream, tungstenite::handshake::client::Response), tungstenite::Error> {
    let url = format!("{}/graphql/ws", base.trim_end_matches('/').replacen("http", "ws", 1));
    let mut request = url.into_client_request()?;
    let protocol = HeaderValue::from_str(protocol).map_err(|e| tungstenite::Error::HttpFormat(e.into()))?;
    request.headers_mut().insert("Sec-WebSocket-Protocol", protocol);
    let config = WebSocketConfig::default().read_buffer_size(8 * 1024);
    tokio_tungstenite::connect_async_with_config(request, Some(config), false).await
}

/// `connection_init` with `token` as a bearer token.
pub fn connection_init(token: &str) -> Message {
    Message::text(json!({ "type": "connection_init", "payload": { "authorization": format!("Bearer {token}") } }).to_string())
}

/// `subscribe` (graphql-transport-ws) of operation `id`.
pub fn subscribe(id: &str, query: &str, variables: Value) -> Message {
    Message::text(json!({ "id": id, "type": "subscribe", "payload": { "query": query, "variables": variables } }).to_string())
}

/// The answer to the server's keep-alive `ping`.
pub fn pong() -> Message {
    Message::text(json!({ "type": "pong" }).to_string())
}

/// A test's socket: every read waits at most 10 s, and the server's pings are answered.
pub struct Socket {
    pub ws: Stream,
}

impl Socket {
    /// A socket that has negotiated `protocol` (asserted), before `connection_init`.
    pub async fn connect(app: &TestApp, protocol: &str) -> Socket {
        let (ws, response) = connect(&app.url(""), protocol).await.expect("the socket opens");
        assert_eq!(response.headers().get("sec-websocket-protocol").map(HeaderValue::as_bytes), Some(protocol.as_bytes()));
        Socket { ws }
    }

    /// A `graphql-transport-ws` socket acknowledged for `token`.
    pub async fn open(app: &TestApp, token: &str) -> Socket {
        let mut socket = Self::connect(app, TRANSPORT_WS).await;
        socket.ws.send(connection_init(token)).await.expect("send");
        let ack = socket.recv().await;
        assert_eq!(ack, json!({ "type": "connection_ack" }), "{ack}");
        socket
    }

    pub async fn send(&mut self, message: Value) {
        self.ws.send(Message::text(message.to_string())).await.expect("send");
    }

    pub async fn subscribe(&mut self, id: &str, query: &str, variables: Value) {
        self.ws.send(subscribe(id, query, variables)).await.expect("send");
    }

    /// The next protocol message, answering pings on the way.
    pub async fn recv(&mut self) -> Value {
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(10), self.ws.next()).await.expect("a message within 10 s");
            match frame.expect("the socket stays open").expect("a frame") {
                Message::Text(text) => {
                    let message: Value = serde_json::from_str(&text).expect("JSON");
                    if message["type"] == "ping" {
                        self.ws.send(pong()).await.expect("send");
                        continue;
                    }
                    return message;
                }
                Message::Close(frame) => panic!("closed: {frame:?}"),
                _ => {}
            }
        }
    }

    /// The next result of operation `id`: its `field`, with no errors.
    pub async fn next(&mut self, id: &str, field: &str) -> Value {
        let message = self.recv().await;
        assert_eq!((message["type"].as_str(), message["id"].as_str()), (Some("next"), Some(id)), "{message}");
        assert!(message["payload"]["errors"].is_null(), "{message}");
        message["payload"]["data"][field].clone()
    }

    /// The errors a refused operation gets (as a result with errors, or an `error`).
    pub async fn refused(&mut self) -> Value {
        let message = self.recv().await;
        if message["type"] == "error" { message["payload"].clone() } else { message["payload"]["errors"].clone() }
    }

    /// Runs a one-shot operation: its one `next` payload, then `complete`.
    pub async fn run(&mut self, id: &str, query: &str, variables: Value) -> Value {
        self.subscribe(id, query, variables).await;
        let next = self.recv().await;
        assert_eq!((next["type"].as_str(), next["id"].as_str()), (Some("next"), Some(id)), "{next}");
        assert_eq!(self.recv().await, json!({ "id": id, "type": "complete" }));
        next["payload"].clone()
    }

    /// Nothing but pings arrives for `quiet`.
    pub async fn silent_for(&mut self, quiet: Duration) {
        self.nothing_for(quiet, false).await;
    }

    /// Nothing but pings and the completion of finished operations arrives for `quiet`.
    pub async fn quiet_for(&mut self, quiet: Duration) {
        self.nothing_for(quiet, true).await;
    }

    async fn nothing_for(&mut self, quiet: Duration, completions: bool) {
        let deadline = tokio::time::Instant::now() + quiet;
        loop {
            match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Err(_) => return,
                Ok(Some(Ok(Message::Text(text)))) if text.contains("\"ping\"") => self.ws.send(pong()).await.expect("send"),
                Ok(Some(Ok(Message::Text(text)))) if completions && text.contains("\"complete\"") => {}
                Ok(other) => panic!("expected silence, got {other:?}"),
            }
        }
    }

    /// Reads until the server's close frame; its code and reason.
    pub async fn closed(&mut self) -> (u16, String) {
        loop {
            let frame = tokio::time::timeout(Duration::from_secs(10), self.ws.next()).await.expect("closed within 10 s");
            match frame {
                Some(Ok(Message::Close(Some(frame)))) => {
                    // Reading on sends our answer, completing the closing handshake.
                    let _ = tokio::time::timeout(Duration::from_secs(1), async { while let Some(Ok(_)) = self.ws.next().await {} }).await;
                    return (frame.code.into(), frame.reason.to_string());
                }
                Some(Ok(Message::Close(None))) => panic!("closed without a code"),
                Some(Ok(_)) => {}
                other => panic!("the socket ended without a close frame: {other:?}"),
            }
        }
    }
}
