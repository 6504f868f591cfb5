#![allow(clippy::needless_range_loop)]
//! Scheduler core throughput and latency (DESIGN §7): a full re-plan, submit → decision,
//! "Get wait time" across all pools, and the pending queue's operations, on a busy inventory.
//!
//! `cargo bench -p egs-tests --bench scheduler`
//!
//! The state: 5,000 nodes (8 GPUs each) in 50 pools — 10 clusters × 5 GPU shapes, 100 nodes a
//! pool — and 1,000 slices on 1–10 clusters each. Every slice runs one GPR, so about 90 % of
//! every pool is held; 10,000 GPRs wait (priorities 1–300, 1–8 nodes, windows of 1 h to 3
//! days, a shape for 80 % of them). Numbers are printed, one line per metric with its
//! target; nothing is asserted. `EGS_BENCH_SEED` changes the generated state.

/// The same allocator as the `egs` binary, so the numbers are the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use egs_schema::scheduler::{Config, Decision, Holding, NodeSpec, PendingQueue, PoolKey, QueueKey, Request, RunningSpec, Scheduler, SliceSpec, Time};
use std::hint::black_box;
use std::time::{Duration, Instant};

const CLUSTERS: i64 = 10;
const SHAPES: [(&str, &str, i64); 5] = [
    ("H100", "p5.48xlarge", 81_920),
    ("A100", "p4d.24xlarge", 40_960),
    ("L40S", "g6e.48xlarge", 49_152),
    ("B200", "p6-b200.48xlarge", 184_320),
    ("H200", "p5e.48xlarge", 143_360),
];
const NODES_PER_POOL: i64 = 100;
const GPUS_PER_NODE: u32 = 8;
const SLICES: i64 = 1_000;
const PENDING: i64 = 10_000;
/// Share of each pool the running GPRs hold.
const BUSY: f64 = 0.9;
const PLAN_RUNS: usize = 25;
const SUBMITS: usize = 5_000;
const WAIT_QUERIES: usize = 500;
const QUEUE_KEYS: usize = 10_000;
const NOW: Time = 1_700_000_000;
const HOUR: Time = 3600;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

fn pool_key(cluster: i64, shape: usize) -> PoolKey {
    PoolKey { cluster, instance_type: SHAPES[shape].1.into(), gpu_shape: SHAPES[shape].0.into() }
}

struct World {
    core: Scheduler,
    slices: Vec<Vec<i64>>,
    rng: Rng,
    next_id: i64,
}

impl World {
    fn request(&mut self, slice: i64, at: Time) -> Request {
        let id = self.next_id;
        self.next_id += 1;
        let rng = &mut self.rng;
        let gpu_shape = rng.chance(0.8).then(|| SHAPES[rng.range(0, SHAPES.len() as i64 - 1) as usize].0.to_owned());
        Request {
            id,
            slice,
            nodes: rng.range(1, 8) as u32,
            gpus_per_node: None,
            min_gpu_memory_mib: None,
            gpu_shape,
            instance_type: None,
            preferred_clusters: Vec::new(),
            priority: rng.range(1, 300) as i32,
            duration: rng.range(HOUR, 72 * HOUR),
            earliest_start: None,
            submitted_at: at,
            preemptible: rng.chance(0.3),
            requeue: rng.chance(0.5),
            idle_timeout: None,
        }
    }

    fn random_slice(&mut self) -> i64 {
        self.rng.range(1, SLICES)
    }
}

