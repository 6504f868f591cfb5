//! GPU metrics ingestion over HTTP against real gateway processes: one simulated agent per node
//! (8 GPUs each) sending `reportGpuSamples` batches with its own agent token.
//!
//! `cargo bench -p egs-tests --bench ingest`
//!
//! Each gateway replica runs in a child process (this binary again, in its gateway role), so
//! its CPU time is its own, not the agents'. Settings:
//!
//! - `EGS_BENCH_GPUS` (default 1,000): the fleet, in nodes of 8 GPUs;
//! - `EGS_BENCH_REPLICAS` (default 1): replicas sharing one database; more than one needs
//!   PostgreSQL and Redis (`EGS_TEST_DATABASE_URL`, `EGS_TEST_REDIS_URL`). Agent `n` reports
//!   to replica `n mod replicas`, as a load balancer keeping each agent's connection does;
//! - `EGS_BENCH_SECS` (default 10): each phase's length.
//!
//! Phases:
//!
//! 1. **flat out**: every agent sends its next 1-second batch as soon as the last one is
//!    answered, with timestamps a second apart from 20 h ago: the most samples/s the replicas
//!    take in 8-sample requests;
//! 2. **1 Hz**: every agent reports once a second, spread evenly over the second, as the
//!    agents of watched nodes do (someone subscribes to their GPUs live, so the gateway asks for
//!    every sample as it is taken; here the agents ignore its answer, and no subscriber's
//!    delivery is in the figure: `live_load` measures that). Each replica's CPU over the phase
//!    is read from `/proc`, and printed as cores and as cores per 1,000 samples/s that replica
//!    accepted — the figure that must not grow with the fleet, only with the replica's share of
//!    it. Each replica's CPU over a quiet stretch before it (no reports: timers, the scheduler,
//!    probes) is printed beside it.
//!
//! 3. **paced**: every agent samples once a second as before but reports when the gateway's
//!    last answer lets it (`reportIntervalSeconds`; at once the first time), then sends what it
//!    gathered: the agents of nodes nobody watches, the usual state of most of a fleet. The
//!    same figures as 1 Hz, and what the gateway asked for.
//!
//! 4. **floor**: the same agents at 1 Hz, each sending `{ __typename }` instead of its report:
//!    what one GraphQL request over HTTP per node per second costs, below which no report over
//!    this transport can go.
//!
//! It prints samples/s, latency quantiles, SQL statements per report (from each replica's
//! `/metrics`), each replica's cores and resident memory, the agents' own CPU, and failures.
//! Nothing is asserted.

/// The same allocator as the `egs` binary, so the numbers are the product's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use chrono::{DateTime, Utc};
use egs_domain::metrics::store::BYTES_PER_GPU;
use egs_tests::fixtures::{self, SHAPE_H100};
use egs_tests::{Gateway, TestApp};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::process::Child;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Set in the second and later replicas: the first one's [`Started`] line, to join it.
const JOIN: &str = "EGS_INGEST_JOIN";
const GPUS_PER_NODE: i32 = 8;
/// Nodes per `upsertNodes` call.
const UPSERT_CHUNK: usize = 500;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const REPORT: &str = "mutation($input: ReportGpuSamplesInput!) { reportGpuSamples(input: $input) { accepted duplicates reportIntervalSeconds userErrors { message } } }";

/// What a started replica tells the driver.
#[derive(Clone, Serialize, Deserialize)]
struct Started {
    base: String,
    admin_token: String,
    database_url: Option<String>,
    data_dir: std::path::PathBuf,
    backend: String,
}

fn main() {
    egs_tests::bench_child::main(gateway, drive);
}

// ---- A gateway replica (child process) ----

/// Starts a replica (the first on a fresh database, the others joining it), prints its
/// [`Started`] line, and serves until stdin closes.
async fn gateway() {
    let app = match std::env::var(JOIN) {
        Ok(line) => {
            let first: Started = serde_json::from_str(&line).expect("the first replica's line");
            TestApp::join(first.database_url, first.data_dir, first.admin_token, |_| {}).await
        }
        Err(_) => TestApp::spawn().await,
    };
    let started = Started {
        base: app.url("/"),
        admin_token: app.admin_token.clone(),
        database_url: app.database_url.clone(),
        data_dir: app.data_dir.clone(),
        backend: app.backend.to_owned(),
    };
    egs_tests::bench_child::announce_and_serve(app, &started).await;
}

