//! How much of its reserved window a GPR is expected to use, learned from the windows the
//! system has seen end: per slice and shape when there is history, else per shape, else
//! everywhere, else a configured prior. Feeds `estimated_start` (never `start_no_later_than`).

use super::{SliceId, StartRange, Time};
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

/// Observations the wait calibration keeps per priority band (the newest).
const CALIBRATION_KEPT: usize = 200;
/// Observations before a band's own are used (before, every band's together, then the prior).
const CALIBRATION_TRUST: usize = 20;
/// Seconds added to both waits before their ratio is taken, so that a wait foreseen as "now"
/// that took a few minutes does not read as an error of a thousand times.
const WAIT_CUSHION: f64 = 300.0;
/// Before anything is learned: the range is from this share of the expected wait to the
/// promise.
const PRIOR_LOW: f64 = 0.3;

/// Ratios of actual to foreseen waits, newest last, with their quantiles worked out once per
/// change (read by every estimate of a pass, written a few times a pass).
#[derive(Clone, Debug, Default)]
struct Ratios {
    newest: std::collections::VecDeque<f64>,
    /// p10, p50 and p90 of `newest`, once asked for since the last change.
    quantiles: std::sync::OnceLock<Option<[f64; 3]>>,
}

impl Ratios {
    fn add(&mut self, ratio: f64) {
        if self.newest.len() == CALIBRATION_KEPT {
            self.newest.pop_front();
        }
        self.newest.push_back(ratio);
        self.quantiles = std::sync::OnceLock::new();
    }

    fn quantiles(&self) -> Option<[f64; 3]> {
        *self.quantiles.get_or_init(|| {
            if self.newest.len() < CALIBRATION_TRUST {
                return None;
            }
            let mut sorted: Vec<f64> = self.newest.iter().copied().collect();
            sorted.sort_by(f64::total_cmp);
            Some([0.1, 0.5, 0.9].map(|q| crate::quantile(&sorted, q)))
        })
    }
}

/// How the estimator's foreseen waits turned out, per priority band: each GPR that waited adds
/// the ratio of its actual wait to the wait foreseen when it was submitted (both cushioned by
/// [`WAIT_CUSHION`]). A range is the foreseen wait scaled by the 10th, 50th and 90th
/// percentiles of those ratios, so it is calibrated by construction on the gateway's own
/// history, whatever the estimator misses (windows ended early, higher-priority arrivals, the
/// queue reordered by fair share). Until a band has enough history, every band's together is
/// used, and before that a wide prior.
#[derive(Clone, Debug, Default)]
pub struct WaitCalibration {
    by_band: [Ratios; 3],
    all: Ratios,
}

fn band_of(priority: i32) -> usize {
    match priority {
        ..=100 => 0,
        101..=200 => 1,
        _ => 2,
    }
}

impl WaitCalibration {
    /// A GPR of `priority` foreseen to wait `foreseen` seconds waited `actual`.
    pub fn observe(&mut self, priority: i32, foreseen: Time, actual: Time) {
        let ratio = (actual.max(0) as f64 + WAIT_CUSHION) / (foreseen.max(0) as f64 + WAIT_CUSHION);
        self.by_band[band_of(priority)].add(ratio);
        self.all.add(ratio);
    }

    /// How many waits it has learned from.
    pub fn observed(&self) -> usize {
        self.all.newest.len()
    }

    /// The range for a GPR of `priority` whose estimator expects it to start at `expected` and
    /// promises `promise` (`None`: not planned). `p10` and `p50` are never after the promise,
    /// which holds unless a higher-priority GPR arrives; `p90` may be, when such arrivals have
    /// delayed GPRs like it before.
    pub fn range(&self, priority: i32, now: Time, expected: Time, promise: Option<Time>) -> StartRange {
        let expected = expected.max(now);
        let wait = (expected - now) as f64;
        let learned = self.by_band[band_of(priority)].quantiles().or_else(|| self.all.quantiles());
        let [p10, p50, p90] = match learned {
            Some(ratios) => ratios.map(|r| now + ((wait + WAIT_CUSHION) * r - WAIT_CUSHION).max(0.0).round() as Time),
            None => [now + (wait * PRIOR_LOW).round() as Time, expected, promise.unwrap_or(expected + wait as Time).max(expected)],
        };
        let cap = promise.unwrap_or(Time::MAX);
        let p50 = p50.min(cap).max(now);
        StartRange { p10: p10.min(p50).max(now), p50, p90: p90.max(p50) }
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

    #[test]
    fn the_wait_range_starts_wide_and_learns_how_waits_turned_out() {
        let mut calibration = WaitCalibration::default();
        // Nothing learned: from 30 % of the expected wait to the promise.
        let prior = calibration.range(150, 0, 3_600, Some(7_200));
        assert_eq!(prior, StartRange { p10: 1_080, p50: 3_600, p90: 7_200 });
        // Waits came out between 0.8 and 1.2 times what was foreseen (cushion included).
        for i in 0..100 {
            let ratio = 0.8 + 0.4 * f64::from(i) / 99.0;
            let foreseen = 3_600;
            let actual = ((foreseen as f64 + WAIT_CUSHION) * ratio - WAIT_CUSHION) as Time;
            calibration.observe(150, foreseen, actual);
        }
        let learned = calibration.range(150, 0, 3_600, Some(7_200));
        assert!(learned.p90 - learned.p10 < prior.p90 - prior.p10, "narrower: {learned:?}");
        assert!((3_500..=3_700).contains(&learned.p50), "{learned:?}");
        assert!(learned.p10 < learned.p50 && learned.p50 < learned.p90, "{learned:?}");
        // Another band with no history of its own borrows every band's.
        assert_eq!(calibration.range(250, 0, 3_600, Some(7_200)), learned);
        // The middle never passes the promise; the top may (arrivals ahead).
        let tight = calibration.range(150, 0, 3_600, Some(3_600));
        assert!(tight.p50 <= 3_600 && tight.p90 >= tight.p50, "{tight:?}");
    }
}