fn build(seed: u64, config: Config) -> World {
    let mut core = Scheduler::new(config);
    let mut rng = Rng(seed | 1);
    let mut node = 0;
    for cluster in 1..=CLUSTERS {
        for shape in 0..SHAPES.len() {
            for _ in 0..NODES_PER_POOL {
                node += 1;
                core.upsert_node(NodeSpec {
                    id: node,
                    pool: pool_key(cluster, shape),
                    gpus: GPUS_PER_NODE,
                    gpu_memory_mib: SHAPES[shape].2,
                    healthy: true,
                });
            }
        }
    }
    let mut slices = Vec::new();
    for id in 1..=SLICES {
        let mut clusters: Vec<i64> = (1..=CLUSTERS).collect();
        for i in (1..clusters.len()).rev() {
            clusters.swap(i, rng.range(0, i as i64) as usize);
        }
        clusters.truncate(rng.range(1, CLUSTERS) as usize);
        clusters.sort_unstable();
        core.upsert_slice(SliceSpec { id, clusters: clusters.clone(), evictable: rng.chance(0.5), shapes: Vec::new() });
        slices.push(clusters);
    }
    let mut world = World { core, slices, rng, next_id: 1 };

    // Running: one GPR per slice, packed into pools of its clusters until each is ~90 % held.
    let mut node_base = 0;
    let mut free_slices: Vec<i64> = (1..=SLICES).collect();
    for cluster in 1..=CLUSTERS {
        for shape in 0..SHAPES.len() {
            let mut used = 0i64;
            let target = (NODES_PER_POOL as f64 * BUSY) as i64;
            while used < target {
                let Some(pos) = free_slices.iter().position(|s| world.slices[*s as usize - 1].contains(&cluster)) else { break };
                let slice = free_slices.remove(pos);
                let mut request = world.request(slice, NOW - 2 * HOUR);
                request.nodes = request.nodes.min((target - used) as u32);
                request.gpu_shape = Some(SHAPES[shape].0.into());
                let started_at = NOW - world.rng.range(0, 12 * HOUR);
                let ends_at = (started_at + request.duration).max(NOW + HOUR);
                let nodes: Vec<i64> = (node_base + used + 1..=node_base + used + i64::from(request.nodes)).collect();
                used += i64::from(request.nodes);
                world.core.add_running(RunningSpec {
                    request,
                    pool: pool_key(cluster, shape),
                    nodes,
                    started_at,
                    ends_at,
                    holding: Holding::Provisioned,
                });
            }
            node_base += NODES_PER_POOL;
        }
    }
    // Pending: 10,000 GPRs restored without plans; the first pass plans them all.
    for i in 0..PENDING {
        let slice = world.random_slice();
        let request = world.request(slice, NOW - 3 * HOUR + i);
        world.core.add_pending(request, None);
    }
    world
}

