//! Maintenance windows planned ahead: a node out of service over `[start, end)`.
//!
//! The pools' timelines count nodes, not names, and a window pins one name. Counting a window
//! as one more reserved node over its interval is not enough: a GPR needs the *same* nodes for
//! its whole span, so two windows on two nodes at different times can leave no node free
//! across a span that, counted instant by instant, always has one.
//!
//! So each plan's span has a capacity of its own: the nodes with no window overlapping it
//! (`healthy − away`). The invariant is that at every instant of every plan's span, all that
//! is reserved then (running GPRs and plans, wherever they run) fits that plan's capacity. A
//! new plan is checked against its own capacity and against those of the plans it overlaps
//! (their *guards*); the pass voids, last in the queue first, the holds a new window breaks.
//! At a plan's start the free nodes without a window over its span are then at least its size,
//! since everything that could hold one of them is counted against it. The counts are
//! conservative: a GPR running on a node that has a window is counted against the nodes that
//! stay in, too. The picker takes the nodes whose next window is soonest, so nodes free for
//! longer stay for the GPRs that need them.

use super::{Holding, MaintenanceWindow, NodeId, Scheduler, Time};

/// Nodes with a window overlapping `[start, end)` (each counted once).
pub(super) fn away_over(windows: &[MaintenanceWindow], start: Time, end: Time) -> i32 {
    // Sorted by node: a node's windows are neighbours.
    let mut last: Option<NodeId> = None;
    let mut count = 0;
    for w in windows.iter().filter(|w| w.overlaps(start, end)) {
        if last != Some(w.node) {
            count += 1;
            last = Some(w.node);
        }
    }
    count
}

/// The window among `windows` that overlaps `[start, end)` first, to name as a cause.
pub(super) fn first_overlapping(windows: &[MaintenanceWindow], start: Time, end: Time) -> Option<&MaintenanceWindow> {
    windows.iter().filter(|w| w.overlaps(start, end)).min_by_key(|w| (w.start, w.id))
}

/// Starts at which the set of nodes away over a span of `duration` may change: a window
/// `[a, b)` blocks the starts in `[a − duration + 1, b)`. Sorted, after `from`.
pub(super) fn cuts(windows: &[MaintenanceWindow], from: Time, duration: Time) -> Vec<Time> {
    let mut cuts: Vec<Time> =
        windows.iter().flat_map(|w| [w.start.saturating_sub(duration).saturating_add(1), w.end]).filter(|&c| c > from).collect();
    cuts.sort_unstable();
    cuts.dedup();
    cuts
}

/// A plan whose span a window overlaps: the nodes away over it bound what may be reserved
/// there (see the module docs).
#[derive(Clone, Copy, Debug)]
struct Guard {
    gpr: super::GprId,
    priority: i32,
    start: Time,
    end: Time,
    away: i32,
}

/// A pool's guards, kept as its plans change, and the most any of them has away at each
/// instant (a step function, `(at, away)` in time order, zero outside), so a search reads
/// it instead of walking the pool's plans.
#[derive(Clone, Debug, Default)]
pub(super) struct Guards {
    list: Vec<Guard>,
    line: Vec<(Time, i32)>,
}

impl Guards {
    /// A plan was placed in a pool with `windows`.
    pub(super) fn add(&mut self, windows: &[MaintenanceWindow], r: &super::Reservation) {
        if windows.is_empty() {
            return;
        }
        let away = away_over(windows, r.start, r.end);
        if away > 0 {
            self.list.push(Guard { gpr: r.gpr, priority: r.priority, start: r.start, end: r.end, away });
            self.line = max_line(self.list.iter());
        }
    }

    /// A plan left the pool.
    pub(super) fn forget(&mut self, gpr: super::GprId) {
        if let Some(at) = self.list.iter().position(|g| g.gpr == gpr) {
            self.list.swap_remove(at);
            self.line = max_line(self.list.iter());
        }
    }

    /// All of a pool's plans anew (its windows or its plans changed wholesale).
    pub(super) fn reset(&mut self, windows: &[MaintenanceWindow], planned: &super::Reservations) {
        self.list.clear();
        if !windows.is_empty() {
            for r in planned.iter() {
                let away = away_over(windows, r.start, r.end);
                if away > 0 {
                    self.list.push(Guard { gpr: r.gpr, priority: r.priority, start: r.start, end: r.end, away });
                }
            }
        }
        self.line = max_line(self.list.iter());
    }

