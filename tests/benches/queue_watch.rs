//! Many `queueChanged` subscribers while the queue changes, and what other users feel.
//!
//! `cargo bench -p egs-tests --bench queue_watch`
//!
//! `EGS_BENCH_SUBSCRIBERS` subscriptions (default 25,000) to the queue views of ten slices,
//! 100 per WebSocket, while an admin changes a queued GPR's priority `EGS_BENCH_RATE` times a
//! second (default 10) for `EGS_BENCH_SECS` seconds (default 30), round-robin over the slices.
//! Timed: from each change's request to each subscriber receiving the view that shows it
//! (delivery), and the latency of another user's plain queries (`gprs(first: 20)`, 20 a
//! second) meanwhile. `EGS_BENCH_MODE=submit`: the changes are new GPRs instead (`createGpr`
//! at the top of a slice's queue, sent at the rate without waiting for each other; the issue's
//! case is 1,000 subscribers at 50 a second). Backend as `TestApp` picks (`EGS_TEST_DATABASE_URL` for PostgreSQL).
//! Deliveries over a second are also listed by change (one change every subscriber saw late is
//! the gateway; a few subscribers late on many changes is a socket or the client). The clients
//! run in this process beside the gateway, on the same two cores. Numbers are
//! printed; nothing is asserted.

/// The same allocator as the `egs` binary, so the numbers are the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use egs_tests::fixtures::*;
use egs_tests::ticks::Ticks;
use egs_tests::{TestApp, quantile, ws};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

const SLICES: usize = 10;
/// Subscriptions per socket (the gateway's per-connection bound).
const PER_SOCKET: usize = 100;
const WATCH: &str = "subscription($slice: ID!) { queueChanged(sliceId: $slice) { id priority } }";
const SET_PRIORITY: &str =
    "mutation($input: SetGprPriorityInput!) { setGprPriority(input: $input) { gpr { id } userErrors { field message code } } }";
const OTHERS_QUERY: &str = "{ gprs(first: 20) { nodes { id name phase priority } } }";
/// The watched GPR of each slice gets `BASE + level`; every other GPR stays below.
const BASE: i64 = 50;

/// One socket with `PER_SOCKET` subscriptions to `slice`'s queue; reports `(slice, level, at)`
/// for each view whose highest priority shows a new level.
async fn socket(
    url: String,
    token: String,
    slice: usize,
    slice_id: String,
    ready: mpsc::Sender<()>,
    seen: mpsc::UnboundedSender<(usize, i64, Instant)>,
    receded: Arc<AtomicUsize>,
) -> Result<(), String> {
    let (mut ws, _) = ws::connect(&url, ws::TRANSPORT_WS).await.map_err(|e| e.to_string())?;
    ws.send(ws::connection_init(&token)).await.map_err(|e| e.to_string())?;
    // The highest level each subscription has shown. A level can leave the view and come back:
    // a waiting GPR whose window a newer, higher one takes is planned again behind the holds
    // of the GPRs after it (conservative backfill keeps their promises), which in a slice of
    // more than 100 waiting GPRs is past the view's first 100. Seeing it again is no new
    // delivery, and timing it from its change would be (stop 43's 3.9 s and stop 42's 11 s
    // "late deliveries" were such returns). Views that show a lower top than seen before are
    // counted in `receded`.
    let mut levels: HashMap<String, i64> = HashMap::new();
    let mut first_views = 0;
    while let Some(frame) = ws.next().await {
        let Message::Text(text) = frame.map_err(|e| e.to_string())? else { continue };
        let at = Instant::now();
        let message: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        match message["type"].as_str() {
            Some("connection_ack") => {
                for n in 0..PER_SOCKET {
                    ws.send(ws::subscribe(&n.to_string(), WATCH, json!({ "slice": slice_id }))).await.map_err(|e| e.to_string())?;
                }
            }
            Some("ping") => ws.send(ws::pong()).await.map_err(|e| e.to_string())?,
            Some("next") => {
                let rows = message["payload"]["data"]["queueChanged"].as_array().ok_or_else(|| format!("not a view: {message}"))?;
                let level = rows.iter().filter_map(|row| row["priority"].as_i64()).max().unwrap_or(0) - BASE;
                let id = message["id"].as_str().unwrap_or_default().to_owned();
                match levels.get(&id).copied() {
                    None => {
                        levels.insert(id, level);
                        first_views += 1;
                        if first_views == PER_SOCKET {
                            let _ = ready.send(()).await;
                        }
                    }
                    Some(before) if level > before => {
                        levels.insert(id, level);
                        let _ = seen.send((slice, level, at));
                    }
                    Some(before) if level < before => {
                        receded.fetch_add(1, Ordering::Relaxed);
                    }
                    Some(_) => {}
                }
            }
            Some(other) => return Err(format!("unexpected `{other}`: {message}")),
            None => return Err(format!("not a protocol message: {message}")),
        }
    }
    Err("the socket closed".into())
}

