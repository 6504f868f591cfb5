//! Inventory: GPU nodes, their GPUs, and pools (cluster × instance type × shape).

use crate::auth::Caller;
use crate::error::{Error, Result, UserError};
use crate::patch::MaybeUndefined;
use crate::validate;
use chrono::Utc;
use egs_entities::{Health, NodeState, Role, cluster, gpr, gpr_node, gpu, node};
use sea_orm::sea_query::Query;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect, Select, Set, TransactionTrait, TryIntoModel,
};
use std::collections::{BTreeMap, HashSet};

/// Most nodes one `upsertNodes` call may carry: bounds the transaction.
pub const MAX_NODES_PER_UPSERT: usize = 500;
/// Most GPUs a node may report (the largest boxes today have 16).
pub const MAX_GPUS_PER_NODE: usize = 64;

#[derive(Clone, Debug, Default)]
pub struct NodeQuery {
    pub cluster_id: Option<i64>,
    pub gpu_shape: Option<String>,
    pub instance_type: Option<String>,
    pub state: Option<NodeState>,
    pub health: Option<Health>,
}

pub fn nodes_select(query: &NodeQuery) -> Select<node::Entity> {
    let mut select = node::Entity::find();
    if let Some(id) = query.cluster_id {
        select = select.filter(node::Column::ClusterId.eq(id));
    }
    if let Some(shape) = &query.gpu_shape {
        select = select.filter(node::Column::GpuShape.eq(shape.as_str()));
    }
    if let Some(instance_type) = &query.instance_type {
        select = select.filter(node::Column::InstanceType.eq(instance_type.as_str()));
    }
    if let Some(state) = query.state {
        select = select.filter(node::Column::State.eq(state));
    }
    if let Some(health) = query.health {
        select = select.filter(node::Column::Health.eq(health));
    }
    select
}

pub async fn find_node(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<node::Model> {
    caller.require_person()?;
    node::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("node"))
}

pub async fn find_gpu(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<gpu::Model> {
    caller.require_person()?;
    gpu::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("GPU"))
}

#[derive(Clone, Debug, Default)]
pub struct GpuQuery {
    pub cluster_id: Option<i64>,
    pub node_id: Option<i64>,
    pub model: Option<String>,
}

pub fn gpus_select(query: &GpuQuery) -> Select<gpu::Entity> {
    let mut select = gpu::Entity::find();
    if let Some(node_id) = query.node_id {
        select = select.filter(gpu::Column::NodeId.eq(node_id));
    }
    if let Some(model) = &query.model {
        select = select.filter(gpu::Column::Model.eq(model.as_str()));
    }
    if let Some(cluster_id) = query.cluster_id {
        use sea_orm::sea_query::Query;
        let nodes_of_cluster =
            Query::select().column(node::Column::Id).from(node::Entity).and_where(node::Column::ClusterId.eq(cluster_id)).to_owned();
        select = select.filter(gpu::Column::NodeId.in_subquery(nodes_of_cluster));
    }
    select
}

/// Node counts of one pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolSummary {
    pub cluster_id: i64,
    pub instance_type: String,
    pub gpu_shape: String,
    pub gpus_per_node: i32,
    pub gpu_memory_mib: i64,
    pub total_nodes: i32,
    /// Healthy, available and not held by a GPR.
    pub free_nodes: i32,
    pub reserved_nodes: i32,
    /// Draining, cordoned, unhealthy or stale.
    pub unavailable_nodes: i32,
    /// Every node has RDMA (multi-node GPRs that need it are planned here).
    pub rdma: bool,
}

pub async fn list_pools(db: &DatabaseConnection, caller: &Caller, cluster_id: Option<i64>, gpu_shape: Option<String>) -> Result<Vec<PoolSummary>> {
    caller.require_person()?;
    let nodes = nodes_select(&NodeQuery { cluster_id, gpu_shape, ..Default::default() }).all(db).await?;
    Ok(summarize_pools(&nodes))
}

