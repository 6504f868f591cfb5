//! Three `egs serve` processes (release builds) on one PostgreSQL database and one Redis, on
//! this machine: sustained `createGpr` rate and latency spread over the replicas, subscription
//! fan-out latency to subscribers on every replica, and leader takeover after SIGKILL.
//!
//! `EGS_TEST_DATABASE_URL=… EGS_TEST_REDIS_URL=… cargo bench -p egs-tests --bench replicas`
//!
//! - createGpr: `EGS_BENCH_CONCURRENCY` clients (default 16), round-robin over the replicas and
//!   over 32 slices' tokens, for `EGS_BENCH_SECS` (default 10) after a 1 s warm-up.
//! - Fan-out: 50 subscribers per replica on one GPR's events; an admin changes its priority
//!   40 times on one replica, one change at a time, and each change is timed from the mutation's
//!   answer to each subscriber's receipt.
//! - Takeover: the leader is SIGKILLed 3 times; timed to the first lease taken by another
//!   replica and to a GPR submitted right after the kill being provisioned; afterwards every
//!   GPR's lifecycle events are counted (each exactly once).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use egs_entities::gpr_event;
use egs_tests::cluster::{Cluster, Subscriber, post};
use egs_tests::fixtures::{self, CREATE_GPR, SHAPE_H100};
use sea_orm::EntityTrait;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const SLICES: usize = 32;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    sorted[((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1]
}

fn summary(mut samples: Vec<Duration>) -> String {
    samples.sort_unstable();
    format!(
        "n={} p50={:.1?} p90={:.1?} p99={:.1?} max={:.1?}",
        samples.len(),
        percentile(&samples, 0.5),
        percentile(&samples, 0.9),
        percentile(&samples, 0.99),
        samples.last().copied().unwrap_or_default()
    )
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok()).filter(|v| *v > 0).unwrap_or(default)
}

