//! The node agent (`egs-node-agent`, in process, simulated GPUs) against the real gateway: it
//! registers its node with an agent token, reports samples every second, its injected faults
//! raise the gateway's alerts, an outage between the two is bridged by its buffer, and a token
//! for another node gets it nowhere.

use egs_node_agent::gateway::GatewayError;
use egs_node_agent::{Agent, Config, Error};
use egs_tests::TestApp;
use egs_tests::fixtures::*;
use serde_json::{Value, json};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const NODE_QUERY: &str = "query($cluster: ID!) { nodes(filter: { clusterId: $cluster }, first: 10) { nodes {
    id name instanceType gpuShape gpusPerNode gpuMemoryMib driverVersion health lastHeartbeatAt
    gpus { id uuid index model memoryMib latestSample { time util temperature power xidErrors } } } } }";
const ALERTS: &str = "query($kind: AlertKind) { alerts(kind: $kind, open: true, first: 20) { nodes {
    kind severity value message gpu { uuid index } node { name } } } }";

/// A token file for an agent of `node` in `cluster`.
async fn agent_token_file(app: &TestApp, cluster: &str, node: &str) -> (tempfile::TempDir, PathBuf) {
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { field message code } } }";
    let input = json!({ "name": format!("agent {node}"), "role": "AGENT", "clusterId": cluster, "nodeName": node });
    let secret = app.mutate(&app.admin_token, "createToken", create, input).await["secret"].as_str().expect("secret").to_owned();
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("token");
    std::fs::write(&path, format!("{secret}\n")).expect("write the token");
    (dir, path)
}

fn agent_config(gateway: &str, cluster: &str, node: &str, token: &std::path::Path, extra: &[&str]) -> Config {
    let token = token.to_str().expect("a UTF-8 path");
    let mut args = vec![
        "--gateway",
        gateway,
        "--cluster-id",
        cluster,
        "--node-name",
        node,
        "--token-file",
        token,
        "--simulate",
        "2",
        "--listen",
        "127.0.0.1:0",
        "--seed",
        "11",
    ];
    args.extend_from_slice(extra);
    Config::from_args(args).expect("valid agent flags")
}

/// An agent running in the background until dropped or stopped.
struct RunningAgent {
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<Result<(), Error>>,
    state: Arc<egs_node_agent::State>,
}

impl RunningAgent {
    fn start(config: Config) -> Self {
        let agent = Agent::new(config).expect("the agent starts");
        let state = agent.state();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(agent.run(async move {
            let _ = stopped.await;
        }));
        Self { stop: Some(stop), task, state }
    }

    /// Stops the agent (it delivers what it buffered first); returns its state.
    async fn stop(mut self) -> Arc<egs_node_agent::State> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let result = (&mut self.task).await.expect("the agent task");
        assert!(result.is_ok(), "the agent stops cleanly: {result:?}");
        self.state.clone()
    }
}