/// Groups nodes into pools; pools are ordered by cluster, shape and instance type.
pub fn summarize_pools(nodes: &[node::Model]) -> Vec<PoolSummary> {
    let mut pools: BTreeMap<(i64, String, String), PoolSummary> = BTreeMap::new();
    for n in nodes {
        let pool = pools.entry((n.cluster_id, n.gpu_shape.clone(), n.instance_type.clone())).or_insert_with(|| PoolSummary {
            cluster_id: n.cluster_id,
            instance_type: n.instance_type.clone(),
            gpu_shape: n.gpu_shape.clone(),
            gpus_per_node: n.gpus_per_node,
            gpu_memory_mib: n.gpu_memory_mib,
            total_nodes: 0,
            free_nodes: 0,
            reserved_nodes: 0,
            unavailable_nodes: 0,
            rdma: n.rdma,
        });
        pool.total_nodes += 1;
        pool.rdma &= n.rdma;
        pool.gpus_per_node = pool.gpus_per_node.min(n.gpus_per_node);
        pool.gpu_memory_mib = pool.gpu_memory_mib.min(n.gpu_memory_mib);
        match (n.state, n.health) {
            (NodeState::Reserved, _) => pool.reserved_nodes += 1,
            (NodeState::Available, Health::Healthy) if n.allocated_gpr_id.is_none() => pool.free_nodes += 1,
            _ => pool.unavailable_nodes += 1,
        }
    }
    pools.into_values().collect()
}

/// A GPU of a node as its agent (or an admin) reports it.
#[cfg_attr(feature = "graphql", derive(async_graphql::InputObject))]
#[cfg_attr(feature = "graphql", graphql(name = "GpuInput"))]
pub struct GpuReport {
    pub uuid: String,
    pub index: i32,
    pub model: String,
    pub memory_mib: i64,
    #[cfg_attr(feature = "graphql", graphql(default))]
    pub mig_enabled: bool,
}

/// A node to create or update. On an existing node, a field left out keeps its value (an
/// agent re-registering after a restart leaves an admin's thresholds alone), and an explicit
/// `null` clears a nullable one.
// The GraphQL `NodeInput` as agents and admins send it, and what the Kubernetes discovery
// and the demo report too.
#[cfg_attr(feature = "graphql", derive(async_graphql::InputObject))]
#[cfg_attr(feature = "graphql", graphql(name = "NodeInput"))]
pub struct NodeReport {
    pub name: String,
    /// E.g. `p5.48xlarge`. Required for a new node; left out: unchanged.
    pub instance_type: Option<String>,
    pub gpu_shape: String,
    pub gpus_per_node: i32,
    pub gpu_memory_mib: i64,
    /// The cluster zone (`topology.kubernetes.io/zone`): read from Kubernetes, not reported.
    #[cfg_attr(feature = "graphql", graphql(skip))]
    pub zone: MaybeUndefined<String>,
    /// Left out: unchanged; `null`: cleared.
    pub driver_version: MaybeUndefined<String>,
    /// The CUDA version the driver supports, `major.minor`. Left out: unchanged; `null`: cleared.
    pub cuda_version: MaybeUndefined<String>,
    /// The node's own power alert threshold, W (instead of its shape's). Left out: unchanged
    /// (none for a new node); `null`: cleared.
    pub power_threshold_watts: MaybeUndefined<f64>,
    /// The node's own temperature alert threshold, °C (instead of its shape's). Left out:
    /// unchanged (none for a new node); `null`: cleared.
    pub temperature_threshold_celsius: MaybeUndefined<f64>,
    /// `HEALTHY` or `UNHEALTHY` as the reporter sees it (an agent after an XID or ECC fault,
    /// an admin taking a failed node out). Absent: unchanged. A provisioned GPR on a node that
    /// turns unhealthy gets a replacement from its pool, or runs degraded if none is free.
    pub health: Option<Health>,
    /// Whether the node has an RDMA network (InfiniBand or RoCE) to its pool's other nodes.
    /// Left out: unchanged (none for a new node).
    pub rdma: Option<bool>,
    /// When given, the node's GPUs become exactly these.
    pub gpus: Option<Vec<GpuReport>>,
}

