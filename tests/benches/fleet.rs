//! Fleet scale: one gateway over 10,000 GPU nodes × 8 GPUs (80,000 GPUs).
//!
//! `cargo bench -p egs-tests --bench fleet`
//!
//! PostgreSQL when `EGS_TEST_DATABASE_URL` is set (the target), SQLite otherwise.
//! `EGS_BENCH_NODES` nodes (default 10,000) in `EGS_BENCH_CLUSTERS` clusters (default 10),
//! 8 GPUs each, all seeded through the API: `upsertNodes` 500 nodes a call, then one
//! `reportGpuSamples` per node (an admin's report: the nodes never read as stale), then one
//! slice per cluster whose GPRs ask for more nodes than the cluster has, so most nodes are held
//! and a queue waits.
//!
//! Timed, one request at a time (what one person opening the portal feels):
//! - the portal's first pages, with the documents the portal sends (read from its generated
//!   `web/portal/src/gql/gql.ts`, fragments included): the admin dashboard, clusters, one
//!   cluster, GPUs hot spots first (the first page, and the ten pages the GPU table reads), one
//!   GPU's page;
//! - `/metrics` (every GPU's latest sample under dcgm-exporter's names);
//! - the scheduler's ticks, from the gateway's own `egs_scheduler_tick_duration_seconds`,
//!   over the seeding and while GPRs are submitted and cancelled.
//!
//! Numbers are printed with the targets beside them; nothing is asserted.

/// The same allocator as the `egs` binary, so the numbers are the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use egs_tests::fixtures::*;
use egs_tests::ticks::Ticks;
use egs_tests::{TestApp, quantile};
use futures_util::StreamExt;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};

const GPUS_PER_NODE: usize = 8;
const NODES_PER_UPSERT: usize = 500;
const SLICES_PER_CLUSTER: usize = 5;
/// Requests per timed page.
const ROUNDS: usize = 40;

/// The portal's operations by name, each with the fragments it spreads, as the portal sends
/// them: read from the generated document map, so this bench cannot drift from the pages.
fn portal_documents() -> HashMap<String, String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../web/portal/src/gql/gql.ts");
    let source = std::fs::read_to_string(path).expect("the portal's generated gql.ts");
    let mut definitions = HashMap::new();
    for line in source.lines().map(str::trim) {
        let Some((key, _)) = line.split_once(": typeof types.") else { continue };
        let Ok(text) = serde_json::from_str::<String>(key) else { continue };
        let mut words = text.split_whitespace();
        if let (Some("query" | "fragment"), Some(name)) = (words.next(), words.next()) {
            let name = name.split(['(', '{']).next().unwrap_or(name).to_owned();
            definitions.insert(name, text);
        }
    }
    let mut documents = HashMap::new();
    for (name, text) in &definitions {
        if !text.trim_start().starts_with("query") {
            continue;
        }
        let mut document = text.clone();
        let mut included = Vec::new();
        loop {
            let mut spread: Vec<String> = document
                .match_indices("...")
                .map(|(at, _)| document[at + 3..].split(|c: char| !c.is_alphanumeric() && c != '_').next().unwrap_or("").to_owned())
                .filter(|f| !f.is_empty() && f != "on" && !included.contains(f))
                .collect();
            spread.sort();
            spread.dedup();
            if spread.is_empty() {
                break;
            }
            for fragment in spread {
                document.push_str(definitions.get(&fragment).unwrap_or_else(|| panic!("fragment {fragment} of {name}")));
                included.push(fragment);
            }
        }
        documents.insert(name.clone(), document);
    }
    documents
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs `query` `ROUNDS` times after two warm-ups; prints p50, p99 and the largest.
async fn page(app: &TestApp, label: &str, query: &str, variables: Value, target_ms: f64) -> Value {
    let mut last = Value::Null;
    let mut times = Vec::with_capacity(ROUNDS);
    for round in 0..ROUNDS + 2 {
        let started = Instant::now();
        last = app.ok(&app.admin_token, query, variables.clone()).await;
        if round >= 2 {
            times.push(started.elapsed());
        }
    }
    times.sort();
    let p99 = quantile(&times, 0.99);
    println!(
        "  {label:<38} p50 {:>7.1} ms  p99 {:>7.1} ms  max {:>7.1} ms  (target p99 <= {target_ms} ms {})",
        ms(quantile(&times, 0.5)),
        ms(p99),
        ms(*times.last().unwrap_or(&Duration::ZERO)),
        if ms(p99) <= target_ms { "✔" } else { "✘" }
    );
    last
}

async fn scrape(app: &TestApp) -> (String, Duration) {
    let started = Instant::now();
    let text = app.metrics_text().await;
    (text, started.elapsed())
}

