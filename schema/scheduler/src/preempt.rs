//! Preemption (docs/design.md §4.7): when a GPR cannot start now, the smallest set of running
//! GPRs whose eviction would let it, and their eviction.

use super::maintenance;
use super::{Decision, GprId, Request, Reservation, Running, Scheduler, Time, Timeline};

impl Scheduler {
    /// The smallest set of running GPRs whose eviction lets `request` start now (docs/design.md §4.7):
    /// strictly lower priority, preemptible, in slices that allow eviction; lowest priority
    /// first, then most recently started; then a reverse pass drops victims not needed.
    /// `rank` is the priority the request is queued at (aged), which lower plans give way to.
    pub(super) fn find_victims(&self, request: &Request, rank: i32, fresh: bool, pools: &[usize], now: Time) -> Option<(usize, Vec<GprId>)> {
        if request.earliest_start.is_some_and(|t| t > now) {
            return None;
        }
        let end = now.saturating_add(self.span(request));
        let busy = self.slices.get(&request.slice).map_or(&[][..], |s| &s.busy[..]);
        let slice_blocked = busy.iter().any(|b| b.gpr != request.id && b.start < end && b.end > now && self.respects(fresh, rank, b.gpr));
        if slice_blocked {
            return None;
        }
        for &index in pools {
            let pool = &self.pools[index];
            let nodes = request.nodes as i32;
            if nodes > pool.healthy {
                continue;
            }
            let mut candidates: Vec<&Running> = self
                .running
                .values()
                .filter(|r| r.pool == index && r.spec.request.priority < request.priority && r.spec.request.preemptible)
                .filter(|r| self.slices.get(&r.spec.request.slice).is_some_and(|s| s.evictable))
                .collect();
            if candidates.is_empty() {
                continue;
            }
            candidates.sort_by_key(|r| (r.spec.request.priority, std::cmp::Reverse(r.spec.started_at), r.spec.request.id));
            // A fresh GPR goes ahead of lower-priority plans: they do not count against it.
            let lower: Vec<(Time, Time, i32)> = if fresh {
                let firm_until = self.firm_until(index, rank, now);
                let mine = |r: &&Reservation| r.priority < rank && r.start < end && r.end > now && r.start >= firm_until;
                pool.planned.iter().filter(mine).map(|r| (r.start, r.end, -r.nodes)).collect()
            } else {
                Vec::new()
            };
            // Nodes away over its span, or over the span of a plan it must leave room for.
            let guarded = maintenance::line_max(&pool.guards.line_for(fresh, rank), now, end);
            let away = maintenance::away_over(&pool.away, now, end).max(guarded);
            let fits = |victims: &[&Running]| {
                let back = |v: &Running| v.spec.nodes_back_by(self.config.release_allowance).max(now + 1);
                let freed = victims.iter().map(|v| (now, back(v), -v.healthy_nodes(&self.nodes)));
                let capacity = pool.healthy - away;
                Timeline::with(&pool.plan, lower.iter().copied().chain(freed)).max_used(now, end) + nodes <= capacity
            };
            let mut chosen: Vec<&Running> = Vec::new();
            for candidate in candidates {
                chosen.push(candidate);
                if fits(&chosen) {
                    break;
                }
            }
            if !fits(&chosen) {
                continue;
            }
            for i in (0..chosen.len()).rev() {
                let mut without = chosen.clone();
                without.remove(i);
                if fits(&without) {
                    chosen = without;
                }
            }
            return Some((index, chosen.iter().map(|r| r.spec.request.id).collect()));
        }
        None
    }

    pub(super) fn preempt(&mut self, victim: GprId, by: GprId, now: Time, decisions: &mut Vec<Decision>) {
        let Some(spec) = self.finish(victim, now) else { return };
        let requeued = spec.request.requeue;
        if requeued {
            // It asks for its whole window again, at its own priority.
            self.add_pending(spec.request, None);
            self.displaced.push(victim);
        }
        decisions.push(Decision::Preempt { victim, by, requeued });
    }
}
