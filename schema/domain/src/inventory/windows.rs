//! Maintenance windows planned ahead (admins): a node out of service from `startsAt` to
//! `endsAt`. The scheduler plans around every window it is told of (see
//! `egs_scheduler::maintenance`), and a promise a window moves names it. When a window begins the
//! leader cordons the node (a GPR still on it is evicted and requeued, or, while provisioning,
//! drains out), and when it ends the leader puts the node back, unless an admin changed its
//! cordon meanwhile.

use super::maintenance::{self, Drain};
use crate::auth::Caller;
use crate::error::{Error, ErrorCode, Result, UserError};
use crate::ids::{self, Kind};
use chrono::{DateTime, Duration, Utc};
use egs_entities::{GprPhase, gpr, maintenance_window as window, node};
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set};

/// A window lasts at most this long.
pub const MAX_WINDOW_DAYS: i64 = 30;
/// A window is planned at most this far ahead.
pub const MAX_AHEAD_DAYS: i64 = 366;
/// Windows not yet over, per node.
pub const MAX_OPEN_PER_NODE: u64 = 50;
/// A start this far in the past is taken as "now" (a form filled in a minute ago).
const PAST_SLACK_SECS: i64 = 300;

/// Where a window stands at `now`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "graphql", derive(async_graphql::Enum))]
pub enum MaintenanceWindowState {
    /// Ahead: the scheduler plans around it.
    Planned,
    /// Running: the node is cordoned for it.
    Active,
    /// Over: the node was given back (or the window was cancelled while it ran).
    Finished,
}

/// Where window `w` stands at `now`.
pub fn state_at(w: &window::Model, now: DateTime<Utc>) -> MaintenanceWindowState {
    if w.finished_at.is_some() || w.ends_at <= now {
        MaintenanceWindowState::Finished
    } else if w.started_at.is_some() || w.starts_at <= now {
        MaintenanceWindowState::Active
    } else {
        MaintenanceWindowState::Planned
    }
}

/// What an admin plans.
pub struct Plan {
    pub node_id: i64,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    pub reason: String,
}

/// Plans a window (admins). Every refusal names its field and stores nothing.
pub async fn plan(db: &DatabaseConnection, caller: &Caller, now: DateTime<Utc>, asked: Plan) -> Result<window::Model> {
    caller.require_admin()?;
    let mut errors = Vec::new();
    let reason = crate::validate::reason("reason", &asked.reason, "the owner of a GPR it moves").map_err(|e| errors.extend(user_errors(e))).ok();
    let starts_at = asked.starts_at.max(now);
    if asked.starts_at < now - Duration::seconds(PAST_SLACK_SECS) {
        errors.push(UserError::invalid("startsAt", format!("is in the past (now is {})", now.to_rfc3339())));
    } else if starts_at > now + Duration::days(MAX_AHEAD_DAYS) {
        errors.push(UserError::invalid("startsAt", format!("is more than {MAX_AHEAD_DAYS} days ahead")));
    }
    if asked.ends_at <= starts_at {
        errors.push(UserError::invalid("endsAt", "must be after startsAt"));
    } else if asked.ends_at - starts_at > Duration::days(MAX_WINDOW_DAYS) {
        errors.push(UserError::invalid("endsAt", format!("a window lasts at most {MAX_WINDOW_DAYS} days")));
    }
    crate::validate::finish(errors)?;
    let found = node::Entity::find_by_id(asked.node_id).one(db).await?.ok_or(Error::NotFound("node"))?;
    let open = open_on(db, found.id, now).await?;
    if let Some(other) = open.iter().find(|w| w.starts_at < asked.ends_at && w.ends_at > starts_at) {
        return Err(Error::conflict(
            "startsAt",
            format!(
                "node `{}` has a window from {} to {} already ({}); change that one or pick another time",
                found.name,
                other.starts_at.to_rfc3339(),
                other.ends_at.to_rfc3339(),
                ids::encode(Kind::MaintenanceWindow, other.id)
            ),
        ));
    }
    if open.len() as u64 >= MAX_OPEN_PER_NODE {
        return Err(Error::User(vec![UserError {
            field: vec!["nodeId".into()],
            message: format!("node `{}` has {MAX_OPEN_PER_NODE} windows planned already; cancel one first", found.name),
            code: ErrorCode::LimitExceeded,
        }]));
    }
    let row = window::ActiveModel {
        node_id: Set(found.id),
        starts_at: Set(starts_at),
        ends_at: Set(asked.ends_at),
        reason: Set(reason.unwrap_or_default()),
        created_by: Set(caller.actor().to_owned()),
        created_at: Set(now),
        ..Default::default()
    };
    Ok(row.insert(db).await?)
}

