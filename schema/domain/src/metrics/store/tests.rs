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
