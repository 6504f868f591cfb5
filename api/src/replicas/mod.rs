//! Replicas talk over Redis pub/sub: a replica that revokes a token publishes its id and every
//! replica (itself included) drops it from its token cache; a replica that stores GPR events,
//! alert transitions or node changes says so and the others' tailers and watchers look at once
//! (they also look on a timer, so a lost message only delays). What changed always comes from
//! the database, never from the message. The exception is GPU samples: history lives in the
//! memory of the replica an agent reported to, so that replica publishes each batch on its
//! node's channel for the replicas whose live subscribers watch that node (each listens only to
//! those), and answers the others' history queries for its part (the latest sample of every GPU
//! is in the database).

use egs_domain::alerts::feed::AlertFeed;
use egs_domain::auth::TokenCache;
use egs_domain::events::EventFeed;
use egs_domain::inventory::live::InventoryFeed;
use egs_domain::lifecycle::SchedulerHandle;
use egs_domain::ports::{Announce, RevocationBroadcast};
use egs_wire::backoff::Backoff;
use futures_util::StreamExt;
use std::future::Future;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

mod samples;
pub use samples::{RedisMetrics, metrics_listener};

/// The channel revoked token ids travel on.
pub const REVOKED_TOKENS_CHANNEL: &str = "tokens:revoked";
/// The channel "new GPR events are stored" travels on.
pub const GPR_EVENTS_CHANNEL: &str = "gpr-events";
/// The channel "alert transitions are stored" travels on.
pub const ALERTS_CHANNEL: &str = "alerts";
/// The channel "nodes were written" travels on.
pub const INVENTORY_CHANNEL: &str = "inventory";
/// GPU sample batches travel on one channel per node: this name, `:`, the node's id.
pub const GPU_SAMPLES_CHANNEL: &str = "gpu-samples";
/// Presence, not messages: a replica whose live subscribers watch a GPR's nodes (a GPR or a
/// slice scope) subscribes to this name, `:`, the GPR's id, and the replica an agent reports
/// to counts the subscribers of its node's GPR here (`PUBSUB NUMSUB`). Nothing is published.
pub const GPU_WATCHERS_CHANNEL: &str = "gpu-watchers-gpr";
/// The channel history queries to the other replicas travel on.
pub const GPU_HISTORY_CHANNEL: &str = "gpu-history";
/// Answers to a replica's history queries: this name, `:`, the asking replica's origin.
pub const GPU_HISTORY_REPLY_CHANNEL: &str = "gpu-history-reply";
/// How long a history query waits for the other replicas' parts; a replica that has not
/// answered by then is left out of that answer.
const PEER_HISTORY_WAIT: Duration = Duration::from_millis(500);
/// How often the listener drops the node feeds nobody hears any more.
const INTEREST_REFRESH: Duration = Duration::from_secs(2);

/// Channel `name` of one deployment: `egs:<deployment>:<name>`. The deployment is a fingerprint
/// of the token signing key, which all its replicas share, so deployments (or test gateways)
/// sharing one Redis never hear each other.
pub fn channel(deployment: &str, name: &str) -> String {
    format!("egs:{deployment}:{name}")
}
/// Waits between reconnection attempts of a subscription: doubling from the first to the last.
const INITIAL_RECONNECT_DELAY: Duration = Duration::from_millis(200);
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(5);

pub struct RedisRevocations {
    connection: redis::aio::ConnectionManager,
    channel: String,
}

impl RedisRevocations {
    pub fn new(connection: redis::aio::ConnectionManager, deployment: &str) -> Self {
        Self { connection, channel: channel(deployment, REVOKED_TOKENS_CHANNEL) }
    }
}