fn check_node_reports(reports: &[NodeReport]) -> Result<()> {
    let mut errors: Vec<UserError> = Vec::new();
    if reports.is_empty() {
        errors.push(UserError::invalid("nodes", "give at least one node"));
    }
    if reports.len() > MAX_NODES_PER_UPSERT {
        errors.push(UserError::invalid("nodes", format!("at most {MAX_NODES_PER_UPSERT} nodes per call, got {}", reports.len())));
    }
    let mut names = HashSet::new();
    // Across the call: one GPU cannot be on two nodes.
    let mut uuids = HashSet::new();
    for (i, n) in reports.iter().enumerate() {
        if n.health.is_some_and(|h| !matches!(h, Health::Healthy | Health::Unhealthy)) {
            errors.push(UserError::invalid(&format!("nodes.{i}.health"), "report HEALTHY or UNHEALTHY; the gateway decides STALE and UNKNOWN"));
        }
        let at = |f: &str| format!("nodes.{i}.{f}");
        validate::name(&at("name"), &n.name, 253, &mut errors);
        if !names.insert(n.name.as_str()) {
            errors.push(UserError::invalid(&at("name"), format!("node `{}` appears twice", n.name)));
        }
        if let Some(instance_type) = &n.instance_type {
            validate::name(&at("instanceType"), instance_type, 128, &mut errors);
        }
        for (field, value) in [("driverVersion", &n.driver_version), ("cudaVersion", &n.cuda_version)] {
            if let MaybeUndefined::Value(value) = value {
                validate::name(&at(field), value, 64, &mut errors);
            }
        }
        validate::name(&at("gpuShape"), &n.gpu_shape, 128, &mut errors);
        validate::range(&at("gpusPerNode"), n.gpus_per_node.into(), 1, MAX_GPUS_PER_NODE as i64, &mut errors);
        validate::range(&at("gpuMemoryMib"), n.gpu_memory_mib, 1, 16 * 1024 * 1024, &mut errors);
        for (field, value) in [("powerThresholdWatts", &n.power_threshold_watts), ("temperatureThresholdCelsius", &n.temperature_threshold_celsius)] {
            if value.value().is_some_and(|v| !(v.is_finite() && *v > 0.0)) {
                errors.push(UserError::invalid(&at(field), "must be a positive number"));
            }
        }
        if let Some(gpus) = &n.gpus {
            if gpus.len() > MAX_GPUS_PER_NODE {
                errors.push(UserError::invalid(&at("gpus"), format!("at most {MAX_GPUS_PER_NODE} GPUs per node")));
            }
            let mut indices = HashSet::new();
            for (j, g) in gpus.iter().enumerate() {
                let at = |f: &str| format!("nodes.{i}.gpus.{j}.{f}");
                validate::name(&at("uuid"), &g.uuid, 128, &mut errors);
                validate::name(&at("model"), &g.model, 128, &mut errors);
                validate::range(&at("index"), g.index.into(), 0, MAX_GPUS_PER_NODE as i64 - 1, &mut errors);
                validate::range(&at("memoryMib"), g.memory_mib, 1, 16 * 1024 * 1024, &mut errors);
                if !indices.insert(g.index) {
                    errors.push(UserError::invalid(&at("index"), format!("GPU index {} appears twice", g.index)));
                }
                if !uuids.insert(g.uuid.as_str()) {
                    errors.push(UserError::invalid(&at("uuid"), format!("GPU `{}` appears twice", g.uuid)));
                }
            }
        }
    }
    validate::finish(errors)
}

