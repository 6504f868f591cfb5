//! Extending a provisioned GPR's window ("User can extend a GPR with a small grace period",
//! seed 001). An extension never moves a waiting GPR's promise later: the room is asked of the
//! scheduler itself ([`egs_scheduler::Scheduler::extension_room`]), and on the leader no pass
//! runs between that answer and the stored change. Within the slice's extension grace (counted
//! over all of a GPR's extensions) and the slice's GPU-hour quota it applies at once; beyond
//! either, it waits for an admin, who
//! decides with `approveGpr` / `rejectGpr`, and the room is checked again then.

use super::reads::find_gpr;
use super::versioned::{check_version, phase_error, save_versioned, unless_raced};
use crate::auth::Caller;
use crate::auth::Principal;
use crate::error::{Error, Result};
use crate::events::record_event;
use crate::ports::{ExtensionFit, Planner, PlannerHold};
use crate::validate;
use chrono::{DateTime, Duration, Utc};
use egs_entities::{GprEventKind, GprPhase, gpr, gpr_node, node, slice};
use egs_scheduler::ExtensionRoom;
use egs_wire::duration::format_iso;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, Set, TransactionTrait};

/// Extensions are planned in whole minutes.
pub const STEP_SECS: i64 = 60;
/// Most one extension may add (and most the room is looked for): a week.
pub const MAX_SECS: i64 = 7 * 24 * 3600;

/// How far a GPR's window may be extended now, and why not further.
#[derive(Clone, Debug, PartialEq)]
pub struct Room {
    /// Seconds it may be extended by now without a waiting GPR's promise moving later.
    pub now: i64,
    /// Of those, how many need no approval (what is left of the slice's grace and GPU-hour quota).
    pub without_approval: i64,
    /// Why not more than `now`, in words; `None` when a week fits.
    pub limited_by: Option<String>,
}

/// The room of a GPR the caller may see; zero, with the reason, when it is not provisioned.
pub async fn room(db: &DatabaseConnection, caller: &Caller, planner: &dyn Planner, id: i64) -> Result<Room> {
    let found = find_gpr(db, caller, id).await?;
    if found.phase != GprPhase::Provisioned {
        let why = format!("only PROVISIONED GPRs can be extended; this one is {}", found.phase.as_str());
        return Ok(Room { now: 0, without_approval: 0, limited_by: Some(why) });
    }
    let now = planner.now();
    let (free, _) = without_approval(db, &found, now).await?;
    // A question, not a change: the search (a plan per step of it) runs on a shared copy, with
    // the leader's passes free to go on.
    let room = planner.extension_room(Principal::of(Some(caller)), db, found.id, MAX_SECS, STEP_SECS, now).await?;
    let (room, limited_by) = described(room, db, caller).await?;
    Ok(Room { now: room, without_approval: room.min(free), limited_by })
}

/// Asks for `by` more seconds of `id`'s window (slice editors): applied at once within the
/// slice's grace, otherwise left for an admin's decision. Refused, changing nothing, when it
/// would delay a waiting GPR's promise (the answer says by how much it may be extended now).
pub async fn extend_gpr(
    db: &DatabaseConnection,
    caller: &Caller,
    planner: &dyn Planner,
    id: i64,
    by: i64,
    version: Option<i32>,
) -> Result<gpr::Model> {
    let mut errors = Vec::new();
    validate::range("by", by, STEP_SECS, MAX_SECS, &mut errors);
    validate::finish(errors)?;
    unless_raced(version, || extend_once(db, caller, planner, id, by, version)).await
}

