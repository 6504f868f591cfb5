//! GPU metrics ingestion over HTTP against the real gateway: 1,000 GPUs (125 nodes × 8), one
//! simulated agent per node sending `reportGpuSamples` batches with its own agent token.
//!
//! `cargo bench -p egs-tests --bench ingest`
//!
//! Two phases of `EGS_BENCH_SECS` seconds each (default 10):
//!
//! 1. **flat out**: every agent sends its next 1-second batch (8 samples) as soon as the last
//!    one is answered, with timestamps a second apart from 20 h ago: the most samples/s the
//!    gateway takes in 8-sample requests;
//! 2. **1 Hz**: every agent reports once a second, spread evenly over the second, as real
//!    agents do: the sustained samples/s (1,000 offered) and request latency.
//!
//! It prints samples/s, latency quantiles, SQL statements per report, the in-memory history's
//! bytes per GPU (the documented bound, and the process RSS growth while the histories fill),
//! and failures. Nothing is asserted. Backend as `TestApp` picks (`EGS_TEST_DATABASE_URL` for
//! PostgreSQL); the scheduler loop runs alongside.

/// The same allocator as the `egs` binary, so the numbers are the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use chrono::{DateTime, Utc};
use egs_schema::metrics::store::BYTES_PER_GPU;
use egs_tests::TestApp;
use egs_tests::fixtures::{self, SHAPE_H100};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

const NODES: usize = 125;
const GPUS_PER_NODE: i32 = 8;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const REPORT: &str = "mutation($input: ReportGpuSamplesInput!) { reportGpuSamples(input: $input) { accepted duplicates userErrors { message } } }";

struct Agent {
    cluster: String,
    node: String,
    uuids: Vec<String>,
    token: String,
}

fn batch(agent: &Agent, at: DateTime<Utc>, n: u64) -> Value {
    let samples: Vec<Value> = agent
        .uuids
        .iter()
        .enumerate()
        .map(|(i, uuid)| {
            let util = ((n * 7 + i as u64 * 13) % 100) as f64;
            json!({
                "uuid": uuid, "timestamp": at.to_rfc3339(), "util": util, "memUtil": util / 2.0, "memUsedMib": 20_000.0 + util * 100.0,
                "temperature": 35.0 + util / 2.0, "power": 90.0 + util * 6.0, "smClockMhz": 1980.0,
            })
        })
        .collect();
    json!({ "query": REPORT, "variables": { "input": { "clusterId": agent.cluster, "nodeName": agent.node, "samples": samples } } })
}

/// Accepted and duplicate samples of one report.
async fn send(client: &reqwest::Client, url: &str, agent: &Agent, body: &Value) -> Result<(u64, u64), String> {
    let response = client.post(url).bearer_auth(&agent.token).json(body).send().await.map_err(|e| format!("transport: {e}"))?;
    let status = response.status();
    let value: Value = response.json().await.map_err(|e| format!("body: {e}"))?;
    if !status.is_success() || value.get("errors").is_some() {
        return Err(format!("HTTP {status}: {value}"));
    }
    let payload = &value["data"]["reportGpuSamples"];
    if payload["userErrors"].as_array().is_none_or(|e| !e.is_empty()) {
        return Err(format!("userErrors: {}", payload["userErrors"]));
    }
    Ok((payload["accepted"].as_u64().unwrap_or_default(), payload["duplicates"].as_u64().unwrap_or_default()))
}

#[derive(Default)]
struct Totals {
    reports: u64,
    accepted: u64,
    duplicates: u64,
    failures: u64,
    first_failure: Option<String>,
    latencies_us: Vec<u64>,
}

impl Totals {
    fn add(&mut self, other: Totals) {
        self.reports += other.reports;
        self.accepted += other.accepted;
        self.duplicates += other.duplicates;
        self.failures += other.failures;
        self.latencies_us.extend(other.latencies_us);
        if self.first_failure.is_none() {
            self.first_failure = other.first_failure;
        }
    }

    fn record(&mut self, outcome: Result<(u64, u64), String>, took: Duration) {
        self.reports += 1;
        match outcome {
            Ok((accepted, duplicates)) => {
                self.accepted += accepted;
                self.duplicates += duplicates;
                self.latencies_us.push(took.as_micros() as u64);
            }
            Err(e) => {
                self.failures += 1;
                self.first_failure.get_or_insert(e);
            }
        }
    }

    fn print(mut self, name: &str, secs: f64, statements: u64) {
        self.latencies_us.sort_unstable();
        let q = |p: f64| {
            if self.latencies_us.is_empty() {
                return f64::NAN;
            }
            let rank = ((p / 100.0) * self.latencies_us.len() as f64).ceil() as usize;
            self.latencies_us[rank.clamp(1, self.latencies_us.len()) - 1] as f64 / 1000.0
        };
        println!(
            "{name:<10} {:>8.0} samples/s  {:>6.0} reports/s  p50 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms  \
             ({} reports, {} samples accepted, {} duplicates, {} failed, {:.1} SQL statements/report)",
            self.accepted as f64 / secs,
            self.reports as f64 / secs,
            q(50.0),
            q(99.0),
            q(100.0),
            self.reports,
            self.accepted,
            self.duplicates,
            self.failures,
            statements as f64 / self.reports.max(1) as f64,
        );
        if let Some(failure) = self.first_failure {
            println!("{:<10} first failure: {failure}", "");
        }
    }
}

