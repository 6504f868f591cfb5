//! The like-for-like baselines the replay compares EGS with: FIFO and EASY backfill, with the
//! same delays and the same one-GPR-per-slice rule.

use super::*;

/// FIFO and EASY backfill with the same delays and the one-GPR-per-slice rule.
pub(super) fn run_baseline(records: &mut [Record], config: &ReplayConfig) -> Outcome {
    let easy = config.policy == Policy::Easy;
    let mut free = config.nodes as i64;
    // Waiting jobs in the policy's order: arrival (FIFO), or priority then arrival (EASY).
    let mut queue: BTreeMap<(Reverse<i32>, usize), ()> = BTreeMap::new();
    // Running jobs: (time the nodes are back at the latest by the time limit, nodes).
    let mut limits: BTreeMap<usize, (Time, i64)> = BTreeMap::new();
    let mut busy_slices: std::collections::HashSet<usize> = std::collections::HashSet::new();
    let mut done: BinaryHeap<Reverse<(Time, usize)>> = BinaryHeap::new();
    let mut out = Outcome::default();
    let mut next = 0usize;
    let overhead = config.provisioning_delay + config.release_delay;
    loop {
        let arrival = records.get(next).map(|r| r.submitted_at);
        let finish = done.peek().map(|Reverse((t, _))| *t);
        let Some(now) = [arrival, finish].into_iter().flatten().min() else { break };
        while let Some(&Reverse((t, id))) = done.peek()
            && t <= now
        {
            done.pop();
            free += i64::from(records[id].nodes);
            limits.remove(&id);
            busy_slices.remove(&records[id].slice);
            out.last_release = out.last_release.max(t);
        }
        while let Some(record) = records.get(next)
            && record.submitted_at <= now
        {
            let rank = if easy { record.priority } else { 0 };
            queue.insert((Reverse(rank), next), ());
            next += 1;
        }
        out.passes += 1;
        // The reservation of the first job that cannot start (EASY): when, and nodes spare then.
        let mut shadow: Option<(Time, i64)> = None;
        let mut started = Vec::new();
        for &(_, id) in queue.keys() {
            let r = &records[id];
            if busy_slices.contains(&r.slice) {
                continue;
            }
            let nodes = i64::from(r.nodes);
            let fits = nodes <= free;
            let allowed = match shadow {
                None => fits,
                Some((at, spare)) => fits && (now + overhead + r.reserved <= at || nodes <= spare),
            };
            if allowed {
                free -= nodes;
                started.push(id);
                busy_slices.insert(r.slice);
                let used = r.duration.min(r.reserved);
                done.push(Reverse((now + overhead + used, id)));
                limits.insert(id, (now + overhead + r.reserved, nodes));
                // A backfilled job still running at the reservation uses its spare nodes.
                if let Some((at, spare)) = shadow.as_mut()
                    && now + overhead + r.reserved > *at
                {
                    *spare -= nodes;
                }
                continue;
            }
            if shadow.is_none() {
                if !easy {
                    break;
                }
                // When enough nodes come back by the running jobs' limits.
                let mut ends: Vec<(Time, i64)> = limits.values().copied().collect();
                ends.sort_unstable();
                let mut available = free;
                let mut at = Time::MAX;
                for (end, n) in ends {
                    available += n;
                    if available >= nodes {
                        at = end;
                        break;
                    }
                }
                shadow = Some((at, available - nodes));
            }
        }
        for id in started {
            let key = (Reverse(if easy { records[id].priority } else { 0 }), id);
            queue.remove(&key);
            records[id].started_at = Some(now);
        }
        out.max_pending = out.max_pending.max(queue.len());
    }
    out
}
