//! In-memory GPU metrics history, and the live feed of accepted samples.
//!
//! Every GPU that reports gets two fixed rings, allocated once on its first sample:
//!
//! - **1 s resolution for the last 10 minutes**: [`SECOND_SLOTS`] slots of [`SecondSlot`]
//!   (24 bytes: the second and five `f32` values);
//! - **1 min resolution for 24 hours**: [`MINUTE_SLOTS`] slots of [`MinuteSlot`] (52 bytes:
//!   the minute, a 60-bit map of the seconds seen in it, and the average and maximum of the five
//!   values). The seconds map makes deduplication by (GPU, second) exact for the whole 24 h, and
//!   its population count is the number of samples behind the average.
//!
//! **Memory bound**: [`BYTES_PER_GPU`] = 600 × 24 + 1,440 × 52 + 64 (ring header and map
//! entry) = 89,344 bytes (87.25 KiB) per GPU, so 89.3 MB (85.2 MiB) per 1,000 GPUs, whatever
//! the sample rate (plus the hash map's spare capacity, at most 16 bytes per GPU). Histories of GPUs silent for more than 24 h are dropped by a sweep, so GPUs that
//! left the inventory do not accumulate. The live feed ([`MetricsStore::subscribe`]) holds at
//! most [`LIVE_CAPACITY`] batches of at most one sample per GPU of a node (≤ 64), ≈ 6 MiB at worst.
//!
//! Timestamps are whole seconds (Unix time); two samples of one GPU in the same second are the
//! same sample.
//!
//! **Replicas share the history instead of each keeping all of it.** A replica stores only the
//! samples reported to it, and hands each batch to a [`MetricsFanout`] (Redis pub/sub when
//! configured) on its node's channel. Another replica hears a node's channel only while one of
//! its live subscribers watches that node (or every node: GPR and slice scopes), see
//! [`MetricsStore::interest`], and passes what it hears to those subscribers without storing it
//! ([`MetricsStore::deliver_remote`]). A history query asks the other replicas for their part
//! ([`MetricsFanout::peer_points`]) and merges it with its own ([`merge_points`]). So a fleet's
//! history costs each replica memory and CPU for the GPUs that report to it, about fleet ÷
//! replicas, not for the whole fleet.
//!
//! **Live feeds**: a subscriber to one GPU or node listens to that node's feed only, so a
//! batch wakes the subscribers of its node and not the other thousands; GPR and slice scopes
//! (whose nodes change as GPRs come and go) listen to the feed of every batch.

pub use super::sample::Point;
use super::sample::{Sample, SampleBatch, Values};
use crate::ports::MetricsFanout;
use std::collections::{BTreeSet, HashMap};
use std::mem::size_of;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, watch};

/// 1 s slots: 10 minutes.
pub const SECOND_SLOTS: usize = 600;
/// 1 min slots: 24 hours.
pub const MINUTE_SLOTS: usize = 1440;
/// Batches a live subscriber of every batch may fall behind by before it skips to the newest.
pub const LIVE_CAPACITY: usize = 1024;
/// The same for a subscriber of one node's feed (a node reports about once a second).
pub const NODE_FEED_CAPACITY: usize = 64;
/// Bytes one GPU's history takes, all included (see the module docs).
pub const BYTES_PER_GPU: usize = size_of::<GpuHistory>()
    + SECOND_SLOTS * size_of::<SecondSlot>()
    + MINUTE_SLOTS * size_of::<MinuteSlot>()
    // The shard map's entry: key, boxed pointer, and hashbrown's control byte (rounded up).
    + size_of::<i64>() + size_of::<usize>() + 8;
/// Lock shards: concurrent batches of different nodes rarely wait for each other.
const SHARDS: usize = 16;
/// Histories whose newest sample is older than this are dropped.
const KEEP_SECS: i64 = MINUTE_SLOTS as i64 * 60;
/// How often the sweep for silent GPUs runs (from the ingest path).
const SWEEP_EVERY_SECS: i64 = 600;

#[derive(Copy, Clone, Debug, Default)]
struct SecondSlot {
    /// Unix seconds; 0 when empty.
    at: u32,
    values: Values,
}

