//! `gpuMetrics` delivery: accepted samples, coalesced per subscriber to its interval.
//!
//! Metrics are coalescable, so a subscriber never holds more than one pending sample per GPU
//! and never slows ingestion: the newest sample of each GPU wins, a quiet subscriber gets the
//! first sample at once and then at most one update per interval, and one that falls behind
//! the feed skips to the newest batches.

use super::sample::{Sample, SampleBatch};
use super::store::Allocation;
use futures_util::Stream;
use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::Arc;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{broadcast, watch};
use tokio::time::{Duration, Instant};

/// The pending samples of one subscriber.
///
/// Updates are paced by a token bucket: a token every [`PACE`] of an interval, at most
/// [`BURST`] saved up, one spent per update. A GPU reporting once per interval is delivered as
/// it reports; a flood of samples is coalesced to one update per interval (latest wins); and
/// an update that went out late (a busy moment) is made up for with the saved token instead of
/// pushing every later update back. Pacing by "one interval after the last update" has that
/// flaw: one late update shifts all the following ones for good (10,000 subscribers drifted to
/// ~1 s that way).
pub struct Coalescer {
    interval: Duration,
    pending: BTreeMap<i64, Sample>,
    /// Newest time delivered per GPU: a late resend is never delivered after a newer sample.
    delivered: HashMap<i64, i64>,
    /// Tokens saved at `counted`.
    tokens: f64,
    counted: Option<Instant>,
}

/// Updates a subscriber may have saved up.
const BURST: f64 = 2.0;
/// A token comes every this much of the interval, a little faster than a GPU reporting once
/// per interval spends them. With tokens at exactly the interval there is no slack: once a
/// burst (an agent sending two reports close together after a slow answer) emptied the bucket,
/// each update waited for its token as long as the first had, for good. At fleet scale,
/// after the agents' first reports, subscribers stayed p50 46–211 ms behind that way. With this
/// pace a subscriber catches up by a fifth of an interval per update, and a flood still gets at
/// most 1.25 updates per interval.
const PACE: f64 = 0.8;

impl Coalescer {
    pub fn new(interval: Duration) -> Self {
        Self { interval: interval.max(Duration::from_millis(1)), pending: BTreeMap::new(), delivered: HashMap::new(), tokens: BURST, counted: None }
    }

    /// Keeps `sample` if it is the newest of its GPU so far.
    pub fn offer(&mut self, sample: &Sample) {
        if self.delivered.get(&sample.gpu_id).is_some_and(|&at| at >= sample.at) {
            return;
        }
        match self.pending.get(&sample.gpu_id) {
            Some(kept) if kept.at >= sample.at => {}
            _ => {
                self.pending.insert(sample.gpu_id, sample.clone());
            }
        }
    }

    fn tokens_at(&self, now: Instant) -> f64 {
        match self.counted {
            None => self.tokens,
            Some(at) => (self.tokens + now.saturating_duration_since(at).as_secs_f64() / self.token_every().as_secs_f64()).min(BURST),
        }
    }

    /// When the pending samples may go out: `now` while a token is saved, else when the next
    /// one is. `None` when nothing is pending.
    pub fn due(&self, now: Instant) -> Option<Instant> {
        if self.pending.is_empty() {
            return None;
        }
        let tokens = self.tokens_at(now);
        if tokens >= 1.0 {
            return Some(now);
        }
        Some(now + self.token_every().mul_f64(1.0 - tokens))
    }

    fn token_every(&self) -> Duration {
        self.interval.mul_f64(PACE)
    }

    /// The pending samples, by GPU id; spends a token.
    pub fn take(&mut self, now: Instant) -> Vec<Sample> {
        // A timer may wake a hair early: never go below empty.
        self.tokens = (self.tokens_at(now) - 1.0).max(0.0);
        self.counted = Some(now);
        let taken: Vec<Sample> = std::mem::take(&mut self.pending).into_values().collect();
        for sample in &taken {
            self.delivered.insert(sample.gpu_id, sample.at);
        }
        taken
    }

    /// Drops pending samples the subscriber may no longer receive.
    pub fn retain(&mut self, keep: impl Fn(&Sample) -> bool) {
        self.pending.retain(|_, sample| keep(sample));
    }
}

enum Step {
    Emit,
    Reallocated(bool),
    Received(Result<Arc<SampleBatch>, RecvError>),
}

