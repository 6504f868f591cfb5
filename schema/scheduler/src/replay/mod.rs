//! Trace replay on virtual time: each job of a GPU cluster trace becomes a GPR and goes through
//! the scheduler core the gateway uses, with the gateway's lifecycle bounds: admitted, then
//! provisioned after a provisioning delay (its window ending no later than the admission plus
//! the provisioning allowance and its reserved duration), run for its recorded duration,
//! released (within the release allowance) and given back after a release delay. Nodes can fail
//! and come back. Reports utilisation, queueing delay, how good the promises and estimates given
//! at submission turned out to be, how often a promise moved later and why, and the same delays
//! under a like-for-like baseline (FIFO or EASY backfill with the same delays and the same
//! one-GPR-per-slice rule). `egs replay` reads the files and prints the report.

mod baseline;
mod report;

use super::{Config, Decision, GprId, NodeSpec, PoolKey, Request, Scheduler, SliceSpec, Time};
use baseline::run_baseline;
use report::report;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// How long a failed node stays out before it is repaired.
const REPAIR_SECS: Time = 4 * 3600;

/// One job of a trace (`job_id,submission_time,duration,num_gpu`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub id: String,
    pub submitted_at: Time,
    pub duration: Time,
    pub gpus: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// The EGS scheduler: priorities, fair share, conservative backfill with promises, one GPR
    /// per slice, aging.
    Egs,
    /// First come, first served: the first job that may start (its slice idle) and does not fit
    /// blocks everyone behind it.
    Fifo,
    /// EASY backfill as Slurm's backfill scheduler does it: priority order; the first job that
    /// does not fit gets a reservation from the running jobs' time limits, and later jobs start
    /// now if they fit and do not delay it. No promises.
    Easy,
}

impl Policy {
    fn name(self) -> &'static str {
        match self {
            Policy::Egs => "egs",
            Policy::Fifo => "fifo",
            Policy::Easy => "easy",
        }
    }
}

#[derive(Clone, Debug)]
pub struct ReplayConfig {
    pub nodes: u32,
    pub gpus_per_node: u32,
    pub slices: u32,
    /// Reserved window = duration × the job's reserve factor, rounded up to a minute.
    pub reserve_factor: f64,
    /// Each job's factor is drawn from its id, uniform in `[F − S, F + S]`, at least 1.
    pub reserve_spread: f64,
    /// How long provisioning really takes, and releasing.
    pub provisioning_delay: Time,
    pub release_delay: Time,
    /// What the scheduler plans for them (the gateway's allowances).
    pub provisioning_allowance: Time,
    pub release_allowance: Time,
    /// Node failures a day, at deterministic times and nodes; each is repaired after 4 h.
    pub failures_per_day: f64,
    /// Promises firm this far ahead against arrivals below the high band (see
    /// `Scheduler::set_firm_horizon`); `None`: none.
    pub firm_horizon: Option<Time>,
    pub policy: Policy,
}

impl ReplayConfig {
    /// The defaults of `egs replay` for `nodes` nodes.
    pub fn new(nodes: u32, policy: Policy) -> Self {
        Self {
            nodes,
            gpus_per_node: 8,
            slices: 1000,
            reserve_factor: 1.5,
            reserve_spread: 0.5,
            provisioning_delay: 60,
            release_delay: 30,
            provisioning_allowance: 600,
            release_allowance: 360,
            failures_per_day: 0.0,
            firm_horizon: None,
            policy,
        }
    }
}

