//! One connection's reading side: the protocol's state machine and its running operations.

use super::close_code;
use super::messages::{ClientMessage, ServerMessage, too_many_operations};
use super::outbox::{Close, Outbox};
use super::transport::{GraphqlWs, InitError, Protocol};
use async_graphql::{Data, Executor, Request, Response};
use axum::extract::ws::{Message, WebSocket};
use egs_domain::error::ErrorCode;
use egs_schema::error::{errors_json, is_request_error};
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::{BoxStream, SplitStream};
use serde_json::json;
use std::collections::HashMap;
use std::future::pending;
use std::ops::ControlFlow;
use std::sync::Arc;
use tokio::sync::watch;
use tokio::task::{AbortHandle, JoinError, JoinSet};
use tokio::time::{Instant, Interval, MissedTickBehavior};

pub(super) enum Init {
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
pub(super) struct Connection<E> {
    pub(super) ws: GraphqlWs<E>,
    pub(super) protocol: Protocol,
    pub(super) outbox: Outbox,
    pub(super) closing: watch::Receiver<Option<Close>>,
    pub(super) init: Init,
    pub(super) init_deadline: Instant,
    pub(super) keep_alive: Option<Interval>,
    /// When the session is next checked (see [`GraphqlWs::recheck_every`]).
    pub(super) recheck: Option<Interval>,
    /// Running operations by client id; a finished one is removed by its task id, so an id the
    /// client has already reused is not touched.
    pub(super) operations: HashMap<String, AbortHandle>,
    pub(super) tasks: JoinSet<()>,
    /// Legacy clients send `start` right after `connection_init` without waiting for the ack.
    pub(super) early_starts: Vec<(String, Request)>,
}

impl<E: Executor> Connection<E> {
    pub(super) async fn run(&mut self, stream: &mut SplitStream<WebSocket>) {
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
            let payload = errors_json(&format!("the query is longer than {limit} bytes"), ErrorCode::InvalidInput);
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
            let payload = errors_json("internal error; it has been logged", ErrorCode::Internal);
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
            let payload = serde_json::to_value(&response.errors).unwrap_or_else(|_| errors_json("the request failed", ErrorCode::InvalidInput));
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
