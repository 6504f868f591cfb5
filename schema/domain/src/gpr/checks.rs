//! What a GPR must satisfy before it is stored: its fields, the inventory (a pool that can
//! hold it) and the slice's policy (refused outright, or held for approval).

use super::policy::{self, Ask, Usage};
use super::spec::{
    EARLIEST_START_SKEW_SECS, GprSpec, MAX_DURATION_SECS, MAX_EARLIEST_START_SECS, MAX_LABELS, MAX_NODES_PER_GPR, MAX_PREFERRED_CLUSTERS,
    MAX_PRIORITY, MIN_DURATION_SECS, MIN_PRIORITY,
};
use crate::error::{Error, Result, UserError};
use crate::inventory::service::{NodeQuery, nodes_select, summarize_pools};
use crate::validate;
use chrono::{DateTime, Duration, Utc};
use egs_entities::{ApprovalState, GprPhase, gpr, gpr_node, node, slice, slice_cluster};
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseTransaction, EntityTrait, PaginatorTrait, QueryFilter};
use std::collections::BTreeMap;

/// The fields a GPR shares with a GPR template, checked the same way for both.
pub struct ShapeFields<'a> {
    pub node_count: i32,
    pub gpus_per_node: Option<i32>,
    pub gpu_shape: Option<&'a str>,
    pub instance_type: Option<&'a str>,
    pub priority: i32,
    pub duration_secs: i64,
    pub idle_timeout_secs: Option<i64>,
}

pub fn check_shape_fields(f: &ShapeFields<'_>, errors: &mut Vec<UserError>) {
    validate::range("nodeCount", f.node_count.into(), 1, MAX_NODES_PER_GPR.into(), errors);
    if let Some(g) = f.gpus_per_node {
        validate::range("gpusPerNode", g.into(), 1, crate::inventory::service::MAX_GPUS_PER_NODE as i64, errors);
    }
    for (field, value) in [("gpuShape", f.gpu_shape), ("instanceType", f.instance_type)] {
        if let Some(value) = value {
            validate::text(field, value, 128, errors);
        }
    }
    validate::range("priority", f.priority.into(), MIN_PRIORITY.into(), MAX_PRIORITY.into(), errors);
    if !(MIN_DURATION_SECS..=MAX_DURATION_SECS).contains(&f.duration_secs) {
        errors.push(UserError::invalid("duration", "must be between 1 minute and 366 days"));
    }
    if let Some(t) = f.idle_timeout_secs
        && !(MIN_DURATION_SECS..=MAX_DURATION_SECS).contains(&t)
    {
        errors.push(UserError::invalid("idleTimeout", "must be between 1 minute and 366 days"));
    }
}

/// `now` checks that the earliest start is not in the past; `None` skips that (an unchanged
/// one that has since passed is fine).
/// Workload hints are free text for people: bounded, and a model size that is a size.
fn check_workload(w: &egs_entities::WorkloadHints, errors: &mut Vec<UserError>) {
    if let Some(model) = &w.model {
        validate::text("workload.model", model, 128, errors);
    }
    if let Some(framework) = &w.framework {
        validate::text("workload.framework", framework, 64, errors);
    }
    if let Some(billions) = w.model_billions
        && !(billions.is_finite() && billions > 0.0 && billions <= 1_000_000.0)
    {
        errors.push(UserError::invalid("workload.modelBillions", "must be a number of billions of parameters above 0 (at most 1,000,000)"));
    }
}

