//! Replicas talk over Redis pub/sub: a replica that revokes a token publishes its id and every
//! replica (itself included) drops it from its token cache; a replica that stores GPR events,
//! alert transitions or node changes says so and the others' tailers and watchers look at once
//! (they also look on a timer, so a lost message only delays). What changed always comes from
//! the database, never from the message. The exception is GPU sample batches: history lives in
//! each replica's memory, so a replica that accepts a report publishes its new samples and the
//! others store them too (a lost batch costs them one point of history; the latest sample of
//! every GPU is in the database).

use egs_schema::alerts::hub::AlertHub;
use egs_schema::auth::TokenCache;
use egs_schema::events::EventHub;
use egs_schema::inventory::live::InventoryFeed;
use egs_schema::lifecycle::SchedulerHandle;
use egs_schema::metrics::MetricsStore;
use egs_schema::metrics::sample::{Sample, Values};
use egs_schema::ports::{Announce, MetricsFanout, RevocationBroadcast};
use egs_wire::backoff::Backoff;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

/// The channel revoked token ids travel on.
pub const REVOKED_TOKENS_CHANNEL: &str = "tokens:revoked";
/// The channel "new GPR events are stored" travels on.
pub const GPR_EVENTS_CHANNEL: &str = "gpr-events";
/// The channel "alert transitions are stored" travels on.
pub const ALERTS_CHANNEL: &str = "alerts";
/// The channel "nodes were written" travels on.
pub const INVENTORY_CHANNEL: &str = "inventory";
/// The channel GPU sample batches travel on between replicas.
pub const GPU_SAMPLES_CHANNEL: &str = "gpu-samples";

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

/// Listens for revocations until the process ends, reconnecting with backoff.
pub fn spawn_revocation_listener(client: redis::Client, deployment: &str, cache: Arc<TokenCache>) {
    spawn_listener(client, channel(deployment, REVOKED_TOKENS_CHANNEL), move |message| {
        if let Ok(jti) = message.get_payload::<String>() {
            match jti.strip_prefix(USER_PREFIX).map(str::parse::<i64>) {
                Some(Ok(user_id)) => cache.forget_user(user_id),
                _ => cache.forget(&jti),
            }
        }
    });
}

