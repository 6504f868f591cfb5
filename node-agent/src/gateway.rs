//! Talking to the EGS gateway: three GraphQL mutations over HTTP, `upsertNodes` (register the
//! node and its GPUs), `reportGpuSamples` (a batch of samples) and `reportGpuWorkloads` (the
//! processes and pods on each GPU), with the agent token. The
//! [`Gateway`] trait is what the reporting loop needs, so tests put a fake gateway behind it.
//!
//! The input types mirror the gateway's GraphQL inputs field for field (`NodeInput`,
//! `GpuInput`, `GpuSampleInput`, `GpuWorkloadInput`); the agent does not link the gateway's
//! crates, so they are declared again here. Fields the agent does not know are left out of
//! the JSON (not sent as `null`), so the gateway keeps what an admin set.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::future::Future;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// A request to the gateway gives up after this long.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

const UPSERT_NODES: &str =
    "mutation EgsAgentRegister($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { id } userErrors { field message code } } }";
const REPORT_WORKLOADS: &str = "mutation EgsAgentWorkloads($input: ReportGpuWorkloadsInput!) { reportGpuWorkloads(input: $input) { processes userErrors { field message code } } }";
const REPORT_SAMPLES: &str = "mutation EgsAgentReport($input: ReportGpuSamplesInput!) { reportGpuSamples(input: $input) { accepted duplicates userErrors { field message code } } }";

/// `GpuInput`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuInput {
    pub uuid: String,
    pub index: i32,
    pub model: String,
    pub memory_mib: i64,
    pub mig_enabled: bool,
}

/// `NodeInput`: the node as its agent registers it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeInput {
    pub name: String,
    /// Required by the gateway for a new node; left out when unknown (an existing node keeps its).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    pub gpu_shape: String,
    pub gpus_per_node: i32,
    pub gpu_memory_mib: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_version: Option<String>,
    /// Sent only when configured: left out, the gateway keeps the threshold an admin set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_threshold_watts: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature_threshold_celsius: Option<f64>,
    /// `UNHEALTHY` after a fatal GPU fault; absent otherwise (the gateway keeps what it has).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<&'static str>,
    pub gpus: Vec<GpuInput>,
}

/// `GpuSampleInput`: one sample of one GPU.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SampleInput {
    pub uuid: String,
    pub timestamp: DateTime<Utc>,
    pub util: f64,
    pub mem_util: f64,
    pub mem_used_mib: f64,
    pub temperature: f64,
    pub power: f64,
    pub sm_clock_mhz: f64,
    pub xid_errors: Vec<i32>,
    pub ecc_corrected: Option<i64>,
    pub ecc_uncorrected: Option<i64>,
}

/// `PodInput`: the pod a GPU process belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodInput {
    pub uid: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
}

/// `GpuProcessInput`: a process on a GPU.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuProcessInput {
    pub pid: i64,
    pub used_memory_mib: Option<f64>,
    pub pod: Option<PodInput>,
}

/// `GpuWorkloadInput`: everything running on one GPU now.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuWorkloadInput {
    pub uuid: String,
    pub processes: Vec<GpuProcessInput>,
}

/// A `userErrors` entry.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct UserError {
    #[serde(default)]
    pub field: Vec<String>,
    pub message: String,
    #[serde(default)]
    pub code: String,
}

/// What the gateway did with a batch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReportOutcome {
    /// Samples stored.
    pub accepted: u64,
    /// Samples it already had (same GPU and second): a resend after a lost answer.
    pub duplicates: u64,
}

/// Why a call to the gateway failed. [`GatewayError::reason`] doubles as the `reason` label of
/// `egs_agent_report_errors_total`.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error("the gateway is unreachable: {0}")]
    Unreachable(String),
    #[error("the gateway answered HTTP {status}: {message}")]
    Unavailable { status: u16, message: String },
    #[error("the gateway refused the agent token ({code}): {message}")]
    Refused { code: String, message: String },
    #[error("the gateway does not know this {0}")]
    NotFound(String),
    #[error("the gateway rejected the input: {}", summary(.0))]
    Rejected(Vec<UserError>),
    #[error("the gateway's answer makes no sense: {0}")]
    Invalid(String),
    #[error("cannot read the agent token from {path}: {source}")]
    Token { path: PathBuf, source: std::io::Error },
}

fn summary(errors: &[UserError]) -> String {
    let mut text = errors.iter().take(3).map(|e| format!("{}: {}", e.field.join("."), e.message)).collect::<Vec<_>>().join("; ");
    if errors.len() > 3 {
        text.push_str(&format!(" (and {} more)", errors.len() - 3));
    }
    text
}

impl GatewayError {
    /// A short label for metrics and logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Unreachable(_) => "unreachable",
            Self::Unavailable { .. } => "unavailable",
            Self::Refused { .. } => "refused",
            Self::NotFound(_) => "not_found",
            Self::Rejected(_) => "rejected",
            Self::Invalid(_) => "invalid_answer",
            Self::Token { .. } => "token",
        }
    }

    /// Whether the same call may succeed later without anyone changing anything.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Unreachable(_) | Self::Unavailable { .. } | Self::Invalid(_))
    }
}