impl Drop for RunningAgent {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Polls `check` every 200 ms until it returns something, for at most `limit`.
async fn eventually<T, F, Fut>(limit: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn node_of(app: &TestApp, cluster: &str, name: &str) -> Option<Value> {
    let data = app.ok(&app.admin_token, NODE_QUERY, json!({ "cluster": cluster })).await;
    data["nodes"]["nodes"].as_array()?.iter().find(|n| n["name"] == name).cloned()
}

async fn open_alerts(app: &TestApp, kind: &str) -> Vec<Value> {
    let data = app.ok(&app.admin_token, ALERTS, json!({ "kind": kind })).await;
    data["alerts"]["nodes"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn the_agent_registers_its_node_and_its_samples_reach_the_gateway() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    let (_dir, token) = agent_token_file(&app, &cluster, "gpu-node-1").await;
    let agent = RunningAgent::start(agent_config(&app.url(""), &cluster, "gpu-node-1", &token, &[]));
    let inventory = agent.state.inventory();

    let node = eventually(Duration::from_secs(20), "both GPUs' samples", || async {
        let node = node_of(&app, &cluster, "gpu-node-1").await?;
        let reported = node["gpus"].as_array()?.iter().filter(|g| !g["latestSample"].is_null()).count();
        (reported == 2).then_some(node)
    })
    .await;
    assert_eq!((node["instanceType"].as_str(), node["gpuShape"].as_str()), (Some("p5.48xlarge"), Some(SHAPE_H100)), "{node}");
    assert_eq!((node["gpusPerNode"].as_i64(), node["gpuMemoryMib"].as_i64()), (Some(2), Some(81_559)));
    assert_eq!(node["driverVersion"], "550.90.07");
    assert_eq!(node["health"], "HEALTHY");
    assert!(node["lastHeartbeatAt"].is_string(), "the agent's reports are the node's heartbeat: {node}");
    let gpus = node["gpus"].as_array().expect("gpus");
    for (gpu, info) in gpus.iter().zip(&inventory.gpus) {
        assert_eq!((gpu["uuid"].as_str(), gpu["index"].as_u64()), (Some(info.uuid.as_str()), Some(u64::from(info.index))));
        assert_eq!(gpu["model"], "NVIDIA H100 80GB HBM3");
        let sample = &gpu["latestSample"];
        assert!((0.0..=100.0).contains(&sample["util"].as_f64().unwrap_or(-1.0)), "{sample}");
        assert!(sample["power"].as_f64().unwrap_or_default() > 0.0, "{sample}");
    }

    // Nobody watches the node, so the gateway lets the agent gather a few seconds of samples
    // per report: it says so, and the history still gets a point for every second.
    let history = "query($id: ID!) { node(id: $id) { ... on Gpu { metrics(step: \"1s\") { time samples } } } }";
    let points = eventually(Duration::from_secs(20), "a few seconds of history", || async {
        let points = app.ok(&app.admin_token, history, json!({ "id": gpus[0]["id"] })).await["node"]["metrics"].clone();
        points.as_array().filter(|p| p.len() >= 6).cloned()
    })
    .await;
    assert!(points.iter().all(|p| p["samples"] == 1), "one sample per second: {points:?}");
    let seconds: Vec<i64> =
        points.iter().filter_map(|p| chrono::DateTime::parse_from_rfc3339(p["time"].as_str()?).ok()).map(|t| t.timestamp()).collect();
    assert!(seconds.windows(2).all(|w| w[1] == w[0] + 1), "no second missing: {points:?}");
    assert_eq!(agent.state.metrics.report_interval.get(), egs_api::settings::ServeArgs::DEFAULT_UNWATCHED_REPORT_INTERVAL_SECS as i64);
    let (reports, ticks) = (agent.state.metrics.reports.get(), agent.state.metrics.samples_taken.get() / 2);
    assert!(reports * 2 <= ticks, "fewer reports than ticks: {reports} reports over {ticks} ticks");

    // Its own /metrics is up too.
    let addr = agent.state.http_addr().expect("the agent serves HTTP");
    let text = reqwest::get(format!("http://{addr}/metrics")).await.expect("GET /metrics").text().await.expect("a body");
    assert!(text.contains("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"") && text.ends_with("# EOF\n"), "{text}");
    let state = agent.stop().await;
    let metrics = &state.metrics;
    assert_eq!((metrics.samples_sent.get(), metrics.samples_duplicate.get()), (metrics.samples_taken.get(), 0), "all delivered, once");
    app.finish().await;
}

#[tokio::test]
async fn an_agent_token_for_another_node_is_refused() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    let (_dir, token) = agent_token_file(&app, &cluster, "gpu-node-a").await;
    let mut agent = RunningAgent::start(agent_config(&app.url(""), &cluster, "gpu-node-b", &token, &["--no-http"]));
    let result = tokio::time::timeout(Duration::from_secs(15), &mut agent.task).await.expect("the agent gives up at once").expect("the task");
    let Err(Error::Registration(GatewayError::Refused { code, message })) = result else { panic!("refused: {result:?}") };
    assert_eq!(code, "FORBIDDEN", "{message}");
    assert!(message.contains("own node"), "{message}");
    assert!(node_of(&app, &cluster, "gpu-node-b").await.is_none(), "nothing registered");
    app.finish().await;
}

#[tokio::test]
async fn an_overheating_gpu_raises_a_temperature_alert_in_the_gateway() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    let (_dir, token) = agent_token_file(&app, &cluster, "hot-node").await;
    let agent = RunningAgent::start(agent_config(&app.url(""), &cluster, "hot-node", &token, &["--fault", "overheat:1", "--no-http"]));
    let hot = agent.state.inventory().gpus[1].uuid.clone();
    let alert = eventually(Duration::from_secs(30), "an OVER_TEMPERATURE alert", || async {
        open_alerts(&app, "OVER_TEMPERATURE").await.into_iter().find(|a| a["gpu"]["uuid"] == hot.as_str())
    })
    .await;
    assert_eq!(alert["node"]["name"], "hot-node");
    assert!(alert["value"].as_f64().unwrap_or_default() > 87.0, "{alert}");
    let cool = agent.state.inventory().gpus[0].uuid.clone();
    assert!(open_alerts(&app, "OVER_TEMPERATURE").await.iter().all(|a| a["gpu"]["uuid"] != cool.as_str()), "only the overheating GPU");
    agent.stop().await;
    app.finish().await;
}

#[tokio::test]
async fn a_gpu_falling_off_the_bus_raises_an_xid_alert_and_marks_the_node_unhealthy() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    let (_dir, token) = agent_token_file(&app, &cluster, "lossy-node").await;
    let agent = RunningAgent::start(agent_config(&app.url(""), &cluster, "lossy-node", &token, &["--fault", "lost:1@2s", "--no-http"]));
    let lost = agent.state.inventory().gpus[1].uuid.clone();
    let alert = eventually(Duration::from_secs(30), "an XID_ERROR alert", || async {
        open_alerts(&app, "XID_ERROR").await.into_iter().find(|a| a["gpu"]["uuid"] == lost.as_str())
    })
    .await;
    assert_eq!((alert["severity"].as_str(), alert["value"].as_f64()), (Some("CRITICAL"), Some(79.0)), "{alert}");
    let node = eventually(Duration::from_secs(15), "the node UNHEALTHY", || async {
        node_of(&app, &cluster, "lossy-node").await.filter(|n| n["health"] == "UNHEALTHY")
    })
    .await;
    let gpu = node["gpus"].as_array().expect("gpus").iter().find(|g| g["uuid"] == lost.as_str()).cloned().expect("the lost GPU stays registered");
    assert_eq!(gpu["latestSample"]["xidErrors"], json!([79]), "its last sample carries XID 79: {gpu}");
    assert!(agent.state.is_unhealthy());
    agent.stop().await;
    app.finish().await;
}

/// A TCP proxy in front of the gateway that can be cut (connections refused and dropped).
struct Proxy {
    addr: std::net::SocketAddr,
    up: Arc<AtomicBool>,
    cut: Arc<tokio::sync::Notify>,
    task: JoinHandle<()>,
}

impl Proxy {
    async fn start(target: std::net::SocketAddr) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the proxy");
        let addr = listener.local_addr().expect("its address");
        let up = Arc::new(AtomicBool::new(true));
        let cut = Arc::new(tokio::sync::Notify::new());
        let (up2, cut2) = (up.clone(), cut.clone());
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !up2.load(Ordering::SeqCst) {
                    drop(inbound);
                    continue;
                }
                let cut = cut2.clone();
                tokio::spawn(async move {
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(target).await else { return };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        () = cut.notified() => {}
                    }
                });
            }
        });
        Self { addr, up, cut, task }
    }

    fn set_up(&self, up: bool) {
        self.up.store(up, Ordering::SeqCst);
        if !up {
            self.cut.notify_waiters();
        }
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[tokio::test]
async fn an_outage_between_agent_and_gateway_is_bridged_by_the_buffer_without_gaps_or_duplicates() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    let (_dir, token) = agent_token_file(&app, &cluster, "far-node").await;
    let target = app.base.trim_start_matches("http://").parse().expect("the gateway's address");
    let proxy = Proxy::start(target).await;
    let agent = RunningAgent::start(agent_config(&format!("http://{}", proxy.addr), &cluster, "far-node", &token, &["--no-http"]));
    eventually(Duration::from_secs(20), "the first samples", || async { (agent.state.metrics.samples_sent.get() >= 4).then_some(()) }).await;

    proxy.set_up(false);
    let outage_started = chrono::Utc::now();
    eventually(Duration::from_secs(20), "failed reports", || async {
        let failures: u64 =
            agent.state.metrics.report_errors.get_or_create(&egs_node_agent::exporter::ReasonLabels { reason: "unreachable".into() }).get();
        (failures >= 2).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let buffered = agent.state.buffer().samples();
    assert!(buffered >= 8, "the agent buffered while the gateway was away: {buffered}");
    let outage_ended = chrono::Utc::now();
    proxy.set_up(true);

    eventually(Duration::from_secs(45), "the buffer delivered", || async { (agent.state.buffer().samples() == 0).then_some(()) }).await;
    let node = node_of(&app, &cluster, "far-node").await.expect("the node");
    let history = "query($id: ID!) { node(id: $id) { ... on Gpu { metrics(step: \"1s\") { time samples } } } }";
    for gpu in node["gpus"].as_array().expect("gpus") {
        let points = app.ok(&app.admin_token, history, json!({ "id": gpu["id"] })).await["node"]["metrics"].clone();
        let seconds: Vec<i64> = points
            .as_array()
            .expect("points")
            .iter()
            .map(|p| {
                assert_eq!(p["samples"], 1, "one sample per second: {p}");
                chrono::DateTime::parse_from_rfc3339(p["time"].as_str().unwrap_or_default()).map(|t| t.timestamp()).unwrap_or_default()
            })
            .collect();
        let during: Vec<i64> = (outage_started.timestamp() + 1..outage_ended.timestamp()).collect();
        let missing: Vec<&i64> = during.iter().filter(|s| !seconds.contains(s)).collect();
        assert!(missing.is_empty(), "every second of the outage arrived after it: missing {missing:?} of {during:?}");
    }
    let state = agent.stop().await;
    let metrics = &state.metrics;
    assert_eq!(metrics.samples_dropped.get(), 0);
    assert_eq!(metrics.samples_sent.get(), metrics.samples_taken.get(), "every sample stored once");
    app.finish().await;
}

const UPSERT: &str = "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) {
    nodes { name instanceType powerThresholdWatts temperatureThresholdCelsius driverVersion cudaVersion } userErrors { field message code } } }";

