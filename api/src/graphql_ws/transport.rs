//! The transport's public face: a builder over any async-graphql [`Executor`] with pluggable
//! authentication, operation and recheck hooks, and the HTTP upgrade.

use super::connection::{Connection, Init};
use super::outbox::{Outbox, write_socket};
use super::{LEGACY_WS, READ_BUFFER_BYTES, TRANSPORT_WS, WsConfig};
use crate::graphql_http::{Media, request_error};
use async_graphql::{Data, Executor, Request, Response};
use axum::extract::ws::{WebSocket, WebSocketUpgrade};
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response as HttpResponse;
use egs_domain::error::ErrorCode;
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use futures_util::{FutureExt, StreamExt};
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

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
    pub(super) executor: E,
    pub(super) config: WsConfig,
    pub(super) on_init: InitHook,
    pub(super) on_operation: OperationHook<E>,
    pub(super) on_recheck: Option<RecheckHook>,
    pub(super) going_away: Option<watch::Receiver<bool>>,
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
pub(super) fn refuse(status: StatusCode, message: &str) -> HttpResponse {
    request_error(status, Media::Json, ErrorCode::InvalidInput, message)
}
