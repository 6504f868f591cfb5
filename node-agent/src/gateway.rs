//! Talking to the EGS gateway: three GraphQL mutations over HTTP, `upsertNodes` (register the
//! node and its GPUs), `reportGpuSamples` (a batch of samples) and `reportGpuWorkloads` (the
//! processes and pods on each GPU), with the agent token. The operations and their input types
//! come from [`crate::operations`], typed from the gateway's schema. The [`Gateway`] trait is
//! what the reporting loop needs, so tests put a fake gateway behind it.

use graphql_client::GraphQLQuery;
use serde::Deserialize;
use serde_json::Value;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// A request to the gateway gives up after this long.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

use crate::operations::{EgsAgentRegister, EgsAgentReport, EgsAgentWorkloads, egs_agent_register, egs_agent_report, egs_agent_workloads};
pub use crate::operations::{GpuInput, GpuProcessInput, GpuSampleInput as SampleInput, GpuWorkloadInput, Health, NodeInput, PodInput};

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
    /// How long to gather samples before the next report: zero (each as it is taken) while
    /// someone watches the node live, longer while nobody does.
    pub report_interval: Duration,
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

    /// Posts one operation; returns its answer once `data.<field>` is there without
    /// `userErrors`.
    async fn call<Q: GraphQLQuery>(&self, variables: Q::Variables, field: &str) -> Result<Q::ResponseData, GatewayError> {
        let token = self.token()?;
        let response = self
            .client
            .post(&self.endpoint)
            .header(reqwest::header::ACCEPT, "application/json")
            .bearer_auth(token)
            .json(&Q::build_query(variables))
            .send()
            .await
            .map_err(|e| GatewayError::Unreachable(error_chain(&e)))?;
        let status = response.status();
        let mut body: Option<Value> = response.json().await.ok();
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
        let data = body.as_mut().and_then(|b| b.get_mut("data")).map(Value::take).unwrap_or_default();
        serde_json::from_value(data).map_err(|e| GatewayError::Invalid(format!("`{field}` is not what the schema says: {e}")))
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
        let input = egs_agent_register::UpsertNodesInput { cluster_id: cluster_id.to_owned(), nodes: vec![node.clone()] };
        self.call::<EgsAgentRegister>(egs_agent_register::Variables { input }, "upsertNodes").await.map(|_| ())
    }

    async fn report(&self, cluster_id: &str, node_name: &str, samples: &[SampleInput]) -> Result<ReportOutcome, GatewayError> {
        let input = egs_agent_report::ReportGpuSamplesInput {
            cluster_id: Some(cluster_id.to_owned()),
            node_id: None,
            node_name: Some(node_name.to_owned()),
            samples: samples.to_vec(),
        };
        let answer = self.call::<EgsAgentReport>(egs_agent_report::Variables { input }, "reportGpuSamples").await?.report_gpu_samples;
        let count = |n: i64| u64::try_from(n).map_err(|_| GatewayError::Invalid(format!("a negative count: {n}")));
        Ok(ReportOutcome {
            accepted: count(answer.accepted)?,
            duplicates: count(answer.duplicates)?,
            report_interval: Duration::from_secs(count(answer.report_interval_seconds)?),
        })
    }

    async fn report_workloads(&self, cluster_id: &str, node_name: &str, gpus: &[GpuWorkloadInput]) -> Result<(), GatewayError> {
        let input = egs_agent_workloads::ReportGpuWorkloadsInput {
            cluster_id: Some(cluster_id.to_owned()),
            node_id: None,
            node_name: Some(node_name.to_owned()),
            gpus: gpus.to_vec(),
        };
        self.call::<EgsAgentWorkloads>(egs_agent_workloads::Variables { input }, "reportGpuWorkloads").await.map(|_| ())
    }
}
