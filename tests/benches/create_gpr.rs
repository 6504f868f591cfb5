//! `createGpr` over HTTP against the real gateway, scheduler loop running (issue 3: "≥ 200/s
//! sustained with p99 ≤ 100 ms on PostgreSQL").
//!
//! `cargo bench -p egs-tests --bench create_gpr`
//!
//! The gateway runs on whatever backend `TestApp` picks: SQLite by default, PostgreSQL when
//! `EGS_TEST_DATABASE_URL` is set (Redis when `EGS_TEST_REDIS_URL` is). Its scheduler loop runs
//! beside the API, so the numbers include the loop's load. The seed: one cluster of `NODES` H100
//! nodes (8 GPUs each) and `SLICES` slices with an editor's token each. A slice runs one GPR at
//! a time but can queue many, so the calls are spread over all the slices' tokens; each GPR asks
//! for 1–4 nodes for 1–6 hours at priority 1–200, and most of them queue.
//!
//! `EGS_BENCH_CONCURRENCY` client tasks (default 16) share one keep-alive `reqwest::Client` for
//! `EGS_BENCH_SECS` seconds (default 10) after a 1 s warm-up. Numbers are printed, nothing is
//! asserted; afterwards the GPR rows in the database are counted against the successful calls.

/// The same allocator as the `egs` binary, so the numbers are the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use egs_tests::TestApp;
use egs_tests::fixtures::{self, CREATE_GPR, SHAPE_H100};
use sea_orm::{EntityTrait, PaginatorTrait};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const NODES: usize = 64;
const GPUS_PER_NODE: i32 = 8;
const SLICES: usize = 200;
/// No request should take this long; one that does is counted as a failure, not waited on.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

struct Config {
    secs: u64,
    concurrency: usize,
}

impl Config {
    fn from_env() -> Self {
        let read =
            |name: &str, default: u64| std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok()).filter(|v| *v > 0).unwrap_or(default);
        Self { secs: read("EGS_BENCH_SECS", 10), concurrency: read("EGS_BENCH_CONCURRENCY", 16) as usize }
    }
}

/// A slice the load may create GPRs in, with its editor's token.
struct Tenant {
    slice_id: String,
    token: String,
}

/// splitmix64: a deterministic spread of GPR sizes, windows and priorities, no dependency.
fn mix(n: u64) -> u64 {
    let mut z = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The `n`th request's body: a slice by turns, 1–4 nodes, 1–6 h, priority 1–200 (the default
/// policy's range, so none needs approval).
fn body(n: u64, tenant: &Tenant) -> Value {
    let r = mix(n);
    let nodes = 1 + r % 4;
    let hours = 1 + (r >> 8) % 6;
    let priority = 1 + (r >> 16) % 200;
    json!({
        "query": CREATE_GPR,
        "variables": { "input": {
            "sliceId": tenant.slice_id,
            "name": format!("bench-{n}"),
            "nodeCount": nodes,
            "gpuShape": SHAPE_H100,
            "duration": format!("{hours}h"),
            "priority": priority,
        } },
    })
}

/// Sends one `createGpr`; `Ok` only for HTTP 2xx, no `errors`, no `userErrors` and a GPR back.
async fn send(client: &reqwest::Client, url: &str, tenant: &Tenant, body: &Value) -> Result<(), String> {
    let response = client
        .post(url)
        .header("accept", "application/json")
        .bearer_auth(&tenant.token)
        .json(body)
        .send()
        .await
        .map_err(|e| format!("transport: {e}"))?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(|e| format!("body: {e}"))?;
    if !status.is_success() {
        return Err(format!("HTTP {status}: {}", String::from_utf8_lossy(&bytes[..bytes.len().min(300)])));
    }
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| format!("not JSON: {e}"))?;
    if let Some(errors) = value.get("errors") {
        return Err(format!("GraphQL errors: {errors}"));
    }
    let payload = &value["data"]["createGpr"];
    match payload["userErrors"].as_array() {
        Some(errors) if errors.is_empty() => {}
        _ => return Err(format!("userErrors: {}", payload["userErrors"])),
    }
    if !payload["gpr"]["id"].is_string() {
        return Err(format!("no GPR in the payload: {payload}"));
    }
    Ok(())
}

#[derive(Default)]
struct TaskResult {
    /// Every request sent, warm-up and tail included.
    sent: u64,
    /// Every successful create, warm-up and tail included: what the database must hold.
    created: u64,
    /// Failures inside the measured window.
    failures: u64,
    /// Failures outside it (warm-up, tail), which still explain a row-count difference.
    failures_outside: u64,
    latencies_us: Vec<u64>,
    first_failure: Option<String>,
}

