//! A pool's inventory timeline: how many of its nodes are reserved at each instant.
//!
//! Nodes of one pool are interchangeable, so the planner needs counts, not names: any set of
//! interval reservations whose counts never exceed the pool's healthy nodes can be given
//! concrete nodes (interval graphs colour greedily). The step function is kept as a list of
//! sorted chunks of breakpoints, each with the least and most it reserves: an insert shifts
//! one chunk, not the whole pool's plan, and a search for room skips whole chunks that are
//! full (or free) instead of walking every breakpoint — a congested pool's queue is planned
//! in a few chunk checks per GPR where a flat list took a walk through thousands of steps.
//!
//! A timeline also remembers what its last searches found ([`Hints`]): a pass places the
//! queue in order, so the GPR after one that found no room before `t` need not look before `t`
//! either, unless something was given back there since.

use super::Time;

/// Breakpoints a chunk is split at twice this many. Unit tests use tiny chunks so that every
/// scenario crosses chunk edges.
#[cfg(not(test))]
const CHUNK: usize = 16;
#[cfg(test)]
const CHUNK: usize = 3;

/// Reserved node count as a step function of time: `used` holds from `at` until the next
/// breakpoint. The first breakpoint is at `Time::MIN`, so every instant is covered.
#[derive(Clone, Debug)]
pub struct Timeline {
    /// Never empty, no chunk empty; breakpoints strictly increase across them.
    chunks: Vec<Chunk>,
    hints: Hints,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Step {
    at: Time,
    used: i32,
}

#[derive(Clone, Debug)]
struct Chunk {
    /// Where its first step is, kept beside the steps so that finding a chunk reads no step.
    first: Time,
    steps: Vec<Step>,
    /// Added to every step's count: a window over the whole chunk changes this, not each step.
    offset: i32,
    /// The least and most count of its steps, with the offset.
    least: i32,
    most: i32,
}

impl Chunk {
    fn new(steps: Vec<Step>) -> Self {
        Chunk::with_offset(steps, 0)
    }

    fn with_offset(steps: Vec<Step>, offset: i32) -> Self {
        let mut chunk = Chunk { first: steps[0].at, steps, offset, least: 0, most: 0 };
        chunk.summarise();
        chunk
    }

    fn summarise(&mut self) {
        self.first = self.steps[0].at;
        self.least = self.steps.iter().map(|s| s.used).min().unwrap_or(0) + self.offset;
        self.most = self.steps.iter().map(|s| s.used).max().unwrap_or(0) + self.offset;
    }

    fn first_at(&self) -> Time {
        self.first
    }

    fn last_at(&self) -> Time {
        self.steps[self.steps.len() - 1].at
    }

    /// Its `i`th step's count.
    fn used(&self, i: usize) -> i32 {
        self.steps[i].used + self.offset
    }

    fn last_used(&self) -> i32 {
        self.used(self.steps.len() - 1)
    }
}

/// A breakpoint's place: chunk and index in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pos {
    chunk: usize,
    at: usize,
}

impl Default for Timeline {
    fn default() -> Self {
        Self::from_steps(vec![Step { at: Time::MIN, used: 0 }])
    }
}

impl Timeline {
    /// Chunks sorted `steps` whose first is at `Time::MIN`.
    fn from_steps(steps: Vec<Step>) -> Self {
        Timeline { chunks: steps.chunks(CHUNK).map(|c| Chunk::new(c.to_vec())).collect(), hints: Hints::default() }
    }