fn report_ticks(label: &str, before: &str, after: &str) {
    println!("  {label:<38} {}", Ticks::parse(before).since(&Ticks::parse(after)));
}

fn main() {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime").block_on(run());
}

async fn run() {
    let nodes = egs_tests::env_number("EGS_BENCH_NODES", 10_000) as usize;
    let clusters = (egs_tests::env_number("EGS_BENCH_CLUSTERS", 10) as usize).clamp(1, nodes.max(1));
    let documents = portal_documents();
    let app = TestApp::spawn_with(egs_tests::one_user_for_many).await;
    println!("backend={} nodes={nodes} gpus={} clusters={clusters}", app.backend, nodes * GPUS_PER_NODE);
    let (start_metrics, _) = scrape(&app).await;

    // ---- Seed the inventory through the API ----
    let started = Instant::now();
    let mut cluster_ids = Vec::new();
    let mut node_ids: Vec<(String, String, String)> = Vec::new(); // (cluster id, node id, node name)
    for c in 0..clusters {
        let cluster = register_cluster(&app, &format!("fleet-{c}")).await;
        let count = nodes / clusters + usize::from(c < nodes % clusters);
        let shape = if c % 2 == 0 { SHAPE_H100 } else { SHAPE_A100 };
        for chunk_start in (0..count).step_by(NODES_PER_UPSERT) {
            let chunk = NODES_PER_UPSERT.min(count - chunk_start);
            let prefix = format!("c{c}-{chunk_start}");
            let ids = add_nodes(&app, &cluster, &prefix, chunk, shape, GPUS_PER_NODE as i32).await;
            node_ids.extend(ids.into_iter().enumerate().map(|(n, id)| (cluster.clone(), id, format!("{prefix}-{n}"))));
        }
        cluster_ids.push(cluster);
    }
    let seeded = started.elapsed();
    println!(
        "seed: {} nodes through upsertNodes in {:.1} s ({:.0} nodes/s)",
        node_ids.len(),
        seeded.as_secs_f64(),
        node_ids.len() as f64 / seeded.as_secs_f64()
    );

    // One report per node, 16 in flight: every GPU gets a latest sample, some of them hot.
    let report = "mutation($input: ReportGpuSamplesInput!) { reportGpuSamples(input: $input) { accepted userErrors { field message code } } }";
    let started = Instant::now();
    let now = chrono::Utc::now();
    let reports = futures_util::stream::iter(node_ids.iter().enumerate().map(|(n, (cluster, _, name))| {
        let app = &app;
        async move {
            let samples: Vec<Value> = (0..GPUS_PER_NODE)
                .map(|i| {
                    let uuid = format!("GPU-{cluster}-{name}-{i}");
                    let util = ((n * 7 + i * 13) % 101) as f64;
                    if (n + i) % 97 == 0 { gpu_sample_hot(&uuid, now, 88.0, 690.0) } else { gpu_sample(&uuid, now, util) }
                })
                .collect();
            let payload =
                app.mutate(&app.admin_token, "reportGpuSamples", report, json!({ "clusterId": cluster, "nodeName": name, "samples": samples })).await;
            assert_eq!(payload["accepted"], json!(GPUS_PER_NODE), "{payload}");
        }
    }))
    .buffer_unordered(16)
    .collect::<Vec<()>>();
    reports.await;
    let took = started.elapsed();
    let (after_inventory, _) = scrape(&app).await;
    let samples = node_ids.len() * GPUS_PER_NODE;
    println!(
        "seed: {samples} samples in {} reports in {:.1} s ({:.0} samples/s)",
        node_ids.len(),
        took.as_secs_f64(),
        samples as f64 / took.as_secs_f64()
    );

    // Five slices per cluster (a slice runs one GPR at a time): the first GPRs of four of them
    // hold the cluster, the fifth slice's and every second GPR wait in the queue.
    let started = Instant::now();
    let per_gpr = (nodes / clusters / 4).max(1);
    let mut tokens = Vec::new();
    let mut gprs = 0;
    for (c, cluster) in cluster_ids.iter().enumerate() {
        let shape = if c % 2 == 0 { SHAPE_H100 } else { SHAPE_A100 };
        for s in 0..SLICES_PER_CLUSTER {
            let slice = create_slice(&app, &format!("team-{c}-{s}"), cluster, json!({})).await;
            let (_, token) = member(&app, &format!("user-{c}-{s}"), &slice, "EDITOR").await;
            for g in 0..2 {
                let gpr = create_gpr(
                    &app,
                    &token,
                    &slice,
                    &format!("train-{c}-{s}-{g}"),
                    json!({ "nodeCount": per_gpr, "gpuShape": shape, "duration": "8h" }),
                )
                .await;
                assert!(gpr["id"].is_string(), "createGpr: {gpr}");
                gprs += 1;
            }
            tokens.push((slice, token, shape));
        }
    }
    // Wait until the first GPRs hold their nodes.
    let want = (4 * per_gpr * clusters) as i64;
    let deadline = Instant::now() + Duration::from_secs(120);
    let (held, queued) = loop {
        let data = app.ok(&app.admin_token, "{ pools { reservedNodes } queue(first: 500) { id } }", json!({})).await;
        let held: i64 = data["pools"].as_array().into_iter().flatten().map(|p| p["reservedNodes"].as_i64().unwrap_or(0)).sum();
        let queued = data["queue"].as_array().map_or(0, Vec::len);
        if held >= want || Instant::now() > deadline {
            break (held, queued);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    println!("seed: {gprs} GPRs of {per_gpr} nodes in {:.1} s; {held} nodes held, {queued} GPRs queued", started.elapsed().as_secs_f64());
    let (seeded_metrics, _) = scrape(&app).await;
    println!("scheduler:");
    report_ticks("ticks while nodes and samples arrive", &start_metrics, &after_inventory);
    report_ticks("ticks admitting the GPRs", &after_inventory, &seeded_metrics);

    // ---- The portal's first pages ----
    let doc = |name: &str| documents.get(name).unwrap_or_else(|| panic!("the portal has no {name} query")).clone();
    println!("portal pages (one request at a time, {ROUNDS} each):");
    page(&app, "AdminDashboard", &doc("AdminDashboard"), json!({}), 200.0).await;
    page(&app, "AdminClusters", &doc("AdminClusters"), json!({}), 200.0).await;
    page(&app, "AdminClusterDetail (one cluster)", &doc("AdminClusterDetail"), json!({ "id": cluster_ids[0] }), 200.0).await;
    let first = page(&app, "GpusTable, hot spots first, 1st page", &doc("GpusTable"), json!({ "first": 100 }), 200.0).await;
    let hottest = first["gpus"]["nodes"][0].clone();
    assert!(hottest["latestSample"]["temperature"].as_f64().is_some_and(|t| t >= 88.0), "the hottest GPU leads: {hottest}");
    page(&app, "GpuDashboardInfo (one GPU)", &doc("GpuDashboardInfo"), json!({ "id": hottest["id"] }), 200.0).await;
    // The GPU table reads up to ten pages per refresh.
    let mut times = Vec::new();
    for _ in 0..5 {
        let started = Instant::now();
        let mut after = Value::Null;
        for _ in 0..10 {
            let data = app.ok(&app.admin_token, &doc("GpusTable"), json!({ "first": 100, "after": after })).await;
            after = data["gpus"]["pageInfo"]["endCursor"].clone();
        }
        times.push(started.elapsed());
    }
    times.sort();
    println!("  {:<38} median {:>6.1} ms  max {:>6.1} ms  (the GPU table's refresh)", "GpusTable, 10 pages of 100", ms(times[2]), ms(times[4]));

    // ---- /metrics ----
    let mut scrapes = Vec::new();
    let mut size = 0;
    for _ in 0..5 {
        let (text, took) = scrape(&app).await;
        size = text.len();
        scrapes.push(took);
    }
    scrapes.sort();
    println!(
        "/metrics: median {:.0} ms, max {:.0} ms, {:.1} MB  (target <= 2000 ms {})",
        ms(scrapes[2]),
        ms(scrapes[4]),
        size as f64 / 1e6,
        if ms(scrapes[4]) <= 2000.0 { "✔" } else { "✘" }
    );

    // ---- The scheduler under churn: submit and cancel while the fleet is full ----
    let churn_secs = egs_tests::env_number("EGS_BENCH_CHURN_SECS", 10);
    let (before, _) = scrape(&app).await;
    let cancel = "mutation($input: GprActionInput!) { cancelGpr(input: $input) { gpr { id } userErrors { field message code } } }";
    let until = Instant::now() + Duration::from_secs(churn_secs);
    let mut n = 0;
    while Instant::now() < until {
        let (slice, token, shape) = &tokens[n % tokens.len()];
        let gpr = create_gpr(&app, token, slice, &format!("churn-{n}"), json!({ "nodeCount": 8, "gpuShape": shape, "duration": "1h" })).await;
        app.mutate(token, "cancelGpr", cancel, json!({ "id": gpr["id"] })).await;
        n += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let (after, _) = scrape(&app).await;
    report_ticks(&format!("ticks under churn ({n} submits+cancels)"), &before, &after);
    app.finish().await;
}
