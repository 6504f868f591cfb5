//! Inventory from the API server: GPU nodes are the nodes with the `nvidia.com/gpu.product`
//! label; a watcher keeps the inventory in step (added, changed, removed, Ready or not) and
//! the cluster's contact status current.

use super::{GPU_MEMORY_LABEL, GPU_PRODUCT_LABEL, GPU_RESOURCE, INSTANCE_TYPE_LABEL, ZONE_LABEL};
use chrono::Utc;
use egs_domain::auth::Caller;
use egs_domain::inventory::service::{NodeReport, remove_node, upsert_nodes};
use egs_domain::patch::MaybeUndefined;
use egs_entities::{Health, RegistrationStatus, cluster, node};
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::Node;
use kube::runtime::{WatchStreamExt, watcher};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use std::collections::{BTreeMap, HashMap};

/// What the inventory needs from a Kubernetes Node.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuNode {
    pub name: String,
    pub gpu_shape: String,
    /// Allocatable `nvidia.com/gpu`, else the capacity (a node whose device plugin is not
    /// ready advertises none allocatable; it is then not Ready for us).
    pub gpus: i32,
    pub gpu_memory_mib: i64,
    pub instance_type: String,
    pub zone: Option<String>,
    /// The Ready condition is True and the GPUs are allocatable.
    pub ready: bool,
}

/// `None` for nodes without GPUs (the watcher's label selector keeps them out anyway).
pub fn gpu_node(node: &Node) -> Option<GpuNode> {
    let labels = node.metadata.labels.as_ref()?;
    let name = node.metadata.name.clone()?;
    let gpu_shape = labels.get(GPU_PRODUCT_LABEL)?.clone();
    let status = node.status.clone().unwrap_or_default();
    let count = |resources: Option<BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>| {
        resources.and_then(|r| r.get(GPU_RESOURCE).and_then(|q| q.0.parse::<i32>().ok())).unwrap_or(0)
    };
    let allocatable = count(status.allocatable);
    let capacity = count(status.capacity);
    let gpus = if allocatable > 0 { allocatable } else { capacity.max(labels.get("nvidia.com/gpu.count").and_then(|c| c.parse().ok()).unwrap_or(0)) };
    let condition_ready = status.conditions.unwrap_or_default().iter().any(|c| c.type_ == "Ready" && c.status == "True");
    Some(GpuNode {
        name,
        gpu_shape,
        gpus: gpus.max(1),
        // GPU feature discovery labels the memory per GPU; without it the size is unknown (1).
        gpu_memory_mib: labels.get(GPU_MEMORY_LABEL).and_then(|m| m.parse().ok()).filter(|m| *m > 0).unwrap_or(1),
        instance_type: labels
            .get(INSTANCE_TYPE_LABEL)
            .or_else(|| labels.get("beta.kubernetes.io/instance-type"))
            .cloned()
            .unwrap_or_else(|| "unknown".into()),
        zone: labels.get(ZONE_LABEL).or_else(|| labels.get("failure-domain.beta.kubernetes.io/zone")).cloned(),
        ready: condition_ready && allocatable > 0,
    })
}

fn report(node: &GpuNode, health: Option<Health>) -> NodeReport {
    NodeReport {
        name: node.name.clone(),
        instance_type: Some(node.instance_type.clone()),
        gpu_shape: node.gpu_shape.clone(),
        gpus_per_node: node.gpus,
        gpu_memory_mib: node.gpu_memory_mib,
        // A zone label taken off clears the stored zone.
        zone: Some(node.zone.clone()).into(),
        driver_version: MaybeUndefined::Undefined,
        cuda_version: MaybeUndefined::Undefined,
        power_threshold_watts: MaybeUndefined::Undefined,
        temperature_threshold_celsius: MaybeUndefined::Undefined,
        health,
        // Reported by the node's agent or an admin, not read from Kubernetes.
        rdma: None,
        gpus: None,
    }
}