/// A cluster-scoped agent token (no node name) in a file.
async fn cluster_token_file(app: &TestApp, cluster: &str) -> (tempfile::TempDir, PathBuf, String) {
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret token { nodeName } userErrors { field message code } } }";
    let payload = app.mutate(&app.admin_token, "createToken", create, json!({ "name": "agents", "role": "AGENT", "clusterId": cluster })).await;
    assert_eq!(payload["token"]["nodeName"], Value::Null, "cluster-scoped: {payload}");
    let secret = payload["secret"].as_str().expect("secret").to_owned();
    let dir = tempfile::tempdir().expect("a temp dir");
    let path = dir.path().join("token");
    std::fs::write(&path, format!("{secret}\n")).expect("write the token");
    (dir, path, secret)
}

/// Runs an agent with `--once`: it registers, delivers one batch and returns.
async fn run_once(config: Config) -> Result<(), Error> {
    let agent = Agent::new(config).expect("the agent starts");
    tokio::time::timeout(Duration::from_secs(30), agent.run(std::future::pending())).await.expect("the agent returns")
}

#[tokio::test]
async fn re_registering_keeps_an_admins_thresholds_and_an_explicit_null_clears_them() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    let (_dir, token) = agent_token_file(&app, &cluster, "gpu-node-1").await;
    // The agent registers the node first; then an admin tunes it.
    run_once(agent_config(&app.url(""), &cluster, "gpu-node-1", &token, &["--once", "--no-http"])).await.expect("registered");
    let tune = json!({ "clusterId": cluster, "nodes": [{
        "name": "gpu-node-1", "instanceType": "p5.48xlarge-custom", "gpuShape": SHAPE_H100, "gpusPerNode": 2, "gpuMemoryMib": 81559,
        "powerThresholdWatts": 650.0, "temperatureThresholdCelsius": 80.0 }] });
    let tuned = app.mutate(&app.admin_token, "upsertNodes", UPSERT, tune).await;
    assert_eq!(tuned["nodes"][0]["powerThresholdWatts"], 650.0);

    // The agent restarts and registers again, knowing none of it.
    run_once(agent_config(&app.url(""), &cluster, "gpu-node-1", &token, &["--once", "--no-http"])).await.expect("registered again");
    let node = node_of(&app, &cluster, "gpu-node-1").await.expect("the node");
    assert_eq!(node["instanceType"], "p5.48xlarge", "the agent's simulated node knows its instance type: {node}");
    let read = "query($id: ID!) { node(id: $id) { ... on GpuNode { powerThresholdWatts temperatureThresholdCelsius driverVersion cudaVersion } } }";
    let fields = app.ok(&app.admin_token, read, json!({ "id": node["id"] })).await["node"].clone();
    assert_eq!(
        fields,
        json!({ "powerThresholdWatts": 650.0, "temperatureThresholdCelsius": 80.0, "driverVersion": "550.90.07", "cudaVersion": "12.4" }),
        "the admin's thresholds survive the agent's restart"
    );

    // Left out: unchanged; null: cleared.
    let clear = json!({ "clusterId": cluster, "nodes": [{
        "name": "gpu-node-1", "gpuShape": SHAPE_H100, "gpusPerNode": 2, "gpuMemoryMib": 81559, "powerThresholdWatts": null }] });
    let cleared = app.mutate(&app.admin_token, "upsertNodes", UPSERT, clear).await;
    assert_eq!(
        (&cleared["nodes"][0]["powerThresholdWatts"], &cleared["nodes"][0]["temperatureThresholdCelsius"], &cleared["nodes"][0]["instanceType"]),
        (&Value::Null, &json!(80.0), &json!("p5.48xlarge")),
        "{cleared}"
    );
    // A new node needs its instance type.
    let new = json!({ "clusterId": cluster, "nodes": [{ "name": "gpu-node-2", "gpuShape": SHAPE_H100, "gpusPerNode": 2, "gpuMemoryMib": 81559 }] });
    let body = app.gql(&app.admin_token, UPSERT, json!({ "input": new })).await;
    let errors = &body["data"]["upsertNodes"]["userErrors"];
    assert_eq!(
        (errors[0]["field"].clone(), errors[0]["code"].clone()),
        (json!(["input", "nodes", "0", "instanceType"]), json!("INVALID_INPUT")),
        "{body}"
    );
    assert!(node_of(&app, &cluster, "gpu-node-2").await.is_none());
    app.finish().await;
}

