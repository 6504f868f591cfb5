//! Replicas talk over Redis pub/sub: a replica that revokes a token publishes its id and every
//! replica (itself included) drops it from its token cache; a replica that stores GPR events,
//! alert transitions or node changes says so and the others' tailers and watchers look at once
//! (they also look on a timer, so a lost message only delays). What changed always comes from
//! the database, never from the message.

use egs_schema::Announce;
use egs_schema::alerts::hub::AlertHub;
use egs_schema::auth::{RevocationBroadcast, TokenCache};
use egs_schema::events::{EventFanout, EventHub};
use egs_schema::inventory::live::InventoryFeed;
use futures_util::StreamExt;
use std::sync::Arc;
use std::time::Duration;

/// The channel revoked token ids travel on.
pub const REVOKED_TOKENS_CHANNEL: &str = "egs:tokens:revoked";
/// The channel "new GPR events are stored" travels on.
pub const GPR_EVENTS_CHANNEL: &str = "egs:gpr-events";
/// The channel "alert transitions are stored" travels on.
pub const ALERTS_CHANNEL: &str = "egs:alerts";
/// The channel "nodes were written" travels on.
pub const INVENTORY_CHANNEL: &str = "egs:inventory";
/// Longest wait between reconnection attempts of the subscriber.
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(10);

pub struct RedisRevocations {
    connection: redis::aio::ConnectionManager,
}

impl RedisRevocations {
    pub fn new(connection: redis::aio::ConnectionManager) -> Self {
        Self { connection }
    }
}

impl RevocationBroadcast for RedisRevocations {
    fn token_revoked(&self, jti: &str) {
        let mut connection = self.connection.clone();
        let jti = jti.to_owned();
        // Fire and forget: the revocation is already stored; other replicas' caches expire
        // within seconds even if this message is lost.
        tokio::spawn(async move {
            let published: Result<i64, _> = redis::cmd("PUBLISH").arg(REVOKED_TOKENS_CHANNEL).arg(&jti).query_async(&mut connection).await;
            if let Err(e) = published {
                tracing::warn!(error = %e, "failed to broadcast a token revocation; other replicas catch up when their cache expires");
            }
        });
    }
}

/// Listens for revocations until the process ends, reconnecting with backoff.
pub fn spawn_revocation_listener(client: redis::Client, cache: Arc<TokenCache>) {
    spawn_listener(client, REVOKED_TOKENS_CHANNEL, move |message| {
        if let Ok(jti) = message.get_payload::<String>() {
            cache.forget(&jti);
        }
    });
}

/// Runs `on_message` for every message on `channel` until the process ends, reconnecting
/// with backoff.
fn spawn_listener(client: redis::Client, channel: &'static str, on_message: impl Fn(&redis::Msg) + Send + Sync + 'static) {
    tokio::spawn(async move {
        let mut delay = Duration::from_millis(200);
        loop {
            match listen(&client, channel, &on_message).await {
                Ok(()) => tracing::warn!(channel, "a Redis subscription ended; reconnecting"),
                Err(e) => tracing::warn!(channel, error = %e, retry_in_ms = delay.as_millis() as u64, "a Redis subscription failed"),
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(MAX_RECONNECT_DELAY);
        }
    });
}

async fn listen(client: &redis::Client, channel: &str, on_message: &impl Fn(&redis::Msg)) -> redis::RedisResult<()> {
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.subscribe(channel).await?;
    let mut messages = pubsub.on_message();
    while let Some(message) = messages.next().await {
        on_message(&message);
    }
    Ok(())
}

pub struct RedisEvents {
    connection: redis::aio::ConnectionManager,
}

impl RedisEvents {
    pub fn new(connection: redis::aio::ConnectionManager) -> Self {
        Self { connection }
    }
}

impl EventFanout for RedisEvents {
    fn announce(&self) {
        let mut connection = self.connection.clone();
        // Fire and forget: the events are stored; the others' tailers poll anyway.
        tokio::spawn(async move {
            let published: Result<i64, _> = redis::cmd("PUBLISH").arg(GPR_EVENTS_CHANNEL).arg(1).query_async(&mut connection).await;
            if let Err(e) = published {
                tracing::debug!(error = %e, "failed to announce new GPR events; other replicas see them on their next poll");
            }
        });
    }
}

/// Wakes the local event tailer whenever another replica announces events. (The tailer also
/// polls, so what was stored while the subscription was down is found anyway.)
pub fn spawn_event_listener(client: redis::Client, hub: Arc<EventHub>) {
    spawn_listener(client, GPR_EVENTS_CHANNEL, move |_| hub.wake());
}

/// Announces "something was stored" on one channel; the message carries nothing else.
pub struct RedisAnnounce {
    connection: redis::aio::ConnectionManager,
    channel: &'static str,
}

impl RedisAnnounce {
    pub fn new(connection: redis::aio::ConnectionManager, channel: &'static str) -> Self {
        Self { connection, channel }
    }
}

impl Announce for RedisAnnounce {
    fn announce(&self) {
        let mut connection = self.connection.clone();
        let channel = self.channel;
        // Fire and forget: what changed is stored; the others poll anyway.
        tokio::spawn(async move {
            let published: Result<i64, _> = redis::cmd("PUBLISH").arg(channel).arg(1).query_async(&mut connection).await;
            if let Err(e) = published {
                tracing::debug!(channel, error = %e, "failed to announce a change; other replicas see it on their next poll");
            }
        });
    }
}

/// Wakes the local alert tailer whenever a replica announces stored alert transitions.
pub fn spawn_alert_listener(client: redis::Client, hub: Arc<AlertHub>) {
    spawn_listener(client, ALERTS_CHANNEL, move |_| hub.wake());
}

/// Wakes the local inventory watcher whenever a replica announces written nodes.
pub fn spawn_inventory_listener(client: redis::Client, feed: Arc<InventoryFeed>) {
    spawn_listener(client, INVENTORY_CHANNEL, move |_| feed.wake());
}