/// What the reporting loop needs from the gateway.
pub trait Gateway: Send + Sync + 'static {
    /// `upsertNodes` for this node of `cluster_id`.
    fn register(&self, cluster_id: &str, node: &NodeInput) -> impl Future<Output = Result<(), GatewayError>> + Send;
    /// `reportGpuSamples` for node `node_name` of `cluster_id`.
    fn report(&self, cluster_id: &str, node_name: &str, samples: &[SampleInput]) -> impl Future<Output = Result<ReportOutcome, GatewayError>> + Send;
    /// `reportGpuWorkloads` for node `node_name` of `cluster_id`: the processes on every GPU.
    /// A gateway that does not take workloads (a test's) accepts and drops them.
    fn report_workloads(
        &self,
        cluster_id: &str,
        node_name: &str,
        gpus: &[GpuWorkloadInput],
    ) -> impl Future<Output = Result<(), GatewayError>> + Send {
        let _ = (cluster_id, node_name, gpus);
        async { Ok(()) }
    }
}

/// The gateway over HTTP.
pub struct HttpGateway {
    endpoint: String,
    client: reqwest::Client,
    token_file: PathBuf,
    /// The token as last read; read again when the gateway refuses it.
    token: Mutex<Option<String>>,
}

impl HttpGateway {
    /// A client for `<base>/graphql`, with the token read from `token_file`.
    pub fn new(base: &str, token_file: PathBuf) -> Result<Self, GatewayError> {
        let client = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("egs-node-agent/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| GatewayError::Unreachable(e.to_string()))?;
        let gateway = Self { endpoint: format!("{}/graphql", base.trim_end_matches('/')), client, token_file, token: Mutex::new(None) };
        gateway.token()?;
        Ok(gateway)
    }

    fn token(&self) -> Result<String, GatewayError> {
        let mut cached = self.token.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(token) = cached.as_ref() {
            return Ok(token.clone());
        }
        let token = std::fs::read_to_string(&self.token_file)
            .map_err(|source| GatewayError::Token { path: self.token_file.clone(), source })?
            .trim()
            .to_owned();
        if token.is_empty() {
            return Err(GatewayError::Token { path: self.token_file.clone(), source: std::io::Error::other("the file is empty") });
        }
        *cached = Some(token.clone());
        Ok(token)
    }

    /// Posts one operation; returns the payload under `data.<field>`.
    async fn call(&self, query: &str, field: &str, input: Value) -> Result<Value, GatewayError> {
        let token = self.token()?;
        let response = self
            .client
            .post(&self.endpoint)
            .header(reqwest::header::ACCEPT, "application/json")
            .bearer_auth(token)
            .json(&json!({ "query": query, "variables": { "input": input } }))
            .send()
            .await
            .map_err(|e| GatewayError::Unreachable(error_chain(&e)))?;
        let status = response.status();
        let body: Option<Value> = response.json().await.ok();
        let first_error = body.as_ref().and_then(|b| b.get("errors")).and_then(|e| e.get(0));
        let code = first_error.and_then(|e| e.pointer("/extensions/code")).and_then(Value::as_str).unwrap_or_default().to_owned();
        let message = first_error.and_then(|e| e.get("message")).and_then(Value::as_str).unwrap_or_default().to_owned();
        if matches!(code.as_str(), "UNAUTHENTICATED" | "FORBIDDEN") || status == reqwest::StatusCode::UNAUTHORIZED {
            // Maybe the Secret was rotated: read the file again next time.
            *self.token.lock().unwrap_or_else(|p| p.into_inner()) = None;
            return Err(GatewayError::Refused { code: if code.is_empty() { "UNAUTHENTICATED".into() } else { code }, message });
        }
        if status.is_server_error() || status == reqwest::StatusCode::TOO_MANY_REQUESTS || code == "RATE_LIMITED" || code == "INTERNAL" {
            return Err(GatewayError::Unavailable { status: status.as_u16(), message });
        }
        if code == "NOT_FOUND" {
            return Err(GatewayError::NotFound(message));
        }
        if code == "INVALID_INPUT" {
            return Err(GatewayError::Rejected(vec![UserError { field: Vec::new(), message, code }]));
        }
        let payload = body.as_ref().and_then(|b| b.pointer(&format!("/data/{field}"))).filter(|p| !p.is_null());
        let Some(payload) = payload else {
            return Err(GatewayError::Invalid(format!(
                "HTTP {status} without `{field}`{}",
                if message.is_empty() { String::new() } else { format!(": {message}") }
            )));
        };
        let errors: Vec<UserError> = serde_json::from_value(payload.get("userErrors").cloned().unwrap_or(Value::Null)).unwrap_or_default();
        if !errors.is_empty() {
            return Err(GatewayError::Rejected(errors));
        }
        Ok(payload.clone())
    }
}

/// An error with its causes, one line (reqwest's own message hides the interesting part).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl Gateway for HttpGateway {
    async fn register(&self, cluster_id: &str, node: &NodeInput) -> Result<(), GatewayError> {
        let input = json!({ "clusterId": cluster_id, "nodes": [node] });
        self.call(UPSERT_NODES, "upsertNodes", input).await.map(|_| ())
    }

    async fn report(&self, cluster_id: &str, node_name: &str, samples: &[SampleInput]) -> Result<ReportOutcome, GatewayError> {
        let input = json!({ "clusterId": cluster_id, "nodeName": node_name, "samples": samples });
        let payload = self.call(REPORT_SAMPLES, "reportGpuSamples", input).await?;
        let count = |name: &str| payload.get(name).and_then(Value::as_u64).ok_or_else(|| GatewayError::Invalid(format!("no `{name}` count")));
        Ok(ReportOutcome { accepted: count("accepted")?, duplicates: count("duplicates")? })
    }

    async fn report_workloads(&self, cluster_id: &str, node_name: &str, gpus: &[GpuWorkloadInput]) -> Result<(), GatewayError> {
        let input = json!({ "clusterId": cluster_id, "nodeName": node_name, "gpus": gpus });
        self.call(REPORT_WORKLOADS, "reportGpuWorkloads", input).await.map(|_| ())
    }
}