#[tokio::test]
async fn a_cluster_scoped_agent_token_reports_for_any_node_of_its_cluster_and_no_other() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    let other_cluster = register_cluster(&app, "c2").await;
    add_nodes(&app, &other_cluster, "far", 1, SHAPE_H100, 2).await;
    let (_dir, token, secret) = cluster_token_file(&app, &cluster).await;

    // One token, two nodes: both register and report.
    for node in ["gpu-a", "gpu-b"] {
        run_once(agent_config(&app.url(""), &cluster, node, &token, &["--once", "--no-http"])).await.expect("registered and reported");
        let found = node_of(&app, &cluster, node).await.unwrap_or_else(|| panic!("{node} registered"));
        let reported = found["gpus"].as_array().expect("gpus").iter().filter(|g| !g["latestSample"].is_null()).count();
        assert_eq!(reported, 2, "{node}: {found}");
        assert!(found["lastHeartbeatAt"].is_string());
    }

    // A node of another cluster: refused, nothing stored.
    let result = run_once(agent_config(&app.url(""), &other_cluster, "far-0", &token, &["--once", "--no-http"])).await;
    let Err(Error::Registration(GatewayError::Refused { code, message })) = result else { panic!("refused: {result:?}") };
    assert_eq!(code, "FORBIDDEN", "{message}");
    assert!(message.contains("own cluster"), "{message}");
    let far = node_of(&app, &other_cluster, "far-0").await.expect("the other cluster's node");
    assert_eq!(far["lastHeartbeatAt"], Value::Null, "{far}");
    assert_eq!(far["instanceType"], "p5.48xlarge");
    let uuid = far["gpus"][0]["uuid"].as_str().expect("a uuid");
    let sample = json!({ "uuid": uuid, "timestamp": chrono::Utc::now().to_rfc3339(), "util": 50.0, "memUtil": 1.0, "memUsedMib": 10.0,
        "temperature": 50.0, "power": 100.0, "smClockMhz": 1000.0 });
    let report = "mutation($input: ReportGpuSamplesInput!) { reportGpuSamples(input: $input) { accepted userErrors { field } } }";
    for input in
        [json!({ "clusterId": other_cluster, "nodeName": "far-0", "samples": [sample] }), json!({ "nodeId": far["id"], "samples": [sample] })]
    {
        let body = app.gql(&secret, report, json!({ "input": input })).await;
        assert_eq!(body["errors"][0]["extensions"]["code"], "FORBIDDEN", "{body}");
    }
    let workloads = "mutation($input: ReportGpuWorkloadsInput!) { reportGpuWorkloads(input: $input) { processes } }";
    let input = json!({ "clusterId": other_cluster, "nodeName": "far-0", "gpus": [{ "uuid": uuid, "processes": [{ "pid": 7 }] }] });
    let body = app.gql(&secret, workloads, json!({ "input": input })).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "FORBIDDEN", "{body}");
    let far = node_of(&app, &other_cluster, "far-0").await.expect("the node");
    assert!(far["gpus"].as_array().expect("gpus").iter().all(|g| g["latestSample"].is_null()), "nothing stored: {far}");
    // And it reads nothing, like any agent token.
    let body = app.gql(&secret, "{ nodes(first: 5) { nodes { name } } }", json!({})).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "FORBIDDEN", "{body}");
    app.finish().await;
}

