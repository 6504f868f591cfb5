//! The scheduler's tick durations as a gateway exports them (`egs_scheduler_tick_duration_seconds`),
//! for benchmarks that report how the tick held up while they ran.

use crate::TestApp;

/// One scrape of the histogram: count, sum and the cumulative buckets `(le, count)`.
#[derive(Clone, Debug, Default)]
pub struct Ticks {
    count: f64,
    sum: f64,
    buckets: Vec<(f64, f64)>,
}

impl Ticks {
    /// Reads the histogram off `app`'s `/metrics` (as its admin).
    pub async fn scrape(app: &TestApp) -> Ticks {
        Ticks::parse(&app.metrics_text().await)
    }

    pub fn parse(text: &str) -> Ticks {
        let value = |line: &str| line.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        let mut ticks = Ticks::default();
        for line in text.lines() {
            if line.starts_with("egs_scheduler_tick_duration_seconds_count") {
                ticks.count = value(line);
            } else if line.starts_with("egs_scheduler_tick_duration_seconds_sum") {
                ticks.sum = value(line);
            } else if let Some(rest) = line.strip_prefix("egs_scheduler_tick_duration_seconds_bucket{le=\"") {
                let le = rest.split('"').next().unwrap_or("");
                ticks.buckets.push((le.parse().unwrap_or(f64::INFINITY), value(line)));
            }
        }
        ticks
    }

    /// The ticks between `self` (earlier) and `later`, as one printable line: how many, their
    /// mean, and the bucket bounds under which half and 99 % of them fell.
    pub fn since(&self, later: &Ticks) -> String {
        let n = later.count - self.count;
        let mean = if n > 0.0 { (later.sum - self.sum) / n * 1000.0 } else { f64::NAN };
        let bound = |q: f64| {
            let total = later.buckets.last().map_or(0.0, |b| b.1) - self.buckets.last().map_or(0.0, |b| b.1);
            later
                .buckets
                .iter()
                .enumerate()
                .find(|(i, (_, c))| c - self.buckets.get(*i).map_or(0.0, |b| b.1) >= q * total)
                .map_or(f64::INFINITY, |(_, (le, _))| le * 1000.0)
        };
        let p99 = bound(0.99);
        format!(
            "{n:>5.0} ticks  mean {mean:>6.1} ms  p50 <= {:.1} ms  p99 <= {p99:.1} ms  (target <= 50 ms {})",
            bound(0.5),
            if p99 <= 50.0 { "✔" } else { "✘" }
        )
    }
}