/// Updates of the samples `wanted` selects given the current allocation, at most one per
/// `interval`. When the allocation changes (a node goes to another GPR), pending samples are
/// filtered again, so a node leaving the subscriber's slice stops its metrics at once.
pub fn coalesced<W>(
    mut live: broadcast::Receiver<Arc<SampleBatch>>,
    interval: Duration,
    mut allocation: watch::Receiver<Arc<Allocation>>,
    wanted: W,
) -> impl Stream<Item = Vec<Sample>> + Send + 'static
where
    W: Fn(&Sample, &Allocation) -> bool + Send + 'static,
{
    async_stream::stream! {
        let mut coalescer = Coalescer::new(interval);
        let mut watching = true;
        loop {
            let now = Instant::now();
            let due = coalescer.due(now);
            // Due already: send now (a timer would round up to the next millisecond tick).
            if due.is_some_and(|due| due <= now) {
                yield coalescer.take(now);
                continue;
            }
            // Updates first, so a flood of batches never starves delivery.
            let step = tokio::select! {
                biased;
                _ = tokio::time::sleep_until(due.unwrap_or(now)), if due.is_some() => Step::Emit,
                changed = allocation.changed(), if watching => Step::Reallocated(changed.is_ok()),
                received = live.recv() => Step::Received(received),
            };
            match step {
                Step::Emit => yield coalescer.take(Instant::now()),
                Step::Reallocated(true) => {
                    let current = allocation.borrow_and_update().clone();
                    coalescer.retain(|s| wanted(s, &current));
                }
                // The refresher is gone (shutting down): keep the last allocation.
                Step::Reallocated(false) => watching = false,
                Step::Received(Ok(batch)) => {
                    let current = allocation.borrow().clone();
                    for sample in batch.samples.iter().filter(|s| wanted(s, &current)) {
                        coalescer.offer(sample);
                    }
                }
                // Fell behind: the next batches are the newest ones, which is all that matters.
                Step::Received(Err(RecvError::Lagged(_))) => {}
                Step::Received(Err(RecvError::Closed)) => break,
            }
        }
    }
}

/// The allocation is re-read at least this often, and on every nudge.
pub const ALLOCATION_POLL: Duration = Duration::from_secs(5);
/// A burst of nudges (one transaction writes several events) settles into one reload.
const ALLOCATION_SETTLE: Duration = Duration::from_millis(50);

/// Who holds each GPU, as every live subscriber of this replica shares it: the first
/// subscriber loads and installs it and starts the task that reloads it when GPR events move
/// nodes ([`refresh_allocation`]); the task ends with the last subscriber.
pub async fn shared_allocation(
    samples: &super::MetricsStore,
    events: &crate::events::EventFeed,
    db: &sea_orm::DatabaseConnection,
) -> crate::error::Result<watch::Receiver<Arc<Allocation>>> {
    if let Some(shared) = samples.allocation() {
        return Ok(shared);
    }
    let (shared, start) = samples.install_allocation(super::access::allocation(db, None).await?);
    if let Some(tx) = start {
        let (nudges, _) = events.subscribe();
        let db = db.clone();
        tokio::spawn(refresh_allocation(
            tx,
            nudges,
            |e: &Arc<egs_entities::gpr_event::Model>| crate::events::MOVES_NODES.contains(&e.kind),
            move || {
                let db = db.clone();
                async move { super::access::allocation(&db, None).await }
            },
        ));
    }
    Ok(shared)
}