#[tokio::test]
async fn a_node_scoped_token_still_reports_for_its_node_only() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "n", 2, SHAPE_H100, 1).await;
    let (_dir, token) = agent_token_file(&app, &cluster, "n-0").await;
    let secret = std::fs::read_to_string(&token).expect("the token").trim().to_owned();
    let other = node_of(&app, &cluster, "n-1").await.expect("n-1");
    let uuid = other["gpus"][0]["uuid"].as_str().expect("a uuid");
    let workloads = "mutation($input: ReportGpuWorkloadsInput!) { reportGpuWorkloads(input: $input) { processes } }";
    for input in [
        json!({ "clusterId": cluster, "nodeName": "n-1", "gpus": [{ "uuid": uuid, "processes": [] }] }),
        json!({ "nodeId": other["id"], "gpus": [{ "uuid": uuid, "processes": [] }] }),
    ] {
        let body = app.gql(&secret, workloads, json!({ "input": input })).await;
        assert_eq!(body["errors"][0]["extensions"]["code"], "FORBIDDEN", "{body}");
        assert!(body["errors"][0]["message"].as_str().unwrap_or_default().contains("own node"), "{body}");
    }
    let mine = node_of(&app, &cluster, "n-0").await.expect("n-0");
    let input = json!({ "clusterId": cluster, "nodeName": "n-0", "gpus": [{ "uuid": mine["gpus"][0]["uuid"], "processes": [{ "pid": 42 }] }] });
    let done = app
        .mutate(
            &secret,
            "reportGpuWorkloads",
            "mutation($input: ReportGpuWorkloadsInput!) { reportGpuWorkloads(input: $input) { processes userErrors { field } } }",
            input,
        )
        .await;
    assert_eq!(done["processes"], 1);
    app.finish().await;
}
