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
//! overlaps. That is the one way a promise breaks besides capacity loss, and DESIGN §4.5 allows
//! it ("unless a higher-priority GPR arrives later").

use super::{Busy, Decision, GprId, Plan, PoolEstimate, Request, Running, RunningSpec, Scheduler, Time, Timeline, Unfit};
use std::borrow::Cow;

/// A window the expected pass gives a GPR that has overrun its predicted end: it is assumed
/// to finish within this much more (or by its reserved end, if sooner).
const OVERRUN_ALLOWANCE: Time = 600;

/// Earliest start `>= from` in `timeline` that also leaves the slice free (one GPR at a time).
#[allow(clippy::too_many_arguments)]
fn fit(
    timeline: &Timeline,
    capacity: i32,
    nodes: i32,
    from: Time,
    duration: Time,
    limit: Time,
    busy: &[Busy],
    respect: impl Fn(&Busy) -> bool,
) -> Option<Time> {
    let mut start = timeline.earliest_fit(from, duration, nodes, capacity, limit)?;
    loop {
        let end = start.saturating_add(duration);
        let blocked_until = busy.iter().filter(|b| b.start < end && b.end > start && respect(b)).map(|b| b.end).max();
        match blocked_until {
            None => return Some(start),
            Some(until) => start = timeline.earliest_fit(until, duration, nodes, capacity, limit)?,
        }
    }
}

impl Scheduler {
    /// A full pass at `now`: re-plans the queue, admits what can start now (preempting where
    /// policy allows), and refreshes every estimate. Returns what the gateway must do.
    pub fn plan(&mut self, now: Time) -> Vec<Decision> {
        self.dirty = false;
        let order = self.queue.in_order();
        self.rebuild(now, &order);
        let mut decisions = Vec::new();
        for (index, key) in order.iter().enumerate() {
            let keeps_hold = index >= self.config.max_plan_depth && self.pending.get(&key.id).is_some_and(|p| p.plan.is_some());
            if !keeps_hold {
                self.place(key.id, now, &mut decisions);
            }
        }
        self.estimate_all(now);
        decisions
    }

    /// Queues a new GPR and plans it at once, without a full pass: its promise and estimate
    /// are known when this returns. Lower-priority plans it displaces wait for the next pass.
    pub fn submit(&mut self, request: Request, now: Time) -> Result<Vec<Decision>, Unfit> {
        self.check_fit(&request)?;
        let id = request.id;
        let was_dirty = self.dirty;
        self.add_pending(request, None);
        self.dirty = was_dirty;
        let mut decisions = Vec::new();
        self.place(id, now, &mut decisions);
        if self.pending.contains_key(&id) {
            self.estimate_one(id, now, true);
        }
        Ok(decisions)
    }