fn user_errors(error: Error) -> Vec<UserError> {
    match error {
        Error::User(errors) => errors,
        other => vec![UserError::invalid("reason", other.public_message())],
    }
}

/// The windows on a node that are not over, soonest first.
pub async fn open_on(db: &impl ConnectionTrait, node_id: i64, now: DateTime<Utc>) -> Result<Vec<window::Model>> {
    Ok(window::Entity::find()
        .filter(window::Column::NodeId.eq(node_id))
        .filter(window::Column::FinishedAt.is_null())
        .filter(window::Column::EndsAt.gt(now))
        .order_by_asc(window::Column::StartsAt)
        .all(db)
        .await?)
}

/// Cancels a window (admins): one ahead is removed; one running ends now and its node is
/// given back. The window as it was (or now is).
pub async fn cancel(db: &DatabaseConnection, caller: &Caller, now: DateTime<Utc>, id: i64) -> Result<window::Model> {
    caller.require_admin()?;
    let found = window::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("maintenance window"))?;
    if found.finished_at.is_some() || found.ends_at <= now {
        return Err(Error::conflict("id", "the window is over already"));
    }
    if found.started_at.is_none() {
        window::Entity::delete_by_id(found.id).exec(db).await?;
        return Ok(found);
    }
    // The cordon names the window as planned: given back before the window is cut short.
    give_back(db, &found).await?;
    let ended = window::ActiveModel { id: Set(found.id), ends_at: Set(now), finished_at: Set(Some(now)), ..Default::default() }.update(db).await?;
    Ok(ended)
}

/// What the node's cordon says while a window runs: how the leader knows the cordon is still
/// the window's when it ends.
fn cordon_reason(w: &window::Model) -> String {
    format!("{CORDON_PREFIX}{}: {}", w.ends_at.to_rfc3339(), w.reason)
}

const CORDON_PREFIX: &str = "maintenance window until ";

/// Whether a node's cordon is a maintenance window's.
pub fn is_window_cordon(reason: &str) -> bool {
    reason.starts_with(CORDON_PREFIX)
}

/// Uncordons the window's node if the cordon is still the window's.
async fn give_back(db: &impl ConnectionTrait, w: &window::Model) -> Result<()> {
    let Some(found) = node::Entity::find_by_id(w.node_id).one(db).await? else { return Ok(()) };
    if found.cordon_reason.as_deref() == Some(cordon_reason(w).as_str()) {
        maintenance::uncordon_found(db, found).await?;
    }
    Ok(())
}

/// The windows not over, as the leader reads them: what the scheduler plans around, and
/// which of them the leader has begun.
#[derive(Clone, Debug, Default)]
pub struct Open {
    pub windows: Vec<egs_scheduler::MaintenanceWindow>,
    pub started: std::collections::HashSet<i64>,
}

impl Open {
    /// Whether one is due to begin or end at `now` (Unix seconds).
    pub fn due(&self, now: i64) -> bool {
        self.windows.iter().any(|w| w.end <= now || (w.start <= now && !self.started.contains(&w.id)))
    }
}