/// Keeps one cluster's inventory in step with its API server until the stream ends (never,
/// unless the task is stopped): errors are retried with backoff by the watcher.
pub struct NodeSync {
    pub db: DatabaseConnection,
    pub cluster_id: i64,
    /// What each node's Ready state was when last written, so a Node update that does not
    /// change readiness does not overwrite the health an agent reported.
    ready: HashMap<String, bool>,
    last_contact: Option<std::time::Instant>,
}

/// How often a healthy watch refreshes the cluster's `lastContactAt`.
const CONTACT_EVERY: std::time::Duration = std::time::Duration::from_secs(15);

impl NodeSync {
    pub fn new(db: DatabaseConnection, cluster_id: i64) -> Self {
        Self { db, cluster_id, ready: HashMap::new(), last_contact: None }
    }

    /// Runs the watcher; `changed` is called after every inventory change.
    pub async fn run(mut self, client: kube::Client, changed: impl Fn()) {
        let api: kube::Api<Node> = kube::Api::all(client);
        let config = watcher::Config::default().labels(GPU_PRODUCT_LABEL);
        let mut stream = watcher(api, config).default_backoff().boxed();
        let mut listed: Vec<GpuNode> = Vec::new();
        while let Some(event) = stream.next().await {
            let outcome = match event {
                Ok(watcher::Event::Init) => {
                    listed.clear();
                    Ok(false)
                }
                Ok(watcher::Event::InitApply(node)) => {
                    listed.extend(gpu_node(&node));
                    Ok(false)
                }
                Ok(watcher::Event::InitDone) => self.sync_all(std::mem::take(&mut listed)).await,
                Ok(watcher::Event::Apply(node)) => match gpu_node(&node) {
                    Some(found) => self.apply(&found).await,
                    None => Ok(false),
                },
                Ok(watcher::Event::Delete(node)) => match node.metadata.name {
                    Some(name) => self.remove(&name).await,
                    None => Ok(false),
                },
                Err(error) => {
                    tracing::warn!(cluster = self.cluster_id, error = %egs_domain::redaction::scrubbed(&error), "watching the cluster's nodes failed; retrying");
                    self.contact(false).await;
                    continue;
                }
            };
            match outcome {
                Ok(true) => changed(),
                Ok(false) => {}
                Err(error) => tracing::warn!(cluster = self.cluster_id, error = %format!("{error:?}"), "could not update the inventory"),
            }
            self.contact(true).await;
        }
    }

    /// After a (re)list: every GPU node upserted, inventory nodes the cluster no longer has
    /// removed.
    async fn sync_all(&mut self, nodes: Vec<GpuNode>) -> egs_domain::error::Result<bool> {
        let known: Vec<node::Model> = node::Entity::find().filter(node::Column::ClusterId.eq(self.cluster_id)).all(&self.db).await?;
        let mut changed = false;
        for gone in known.iter().filter(|k| !nodes.iter().any(|n| n.name == k.name)) {
            changed |= self.remove(&gone.name).await?;
        }
        for chunk in nodes.chunks(egs_domain::inventory::service::MAX_NODES_PER_UPSERT) {
            let reports = chunk.iter().map(|n| report(n, self.health_change(n))).collect();
            upsert_nodes(&self.db, &Caller::system(), self.cluster_id, reports).await?;
            changed = true;
        }
        Ok(changed)
    }

    async fn apply(&mut self, node: &GpuNode) -> egs_domain::error::Result<bool> {
        let health = self.health_change(node);
        upsert_nodes(&self.db, &Caller::system(), self.cluster_id, vec![report(node, health)]).await?;
        Ok(true)
    }

    /// The health to write: only when readiness changed since last written (or first seen).
    fn health_change(&mut self, node: &GpuNode) -> Option<Health> {
        let before = self.ready.insert(node.name.clone(), node.ready);
        (before != Some(node.ready)).then_some(if node.ready { Health::Healthy } else { Health::Unhealthy })
    }

