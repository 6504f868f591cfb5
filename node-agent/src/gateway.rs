//! Talking to the EGS gateway: GraphQL mutations over HTTP, `upsertNodes` (register the
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

use crate::kube::PodMeta;
use crate::operations::{
    EgsAgentRegister, EgsAgentReport, EgsAgentSignIn, EgsAgentWorkloads, egs_agent_register, egs_agent_report, egs_agent_sign_in, egs_agent_workloads,
};
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
    /// `reportGpuWorkloads` for node `node_name` of `cluster_id`: the processes on every GPU;
    /// answers the reported pods as the cluster names them. A gateway that does not take
    /// workloads (a test's) accepts and drops them.
    fn report_workloads(
        &self,
        cluster_id: &str,
        node_name: &str,
        gpus: &[GpuWorkloadInput],
    ) -> impl Future<Output = Result<Vec<PodMeta>, GatewayError>> + Send {
        let _ = (cluster_id, node_name, gpus);
        async { Ok(Vec::new()) }
    }
}

/// How the agent proves who it is to the gateway.
#[derive(Clone, Debug)]
pub enum Credential {
    /// An AGENT token in a file (a mounted Secret), read again when the gateway refuses it.
    TokenFile(PathBuf),
    /// The pod's projected ServiceAccount token (audience `egs`), traded with `signInAgent`
    /// for an hour's token of this node, and traded again before that hour is out. The kubelet
    /// rotates the file; it is read at each sign-in.
    ServiceAccount { token_file: PathBuf, cluster_id: String },
}

impl Credential {
    /// The file the credential is read from.
    fn file(&self) -> &std::path::Path {
        match self {
            Self::TokenFile(file) | Self::ServiceAccount { token_file: file, .. } => file,
        }
    }
}

/// Sign in again once this share of the node token's life has passed.
const RENEW_AT: f64 = 0.8;

/// The token the agent sends, and when to get a new one (`None`: when refused).
#[derive(Clone)]
struct Held {
    token: String,
    renew_at: Option<std::time::Instant>,
}

/// The gateway over HTTP.
pub struct HttpGateway {
    endpoint: String,
    client: reqwest::Client,
    credential: Credential,
    /// The token as last read or signed in for; again when the gateway refuses it.
    token: Mutex<Option<Held>>,
    /// One sign-in at a time (the loops share the gateway).
    signing_in: tokio::sync::Mutex<()>,
}