/// The windows the leader has not finished.
pub async fn open(db: &impl ConnectionTrait) -> Result<Open> {
    // id, node, starts, ends, started
    type Row = (i64, i64, DateTime<Utc>, DateTime<Utc>, Option<DateTime<Utc>>);
    let rows: Vec<Row> = window::Entity::find()
        .select_only()
        .columns([window::Column::Id, window::Column::NodeId, window::Column::StartsAt, window::Column::EndsAt, window::Column::StartedAt])
        // Ended but not yet given back too: they are due.
        .filter(window::Column::FinishedAt.is_null())
        .into_tuple()
        .all(db)
        .await?;
    let started = rows.iter().filter(|r| r.4.is_some()).map(|r| r.0).collect();
    let windows = rows
        .into_iter()
        .map(|(id, node, start, end, _)| egs_scheduler::MaintenanceWindow { id, node, start: start.timestamp(), end: end.timestamp() })
        .collect();
    Ok(Open { windows, started })
}

/// The leader's step at `now`, inside its fenced transaction: cordons the nodes whose window
/// began (evicting a provisioned GPR still on one: it goes back to the queue), and gives back
/// those whose window ended. Returns how many windows moved on.
pub async fn advance(txn: &sea_orm::DatabaseTransaction, now: DateTime<Utc>) -> Result<usize> {
    let due = window::Entity::find()
        .filter(window::Column::FinishedAt.is_null())
        .filter(window::Column::StartsAt.lte(now))
        .order_by_asc(window::Column::Id)
        .limit(100)
        .all(txn)
        .await?;
    let mut moved = 0;
    for w in due {
        if w.ends_at <= now {
            if w.started_at.is_some() {
                give_back(txn, &w).await?;
            }
            window::ActiveModel { id: Set(w.id), finished_at: Set(Some(now)), ..Default::default() }.update(txn).await?;
            moved += 1;
        } else if w.started_at.is_none() {
            start(txn, &w).await?;
            window::ActiveModel { id: Set(w.id), started_at: Set(Some(now)), ..Default::default() }.update(txn).await?;
            moved += 1;
        }
    }
    Ok(moved)
}

/// Cordons a window's node, unless an admin cordoned it already (their cordon stands).
async fn start(txn: &sea_orm::DatabaseTransaction, w: &window::Model) -> Result<()> {
    let Some(found) = node::Entity::find_by_id(w.node_id).one(txn).await? else { return Ok(()) };
    if found.cordoned_at.is_some() {
        return Ok(());
    }
    let holder = match found.allocated_gpr_id {
        Some(id) => gpr::Entity::find_by_id(id).one(txn).await?,
        None => None,
    };
    let drain = match holder {
        Some(g) if g.phase == GprPhase::Provisioned => Drain::Evict,
        Some(_) => Drain::Wait,
        None => Drain::No,
    };
    let actor: String = w.created_by.chars().take(128).collect();
    match maintenance::cordon_in(txn, found.id, &cordon_reason(w), &actor, drain).await {
        // The node changed hands as this was decided: the next step tries again.
        Err(Error::User(_)) => Ok(()),
        other => other.map(|_| ()),
    }
}

/// Which windows an admin or a user lists.
#[derive(Clone, Debug, Default)]
pub struct WindowFilter {
    pub cluster_id: Option<i64>,
    pub node_id: Option<i64>,
    pub include_finished: bool,
}

/// Maintenance windows, soonest first: those not over, or with `include_finished` the finished
/// ones too (latest 500). Anyone signed in may read them: they say when nodes are out.
pub async fn list(db: &DatabaseConnection, caller: &Caller, now: DateTime<Utc>, filter: WindowFilter) -> Result<Vec<window::Model>> {
    caller.require_person()?;
    let mut query = window::Entity::find();
    if let Some(id) = filter.node_id {
        query = query.filter(window::Column::NodeId.eq(id));
    }
    if let Some(cluster) = filter.cluster_id {
        let nodes = node::Entity::find().select_only().column(node::Column::Id).filter(node::Column::ClusterId.eq(cluster));
        query = query.filter(window::Column::NodeId.in_subquery(sea_orm::QueryTrait::into_query(nodes)));
    }
    if !filter.include_finished {
        query = query.filter(window::Column::FinishedAt.is_null()).filter(window::Column::EndsAt.gt(now));
    }
    let rows = query.order_by_desc(window::Column::StartsAt).limit(500).all(db).await?;
    Ok(rows.into_iter().rev().collect())
}