pub(super) fn check_spec_fields(spec: &GprSpec, now: Option<DateTime<Utc>>, errors: &mut Vec<UserError>) {
    validate::dns_label("name", &spec.name, 63, errors);
    let shape = ShapeFields {
        node_count: spec.node_count,
        gpus_per_node: spec.gpus_per_node,
        gpu_shape: spec.gpu_shape.as_deref(),
        instance_type: spec.instance_type.as_deref(),
        priority: spec.priority,
        duration_secs: spec.duration_secs,
        idle_timeout_secs: spec.idle_timeout_secs,
    };
    check_shape_fields(&shape, errors);
    if let Some(m) = spec.min_gpu_memory_mib {
        validate::range("minGpuMemoryMib", m, 1, 16 * 1024 * 1024, errors);
    }
    if let Some(w) = &spec.workload {
        check_workload(w, errors);
    }
    if let Some(at) = spec.earliest_start_at
        && let Some(now) = now
        && at < now - Duration::seconds(EARLIEST_START_SKEW_SECS)
    {
        errors.push(UserError::invalid("earliestStartAt", "is in the past; leave it out to start as soon as possible"));
    }
    if let Some(at) = spec.earliest_start_at
        && let Some(now) = now
        && at > now + Duration::seconds(MAX_EARLIEST_START_SECS)
    {
        errors.push(UserError::invalid("earliestStartAt", "is more than a year ahead; GPRs are planned at most a year out"));
    }
    if spec.preferred_cluster_ids.len() > MAX_PREFERRED_CLUSTERS {
        errors.push(UserError::invalid("preferredClusterIds", format!("at most {MAX_PREFERRED_CLUSTERS} clusters")));
    } else if spec.preferred_cluster_ids.iter().collect::<std::collections::BTreeSet<_>>().len() != spec.preferred_cluster_ids.len() {
        errors.push(UserError::invalid("preferredClusterIds", "names a cluster twice"));
    }
    if spec.labels.len() > MAX_LABELS {
        errors.push(UserError::invalid("labels", format!("at most {MAX_LABELS} labels")));
    }
    for (key, value) in &spec.labels {
        validate::text("labels", key, 63, errors);
        if value.chars().count() > 256 {
            errors.push(UserError::invalid("labels", format!("the value of `{key}` is longer than 256 characters")));
        }
    }
}

/// Checks that some pool on the slice's clusters could ever hold the GPR, and returns the GPUs
/// per node it may get (the largest among the pools that fit: whole nodes are handed over, so
/// that is what the quota counts until it is planned). A GPR
/// that names no shape is held to the policy's allowed shapes, as the scheduler plans it; a
/// named shape the policy does not allow is refused by the policy check with its own reason.
pub(super) async fn check_feasible(db: &impl ConnectionTrait, spec: &GprSpec, allowed_shapes: &[String]) -> Result<i32> {
    let slice_clusters: Vec<i64> = slice_cluster::Entity::find()
        .filter(slice_cluster::Column::SliceId.eq(spec.slice_id))
        .all(db)
        .await?
        .into_iter()
        .map(|l| l.cluster_id)
        .collect();
    if slice_clusters.is_empty() {
        return Err(Error::invalid("sliceId", "the slice has no clusters yet; ask an admin to give it a namespace on one"));
    }
    if let Some(stray) = spec.preferred_cluster_ids.iter().find(|id| !slice_clusters.contains(id)) {
        return Err(Error::invalid(
            "preferredClusterIds",
            format!("cluster {} is not one of the slice's clusters", crate::ids::encode(crate::ids::Kind::Cluster, *stray)),
        ));
    }
    let clusters = if spec.preferred_cluster_ids.is_empty() { slice_clusters } else { spec.preferred_cluster_ids.clone() };
    let nodes = nodes_select(&NodeQuery::default()).filter(node::Column::ClusterId.is_in(clusters)).all(db).await?;
    let mut pools = summarize_pools(&nodes);
    if spec.gpu_shape.is_none() && !allowed_shapes.is_empty() {
        pools.retain(|p| allowed_shapes.contains(&p.gpu_shape));
    }
    let fitting: Vec<_> = pools
        .iter()
        .filter(|p| spec.gpu_shape.as_ref().is_none_or(|s| *s == p.gpu_shape))
        .filter(|p| spec.instance_type.as_ref().is_none_or(|t| *t == p.instance_type))
        .filter(|p| spec.gpus_per_node.is_none_or(|g| g <= p.gpus_per_node))
        .filter(|p| spec.min_gpu_memory_mib.is_none_or(|m| m <= p.gpu_memory_mib))
        .collect();
    // More than one node that must talk over RDMA: only pools whose every node has it.
    let needs_rdma = spec.node_count > 1 && spec.workload.as_ref().is_some_and(|w| w.rdma);
    if needs_rdma && !fitting.is_empty() {
        let with_rdma = fitting.iter().filter(|p| p.rdma).map(|p| p.total_nodes).max();
        match with_rdma {
            None => {
                return Err(Error::invalid(
                    "workload.rdma",
                    "no matching pool has RDMA between its nodes; ask for one node, or for a shape or instance type whose pool has it",
                ));
            }
            Some(largest) if spec.node_count > largest => {
                return Err(Error::invalid(
                    "workload.rdma",
                    format!("asks for {} nodes over RDMA but the largest matching pool with RDMA has {largest}", spec.node_count),
                ));
            }
            Some(_) => {}
        }
    }
    let fitting: Vec<_> = fitting.into_iter().filter(|p| !needs_rdma || p.rdma).collect();
    if fitting.is_empty() {
        let mut offered: Vec<String> = pools.iter().map(|p| format!("{} ({})", p.gpu_shape, p.instance_type)).collect();
        offered.dedup();
        let offered = if offered.is_empty() { "none".to_owned() } else { offered.join(", ") };
        let field = if spec.gpu_shape.is_some() { "gpuShape" } else { "instanceType" };
        return Err(Error::invalid(field, format!("no pool on the slice's clusters offers this GPU shape and size; offered: {offered}")));
    }
    let largest = fitting.iter().map(|p| p.total_nodes).max().unwrap_or(0);
    if spec.node_count > largest {
        return Err(Error::invalid(
            "nodeCount",
            format!("asks for {} nodes but the largest matching pool has {largest}; a GPR takes all its nodes from one pool", spec.node_count),
        ));
    }
    Ok(fitting.iter().map(|p| p.gpus_per_node).max().unwrap_or(1))
}