#[derive(Copy, Clone, Debug, Default)]
struct MinuteSlot {
    /// Unix minutes; 0 when empty.
    minute: u32,
    /// Bit `s` of word `s / 32`: second `s` of the minute was stored. Two words keep the slot
    /// 4-byte aligned (52 bytes, not 56).
    seen: [u32; 2],
    avg: Values,
    max: Values,
}

impl MinuteSlot {
    fn count(&self) -> u32 {
        self.seen[0].count_ones() + self.seen[1].count_ones()
    }
}

struct GpuHistory {
    /// Newest second stored, for the sweep.
    newest: u32,
    seconds: Box<[SecondSlot]>,
    minutes: Box<[MinuteSlot]>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Stored {
    New,
    Duplicate,
}

impl GpuHistory {
    fn new() -> Self {
        Self { newest: 0, seconds: vec![SecondSlot::default(); SECOND_SLOTS].into(), minutes: vec![MinuteSlot::default(); MINUTE_SLOTS].into() }
    }

    fn insert(&mut self, at: u32, values: Values) -> Stored {
        let (minute, second) = (at / 60, at % 60);
        let slot = &mut self.minutes[minute as usize % MINUTE_SLOTS];
        let (word, bit) = ((second / 32) as usize, 1u32 << (second % 32));
        if slot.minute == minute {
            if slot.seen[word] & bit != 0 {
                return Stored::Duplicate;
            }
            slot.seen[word] |= bit;
            // Running mean: exact enough in f32 for at most 60 samples.
            let n = slot.count() as f32;
            slot.avg = slot.avg.zip(values, |avg, x| avg + (x - avg) / n);
            slot.max = slot.max.zip(values, f32::max);
        } else if slot.minute < minute {
            let mut seen = [0; 2];
            seen[word] = bit;
            *slot = MinuteSlot { minute, seen, avg: values, max: values };
        }
        // else: more than 24 h older than newer data in this slot; kept in neither ring.
        let slot = &mut self.seconds[at as usize % SECOND_SLOTS];
        if slot.at < at {
            *slot = SecondSlot { at, values };
        }
        self.newest = self.newest.max(at);
        Stored::New
    }

    fn seconds(&self, from: u32, to: u32) -> Vec<(u32, Values)> {
        let mut found: Vec<(u32, Values)> =
            self.seconds.iter().filter(|s| s.at != 0 && (from..=to).contains(&s.at)).map(|s| (s.at, s.values)).collect();
        found.sort_unstable_by_key(|(at, _)| *at);
        found
    }

    fn minutes(&self, from: u32, to: u32) -> Vec<MinuteSlot> {
        let (from, to) = (from / 60, to / 60);
        let mut found: Vec<MinuteSlot> = self.minutes.iter().filter(|m| m.minute != 0 && (from..=to).contains(&m.minute)).copied().collect();
        found.sort_unstable_by_key(|m| m.minute);
        found
    }
}

/// The GPR holding a node, as live filtering sees it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Holder {
    pub gpr_id: i64,
    pub slice_id: i64,
    /// When the node was assigned to the GPR (Unix seconds): its slice reads samples from here on.
    pub since: i64,
}

/// Held nodes by id: who may receive a node's live samples. One copy per process, refreshed
/// when GPRs change (see [`super::live::refresh_allocation`]), so live filtering costs no query.
pub type Allocation = HashMap<i64, Holder>;

/// Accepted and duplicate counts of one report.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Ingested {
    pub accepted: usize,
    pub duplicates: usize,
}

/// Which batches a live subscriber hears.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Feed {
    /// One node's batches.
    Node(i64),
    /// Every batch.
    All,
}

/// One replica: nobody else to tell.
pub struct NoMetricsFanout;

#[async_trait::async_trait]
impl MetricsFanout for NoMetricsFanout {
    fn publish(&self, _: i64, _: Option<i64>, _: &[Sample]) {}

    fn has_peers(&self) -> bool {
        false
    }

