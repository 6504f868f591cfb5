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
use egs_domain::metrics::MetricsStore;
use egs_domain::metrics::sample::{Sample, Values};
use egs_domain::metrics::store::{Interest, Point};
use egs_domain::ports::{Announce, MetricsFanout, RevocationBroadcast};
use egs_wire::backoff::Backoff;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

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
        Self {
            gpu_id: s.gpu_id,
            uuid: s.uuid.to_string(),
            at: s.at,
            values: s.values.fields(),
            sm_clock_mhz: s.sm_clock_mhz,
            xid_errors: s.xid_errors.clone(),
            ecc_corrected: s.ecc_corrected,
            ecc_uncorrected: s.ecc_uncorrected,
        }
    }

    fn into_sample(self, node_id: i64) -> Sample {
        Sample {
            gpu_id: self.gpu_id,
            uuid: self.uuid.into(),
            node_id,
            at: self.at,
            values: Values::from_fields(self.values),
            sm_clock_mhz: self.sm_clock_mhz,
            xid_errors: self.xid_errors,
            ecc_corrected: self.ecc_corrected,
            ecc_uncorrected: self.ecc_uncorrected,
        }
    }
}

/// One replica's points of a GPU's history, as they travel.
#[derive(Serialize, Deserialize)]
struct WirePoint {
    at: i64,
    samples: u32,
    avg: [f32; 5],
    max: [f32; 5],
}

impl WirePoint {
    fn from_point(p: &Point) -> Self {
        Self { at: p.at, samples: p.samples, avg: p.avg.fields(), max: p.max.fields() }
    }

    fn into_point(self) -> Point {
        Point { at: self.at, samples: self.samples, avg: Values::from_fields(self.avg), max: Values::from_fields(self.max) }
    }
}

/// A replica asks the others for their part of one GPU's history.
#[derive(Serialize, Deserialize)]
struct HistoryRequest {
    id: u64,
    origin: u64,
    gpu_id: i64,
    from: i64,
    to: i64,
    step: i64,
}

/// One replica's answer (empty when it holds nothing of that GPU: the asker stops waiting for
/// it either way).
#[derive(Serialize, Deserialize)]
struct HistoryReply {
    id: u64,
    points: Vec<WirePoint>,
}

/// The other replicas, for GPU samples: publishes this replica's accepted batches on their
/// node's channel, and asks the others for their part of a history (their answers come back
/// through [`metrics_listener`]).
pub struct RedisMetrics {
    connection: redis::aio::ConnectionManager,
    /// `egs:<deployment>:gpu-samples`; a node's channel adds `:<id>`.
    samples: String,
    /// `egs:<deployment>:gpu-watchers-gpr`; a GPR's presence channel adds `:<id>`.
    watchers: String,
    requests: String,
    /// `egs:<deployment>:gpu-history-reply`; a replica's answers channel adds `:<origin>`.
    reply_prefix: String,
    /// Where answers to this replica's queries arrive.
    replies: String,
    /// This replica, in the messages it sends.
    origin: u64,
    /// History queries waiting for answers, by request id.
    pending: Mutex<HashMap<u64, tokio::sync::mpsc::UnboundedSender<Vec<WirePoint>>>>,
    /// The nodes that, when their last batch was published, some replica watched: a listener
    /// subscribed to the node's channel or to the presence channel of the GPR holding it.
    heard: Arc<Mutex<HashSet<i64>>>,
}

impl RedisMetrics {
    pub fn new(connection: redis::aio::ConnectionManager, deployment: &str, origin: u64) -> Self {
        let reply_prefix = channel(deployment, GPU_HISTORY_REPLY_CHANNEL);
        Self {
            connection,
            samples: channel(deployment, GPU_SAMPLES_CHANNEL),
            watchers: channel(deployment, GPU_WATCHERS_CHANNEL),
            requests: channel(deployment, GPU_HISTORY_CHANNEL),
            replies: format!("{reply_prefix}:{origin}"),
            reply_prefix,
            origin,
            pending: Mutex::new(HashMap::new()),
            heard: Arc::new(Mutex::new(HashSet::new())),
        }
    }

    fn node_channel(&self, node_id: i64) -> String {
        format!("{}:{node_id}", self.samples)
    }

