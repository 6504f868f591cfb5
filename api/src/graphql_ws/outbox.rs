//! The sending side of a connection: one bounded queue drained by one writer task, so a client
//! that stops reading stalls only its own operations and is closed with 1013.

use super::messages::ServerMessage;
use super::{STALLED_REASON, close_code};
use axum::extract::ws::{CloseFrame, Message, WebSocket};
use futures_util::SinkExt;
use futures_util::stream::SplitSink;
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// A request to close the socket.
#[derive(Clone, Debug)]
pub(super) struct Close {
    pub(super) code: u16,
    pub(super) reason: String,
    /// Sent just before the close frame (the legacy `connection_error`).
    pub(super) last: Option<String>,
}

/// The sending side of a connection, shared by its reader and its operations.
#[derive(Clone)]
pub(super) struct Outbox {
    pub(super) queue: mpsc::Sender<String>,
    /// The first close request wins; the writer sends it ahead of anything still queued.
    pub(super) closing: watch::Sender<Option<Close>>,
    pub(super) stall_timeout: Duration,
}

/// The connection is closing or closed: stop producing.
pub(super) struct Closed;

impl Outbox {
    /// Queues a message, waiting for room; a queue that stays full past the stall timeout
    /// means the client stopped reading, and the socket is closed with 1013.
    pub(super) async fn push(&self, message: String) -> Result<(), Closed> {
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
    pub(super) async fn send(&self, message: ServerMessage<'_>) {
        if let Some(text) = message.encode() {
            let _ = self.push(text).await;
        }
    }

    /// Queues a message that may be skipped when the queue is full (keep-alives).
    pub(super) fn offer(&self, message: String) {
        let _ = self.queue.try_send(message);
    }

    pub(super) fn close(&self, code: u16, reason: &str, last: Option<String>) {
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
pub(super) fn truncate(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The writer task: drains the queue into the socket, what is queued together in one flush; on
/// a close request, sends the close frame at once (within the grace, for a client that is not
/// reading) and stops.
pub(super) async fn write_socket(
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