fn quantile(sorted: &[Duration], q: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn line(metric: &str, value: String, target: &str) {
    println!("{metric:<44} {value:>22}   target {target}");
}

fn main() {
    let seed = std::env::var("EGS_BENCH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5EED_CAFE);
    let started = Instant::now();
    // The gateway's planning: provisioning and release allowances, aging.
    let live = Config::live(egs_schema::lifecycle::state::PROVISIONING_ALLOWANCE_SECS, egs_schema::lifecycle::state::RELEASE_ALLOWANCE_SECS);
    let mut world = build(seed, live.clone());
    let built = started.elapsed();
    let t = Instant::now();
    let first = world.core.plan(NOW);
    let cold = t.elapsed();
    let admitted = first.iter().filter(|d| matches!(d, Decision::Admit { .. })).count();
    println!(
        "scheduler bench: {} nodes in {} pools on {CLUSTERS} clusters, {SLICES} slices, {} running, {} pending (built in {:.0} ms; first pass {:.1} ms admitted {admitted})",
        CLUSTERS * NODES_PER_POOL * SHAPES.len() as i64,
        CLUSTERS * SHAPES.len() as i64,
        world.core.running_len(),
        world.core.pending_len(),
        ms(built),
        ms(cold),
    );
    let problems = world.core.audit(NOW);
    if !problems.is_empty() {
        println!("audit: {} problems, first: {}", problems.len(), problems[0]);
    }

    // Full re-plan: the gateway's tick, a second apart, on the same busy state.
    let mut samples = Vec::with_capacity(PLAN_RUNS);
    for run in 0..PLAN_RUNS {
        let t = Instant::now();
        black_box(world.core.plan(NOW + 1 + run as Time));
        samples.push(t.elapsed());
    }
    samples.sort_unstable();
    line(
        &format!("plan(now), {} pending, {PLAN_RUNS} runs", world.core.pending_len()),
        format!("p50 {:.1} ms  p99 {:.1} ms", ms(quantile(&samples, 0.5)), ms(quantile(&samples, 0.99))),
        "p50 <= 50 ms",
    );
    let mut now = NOW + 1 + PLAN_RUNS as Time;

    // The same state with the core's depth knob: only the first 1,000 GPRs get fresh plans a
    // pass, deeper ones keep their holds.
    let depth = 1_000;
    let mut shallow = build(seed, Config { max_plan_depth: depth, ..live.clone() });
    shallow.core.plan(NOW);
    let mut samples = Vec::with_capacity(PLAN_RUNS);
    for run in 0..PLAN_RUNS {
        let t = Instant::now();
        black_box(shallow.core.plan(NOW + 1 + run as Time));
        samples.push(t.elapsed());
    }
    drop(shallow);
    samples.sort_unstable();
    line(
        &format!("plan(now), max_plan_depth {depth}"),
        format!("p50 {:.1} ms  p99 {:.1} ms", ms(quantile(&samples, 0.5)), ms(quantile(&samples, 0.99))),
        "(for reference)",
    );

    // Wait time across all pools: a slice on every cluster, no shape: 50 pools to answer.
    world.core.upsert_slice(SliceSpec { id: SLICES + 1, clusters: (1..=CLUSTERS).collect(), evictable: false, shapes: Vec::new() });
    world.core.plan(now);
    let mut samples = Vec::with_capacity(WAIT_QUERIES);
    let mut rows = 0;
    for _ in 0..WAIT_QUERIES {
        let mut request = world.request(SLICES + 1, now);
        request.gpu_shape = None;
        let t = Instant::now();
        let answer = black_box(world.core.wait_time(&request, now));
        samples.push(t.elapsed());
        rows += answer.len();
    }
    samples.sort_unstable();
    line(
        &format!("wait_time(), {} pools a query", rows / WAIT_QUERIES),
        format!("p50 {:.2} ms  p99 {:.2} ms", ms(quantile(&samples, 0.5)), ms(quantile(&samples, 0.99))),
        "p99 <= 5 ms",
    );

    // Submit → decision: new GPRs into the busy state, one after another.
    let mut samples = Vec::with_capacity(SUBMITS);
    let mut decisions = 0;
    let all = Instant::now();
    for _ in 0..SUBMITS {
        now += 1;
        let slice = world.random_slice();
        let request = world.request(slice, now);
        let t = Instant::now();
        let result = world.core.submit(request, now);
        samples.push(t.elapsed());
        decisions += result.map_or(0, |d| d.len());
    }
    let total = all.elapsed();
    samples.sort_unstable();
    line(
        &format!("submit() latency, {SUBMITS} submits"),
        format!("p50 {:.3} ms  p99 {:.3} ms", ms(quantile(&samples, 0.5)), ms(quantile(&samples, 0.99))),
        "p99 <= 1 ms",
    );
    line(&format!("submit() sustained ({decisions} admits/preempts)"), format!("{:.0} submits/s", SUBMITS as f64 / total.as_secs_f64()), ">= 1000/s");
    // What a gateway tick asks besides the pass: every pending GPR's position in start order.
    let t = Instant::now();
    let positions = black_box(world.core.positions());
    line(&format!("positions(), {} pending", positions.len()), format!("{:.1} ms", ms(t.elapsed())), "(for reference)");
    let t = Instant::now();
    black_box(world.core.plan(now));
    line(&format!("plan(now) after the submits, {} pending", world.core.pending_len()), format!("{:.1} ms", ms(t.elapsed())), "(for reference)");

    // The pending queue alone, with 10,000 keys.
    let mut rng = Rng(seed ^ 0x00C0_FFEE);
    let keys: Vec<QueueKey> = (0..QUEUE_KEYS as i64)
        .map(|id| QueueKey { priority: rng.range(1, 300) as i32, share: rng.range(0, 1000) as f64, submitted_at: NOW + rng.range(0, 86_400), id })
        .collect();
    let mut queue = PendingQueue::default();
    for key in &keys {
        queue.insert(*key);
    }
    let mut order: Vec<usize> = (0..QUEUE_KEYS).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.range(0, i as i64) as usize);
    }
    let (mut insert_ns, mut remove_ns, mut rank_ns) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        // Remove and re-insert a tenth of the keys at a time, so the queue stays near 10,000.
        for chunk in order.chunks(QUEUE_KEYS / 10) {
            let t = Instant::now();
            for &i in chunk {
                black_box(queue.remove(&keys[i]));
            }
            remove_ns.push(t.elapsed().as_nanos() as f64 / chunk.len() as f64);
            let t = Instant::now();
            for &i in chunk {
                queue.insert(keys[i]);
            }
            insert_ns.push(t.elapsed().as_nanos() as f64 / chunk.len() as f64);
        }
        let t = Instant::now();
        for &i in &order {
            black_box(queue.rank(&keys[i]));
        }
        rank_ns.push(t.elapsed().as_nanos() as f64 / QUEUE_KEYS as f64);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    line(&format!("queue insert, {QUEUE_KEYS} keys"), format!("{:.0} ns/op", median(&mut insert_ns)), "O(log n)");
    line(&format!("queue remove, {QUEUE_KEYS} keys"), format!("{:.0} ns/op", median(&mut remove_ns)), "O(log n)");
    line(&format!("queue position_of, {QUEUE_KEYS} keys"), format!("{:.0} ns/op", median(&mut rank_ns)), "O(log n)");
    let t = Instant::now();
    let mut positions = 0usize;
    for i in (0..QUEUE_KEYS as i64).step_by(7) {
        positions += world.core.position_of(i + 1).unwrap_or(0);
    }
    black_box(positions);
    line("Scheduler::position_of (map + rank)", format!("{:.0} ns/op", t.elapsed().as_nanos() as f64 / (QUEUE_KEYS / 7 + 1) as f64), "O(log n)");
}