/// A GPR without an idle timeout gets the slice's default; where the slice enforces a maximum,
/// "never" is not an option, so it gets at most that.
pub(super) fn fill_idle_timeout(spec: &mut GprSpec, policy: &egs_entities::SlicePolicy) {
    if spec.idle_timeout_secs.is_none() {
        spec.idle_timeout_secs = policy.default_idle_timeout_secs.or(policy.max_idle_timeout_secs);
    }
}

/// GPU-hours the slice has committed in the quota period from `since`: what finished GPRs used,
/// the whole windows of GPRs that hold nodes, and the windows of provisioning, queued and
/// approved GPRs, each
/// at the GPUs of the nodes it holds or the pool it is planned in (an unplanned one at the
/// largest pool it may use). `exclude` leaves out the GPR being edited.
pub(crate) async fn gpu_hours_committed(
    db: &impl ConnectionTrait,
    slice_id: i64,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    exclude: Option<i64>,
) -> Result<f64> {
    // Not yet holding nodes as far as `provisioned_at` says: queued, approved, and provisioning
    // (admitted, its nodes being handed over: its whole window is committed).
    let waiting = gpr::Entity::find()
        .filter(gpr::Column::SliceId.eq(slice_id))
        .filter(sea_orm::Condition::any().add(gpr::Column::Phase.is_in([GprPhase::Queued, GprPhase::Provisioning])).add(
            sea_orm::Condition::all().add(gpr::Column::Phase.eq(GprPhase::PendingApproval)).add(gpr::Column::Approval.eq(ApprovalState::Approved)),
        ))
        .filter(gpr::Column::Id.ne(exclude.unwrap_or(-1)))
        .all(db)
        .await?;
    let mut committed = 0.0;
    if !waiting.is_empty() {
        let clusters: Vec<i64> = slice_cluster::Entity::find()
            .filter(slice_cluster::Column::SliceId.eq(slice_id))
            .all(db)
            .await?
            .into_iter()
            .map(|l| l.cluster_id)
            .collect();
        let pools = summarize_pools(&nodes_select(&NodeQuery::default()).filter(node::Column::ClusterId.is_in(clusters)).all(db).await?);
        for g in &waiting {
            let planned = pools.iter().find(|p| {
                Some(p.cluster_id) == g.assigned_cluster_id
                    && Some(&p.gpu_shape) == g.assigned_gpu_shape.as_ref()
                    && Some(&p.instance_type) == g.assigned_instance_type.as_ref()
            });
            let gpus = match planned {
                Some(pool) => pool.gpus_per_node,
                None => pools
                    .iter()
                    .filter(|p| g.gpu_shape.as_ref().is_none_or(|s| *s == p.gpu_shape))
                    .filter(|p| g.instance_type.as_ref().is_none_or(|t| *t == p.instance_type))
                    .map(|p| p.gpus_per_node)
                    .max()
                    .unwrap_or(0),
            };
            committed += f64::from(gpus) * f64::from(g.node_count) * g.duration_secs as f64 / 3600.0;
        }
    }
    let used = gpr::Entity::find()
        .filter(gpr::Column::SliceId.eq(slice_id))
        .filter(gpr::Column::ProvisionedAt.is_not_null())
        .filter(sea_orm::Condition::any().add(gpr::Column::CompletedAt.is_null()).add(gpr::Column::CompletedAt.gt(since)))
        .all(db)
        .await?;
    if used.is_empty() {
        return Ok(committed);
    }
    let links =
        gpr_node::Entity::find().filter(gpr_node::Column::GprId.is_in(used.iter().map(|g| g.id))).find_also_related(node::Entity).all(db).await?;
    let mut gpus: BTreeMap<i64, i64> = BTreeMap::new();
    for (link, node) in links {
        *gpus.entry(link.gpr_id).or_default() += node.map_or(0, |n| i64::from(n.gpus_per_node));
    }
    Ok(committed
        + used
            .iter()
            .map(|g| {
                let start = g.provisioned_at.unwrap_or(now).max(since);
                // A GPR still holding nodes counts its whole window: it may use all of it.
                let end = g.completed_at.or(g.exit_at).unwrap_or(now);
                let hours = (end - start).num_seconds().max(0) as f64 / 3600.0;
                hours * gpus.get(&g.id).copied().unwrap_or(0) as f64
            })
            .sum::<f64>())
}

