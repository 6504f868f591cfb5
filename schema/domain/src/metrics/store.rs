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
mod tests {
    use super::*;

    const T0: i64 = 1_800_000_000; // a whole minute (divisible by 60)

    fn values(util: f32) -> Values {
        Values { util, mem_util: util / 2.0, mem_used_mib: 1000.0 + util, temperature: 40.0 + util / 10.0, power: 100.0 + util }
    }

    fn sample(gpu_id: i64, at: i64, util: f32) -> Sample {
        Sample {
            gpu_id,
            uuid: Arc::from(format!("GPU-{gpu_id}")),
            node_id: 1,
            at,
            values: values(util),
            sm_clock_mhz: 1980.0,
            xid_errors: Vec::new(),
            ecc_corrected: None,
            ecc_uncorrected: None,
        }
    }

    #[test]
    fn the_memory_bound_in_the_docs_holds() {
        assert_eq!(size_of::<SecondSlot>(), 24);
        assert_eq!(size_of::<MinuteSlot>(), 52);
        let history = GpuHistory::new();
        let rings = history.seconds.len() * size_of::<SecondSlot>() + history.minutes.len() * size_of::<MinuteSlot>();
        assert_eq!(rings, 89_280);
        assert_eq!(BYTES_PER_GPU, rings + size_of::<GpuHistory>() + 24);
        assert_eq!(BYTES_PER_GPU, 89_344, "the figure in the module docs");
        assert_eq!(BYTES_PER_GPU * 1000 / (1024 * 1024), 85, "MiB per 1,000 GPUs, as documented");
    }

    #[test]
    fn duplicates_are_found_in_the_batch_and_against_history() {
        let store = MetricsStore::new();
        let batch: Vec<Sample> = (0..10).map(|s| sample(7, T0 + s, 50.0)).chain([sample(7, T0 + 3, 99.0)]).collect();
        assert_eq!(store.ingest(1, batch, T0), Ingested { accepted: 10, duplicates: 1 });
        // A resend after a reconnect: the old half is known, the new half is not.
        let resend: Vec<Sample> = (5..15).map(|s| sample(7, T0 + s, 50.0)).collect();
        assert_eq!(store.ingest(1, resend, T0), Ingested { accepted: 5, duplicates: 5 });
        // Beyond the 1 s ring, the minute ring still knows which seconds it has.
        let old: Vec<Sample> = (0..3).map(|s| sample(7, T0 + s, 50.0)).collect();
        store.ingest(1, vec![sample(7, T0 + 3600, 1.0)], T0);
        assert_eq!(store.ingest(1, old, T0), Ingested { accepted: 0, duplicates: 3 });
        let minute = store.points(7, T0, T0 + 59, 60);
        assert_eq!(minute.len(), 1);
        assert_eq!(minute[0].samples, 15, "no sample counted twice");
        assert_eq!(minute[0].avg.util, 50.0, "the first of two samples in one second wins");
    }

    #[test]
    fn seconds_and_minutes_come_from_their_rings() {
        let store = MetricsStore::new();
        // 3 minutes of 1 Hz samples, util = second of the minute.
        let batch: Vec<Sample> = (0..180).map(|s| sample(1, T0 + s, (s % 60) as f32)).collect();
        store.ingest(1, batch, T0);
        let seconds = store.points(1, T0 + 10, T0 + 19, 1);
        assert_eq!(seconds.len(), 10);
        assert_eq!((seconds[0].at, seconds[0].avg.util), (T0 + 10, 10.0));
        let fives = store.points(1, T0, T0 + 59, 5);
        assert_eq!(fives.len(), 12);
        assert_eq!((fives[1].at, fives[1].samples, fives[1].max.util), (T0 + 5, 5, 9.0));
        assert!((fives[1].avg.util - 7.0).abs() < 1e-4, "{:?}", fives[1]);
        let minutes = store.points(1, T0, T0 + 179, 60);
        assert_eq!(minutes.len(), 3);
        assert!(minutes.iter().all(|m| m.samples == 60 && (m.avg.util - 29.5).abs() < 1e-3 && m.max.util == 59.0), "{minutes:?}");
        let two_minutes = store.points(1, T0, T0 + 179, 120);
        assert_eq!(two_minutes.iter().map(|p| p.samples).collect::<Vec<_>>(), vec![120, 60]);
    }

