//! How much of its reserved window a GPR is expected to use, learned from the windows the
//! system has seen end: per slice and shape when there is history, else per shape, else
//! everywhere, else a configured prior. Feeds `estimated_start` (never `start_no_later_than`).

use super::{SliceId, Time};
// Small integer and short string keys, hashed millions of times a pass: FxHash, not SipHash.
use rustc_hash::FxHashMap as HashMap;

/// Weight of the newest observation in the moving averages.
const ALPHA: f64 = 0.2;
/// Observations before a slice's own average is trusted over the wider ones.
const TRUST_AFTER: u32 = 3;

/// Moving averages of used and reserved seconds; their quotient weighs long windows more
/// than short ones, which is what matters for how long others wait.
#[derive(Clone, Copy, Debug, Default)]
struct Average {
    used: f64,
    reserved: f64,
    count: u32,
}

impl Average {
    fn add(&mut self, used: f64, reserved: f64) {
        let keep = if self.count == 0 { 0.0 } else { 1.0 - ALPHA };
        self.used = keep * self.used + used;
        self.reserved = keep * self.reserved + reserved;
        self.count = self.count.saturating_add(1);
    }

    fn trusted(&self) -> Option<f64> {
        (self.count >= TRUST_AFTER && self.reserved > 0.0).then(|| self.used / self.reserved)
    }
}

/// Windows are grouped by length (powers of two of minutes): people over-reserve a
/// ten-minute job differently from a ten-hour one.
fn length_class(reserved: Time) -> u32 {
    (reserved.max(60) as u64 / 60).ilog2()
}

/// Averages for one GPU shape. Keyed by shape first so a lookup borrows the `&str` instead
/// of building a `String` key (the planner asks once per GPR and pool).
#[derive(Clone, Debug, Default)]
struct ShapeHistory {
    by_slice: HashMap<(SliceId, u32), Average>,
    by_length: HashMap<u32, Average>,
}

/// A moving average of seconds, starting from a prior until something is observed.
#[derive(Clone, Copy, Debug)]
struct Seconds {
    mean: f64,
    observed: bool,
}

impl Seconds {
    fn prior(seconds: Time) -> Self {
        Self { mean: seconds.max(0) as f64, observed: false }
    }

    fn add(&mut self, seconds: Time) {
        let seconds = seconds.max(0) as f64;
        self.mean = if self.observed { (1.0 - ALPHA) * self.mean + ALPHA * seconds } else { seconds };
        self.observed = true;
    }

    fn get(&self) -> Time {
        self.mean.ceil() as Time
    }
}

#[derive(Clone, Debug)]
pub struct UsagePredictor {
    prior: f64,
    by_shape: HashMap<String, ShapeHistory>,
    by_length: HashMap<u32, Average>,
    overall: Average,
    /// How long provisioning and releases take, as observed (for estimates, not promises).
    provisioning: Seconds,
    release: Seconds,
}

impl UsagePredictor {
    pub fn new(prior: f64) -> Self {
        Self {
            prior: prior.clamp(0.0, 1.0),
            by_shape: HashMap::default(),
            by_length: HashMap::default(),
            overall: Average::default(),
            provisioning: Seconds::prior(0),
            release: Seconds::prior(0),
        }
    }

    /// A provisioning took `seconds`.
    pub fn observe_provisioning(&mut self, seconds: Time) {
        self.provisioning.add(seconds);
    }

    /// A release took `seconds`.
    pub fn observe_release(&mut self, seconds: Time) {
        self.release.add(seconds);
    }

    /// Expected seconds of provisioning and of release.
    pub fn expected_overheads(&self) -> (Time, Time) {
        (self.provisioning.get(), self.release.get())
    }

    /// Expected seconds of provisioning plus release around a window.
    pub fn expected_overhead(&self) -> Time {
        self.provisioning.get() + self.release.get()
    }

    /// A window of `reserved` seconds ended after `used` seconds.
    pub fn observe(&mut self, slice: SliceId, shape: &str, used: Time, reserved: Time) {
        if reserved <= 0 {
            return;
        }
        let class = length_class(reserved);
        let (used, reserved) = (used.clamp(0, reserved) as f64, reserved as f64);
        let history = match self.by_shape.get_mut(shape) {
            Some(history) => history,
            None => self.by_shape.entry(shape.to_owned()).or_default(),
        };
        history.by_slice.entry((slice, class)).or_default().add(used, reserved);
        history.by_length.entry(class).or_default().add(used, reserved);
        self.by_length.entry(class).or_default().add(used, reserved);
        self.overall.add(used, reserved);
    }

    /// Expected share of a `reserved`-second window used, in `[0, 1]`.
    pub fn ratio(&self, slice: SliceId, shape: &str, reserved: Time) -> f64 {
        let class = length_class(reserved);
        let history = self.by_shape.get(shape);
        history
            .and_then(|h| h.by_slice.get(&(slice, class)))
            .and_then(Average::trusted)
            .or_else(|| history.and_then(|h| h.by_length.get(&class)).and_then(Average::trusted))
            .or_else(|| self.by_length.get(&class).and_then(Average::trusted))
            .or_else(|| self.overall.trusted())
            .unwrap_or(self.prior)
    }

    /// Expected seconds used of a `reserved`-second window (at least one second).
    pub fn expected_use(&self, slice: SliceId, shape: &str, reserved: Time) -> Time {
        ((reserved as f64 * self.ratio(slice, shape, reserved)).ceil() as Time).clamp(1.min(reserved), reserved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_per_slice_and_falls_back_to_wider_history() {
        let mut p = UsagePredictor::new(1.0);
        assert_eq!(p.expected_use(1, "H100", 3600), 3600);
        for _ in 0..3 {
            p.observe(1, "H100", 1800, 3600);
        }
        assert_eq!(p.expected_use(1, "H100", 3600), 1800);
        // Slice 2 has no history of its own: the shape's average stands in.
        assert_eq!(p.expected_use(2, "H100", 3600), 1800);
        assert_eq!(p.expected_use(2, "A100", 100), 50);
    }
}
