//! A pool's inventory timeline: how many of its nodes are reserved at each instant.
//!
//! Nodes of one pool are interchangeable, so the planner needs counts, not names: any set of
//! interval reservations whose counts never exceed the pool's healthy nodes can be given
//! concrete nodes (interval graphs colour greedily). The step function is a sorted vector of
//! breakpoints — compact, cache-friendly, and cheap to clone for "what if" queries.

use super::Time;

/// Reserved node count as a step function of time: `used` holds from `at` until the next
/// breakpoint. The first breakpoint is at `Time::MIN`, so every instant is covered.
#[derive(Clone, Debug)]
pub struct Timeline {
    steps: Vec<Step>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Step {
    at: Time,
    used: i32,
}

impl Default for Timeline {
    fn default() -> Self {
        Self { steps: vec![Step { at: Time::MIN, used: 0 }] }
    }
}

impl Timeline {
    /// Builds the sum of `base` and `intervals` (`[start, end)` reserving `n`; a negative `n`
    /// removes): the intervals' edges are sorted and merged into `base`'s steps, which are
    /// already in order, instead of one vector shift per interval.
    pub fn with(base: &Timeline, intervals: impl IntoIterator<Item = (Time, Time, i32)>) -> Timeline {
        let mut edges: Vec<(Time, i32)> = Vec::new();
        for (start, end, n) in intervals {
            if start < end && n != 0 {
                edges.push((start, n));
                edges.push((end, -n));
            }
        }
        edges.sort_unstable_by_key(|e| e.0);
        let mut steps: Vec<Step> = Vec::with_capacity(base.steps.len() + edges.len());
        let (mut edges, mut i) = (edges.into_iter().peekable(), 0);
        // `base_used` is base's count at the current instant, `extra` the edges' running sum.
        let (mut base_used, mut extra) = (0, 0);
        loop {
            let next_base = base.steps.get(i).map(|s| s.at);
            let next_edge = edges.peek().map(|e| e.0);
            let at = match (next_base, next_edge) {
                (None, None) => break,
                (Some(b), Some(e)) => b.min(e),
                (Some(b), None) => b,
                (None, Some(e)) => e,
            };
            while let Some(step) = base.steps.get(i).filter(|s| s.at == at) {
                base_used = step.used;
                i += 1;
            }
            while let Some((_, n)) = edges.next_if(|e| e.0 == at) {
                extra += n;
            }
            let used = base_used + extra;
            match steps.last() {
                Some(last) if last.used == used => {}
                _ => steps.push(Step { at, used }),
            }
        }
        let mut timeline = Timeline { steps };
        timeline.coalesce();
        timeline
    }

    /// Index of the step covering `t`.
    fn covering(&self, t: Time) -> usize {
        self.steps.partition_point(|s| s.at <= t) - 1
    }

    /// Index of a breakpoint at exactly `t`, inserting one (with the covering count) if absent.
    fn split_at(&mut self, t: Time) -> usize {
        let i = self.covering(t);
        if self.steps[i].at == t {
            i
        } else {
            let used = self.steps[i].used;
            self.steps.insert(i + 1, Step { at: t, used });
            i + 1
        }
    }

    /// Reserves `n` nodes over `[start, end)`; a negative `n` gives them back.
    pub fn add(&mut self, start: Time, end: Time, n: i32) {
        let Some((first, last)) = self.add_keeping_breakpoints(start, end, n) else { return };
        // Merge equal neighbours at the two edges so the vector stays minimal.
        if last < self.steps.len() && self.steps[last].used == self.steps[last - 1].used {
            self.steps.remove(last);
        }
        if first > 0 && self.steps[first].used == self.steps[first - 1].used {
            self.steps.remove(first);
        }
    }