/// Every agent sends back to back for `secs`, timestamps one second apart from `base`.
async fn flat_out(client: &reqwest::Client, url: &str, agents: &Arc<Vec<Agent>>, secs: u64, base: DateTime<Utc>) -> Totals {
    let stop = Instant::now() + Duration::from_secs(secs);
    let mut tasks = Vec::new();
    for i in 0..agents.len() {
        let (client, url, agents) = (client.clone(), url.to_owned(), agents.clone());
        tasks.push(tokio::spawn(async move {
            let mut totals = Totals::default();
            let mut n = 0u64;
            while Instant::now() < stop {
                let body = batch(&agents[i], base + chrono::Duration::seconds(n as i64), n);
                let sent = Instant::now();
                let outcome = send(&client, &url, &agents[i], &body).await;
                totals.record(outcome, sent.elapsed());
                n += 1;
            }
            totals
        }));
    }
    let mut totals = Totals::default();
    for task in tasks {
        totals.add(task.await.expect("an agent task"));
    }
    totals
}

/// Every agent reports once a second for `secs`, the agents spread over the second.
async fn one_hertz(client: &reqwest::Client, url: &str, agents: &Arc<Vec<Agent>>, secs: u64) -> Totals {
    let start = tokio::time::Instant::now();
    let base = Utc::now().timestamp() + 1;
    let mut tasks = Vec::new();
    for i in 0..agents.len() {
        let (client, url, agents) = (client.clone(), url.to_owned(), agents.clone());
        let offset = Duration::from_secs(1) * i as u32 / agents.len() as u32;
        tasks.push(tokio::spawn(async move {
            let mut totals = Totals::default();
            let mut ticks = tokio::time::interval_at(start + offset, Duration::from_secs(1));
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            for _ in 0..secs {
                ticks.tick().await;
                // The second this tick stands for, whatever the jitter.
                let n = start.elapsed().as_secs();
                let at = DateTime::from_timestamp(base + n as i64, 0).expect("a time");
                let body = batch(&agents[i], at, n);
                let sent = Instant::now();
                let outcome = send(&client, &url, &agents[i], &body).await;
                totals.record(outcome, sent.elapsed());
            }
            totals
        }));
    }
    let mut totals = Totals::default();
    for task in tasks {
        totals.add(task.await.expect("an agent task"));
    }
    totals
}

/// Resident memory of this process (the gateway runs in it), from `/proc`.
fn rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: f64 = status.lines().find(|l| l.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

async fn seed(app: &TestApp) -> Vec<Agent> {
    let cluster = fixtures::register_cluster(app, "bench").await;
    fixtures::add_nodes(app, &cluster, "h100", NODES, SHAPE_H100, GPUS_PER_NODE).await;
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { message } } }";
    let mut agents = Vec::with_capacity(NODES);
    for n in 0..NODES {
        let node = format!("h100-{n}");
        let input = json!({ "name": format!("agent {node}"), "role": "AGENT", "clusterId": cluster, "nodeName": node });
        let token = app.mutate(&app.admin_token, "createToken", create, input).await["secret"].as_str().expect("secret").to_owned();
        // The fixture's GPU UUIDs.
        let uuids = (0..GPUS_PER_NODE).map(|i| format!("GPU-{cluster}-{node}-{i}")).collect();
        agents.push(Agent { cluster: cluster.clone(), node, uuids, token });
    }
    agents
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    runtime.block_on(run());
}

async fn run() {
    let secs = std::env::var("EGS_BENCH_SECS").ok().and_then(|v| v.trim().parse::<u64>().ok()).filter(|v| *v > 0).unwrap_or(10);
    let client = reqwest::Client::builder().pool_max_idle_per_host(NODES * 2).timeout(REQUEST_TIMEOUT).build().expect("an HTTP client");
    let app = TestApp::spawn().await;
    let url = app.url("/graphql");
    println!("backend={} nodes={NODES} gpus={} secs={secs} (per phase)", app.backend, NODES * GPUS_PER_NODE as usize);
    let agents = Arc::new(seed(&app).await);

    let rss_before = rss_mib();
    let before = app.statements.get();
    let started = Instant::now();
    let totals = flat_out(&client, &url, &agents, secs, Utc::now() - chrono::Duration::hours(20)).await;
    let statements = app.statements.get() - before;
    totals.print("flat out:", started.elapsed().as_secs_f64(), statements);

    let before = app.statements.get();
    let started = Instant::now();
    let totals = one_hertz(&client, &url, &agents, secs).await;
    let statements = app.statements.get() - before;
    totals.print("1 Hz:", started.elapsed().as_secs_f64(), statements);
    println!("{:<10} target: 1,000 samples/s offered (1,000 GPUs at 1 Hz)", "");

    let gpus = NODES * GPUS_PER_NODE as usize;
    println!(
        "history:   {BYTES_PER_GPU} bytes per GPU (bound), {:.1} MiB for these {gpus} GPUs; process RSS grew {} while they filled",
        (BYTES_PER_GPU * gpus) as f64 / (1024.0 * 1024.0),
        match (rss_before, rss_mib()) {
            (Some(before), Some(after)) => format!("{:.1} MiB (to {after:.0} MiB)", after - before),
            _ => "(unknown)".to_owned(),
        }
    );
    app.finish().await;
}