/// Keeps the shared allocation current until its last receiver is gone: reloads it when
/// `nudges` brings something `is_nudge` accepts (GPR events that move nodes), and every
/// [`ALLOCATION_POLL`]. One reload serves every subscriber of the process.
pub async fn refresh_allocation<T, N, L, F, E>(tx: watch::Sender<Arc<Allocation>>, mut nudges: broadcast::Receiver<T>, is_nudge: N, mut load: L)
where
    T: Clone,
    N: Fn(&T) -> bool,
    L: FnMut() -> F,
    F: Future<Output = Result<Allocation, E>>,
    E: std::fmt::Debug,
{
    let mut nudged = true;
    loop {
        tokio::select! {
            _ = tx.closed() => return,
            received = nudges.recv(), if nudged => match received {
                Ok(item) if !is_nudge(&item) => continue,
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => {
                    nudged = false;
                    continue;
                }
            },
            _ = tokio::time::sleep(ALLOCATION_POLL) => {}
        }
        tokio::time::sleep(ALLOCATION_SETTLE).await;
        while !matches!(nudges.try_recv(), Err(TryRecvError::Empty | TryRecvError::Closed)) {}
        match load().await {
            Ok(loaded) => {
                tx.send_if_modified(|current| {
                    let changed = **current != loaded;
                    if changed {
                        *current = Arc::new(loaded);
                    }
                    changed
                });
            }
            Err(error) => tracing::warn!(?error, "could not re-read which GPRs hold which nodes; live metrics keep the last view"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::sample::Values;
    use crate::metrics::store::{Feed, MetricsStore};
    use futures_util::StreamExt;

    const T0: i64 = 1_800_000_000;

    fn sample(gpu_id: i64, at: i64) -> Sample {
        Sample {
            gpu_id,
            uuid: Arc::from(format!("GPU-{gpu_id}")),
            node_id: 1,
            at,
            values: Values { util: (at - T0) as f32, ..Values::default() },
            sm_clock_mhz: 0.0,
            xid_errors: Vec::new(),
            ecc_corrected: None,
            ecc_uncorrected: None,
        }
    }

    fn times(samples: &[Sample]) -> Vec<(i64, i64)> {
        samples.iter().map(|s| (s.gpu_id, s.at - T0)).collect()
    }

    #[test]
    fn the_newest_sample_of_each_gpu_wins_and_older_ones_never_follow() {
        let start = Instant::now();
        let second = Duration::from_secs(1);
        let mut c = Coalescer::new(second);
        assert_eq!(c.due(start), None, "nothing pending");
        c.offer(&sample(1, T0 + 1));
        c.offer(&sample(1, T0 + 3));
        c.offer(&sample(1, T0 + 2)); // out of order: older than the pending one
        c.offer(&sample(2, T0));
        assert_eq!(c.due(start), Some(start), "the first update goes out at once");
        assert_eq!(times(&c.take(start)), vec![(1, 3), (2, 0)]);
        c.offer(&sample(1, T0 + 3)); // delivered already
        c.offer(&sample(1, T0 + 1)); // a late resend
        assert_eq!(c.due(start), None);
        c.offer(&sample(1, T0 + 4));
        assert_eq!(c.due(start), Some(start), "a second token was saved: this one goes too");
        c.take(start);
        c.offer(&sample(1, T0 + 5));
        assert_eq!(c.due(start), Some(start + second.mul_f64(PACE)), "then about one per interval");
        c.retain(|s| s.gpu_id == 2);
        assert_eq!(c.due(start), None, "a GPU out of sight is dropped");
    }

    #[test]
    fn a_gpu_reporting_once_an_interval_is_sent_as_it_reports_even_after_a_late_update() {
        let start = Instant::now();
        let second = Duration::from_secs(1);
        let mut c = Coalescer::new(second);
        // Reports a second apart; the first went out 800 ms late (the gateway was busy), and
        // some arrive up to 400 ms late: each later one still goes out as it arrives.
        for (k, late_ms) in [800u64, 0, 400, 0, 350, 10, 0].into_iter().enumerate() {
            let arrived = start + second * k as u32 + Duration::from_millis(late_ms);
            c.offer(&sample(1, T0 + k as i64));
            assert_eq!(c.due(arrived), Some(arrived), "report {k} goes out as it arrives");
            assert_eq!(times(&c.take(arrived)), vec![(1, k as i64)]);
        }
        // A flood is coalesced to one update per interval, the newest sample each time.
        let flood = start + second * 7;
        for k in 7..20 {
            c.offer(&sample(1, T0 + k));
            if let Some(due) = c.due(flood).filter(|due| *due <= flood) {
                c.take(due);
            }
        }
        let due = c.due(flood).expect("pending");
        assert!(due > flood, "no token left: the rest waits");
        assert_eq!(times(&c.take(due)), vec![(1, 19)]);
    }

    #[test]
    fn a_subscriber_held_back_by_a_burst_catches_up_with_a_gpu_reporting_once_an_interval() {
        let start = Instant::now();
        let second = Duration::from_secs(1);
        let mut c = Coalescer::new(second);
        // Three reports close together (an agent catching up after a slow answer) empty the
        // bucket: the third waits for its token, 600 ms.
        for (k, at_ms) in [0u64, 100, 200].into_iter().enumerate() {
            let arrived = start + Duration::from_millis(at_ms);
            c.offer(&sample(1, T0 + k as i64));
            let due = c.due(arrived).expect("pending");
            c.take(due.max(arrived));
        }
        // Then one report a second, on time: each goes out sooner after it arrives, then at once.
        let waits: Vec<u128> = (1..6u32)
            .map(|k| {
                let arrived = start + second * k;
                c.offer(&sample(1, T0 + 2 + k as i64));
                let due = c.due(arrived).expect("pending");
                c.take(due);
                due.saturating_duration_since(arrived).as_millis()
            })
            .collect();
        assert!(waits.windows(2).all(|w| w[1] <= w[0]) && waits[0] > 0 && waits[4] == 0, "waits in ms: {waits:?}");
    }

    #[tokio::test]
    async fn a_stream_sends_the_first_update_at_once_then_coalesces_to_the_interval() {
        let store = MetricsStore::new();
        let interval = Duration::from_millis(300);
        let (_allocation, watched) = watch::channel(Arc::new(Allocation::new()));
        let stream = coalesced(store.subscribe(Feed::All).await, interval, watched, |s, _| s.gpu_id == 1);
        tokio::pin!(stream);
        for s in 0..5 {
            store.ingest(1, vec![sample(1, T0 + s), sample(2, T0 + s)], T0);
        }
        let began = Instant::now();
        let first = stream.next().await.expect("an update");
        assert_eq!(times(&first), vec![(1, 0)]);
        let second = stream.next().await.expect("an update");
        assert_eq!(times(&second), vec![(1, 1)], "the saved token: the next sample goes too");
        let third = stream.next().await.expect("an update");
        assert!(began.elapsed() >= interval / 2, "then paced");
        assert_eq!(times(&third), vec![(1, 4)], "only the newest, only GPUs in scope");
        let quiet = tokio::time::timeout(Duration::from_millis(400), stream.next()).await;
        assert!(quiet.is_err(), "nothing new, nothing sent");
    }

    #[tokio::test]
    async fn a_lagging_subscriber_skips_to_the_newest() {
        let store = MetricsStore::new();
        let (_allocation, watched) = watch::channel(Arc::new(Allocation::new()));
        let stream = coalesced(store.subscribe(Feed::All).await, Duration::from_millis(20), watched, |s, _| s.gpu_id == 1);
        tokio::pin!(stream);
        let total = crate::metrics::store::LIVE_CAPACITY as i64 + 100;
        for s in 0..total {
            store.ingest(1, vec![sample(1, T0 + s)], T0);
        }
        let mut updates = 0;
        loop {
            let update = tokio::time::timeout(Duration::from_secs(5), stream.next()).await.expect("updates keep coming").expect("open");
            updates += 1;
            if update[0].at == T0 + total - 1 {
                break;
            }
        }
        assert!(updates <= 10, "coalesced, not replayed: {updates} updates");
    }

    #[tokio::test]
    async fn a_node_changing_hands_stops_its_samples_at_once() {
        use crate::metrics::store::Holder;
        let store = MetricsStore::new();
        let held = |slice_id| Arc::new(Allocation::from([(1, Holder { gpr_id: 1, slice_id, since: 0 })]));
        let (allocation, watched) = watch::channel(held(7));
        // Slice 7's view: samples of nodes its GPRs hold.
        let stream = coalesced(store.subscribe(Feed::All).await, Duration::from_secs(3600), watched, |s, a| {
            a.get(&s.node_id).is_some_and(|h| h.slice_id == 7)
        });
        tokio::pin!(stream);
        store.ingest(1, vec![sample(1, T0)], T0);
        assert_eq!(times(&stream.next().await.expect("an update")), vec![(1, 0)]);
        store.ingest(1, vec![sample(1, T0 + 1)], T0);
        assert_eq!(times(&stream.next().await.expect("the saved token")), vec![(1, 1)]);
        // The next sample waits for the interval; then the node goes to slice 8.
        store.ingest(1, vec![sample(1, T0 + 3)], T0);
        assert!(tokio::time::timeout(Duration::from_millis(100), stream.next()).await.is_err());
        allocation.send_replace(held(8));
        assert!(tokio::time::timeout(Duration::from_millis(100), stream.next()).await.is_err());
        store.ingest(1, vec![sample(1, T0 + 4)], T0);
        assert!(tokio::time::timeout(Duration::from_millis(100), stream.next()).await.is_err(), "nothing of slice 8's");
    }

    #[tokio::test]
    async fn the_refresher_reloads_on_a_nudge_and_stops_with_its_last_subscriber() {
        use crate::metrics::store::Holder;
        use std::sync::atomic::{AtomicI64, Ordering};
        let store = MetricsStore::new();
        let (rx, tx) = store.install_allocation(Allocation::new());
        let tx = tx.expect("the first installs");
        let (nudge, nudges) = broadcast::channel::<bool>(16);
        let loads = Arc::new(AtomicI64::new(0));
        let counted = loads.clone();
        let task = tokio::spawn(refresh_allocation(
            tx,
            nudges,
            |n: &bool| *n,
            move || {
                let n = counted.fetch_add(1, Ordering::SeqCst) + 1;
                async move { Ok::<_, ()>(Allocation::from([(n, Holder { gpr_id: n, slice_id: n, since: 0 })])) }
            },
        ));
        let mut rx = rx;
        nudge.send(false).expect("send"); // not about nodes: ignored
        nudge.send(true).expect("send");
        tokio::time::timeout(Duration::from_secs(2), rx.changed()).await.expect("a reload").expect("open");
        assert_eq!(loads.load(Ordering::SeqCst), 1);
        assert!(store.allocation().is_some(), "shared while subscribed");
        drop(rx);
        tokio::time::timeout(Duration::from_secs(2), task).await.expect("stops").expect("no panic");
        assert!(store.allocation().is_none(), "the next subscriber starts a new one");
    }
}