fn start_replica(join: Option<&Started>) -> (Child, Started) {
    let env: Vec<(&str, String)> = join.map(|first| (JOIN, serde_json::to_string(first).expect("JSON"))).into_iter().collect();
    egs_tests::bench_child::start(&env)
}

// ---- The driver ----

/// A replica the driver talks to over HTTP.
struct Remote {
    base: String,
    admin_token: String,
    client: reqwest::Client,
}

impl Gateway for Remote {
    fn admin_token(&self) -> &str {
        &self.admin_token
    }

    async fn gql(&self, token: &str, query: &str, variables: Value) -> Value {
        let response = self.client.post(format!("{}graphql", self.base)).bearer_auth(token).json(&json!({ "query": query, "variables": variables }));
        response.send().await.expect("the gateway answers").json().await.expect("a JSON body")
    }
}

impl Remote {
    /// `egs_db_statements_total` from this replica's `/metrics`.
    async fn statements(&self) -> f64 {
        let text = async {
            let response = self.client.get(format!("{}metrics", self.base)).bearer_auth(&self.admin_token).send().await.ok()?;
            response.text().await.ok()
        };
        text.await
            .and_then(|t| t.lines().find(|l| l.starts_with("egs_db_statements_total"))?.split_whitespace().nth(1)?.parse().ok())
            .unwrap_or(f64::NAN)
    }
}

struct Agent {
    cluster: String,
    node: String,
    uuids: Vec<String>,
    token: String,
    /// The replica it reports to.
    replica: usize,
}

/// One second's samples of every GPU of `agent`, as a report's body.
fn batch(agent: &Agent, at: DateTime<Utc>, n: u64) -> Value {
    report_body(agent, samples(agent, at, n))
}

fn report_body(agent: &Agent, samples: Vec<Value>) -> Value {
    json!({ "query": REPORT, "variables": { "input": { "clusterId": agent.cluster, "nodeName": agent.node, "samples": samples } } })
}

/// One second's samples of every GPU of `agent`.
fn samples(agent: &Agent, at: DateTime<Utc>, n: u64) -> Vec<Value> {
    agent
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
        .collect()
}

/// What the gateway answered a report.
#[derive(Default)]
struct Answer {
    accepted: u64,
    duplicates: u64,
    /// `reportIntervalSeconds`.
    interval: u64,
}

async fn send(client: &reqwest::Client, url: &str, agent: &Agent, body: &Value) -> Result<Answer, String> {
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
    Ok(Answer {
        accepted: payload["accepted"].as_u64().unwrap_or_default(),
        duplicates: payload["duplicates"].as_u64().unwrap_or_default(),
        interval: payload["reportIntervalSeconds"].as_u64().unwrap_or_default(),
    })
}

#[derive(Default)]
struct Totals {
    reports: u64,
    accepted: u64,
    duplicates: u64,
    failures: u64,
    first_failure: Option<String>,
    latencies_us: Vec<u64>,
    /// Answers by the `reportIntervalSeconds` they asked for.
    intervals: std::collections::BTreeMap<u64, u64>,
}

impl Totals {
    fn add(&mut self, other: Totals) {
        self.reports += other.reports;
        self.accepted += other.accepted;
        self.duplicates += other.duplicates;
        self.failures += other.failures;
        self.latencies_us.extend(other.latencies_us);
        for (interval, answers) in other.intervals {
            *self.intervals.entry(interval).or_default() += answers;
        }
        if self.first_failure.is_none() {
            self.first_failure = other.first_failure;
        }
    }

