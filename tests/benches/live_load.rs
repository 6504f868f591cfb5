//! Live load: many real WebSocket `gpuMetrics` subscribers on one gateway while 1,000 GPUs
//! report at 1 Hz, measuring report → delivery latency and the gateway's memory.
//!
//! `cargo bench -p egs-tests --bench live_load`
//!
//! The gateway runs in a child process (this binary again, in its gateway role), so its
//! resident memory is measured alone: the driver here seeds 125 nodes × 8 GPUs, opens
//! `EGS_BENCH_SUBSCRIBERS` sockets (default 10,000) with one subscription each — nine in ten
//! to one GPU, one in ten to a whole node (`interval` 1 s) — then runs one simulated agent per
//! node reporting its 8 GPUs once a second, spread over the second, for a warm-up and
//! `EGS_BENCH_SECS` measured seconds (default 30). Every delivered sample is timed from the
//! moment its report was sent. It prints delivery latency quantiles, deliveries against the
//! number expected, errors, the gateway's peak RSS and its CPU time. Nothing is asserted.
//! Backend as `TestApp` picks (`EGS_TEST_DATABASE_URL` for PostgreSQL).

/// The same allocator as the `egs` binary, so the numbers are the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use chrono::{DateTime, Utc};
use egs_tests::fixtures::{self, SHAPE_H100};
use egs_tests::{TestApp, ws};
use futures_util::{SinkExt, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tokio_tungstenite::tungstenite::Message;

const NODES: usize = 125;
const GPUS_PER_NODE: usize = 8;
const WARM_UP: Duration = Duration::from_secs(5);
/// Sockets being opened at once.
const CONNECTING: usize = 200;
const REPORT: &str = "mutation($input: ReportGpuSamplesInput!) { reportGpuSamples(input: $input) { accepted userErrors { message } } }";
const BY_GPU: &str = "subscription($id: ID) { gpuMetrics(gpuId: $id, interval: \"1s\") { samples { gpuId time util temperature power } } }";
const BY_NODE: &str = "subscription($id: ID) { gpuMetrics(nodeId: $id, interval: \"1s\") { samples { gpuId time util temperature power } } }";

/// What the gateway child seeded, for the driver.
#[derive(Serialize, Deserialize)]
struct Seeded {
    base: String,
    admin_token: String,
    cluster: String,
    nodes: Vec<SeededNode>,
}

#[derive(Serialize, Deserialize)]
struct SeededNode {
    id: String,
    name: String,
    agent_token: String,
    /// (GPU id, UUID), by index.
    gpus: Vec<(String, String)>,
}

fn main() {
    egs_tests::bench_child::main(gateway, drive);
}

// ---- The gateway child ----

/// Starts the gateway, seeds the inventory and agent tokens, prints them as one JSON line,
/// and serves until its stdin closes (the driver ended).
async fn gateway() {
    let app = TestApp::spawn_with(egs_tests::one_user_for_many).await;
    let cluster = fixtures::register_cluster(&app, "load").await;
    let node_ids = fixtures::add_nodes(&app, &cluster, "h100", NODES, SHAPE_H100, GPUS_PER_NODE as i32).await;
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { message } } }";
    let gpus_of = "query($id: ID!) { node(id: $id) { ... on GpuNode { gpus { id uuid index } } } }";
    let mut nodes = Vec::with_capacity(NODES);
    for (n, id) in node_ids.into_iter().enumerate() {
        let name = format!("h100-{n}");
        let input = json!({ "name": format!("agent {name}"), "role": "AGENT", "clusterId": cluster, "nodeName": name });
        let agent_token = app.mutate(&app.admin_token, "createToken", create, input).await["secret"].as_str().expect("secret").to_owned();
        let data = app.ok(&app.admin_token, gpus_of, json!({ "id": id })).await;
        let mut gpus: Vec<(i64, String, String)> = data["node"]["gpus"]
            .as_array()
            .expect("gpus")
            .iter()
            .map(|g| {
                (
                    g["index"].as_i64().unwrap_or_default(),
                    g["id"].as_str().unwrap_or_default().to_owned(),
                    g["uuid"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        gpus.sort();
        nodes.push(SeededNode { id, name, agent_token, gpus: gpus.into_iter().map(|(_, id, uuid)| (id, uuid)).collect() });
    }
    let seeded = Seeded { base: app.url("/"), admin_token: app.admin_token.clone(), cluster, nodes };
    egs_tests::bench_child::announce_and_serve(app, &seeded).await;
}

// ---- The driver ----

/// When each (GPU index, second) report was sent.
type Sent = Mutex<HashMap<(u32, i64), Instant>>;

#[derive(Default)]
struct Counters {
    connected: AtomicU64,
    deliveries: AtomicU64,
    errors: AtomicU64,
    reports: AtomicU64,
    report_failures: AtomicU64,
}

struct Shared {
    sent: Sent,
    /// How long each report took to be answered (µs), while measuring.
    report_latencies: Mutex<Vec<u32>>,
    /// GPU id → index.
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
    let subscribers = egs_tests::env_count("EGS_BENCH_SUBSCRIBERS", 10_000) as usize;
    let secs = egs_tests::env_count("EGS_BENCH_SECS", 30);
    let started = Instant::now();
    let (mut gateway, seeded) = egs_tests::bench_child::start::<Seeded>(&[]);
    let pid = gateway.id();
    let seeded = Arc::new(seeded);
    let gpu_index = seeded.nodes.iter().flat_map(|n| n.gpus.iter().map(|(id, _)| id.clone())).enumerate().map(|(i, id)| (id, i as u32)).collect();
    let shared = Arc::new(Shared {
        sent: Mutex::new(HashMap::new()),
        report_latencies: Mutex::new(Vec::new()),
        gpu_index,
        counters: Counters::default(),
        measuring: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        first_error: Mutex::new(None),
    });
    let idle = egs_tests::process_usage(pid).map_or(0, |u| u.0);
    println!(
        "backend={} subscribers={subscribers} gpus={} nodes={NODES} secs={secs} (seeded in {:.1} s, gateway RSS {:.0} MiB)",
        std::env::var("EGS_TEST_DATABASE_URL").map_or("sqlite", |_| "postgres"),
        NODES * GPUS_PER_NODE,
        started.elapsed().as_secs_f64(),
        idle as f64 / 1024.0
    );

    // Subscribers.
    let ws_url = seeded.base.clone();
    let connecting = Arc::new(Semaphore::new(CONNECTING));
    let connect_started = Instant::now();
    let mut tasks = Vec::with_capacity(subscribers);
    for i in 0..subscribers {
        let (shared, seeded, url, connecting) = (shared.clone(), seeded.clone(), ws_url.clone(), connecting.clone());
        tasks.push(tokio::spawn(async move {
            let node = &seeded.nodes[(i / GPUS_PER_NODE) % NODES];
            let (query, id) = if i % 10 == 9 { (BY_NODE, node.id.clone()) } else { (BY_GPU, node.gpus[i % GPUS_PER_NODE].0.clone()) };
            let latencies = match subscriber(&url, &seeded.admin_token, query, &id, &shared, &connecting).await {
                Ok(latencies) => latencies,
                Err(e) => {
                    shared.error(format!("subscriber {i}: {e}"));
                    Vec::new()
                }
            };
            (query == BY_NODE, latencies)
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
    let client = reqwest::Client::builder().pool_max_idle_per_host(NODES * 2).timeout(Duration::from_secs(30)).build().expect("an HTTP client");
    let agents_start = tokio::time::Instant::now() + Duration::from_millis(100);
    let base = Utc::now().timestamp() + 1;
    let mut agents = Vec::new();
    for n in 0..NODES {
        let (client, seeded, shared) = (client.clone(), seeded.clone(), shared.clone());
        let offset = Duration::from_secs(1) * n as u32 / NODES as u32;
        agents.push(tokio::spawn(agent(client, seeded, shared, n, agents_start + offset, base)));
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
    tokio::time::sleep(WARM_UP).await;
    let cpu_before = egs_tests::process_usage(pid).map_or(0.0, |u| u.2);
    let driver_cpu_before = egs_tests::process_usage(std::process::id()).map_or(0.0, |u| u.2);
    let deliveries_before = shared.counters.deliveries.load(Ordering::Relaxed);
    let errors_before = shared.counters.errors.load(Ordering::Relaxed);
    shared.measuring.store(true, Ordering::Relaxed);
    let measured = Instant::now();
    tokio::time::sleep(Duration::from_secs(secs)).await;
    shared.measuring.store(false, Ordering::Relaxed);
    let window = measured.elapsed().as_secs_f64();
    let cpu = egs_tests::process_usage(pid).map_or(0.0, |u| u.2) - cpu_before;
    let driver_cpu = egs_tests::process_usage(std::process::id()).map_or(0.0, |u| u.2) - driver_cpu_before;
    let deliveries = shared.counters.deliveries.load(Ordering::Relaxed) - deliveries_before;
    let errors = shared.counters.errors.load(Ordering::Relaxed) - errors_before;
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
    let per_second: u64 = (0..subscribers).map(|i| if i % 10 == 9 { GPUS_PER_NODE as u64 } else { 1 }).sum();
    println!(
        "delivery:  report sent → sample received p50 {:.1} ms  p90 {:.1} ms  p99 {:.1} ms  max {:.1} ms  (target p99 ≤ 250 ms)",
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
    println!(
        "agents:    {} reports, {} failed; report answered p50 {:.1} ms  p99 {:.1} ms",
        shared.counters.reports.load(Ordering::Relaxed),
        shared.counters.report_failures.load(Ordering::Relaxed),
        quantile_ms(&reported, 50.0),
        quantile_ms(&reported, 99.0),
    );
    println!("errors:    {errors} while measuring, {} in all", shared.counters.errors.load(Ordering::Relaxed));
    if let Some(first) = shared.first_error.lock().unwrap_or_else(|p| p.into_inner()).take() {
        println!("           first: {first}");
    }
    println!(
        "gateway:   peak RSS {:.0} MiB sampled, {:.0} MiB high-water mark (target ≤ 1024 MiB); CPU {:.2} cores while measuring",
        peak.load(Ordering::Relaxed) as f64 / 1024.0,
        hwm as f64 / 1024.0,
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

/// One agent: reports its node's GPUs every second from `start` until told to stop.
async fn agent(client: reqwest::Client, seeded: Arc<Seeded>, shared: Arc<Shared>, n: usize, start: tokio::time::Instant, base: i64) {
    let node = &seeded.nodes[n];
    let url = format!("{}graphql", seeded.base);
    let mut ticks = tokio::time::interval_at(start, Duration::from_secs(1));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut k = 0u64;
    while !shared.stop.load(Ordering::Relaxed) {
        ticks.tick().await;
        let second = base + k as i64;
        k += 1;
        let at = DateTime::<Utc>::from_timestamp(second, 0).expect("a time");
        let samples: Vec<Value> = node
            .gpus
            .iter()
            .enumerate()
            .map(|(i, (_, uuid))| {
                let util = ((k * 7 + i as u64 * 13) % 100) as f64;
                json!({
                    "uuid": uuid, "timestamp": at.to_rfc3339(), "util": util, "memUtil": util / 2.0, "memUsedMib": 20_000.0 + util * 100.0,
                    "temperature": 35.0 + util / 2.0, "power": 90.0 + util * 6.0, "smClockMhz": 1980.0,
                })
            })
            .collect();
        let body = json!({ "query": REPORT, "variables": { "input": { "clusterId": seeded.cluster, "nodeName": node.name, "samples": samples } } });
        {
            let now = Instant::now();
            let mut sent = shared.sent.lock().unwrap_or_else(|p| p.into_inner());
            for i in 0..node.gpus.len() {
                sent.insert(((n * GPUS_PER_NODE + i) as u32, second), now);
            }
        }
        shared.counters.reports.fetch_add(1, Ordering::Relaxed);
        let asked = Instant::now();
        let outcome = async {
            let response = client.post(&url).bearer_auth(&node.agent_token).json(&body).send().await.map_err(|e| e.to_string())?;
            let value: Value = response.json().await.map_err(|e| e.to_string())?;
            match value["data"]["reportGpuSamples"]["accepted"].as_u64() {
                Some(accepted) if accepted == node.gpus.len() as u64 => Ok(()),
                _ => Err(value.to_string()),
            }
        };
        let outcome = outcome.await;
        if shared.measuring.load(Ordering::Relaxed) {
            shared.report_latencies.lock().unwrap_or_else(|p| p.into_inner()).push(asked.elapsed().as_micros().min(u32::MAX as u128) as u32);
        }
        if let Err(e) = outcome {
            shared.counters.report_failures.fetch_add(1, Ordering::Relaxed);
            shared.error(format!("agent {n}: {e}"));
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
                let samples = message["payload"]["data"]["gpuMetrics"]["samples"].as_array().cloned().unwrap_or_default();
                let sent = shared.sent.lock().unwrap_or_else(|p| p.into_inner());
                for sample in samples {
                    let gpu = sample["gpuId"].as_str().and_then(|id| shared.gpu_index.get(id));
                    let at = sample["time"].as_str().and_then(|t| DateTime::parse_from_rfc3339(t).ok()).map(|t| t.timestamp());
                    if let (Some(gpu), Some(at)) = (gpu, at)
                        && let Some(when) = sent.get(&(*gpu, at))
                    {
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
