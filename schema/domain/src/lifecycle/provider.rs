//! Cluster providers carry out what the scheduler decided: hand nodes to a slice, take them
//! back. `simulated` does it in memory (demo, tests, benchmarks); `kubernetes` (egs-api's
//! `kubernetes::provision`) talks to the cluster's API server. Both record their steps
//! through a [`StepLog`], which a new leader reads to resume an interrupted job.

use crate::ports::{ClusterProvider, NodeJob, ProviderError, StepLog};
use async_trait::async_trait;
use std::time::Duration;

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
