//! The wire format: what clients send and what the server answers, in both protocols.

use super::transport::Protocol;
use async_graphql::{Request, Response};
use egs_domain::error::ErrorCode;
use egs_schema::error::errors_json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum ClientMessage {
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
    pub(super) fn name(&self) -> &'static str {
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

    pub(super) fn belongs_to(&self, protocol: Protocol) -> bool {
        match self {
            Self::ConnectionInit { .. } => true,
            Self::Ping { .. } | Self::Pong {} | Self::Subscribe { .. } | Self::Complete { .. } => protocol == Protocol::TransportWs,
            Self::Start { .. } | Self::Stop { .. } | Self::ConnectionTerminate {} => protocol == Protocol::LegacyWs,
        }
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum ServerMessage<'a> {
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
    pub(super) fn encode(&self) -> Option<String> {
        serde_json::to_string(self).map_err(|e| tracing::error!(error = %e, "failed to serialize a WebSocket message")).ok()
    }
}

pub(super) fn too_many_operations(id: &str, limit: usize) -> ServerMessage<'_> {
    let payload = errors_json(&format!("too many operations on this connection (at most {limit}); complete one first"), ErrorCode::RateLimited);
    ServerMessage::Error { id, payload }
}