    pub(super) fn set_priority(&mut self, gpr: super::GprId, priority: i32) {
        for g in self.list.iter_mut().filter(|g| g.gpr == gpr) {
            g.priority = priority;
        }
    }

    /// The line a GPR of `priority` must respect: all of it, or for a fresh GPR only the plans
    /// it does not go ahead of (at or above its priority).
    pub(super) fn line_for(&self, fresh: bool, priority: i32) -> std::borrow::Cow<'_, [(Time, i32)]> {
        if !fresh || self.list.iter().all(|g| g.priority >= priority) {
            std::borrow::Cow::Borrowed(&self.line)
        } else {
            std::borrow::Cow::Owned(max_line(self.list.iter().filter(|g| g.priority >= priority)))
        }
    }
}

/// The most any guard has away at each instant: a sweep over their edges with the values
/// active counted in a small ordered map.
fn max_line<'a>(guards: impl Iterator<Item = &'a Guard>) -> Vec<(Time, i32)> {
    let mut edges: Vec<(Time, i32, bool)> = guards.flat_map(|g| [(g.start, g.away, true), (g.end, g.away, false)]).collect();
    edges.sort_unstable_by_key(|e| e.0);
    let mut active: std::collections::BTreeMap<i32, usize> = std::collections::BTreeMap::new();
    let mut line: Vec<(Time, i32)> = Vec::new();
    let mut i = 0;
    while i < edges.len() {
        let at = edges[i].0;
        while i < edges.len() && edges[i].0 == at {
            let (_, away, opens) = edges[i];
            if opens {
                *active.entry(away).or_default() += 1;
            } else if let Some(count) = active.get_mut(&away) {
                *count -= 1;
                if *count == 0 {
                    active.remove(&away);
                }
            }
            i += 1;
        }
        let most = active.keys().next_back().copied().unwrap_or(0);
        if line.last().is_none_or(|l| l.1 != most) {
            line.push((at, most));
        }
    }
    line
}

/// The most `line` has away over `[from, to)`.
pub(super) fn line_max(line: &[(Time, i32)], from: Time, to: Time) -> i32 {
    let first = line.partition_point(|s| s.0 <= from).saturating_sub(1);
    line[first..].iter().take_while(|s| s.0 < to).map(|s| s.1).max().unwrap_or(0)
}

/// What the guards take over `[from, to)` beyond the `away` a span has itself, as `(at,
/// delta)` edges to subtract (negative: they add to what is reserved), in time order.
pub(super) fn guard_edges(line: &[(Time, i32)], away: i32, from: Time, to: Time) -> Vec<(Time, i32)> {
    let mut edges = Vec::new();
    let first = line.partition_point(|s| s.0 <= from).saturating_sub(1);
    for (i, &(at, most)) in line.iter().enumerate().skip(first) {
        if at >= to {
            break;
        }
        let until = line.get(i + 1).map_or(Time::MAX, |n| n.0).min(to);
        let begins = at.max(from);
        if most > away && begins < until {
            edges.push((begins, away - most));
            edges.push((until, most - away));
        }
    }
    edges
}

impl Scheduler {
    /// The maintenance windows planned from now on (those ended may be left out). Changes
    /// nothing when they are the ones the core has; otherwise the next pass re-plans around
    /// them, and a promise they move names the window.
    pub fn set_maintenance(&mut self, mut windows: Vec<MaintenanceWindow>) {
        windows.retain(|w| w.start < w.end);
        windows.sort_unstable();
        if windows == self.maintenance {
            return;
        }
        self.maintenance = windows;
        self.refresh_away();
        self.dirty = true;
    }

    /// The windows the core plans around.
    pub fn maintenance(&self) -> &[MaintenanceWindow] {
        &self.maintenance
    }

    /// Each pool's windows on the nodes it counts (a node out of the pool's capacity already
    /// is not away twice).
    pub(super) fn refresh_away(&mut self) {
        for pool in &mut self.pools {
            pool.away.clear();
        }
        for w in &self.maintenance {
            if let Some(state) = self.nodes.get(&w.node).filter(|s| s.healthy) {
                self.pools[state.pool].away.push(w.clone());
            }
        }
        for pool in &mut self.pools {
            pool.guards.reset(&pool.away, &pool.planned);
        }
    }

