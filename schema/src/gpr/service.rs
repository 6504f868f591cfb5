//! GPR rules that do not need the scheduler: validation against inventory and slice policy,
//! phase rules, optimistic concurrency, and an event for every change (in the same
//! transaction as the change, so history and state never disagree).

use super::policy::{self, Ask, Usage};
use crate::auth::{Caller, Visible};
use crate::error::{Error, ErrorCode, Result, UserError};
use crate::events::record_event;
use crate::inventory::service::{NodeQuery, nodes_select, summarize_pools};
use crate::validate;
use chrono::{DateTime, Duration, Utc};
use egs_entities::{
    ApprovalState, GprEventKind, GprPhase, IdList, Labels, ReleaseReason, SliceRole, gpr, gpr_event, gpr_node, node, slice, slice_cluster,
};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, PaginatorTrait, QueryFilter, Select, Set,
    TransactionTrait,
};
use std::collections::BTreeMap;

pub const MIN_PRIORITY: i32 = 1;
pub const MAX_PRIORITY: i32 = crate::slice::service::MAX_PRIORITY;
/// Priority of a GPR that names none: the bottom of the medium band.
pub const DEFAULT_PRIORITY: i32 = 101;
pub const MAX_NODES_PER_GPR: i32 = 1000;
/// Shortest reserved window; shorter ones cost more in provisioning than they give.
pub const MIN_DURATION_SECS: i64 = 60;
/// Longest reserved window regardless of policy.
pub const MAX_DURATION_SECS: i64 = 366 * 24 * 3600;
pub const MAX_LABELS: usize = 32;
/// Most clusters a GPR may prefer.
pub const MAX_PREFERRED_CLUSTERS: usize = 32;
/// How far ahead an earliest start may be.
pub const MAX_EARLIEST_START_SECS: i64 = 366 * 24 * 3600;
/// How far in the past an `earliestStartAt` may be (clock skew between client and server).
const EARLIEST_START_SKEW_SECS: i64 = 60;

/// What a new GPR asks for.
#[derive(Clone, Debug)]
pub struct GprSpec {
    pub slice_id: i64,
    pub name: String,
    pub node_count: i32,
    pub gpus_per_node: Option<i32>,
    pub min_gpu_memory_mib: Option<i64>,
    pub gpu_shape: Option<String>,
    pub instance_type: Option<String>,
    pub preferred_cluster_ids: Vec<i64>,
    pub priority: i32,
    pub duration_secs: i64,
    pub idle_timeout_secs: Option<i64>,
    pub preemptible: bool,
    pub requeue_on_failure: Option<bool>,
    pub earliest_start_at: Option<DateTime<Utc>>,
    pub labels: BTreeMap<String, String>,
    /// The `GPUProvisioningRequest` resource it comes from, if any.
    pub source: Option<GprSource>,
}

/// Where a GPR created by a controller comes from.
#[derive(Clone, Debug)]
pub struct GprSource {
    /// The resource's uid: at most one GPR per uid, so a controller retrying a create after a
    /// crash gets the GPR it created before.
    pub uid: String,
    /// `<cluster>/<namespace>/<name>`.
    pub reference: String,
}

