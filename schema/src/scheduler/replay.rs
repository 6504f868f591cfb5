//! Trace replay on virtual time: each job of a GPU cluster trace becomes a GPR, runs through
//! the same [`Scheduler`] the gateway uses, really runs for its recorded duration and is then
//! early-released. Reports utilisation, queueing delay and how good the estimates given at
//! submission turned out to be. `egs replay` reads the files and prints the report.

use super::{Config, Decision, NodeSpec, PoolKey, Request, Scheduler, SliceSpec, Time};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

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
    /// The EGS scheduler: priorities, fair share, conservative backfill, one GPR per slice.
    Egs,
    /// Plain first come, first served: the head of the queue blocks everyone behind it.
    Fifo,
}

#[derive(Clone, Debug)]
pub struct ReplayConfig {
    pub nodes: u32,
    pub gpus_per_node: u32,
    pub slices: u32,
    /// Reserved window = duration × this, rounded up to a minute.
    pub reserve_factor: f64,
    pub policy: Policy,
}

#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub policy: &'static str,
    pub jobs: usize,
    /// Jobs asking for more nodes than the replayed cluster has (left out).
    pub jobs_too_large: usize,
    /// GPU-seconds the jobs used over GPU-seconds the cluster had, first arrival to last exit.
    pub gpu_utilization: f64,
    /// Node-seconds held (whole nodes, as GPRs hold them) over node-seconds available.
    pub node_allocation: f64,
    pub queue_delay_mean_s: f64,
    pub queue_delay_median_s: f64,
    pub queue_delay_p95_s: f64,
    /// Among GPRs with no higher-priority arrival after them: the share that started no
    /// later than the `startNoLaterThan` they were given at submission.
    pub estimate_upper_bound_held: Option<f64>,
    pub estimate_upper_bound_jobs: usize,
    /// Share that started within ±10 min of the `estimatedStartAt` given at submission.
    pub estimate_within_10min: Option<f64>,
    pub estimate_mae_s: Option<f64>,
    /// Shares that started more than 10 min after / before their estimate.
    pub estimate_late_share: Option<f64>,
    pub estimate_early_share: Option<f64>,
    pub makespan_s: Time,
    pub max_pending: usize,
    pub passes: usize,
}

