//! The cost gate against hostile documents: how long the gateway takes to answer the documents
//! that once stalled it (fragments each spreading the next ten times), and whether `/healthz`
//! notices while eight of them are in flight.
//!
//! `cargo bench -p egs-tests --bench gate`
//!
//! Three figures: the gate alone (`Gate::admit`, in process, the median of `EGS_BENCH_ROUNDS`
//! runs, default 20), the whole anonymous HTTP request for the same document (the gate,
//! async-graphql's parse and, for what the gate admits, its validation and execution), and
//! `/healthz` latency quantiles with and without eight clients sending adversarial documents
//! back to back for `EGS_BENCH_SECS` seconds (default 5). Target: ≤ 5 ms a document at
//! D = 8, 12, 20, `/healthz` p99 unchanged within a few milliseconds.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use egs_domain::auth::Principal;
use egs_schema::limits::{Gate, adversarial_document};
use egs_tests::{TestApp, env_count, quantile};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// (depth, fanout, leaf): the shapes, and two the gate admits (about 1,100 and 9,000
/// selections once expanded), so async-graphql's own validation, which walks fragments where
/// they are spread, is timed too.
const DOCUMENTS: [(usize, usize, &str); 7] = [
    (4, 10, "__typename"),
    (5, 8, "__typename"),
    (6, 10, "__typename"),
    (8, 10, "__typename"),
    (12, 10, "__typename"),
    (20, 10, "me { name }"),
    (20, 2, "__typename"),
];

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    quantile(&times, 0.5)
}

async fn healthz_latencies(app: &TestApp, client: &reqwest::Client, secs: u64) -> Vec<Duration> {
    let mut times = Vec::new();
    let until = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < until {
        let started = Instant::now();
        let response = client.get(app.url("/healthz")).send().await.expect("/healthz answers");
        assert!(response.status().is_success(), "/healthz answered {}", response.status());
        times.push(started.elapsed());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    times.sort();
    times
}

#[tokio::main]
async fn main() {
    let rounds = env_count("EGS_BENCH_ROUNDS", 20) as usize;
    let secs = env_count("EGS_BENCH_SECS", 5);
    let gate = Gate::new(None);
    let app = TestApp::spawn().await;
    let client = reqwest::Client::new();

    println!("document                       bytes   gate (median)   HTTP (median)   answer");
    for (depth, fanout, leaf) in DOCUMENTS {
        let text = adversarial_document(depth, fanout, leaf);
        let mut gate_times = Vec::new();
        let mut answer = String::new();
        for _ in 0..rounds {
            let mut request = async_graphql::Request::new(text.clone());
            let started = Instant::now();
            let admitted = gate.admit(&mut request, Principal::Anonymous);
            gate_times.push(started.elapsed());
            answer = match admitted {
                Ok(_) => "admitted".into(),
                Err(error) => error.extensions.as_ref().and_then(|e| e.get("code")).map(|c| c.to_string()).unwrap_or(error.message),
            };
        }
        let mut http_times = Vec::new();
        let mut status = String::new();
        for _ in 0..rounds {
            let started = Instant::now();
            let response = app.post(None, json!({ "query": text })).await;
            let code = response.status();
            let body: serde_json::Value = response.json().await.expect("a JSON body");
            http_times.push(started.elapsed());
            status = match body["errors"][0]["extensions"]["code"].as_str() {
                Some(code) => code.to_owned(),
                None => code.to_string(),
            };
        }
        let name = format!("D={depth} fanout={fanout} ({})", leaf.split_whitespace().next().unwrap_or(leaf));
        println!(
            "{name:<30} {:>5}   {:>10.3} ms   {:>10.3} ms   gate: {answer}, HTTP: {status}",
            text.len(),
            median(gate_times).as_secs_f64() * 1e3,
            median(http_times).as_secs_f64() * 1e3,
        );
    }

    let quiet = healthz_latencies(&app, &client, secs).await;
    let flooding = Arc::new(AtomicBool::new(true));
    let sent = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let mut floods = Vec::new();
    for i in 0..8 {
        let (flooding, sent, url, client) = (flooding.clone(), sent.clone(), app.url("/graphql"), client.clone());
        let text = adversarial_document([8, 12, 20][i % 3], 10, "__typename");
        floods.push(tokio::spawn(async move {
            while flooding.load(Ordering::Relaxed) {
                if let Ok(response) = client.post(&url).json(&json!({ "query": text })).send().await {
                    let _ = response.bytes().await;
                }
                sent.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    let loaded = healthz_latencies(&app, &client, secs).await;
    flooding.store(false, Ordering::Relaxed);
    for flood in floods {
        let _ = flood.await;
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "/healthz alone:              p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms ({} requests)",
        ms(quantile(&quiet, 0.5)),
        ms(quantile(&quiet, 0.99)),
        ms(quiet.last().copied().unwrap_or_default()),
        quiet.len()
    );
    println!(
        "/healthz, 8 floods in flight: p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms ({} requests; {} adversarial documents answered, {:.0}/s)",
        ms(quantile(&loaded, 0.5)),
        ms(quantile(&loaded, 0.99)),
        ms(loaded.last().copied().unwrap_or_default()),
        loaded.len(),
        sent.load(Ordering::Relaxed),
        sent.load(Ordering::Relaxed) as f64 / secs as f64
    );
    app.finish().await;
}
