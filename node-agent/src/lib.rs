//! `egs-node-agent`: one per GPU node. It registers the node and its GPUs with the EGS
//! gateway, samples the GPUs every interval (NVML, or simulated GPUs), maps GPU processes to
//! Kubernetes pods, reports batched samples to the gateway (buffering and retrying while the
//! gateway is away), and serves `/healthz` and dcgm-exporter-compatible `/metrics`.
//!
//! Three loops share one [`State`]: the [`sampler`] (source → buffer), the [`report`]er
//! (buffer → gateway) and the [`exporter`] (HTTP). [`run`] wires them from a [`Config`];
//! [`Agent`] lets tests swap the source, the gateway and the clock.

pub mod config;
pub mod exporter;
pub mod gateway;
pub mod kube;
pub mod operations;
pub mod pods;
pub mod report;
pub mod sampler;
pub mod source;

#[cfg(test)]
mod tests;

use chrono::{DateTime, Utc};
pub use config::Config;
use gateway::{Credential, Gateway, GatewayError, GpuInput, HttpGateway, NodeInput};
use report::{Buffer, Registration};
use source::{GpuSource, Inventory, Reading, SourceError};
use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// How long a shutdown waits for a last delivery of buffered samples.
const FINAL_FLUSH: Duration = Duration::from_secs(3);

/// Why the agent stopped (or could not start).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Config(String),
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error("the gateway refused the node's registration: {0}")]
    Registration(GatewayError),
    #[error("cannot set up the gateway client: {0}")]
    Gateway(GatewayError),
    #[error("cannot serve HTTP on {addr}: {source}")]
    Listen { addr: SocketAddr, source: std::io::Error },
    #[error("the GPU sampler failed: {0}")]
    Sampler(String),
}

/// Where sample timestamps come from.
pub trait Clock: Send + Sync + 'static {
    fn now(&self) -> DateTime<Utc>;
}

/// The system's wall clock (what the gateway compares timestamps with).
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// Wall time that follows tokio's clock from a starting point: with paused time in tests,
/// timestamps advance exactly as `tokio::time::advance` says.
pub struct TokioClock {
    wall: DateTime<Utc>,
    start: Instant,
}

impl TokioClock {
    pub fn starting_at(wall: DateTime<Utc>) -> Self {
        Self { wall, start: Instant::now() }
    }
}

impl Clock for TokioClock {
    fn now(&self) -> DateTime<Utc> {
        self.wall + self.start.elapsed()
    }
}

/// The latest readings, for `/metrics` and `/healthz`.
#[derive(Default)]
pub struct Snapshot {
    pub readings: Vec<Reading>,
    /// When they were taken.
    pub taken_at: Option<Instant>,
    /// The last XID code of each GPU since the agent started, by UUID.
    pub last_xid: HashMap<String, u32>,
}

/// What the sampler, the reporter and the HTTP face share.
pub struct State {
    pub node: String,
    /// For the `cluster` label.
    pub cluster_name: Option<String>,
    pub interval: Duration,
    pub metrics: exporter::Metrics,
    inventory: RwLock<Inventory>,
    snapshot: Mutex<Snapshot>,
    buffer: Mutex<Buffer>,
    /// Wakes the reporter when a batch arrives (or sampling is done).
    new_batch: Notify,
    /// A GPU failed: the node is to be registered `UNHEALTHY`.
    unhealthy: AtomicBool,
    /// `--once`: the one batch has been taken.
    sampling_done: AtomicBool,
    /// The processes on each GPU as last read (the sampler writes, the reporter sends it when
    /// it changes and every minute); `None` before the first reading.
    workloads: Mutex<Option<Vec<gateway::GpuWorkloadInput>>>,
    /// The pods of the last workload report as the gateway named them (by UID), for `/metrics`.
    named_pods: Mutex<Arc<HashMap<String, kube::PodMeta>>>,
    http_addr: OnceLock<SocketAddr>,
}

