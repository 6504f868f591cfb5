//! Live load: many real WebSocket `gpuMetrics` subscribers on one gateway while its agents
//! report, measuring sample → delivery latency and the gateway's memory.
//!
//! `cargo bench -p egs-tests --bench live_load`
//!
//! The gateway runs in a child process (this binary again, in its gateway role), so its
//! resident memory and CPU are measured alone. Settings:
//!
//! - `EGS_BENCH_GPUS` (default 1,000): the inventory the gateway holds, in nodes of 8 GPUs;
//! - `EGS_BENCH_REPORTING_GPUS` (default all): the GPUs whose agents report to this gateway —
//!   the first nodes. In a fleet spread over replicas the rest report to the others (each
//!   replica takes about its share); here they stay silent, so this replica's own ingest is
//!   what is measured, beside an inventory of the fleet's size;
//! - `EGS_BENCH_WATCHED_GPUS` (default 1,000): the GPUs the subscribers watch — the first
//!   nodes again, so every watched node reports here;
//! - `EGS_BENCH_SUBSCRIBERS` (default 10,000): sockets with one subscription each, spread over
//!   the watched nodes in turn: nine in ten to one GPU, one in ten to a whole node (`interval`
//!   1 s);
//! - `EGS_BENCH_SECS` (default 30): measured seconds, after `EGS_BENCH_WARMUP` (default 5) from
//!   the agents' start (their first reports: nodes nobody has read yet, tokens not cached).
//!
//! Each reporting node has an agent that samples its 8 GPUs once a second (the agents spread
//! over the second) and reports as the real agent does: whenever the gateway's last answer
//! (`reportIntervalSeconds`) lets it, sending everything gathered since. So watched nodes
//! report every sample as taken and the rest every few seconds, and the bench prints what the
//! gateway asked of each. Every delivered sample is timed from the moment it was taken. It
//! prints delivery latency quantiles, deliveries against the number expected, errors, the
//! gateway's peak RSS and CPU, and the driver's own CPU and lag. Nothing is asserted.
//! Backend as `TestApp` picks (`EGS_TEST_DATABASE_URL` for PostgreSQL).