    fn record(&mut self, outcome: Result<Answer, String>, took: Duration) {
        self.reports += 1;
        match outcome {
            Ok(answer) => {
                self.accepted += answer.accepted;
                self.duplicates += answer.duplicates;
                *self.intervals.entry(answer.interval).or_default() += 1;
                self.latencies_us.push(took.as_micros() as u64);
            }
            Err(e) => {
                self.failures += 1;
                self.first_failure.get_or_insert(e);
            }
        }
    }

    fn print(&mut self, name: &str, secs: f64, statements: f64) {
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
            statements / self.reports.max(1) as f64,
        );
        if let Some(failure) = &self.first_failure {
            println!("{:<10} first failure: {failure}", "");
        }
    }
}

/// Agent `i` of `count`'s ticks, once a second from `start`, the agents spread evenly over the
/// second.
fn spread_ticks(start: tokio::time::Instant, i: usize, count: usize) -> tokio::time::Interval {
    let mut ticks = tokio::time::interval_at(start + Duration::from_secs(1) * i as u32 / count as u32, Duration::from_secs(1));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    ticks
}

/// What each replica's agents saw (index = replica), once every agent task is done.
async fn by_replica(remotes: &[Remote], tasks: Vec<tokio::task::JoinHandle<(usize, Totals)>>) -> Vec<Totals> {
    let mut per_replica: Vec<Totals> = remotes.iter().map(|_| Totals::default()).collect();
    for task in tasks {
        let (replica, totals) = task.await.expect("an agent task");
        per_replica[replica].add(totals);
    }
    per_replica
}

/// Every agent once a second, spread evenly over the second, for `secs` seconds: its reports, or
/// with `floor` the least request instead.
async fn at_one_hertz(client: &reqwest::Client, remotes: &[Remote], agents: &Arc<Vec<Agent>>, secs: u64, floor: bool) -> Vec<Totals> {
    let start = tokio::time::Instant::now() + Duration::from_millis(200);
    let base = Utc::now().timestamp() + 1;
    let ticks: Arc<Vec<tokio::sync::Mutex<(tokio::time::Interval, u64)>>> =
        Arc::new((0..agents.len()).map(|i| tokio::sync::Mutex::new((spread_ticks(start, i, agents.len()), 0))).collect());
    run_agents(client, remotes, agents, floor, move |i| {
        let ticks = ticks.clone();
        async move {
            let mut state = ticks[i].lock().await;
            if state.1 >= secs {
                return None;
            }
            state.1 += 1;
            state.0.tick().await;
            // The second this tick stands for, whatever the jitter.
            let n = start.elapsed().as_secs();
            Some((DateTime::from_timestamp(base + n as i64, 0).expect("a time"), n))
        }
    })
    .await
}

/// Every agent samples once a second (spread evenly over the second) for `secs` seconds and
/// reports what it gathered whenever the gateway's last answer lets it, then sends the rest.
async fn paced(client: &reqwest::Client, remotes: &[Remote], agents: &Arc<Vec<Agent>>, secs: u64) -> Vec<Totals> {
    let start = tokio::time::Instant::now() + Duration::from_millis(200);
    let base = Utc::now().timestamp() + 1;
    let mut tasks = Vec::new();
    for i in 0..agents.len() {
        let (client, agents) = (client.clone(), agents.clone());
        let url = format!("{}graphql", remotes[agents[i].replica].base);
        tasks.push(tokio::spawn(async move {
            let agent = &agents[i];
            let mut ticks = spread_ticks(start, i, agents.len());
            let (mut totals, mut gathered, mut due) = (Totals::default(), Vec::new(), tokio::time::Instant::now());
            for tick in 0..=secs {
                if tick < secs {
                    ticks.tick().await;
                    let n = start.elapsed().as_secs();
                    gathered.extend(samples(agent, DateTime::from_timestamp(base + n as i64, 0).expect("a time"), n));
                }
                if gathered.is_empty() || (tick < secs && tokio::time::Instant::now() < due) {
                    continue;
                }
                let (sent, body) = (tokio::time::Instant::now(), report_body(agent, std::mem::take(&mut gathered)));
                let outcome = send(&client, &url, agent, &body).await;
                due = sent + Duration::from_secs(outcome.as_ref().map_or(0, |a| a.interval));
                totals.record(outcome, sent.elapsed());
            }
            (agent.replica, totals)
        }));
    }
    by_replica(remotes, tasks).await
}