    #[test]
    fn the_second_ring_keeps_only_the_last_ten_minutes() {
        let store = MetricsStore::new();
        store.ingest(1, (0..900).map(|s| sample(1, T0 + s, 1.0)).collect(), T0);
        let seconds = store.points(1, T0, T0 + 900, 1);
        assert_eq!(seconds.len(), SECOND_SLOTS);
        assert_eq!(seconds[0].at, T0 + 300);
        // The minute ring still has all 15 minutes.
        let late = store.points(1, T0, T0 + 900, 60);
        assert_eq!(late.iter().map(|p| p.samples).sum::<u32>(), 900);
    }

    #[tokio::test]
    async fn the_live_feed_carries_the_newest_new_sample_per_gpu() {
        let store = MetricsStore::new();
        let mut live = store.subscribe(Feed::All).await;
        store.ingest(3, vec![sample(1, T0 + 2, 2.0), sample(1, T0 + 1, 1.0), sample(2, T0, 5.0)], T0);
        let batch = live.try_recv().expect("a batch");
        assert_eq!(batch.node_id, 3);
        assert_eq!(batch.samples.iter().map(|s| (s.gpu_id, s.at)).collect::<Vec<_>>(), vec![(1, T0 + 2), (2, T0)]);
        store.ingest(3, vec![sample(1, T0 + 2, 2.0)], T0);
        assert!(live.try_recv().is_err(), "a pure resend publishes nothing");
    }

    #[tokio::test]
    async fn a_node_is_watched_while_a_subscriber_of_it_or_of_its_gpr_or_slice_listens() {
        let store = MetricsStore::new();
        assert!(!store.watched(3), "nobody listens");
        let node3 = store.subscribe(Feed::Node(3)).await;
        assert!(store.watched(3) && !store.watched(4), "a node's subscriber watches that node only");
        drop(node3);
        assert!(!store.watched(3), "its subscriber left");

        // Node 3 is held by GPR 7 of slice 2, node 5 by GPR 8 of slice 2, node 4 by nobody.
        let held = |gpr_id, slice_id| Holder { gpr_id, slice_id, since: T0 };
        let (_allocation, _refresher) = store.install_allocation(HashMap::from([(3, held(7, 2)), (5, held(8, 2))]));
        let all = store.subscribe(Feed::All).await;
        assert!(!store.watched(3), "hearing every batch is not watching every node");
        let gpr = store.watch_scope(WatchedScope::Gpr(7));
        assert!(store.watched(3) && !store.watched(4) && !store.watched(5), "a GPR's subscriber watches the nodes it holds");
        assert_eq!(store.interest().borrow().gprs, BTreeSet::from([7]), "and tells the other replicas");
        drop(gpr);
        assert!(!store.watched(3));
        let slice = store.watch_scope(WatchedScope::Slice(2));
        assert!(store.watched(3) && store.watched(5) && !store.watched(4), "a slice's, those its GPRs hold");
        assert_eq!(store.interest().borrow().gprs, BTreeSet::from([7, 8]));
        drop((slice, all));
        assert!(!store.watched(5));
        store.refresh_interest();
        assert!(store.interest().borrow().gprs.is_empty(), "forgotten once its subscriber left");
    }

    #[tokio::test]
    async fn a_node_feed_hears_only_its_node() {
        let store = MetricsStore::new();
        let mut node3 = store.subscribe(Feed::Node(3)).await;
        let mut all = store.subscribe(Feed::All).await;
        store.ingest(4, vec![sample(7, T0, 1.0)], T0);
        store.ingest(3, vec![sample(1, T0, 1.0)], T0);
        assert_eq!(node3.try_recv().expect("node 3's batch").node_id, 3);
        assert!(node3.try_recv().is_err(), "node 4's batch is not on node 3's feed");
        assert_eq!([all.try_recv().expect("first").node_id, all.try_recv().expect("second").node_id], [4, 3]);
        // A feed nobody hears any more is dropped on the next batch of its node.
        drop(node3);
        store.ingest(3, vec![sample(1, T0 + 1, 1.0)], T0);
        assert!(store.node_feeds.lock().expect("feeds").is_empty());
    }

    /// Another replica's view: what was published, and a fixed answer to history queries.
    struct Recorded(Mutex<Vec<(i64, Vec<i64>)>>, Vec<Point>);

    #[async_trait::async_trait]
    impl MetricsFanout for Recorded {
        fn publish(&self, node_id: i64, _: Option<i64>, samples: &[Sample]) {
            self.0.lock().expect("recorded").push((node_id, samples.iter().map(|s| s.at).collect()));
        }

        fn has_peers(&self) -> bool {
            true
        }

        async fn peer_points(&self, _: i64, _: i64, _: i64, _: i64) -> Vec<Point> {
            self.1.clone()
        }
    }