/// Deterministic 64-bit FNV-1a of the job id: slices and priorities follow from it.
fn fingerprint(id: &str) -> u64 {
    id.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// Priority bands as in DESIGN §3: 10 % high, 70 % medium, 20 % low.
fn priority_of(fingerprint: u64) -> i32 {
    match (fingerprint >> 40) % 10 {
        0 => 250,
        1 | 2 => 50,
        _ => 150,
    }
}

struct Record {
    submitted_at: Time,
    priority: i32,
    nodes: u32,
    gpus: u32,
    duration: Time,
    promise: Option<Time>,
    estimate: Option<Time>,
    started_at: Option<Time>,
}

pub fn run(jobs: &[Job], config: &ReplayConfig) -> Report {
    let gpn = config.gpus_per_node.max(1);
    let mut records = Vec::with_capacity(jobs.len());
    let mut too_large = 0;
    let mut sorted: Vec<&Job> = jobs.iter().collect();
    sorted.sort_by_key(|j| j.submitted_at);
    let mut requests = Vec::with_capacity(jobs.len());
    for job in sorted {
        let nodes = job.gpus.max(1).div_ceil(gpn);
        if nodes > config.nodes {
            too_large += 1;
            continue;
        }
        let print = fingerprint(&job.id);
        let reserved = ((job.duration.max(1) as f64 * config.reserve_factor / 60.0).ceil() as Time * 60).max(60);
        let id = records.len() as i64;
        let priority = priority_of(print);
        records.push(Record {
            submitted_at: job.submitted_at,
            priority,
            nodes,
            gpus: job.gpus,
            duration: job.duration.max(1),
            promise: None,
            estimate: None,
            started_at: None,
        });
        requests.push(Request {
            id,
            slice: (print % u64::from(config.slices.max(1))) as i64,
            nodes,
            gpus_per_node: None,
            min_gpu_memory_mib: None,
            gpu_shape: None,
            instance_type: None,
            preferred_clusters: Vec::new(),
            priority,
            duration: reserved,
            earliest_start: None,
            submitted_at: job.submitted_at,
            preemptible: false,
            requeue: false,
            idle_timeout: None,
        });
    }
    let (passes, max_pending) = match config.policy {
        Policy::Egs => run_egs(&requests, &mut records, config),
        Policy::Fifo => run_fifo(&requests, &mut records, config),
    };
    report(config, records, too_large, passes, max_pending)
}

fn run_egs(requests: &[Request], records: &mut [Record], config: &ReplayConfig) -> (usize, usize) {
    let mut scheduler = Scheduler::new(Config::default());
    let pool = PoolKey { cluster: 1, instance_type: "replay".into(), gpu_shape: "GPU".into() };
    for id in 0..config.nodes {
        scheduler.upsert_node(NodeSpec { id: id.into(), pool: pool.clone(), gpus: config.gpus_per_node, gpu_memory_mib: 81_920, healthy: true });
    }
    for slice in 0..config.slices.max(1) {
        scheduler.upsert_slice(SliceSpec { id: slice.into(), clusters: vec![1], evictable: false, shapes: Vec::new() });
    }
    let mut completions: BinaryHeap<Reverse<(Time, i64)>> = BinaryHeap::new();
    let (mut next, mut passes, mut max_pending) = (0usize, 0usize, 0usize);
    fn start(decisions: Vec<Decision>, now: Time, records: &mut [Record], completions: &mut BinaryHeap<Reverse<(Time, i64)>>) {
        for decision in decisions {
            if let Decision::Admit { gpr, .. } = decision {
                let record = &mut records[gpr as usize];
                record.started_at = Some(now);
                completions.push(Reverse((now + record.duration, gpr)));
            }
        }
    }
    let mut previous = Time::MIN;
    loop {
        let arrival = requests.get(next).map(|r| r.submitted_at);
        let completion = completions.peek().map(|Reverse((t, _))| *t);
        // Plans at or before the last instant handled were already admitted if they could be.
        let planned = scheduler.next_planned_start(previous);
        let Some(now) = [arrival, completion, planned].into_iter().flatten().min() else { break };
        let mut released = false;
        while let Some(Reverse((t, id))) = completions.peek().copied()
            && t <= now
        {
            completions.pop();
            scheduler.finish(id, now);
            released = true;
        }
        if released || scheduler.is_dirty() || planned.is_some_and(|t| t <= now) {
            passes += 1;
            let decisions = scheduler.plan(now);
            start(decisions, now, records, &mut completions);
        }
        while let Some(request) = requests.get(next)
            && request.submitted_at <= now
        {
            next += 1;
            let id = request.id;
            let decisions = scheduler.submit(request.clone(), now).unwrap_or_default();
            if let Some(status) = scheduler.status(id) {
                records[id as usize].promise = status.start_no_later_than;
                records[id as usize].estimate = status.estimated_start;
            } else {
                records[id as usize].promise = Some(now);
                records[id as usize].estimate = Some(now);
            }
            start(decisions, now, records, &mut completions);
        }
        if scheduler.is_dirty() {
            passes += 1;
            let decisions = scheduler.plan(now);
            start(decisions, now, records, &mut completions);
        }
        max_pending = max_pending.max(scheduler.pending_len());
        previous = now;
    }
    (passes, max_pending)
}

fn run_fifo(requests: &[Request], records: &mut [Record], config: &ReplayConfig) -> (usize, usize) {
    let mut free = config.nodes;
    let mut queue: VecDeque<usize> = VecDeque::new();
    let mut completions: BinaryHeap<Reverse<(Time, usize)>> = BinaryHeap::new();
    let (mut next, mut passes, mut max_pending) = (0usize, 0usize, 0usize);
    loop {
        let arrival = requests.get(next).map(|r| r.submitted_at);
        let completion = completions.peek().map(|Reverse((t, _))| *t);
        let Some(now) = [arrival, completion].into_iter().flatten().min() else { break };
        while let Some(Reverse((t, id))) = completions.peek().copied()
            && t <= now
        {
            completions.pop();
            free += records[id].nodes;
        }
        while let Some(request) = requests.get(next)
            && request.submitted_at <= now
        {
            queue.push_back(request.id as usize);
            next += 1;
        }
        passes += 1;
        while let Some(&head) = queue.front()
            && records[head].nodes <= free
        {
            queue.pop_front();
            free -= records[head].nodes;
            records[head].started_at = Some(now);
            completions.push(Reverse((now + records[head].duration, head)));
        }
        max_pending = max_pending.max(queue.len());
    }
    (passes, max_pending)
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn report(config: &ReplayConfig, records: Vec<Record>, too_large: usize, passes: usize, max_pending: usize) -> Report {
    let first = records.iter().map(|r| r.submitted_at).min().unwrap_or(0);
    let last = records.iter().filter_map(|r| r.started_at.map(|s| s + r.duration)).max().unwrap_or(first);
    let makespan = (last - first).max(1);
    let gpu_seconds: f64 = records.iter().filter(|r| r.started_at.is_some()).map(|r| f64::from(r.gpus) * r.duration as f64).sum();
    let node_seconds: f64 = records.iter().filter(|r| r.started_at.is_some()).map(|r| f64::from(r.nodes) * r.duration as f64).sum();
    let capacity = f64::from(config.nodes) * makespan as f64;
    let mut delays: Vec<f64> = records.iter().filter_map(|r| r.started_at.map(|s| (s - r.submitted_at) as f64)).collect();
    delays.sort_by(f64::total_cmp);
    let mean = delays.iter().sum::<f64>() / delays.len().max(1) as f64;

    // "No higher-priority arrival after it": the highest priority among arrivals after the job
    // and no later than its start, from a sparse table over arrival order.
    let n = records.len();
    let mut table: Vec<Vec<i32>> = vec![records.iter().map(|r| r.priority).collect()];
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
    let (mut bound_jobs, mut bound_held) = (0usize, 0usize);
    let (mut estimated, mut within, mut abs_error, mut late) = (0usize, 0usize, 0f64, 0usize);
    for (i, r) in records.iter().enumerate() {
        let Some(started) = r.started_at else { continue };
        if let Some(estimate) = r.estimate {
            estimated += 1;
            let error = (started - estimate).abs();
            within += usize::from(error <= 600);
            late += usize::from(started - estimate > 600);
            abs_error += error as f64;
        }
        if let Some(promise) = r.promise {
            let arrived_by_start = records.partition_point(|x| x.submitted_at <= started);
            if range_max(i + 1, arrived_by_start) <= r.priority {
                bound_jobs += 1;
                bound_held += usize::from(started <= promise);
            }
        }
    }
    let share = |part: usize, whole: usize| (whole > 0).then(|| part as f64 / whole as f64);
    Report {
        policy: match config.policy {
            Policy::Egs => "egs",
            Policy::Fifo => "fifo",
        },
        jobs: records.len(),
        jobs_too_large: too_large,
        gpu_utilization: gpu_seconds / (capacity * f64::from(config.gpus_per_node.max(1))),
        node_allocation: node_seconds / capacity,
        queue_delay_mean_s: mean,
        queue_delay_median_s: quantile(&delays, 0.5),
        queue_delay_p95_s: quantile(&delays, 0.95),
        estimate_upper_bound_held: share(bound_held, bound_jobs),
        estimate_upper_bound_jobs: bound_jobs,
        estimate_within_10min: share(within, estimated),
        estimate_mae_s: (estimated > 0).then(|| abs_error / estimated as f64),
        estimate_late_share: share(late, estimated),
        estimate_early_share: share(estimated - within - late, estimated),
        makespan_s: makespan,
        max_pending,
        passes,
    }
}