/// Delay figures of one priority band.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BandDelays {
    pub jobs: usize,
    pub queue_delay_mean_s: f64,
    pub queue_delay_p95_s: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub policy: &'static str,
    pub jobs: usize,
    /// Jobs asking for more nodes than the replayed cluster has (left out).
    pub jobs_too_large: usize,
    /// Jobs not admitted at submission: the ones whose promise and estimate mean something.
    pub waited_jobs: usize,
    /// GPU-seconds the jobs used over GPU-seconds the cluster had, first arrival to last exit.
    pub gpu_utilization: f64,
    /// Node-seconds held (whole nodes, as GPRs hold them) over node-seconds available.
    pub node_allocation: f64,
    /// Admission minus submission, over all jobs (admitted at once count as 0).
    pub queue_delay_mean_s: f64,
    pub queue_delay_median_s: f64,
    pub queue_delay_p95_s: f64,
    /// The same, by priority band (`low` 1–100, `medium` 101–200, `high` 201–300).
    pub by_priority_band: BTreeMap<&'static str, BandDelays>,
    /// At equal priority (the medium band), the delays of jobs of the slices that used the least
    /// GPU time over the whole trace (`light`, the lightest third of the slices with medium
    /// jobs) and the most (`heavy`): what fair share buys the light ones.
    pub by_slice_usage: BTreeMap<&'static str, BandDelays>,
    /// Of the waited jobs, the share admitted no later than the `startNoLaterThan` given at
    /// submission.
    pub promise_kept_all: Option<f64>,
    /// The same among waited jobs with no later higher-ranked arrival before their start (a
    /// higher priority, or the same with more fair-share points).
    pub promise_kept_no_higher_arrival: Option<f64>,
    pub promise_kept_no_higher_arrival_jobs: usize,
    /// Alias of `promise_kept_no_higher_arrival` (its name before).
    pub estimate_upper_bound_held: Option<f64>,
    pub estimate_upper_bound_jobs: usize,
    /// Times any promise moved later for a cause outside docs/design.md §4.5, over the whole replay.
    pub promise_moved_later_without_cause: usize,
    /// Times promises moved later, by cause.
    pub promise_moved_later: BTreeMap<&'static str, usize>,
    /// Share of all jobs admitted within ±10 min of the `estimatedStartAt` given at submission
    /// (jobs admitted at once count as exact: see the `_waited` figures).
    pub estimate_within_10min: Option<f64>,
    /// The same among waited jobs only.
    pub estimate_within_10min_waited: Option<f64>,
    /// Median of |estimate − admission| / the real wait, among waited jobs.
    pub estimate_rel_error_median_waited: Option<f64>,
    /// Of the waited jobs, the share that started no later than the `startRange.p10` given at
    /// submission (calibrated: about 0.1), and no later than its `p90` (about 0.9).
    pub range_coverage_p10: Option<f64>,
    pub range_coverage_p90: Option<f64>,
    /// Median of (p90 − p10) / the real wait, among waited jobs.
    pub range_width_rel_median: Option<f64>,
    pub estimate_mae_s: Option<f64>,
    /// Shares that started more than 10 min after / before their estimate (all jobs).
    pub estimate_late_share: Option<f64>,
    pub estimate_early_share: Option<f64>,
    pub node_failures: usize,
    pub makespan_s: Time,
    pub max_pending: usize,
    pub passes: usize,
}

/// Deterministic 64-bit FNV-1a of the job id: slices, priorities and reserve factors follow.
fn fingerprint(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// A mixer (splitmix64), for draws that must not correlate with the other uses of a print.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Priority bands as in docs/design.md §3: 10 % high, 70 % medium, 20 % low.
fn priority_of(fingerprint: u64) -> i32 {
    match (fingerprint >> 40) % 10 {
        0 => 250,
        1 | 2 => 50,
        _ => 150,
    }
}

fn band(priority: i32) -> &'static str {
    match priority {
        ..=100 => "low",
        101..=200 => "medium",
        _ => "high",
    }
}

/// The job's reserve factor: uniform in `[F − S, F + S]` from its print, at least 1.
fn reserve_factor(print: u64, config: &ReplayConfig) -> f64 {
    let unit = (mix(print) >> 11) as f64 / (1u64 << 53) as f64;
    (config.reserve_factor + config.reserve_spread * (2.0 * unit - 1.0)).max(1.0)
}

