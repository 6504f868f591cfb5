//! Per-process WebSocket state: the limits of every connection and the shutdown signal.

use super::{CLOSE_GRACE, MAX_OPERATIONS, MAX_QUEUED_MESSAGES, STALL_TIMEOUT};
use crate::graphql_http::MAX_QUERY_BYTES;
use crate::settings::ServeArgs;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

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