    /// Free nodes of pool `index` that no window takes during `[now, end)`, `wanted` of them:
    /// those whose next window comes soonest first, so nodes free for longer stay for the GPRs
    /// that need them. `None` when too few are free.
    pub(super) fn pick_free(&self, index: usize, wanted: usize, now: Time, end: Time) -> Option<Vec<NodeId>> {
        let pool = &self.pools[index];
        let free = pool.nodes.iter().copied().filter(|n| self.nodes.get(n).is_some_and(|s| s.healthy && s.holder.is_none()));
        let picked: Vec<NodeId> = if pool.away.is_empty() {
            free.take(wanted).collect()
        } else {
            let next_window = |n: NodeId| pool.away.iter().filter(|w| w.node == n && w.end > now).map(|w| w.start).min();
            let mut free: Vec<(Time, NodeId)> = free
                .filter(|&n| !pool.away.iter().any(|w| w.node == n && w.overlaps(now, end)))
                .map(|n| (next_window(n).unwrap_or(Time::MAX), n))
                .collect();
            free.sort_by_key(|f| f.0);
            free.into_iter().take(wanted).map(|f| f.1).collect()
        };
        (picked.len() == wanted).then_some(picked)
    }

    /// How much later a provisioned GPR's nodes may be back before a window on one of them
    /// begins: the most its window may grow, and that window; `None` when no window limits it.
    pub(super) fn maintenance_room(&self, id: super::GprId, now: Time) -> Option<(Time, MaintenanceWindow)> {
        let running = self.running.get(&id).filter(|r| r.spec.holding == Holding::Provisioned)?;
        let back = running.spec.nodes_back_by(self.config.release_allowance);
        let window = self.maintenance.iter().filter(|w| w.end > now && running.spec.nodes.contains(&w.node)).min_by_key(|w| (w.start, w.id))?;
        Some(((window.start - back).max(0), window.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(gpr: i64, start: Time, end: Time, away: i32) -> Guard {
        Guard { gpr, priority: 100, start, end, away }
    }

    #[test]
    fn the_line_is_the_most_any_guard_has_away_and_its_edges_the_excess() {
        let guards = [guard(1, 0, 100, 1), guard(2, 50, 80, 2), guard(3, 70, 120, 1), guard(4, 200, 210, 3)];
        let line = max_line(guards.iter());
        assert_eq!(line, vec![(0, 1), (50, 2), (80, 1), (120, 0), (200, 3), (210, 0)]);
        let brute = |t: Time| guards.iter().filter(|g| g.start <= t && t < g.end).map(|g| g.away).max().unwrap_or(0);
        for (from, to) in [(0, 300), (60, 75), (85, 205), (-10, 5), (130, 190)] {
            assert_eq!(line_max(&line, from, to), (from..to).map(brute).max().unwrap_or(0), "[{from}, {to})");
            for away in 0..3 {
                // Subtracting the edges from zero gives the excess over `away` at each instant.
                let edges = guard_edges(&line, away, from, to);
                for t in from..to {
                    let excess: i32 = -edges.iter().filter(|e| e.0 <= t).map(|e| e.1).sum::<i32>();
                    assert_eq!(excess, (brute(t) - away).max(0), "t {t} away {away}");
                }
            }
        }
        // A fresh GPR of a higher priority than a guard does not see it.
        let mut kept = Guards::default();
        let windows = [MaintenanceWindow { node: 1, start: 10, end: 20, id: 1 }];
        let r = |gpr, priority, start, end| crate::state::Reservation { gpr, priority, start, end, nodes: 1 };
        kept.add(&windows, &r(1, 100, 0, 15));
        kept.add(&windows, &r(2, 50, 15, 30));
        kept.add(&windows, &r(3, 100, 30, 40));
        assert_eq!(kept.line_for(false, 100).as_ref(), &[(0, 1), (30, 0)]);
        assert_eq!(kept.line_for(true, 100).as_ref(), &[(0, 1), (15, 0)]);
        kept.forget(1);
        assert_eq!(kept.line_for(false, 100).as_ref(), &[(15, 1), (30, 0)]);
    }
}
