//! Cluster providers carry out what the scheduler decided: hand nodes to a slice, take them
//! back. `simulated` does it in memory (demo, tests, benchmarks); the Kubernetes provider
//! comes with issue 6 behind the same trait.

use async_trait::async_trait;
use std::time::Duration;

/// What a provider needs to hand nodes to a slice (or take them back).
#[derive(Clone, Debug)]
pub struct NodeJob {
    pub gpr_id: i64,
    pub gpr_name: String,
    pub slice_name: String,
    pub cluster_name: String,
    pub node_names: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// Worth retrying later (API server unreachable, eviction blocked).
    #[error("{0}")]
    Transient(String),
    /// Will not work as asked (precheck failed, provider missing).
    #[error("{0}")]
    Permanent(String),
}

#[async_trait]
pub trait ClusterProvider: Send + Sync {
    /// Prechecks the nodes and makes them the slice's. Must be idempotent: a new leader
    /// re-runs a step that was in flight when the old one died.
    async fn provision(&self, job: &NodeJob) -> Result<(), ProviderError>;
    /// Takes the nodes back from the slice. Idempotent like `provision`.
    async fn release(&self, job: &NodeJob) -> Result<(), ProviderError>;
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
    async fn provision(&self, job: &NodeJob) -> Result<(), ProviderError> {
        tokio::time::sleep(self.delay).await;
        tracing::debug!(gpr = job.gpr_id, nodes = ?job.node_names, "simulated provisioning done");
        Ok(())
    }

    async fn release(&self, job: &NodeJob) -> Result<(), ProviderError> {
        tokio::time::sleep(self.delay).await;
        tracing::debug!(gpr = job.gpr_id, nodes = ?job.node_names, "simulated release done");
        Ok(())
    }
}

/// Stands in for a provider that is not built yet: every step fails, saying why.
pub struct UnavailableProvider(pub &'static str);

#[async_trait]
impl ClusterProvider for UnavailableProvider {
    async fn provision(&self, _job: &NodeJob) -> Result<(), ProviderError> {
        Err(ProviderError::Permanent(self.0.to_owned()))
    }

    async fn release(&self, _job: &NodeJob) -> Result<(), ProviderError> {
        Ok(())
    }
}
