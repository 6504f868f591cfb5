//! Cluster providers carry out what the scheduler decided: hand nodes to a slice, take them
//! back. `simulated` does it in memory (demo, tests, benchmarks); `kubernetes` (see
//! [`crate::kubernetes::provision`]) talks to the cluster's API server. Both record their steps
//! through a [`StepLog`], which a new leader reads to resume an interrupted job.

use async_trait::async_trait;
use std::time::Duration;

/// What a provider needs to hand nodes to a slice (or take them back).
#[derive(Clone, Debug)]
pub struct NodeJob {
    pub gpr_id: i64,
    pub gpr_name: String,
    pub slice_name: String,
    pub cluster_id: i64,
    pub cluster_name: String,
    pub node_names: Vec<String>,
    /// GPUs each node should have allocatable, by node name (from the inventory).
    pub expected_gpus: std::collections::BTreeMap<String, i32>,
    /// Nodes whose agent is silent or reports a fault (the precheck refuses them).
    pub unhealthy_nodes: Vec<String>,
    /// The slice's namespaces on this cluster.
    pub namespaces: Vec<String>,
    /// `(namespace, name)` of the `GPUProvisioningRequest` the GPR came from, for its Events.
    pub resource: Option<(String, String)>,
    /// When the window ends (for messages); `None` before provisioning.
    pub exit_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Where a provider records its steps (visible as `Gpr.provisioningSteps`).
#[async_trait]
pub trait StepLog: Send + Sync {
    /// Whether `step` finished in an earlier attempt of this job (a resumed job skips it).
    async fn finished_before(&self, step: &str) -> bool;
    async fn started(&self, step: &str);
    async fn finished(&self, step: &str, message: &str);
    async fn failed(&self, step: &str, message: &str);
}

/// For best-effort work that is not one of a GPR's jobs: nothing is recorded or skipped.
pub struct Unrecorded;

#[async_trait]
impl StepLog for Unrecorded {
    async fn finished_before(&self, _step: &str) -> bool {
        false
    }
    async fn started(&self, _step: &str) {}
    async fn finished(&self, _step: &str, _message: &str) {}
    async fn failed(&self, _step: &str, _message: &str) {}
}

/// Runs `step` unless it finished before, recording how it went.
pub async fn run_step<F>(log: &dyn StepLog, step: &str, body: F) -> Result<(), ProviderError>
where
    F: std::future::Future<Output = Result<String, ProviderError>>,
{
    if log.finished_before(step).await {
        return Ok(());
    }
    log.started(step).await;
    match body.await {
        Ok(message) => {
            log.finished(step, &message).await;
            Ok(())
        }
        Err(error) => {
            log.failed(step, &error.to_string()).await;
            Err(error)
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// Worth retrying later (API server unreachable, eviction blocked).
    #[error("{}", crate::redaction::scrub_credentials(.0))]
    Transient(String),
    /// Will not work as asked (precheck failed, provider missing).
    #[error("{}", crate::redaction::scrub_credentials(.0))]
    Permanent(String),
}

#[async_trait]
pub trait ClusterProvider: Send + Sync {
    /// Prechecks the nodes and makes them the slice's. Must be idempotent: a new leader
    /// re-runs a step that was in flight when the old one died.
    async fn provision(&self, job: &NodeJob, steps: &dyn StepLog) -> Result<(), ProviderError>;
    /// Takes the nodes back from the slice. Idempotent like `provision`.
    async fn release(&self, job: &NodeJob, steps: &dyn StepLog) -> Result<(), ProviderError>;
}

/// Nodes that exist only in the database: each step takes `delay` and succeeds.
pub struct SimulatedProvider {
    delay: Duration,
}

impl SimulatedProvider {
    pub fn new(delay: Duration) -> Self {
        Self { delay }
    }
}

#[async_trait]
impl ClusterProvider for SimulatedProvider {
    async fn provision(&self, job: &NodeJob, steps: &dyn StepLog) -> Result<(), ProviderError> {
        run_step(steps, "HAND_OVER", async {
            tokio::time::sleep(self.delay).await;
            Ok(format!("simulated: {} handed to slice `{}`", job.node_names.join(", "), job.slice_name))
        })
        .await
    }

    async fn release(&self, job: &NodeJob, steps: &dyn StepLog) -> Result<(), ProviderError> {
        run_step(steps, "TAKE_BACK", async {
            tokio::time::sleep(self.delay).await;
            Ok(format!("simulated: {} back in the pool", job.node_names.join(", ")))
        })
        .await
    }
}

/// Stands in for a provider this replica does not have: provisioning fails, saying why;
/// release has nothing to undo.
pub struct Unavailable(pub &'static str);

#[async_trait]
impl ClusterProvider for Unavailable {
    async fn provision(&self, _job: &NodeJob, _steps: &dyn StepLog) -> Result<(), ProviderError> {
        Err(ProviderError::Permanent(self.0.to_owned()))
    }

    async fn release(&self, _job: &NodeJob, _steps: &dyn StepLog) -> Result<(), ProviderError> {
        Ok(())
    }
}