    async fn peer_points(&self, _: i64, _: i64, _: i64, _: i64) -> Vec<Point> {
        Vec::new()
    }
}

/// Which nodes' batches this replica's live subscribers need from the other replicas.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Interest {
    /// Every node's (a GPR- or slice-scoped subscriber is here).
    pub all: bool,
    /// These nodes' (when not `all`).
    pub nodes: BTreeSet<i64>,
    /// The GPRs whose nodes a GPR- or slice-scoped subscriber here watches (a slice's through
    /// the GPRs holding nodes for it now): not to hear their batches (`all` does), but so the
    /// replica an agent reports to can tell its node is watched (see [`MetricsStore::watched`]).
    pub gprs: BTreeSet<i64>,
    /// Counts changes, so a subscriber can wait until the listener has applied its own.
    pub version: u64,
}

/// How long a new live subscriber waits for the replica's Redis listener to start hearing its
/// node (so a sample reported elsewhere right after `subscribe` answered is not missed); past
/// this it goes on, and hears the node from the next batch the listener gets.
const INTEREST_APPLY_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// What a GPR- or slice-scoped live subscriber watches: the nodes the GPR holds, or those the
/// slice's GPRs hold, whichever they are from moment to moment.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WatchedScope {
    Gpr(i64),
    Slice(i64),
}