/// The least request an agent could send: what one GraphQL request over HTTP costs the gateway.
const FLOOR: &str = "{ __typename }";

async fn send_floor(client: &reqwest::Client, url: &str, agent: &Agent, body: &Value) -> Result<Answer, String> {
    let response = client.post(url).bearer_auth(&agent.token).json(body).send().await.map_err(|e| format!("transport: {e}"))?;
    let value: Value = response.json().await.map_err(|e| format!("body: {e}"))?;
    match value["data"]["__typename"].as_str() {
        Some("Query") => Ok(Answer::default()),
        _ => Err(format!("floor: {value}")),
    }
}

/// Runs every agent with `body_at(agent, n)` until `done(n, started)`, and adds up what each
/// replica's agents saw (index = replica).
async fn run_agents<P, F>(client: &reqwest::Client, remotes: &[Remote], agents: &Arc<Vec<Agent>>, floor: bool, pace: P) -> Vec<Totals>
where
    P: Fn(usize) -> F + Clone + Send + 'static,
    F: std::future::Future<Output = Option<(DateTime<Utc>, u64)>> + Send,
{
    let mut tasks = Vec::new();
    for i in 0..agents.len() {
        let (client, agents, pace) = (client.clone(), agents.clone(), pace.clone());
        let url = format!("{}graphql", remotes[agents[i].replica].base);
        tasks.push(tokio::spawn(async move {
            let mut totals = Totals::default();
            while let Some((at, n)) = pace(i).await {
                let body = if floor { json!({ "query": FLOOR }) } else { batch(&agents[i], at, n) };
                let sent = Instant::now();
                let outcome = if floor { send_floor(&client, &url, &agents[i], &body).await } else { send(&client, &url, &agents[i], &body).await };
                totals.record(outcome, sent.elapsed());
            }
            (agents[i].replica, totals)
        }));
    }
    by_replica(remotes, tasks).await
}

/// What a phase cost each replica, and what its agents saw.
struct Measured {
    per_replica: Vec<Totals>,
    /// CPU seconds per replica over the phase.
    cpu: Vec<f64>,
    /// The agents' (this process's) CPU seconds.
    driver: f64,
    elapsed: f64,
}

/// Measures phases against the replicas `pids`, whose CPU when idle is `idle`.
struct Costs<'a> {
    pids: &'a [u32],
    idle: &'a [f64],
    idle_secs: u64,
    gpus: usize,
}

fn cpu_seconds(pid: u32) -> f64 {
    egs_tests::process_usage(pid).map_or(0.0, |u| u.2)
}

impl Costs<'_> {
    async fn measure(&self, phase: impl std::future::Future<Output = Vec<Totals>>) -> Measured {
        let cpu_before: Vec<f64> = self.pids.iter().map(|&pid| cpu_seconds(pid)).collect();
        let driver_before = cpu_seconds(std::process::id());
        let clock = Instant::now();
        let per_replica = phase.await;
        let elapsed = clock.elapsed().as_secs_f64();
        let cpu = self.pids.iter().zip(&cpu_before).map(|(&pid, before)| cpu_seconds(pid) - before).collect();
        Measured { per_replica, cpu, driver: cpu_seconds(std::process::id()) - driver_before, elapsed }
    }

    /// Each replica's cores, per 1,000 samples/s of its own and of the fleet, and above idle;
    /// returns how many answers asked for each `reportIntervalSeconds`.
    fn print(&self, name: &str, measured: Measured, statements: f64, what: &str) -> std::collections::BTreeMap<u64, u64> {
        let Measured { per_replica, cpu, driver, elapsed } = measured;
        let accepted: Vec<u64> = per_replica.iter().map(|t| t.accepted).collect();
        let mut totals = Totals::default();
        per_replica.into_iter().for_each(|t| totals.add(t));
        let fleet_rate = totals.accepted as f64 / elapsed;
        totals.print(name, elapsed, statements);
        println!("{:<10} {what}; offered: {} samples/s ({} GPUs sampled at 1 Hz)", "", self.gpus, self.gpus);
        for (r, (&pid, cores)) in self.pids.iter().zip(cpu.iter().map(|c| c / elapsed)).enumerate() {
            let rate = accepted[r] as f64 / elapsed;
            let rss = egs_tests::process_usage(pid).map_or(0, |u| u.0) / 1024;
            println!(
                "replica {r}: {cores:.3} cores, {rate:.0} samples/s accepted here, {:.3} cores per 1,000 samples/s of its own, \
                 {:.3} per 1,000 samples/s of the fleet; RSS {rss} MiB; idle {:.3} cores over {} s before, \
                 so {:.3} cores per 1,000 samples/s above idle",
                cores / (rate / 1000.0),
                cores / (fleet_rate / 1000.0),
                self.idle[r],
                self.idle_secs,
                (cores - self.idle[r]) / (rate / 1000.0),
            );
        }
        let total_cores: f64 = cpu.iter().sum::<f64>() / elapsed;
        println!(
            "all replicas ({name}) {total_cores:.3} cores for {fleet_rate:.0} samples/s = {:.3} cores per 1,000 samples/s (target ≤ 0.05 on one replica; \
             with several, each replica's cost should follow its share); the agents: {:.2} cores",
            total_cores / (fleet_rate / 1000.0),
            driver / elapsed,
        );
        totals.intervals
    }
}