/// Creates or updates nodes (and their GPUs) of one cluster, all or nothing. Admins may report
/// any node; an agent only its own (or, with a cluster-scoped token, its cluster's). Fields a
/// report leaves out keep their stored values; a new node starts without thresholds (the
/// per-shape ones apply) and needs an instance type.
pub async fn upsert_nodes(db: &DatabaseConnection, caller: &Caller, cluster_id: i64, reports: Vec<NodeReport>) -> Result<Vec<node::Model>> {
    match caller.role() {
        Role::Admin => {}
        Role::Agent => {
            if !reports.iter().all(|r| caller.agent_covers(cluster_id, &r.name)) {
                return Err(caller.foreign_node());
            }
        }
        Role::User => return Err(Error::Forbidden("this needs an admin or agent token".into())),
    }
    cluster::Entity::find_by_id(cluster_id).one(db).await?.ok_or(Error::NotFound("cluster"))?;
    check_node_reports(&reports)?;

    let txn = db.begin().await?;
    let now = Utc::now();
    let names: Vec<&str> = reports.iter().map(|r| r.name.as_str()).collect();
    let existing: BTreeMap<String, node::Model> = node::Entity::find()
        .filter(node::Column::ClusterId.eq(cluster_id))
        .filter(node::Column::Name.is_in(names))
        .all(&txn)
        .await?
        .into_iter()
        .map(|n| (n.name.clone(), n))
        .collect();
    let unknown_type: Vec<UserError> = reports
        .iter()
        .enumerate()
        .filter(|(_, r)| r.instance_type.is_none() && !existing.contains_key(&r.name))
        .map(|(i, r)| UserError::invalid(&format!("nodes.{i}.instanceType"), format!("node `{}` is new: give its instance type", r.name)))
        .collect();
    validate::finish(unknown_type)?;
    let mut saved = Vec::with_capacity(reports.len());
    let mut reported_gpus = Vec::new();
    for report in reports {
        let mut model: node::ActiveModel = match existing.get(&report.name) {
            Some(found) => found.clone().into(),
            None => node::ActiveModel {
                cluster_id: Set(cluster_id),
                name: Set(report.name.clone()),
                health: Set(Health::Healthy),
                state: Set(NodeState::Available),
                allocated_gpr_id: Set(None),
                zone: Set(None),
                driver_version: Set(None),
                cuda_version: Set(None),
                power_threshold_watts: Set(None),
                temperature_threshold_celsius: Set(None),
                rdma: Set(false),
                last_heartbeat_at: Set(None),
                created_at: Set(now),
                ..Default::default()
            },
        };
        if let Some(instance_type) = report.instance_type {
            model.instance_type = Set(instance_type);
        }
        model.gpu_shape = Set(report.gpu_shape);
        model.gpus_per_node = Set(report.gpus_per_node);
        model.gpu_memory_mib = Set(report.gpu_memory_mib);
        if let Some(zone) = report.zone.into() {
            model.zone = Set(zone);
        }
        if let Some(driver_version) = report.driver_version.into() {
            model.driver_version = Set(driver_version);
        }
        if let Some(cuda_version) = report.cuda_version.into() {
            model.cuda_version = Set(cuda_version);
        }
        if let Some(watts) = report.power_threshold_watts.into() {
            model.power_threshold_watts = Set(watts);
        }
        if let Some(celsius) = report.temperature_threshold_celsius.into() {
            model.temperature_threshold_celsius = Set(celsius);
        }
        if let Some(health) = report.health {
            model.health = Set(health);
        }
        if let Some(rdma) = report.rdma {
            model.rdma = Set(rdma);
        }
        model.updated_at = Set(now);
        if caller.role() == Role::Agent {
            model.last_heartbeat_at = Set(Some(now));
        }
        let node = model.save(&txn).await?.try_into_model()?;
        if let Some(gpus) = report.gpus {
            reported_gpus.push((node.id, gpus));
        }
        saved.push(node);
    }
    replace_gpus(&txn, caller, cluster_id, reported_gpus).await?;
    txn.commit().await?;
    Ok(saved)
}

