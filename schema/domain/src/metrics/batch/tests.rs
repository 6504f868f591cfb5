use super::*;

fn job(node_id: i64) -> Job {
    let (reply, _) = oneshot::channel();
    Job { node_id, samples: Vec::new(), heartbeat: None, reply, arrived: Instant::now() }
}

/// Nodes that reported twice, just now.
fn reporters(ids: impl IntoIterator<Item = i64> + Clone) -> Reporters {
    let mut reporters = Reporters::default();
    let now = Instant::now();
    reporters.saw(ids.clone(), now);
    reporters.saw(ids, now);
    reporters
}

#[test]
fn a_lone_reporter_waits_for_nothing_and_a_fleet_at_most_max_gather() {
    assert_eq!(Reporters::default().gather(), Duration::ZERO);
    assert_eq!(reporters([7]).gather(), Duration::ZERO);
    assert_eq!(reporters(1..=11).gather(), GATHER_PER_REPORTER * 10);
    assert_eq!(reporters(1..=10_000).gather(), MAX_GATHER);
}

#[test]
fn a_batch_stops_waiting_once_every_recent_reporter_is_in() {
    let recent = reporters([1, 2, 3]);
    let mut batch = Gathering::new(job(1), &recent);
    batch.push(job(1), &recent);
    batch.push(job(99), &recent);
    assert!(!batch.everyone_in(&recent), "a second report of one node, or a new node, is not another reporter");
    batch.push(job(2), &recent);
    batch.push(job(3), &recent);
    assert!(batch.everyone_in(&recent));
    assert!(Gathering::new(job(5), &Reporters::default()).everyone_in(&Reporters::default()), "the first report ever waits for no one");
}

#[test]
fn reporters_are_expected_while_recent_and_forgotten_once_quiet_for_remember() {
    let mut known = reporters([1, 2]);
    let start = Instant::now();
    known.saw([3], start + RECENT);
    assert!(!known.expects(1) && !known.expects(3), "1 is quiet for RECENT, 3 reported once");
    assert_eq!((known.expected, known.nodes.len()), (0, 3), "all still remembered");
    known.saw([1], start + RECENT * 2);
    assert!(known.expects(1), "a paced agent, back after a few seconds, recurs");
    known.saw([4], start + RECENT + REMEMBER);
    assert_eq!(known.nodes.keys().copied().collect::<BTreeSet<_>>(), BTreeSet::from([1, 4]));
}

#[test]
fn one_off_reporters_are_not_waited_for() {
    let mut seen = Reporters::default();
    seen.saw(1..=100, Instant::now());
    assert_eq!(seen.gather(), Duration::ZERO, "a hundred nodes reporting once each (a registration storm)");
    assert!(Gathering::new(job(101), &seen).everyone_in(&seen));
}
