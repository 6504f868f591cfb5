//! Estimates: the same queue and rules replayed on predicted window ends (users release
//! early), so `estimated_start` is the expected start and never later than the promise; and
//! "Get wait time", which plans a GPR that is not submitted.

use super::plan::{View, fit};
use super::*;

impl Scheduler {
    /// Expected starts for the whole queue: the same order and rules on predicted window ends.
    pub(super) fn estimate_all(&mut self, now: Time) {
        for key in self.queue.in_order() {
            self.estimate_one(key.id, now, false);
        }
    }

    /// Expected start of one pending GPR on the expected timelines. A `newcomer` goes ahead of
    /// lower-priority GPRs, so their expected windows do not hold it back.
    pub(super) fn estimate_one(&mut self, id: GprId, now: Time, newcomer: bool) {
        let Some(p) = self.pending.get(&id) else { return };
        let Some(plan) = p.plan else { return };
        let request = &p.request;
        let rank = p.key.priority;
        let band_priority = request.priority;
        let from = request.earliest_start.unwrap_or(now).max(now);
        let windows = self.expected_windows(request, rank, newcomer);
        // Expected use depends on the pool's shape only: ask the predictor once per shape.
        let mut durations: Vec<(&str, Time)> = Vec::with_capacity(2);
        let mut duration_in = |index: usize| {
            let shape = self.pools[index].key.gpu_shape.as_str();
            match durations.iter().find(|(s, _)| *s == shape) {
                Some(&(_, duration)) => duration,
                None => {
                    let duration = self.expected_duration(request, index);
                    durations.push((shape, duration));
                    duration
                }
            }
        };
        let mut best = (plan.start, plan.pool, duration_in(plan.pool));
        // The pool of the last expected window first, then the plan's: the likeliest answers
        // bound the scans of the others, which must be strictly earlier to win.
        let hint = p.expected_hint.filter(|h| p.pools.contains(h));
        let first = hint.into_iter().chain(std::iter::once(plan.pool).filter(|i| Some(*i) != hint));
        let rest = p.pools.iter().copied().filter(|&i| Some(i) != hint && i != plan.pool);
        for index in first.chain(rest) {
            let pool = &self.pools[index];
            let duration = duration_in(index);
            let from = self.admissible_from(index, request, from);
            let view = self.expected_view(index, rank, newcomer, from, best.0.saturating_add(duration));
            if let Some(start) = fit(&view, pool.healthy, request.nodes as i32, from, duration, best.0 - 1, &windows) {
                best = (start, index, duration);
            }
        }
        let (start, pool, duration) = best;
        let window = Plan { pool, start, end: start.saturating_add(duration) };
        let nodes = request.nodes as i32;
        let slice = request.slice;
        self.pools[pool].expected.add(window.start, window.end, nodes);
        self.pools[pool].expected_planned.push(Reservation { gpr: id, priority: rank, start: window.start, end: window.end, nodes });
        if let Some(s) = self.slices.get_mut(&slice) {
            s.expected_busy.push(Busy { gpr: id, start: window.start, end: window.end });
        }
        let range = self.calibration.range(band_priority, now, start, Some(plan.start));
        if let Some(p) = self.pending.get_mut(&id) {
            p.expected = Some(start);
            p.expected_window = Some(window);
            p.range = Some(range);
            p.foreseen.get_or_insert((now, start));
        }
    }

