//! What-if: the queue as it would be after changes an admin is weighing (nodes added, removed or
//! cordoned, a maintenance window, a GPR raised or resized, a GPR not yet asked for), answered
//! on a copy of the core: which waiting GPRs' promises and expected starts move, and by how
//! much. Nothing is changed.

use super::*;

/// One change to weigh.
#[derive(Clone, Debug, PartialEq)]
pub enum WhatIfChange {
    /// `count` more nodes in pool `pool` (of `gpus` GPUs of `gpu_memory_mib` each).
    AddNodes { pool: PoolKey, count: u32, gpus: u32, gpu_memory_mib: i64 },
    /// `count` fewer nodes in pool `pool`: free ones first, then those whose holders end soonest
    /// (out of capacity; their holders keep them to the end of their windows).
    RemoveNodes { pool: PoolKey, count: u32 },
    /// Node `node` out of capacity (its holder, if any, keeps it to the end of its window).
    Cordon { node: NodeId },
    /// A maintenance window on `window.node`.
    Window { window: MaintenanceWindow },
    /// Waiting GPR `gpr` at `priority` (an admin's reorder).
    Priority { gpr: GprId, priority: i32 },
    /// Waiting GPR `gpr` asking for `nodes` nodes for `duration` seconds.
    Resize { gpr: GprId, nodes: u32, duration: Time },
    /// A GPR not yet asked for (its id must be new).
    Submit { request: Request },
}

/// How one waiting GPR's start would move. `None`: no plan (it fits nowhere).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WhatIfMove {
    pub gpr: GprId,
    pub promise_before: Option<Time>,
    pub promise_after: Option<Time>,
    pub expected_before: Option<Time>,
    pub expected_after: Option<Time>,
}

impl WhatIfMove {
    /// How much later (positive) or earlier the promise moves; `None` when it appears or goes.
    pub fn promise_moved(&self) -> Option<Time> {
        Some(self.promise_after? - self.promise_before?)
    }
}

/// Ids of nodes the what-if adds: far from any real node's.
const ADDED_NODE_IDS: NodeId = NodeId::MAX / 2;

impl Scheduler {
    /// The waiting GPRs whose promise or expected start `changes` would move, soonest first
    /// (the submitted GPR of a [`WhatIfChange::Submit`] too, as moving from nothing). Planned
    /// on a copy at `now`; `self` stays as it is.
    pub fn what_if(&self, changes: &[WhatIfChange], now: Time) -> Vec<WhatIfMove> {
        let mut before = self.clone();
        before.plan(now);
        let mut after = before.clone();
        let mut added = ADDED_NODE_IDS;
        for change in changes {
            after.weigh(change, now, &mut added);
        }
        after.plan(now);
        let starts = |core: &Scheduler, id: GprId| core.status_unpositioned(id).map_or((None, None), |s| (s.start_no_later_than, s.estimated_start));
        let admitted_at = |core: &Scheduler, id: GprId| core.running.get(&id).map(|r| r.spec.started_at);
        let mut ids: Vec<GprId> = before.pending.keys().chain(after.pending.keys()).copied().collect();
        ids.sort_unstable();
        ids.dedup();
        let mut moves: Vec<WhatIfMove> = ids
            .into_iter()
            .filter_map(|id| {
                let (promise_before, expected_before) = match admitted_at(&before, id) {
                    Some(t) => (Some(t), Some(t)),
                    None => starts(&before, id),
                };
                let (promise_after, expected_after) = match admitted_at(&after, id) {
                    Some(t) => (Some(t), Some(t)),
                    None => starts(&after, id),
                };
                let moved = WhatIfMove { gpr: id, promise_before, promise_after, expected_before, expected_after };
                (promise_before != promise_after || expected_before != expected_after).then_some(moved)
            })
            .collect();
        moves.sort_by_key(|m| (m.promise_after.or(m.promise_before).unwrap_or(Time::MAX), m.gpr));
        moves
    }

    fn weigh(&mut self, change: &WhatIfChange, now: Time, added: &mut NodeId) {
        match change {
            WhatIfChange::AddNodes { pool, count, gpus, gpu_memory_mib } => {
                for _ in 0..*count {
                    *added += 1;
                    self.upsert_node(NodeSpec {
                        id: *added,
                        pool: pool.clone(),
                        gpus: *gpus,
                        gpu_memory_mib: *gpu_memory_mib,
                        healthy: true,
                        rdma: false,
                    });
                }
            }
            WhatIfChange::RemoveNodes { pool, count } => {
                let Some(&index) = self.pool_index.get(pool) else { return };
                let back = |id: &NodeId| {
                    let holder = self.nodes.get(id).and_then(|s| s.holder);
                    holder.and_then(|h| self.running.get(&h)).map_or(Time::MIN, |r| r.spec.nodes_back_by(self.config.release_allowance))
                };
                let mut nodes: Vec<NodeId> =
                    self.pools[index].nodes.iter().copied().filter(|n| self.nodes.get(n).is_some_and(|s| s.healthy)).collect();
                nodes.sort_by_key(|n| (back(n), *n));
                for node in nodes.into_iter().take(*count as usize) {
                    self.mark_node(node, false, now);
                }
            }
            WhatIfChange::Cordon { node } => self.mark_node(*node, false, now),
            WhatIfChange::Window { window } => {
                let mut windows = self.maintenance.clone();
                windows.push(window.clone());
                self.set_maintenance(windows);
            }
            WhatIfChange::Priority { gpr, priority } => {
                self.set_priority(*gpr, *priority);
            }
            WhatIfChange::Resize { gpr, nodes, duration } => {
                let Some(p) = self.pending.get(gpr) else { return };
                let request = Request { nodes: *nodes, duration: *duration, ..p.request.clone() };
                let (promised, bonus) = (p.promised, p.bonus);
                self.remove_pending(*gpr);
                self.restore_pending(request, None, promised, Some(bonus));
            }
            WhatIfChange::Submit { request } => {
                if !self.pending.contains_key(&request.id) && !self.running.contains_key(&request.id) {
                    self.add_pending(request.clone(), None);
                }
            }
        }
    }
}