/// The same allocator as the `egs` binary, so the numbers are the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use chrono::{DateTime, Utc};
use egs_domain::metrics::store::BYTES_PER_GPU;
use egs_tests::fixtures::{self, SHAPE_H100};
use egs_tests::{TestApp, ws};
use futures_util::{SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio_tungstenite::tungstenite::Message;

const GPUS_PER_NODE: usize = 8;
/// Nodes per `upsertNodes` call.
const UPSERT_CHUNK: usize = 500;
/// Seeding calls in flight at once.
const SEEDING: usize = 8;
/// Sockets being opened at once.
const CONNECTING: usize = 200;
const REPORT: &str =
    "mutation($input: ReportGpuSamplesInput!) { reportGpuSamples(input: $input) { accepted reportIntervalSeconds userErrors { message } } }";
const BY_GPU: &str = "subscription($id: ID) { gpuMetrics(gpuId: $id, interval: \"1s\") { samples { gpuId time util temperature power } } }";
const BY_NODE: &str = "subscription($id: ID) { gpuMetrics(nodeId: $id, interval: \"1s\") { samples { gpuId time util temperature power } } }";

/// The bench's shape, from the environment (the gateway child reads the same).
struct Plan {
    /// Nodes in the inventory.
    nodes: usize,
    /// The first `reporting` nodes have agents reporting here.
    reporting: usize,
    /// The first `watched` nodes have subscribers.
    watched: usize,
    subscribers: usize,
}

impl Plan {
    fn from_env() -> Self {
        let gpus = |name, default| (egs_tests::env_count(name, default) as usize).div_ceil(GPUS_PER_NODE);
        let nodes = gpus("EGS_BENCH_GPUS", 1_000).max(1);
        let reporting = gpus("EGS_BENCH_REPORTING_GPUS", (nodes * GPUS_PER_NODE) as u64).clamp(1, nodes);
        let watched = gpus("EGS_BENCH_WATCHED_GPUS", 1_000).clamp(1, reporting);
        let subscribers = egs_tests::env_count("EGS_BENCH_SUBSCRIBERS", 10_000) as usize;
        Self { nodes, reporting, watched, subscribers }
    }

    /// What subscriber `i` watches: (node, GPU index or `None` for the whole node).
    fn watch_of(&self, i: usize) -> (usize, Option<usize>) {
        let node = (i / GPUS_PER_NODE) % self.watched;
        (node, (i % 10 != 9).then_some(i % GPUS_PER_NODE))
    }
}

/// What the gateway child seeded, for the driver.
#[derive(Serialize, Deserialize)]
struct Seeded {
    base: String,
    admin_token: String,
    cluster: String,
    /// The reporting nodes, in order (the watched ones first).
    nodes: Vec<SeededNode>,
    seed_secs: f64,
}

#[derive(Serialize, Deserialize)]
struct SeededNode {
    id: String,
    name: String,
    agent_token: String,
    /// GPU UUIDs by index.
    uuids: Vec<String>,
    /// GPU ids by index; only for watched nodes (subscribers name them).
    gpu_ids: Vec<String>,
}

fn main() {
    egs_tests::bench_child::main(gateway, drive);
}

// ---- The gateway child ----

/// Starts the gateway, seeds the inventory and the reporting nodes' agent tokens, prints them
/// as one JSON line, and serves until its stdin closes (the driver ended).
async fn gateway() {
    let plan = Plan::from_env();
    let started = Instant::now();
    let app = TestApp::spawn_with(egs_tests::one_user_for_many).await;
    let cluster = fixtures::register_cluster(&app, "load").await;
    let mut nodes: Vec<(String, String)> = Vec::with_capacity(plan.nodes); // (id, name)
    for (chunk, start) in (0..plan.nodes).step_by(UPSERT_CHUNK).enumerate() {
        let count = UPSERT_CHUNK.min(plan.nodes - start);
        let prefix = format!("h100c{chunk}");
        let ids = fixtures::add_nodes(&app, &cluster, &prefix, count, SHAPE_H100, GPUS_PER_NODE as i32).await;
        nodes.extend(ids.into_iter().enumerate().map(|(n, id)| (id, format!("{prefix}-{n}"))));
    }
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { message } } }";
    let gpus_of = "query($id: ID!) { node(id: $id) { ... on GpuNode { gpus { id index } } } }";
    let (app_ref, cluster_ref) = (&app, &cluster);
    let reporting = futures_util::stream::iter(nodes.into_iter().take(plan.reporting).enumerate().map(|(n, (id, name))| async move {
        let input = json!({ "name": format!("agent {name}"), "role": "AGENT", "clusterId": cluster_ref, "nodeName": name });
        let agent_token = app_ref.mutate(&app_ref.admin_token, "createToken", create, input).await["secret"].as_str().expect("secret").to_owned();
        let mut gpu_ids = Vec::new();
        if n < plan.watched {
            let data = app_ref.ok(&app_ref.admin_token, gpus_of, json!({ "id": id })).await;
            let mut gpus: Vec<(i64, String)> = data["node"]["gpus"]
                .as_array()
                .expect("gpus")
                .iter()
                .map(|g| (g["index"].as_i64().unwrap_or_default(), g["id"].as_str().unwrap_or_default().to_owned()))
                .collect();
            gpus.sort();
            gpu_ids = gpus.into_iter().map(|(_, id)| id).collect();
        }
        // The fixture's GPU UUIDs.
        let uuids = (0..GPUS_PER_NODE).map(|i| format!("GPU-{cluster_ref}-{name}-{i}")).collect();
        SeededNode { id, name, agent_token, uuids, gpu_ids }
    }));
    let nodes: Vec<SeededNode> = reporting.buffered(SEEDING).collect().await;
    let seeded = Seeded { base: app.url("/"), admin_token: app.admin_token.clone(), cluster, nodes, seed_secs: started.elapsed().as_secs_f64() };
    egs_tests::bench_child::announce_and_serve(app, &seeded).await;
}

// ---- The driver ----

/// When each (watched GPU index, second) sample was taken.
type Taken = Mutex<HashMap<(u32, i64), Instant>>;

#[derive(Default)]
struct Counters {
    connected: AtomicU64,
    deliveries: AtomicU64,
    errors: AtomicU64,
    reports: AtomicU64,
    report_failures: AtomicU64,
    samples_accepted: AtomicU64,
}