async fn extend_once(db: &DatabaseConnection, caller: &Caller, planner: &dyn Planner, id: i64, by: i64, version: Option<i32>) -> Result<gpr::Model> {
    let found = super::reads::find_gpr_for_change(db, caller, id).await?;
    check_version(&found, version)?;
    if found.phase != GprPhase::Provisioned {
        return Err(phase_error(&found, "extend", "PROVISIONED GPRs can be extended"));
    }
    if let Some(waiting) = found.extension_requested_secs {
        return Err(Error::conflict("by", format!("an extension by {} already waits for an admin's decision", format_iso(waiting))));
    }
    let now = planner.now();
    // Held until the change is stored: on the leader, no pass makes a promise meanwhile. Under
    // it, one plan says whether `by` fits; how much would is searched only for a refusal, after.
    let held = held_if_it_fits(db, caller, planner, found.id, by, now).await?;
    let (free, over_quota) = without_approval(db, &found, now).await?;
    let actor = caller.actor();
    let txn = db.begin().await?;
    let updated = if by <= free {
        let (changes, message) = lengthened(&found, by, now, format!("extended by {actor}"));
        let updated = save_versioned(&txn, &found, changes).await?;
        record_event(&txn, &updated, GprEventKind::Extended, message, actor).await?;
        updated
    } else {
        let changes = gpr::ActiveModel { extension_requested_secs: Set(Some(by)), ..Default::default() };
        let updated = save_versioned(&txn, &found, changes).await?;
        let why = over_quota.unwrap_or_else(|| format!("over the slice's extension grace ({} left of it)", format_iso(free)));
        let message = format!("{actor} asked to extend the window by {}; needs an admin's approval: {why}", format_iso(by));
        record_event(&txn, &updated, GprEventKind::ExtensionRequested, message, actor).await?;
        updated
    };
    txn.commit().await?;
    drop(held);
    Ok(updated)
}

/// An admin's decision on a waiting extension: approved, the window grows if the room is still
/// there (else refused with the room now, and the request stays); rejected, it is dropped.
pub async fn decide(
    db: &DatabaseConnection,
    caller: &Caller,
    planner: &dyn Planner,
    found: &gpr::Model,
    note: Option<&str>,
    approve: bool,
) -> Result<gpr::Model> {
    let Some(by) = found.extension_requested_secs else {
        return Err(phase_error(
            found,
            if approve { "approve" } else { "reject" },
            "PENDING_APPROVAL GPRs and requested extensions await a decision",
        ));
    };
    let actor = caller.actor();
    let suffix = note.map(|n| format!(": {n}")).unwrap_or_default();
    if !approve {
        let txn = db.begin().await?;
        let changes = gpr::ActiveModel { extension_requested_secs: Set(None), ..Default::default() };
        let updated = save_versioned(&txn, found, changes).await?;
        let message = format!("the extension by {} was rejected by {actor}{suffix}", format_iso(by));
        record_event(&txn, &updated, GprEventKind::ExtensionRejected, message, actor).await?;
        txn.commit().await?;
        return Ok(updated);
    }
    let now = planner.now();
    let held = held_if_it_fits(db, caller, planner, found.id, by, now).await?;
    let txn = db.begin().await?;
    let (mut changes, message) = lengthened(found, by, now, format!("the extension was approved by {actor}{suffix}"));
    changes.extension_requested_secs = Set(None);
    let updated = save_versioned(&txn, found, changes).await?;
    record_event(&txn, &updated, GprEventKind::Extended, message, actor).await?;
    txn.commit().await?;
    drop(held);
    Ok(updated)
}

/// The leader's passes, held (see [`Planner::hold_for_extension`]), when GPR `id`'s window
/// fits `by` more seconds; refused otherwise with how much fits now.
async fn held_if_it_fits<'a>(
    db: &DatabaseConnection,
    caller: &Caller,
    planner: &'a dyn Planner,
    id: i64,
    by: i64,
    now: DateTime<Utc>,
) -> Result<PlannerHold<'a>> {
    match planner.hold_for_extension(Principal::of(Some(caller)), db, id, by, STEP_SECS, now).await? {
        ExtensionFit::Fits(held) => Ok(held),
        ExtensionFit::TooLong(room) => {
            let (room, limited_by) = described(room, db, caller).await?;
            Err(too_long(room.min(by - STEP_SECS).max(0), limited_by))
        }
    }
}