async fn seed(admin: &Remote, replicas: usize, nodes: usize) -> Vec<Agent> {
    let cluster = fixtures::register_cluster(admin, "bench").await;
    let mut names = Vec::with_capacity(nodes);
    for (chunk, start) in (0..nodes).step_by(UPSERT_CHUNK).enumerate() {
        let count = UPSERT_CHUNK.min(nodes - start);
        let prefix = format!("h100c{chunk}");
        fixtures::add_nodes(admin, &cluster, &prefix, count, SHAPE_H100, GPUS_PER_NODE).await;
        names.extend((0..count).map(|n| format!("{prefix}-{n}")));
    }
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { message } } }";
    let mut agents = Vec::with_capacity(nodes);
    for (n, node) in names.into_iter().enumerate() {
        let input = json!({ "name": format!("agent {node}"), "role": "AGENT", "clusterId": cluster, "nodeName": node });
        let token = admin.mutate(&admin.admin_token, "createToken", create, input).await["secret"].as_str().expect("secret").to_owned();
        // The fixture's GPU UUIDs.
        let uuids = (0..GPUS_PER_NODE).map(|i| format!("GPU-{cluster}-{node}-{i}")).collect();
        agents.push(Agent { cluster: cluster.clone(), node, uuids, token, replica: n % replicas });
    }
    agents
}