    /// A node left the cluster: removed from the inventory, or, while a GPR holds it, marked
    /// unhealthy so the scheduler replaces it.
    async fn remove(&mut self, name: &str) -> egs_domain::error::Result<bool> {
        self.ready.remove(name);
        let Some(found) =
            node::Entity::find().filter(node::Column::ClusterId.eq(self.cluster_id)).filter(node::Column::Name.eq(name)).one(&self.db).await?
        else {
            return Ok(false);
        };
        match remove_node(&self.db, &Caller::system(), found.id).await {
            Ok(_) => Ok(true),
            Err(egs_domain::error::Error::User(_)) => {
                node::Entity::update_many()
                    .col_expr(node::Column::Health, Expr::value(Health::Unhealthy))
                    .col_expr(node::Column::UpdatedAt, Expr::value(Utc::now()))
                    .filter(node::Column::Id.eq(found.id))
                    .exec(&self.db)
                    .await?;
                Ok(true)
            }
            Err(error) => Err(error),
        }
    }

    /// Records whether the API server answered: registered and healthy, or unhealthy (a
    /// cluster never reached stays PENDING, then FAILED).
    async fn contact(&mut self, reached: bool) {
        if reached && self.last_contact.is_some_and(|at| at.elapsed() < CONTACT_EVERY) {
            return;
        }
        self.last_contact = reached.then(std::time::Instant::now);
        let mut update = cluster::Entity::update_many().filter(cluster::Column::Id.eq(self.cluster_id));
        update = if reached {
            update
                .col_expr(cluster::Column::RegistrationStatus, Expr::value(RegistrationStatus::Registered))
                .col_expr(cluster::Column::Health, Expr::value(Health::Healthy))
                .col_expr(cluster::Column::LastContactAt, Expr::value(Utc::now()))
        } else {
            update.col_expr(cluster::Column::Health, Expr::value(Health::Unhealthy))
        };
        if let Err(error) = update.exec(&self.db).await {
            tracing::warn!(cluster = self.cluster_id, error = %egs_domain::redaction::scrubbed(&error), "could not record the cluster's contact status");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(json: serde_json::Value) -> Node {
        serde_json::from_value(json).expect("node")
    }

    #[test]
    fn a_gpu_node_is_read_from_its_labels_allocatable_and_ready_condition() {
        let n = node(serde_json::json!({
            "metadata": { "name": "gpu-1", "labels": {
                "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.memory": "81559",
                "node.kubernetes.io/instance-type": "p5.48xlarge", "topology.kubernetes.io/zone": "us-east-1a" } },
            "status": { "allocatable": { "nvidia.com/gpu": "8" }, "capacity": { "nvidia.com/gpu": "8" },
                "conditions": [{ "type": "Ready", "status": "True" }] }
        }));
        let found = gpu_node(&n).expect("a GPU node");
        assert_eq!(found.gpu_shape, "NVIDIA-H100-80GB-HBM3");
        assert_eq!((found.gpus, found.gpu_memory_mib), (8, 81559));
        assert_eq!(found.instance_type, "p5.48xlarge");
        assert_eq!(found.zone.as_deref(), Some("us-east-1a"));
        assert!(found.ready);
    }

    #[test]
    fn a_node_without_allocatable_gpus_or_ready_condition_is_not_ready() {
        let n = node(serde_json::json!({
            "metadata": { "name": "gpu-2", "labels": { "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB" } },
            "status": { "allocatable": { "nvidia.com/gpu": "0" }, "capacity": { "nvidia.com/gpu": "4" },
                "conditions": [{ "type": "Ready", "status": "True" }] }
        }));
        let found = gpu_node(&n).expect("a GPU node");
        assert_eq!(found.gpus, 4, "capacity stands in for the count");
        assert!(!found.ready);
        assert_eq!(found.instance_type, "unknown");
        let not_ready = node(serde_json::json!({
            "metadata": { "name": "gpu-3", "labels": { "nvidia.com/gpu.product": "X" } },
            "status": { "allocatable": { "nvidia.com/gpu": "2" }, "conditions": [{ "type": "Ready", "status": "False" }] }
        }));
        assert!(!gpu_node(&not_ready).expect("a GPU node").ready);
        let cpu = node(serde_json::json!({ "metadata": { "name": "cpu-1", "labels": {} } }));
        assert!(gpu_node(&cpu).is_none());
    }
}