struct Report {
    sent: u64,
    created: u64,
    /// Requests that finished inside the measured window, failed ones included.
    requests: u64,
    failures: u64,
    failures_outside: u64,
    first_failure: Option<String>,
    rps: f64,
    p50_ms: f64,
    p95_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

async fn measure(client: &reqwest::Client, url: &str, tenants: Arc<Vec<Tenant>>, config: &Config) -> Report {
    let window = Duration::from_secs(config.secs);
    let start = Instant::now();
    let measure_from = start + Duration::from_secs(1);
    let stop = Arc::new(AtomicBool::new(false));
    let next = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::with_capacity(config.concurrency);
    for _ in 0..config.concurrency {
        let (client, url, tenants, stop, next) = (client.clone(), url.to_owned(), tenants.clone(), stop.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            let mut result = TaskResult::default();
            while !stop.load(Ordering::Relaxed) {
                let n = next.fetch_add(1, Ordering::Relaxed);
                let tenant = &tenants[(n % tenants.len() as u64) as usize];
                let body = body(n, tenant);
                let sent = Instant::now();
                let outcome = send(&client, &url, tenant, &body).await;
                let done = Instant::now();
                result.sent += 1;
                if outcome.is_ok() {
                    result.created += 1;
                }
                let inside = sent >= measure_from && !stop.load(Ordering::Relaxed);
                match outcome {
                    Ok(()) if inside => result.latencies_us.push(done.duration_since(sent).as_micros() as u64),
                    Ok(()) => {}
                    Err(e) => {
                        if inside {
                            result.failures += 1;
                        } else {
                            result.failures_outside += 1;
                        }
                        result.first_failure.get_or_insert(e);
                    }
                }
            }
            result
        }));
    }
    tokio::time::sleep_until((measure_from + window).into()).await;
    stop.store(true, Ordering::Relaxed);
    let mut latencies = Vec::new();
    let (mut sent, mut created, mut failures, mut failures_outside, mut first_failure) = (0, 0, 0, 0, None);
    for task in tasks {
        let result = task.await.expect("a client task");
        sent += result.sent;
        created += result.created;
        failures += result.failures;
        failures_outside += result.failures_outside;
        latencies.extend(result.latencies_us);
        if first_failure.is_none() {
            first_failure = result.first_failure;
        }
    }
    latencies.sort_unstable();
    let percentile = |p: f64| -> f64 {
        if latencies.is_empty() {
            return f64::NAN;
        }
        let rank = ((p / 100.0) * latencies.len() as f64).ceil() as usize;
        latencies[rank.clamp(1, latencies.len()) - 1] as f64 / 1000.0
    };
    Report {
        sent,
        created,
        requests: latencies.len() as u64 + failures,
        failures,
        failures_outside,
        first_failure,
        rps: latencies.len() as f64 / window.as_secs_f64(),
        p50_ms: percentile(50.0),
        p95_ms: percentile(95.0),
        p99_ms: percentile(99.0),
        max_ms: percentile(100.0),
    }
}

/// One cluster of `NODES` H100 nodes and `SLICES` slices with an editor's token each.
async fn seed(app: &TestApp) -> Vec<Tenant> {
    let cluster = fixtures::register_cluster(app, "bench").await;
    fixtures::add_nodes(app, &cluster, "h100", NODES, SHAPE_H100, GPUS_PER_NODE).await;
    let mut tenants = Vec::with_capacity(SLICES);
    for i in 0..SLICES {
        let slice_id = fixtures::create_slice(app, &format!("team-{i}"), &cluster, json!({})).await;
        let (_, token) = fixtures::member(app, &format!("user-{i}"), &slice_id, "EDITOR").await;
        tenants.push(Tenant { slice_id, token });
    }
    tenants
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    runtime.block_on(run());
}

async fn run() {
    let config = Config::from_env();
    let client = reqwest::Client::builder().pool_max_idle_per_host(config.concurrency * 2).timeout(REQUEST_TIMEOUT).build().expect("an HTTP client");

    let app = TestApp::spawn().await;
    let redis = if std::env::var("EGS_TEST_REDIS_URL").is_ok_and(|u| !u.is_empty()) { "redis" } else { "none" };
    println!("backend={} redis={redis} scheduler=on concurrency={} secs={}", app.backend, config.concurrency, config.secs);

    let seeding = Instant::now();
    let tenants = Arc::new(seed(&app).await);
    println!(
        "seeded 1 cluster x {NODES} nodes x {GPUS_PER_NODE} GPUs, {SLICES} slices with an editor each in {:.1} s",
        seeding.elapsed().as_secs_f64()
    );

    let before = app.statements.get();
    let report = measure(&client, &app.url("/graphql"), tenants, &config).await;
    let per_request = (app.statements.get() - before) as f64 / report.sent.max(1) as f64;
    println!(
        "{:<22} {:>9.0} req/s  p50 {:>7.2} ms  p95 {:>7.2} ms  p99 {:>7.2} ms  max {:>7.2} ms  ({} requests, {} failed)  \
         target >= 200/s, p99 <= 100 ms (PostgreSQL)",
        "createGpr:", report.rps, report.p50_ms, report.p95_ms, report.p99_ms, report.max_ms, report.requests, report.failures
    );
    if let Some(failure) = &report.first_failure {
        println!("{:<22} first failure: {failure}", "");
    }
    println!("{:<22} {per_request:.1} SQL statements per createGpr under load (the scheduler loop's included)", "");

    let rows = egs_entities::gpr::Entity::find().count(&app.db).await.expect("count GPR rows");
    let mut phases = BTreeMap::<&str, u64>::new();
    for gpr in egs_entities::gpr::Entity::find().all(&app.db).await.expect("read GPR rows") {
        *phases.entry(gpr.phase.as_str()).or_default() += 1;
    }
    let phases = phases.iter().map(|(phase, n)| format!("{phase} {n}")).collect::<Vec<_>>().join(", ");
    let verdict = if rows == report.created { "match" } else { "MISMATCH" };
    println!(
        "database: {rows} GPR rows, {} successful creates (warm-up included; {} sent, {} failed outside the window): {verdict}; phases: {phases}",
        report.created, report.sent, report.failures_outside
    );

    println!("failures: {}", report.failures + report.failures_outside);
    app.finish().await;
}