struct Shared {
    taken: Taken,
    /// How long each report took to be answered (µs), while measuring.
    report_latencies: Mutex<Vec<u32>>,
    /// Every report: (when it was sent after the agents started, µs it took, whether it failed).
    timeline: Mutex<Vec<(Duration, u32, bool)>>,
    agents_started: std::sync::OnceLock<tokio::time::Instant>,
    /// (watched node?, `reportIntervalSeconds`) → answers, while measuring.
    intervals: Mutex<BTreeMap<(bool, u64), u64>>,
    /// Watched GPU id → index.
    gpu_index: HashMap<String, u32>,
    counters: Counters,
    /// Deliveries are timed only while this is set.
    measuring: AtomicBool,
    stop: AtomicBool,
    first_error: Mutex<Option<String>>,
}

impl Shared {
    fn error(&self, what: String) {
        self.counters.errors.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first_error.lock().unwrap_or_else(|p| p.into_inner());
        first.get_or_insert(what);
    }
}

async fn drive() {
    let plan = Arc::new(Plan::from_env());
    let (subscribers, secs) = (plan.subscribers, egs_tests::env_count("EGS_BENCH_SECS", 30));
    let warm_up = Duration::from_secs(egs_tests::env_count("EGS_BENCH_WARMUP", 5));
    let (mut gateway, seeded) = egs_tests::bench_child::start::<Seeded>(&[]);
    let pid = gateway.id();
    let seeded = Arc::new(seeded);
    let gpu_index = seeded.nodes[..plan.watched]
        .iter()
        .enumerate()
        .flat_map(|(n, node)| node.gpu_ids.iter().enumerate().map(move |(i, id)| (id.clone(), (n * GPUS_PER_NODE + i) as u32)))
        .collect();
    let shared = Arc::new(Shared {
        taken: Mutex::new(HashMap::new()),
        report_latencies: Mutex::new(Vec::new()),
        timeline: Mutex::new(Vec::new()),
        agents_started: std::sync::OnceLock::new(),
        intervals: Mutex::new(BTreeMap::new()),
        gpu_index,
        counters: Counters::default(),
        measuring: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        first_error: Mutex::new(None),
    });
    let idle = egs_tests::process_usage(pid).map_or(0, |u| u.0);
    println!(
        "backend={} subscribers={subscribers} inventory={} GPUs ({} nodes), {} reporting here, {} watched; secs={secs} after {} s \
         (seeded in {:.1} s, gateway RSS {:.0} MiB)",
        std::env::var("EGS_TEST_DATABASE_URL").map_or("sqlite", |_| "postgres"),
        plan.nodes * GPUS_PER_NODE,
        plan.nodes,
        plan.reporting * GPUS_PER_NODE,
        plan.watched * GPUS_PER_NODE,
        warm_up.as_secs(),
        seeded.seed_secs,
        idle as f64 / 1024.0
    );

    // Subscribers.
    let ws_url = seeded.base.clone();
    let connecting = Arc::new(Semaphore::new(CONNECTING));
    let connect_started = Instant::now();
    let mut tasks = Vec::with_capacity(subscribers);
    for i in 0..subscribers {
        let (shared, seeded, plan, url, connecting) = (shared.clone(), seeded.clone(), plan.clone(), ws_url.clone(), connecting.clone());
        tasks.push(tokio::spawn(async move {
            let (node, gpu) = plan.watch_of(i);
            let node = &seeded.nodes[node];
            let (query, id) = match gpu {
                Some(gpu) => (BY_GPU, node.gpu_ids[gpu].clone()),
                None => (BY_NODE, node.id.clone()),
            };
            let latencies = match subscriber(&url, &seeded.admin_token, query, &id, &shared, &connecting).await {
                Ok(latencies) => latencies,
                Err(e) => {
                    shared.error(format!("subscriber {i}: {e}"));
                    Vec::new()
                }
            };
            (gpu.is_none(), latencies)
        }));
    }
    while (shared.counters.connected.load(Ordering::Relaxed) + shared.counters.errors.load(Ordering::Relaxed)) < subscribers as u64 {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after_connect = egs_tests::process_usage(pid).map_or(0, |u| u.0);
    println!(
        "connected: {} subscriptions in {:.1} s; gateway RSS {:.0} MiB ({:.1} KiB per subscriber)",
        shared.counters.connected.load(Ordering::Relaxed),
        connect_started.elapsed().as_secs_f64(),
        after_connect as f64 / 1024.0,
        after_connect.saturating_sub(idle) as f64 / subscribers.max(1) as f64
    );

    // Agents, and the gateway's usage once a second.
    let client =
        reqwest::Client::builder().pool_max_idle_per_host(plan.reporting * 2).timeout(Duration::from_secs(30)).build().expect("an HTTP client");
    let agents_start = tokio::time::Instant::now() + Duration::from_millis(100);
    let _ = shared.agents_started.set(agents_start);
    let base = Utc::now().timestamp() + 1;
    let mut agents = Vec::new();
    for n in 0..plan.reporting {
        let (client, seeded, shared) = (client.clone(), seeded.clone(), shared.clone());
        let offset = Duration::from_secs(1) * n as u32 / plan.reporting as u32;
        agents.push(tokio::spawn(agent(client, seeded, shared, n, n < plan.watched, agents_start + offset, base)));
    }
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (peak, shared) = (peak.clone(), shared.clone());
        tokio::spawn(async move {
            while !shared.stop.load(Ordering::Relaxed) {
                if let Some((rss, _, _)) = egs_tests::process_usage(pid) {
                    peak.fetch_max(rss, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        })
    };
    // The driver's own health: how late its runtime wakes a task that sleeps 10 ms. When the
    // driver is the bottleneck, every delivery it times is late by about this much too.
    let lag = {
        let shared = shared.clone();
        tokio::spawn(async move {
            let mut late_us: Vec<u32> = Vec::new();
            while !shared.stop.load(Ordering::Relaxed) {
                let asleep = Instant::now();
                tokio::time::sleep(Duration::from_millis(10)).await;
                if shared.measuring.load(Ordering::Relaxed) {
                    late_us.push(asleep.elapsed().saturating_sub(Duration::from_millis(10)).as_micros().min(u32::MAX as u128) as u32);
                }
            }
            late_us.sort_unstable();
            late_us
        })
    };
    tokio::time::sleep(warm_up).await;
    let cpu_before = egs_tests::process_usage(pid).map_or(0.0, |u| u.2);
    let driver_cpu_before = egs_tests::process_usage(std::process::id()).map_or(0.0, |u| u.2);
    let deliveries_before = shared.counters.deliveries.load(Ordering::Relaxed);
    let errors_before = shared.counters.errors.load(Ordering::Relaxed);
    let accepted_before = shared.counters.samples_accepted.load(Ordering::Relaxed);
    shared.measuring.store(true, Ordering::Relaxed);
    let measured = Instant::now();
    tokio::time::sleep(Duration::from_secs(secs)).await;
    shared.measuring.store(false, Ordering::Relaxed);
    let window = measured.elapsed().as_secs_f64();
    let cpu = egs_tests::process_usage(pid).map_or(0.0, |u| u.2) - cpu_before;
    let driver_cpu = egs_tests::process_usage(std::process::id()).map_or(0.0, |u| u.2) - driver_cpu_before;
    let deliveries = shared.counters.deliveries.load(Ordering::Relaxed) - deliveries_before;
    let errors = shared.counters.errors.load(Ordering::Relaxed) - errors_before;
    let accepted = shared.counters.samples_accepted.load(Ordering::Relaxed) - accepted_before;
    shared.stop.store(true, Ordering::Relaxed);
    for agent in agents {
        let _ = agent.await;
    }
    let _ = sampler.await;
    let lag = lag.await.unwrap_or_default();
    let hwm = egs_tests::process_usage(pid).map_or(0, |u| u.1);

    // Close the sockets (ending the subscriber tasks), then the gateway.
    drop(gateway.stdin.take());
    let (mut latencies, mut by_node): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    for task in tasks {
        if let Ok(Ok((node_scope, mut found))) = tokio::time::timeout(Duration::from_secs(30), task).await {
            if node_scope {
                by_node.extend_from_slice(&found);
            }
            latencies.append(&mut found);
        }
    }
    by_node.sort_unstable();
    let _ = gateway.wait();

    latencies.sort_unstable();
    let q = |p: f64| quantile_ms(&latencies, p);
    let mut reported = std::mem::take(&mut *shared.report_latencies.lock().unwrap_or_else(|p| p.into_inner()));
    reported.sort_unstable();
    // Each GPU subscriber expects one sample a second, each node subscriber eight.
    let per_second: u64 = (0..subscribers).map(|i| if plan.watch_of(i).1.is_none() { GPUS_PER_NODE as u64 } else { 1 }).sum();
    println!(
        "delivery:  sample taken → received p50 {:.1} ms  p90 {:.1} ms  p99 {:.1} ms  max {:.1} ms  (target p99 ≤ 250 ms)",
        q(50.0),
        q(90.0),
        q(99.0),
        q(100.0)
    );
    println!("           node subscribers only: p50 {:.1} ms  p99 {:.1} ms", quantile_ms(&by_node, 50.0), quantile_ms(&by_node, 99.0));
    println!(
        "volume:    {} samples timed over {window:.1} s ({:.0}/s; {per_second}/s expected at full delivery); {deliveries} updates",
        latencies.len(),
        latencies.len() as f64 / window,
    );
    let intervals = std::mem::take(&mut *shared.intervals.lock().unwrap_or_else(|p| p.into_inner()));
    let asked = |watched: bool| -> String {
        let asked: Vec<String> = intervals.iter().filter(|((w, _), _)| *w == watched).map(|((_, s), n)| format!("{s} s: {n}")).collect();
        if asked.is_empty() { "none".into() } else { asked.join(", ") }
    };
    println!(
        "agents:    {} reports, {} failed; {:.0} samples/s accepted ({} offered); report answered p50 {:.1} ms  p99 {:.1} ms",
        shared.counters.reports.load(Ordering::Relaxed),
        shared.counters.report_failures.load(Ordering::Relaxed),
        accepted as f64 / window,
        plan.reporting * GPUS_PER_NODE,
        quantile_ms(&reported, 50.0),
        quantile_ms(&reported, 99.0),
    );
    println!("           the gateway asked watched nodes' agents to report next in {}; the others in {}", asked(true), asked(false));
    // How the agents' first reports fared (nodes nobody had read, tokens not cached yet) and
    // how soon reports were answered as in the measured window.
    let timeline = std::mem::take(&mut *shared.timeline.lock().unwrap_or_else(|p| p.into_inner()));
    let buckets: Vec<String> = (0..warm_up.as_secs().div_ceil(2) + 2)
        .map(|b| {
            let window = Duration::from_secs(b * 2)..Duration::from_secs(b * 2 + 2);
            let mut took: Vec<u32> = timeline.iter().filter(|(at, _, _)| window.contains(at)).map(|(_, took, _)| *took).collect();
            let failed = timeline.iter().filter(|(at, _, failed)| *failed && window.contains(at)).count();
            took.sort_unstable();
            format!("{}–{} s: {} sent, {failed} failed, p99 {:.0} ms", b * 2, b * 2 + 2, took.len(), quantile_ms(&took, 99.0))
        })
        .collect();
    println!("start:     reports by when they were sent after the agents started: {}", buckets.join("; "));
    println!("errors:    {errors} while measuring, {} in all", shared.counters.errors.load(Ordering::Relaxed));
    if let Some(first) = shared.first_error.lock().unwrap_or_else(|p| p.into_inner()).take() {
        println!("           first: {first}");
    }
    // Each GPU that reports here has a fixed-size history (the store's docs): at fleet scale
    // most of the memory, and the same whoever watches.
    let history_mib = (plan.reporting * GPUS_PER_NODE * BYTES_PER_GPU) as f64 / (1024.0 * 1024.0);
    println!(
        "gateway:   peak RSS {:.0} MiB sampled, {:.0} MiB high-water mark, of which {history_mib:.0} MiB the history of the {} GPUs \
         reporting here, so {:.0} MiB besides (target ≤ 1024 MiB at 1,000 GPUs); CPU {:.2} cores while measuring",
        peak.load(Ordering::Relaxed) as f64 / 1024.0,
        hwm as f64 / 1024.0,
        plan.reporting * GPUS_PER_NODE,
        hwm as f64 / 1024.0 - history_mib,
        cpu / window
    );
    println!(
        "driver:    CPU {:.2} cores while measuring; its runtime wakes a 10 ms sleep late by p50 {:.1} ms  p99 {:.1} ms  max {:.1} ms \
         (a late driver makes every delivery it times late too)",
        driver_cpu / window,
        quantile_ms(&lag, 50.0),
        quantile_ms(&lag, 99.0),
        quantile_ms(&lag, 100.0),
    );
}

/// The `p`th percentile of sorted µs values, in ms.
fn quantile_ms(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1] as f64 / 1000.0
}

/// Appends one second's samples of `uuids` to a JSON array's contents being built in `out`.
fn append_samples(out: &mut String, uuids: &[String], at: &str, k: u64) {
    for (i, uuid) in uuids.iter().enumerate() {
        let util = ((k * 7 + i as u64 * 13) % 100) as f64;
        if !out.is_empty() {
            out.push(',');
        }
        let _ = write!(
            out,
            r#"{{"uuid":"{uuid}","timestamp":"{at}","util":{util},"memUtil":{},"memUsedMib":{},"temperature":{},"power":{},"smClockMhz":1980}}"#,
            util / 2.0,
            20_000.0 + util * 100.0,
            35.0 + util / 2.0,
            90.0 + util * 6.0,
        );
    }
}

/// What a report's answer says.
#[derive(Deserialize)]
struct Answer {
    data: Option<AnswerData>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AnswerData {
    report_gpu_samples: Reported,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Reported {
    accepted: u64,
    report_interval_seconds: u64,
}

/// One agent: samples its node's GPUs every second from `start` and reports what it gathered
/// whenever the gateway's last answer lets it (at once the first time), until told to stop.
#[allow(clippy::too_many_arguments)]
async fn agent(client: reqwest::Client, seeded: Arc<Seeded>, shared: Arc<Shared>, n: usize, watched: bool, start: tokio::time::Instant, base: i64) {
    let node = &seeded.nodes[n];
    let url = format!("{}graphql", seeded.base);
    let head = format!(
        r#"{{"query":{},"variables":{{"input":{{"clusterId":{},"nodeName":{},"samples":["#,
        serde_json::to_string(REPORT).expect("JSON"),
        serde_json::to_string(&seeded.cluster).expect("JSON"),
        serde_json::to_string(&node.name).expect("JSON"),
    );
    let mut ticks = tokio::time::interval_at(start, Duration::from_secs(1));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let (mut gathered, mut count, mut k, mut last) = (String::new(), 0u64, 0u64, None::<i64>);
    let mut due = tokio::time::Instant::now();
    while !shared.stop.load(Ordering::Relaxed) {
        ticks.tick().await;
        // The second this tick stands for, whatever the jitter, never the same one twice.
        let second = (base + start.elapsed().as_secs() as i64).max(last.map_or(i64::MIN, |l| l + 1));
        last = Some(second);
        k += 1;
        let at = DateTime::<Utc>::from_timestamp(second, 0).expect("a time").to_rfc3339();
        append_samples(&mut gathered, &node.uuids, &at, k);
        count += node.uuids.len() as u64;
        if watched {
            let now = Instant::now();
            let mut taken = shared.taken.lock().unwrap_or_else(|p| p.into_inner());
            for i in 0..node.uuids.len() {
                taken.insert(((n * GPUS_PER_NODE + i) as u32, second), now);
            }
        }
        if tokio::time::Instant::now() < due {
            continue;
        }
        let body = format!("{head}{}]}}}}}}", std::mem::take(&mut gathered));
        let sent = count;
        count = 0;
        shared.counters.reports.fetch_add(1, Ordering::Relaxed);
        let asked = tokio::time::Instant::now();
        let outcome = async {
            let response = client
                .post(&url)
                .bearer_auth(&node.agent_token)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let bytes = response.bytes().await.map_err(|e| e.to_string())?;
            match serde_json::from_slice::<Answer>(&bytes) {
                Ok(Answer { data: Some(AnswerData { report_gpu_samples: reported }) }) if reported.accepted == sent => Ok(reported),
                _ => Err(String::from_utf8_lossy(&bytes).into_owned()),
            }
        };
        let outcome = outcome.await;
        let measuring = shared.measuring.load(Ordering::Relaxed);
        let took = asked.elapsed().as_micros().min(u32::MAX as u128) as u32;
        if measuring {
            shared.report_latencies.lock().unwrap_or_else(|p| p.into_inner()).push(took);
        }
        if let Some(started) = shared.agents_started.get() {
            shared.timeline.lock().unwrap_or_else(|p| p.into_inner()).push((asked.saturating_duration_since(*started), took, outcome.is_err()));
        }
        match outcome {
            Ok(reported) => {
                due = asked + Duration::from_secs(reported.report_interval_seconds);
                if measuring {
                    shared.counters.samples_accepted.fetch_add(reported.accepted, Ordering::Relaxed);
                    *shared.intervals.lock().unwrap_or_else(|p| p.into_inner()).entry((watched, reported.report_interval_seconds)).or_default() += 1;
                }
            }
            Err(e) => {
                shared.counters.report_failures.fetch_add(1, Ordering::Relaxed);
                shared.error(format!("agent {n}: {e}"));
            }
        }
    }
}

/// One socket with one subscription; returns the delivery latencies (µs) timed while measuring.
async fn subscriber(url: &str, token: &str, query: &str, id: &str, shared: &Shared, connecting: &Semaphore) -> Result<Vec<u32>, String> {
    let permit = connecting.acquire().await.map_err(|e| e.to_string())?;
    // Small read buffers (see ws::connect): 10,000 sockets at tungstenite's default 128 KiB
    // would take 1.2 GiB here.
    let (mut ws, _) = ws::connect(url, ws::TRANSPORT_WS).await.map_err(|e| format!("connect: {e}"))?;
    ws.send(ws::connection_init(token)).await.map_err(|e| e.to_string())?;
    let mut permit = Some(permit);
    let mut latencies = Vec::new();
    while let Some(frame) = ws.next().await {
        let text = match frame {
            Ok(Message::Text(text)) => text,
            Ok(Message::Close(close)) => {
                if shared.stop.load(Ordering::Relaxed) {
                    break;
                }
                return Err(format!("closed by the gateway: {close:?}"));
            }
            Ok(_) => continue,
            Err(e) if shared.stop.load(Ordering::Relaxed) => {
                let _ = e;
                break;
            }
            Err(e) => return Err(format!("socket: {e}")),
        };
        let received = Instant::now();
        let message: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        match message["type"].as_str() {
            Some("connection_ack") => {
                ws.send(ws::subscribe("1", query, json!({ "id": id }))).await.map_err(|e| e.to_string())?;
                shared.counters.connected.fetch_add(1, Ordering::Relaxed);
                drop(permit.take());
            }
            Some("next") => {
                if let Some(errors) = message["payload"].get("errors") {
                    return Err(format!("errors: {errors}"));
                }
                shared.counters.deliveries.fetch_add(1, Ordering::Relaxed);
                if !shared.measuring.load(Ordering::Relaxed) {
                    continue;
                }
                // Parse first, then hold the lock only for the lookups.
                let samples = message["payload"]["data"]["gpuMetrics"]["samples"].as_array().map(Vec::as_slice).unwrap_or_default();
                let keys: Vec<(u32, i64)> = samples
                    .iter()
                    .filter_map(|sample| {
                        let gpu = sample["gpuId"].as_str().and_then(|id| shared.gpu_index.get(id))?;
                        let at = sample["time"].as_str().and_then(|t| DateTime::parse_from_rfc3339(t).ok())?;
                        Some((*gpu, at.timestamp()))
                    })
                    .collect();
                let taken = shared.taken.lock().unwrap_or_else(|p| p.into_inner());
                for key in keys {
                    if let Some(when) = taken.get(&key) {
                        latencies.push(received.saturating_duration_since(*when).as_micros().min(u32::MAX as u128) as u32);
                    }
                }
            }
            Some("error") => return Err(format!("subscription refused: {}", message["payload"])),
            Some("ping") => ws.send(Message::text(json!({ "type": "pong" }).to_string())).await.map_err(|e| e.to_string())?,
            _ => {}
        }
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
    }
    let _ = ws.close(None).await;
    Ok(latencies)
}