async fn drive() {
    let secs = egs_tests::env_count("EGS_BENCH_SECS", 10);
    let replicas = egs_tests::env_count("EGS_BENCH_REPLICAS", 1) as usize;
    let nodes = (egs_tests::env_count("EGS_BENCH_GPUS", 1_000) as usize).div_ceil(GPUS_PER_NODE as usize);
    let gpus = nodes * GPUS_PER_NODE as usize;
    let shared = std::env::var_os("EGS_TEST_DATABASE_URL").is_some() && std::env::var_os("EGS_TEST_REDIS_URL").is_some();
    if replicas > 1 && !shared {
        eprintln!("set EGS_TEST_DATABASE_URL and EGS_TEST_REDIS_URL: replicas share PostgreSQL and Redis");
        std::process::exit(2);
    }
    let (first_child, first) = start_replica(None);
    let mut children = vec![first_child];
    let mut started = vec![first.clone()];
    for _ in 1..replicas {
        let (child, replica) = start_replica(Some(&first));
        children.push(child);
        started.push(replica);
    }
    let client = reqwest::Client::builder().pool_max_idle_per_host(nodes * 2).timeout(REQUEST_TIMEOUT).build().expect("an HTTP client");
    let remotes: Vec<Remote> =
        started.iter().map(|s| Remote { base: s.base.clone(), admin_token: s.admin_token.clone(), client: client.clone() }).collect();
    println!("backend={} replicas={replicas} nodes={nodes} gpus={gpus} secs={secs} (per phase); each replica a process of its own", first.backend);
    let agents = Arc::new(seed(&remotes[0], replicas, nodes).await);
    let pids: Vec<u32> = children.iter().map(Child::id).collect();
    let statements = async || -> f64 {
        let mut total = 0.0;
        for remote in &remotes {
            total += remote.statements().await;
        }
        total
    };

    // 1. Flat out.
    let base = Utc::now() - chrono::Duration::hours(20);
    let stop = Instant::now() + Duration::from_secs(secs);
    let before = statements().await;
    let clock = Instant::now();
    let counters: Arc<Vec<std::sync::atomic::AtomicU64>> = Arc::new((0..agents.len()).map(|_| Default::default()).collect());
    let per_replica = run_agents(&client, &remotes, &agents, false, move |i| {
        let counters = counters.clone();
        async move {
            if Instant::now() >= stop {
                return None;
            }
            let n = counters[i].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Some((base + chrono::Duration::seconds(n as i64), n))
        }
    })
    .await;
    let elapsed = clock.elapsed().as_secs_f64();
    let mut totals = Totals::default();
    per_replica.into_iter().for_each(|t| totals.add(t));
    totals.print("flat out:", elapsed, statements().await - before);

    // Idle: what each replica spends with no report arriving (its timers, the scheduler, the
    // probes), printed beside the 1 Hz figure, which includes it.
    let idle_secs = (secs / 2).max(3);
    let cpu_before: Vec<f64> = pids.iter().map(|&pid| cpu_seconds(pid)).collect();
    let clock = Instant::now();
    tokio::time::sleep(Duration::from_secs(idle_secs)).await;
    let idle: Vec<f64> = pids.iter().zip(&cpu_before).map(|(&pid, before)| (cpu_seconds(pid) - before) / clock.elapsed().as_secs_f64()).collect();

    // 2. 1 Hz, spread over the second: agents of watched nodes.
    let costs = Costs { pids: &pids, idle: &idle, idle_secs, gpus };
    let before = statements().await;
    let measured = costs.measure(at_one_hertz(&client, &remotes, &agents, secs, false)).await;
    let _ = costs.print("1 Hz:", measured, statements().await - before, "each sample reported as taken, as for a watched node");
    println!(
        "history:   {BYTES_PER_GPU} bytes per GPU (bound), {:.1} MiB for these {gpus} GPUs if one replica held them all",
        (BYTES_PER_GPU * gpus) as f64 / (1024.0 * 1024.0),
    );
    // 3. Paced by the gateway: agents of nodes nobody watches.
    let before = statements().await;
    let measured = costs.measure(paced(&client, &remotes, &agents, secs)).await;
    let asked =
        costs.print("paced:", measured, statements().await - before, "reports at the pace the gateway asks for, as for a node nobody watches");
    let asked: Vec<String> = asked.iter().map(|(interval, answers)| format!("{answers} answers asked for {interval} s")).collect();
    println!("{:<10} the gateway's answers: {}", "", asked.join(", "));
    // 4. The floor: the same agents at 1 Hz sending the least request instead of their reports.
    let measured = costs.measure(at_one_hertz(&client, &remotes, &agents, secs, true)).await;
    let floor_cores = measured.cpu.iter().sum::<f64>() / measured.elapsed;
    let mut totals = Totals::default();
    measured.per_replica.into_iter().for_each(|t| totals.add(t));
    totals.print("floor:", measured.elapsed, 0.0);
    println!(
        "floor:     `{FLOOR}` from every agent at 1 Hz instead of its report: {floor_cores:.3} cores over all replicas, {:.3} per 1,000 GPUs \
         reporting: one GraphQL request over HTTP per node per second, idle included, which no report over this transport costs less than",
        floor_cores / (gpus as f64 / 1000.0),
    );
    // Replicas first, the first one (which drops the database) last.
    for mut child in children.into_iter().rev() {
        drop(child.stdin.take());
        let _ = child.wait();
    }
}
