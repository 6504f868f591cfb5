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
//! The transport is generic over the `Executor` (async-graphql's), with pluggable authentication and operation
//! hooks; [`graphql_ws`] wires it to the EGS schema and tokens.
//!
//! The rooms: [`transport`] (the builder and upgrade, generic over any executor), `connection`
//! (one socket's state machine), `outbox` (the bounded queue and its writer), `messages` (the
//! wire format of both protocols), [`sockets`] (per-process configuration and shutdown) and
//! `egs` (the EGS schema, tokens and per-user limits).

mod connection;
mod egs;
mod messages;
mod outbox;
pub mod sockets;
#[cfg(test)]
mod tests;
pub mod transport;

use std::time::Duration;

pub use egs::graphql_ws;
pub use sockets::{Sockets, WsConfig};
pub use transport::{GraphqlWs, InitError, InitHook, OperationHook, Protocol, RecheckHook};

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
