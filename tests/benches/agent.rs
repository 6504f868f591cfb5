//! Agent cost: what `egs-node-agent` takes from a GPU node while it samples 8 simulated GPUs at
//! 1 Hz, reports every second to a real gateway and is scraped on `/metrics` every 15 s.
//!
//! `cargo bench -p egs-tests --bench agent`
//!
//! The agent runs in a child process, so its CPU time and resident memory are its own (read
//! from `/proc/<pid>/stat` and `/proc/<pid>/status`); the gateway runs here. The child is the
//! real binary when one is built (`target/release/egs-node-agent`, or `EGS_BENCH_AGENT_BIN`),
//! else this binary in its agent role, which runs the same library the same way (one-thread
//! runtime, system allocator). After a warm-up of 10 s it measures `EGS_BENCH_SECS` seconds
//! (default 60) and prints CPU as a share of one core, resident memory now and at its peak,
//! and what the gateway stored. The targets are ≤ 1 % of one core and ≤ 20 MiB; nothing is
//! asserted.

use egs_tests::TestApp;
use egs_tests::fixtures;
use serde_json::json;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Set in the child: run the agent instead of the driver.
const ROLE: &str = "EGS_AGENT_BENCH_ROLE";
const GPUS: &str = "8";
const NODE: &str = "bench-node";
const WARM_UP: Duration = Duration::from_secs(10);
const SCRAPE_EVERY: Duration = Duration::from_secs(15);