struct Record {
    submitted_at: Time,
    priority: i32,
    slice: usize,
    nodes: u32,
    gpus: u32,
    /// How long the job really runs.
    duration: Time,
    /// Its reserved window.
    reserved: Time,
    /// Given at submission when it had to wait.
    promise: Option<Time>,
    estimate: Option<Time>,
    range: Option<super::StartRange>,
    /// Fair share's points when it was ranked (its rank: priority + these, within its band).
    bonus: i32,
    /// First admission.
    started_at: Option<Time>,
    /// The admission of its current run (for its provisioning bound).
    admitted_at: Time,
}

/// Runs `jobs` under `config.policy`.
pub fn run(jobs: &[Job], config: &ReplayConfig) -> Report {
    let gpn = config.gpus_per_node.max(1);
    let mut records = Vec::with_capacity(jobs.len());
    let mut too_large = 0;
    let mut sorted: Vec<&Job> = jobs.iter().collect();
    sorted.sort_by(|a, b| (a.submitted_at, &a.id).cmp(&(b.submitted_at, &b.id)));
    for job in sorted {
        let nodes = job.gpus.max(1).div_ceil(gpn);
        if nodes > config.nodes {
            too_large += 1;
            continue;
        }
        let print = fingerprint(&job.id);
        let duration = job.duration.max(1);
        let reserved = ((duration as f64 * reserve_factor(print, config) / 60.0).ceil() as Time * 60).max(60);
        records.push(Record {
            submitted_at: job.submitted_at,
            priority: priority_of(print),
            slice: (print % u64::from(config.slices.max(1))) as usize,
            nodes,
            gpus: job.gpus,
            duration,
            reserved,
            promise: None,
            estimate: None,
            range: None,
            bonus: 0,
            started_at: None,
            admitted_at: 0,
        });
    }
    let outcome = match config.policy {
        Policy::Egs => run_egs(&mut records, config),
        Policy::Fifo | Policy::Easy => run_baseline(&mut records, config),
    };
    report(config, records, too_large, outcome)
}

#[derive(Default)]
struct Outcome {
    passes: usize,
    max_pending: usize,
    failures: usize,
    moves: BTreeMap<&'static str, usize>,
    moves_without_cause: usize,
    /// The last instant a job held nodes (for the makespan).
    last_release: Time,
}

/// A lifecycle step due at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    /// Provisioning finished.
    Provisioned(GprId),
    /// The window ended or the job finished early: the release begins.
    Release(GprId),
    /// The release finished: the nodes are back.
    Done(GprId),
    /// A node fails; it is repaired later.
    Fail(u64),
    Repair(i64),
}

/// Failure `k`'s time and node (deterministic).
fn failure(k: u64, first: Time, config: &ReplayConfig) -> (Time, i64) {
    let interval = 86_400.0 / config.failures_per_day;
    let at = first + ((k as f64 + 0.5) * interval) as Time;
    (at, (mix(k ^ 0x5eed) % u64::from(config.nodes)) as i64)
}

