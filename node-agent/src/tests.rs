//! The agent's loops end to end against a fake gateway, on tokio's paused clock: sampling
//! cadence, batching, backoff and the buffer bound while the gateway is down, resending without
//! duplicates, registration, and the HTTP face.

use crate::config::{Fault, FaultKind};
use crate::gateway::{Gateway, GatewayError, GpuWorkloadInput, Health, NodeInput, ReportOutcome, SampleInput};
use crate::source::simulated::{Faults, SimulatedSource};
use crate::{Agent, Config, Error, State, TokioClock};
use chrono::{DateTime, Utc};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;

const CLUSTER: &str = "Q2x1c3Rlcjox";
const NODE: &str = "node-a";

/// One call the fake gateway received.
#[derive(Clone, Debug)]
struct Call {
    at: Instant,
    register: bool,
    /// Whole seconds of the samples, in order.
    seconds: Vec<i64>,
    samples: usize,
    answered: bool,
}

#[derive(Default)]
struct Fake {
    down: bool,
    /// Store the next report, then fail as if the answer was lost on the way back.
    lose_next_answer: bool,
    refuse: bool,
    /// What it answers each report with (how long the agent may gather samples).
    report_interval: Duration,
    calls: Vec<Call>,
    registrations: Vec<NodeInput>,
    /// (UUID, second) of every stored sample, as the gateway keys them.
    stored: HashSet<(String, i64)>,
    samples: Vec<SampleInput>,
    duplicates: u64,
    /// Pod mappings received, and when.
    workloads: Vec<(Instant, Vec<GpuWorkloadInput>)>,
    /// What it answers a pod mapping with: the pods as the cluster names them.
    named: Vec<crate::kube::PodMeta>,
}

/// A gateway in memory that deduplicates by (GPU, second) as the real one does.
#[derive(Clone, Default)]
struct FakeGateway(Arc<Mutex<Fake>>);

impl FakeGateway {
    fn with<T>(&self, f: impl FnOnce(&mut Fake) -> T) -> T {
        f(&mut self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
    fn set_down(&self, down: bool) {
        self.with(|f| f.down = down);
    }
    fn reports(&self) -> Vec<Call> {
        self.with(|f| f.calls.iter().filter(|c| !c.register).cloned().collect())
    }
}

impl Gateway for FakeGateway {
    async fn register(&self, cluster_id: &str, node: &NodeInput) -> Result<(), GatewayError> {
        self.with(|f| {
            let answered = !f.down && !f.refuse;
            f.calls.push(Call { at: Instant::now(), register: true, seconds: Vec::new(), samples: 0, answered });
            if f.refuse {
                return Err(GatewayError::Refused { code: "FORBIDDEN".into(), message: "an agent token may only report its own node".into() });
            }
            if f.down {
                return Err(GatewayError::Unreachable("connection refused".into()));
            }
            assert_eq!(cluster_id, CLUSTER);
            f.registrations.push(node.clone());
            Ok(())
        })
    }

    async fn report(&self, cluster_id: &str, node_name: &str, samples: &[SampleInput]) -> Result<ReportOutcome, GatewayError> {
        self.with(|f| {
            let seconds: Vec<i64> = samples.iter().map(|s| s.timestamp.timestamp()).collect();
            f.calls.push(Call { at: Instant::now(), register: false, seconds, samples: samples.len(), answered: !f.down });
            if f.down {
                return Err(GatewayError::Unreachable("connection refused".into()));
            }
            assert_eq!((cluster_id, node_name), (CLUSTER, NODE));
            let mut outcome = ReportOutcome { report_interval: f.report_interval, ..ReportOutcome::default() };
            for s in samples {
                if f.stored.insert((s.uuid.clone(), s.timestamp.timestamp())) {
                    outcome.accepted += 1;
                    f.samples.push(s.clone());
                } else {
                    outcome.duplicates += 1;
                }
            }
            f.duplicates += outcome.duplicates;
            if std::mem::take(&mut f.lose_next_answer) {
                return Err(GatewayError::Unreachable("the answer was lost".into()));
            }
            Ok(outcome)
        })
    }

    async fn report_workloads(
        &self,
        cluster_id: &str,
        node_name: &str,
        gpus: &[GpuWorkloadInput],
    ) -> Result<Vec<crate::kube::PodMeta>, GatewayError> {
        self.with(|f| {
            if f.down {
                return Err(GatewayError::Unreachable("connection refused".into()));
            }
            assert_eq!((cluster_id, node_name), (CLUSTER, NODE));
            f.workloads.push((Instant::now(), gpus.to_vec()));
            Ok(f.named.clone())
        })
    }
}

fn start() -> DateTime<Utc> {
    DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default()
}

fn config(extra: &[&str]) -> Config {
    let mut args = vec!["--simulate", "8", "--cluster-id", CLUSTER, "--node-name", NODE, "--no-http", "--seed", "3"];
    args.extend_from_slice(extra);
    Config::from_args(args).expect("valid flags")
}

/// A running agent with its fake gateway.
struct Running {
    gateway: FakeGateway,
    state: Arc<State>,
    faults: Faults,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), Error>>,
}

impl Running {
    async fn stop(mut self) -> Result<(), Error> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.await.expect("the agent task")
    }
}

