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
    /// removes) in one sort, instead of one vector shift per interval.
    pub fn with(base: &Timeline, intervals: impl IntoIterator<Item = (Time, Time, i32)>) -> Timeline {
        let mut deltas: Vec<(Time, i32)> = Vec::with_capacity(base.steps.len() + 16);
        let mut previous = 0;
        for step in &base.steps {
            deltas.push((step.at, step.used - previous));
            previous = step.used;
        }
        for (start, end, n) in intervals {
            if start < end && n != 0 {
                deltas.push((start, n));
                deltas.push((end, -n));
            }
        }
        deltas.sort_unstable_by_key(|d| d.0);
        let mut steps: Vec<Step> = Vec::with_capacity(deltas.len());
        let mut used = 0;
        for (at, delta) in deltas {
            used += delta;
            match steps.last_mut() {
                Some(last) if last.at == at => last.used = used,
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
        if start >= end || n == 0 {
            return;
        }
        let first = self.split_at(start);
        let last = self.split_at(end);
        for step in &mut self.steps[first..last] {
            step.used += n;
        }
        // Merge equal neighbours at the two edges so the vector stays minimal.
        if last < self.steps.len() && self.steps[last].used == self.steps[last - 1].used {
            self.steps.remove(last);
        }
        if first > 0 && self.steps[first].used == self.steps[first - 1].used {
            self.steps.remove(first);
        }
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
        if n > capacity {
            return None;
        }
        let room = capacity - n;
        let mut start = from;
        let mut i = self.covering(from);
        loop {
            if start > limit {
                return None;
            }
            let step = self.steps[i];
            let next_at = self.steps.get(i + 1).map_or(Time::MAX, |s| s.at);
            if step.used > room {
                // Blocked: the window can begin no earlier than where this step ends.
                if next_at == Time::MAX {
                    return None;
                }
                start = next_at;
            } else if next_at >= start.saturating_add(duration) {
                return Some(start);
            }
            i += 1;
        }
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
