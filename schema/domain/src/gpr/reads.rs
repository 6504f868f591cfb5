//! Reading GPRs as the caller may: the queue in order, lists, one GPR, its events, and
//! "Get wait time" (which plans, and changes nothing).

use super::checks::{ask_of, check_feasible, check_spec_fields, fill_idle_timeout};
use super::policy::{self, Usage};
use super::spec::GprSpec;
use crate::auth::{Caller, Visible};
use crate::error::{Error, Result};
use crate::ports::Planner;
use crate::validate;
use chrono::{DateTime, Utc};
use egs_entities::{GprEventKind, GprPhase, SliceRole, gpr, gpr_event, slice};
use sea_orm::sea_query::{Expr, ExprTrait, Func, LikeExpr};
use sea_orm::{ColumnTrait, Condition, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect, QueryTrait, Select};
use std::collections::BTreeMap;

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
    planner: &dyn Planner,
    now: DateTime<Utc>,
) -> Result<Vec<(egs_scheduler::PoolEstimate, Option<String>)>> {
    caller.require_person()?;
    caller.require_slice_role(db, spec.slice_id, SliceRole::Viewer, "slice").await?;
    let request = unstored_request(db, &mut spec, -1, now).await?;
    let rows = planner.wait_times(crate::auth::Principal::of(Some(caller)), db, request, now).await?;
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

/// The scheduler's request for a GPR not stored (id `id`): checked like `createGpr` (an
/// impossible ask is refused with the reason; a shape the slice may not use or a window over
/// its maximum too; what would need approval is let through). Whether it could be preempted or
/// idle out later does not move when it could start: it asks as preemptible, with no timeout.
pub(super) async fn unstored_request(db: &DatabaseConnection, spec: &mut GprSpec, id: i64, now: DateTime<Utc>) -> Result<egs_scheduler::Request> {
    let mut errors = Vec::new();
    check_spec_fields(spec, Some(now), &mut errors);
    validate::finish(errors)?;
    let owner = slice::Entity::find_by_id(spec.slice_id).one(db).await?.ok_or(Error::NotFound("slice"))?;
    fill_idle_timeout(spec, &owner.policy);
    let gpus_per_node = check_feasible(db, spec, &owner.policy.allowed_shapes).await?;
    validate::finish(policy::evaluate(&owner.policy, &ask_of(spec, gpus_per_node), &Usage::default()).rejections)?;
    Ok(egs_scheduler::Request { preemptible: true, idle_timeout: None, ..spec.scheduler_request(id, now, false) })
}

#[derive(Clone, Debug, Default)]
pub struct GprQuery {
    pub slice_id: Option<i64>,
    pub phases: Vec<GprPhase>,
    /// Only those an admin must decide on: held for approval, or with an extension requested.
    pub awaiting_decision: bool,
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
    if query.awaiting_decision {
        let extension = Condition::all().add(gpr::Column::Phase.eq(GprPhase::Provisioned)).add(gpr::Column::ExtensionRequestedSecs.is_not_null());
        select = select.filter(Condition::any().add(gpr::Column::Phase.eq(GprPhase::PendingApproval)).add(extension));
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
pub(super) async fn find_gpr_for_change(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<gpr::Model> {
    caller.require_person()?;
    let found = gpr::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("GPR"))?;
    caller.require_slice_role(db, found.slice_id, SliceRole::Editor, "GPR").await?;
    Ok(found)
}

pub fn events_select(visible: &Visible, gpr_id: Option<i64>, slice_id: Option<i64>) -> Select<gpr_event::Entity> {
    search_events(visible, &EventSearch { gpr_id, slice_id, ..Default::default() })
}

/// Longest text an event search matches.
pub const MAX_EVENT_TEXT: usize = 200;
/// Most kinds one event search names.
pub const MAX_EVENT_KINDS: usize = 64;

/// A text search looks through at most this many events: the newest that the other filters
/// (GPR, slice, kinds, time range) leave.
pub const MAX_TEXT_SCAN: u64 = 20_000;

/// What an event search narrows to; every part optional.
#[derive(Clone, Debug, Default)]
pub struct EventSearch {
    pub gpr_id: Option<i64>,
    pub slice_id: Option<i64>,
    /// Any of these kinds (none: every kind).
    pub kinds: Vec<GprEventKind>,
    /// At or after.
    pub since: Option<DateTime<Utc>>,
    /// Before.
    pub until: Option<DateTime<Utc>>,
    /// In the message or the actor, ignoring case; `%` and `_` match themselves. Looked for in
    /// the newest [`MAX_TEXT_SCAN`] events the other filters leave.
    pub text: Option<String>,
}

impl EventSearch {
    /// Refuses what cannot match or would cost too much, naming the argument.
    pub fn check(&self) -> Result<()> {
        let mut errors = Vec::new();
        if let Some(text) = &self.text {
            crate::validate::text("text", text, MAX_EVENT_TEXT, &mut errors);
        }
        if self.kinds.len() > MAX_EVENT_KINDS {
            errors.push(crate::error::UserError::invalid("kinds", format!("at most {MAX_EVENT_KINDS} kinds")));
        }
        if let (Some(since), Some(until)) = (self.since, self.until)
            && since >= until
        {
            errors.push(crate::error::UserError::invalid("until", "must be after `since`"));
        }
        crate::validate::finish(errors)
    }
}

/// The events `visible` allows that `search` asks for.
pub fn search_events(visible: &Visible, search: &EventSearch) -> Select<gpr_event::Entity> {
    let mut select = gpr_event::Entity::find();
    if let Visible::Only(ids) = visible {
        select = select.filter(gpr_event::Column::SliceId.is_in(ids.clone()));
    }
    if let Some(gpr_id) = search.gpr_id {
        select = select.filter(gpr_event::Column::GprId.eq(gpr_id));
    }
    if let Some(slice_id) = search.slice_id {
        select = select.filter(gpr_event::Column::SliceId.eq(slice_id));
    }
    if !search.kinds.is_empty() {
        select = select.filter(gpr_event::Column::Kind.is_in(search.kinds.iter().copied()));
    }
    if let Some(since) = search.since {
        select = select.filter(gpr_event::Column::CreatedAt.gte(since));
    }
    if let Some(until) = search.until {
        select = select.filter(gpr_event::Column::CreatedAt.lt(until));
    }
    if let Some(text) = search.text.as_deref().filter(|t| !t.is_empty()) {
        // A substring cannot use an index: the search looks only through the newest events
        // the other filters leave, so one request never scans every event of its slices.
        let newest =
            select.clone().select_only().column(gpr_event::Column::Id).order_by_desc(gpr_event::Column::Id).limit(MAX_TEXT_SCAN).into_query();
        select = select.filter(gpr_event::Column::Id.in_subquery(newest));
        let escaped: String = text.to_lowercase().chars().flat_map(|c| if matches!(c, '%' | '_' | '\\') { vec!['\\', c] } else { vec![c] }).collect();
        let pattern = format!("%{escaped}%");
        let like = |column: gpr_event::Column| {
            Expr::expr(Func::lower(Expr::col((gpr_event::Entity, column)))).like(LikeExpr::new(pattern.clone()).escape('\\'))
        };
        select = select.filter(Condition::any().add(like(gpr_event::Column::Message)).add(like(gpr_event::Column::Actor)));
    }
    select
}
