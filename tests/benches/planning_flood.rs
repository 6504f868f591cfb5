//! One user floods planning questions; what do the others feel?
//!
//! `cargo bench -p egs-tests --bench planning_flood`
//!
//! `EGS_BENCH_WAITING` waiting GPRs (default 4,000) over ten slices on a 40-node pool, then:
//! four other users each send `gprs(first: 5)` ten times a second, first alone
//! (`EGS_BENCH_SECS` seconds, default 10), then while one VIEWER keeps `EGS_BENCH_FLOODERS`
//! requests (default 8) in flight back to back, each asking the most planning questions a
//! request may (`waitTimeEstimates` and, for a provisioned GPR of theirs, `gprExtensionRoom`,
//! four aliases in all). Printed: the others' p50/p99/max and errors in both phases, and how
//! many of the flooder's requests were answered and refused (by code). The per-user query
//! budget is off (`EGS_BENCH_BUDGET=1` turns it on): the flood is held back by the planning
//! bounds alone. Target: the others' p99 ≤ 100 ms under the flood. Backend as `TestApp`
//! picks (`EGS_TEST_DATABASE_URL` for PostgreSQL). Nothing is asserted.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use egs_tests::fixtures::*;
use egs_tests::{TestApp, env_number, quantile};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SLICES: usize = 10;
const NODES: usize = 40;
const OTHERS_QUERY: &str = "{ gprs(first: 5) { nodes { id name phase } } }";

/// The others' latencies (and whether each answered without errors) for `secs` seconds.
async fn others(app: &TestApp, tokens: &[String], secs: u64) -> (Vec<Duration>, usize) {
    let stop = Arc::new(AtomicBool::new(false));
    let seen = Arc::new(Mutex::new((Vec::new(), 0usize)));
    let mut tasks = Vec::new();
    for token in tokens {
        let (client, url, token, stop, seen) = (reqwest::Client::new(), app.url("/graphql"), token.clone(), stop.clone(), seen.clone());
        tasks.push(tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(100));
            while !stop.load(Ordering::Relaxed) {
                tick.tick().await;
                let sent = Instant::now();
                let answer = client.post(&url).bearer_auth(&token).json(&json!({ "query": OTHERS_QUERY })).send().await;
                let ok = match answer {
                    Ok(response) => response.json::<Value>().await.is_ok_and(|body| body["errors"].is_null()),
                    Err(_) => false,
                };
                let mut seen = seen.lock().expect("lock");
                seen.0.push(sent.elapsed());
                seen.1 += usize::from(!ok);
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(secs)).await;
    stop.store(true, Ordering::Relaxed);
    for task in tasks {
        let _ = task.await;
    }
    let (mut times, errors) = std::mem::take(&mut *seen.lock().expect("lock"));
    times.sort();
    (times, errors)
}

fn report(label: &str, (times, errors): &(Vec<Duration>, usize)) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{label:<34} p50 {:>7.1} ms  p99 {:>7.1} ms  max {:>7.1} ms  ({} requests, {errors} with errors)",
        ms(quantile(times, 0.5)),
        ms(quantile(times, 0.99)),
        ms(times.last().copied().unwrap_or_default()),
        times.len()
    );
}