fn spawn(config: Config, gateway: FakeGateway) -> Running {
    let mut source = SimulatedSource::new(NODE, config.simulate.unwrap_or(8), &config.shape, 3).with_interval(config.interval);
    if let Some(namespace) = &config.simulate_pods {
        source = source.with_pods(namespace);
    }
    let faults = source.faults();
    let agent = Agent::with_source(config, Box::new(source)).with_clock(Arc::new(TokioClock::starting_at(start())));
    let state = agent.state();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(agent.run_with(Some(gateway.clone()), async move {
        let _ = stopped.await;
    }));
    Running { gateway, state, faults, stop: Some(stop), task }
}

async fn wait(duration: Duration) {
    tokio::time::sleep(duration).await;
}

#[tokio::test(start_paused = true)]
async fn samples_every_gpu_once_per_interval_and_reports_each_tick_as_one_batch() {
    let agent = spawn(config(&[]), FakeGateway::default());
    wait(Duration::from_millis(9_500)).await;
    let reports = agent.gateway.reports();
    assert_eq!(reports.len(), 10, "ticks at 0 s … 9 s: {reports:?}");
    for (n, report) in reports.iter().enumerate() {
        assert_eq!(report.samples, 8, "a batch carries every GPU");
        assert!(report.seconds.iter().all(|s| *s == start().timestamp() + n as i64), "batch {n} is one second: {:?}", report.seconds);
    }
    let gaps: Vec<Duration> = reports.windows(2).map(|w| w[1].at - w[0].at).collect();
    assert!(gaps.iter().all(|g| *g == Duration::from_secs(1)), "one report a second: {gaps:?}");
    assert_eq!(agent.state.metrics.samples_taken.get(), 80);
    assert_eq!(agent.state.metrics.samples_sent.get(), 80);
    assert_eq!(agent.gateway.with(|f| f.registrations.len()), 1, "registered once");
    agent.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn while_nobody_watches_the_node_the_agent_gathers_samples_as_long_as_the_gateway_asks() {
    let gateway = FakeGateway::default();
    gateway.with(|f| f.report_interval = Duration::from_secs(5));
    let agent = spawn(config(&[]), gateway);
    wait(Duration::from_millis(20_500)).await;
    let reports = agent.gateway.reports();
    let gaps: Vec<Duration> = reports.windows(2).map(|w| w[1].at - w[0].at).collect();
    assert_eq!(gaps, vec![Duration::from_secs(5); 4], "the first report at once, then one every 5 s: {reports:?}");
    // The second report goes at the instant of a tick, before or after its sample.
    assert!((4 * 8..=5 * 8).contains(&reports[1].samples), "{reports:?}");
    assert!(reports[2..].iter().all(|r| r.samples == 5 * 8), "each carries 5 s of samples of every GPU: {reports:?}");
    let sent: Vec<i64> = reports.iter().flat_map(|r| r.seconds.iter().copied()).collect();
    let mut seconds: Vec<i64> = sent.iter().map(|s| s - start().timestamp()).collect();
    seconds.dedup();
    assert_eq!(seconds, (0..20).collect::<Vec<_>>(), "every second's samples but the one gathered for the next, in order, none twice");
    assert!(crate::exporter::render(&agent.state).expect("metrics").contains("egs_agent_report_interval_seconds 5"));

    // Someone starts watching: the next answer says so, and from then on every tick goes at once.
    agent.gateway.with(|f| f.report_interval = Duration::ZERO);
    wait(Duration::from_secs(10)).await;
    let after: Vec<Call> = agent.gateway.reports().into_iter().skip(reports.len()).collect();
    assert_eq!(after.first().map(|r| r.samples), Some(5 * 8), "the report that learns of it still gathered 5 s: {after:?}");
    assert!(after.len() >= 6 && after[1..].iter().all(|r| r.samples == 8), "then a report per tick: {after:?}");

    // An absurd answer is capped well inside the gateway's staleness limit.
    agent.gateway.with(|f| f.report_interval = Duration::from_secs(3600));
    wait(Duration::from_secs(25)).await;
    let capped: Vec<Call> = agent.gateway.reports().into_iter().skip(reports.len() + after.len()).collect();
    let gaps: Vec<Duration> = capped.windows(2).map(|w| w[1].at - w[0].at).collect();
    assert!(!gaps.is_empty() && gaps.iter().all(|g| *g == crate::report::MAX_REPORT_INTERVAL), "{gaps:?}");
    // Stopping delivers what was gathered.
    let state = agent.state.clone();
    agent.stop().await.expect("a clean stop");
    assert_eq!(state.metrics.samples_sent.get(), state.metrics.samples_taken.get(), "nothing gathered is left behind");
}

#[tokio::test(start_paused = true)]
async fn a_longer_interval_samples_less_often() {
    let agent = spawn(config(&["--interval", "5s"]), FakeGateway::default());
    wait(Duration::from_secs(31)).await;
    let seconds: Vec<i64> = agent.gateway.reports().iter().map(|r| r.seconds[0] - start().timestamp()).collect();
    assert_eq!(seconds, vec![0, 5, 10, 15, 20, 25, 30]);
    agent.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn while_the_gateway_is_down_the_agent_backs_off_with_jitter_and_the_buffer_stays_bounded() {
    let agent = spawn(config(&["--buffer", "60s"]), FakeGateway::default());
    wait(Duration::from_millis(2_500)).await;
    agent.gateway.set_down(true);
    let down_at = Instant::now();
    wait(Duration::from_secs(300)).await;
    let tries: Vec<Instant> = agent.gateway.reports().iter().filter(|c| c.at >= down_at).map(|c| c.at).collect();
    assert!((8..=30).contains(&tries.len()), "about 20 tries in 5 minutes, not 300: {}", tries.len());
    let gaps: Vec<f64> = tries.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect();
    for (n, gap) in gaps.iter().enumerate() {
        let ceiling = (0.5 * 2f64.powi(n as i32)).min(30.0);
        assert!(
            *gap <= ceiling + 1.0 && *gap >= ceiling / 2.0 - 1.0,
            "wait {n} is {gap} s, expected about {} to {ceiling} s: {gaps:?}",
            ceiling / 2.0
        );
    }
    assert!(gaps.iter().all(|g| *g <= 31.0), "capped at 30 s: {gaps:?}");
    let capped: HashSet<u64> = gaps[6..].iter().map(|g| (g * 1000.0) as u64).collect();
    assert!(capped.len() > 1, "jittered: {gaps:?}");
    let buffered = agent.state.buffer().samples();
    assert_eq!(buffered, 60 * 8, "a minute of 8 GPUs, no more");
    let dropped = agent.state.metrics.samples_dropped.get();
    assert!((239 * 8..=241 * 8).contains(&(dropped as usize)), "the other four minutes were dropped, oldest first: {dropped}");
    assert_eq!(agent.state.metrics.buffered_samples.get(), 480);
    let metrics = crate::exporter::render(&agent.state).expect("metrics");
    assert!(metrics.contains(&format!("egs_agent_samples_dropped_total {dropped}")), "{metrics}");
    assert!(metrics.contains("egs_agent_report_errors_total{reason=\"unreachable\"}"), "{metrics}");
    agent.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn after_reconnecting_the_agent_resends_the_buffer_once_without_duplicates() {
    let agent = spawn(config(&["--buffer", "60s"]), FakeGateway::default());
    wait(Duration::from_millis(10_500)).await;
    agent.gateway.set_down(true);
    wait(Duration::from_secs(120)).await;
    agent.gateway.set_down(false);
    // The next try comes within the capped backoff; then the buffer drains in one request.
    wait(Duration::from_secs(40)).await;
    assert_eq!(agent.state.buffer().samples(), 0, "the buffer drained");
    let (stored, duplicates, samples) = agent.gateway.with(|f| (f.stored.len(), f.duplicates, f.samples.clone()));
    assert_eq!(duplicates, 0, "every sample arrived once");
    let taken = agent.state.metrics.samples_taken.get() as usize;
    let dropped = agent.state.metrics.samples_dropped.get() as usize;
    assert_eq!(stored, taken - dropped, "all but the dropped arrived");
    assert_eq!(samples.len(), stored);
    // What is missing is a run of the oldest seconds of the outage, for every GPU alike.
    let mut by_second: HashMap<i64, usize> = HashMap::new();
    for s in &samples {
        *by_second.entry(s.timestamp.timestamp() - start().timestamp()).or_default() += 1;
    }
    assert!(by_second.values().all(|n| *n == 8), "whole batches only");
    let mut seconds: Vec<i64> = by_second.into_keys().collect();
    seconds.sort_unstable();
    let missing: Vec<i64> = (0..=*seconds.last().unwrap_or(&0)).filter(|s| !seconds.contains(s)).collect();
    assert_eq!(missing.len(), dropped / 8);
    assert!(missing.windows(2).all(|w| w[1] == w[0] + 1), "one run: {missing:?}");
    assert_eq!(missing.first(), Some(&11), "starting right after the last delivered second: {missing:?}");
    let resend = agent.gateway.reports().into_iter().find(|r| r.answered && r.samples > 8).expect("one request carried the buffer");
    assert_eq!(resend.samples, 60 * 8, "the minute buffered went in one request");
    agent.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn a_batch_whose_answer_was_lost_is_resent_and_stored_once() {
    let agent = spawn(config(&[]), FakeGateway::default());
    wait(Duration::from_millis(3_500)).await;
    agent.gateway.with(|f| f.lose_next_answer = true);
    wait(Duration::from_secs(5)).await;
    let (stored, duplicates) = agent.gateway.with(|f| (f.stored.len(), f.duplicates));
    assert_eq!(duplicates, 8, "the gateway saw one batch twice and kept it once");
    assert_eq!(stored as u64, agent.state.metrics.samples_taken.get());
    assert_eq!(agent.state.metrics.samples_duplicate.get(), 8);
    assert_eq!(agent.state.buffer().samples(), 0);
    agent.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn an_unreachable_gateway_at_start_is_retried_and_nothing_sampled_meanwhile_is_lost() {
    let gateway = FakeGateway::default();
    gateway.set_down(true);
    let agent = spawn(config(&[]), gateway);
    wait(Duration::from_secs(20)).await;
    assert!(agent.gateway.with(|f| f.registrations.is_empty()));
    assert!(!agent.task.is_finished(), "an unreachable gateway is not fatal");
    agent.gateway.set_down(false);
    wait(Duration::from_secs(40)).await;
    let (registrations, stored) = agent.gateway.with(|f| (f.registrations.len(), f.stored.len()));
    assert_eq!(registrations, 1);
    assert_eq!(stored as u64, agent.state.metrics.samples_taken.get(), "samples from before the registration arrived too");
    agent.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn a_registration_the_gateway_refuses_stops_the_agent_with_the_reason() {
    let gateway = FakeGateway::default();
    gateway.with(|f| f.refuse = true);
    let agent = spawn(config(&[]), gateway);
    let result = tokio::time::timeout(Duration::from_secs(5), agent.task).await.expect("the agent stops at once").expect("the task");
    let Err(Error::Registration(GatewayError::Refused { code, .. })) = result else { panic!("refused: {result:?}") };
    assert_eq!(code, "FORBIDDEN");
}

#[tokio::test(start_paused = true)]
async fn registration_describes_the_node_and_its_gpus() {
    let agent = spawn(config(&["--instance-type", "p5.48xlarge", "--temperature-threshold-celsius", "85"]), FakeGateway::default());
    wait(Duration::from_millis(500)).await;
    let node = agent.gateway.with(|f| f.registrations[0].clone());
    assert_eq!(
        (node.name.as_str(), node.instance_type.as_deref().unwrap_or_default(), node.gpu_shape.as_str()),
        (NODE, "p5.48xlarge", "NVIDIA-H100-80GB-HBM3")
    );
    assert_eq!((node.gpus_per_node, node.gpu_memory_mib, node.gpus.as_ref().map(Vec::len)), (8, 81_559, Some(8)));
    assert_eq!(node.temperature_threshold_celsius, Some(85.0));
    let sent = serde_json::to_value(&node).expect("JSON");
    assert!(sent.get("powerThresholdWatts").is_none(), "a threshold not configured is left out, so the gateway keeps an admin's: {sent}");
    assert_eq!(node.cuda_version.as_deref(), Some("12.4"));
    assert_eq!(node.health, None, "health is left to the gateway unless a GPU fails");
    assert_eq!(node.driver_version.as_deref(), Some("550.90.07"));
    assert!(node.gpus.iter().flatten().enumerate().all(|(i, g)| g.index == i as i64 && g.model == "NVIDIA H100 80GB HBM3"));
    agent.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn a_gpu_falling_off_the_bus_reports_xid_79_and_registers_the_node_unhealthy() {
    let agent = spawn(config(&[]), FakeGateway::default());
    wait(Duration::from_millis(2_500)).await;
    agent.faults.inject(Fault { kind: FaultKind::Lost, gpu: 5 });
    wait(Duration::from_secs(3)).await;
    let (registrations, samples) = agent.gateway.with(|f| (f.registrations.clone(), f.samples.clone()));
    assert_eq!(registrations.iter().map(|r| r.health.clone()).collect::<Vec<_>>(), vec![None, Some(Health::UNHEALTHY)]);
    assert_eq!(registrations[1].gpus.as_ref().map(Vec::len), Some(8), "the lost GPU stays registered");
    let uuid = &registrations[0].gpus.as_ref().expect("GPUs are registered")[5].uuid;
    let last: Vec<&SampleInput> = samples.iter().filter(|s| &s.uuid == uuid).collect();
    assert_eq!(last.last().map(|s| s.xid_errors.clone()), Some(vec![79]), "its last word");
    let seconds_after = samples.iter().filter(|s| &s.uuid != uuid).map(|s| s.timestamp).max();
    assert!(last.last().map(|s| s.timestamp) < seconds_after, "the other GPUs go on, it does not");
    assert!(agent.state.is_unhealthy());
    let metrics = crate::exporter::render(&agent.state).expect("metrics");
    assert!(!metrics.contains(uuid.as_str()), "a GPU gone from the bus is not exported");
    agent.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn the_pod_mapping_goes_out_at_start_then_every_minute_while_unchanged() {
    let agent = spawn(config(&["--simulate-pods", "team-a"]), FakeGateway::default());
    wait(Duration::from_millis(150_500)).await;
    let reports = agent.gateway.with(|f| f.workloads.clone());
    let started = reports.first().map(|(at, _)| *at).expect("a first mapping");
    let offsets: Vec<u64> = reports.iter().map(|(at, _)| (*at - started).as_secs()).collect();
    assert_eq!(offsets, vec![0, 60, 120], "once at start, then once a minute: {offsets:?}");
    let (_, mapping) = &reports[0];
    assert_eq!(mapping.len(), 8, "every GPU");
    for gpu in mapping {
        assert_eq!(gpu.processes.len(), 1, "{gpu:?}");
        let pod = gpu.processes[0].pod.as_ref().expect("a pod");
        assert_eq!((pod.namespace.as_deref(), pod.container.as_deref()), (Some("team-a"), Some("trainer")));
    }
    assert_eq!(agent.state.metrics.workload_reports.get(), 3);
    // While the gateway is away the mapping is retried, and delivered once it is back.
    agent.gateway.set_down(true);
    wait(Duration::from_secs(60)).await;
    agent.gateway.set_down(false);
    wait(Duration::from_secs(10)).await;
    assert_eq!(agent.gateway.with(|f| f.workloads.len()), 4);
    agent.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn the_names_the_gateway_gives_back_are_kept_for_metrics() {
    let gateway = FakeGateway::default();
    let named = crate::kube::PodMeta { uid: "u-1".into(), namespace: "team-a".into(), name: "llama-0".into(), containers: HashMap::new() };
    gateway.with(|f| f.named = vec![named.clone()]);
    let agent = spawn(config(&["--simulate-pods", "team-a"]), gateway);
    assert!(agent.state.named_pods().is_empty(), "nothing named before the first answer");
    wait(Duration::from_millis(1_500)).await;
    assert_eq!(agent.state.named_pods().get("u-1"), Some(&named));
    // The next answer replaces them (a pod that left is forgotten).
    agent.gateway.with(|f| f.named.clear());
    wait(Duration::from_secs(61)).await;
    assert!(agent.state.named_pods().is_empty());
    agent.stop().await.expect("a clean stop");
}

#[tokio::test(start_paused = true)]
async fn once_delivers_one_batch_and_returns() {
    let gateway = FakeGateway::default();
    let agent = spawn(config(&["--once"]), gateway);
    let result = tokio::time::timeout(Duration::from_secs(5), agent.task).await.expect("it returns").expect("the task");
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(agent.gateway.with(|f| f.stored.len()), 8);
}

#[tokio::test(start_paused = true)]
async fn shutdown_delivers_what_is_buffered() {
    let agent = spawn(config(&[]), FakeGateway::default());
    wait(Duration::from_millis(2_500)).await;
    // Down long enough to buffer, back just before the stop.
    agent.gateway.set_down(true);
    wait(Duration::from_secs(5)).await;
    agent.gateway.set_down(false);
    let gateway = agent.gateway.clone();
    let taken = agent.state.metrics.samples_taken.get();
    agent.stop().await.expect("a clean stop");
    assert_eq!(gateway.with(|f| f.stored.len()) as u64, taken, "the last flush delivered the buffer");
}

// ---- The HTTP face, on the real clock ----

/// A strict reading of OpenMetrics text: families typed once, samples under the family declared
/// last (gauges bare, counters `_total`), valid label syntax, numeric values, one `# EOF`.
fn check_openmetrics(text: &str) -> Vec<(String, HashMap<String, String>, f64)> {
    assert!(text.ends_with("# EOF\n") && text.matches("# EOF").count() == 1, "one # EOF at the end");
    let mut typed = HashSet::new();
    let mut current: Option<(String, String)> = None;
    let mut samples = Vec::new();
    for line in text.lines().filter(|l| *l != "# EOF") {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE name kind");
            assert!(typed.insert(name.to_owned()), "{name} typed twice");
            current = Some((name.to_owned(), kind.to_owned()));
            continue;
        }
        if line.starts_with("# HELP ") || line.starts_with("# UNIT ") {
            continue;
        }
        let (family, kind) = current.clone().unwrap_or_else(|| panic!("a sample before any TYPE: {line}"));
        let (name_labels, value) = line.rsplit_once(' ').expect("a value");
        let value: f64 = value.parse().unwrap_or_else(|_| panic!("not a number: {line}"));
        let (name, labels) = match name_labels.split_once('{') {
            Some((name, rest)) => (name, rest.strip_suffix('}').unwrap_or_else(|| panic!("unclosed labels: {line}"))),
            None => (name_labels, ""),
        };
        let expected = if kind == "counter" { format!("{family}_total") } else { family.clone() };
        assert_eq!(name, expected, "{line}");
        let mut parsed = HashMap::new();
        let mut rest = labels;
        while !rest.is_empty() {
            let (key, after) = rest.split_once("=\"").unwrap_or_else(|| panic!("bad label in {line}"));
            assert!(key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !key.starts_with(|c: char| c.is_ascii_digit()), "{key}");
            let end = after.find('"').unwrap_or_else(|| panic!("unterminated label in {line}"));
            parsed.insert(key.to_owned(), after[..end].to_owned());
            rest = after[end + 1..].strip_prefix(',').unwrap_or(&after[end + 1..]);
        }
        samples.push((name.to_owned(), parsed, value));
    }
    samples
}

#[tokio::test]
async fn metrics_use_dcgm_exporter_names_and_labels_and_healthz_says_ok() {
    let config =
        Config::from_args(["--simulate", "2", "--node-name", NODE, "--cluster-name", "c1", "--listen", "127.0.0.1:0", "--print", "--seed", "3"])
            .expect("flags");
    let source = SimulatedSource::new(NODE, 2, &config.shape, 3);
    let faults = source.faults();
    faults.inject(Fault { kind: FaultKind::Xid(13), gpu: 1 });
    let agent = Agent::with_source(config, Box::new(source));
    let state = agent.state();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(agent.run_with(None::<FakeGateway>, async move {
        let _ = stopped.await;
    }));
    let mut addr = None;
    for _ in 0..100 {
        addr = state.http_addr().filter(|_| state.snapshot().taken_at.is_some());
        if addr.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let addr = addr.expect("the agent serves HTTP");
    let client = reqwest::Client::new();
    let metrics = client.get(format!("http://{addr}/metrics")).send().await.expect("GET /metrics");
    assert_eq!(metrics.status(), 200);
    assert!(metrics.headers()["content-type"].to_str().unwrap_or_default().starts_with("application/openmetrics-text"));
    let text = metrics.text().await.expect("a body");
    let samples = check_openmetrics(&text);
    for family in [
        "DCGM_FI_DEV_SM_CLOCK",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_MEM_COPY_UTIL",
        "DCGM_FI_DEV_XID_ERRORS",
        "DCGM_FI_DEV_FB_FREE",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
        "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
    ] {
        assert!(text.contains(&format!("# TYPE {family} gauge")), "{family} is a gauge, as on the gateway");
        let per_gpu: Vec<_> = samples.iter().filter(|(name, _, _)| name == family).collect();
        assert_eq!(per_gpu.len(), 2, "{family}: one series per GPU");
        for (_, labels, _) in per_gpu {
            let keys: Vec<&str> = ["gpu", "UUID", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION", "cluster"].into_iter().collect();
            assert!(keys.iter().all(|k| labels.contains_key(*k)), "{family}: {labels:?}");
            assert_eq!((labels["Hostname"].as_str(), labels["cluster"].as_str()), (NODE, "c1"));
            assert_eq!(labels["device"], format!("nvidia{}", labels["gpu"]));
            assert_eq!(labels["modelName"], "NVIDIA H100 80GB HBM3");
        }
    }
    let xid = samples.iter().find(|(name, labels, _)| name == "DCGM_FI_DEV_XID_ERRORS" && labels["gpu"] == "1").expect("GPU 1's XID");
    assert_eq!(xid.2, 13.0);
    // A busy GPU carries its pod, as dcgm-exporter does in Kubernetes.
    if let Some((_, labels, _)) = samples.iter().find(|(name, labels, _)| name == "DCGM_FI_DEV_GPU_UTIL" && labels.contains_key("pod")) {
        assert_eq!((labels["namespace"].as_str(), labels["container"].as_str()), ("ml-team", "trainer"));
        assert!(samples.iter().any(|(name, _, _)| name == "egs_agent_gpu_pod_memory_used_mib"));
    }
    assert!(samples.iter().any(|(name, _, value)| name == "egs_agent_samples_total" && *value >= 2.0));
    assert_simulation_speaks_as_real_nvml(&samples);
    let health = client.get(format!("http://{addr}/healthz")).send().await.expect("GET /healthz");
    assert_eq!(health.status(), 200);
    let body: serde_json::Value = health.json().await.expect("JSON");
    assert_eq!((body["status"].as_str(), body["gpus"].as_i64()), (Some("ok"), Some(2)));
    let _ = stop.send(());
    task.await.expect("the task").expect("a clean stop");
}

/// The simulation is faithful to the real thing: an agent's /metrics recorded on an NVIDIA H200
/// (driver 580.159.04, CUDA 13.0) under a bf16 matrix-product load, read through NVML
/// (`testdata/nvml-h200/`), has exactly the simulation's families, each with the same labels
/// (but the pod labels, which need Kubernetes), and values in the ranges a real GPU gave.
fn assert_simulation_speaks_as_real_nvml(simulated: &[(String, HashMap<String, String>, f64)]) {
    let real = check_openmetrics(include_str!("../testdata/nvml-h200/metrics.txt"));
    let shape = |samples: &[(String, HashMap<String, String>, f64)]| -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
        let mut out: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> = std::collections::BTreeMap::new();
        for (name, labels, _) in samples {
            out.entry(name.clone()).or_default().extend(labels.keys().filter(|k| !["pod", "namespace", "container"].contains(&k.as_str())).cloned());
        }
        out
    };
    // Per-pod memory only exists where a pod uses a GPU; the pace the gateway asks for is the
    // agent's own (not NVML's) and came after the recording.
    let mut simulated = shape(simulated);
    simulated.remove("egs_agent_gpu_pod_memory_used_mib");
    simulated.remove("egs_agent_report_interval_seconds");
    assert_eq!(simulated, shape(&real), "the simulated /metrics has the real one's families and labels");
    let value = |family: &str| real.iter().find(|(name, _, _)| name == family).map(|s| s.2).unwrap_or_else(|| panic!("{family}"));
    assert_eq!(value("DCGM_FI_DEV_GPU_UTIL"), 100.0, "recorded under load");
    assert!(value("DCGM_FI_DEV_POWER_USAGE") <= value("DCGM_FI_DEV_POWER_MGMT_LIMIT"));
    assert!(value("DCGM_FI_DEV_FB_USED") + value("DCGM_FI_DEV_FB_FREE") > 140_000.0, "an H200's 141 GB");
}
