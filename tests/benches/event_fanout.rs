//! GPR event fan-out: mutation sent → event received, over real WebSocket subscriptions.
//!
//! `cargo bench -p egs-tests --bench event_fanout`
//!
//! `EGS_BENCH_SUBSCRIBERS` sockets (default 1,000) each subscribe to one GPR's events with a
//! user token; a driver changes the GPR's priority `EGS_BENCH_ROUNDS` times (default 50), one
//! change at a time, and every subscriber's receipt is timed from the moment the mutation was
//! sent. With `EGS_TEST_DATABASE_URL` and `EGS_TEST_REDIS_URL` set, a second run puts the
//! subscribers on another replica than the one taking the mutations (fan-out through Redis).
//! Numbers are printed; nothing is asserted.

/// The same allocator as the `egs` binary, so the numbers are the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use egs_tests::fixtures::*;
use egs_tests::{TestApp, quantile, ws};
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

const SUBSCRIBE: &str = "subscription($gpr: ID) { gprEvents(gprId: $gpr) { sequence kind message } }";
const SET_PRIORITY: &str =
    "mutation($input: SetGprPriorityInput!) { setGprPriority(input: $input) { gpr { id } userErrors { field message code } } }";
/// Priorities start here; round `r` sets `BASE + r` (and the event says so).
const BASE: i32 = 10;

/// Opens one acknowledged subscription and forwards `(round, received at)` for every event.
async fn subscriber(
    url: String,
    token: String,
    gpr: String,
    ready: mpsc::Sender<()>,
    seen: mpsc::UnboundedSender<(i32, Instant)>,
) -> Result<(), String> {
    let (mut ws, _) = ws::connect(&url, ws::TRANSPORT_WS).await.map_err(|e| e.to_string())?;
    ws.send(ws::connection_init(&token)).await.map_err(|e| e.to_string())?;
    let mut subscribed = false;
    while let Some(frame) = ws.next().await {
        let Message::Text(text) = frame.map_err(|e| e.to_string())? else { continue };
        let at = Instant::now();
        let message: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        match message["type"].as_str() {
            Some("connection_ack") if !subscribed => {
                ws.send(ws::subscribe("1", SUBSCRIBE, json!({ "gpr": gpr }))).await.map_err(|e| e.to_string())?;
                subscribed = true;
                let _ = ready.send(()).await;
            }
            Some("ping") => ws.send(ws::pong()).await.map_err(|e| e.to_string())?,
            Some("next") => {
                let said = message["payload"]["data"]["gprEvents"]["message"].as_str().unwrap_or_default();
                // "priority a → b": the round is b - BASE.
                if let Some(priority) = said.rsplit(' ').next().and_then(|p| p.parse::<i32>().ok()) {
                    let _ = seen.send((priority - BASE, at));
                }
            }
            Some(other) => return Err(format!("unexpected `{other}`: {message}")),
            None => return Err(format!("not a protocol message: {message}")),
        }
    }
    Err("the socket closed".into())
}

/// One measurement; rounds set priorities `BASE + 1 ..= BASE + rounds` on `gpr`, so the GPR's
/// priority starts below `BASE` each time.
async fn run_once(writer: &TestApp, reader: &TestApp, label: &str, token: &str, gpr: &str, subscribers: usize, rounds: usize) {
    writer.mutate(&writer.admin_token, "setGprPriority", SET_PRIORITY, json!({ "id": gpr, "priority": 1 })).await;
    let url = reader.url("");
    let (ready_tx, mut ready) = mpsc::channel(subscribers);
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let opened = Instant::now();
    // Every subscriber of this run is closed when it ends (or gives up early), so a later run
    // does not also pay for delivering to this one's sockets.
    let mut sockets = tokio::task::JoinSet::new();
    for _ in 0..subscribers {
        let (url, token, gpr, ready, seen) = (url.clone(), token.to_owned(), gpr.to_owned(), ready_tx.clone(), seen_tx.clone());
        sockets.spawn(async move {
            if let Err(error) = subscriber(url, token, gpr, ready, seen).await {
                eprintln!("subscriber failed: {error}");
            }
        });
    }
    for _ in 0..subscribers {
        if tokio::time::timeout(Duration::from_secs(30), ready.recv()).await.ok().flatten().is_none() {
            println!("{label}: not every subscriber got ready");
            return;
        }
    }
    let setup_time = opened.elapsed();
    // Let the last subscribe messages reach the server before the first change.
    tokio::time::sleep(Duration::from_millis(500)).await;

    let mut latencies = Vec::with_capacity(subscribers * rounds);
    // Where the time goes: the mutation's answer, and the first delivery of each round.
    let (mut answered, mut firsts) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    let mut missing = 0usize;
    for round in 1..=rounds as i32 {
        let sent = Instant::now();
        writer.mutate(&writer.admin_token, "setGprPriority", SET_PRIORITY, json!({ "id": gpr, "priority": BASE + round })).await;
        answered.push(sent.elapsed());
        let mut got = 0;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while got < subscribers {
            match tokio::time::timeout_at(deadline, seen.recv()).await {
                Ok(Some((r, at))) if r == round => {
                    if got == 0 {
                        firsts.push(at.saturating_duration_since(sent));
                    }
                    latencies.push(at.saturating_duration_since(sent));
                    got += 1;
                }
                Ok(Some(_)) => {}
                _ => break,
            }
        }
        missing += subscribers - got;
    }
    latencies.sort_unstable();
    answered.sort_unstable();
    firsts.sort_unstable();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{label:<44} p50 {:>7.1} ms  p99 {:>7.1} ms  max {:>7.1} ms  ({} deliveries, {missing} missing; {subscribers} sockets open in {:.1} s)",
        ms(quantile(&latencies, 0.5)),
        ms(quantile(&latencies, 0.99)),
        ms(latencies.last().copied().unwrap_or_default()),
        latencies.len(),
        setup_time.as_secs_f64(),
    );
    println!(
        "{:<44} mutation answered p50 {:>5.1} ms; first delivery p50 {:>5.1} ms, p99 {:>5.1} ms",
        "",
        ms(quantile(&answered, 0.5)),
        ms(quantile(&firsts, 0.5)),
        ms(quantile(&firsts, 0.99)),
    );
    sockets.shutdown().await;
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    runtime.block_on(async {
        let subscribers = egs_tests::env_number("EGS_BENCH_SUBSCRIBERS", 1000) as usize;
        let rounds = egs_tests::env_number("EGS_BENCH_ROUNDS", 50) as usize;
        let app = TestApp::spawn_with(|s| {
            egs_tests::api_only(s);
            egs_tests::one_user_for_many(s);
        })
        .await;
        println!("backend={} subscribers={subscribers} rounds={rounds}", app.backend);
        let setup = two_slices(&app).await;
        let gpr = create_gpr(&app, &setup.token_a, &setup.slice_a, "watched", json!({})).await["id"].as_str().expect("id").to_owned();
        run_once(&app, &app, "mutation -> subscriber, one replica", &setup.token_a, &gpr, subscribers, rounds).await;
        println!("{:<44} target p99 <= 50 ms with 1,000 subscribers", "");
        if std::env::var_os("EGS_TEST_REDIS_URL").is_some() && app.backend == "postgres" {
            let replica = app.spawn_replica_with(egs_tests::one_user_for_many).await;
            run_once(&app, &replica, "mutation on A -> subscriber on B (Redis)", &setup.token_a, &gpr, subscribers, rounds).await;
            println!("{:<44} target p99 <= 100 ms across two replicas", "");
            replica.finish().await;
        }
        app.finish().await;
    });
}