    /// Timelines from what runs now plus the holds that still fit; holds that no longer fit
    /// (a node failed, a window overran) are voided.
    fn rebuild(&mut self, now: Time, order: &[super::QueueKey]) {
        for slice in self.slices.values_mut() {
            slice.busy.clear();
            slice.expected_busy.clear();
        }
        let mut running_by_pool: Vec<Vec<(Time, Time, i32)>> = vec![Vec::new(); self.pools.len()];
        for r in self.running.values() {
            let end = r.spec.ends_at.max(now + 1);
            running_by_pool[r.pool].push((now, end, r.healthy_nodes(&self.nodes)));
            if let Some(slice) = self.slices.get_mut(&r.spec.request.slice) {
                slice.busy.push(Busy { gpr: r.spec.request.id, start: now, end });
            }
        }
        let mut holds_by_pool: Vec<Vec<(GprId, Time, Time, i32)>> = vec![Vec::new(); self.pools.len()];
        for key in order {
            let Some(p) = self.pending.get_mut(&key.id) else { continue };
            p.expected = None;
            p.expected_window = None;
            if let Some(plan) = &mut p.plan {
                if plan.start < now {
                    *plan = Plan { pool: plan.pool, start: now, end: now.saturating_add(p.request.duration) };
                }
                holds_by_pool[plan.pool].push((key.id, plan.start, plan.end, p.request.nodes as i32));
            }
        }
        for (index, pool) in self.pools.iter_mut().enumerate() {
            let running = Timeline::with(&Timeline::default(), running_by_pool[index].iter().copied());
            pool.plan = Timeline::with(&running, holds_by_pool[index].iter().map(|h| (h.1, h.2, h.3)));
            pool.planned = holds_by_pool[index].iter().map(|h| h.0).collect();
            if pool.plan.peak_from(now) > pool.healthy.max(0) {
                // Capacity was lost under these holds: they are re-planned from scratch.
                pool.plan = running;
                for (id, ..) in &holds_by_pool[index] {
                    if let Some(p) = self.pending.get_mut(id) {
                        p.plan = None;
                    }
                }
                pool.planned.clear();
            }
        }
        // One GPR at a time per slice: a hold overlapping one ahead of it is voided.
        for key in order {
            let Some(p) = self.pending.get(&key.id) else { continue };
            let Some(plan) = p.plan else { continue };
            let Some(slice) = self.slices.get_mut(&p.request.slice) else { continue };
            if slice.busy.iter().any(|b| b.start < plan.end && b.end > plan.start) {
                let nodes = p.request.nodes as i32;
                self.pools[plan.pool].plan.add(plan.start, plan.end, -nodes);
                self.pools[plan.pool].planned.retain(|g| *g != key.id);
                if let Some(p) = self.pending.get_mut(&key.id) {
                    p.plan = None;
                }
            } else {
                slice.busy.push(Busy { gpr: key.id, start: plan.start, end: plan.end });
            }
        }
        for pool in &mut self.pools {
            pool.expected = Timeline::default();
        }
        for r in self.running.values_mut() {
            let end = r.predicted_end.max(now.saturating_add(OVERRUN_ALLOWANCE.min(r.spec.ends_at - now).max(1)));
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
        pool.plan.add(plan.start, plan.end, -nodes);
        pool.planned.retain(|g| *g != id);
        if let Some(slice) = self.slices.get_mut(&slice) {
            slice.busy.retain(|b| b.gpr != id);
        }
    }

    fn put_plan(&mut self, id: GprId, plan: Plan) {
        let Some(p) = self.pending.get_mut(&id) else { return };
        p.plan = Some(plan);
        let (nodes, slice) = (p.request.nodes as i32, p.request.slice);
        let pool = &mut self.pools[plan.pool];
        pool.plan.add(plan.start, plan.end, nodes);
        pool.planned.push(id);
        if let Some(slice) = self.slices.get_mut(&slice) {
            slice.busy.push(Busy { gpr: id, start: plan.start, end: plan.end });
        }
    }

    /// Whether a GPR planning with `priority` (fresh or not) must leave `other`'s plan alone.
    fn respects(&self, fresh: bool, priority: i32, other: GprId) -> bool {
        !fresh || self.pending.get(&other).is_none_or(|o| o.request.priority >= priority)
    }

    /// The earliest window for `request` in pool `index` given the current timelines.
    fn earliest_in_pool(&self, request: &Request, fresh: bool, index: usize, from: Time, limit: Time) -> Option<Time> {
        let pool = &self.pools[index];
        let nodes = request.nodes as i32;
        if nodes > pool.healthy {
            return None;
        }
        let view = self.plan_view(index, request.priority, fresh);
        let busy = self.slices.get(&request.slice).map_or(&[][..], |s| &s.busy[..]);
        fit(&view, pool.healthy, nodes, from, request.duration, limit, busy, |b| b.gpr != request.id && self.respects(fresh, request.priority, b.gpr))
    }

    /// Plans one GPR (see the module docs), admitting or preempting when it can start now.
    fn place(&mut self, id: GprId, now: Time, decisions: &mut Vec<Decision>) {
        let Some(p) = self.pending.get(&id) else { return };
        let (request, pools, fresh, old) = (p.request.clone(), p.pools.clone(), p.fresh, p.plan);
        self.unplan(id);
        let from = request.earliest_start.unwrap_or(now).max(now);
        let mut best: Option<(Time, usize)> = None;
        for &index in &pools {
            let limit = best.map_or(Time::MAX, |b| b.0);
            let Some(start) = self.earliest_in_pool(&request, fresh, index, from, limit) else { continue };
            // Ties go to the pool of the old plan (stable), then to pool order.
            let better = match best {
                None => true,
                Some((t, _)) => start < t || (start == t && old.is_some_and(|o| o.pool == index)),
            };
            if better {
                best = Some((start, index));
            }
        }
        if let Some(p) = self.pending.get_mut(&id) {
            p.fresh = false;
        }
        let Some((start, index)) = best else { return };
        if start > now
            && let Some((pool, victims)) = self.find_victims(&request, fresh, &pools, now)
        {
            for victim in victims {
                self.preempt(victim, id, now, decisions);
            }
            self.put_plan(id, Plan { pool, start: now, end: now.saturating_add(request.duration) });
            self.void_displaced(&request, fresh, pool, now);
            self.admit(id, now, decisions);
            return;
        }
        self.put_plan(id, Plan { pool: index, start, end: start.saturating_add(request.duration) });
        self.void_displaced(&request, fresh, index, now);
        if start <= now {
            self.admit(id, now, decisions);
        }
    }

    /// After a fresh GPR is placed: lower-priority plans that now overlap it lose their hold.
    fn void_displaced(&mut self, request: &Request, fresh: bool, pool: usize, _now: Time) {
        if !fresh {
            return;
        }
        let Some(plan) = self.pending.get(&request.id).and_then(|p| p.plan) else { return };
        let overlaps = |o: &Plan| o.start < plan.end && o.end > plan.start;
        let mut displaced: Vec<GprId> = self.pools[pool]
            .planned
            .iter()
            .filter_map(|g| self.pending.get(g))
            .filter(|o| o.request.id != request.id && o.request.priority < request.priority && o.plan.as_ref().is_some_and(overlaps))
            .map(|o| o.request.id)
            .collect();
        if let Some(slice) = self.slices.get(&request.slice) {
            displaced.extend(
                slice
                    .pending
                    .iter()
                    .filter_map(|g| self.pending.get(g))
                    .filter(|o| o.request.id != request.id && o.request.priority < request.priority && o.plan.as_ref().is_some_and(overlaps))
                    .map(|o| o.request.id),
            );
        }
        if !displaced.is_empty() {
            self.dirty = true;
        }
        for g in displaced {
            self.unplan(g);
        }
    }

    /// Moves a GPR planned to start now onto concrete free nodes.
    fn admit(&mut self, id: GprId, now: Time, decisions: &mut Vec<Decision>) {
        let Some(p) = self.pending.get(&id) else { return };
        let Some(plan) = p.plan else { return };
        let wanted = p.request.nodes as usize;
        let pool = &self.pools[plan.pool];
        let free: Vec<_> =
            pool.nodes.iter().copied().filter(|n| self.nodes.get(n).is_some_and(|s| s.healthy && s.holder.is_none())).take(wanted).collect();
        if free.len() < wanted {
            // Counts said yes but names say no: a bookkeeping bug. Stay queued and re-plan.
            self.dirty = true;
            return;
        }
        let Some(p) = self.pending.remove(&id) else { return };
        self.queue.remove(&p.key);
        self.pools[plan.pool].planned.retain(|g| *g != id);
        if let Some(slice) = self.slices.get_mut(&p.request.slice) {
            slice.pending.retain(|g| *g != id);
        }
        if let Some(window) = p.expected_window {
            self.pools[window.pool].expected.add(window.start, window.end, -(p.request.nodes as i32));
        }
        for n in &free {
            if let Some(s) = self.nodes.get_mut(n) {
                s.holder = Some(id);
            }
        }
        let key = self.pools[plan.pool].key.clone();
        let gpus = f64::from(self.pools[plan.pool].gpus_per_node) * free.len() as f64;
        let spec = RunningSpec { request: p.request, pool: key.clone(), nodes: free.clone(), started_at: now, ends_at: plan.end };
        let predicted_end = self.predict_end(&spec);
        let slice = spec.request.slice;
        self.pools[plan.pool].expected.add(now, predicted_end.max(now + 1), wanted as i32);
        if let Some(s) = self.slices.get_mut(&slice) {
            s.expected_busy.push(Busy { gpr: id, start: now, end: predicted_end.max(now + 1) });
        }
        self.running.insert(id, Running { spec, pool: plan.pool, predicted_end });
        self.charge(slice, gpus * (plan.end - now) as f64, now);
        decisions.push(Decision::Admit { gpr: id, pool: key, nodes: free, start: now, end: plan.end });
    }

    /// The smallest set of running GPRs whose eviction lets `request` start now (DESIGN §4.7):
    /// strictly lower priority, preemptible, in slices that allow eviction; lowest priority
    /// first, then most recently started; then a reverse pass drops victims not needed.
    fn find_victims(&self, request: &Request, fresh: bool, pools: &[usize], now: Time) -> Option<(usize, Vec<GprId>)> {
        if request.earliest_start.is_some_and(|t| t > now) {
            return None;
        }
        let end = now.saturating_add(request.duration);
        let busy = self.slices.get(&request.slice).map_or(&[][..], |s| &s.busy[..]);
        let slice_blocked = busy.iter().any(|b| b.gpr != request.id && b.start < end && b.end > now && self.respects(fresh, request.priority, b.gpr));
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
            let view = self.plan_view(index, request.priority, fresh);
            let fits = |victims: &[&Running]| {
                let freed = victims.iter().map(|v| (now, v.spec.ends_at.max(now + 1), -v.healthy_nodes(&self.nodes)));
                Timeline::with(&view, freed).max_used(now, end) + nodes <= pool.healthy
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

    fn preempt(&mut self, victim: GprId, by: GprId, now: Time, decisions: &mut Vec<Decision>) {
        let Some(spec) = self.finish(victim, now) else { return };
        let requeued = spec.request.requeue;
        if requeued {
            let mut request = spec.request;
            request.duration = spec.ends_at - spec.started_at;
            self.add_pending(request, None);
        }
        decisions.push(Decision::Preempt { victim, by, requeued });
    }

    /// Expected starts for the whole queue: the same order and rules on predicted window ends.
    fn estimate_all(&mut self, now: Time) {
        for key in self.queue.in_order() {
            self.estimate_one(key.id, now, false);
        }
    }

    /// Expected start of one pending GPR on the expected timelines. A `newcomer` goes ahead of
    /// lower-priority GPRs, so their expected windows do not hold it back.
    fn estimate_one(&mut self, id: GprId, now: Time, newcomer: bool) {
        let Some(p) = self.pending.get(&id) else { return };
        let Some(plan) = p.plan else { return };
        let request = &p.request;
        let from = request.earliest_start.unwrap_or(now).max(now);
        let busy = self.slices.get(&request.slice).map_or(&[][..], |s| &s.expected_busy[..]);
        let mut best = (plan.start, plan.pool, self.expected_duration(request, plan.pool));
        for &index in &p.pools {
            let pool = &self.pools[index];
            let duration = self.expected_duration(request, index);
            let view = self.expected_view(index, request.priority, newcomer);
            let found = fit(&view, pool.healthy, request.nodes as i32, from, duration, best.0, busy, |b| {
                b.gpr != id && self.respects(newcomer, request.priority, b.gpr)
            });
            if let Some(start) = found
                && start < best.0
            {
                best = (start, index, duration);
            }
        }
        let (start, pool, duration) = best;
        let window = Plan { pool, start, end: start.saturating_add(duration) };
        let nodes = request.nodes as i32;
        let slice = request.slice;
        self.pools[pool].expected.add(window.start, window.end, nodes);
        if let Some(s) = self.slices.get_mut(&slice) {
            s.expected_busy.push(Busy { gpr: id, start: window.start, end: window.end });
        }
        if let Some(p) = self.pending.get_mut(&id) {
            p.expected = Some(start);
            p.expected_window = Some(window);
        }
    }

    /// A pool's plan timeline as a GPR of `priority` sees it: a `fresh` one goes ahead of
    /// lower-priority plans, so they do not hold it back.
    fn plan_view(&self, index: usize, priority: i32, fresh: bool) -> Cow<'_, Timeline> {
        let pool = &self.pools[index];
        if !fresh {
            return Cow::Borrowed(&pool.plan);
        }
        let lower: Vec<(Time, Time, i32)> = pool
            .planned
            .iter()
            .filter_map(|g| self.pending.get(g))
            .filter(|o| o.request.priority < priority)
            .filter_map(|o| o.plan.map(|plan| (plan.start, plan.end, -(o.request.nodes as i32))))
            .collect();
        if lower.is_empty() { Cow::Borrowed(&pool.plan) } else { Cow::Owned(Timeline::with(&pool.plan, lower)) }
    }

    /// A pool's expected timeline, without the expected windows of GPRs a newcomer of
    /// `priority` would go ahead of.
    fn expected_view(&self, index: usize, priority: i32, newcomer: bool) -> Cow<'_, Timeline> {
        let pool = &self.pools[index];
        if !newcomer {
            return Cow::Borrowed(&pool.expected);
        }
        let lower: Vec<(Time, Time, i32)> = self
            .pending
            .values()
            .filter(|o| o.request.priority < priority)
            .filter_map(|o| o.expected_window.filter(|w| w.pool == index).map(|w| (w.start, w.end, -(o.request.nodes as i32))))
            .collect();
        if lower.is_empty() { Cow::Borrowed(&pool.expected) } else { Cow::Owned(Timeline::with(&pool.expected, lower)) }
    }

    fn expected_duration(&self, request: &Request, pool: usize) -> Time {
        self.predictor.expected_use(request.slice, &self.pools[pool].key.gpu_shape, request.duration)
    }

    /// "Get wait time": the promise and the expected start `request` would get in every pool
    /// it may use if it were submitted now, soonest first. Changes nothing.
    pub fn wait_time(&self, request: &Request, now: Time) -> Vec<PoolEstimate> {
        let from = request.earliest_start.unwrap_or(now).max(now);
        let mut rows = Vec::new();
        for index in self.matching_pools(request) {
            let Some(promise) = self.earliest_in_pool(request, true, index, from, Time::MAX) else { continue };
            let pool = &self.pools[index];
            let view = self.expected_view(index, request.priority, true);
            let busy = self.slices.get(&request.slice).map_or(&[][..], |s| &s.expected_busy[..]);
            let duration = self.expected_duration(request, index);
            let expected =
                fit(&view, pool.healthy, request.nodes as i32, from, duration, promise, busy, |b| self.respects(true, request.priority, b.gpr))
                    .unwrap_or(promise);
            rows.push(PoolEstimate {
                pool: pool.key.clone(),
                start_no_later_than: promise,
                estimated_start: expected.min(promise),
                free_nodes_now: (pool.healthy - pool.plan.used_at(now)).max(0) as u32,
                healthy_nodes: pool.healthy.max(0) as u32,
            });
        }
        rows.sort_by(|a, b| (a.estimated_start, a.start_no_later_than, &a.pool).cmp(&(b.estimated_start, b.start_no_later_than, &b.pool)));
        rows
    }
}
