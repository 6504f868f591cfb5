//! The one backoff of the gateway's retry loops (the alert webhook, Redis subscriptions,
//! evictions held by a PodDisruptionBudget, auto-GPR): waits that double from a first one up
//! to a ceiling, and start over after a success.

use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Backoff {
    first: Duration,
    max: Duration,
    next: Duration,
}

impl Backoff {
    pub const fn new(first: Duration, max: Duration) -> Self {
        Self { first, max, next: first }
    }

    /// The wait before the next try: `first`, then twice the one before, at most `max`.
    pub fn next_delay(&mut self) -> Duration {
        let wait = self.next.min(self.max);
        self.next = wait.saturating_mul(2).min(self.max);
        wait
    }

    /// After a success: the next failure waits `first` again.
    pub fn reset(&mut self) {
        self.next = self.first;
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
        backoff.reset();
        assert_eq!(backoff.next_delay(), Duration::from_millis(500));
    }

    #[test]
    fn a_first_wait_over_the_ceiling_is_capped() {
        let mut backoff = Backoff::new(Duration::from_secs(10), Duration::from_secs(2));
        assert_eq!(backoff.next_delay(), Duration::from_secs(2));
    }
}
