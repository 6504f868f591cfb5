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

/// `(start, end, nodes away)` of the `planned` spans that a window overlaps.
pub(super) fn guards<'a>(windows: &[MaintenanceWindow], planned: impl Iterator<Item = &'a super::Reservation>) -> Vec<(Time, Time, i32)> {
    planned.map(|r| (r.start, r.end, away_over(windows, r.start, r.end))).filter(|g| g.2 > 0).collect()
}

/// What the guards take beyond the `away` a span has itself, as `(at, delta)` edges to
/// subtract (negative: they add to what is reserved), sorted: over each stretch, the most any
/// guard covering it has away, less `away`.
pub(super) fn guard_edges(guards: &[(Time, Time, i32)], away: i32) -> Vec<(Time, i32)> {
    let tighter: Vec<&(Time, Time, i32)> = guards.iter().filter(|g| g.2 > away).collect();
    if tighter.is_empty() {
        return Vec::new();
    }
    let mut points: Vec<Time> = tighter.iter().flat_map(|g| [g.0, g.1]).collect();
    points.sort_unstable();
    points.dedup();
    let mut edges = Vec::new();
    for stretch in points.windows(2) {
        let (from, to) = (stretch[0], stretch[1]);
        let most = tighter.iter().filter(|g| g.0 <= from && g.1 >= to).map(|g| g.2).max().unwrap_or(0);
        if most > away {
            edges.push((from, away - most));
            edges.push((to, most - away));
        }
    }
    edges.sort_by_key(|e| e.0);
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