impl HttpGateway {
    /// A client for `<base>/graphql` that proves itself with `credential` (a token file is
    /// read now, so a missing one fails at start; a sign-in waits for the first call).
    pub fn new(base: &str, credential: Credential) -> Result<Self, GatewayError> {
        let client = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("egs-node-agent/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| GatewayError::Unreachable(e.to_string()))?;
        let gateway = Self {
            endpoint: format!("{}/graphql", base.trim_end_matches('/')),
            client,
            credential,
            token: Mutex::new(None),
            signing_in: tokio::sync::Mutex::new(()),
        };
        read_token(gateway.credential.file())?;
        Ok(gateway)
    }

    fn held(&self) -> Option<Held> {
        let held = self.token.lock().unwrap_or_else(|p| p.into_inner()).clone()?;
        held.renew_at.is_none_or(|at| std::time::Instant::now() < at).then_some(held)
    }

    fn forget_token(&self) {
        *self.token.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    async fn token(&self) -> Result<String, GatewayError> {
        if let Some(held) = self.held() {
            return Ok(held.token);
        }
        let held = match &self.credential {
            Credential::TokenFile(path) => Held { token: read_token(path)?, renew_at: None },
            Credential::ServiceAccount { token_file, cluster_id } => {
                let _one = self.signing_in.lock().await;
                // Another call may have signed in while this one waited.
                if let Some(held) = self.held() {
                    return Ok(held.token);
                }
                self.sign_in(token_file, cluster_id).await?
            }
        };
        *self.token.lock().unwrap_or_else(|p| p.into_inner()) = Some(held.clone());
        Ok(held.token)
    }

    /// `signInAgent` with the projected token: no bearer token, the gateway asks the cluster.
    async fn sign_in(&self, token_file: &std::path::Path, cluster_id: &str) -> Result<Held, GatewayError> {
        let input = egs_agent_sign_in::SignInAgentInput { cluster_id: cluster_id.to_owned(), service_account_token: read_token(token_file)? };
        let answer = self.post::<EgsAgentSignIn>(None, egs_agent_sign_in::Variables { input }, "signInAgent").await?.sign_in_agent;
        let token = answer.token.filter(|t| !t.is_empty()).ok_or_else(|| GatewayError::Invalid("`signInAgent` gave no token".into()))?;
        let expires_at = answer.expires_at.ok_or_else(|| GatewayError::Invalid("`signInAgent` gave no expiry".into()))?;
        let life = (expires_at - chrono::Utc::now()).to_std().unwrap_or_default();
        tracing::info!(node = answer.node_name.as_deref().unwrap_or_default(), expires_at = %expires_at, "signed in with the pod's ServiceAccount token");
        Ok(Held { token, renew_at: Some(std::time::Instant::now() + life.mul_f64(RENEW_AT)) })
    }

    /// Posts one operation; returns its answer once `data.<field>` is there without
    /// `userErrors`.
    async fn call<Q: GraphQLQuery>(&self, variables: Q::Variables, field: &str) -> Result<Q::ResponseData, GatewayError> {
        let token = self.token().await?;
        let answer = self.post::<Q>(Some(&token), variables, field).await;
        if matches!(answer, Err(GatewayError::Refused { .. })) {
            // Maybe the Secret was rotated or the node token lapsed: read or sign in again.
            self.forget_token();
        }
        answer
    }

    /// Posts one operation with `token` (none for `signInAgent`).
    async fn post<Q: GraphQLQuery>(&self, token: Option<&str>, variables: Q::Variables, field: &str) -> Result<Q::ResponseData, GatewayError> {
        let mut request = self.client.post(&self.endpoint).header(reqwest::header::ACCEPT, "application/json");
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.json(&Q::build_query(variables)).send().await.map_err(|e| GatewayError::Unreachable(error_chain(&e)))?;
        let status = response.status();
        let mut body: Option<Value> = response.json().await.ok();
        let first_error = body.as_ref().and_then(|b| b.get("errors")).and_then(|e| e.get(0));
        let code = first_error.and_then(|e| e.pointer("/extensions/code")).and_then(Value::as_str).unwrap_or_default().to_owned();
        let message = first_error.and_then(|e| e.get("message")).and_then(Value::as_str).unwrap_or_default().to_owned();
        if matches!(code.as_str(), "UNAUTHENTICATED" | "FORBIDDEN") || status == reqwest::StatusCode::UNAUTHORIZED {
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
        // A cluster that could not review a sign-in may next time.
        if let Some(unavailable) = errors.iter().find(|e| e.code == "SERVICE_UNAVAILABLE") {
            return Err(GatewayError::Unavailable { status: status.as_u16(), message: unavailable.message.clone() });
        }
        if !errors.is_empty() {
            return Err(GatewayError::Rejected(errors));
        }
        let data = body.as_mut().and_then(|b| b.get_mut("data")).map(Value::take).unwrap_or_default();
        serde_json::from_value(data).map_err(|e| GatewayError::Invalid(format!("`{field}` is not what the schema says: {e}")))
    }
}

/// A token from `path`, trimmed; an empty file is an error.
fn read_token(path: &std::path::Path) -> Result<String, GatewayError> {
    let token = std::fs::read_to_string(path).map_err(|source| GatewayError::Token { path: path.to_owned(), source })?.trim().to_owned();
    if token.is_empty() {
        return Err(GatewayError::Token { path: path.to_owned(), source: std::io::Error::other("the file is empty") });
    }
    Ok(token)
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

    async fn report_workloads(&self, cluster_id: &str, node_name: &str, gpus: &[GpuWorkloadInput]) -> Result<Vec<PodMeta>, GatewayError> {
        let input = egs_agent_workloads::ReportGpuWorkloadsInput {
            cluster_id: Some(cluster_id.to_owned()),
            node_id: None,
            node_name: Some(node_name.to_owned()),
            gpus: gpus.to_vec(),
        };
        let answer = self.call::<EgsAgentWorkloads>(egs_agent_workloads::Variables { input }, "reportGpuWorkloads").await?;
        Ok(answer
            .report_gpu_workloads
            .named_pods
            .into_iter()
            .map(|pod| PodMeta {
                uid: pod.uid,
                namespace: pod.namespace,
                name: pod.name,
                containers: pod.containers.into_iter().map(|c| (c.id, c.name)).collect(),
            })
            .collect())
    }
}
