//! Planning: conservative backfill over the queue, with holds that keep promises.
//!
//! A pass walks the queue in order and gives each pending GPR the earliest window, in any
//! pool it may use, that fits beside what is running, what was placed ahead of it, and the
//! holds (last plans) of the GPRs behind it. Respecting the holds behind is what makes a
//! promise stick: a GPR re-placed in a pass can always fall back to its own hold, because every
//! other reservation it must avoid was itself placed around that hold. Fair-share reordering
//! and equal-priority arrivals therefore never push a promise later.
//!
//! The exception is a *fresh* GPR (new, re-prioritised or requeued): it ignores the holds of
//! lower-priority GPRs — they were made before it arrived — and voids the ones its window
//! overlaps. That is the one way a promise breaks besides capacity loss, and docs/design.md §4.5 allows
//! it ("unless a higher-priority GPR arrives later").

use super::maintenance;
use super::{
    Busy, Cause, Decision, GprId, Holding, MaintenanceWindow, Plan, PromiseMove, QueueKey, Request, Reservation, Reservations, Running, RunningSpec,
    Scheduler, Time, Timeline, Unfit,
};
use std::collections::BTreeSet;

/// A window the expected pass gives a GPR that has overrun its predicted end: it is assumed
/// to finish within this much more (or by its reserved end, if sooner).
const OVERRUN_ALLOWANCE: Time = 600;
/// A GPR admitted this long after its promise kept it: the gateway's loop passes every second,
/// not at the planned instant (the replay passes at the instant itself).
const ADMISSION_TOLERANCE: Time = 5;

