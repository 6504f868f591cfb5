//! GraphQL over WebSocket at `/graphql/ws`: the `graphql-transport-ws` protocol (preferred) and
//! the legacy `graphql-ws` one of subscriptions-transport-ws. It replaces async-graphql-axum's
//! handler, whose close codes do not follow the graphql-transport-ws spec.
//!
//! A connection authenticates once, in `connection_init`; each operation then runs as its own
//! task with the connection's session data. Everything a connection sends goes through one
//! bounded queue drained by one writer task, so a client that stops reading stalls only its own
//! operations (they wait for room, pulling nothing more from their streams) and, once the queue
//! has stayed full for [`WsConfig::stall_timeout`], is closed with 1013: a connection's memory
//! stays bounded and no other connection ever waits for it.
//!
//! The transport is generic over the [`Executor`], with pluggable authentication and operation
//! hooks; [`graphql_ws`] wires it to the EGS schema and tokens.

use crate::app::AppState;
use crate::graphql_http::MAX_QUERY_BYTES;
use crate::per_user::{Hold, PerUser};
use crate::settings::ServeArgs;
use async_graphql::{Data, ErrorExtensionValues, Executor, Request, Response, ServerError};
use axum::extract::State;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response as HttpResponse};
use egs_schema::auth::{Caller, authenticate};
use egs_schema::error::ErrorCode;
use egs_schema::limits::Principal;
use egs_schema::{EgsSchema, Services};
use futures_util::future::BoxFuture;
use futures_util::stream::{BoxStream, SplitSink, SplitStream};
use futures_util::{FutureExt, SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::any::TypeId;
use std::collections::HashMap;
use std::future::{Future, pending};
use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::{AbortHandle, JoinError, JoinSet};
use tokio::time::{Instant, Interval, MissedTickBehavior};

/// The current protocol (graphql-ws ≥ 5), preferred when a client offers both.
pub const TRANSPORT_WS: &str = "graphql-transport-ws";
/// The legacy subscriptions-transport-ws protocol (Apollo's old client).
pub const LEGACY_WS: &str = "graphql-ws";

/// Messages waiting for one client. Responses are a few KiB, so this bounds what a stalled
/// connection holds to about a MiB.
pub const MAX_QUEUED_MESSAGES: usize = 256;
/// How long an operation may wait for room in a full queue before its client counts as stalled.
pub const STALL_TIMEOUT: Duration = Duration::from_secs(5);
/// Operations one connection may run at once; a dashboard needs a handful.
pub const MAX_OPERATIONS: usize = 100;
/// Each socket's read buffer (see [`GraphqlWs::upgrade`]).
const READ_BUFFER_BYTES: usize = 8 * 1024;
/// How long a closing socket waits for its close frame to go out and for the client's reply.
pub const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// What a stalled client is told; it reconnects and resumes its event streams from there.
pub const STALLED_REASON: &str = "subscriber too slow: reconnect and resume with `after` = the last event id you received";

/// Close codes: RFC 6455 and the graphql-transport-ws spec.
pub mod close_code {
    pub const NORMAL: u16 = 1000;
    pub const GOING_AWAY: u16 = 1001;
    pub const PROTOCOL_ERROR: u16 = 1002;
    pub const POLICY_VIOLATION: u16 = 1008;
    pub const MESSAGE_TOO_BIG: u16 = 1009;
    pub const INTERNAL_ERROR: u16 = 1011;
    pub const TRY_AGAIN_LATER: u16 = 1013;
    pub const BAD_REQUEST: u16 = 4400;
    pub const UNAUTHORIZED: u16 = 4401;
    pub const FORBIDDEN: u16 = 4403;
    pub const INIT_TIMEOUT: u16 = 4408;
    pub const SUBSCRIBER_EXISTS: u16 = 4409;
    pub const TOO_MANY_INITS: u16 = 4429;
}

/// Limits and timers of every connection.
#[derive(Clone, Debug)]
pub struct WsConfig {
    /// How long a client has to send `connection_init` (4408 after).
    pub init_timeout: Duration,
    /// Interval of the keep-alive `ping` (`ka` on the legacy protocol) once acknowledged.
    pub keep_alive: Duration,
    /// Size of the outbound queue; see [`MAX_QUEUED_MESSAGES`].
    pub queue_capacity: usize,
    /// See [`STALL_TIMEOUT`].
    pub stall_timeout: Duration,
    /// See [`MAX_OPERATIONS`].
    pub max_operations: usize,
    /// Largest message accepted from a client (1009 above).
    pub max_message_bytes: usize,
    /// Longest query text accepted in `subscribe`.
    pub max_query_bytes: usize,
    /// See [`CLOSE_GRACE`].
    pub close_grace: Duration,
}

impl Default for WsConfig {
    fn default() -> Self {
        Self {
            init_timeout: Duration::from_secs(10),
            keep_alive: Duration::from_secs(15),
            queue_capacity: MAX_QUEUED_MESSAGES,
            stall_timeout: STALL_TIMEOUT,
            max_operations: MAX_OPERATIONS,
            max_message_bytes: 1024 * 1024,
            max_query_bytes: MAX_QUERY_BYTES,
            close_grace: CLOSE_GRACE,
        }
    }
}

impl WsConfig {
    pub fn from_settings(settings: &ServeArgs) -> Self {
        Self {
            init_timeout: Duration::from_secs(settings.ws.init_timeout_secs),
            keep_alive: Duration::from_secs(settings.ws.keep_alive_secs),
            max_message_bytes: settings.max_body_bytes,
            ..Self::default()
        }
    }
}

/// Per-process WebSocket state: the configuration and the signal that closes every socket when
/// the server shuts down.
pub struct Sockets {
    pub config: WsConfig,
    /// Becomes `true` when the server is going away. Every open socket holds a receiver, so
    /// the sender also learns when the last one has closed.
    going_away: watch::Sender<bool>,
}

impl Sockets {
    pub fn new(config: WsConfig) -> Self {
        Self { config, going_away: watch::Sender::new(false) }
    }

    /// What a new connection watches to learn that the server is going away.
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.going_away.subscribe()
    }

    /// Tells every open socket to close with 1001 (Going Away), so clients reconnect elsewhere.
    pub fn shut_down(&self) {
        self.going_away.send_replace(true);
    }

    /// Completes when `shutdown` does, after telling every socket to close.
    pub fn shut_down_on(self: &Arc<Self>, shutdown: impl Future<Output = ()> + Send + 'static) -> impl Future<Output = ()> + Send + 'static {
        let sockets = self.clone();
        async move {
            shutdown.await;
            sockets.shut_down();
        }
    }

    /// Waits until every socket has closed, or the close grace has passed twice.
    pub async fn closed(&self) {
        let _ = tokio::time::timeout(self.config.close_grace * 2, self.going_away.closed()).await;
    }
}

/// The two protocols spoken.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Protocol {
    TransportWs,
    LegacyWs,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Self::TransportWs => TRANSPORT_WS,
            Self::LegacyWs => LEGACY_WS,
        }
    }
}