/// Subscribers on every replica watch one GPR while an admin changes its priority on the
/// first replica, one change at a time; each delivery is timed from the mutation's answer.
async fn fan_out(label: &str, name: &str, client: &reqwest::Client, bases: &[String], admin_token: &str, probe_slice: &str, probe_token: &str) {
    let probe = post(
        client,
        &bases[0],
        probe_token,
        CREATE_GPR,
        json!({ "input": { "sliceId": probe_slice, "name": name, "nodeCount": 1, "gpuShape": SHAPE_H100, "duration": "1h" } }),
    )
    .await
    .expect("answers")
    .1["data"]["createGpr"]["gpr"]["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let per_replica = env_u64("EGS_BENCH_SUBSCRIBERS", 50) as usize;
    let mut subscribers = Vec::new();
    for (i, base) in bases.iter().enumerate() {
        for _ in 0..per_replica {
            subscribers.push((i, Subscriber::start(vec![base.clone()], probe_token.to_owned(), Some(probe_slice.to_owned()), None)));
        }
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    const SET_PRIORITY: &str = "mutation($input: SetGprPriorityInput!) { setGprPriority(input: $input) { userErrors { message } } }";
    let mut same = Vec::new();
    let mut other = Vec::new();
    let mut missing = 0;
    for round in 0..40 {
        let marks: Vec<usize> = subscribers.iter().map(|(_, s)| s.snapshot().events.len()).collect();
        post(client, &bases[0], admin_token, SET_PRIORITY, json!({ "input": { "id": probe, "priority": 10 + round } })).await.expect("answers");
        let answered = Instant::now();
        let deadline = answered + Duration::from_secs(3);
        loop {
            let all = subscribers.iter().zip(&marks).all(|((_, s), mark)| s.snapshot().events[*mark..].iter().any(|e| e.kind == "PRIORITY_CHANGED"));
            if all || Instant::now() > deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        for ((replica, s), mark) in subscribers.iter().zip(&marks) {
            match s.snapshot().events[*mark..].iter().find(|e| e.kind == "PRIORITY_CHANGED") {
                Some(e) => (if *replica == 0 { &mut same } else { &mut other }).push(e.at.saturating_duration_since(answered)),
                None => missing += 1,
            }
        }
    }
    for (_, s) in subscribers {
        s.stop().await;
    }
    println!("fan-out {label}, {} subscribers over 3 replicas, 40 changes on replica 0, {missing} not within 3 s:", per_replica * 3);
    println!("  same replica:   {}", summary(same.clone()));
    println!("  other replicas: {}", summary(other.clone()));
    println!("  all:            {}", summary(same.into_iter().chain(other).collect()));
}

#[tokio::main]
async fn main() {
    let Some(mut cluster) = Cluster::start(3, true, &[("EGS_LEASE_TTL", "6"), ("EGS_LOG", "warn")]).await else {
        eprintln!("set EGS_TEST_DATABASE_URL and EGS_TEST_REDIS_URL: three replicas need PostgreSQL and Redis");
        return;
    };
    let app = &cluster.app;
    let admin_token = app.admin_token.clone();
    let bases: Vec<String> = cluster.gateways.iter().map(|g| g.base.clone()).collect();
    let pool = fixtures::register_cluster(app, "bench").await;
    fixtures::add_nodes(app, &pool, "h100", 64, SHAPE_H100, 8).await;
    // Kept free of the load, so a GPR submitted after a kill can start at once.
    fixtures::add_nodes(app, &pool, "a100", 4, fixtures::SHAPE_A100, 8).await;
    // A slice runs one GPR at a time: one per takeover round.
    let mut takeover_slices = Vec::new();
    for round in 0..3 {
        let slice = fixtures::create_slice(app, &format!("takeover-{round}"), &pool, json!({})).await;
        takeover_slices.push(slice);
    }
    let mut tenants = Vec::new();
    for i in 0..SLICES {
        let slice = fixtures::create_slice(app, &format!("team-{i}"), &pool, json!({})).await;
        let (_, token) = fixtures::member(app, &format!("user-{i}"), &slice, "EDITOR").await;
        tenants.push((slice, token));
    }
    let tenants = Arc::new(tenants);
    let client = reqwest::Client::new();

    // Fan-out with a quiet queue first; again below, behind the thousands of queued GPRs the
    // load leaves (the leader then writes estimate changes for all of them).
    let (probe_slice, probe_token) = tenants[0].clone();
    fan_out("with an empty queue", "probe-quiet", &client, &bases, &admin_token, &probe_slice, &probe_token).await;

    // 1. Sustained createGpr over three replicas.
    let secs = env_u64("EGS_BENCH_SECS", 10);
    let concurrency = env_u64("EGS_BENCH_CONCURRENCY", 16) as usize;
    let measuring = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicBool::new(false));
    let mut workers = Vec::new();
    for w in 0..concurrency {
        let (client, bases, tenants, measuring, done) = (client.clone(), bases.clone(), tenants.clone(), measuring.clone(), done.clone());
        workers.push(tokio::spawn(async move {
            let (mut latencies, mut failures, mut n) = (Vec::new(), 0usize, w);
            while !done.load(Ordering::Relaxed) {
                let (slice, token) = &tenants[n % tenants.len()];
                let base = &bases[n % bases.len()];
                let input = json!({ "sliceId": slice, "name": format!("load-{w}-{n}"), "nodeCount": 1 + n % 4, "gpuShape": SHAPE_H100, "duration": format!("{}h", 1 + n % 6), "priority": 1 + (n * 37) % 200 });
                let sent = Instant::now();
                let ok = matches!(post(&client, base, token, CREATE_GPR, json!({ "input": input })).await,
                    Ok((200, body)) if body["data"]["createGpr"]["userErrors"] == json!([]));
                if measuring.load(Ordering::Relaxed) {
                    if ok {
                        latencies.push(sent.elapsed());
                    } else {
                        failures += 1;
                    }
                }
                n += concurrency;
            }
            (latencies, failures)
        }));
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    measuring.store(true, Ordering::Relaxed);
    let started = Instant::now();
    tokio::time::sleep(Duration::from_secs(secs)).await;
    measuring.store(false, Ordering::Relaxed);
    let elapsed = started.elapsed();
    done.store(true, Ordering::Relaxed);
    let (mut latencies, mut failures) = (Vec::new(), 0);
    for worker in workers {
        let (l, f) = worker.await.expect("worker");
        latencies.extend(l);
        failures += f;
    }
    println!(
        "createGpr, 3 replicas, {concurrency} clients: {:.0} req/s, {failures} failed, {}",
        latencies.len() as f64 / elapsed.as_secs_f64(),
        summary(latencies)
    );

    fan_out("behind the load's queue", "probe-loaded", &client, &bases, &admin_token, &probe_slice, &probe_token).await;

    // 3. Leader takeover after SIGKILL.
    let mut lease_times = Vec::new();
    let mut provision_times = Vec::new();
    for (round, free_slice) in takeover_slices.iter().enumerate() {
        let free_token = &admin_token;
        let (leader, _) = cluster.wait_for_leader(None, Duration::from_secs(15)).await;
        let killed = Instant::now();
        cluster.gateways[leader].kill().await;
        let survivor = (0..3).find(|i| *i != leader).expect("a survivor");
        let input = json!({ "sliceId": free_slice, "name": format!("after-kill-{round}"), "nodeCount": 1, "gpuShape": fixtures::SHAPE_A100, "duration": "1m" });
        let (_, body) = post(&client, &bases[survivor], free_token, CREATE_GPR, json!({ "input": input })).await.expect("answers");
        let id = body["data"]["createGpr"]["gpr"]["id"].as_str().map(str::to_owned);
        let (_, lease) = cluster.wait_for_leader(Some(leader), Duration::from_secs(20)).await;
        lease_times.push(lease);
        if let Some(id) = id {
            let deadline = Instant::now() + Duration::from_secs(30);
            loop {
                let phase =
                    post(&client, &bases[survivor], free_token, "query($id: ID!) { node(id: $id) { ... on Gpr { phase } } }", json!({ "id": id }))
                        .await;
                if matches!(&phase, Ok((200, body)) if body["data"]["node"]["phase"] == "PROVISIONED") {
                    provision_times.push(killed.elapsed());
                    break;
                }
                if Instant::now() > deadline {
                    println!("  round {round}: not provisioned within 30 s ({phase:?})");
                    break;
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        } else {
            println!("  round {round}: createGpr failed: {body}");
        }
        cluster.gateways[leader].restart().await;
    }
    println!("takeover after SIGKILL of the leader (lease 6 s): new lease {}", summary(lease_times));
    println!("  kill → a GPR submitted right after it PROVISIONED: {}", summary(provision_times));

    // Lifecycle events of every GPR: each at most once.
    let events = gpr_event::Entity::find().all(&cluster.app.db).await.expect("events");
    let mut counts: BTreeMap<(i64, &str), usize> = BTreeMap::new();
    for e in &events {
        *counts.entry((e.gpr_id, e.kind.as_str())).or_default() += 1;
    }
    let lifecycle =
        ["CREATED", "PROVISIONING_STARTED", "PROVISIONED", "RELEASING", "COMPLETED", "EXIT_WARNING", "PROGRESS_25", "PROGRESS_50", "PROGRESS_75"];
    let doubled = counts.iter().filter(|((_, kind), n)| **n > 1 && lifecycle.contains(kind)).count();
    let provisioned = counts.iter().filter(|((_, kind), _)| *kind == "PROVISIONED").count();
    println!("lifecycle events: {} stored, {provisioned} GPRs provisioned, {doubled} doubled", events.len());
    cluster.finish().await;
}
