//! The one backoff of every retry loop: the gateway's (the alert webhook, Redis
//! subscriptions, evictions held by a PodDisruptionBudget, auto-GPR) and the node agent's
//! (a gateway it cannot reach). Waits double from a first one up to a ceiling and start over
//! after a success. With [`Backoff::jittered`] each wait is drawn between half and all of that
//! ("equal jitter"): waits still grow and never collapse to zero, and agents that lost the
//! gateway together do not all come back in the same instant.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Backoff {
    first: Duration,
    max: Duration,
    failures: u32,
    jitter: Option<StdRng>,
}

impl Backoff {
    /// Waits of `first`, twice that, … up to `max`, exactly.
    pub const fn new(first: Duration, max: Duration) -> Self {
        Self { first, max, failures: 0, jitter: None }
    }

    /// Like [`Backoff::new`], each wait drawn between half and all of it; `seed` makes the
    /// draws reproducible.
    pub fn jittered(first: Duration, max: Duration, seed: u64) -> Self {
        Self { jitter: Some(StdRng::seed_from_u64(seed)), ..Self::new(first, max) }
    }

    /// The wait before the next try; counts a failure.
    pub fn next_delay(&mut self) -> Duration {
        let ceiling = self.first.saturating_mul(1u32 << self.failures.min(20)).min(self.max);
        self.failures = self.failures.saturating_add(1);
        match &mut self.jitter {
            None => ceiling,
            Some(rng) => {
                let half = ceiling / 2;
                half + Duration::from_nanos(rng.random_range(0..=(ceiling - half).as_nanos().min(u128::from(u64::MAX)) as u64))
            }
        }
    }

    /// Failures since the last success.
    pub fn failures(&self) -> u32 {
        self.failures
    }

    /// After a success: the next failure waits `first` again.
    pub fn reset(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_ceiling_and_start_over_after_a_reset() {
        let mut backoff = Backoff::new(Duration::from_millis(500), Duration::from_secs(3));
        let waits: Vec<u64> = (0..5).map(|_| backoff.next_delay().as_millis() as u64).collect();
        assert_eq!(waits, [500, 1000, 2000, 3000, 3000]);
        assert_eq!(backoff.failures(), 5);
        backoff.reset();
        assert_eq!(backoff.next_delay(), Duration::from_millis(500));
    }

    #[test]
    fn a_first_wait_over_the_ceiling_is_capped() {
        let mut backoff = Backoff::new(Duration::from_secs(10), Duration::from_secs(2));
        assert_eq!(backoff.next_delay(), Duration::from_secs(2));
    }

    #[test]
    fn jittered_waits_grow_between_half_and_all_of_the_ceiling() {
        let mut backoff = Backoff::jittered(Duration::from_millis(500), Duration::from_secs(30), 1);
        let delays: Vec<Duration> = (0..12).map(|_| backoff.next_delay()).collect();
        for (n, delay) in delays.iter().enumerate() {
            let ceiling = Duration::from_millis(500).saturating_mul(1 << n).min(Duration::from_secs(30));
            assert!(*delay >= ceiling / 2 && *delay <= ceiling, "try {n}: {delay:?} not in [{:?}, {ceiling:?}]", ceiling / 2);
        }
        assert!(delays[6..].iter().all(|d| *d >= Duration::from_secs(15)), "capped waits stay long: {delays:?}");
        let distinct: std::collections::HashSet<_> = delays[6..].iter().collect();
        assert!(distinct.len() > 1, "jitter spreads the capped waits: {delays:?}");
        assert_eq!(backoff.failures(), 12);
        backoff.reset();
        assert!(backoff.next_delay() <= Duration::from_millis(500));
    }

    #[test]
    fn the_same_seed_draws_the_same_waits() {
        let draw = |seed| {
            let mut backoff = Backoff::jittered(Duration::from_millis(100), Duration::from_secs(5), seed);
            (0..8).map(|_| backoff.next_delay()).collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
    }
}