    #[tokio::test]
    async fn new_local_samples_go_to_the_other_replicas_and_remote_ones_are_delivered_not_stored() {
        let fanout = Arc::new(Recorded(Mutex::new(Vec::new()), Vec::new()));
        let store = Arc::new(MetricsStore::with_fanout(fanout.clone()));
        // A stand-in for the Redis listener: applies every interest at once.
        let listener = {
            let (store, mut interest) = (store.clone(), store.interest());
            tokio::spawn(async move {
                loop {
                    let version = interest.borrow_and_update().version;
                    store.interest_applied(version);
                    if interest.changed().await.is_err() {
                        return;
                    }
                }
            })
        };
        let mut live = store.subscribe(Feed::Node(3)).await;
        store.ingest(3, vec![sample(1, T0, 1.0), sample(1, T0 + 1, 1.0)], T0);
        store.ingest(3, vec![sample(1, T0 + 1, 1.0)], T0);
        store.deliver_remote(3, vec![sample(2, T0 + 2, 1.0)]);
        assert_eq!(*fanout.0.lock().expect("recorded"), vec![(3, vec![T0, T0 + 1])], "every new local sample once; no resend, no echo");
        // Remote samples reach live subscribers but stay in the history of the replica that took them.
        assert_eq!(store.points(1, T0, T0 + 2, 1).len(), 2);
        assert!(store.points(2, T0, T0 + 2, 1).is_empty());
        assert_eq!(store.gpu_count(), 1);
        assert_eq!(live.try_recv().expect("local").samples[0].at, T0 + 1);
        assert_eq!(live.try_recv().expect("remote").samples[0].gpu_id, 2);
        listener.abort();
    }

    #[tokio::test]
    async fn the_interest_follows_the_live_subscribers() {
        let store = MetricsStore::new();
        let interest = store.interest();
        assert_eq!(*interest.borrow(), Interest::default(), "nobody listens: nothing is needed from the others");
        let node3 = store.subscribe(Feed::Node(3)).await;
        let node5 = store.subscribe(Feed::Node(5)).await;
        assert_eq!(interest.borrow().nodes, BTreeSet::from([3, 5]));
        assert!(!interest.borrow().all);
        let all = store.subscribe(Feed::All).await;
        assert!(interest.borrow().all, "a GPR or slice scope needs every node");
        drop(all);
        drop(node3);
        store.refresh_interest();
        let now = interest.borrow().clone();
        assert_eq!((now.all, now.nodes), (false, BTreeSet::from([5])));
        let version = now.version;
        store.refresh_interest();
        assert_eq!(interest.borrow().version, version, "no change, no new version");
        drop(node5);
        store.refresh_interest();
        assert!(interest.borrow().nodes.is_empty());
    }

    #[tokio::test]
    async fn a_history_query_merges_the_other_replicas_points() {
        let p = |at: i64, samples: u32, util: f32| Point { at, samples, avg: values(util), max: values(util) };
        // Another replica took the agent's reports for the first minute, this one for the second.
        let theirs = vec![p(T0, 60, 10.0), p(T0 + 60, 20, 40.0)];
        let store = MetricsStore::with_fanout(Arc::new(Recorded(Mutex::new(Vec::new()), theirs)));
        store.ingest(1, (60..100).map(|s| sample(1, T0 + s, 70.0)).collect(), T0);
        let points = store.all_points(1, T0, T0 + 119, 60).await;
        assert_eq!(points.iter().map(|p| (p.at, p.samples)).collect::<Vec<_>>(), vec![(T0, 60), (T0 + 60, 60)]);
        assert_eq!(points[0].avg.util, 10.0);
        assert!((points[1].avg.util - 60.0).abs() < 1e-3, "20 samples at 40 and 40 at 70 average to 60, got {}", points[1].avg.util);
        assert_eq!(points[1].max.util, 70.0);
        // Alone, the same history is this replica's only.
        let alone = MetricsStore::new();
        alone.ingest(1, (60..100).map(|s| sample(1, T0 + s, 70.0)).collect(), T0);
        assert_eq!(alone.all_points(1, T0, T0 + 119, 60).await.len(), 1);
    }

    #[test]
    fn silent_gpus_are_swept_after_a_day() {
        let store = MetricsStore::new();
        store.ingest(1, vec![sample(1, T0, 1.0)], T0);
        store.ingest(1, vec![sample(2, T0 + KEEP_SECS, 1.0)], T0 + KEEP_SECS + SWEEP_EVERY_SECS + 1);
        assert_eq!(store.gpu_count(), 1);
    }
}