/// What policy sees of a GPR that would get nodes of `gpus_per_node` GPUs.
pub(super) fn ask_of(spec: &GprSpec, gpus_per_node: i32) -> Ask<'_> {
    Ask {
        node_count: spec.node_count,
        // Whole nodes are handed over: a GPR asking for fewer GPUs per node still holds them all.
        gpus: i64::from(spec.node_count) * i64::from(gpus_per_node),
        gpu_shape: spec.gpu_shape.as_deref(),
        priority: spec.priority,
        duration_secs: spec.duration_secs,
        idle_timeout_secs: spec.idle_timeout_secs,
    }
}

/// Applies the slice policy; returns the approval reasons (empty when within policy).
pub(super) async fn evaluate_policy(
    txn: &DatabaseTransaction,
    policy_of: &slice::Model,
    spec: &GprSpec,
    gpus_per_node: i32,
    exclude: Option<i64>,
) -> Result<Vec<String>> {
    let now = Utc::now();
    let mut pending = gpr::Entity::find()
        .filter(gpr::Column::SliceId.eq(spec.slice_id))
        .filter(gpr::Column::Phase.is_in([GprPhase::PendingApproval, GprPhase::Queued]));
    if let Some(id) = exclude {
        pending = pending.filter(gpr::Column::Id.ne(id));
    }
    let usage = Usage {
        pending_gprs: pending.count(txn).await?,
        // Only a slice with a quota pays for counting its GPU-hours.
        gpu_hours_used: match policy_of.policy.gpu_hour_quota {
            Some(_) => gpu_hours_committed(txn, spec.slice_id, now - Duration::seconds(policy_of.policy.quota_period_secs), now, exclude).await?,
            None => 0.0,
        },
    };
    let verdict = policy::evaluate(&policy_of.policy, &ask_of(spec, gpus_per_node), &usage);
    validate::finish(verdict.rejections)?;
    Ok(verdict.approvals)
}