/// Why `connection_init` was refused.
#[derive(Debug)]
pub enum InitError {
    /// Bad or missing credentials: closed with 4403.
    Forbidden(String),
    /// Could not decide (the database is down): closed with 1011; the client should retry.
    Unavailable(String),
    /// The user holds as many connections as allowed: closed with 1008 (policy violation).
    TooMany(String),
}

/// Checks `connection_init`'s payload; the data returned is every operation's session data.
pub type InitHook = Arc<dyn Fn(Option<Value>) -> BoxFuture<'static, Result<Data, InitError>> + Send + Sync>;
/// Runs one operation with the connection's session data.
pub type OperationHook<E> = Arc<dyn Fn(&E, Request, Arc<Data>) -> BoxStream<'static, Response> + Send + Sync>;
/// Checks now and then that an acknowledged connection may go on (its token not revoked or
/// expired); a `Forbidden` closes it with 4403.
pub type RecheckHook = (Duration, Arc<dyn Fn(Arc<Data>) -> BoxFuture<'static, Result<(), InitError>> + Send + Sync>);

/// The transport for one executor; cheap to clone, one clone per connection.
#[derive(Clone)]
pub struct GraphqlWs<E> {
    executor: E,
    config: WsConfig,
    on_init: InitHook,
    on_operation: OperationHook<E>,
    on_recheck: Option<RecheckHook>,
    going_away: Option<watch::Receiver<bool>>,
}

impl<E: Executor> GraphqlWs<E> {
    /// Accepts every `connection_init` with empty session data until
    /// [`GraphqlWs::on_connection_init`] says otherwise.
    pub fn new(executor: E, config: WsConfig) -> Self {
        Self {
            executor,
            config,
            on_init: Arc::new(|_| async { Ok(Data::default()) }.boxed()),
            on_operation: Arc::new(|executor: &E, request, session| executor.execute_stream(request, Some(session))),
            on_recheck: None,
            going_away: None,
        }
    }

    /// Authenticates connections.
    pub fn on_connection_init<F, Fut>(mut self, hook: F) -> Self
    where
        F: Fn(Option<Value>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Data, InitError>> + Send + 'static,
    {
        self.on_init = Arc::new(move |payload| hook(payload).boxed());
        self
    }

    /// Runs operations; the default is `executor.execute_stream(request, Some(session))`.
    pub fn on_operation<F>(mut self, hook: F) -> Self
    where
        F: Fn(&E, Request, Arc<Data>) -> BoxStream<'static, Response> + Send + Sync + 'static,
    {
        self.on_operation = Arc::new(hook);
        self
    }

    /// Every `every`, asks `hook` whether the connection may go on; `Forbidden` closes it with
    /// 4403 (a revoked or expired token must not keep streaming).
    pub fn recheck_every<F, Fut>(mut self, every: Duration, hook: F) -> Self
    where
        F: Fn(Arc<Data>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), InitError>> + Send + 'static,
    {
        self.on_recheck = Some((every, Arc::new(move |session| hook(session).boxed())));
        self
    }

    /// Closes the socket with 1001 when this turns `true` (or its sender goes away).
    pub fn going_away(mut self, signal: watch::Receiver<bool>) -> Self {
        self.going_away = Some(signal);
        self
    }

    /// Answers an upgrade request: negotiates the subprotocol, or refuses with 400.
    pub fn upgrade(self, upgrade: WebSocketUpgrade) -> HttpResponse {
        let upgrade = upgrade
            .protocols([TRANSPORT_WS, LEGACY_WS])
            // tungstenite fills its whole read buffer before each read: the 128 KiB default
            // would make every idle subscriber cost 128 KiB. Larger messages still fit (the
            // buffer grows to the frame); clients send little.
            .read_buffer_size(READ_BUFFER_BYTES)
            .max_message_size(self.config.max_message_bytes)
            .max_frame_size(self.config.max_message_bytes);
        let protocol = match upgrade.selected_protocol().map(HeaderValue::as_bytes) {
            Some(p) if p == TRANSPORT_WS.as_bytes() => Protocol::TransportWs,
            Some(p) if p == LEGACY_WS.as_bytes() => Protocol::LegacyWs,
            _ => {
                return refuse(
                    StatusCode::BAD_REQUEST,
                    &format!("no acceptable WebSocket subprotocol: ask for `{TRANSPORT_WS}` (or the legacy `{LEGACY_WS}`) in Sec-WebSocket-Protocol"),
                );
            }
        };
        upgrade.on_upgrade(move |socket| self.serve(socket, protocol))
    }

    /// Speaks `protocol` on an upgraded socket until either side closes it.
    pub async fn serve(self, socket: WebSocket, protocol: Protocol) {
        let grace = self.config.close_grace;
        // Held to the end: the server's shutdown waits until the close frame has gone out.
        let _open = self.going_away.clone();
        let (sink, mut stream) = socket.split();
        let (queue, queued) = mpsc::channel(self.config.queue_capacity.max(1));
        let (closing, closing_rx) = watch::channel(None);
        let outbox = Outbox { queue, closing, stall_timeout: self.config.stall_timeout };
        let writer = tokio::spawn(write_socket(sink, queued, closing_rx.clone(), grace));
        let mut connection = Connection {
            init_deadline: Instant::now() + self.config.init_timeout,
            ws: self,
            protocol,
            outbox,
            closing: closing_rx,
            init: Init::Waiting,
            keep_alive: None,
            recheck: None,
            operations: HashMap::new(),
            tasks: JoinSet::new(),
            early_starts: Vec::new(),
        };
        connection.run(&mut stream).await;
        // Stops every operation and lets the writer finish once its queue is dropped.
        drop(connection);
        // Reads on until the client answers our close frame (or tungstenite has answered
        // theirs), so the socket is not torn down under a close frame still in flight.
        let _ = tokio::time::timeout(grace, async { while let Some(Ok(_)) = stream.next().await {} }).await;
        let _ = tokio::time::timeout(grace, writer).await;
    }
}

/// A refusal before the upgrade, in the GraphQL-over-HTTP error shape.
fn refuse(status: StatusCode, message: &str) -> HttpResponse {
    let body = json!({ "errors": [{ "message": message, "extensions": { "code": ErrorCode::InvalidInput.as_str() } }] });
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json; charset=utf-8"));
    response
}

/// A request to close the socket.
#[derive(Clone, Debug)]
struct Close {
    code: u16,
    reason: String,
    /// Sent just before the close frame (the legacy `connection_error`).
    last: Option<String>,
}

/// The sending side of a connection, shared by its reader and its operations.
#[derive(Clone)]
struct Outbox {
    queue: mpsc::Sender<String>,
    /// The first close request wins; the writer sends it ahead of anything still queued.
    closing: watch::Sender<Option<Close>>,
    stall_timeout: Duration,
}

/// The connection is closing or closed: stop producing.
struct Closed;

impl Outbox {
    /// Queues a message, waiting for room; a queue that stays full past the stall timeout
    /// means the client stopped reading, and the socket is closed with 1013.
    async fn push(&self, message: String) -> Result<(), Closed> {
        match tokio::time::timeout(self.stall_timeout, self.queue.send(message)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(Closed),
            Err(_) => {
                tracing::debug!(stall_timeout_ms = self.stall_timeout.as_millis() as u64, "a WebSocket client stopped reading; closing it");
                self.close(close_code::TRY_AGAIN_LATER, STALLED_REASON, None);
                Err(Closed)
            }
        }
    }

    /// Queues a message; a failure means the connection is closing, which its loop sees next.
    async fn send(&self, message: ServerMessage<'_>) {
        if let Some(text) = message.encode() {
            let _ = self.push(text).await;
        }
    }

    /// Queues a message that may be skipped when the queue is full (keep-alives).
    fn offer(&self, message: String) {
        let _ = self.queue.try_send(message);
    }

    fn close(&self, code: u16, reason: &str, last: Option<String>) {
        self.closing.send_if_modified(|current| {
            if current.is_some() {
                return false;
            }
            *current = Some(Close { code, reason: truncate(reason, 123).to_owned(), last });
            true
        });
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary (a close reason holds 123).
fn truncate(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The writer task: drains the queue into the socket, what is queued together in one flush; on
/// a close request, sends the close frame at once (within the grace, for a client that is not
/// reading) and stops.
async fn write_socket(
    mut sink: SplitSink<WebSocket, Message>,
    mut queue: mpsc::Receiver<String>,
    mut closing: watch::Receiver<Option<Close>>,
    grace: Duration,
) {
    let batch = queue.max_capacity();
    let close = loop {
        let text = tokio::select! {
            biased;
            close = close_requested(&mut closing) => break close,
            text = queue.recv() => match text {
                Some(text) => text,
                None => return,
            },
        };
        let sent = async {
            sink.feed(Message::Text(text.into())).await?;
            for _ in 1..batch {
                let Ok(text) = queue.try_recv() else { break };
                sink.feed(Message::Text(text.into())).await?;
            }
            sink.flush().await
        };
        tokio::select! {
            biased;
            close = close_requested(&mut closing) => break close,
            sent = sent => if sent.is_err() {
                return;
            },
        }
    };
    let Some(close) = close else { return };
    let sent = tokio::time::timeout(grace, async {
        if let Some(last) = close.last {
            sink.send(Message::Text(last.into())).await?;
        }
        sink.send(Message::Close(Some(CloseFrame { code: close.code, reason: close.reason.clone().into() }))).await
    })
    .await;
    if !matches!(sent, Ok(Ok(()))) {
        tracing::debug!(close.code = close.code, "could not send a WebSocket close frame; dropping the connection");
    }
}

/// The close requested, once there is one; `None` when the connection is gone without one.
async fn close_requested(closing: &mut watch::Receiver<Option<Close>>) -> Option<Close> {
    match closing.wait_for(Option::is_some).await {
        Ok(close) => close.clone(),
        Err(_) => None,
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ClientMessage {
    ConnectionInit {
        #[serde(default)]
        payload: Option<Value>,
    },
    Ping {
        #[serde(default)]
        payload: Option<Value>,
    },
    Pong {},
    Subscribe {
        id: String,
        payload: Request,
    },
    Complete {
        id: String,
    },
    // The legacy protocol's.
    Start {
        id: String,
        payload: Request,
    },
    Stop {
        id: String,
    },
    ConnectionTerminate {},
}

impl ClientMessage {
    fn name(&self) -> &'static str {
        match self {
            Self::ConnectionInit { .. } => "connection_init",
            Self::Ping { .. } => "ping",
            Self::Pong {} => "pong",
            Self::Subscribe { .. } => "subscribe",
            Self::Complete { .. } => "complete",
            Self::Start { .. } => "start",
            Self::Stop { .. } => "stop",
            Self::ConnectionTerminate {} => "connection_terminate",
        }
    }

    fn belongs_to(&self, protocol: Protocol) -> bool {
        match self {
            Self::ConnectionInit { .. } => true,
            Self::Ping { .. } | Self::Pong {} | Self::Subscribe { .. } | Self::Complete { .. } => protocol == Protocol::TransportWs,
            Self::Start { .. } | Self::Stop { .. } | Self::ConnectionTerminate {} => protocol == Protocol::LegacyWs,
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ServerMessage<'a> {
    ConnectionAck,
    Ping,
    Pong {
        #[serde(skip_serializing_if = "Option::is_none")]
        payload: Option<Value>,
    },
    Next {
        id: &'a str,
        payload: &'a Response,
    },
    Error {
        id: &'a str,
        payload: Value,
    },
    Complete {
        id: &'a str,
    },
    // The legacy protocol's.
    Data {
        id: &'a str,
        payload: &'a Response,
    },
    ConnectionError {
        payload: Value,
    },
    Ka,
}

impl ServerMessage<'_> {
    fn encode(&self) -> Option<String> {
        serde_json::to_string(self).map_err(|e| tracing::error!(error = %e, "failed to serialize a WebSocket message")).ok()
    }
}

/// A GraphQL error array for an operation we refuse ourselves.
fn error_payload(message: &str, code: ErrorCode) -> Value {
    json!([{ "message": message, "extensions": { "code": code.as_str() } }])
}

fn too_many_operations(id: &str, limit: usize) -> ServerMessage<'_> {
    let payload = error_payload(&format!("too many operations on this connection (at most {limit}); complete one first"), ErrorCode::RateLimited);
    ServerMessage::Error { id, payload }
}

/// Errors without a path happened before execution (parse, validation, limits): the spec sends
/// those as one `error` message instead of `next`.
fn is_request_error(response: &Response) -> bool {
    response.data == async_graphql::Value::Null && !response.errors.is_empty() && response.errors.iter().all(|e| e.path.is_empty())
}

enum Init {
    Waiting,
    Authenticating(BoxFuture<'static, Result<Data, InitError>>),
    Ready(Arc<Data>),
}

/// What woke the connection up.
enum Event {
    GoingAway,
    Closing,
    InitTimeout,
    Authenticated(Result<Data, InitError>),
    Finished(Result<(tokio::task::Id, ()), JoinError>),
    KeepAlive,
    Recheck,
    Received(Option<Result<Message, axum::Error>>),
}

/// The reading side of a connection and its operations.
struct Connection<E> {
    ws: GraphqlWs<E>,
    protocol: Protocol,
    outbox: Outbox,
    closing: watch::Receiver<Option<Close>>,
    init: Init,
    init_deadline: Instant,
    keep_alive: Option<Interval>,
    /// When the session is next checked (see [`GraphqlWs::recheck_every`]).
    recheck: Option<Interval>,
    /// Running operations by client id; a finished one is removed by its task id, so an id the
    /// client has already reused is not touched.
    operations: HashMap<String, AbortHandle>,
    tasks: JoinSet<()>,
    /// Legacy clients send `start` right after `connection_init` without waiting for the ack.
    early_starts: Vec<(String, Request)>,
}

impl<E: Executor> Connection<E> {
    async fn run(&mut self, stream: &mut SplitStream<WebSocket>) {
        loop {
            let ready = matches!(self.init, Init::Ready(_));
            let event = tokio::select! {
                biased;
                () = going_away(&mut self.ws.going_away) => Event::GoingAway,
                Ok(_) = self.closing.wait_for(Option::is_some) => Event::Closing,
                () = tokio::time::sleep_until(self.init_deadline), if !ready => Event::InitTimeout,
                result = authenticated(&mut self.init) => Event::Authenticated(result),
                Some(done) = self.tasks.join_next_with_id() => Event::Finished(done),
                () = tick(&mut self.keep_alive) => Event::KeepAlive,
                () = tick(&mut self.recheck) => Event::Recheck,
                message = stream.next() => Event::Received(message),
            };
            if self.handle(event).await.is_break() {
                return;
            }
        }
    }

    async fn handle(&mut self, event: Event) -> ControlFlow<()> {
        match event {
            Event::GoingAway => self.close(close_code::GOING_AWAY, "the server is shutting down; reconnect"),
            Event::Closing => ControlFlow::Break(()),
            Event::InitTimeout => match self.init {
                Init::Authenticating(_) => self.close(close_code::INTERNAL_ERROR, "timed out authenticating the connection; reconnect later"),
                _ => self.close(close_code::INIT_TIMEOUT, "Connection initialisation timeout"),
            },
            Event::Authenticated(result) => self.authenticated(result).await,
            Event::Finished(done) => {
                self.finished(done).await;
                ControlFlow::Continue(())
            }
            Event::KeepAlive => {
                let message = match self.protocol {
                    Protocol::TransportWs => ServerMessage::Ping,
                    Protocol::LegacyWs => ServerMessage::Ka,
                };
                if let Some(text) = message.encode() {
                    self.outbox.offer(text);
                }
                ControlFlow::Continue(())
            }
            Event::Recheck => {
                let (Init::Ready(session), Some((_, hook))) = (&self.init, &self.ws.on_recheck) else { return ControlFlow::Continue(()) };
                match hook(session.clone()).await {
                    Err(InitError::Forbidden(why)) => {
                        tracing::debug!(%why, "a WebSocket connection's token is no longer valid");
                        self.close(close_code::FORBIDDEN, "Forbidden")
                    }
                    // The database is away: the next check decides.
                    Ok(()) | Err(InitError::Unavailable(_) | InitError::TooMany(_)) => ControlFlow::Continue(()),
                }
            }
            Event::Received(None) => ControlFlow::Break(()),
            Event::Received(Some(Err(error))) => {
                let too_big = std::error::Error::source(&error)
                    .and_then(|e| e.downcast_ref::<tokio_tungstenite::tungstenite::Error>())
                    .is_some_and(|e| matches!(e, tokio_tungstenite::tungstenite::Error::Capacity(_)));
                if too_big {
                    let limit = self.ws.config.max_message_bytes;
                    self.close(close_code::MESSAGE_TOO_BIG, &format!("messages are limited to {limit} bytes"))
                } else {
                    tracing::debug!(error = %error, "a WebSocket connection failed");
                    self.close(close_code::PROTOCOL_ERROR, "unreadable WebSocket frame")
                }
            }
            Event::Received(Some(Ok(Message::Text(text)))) => self.received(text.as_bytes()).await,
            Event::Received(Some(Ok(Message::Binary(bytes)))) => self.received(&bytes).await,
            // tungstenite answers the close frame; the caller reads on until it has gone out.
            Event::Received(Some(Ok(Message::Close(_)))) => ControlFlow::Break(()),
            Event::Received(Some(Ok(Message::Ping(_) | Message::Pong(_)))) => ControlFlow::Continue(()),
        }
    }

    fn close(&self, code: u16, reason: &str) -> ControlFlow<()> {
        self.outbox.close(code, reason, None);
        ControlFlow::Break(())
    }

    async fn received(&mut self, bytes: &[u8]) -> ControlFlow<()> {
        let message: ClientMessage = match serde_json::from_slice(bytes) {
            Ok(message) => message,
            Err(e) => return self.close(close_code::BAD_REQUEST, &format!("Invalid message received: {e}")),
        };
        if !message.belongs_to(self.protocol) {
            return self.close(close_code::BAD_REQUEST, &format!("`{}` is not a {} message", message.name(), self.protocol.name()));
        }
        match message {
            ClientMessage::ConnectionInit { payload } => {
                if !matches!(self.init, Init::Waiting) {
                    return self.close(close_code::TOO_MANY_INITS, "Too many initialisation requests");
                }
                self.init = Init::Authenticating((self.ws.on_init)(payload));
            }
            ClientMessage::Ping { payload } => self.outbox.send(ServerMessage::Pong { payload }).await,
            ClientMessage::Pong {} => {}
            ClientMessage::Subscribe { id, payload } => {
                if !matches!(self.init, Init::Ready(_)) {
                    return self.close(close_code::UNAUTHORIZED, "Unauthorized");
                }
                if self.operations.contains_key(&id) {
                    return self.close(close_code::SUBSCRIBER_EXISTS, &format!("Subscriber for {id} already exists"));
                }
                self.start(id, payload).await;
            }
            ClientMessage::Start { id, payload } => match self.init {
                Init::Waiting => return self.close(close_code::UNAUTHORIZED, "Unauthorized"),
                Init::Authenticating(_) if self.early_starts.len() >= self.ws.config.max_operations => {
                    self.outbox.send(too_many_operations(&id, self.ws.config.max_operations)).await
                }
                Init::Authenticating(_) => self.early_starts.push((id, payload)),
                Init::Ready(_) => {
                    // The legacy protocol replaces an operation whose id is reused.
                    if let Some(previous) = self.operations.remove(&id) {
                        previous.abort();
                    }
                    self.start(id, payload).await;
                }
            },
            ClientMessage::Complete { id } => {
                if let Some(operation) = self.operations.remove(&id) {
                    operation.abort();
                }
            }
            ClientMessage::Stop { id } => {
                let running = self.operations.remove(&id);
                let waiting = self.early_starts.iter().position(|(early, _)| *early == id).map(|at| self.early_starts.remove(at));
                if let Some(operation) = &running {
                    operation.abort();
                }
                if running.is_some() || waiting.is_some() {
                    self.outbox.send(ServerMessage::Complete { id: &id }).await;
                }
            }
            ClientMessage::ConnectionTerminate {} => return self.close(close_code::NORMAL, "terminated by the client"),
        }
        ControlFlow::Continue(())
    }

    async fn authenticated(&mut self, result: Result<Data, InitError>) -> ControlFlow<()> {
        let session = match result {
            Ok(session) => Arc::new(session),
            Err(refusal) => {
                let (code, reason, why) = match refusal {
                    InitError::Forbidden(why) => (close_code::FORBIDDEN, "Forbidden".to_owned(), why),
                    InitError::Unavailable(why) => (close_code::INTERNAL_ERROR, why.clone(), why),
                    InitError::TooMany(why) => (close_code::POLICY_VIOLATION, why.clone(), why),
                };
                let last = match self.protocol {
                    Protocol::TransportWs => None,
                    Protocol::LegacyWs => ServerMessage::ConnectionError { payload: json!({ "message": why }) }.encode(),
                };
                self.outbox.close(code, &reason, last);
                return ControlFlow::Break(());
            }
        };
        self.init = Init::Ready(session);
        self.outbox.send(ServerMessage::ConnectionAck).await;
        if self.protocol == Protocol::LegacyWs {
            self.outbox.send(ServerMessage::Ka).await;
        }
        let period = self.ws.config.keep_alive;
        let mut keep_alive = tokio::time::interval_at(Instant::now() + period, period);
        keep_alive.set_missed_tick_behavior(MissedTickBehavior::Delay);
        self.keep_alive = Some(keep_alive);
        if let Some((every, _)) = &self.ws.on_recheck {
            let mut recheck = tokio::time::interval_at(Instant::now() + *every, *every);
            recheck.set_missed_tick_behavior(MissedTickBehavior::Delay);
            self.recheck = Some(recheck);
        }
        for (id, request) in std::mem::take(&mut self.early_starts) {
            self.start(id, request).await;
        }
        ControlFlow::Continue(())
    }

    async fn start(&mut self, id: String, request: Request) {
        let Init::Ready(session) = &self.init else { return };
        if self.operations.len() >= self.ws.config.max_operations {
            return self.outbox.send(too_many_operations(&id, self.ws.config.max_operations)).await;
        }
        let limit = self.ws.config.max_query_bytes;
        if request.query.len() > limit {
            let payload = error_payload(&format!("the query is longer than {limit} bytes"), ErrorCode::InvalidInput);
            return self.outbox.send(ServerMessage::Error { id: &id, payload }).await;
        }
        let responses = (self.ws.on_operation)(&self.ws.executor, request, session.clone());
        let task = self.tasks.spawn(run_operation(id.clone(), self.protocol, responses, self.outbox.clone()));
        self.operations.insert(id, task);
    }

    async fn finished(&mut self, done: Result<(tokio::task::Id, ()), JoinError>) {
        let task = match &done {
            Ok((task, ())) => *task,
            Err(error) => error.id(),
        };
        let id = self.operations.iter().find(|(_, operation)| operation.id() == task).map(|(id, _)| id.clone());
        let Some(id) = id else { return };
        self.operations.remove(&id);
        if let Err(error) = done
            && error.is_panic()
        {
            tracing::error!(operation.id = %id, "a WebSocket operation panicked");
            let payload = error_payload("internal error; it has been logged", ErrorCode::Internal);
            self.outbox.send(ServerMessage::Error { id: &id, payload }).await;
        }
    }
}

async fn going_away(signal: &mut Option<watch::Receiver<bool>>) {
    match signal {
        // A dropped sender means the server is gone too.
        Some(signal) => {
            let _ = signal.wait_for(|gone| *gone).await;
        }
        None => pending().await,
    }
}

async fn authenticated(init: &mut Init) -> Result<Data, InitError> {
    match init {
        Init::Authenticating(authenticating) => authenticating.await,
        _ => pending().await,
    }
}

async fn tick(keep_alive: &mut Option<Interval>) {
    match keep_alive {
        Some(keep_alive) => {
            keep_alive.tick().await;
        }
        None => pending().await,
    }
}

/// One operation's task: its responses become `next` (`data`) messages, then `complete`; a
/// request that fails before execution becomes one `error` message.
async fn run_operation(id: String, protocol: Protocol, mut responses: BoxStream<'static, Response>, outbox: Outbox) {
    let mut first = true;
    while let Some(response) = responses.next().await {
        let message = if std::mem::take(&mut first) && is_request_error(&response) {
            let payload = serde_json::to_value(&response.errors).unwrap_or_else(|_| error_payload("the request failed", ErrorCode::InvalidInput));
            if let Some(text) = (ServerMessage::Error { id: &id, payload }).encode() {
                let _ = outbox.push(text).await;
            }
            return;
        } else if protocol == Protocol::TransportWs {
            ServerMessage::Next { id: &id, payload: &response }
        } else {
            ServerMessage::Data { id: &id, payload: &response }
        };
        if let Some(text) = message.encode()
            && outbox.push(text).await.is_err()
        {
            return;
        }
    }
    if let Some(text) = (ServerMessage::Complete { id: &id }).encode() {
        let _ = outbox.push(text).await;
    }
}

/// The connection's token, checked again for each operation, so a token revoked or expired
/// while a socket is open stops working there as soon as on HTTP.
struct ConnectionToken(String);

/// The highest `access_version` of the connection's user seen by the token checks: an
/// operation started under a lower one ends (see [`end_when_access_shrinks`]).
struct AccessSeen(watch::Sender<i64>);

/// The connection's place among what its user may hold open; given back when it closes.
struct ConnectionHold(#[allow(dead_code)] Hold);

/// `GET /graphql/ws`: GraphQL over WebSocket for the EGS schema. Tokens come in
/// `connection_init`, never from cookies, so a cross-site page cannot ride a user's session.
pub async fn graphql_ws(State(state): State<AppState>, upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>) -> HttpResponse {
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => {
            let message = format!(
                "{}: this endpoint speaks GraphQL over WebSocket (`{TRANSPORT_WS}`); send plain HTTP requests to /graphql",
                rejection.body_text()
            );
            return refuse(rejection.status(), &message);
        }
    };
    let (init_services, init_per_user) = (state.services.clone(), state.per_user.clone());
    let recheck_services = state.services.clone();
    let (services, per_user) = (state.services.clone(), state.per_user.clone());
    GraphqlWs::new(state.schema.clone(), state.sockets.config.clone())
        .on_connection_init(move |payload| authenticate_connection(init_services.clone(), init_per_user.clone(), payload))
        .on_operation(move |schema, request, session| execute_operation(schema, &services, &per_user, request, &session))
        .recheck_every(RECHECK_TOKEN, move |session| recheck_token(recheck_services.clone(), session))
        .going_away(state.sockets.subscribe())
        .upgrade(upgrade)
}

/// How often a connection's token is checked again: a revoked one is forgotten by every
/// replica's cache at once (Redis), an expired one fails the check, so streams end within this.
/// The same check sees that the user lost slice access.
const RECHECK_TOKEN: Duration = Duration::from_secs(2);

fn session_data<T: 'static>(session: &Data) -> Option<&T> {
    session.get(&TypeId::of::<T>()).and_then(|data| data.downcast_ref::<T>())
}

/// Whether the connection's token still authenticates (not revoked, not expired); passes on
/// the user's access version to the running operations.
async fn recheck_token(services: Services, session: Arc<Data>) -> Result<(), InitError> {
    let Some(token) = session_data::<ConnectionToken>(&session).map(|t| t.0.clone()) else {
        return Err(InitError::Forbidden("the connection is not authenticated".into()));
    };
    let caller = verify(&services, &token).await?;
    if let Some(seen) = session_data::<AccessSeen>(&session) {
        let now = caller.record.access_version;
        seen.0.send_if_modified(|seen| (now > *seen).then(|| *seen = now).is_some());
    }
    Ok(())
}

/// The token from `connection_init`: `{"authorization": "Bearer <token>"}` (any case of the key
/// and of `Bearer`), or `{"token": "<token>"}`.
fn token_from(payload: Option<&Value>) -> Option<String> {
    let fields = payload?.as_object()?;
    let token = match fields.get("authorization").or_else(|| fields.get("Authorization")).and_then(Value::as_str) {
        Some(header) => {
            let (scheme, token) = header.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then_some(token)?
        }
        None => fields.get("token").and_then(Value::as_str)?,
    };
    Some(token.trim()).filter(|t| !t.is_empty()).map(str::to_owned)
}

async fn authenticate_connection(services: Services, per_user: Arc<PerUser>, payload: Option<Value>) -> Result<Data, InitError> {
    let Some(token) = token_from(payload.as_ref()) else {
        return Err(InitError::Forbidden("send the token in `connection_init`: {\"authorization\": \"Bearer <token>\"}".into()));
    };
    let caller = verify(&services, &token).await?;
    let hold = per_user.connection(Principal::of(Some(&caller))).map_err(InitError::TooMany)?;
    let mut session = Data::default();
    session.insert(AccessSeen(watch::Sender::new(caller.record.access_version)));
    session.insert(caller);
    session.insert(ConnectionToken(token));
    session.insert(ConnectionHold(hold));
    Ok(session)
}

async fn verify(services: &Services, token: &str) -> Result<Caller, InitError> {
    authenticate(&services.db, &services.keys, &services.token_cache, token).await.map_err(|error| {
        if error.code() == ErrorCode::Unauthenticated {
            InitError::Forbidden(error.public_message())
        } else {
            static UNAVAILABLE: egs_schema::log_throttle::Throttle = egs_schema::log_throttle::Throttle::new(egs_schema::log_throttle::EVERY);
            if let Some(left_out) = UNAVAILABLE.admit() {
                tracing::error!(error = ?error, left_out, "failed to authenticate a WebSocket connection");
            }
            InitError::Unavailable("the database is unavailable; reconnect later".into())
        }
    })
}

/// One error response with `code`, as an operation's whole answer.
fn refused_operation(message: String, code: ErrorCode) -> BoxStream<'static, Response> {
    let mut error = ServerError::new(message, None);
    let mut extensions = ErrorExtensionValues::default();
    extensions.set("code", code.as_str());
    error.extensions = Some(extensions);
    futures_util::stream::once(async move { Response::from_errors(vec![error]) }).boxed()
}

/// Runs an operation the way HTTP does (fresh DataLoaders, a fresh caller whose memberships
/// load once per operation), after checking the connection's token again. It holds one of its
/// user's places for live operations while it runs, and ends when the user loses slice access.
fn execute_operation(
    schema: &EgsSchema,
    services: &Services,
    per_user: &Arc<PerUser>,
    request: Request,
    session: &Data,
) -> BoxStream<'static, Response> {
    let token = session_data::<ConnectionToken>(session).map(|t| t.0.clone());
    let access = session_data::<AccessSeen>(session).map(|seen| seen.0.subscribe());
    let (schema, services, per_user) = (schema.clone(), services.clone(), per_user.clone());
    futures_util::stream::once(async move {
        let caller = match token {
            Some(token) => verify(&services, &token).await,
            None => Err(InitError::Forbidden("the connection is not authenticated".into())),
        };
        match caller {
            Ok(caller) => {
                let hold = match per_user.operation(Principal::of(Some(&caller))) {
                    Ok(hold) => hold,
                    Err(why) => return refused_operation(why, ErrorCode::LimitExceeded),
                };
                let started = caller.record.access_version;
                let responses = egs_schema::execute_stream(&schema, &services, request, Some(caller)).map(mark_request_errors);
                let responses = match access {
                    Some(access) => end_when_access_shrinks(responses, access, started),
                    None => responses.boxed(),
                };
                // The place is given back when the stream is dropped, however it ends.
                responses
                    .map(move |response| {
                        let _held = &hold;
                        response
                    })
                    .boxed()
            }
            Err(InitError::Forbidden(why)) => refused_operation(why, ErrorCode::Unauthenticated),
            Err(InitError::Unavailable(why) | InitError::TooMany(why)) => refused_operation(why, ErrorCode::Internal),
        }
    })
    .flatten()
    .boxed()
}

/// Passes `responses` on until the user's access version rises above `started` (they were
/// removed from a slice, given a lower role, or a slice of theirs was deleted), then ends with
/// a `FORBIDDEN` error: what it streams was decided under access the user no longer has. A
/// new subscription is judged afresh.
fn end_when_access_shrinks(
    responses: impl futures_util::Stream<Item = Response> + Send + 'static,
    mut access: watch::Receiver<i64>,
    started: i64,
) -> BoxStream<'static, Response> {
    let shrunk: BoxFuture<'static, ()> = async move {
        // A dropped sender means the connection is closing: nothing to say.
        if access.wait_for(|now| *now > started).await.is_err() {
            pending::<()>().await;
        }
    }
    .boxed();
    futures_util::stream::unfold(Some((responses.boxed(), shrunk)), |state| async move {
        let (mut responses, mut shrunk) = state?;
        tokio::select! {
            biased;
            () = &mut shrunk => {
                let mut error = ServerError::new("your access to slices changed since this operation started; start it again to see what you may see now", None);
                let mut extensions = ErrorExtensionValues::default();
                extensions.set("code", ErrorCode::Forbidden.as_str());
                error.extensions = Some(extensions);
                Some((Response::from_errors(vec![error]), None))
            }
            next = responses.next() => next.map(|response| (response, Some((responses, shrunk)))),
        }
    })
    .boxed()
}

/// Request errors carry a stable code, as on HTTP.
fn mark_request_errors(mut response: Response) -> Response {
    if is_request_error(&response) {
        for error in &mut response.errors {
            // Parse and validation errors carry no code of their own; refusals (RATE_LIMITED,
            // TOO_COMPLEX) keep theirs.
            let extensions = error.extensions.get_or_insert_with(ErrorExtensionValues::default);
            if extensions.get("code").is_none() {
                extensions.set("code", ErrorCode::InvalidInput.as_str());
            }
        }
    }
    response
}

#[cfg(test)]
mod tests {
    //! A tiny schema served on a loopback port, driven by a real WebSocket client.

    use super::*;
    use async_graphql::{Context, EmptyMutation, Object, Schema, Subscription};
    use futures_util::Stream;
    use std::net::SocketAddr;
    use tokio::net::TcpStream;
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
        for payload in
            [json!({}), json!({ "authorization": "Basic abc" }), json!({ "authorization": "Bearer " }), json!({ "token": 7 }), json!("abc")]
        {
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
}