impl RevocationBroadcast for RedisRevocations {
    fn token_revoked(&self, jti: &str) {
        let mut connection = self.connection.clone();
        let (jti, channel) = (jti.to_owned(), self.channel.clone());
        // Fire and forget: the revocation is already stored; other replicas' caches expire
        // within seconds even if this message is lost.
        tokio::spawn(async move {
            let published: Result<i64, _> = redis::cmd("PUBLISH").arg(&channel).arg(&jti).query_async(&mut connection).await;
            if let Err(e) = published {
                tracing::warn!(error = %e, "failed to broadcast a token revocation; other replicas catch up when their cache expires");
            }
        });
    }

    fn access_reduced(&self, user_id: i64) {
        // On the same channel, told apart by the prefix (a token id is hex).
        self.token_revoked(&format!("{USER_PREFIX}{user_id}"));
    }
}

/// Marks a revocation message that names a user who lost slice access, not a token.
const USER_PREFIX: &str = "user:";

/// Listens for revocations, reconnecting with backoff; runs until dropped.
pub fn revocation_listener(client: redis::Client, deployment: &str, cache: Arc<TokenCache>) -> impl Future<Output = ()> + Send + 'static {
    listener(client, channel(deployment, REVOKED_TOKENS_CHANNEL), move |message| {
        if let Ok(jti) = message.get_payload::<String>() {
            match jti.strip_prefix(USER_PREFIX).map(str::parse::<i64>) {
                Some(Ok(user_id)) => cache.forget_user(user_id),
                _ => cache.forget(&jti),
            }
        }
    })
}

/// Runs `on_message` for every message on `channel`, reconnecting with backoff; runs until
/// dropped.
async fn listener(client: redis::Client, channel: String, on_message: impl Fn(&redis::Msg) + Send + Sync + 'static) {
    let mut backoff = Backoff::new(INITIAL_RECONNECT_DELAY, MAX_RECONNECT_DELAY);
    loop {
        let mut subscribed = false;
        let outcome = listen(&client, &channel, &on_message, &mut subscribed).await;
        // A subscription that worked starts the backoff over: the next outage is new.
        if subscribed {
            backoff.reset();
        }
        let delay = backoff.next_delay();
        match outcome {
            Ok(()) => tracing::warn!(%channel, "a Redis subscription ended; reconnecting"),
            Err(e) => tracing::debug!(%channel, error = %e, retry_in_ms = delay.as_millis() as u64, "a Redis subscription failed"),
        }
        tokio::time::sleep(delay).await;
    }
}

async fn listen(client: &redis::Client, channel: &str, on_message: &impl Fn(&redis::Msg), subscribed: &mut bool) -> redis::RedisResult<()> {
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.subscribe(channel).await?;
    *subscribed = true;
    let mut messages = pubsub.on_message();
    while let Some(message) = messages.next().await {
        on_message(&message);
    }
    Ok(())
}

/// Wakes the local event tailer whenever another replica announces events, and the scheduler
/// loop (if this replica leads, a GPR submitted elsewhere is placed now, not at the next tick).
/// Both also run on timers, so what was stored while the subscription was down is found anyway.
/// Its own announcements are skipped: the scheduler's commits announce too, and must not wake
/// it again.
pub fn event_listener(
    client: redis::Client,
    deployment: &str,
    feed: Arc<EventFeed>,
    scheduler: Arc<SchedulerHandle>,
    origin: u64,
) -> impl Future<Output = ()> + Send + 'static {
    listener(client, channel(deployment, GPR_EVENTS_CHANNEL), move |message| {
        if message.get_payload::<u64>().is_ok_and(|from| from == origin) {
            return;
        }
        feed.wake();
        scheduler.wake();
    })
}

/// Announces "something was stored" on one channel. The message carries only the sender's
/// id, so a listener can skip its own replica's announcements.
pub struct RedisAnnounce {
    connection: redis::aio::ConnectionManager,
    channel: String,
    origin: u64,
}