impl State {
    fn new(config: &Config, inventory: Inventory) -> Self {
        let metrics = exporter::Metrics::default();
        metrics.gpus.set(inventory.gpus.len() as i64);
        Self {
            node: config.node_name(),
            cluster_name: config.cluster_name.clone(),
            interval: config.interval,
            metrics,
            inventory: RwLock::new(inventory),
            snapshot: Mutex::new(Snapshot::default()),
            buffer: Mutex::new(Buffer::new(config.buffer_batches())),
            new_batch: Notify::new(),
            unhealthy: AtomicBool::new(false),
            sampling_done: AtomicBool::new(false),
            workloads: Mutex::new(None),
            named_pods: Mutex::default(),
            http_addr: OnceLock::new(),
        }
    }

    /// The pods the gateway named in its answer to the last workload report.
    pub fn named_pods(&self) -> Arc<HashMap<String, kube::PodMeta>> {
        self.named_pods.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn learn_pod_names(&self, pods: Vec<kube::PodMeta>) {
        let named = pods.into_iter().map(|p| (p.uid.clone(), p)).collect();
        *self.named_pods.lock().unwrap_or_else(|p| p.into_inner()) = Arc::new(named);
    }

    pub fn inventory(&self) -> Inventory {
        self.inventory.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn snapshot(&self) -> MutexGuard<'_, Snapshot> {
        self.snapshot.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn buffer(&self) -> MutexGuard<'_, Buffer> {
        self.buffer.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether a GPU failure made the agent report the node `UNHEALTHY`.
    pub fn is_unhealthy(&self) -> bool {
        self.unhealthy.load(Ordering::Relaxed)
    }

    /// The processes on each GPU as last read.
    pub fn workloads(&self) -> Option<Vec<gateway::GpuWorkloadInput>> {
        self.workloads.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn set_workloads(&self, workloads: Vec<gateway::GpuWorkloadInput>) {
        *self.workloads.lock().unwrap_or_else(|p| p.into_inner()) = Some(workloads);
    }

    /// Where `/healthz` and `/metrics` are served, once bound.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http_addr.get().copied()
    }

    fn record(&self, readings: Vec<Reading>) {
        let mut snapshot = self.snapshot();
        for r in &readings {
            if let Some(code) = r.xid_errors.last() {
                snapshot.last_xid.insert(r.uuid.clone(), *code);
            }
        }
        snapshot.readings = readings;
        snapshot.taken_at = Some(Instant::now());
    }
}

/// Runs the agent the config describes until `shutdown` completes (or, with `--once`, until
/// its batch is delivered or printed).
pub async fn run(config: Config, shutdown: impl Future<Output = ()> + Send) -> Result<(), Error> {
    Agent::new(config)?.run(shutdown).await
}

/// An agent ready to run, with its source, clock and state.
pub struct Agent {
    config: Config,
    source: Box<dyn GpuSource>,
    clock: Arc<dyn Clock>,
    state: Arc<State>,
}

impl Agent {
    /// Opens the source the config asks for (NVML or simulated).
    pub fn new(config: Config) -> Result<Self, Error> {
        let source = source::open(&config)?;
        Ok(Self::with_source(config, source))
    }

    /// An agent reading `source` (tests keep a handle to inject faults).
    pub fn with_source(config: Config, source: Box<dyn GpuSource>) -> Self {
        let state = Arc::new(State::new(&config, source.inventory()));
        Self { config, source, clock: Arc::new(SystemClock), state }
    }

    /// Stamps samples with `clock` instead of the system's.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The state the loops share: metrics, the latest readings, the buffer.
    pub fn state(&self) -> Arc<State> {
        self.state.clone()
    }

    /// Runs against the gateway at `--gateway` (or prints, with `--print`).
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send) -> Result<(), Error> {
        let gateway = if self.config.print {
            None
        } else {
            let credential = match (&self.config.token_file, &self.config.identity_token_file) {
                (Some(file), None) => Credential::TokenFile(file.clone()),
                (None, Some(file)) => {
                    let cluster_id = self.config.cluster_id.clone().ok_or_else(|| {
                        Error::Config("--identity-token-file signs in to cluster --cluster-id (EGS_AGENT_CLUSTER_ID), which is missing".into())
                    })?;
                    Credential::ServiceAccount { token_file: file.clone(), cluster_id }
                }
                (Some(_), Some(_)) => return Err(Error::Config("give --token-file or --identity-token-file, not both".into())),
                (None, None) => {
                    return Err(Error::Config(
                        "--identity-token-file (EGS_AGENT_IDENTITY_TOKEN_FILE, a projected ServiceAccount token) or --token-file (EGS_AGENT_TOKEN_FILE, an AGENT token) is required to report to the gateway; use --print for a dry run".into(),
                    ));
                }
            };
            Some(HttpGateway::new(&self.config.gateway, credential).map_err(Error::Gateway)?)
        };
        self.run_with(gateway, shutdown).await
    }

    /// Runs against `gateway` (`None`: print or sample only).
    pub async fn run_with<G: Gateway>(self, gateway: Option<G>, shutdown: impl Future<Output = ()> + Send) -> Result<(), Error> {
        let Agent { config, source, clock, state } = self;
        let inventory = state.inventory();
        let node = node_input(&config, &inventory).await?;
        let registration = match (&gateway, &config.cluster_id) {
            (Some(_), None) => {
                return Err(Error::Config(
                    "--cluster-id (EGS_AGENT_CLUSTER_ID) is required to report to the gateway; use --print for a dry run".into(),
                ));
            }
            (Some(_), Some(cluster_id)) => Some(Registration { cluster_id: cluster_id.clone(), node: node.clone() }),
            (None, _) => None,
        };
        if registration.is_some() && inventory.gpus.is_empty() {
            tracing::warn!("this node has no GPUs: nothing to register or report; serving /healthz and /metrics only");
        }
        let http = if config.no_http { None } else { Some(serve(&config, state.clone()).await?) };
        let pods = pod_mapper(&config);
        let sampler = sampler::Sampler {
            interval: config.interval,
            once: config.once,
            print: config.print,
            cluster_id: config.cluster_id.clone(),
            node,
            clock,
            pods,
        };
        let seed = config.seed.unwrap_or_else(rand::random);
        let reporter = async {
            match (&gateway, &registration) {
                (Some(gateway), Some(registration)) if !inventory.gpus.is_empty() => {
                    report::run(gateway, &state, registration, config.once, seed).await
                }
                _ => Ok(()),
            }
        };
        let work = async { tokio::try_join!(sampler.run(source, &state), reporter).map(|_| ()) };
        let result = tokio::select! {
            result = work => result,
            () = shutdown => {
                tracing::info!("shutting down");
                if let (Some(gateway), Some(registration)) = (&gateway, &registration) {
                    flush(gateway, &state, registration).await;
                }
                Ok(())
            }
        };
        if let Some(http) = http {
            http.abort();
        }
        result
    }
}

/// One last delivery of what is buffered, briefly, when the gateway knows the node.
async fn flush<G: Gateway>(gateway: &G, state: &State, registration: &Registration) {
    if state.metrics.registered.get() != 1 {
        return;
    }
    let pending = state.buffer().pending(report::MAX_SAMPLES_PER_REPORT);
    let Some((through, samples)) = pending else { return };
    match tokio::time::timeout(FINAL_FLUSH, gateway.report(&registration.cluster_id, &registration.node.name, &samples)).await {
        Ok(Ok(outcome)) => {
            state.buffer().ack(through);
            state.metrics.samples_sent.inc_by(outcome.accepted);
        }
        Ok(Err(error)) => tracing::warn!(error = %error, samples = samples.len(), "buffered samples were not delivered before shutdown"),
        Err(_) => tracing::warn!(samples = samples.len(), "buffered samples were not delivered before shutdown (timeout)"),
    }
}

/// Binds `--listen` and serves `/healthz` and `/metrics` in the background.
async fn serve(config: &Config, state: Arc<State>) -> Result<tokio::task::JoinHandle<()>, Error> {
    let addr = config.listen;
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|source| Error::Listen { addr, source })?;
    let bound = listener.local_addr().unwrap_or(addr);
    let _ = state.http_addr.set(bound);
    tracing::info!(addr = %bound, "serving /healthz and /metrics");
    let router = exporter::router(state);
    Ok(tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, router).await {
            tracing::error!(error = %error, "the HTTP server stopped");
        }
    }))
}