/// Held by a scoped subscription while it lasts: its scope counts as watched until dropped.
pub struct ScopeWatch(#[allow(dead_code)] Arc<()>);

/// Bounded per-GPU history and the live feeds; one per process, in `App`.
pub struct MetricsStore {
    shards: Vec<Mutex<HashMap<i64, Box<GpuHistory>>>>,
    live: broadcast::Sender<Arc<SampleBatch>>,
    /// Per-node feeds with subscribers (created on subscription, dropped when unheard).
    node_feeds: Mutex<HashMap<i64, broadcast::Sender<Arc<SampleBatch>>>>,
    fanout: Arc<dyn MetricsFanout>,
    interest: watch::Sender<Interest>,
    /// The newest [`Interest::version`] the fanout's listener has acted on.
    applied: watch::Sender<u64>,
    /// Whether the fanout's listener is connected (while it is not, nobody waits for it).
    listening: std::sync::atomic::AtomicBool,
    last_sweep: AtomicI64,
    /// The shared allocation while live subscribers exist (its refresher stops with the last).
    allocation: Mutex<Option<watch::Sender<Arc<Allocation>>>>,
    /// The scopes GPR- and slice-scoped subscribers watch, while their [`ScopeWatch`] lives.
    scopes: Mutex<Vec<(WatchedScope, std::sync::Weak<()>)>>,
}

impl Default for MetricsStore {
    fn default() -> Self {
        Self::new()
    }
}

impl MetricsStore {
    pub fn new() -> Self {
        Self::with_fanout(Arc::new(NoMetricsFanout))
    }

    pub fn with_fanout(fanout: Arc<dyn MetricsFanout>) -> Self {
        let (live, _) = broadcast::channel(LIVE_CAPACITY);
        Self {
            shards: (0..SHARDS).map(|_| Mutex::new(HashMap::new())).collect(),
            live,
            node_feeds: Mutex::new(HashMap::new()),
            fanout,
            interest: watch::Sender::new(Interest::default()),
            applied: watch::Sender::new(0),
            listening: std::sync::atomic::AtomicBool::new(false),
            last_sweep: AtomicI64::new(0),
            allocation: Mutex::new(None),
            scopes: Mutex::new(Vec::new()),
        }
    }

    fn shard(&self, gpu_id: i64) -> std::sync::MutexGuard<'_, HashMap<i64, Box<GpuHistory>>> {
        // A panic while holding a shard cannot leave a ring half-written in a harmful way.
        self.shards[gpu_id.rem_euclid(SHARDS as i64) as usize].lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Stores new samples reported to this replica, skipping those already stored (same GPU
    /// and second, in this batch or before), publishes the newest new sample of each GPU to
    /// live subscribers, and hands the new samples to the other replicas. Samples must be
    /// validated (and within 24 h of `now`, Unix seconds) by the caller.
    pub fn ingest(&self, node_id: i64, samples: Vec<Sample>, now: i64) -> Ingested {
        self.ingest_held(node_id, None, samples, now)
    }

    /// [`MetricsStore::ingest`] of a node held by GPR `held_by` (as the caller last read it):
    /// the other replicas are asked whether they watch that GPR too.
    pub fn ingest_held(&self, node_id: i64, held_by: Option<i64>, samples: Vec<Sample>, now: i64) -> Ingested {
        let (counts, stored) = self.store(samples, now);
        if !stored.is_empty() {
            self.fanout.publish(node_id, held_by, &stored);
        }
        self.publish(node_id, stored);
        counts
    }

    /// Hands samples another replica accepted (and stores) to this replica's live subscribers;
    /// not stored here, not handed on again.
    pub fn deliver_remote(&self, node_id: i64, samples: Vec<Sample>) {
        self.publish(node_id, samples);
    }

    /// Whether anyone watches the node's samples live: a subscriber on this replica to the
    /// node or one of its GPUs, or to the GPR holding it or that GPR's slice (as the shared
    /// allocation, which live delivery follows, has it), or one on another replica (as the
    /// fanout last heard). Agents of nodes nobody watches report less often.
    pub fn watched(&self, node_id: i64) -> bool {
        let feed =
            self.node_feeds.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&node_id).is_some_and(|feed| feed.receiver_count() > 0);
        feed || self.scope_watched(node_id) || self.fanout.watched_elsewhere(node_id)
    }

    /// Whether a scoped subscriber here watches the GPR holding `node_id` or its slice.
    fn scope_watched(&self, node_id: i64) -> bool {
        let scopes = self.live_scopes();
        if scopes.is_empty() {
            return false;
        }
        let Some(allocation) = self.allocation() else { return false };
        let Some(holder) = allocation.borrow().get(&node_id).copied() else { return false };
        scopes.iter().any(|scope| match scope {
            WatchedScope::Gpr(gpr_id) => *gpr_id == holder.gpr_id,
            WatchedScope::Slice(slice_id) => *slice_id == holder.slice_id,
        })
    }

    /// The scopes of the scoped subscriptions still alive (the others are forgotten).
    fn live_scopes(&self) -> Vec<WatchedScope> {
        let mut scopes = self.scopes.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        scopes.retain(|(_, alive)| alive.strong_count() > 0);
        scopes.iter().map(|(scope, _)| *scope).collect()
    }

    /// Counts `scope` as watched until the returned guard is dropped; the interest follows.
    pub fn watch_scope(&self, scope: WatchedScope) -> ScopeWatch {
        let alive = Arc::new(());
        self.scopes.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((scope, Arc::downgrade(&alive)));
        self.refresh_interest();
        ScopeWatch(alive)
    }

    /// The GPRs scoped subscribers here watch: a slice's are those holding nodes for it now.
    fn watched_gprs(&self) -> BTreeSet<i64> {
        let scopes = self.live_scopes();
        let mut gprs: BTreeSet<i64> = scopes.iter().filter_map(|s| if let WatchedScope::Gpr(id) = s { Some(*id) } else { None }).collect();
        let slices: BTreeSet<i64> = scopes.iter().filter_map(|s| if let WatchedScope::Slice(id) = s { Some(*id) } else { None }).collect();
        if !slices.is_empty()
            && let Some(allocation) = self.allocation()
        {
            let held = allocation.borrow();
            gprs.extend(held.values().filter(|h| slices.contains(&h.slice_id)).map(|h| h.gpr_id));
        }
        gprs
    }

    /// Which nodes this replica's live subscribers need from the others, kept current by
    /// [`MetricsStore::subscribe`] and [`MetricsStore::refresh_interest`]; the fanout's listener
    /// watches it and reports with [`MetricsStore::interest_applied`].
    pub fn interest(&self) -> watch::Receiver<Interest> {
        self.interest.subscribe()
    }

    /// The fanout's listener is connected (and applies the interest) or not.
    pub fn set_listening(&self, listening: bool) {
        self.listening.store(listening, Ordering::Relaxed);
    }

    /// The listener now hears what `version` of the interest asked for.
    pub fn interest_applied(&self, version: u64) {
        self.applied.send_if_modified(|applied| {
            let newer = version > *applied;
            if newer {
                *applied = version;
            }
            newer
        });
    }

    /// Forgets the node feeds nobody listens to any more and recomputes the interest (the
    /// listener calls this every few seconds: a subscriber leaving tells nobody).
    pub fn refresh_interest(&self) {
        let mut feeds = self.node_feeds.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        feeds.retain(|_, feed| feed.receiver_count() > 0);
        self.set_interest(&feeds);
    }

    fn set_interest(&self, feeds: &HashMap<i64, broadcast::Sender<Arc<SampleBatch>>>) {
        let all = self.live.receiver_count() > 0;
        let nodes: BTreeSet<i64> = if all { BTreeSet::new() } else { feeds.keys().copied().collect() };
        let gprs = self.watched_gprs();
        self.interest.send_if_modified(|current| {
            let changed = current.all != all || current.nodes != nodes || current.gprs != gprs;
            if changed {
                *current = Interest { all, nodes, gprs, version: current.version + 1 };
            }
            changed
        });
    }

    /// Stores what is new; returns the counts and the new samples.
    fn store(&self, samples: Vec<Sample>, now: i64) -> (Ingested, Vec<Sample>) {
        let mut counts = Ingested::default();
        let mut stored = Vec::with_capacity(samples.len());
        for sample in samples {
            let Ok(at) = u32::try_from(sample.at) else { continue };
            let outcome = self.shard(sample.gpu_id).entry(sample.gpu_id).or_insert_with(|| Box::new(GpuHistory::new())).insert(at, sample.values);
            if outcome == Stored::Duplicate {
                counts.duplicates += 1;
                continue;
            }
            counts.accepted += 1;
            stored.push(sample);
        }
        self.maybe_sweep(now);
        (counts, stored)
    }

    /// Sends the newest of `stored` per GPU to the feeds that have listeners.
    fn publish(&self, node_id: i64, stored: Vec<Sample>) {
        let mut newest: HashMap<i64, Sample> = HashMap::new();
        for sample in stored {
            match newest.get(&sample.gpu_id) {
                Some(kept) if kept.at >= sample.at => {}
                _ => {
                    newest.insert(sample.gpu_id, sample);
                }
            }
        }
        if newest.is_empty() {
            return;
        }
        let mut samples: Vec<Sample> = newest.into_values().collect();
        samples.sort_unstable_by_key(|s| s.gpu_id);
        let batch = Arc::new(SampleBatch { node_id, samples });
        // No subscribers is not an error; a full channel drops its oldest batch.
        let _ = self.live.send(batch.clone());
        let mut feeds = self.node_feeds.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(feed) = feeds.get(&node_id) {
            if feed.receiver_count() == 0 {
                feeds.remove(&node_id);
            } else {
                let _ = feed.send(batch);
            }
        }
    }

    /// Accepted samples of `feed` from now on, on whichever replica they were reported. A
    /// receiver that falls behind by the feed's capacity gets `Lagged` and continues with the
    /// newest. Returns once this replica hears the feed's node from the others (at most
    /// [`INTEREST_APPLY_WAIT`]; at once with no other replicas or while Redis is away).
    pub async fn subscribe(&self, feed: Feed) -> broadcast::Receiver<Arc<SampleBatch>> {
        let receiver = {
            let mut feeds = self.node_feeds.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let receiver = match feed {
                Feed::All => self.live.subscribe(),
                Feed::Node(node_id) => feeds.entry(node_id).or_insert_with(|| broadcast::channel(NODE_FEED_CAPACITY).0).subscribe(),
            };
            self.set_interest(&feeds);
            receiver
        };
        if self.fanout.has_peers() && self.listening.load(Ordering::Relaxed) {
            let version = self.interest.borrow().version;
            let mut applied = self.applied.subscribe();
            let _ = tokio::time::timeout(INTEREST_APPLY_WAIT, applied.wait_for(|applied| *applied >= version)).await;
        }
        receiver
    }

    /// The shared allocation, if a refresher keeps it current (some live subscriber exists).
    pub fn allocation(&self) -> Option<watch::Receiver<Arc<Allocation>>> {
        let slot = self.allocation.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        slot.as_ref().filter(|tx| !tx.is_closed()).map(watch::Sender::subscribe)
    }

    /// Installs a freshly loaded allocation, unless another subscriber did meanwhile. Returns a
    /// receiver, and the sender when the caller must start the refresher for it.
    pub fn install_allocation(&self, loaded: Allocation) -> (watch::Receiver<Arc<Allocation>>, Option<watch::Sender<Arc<Allocation>>>) {
        let mut slot = self.allocation.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(tx) = slot.as_ref().filter(|tx| !tx.is_closed()) {
            return (tx.subscribe(), None);
        }
        let (tx, rx) = watch::channel(Arc::new(loaded));
        *slot = Some(tx.clone());
        (rx, Some(tx))
    }

    /// History of one GPU over `[from, to]` (Unix seconds) in steps of `step` seconds: from the
    /// 1 s ring when `step < 60`, else from the 1 min ring (`step` then a whole number of
    /// minutes). Steps with no sample are left out.
    pub fn points(&self, gpu_id: i64, from: i64, to: i64, step: i64) -> Vec<Point> {
        let (Ok(from), Ok(to), true) = (u32::try_from(from.max(0)), u32::try_from(to.max(0)), step > 0) else { return Vec::new() };
        let shard = self.shard(gpu_id);
        let Some(history) = shard.get(&gpu_id) else { return Vec::new() };
        let mut points: Vec<Point> = Vec::new();
        let mut add = |at: i64, samples: u32, avg: Values, max: Values| {
            let point = Point { at: at - at.rem_euclid(step), samples, avg, max };
            match points.last_mut() {
                Some(p) if p.at == point.at => p.absorb(&point),
                _ => points.push(point),
            }
        };
        if step < 60 {
            for (at, values) in history.seconds(from, to) {
                add(at.into(), 1, values, values);
            }
        } else {
            for m in history.minutes(from, to) {
                add(i64::from(m.minute) * 60, m.count(), m.avg, m.max);
            }
        }
        points
    }

    /// [`MetricsStore::points`] here and on the other replicas, merged: the whole history of a
    /// GPU whose reports went to several replicas.
    pub async fn all_points(&self, gpu_id: i64, from: i64, to: i64, step: i64) -> Vec<Point> {
        let mine = self.points(gpu_id, from, to, step);
        if !self.fanout.has_peers() {
            return mine;
        }
        let theirs = self.fanout.peer_points(gpu_id, from, to, step).await;
        merge_points(mine, theirs)
    }

    /// GPUs whose history this replica holds (`egs_gpu_histories` on `/metrics`).
    pub fn gpu_count(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).len()).sum()
    }

    fn maybe_sweep(&self, now: i64) {
        let last = self.last_sweep.load(Ordering::Relaxed);
        if now - last < SWEEP_EVERY_SECS || self.last_sweep.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed).is_err() {
            return;
        }
        let cutoff = now - KEEP_SECS;
        for shard in &self.shards {
            shard.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).retain(|_, h| i64::from(h.newest) >= cutoff);
        }
    }
}

/// Points of one GPU from several replicas, each in time order, as one series: points of the
/// same step are combined ([`Point::absorb`]). The same
/// second reported to two replicas (an agent retrying on another one) counts twice there.
pub fn merge_points(mut points: Vec<Point>, more: Vec<Point>) -> Vec<Point> {
    if more.is_empty() {
        return points;
    }
    points.extend(more);
    points.sort_by_key(|p| p.at);
    let mut merged: Vec<Point> = Vec::with_capacity(points.len());
    for p in points {
        match merged.last_mut() {
            Some(last) if last.at == p.at => last.absorb(&p),
            _ => merged.push(p),
        }
    }
    merged
}

#[cfg(test)]
mod tests;
