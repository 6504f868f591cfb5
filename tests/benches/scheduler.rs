#![allow(clippy::needless_range_loop)]
//! Scheduler core throughput and latency (docs/design.md §7): a full re-plan, submit → decision,
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

use egs_scheduler::{
    Config, Decision, Holding, MaintenanceWindow, NodeSpec, PendingQueue, PoolKey, QueueKey, Request, RunningSpec, Scheduler, SliceSpec, Time,
};
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
            rdma: false,
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
                    rdma: false,
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
    let live = Config::live(egs_domain::lifecycle::state::PROVISIONING_ALLOWANCE_SECS, egs_domain::lifecycle::state::RELEASE_ALLOWANCE_SECS);
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

    // A change, then the ranges users read: a top-priority GPR arrives and the next pass
    // refreshes every waiting GPR's start range (estimates included). The leader passes at most
    // one tick (a second) after a change, so what a user reads is at most that tick plus this
    // pass old.
    let slice = world.random_slice();
    let mut arrival = world.request(slice, now);
    arrival.priority = 300;
    let arrival_id = arrival.id;
    world.core.add_pending(arrival, None);
    let t = Instant::now();
    black_box(world.core.plan(now));
    let pass = t.elapsed();
    let ids: Vec<egs_scheduler::GprId> = world.core.positions().into_keys().collect();
    let ranged = ids.iter().filter(|id| world.core.status_unpositioned(**id).is_some_and(|s| s.start_range.is_some())).count();
    let tick = egs_domain::lifecycle::LifecycleConfig::default().tick;
    line(
        &format!("start ranges after a change, {ranged} of {} ranged", ids.len()),
        format!("tick {:.0} ms + pass {:.1} ms", ms(tick), ms(pass)),
        "<= 2 s",
    );
    world.core.remove_pending(arrival_id);
    now += 1;

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

    // The same state with maintenance planned: two windows in every pool over the next three
    // days (each pass then checks every plan's span against the nodes away over it).
    let mut planned = build(seed, live.clone());
    let total_nodes = CLUSTERS * NODES_PER_POOL * SHAPES.len() as i64;
    let windows: Vec<MaintenanceWindow> = (0..2 * CLUSTERS * SHAPES.len() as i64)
        .map(|i| {
            let start = NOW + planned.rng.range(HOUR, 72 * HOUR);
            // Pools are numbered in blocks of NODES_PER_POOL: two nodes of each.
            let node = (i / 2) * NODES_PER_POOL + 1 + planned.rng.range(0, NODES_PER_POOL - 1);
            MaintenanceWindow { id: i, node: node.min(total_nodes), start, end: start + planned.rng.range(HOUR, 8 * HOUR) }
        })
        .collect();
    let count = windows.len();
    planned.core.plan(NOW);
    planned.core.set_maintenance(windows);
    let t = Instant::now();
    planned.core.plan(NOW);
    let replanned = t.elapsed();
    let moved = planned.core.take_moves().len();
    let mut samples = Vec::with_capacity(PLAN_RUNS);
    for run in 0..PLAN_RUNS {
        let t = Instant::now();
        black_box(planned.core.plan(NOW + 1 + run as Time));
        samples.push(t.elapsed());
    }
    let problems = planned.core.audit(NOW + PLAN_RUNS as Time);
    drop(planned);
    samples.sort_unstable();
    line(
        &format!("plan(now), {count} maintenance windows"),
        format!("p50 {:.1} ms  p99 {:.1} ms", ms(quantile(&samples, 0.5)), ms(quantile(&samples, 0.99))),
        "p50 <= 50 ms",
    );
    println!(
        "  the pass that planned them in: {:.1} ms, {moved} promises moved (each names its window); audit: {} problems",
        ms(replanned),
        problems.len()
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
    tick_cost(seed, &live);
}