/// A pod mapper reading `--proc-root`; with `--kubelet` it names pods from the kubelet's list,
/// otherwise with the names the gateway gives back.
fn pod_mapper(config: &Config) -> Option<pods::PodMapper> {
    let kubelet = config.kubelet.as_ref().and_then(|kubelet| {
        kube::KubeClient::kubelet(kubelet, &config.service_account_dir, config.kubelet_insecure_tls)
            .map_err(|error| tracing::warn!(error = %error, "cannot reach the kubelet: pods are named by the gateway only"))
            .ok()
    });
    Some(pods::PodMapper::new(config.proc_root.clone(), kubelet))
}

/// The node as the agent registers it.
async fn node_input(config: &Config, inventory: &Inventory) -> Result<NodeInput, Error> {
    let instance_type = instance_type(config).await?;
    Ok(NodeInput {
        name: config.node_name(),
        instance_type,
        gpu_shape: inventory.shape().unwrap_or_else(|| config.shape.clone()),
        gpus_per_node: inventory.gpus.len() as i64,
        gpu_memory_mib: inventory.gpus.iter().map(|g| g.memory_mib).min().unwrap_or(0) as i64,
        driver_version: inventory.driver_version.clone(),
        cuda_version: inventory.cuda_version.clone(),
        power_threshold_watts: config.power_threshold_watts,
        temperature_threshold_celsius: config.temperature_threshold_celsius,
        health: None,
        // Left out: whether the node has RDMA is an admin's to say (upsertNodes), not guessed here.
        rdma: None,
        gpus: Some(
            inventory
                .gpus
                .iter()
                .map(|g| GpuInput {
                    uuid: g.uuid.clone(),
                    index: i64::from(g.index),
                    model: g.model.clone(),
                    memory_mib: g.memory_mib as i64,
                    mig_enabled: g.mig_enabled,
                })
                .collect(),
        ),
    })
}