    /// A pool's plan timeline as a GPR of `priority` sees it over `[from, until)`: a `fresh`
    /// one goes ahead of lower-priority plans, so they do not hold it back.
    pub(super) fn plan_view(&self, index: usize, priority: i32, fresh: bool, from: Time, until: Time, now: Time) -> View<'_> {
        let pool = &self.pools[index];
        let firm_until = self.firm_until(index, priority, now);
        let view = if fresh { View::without_lower(&pool.plan, &pool.planned, priority, from, until, firm_until) } else { View::whole(&pool.plan) };
        view.around(&pool.away, pool.guards.line_for(fresh, priority))
    }

    /// A pool's expected timeline, without the expected windows of GPRs a newcomer of
    /// `priority` would go ahead of.
    pub(super) fn expected_view(&self, index: usize, priority: i32, newcomer: bool, from: Time, until: Time) -> View<'_> {
        let pool = &self.pools[index];
        let view = if newcomer {
            View::without_lower(&pool.expected, &pool.expected_planned, priority, from, until, Time::MIN)
        } else {
            View::whole(&pool.expected)
        };
        // Estimates are not promises: the windows, without the other plans' guards.
        view.around(&pool.away, std::borrow::Cow::Borrowed(&[]))
    }

    /// The earliest start from `from` at which pool `index` leaves `request` its nodes around
    /// the pool's maintenance windows for its whole planned span: admission plans the span, so
    /// an estimate made on the shorter expected use must not start where the planner would not
    /// admit (one was estimated to start "now", 68 s before a window that forbade it).
    pub(super) fn admissible_from(&self, index: usize, request: &Request, from: Time) -> Time {
        let pool = &self.pools[index];
        if pool.away.is_empty() {
            return from;
        }
        // Enough nodes stay in over the whole span from `from` (the usual case): that is the
        // answer, without the piecewise search (it doubled a 10k-GPR pass with 100 windows).
        let span = self.span(request);
        if pool.healthy - maintenance::away_over(&pool.away, from, from.saturating_add(span)) >= request.nodes as i32 {
            return from;
        }
        let empty = Timeline::default();
        let view = View::whole(&empty).around(&pool.away, std::borrow::Cow::Borrowed(&[]));
        view.earliest_fit(from, span, request.nodes as i32, pool.healthy, Time::MAX).unwrap_or(from)
    }

    /// How long `request` is expected to hold pool `pool`'s nodes: its predicted use plus the
    /// observed provisioning and release.
    pub(super) fn expected_duration(&self, request: &Request, pool: usize) -> Time {
        self.expected_span(request.slice, &self.pools[pool].key.gpu_shape, request.duration)
    }

    /// "Get wait time": the promise and the expected start `request` would get in every pool
    /// it may use if it were submitted now, soonest first. Changes nothing.
    pub fn wait_time(&self, request: &Request, now: Time) -> Vec<PoolEstimate> {
        if self.dirty {
            // Plans from before a change are not a sound base: answer from a copy brought up
            // to date (the gateway plans before it asks, so this is for other callers).
            let mut current = self.clone();
            current.plan(now);
            return current.wait_time_on_current_plans(request, now);
        }
        self.wait_time_on_current_plans(request, now)
    }

    pub(super) fn wait_time_on_current_plans(&self, request: &Request, now: Time) -> Vec<PoolEstimate> {
        let from = request.earliest_start.unwrap_or(now).max(now);
        let mut rows = Vec::new();
        let (windows, expected_windows) = (self.plan_windows(request, true), self.expected_windows(request, request.priority, true));
        let allowance = self.config.release_allowance;
        let behind_own = self
            .running
            .values()
            .filter(|r| r.spec.request.slice == request.slice)
            .map(|r| (r.spec.request.id, r.spec.nodes_back_by(allowance)))
            .max_by_key(|own| own.1);
        for index in self.matching_pools(request) {
            let Some(promise) = self.earliest_in_pool(request, true, index, from, Time::MAX, &windows, now) else { continue };
            let pool = &self.pools[index];
            let duration = self.expected_duration(request, index);
            let admissible = self.admissible_from(index, request, from);
            let view = self.expected_view(index, request.priority, true, admissible, promise.saturating_add(duration));
            let expected = fit(&view, pool.healthy, request.nodes as i32, admissible, duration, promise, &expected_windows).unwrap_or(promise);
            // What `submit` would do: start now by preempting, where policy allows it.
            let preempts = if promise > now { self.find_victims(request, request.priority, true, &[index], now) } else { None };
            let (promise, expected, preempts) = match preempts {
                Some((_, victims)) => (now, now, victims),
                None => (promise, expected.min(promise), Vec::new()),
            };
            let start_range = self.calibration.range(request.priority, now, expected, Some(promise));
            rows.push(PoolEstimate {
                pool: pool.key.clone(),
                start_no_later_than: promise,
                estimated_start: start_range.p50,
                start_range,
                free_nodes_now: (pool.healthy - pool.plan.used_at(now)).max(0) as u32,
                healthy_nodes: pool.healthy.max(0) as u32,
                preempts,
                behind_own: behind_own.filter(|own| own.1 > now),
            });
        }
        rows.sort_by(|a, b| (a.estimated_start, a.start_no_later_than, &a.pool).cmp(&(b.estimated_start, b.start_no_later_than, &b.pool)));
        rows
    }
}
