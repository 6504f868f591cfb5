//! GPR rules that do not need the scheduler: validation against inventory and slice policy,
//! phase rules, optimistic concurrency, and an event for every change (in the same
//! transaction as the change, so history and state never disagree).

use super::checks::{check_feasible, check_spec_fields, evaluate_policy, fill_idle_timeout};
use super::reads::find_gpr_for_change;
use super::spec::{GprChanges, GprSpec, MAX_PRIORITY, MIN_PRIORITY};
use super::versioned::{check_version, phase_error, save_versioned, unless_raced};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::events::record_event;
use crate::ports::Planner;
use crate::validate;
use chrono::Utc;
use egs_entities::{ApprovalState, GprEventKind, GprPhase, IdList, Labels, ReleaseReason, SliceRole, gpr, gpr_template, slice};
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, Set, TransactionTrait};

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
        start_p10_at: Set(None),
        start_p90_at: Set(None),
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
        template_id: Set(spec.template_id),
        workload: Set(spec.workload),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    let actor = caller.actor();
    let from = match created.template_id {
        Some(id) => gpr_template::Entity::find_by_id(id).one(&txn).await?.map(|t| format!(" from template `{}`", t.name)).unwrap_or_default(),
        None => String::new(),
    };
    let asked = format!("{} asked for {} node(s) for {}{from}", actor, created.node_count, egs_wire::duration::format_iso(created.duration_secs));
    record_event(&txn, &created, GprEventKind::Created, asked, actor).await?;
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
        start_p10_at: Set(None),
        start_p90_at: Set(None),
        ..Default::default()
    }
}

pub async fn update_gpr(db: &DatabaseConnection, caller: &Caller, id: i64, version: i32, changes: GprChanges) -> Result<gpr::Model> {
    let found = find_gpr_for_change(db, caller, id).await?;
    check_version(&found, Some(version))?;
    if !found.phase.is_pending() {
        return Err(phase_error(&found, "edit", "pending GPRs (PENDING_APPROVAL, QUEUED) can be edited"));
    }
    let mut spec = GprSpec::of_stored(&found).changed_by(&changes);
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
        format!("{} → {}", egs_wire::duration::format_iso(before.duration_secs), egs_wire::duration::format_iso(after.duration_secs)),
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
        start_p10_at: Set(None),
        start_p90_at: Set(None),
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

/// Takes a provisioned GPR's nodes back and puts it in the queue again at its priority (admins):
/// for maintenance, or to make room. The owner sees `reason` on the GPR and in its events.
pub async fn evict_gpr(db: &DatabaseConnection, caller: &Caller, id: i64, reason: &str, version: Option<i32>) -> Result<gpr::Model> {
    caller.require_admin()?;
    let reason = validate::reason("reason", reason, "the GPR's owner")?;
    unless_raced(version, || async {
        let found = gpr::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("GPR"))?;
        check_version(&found, version)?;
        let txn = db.begin().await?;
        let updated = evict_in(&txn, &found, &reason, caller.actor()).await?;
        txn.commit().await?;
        Ok(updated)
    })
    .await
}

/// Starts the release of `found` (PROVISIONED) as an eviction: when its nodes are back it is
/// QUEUED again (`REQUEUED`), not completed.
pub(crate) async fn evict_in(txn: &sea_orm::DatabaseTransaction, found: &gpr::Model, reason: &str, actor: &str) -> Result<gpr::Model> {
    if found.phase != GprPhase::Provisioned {
        return Err(phase_error(found, "evict", "PROVISIONED GPRs can be evicted"));
    }
    let said = format!("evicted by {actor}: {reason}");
    let model = gpr::ActiveModel {
        phase: Set(GprPhase::Releasing),
        release_reason: Set(Some(ReleaseReason::Evicted)),
        reason: Set(Some(said.clone())),
        ..Default::default()
    };
    let updated = save_versioned(txn, found, model).await?;
    let message = format!("{said}; it goes back to the queue at priority {} once its nodes are released", found.priority);
    record_event(txn, &updated, GprEventKind::Evicted, message, actor).await?;
    record_event(txn, &updated, GprEventKind::Releasing, "releasing its nodes", actor).await?;
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

/// Approves a GPR held for being over policy, or a provisioned GPR's requested extension.
pub async fn approve_gpr(
    db: &DatabaseConnection,
    caller: &Caller,
    planner: &dyn Planner,
    id: i64,
    note: Option<String>,
    version: Option<i32>,
) -> Result<gpr::Model> {
    decide(db, caller, planner, id, note, version, true).await
}

/// Rejects a GPR held for being over policy, or a provisioned GPR's requested extension.
pub async fn reject_gpr(
    db: &DatabaseConnection,
    caller: &Caller,
    planner: &dyn Planner,
    id: i64,
    note: Option<String>,
    version: Option<i32>,
) -> Result<gpr::Model> {
    decide(db, caller, planner, id, note, version, false).await
}

async fn decide(
    db: &DatabaseConnection,
    caller: &Caller,
    planner: &dyn Planner,
    id: i64,
    note: Option<String>,
    version: Option<i32>,
    approve: bool,
) -> Result<gpr::Model> {
    unless_raced(version, || decide_once(db, caller, planner, id, note.clone(), version, approve)).await
}

async fn decide_once(
    db: &DatabaseConnection,
    caller: &Caller,
    planner: &dyn Planner,
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
    if found.phase == GprPhase::Provisioned {
        return super::extend::decide(db, caller, planner, &found, note.as_deref(), approve).await;
    }
    if found.phase != GprPhase::PendingApproval {
        let what = "PENDING_APPROVAL GPRs and requested extensions of PROVISIONED ones await a decision";
        return Err(phase_error(&found, if approve { "approve" } else { "reject" }, what));
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