    /// [`Timeline::add`] without merging equal neighbours afterwards: a planner that takes a
    /// window out to put it back (often in the same place) saves two vector shifts each way.
    /// [`Timeline::tidy`] merges them later. Returns the indices of the changed steps.
    pub fn add_keeping_breakpoints(&mut self, start: Time, end: Time, n: i32) -> Option<(usize, usize)> {
        if start >= end || n == 0 {
            return None;
        }
        let first = self.split_at(start);
        let last = self.split_at(end);
        for step in &mut self.steps[first..last] {
            step.used += n;
        }
        Some((first, last))
    }

    /// Merges equal neighbouring steps left by [`Timeline::add_keeping_breakpoints`].
    pub fn tidy(&mut self) {
        self.coalesce();
    }

    /// Nodes reserved at instant `t`.
    pub fn used_at(&self, t: Time) -> i32 {
        self.steps[self.covering(t)].used
    }

    /// Most nodes reserved at any instant of `[start, end)`.
    pub fn max_used(&self, start: Time, end: Time) -> i32 {
        let mut i = self.covering(start);
        let mut most = self.steps[i].used;
        i += 1;
        while i < self.steps.len() && self.steps[i].at < end {
            most = most.max(self.steps[i].used);
            i += 1;
        }
        most
    }

    /// Most nodes reserved at any instant from `from` on.
    pub fn peak_from(&self, from: Time) -> i32 {
        self.max_used(from, Time::MAX)
    }

    /// The earliest `s >= from` such that `n` more nodes fit within `capacity` over
    /// `[s, s + duration)`, or `None` when none does by `limit` (inclusive) or ever.
    pub fn earliest_fit(&self, from: Time, duration: Time, n: i32, capacity: i32, limit: Time) -> Option<Time> {
        let steps = self.steps[self.covering(from)..].iter().map(|s| (s.at, s.used));
        first_fit(steps, from, duration, n, capacity, limit)
    }

    /// [`Timeline::earliest_fit`] on this timeline less the `edges` (`(at, delta)`, sorted
    /// by time), subtracted on the fly instead of built: a "what if these were gone" view
    /// costs only the part of the timeline the search walks.
    pub fn earliest_fit_without(&self, edges: &[(Time, i32)], from: Time, duration: Time, n: i32, capacity: i32, limit: Time) -> Option<Time> {
        let mut i = self.covering(from);
        let mut j = edges.partition_point(|e| e.0 <= from);
        let mut removed: i32 = edges[..j].iter().map(|e| e.1).sum();
        let mut base = self.steps[i].used;
        let first = (self.steps[i].at, base - removed);
        i += 1;
        let rest = std::iter::from_fn(move || {
            let at = match (self.steps.get(i), edges.get(j)) {
                (None, None) => return None,
                (Some(step), Some(edge)) => step.at.min(edge.0),
                (Some(step), None) => step.at,
                (None, Some(edge)) => edge.0,
            };
            while let Some(step) = self.steps.get(i).filter(|s| s.at == at) {
                base = step.used;
                i += 1;
            }
            while let Some(edge) = edges.get(j).filter(|e| e.0 == at) {
                removed += edge.1;
                j += 1;
            }
            Some((at, base - removed))
        });
        first_fit(std::iter::once(first).chain(rest), from, duration, n, capacity, limit)
    }

    /// Drops breakpoints before `now` (history the planner no longer needs).
    pub fn forget_before(&mut self, now: Time) {
        let i = self.covering(now);
        if i > 0 {
            let used = self.steps[i].used;
            self.steps.drain(..i);
            self.steps[0] = Step { at: Time::MIN, used };
        }
    }

    fn coalesce(&mut self) {
        if self.steps.first().is_none_or(|s| s.at != Time::MIN) {
            self.steps.insert(0, Step { at: Time::MIN, used: 0 });
        }
        self.steps.dedup_by(|later, earlier| later.used == earlier.used);
    }

    /// Number of breakpoints (for tests and sizing).
    pub fn breakpoints(&self) -> usize {
        self.steps.len()
    }

