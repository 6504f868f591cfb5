//! The core's own bookkeeping: pools with their timelines, nodes, slices' shares, the
//! reservations of a pass, and the pending and running GPRs.

use super::*;
use rustc_hash::FxHashMap as HashMap;

#[derive(Clone, Debug)]
pub(super) struct Pool {
    pub(super) key: PoolKey,
    pub(super) gpus_per_node: u32,
    pub(super) gpu_memory_mib: i64,
    pub(super) nodes: Vec<NodeId>,
    pub(super) healthy: i32,
    /// Every node of the pool has RDMA.
    pub(super) rdma: bool,
    /// Running reservations plus every pending plan: what promises are checked against.
    pub(super) plan: Timeline,
    /// Running reservations on predicted ends plus every pending GPR's expected window.
    pub(super) expected: Timeline,
    /// Pending plans here, unordered (for "what if I were ahead of them" views).
    pub(super) planned: Reservations,
    /// Pending GPRs' expected windows here (the same, for estimates).
    pub(super) expected_planned: Reservations,
    /// Maintenance windows on the nodes the pool counts, sorted by node (see `maintenance`).
    pub(super) away: Vec<MaintenanceWindow>,
    /// The plans here whose spans a window overlaps.
    pub(super) guards: super::maintenance::Guards,
}

#[derive(Clone, Debug)]
pub(super) struct NodeState {
    pub(super) pool: usize,
    pub(super) healthy: bool,
    pub(super) holder: Option<GprId>,
}

#[derive(Clone, Debug, Default)]
pub(super) struct SliceState {
    pub(super) clusters: Vec<ClusterId>,
    pub(super) evictable: bool,
    pub(super) shapes: Vec<String>,
    /// Decayed GPU-seconds, weighted to the scheduler's share epoch.
    pub(super) share: f64,
    pub(super) pending: Vec<GprId>,
    /// Windows the slice is busy in: running GPRs and pending plans (one GPR at a time).
    pub(super) busy: Vec<Busy>,
    pub(super) expected_busy: Vec<Busy>,
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Busy {
    pub(super) gpr: GprId,
    pub(super) start: Time,
    pub(super) end: Time,
}

/// A pending GPR's window in a pool's list, with what views filter on, so building a view
/// needs no lookups.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reservation {
    pub(super) gpr: GprId,
    pub(super) priority: i32,
    pub(super) start: Time,
    pub(super) end: Time,
    pub(super) nodes: i32,
}

/// A pool's pending windows (plans, or expected windows), unordered: what "what if I went
/// ahead of the lower-priority ones" views take away (see `plan::View`).
#[derive(Clone, Debug, Default)]
pub(super) struct Reservations {
    list: Vec<Reservation>,
    /// Where each GPR's window is in `list` (a pass takes thousands out and puts them back).
    at: super::HashMap<GprId, usize>,
}

impl Reservations {
    /// Adds `r`, or replaces the window its GPR had.
    pub(super) fn push(&mut self, r: Reservation) {
        match self.at.get(&r.gpr) {
            Some(&i) => self.list[i] = r,
            None => {
                self.at.insert(r.gpr, self.list.len());
                self.list.push(r);
            }
        }
    }

    pub(super) fn forget(&mut self, gpr: GprId) {
        let Some(i) = self.at.remove(&gpr) else { return };
        self.list.swap_remove(i);
        if let Some(moved) = self.list.get(i) {
            self.at.insert(moved.gpr, i);
        }
    }

    pub(super) fn set_priority(&mut self, gpr: GprId, priority: i32) {
        if let Some(&i) = self.at.get(&gpr) {
            self.list[i].priority = priority;
        }
    }

    pub(super) fn replace(&mut self, list: Vec<Reservation>) -> Vec<Reservation> {
        let old = std::mem::take(&mut self.list);
        self.at.clear();
        for r in list {
            self.push(r);
        }
        old
    }

    pub(super) fn iter(&self) -> std::slice::Iter<'_, Reservation> {
        self.list.iter()
    }

    /// `(at, delta)` edges, sorted by time, of the windows below `priority` that touch
    /// `[from, until)` (the others cannot change a search there).
    /// Windows starting before `firm_until` are left in: they are firm (see
    /// `Scheduler::set_firm_horizon`).
    pub(super) fn edges_below(&self, priority: i32, from: Time, until: Time, firm_until: Time) -> Vec<(Time, i32)> {
        let wanted = self.list.iter().filter(|r| r.priority < priority && r.start < until && r.end > from && r.start >= firm_until);
        let mut edges: Vec<(Time, i32)> = wanted.flat_map(|r| [(r.start, r.nodes), (r.end, -r.nodes)]).collect();
        edges.sort_unstable_by_key(|e| e.0);
        edges
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Plan {
    pub(super) pool: usize,
    pub(super) start: Time,
    pub(super) end: Time,
}

#[derive(Clone, Debug)]
pub(super) struct Pending {
    pub(super) request: Request,
    pub(super) key: QueueKey,
    pub(super) pools: Vec<usize>,
    /// Ranked since the last plan was made (new, re-prioritised, requeued or edited): it may
    /// displace lower-priority holds made before it.
    pub(super) fresh: bool,
    pub(super) plan: Option<Plan>,
    /// The last promise given (the plan's start when the last call returned).
    pub(super) promised: Option<Time>,
    /// Why the plan was taken away, when it was (see [`Cause`]).
    pub(super) voided: Option<Cause>,
    pub(super) expected: Option<Time>,
    /// The expected window (pool, start, predicted end) behind `expected`.
    pub(super) expected_window: Option<Plan>,
    /// The pool of the last expected window: tried first in the next pass.
    pub(super) expected_hint: Option<usize>,
    /// Its start range as of the last pass.
    pub(super) range: Option<StartRange>,
    /// When it was first estimated, and the start foreseen then: at admission, how that turned
    /// out teaches the wait calibration.
    pub(super) foreseen: Option<(Time, Time)>,
    /// Fair share's points, fixed when it was first ranked (see `Config::fair_share_bonus`).
    pub(super) bonus: i32,
}

#[derive(Clone, Debug)]
pub(super) struct Running {
    pub(super) spec: RunningSpec,
    pub(super) pool: usize,
    pub(super) predicted_end: Time,
    /// Fair share has charged its use up to here.
    pub(super) charged_until: Time,
}

impl Running {
    pub(super) fn healthy_nodes(&self, nodes: &HashMap<NodeId, NodeState>) -> i32 {
        self.spec.nodes.iter().filter(|n| nodes.get(n).is_some_and(|s| s.healthy)).count() as i32
    }
}