/// Deliveries over a second, by change: whether a slow tail is one change every subscriber saw
/// late (the gateway) or a few subscribers of many changes (a socket, or the client).
#[derive(Default)]
struct Late {
    by_change: HashMap<(usize, i64), (usize, Duration)>,
    /// How long each change's own request took to answer (a late view of a change whose
    /// request was itself late is the mutation's doing, not the fan-out's).
    answered: HashMap<(usize, i64), Duration>,
}

impl Late {
    const OVER: Duration = Duration::from_secs(1);

    fn note(&mut self, slice: usize, level: i64, took: Duration) {
        if took > Self::OVER {
            let entry = self.by_change.entry((slice, level)).or_default();
            entry.0 += 1;
            entry.1 = entry.1.max(took);
        }
    }

    /// `sent_at`: when each change was sent; `started`: the run's start.
    fn print(&self, sent_at: &HashMap<(usize, i64), Instant>, started: Instant) {
        let total: usize = self.by_change.values().map(|(n, _)| n).sum();
        let mut worst: Vec<_> = self.by_change.iter().collect();
        worst.sort_by_key(|(_, (_, took))| std::cmp::Reverse(*took));
        let listed: Vec<String> = worst
            .iter()
            .take(5)
            .map(|(change @ (slice, level), (n, took))| {
                let answered = self.answered.get(change).map_or("?".to_owned(), |d| d.as_millis().to_string());
                let sent = sent_at.get(change).map_or("?".to_owned(), |at| format!("{:.1}", at.duration_since(started).as_secs_f64()));
                format!("slice {slice} level {level}: {n} late, up to {} ms (sent at {sent} s, answered in {answered} ms)", took.as_millis())
            })
            .collect();
        println!(
            "  over 1 s: {total} deliveries of {} changes{}{}",
            self.by_change.len(),
            if listed.is_empty() { "" } else { "; " },
            listed.join("; ")
        );
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    runtime.block_on(async {
        let subscribers = (egs_tests::env_number("EGS_BENCH_SUBSCRIBERS", 25_000) as usize).div_ceil(PER_SOCKET) * PER_SOCKET;
        let rate = (egs_tests::env_number("EGS_BENCH_RATE", 10) as usize).max(1);
        let secs = egs_tests::env_number("EGS_BENCH_SECS", 30) as usize;
        let submit = std::env::var("EGS_BENCH_MODE").is_ok_and(|m| m == "submit");
        // The subscribers are ten users with many tabs and scripts each: their per-user
        // bounds are off, as for a crowd.
        let app = TestApp::spawn_with(egs_tests::one_user_for_many).await;
        let cluster = register_cluster(&app, "c1").await;
        add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 8).await;
        let mut slices = Vec::new();
        for s in 0..SLICES {
            let slice = create_slice(&app, &format!("team-{s}"), &cluster, json!({})).await;
            let (_, token) = member(&app, &format!("user-{s}"), &slice, "EDITOR").await;
            // Five waiting GPRs a slice; the last is the one whose priority goes up.
            let mut watched = String::new();
            for g in 0..5 {
                let gpr = create_gpr(&app, &token, &slice, &format!("g{g}"), json!({ "nodeCount": 2, "priority": 10 + g })).await;
                watched = gpr["id"].as_str().expect("id").to_owned();
            }
            slices.push((slice, token, watched));
        }
        let (_, other_token) = member(&app, "someone-else", &slices[0].0, "VIEWER").await;
        // Let the scheduler plan them all.
        tokio::time::sleep(Duration::from_secs(2)).await;

        let url = app.url("");
        let sockets = subscribers / PER_SOCKET;
        let (ready_tx, mut ready) = mpsc::channel(sockets);
        let (seen_tx, mut seen) = mpsc::unbounded_channel();
        let receded = Arc::new(AtomicUsize::new(0));
        let opened = Instant::now();
        for n in 0..sockets {
            let slice = n % SLICES;
            let (slice_id, token, _) = slices[slice].clone();
            let (url, ready, seen, receded) = (url.clone(), ready_tx.clone(), seen_tx.clone(), receded.clone());
            tokio::spawn(async move {
                // The gateway closing its sockets at the end is no failure.
                if let Err(error) = socket(url, token, slice, slice_id, ready, seen, receded).await
                    && error != "the socket closed"
                {
                    eprintln!("socket failed: {error}");
                }
            });
        }
        for _ in 0..sockets {
            if tokio::time::timeout(Duration::from_secs(120), ready.recv()).await.ok().flatten().is_none() {
                println!("not every subscriber got its first view");
                return;
            }
        }
        let setup = opened.elapsed();
        println!(
            "queue_watch ({}): {subscribers} queueChanged subscriptions on {sockets} sockets ready in {:.1} s; {rate} {}/s for {secs} s",
            app.backend,
            setup.as_secs_f64(),
            if submit { "new GPRs (createGpr)" } else { "priority changes" },
        );

        // Another user's plain queries, 20 a second, timed.
        let other_latencies = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let other = {
            let (client, url, latencies, stop) = (reqwest::Client::new(), app.url("/graphql"), other_latencies.clone(), stop.clone());
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_millis(50));
                while !stop.load(Ordering::Relaxed) {
                    tick.tick().await;
                    let sent = Instant::now();
                    let response = client.post(&url).bearer_auth(&other_token).json(&json!({ "query": OTHERS_QUERY })).send().await;
                    let ok = match response {
                        Ok(response) => response.json::<Value>().await.is_ok_and(|body| body["errors"].is_null()),
                        Err(_) => false,
                    };
                    latencies.lock().expect("lock").push((sent.elapsed(), ok));
                }
            })
        };

        // The changes: round r raises slice r % SLICES's watched GPR to the next level.
        let mut sent_at: HashMap<(usize, i64), Instant> = HashMap::new();
        let rounds = rate * secs;
        let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
        let mut delivered = Vec::with_capacity(subscribers * rounds / SLICES);
        let mut late = Late::default();
        let mut submits = tokio::task::JoinSet::new();
        let started = Instant::now();
        let ticks = Ticks::scrape(&app).await;
        // A handle on the same gateway that tasks can share.
        let submitter = Arc::new(TestApp::attach(&app.base, &app.admin_token, app.db.clone(), app.data_dir.clone()));
        for round in 0..rounds {
            tick.tick().await;
            let slice = round % SLICES;
            let level = (round / SLICES + 1) as i64;
            let sent = Instant::now();
            sent_at.insert((slice, level), sent);
            if submit {
                // A new GPR above the slice's others, sent without waiting for the last one.
                let (app, slice_id, token) = (submitter.clone(), slices[slice].0.clone(), slices[slice].1.clone());
                submits.spawn(async move {
                    let gpr = create_gpr(app.as_ref(), &token, &slice_id, &format!("new-{round}"), json!({ "nodeCount": 2, "priority": BASE + level })).await;
                    assert!(gpr["id"].is_string(), "createGpr: {gpr}");
                    ((slice, level), sent.elapsed())
                });
            } else {
                app.mutate(&app.admin_token, "setGprPriority", SET_PRIORITY, json!({ "id": slices[slice].2, "priority": BASE + level })).await;
                late.answered.insert((slice, level), sent.elapsed());
            }
            while let Ok((slice, level, at)) = seen.try_recv() {
                if let Some(sent) = sent_at.get(&(slice, level)) {
                    delivered.push(at.saturating_duration_since(*sent));
                    late.note(slice, level, at.saturating_duration_since(*sent));
                }
            }
        }
        // Stragglers.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        let expected = rounds / SLICES * subscribers;
        while delivered.len() < expected {
            match tokio::time::timeout_at(deadline, seen.recv()).await {
                Ok(Some((slice, level, at))) => {
                    if let Some(sent) = sent_at.get(&(slice, level)) {
                        delivered.push(at.saturating_duration_since(*sent));
                        late.note(slice, level, at.saturating_duration_since(*sent));
                    }
                }
                _ => break,
            }
        }
        stop.store(true, Ordering::Relaxed);
        let _ = other.await;
        late.answered.extend(submits.join_all().await);
        // One answer per change.
        let mut answered: Vec<Duration> = late.answered.values().copied().collect();

        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        delivered.sort_unstable();
        answered.sort_unstable();
        let others = other_latencies.lock().expect("lock").clone();
        let failed = others.iter().filter(|(_, ok)| !ok).count();
        let mut others: Vec<Duration> = others.into_iter().map(|(took, _)| took).collect();
        others.sort_unstable();
        println!(
            "  delivery (change sent → view received): p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms; {} of {expected} deliveries (a subscriber may see two levels in one view)",
            ms(quantile(&delivered, 0.5)),
            ms(quantile(&delivered, 0.99)),
            ms(delivered.last().copied().unwrap_or_default()),
            delivered.len(),
        );
        println!(
            "  other user's queries: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms over {} ({failed} failed)",
            ms(quantile(&others, 0.5)),
            ms(quantile(&others, 0.99)),
            ms(others.last().copied().unwrap_or_default()),
            others.len(),
        );
        late.print(&sent_at, started);
        println!(
            "  views whose top level was below one shown before (a GPR displaced, planned again past the first 100): {}",
            receded.load(Ordering::Relaxed)
        );
        println!("  scheduler: {}", ticks.since(&Ticks::scrape(&app).await));
        println!(
            "  the changes themselves answered in p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            ms(quantile(&answered, 0.5)),
            ms(quantile(&answered, 0.99)),
            ms(answered.last().copied().unwrap_or_default())
        );
        app.finish().await;
    });
}