impl RedisAnnounce {
    /// Announces on channel `name` of `deployment`, as replica `origin`.
    pub fn new(connection: redis::aio::ConnectionManager, deployment: &str, name: &str, origin: u64) -> Self {
        Self { connection, channel: channel(deployment, name), origin }
    }
}

impl Announce for RedisAnnounce {
    fn announce(&self) {
        let mut connection = self.connection.clone();
        let (channel, origin) = (self.channel.clone(), self.origin);
        // Fire and forget: what changed is stored; the others poll anyway.
        tokio::spawn(async move {
            let published: Result<i64, _> = redis::cmd("PUBLISH").arg(&channel).arg(origin).query_async(&mut connection).await;
            if let Err(e) = published {
                tracing::debug!(%channel, error = %e, "failed to announce a change; other replicas see it on their next poll");
            }
        });
    }
}

/// Wakes the local alert tailer whenever a replica announces stored alert transitions.
pub fn alert_listener(client: redis::Client, deployment: &str, feed: Arc<AlertFeed>) -> impl Future<Output = ()> + Send + 'static {
    listener(client, channel(deployment, ALERTS_CHANNEL), move |_| feed.wake())
}

/// Wakes the local inventory watcher whenever a replica announces written nodes.
pub fn inventory_listener(client: redis::Client, deployment: &str, feed: Arc<InventoryFeed>) -> impl Future<Output = ()> + Send + 'static {
    listener(client, channel(deployment, INVENTORY_CHANNEL), move |_| feed.wake())
}

/// Whether Redis answers, checked every second, for `/readyz`; logs each change once. Without
/// Redis the replicas keep serving: what others stored reaches subscribers on the tailers'
/// timers (about a second later); only live GPU samples from agents reporting to other
/// replicas pause, and history queries answer with this replica's part.
pub struct RedisHealth {
    /// 0: not checked yet, 1: reachable, 2: unreachable.
    state: AtomicU8,
}

/// What `/readyz` and the logs say while Redis is away.
pub const REDIS_DEGRADED: &str = "Redis is unreachable: cross-replica fan-out falls back to polling the database (events, alerts and \
     inventory reach other replicas' subscribers within about a second); live GPU samples from agents on other replicas pause and GPU \
     history shows only what reported to this replica";

impl RedisHealth {
    /// Not checked yet: see [`Self::checking`].
    pub fn new() -> Arc<Self> {
        Arc::new(Self { state: AtomicU8::new(0) })
    }

    /// Checks every second, until the health is dropped; `on_back` runs whenever Redis
    /// answers again after failing.
    pub fn checking(
        self: &Arc<Self>,
        connection: redis::aio::ConnectionManager,
        on_back: impl Fn() + Send + Sync + 'static,
    ) -> impl Future<Output = ()> + Send + 'static {
        let weak: Weak<Self> = Arc::downgrade(self);
        async move {
            loop {
                let mut connection = connection.clone();
                let ping = tokio::time::timeout(Duration::from_secs(1), redis::cmd("PING").query_async::<String>(&mut connection)).await;
                let error = match ping {
                    Ok(Ok(_)) => None,
                    Ok(Err(e)) => Some(e.to_string()),
                    Err(_) => Some("no answer within 1 s".to_owned()),
                };
                // The gateway that owned this check has stopped.
                let Some(health) = weak.upgrade() else { return };
                let now = if error.is_none() { 1 } else { 2 };
                let before = health.state.swap(now, Ordering::Relaxed);
                match (before, error) {
                    (1 | 0, Some(error)) => tracing::warn!(error, "{REDIS_DEGRADED}"),
                    (2, None) => {
                        tracing::info!("Redis answers again: cross-replica fan-out is live");
                        on_back();
                    }
                    _ => {}
                }
                drop(health);
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }

    /// `None` until the first check has finished.
    pub fn reachable(&self) -> Option<bool> {
        match self.state.load(Ordering::Relaxed) {
            1 => Some(true),
            2 => Some(false),
            _ => None,
        }
    }
}