/// `--instance-type`, else the node's label, else (simulated) a stand-in; `None` when unknown:
/// the gateway then keeps what it has (and refuses a node it does not know yet).
async fn instance_type(config: &Config) -> Result<Option<String>, Error> {
    if let Some(given) = config.instance_type.clone().filter(|t| !t.trim().is_empty()) {
        return Ok(Some(given));
    }
    if let Some(api) = &config.kube_api {
        let node = config.node_name();
        match kube::KubeClient::api_server(api, &config.service_account_dir) {
            Ok(client) => match client.instance_type(&node).await {
                Ok(Some(found)) => return Ok(Some(found)),
                Ok(None) => tracing::warn!(node = %node, "the node has no instance-type label"),
                Err(error) => tracing::warn!(node = %node, error = %error, "cannot read the node's instance type"),
            },
            Err(error) => tracing::warn!(error = %error, "cannot reach the Kubernetes API server"),
        }
    }
    if config.simulate.is_some() {
        return Ok(Some(simulated_instance_type(&config.shape).into()));
    }
    if !config.print {
        tracing::warn!(
            "the node's instance type is unknown (pass --instance-type, or --kube-api to read its label): the gateway keeps the one it has, and refuses a node it does not know yet"
        );
    }
    Ok(None)
}

/// A cloud instance type typical of a shape, for simulated nodes.
fn simulated_instance_type(shape: &str) -> &'static str {
    let upper = shape.to_ascii_uppercase();
    if upper.contains("B200") {
        "p6-b200.48xlarge"
    } else if upper.contains("H200") {
        "p5e.48xlarge"
    } else if upper.contains("H100") {
        "p5.48xlarge"
    } else if upper.contains("A100") {
        "p4de.24xlarge"
    } else if upper.contains("L40S") {
        "g6e.48xlarge"
    } else {
        "simulated"
    }
}