    fn watchers_channel(&self, gpr_id: i64) -> String {
        format!("{}:{gpr_id}", self.watchers)
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<u64, tokio::sync::mpsc::UnboundedSender<Vec<WirePoint>>>> {
        self.pending.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A message on one of the channels the listener hears.
    fn on_message(&self, store: &MetricsStore, message: &redis::Msg) {
        let channel = message.get_channel_name();
        let payload = message.get_payload_bytes();
        if channel == self.replies {
            match serde_json::from_slice::<HistoryReply>(payload) {
                Ok(reply) => {
                    if let Some(waiting) = self.pending().get(&reply.id) {
                        let _ = waiting.send(reply.points);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "ignoring a malformed GPU history answer from Redis"),
            }
        } else if channel == self.requests {
            match serde_json::from_slice::<HistoryRequest>(payload) {
                Ok(request) if request.origin != self.origin => self.answer(store, request),
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "ignoring a malformed GPU history query from Redis"),
            }
        } else {
            match serde_json::from_slice::<SampleMessage>(payload) {
                Ok(batch) if batch.origin != self.origin => {
                    let samples = batch.samples.into_iter().map(|s| s.into_sample(batch.node_id)).collect();
                    store.deliver_remote(batch.node_id, samples);
                }
                Ok(_) => {}
                Err(e) => tracing::warn!(error = %e, "ignoring a malformed GPU sample batch from Redis"),
            }
        }
    }

    /// Sends this replica's part of the history another replica asked for.
    fn answer(&self, store: &MetricsStore, request: HistoryRequest) {
        let points = store.points(request.gpu_id, request.from, request.to, request.step).iter().map(WirePoint::from_point).collect();
        let Ok(payload) = serde_json::to_vec(&HistoryReply { id: request.id, points }) else { return };
        let mut connection = self.connection.clone();
        let channel = format!("{}:{}", self.reply_prefix, request.origin);
        tokio::spawn(async move {
            let sent: Result<i64, _> = redis::cmd("PUBLISH").arg(&channel).arg(payload).query_async(&mut connection).await;
            if let Err(e) = sent {
                tracing::debug!(error = %e, "failed to answer another replica's GPU history query");
            }
        });
    }
}

/// Removes a history query from [`RedisMetrics::pending`] however its wait ends.
struct Waiting<'a>(&'a RedisMetrics, u64);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.pending().remove(&self.1);
    }
}

#[async_trait::async_trait]
impl MetricsFanout for RedisMetrics {
    fn publish(&self, node_id: i64, held_by: Option<i64>, samples: &[Sample]) {
        let message = SampleMessage { origin: self.origin, node_id, samples: samples.iter().map(WireSample::from_sample).collect() };
        let Ok(payload) = serde_json::to_vec(&message) else { return };
        let (mut connection, channel, heard) = (self.connection.clone(), self.node_channel(node_id), self.heard.clone());
        // Who watches, in the same round trip: the node's subscribers (not the pattern that
        // GPR and slice scopes hear every batch by) and those of its GPR's presence channel.
        let mut pipe = redis::pipe();
        pipe.cmd("PUBLISH").arg(&channel).arg(payload).cmd("PUBSUB").arg("NUMSUB").arg(&channel);
        if let Some(gpr_id) = held_by {
            pipe.arg(self.watchers_channel(gpr_id));
        }
        // Fire and forget: the latest sample is in the database for everyone; a lost batch
        // costs the other replicas' live subscribers one update.
        tokio::spawn(async move {
            let published: Result<(i64, Vec<(String, i64)>), _> = pipe.query_async(&mut connection).await;
            match published {
                Ok((_, watchers)) => {
                    let mut heard = heard.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    if watchers.iter().any(|(_, n)| *n > 0) {
                        heard.insert(node_id);
                    } else {
                        heard.remove(&node_id);
                    }
                }
                Err(e) => tracing::debug!(error = %e, "failed to hand GPU samples to the other replicas"),
            }
        });
    }

    fn has_peers(&self) -> bool {
        true
    }

    fn watched_elsewhere(&self, node_id: i64) -> bool {
        self.heard.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).contains(&node_id)
    }

    async fn peer_points(&self, gpu_id: i64, from: i64, to: i64, step: i64) -> Vec<Point> {
        let id = rand::random::<u64>();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        self.pending().insert(id, tx);
        let _waiting = Waiting(self, id);
        let request = HistoryRequest { id, origin: self.origin, gpu_id, from, to, step };
        let Ok(payload) = serde_json::to_vec(&request) else { return Vec::new() };
        let mut connection = self.connection.clone();
        // Every replica's listener hears the query, this one's included: wait for the others.
        let heard =
            match tokio::time::timeout(PEER_HISTORY_WAIT, redis::cmd("PUBLISH").arg(&self.requests).arg(payload).query_async::<i64>(&mut connection))
                .await
            {
                Ok(Ok(heard)) => heard,
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "could not ask the other replicas for GPU history; answering with this replica's");
                    return Vec::new();
                }
                Err(_) => return Vec::new(),
            };
        let mut expected = usize::try_from(heard - 1).unwrap_or(0);
        let mut points = Vec::new();
        let deadline = tokio::time::Instant::now() + PEER_HISTORY_WAIT;
        while expected > 0 {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(part)) => {
                    points.extend(part.into_iter().map(WirePoint::into_point));
                    expected -= 1;
                }
                Ok(None) | Err(_) => break,
            }
        }
        points
    }
}

