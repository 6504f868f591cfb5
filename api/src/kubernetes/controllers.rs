//! The Kubernetes controllers, run by the leader only (the scheduler's lease, see
//! [`egs_domain::ports::LeaderTasks`]): for every Kubernetes cluster, node discovery, EGS's
//! cordons on its nodes, the `GPUProvisioningRequest` controller and auto-GPR. A supervisor starts a cluster's
//! controllers when it is registered (or its credentials change) and stops them when it is
//! removed or this replica stops leading.

use super::context::ControllerContext;
use super::discovery::NodeSync;
use egs_domain::ports::LeaderTasks;
use egs_entities::{ClusterProvider, Health, RegistrationStatus, cluster};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::task::JoinHandle;

/// Aborts the task when dropped, so stopping the supervisor stops every cluster's controllers.
struct Owned(JoinHandle<()>);

impl Drop for Owned {
    fn drop(&mut self) {
        self.0.abort();
    }
}

pub struct Controllers {
    ctx: Arc<ControllerContext>,
    supervisor: Mutex<Option<Owned>>,
}

impl Controllers {
    pub fn new(ctx: ControllerContext) -> Arc<Self> {
        Arc::new(Self { ctx: Arc::new(ctx), supervisor: Mutex::new(None) })
    }
}

impl LeaderTasks for Controllers {
    fn set_leading(&self, leading: bool) {
        let Ok(mut supervisor) = self.supervisor.lock() else { return };
        match (leading, supervisor.is_some()) {
            (true, false) => {
                tracing::info!("starting the Kubernetes controllers");
                *supervisor = Some(Owned(tokio::spawn(supervise(self.ctx.clone()))));
            }
            (false, true) => {
                tracing::info!("stopping the Kubernetes controllers");
                *supervisor = None;
            }
            _ => {}
        }
    }
}

async fn supervise(ctx: Arc<ControllerContext>) {
    let mut running: HashMap<i64, (Option<String>, Owned)> = HashMap::new();
    loop {
        match cluster::Entity::find().filter(cluster::Column::Provider.eq(ClusterProvider::Kubernetes)).all(&ctx.db).await {
            Ok(rows) => {
                running.retain(|id, (credentials, _)| rows.iter().any(|r| r.id == *id && r.credentials == *credentials));
                for row in rows {
                    if running.contains_key(&row.id) {
                        continue;
                    }
                    match ctx.clusters.client_for(&row).await {
                        Ok(client) => {
                            let credentials = row.credentials.clone();
                            running.insert(row.id, (credentials, Owned(tokio::spawn(run_cluster(ctx.clone(), row, client)))));
                        }
                        Err(error) => {
                            tracing::warn!(cluster = %row.name, error = %egs_domain::redaction::scrubbed(&error), "cannot reach the cluster");
                            let status = if row.registration_status == RegistrationStatus::Registered {
                                RegistrationStatus::Registered
                            } else {
                                RegistrationStatus::Failed
                            };
                            let _ = cluster::Entity::update_many()
                                .col_expr(cluster::Column::RegistrationStatus, Expr::value(status))
                                .col_expr(cluster::Column::Health, Expr::value(Health::Unhealthy))
                                .filter(cluster::Column::Id.eq(row.id))
                                .exec(&ctx.db)
                                .await;
                        }
                    }
                }
            }
            Err(error) => tracing::warn!(error = %egs_domain::redaction::scrubbed(&error), "cannot list the Kubernetes clusters"),
        }
        tokio::time::sleep(ctx.config.cluster_poll).await;
    }
}

/// One cluster's controllers, until aborted.
async fn run_cluster(ctx: Arc<ControllerContext>, row: cluster::Model, client: kube::Client) {
    tracing::info!(cluster = %row.name, "watching the cluster");
    let nodes = {
        let ctx = ctx.clone();
        NodeSync::new(ctx.db.clone(), row.id).run(client.clone(), move || {
            ctx.inventory.changed();
            ctx.scheduler.wake();
        })
    };
    let cordons = super::cordons::run(ctx.db.clone(), row.id, client.clone());
    tokio::join!(nodes, cordons, super::resources::run(ctx.clone(), row.clone(), client.clone()), super::autogpr::run(ctx.clone(), row, client));
}
