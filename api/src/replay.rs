//! `egs replay`: reads job traces and runs them through the scheduler core on virtual time.

use crate::settings::{ReplayArgs, ReplayBaseline, ReplayFormat, ReplayPolicy};
use anyhow::{Context, bail};
use egs_scheduler::replay::{self, Job, Policy, ReplayConfig};
use std::io::Read;
use std::path::Path;
use std::time::Instant;

/// Reads a trace: CSV with a `job_id,submission_time,duration,num_gpu` header, gzipped when
/// the file starts with the gzip magic bytes (whatever its name).
pub fn read_trace(path: &Path) -> anyhow::Result<Vec<Job>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read trace {}", path.display()))?;
    let text = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut text = String::new();
        flate2::read::MultiGzDecoder::new(&bytes[..]).read_to_string(&mut text).with_context(|| format!("{} is not valid gzip", path.display()))?;
        text
    } else {
        String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8 text", path.display()))?
    };
    parse_trace(&text).with_context(|| format!("in trace {}", path.display()))
}

#[derive(serde::Deserialize)]
struct Row {
    job_id: String,
    submission_time: f64,
    duration: f64,
    num_gpu: f64,
}

/// Parses trace CSV text; a bad row is an error naming its line.
pub fn parse_trace(text: &str) -> anyhow::Result<Vec<Job>> {
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(text.as_bytes());
    let headers = reader.headers().context("the trace has no header line")?.clone();
    for column in ["job_id", "submission_time", "duration", "num_gpu"] {
        if !headers.iter().any(|h| h == column) {
            bail!("the header lacks column `{column}` (expected job_id,submission_time,duration,num_gpu)");
        }
    }
    let mut jobs = Vec::new();
    for (index, row) in reader.deserialize::<Row>().enumerate() {
        let line = index + 2;
        let row = row.with_context(|| format!("line {line}"))?;
        // Bounds apply to the values as rounded, so what is kept always reads back.
        let valid = |x: f64, max: f64| (0.0..max).contains(&x);
        let (duration, gpus) = (row.duration.ceil(), row.num_gpu.ceil());
        if !valid(row.submission_time, 1e12) || !valid(duration, 1e12) || !valid(gpus, f64::from(u32::MAX)) {
            bail!("line {line}: times and durations must be non-negative numbers below 10^12, GPU counts below 2^32");
        }
        jobs.push(Job { id: row.job_id, submitted_at: row.submission_time as i64, duration: (duration as i64).max(1), gpus: (gpus as u32).max(1) });
    }
    Ok(jobs)
}

pub fn run(args: &ReplayArgs) -> anyhow::Result<String> {
    if !(args.reserve_factor.is_finite() && (1.0..=100.0).contains(&args.reserve_factor)) {
        bail!("--reserve-factor must be between 1 and 100 (a reservation shorter than the job would cut it off)");
    }
    if !(args.reserve_spread.is_finite() && (0.0..=10.0).contains(&args.reserve_spread)) {
        bail!("--reserve-spread must be between 0 and 10");
    }
    if !(args.failures_per_day.is_finite() && (0.0..=1000.0).contains(&args.failures_per_day)) {
        bail!("--failures-per-day must be between 0 and 1000");
    }
    let mut jobs = Vec::new();
    for path in &args.traces {
        jobs.extend(read_trace(path)?);
    }
    use egs_domain::lifecycle::state::{PROVISIONING_ALLOWANCE_SECS, RELEASE_ALLOWANCE_SECS};
    let config = |policy| ReplayConfig {
        nodes: args.nodes,
        gpus_per_node: args.gpus_per_node,
        slices: args.slices,
        reserve_factor: args.reserve_factor,
        reserve_spread: args.reserve_spread,
        provisioning_delay: args.provisioning_delay,
        release_delay: args.release_delay,
        // The gateway's own allowances: the replay plans as `egs serve` does.
        provisioning_allowance: PROVISIONING_ALLOWANCE_SECS,
        release_allowance: RELEASE_ALLOWANCE_SECS,
        failures_per_day: args.failures_per_day,
        firm_horizon: (args.firm_horizon > 0).then_some(args.firm_horizon),
        policy,
    };
    let started = Instant::now();
    let policy = match args.policy {
        ReplayPolicy::Egs => Policy::Egs,
        ReplayPolicy::Fifo => Policy::Fifo,
        ReplayPolicy::Easy => Policy::Easy,
    };
    let mut report = serde_json::to_value(replay::run(&jobs, &config(policy)))?;
    report["wall_s"] = serde_json::json!(started.elapsed().as_secs_f64());
    if args.policy == ReplayPolicy::Egs {
        // The same input under the baseline, so one run shows what the scheduler buys.
        let baseline = match args.baseline {
            ReplayBaseline::Fifo => Policy::Fifo,
            ReplayBaseline::Easy => Policy::Easy,
        };
        let baseline = serde_json::to_value(replay::run(&jobs, &config(baseline)))?;
        if args.baseline == ReplayBaseline::Fifo {
            report["baseline_fifo"] = baseline.clone();
        }
        report["baseline"] = baseline;
    }
    Ok(match args.format {
        ReplayFormat::Json => serde_json::to_string(&report)?,
        ReplayFormat::Pretty => serde_json::to_string_pretty(&report)?,
    })
}
