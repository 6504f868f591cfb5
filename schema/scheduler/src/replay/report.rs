//! The replay's report: delays, promises and estimates as they turned out, by band and by
//! slice usage, beside the baseline's.

use super::*;
use crate::quantile;

fn delays_of<'a>(records: impl Iterator<Item = &'a Record>) -> Vec<f64> {
    let mut delays: Vec<f64> = records.filter_map(|r| r.started_at.map(|s| (s - r.submitted_at) as f64)).collect();
    delays.sort_by(f64::total_cmp);
    delays
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

pub(super) fn report(config: &ReplayConfig, records: Vec<Record>, too_large: usize, out: Outcome) -> Report {
    let first = records.iter().map(|r| r.submitted_at).min().unwrap_or(0);
    let last = out.last_release.max(first);
    let makespan = (last - first).max(1);
    let gpu_seconds: f64 = records.iter().filter(|r| r.started_at.is_some()).map(|r| f64::from(r.gpus) * r.duration as f64).sum();
    let node_seconds: f64 = records.iter().filter(|r| r.started_at.is_some()).map(|r| f64::from(r.nodes) * r.duration as f64).sum();
    let capacity = f64::from(config.nodes) * makespan as f64;
    let delays = delays_of(records.iter());
    let mut by_priority_band = BTreeMap::new();
    for name in ["low", "medium", "high"] {
        let band_delays = delays_of(records.iter().filter(|r| band(r.priority) == name));
        by_priority_band.insert(
            name,
            BandDelays { jobs: band_delays.len(), queue_delay_mean_s: mean(&band_delays), queue_delay_p95_s: quantile(&band_delays, 0.95) },
        );
    }

    let mut used_by_slice: BTreeMap<usize, f64> = BTreeMap::new();
    for r in &records {
        *used_by_slice.entry(r.slice).or_default() += f64::from(r.gpus) * r.duration as f64;
    }
    let mut medium_slices: Vec<(f64, usize)> = used_by_slice
        .iter()
        .filter(|(slice, _)| records.iter().any(|r| r.slice == **slice && band(r.priority) == "medium"))
        .map(|(s, u)| (*u, *s))
        .collect();
    medium_slices.sort_by(|a, b| a.0.total_cmp(&b.0));
    let third = medium_slices.len() / 3;
    let light: std::collections::BTreeSet<usize> = medium_slices[..third].iter().map(|x| x.1).collect();
    let heavy: std::collections::BTreeSet<usize> = medium_slices[medium_slices.len() - third..].iter().map(|x| x.1).collect();
    let mut by_slice_usage = BTreeMap::new();
    for (name, set) in [("light", &light), ("heavy", &heavy)] {
        let delays = delays_of(records.iter().filter(|r| band(r.priority) == "medium" && set.contains(&r.slice)));
        by_slice_usage.insert(name, BandDelays { jobs: delays.len(), queue_delay_mean_s: mean(&delays), queue_delay_p95_s: quantile(&delays, 0.95) });
    }

    // "No higher-priority arrival after it": the highest rank (priority with fair share's points)
    // among arrivals after the job and no later than its start, from a sparse table over
    // arrival order.
    let rank = |r: &Record| (r.priority + r.bonus).min(crate::band_top(r.priority));
    let n = records.len();
    let mut table: Vec<Vec<i32>> = vec![records.iter().map(rank).collect()];
    let mut span = 1;
    while span * 2 <= n {
        let previous = &table[table.len() - 1];
        let row = (0..=n - span * 2).map(|i| previous[i].max(previous[i + span])).collect();
        table.push(row);
        span *= 2;
    }
    let range_max = |from: usize, to: usize| -> i32 {
        // Highest priority among arrivals [from, to).
        if from >= to {
            return i32::MIN;
        }
        let level = (usize::BITS - 1 - (to - from).leading_zeros()) as usize;
        table[level][from].max(table[level][to - (1 << level)])
    };
    let (mut waited, mut kept, mut clean_jobs, mut clean_kept) = (0usize, 0usize, 0usize, 0usize);
    let (mut within_waited, mut rel_errors) = (0usize, Vec::new());
    let (mut ranged, mut below_p10, mut below_p90, mut widths) = (0usize, 0usize, 0usize, Vec::new());
    let (mut estimated, mut within, mut abs_error, mut late) = (0usize, 0usize, 0f64, 0usize);
    for (i, r) in records.iter().enumerate() {
        let Some(started) = r.started_at else { continue };
        if config.policy != Policy::Egs {
            continue;
        }
        // Admitted at once: its estimate was exact by construction.
        let estimate = r.estimate.unwrap_or(r.submitted_at);
        estimated += 1;
        let error = (started - estimate).abs();
        within += usize::from(error <= 600);
        late += usize::from(started - estimate > 600);
        abs_error += error as f64;
        let Some(promise) = r.promise else { continue };
        waited += 1;
        kept += usize::from(started <= promise);
        within_waited += usize::from(error <= 600);
        let wait = (started - r.submitted_at).max(1);
        rel_errors.push(error as f64 / wait as f64);
        if let Some(range) = r.range {
            ranged += 1;
            below_p10 += usize::from(started <= range.p10);
            below_p90 += usize::from(started <= range.p90);
            widths.push((range.p90 - range.p10) as f64 / wait as f64);
        }
        let arrived_by_start = records.partition_point(|x| x.submitted_at <= started);
        if range_max(i + 1, arrived_by_start) <= rank(r) {
            clean_jobs += 1;
            clean_kept += usize::from(started <= promise);
        }
    }
    rel_errors.sort_by(f64::total_cmp);
    widths.sort_by(f64::total_cmp);
    let share = |part: usize, whole: usize| (whole > 0).then(|| part as f64 / whole as f64);
    Report {
        policy: config.policy.name(),
        jobs: records.len(),
        jobs_too_large: too_large,
        waited_jobs: if config.policy == Policy::Egs { waited } else { delays.iter().filter(|d| **d > 0.0).count() },
        gpu_utilization: gpu_seconds / (capacity * f64::from(config.gpus_per_node.max(1))),
        node_allocation: node_seconds / capacity,
        queue_delay_mean_s: mean(&delays),
        queue_delay_median_s: quantile(&delays, 0.5),
        queue_delay_p95_s: quantile(&delays, 0.95),
        by_priority_band,
        by_slice_usage,
        promise_kept_all: share(kept, waited),
        promise_kept_no_higher_arrival: share(clean_kept, clean_jobs),
        promise_kept_no_higher_arrival_jobs: clean_jobs,
        estimate_upper_bound_held: share(clean_kept, clean_jobs),
        estimate_upper_bound_jobs: clean_jobs,
        promise_moved_later_without_cause: out.moves_without_cause,
        promise_moved_later: out.moves,
        estimate_within_10min: share(within, estimated),
        estimate_within_10min_waited: share(within_waited, waited),
        estimate_rel_error_median_waited: (!rel_errors.is_empty()).then(|| quantile(&rel_errors, 0.5)),
        range_coverage_p10: share(below_p10, ranged),
        range_coverage_p90: share(below_p90, ranged),
        range_width_rel_median: (!widths.is_empty()).then(|| quantile(&widths, 0.5)),
        estimate_mae_s: (estimated > 0).then(|| abs_error / estimated as f64),
        estimate_late_share: share(late, estimated),
        estimate_early_share: share(estimated - within - late, estimated),
        node_failures: out.failures,
        makespan_s: makespan,
        max_pending: out.max_pending,
        passes: out.passes,
    }
}