/// The windows a slice is busy in that a GPR must keep clear of (one GPR at a time per
/// slice): sorted by start, overlapping ones merged. Built once per GPR, used for every pool.
fn slice_windows(busy: &[Busy], respect: impl Fn(&Busy) -> bool) -> Vec<(Time, Time)> {
    let mut windows: Vec<(Time, Time)> = busy.iter().filter(|b| b.start < b.end && respect(b)).map(|b| (b.start, b.end)).collect();
    windows.sort_unstable();
    let mut merged: Vec<(Time, Time)> = Vec::with_capacity(windows.len());
    for (start, end) in windows {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// A pool's timeline as one GPR sees it: less the windows of lower-priority GPRs it goes
/// ahead of, which are subtracted on the fly while searching, and with the pool's maintenance
/// windows (see [`maintenance`]).
pub(super) struct View<'a> {
    timeline: &'a Timeline,
    /// `(at, delta)` sorted by time, to subtract; empty when the GPR respects every window.
    edges: Vec<(Time, i32)>,
    away: &'a [MaintenanceWindow],
    /// The most nodes away over the span of any plan it must leave room for, by instant.
    guards: std::borrow::Cow<'a, [(Time, i32)]>,
}

impl<'a> View<'a> {
    pub(super) fn whole(timeline: &'a Timeline) -> Self {
        View { timeline, edges: Vec::new(), away: &[], guards: std::borrow::Cow::Borrowed(&[]) }
    }

    /// `timeline` less the `reservations` below `priority` (those that could matter to a
    /// search over `[from, until)`).
    /// Plans starting before `firm_until` stay (firm promises).
    pub(super) fn without_lower(
        timeline: &'a Timeline,
        reservations: &Reservations,
        priority: i32,
        from: Time,
        until: Time,
        firm_until: Time,
    ) -> Self {
        View { edges: reservations.edges_below(priority, from, until, firm_until), ..View::whole(timeline) }
    }

    /// With the pool's maintenance windows and the guards of the plans it must leave room for
    /// (see [`maintenance`]).
    pub(super) fn around(mut self, away: &'a [MaintenanceWindow], guards: std::borrow::Cow<'a, [(Time, i32)]>) -> Self {
        if !away.is_empty() {
            self.away = away;
            self.guards = guards;
        }
        self
    }

    /// The earliest start in `[from, limit]` where `n` nodes fit for `duration`: with
    /// maintenance windows, searched piecewise between the starts where the nodes away change.
    pub(super) fn earliest_fit(&self, from: Time, duration: Time, n: i32, capacity: i32, limit: Time) -> Option<Time> {
        if self.away.is_empty() {
            return self.counted_fit(&self.edges, from, duration, n, capacity, limit);
        }
        if self.guards.is_empty() {
            // Windows only take nodes away, so the fit without them is the earliest there can
            // be; where no window touches its span it is the answer (most estimates: the
            // piecewise search below cost a 10k-GPR pass with 100 windows 40 %).
            let unbounded = self.counted_fit(&self.edges, from, duration, n, capacity, limit)?;
            if maintenance::away_over(self.away, unbounded, unbounded.saturating_add(duration)) == 0 {
                return Some(unbounded);
            }
        }
        let mut start = from;
        for cut in maintenance::cuts(self.away, from, duration).into_iter().map(Some).chain([None]) {
            if start > limit {
                return None;
            }
            let last = cut.map_or(limit, |c| (c - 1).min(limit));
            let away = maintenance::away_over(self.away, start, start.saturating_add(duration));
            // The plans whose spans have fewer nodes left than this one's are kept to theirs.
            let mut edges = maintenance::guard_edges(&self.guards, away, start, last.saturating_add(duration));
            let found = if edges.is_empty() {
                self.counted_fit(&self.edges, start, duration, n, capacity - away, last)
            } else {
                edges.extend_from_slice(&self.edges);
                edges.sort_by_key(|e| e.0);
                self.counted_fit(&edges, start, duration, n, capacity - away, last)
            };
            if found.is_some() {
                return found;
            }
            start = cut?;
        }
        None
    }

    fn counted_fit(&self, edges: &[(Time, i32)], from: Time, duration: Time, n: i32, capacity: i32, limit: Time) -> Option<Time> {
        if edges.is_empty() {
            self.timeline.earliest_fit(from, duration, n, capacity, limit)
        } else {
            self.timeline.earliest_fit_without(edges, from, duration, n, capacity, limit)
        }
    }
}

/// Earliest start `>= from` (and `<= limit`) in `view` that also keeps clear of the
/// slice's `windows` (from [`slice_windows`]). The pool is only scanned inside the slice's
/// free gaps: most slices are busy now and have more GPRs queued, so this skips most of a
/// crowded pool's timeline.
pub(super) fn fit(view: &View<'_>, capacity: i32, nodes: i32, from: Time, duration: Time, limit: Time, windows: &[(Time, Time)]) -> Option<Time> {
    let mut start = from;
    let mut next = windows.partition_point(|w| w.1 <= start);
    loop {
        if start > limit {
            return None;
        }
        if let Some(&(busy_from, busy_until)) = windows.get(next)
            && busy_from < start.saturating_add(duration)
        {
            // The slice is busy inside `[start, start + duration)`: try after that window.
            start = start.max(busy_until);
            next += 1;
            continue;
        }
        // The slice stays free until its next window: search the pool up to there.
        let latest = windows.get(next).map_or(limit, |w| (w.0 - duration).min(limit));
        if let Some(found) = view.earliest_fit(start, duration, nodes, capacity, latest) {
            return Some(found);
        }
        match windows.get(next) {
            Some(&(_, busy_until)) if latest < limit => {
                start = busy_until;
                next += 1;
            }
            _ => return None,
        }
    }
}

impl Scheduler {
    /// A full pass at `now`: re-plans the queue, admits what can start now (preempting where
    /// policy allows), and refreshes every estimate. Returns what the gateway must do.
    pub fn plan(&mut self, now: Time) -> Vec<Decision> {
        self.accrue(now);
        self.age(now);
        // What aging re-ranked is planned in this pass: nothing is left for the next one.
        self.dirty = false;
        let order = self.queue.in_order();
        self.rebuild(now, &order);
        let mut decisions = Vec::new();
        // Walked in queue order; preemption victims requeued during the pass join it at their
        // own rank (after the GPR that preempted them, ahead of lower priorities).
        let mut todo: BTreeSet<QueueKey> = order.into_iter().collect();
        let mut index = 0;
        while let Some(key) = todo.pop_first() {
            let keeps_hold = index >= self.config.max_plan_depth && self.pending.get(&key.id).is_some_and(|p| p.plan.is_some());
            index += 1;
            if !keeps_hold {
                self.place(key.id, now, &mut decisions);
            }
            for g in std::mem::take(&mut self.displaced) {
                if let Some(p) = self.pending.get(&g).filter(|p| p.plan.is_none())
                    && p.key > key
                {
                    todo.insert(p.key);
                }
            }
        }
        for pool in &mut self.pools {
            pool.plan.tidy();
        }
        self.estimate_all(now);
        decisions
    }

    /// Queues a new GPR and plans it at once, without a full pass: its promise and estimate
    /// are known when this returns. Lower-priority plans it displaces wait for the next pass.
    pub fn submit(&mut self, request: Request, now: Time) -> Result<Vec<Decision>, Unfit> {
        self.check_fit(&request)?;
        // Plans from before a change (a restore, a failure, a re-prioritised GPR) are not a
        // sound base for a new promise: bring them up to date first.
        let mut decisions = if self.dirty { self.plan(now) } else { Vec::new() };
        let id = request.id;
        self.add_pending(request, None);
        self.dirty = false;
        self.place(id, now, &mut decisions);
        for moved in self.place_displaced(now, &mut decisions) {
            self.forget_expected(moved);
            self.estimate_one(moved, now, false);
        }
        if self.pending.contains_key(&id) {
            self.estimate_one(id, now, true);
        }
        // Every pending GPR has a sound plan again; what preemption freed went to the GPR.
        self.dirty = false;
        Ok(decisions)
    }

    /// Places GPRs left without a plan (displaced by a fresh GPR, or requeued after
    /// preemption), in queue order, until none is left; returns the ones placed.
    fn place_displaced(&mut self, now: Time, decisions: &mut Vec<Decision>) -> Vec<GprId> {
        let mut placed = Vec::new();
        while !self.displaced.is_empty() {
            let mut keys: Vec<_> =
                self.displaced.drain(..).filter_map(|g| self.pending.get(&g).filter(|p| p.plan.is_none()).map(|p| p.key)).collect();
            keys.sort_unstable();
            keys.dedup();
            for key in keys {
                self.place(key.id, now, decisions);
                placed.push(key.id);
            }
        }
        placed
    }

    /// Timelines from what runs now plus the holds that still fit; holds that no longer fit
    /// (a node failed, a window overran) are voided.
    fn rebuild(&mut self, now: Time, order: &[super::QueueKey]) {
        for slice in self.slices.values_mut() {
            slice.busy.clear();
            slice.expected_busy.clear();
        }
        let mut running_by_pool: Vec<Vec<(Time, Time, i32)>> = vec![Vec::new(); self.pools.len()];
        let allowance = self.config.release_allowance;
        for r in self.running.values() {
            let end = r.spec.nodes_back_by(allowance).max(now + 1);
            running_by_pool[r.pool].push((now, end, r.healthy_nodes(&self.nodes)));
            if let Some(slice) = self.slices.get_mut(&r.spec.request.slice) {
                slice.busy.push(Busy { gpr: r.spec.request.id, start: now, end });
            }
        }
        let mut holds_by_pool: Vec<Vec<Reservation>> = vec![Vec::new(); self.pools.len()];
        for key in order {
            let span = self.pending.get(&key.id).map_or(0, |p| self.span(&p.request));
            let Some(p) = self.pending.get_mut(&key.id) else { continue };
            p.expected = None;
            p.expected_hint = p.expected_window.take().map(|w| w.pool).or(p.expected_hint);
            if let Some(plan) = &mut p.plan {
                if plan.start < now {
                    // Its start passed without an admission (see `settle` for what counts).
                    *plan = Plan { pool: plan.pool, start: now, end: now.saturating_add(span) };
                }
                let nodes = p.request.nodes as i32;
                holds_by_pool[plan.pool].push(Reservation { gpr: key.id, priority: key.priority, start: plan.start, end: plan.end, nodes });
            }
        }
        let rank: super::HashMap<GprId, usize> = order.iter().enumerate().map(|(i, k)| (k.id, i)).collect();
        let mut lost: Vec<(GprId, Cause)> = Vec::new();
        for (index, pool) in self.pools.iter_mut().enumerate() {
            let running = Timeline::with(&Timeline::default(), running_by_pool[index].iter().copied());
            let mut holds = std::mem::take(&mut holds_by_pool[index]);
            pool.plan = Timeline::with(&running, holds.iter().map(|h| (h.start, h.end, h.nodes)));
            let capacity = pool.healthy.max(0);
            if pool.plan.peak_from(now) > capacity || !pool.away.is_empty() {
                // Capacity was lost under these holds (or a node is away over some): only the
                // ones that need it are voided, the last in the queue first, until what is
                // left fits.
                holds.sort_by_key(|h| std::cmp::Reverse(rank.get(&h.gpr).copied().unwrap_or(usize::MAX)));
                holds.retain(|h| {
                    if pool.plan.max_used(h.start, h.end) <= capacity - maintenance::away_over(&pool.away, h.start, h.end) {
                        return true;
                    }
                    pool.plan.add(h.start, h.end, -h.nodes);
                    let cause = match maintenance::first_overlapping(&pool.away, h.start, h.end) {
                        Some(window) => Cause::Maintenance { window: window.clone() },
                        None => Cause::CapacityLost { pool: pool.key.clone() },
                    };
                    lost.push((h.gpr, cause));
                    false
                });
            }
            pool.planned.replace(holds);
            pool.guards.reset(&pool.away, &pool.planned);
        }
        for (g, cause) in lost {
            if let Some(p) = self.pending.get_mut(&g) {
                p.plan = None;
                p.voided.get_or_insert(cause);
            }
        }
        // One GPR at a time per slice: a hold overlapping one ahead of it is voided, for the
        // cause that moved the one ahead.
        for key in order {
            let Some(p) = self.pending.get(&key.id) else { continue };
            let Some(plan) = p.plan else { continue };
            let Some(slice) = self.slices.get_mut(&p.request.slice) else { continue };
            let blocker = slice.busy.iter().find(|b| b.start < plan.end && b.end > plan.start).map(|b| b.gpr);
            if let Some(blocker) = blocker {
                let cause = self.pending.get(&blocker).and_then(|b| b.voided.clone()).unwrap_or(Cause::Overdue);
                let nodes = p.request.nodes as i32;
                self.pools[plan.pool].plan.add(plan.start, plan.end, -nodes);
                self.pools[plan.pool].planned.forget(key.id);
                self.pools[plan.pool].guards.forget(key.id);
                if let Some(p) = self.pending.get_mut(&key.id) {
                    p.plan = None;
                    p.voided.get_or_insert(cause);
                }
            } else {
                slice.busy.push(Busy { gpr: key.id, start: plan.start, end: plan.end });
            }
        }
        for pool in &mut self.pools {
            pool.expected = Timeline::default();
            pool.expected_planned.replace(Vec::new());
        }
        for r in self.running.values_mut() {
            let back = r.spec.nodes_back_by(allowance);
            // Due later: its predicted end. Overrun: a while more, never past its nodes' return.
            let end = if r.predicted_end > now { r.predicted_end } else { now.saturating_add(OVERRUN_ALLOWANCE.min(back - now).max(1)) };
            let nodes = r.healthy_nodes(&self.nodes);
            self.pools[r.pool].expected.add(now, end, nodes);
            if let Some(slice) = self.slices.get_mut(&r.spec.request.slice) {
                slice.expected_busy.push(Busy { gpr: r.spec.request.id, start: now, end });
            }
        }
    }

    /// Removes a pending GPR's plan from the timelines (to re-place it, or because a fresh
    /// higher-priority GPR took its room).
    fn unplan(&mut self, id: GprId) {
        let Some(p) = self.pending.get_mut(&id) else { return };
        let Some(plan) = p.plan.take() else { return };
        let nodes = p.request.nodes as i32;
        let slice = p.request.slice;
        let pool = &mut self.pools[plan.pool];
        // Often put back where it was: the breakpoints stay for that, `plan` tidies up.
        pool.plan.add_keeping_breakpoints(plan.start, plan.end, -nodes);
        pool.planned.forget(id);
        pool.guards.forget(id);
        if let Some(slice) = self.slices.get_mut(&slice) {
            slice.busy.retain(|b| b.gpr != id);
        }
    }

    fn put_plan(&mut self, id: GprId, plan: Plan) {
        let Some(p) = self.pending.get_mut(&id) else { return };
        p.plan = Some(plan);
        let (nodes, slice, priority) = (p.request.nodes as i32, p.request.slice, p.key.priority);
        let pool = &mut self.pools[plan.pool];
        pool.plan.add(plan.start, plan.end, nodes);
        let reservation = Reservation { gpr: id, priority, start: plan.start, end: plan.end, nodes };
        pool.guards.add(&pool.away, &reservation);
        pool.planned.push(reservation);
        if let Some(slice) = self.slices.get_mut(&slice) {
            slice.busy.push(Busy { gpr: id, start: plan.start, end: plan.end });
        }
    }

    /// The slice windows `request` must keep clear of when planning.
    pub(super) fn plan_windows(&self, request: &Request, fresh: bool) -> Vec<(Time, Time)> {
        let busy = self.slices.get(&request.slice).map_or(&[][..], |s| &s.busy[..]);
        slice_windows(busy, |b| b.gpr != request.id && self.respects(fresh, request.priority, b.gpr))
    }

    /// The same on expected windows, for estimates.
    pub(super) fn expected_windows(&self, request: &Request, rank: i32, newcomer: bool) -> Vec<(Time, Time)> {
        let busy = self.slices.get(&request.slice).map_or(&[][..], |s| &s.expected_busy[..]);
        slice_windows(busy, |b| b.gpr != request.id && self.respects(newcomer, rank, b.gpr))
    }

    /// Whether a GPR planning with `priority` (fresh or not) must leave `other`'s plan alone.
    pub(super) fn respects(&self, fresh: bool, priority: i32, other: GprId) -> bool {
        !fresh || self.pending.get(&other).is_none_or(|o| o.key.priority >= priority)
    }

    /// The earliest window for `request` in pool `index` given the current timelines.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn earliest_in_pool(
        &self,
        request: &Request,
        fresh: bool,
        index: usize,
        from: Time,
        limit: Time,
        windows: &[(Time, Time)],
        now: Time,
    ) -> Option<Time> {
        let pool = &self.pools[index];
        let nodes = request.nodes as i32;
        if nodes > pool.healthy {
            return None;
        }
        let span = self.span(request);
        let view = self.plan_view(index, request.priority, fresh, from, limit.saturating_add(span), now);
        fit(&view, pool.healthy, nodes, from, span, limit, windows)
    }

    /// Plans one GPR (see the module docs), admitting or preempting when it can start now.
    fn place(&mut self, id: GprId, now: Time, decisions: &mut Vec<Decision>) {
        let Some(p) = self.pending.get(&id) else { return };
        let (base, pools, fresh, old) = (p.request.clone(), p.pools.clone(), p.fresh, p.plan);
        // Planning ranks by the queue's priority (aged); preemption by the GPR's own.
        let request = Request { priority: p.key.priority, ..base.clone() };
        let span = self.span(&request);
        self.unplan(id);
        let from = request.earliest_start.unwrap_or(now).max(now);
        // The old plan's pool first: its start bounds every other pool's scan, and ties stay
        // there (stable plans); another pool must be strictly earlier to win.
        let mut best: Option<(Time, usize)> = None;
        let old_pool = old.map(|o| o.pool).filter(|pool| pools.contains(pool));
        let windows = self.plan_windows(&request, fresh);
        for index in old_pool.into_iter().chain(pools.iter().copied().filter(|&i| Some(i) != old_pool)) {
            let limit = best.map_or(Time::MAX, |b| b.0 - 1);
            if let Some(start) = self.earliest_in_pool(&request, fresh, index, from, limit, &windows, now) {
                best = Some((start, index));
            }
        }
        if let Some(p) = self.pending.get_mut(&id) {
            p.fresh = false;
        }
        let Some((start, index)) = best else {
            self.settle(id, now);
            return;
        };
        if start > now
            && let Some((pool, victims)) = self.find_victims(&base, request.priority, fresh, &pools, now)
        {
            for victim in victims {
                self.preempt(victim, id, now, decisions);
            }
            self.put_plan(id, Plan { pool, start: now, end: now.saturating_add(span) });
            self.void_displaced(&request, fresh, pool, now);
            self.settle(id, now);
            self.admit(id, now, decisions);
            return;
        }
        self.put_plan(id, Plan { pool: index, start, end: start.saturating_add(span) });
        self.void_displaced(&request, fresh, index, now);
        self.settle(id, now);
        if start <= now {
            self.admit(id, now, decisions);
        }
    }

    /// After a GPR is placed: a promise later than the one it had is recorded with the cause
    /// that voided its plan (`Overdue` when nothing §4.5 allows did: its start passed while
    /// something held the nodes past the bound it was planned with). A GPR starting now within
    /// [`ADMISSION_TOLERANCE`] of its promise kept it.
    fn settle(&mut self, id: GprId, now: Time) {
        let Some(p) = self.pending.get_mut(&id) else { return };
        let promise = p.plan.map(|plan| plan.start);
        let cause = p.voided.take();
        let on_time = |from: Time| promise.is_some_and(|t| t <= now && t <= from.saturating_add(ADMISSION_TOLERANCE));
        if let Some(from) = p.promised
            && promise.is_none_or(|t| t > from)
            && !on_time(from)
        {
            self.moves.push(PromiseMove { gpr: id, from, to: promise, cause: cause.unwrap_or(Cause::Overdue) });
        }
        p.promised = promise;
    }

    /// After a fresh GPR is placed: lower-priority plans that now overlap it lose their hold
    /// and wait in `displaced` to be placed again — in a pass when their turn comes (they
    /// rank after the GPR that displaced them), after a submit at once.
    fn void_displaced(&mut self, request: &Request, fresh: bool, pool: usize, now: Time) {
        if !fresh {
            return;
        }
        let Some(plan) = self.pending.get(&request.id).and_then(|p| p.plan) else { return };
        let overlaps = |o: &Plan| o.start < plan.end && o.end > plan.start;
        let firm_until = self.firm_until(pool, request.priority, now);
        let mut displaced: Vec<GprId> = self.pools[pool]
            .planned
            .iter()
            .filter(|o| o.gpr != request.id && o.priority < request.priority && o.start < plan.end && o.end > plan.start && o.start >= firm_until)
            .map(|o| o.gpr)
            .collect();
        if let Some(slice) = self.slices.get(&request.slice) {
            displaced.extend(
                slice
                    .pending
                    .iter()
                    .filter_map(|g| self.pending.get(g))
                    .filter(|o| o.request.id != request.id && o.key.priority < request.priority && o.plan.as_ref().is_some_and(overlaps))
                    .map(|o| o.request.id),
            );
        }
        // Its own priority (before fair share's points): when that alone would not have ranked
        // it ahead, fair share did.
        let (own, bonus) = self.pending.get(&request.id).map_or((request.priority, 0), |p| (p.request.priority, p.bonus));
        for &g in &displaced {
            self.unplan(g);
            if let Some(p) = self.pending.get_mut(&g) {
                let cause = if own <= p.request.priority && bonus > 0 {
                    Cause::FairShare { gpr: request.id }
                } else {
                    Cause::HigherPriority { gpr: request.id, priority: own }
                };
                p.voided.get_or_insert(cause);
            }
        }
        self.displaced.extend(displaced);
    }

    /// Moves a GPR planned to start now onto concrete free nodes.
    fn admit(&mut self, id: GprId, now: Time, decisions: &mut Vec<Decision>) {
        let Some(p) = self.pending.get(&id) else { return };
        let Some(plan) = p.plan else { return };
        let wanted = p.request.nodes as usize;
        let Some(free) = self.pick_free(plan.pool, wanted, now, now.saturating_add(self.span(&p.request))) else {
            // Counts said yes but names say no: a bookkeeping bug. Stay queued and re-plan.
            self.dirty = true;
            return;
        };
        self.forget_expected(id);
        let Some(p) = self.pending.remove(&id) else { return };
        if let Some((made, foreseen)) = p.foreseen
            && now > made
        {
            self.calibration.observe(p.request.priority, foreseen - made, now - made);
        }
        self.queue.remove(&p.key);
        self.pools[plan.pool].planned.forget(id);
        self.pools[plan.pool].guards.forget(id);
        if let Some(slice) = self.slices.get_mut(&p.request.slice) {
            slice.pending.retain(|g| *g != id);
        }
        for n in &free {
            if let Some(s) = self.nodes.get_mut(n) {
                s.holder = Some(id);
            }
        }
        let key = self.pools[plan.pool].key.clone();
        // The window ends no later than this whenever provisioning finishes; the plan already
        // reserved the release after it.
        let ends_at = self.config.latest_window_end(now, p.request.duration);
        let spec =
            RunningSpec { request: p.request, pool: key.clone(), nodes: free.clone(), started_at: now, ends_at, holding: Holding::Provisioning };
        let predicted_end = self.predict_end(&spec);
        let slice = spec.request.slice;
        self.pools[plan.pool].expected.add(now, predicted_end.max(now + 1), wanted as i32);
        if let Some(s) = self.slices.get_mut(&slice) {
            s.expected_busy.push(Busy { gpr: id, start: now, end: predicted_end.max(now + 1) });
        }
        self.running.insert(id, Running { spec, pool: plan.pool, predicted_end, charged_until: now });
        decisions.push(Decision::Admit { gpr: id, pool: key, nodes: free, start: now, end: ends_at });
    }
}