/// Runs `on_message` for every message on `channel` until the process ends, reconnecting
/// with backoff.
fn spawn_listener(client: redis::Client, channel: String, on_message: impl Fn(&redis::Msg) + Send + Sync + 'static) {
    tokio::spawn(async move {
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
    });
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
pub fn spawn_event_listener(client: redis::Client, deployment: &str, hub: Arc<EventHub>, scheduler: Arc<SchedulerHandle>, origin: u64) {
    spawn_listener(client, channel(deployment, GPR_EVENTS_CHANNEL), move |message| {
        if message.get_payload::<u64>().is_ok_and(|from| from == origin) {
            return;
        }
        hub.wake();
        scheduler.wake();
    });
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
pub fn spawn_alert_listener(client: redis::Client, deployment: &str, hub: Arc<AlertHub>) {
    spawn_listener(client, channel(deployment, ALERTS_CHANNEL), move |_| hub.wake());
}

/// Wakes the local inventory watcher whenever a replica announces written nodes.
pub fn spawn_inventory_listener(client: redis::Client, deployment: &str, feed: Arc<InventoryFeed>) {
    spawn_listener(client, channel(deployment, INVENTORY_CHANNEL), move |_| feed.wake());
}

/// A batch on the wire: which replica accepted it (so it ignores its own), the node, and the
/// new samples.
#[derive(Serialize, Deserialize)]
struct SampleMessage {
    origin: u64,
    node_id: i64,
    samples: Vec<WireSample>,
}

#[derive(Serialize, Deserialize)]
struct WireSample {
    gpu_id: i64,
    uuid: String,
    at: i64,
    /// util, mem_util, mem_used_mib, temperature, power.
    values: [f32; 5],
    sm_clock_mhz: f32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    xid_errors: Vec<i32>,
    ecc_corrected: Option<i64>,
    ecc_uncorrected: Option<i64>,
}

impl WireSample {
    fn from_sample(s: &Sample) -> Self {
        let v = s.values;
        Self {
            gpu_id: s.gpu_id,
            uuid: s.uuid.to_string(),
            at: s.at,
            values: [v.util, v.mem_util, v.mem_used_mib, v.temperature, v.power],
            sm_clock_mhz: s.sm_clock_mhz,
            xid_errors: s.xid_errors.clone(),
            ecc_corrected: s.ecc_corrected,
            ecc_uncorrected: s.ecc_uncorrected,
        }
    }

    fn into_sample(self, node_id: i64) -> Sample {
        let [util, mem_util, mem_used_mib, temperature, power] = self.values;
        Sample {
            gpu_id: self.gpu_id,
            uuid: self.uuid.into(),
            node_id,
            at: self.at,
            values: Values { util, mem_util, mem_used_mib, temperature, power },
            sm_clock_mhz: self.sm_clock_mhz,
            xid_errors: self.xid_errors,
            ecc_corrected: self.ecc_corrected,
            ecc_uncorrected: self.ecc_uncorrected,
        }
    }
}

/// Hands the samples this replica accepted to the others, so every replica's history and
/// live subscribers see every GPU.
pub struct RedisMetrics {
    connection: redis::aio::ConnectionManager,
    channel: String,
    /// This replica, in the messages it sends.
    origin: u64,
}

impl RedisMetrics {
    pub fn new(connection: redis::aio::ConnectionManager, deployment: &str, origin: u64) -> Self {
        Self { connection, channel: channel(deployment, GPU_SAMPLES_CHANNEL), origin }
    }
}

impl MetricsFanout for RedisMetrics {
    fn publish(&self, node_id: i64, samples: &[Sample]) {
        let message = SampleMessage { origin: self.origin, node_id, samples: samples.iter().map(WireSample::from_sample).collect() };
        let Ok(payload) = serde_json::to_vec(&message) else { return };
        let (mut connection, channel) = (self.connection.clone(), self.channel.clone());
        // Fire and forget: the latest sample is in the database for everyone; a lost batch
        // costs the other replicas one point of history.
        tokio::spawn(async move {
            let published: Result<i64, _> = redis::cmd("PUBLISH").arg(&channel).arg(payload).query_async(&mut connection).await;
            if let Err(e) = published {
                tracing::debug!(error = %e, "failed to hand GPU samples to the other replicas");
            }
        });
    }
}

/// Stores the other replicas' sample batches here (history and live subscribers).
pub fn spawn_metrics_listener(client: redis::Client, deployment: &str, store: Arc<MetricsStore>, origin: u64) {
    spawn_listener(client, channel(deployment, GPU_SAMPLES_CHANNEL), move |message| {
        let Ok(payload) = message.get_payload::<Vec<u8>>() else { return };
        match serde_json::from_slice::<SampleMessage>(&payload) {
            Ok(batch) if batch.origin != origin => {
                let samples = batch.samples.into_iter().map(|s| s.into_sample(batch.node_id)).collect();
                store.ingest_remote(batch.node_id, samples, chrono::Utc::now().timestamp());
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "ignoring a malformed GPU sample batch from Redis"),
        }
    });
}

/// Whether Redis answers, checked every second, for `/readyz`; logs each change once. Without
/// Redis the replicas keep serving: what others stored reaches subscribers on the tailers'
/// timers (about a second later), and only the live GPU sample history of agents reporting to
/// other replicas pauses.
pub struct RedisHealth {
    /// 0: not checked yet, 1: reachable, 2: unreachable.
    state: AtomicU8,
}

/// What `/readyz` and the logs say while Redis is away.
pub const REDIS_DEGRADED: &str = "Redis is unreachable: cross-replica fan-out falls back to polling the database (events, alerts and \
     inventory reach other replicas' subscribers within about a second); GPU sample history from agents on other replicas pauses";

impl RedisHealth {
    /// Starts checking; `on_back` runs whenever Redis answers again after failing.
    pub fn watch(connection: redis::aio::ConnectionManager, on_back: impl Fn() + Send + Sync + 'static) -> Arc<Self> {
        let health = Arc::new(Self { state: AtomicU8::new(0) });
        let weak: Weak<Self> = Arc::downgrade(&health);
        tokio::spawn(async move {
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
        });
        health
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