    fn all_steps(&self) -> impl Iterator<Item = Step> + '_ {
        self.chunks.iter().flat_map(|c| c.steps.iter().map(|s| Step { at: s.at, used: s.used + c.offset }))
    }

    /// Builds the sum of `base` and `intervals` (`[start, end)` reserving `n`; a negative `n`
    /// removes): the intervals' edges are sorted and merged into `base`'s steps, which are
    /// already in order, instead of one insert per interval.
    pub fn with(base: &Timeline, intervals: impl IntoIterator<Item = (Time, Time, i32)>) -> Timeline {
        let mut edges: Vec<(Time, i32)> = Vec::new();
        for (start, end, n) in intervals {
            if start < end && n != 0 {
                edges.push((start, n));
                edges.push((end, -n));
            }
        }
        edges.sort_unstable_by_key(|e| e.0);
        let mut steps: Vec<Step> = Vec::with_capacity(base.breakpoints() + edges.len());
        let mut edges = edges.into_iter().peekable();
        let mut base_steps = base.all_steps().peekable();
        // `base_used` is base's count at the current instant, `extra` the edges' running sum.
        let (mut base_used, mut extra) = (0, 0);
        loop {
            let next_base = base_steps.peek().map(|s| s.at);
            let next_edge = edges.peek().map(|e| e.0);
            let at = match (next_base, next_edge) {
                (None, None) => break,
                (Some(b), Some(e)) => b.min(e),
                (Some(b), None) => b,
                (None, Some(e)) => e,
            };
            if let Some(step) = base_steps.next_if(|s| s.at == at) {
                base_used = step.used;
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
        Timeline::from_steps(minimal(steps))
    }

    /// The breakpoint covering `t`.
    fn covering(&self, t: Time) -> Pos {
        let chunk = self.chunks.partition_point(|c| c.first_at() <= t) - 1;
        Pos { chunk, at: self.chunks[chunk].steps.partition_point(|s| s.at <= t) - 1 }
    }

    fn step(&self, p: Pos) -> Step {
        let chunk = &self.chunks[p.chunk];
        Step { at: chunk.steps[p.at].at, used: chunk.used(p.at) }
    }

    fn next_pos(&self, p: Pos) -> Option<Pos> {
        if p.at + 1 < self.chunks[p.chunk].steps.len() {
            Some(Pos { chunk: p.chunk, at: p.at + 1 })
        } else if p.chunk + 1 < self.chunks.len() {
            Some(Pos { chunk: p.chunk + 1, at: 0 })
        } else {
            None
        }
    }

    fn previous_step(&self, p: Pos) -> Option<Step> {
        if p.at > 0 {
            Some(self.step(Pos { chunk: p.chunk, at: p.at - 1 }))
        } else {
            p.chunk.checked_sub(1).map(|c| self.step(Pos { chunk: c, at: self.chunks[c].steps.len() - 1 }))
        }
    }

    /// Makes a breakpoint at exactly `t` (with the covering count) if there is none.
    fn split_at(&mut self, t: Time) {
        let p = self.covering(t);
        let chunk = &mut self.chunks[p.chunk];
        if chunk.steps[p.at].at == t {
            return;
        }
        let used = chunk.steps[p.at].used;
        chunk.steps.insert(p.at + 1, Step { at: t, used });
        if chunk.steps.len() > 2 * CHUNK {
            let tail = chunk.steps.split_off(CHUNK);
            chunk.summarise();
            let offset = chunk.offset;
            self.chunks.insert(p.chunk + 1, Chunk::with_offset(tail, offset));
        }
    }

    /// Removes the breakpoint at `t` if it repeats the count before it.
    fn merge_at(&mut self, t: Time) {
        let p = self.covering(t);
        let step = self.step(p);
        if step.at != t || self.previous_step(p).is_none_or(|before| before.used != step.used) {
            return;
        }
        let chunk = &mut self.chunks[p.chunk];
        chunk.steps.remove(p.at);
        if chunk.steps.is_empty() {
            self.chunks.remove(p.chunk);
        } else {
            chunk.summarise();
        }
    }

    /// Reserves `n` nodes over `[start, end)`; a negative `n` gives them back.
    pub fn add(&mut self, start: Time, end: Time, n: i32) {
        if self.add_keeping_breakpoints(start, end, n) {
            // Merge equal neighbours at the two edges so the list stays minimal.
            self.merge_at(end);
            self.merge_at(start);
        }
    }

    /// [`Timeline::add`] without merging equal neighbours afterwards: a planner that takes a
    /// window out to put it back (often in the same place) saves the merge and the split each
    /// way. [`Timeline::tidy`] merges them later. Returns whether anything changed.
    pub fn add_keeping_breakpoints(&mut self, start: Time, end: Time, n: i32) -> bool {
        if start >= end || n == 0 {
            return false;
        }
        if n < 0 {
            self.hints.given_back(start);
        }
        self.split_at(start);
        self.split_at(end);
        let Pos { chunk: mut c, at: mut i } = self.covering(start);
        loop {
            let chunk = &mut self.chunks[c];
            if i == 0 && chunk.last_at() < end {
                chunk.offset += n;
                chunk.least += n;
                chunk.most += n;
                i = chunk.steps.len();
            } else {
                while let Some(step) = chunk.steps.get_mut(i).filter(|s| s.at < end) {
                    step.used += n;
                    i += 1;
                }
                chunk.summarise();
            }
            if i < chunk.steps.len() || c + 1 == self.chunks.len() {
                return true;
            }
            (c, i) = (c + 1, 0);
        }
    }

    /// Merges equal neighbouring steps left by [`Timeline::add_keeping_breakpoints`], and
    /// evens out the chunks.
    pub fn tidy(&mut self) {
        let steps: Vec<Step> = self.all_steps().collect();
        let hints = std::mem::take(&mut self.hints);
        *self = Timeline { hints, ..Timeline::from_steps(minimal(steps)) };
    }

    /// Nodes reserved at instant `t`.
    pub fn used_at(&self, t: Time) -> i32 {
        self.step(self.covering(t)).used
    }

    /// Most nodes reserved at any instant of `[start, end)`.
    pub fn max_used(&self, start: Time, end: Time) -> i32 {
        let p = self.covering(start);
        let first = &self.chunks[p.chunk];
        let mut most = first.steps[p.at..].iter().take_while(|s| s.at < end || s.at <= start).map(|s| s.used).max().unwrap_or(0) + first.offset;
        for chunk in &self.chunks[p.chunk + 1..] {
            if chunk.first_at() >= end {
                break;
            }
            most = most.max(if chunk.last_at() < end {
                chunk.most
            } else {
                chunk.steps.iter().take_while(|s| s.at < end).map(|s| s.used + chunk.offset).max().unwrap_or(most)
            });
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
        let start = self.hints.none_before(from, room, duration);
        let found = if start > limit { None } else { self.first_fit(start, duration, room, limit) };
        self.hints.learn(Hint { from, room, duration, none_before: found.unwrap_or(limit.saturating_add(1)) });
        found
    }

    /// The search behind [`Timeline::earliest_fit`], from `from` on, for a window of
    /// `duration` with at most `room` reserved.
    fn first_fit(&self, from: Time, duration: Time, room: i32, limit: Time) -> Option<Time> {
        let p = self.covering(from);
        let mut start = from;
        let mut used = self.step(p).used;
        let (mut c, mut i) = (p.chunk, p.at + 1);
        loop {
            let Some(chunk) = self.chunks.get(c) else {
                // The last step lasts forever: it fits unless it is blocked.
                return (used <= room).then_some(start);
            };
            // A whole chunk that is all blocked (while looking for room) or all free (while
            // the window runs) changes nothing but where the search stands.
            if i == 0 && (if used > room { chunk.least > room } else { chunk.most <= room }) {
                used = chunk.last_used();
                c += 1;
                continue;
            }
            let offset = chunk.offset;
            for step in &chunk.steps[i..] {
                if used > room {
                    // Blocked: the window can begin no earlier than where this step ends.
                    start = step.at;
                    if start > limit {
                        return None;
                    }
                } else if step.at >= start.saturating_add(duration) {
                    return Some(start);
                }
                used = step.used + offset;
            }
            (c, i) = (c + 1, 0);
        }
    }

    /// [`Timeline::earliest_fit`] on this timeline less the `edges` (`(at, delta)`, sorted
    /// by time), subtracted on the fly instead of built: a "what if these were gone" view
    /// costs only the part of the timeline the search walks.
    pub fn earliest_fit_without(&self, edges: &[(Time, i32)], from: Time, duration: Time, n: i32, capacity: i32, limit: Time) -> Option<Time> {
        if edges.is_empty() {
            return self.earliest_fit(from, duration, n, capacity, limit);
        }
        if n > capacity || from > limit {
            return None;
        }
        let room = capacity - n;
        let (mut walk, mut used) = Walk::new(self, edges, from);
        let mut start = from;
        loop {
            if start > limit {
                return None;
            }
            // Whole chunks that are all blocked (while looking for room) or all free (while
            // the window runs) change nothing but where the walk stands.
            let skipped = if used > room { walk.skip_chunks(|least, _| least > room) } else { walk.skip_chunks(|_, most| most <= room) };
            used = skipped.unwrap_or(used);
            let Some((next_at, next_used)) = walk.next() else {
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

    /// Drops breakpoints before `now` (history the planner no longer needs).
    pub fn forget_before(&mut self, now: Time) {
        let p = self.covering(now);
        self.chunks.drain(..p.chunk);
        let chunk = &mut self.chunks[0];
        chunk.steps.drain(..p.at);
        chunk.steps[0].at = Time::MIN;
        chunk.summarise();
    }

    /// Number of breakpoints (for tests and sizing).
    pub fn breakpoints(&self) -> usize {
        self.chunks.iter().map(|c| c.steps.len()).sum()
    }

    /// `(at, used)` pairs, for views that draw the schedule.
    pub fn steps(&self) -> impl Iterator<Item = (Time, i32)> + '_ {
        self.all_steps().map(|s| (s.at, s.used))
    }
}

/// What a search found: no window of `duration` with at most `room` reserved starts in
/// `[from, none_before)`. It holds for a later search that starts no earlier and asks for no
/// more room and no less time, until nodes are given back before `none_before`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Hint {
    from: Time,
    room: i32,
    duration: Time,
    none_before: Time,
}

/// The last few [`Hint`]s. Searches take `&self` (answers are read by many requests at once),
/// so they are kept behind a lock that a search only tries: a busy one just searches from the
/// start.
#[derive(Debug, Default)]
struct Hints(std::sync::Mutex<Vec<Hint>>);

/// Hints kept per timeline: enough for the sizes and lengths a queue mixes.
const HINTS: usize = 16;

impl Clone for Hints {
    fn clone(&self) -> Self {
        Hints(std::sync::Mutex::new(self.0.try_lock().map(|h| h.clone()).unwrap_or_default()))
    }
}

impl Hints {
    /// Where a search from `from` for `room` over `duration` may begin.
    fn none_before(&self, from: Time, room: i32, duration: Time) -> Time {
        let Ok(hints) = self.0.try_lock() else { return from };
        hints.iter().filter(|h| h.from <= from && h.room >= room && h.duration <= duration).map(|h| h.none_before).fold(from, Time::max)
    }

    fn learn(&self, hint: Hint) {
        if hint.none_before <= hint.from {
            return;
        }
        let Ok(mut hints) = self.0.try_lock() else { return };
        // One that says no more than this one goes; the oldest goes when there is no room.
        hints.retain(|h| !(h.from >= hint.from && h.room <= hint.room && h.duration >= hint.duration && h.none_before <= hint.none_before));
        if hints.len() == HINTS {
            hints.remove(0);
        }
        hints.push(hint);
    }

    /// Nodes were given back from `at` on: a window overlapping that may fit now.
    fn given_back(&mut self, at: Time) {
        let hints = self.0.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        for h in hints.iter_mut() {
            h.none_before = h.none_before.min(at.saturating_sub(h.duration).saturating_add(1).max(h.from));
        }
    }
}

/// `steps` sorted, starting at `Time::MIN`, without a step that repeats the one before.
fn minimal(mut steps: Vec<Step>) -> Vec<Step> {
    if steps.first().is_none_or(|s| s.at != Time::MIN) {
        steps.insert(0, Step { at: Time::MIN, used: 0 });
    }
    steps.dedup_by(|later, earlier| later.used == earlier.used);
    steps
}

/// A walk over a timeline less some edges, from the step covering an instant: the steps of
/// both merged, with whole chunks passed at once where no edge falls in them.
struct Walk<'a> {
    timeline: &'a Timeline,
    edges: &'a [(Time, i32)],
    /// The next breakpoint of the timeline, and of the edges.
    next: Option<Pos>,
    edge: usize,
    /// The timeline's count and the edges' running sum where the walk stands.
    base: i32,
    removed: i32,
}

impl<'a> Walk<'a> {
    /// The walk from `from`, and the count there.
    fn new(timeline: &'a Timeline, edges: &'a [(Time, i32)], from: Time) -> (Self, i32) {
        let p = timeline.covering(from);
        let edge = edges.partition_point(|e| e.0 <= from);
        let removed: i32 = edges[..edge].iter().map(|e| e.1).sum();
        let base = timeline.step(p).used;
        (Walk { timeline, edges, next: timeline.next_pos(p), edge, base, removed }, base - removed)
    }

    /// The next instant the count changes at, and the count from there.
    fn next(&mut self) -> Option<(Time, i32)> {
        let base_at = self.next.map(|p| self.timeline.step(p).at);
        let edge_at = self.edges.get(self.edge).map(|e| e.0);
        let at = match (base_at, edge_at) {
            (None, None) => return None,
            (Some(b), Some(e)) => b.min(e),
            (Some(b), None) => b,
            (None, Some(e)) => e,
        };
        if let Some(p) = self.next.filter(|_| base_at == Some(at)) {
            self.base = self.timeline.step(p).used;
            self.next = self.timeline.next_pos(p);
        }
        while let Some(&(_, delta)) = self.edges.get(self.edge).filter(|e| e.0 == at) {
            self.removed += delta;
            self.edge += 1;
        }
        Some((at, self.base - self.removed))
    }

    /// Passes every whole chunk ahead, with no edge in it, whose least and most counts satisfy
    /// `pass`; returns the count after the last one passed.
    fn skip_chunks(&mut self, pass: impl Fn(i32, i32) -> bool) -> Option<i32> {
        let mut after = None;
        while let Some(p) = self.next.filter(|p| p.at == 0) {
            let chunk = &self.timeline.chunks[p.chunk];
            if self.edges.get(self.edge).is_some_and(|e| e.0 <= chunk.last_at()) || !pass(chunk.least - self.removed, chunk.most - self.removed) {
                break;
            }
            self.base = chunk.last_used();
            self.next = (p.chunk + 1 < self.timeline.chunks.len()).then_some(Pos { chunk: p.chunk + 1, at: 0 });
            after = Some(self.base - self.removed);
        }
        after
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
        assert_eq!(incremental.steps().collect::<Vec<_>>(), batch.steps().collect::<Vec<_>>());
    }
}
