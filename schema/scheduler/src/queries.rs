//! What the core answers without changing: positions, statuses, the queue order, what is due.

use super::*;
use rustc_hash::FxHashMap as HashMap;

impl Scheduler {
    /// Whether a full pass would see something the last one did not.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Whether a GPR waits in the queue.
    pub fn is_pending(&self, id: GprId) -> bool {
        self.pending.contains_key(&id)
    }

    /// What a waiting GPR asks for, as the core plans it.
    pub fn pending_request(&self, id: GprId) -> Option<&Request> {
        self.pending.get(&id).map(|p| &p.request)
    }

    /// Where a GPR that holds nodes is in its lifecycle; `None` when it holds none.
    pub fn holding(&self, id: GprId) -> Option<Holding> {
        self.running.get(&id).map(|r| r.spec.holding)
    }

    /// A GPR that holds nodes, as the core plans around it.
    pub fn running(&self, id: GprId) -> Option<&RunningSpec> {
        self.running.get(&id).map(|r| &r.spec)
    }

    /// Whether a node counts as capacity, and the GPR holding it; `None` for an unknown node.
    pub fn node(&self, id: NodeId) -> Option<(bool, Option<GprId>)> {
        self.nodes.get(&id).map(|n| (n.healthy, n.holder))
    }

    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    pub fn running_len(&self) -> usize {
        self.running.len()
    }

    pub fn status(&self, id: GprId) -> Option<PendingStatus> {
        let p = self.pending.get(&id)?;
        Some(PendingStatus { position: self.start_position(p), ..self.status_unpositioned(id)? })
    }

    /// [`Scheduler::status`] without the position (0), in O(1): for callers that take every
    /// position at once from [`Scheduler::positions`].
    pub fn status_unpositioned(&self, id: GprId) -> Option<PendingStatus> {
        let p = self.pending.get(&id)?;
        Some(PendingStatus {
            position: 0,
            start_no_later_than: p.plan.map(|plan| plan.start),
            estimated_start: p.range.map(|r| r.p50).or(p.expected).or(p.plan.map(|plan| plan.start)),
            start_range: p.range,
            fair_share_bonus: p.bonus,
            foreseen: p.foreseen,
            pool: p.plan.map(|plan| self.pools[plan.pool].key.clone()),
        })
    }

    /// Where `p` stands in start order (see [`PendingStatus::position`]), O(pending).
    fn start_position(&self, p: &Pending) -> usize {
        let mine = (p.plan.map_or(Time::MAX, |plan| plan.start), p.key);
        let ahead = self
            .pending
            .values()
            .filter(|o| o.request.id != p.request.id)
            .filter(|o| match o.plan {
                Some(plan) => p.pools.contains(&plan.pool) && (plan.start, o.key) < mine,
                None => p.plan.is_none() && o.key < p.key && o.pools.iter().any(|i| p.pools.contains(i)),
            })
            .count();
        ahead + 1
    }

    /// Every pending GPR's position in start order (see [`PendingStatus::position`]), for a
    /// whole queue at once: O(n log n) where asking [`Scheduler::status`] for each is O(n²).
    pub fn positions(&self) -> HashMap<GprId, usize> {
        let mut by_pool: Vec<Vec<(Time, QueueKey)>> = vec![Vec::new(); self.pools.len()];
        let mut unplanned: Vec<&Pending> = Vec::new();
        for p in self.pending.values() {
            match p.plan {
                Some(plan) => by_pool[plan.pool].push((plan.start, p.key)),
                None => unplanned.push(p),
            }
        }
        for list in &mut by_pool {
            list.sort_unstable();
        }
        let mut positions = HashMap::default();
        for p in self.pending.values() {
            let position = match p.plan {
                Some(plan) => {
                    let mine = (plan.start, p.key);
                    1 + p.pools.iter().map(|&i| by_pool[i].partition_point(|e| *e < mine)).sum::<usize>()
                }
                // Rare (it fits nowhere now): counted the slow way.
                None => self.start_position(p),
            };
            positions.insert(p.request.id, position);
        }
        positions
    }

    /// 1-based rank in the queue's order (priority, fair share, age), O(log n).
    pub fn position_of(&self, id: GprId) -> Option<usize> {
        self.pending.get(&id).map(|p| self.queue.rank(&p.key) + 1)
    }

    /// The GPR at the head of the queue.
    pub fn peek(&self) -> Option<GprId> {
        self.queue.peek().map(|k| k.id)
    }

    /// Pending GPR ids in queue order.
    pub fn queue_order(&self) -> Vec<GprId> {
        self.queue.in_order().into_iter().map(|k| k.id).collect()
    }

    /// The earliest planned start among pending GPRs after `now`: when a pass is due at the
    /// latest if nothing else happens.
    pub fn next_planned_start(&self, now: Time) -> Option<Time> {
        self.pending.values().filter_map(|p| p.plan.map(|plan| plan.start)).filter(|t| *t > now).min()
    }

    /// Running GPRs whose window has ended by `now` (not those already releasing).
    pub fn expired(&self, now: Time) -> Vec<GprId> {
        self.running
            .values()
            .filter(|r| !matches!(r.spec.holding, Holding::Releasing { .. }) && r.spec.ends_at <= now)
            .map(|r| r.spec.request.id)
            .collect()
    }

    /// Running GPRs whose GPUs have all been idle for their idle timeout. `last_busy` says
    /// when a GPR's GPUs last did work (`None`: never since it started).
    pub fn idle(&self, now: Time, last_busy: impl Fn(GprId) -> Option<Time>) -> Vec<GprId> {
        self.running
            .values()
            .filter(|r| !matches!(r.spec.holding, Holding::Releasing { .. }))
            .filter_map(|r| {
                let timeout = r.spec.request.idle_timeout?;
                let since = last_busy(r.spec.request.id).unwrap_or(r.spec.started_at).max(r.spec.started_at);
                (now - since >= timeout).then_some(r.spec.request.id)
            })
            .collect()
    }
}