/// Changes to a pending GPR; `None` keeps a field.
#[derive(Clone, Debug, Default)]
pub struct GprChanges {
    pub name: Option<String>,
    pub node_count: Option<i32>,
    pub gpus_per_node: Option<Option<i32>>,
    pub min_gpu_memory_mib: Option<Option<i64>>,
    pub gpu_shape: Option<Option<String>>,
    pub instance_type: Option<Option<String>>,
    pub preferred_cluster_ids: Option<Vec<i64>>,
    pub priority: Option<i32>,
    pub duration_secs: Option<i64>,
    pub idle_timeout_secs: Option<Option<i64>>,
    pub preemptible: Option<bool>,
    pub earliest_start_at: Option<Option<DateTime<Utc>>>,
    pub labels: Option<BTreeMap<String, String>>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct QueueQuery {
    pub slice_id: Option<i64>,
    pub cluster_id: Option<i64>,
    pub gpu_shape: Option<String>,
    pub instance_type: Option<String>,
    pub first: u64,
}

/// Waiting GPRs in queue order (admins; slice members may see their own slice's queue).
pub async fn queue(db: &DatabaseConnection, caller: &Caller, query: QueueQuery) -> Result<Vec<gpr::Model>> {
    match query.slice_id {
        Some(slice_id) if !caller.is_admin() => {
            caller.require_slice_role(db, slice_id, SliceRole::Viewer, "slice").await?;
        }
        _ => caller.require_admin()?,
    }
    queue_unchecked(db, query).await
}

/// [`queue`] for a caller whose access was checked already (a shared live view).
pub async fn queue_unchecked(db: &DatabaseConnection, query: QueueQuery) -> Result<Vec<gpr::Model>> {
    use sea_orm::{QueryOrder, QuerySelect};
    let mut select = gpr::Entity::find().filter(gpr::Column::Phase.eq(GprPhase::Queued));
    if let Some(slice_id) = query.slice_id {
        select = select.filter(gpr::Column::SliceId.eq(slice_id));
    }
    // A waiting GPR's planned pool is kept in its assignment columns.
    if let Some(cluster_id) = query.cluster_id {
        select = select.filter(gpr::Column::AssignedClusterId.eq(cluster_id));
    }
    if let Some(shape) = query.gpu_shape {
        select = select.filter(gpr::Column::AssignedGpuShape.eq(shape));
    }
    if let Some(instance_type) = query.instance_type {
        select = select.filter(gpr::Column::AssignedInstanceType.eq(instance_type));
    }
    // Start order across pools: positions count within the pools a GPR may use, so GPRs of
    // different pools share positions; the promise orders them all (unplanned ones last).
    use sea_orm::sea_query::NullOrdering;
    Ok(select
        .order_by_with_nulls(gpr::Column::StartNoLaterThan, sea_orm::Order::Asc, NullOrdering::Last)
        .order_by_with_nulls(gpr::Column::QueuePosition, sea_orm::Order::Asc, NullOrdering::Last)
        .order_by_asc(gpr::Column::Id)
        .limit(query.first)
        .all(db)
        .await?)
}

/// "Get wait time" for a GPR not yet submitted: validated like `createGpr` (an impossible ask
/// is refused with the reason), then answered by the scheduler core on the stored state. Each
/// row comes with the name of the slice's own GPR it waits behind, if any.
pub async fn wait_time_estimates(
    db: &DatabaseConnection,
    caller: &Caller,
    mut spec: GprSpec,
    scheduler: &crate::lifecycle::SchedulerHandle,
    now: DateTime<Utc>,
) -> Result<Vec<(crate::scheduler::PoolEstimate, Option<String>)>> {
    caller.require_person()?;
    caller.require_slice_role(db, spec.slice_id, SliceRole::Viewer, "slice").await?;
    let mut errors = Vec::new();
    check_spec_fields(&spec, Some(now), &mut errors);
    validate::finish(errors)?;
    let owner = slice::Entity::find_by_id(spec.slice_id).one(db).await?.ok_or(Error::NotFound("slice"))?;
    fill_idle_timeout(&mut spec, &owner.policy);
    let gpus_per_node = check_feasible(db, &spec, &owner.policy.allowed_shapes).await?;
    // What `createGpr` would refuse outright (a shape the slice may not use, a window over its
    // maximum) is refused here the same way; what would need approval still gets estimates.
    validate::finish(policy::evaluate(&owner.policy, &ask_of(&spec, gpus_per_node), &Usage::default()).rejections)?;
    let request = crate::scheduler::Request {
        id: -1,
        slice: spec.slice_id,
        nodes: spec.node_count.max(1) as u32,
        gpus_per_node: spec.gpus_per_node.map(|g| g.max(0) as u32),
        min_gpu_memory_mib: spec.min_gpu_memory_mib,
        gpu_shape: spec.gpu_shape,
        instance_type: spec.instance_type,
        preferred_clusters: spec.preferred_cluster_ids,
        priority: spec.priority,
        duration: spec.duration_secs,
        earliest_start: spec.earliest_start_at.map(|t| t.timestamp()),
        submitted_at: now.timestamp(),
        preemptible: true,
        requeue: false,
        idle_timeout: None,
    };
    let rows = crate::lifecycle::state::wait_time(db, scheduler, &request, now).await?;
    // The slice's own GPR is the caller's to see (they are a member).
    let own: Vec<i64> = rows.iter().filter_map(|r| r.behind_own.map(|o| o.0)).collect();
    let names: BTreeMap<i64, String> = if own.is_empty() {
        BTreeMap::new()
    } else {
        gpr::Entity::find().filter(gpr::Column::Id.is_in(own)).all(db).await?.into_iter().map(|g| (g.id, g.name)).collect()
    };
    Ok(rows
        .into_iter()
        .map(|r| {
            let name = r.behind_own.and_then(|o| names.get(&o.0).cloned());
            (r, name)
        })
        .collect())
}

#[derive(Clone, Debug, Default)]
pub struct GprQuery {
    pub slice_id: Option<i64>,
    pub phases: Vec<GprPhase>,
}

pub async fn gprs_select(db: &DatabaseConnection, caller: &Caller, query: &GprQuery) -> Result<Select<gpr::Entity>> {
    caller.require_person()?;
    let mut select = gpr::Entity::find();
    if let Visible::Only(ids) = caller.visible_slices(db).await? {
        select = select.filter(gpr::Column::SliceId.is_in(ids));
    }
    if let Some(slice_id) = query.slice_id {
        select = select.filter(gpr::Column::SliceId.eq(slice_id));
    }
    if !query.phases.is_empty() {
        select = select.filter(gpr::Column::Phase.is_in(query.phases.iter().copied()));
    }
    Ok(select)
}

/// A GPR the caller may see; others read as missing.
pub async fn find_gpr(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<gpr::Model> {
    caller.require_person()?;
    let found = gpr::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("GPR"))?;
    caller.require_slice_role(db, found.slice_id, SliceRole::Viewer, "GPR").await?;
    Ok(found)
}

/// A GPR the caller may change (editor or better in its slice).
async fn find_gpr_for_change(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<gpr::Model> {
    caller.require_person()?;
    let found = gpr::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("GPR"))?;
    caller.require_slice_role(db, found.slice_id, SliceRole::Editor, "GPR").await?;
    Ok(found)
}

pub fn events_select(visible: &Visible, gpr_id: Option<i64>, slice_id: Option<i64>) -> Select<gpr_event::Entity> {
    let mut select = gpr_event::Entity::find();
    if let Visible::Only(ids) = visible {
        select = select.filter(gpr_event::Column::SliceId.is_in(ids.clone()));
    }
    if let Some(gpr_id) = gpr_id {
        select = select.filter(gpr_event::Column::GprId.eq(gpr_id));
    }
    if let Some(slice_id) = slice_id {
        select = select.filter(gpr_event::Column::SliceId.eq(slice_id));
    }
    select
}

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
fn check_spec_fields(spec: &GprSpec, now: Option<DateTime<Utc>>, errors: &mut Vec<UserError>) {
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
async fn check_feasible(db: &impl ConnectionTrait, spec: &GprSpec, allowed_shapes: &[String]) -> Result<i32> {
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
            format!("cluster {} is not one of the slice's clusters", crate::ids::encode(crate::ids::Kind::Cluster, *stray).0),
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
fn fill_idle_timeout(spec: &mut GprSpec, policy: &egs_entities::SlicePolicy) {
    if spec.idle_timeout_secs.is_none() {
        spec.idle_timeout_secs = policy.default_idle_timeout_secs.or(policy.max_idle_timeout_secs);
    }
}

/// GPU-hours the slice has committed in the quota period from `since`: what finished GPRs used,
/// the whole windows of GPRs that hold nodes, and the windows of queued and approved GPRs, each
/// at the GPUs of the nodes it holds or the pool it is planned in (an unplanned one at the
/// largest pool it may use). `exclude` leaves out the GPR being edited.
async fn gpu_hours_committed(
    db: &impl ConnectionTrait,
    slice_id: i64,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    exclude: Option<i64>,
) -> Result<f64> {
    let waiting = gpr::Entity::find()
        .filter(gpr::Column::SliceId.eq(slice_id))
        .filter(sea_orm::Condition::any().add(gpr::Column::Phase.eq(GprPhase::Queued)).add(
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
fn ask_of(spec: &GprSpec, gpus_per_node: i32) -> Ask<'_> {
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
async fn evaluate_policy(
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

pub async fn create_gpr(db: &DatabaseConnection, caller: &Caller, mut spec: GprSpec) -> Result<gpr::Model> {
    caller.require_person()?;
    caller.require_slice_role(db, spec.slice_id, SliceRole::Editor, "slice").await?;
    let now = Utc::now();
    let mut errors = Vec::new();
    check_spec_fields(&spec, Some(now), &mut errors);
    validate::finish(errors)?;

    let txn = db.begin().await?;
    if let Some(source) = &spec.source
        && let Some(existing) = gpr::Entity::find().filter(gpr::Column::SourceUid.eq(source.uid.clone())).one(&txn).await?
    {
        return Ok(existing);
    }
    let owner = slice::Entity::find_by_id(spec.slice_id).one(&txn).await?.ok_or(Error::NotFound("slice"))?;
    fill_idle_timeout(&mut spec, &owner.policy);
    let gpus_per_node = check_feasible(&txn, &spec, &owner.policy.allowed_shapes).await?;
    let approvals = evaluate_policy(&txn, &owner, &spec, gpus_per_node, None).await?;
    let (phase, approval, approval_reason) = if approvals.is_empty() {
        (GprPhase::Queued, ApprovalState::NotRequired, None)
    } else {
        (GprPhase::PendingApproval, ApprovalState::Pending, Some(approvals.join("; ")))
    };
    let created = gpr::ActiveModel {
        slice_id: Set(spec.slice_id),
        name: Set(spec.name),
        requester_id: Set(caller.record.user_id),
        node_count: Set(spec.node_count),
        gpus_per_node: Set(spec.gpus_per_node),
        min_gpu_memory_mib: Set(spec.min_gpu_memory_mib),
        gpu_shape: Set(spec.gpu_shape),
        instance_type: Set(spec.instance_type),
        preferred_cluster_ids: Set(IdList(spec.preferred_cluster_ids)),
        priority: Set(spec.priority),
        duration_secs: Set(spec.duration_secs),
        idle_timeout_secs: Set(spec.idle_timeout_secs),
        preemptible: Set(spec.preemptible),
        requeue_on_failure: Set(spec.requeue_on_failure.unwrap_or(owner.policy.requeue_on_failure)),
        earliest_start_at: Set(spec.earliest_start_at),
        labels: Set(Labels(spec.labels)),
        phase: Set(phase),
        reason: Set(approval_reason.clone()),
        approval: Set(approval),
        approval_reason: Set(approval_reason.clone()),
        queue_position: Set(None),
        start_no_later_than: Set(None),
        estimated_start_at: Set(None),
        assigned_cluster_id: Set(None),
        assigned_instance_type: Set(None),
        assigned_gpu_shape: Set(None),
        provisioned_at: Set(None),
        exit_at: Set(None),
        completed_at: Set(None),
        release_reason: Set(None),
        preempted_by_id: Set(None),
        milestones_done: Set(0),
        version: Set(1),
        source_uid: Set(spec.source.as_ref().map(|s| s.uid.clone())),
        source_ref: Set(spec.source.as_ref().map(|s| s.reference.clone())),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    let actor = caller.actor();
    record_event(
        &txn,
        &created,
        GprEventKind::Created,
        format!("{} asked for {} node(s) for {}", actor, created.node_count, crate::scalars::format_duration(created.duration_secs)),
        actor,
    )
    .await?;
    match approval_reason {
        None => record_event(&txn, &created, GprEventKind::Queued, "queued", actor).await?,
        Some(reason) => record_event(&txn, &created, GprEventKind::ApprovalRequired, format!("needs an admin's approval: {reason}"), actor).await?,
    };
    txn.commit().await?;
    Ok(created)
}

/// Changes for a pending GPR that is ranked anew (its size, window or priority changed): its
/// last plan no longer binds the scheduler, which plans it afresh on the next pass. The last
/// promise stays (without its pool) so that a later one is reported as moved by its own change.
/// A provisioned GPR's assignment is kept.
fn forget_plan() -> gpr::ActiveModel {
    gpr::ActiveModel {
        assigned_cluster_id: Set(None),
        assigned_instance_type: Set(None),
        assigned_gpu_shape: Set(None),
        estimated_start_at: Set(None),
        ..Default::default()
    }
}

/// Writes `changes` if the row is still at `expected_version`; bumps the version.
async fn save_versioned(txn: &DatabaseTransaction, before: &gpr::Model, mut changes: gpr::ActiveModel) -> Result<gpr::Model> {
    changes.version = Set(before.version + 1);
    changes.updated_at = Set(Utc::now());
    let updated = gpr::Entity::update_many()
        .set(changes)
        .filter(gpr::Column::Id.eq(before.id))
        .filter(gpr::Column::Version.eq(before.version))
        .exec(txn)
        .await?;
    if updated.rows_affected != 1 {
        return Err(stale(before.version));
    }
    gpr::Entity::find_by_id(before.id).one(txn).await?.ok_or(Error::NotFound("GPR"))
}

/// Times a change is read and tried again after losing a race to another writer.
const RACE_RETRIES: usize = 4;

/// Runs a read-check-write of one GPR. A caller who gave no `version` asked for no optimistic
/// check, so a write that lost a race (the scheduler planned the GPR in between) is read
/// again and retried instead of answered with a `CONFLICT` the caller did not ask for.
async fn unless_raced<T, F, Fut>(version: Option<i32>, mut attempt: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    for _ in 0..RACE_RETRIES {
        match attempt().await {
            Err(Error::User(errors))
                if version.is_none() && errors.iter().any(|e| e.code == ErrorCode::Conflict && e.field.last().is_some_and(|f| f == "version")) => {}
            other => return other,
        }
    }
    attempt().await
}

fn stale(read: i32) -> Error {
    Error::conflict("version", format!("the GPR changed since version {read}; read it again and retry"))
}

fn check_version(found: &gpr::Model, expected: Option<i32>) -> Result<()> {
    match expected {
        Some(v) if v != found.version => {
            Err(Error::conflict("version", format!("the GPR is at version {}, not {v}; read it again and retry", found.version)))
        }
        _ => Ok(()),
    }
}

fn phase_error(found: &gpr::Model, action: &str, allowed: &str) -> Error {
    Error::conflict("id", format!("cannot {action} a GPR that is {}; only {allowed}", found.phase.as_str()))
}

pub async fn update_gpr(db: &DatabaseConnection, caller: &Caller, id: i64, version: i32, changes: GprChanges) -> Result<gpr::Model> {
    let found = find_gpr_for_change(db, caller, id).await?;
    check_version(&found, Some(version))?;
    if !found.phase.is_pending() {
        return Err(phase_error(&found, "edit", "pending GPRs (PENDING_APPROVAL, QUEUED) can be edited"));
    }
    let mut spec = GprSpec {
        slice_id: found.slice_id,
        name: changes.name.clone().unwrap_or_else(|| found.name.clone()),
        node_count: changes.node_count.unwrap_or(found.node_count),
        gpus_per_node: changes.gpus_per_node.unwrap_or(found.gpus_per_node),
        min_gpu_memory_mib: changes.min_gpu_memory_mib.unwrap_or(found.min_gpu_memory_mib),
        gpu_shape: changes.gpu_shape.clone().unwrap_or_else(|| found.gpu_shape.clone()),
        instance_type: changes.instance_type.clone().unwrap_or_else(|| found.instance_type.clone()),
        preferred_cluster_ids: changes.preferred_cluster_ids.clone().unwrap_or_else(|| found.preferred_cluster_ids.0.clone()),
        priority: changes.priority.unwrap_or(found.priority),
        duration_secs: changes.duration_secs.unwrap_or(found.duration_secs),
        idle_timeout_secs: changes.idle_timeout_secs.unwrap_or(found.idle_timeout_secs),
        preemptible: changes.preemptible.unwrap_or(found.preemptible),
        requeue_on_failure: Some(found.requeue_on_failure),
        earliest_start_at: changes.earliest_start_at.unwrap_or(found.earliest_start_at),
        labels: changes.labels.clone().unwrap_or_else(|| found.labels.0.clone()),
        source: None,
    };
    let mut errors = Vec::new();
    // An unchanged earliest start that has since passed is fine; only a new one must be ahead.
    check_spec_fields(&spec, changes.earliest_start_at.is_some().then(Utc::now), &mut errors);
    validate::finish(errors)?;
    let changed = describe_changes(&found, &spec);
    if changed.is_empty() {
        return Ok(found);
    }

    let txn = db.begin().await?;
    let owner = slice::Entity::find_by_id(found.slice_id).one(&txn).await?.ok_or(Error::NotFound("slice"))?;
    fill_idle_timeout(&mut spec, &owner.policy);
    let gpus_per_node = check_feasible(&txn, &spec, &owner.policy.allowed_shapes).await?;
    let approvals = evaluate_policy(&txn, &owner, &spec, gpus_per_node, Some(found.id)).await?;
    // Its name, labels, idle timeout or preemptibility do not change where or when it runs:
    // the plan (and the promise) stays.
    let base = if changes_plan(&found, &spec) { forget_plan() } else { <gpr::ActiveModel as Default>::default() };
    let mut model = gpr::ActiveModel {
        name: Set(spec.name.clone()),
        node_count: Set(spec.node_count),
        gpus_per_node: Set(spec.gpus_per_node),
        min_gpu_memory_mib: Set(spec.min_gpu_memory_mib),
        gpu_shape: Set(spec.gpu_shape.clone()),
        instance_type: Set(spec.instance_type.clone()),
        preferred_cluster_ids: Set(IdList(spec.preferred_cluster_ids.clone())),
        priority: Set(spec.priority),
        duration_secs: Set(spec.duration_secs),
        idle_timeout_secs: Set(spec.idle_timeout_secs),
        preemptible: Set(spec.preemptible),
        earliest_start_at: Set(spec.earliest_start_at),
        labels: Set(Labels(spec.labels.clone())),
        ..base
    };
    // An approval covers what was approved, not what the owner edits in afterwards: an edit of
    // size, shape, window or priority that is over policy asks again (name or labels do not).
    let reapproval = found.approval == ApprovalState::Approved && changes_plan(&found, &spec);
    let needs_approval = !approvals.is_empty() && (found.approval != ApprovalState::Approved || reapproval);
    let newly_held = needs_approval && found.phase == GprPhase::Queued;
    let released = approvals.is_empty() && found.phase == GprPhase::PendingApproval;
    if needs_approval {
        let reason = approvals.join("; ");
        model.phase = Set(GprPhase::PendingApproval);
        model.approval = Set(ApprovalState::Pending);
        model.approval_reason = Set(Some(reason.clone()));
        model.reason = Set(Some(reason));
    } else if released {
        model.phase = Set(GprPhase::Queued);
        model.approval = Set(ApprovalState::NotRequired);
        model.approval_reason = Set(None);
        model.reason = Set(None);
    }
    let updated = save_versioned(&txn, &found, model).await?;
    let actor = caller.actor();
    record_event(&txn, &updated, GprEventKind::Edited, format!("changed {}", changed.join(", ")), actor).await?;
    if newly_held {
        let again = if reapproval { "the edit is over policy; it needs an admin's approval again" } else { "needs an admin's approval" };
        record_event(&txn, &updated, GprEventKind::ApprovalRequired, format!("{again}: {}", approvals.join("; ")), actor).await?;
    } else if released {
        record_event(&txn, &updated, GprEventKind::Queued, "back within policy; queued", actor).await?;
    }
    txn.commit().await?;
    Ok(updated)
}

/// Whether an edit changes what the scheduler plans: the size, the shape, where, the priority
/// or the window.
fn changes_plan(before: &gpr::Model, after: &GprSpec) -> bool {
    before.node_count != after.node_count
        || before.gpus_per_node != after.gpus_per_node
        || before.min_gpu_memory_mib != after.min_gpu_memory_mib
        || before.gpu_shape != after.gpu_shape
        || before.instance_type != after.instance_type
        || before.preferred_cluster_ids.0 != after.preferred_cluster_ids
        || before.priority != after.priority
        || before.duration_secs != after.duration_secs
        || before.earliest_start_at != after.earliest_start_at
}

fn describe_changes(before: &gpr::Model, after: &GprSpec) -> Vec<String> {
    let mut changed = Vec::new();
    let mut note = |name: &str, differs: bool, detail: String| {
        if differs {
            changed.push(if detail.is_empty() { name.to_owned() } else { format!("{name} {detail}") });
        }
    };
    note("name", before.name != after.name, format!("→ {}", after.name));
    note("nodeCount", before.node_count != after.node_count, format!("{} → {}", before.node_count, after.node_count));
    note("gpusPerNode", before.gpus_per_node != after.gpus_per_node, String::new());
    note("minGpuMemoryMib", before.min_gpu_memory_mib != after.min_gpu_memory_mib, String::new());
    note("gpuShape", before.gpu_shape != after.gpu_shape, String::new());
    note("instanceType", before.instance_type != after.instance_type, String::new());
    note("preferredClusters", before.preferred_cluster_ids.0 != after.preferred_cluster_ids, String::new());
    note("priority", before.priority != after.priority, format!("{} → {}", before.priority, after.priority));
    note(
        "duration",
        before.duration_secs != after.duration_secs,
        format!("{} → {}", crate::scalars::format_duration(before.duration_secs), crate::scalars::format_duration(after.duration_secs)),
    );
    note("idleTimeout", before.idle_timeout_secs != after.idle_timeout_secs, String::new());
    note("preemptible", before.preemptible != after.preemptible, String::new());
    note("earliestStartAt", before.earliest_start_at != after.earliest_start_at, String::new());
    note("labels", before.labels.0 != after.labels, String::new());
    changed
}

pub async fn cancel_gpr(db: &DatabaseConnection, caller: &Caller, id: i64, version: Option<i32>) -> Result<gpr::Model> {
    unless_raced(version, || cancel_gpr_once(db, caller, id, version)).await
}

async fn cancel_gpr_once(db: &DatabaseConnection, caller: &Caller, id: i64, version: Option<i32>) -> Result<gpr::Model> {
    let found = find_gpr_for_change(db, caller, id).await?;
    check_version(&found, version)?;
    if !found.phase.is_pending() {
        let hint = if found.phase == GprPhase::Provisioned { "; use earlyReleaseGpr to give back its nodes" } else { "" };
        return Err(Error::conflict("id", format!("cannot cancel a GPR that is {}; only pending GPRs can be cancelled{hint}", found.phase.as_str())));
    }
    let txn = db.begin().await?;
    let now = Utc::now();
    let model = gpr::ActiveModel {
        phase: Set(GprPhase::Cancelled),
        reason: Set(Some(format!("cancelled by {}", caller.actor()))),
        queue_position: Set(None),
        start_no_later_than: Set(None),
        estimated_start_at: Set(None),
        completed_at: Set(Some(now)),
        ..Default::default()
    };
    let updated = save_versioned(&txn, &found, model).await?;
    record_event(&txn, &updated, GprEventKind::Cancelled, format!("cancelled by {}", caller.actor()), caller.actor()).await?;
    txn.commit().await?;
    Ok(updated)
}

/// Gives a provisioned GPR's nodes back before its window ends.
pub async fn early_release_gpr(db: &DatabaseConnection, caller: &Caller, id: i64, version: Option<i32>) -> Result<gpr::Model> {
    unless_raced(version, || early_release_gpr_once(db, caller, id, version)).await
}

async fn early_release_gpr_once(db: &DatabaseConnection, caller: &Caller, id: i64, version: Option<i32>) -> Result<gpr::Model> {
    let found = find_gpr_for_change(db, caller, id).await?;
    check_version(&found, version)?;
    if found.phase != GprPhase::Provisioned {
        return Err(phase_error(&found, "early-release", "PROVISIONED GPRs can be early-released"));
    }
    let txn = db.begin().await?;
    let model = gpr::ActiveModel {
        phase: Set(GprPhase::Releasing),
        release_reason: Set(Some(ReleaseReason::EarlyReleased)),
        reason: Set(Some(format!("early-released by {}", caller.actor()))),
        ..Default::default()
    };
    let updated = save_versioned(&txn, &found, model).await?;
    record_event(&txn, &updated, GprEventKind::EarlyReleased, format!("early-released by {}", caller.actor()), caller.actor()).await?;
    record_event(&txn, &updated, GprEventKind::Releasing, "releasing its nodes", caller.actor()).await?;
    txn.commit().await?;
    Ok(updated)
}

/// Admins move a GPR in the queue by changing its priority.
pub async fn set_gpr_priority(db: &DatabaseConnection, caller: &Caller, id: i64, priority: i32, version: Option<i32>) -> Result<gpr::Model> {
    unless_raced(version, || set_gpr_priority_once(db, caller, id, priority, version)).await
}

async fn set_gpr_priority_once(db: &DatabaseConnection, caller: &Caller, id: i64, priority: i32, version: Option<i32>) -> Result<gpr::Model> {
    caller.require_admin()?;
    let mut errors = Vec::new();
    validate::range("priority", priority.into(), MIN_PRIORITY.into(), MAX_PRIORITY.into(), &mut errors);
    validate::finish(errors)?;
    let found = gpr::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("GPR"))?;
    check_version(&found, version)?;
    if found.phase.is_terminal() {
        return Err(phase_error(&found, "re-prioritise", "unfinished GPRs can be re-prioritised"));
    }
    if found.priority == priority {
        return Ok(found);
    }
    let txn = db.begin().await?;
    // A waiting GPR is ranked anew; a running one keeps its nodes and assignment.
    let base = if found.phase.is_pending() { forget_plan() } else { <gpr::ActiveModel as Default>::default() };
    let updated = save_versioned(&txn, &found, gpr::ActiveModel { priority: Set(priority), ..base }).await?;
    record_event(&txn, &updated, GprEventKind::PriorityChanged, format!("priority {} → {priority}", found.priority), caller.actor()).await?;
    txn.commit().await?;
    Ok(updated)
}

pub async fn approve_gpr(db: &DatabaseConnection, caller: &Caller, id: i64, note: Option<String>, version: Option<i32>) -> Result<gpr::Model> {
    decide(db, caller, id, note, version, true).await
}

pub async fn reject_gpr(db: &DatabaseConnection, caller: &Caller, id: i64, note: Option<String>, version: Option<i32>) -> Result<gpr::Model> {
    decide(db, caller, id, note, version, false).await
}

async fn decide(db: &DatabaseConnection, caller: &Caller, id: i64, note: Option<String>, version: Option<i32>, approve: bool) -> Result<gpr::Model> {
    unless_raced(version, || decide_once(db, caller, id, note.clone(), version, approve)).await
}

async fn decide_once(
    db: &DatabaseConnection,
    caller: &Caller,
    id: i64,
    note: Option<String>,
    version: Option<i32>,
    approve: bool,
) -> Result<gpr::Model> {
    caller.require_admin()?;
    if let Some(note) = &note {
        let mut errors = Vec::new();
        validate::text("reason", note, 1000, &mut errors);
        validate::finish(errors)?;
    }
    let found = gpr::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("GPR"))?;
    check_version(&found, version)?;
    if found.phase != GprPhase::PendingApproval {
        return Err(phase_error(&found, if approve { "approve" } else { "reject" }, "PENDING_APPROVAL GPRs await a decision"));
    }
    let actor = caller.actor();
    let suffix = note.as_deref().map(|n| format!(": {n}")).unwrap_or_default();
    let txn = db.begin().await?;
    let updated = if approve {
        let model =
            gpr::ActiveModel { phase: Set(GprPhase::Queued), approval: Set(ApprovalState::Approved), reason: Set(None), ..Default::default() };
        let updated = save_versioned(&txn, &found, model).await?;
        record_event(&txn, &updated, GprEventKind::Approved, format!("approved by {actor}{suffix}"), actor).await?;
        record_event(&txn, &updated, GprEventKind::Queued, "queued", actor).await?;
        updated
    } else {
        let model = gpr::ActiveModel {
            phase: Set(GprPhase::Rejected),
            approval: Set(ApprovalState::Rejected),
            reason: Set(Some(format!("rejected by {actor}{suffix}"))),
            completed_at: Set(Some(Utc::now())),
            ..Default::default()
        };
        let updated = save_versioned(&txn, &found, model).await?;
        record_event(&txn, &updated, GprEventKind::Rejected, format!("rejected by {actor}{suffix}"), actor).await?;
        updated
    };
    txn.commit().await?;
    Ok(updated)
}