fn main() {
    if std::env::var(ROLE).as_deref() == Ok("agent") {
        // As `egs-node-agent`'s main does: one thread, flags from the command line.
        let config = egs_node_agent::Config::from_args(std::env::args().skip(1)).unwrap_or_else(|e| e.exit());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
        if let Err(error) = runtime.block_on(egs_node_agent::run(config, std::future::pending::<()>())) {
            eprintln!("agent: {error}");
            std::process::exit(1);
        }
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    runtime.block_on(drive());
}

/// CPU seconds (user + system) of `pid`.
fn cpu_seconds(pid: u32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = rest.get(11)?.parse::<f64>().ok()? + rest.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// A `/proc/<pid>/status` field in KiB.
fn status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find(|l| l.starts_with(field))?.split_whitespace().nth(1)?.parse().ok()
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or_else(|| "?".into(), |k| format!("{:.1}", k as f64 / 1024.0))
}

/// The agent binary to measure, and what it is.
fn agent_binary() -> (PathBuf, Vec<(String, String)>, &'static str) {
    if let Ok(path) = std::env::var("EGS_BENCH_AGENT_BIN") {
        return (PathBuf::from(path), Vec::new(), "EGS_BENCH_AGENT_BIN");
    }
    let me = std::env::current_exe().expect("this binary's path");
    // target/<profile>/deps/agent-… → target/<profile>/egs-node-agent
    if let Some(built) = me.parent().and_then(|deps| deps.parent()).map(|dir| dir.join("egs-node-agent")).filter(|p| p.is_file()) {
        return (built, Vec::new(), "the egs-node-agent binary");
    }
    (me, vec![(ROLE.into(), "agent".into())], "this bench binary in its agent role (build the release binary to measure it instead)")
}

async fn drive() {
    let secs: u64 = std::env::var("EGS_BENCH_SECS").ok().and_then(|v| v.parse().ok()).filter(|v| *v > 0).unwrap_or(60);
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = fixtures::register_cluster(&app, "bench").await;
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { message } } }";
    let input = json!({ "name": "bench agent", "role": "AGENT", "clusterId": cluster, "nodeName": NODE });
    let secret = app.mutate(&app.admin_token, "createToken", create, input).await["secret"].as_str().expect("secret").to_owned();
    let dir = tempfile::tempdir().expect("a temp dir");
    let token = dir.path().join("token");
    std::fs::write(&token, secret).expect("the token file");
    // A free port for the agent's /metrics.
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();

    let (binary, env, what) = agent_binary();
    let gateway = app.url("");
    let mut child: Child = Command::new(&binary)
        .args(["--simulate", GPUS, "--interval", "1s", "--gateway", &gateway, "--cluster-id", &cluster, "--node-name", NODE, "--seed", "1"])
        .arg("--token-file")
        .arg(&token)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .envs(env)
        .env("EGS_AGENT_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the agent starts");
    let pid = child.id();
    println!("agent: {what}: {}", binary.display());
    println!("simulated GPUs: {GPUS} at 1 Hz, reporting to a real gateway ({}), /metrics scraped every {}s", app.backend, SCRAPE_EVERY.as_secs());

    tokio::time::sleep(WARM_UP).await;
    let client = reqwest::Client::new();
    let scrape = |client: reqwest::Client| async move {
        let started = Instant::now();
        let body = client.get(format!("http://127.0.0.1:{port}/metrics")).send().await.ok()?.text().await.ok()?;
        Some((body.len(), started.elapsed()))
    };
    let (Some(cpu_start), rss_start) = (cpu_seconds(pid), status_kib(pid, "VmRSS:")) else {
        let _ = child.kill();
        panic!("the agent exited during the warm-up");
    };
    let stored_start = stored_samples(&app, &cluster).await;
    let started = Instant::now();
    let mut scrapes = Vec::new();
    while started.elapsed() < Duration::from_secs(secs) {
        if let Some(done) = scrape(client.clone()).await {
            scrapes.push(done);
        }
        tokio::time::sleep(SCRAPE_EVERY.min(Duration::from_secs(secs).saturating_sub(started.elapsed()))).await;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds(pid).unwrap_or(f64::NAN) - cpu_start;
    let (rss, peak, anon, file) = (status_kib(pid, "VmRSS:"), status_kib(pid, "VmHWM:"), status_kib(pid, "RssAnon:"), status_kib(pid, "RssFile:"));
    let threads = status_kib(pid, "Threads:");
    let stored = stored_samples(&app, &cluster).await - stored_start;
    let _ = child.kill();
    let _ = child.wait();

    println!("measured {elapsed:.0} s after a {} s warm-up", WARM_UP.as_secs());
    println!("cpu: {cpu:.2} s = {:.3} % of one core (target <= 1 %)", 100.0 * cpu / elapsed);
    println!(
        "rss: {} MiB now (anon {} MiB, file {} MiB), {} MiB at start, {} MiB peak (target <= 20 MiB); threads {}",
        mib(rss),
        mib(anon),
        mib(file),
        mib(rss_start),
        mib(peak),
        threads.map_or_else(|| "?".into(), |t| t.to_string())
    );
    let largest = scrapes.iter().map(|(bytes, _)| *bytes).max().unwrap_or(0);
    let slowest = scrapes.iter().map(|(_, t)| *t).max().unwrap_or_default();
    println!("/metrics: {} scrapes, {largest} bytes, slowest {:.1} ms", scrapes.len(), slowest.as_secs_f64() * 1000.0);
    println!("gateway stored {stored} samples in {elapsed:.0} s ({:.1}/s, expected {GPUS}/s)", stored as f64 / elapsed);
    app.finish().await;
}

/// Samples the gateway holds for the node's GPUs in its 1 s history (the last 10 minutes).
async fn stored_samples(app: &TestApp, cluster: &str) -> i64 {
    let query = "query($cluster: ID!) { nodes(filter: { clusterId: $cluster }) { nodes { gpus { metrics(step: \"1s\") { samples } } } } }";
    let data = app.ok(&app.admin_token, query, json!({ "cluster": cluster })).await;
    data["nodes"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|n| n["gpus"].as_array().cloned().unwrap_or_default())
        .flat_map(|g| g["metrics"].as_array().cloned().unwrap_or_default())
        .map(|p| p["samples"].as_i64().unwrap_or_default())
        .sum()
}