/// The node channels (or the pattern for all of them) this replica's listener is subscribed
/// to, and the GPR presence channels.
#[derive(Default)]
struct Heard {
    all: bool,
    nodes: BTreeSet<i64>,
    gprs: BTreeSet<i64>,
}

impl Heard {
    /// Subscribes to what `wanted` needs, then drops what it no longer does (a batch may
    /// arrive twice in between; live delivery skips a sample it already delivered).
    async fn apply(&mut self, sink: &mut redis::aio::PubSubSink, fanout: &RedisMetrics, wanted: &Interest) -> redis::RedisResult<()> {
        let pattern = format!("{}:*", fanout.samples);
        if wanted.all && !self.all {
            sink.psubscribe(&pattern).await?;
            self.all = true;
        }
        let nodes = if wanted.all { BTreeSet::new() } else { wanted.nodes.clone() };
        follow(sink, &mut self.nodes, nodes, |n| fanout.node_channel(n)).await?;
        follow(sink, &mut self.gprs, wanted.gprs.clone(), |g| fanout.watchers_channel(g)).await?;
        if !wanted.all && self.all {
            sink.punsubscribe(&pattern).await?;
            self.all = false;
        }
        Ok(())
    }
}

/// Subscribes to the channels of the ids in `wanted` and not in `heard`, unsubscribes from those
/// only in `heard`; `heard` becomes `wanted`.
async fn follow(
    sink: &mut redis::aio::PubSubSink,
    heard: &mut BTreeSet<i64>,
    wanted: BTreeSet<i64>,
    channel: impl Fn(i64) -> String,
) -> redis::RedisResult<()> {
    let added: Vec<String> = wanted.difference(heard).map(|id| channel(*id)).collect();
    if !added.is_empty() {
        sink.subscribe(&added).await?;
    }
    let removed: Vec<String> = heard.difference(&wanted).map(|id| channel(*id)).collect();
    if !removed.is_empty() {
        sink.unsubscribe(&removed).await?;
    }
    *heard = wanted;
    Ok(())
}

/// Hears, for this replica: history queries from the others (and their answers to its own),
/// and the sample batches of the nodes its live subscribers watch — following the store's
/// [`Interest`] as subscribers come and go.
pub async fn metrics_listener(client: redis::Client, store: Arc<MetricsStore>, fanout: Arc<RedisMetrics>) {
    let mut backoff = Backoff::new(INITIAL_RECONNECT_DELAY, MAX_RECONNECT_DELAY);
    loop {
        let mut subscribed = false;
        let outcome = listen_metrics(&client, &store, &fanout, &mut subscribed).await;
        store.set_listening(false);
        if subscribed {
            backoff.reset();
        }
        let delay = backoff.next_delay();
        match outcome {
            Ok(()) => tracing::warn!("the Redis subscription for GPU samples ended; reconnecting"),
            Err(e) => tracing::debug!(error = %e, retry_in_ms = delay.as_millis() as u64, "the Redis subscription for GPU samples failed"),
        }
        tokio::time::sleep(delay).await;
    }
}

async fn listen_metrics(client: &redis::Client, store: &MetricsStore, fanout: &RedisMetrics, subscribed: &mut bool) -> redis::RedisResult<()> {
    let (mut sink, mut stream) = client.get_async_pubsub().await?.split();
    sink.subscribe(&[fanout.requests.as_str(), fanout.replies.as_str()]).await?;
    *subscribed = true;
    // A new connection hears nothing yet: apply the whole interest.
    let mut heard = Heard::default();
    let mut interest = store.interest();
    interest.mark_changed();
    let mut refresh = tokio::time::interval(INTEREST_REFRESH);
    loop {
        tokio::select! {
            message = stream.next() => match message {
                Some(message) => fanout.on_message(store, &message),
                None => return Ok(()),
            },
            changed = interest.changed() => {
                if changed.is_err() {
                    return Ok(());
                }
                let wanted = interest.borrow_and_update().clone();
                heard.apply(&mut sink, fanout, &wanted).await?;
                store.interest_applied(wanted.version);
                store.set_listening(true);
            }
            _ = refresh.tick() => store.refresh_interest(),
        }
    }
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