#[tokio::main]
async fn main() {
    let waiting = env_number("EGS_BENCH_WAITING", 4_000) as usize;
    let secs = env_number("EGS_BENCH_SECS", 10);
    let flooders = env_number("EGS_BENCH_FLOODERS", 8) as usize;
    let budget = std::env::var("EGS_BENCH_BUDGET").is_ok_and(|v| v == "1");
    let app = TestApp::spawn_with(|settings| {
        if !budget {
            settings.rate_limit = 0;
        }
    })
    .await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", NODES, SHAPE_H100, 8).await;
    let mut slices = Vec::new();
    for s in 0..SLICES {
        let slice = create_slice(&app, &format!("team-{s}"), &cluster, json!({})).await;
        let (_, editor) = member(&app, &format!("editor-{s}"), &slice, "EDITOR").await;
        slices.push((slice, editor));
    }
    // The first GPRs take every node; the rest wait.
    let seeding = Instant::now();
    let submitter = Arc::new(TestApp::attach(&app.base, &app.admin_token, app.db.clone(), app.data_dir.clone()));
    let mut submits = tokio::task::JoinSet::new();
    for chunk in 0..8 {
        let (app, slices) = (submitter.clone(), slices.clone());
        submits.spawn(async move {
            for n in (chunk..waiting + NODES / 4).step_by(8) {
                let (slice, token) = &slices[n % SLICES];
                let extra = json!({ "nodeCount": 1 + n % 4, "priority": 1 + (n % 50) as i64, "duration": "8h" });
                let gpr = create_gpr(app.as_ref(), token, slice, &format!("g{n}"), extra).await;
                assert!(gpr["id"].is_string(), "createGpr: {gpr}");
            }
        });
    }
    while let Some(done) = submits.join_next().await {
        done.expect("a submitter");
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    let counted = app.ok(&app.admin_token, "{ queue(first: 1) { id } gprs(first: 1, filter: { phases: [QUEUED] }) { totalCount } }", json!({})).await;
    println!(
        "planning_flood ({}): {} GPRs seeded in {:.1} s ({} waiting), {NODES} nodes; budget {}",
        app.backend,
        waiting + NODES / 4,
        seeding.elapsed().as_secs_f64(),
        counted["gprs"]["totalCount"],
        if budget { "on" } else { "off" }
    );

    // The flooder: a viewer of team-0, asking about a GPR like theirs and, when one of theirs
    // holds nodes, how far its window could grow.
    let (_, flooder) = member(&app, "flooder", &slices[0].0, "VIEWER").await;
    let held = app
        .ok(
            &slices[0].1,
            "query($s: ID!) { gprs(first: 1, filter: { sliceId: $s, phases: [PROVISIONED] }) { nodes { id } } }",
            json!({ "s": slices[0].0 }),
        )
        .await;
    let held = held["gprs"]["nodes"][0]["id"].as_str().map(str::to_owned);
    let ask = format!("nodeCount: 2, duration: \"4h\", sliceId: \"{}\"", slices[0].0);
    let mut questions: Vec<String> = (0..if held.is_some() { 2 } else { 4 })
        .map(|i| format!("w{i}: waitTimeEstimates(input: {{ {ask} }}) {{ estimatedStartAt startNoLaterThan }}"))
        .collect();
    if let Some(id) = &held {
        questions.extend((0..2).map(|i| format!("r{i}: gprExtensionRoom(id: \"{id}\") {{ maxNow limitedBy }}")));
    }
    let flood_document = format!("{{ {} }}", questions.join(" "));
    let alone = Instant::now();
    let single = app.gql(&flooder, &flood_document, json!({})).await;
    println!(
        "one flood request alone: {:.1} ms ({})",
        alone.elapsed().as_secs_f64() * 1e3,
        if single["errors"].is_null() { "answered".to_owned() } else { single["errors"][0]["message"].to_string() }
    );

    let other_tokens: Vec<String> = slices[1..5].iter().map(|(_, token)| token.clone()).collect();
    report("others, no flood:", &others(&app, &other_tokens, secs).await);

    let flooding = Arc::new(AtomicBool::new(true));
    let outcomes = Arc::new(Mutex::new(BTreeMap::<String, usize>::new()));
    let mut floods = Vec::new();
    for _ in 0..flooders {
        let (client, url, token, document, flooding, outcomes) =
            (reqwest::Client::new(), app.url("/graphql"), flooder.clone(), flood_document.clone(), flooding.clone(), outcomes.clone());
        floods.push(tokio::spawn(async move {
            while flooding.load(Ordering::Relaxed) {
                let answer = client.post(&url).bearer_auth(&token).json(&json!({ "query": document })).send().await;
                let outcome = match answer {
                    Ok(response) => match response.json::<Value>().await {
                        Ok(body) => body["errors"][0]["extensions"]["code"].as_str().unwrap_or("answered").to_owned(),
                        Err(_) => "unreadable".to_owned(),
                    },
                    Err(_) => "no answer".to_owned(),
                };
                *outcomes.lock().expect("lock").entry(outcome).or_default() += 1;
            }
        }));
    }
    let flooded = others(&app, &other_tokens, secs).await;
    flooding.store(false, Ordering::Relaxed);
    for flood in floods {
        let _ = flood.await;
    }
    report(&format!("others, {flooders} flood requests in flight:"), &flooded);
    let outcomes = outcomes.lock().expect("lock").clone();
    let total: usize = outcomes.values().sum();
    println!(
        "flooder: {total} requests in {secs} s ({:.1}/s): {}",
        total as f64 / secs as f64,
        outcomes.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
    );
    app.finish().await;
}