/// How many seconds of extension need no approval: what is left of the slice's extension grace
/// (counted over all of a GPR's extensions) and, where the slice has a GPU-hour quota, of the
/// quota at the GPUs the GPR holds. With the reason when the quota is the smaller.
async fn without_approval(db: &DatabaseConnection, found: &gpr::Model, now: DateTime<Utc>) -> Result<(i64, Option<String>)> {
    let owner = slice::Entity::find_by_id(found.slice_id).one(db).await?.ok_or(Error::NotFound("slice"))?;
    let policy = &owner.policy;
    let grace = (policy.extension_grace_secs - found.extended_secs).max(0);
    let Some(quota) = policy.gpu_hour_quota else { return Ok((grace, None)) };
    let since = now - Duration::seconds(policy.quota_period_secs);
    let committed = super::checks::gpu_hours_committed(db, found.slice_id, since, now, None).await?;
    let gpus: i64 = gpr_node::Entity::find()
        .filter(gpr_node::Column::GprId.eq(found.id))
        .find_also_related(node::Entity)
        .all(db)
        .await?
        .into_iter()
        .map(|(_, n)| n.map_or(0, |n| i64::from(n.gpus_per_node)))
        .sum();
    let left = quota as f64 - committed;
    let quota_secs = if gpus == 0 { i64::MAX } else { ((left.max(0.0) * 3600.0) / gpus as f64).floor() as i64 };
    if quota_secs < grace {
        let why = format!("over the slice's GPU-hour quota ({committed:.1} of {quota} GPU-hours used or committed this period)");
        return Ok((quota_secs, Some(why)));
    }
    Ok((grace, None))
}

/// The room the scheduler found for a GPR (`None`: not in the scheduler yet), and why not
/// more, in words the caller may read: a GPR of a slice they cannot see is neither named nor
/// dated (when another slice's GPR is promised to start says how busy that slice is).
async fn described(room: Option<ExtensionRoom>, db: &DatabaseConnection, caller: &Caller) -> Result<(i64, Option<String>)> {
    let Some(room) = room else {
        // Stored as provisioned, not yet in the scheduler (its admission is being stored).
        return Err(Error::conflict("id", "the GPR's window is being set up; try again in a moment"));
    };
    let at = |t: i64| DateTime::from_timestamp(t, 0).map_or_else(|| t.to_string(), |t| t.to_rfc3339());
    let Some((blocker, promised)) = room.blocked_by else {
        let why = room.maintenance.map(|w| {
            let id = crate::ids::encode(crate::ids::Kind::MaintenanceWindow, w.id);
            format!("a node it holds is planned out for maintenance from {} (window {id})", at(w.start))
        });
        return Ok((room.room, why));
    };
    let why = match gpr::Entity::find_by_id(blocker).one(db).await? {
        Some(g) if caller.can_see_slice(db, g.slice_id).await? => {
            format!("GPR `{}` is promised to start by {} on nodes a longer window would still hold", g.name, at(promised))
        }
        _ => "a GPR of another slice is promised nodes a longer window would still hold".to_owned(),
    };
    Ok((room.room, Some(why)))
}

fn too_long(room: i64, limited_by: Option<String>) -> Error {
    let why = limited_by.unwrap_or_default();
    if room == 0 {
        Error::conflict("by", format!("cannot be extended now without delaying another GPR: {why}"))
    } else {
        Error::conflict("by", format!("can be extended by at most {} now: {why}", format_iso(room)))
    }
}

/// The window `by` longer, with the milestone bits of the longer window (a 50 % already
/// written stays written; an exit warning is due again before the new exit), and its event's
/// message.
fn lengthened(found: &gpr::Model, by: i64, now: DateTime<Utc>, why: String) -> (gpr::ActiveModel, String) {
    let exit = found.exit_at.unwrap_or(now) + Duration::seconds(by);
    let message = format!("{why}: {} longer, the window now ends at {}", format_iso(by), exit.to_rfc3339());
    let changes = gpr::ActiveModel {
        exit_at: Set(Some(exit)),
        duration_secs: Set(found.duration_secs + by),
        extended_secs: Set(found.extended_secs + by),
        milestones_done: Set(found.milestones_done & !super::phase::EXIT_WARNING_BIT),
        ..Default::default()
    };
    (changes, message)
}
