//! Background jobs: provisioning and release through the cluster's provider, one per GPR at a
//! time on this replica, retried by the next tick after a transient failure.

use super::*;
use crate::error::Result;
use crate::events::record_event;
use crate::ports::{ClusterProvider, NodeJob, ProviderError};
use chrono::{Duration, Utc};
use egs_entities::{GprEventKind, GprPhase, Health, ReleaseReason, StepOperation, cluster, gpr, gpr_node, node, slice, slice_namespace};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DatabaseTransaction, EntityTrait, QueryFilter, Set};
use std::sync::Arc;

impl Lifecycle {
    /// Starts the provider step for a GPR mid-lifecycle, unless one is already running here.
    pub(super) fn spawn_job(self: Arc<Self>, epoch: i64, g: gpr::Model) {
        let fresh = self
            .in_flight
            .lock()
            .map(|mut jobs| match jobs.entry(g.id) {
                std::collections::hash_map::Entry::Occupied(_) => false,
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(None);
                    true
                }
            })
            .unwrap_or(false);
        if !fresh {
            return;
        }
        let id = g.id;
        let this = self.clone();
        let task = self.jobs.spawn(async move {
            let this = this;
            let result = match g.phase {
                GprPhase::Provisioning => this.provision(epoch, &g).await,
                _ => this.release(epoch, &g).await,
            };
            if let Err(error) = result {
                tracing::warn!(gpr = g.id, error = %format!("{error:?}"), "lifecycle job failed; the next tick retries");
            }
            if let Ok(mut jobs) = this.in_flight.lock() {
                jobs.remove(&g.id);
            }
            this.handle.wake();
        });
        // The job may have finished already (and removed its entry): then there is nothing to keep.
        if let Ok(mut jobs) = self.in_flight.lock()
            && let Some(slot) = jobs.get_mut(&id)
        {
            *slot = Some(task.abort_handle());
        }
    }

    /// Stops the jobs running here (on the way out): each is resumable from its recorded steps.
    pub(super) fn abandon_jobs(&self) {
        if let Ok(mut jobs) = self.in_flight.lock() {
            for (_, task) in jobs.drain() {
                if let Some(task) = task {
                    task.abort();
                }
            }
        }
    }

    /// What the provider needs to step `g`, read on `db`.
    pub(super) async fn job_for(&self, db: &sea_orm::DatabaseConnection, g: &gpr::Model) -> Result<(NodeJob, Arc<dyn ClusterProvider>)> {
        let links = gpr_node::Entity::find().filter(gpr_node::Column::GprId.eq(g.id)).all(db).await?;
        let node_ids: Vec<i64> = links.iter().map(|l| l.node_id).collect();
        let nodes = node::Entity::find().filter(node::Column::Id.is_in(node_ids)).all(db).await?;
        let cluster = match g.assigned_cluster_id {
            Some(id) => cluster::Entity::find_by_id(id).one(db).await?,
            None => None,
        };
        let slice = slice::Entity::find_by_id(g.slice_id).one(db).await?;
        let provider = match cluster.as_ref().map(|c| c.provider) {
            Some(egs_entities::ClusterProvider::Kubernetes) => match &self.providers.kubernetes {
                Some(provider) => provider.clone(),
                None => Arc::new(provider::Unavailable("this replica was started without the Kubernetes provider")),
            },
            _ => self.providers.simulated.clone(),
        };
        let namespaces = match &cluster {
            Some(c) => slice_namespace::Entity::find()
                .filter(slice_namespace::Column::SliceId.eq(g.slice_id))
                .filter(slice_namespace::Column::ClusterId.eq(c.id))
                .all(db)
                .await?
                .into_iter()
                .map(|n| n.name)
                .collect(),
            None => Vec::new(),
        };
        // The resource lives in the cluster it came from.
        let resource = cluster.as_ref().and_then(|c| g.source_resource_in(&c.name)).map(|(ns, name)| (ns.to_owned(), name.to_owned()));
        let job = NodeJob {
            gpr_id: g.id,
            gpr_name: g.name.clone(),
            slice_name: slice.map(|s| s.name).unwrap_or_default(),
            cluster_id: cluster.as_ref().map_or(0, |c| c.id),
            cluster_name: cluster.map(|c| c.name).unwrap_or_default(),
            expected_gpus: nodes.iter().map(|n| (n.name.clone(), n.gpus_per_node)).collect(),
            unhealthy_nodes: nodes.iter().filter(|n| matches!(n.health, Health::Unhealthy | Health::Stale)).map(|n| n.name.clone()).collect(),
            node_names: nodes.into_iter().map(|n| n.name).collect(),
            namespaces,
            resource,
            exit_at: g.exit_at,
        };
        Ok((job, provider))
    }

    /// Waits until no releasing GPR (a preemption victim) still holds one of `g`'s nodes.
    pub(super) async fn wait_for_nodes(&self, g: &gpr::Model) -> Result<()> {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(state::RELEASE_ALLOWANCE_SECS as u64);
        loop {
            let mine: Vec<i64> =
                gpr_node::Entity::find().filter(gpr_node::Column::GprId.eq(g.id)).all(&self.db).await?.iter().map(|l| l.node_id).collect();
            let others: Vec<i64> = gpr_node::Entity::find()
                .filter(gpr_node::Column::NodeId.is_in(mine))
                .filter(gpr_node::Column::GprId.ne(g.id))
                .all(&self.db)
                .await?
                .iter()
                .map(|l| l.gpr_id)
                .collect();
            let releasing = !others.is_empty()
                && gpr::Entity::find()
                    .filter(gpr::Column::Id.is_in(others))
                    .filter(gpr::Column::Phase.eq(GprPhase::Releasing))
                    .one(&self.db)
                    .await?
                    .is_some();
            if !releasing || tokio::time::Instant::now() > deadline {
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }

    pub(super) async fn provision(&self, epoch: i64, g: &gpr::Model) -> Result<()> {
        self.wait_for_nodes(g).await?;
        let (job, provider) = self.job_for(&self.db, g).await?;
        let log = steps::DbStepLog::new(self.db.clone(), g.id, StepOperation::Provision, true);
        let outcome = provider.provision(&job, &log).await;
        let now = self.now();
        let txn = self.fenced_on(&self.db, epoch).await?;
        let Some(current) = gpr::Entity::find_by_id(g.id).one(&txn).await? else { return Ok(()) };
        if current.phase != GprPhase::Provisioning {
            return Ok(());
        }
        match outcome {
            Ok(()) => {
                // The window ends as planned at admission at the latest: a provisioning that
                // overran its allowance shortens the window rather than break promises.
                let planning = &self.handle.planning;
                let mut exit = now + Duration::seconds(current.duration_secs);
                if let Some(admitted) = current.holding_since {
                    exit = exit.min(admitted + Duration::seconds(planning.latest_window_end(0, current.duration_secs)));
                }
                let changes = gpr::ActiveModel {
                    phase: Set(GprPhase::Provisioned),
                    provisioned_at: Set(Some(now)),
                    exit_at: Set(Some(exit)),
                    holding_since: Set(None),
                    holds_until: Set(Some(exit + Duration::seconds(planning.release_allowance))),
                    milestones_done: Set(0),
                    version: Set(current.version + 1),
                    updated_at: Set(Utc::now()),
                    ..Default::default()
                };
                gpr::Entity::update_many()
                    .set(changes)
                    .filter(gpr::Column::Id.eq(g.id))
                    .filter(gpr::Column::Version.eq(current.version))
                    .exec(&txn)
                    .await?;
                record_event(&txn, &current, GprEventKind::PrecheckPassed, format!("nodes ready: {}", job.node_names.join(", ")), ACTOR).await?;
                record_event(&txn, &current, GprEventKind::Provisioned, format!("the nodes are the slice's until {}", exit.to_rfc3339()), ACTOR)
                    .await?;
            }
            Err(ProviderError::Transient(message)) => {
                // Left in PROVISIONING: the next tick tries again.
                tracing::warn!(gpr = g.id, %message, "provisioning will be retried");
                // Not while holding the lease row (the fenced transaction locks it).
                drop(txn);
                tokio::time::sleep(RETRY_PAUSE).await;
                return Ok(());
            }
            Err(ProviderError::Permanent(message)) => {
                record_event(&txn, &current, GprEventKind::PrecheckFailed, message.clone(), ACTOR).await?;
                self.give_back(&txn, &current, current.requeue_on_failure, &format!("provisioning failed: {message}")).await?;
            }
        }
        self.commit(txn).await?;
        Ok(())
    }

    pub(super) async fn release(&self, epoch: i64, g: &gpr::Model) -> Result<()> {
        let (job, provider) = self.job_for(&self.db, g).await?;
        let log = steps::DbStepLog::new(self.db.clone(), g.id, StepOperation::Release, true);
        if let Err(error) = provider.release(&job, &log).await {
            tracing::warn!(gpr = g.id, error = %error, "release will be retried");
            tokio::time::sleep(RETRY_PAUSE).await;
            return Ok(());
        }
        let txn = self.fenced_on(&self.db, epoch).await?;
        let Some(current) = gpr::Entity::find_by_id(g.id).one(&txn).await? else { return Ok(()) };
        if current.phase != GprPhase::Releasing {
            return Ok(());
        }
        let requeue = current.release_reason == Some(ReleaseReason::Evicted)
            || current.release_reason == Some(ReleaseReason::Preempted)
                && slice::Entity::find_by_id(current.slice_id).one(&txn).await?.is_some_and(|s| s.policy.requeue_on_eviction);
        self.give_back(&txn, &current, requeue, "").await?;
        self.commit(txn).await?;
        Ok(())
    }

    /// Returns a GPR's nodes to the pool and ends it: COMPLETED (after a release), FAILED, or
    /// QUEUED again when it is to be requeued.
    pub(super) async fn give_back(&self, txn: &DatabaseTransaction, g: &gpr::Model, requeue: bool, failure: &str) -> Result<()> {
        let now = self.now();
        let links = gpr_node::Entity::find().filter(gpr_node::Column::GprId.eq(g.id)).all(txn).await?;
        let node_ids: Vec<i64> = links.iter().map(|l| l.node_id).collect();
        node::Entity::update_many()
            .col_expr(node::Column::State, crate::inventory::maintenance::freed_state())
            .col_expr(node::Column::AllocatedGprId, Expr::value(Option::<i64>::None))
            .filter(node::Column::Id.is_in(node_ids))
            .filter(node::Column::AllocatedGprId.eq(g.id))
            .exec(txn)
            .await?;
        let mut changes = gpr::ActiveModel {
            holding_since: Set(None),
            holds_until: Set(None),
            version: Set(g.version + 1),
            updated_at: Set(Utc::now()),
            ..Default::default()
        };
        let (kind, message) = if requeue {
            gpr_node::Entity::delete_many().filter(gpr_node::Column::GprId.eq(g.id)).exec(txn).await?;
            changes.phase = Set(GprPhase::Queued);
            changes.reason = Set(Some(match (failure.is_empty(), g.release_reason) {
                (false, _) => format!("requeued: {failure}"),
                (true, Some(ReleaseReason::Evicted)) => g.reason.clone().unwrap_or_else(|| "evicted by an admin".into()),
                (true, _) => "requeued after preemption".into(),
            }));
            changes.assigned_cluster_id = Set(None);
            changes.assigned_instance_type = Set(None);
            changes.assigned_gpu_shape = Set(None);
            changes.start_no_later_than = Set(None);
            changes.estimated_start_at = Set(None);
            changes.start_p10_at = Set(None);
            changes.start_p90_at = Set(None);
            // Ranked anew when it is back: fair share gives its points again.
            changes.fair_share_bonus = Set(None);
            changes.foreseen_at = Set(None);
            changes.foreseen_start_at = Set(None);
            changes.provisioned_at = Set(None);
            changes.exit_at = Set(None);
            changes.milestones_done = Set(0);
            (GprEventKind::Requeued, format!("back in the queue at priority {}", g.priority))
        } else if !failure.is_empty() {
            changes.phase = Set(GprPhase::Failed);
            changes.reason = Set(Some(failure.to_owned()));
            changes.completed_at = Set(Some(now));
            (GprEventKind::Failed, failure.to_owned())
        } else {
            changes.phase = Set(GprPhase::Completed);
            changes.completed_at = Set(Some(now));
            (GprEventKind::Completed, "the nodes are back in the pool".to_owned())
        };
        gpr::Entity::update_many().set(changes).filter(gpr::Column::Id.eq(g.id)).filter(gpr::Column::Version.eq(g.version)).exec(txn).await?;
        if requeue && !failure.is_empty() {
            record_event(txn, g, GprEventKind::Failed, failure.to_owned(), ACTOR).await?;
        }
        record_event(txn, g, kind, message, ACTOR).await?;
        Ok(())
    }
}
