//! Warnings a flood of requests would repeat (the database unreachable, a pool exhausted):
//! logged once, then at most once per interval with how many were left out, so one user's
//! flood cannot fill the disk with the same line.

use std::sync::Mutex;
use std::time::{Duration, Instant};

pub struct Throttle {
    every: Duration,
    /// When the last one was logged, and how many were left out since.
    state: Mutex<(Option<Instant>, u64)>,
}

impl Throttle {
    pub const fn new(every: Duration) -> Self {
        Self { every, state: Mutex::new((None, 0)) }
    }

    /// `Some(left out since the last logged one)` when this one should be logged.
    pub fn admit(&self) -> Option<u64> {
        self.admit_at(Instant::now())
    }

    fn admit_at(&self, now: Instant) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (last, left_out) = &mut *state;
        if last.is_some_and(|at| now.saturating_duration_since(at) < self.every) {
            *left_out += 1;
            return None;
        }
        *last = Some(now);
        Some(std::mem::take(left_out))
    }
}

/// How often a repeated warning is logged at most.
pub const EVERY: Duration = Duration::from_secs(10);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_is_logged_then_one_per_interval_with_the_count_left_out() {
        let throttle = Throttle::new(Duration::from_secs(10));
        let start = Instant::now();
        assert_eq!(throttle.admit_at(start), Some(0));
        for n in 1..=1000 {
            assert_eq!(throttle.admit_at(start + Duration::from_millis(n)), None);
        }
        assert_eq!(throttle.admit_at(start + Duration::from_secs(10)), Some(1000));
        assert_eq!(throttle.admit_at(start + Duration::from_secs(11)), None);
        assert_eq!(throttle.admit_at(start + Duration::from_secs(25)), Some(1));
    }
}
