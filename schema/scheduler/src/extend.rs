//! Extending a provisioned GPR's window: by how much it may grow before a waiting GPR's promise
//! would move later. The answer comes from planning copies of the core with the window grown,
//! so it is whatever the real pass would do, backfills and pools included, not a model of it.

use super::*;

/// How far a window may grow now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtensionRoom {
    /// Seconds the window may end later, up to what was asked about.
    pub room: Time,
    /// Why not more: the first waiting GPR whose promise a longer window would move later,
    /// and that promise. `None` when all that was asked about fits.
    pub blocked_by: Option<(GprId, Time)>,
    /// Or a maintenance window on one of its nodes, which a longer window would run into.
    pub maintenance: Option<MaintenanceWindow>,
}

impl Scheduler {
    /// A provisioned GPR's window now ends at `ends_at`; its nodes' reservation moves with it.
    pub fn extend(&mut self, id: GprId, ends_at: Time, now: Time) {
        self.rebound(id, now, |spec| spec.ends_at = ends_at);
    }

    /// How much later than now planned the window of provisioned GPR `id` may end, up to
    /// `up_to` seconds and in whole `step`s, with no waiting GPR's promise moving later.
    /// `None` when `id` is not provisioned. Plans copies of the core (one when all of `up_to`
    /// fits, about log2(up_to / step) more otherwise); changes nothing.
    pub fn extension_room(&self, id: GprId, up_to: Time, step: Time, now: Time) -> Option<ExtensionRoom> {
        let running = self.running.get(&id)?;
        if running.spec.holding != Holding::Provisioned {
            return None;
        }
        let ends_at = running.spec.ends_at;
        let step = step.max(1);
        let mut base = self.clone();
        base.plan(now);
        let promised: Vec<(GprId, Time)> = base.pending.values().filter_map(|p| Some((p.request.id, p.plan?.start))).collect();
        // The first waiting GPR whose promise the window grown by `by` moves later, if any.
        let breaks = |by: Time| -> Option<(GprId, Time)> {
            let mut grown = base.clone();
            grown.extend(id, ends_at.saturating_add(by), now);
            grown.plan(now);
            promised
                .iter()
                .filter(|(gpr, promise)| {
                    // Admitted in the pass: it started, which is no later than promised.
                    grown.pending.get(gpr).is_some_and(|p| p.plan.is_none_or(|plan| plan.start > *promise))
                })
                .min_by_key(|(gpr, promise)| (*promise, *gpr))
                .copied()
        };
        let mut up_to = up_to.max(0);
        // Its nodes must be back before a window on one of them begins.
        let mut maintenance = None;
        if let Some((room, window)) = self.maintenance_room(id, now)
            && room < up_to
        {
            up_to = room / step * step;
            maintenance = Some(window);
        }
        let Some(mut blocked_by) = breaks(up_to) else { return Some(ExtensionRoom { room: up_to, blocked_by: None, maintenance }) };
        // Fits at `fits`, breaks at `breaks_at`: halve the gap to a step.
        let (mut fits, mut breaks_at) = (0, up_to);
        while breaks_at - fits > step {
            let mid = fits + ((breaks_at - fits) / 2 / step).max(1) * step;
            match breaks(mid) {
                None => fits = mid,
                Some(blocker) => {
                    breaks_at = mid;
                    blocked_by = blocker;
                }
            }
        }
        Some(ExtensionRoom { room: fits, blocked_by: Some(blocked_by), maintenance: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> PoolKey {
        PoolKey { cluster: 1, instance_type: "std".into(), gpu_shape: "H100".into() }
    }

    fn request(id: GprId, slice: SliceId, nodes: u32, duration: Time) -> Request {
        Request {
            id,
            slice,
            nodes,
            gpus_per_node: None,
            min_gpu_memory_mib: None,
            gpu_shape: None,
            instance_type: None,
            preferred_clusters: Vec::new(),
            priority: 100,
            duration,
            earliest_start: None,
            submitted_at: 0,
            preemptible: false,
            requeue: false,
            idle_timeout: None,
            rdma: false,
        }
    }

    /// Four nodes; GPR 1 holds two of them until 1,000, GPR 2 the other two until 3,000.
    fn core() -> Scheduler {
        let mut core = Scheduler::new(Config::default());
        for id in 1..=4 {
            core.upsert_node(NodeSpec { id, pool: pool(), gpus: 8, gpu_memory_mib: 81_920, healthy: true, rdma: false });
        }
        for slice in 1..=4 {
            core.upsert_slice(SliceSpec { id: slice, clusters: vec![1], evictable: false, shapes: Vec::new() });
        }
        for (id, nodes, ends_at) in [(1, vec![1, 2], 1000), (2, vec![3, 4], 3000)] {
            let spec =
                RunningSpec { request: request(id, id, 2, ends_at), pool: pool(), nodes, started_at: 0, ends_at, holding: Holding::Provisioned };
            core.add_running(spec);
        }
        assert!(core.plan(0).is_empty());
        core
    }

    #[test]
    fn a_window_grows_freely_when_no_one_waits_for_its_nodes() {
        let core = core();
        assert_eq!(core.extension_room(1, 7200, 60, 10), Some(ExtensionRoom { room: 7200, blocked_by: None, maintenance: None }));
    }

    #[test]
    fn a_window_grows_only_until_a_waiting_gprs_promise_would_move() {
        let mut core = core();
        // Two nodes wanted: promised when GPR 1's nodes are back (1,000 plus the allowance).
        assert!(core.submit(request(10, 3, 2, 500), 10).expect("fits").is_empty());
        let promise = core.status(10).and_then(|s| s.start_no_later_than).expect("a promise");
        assert!((1000..3000).contains(&promise), "{promise}");
        let room = core.extension_room(1, 7200, 60, 10).expect("provisioned");
        // Any longer and GPR 10 waits for GPR 2's nodes instead: its promise moves later.
        assert_eq!(room.blocked_by, Some((10, promise)));
        assert!(room.room < 60 && room.room >= 0, "{room:?}");
        // GPR 2's window is not in anyone's way until GPR 10 would need it: it may grow.
        assert_eq!(core.extension_room(2, 7200, 60, 10).map(|r| r.room), Some(7200));
        // Nothing was changed by asking.
        assert_eq!(core.status(10).and_then(|s| s.start_no_later_than), Some(promise));
        assert_eq!(core.running(1).map(|r| r.ends_at), Some(1000));
    }

    #[test]
    fn the_room_is_what_is_left_before_the_promise_in_whole_steps() {
        let mut core = core();
        // Wants all four nodes: starts when GPR 2's nodes are back; GPR 1 may run up to then.
        assert!(core.submit(request(10, 3, 4, 500), 10).expect("fits").is_empty());
        let promise = core.status(10).and_then(|s| s.start_no_later_than).expect("a promise");
        let room = core.extension_room(1, 7200, 60, 10).expect("provisioned");
        assert_eq!(room.blocked_by, Some((10, promise)));
        assert_eq!(room.room, 1980, "{room:?}");
        // Extending by the room keeps the promise on a real pass.
        core.extend(1, 1000 + room.room, 10);
        core.plan(10);
        assert_eq!(core.status(10).and_then(|s| s.start_no_later_than), Some(promise));
        assert!(core.audit(10).is_empty());
    }

    #[test]
    fn only_provisioned_gprs_have_room() {
        let mut core = core();
        assert_eq!(core.extension_room(99, 60, 60, 10), None);
        core.start_release(1, 1100, 10);
        assert_eq!(core.extension_room(1, 60, 60, 10), None);
    }
}