/// Makes each reported node's GPUs the reported ones, for all the call's nodes at once: a fixed
/// handful of statements whatever the number of GPUs (it was three per node and one per GPU,
/// 5,500 statements for 500 nodes). A GPU keeps its row (and history) when it moves between
/// nodes (a card moved to another machine), but only within one cluster and only when the
/// caller may write the node it leaves: otherwise `FORBIDDEN` (the caller's transaction is
/// dropped, so nothing is stored), without saying which node the GPU is on. A GPU no report of
/// the call names leaves its node; one another node of the call reports moves there.
async fn replace_gpus(txn: &sea_orm::DatabaseTransaction, caller: &Caller, cluster_id: i64, reported: Vec<(i64, Vec<GpuReport>)>) -> Result<()> {
    if reported.is_empty() {
        return Ok(());
    }
    let now = Utc::now();
    let uuids: Vec<String> = reported.iter().flat_map(|(_, gpus)| gpus.iter().map(|g| g.uuid.clone())).collect();
    let nodes: Vec<i64> = reported.iter().map(|(node, _)| *node).collect();
    let mut known: BTreeMap<String, gpu::Model> = BTreeMap::new();
    for chunk in uuids.chunks(IDS_PER_STATEMENT) {
        known.extend(gpu::Entity::find().filter(gpu::Column::Uuid.is_in(chunk.to_vec())).all(txn).await?.into_iter().map(|g| (g.uuid.clone(), g)));
    }
    let leaving: HashSet<i64> = reported
        .iter()
        .flat_map(|(node, gpus)| gpus.iter().filter_map(|g| known.get(&g.uuid)).filter(move |k| k.node_id != *node))
        .map(|k| k.node_id)
        .collect();
    if !leaving.is_empty() {
        let from = node::Entity::find().filter(node::Column::Id.is_in(leaving)).all(txn).await?;
        let writable = |n: &node::Model| n.cluster_id == cluster_id && (caller.role() == Role::Admin || caller.agent_covers(n.cluster_id, &n.name));
        if !from.iter().all(writable) {
            return Err(Error::Forbidden(
                "a reported GPU UUID belongs to a node this token may not write (GPUs move only between nodes of one cluster that the \
                 caller may report); nothing was stored"
                    .into(),
            ));
        }
    }
    let named: HashSet<&str> = uuids.iter().map(String::as_str).collect();
    let mut gone = Vec::new();
    for chunk in nodes.chunks(IDS_PER_STATEMENT) {
        let on_them: Vec<(i64, String)> = gpu::Entity::find()
            .select_only()
            .column(gpu::Column::Id)
            .column(gpu::Column::Uuid)
            .filter(gpu::Column::NodeId.is_in(chunk.to_vec()))
            .into_tuple()
            .all(txn)
            .await?;
        gone.extend(on_them.into_iter().filter(|(_, uuid)| !named.contains(uuid.as_str())).map(|(id, _)| id));
    }
    for chunk in gone.chunks(IDS_PER_STATEMENT) {
        gpu::Entity::delete_many().filter(gpu::Column::Id.is_in(chunk.to_vec())).exec(txn).await?;
    }
    let (mut added, mut unchanged) = (Vec::new(), Vec::new());
    for (node_id, gpus) in reported {
        for report in gpus {
            let Some(found) = known.get(&report.uuid) else {
                added.push(gpu::ActiveModel {
                    uuid: Set(report.uuid),
                    node_id: Set(node_id),
                    gpu_index: Set(report.index),
                    model: Set(report.model),
                    memory_mib: Set(report.memory_mib),
                    mig_enabled: Set(report.mig_enabled),
                    created_at: Set(now),
                    updated_at: Set(now),
                    ..Default::default()
                });
                continue;
            };
            let described = (found.node_id, found.gpu_index, found.model.as_str(), found.memory_mib, found.mig_enabled);
            if described == (node_id, report.index, report.model.as_str(), report.memory_mib, report.mig_enabled) {
                unchanged.push(found.id);
                continue;
            }
            // Rare (a card moved, a driver reports MIG on): one statement each.
            gpu::ActiveModel {
                id: sea_orm::ActiveValue::Unchanged(found.id),
                node_id: Set(node_id),
                gpu_index: Set(report.index),
                model: Set(report.model),
                memory_mib: Set(report.memory_mib),
                mig_enabled: Set(report.mig_enabled),
                updated_at: Set(now),
                ..Default::default()
            }
            .update(txn)
            .await?;
        }
    }
    for chunk in unchanged.chunks(IDS_PER_STATEMENT) {
        gpu::Entity::update_many()
            .col_expr(gpu::Column::UpdatedAt, sea_orm::sea_query::Expr::value(now))
            .filter(gpu::Column::Id.is_in(chunk.to_vec()))
            .exec(txn)
            .await?;
    }
    // Eight values a row: far under either database's bound-parameter limit.
    for chunk in added.chunks(IDS_PER_STATEMENT) {
        gpu::Entity::insert_many(chunk.to_vec()).exec_without_returning(txn).await?;
    }
    Ok(())
}

/// Ids (or UUIDs) per `IN` list, and rows per multi-row insert, in `replace_gpus`.
const IDS_PER_STATEMENT: usize = 1000;

/// Removes a node with its GPUs (admins), unless a GPR holds it or is taking it: checked in
/// the same statement as the delete, so a GPR admitted meanwhile keeps its node.
pub async fn remove_node(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<node::Model> {
    caller.require_admin()?;
    let existing = node::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("node"))?;
    let holding =
        Query::select().column(gpr::Column::Id).from(gpr::Entity).and_where(gpr::Column::Phase.is_in(crate::gpr::phase::HOLDING)).to_owned();
    let held_nodes =
        Query::select().column(gpr_node::Column::NodeId).from(gpr_node::Entity).and_where(gpr_node::Column::GprId.in_subquery(holding)).to_owned();
    let removed = node::Entity::delete_many()
        .filter(node::Column::Id.eq(id))
        .filter(node::Column::AllocatedGprId.is_null())
        .filter(node::Column::Id.not_in_subquery(held_nodes))
        .exec(db)
        .await?
        .rows_affected;
    if removed == 0 {
        return Err(Error::conflict(
            "id",
            format!("node `{}` is held by a GPR; release it first, or report it UNHEALTHY to have it replaced", existing.name),
        ));
    }
    Ok(existing)
}