    /// `(at, used)` pairs, for views that draw the schedule.
    pub fn steps(&self) -> impl Iterator<Item = (Time, i32)> + '_ {
        self.steps.iter().map(|s| (s.at, s.used))
    }
}

/// The search behind [`Timeline::earliest_fit`], over `(at, used)` steps whose first one
/// covers `from`.
fn first_fit(mut steps: impl Iterator<Item = (Time, i32)>, from: Time, duration: Time, n: i32, capacity: i32, limit: Time) -> Option<Time> {
    if n > capacity {
        return None;
    }
    let room = capacity - n;
    let mut start = from;
    let (_, mut used) = steps.next()?;
    loop {
        if start > limit {
            return None;
        }
        let Some((next_at, next_used)) = steps.next() else {
            // The last step lasts forever: it fits unless it is blocked.
            return (used <= room).then_some(start);
        };
        if used > room {
            // Blocked: the window can begin no earlier than where this step ends.
            start = next_at;
        } else if next_at >= start.saturating_add(duration) {
            return Some(start);
        }
        used = next_used;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_and_remove_round_trip_to_empty() {
        let mut t = Timeline::default();
        t.add(10, 20, 2);
        t.add(15, 30, 1);
        assert_eq!((t.used_at(9), t.used_at(10), t.used_at(15), t.used_at(20), t.used_at(30)), (0, 2, 3, 1, 0));
        assert_eq!(t.max_used(0, 100), 3);
        t.add(10, 20, -2);
        t.add(15, 30, -1);
        assert_eq!(t.breakpoints(), 1);
    }

    #[test]
    fn earliest_fit_skips_blocked_steps() {
        let mut t = Timeline::default();
        t.add(0, 100, 3); // capacity 4: one node free until 100
        assert_eq!(t.earliest_fit(0, 50, 1, 4, Time::MAX), Some(0));
        assert_eq!(t.earliest_fit(0, 50, 2, 4, Time::MAX), Some(100));
        assert_eq!(t.earliest_fit(0, 50, 2, 4, 99), None);
        t.add(120, 130, 4);
        // A 50 s window starting at 100 would cross the full step at 120.
        assert_eq!(t.earliest_fit(0, 50, 2, 4, Time::MAX), Some(130));
        assert_eq!(t.earliest_fit(0, 20, 2, 4, Time::MAX), Some(100));
        assert_eq!(t.earliest_fit(0, 20, 5, 4, Time::MAX), None);
    }

    #[test]
    fn fit_with_edges_matches_fit_on_the_built_sum() {
        let mut t = Timeline::default();
        t.add(0, 100, 3);
        t.add(50, 200, 1);
        t.add(120, 130, 4);
        let removed = [(0, 60, 2), (110, 140, 1), (150, 400, -2), (20, 130, 1)];
        let built = Timeline::with(&t, removed.iter().map(|&(s, e, n)| (s, e, -n)));
        let mut edges: Vec<(Time, i32)> = removed.iter().flat_map(|&(s, e, n)| [(s, n), (e, -n)]).collect();
        edges.sort_unstable();
        for from in [-10, 0, 30, 55, 99, 100, 125, 145, 300, 500] {
            for (duration, n) in [(10, 1), (40, 2), (60, 3), (5, 5), (1000, 1)] {
                for limit in [Time::MAX, 120, 50] {
                    assert_eq!(
                        t.earliest_fit_without(&edges, from, duration, n, 5, limit),
                        built.earliest_fit(from, duration, n, 5, limit),
                        "from {from} duration {duration} n {n} limit {limit}"
                    );
                }
            }
        }
    }

    #[test]
    fn batch_build_matches_incremental_adds() {
        let intervals = [(5, 9, 1), (0, 20, 2), (7, 8, -1), (9, 30, 4)];
        let mut incremental = Timeline::default();
        for (s, e, n) in intervals {
            incremental.add(s, e, n);
        }
        let batch = Timeline::with(&Timeline::default(), intervals);
        assert_eq!(incremental.steps, batch.steps);
    }
}
