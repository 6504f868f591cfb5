//! GPU samples between replicas: history lives in the memory of the replica an agent reported
//! to, so it publishes each batch on its node's channel for the replicas whose live subscribers
//! watch that node (each listens only to those), and answers the others' history queries for
//! its part.

use super::{
    GPU_HISTORY_CHANNEL, GPU_HISTORY_REPLY_CHANNEL, GPU_SAMPLES_CHANNEL, GPU_WATCHERS_CHANNEL, INITIAL_RECONNECT_DELAY, INTEREST_REFRESH,
    MAX_RECONNECT_DELAY, PEER_HISTORY_WAIT, channel,
};
use egs_domain::metrics::MetricsStore;
use egs_domain::metrics::sample::{Sample, Values};
use egs_domain::metrics::store::{Interest, Point};
use egs_domain::ports::MetricsFanout;
use egs_wire::backoff::Backoff;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex};

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