/// The gateway tick on a real database (SQLite in a temp dir): what taking the lease costs
/// (reading everything and building the core, as every tick did before the driver), and what
/// a tick's look at the stored changes costs with none and with a hundred edited GPRs.
fn tick_cost(seed: u64, live: &Config) {
    use chrono::{DateTime, Utc};
    use egs_domain::lifecycle::driver::Driver;
    use egs_entities::*;
    use sea_orm::{ConnectionTrait, EntityTrait, IntoActiveModel};

    const RUNNING_PER_POOL: i64 = 9;
    const RUNNING_NODES: i64 = 10;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    runtime.block_on(async {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = format!("sqlite://{}?mode=rwc", dir.path().join("tick.db").display());
        let db = sea_orm::Database::connect(&url).await.expect("sqlite");
        egs_api::db::migrate(&db).await.expect("migrations");
        // Stored an hour ago: a look reads only what changed since (as in steady operation).
        let now: DateTime<Utc> = Utc::now() - chrono::Duration::hours(1);
        let mut rng = Rng(seed | 1);
        let insert = |sql: String| {
            let db = &db;
            async move { db.execute_unprepared(&sql).await.expect("insert") }
        };
        let t = Instant::now();
        insert(format!("INSERT INTO projects (id, name, created_at) VALUES (1, 'bench', '{now}')")).await;
        let clusters: Vec<cluster::Model> = (1..=CLUSTERS)
            .map(|id| cluster::Model {
                id,
                project_id: 1,
                name: format!("c{id}"),
                provider: ClusterProvider::Simulated,
                cloud: None,
                region: None,
                registration_status: RegistrationStatus::Registered,
                health: Health::Healthy,
                last_contact_at: Some(now),
                credentials: None,
                pod_placement: PodPlacement::AdmissionPlugins,
                firm_horizon_secs: None,
                created_at: now,
                updated_at: now,
            })
            .collect();
        cluster::Entity::insert_many(clusters.into_iter().map(IntoActiveModel::into_active_model)).exec(&db).await.expect("clusters");
        let mut nodes = Vec::new();
        for cluster in 1..=CLUSTERS {
            for (shape, (gpu_shape, instance_type, memory)) in SHAPES.iter().enumerate() {
                for n in 0..NODES_PER_POOL {
                    let id = ((cluster - 1) * SHAPES.len() as i64 + shape as i64) * NODES_PER_POOL + n + 1;
                    nodes.push(node::Model {
                        id,
                        cluster_id: cluster,
                        name: format!("c{cluster}-{gpu_shape}-{n}"),
                        instance_type: (*instance_type).into(),
                        gpu_shape: (*gpu_shape).into(),
                        gpus_per_node: GPUS_PER_NODE as i32,
                        zone: None,
                        gpu_memory_mib: *memory,
                        health: Health::Healthy,
                        state: NodeState::Available,
                        allocated_gpr_id: None,
                        power_threshold_watts: None,
                        temperature_threshold_celsius: None,
                        driver_version: None,
                        cuda_version: None,
                        rdma: false,
                        last_heartbeat_at: None,
                        cordoned_at: None,
                        cordon_reason: None,
                        cordoned_by: None,
                        created_at: now,
                        updated_at: now,
                    });
                }
            }
        }
        for chunk in nodes.chunks(500) {
            node::Entity::insert_many(chunk.iter().cloned().map(IntoActiveModel::into_active_model)).exec(&db).await.expect("nodes");
        }
        let mut slices = Vec::new();
        let mut links = Vec::new();
        for id in 1..=SLICES {
            slices.push(slice::Model {
                id,
                project_id: 1,
                name: format!("s{id}"),
                description: None,
                policy: SlicePolicy::default(),
                auto_gpr_template_id: None,
                auto_gpr_enabled: false,
                created_at: now,
                updated_at: now,
            });
            for cluster in 1..=CLUSTERS {
                if cluster == 1 + id % CLUSTERS || rng.chance(0.3) {
                    links.push(slice_cluster::Model { slice_id: id, cluster_id: cluster });
                }
            }
        }
        for chunk in slices.chunks(500) {
            slice::Entity::insert_many(chunk.iter().cloned().map(IntoActiveModel::into_active_model)).exec(&db).await.expect("slices");
        }
        for chunk in links.chunks(1000) {
            slice_cluster::Entity::insert_many(chunk.iter().cloned().map(IntoActiveModel::into_active_model)).exec(&db).await.expect("links");
        }
        let gpr_row = |id: i64, slice_id: i64, nodes: i32, shape: Option<&str>, phase: GprPhase| gpr::Model {
            id,
            slice_id,
            name: format!("g{id}"),
            requester_id: None,
            node_count: nodes,
            gpus_per_node: None,
            min_gpu_memory_mib: None,
            gpu_shape: shape.map(str::to_owned),
            instance_type: None,
            preferred_cluster_ids: IdList::default(),
            priority: 100,
            duration_secs: 8 * HOUR,
            idle_timeout_secs: None,
            preemptible: false,
            requeue_on_failure: false,
            earliest_start_at: None,
            labels: Labels::default(),
            phase,
            reason: None,
            approval: ApprovalState::NotRequired,
            approval_reason: None,
            queue_position: None,
            start_no_later_than: None,
            estimated_start_at: None,
            start_p10_at: None,
            start_p90_at: None,
            fair_share_bonus: None,
            foreseen_at: None,
            foreseen_start_at: None,
            assigned_cluster_id: None,
            assigned_instance_type: None,
            assigned_gpu_shape: None,
            provisioned_at: None,
            exit_at: None,
            completed_at: None,
            release_reason: None,
            preempted_by_id: None,
            holding_since: None,
            holds_until: None,
            milestones_done: 0,
            extended_secs: 0,
            extension_requested_secs: None,
            workload: None,
            template_id: None,
            version: 1,
            source_uid: None,
            source_ref: None,
            created_at: now,
            updated_at: now,
        };
        // Running: nine GPRs of ten nodes in every pool, each of its own slice on that cluster.
        let (mut gprs, mut held) = (Vec::new(), Vec::new());
        let mut id = 0;
        for cluster in 1..=CLUSTERS {
            for (shape, (gpu_shape, instance_type, _)) in SHAPES.iter().enumerate() {
                for r in 0..RUNNING_PER_POOL {
                    id += 1;
                    // Slice `cluster + k·CLUSTERS` always has the cluster.
                    let slice = cluster + CLUSTERS * ((shape as i64 * RUNNING_PER_POOL + r) % (SLICES / CLUSTERS));
                    let mut g = gpr_row(id, slice, RUNNING_NODES as i32, Some(gpu_shape), GprPhase::Provisioned);
                    let started = now - chrono::Duration::seconds(rng.range(0, 4 * HOUR));
                    g.provisioned_at = Some(started);
                    g.exit_at = Some(started + chrono::Duration::seconds(g.duration_secs));
                    g.holds_until = g.exit_at;
                    g.assigned_cluster_id = Some(cluster);
                    g.assigned_instance_type = Some((*instance_type).into());
                    g.assigned_gpu_shape = Some((*gpu_shape).into());
                    let first = ((cluster - 1) * SHAPES.len() as i64 + shape as i64) * NODES_PER_POOL + r * RUNNING_NODES + 1;
                    held.extend((first..first + RUNNING_NODES).map(|node_id| gpr_node::Model { gpr_id: id, node_id, assigned_at: now }));
                    gprs.push(g);
                }
            }
        }
        let running = gprs.len();
        for _ in 0..PENDING {
            id += 1;
            let shape = rng.chance(0.8).then(|| SHAPES[rng.range(0, SHAPES.len() as i64 - 1) as usize].0);
            let mut g = gpr_row(id, rng.range(1, SLICES), rng.range(1, 8) as i32, shape, GprPhase::Queued);
            g.priority = rng.range(1, 300) as i32;
            g.duration_secs = rng.range(HOUR, 72 * HOUR);
            gprs.push(g);
        }
        for chunk in gprs.chunks(400) {
            gpr::Entity::insert_many(chunk.iter().cloned().map(IntoActiveModel::into_active_model)).exec(&db).await.expect("gprs");
        }
        for chunk in held.chunks(1000) {
            gpr_node::Entity::insert_many(chunk.iter().cloned().map(IntoActiveModel::into_active_model)).exec(&db).await.expect("links");
        }
        println!(
            "gateway tick on SQLite: {} nodes, {SLICES} slices, {running} running, {PENDING} queued GPRs (stored in {:.1} s)",
            nodes.len(),
            t.elapsed().as_secs_f64()
        );

        let mut builds = Vec::new();
        let mut driver = None;
        for _ in 0..3 {
            let t = Instant::now();
            driver = Some(Driver::build(&db, 1, Utc::now(), live).await.expect("build"));
            builds.push(t.elapsed());
        }
        let Some(mut driver) = driver else { return };
        builds.sort();
        line("lease takeover: read all + build the core", format!("{:.1} ms", ms(builds[1])), "(each tick, before the driver)");
        let t = Instant::now();
        driver.core.plan(Utc::now().timestamp());
        line("first pass after a takeover", format!("{:.1} ms", ms(t.elapsed())), "-");
        let mut quiet = Vec::new();
        for _ in 0..20 {
            let t = Instant::now();
            assert!(driver.look(&db, Utc::now(), live).await.expect("look"));
            quiet.push(t.elapsed());
            driver.core.plan(Utc::now().timestamp());
        }
        quiet.sort();
        line("tick look, nothing changed (p50)", format!("{:.2} ms", ms(quiet[quiet.len() / 2])), "≪ takeover");
        let mut edited = Vec::new();
        for round in 0..10 {
            let first = running as i64 + 1 + round * 100;
            let stamp = Utc::now().to_rfc3339();
            insert(format!(
                "UPDATE gprs SET priority = priority + 1, version = version + 1, updated_at = '{stamp}' WHERE id >= {first} AND id < {}",
                first + 100
            ))
            .await;
            let t = Instant::now();
            assert!(driver.look(&db, Utc::now(), live).await.expect("look"));
            let looked = t.elapsed();
            let t = Instant::now();
            driver.core.plan(Utc::now().timestamp());
            edited.push((looked, t.elapsed()));
        }
        edited.sort();
        let (look, pass) = edited[edited.len() / 2];
        line("tick look, 100 GPRs edited (p50)", format!("{:.2} ms", ms(look)), "≪ takeover");
        line("  and the pass that follows", format!("{:.1} ms", ms(pass)), "-");
    });
}