fn run_egs(records: &mut [Record], config: &ReplayConfig) -> Outcome {
    let planning = Config::live(config.provisioning_allowance, config.release_allowance);
    let mut core = Scheduler::new(planning.clone());
    let pool = PoolKey { cluster: 1, instance_type: "replay".into(), gpu_shape: "GPU".into() };
    for id in 0..config.nodes {
        core.upsert_node(NodeSpec {
            id: id.into(),
            pool: pool.clone(),
            gpus: config.gpus_per_node,
            gpu_memory_mib: 81_920,
            healthy: true,
            rdma: false,
        });
    }
    for slice in 0..config.slices.max(1) {
        core.upsert_slice(SliceSpec { id: slice.into(), clusters: vec![1], evictable: false, shapes: Vec::new() });
    }
    core.set_firm_horizon(1, config.firm_horizon);
    let mut steps: BinaryHeap<Reverse<(Time, Step)>> = BinaryHeap::new();
    let first = records.first().map_or(0, |r| r.submitted_at);
    if config.failures_per_day > 0.0 {
        steps.push(Reverse((failure(0, first, config).0, Step::Fail(0))));
    }
    let mut out = Outcome::default();
    let (mut next, mut previous) = (0usize, Time::MIN);
    let carry_out = |decisions: Vec<Decision>, now: Time, records: &mut [Record], steps: &mut BinaryHeap<Reverse<(Time, Step)>>| {
        for decision in decisions {
            if let Decision::Admit { gpr, .. } = decision {
                let record = &mut records[gpr as usize];
                record.started_at.get_or_insert(now);
                record.admitted_at = now;
                steps.push(Reverse((now + config.provisioning_delay, Step::Provisioned(gpr))));
            }
        }
    };
    loop {
        let arrival = records.get(next).map(|r| r.submitted_at);
        let step = steps.peek().map(|Reverse((t, _))| *t);
        // Plans at or before the last instant handled were already admitted if they could be.
        let planned = core.next_planned_start(previous);
        let busy = next < records.len() || core.pending_len() + core.running_len() > 0;
        let Some(now) = [arrival, step.filter(|_| busy), planned].into_iter().flatten().min() else { break };
        while let Some(&Reverse((t, step))) = steps.peek()
            && t <= now
        {
            steps.pop();
            match step {
                Step::Provisioned(id) => {
                    let record = &records[id as usize];
                    let admitted = record.admitted_at;
                    // The exit timer: the reserved window, never past what admission planned.
                    let exit = (now + record.reserved).min(planning.latest_window_end(admitted, record.reserved));
                    core.mark_provisioned(id, exit, now);
                    core.predictor_mut().observe_provisioning(now - admitted);
                    steps.push(Reverse(((now + record.duration).min(exit), Step::Release(id))));
                }
                Step::Release(id) => {
                    core.start_release(id, now + config.release_allowance, now);
                    steps.push(Reverse((now + config.release_delay, Step::Done(id))));
                }
                Step::Done(id) => {
                    core.finish(id, now);
                    core.predictor_mut().observe_release(config.release_delay);
                    out.last_release = out.last_release.max(now);
                }
                Step::Fail(k) => {
                    let (_, node) = failure(k, first, config);
                    // Replacements and degraded GPRs are the core's business; nothing to carry out.
                    core.set_node_health(node, false, now);
                    out.failures += 1;
                    steps.push(Reverse((now + REPAIR_SECS, Step::Repair(node))));
                    steps.push(Reverse((failure(k + 1, first, config).0, Step::Fail(k + 1))));
                }
                Step::Repair(node) => {
                    core.set_node_health(node, true, now);
                }
            }
        }
        if core.is_dirty() || planned.is_some_and(|t| t <= now) {
            out.passes += 1;
            let decisions = core.plan(now);
            carry_out(decisions, now, records, &mut steps);
        }
        while let Some(record) = records.get(next)
            && record.submitted_at <= now
        {
            let id = next as GprId;
            next += 1;
            let request = Request {
                id,
                slice: record.slice as i64,
                nodes: record.nodes,
                gpus_per_node: None,
                min_gpu_memory_mib: None,
                gpu_shape: None,
                instance_type: None,
                preferred_clusters: Vec::new(),
                priority: record.priority,
                duration: record.reserved,
                earliest_start: None,
                submitted_at: record.submitted_at,
                preemptible: false,
                requeue: false,
                idle_timeout: None,
                rdma: false,
            };
            // A job larger than the healthy pool during a failure waits for the repair.
            let decisions = match core.submit(request.clone(), now) {
                Ok(decisions) => decisions,
                Err(_) => {
                    core.add_pending(request, None);
                    Vec::new()
                }
            };
            if let Some(status) = core.status(id) {
                records[id as usize].promise = status.start_no_later_than;
                records[id as usize].estimate = status.estimated_start;
                records[id as usize].range = status.start_range;
                records[id as usize].bonus = status.fair_share_bonus;
            }
            carry_out(decisions, now, records, &mut steps);
        }
        if core.is_dirty() {
            out.passes += 1;
            let decisions = core.plan(now);
            carry_out(decisions, now, records, &mut steps);
        }
        for m in core.take_moves() {
            let cause = match m.cause {
                super::Cause::HigherPriority { .. } => "higher_priority",
                super::Cause::FairShare { .. } => "fair_share",
                super::Cause::CapacityLost { .. } => "capacity_lost",
                super::Cause::Maintenance { .. } => "maintenance",
                super::Cause::OwnChange => "own_change",
                super::Cause::Overdue => "overdue",
            };
            *out.moves.entry(cause).or_default() += 1;
            out.moves_without_cause += usize::from(!m.cause.is_allowed());
        }
        out.max_pending = out.max_pending.max(core.pending_len());
        previous = now;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small synthetic trace: bursts of jobs of mixed sizes and lengths.
    fn trace(count: usize) -> Vec<Job> {
        (0..count)
            .map(|i| {
                let z = mix(i as u64);
                Job { id: format!("job-{i}"), submitted_at: (i as Time) * 400, duration: 600 + (z % 20_000) as Time, gpus: 1 << ((z >> 20) % 5) }
            })
            .collect()
    }

    #[test]
    fn the_replay_keeps_promises_through_provisioning_release_and_failures() {
        let jobs = trace(400);
        for failures in [0.0, 2.0] {
            let config = ReplayConfig { failures_per_day: failures, slices: 40, ..ReplayConfig::new(6, Policy::Egs) };
            let report = run(&jobs, &config);
            assert_eq!(report.jobs, 400);
            assert!(report.waited_jobs > 50, "the trace must make jobs wait: {report:?}");
            assert_eq!(report.promise_moved_later_without_cause, 0, "{report:?}");
            assert!(report.queue_delay_mean_s > 0.0);
            if failures > 0.0 {
                // Lost capacity may move promises (docs/design.md §4.5), and says so.
                assert!(report.node_failures > 0, "{report:?}");
                assert!(report.promise_moved_later.get("capacity_lost").is_some_and(|n| *n > 0), "{report:?}");
            } else {
                // Without failures, only a later higher-priority arrival can break a promise.
                assert_eq!(report.promise_kept_no_higher_arrival, Some(1.0), "{report:?}");
                assert!(!report.promise_moved_later.contains_key("capacity_lost"), "{report:?}");
            }
        }
    }

    #[test]
    fn baselines_run_every_job_with_the_same_delays_and_the_slice_rule() {
        let jobs = trace(300);
        for policy in [Policy::Fifo, Policy::Easy] {
            let report = run(&jobs, &ReplayConfig { slices: 30, ..ReplayConfig::new(6, policy) });
            assert_eq!(report.jobs, 300);
            assert_eq!(report.by_priority_band.values().map(|b| b.jobs).sum::<usize>(), 300, "{policy:?} left jobs unstarted");
            assert!(report.promise_kept_all.is_none());
        }
        // EASY backfills around the head: never worse on average than strict FIFO here.
        let fifo = run(&jobs, &ReplayConfig { slices: 30, ..ReplayConfig::new(6, Policy::Fifo) });
        let easy = run(&jobs, &ReplayConfig { slices: 30, ..ReplayConfig::new(6, Policy::Easy) });
        assert!(easy.queue_delay_mean_s <= fifo.queue_delay_mean_s, "easy {} fifo {}", easy.queue_delay_mean_s, fifo.queue_delay_mean_s);
    }

    #[test]
    fn reserve_factors_spread_around_the_mean_and_never_below_one() {
        let config = ReplayConfig { reserve_factor: 1.2, reserve_spread: 0.5, ..ReplayConfig::new(1, Policy::Egs) };
        let factors: Vec<f64> = (0..10_000u64).map(|i| reserve_factor(fingerprint(&i.to_string()), &config)).collect();
        assert!(factors.iter().all(|f| (1.0..=1.7).contains(f)));
        let above = factors.iter().filter(|f| **f > 1.45).count();
        assert!((2000..3000).contains(&above), "{above} of 10,000 above 1.45 (expected a quarter)");
    }
}
