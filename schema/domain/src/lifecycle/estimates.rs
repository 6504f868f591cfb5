//! Writing a pass's estimates: queue positions, promises, expected starts and planned pools
//! of waiting GPRs, in batches, with the `ESTIMATE_CHANGED` events that say why a promise moved.

use super::state::Snapshot;
use super::*;
use crate::error::Result;
use chrono::{DateTime, Utc};
use egs_entities::{GprEventKind, GprPhase, gpr};
use egs_scheduler::Scheduler;
use sea_orm::{ConnectionTrait, EntityTrait};
use std::collections::{HashMap, HashSet};

/// A queued GPR as the snapshot holds it, with what the pass says of it now.
struct Estimate {
    stored: gpr::Model,
    position: Option<i32>,
    promise: Option<DateTime<Utc>>,
    /// The middle of its range.
    expected: Option<DateTime<Utc>>,
    range: Range,
    pool: Option<egs_scheduler::PoolKey>,
    /// Fair share's points, fixed when it was first ranked (written once).
    bonus: i32,
    /// When it was first estimated and the start foreseen then (written once).
    foreseen: (Option<DateTime<Utc>>, Option<DateTime<Utc>>),
}

/// A start range's ends as stored (p10, p90).
type Range = (Option<DateTime<Utc>>, Option<DateTime<Utc>>);

/// A range's ends drift with the clock (they scale the wait left): they are written again when
/// one has moved by more than this share of the wait, or a minute, whichever is more.
const RANGE_DRIFT: f64 = 0.02;

/// Rows per estimate-writing statement, and per statement of their events: far under either
/// database's bound-parameter limit (a row binds about ten values, except in PostgreSQL's
/// estimate update, which binds one JSON array).
const ESTIMATE_BATCH: usize = 500;

impl Lifecycle {
    /// Queue positions, promises, expectations and planned pools of pending GPRs.
    /// Written in batches of [`ESTIMATE_BATCH`] rows (one statement each), with their
    /// `ESTIMATE_CHANGED` events.
    /// `causes` says why promises moved later in this tick (an event that moves one names it).
    /// The driver's copy of each row is brought in line with what was written.
    pub(super) async fn store_estimates(
        &self,
        epoch: i64,
        snapshot: &mut Snapshot,
        core: &Scheduler,
        causes: &HashMap<i64, egs_scheduler::Cause>,
    ) -> Result<usize> {
        let positions = core.positions();
        let mut changed: Vec<Estimate> = Vec::new();
        for g in snapshot.active.values().filter(|g| g.phase == GprPhase::Queued) {
            let Some(status) = core.status_unpositioned(g.id) else { continue };
            let promise =
                due_promise_kept(g.start_no_later_than, status.start_no_later_than.and_then(|t| DateTime::from_timestamp(t, 0)), snapshot.now);
            let expected = status.estimated_start.and_then(|t| DateTime::from_timestamp(t, 0));
            let range: Range = match status.start_range {
                Some(r) => (DateTime::from_timestamp(r.p10, 0), DateTime::from_timestamp(r.p90, 0)),
                None => (None, None),
            };
            let position = positions.get(&g.id).and_then(|p| i32::try_from(*p).ok());
            let pool = status.pool.clone();
            let same_pool = Snapshot::assigned_pool(g) == pool;
            let wait = expected.map_or(0, |e| (e - snapshot.now).num_seconds().max(0));
            let range_kept = !range_moved((g.start_p10_at, g.start_p90_at), range, wait);
            let foreseen =
                status.foreseen.map_or((None, None), |(made, start)| (DateTime::from_timestamp(made, 0), DateTime::from_timestamp(start, 0)));
            let bonus_kept = g.fair_share_bonus.is_some() && (g.foreseen_at.is_some() || foreseen.0.is_none());
            if g.queue_position == position
                && g.start_no_later_than == promise
                && g.estimated_start_at == expected
                && same_pool
                && range_kept
                && bonus_kept
            {
                continue;
            }
            changed.push(Estimate { stored: g.clone(), position, promise, expected, range, pool, bonus: status.fair_share_bonus, foreseen });
        }
        if changed.is_empty() {
            return Ok(0);
        }
        let txn = self.fenced(epoch).await?;
        // Rows edited since the snapshot keep the edit (the next tick plans them afresh): the
        // update matches id and version and says which rows it wrote, so nothing is read or
        // locked first (on PostgreSQL a `FOR UPDATE` read writes every row a second time).
        let mut written: HashSet<i64> = HashSet::with_capacity(changed.len());
        for chunk in changed.chunks(ESTIMATE_BATCH) {
            // Not a user-visible change: the version stays.
            let rows = txn.query_all_raw(estimates_update(txn.get_database_backend(), chunk)).await?;
            let first = written.len();
            for row in rows {
                written.insert(row.try_get::<i64>("", "id")?);
            }
            if written.len() == first {
                continue;
            }
            let mut events = Vec::new();
            for Estimate { stored: g, promise, expected, .. } in chunk.iter().filter(|c| written.contains(&c.stored.id)) {
                let (promise, expected) = (*promise, *expected);
                if worth_an_event((g.start_no_later_than, promise), (g.estimated_start_at, expected)) {
                    let describe = |t: Option<DateTime<Utc>>| t.map_or_else(|| "unknown (it fits in no pool now)".to_owned(), |t| t.to_rfc3339());
                    let mut message = format!("starts no later than {}, expected {}", describe(promise), describe(expected));
                    let later = match (g.start_no_later_than, promise) {
                        (Some(before), Some(after)) => after > before,
                        (Some(_), None) => true,
                        _ => false,
                    };
                    if later {
                        let why = causes.get(&g.id).map_or_else(|| "the plan was re-made".to_owned(), |c| describe_cause(c, g, snapshot));
                        message = format!("{message}; the promise moved later: {why}");
                    }
                    let mut event = crate::events::new_event(g, GprEventKind::EstimateChanged, message, ACTOR);
                    event.estimate_moved_secs = sea_orm::Set(estimate_moved_secs(g, promise, expected));
                    events.push(event);
                }
            }
            if !events.is_empty() {
                egs_entities::gpr_event::Entity::insert_many(events).exec_without_returning(&txn).await?;
            }
        }
        self.commit(txn).await?;
        let count = written.len();
        for Estimate { stored, position, promise, expected, range, pool, bonus, foreseen } in
            changed.into_iter().filter(|c| written.contains(&c.stored.id))
        {
            if let Some(g) = snapshot.active.get_mut(&stored.id) {
                g.queue_position = position;
                g.start_no_later_than = promise;
                g.estimated_start_at = expected;
                (g.start_p10_at, g.start_p90_at) = range;
                g.fair_share_bonus = g.fair_share_bonus.or(Some(bonus));
                g.foreseen_at = g.foreseen_at.or(foreseen.0);
                g.foreseen_start_at = g.foreseen_start_at.or(foreseen.1);
                g.assigned_cluster_id = pool.as_ref().map(|p| p.cluster);
                g.assigned_instance_type = pool.as_ref().map(|p| p.instance_type.clone());
                g.assigned_gpu_shape = pool.map(|p| p.gpu_shape);
            }
        }
        Ok(count)
    }
}

/// Whether a start range's ends moved enough to be written again (see [`RANGE_DRIFT`]).
fn range_moved(stored: Range, new: Range, wait: i64) -> bool {
    let tolerance = ((wait as f64 * RANGE_DRIFT) as i64).max(60);
    let far = |a: Option<DateTime<Utc>>, b: Option<DateTime<Utc>>| match (a, b) {
        (Some(a), Some(b)) => (a - b).num_seconds().abs() > tolerance,
        (None, None) => false,
        _ => true,
    };
    far(stored.0, new.0) || far(stored.1, new.1)
}

/// The promise to store: the core's, except that a promise that has come due stays as it was
/// told while the GPR waits to be admitted (the core plans it "now", a second later each tick;
/// storing that would move the promise later every tick with no cause to name).
fn due_promise_kept(stored: Option<DateTime<Utc>>, planned: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    match (stored, planned) {
        (Some(stored), Some(planned)) if stored <= now && planned <= now => Some(stored),
        _ => planned,
    }
}

/// Whether a waiting GPR's new estimates (before, after) are worth an `ESTIMATE_CHANGED`
/// event: a promise that moves later, however little (it names its cause), or is given or taken
/// away; a promise or an expected start that moves by [`ESTIMATE_EVENT_SECS`] or more.
fn worth_an_event(promise: (Option<DateTime<Utc>>, Option<DateTime<Utc>>), expected: (Option<DateTime<Utc>>, Option<DateTime<Utc>>)) -> bool {
    let moved = |(before, after): (Option<DateTime<Utc>>, Option<DateTime<Utc>>)| match (before, after) {
        (Some(b), Some(a)) => (a - b).num_seconds().abs() >= ESTIMATE_EVENT_SECS,
        (None, Some(_)) | (Some(_), None) => true,
        (None, None) => false,
    };
    let later = matches!(promise, (Some(b), Some(a)) if a > b);
    later || moved(promise) || moved(expected)
}

/// How far a GPR's start moved (later positive): the promise, or the expected start when
/// neither side has a promise; `None` when the one compared was unknown on a side.
fn estimate_moved_secs(stored: &gpr::Model, promise: Option<DateTime<Utc>>, expected: Option<DateTime<Utc>>) -> Option<i64> {
    let (before, after) = if stored.start_no_later_than.is_some() || promise.is_some() {
        (stored.start_no_later_than, promise)
    } else {
        (stored.estimated_start_at, expected)
    };
    Some((after? - before?).num_seconds())
}

/// Why `moved`'s promise moved later, in words its slice's members may read (docs/design.md
/// §4.5's causes): another slice's GPR is neither named nor counted.
fn describe_cause(cause: &egs_scheduler::Cause, moved: &gpr::Model, snapshot: &Snapshot) -> String {
    use egs_scheduler::Cause;
    let own = |gpr: &i64| snapshot.active.get(gpr).filter(|g| g.slice_id == moved.slice_id).map(|g| format!("`{}` ", g.name));
    match cause {
        Cause::HigherPriority { gpr, priority } => match own(gpr) {
            Some(name) => format!("your slice's GPR {name}of higher priority ({priority}) was ranked ahead of it"),
            None => format!("a GPR of higher priority ({priority}) was ranked ahead of it"),
        },
        Cause::FairShare { .. } => {
            "a GPR of the same priority, of a slice that used less GPU time lately, was ranked ahead of it (fair share)".to_owned()
        }
        Cause::CapacityLost { pool } => format!(
            "capacity was lost in its pool ({} × {}, cluster {}): a node failed, went silent or was cordoned",
            pool.gpu_shape,
            pool.instance_type,
            crate::ids::encode(crate::ids::Kind::Cluster, pool.cluster)
        ),
        Cause::Maintenance { window } => {
            let node = snapshot.nodes.binary_search_by_key(&window.node, |n| n.id).ok().map(|at| &snapshot.nodes[at]);
            let at = |t: i64| DateTime::from_timestamp(t, 0).map_or_else(|| t.to_string(), |t| t.to_rfc3339());
            format!(
                "node `{}` of its pool is planned out for maintenance from {} to {} (window {})",
                node.map_or_else(|| window.node.to_string(), |n| n.name.clone()),
                at(window.start),
                at(window.end),
                crate::ids::encode(crate::ids::Kind::MaintenanceWindow, window.id)
            )
        }
        Cause::OwnChange => "its own size, window or priority changed".to_owned(),
        Cause::Overdue => "its planned start passed while nodes were held past their bound".to_owned(),
    }
}

/// One statement writing each row of `chunk` its own queue position, promise, expected start
/// and pool, where the row's version is still the one planned, returning the ids it wrote: the
/// values are a table joined by id (`UPDATE … FROM`, on SQLite since 3.33), so the cost grows
/// with the rows, not with rows × rows as one `CASE id WHEN …` per column did (a queue of 1,000
/// that shifted by one took half a second to write on PostgreSQL).
///
/// On PostgreSQL the table is one JSON parameter (`json_to_recordset`): the statement's text
/// never changes, so it is parsed and planned once per connection. As `VALUES` with eight
/// parameters a row, each batch of 500 was a new statement of 4,000 parameters that took
/// PostgreSQL 10–30 ms to bind, twice a tick while a queue of 1,000 moved up.
fn estimates_update(backend: sea_orm::DbBackend, chunk: &[Estimate]) -> sea_orm::Statement {
    const SET: &str = "UPDATE gprs SET queue_position = planned.queue_position, start_no_later_than = planned.start_no_later_than, \
         estimated_start_at = planned.estimated_start_at, start_p10_at = planned.start_p10_at, start_p90_at = planned.start_p90_at, \
         fair_share_bonus = COALESCE(gprs.fair_share_bonus, planned.fair_share_bonus), \
         foreseen_at = COALESCE(gprs.foreseen_at, planned.foreseen_at), \
         foreseen_start_at = COALESCE(gprs.foreseen_start_at, planned.foreseen_start_at), \
         assigned_cluster_id = planned.assigned_cluster_id, \
         assigned_instance_type = planned.assigned_instance_type, assigned_gpu_shape = planned.assigned_gpu_shape";
    const WHERE: &str = "WHERE gprs.id = planned.id AND gprs.version = planned.version RETURNING gprs.id";
    if backend == sea_orm::DbBackend::Postgres {
        let rows: Vec<serde_json::Value> = chunk
            .iter()
            .map(|Estimate { stored: g, position, promise, expected, range: (p10, p90), pool, bonus, foreseen: (made, start) }| {
                serde_json::json!({
                    "id": g.id,
                    "version": g.version,
                    "fair_share_bonus": bonus,
                    "foreseen_at": made,
                    "foreseen_start_at": start,
                    "queue_position": position,
                    "start_no_later_than": promise,
                    "estimated_start_at": expected,
                    "start_p10_at": p10,
                    "start_p90_at": p90,
                    "assigned_cluster_id": pool.as_ref().map(|p| p.cluster),
                    "assigned_instance_type": pool.as_ref().map(|p| &p.instance_type),
                    "assigned_gpu_shape": pool.as_ref().map(|p| &p.gpu_shape),
                })
            })
            .collect();
        let sql = format!(
            "{SET} FROM json_to_recordset($1::json) AS planned (id bigint, version integer, queue_position integer, \
             start_no_later_than timestamptz, estimated_start_at timestamptz, start_p10_at timestamptz, start_p90_at timestamptz, \
             fair_share_bonus integer, foreseen_at timestamptz, foreseen_start_at timestamptz, \
             assigned_cluster_id bigint, \
             assigned_instance_type text, assigned_gpu_shape text) {WHERE}"
        );
        return sea_orm::Statement::from_sql_and_values(backend, sql, [serde_json::Value::Array(rows).into()]);
    }
    const COLUMNS: usize = 13;
    let mut values: Vec<sea_orm::Value> = Vec::with_capacity(chunk.len() * COLUMNS);
    let mut rows = Vec::with_capacity(chunk.len());
    for Estimate { stored: g, position, promise, expected, range: (p10, p90), pool, bonus, foreseen: (made, start) } in chunk {
        values.extend([
            g.id.into(),
            g.version.into(),
            (*position).into(),
            (*promise).into(),
            (*expected).into(),
            (*p10).into(),
            (*p90).into(),
            (*bonus).into(),
            (*made).into(),
            (*start).into(),
            pool.as_ref().map(|p| p.cluster).into(),
            pool.as_ref().map(|p| p.instance_type.clone()).into(),
            pool.as_ref().map(|p| p.gpu_shape.clone()).into(),
        ]);
        rows.push(format!("({})", ["?"; COLUMNS].join(", ")));
    }
    let sql = format!(
        "WITH planned (id, version, queue_position, start_no_later_than, estimated_start_at, start_p10_at, start_p90_at, fair_share_bonus, foreseen_at, foreseen_start_at, assigned_cluster_id, \
         assigned_instance_type, assigned_gpu_shape) AS (VALUES {}) {SET} FROM planned {WHERE}",
        rows.join(", ")
    );
    sea_orm::Statement::from_sql_and_values(backend, sql, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: i64) -> Option<DateTime<Utc>> {
        DateTime::from_timestamp(1_800_000_000 + secs, 0)
    }

    #[test]
    fn a_promise_moving_later_by_any_amount_is_an_event_and_small_other_moves_are_not() {
        // 81 s later went untold while only moves of five minutes or more were events.
        assert!(worth_an_event((at(0), at(81)), (at(0), at(0))));
        assert!(worth_an_event((at(0), at(1)), (at(0), at(0))));
        assert!(!worth_an_event((at(81), at(0)), (at(0), at(0))), "a promise 81 s earlier is noise");
        assert!(!worth_an_event((at(0), at(0)), (at(0), at(81))), "so is an expected start 81 s later");
        assert!(worth_an_event((at(0), at(0)), (at(0), at(ESTIMATE_EVENT_SECS))));
        assert!(worth_an_event((at(600), at(0)), (at(0), at(0))), "five minutes earlier or more is told");
        assert!(worth_an_event((None, at(0)), (None, None)) && worth_an_event((at(0), None), (None, None)));
        assert!(!worth_an_event((None, None), (None, None)));
    }

    #[test]
    fn a_promise_that_came_due_is_not_moved_to_now_tick_after_tick() {
        let now = at(100).expect("a time");
        assert_eq!(due_promise_kept(at(90), at(100), now), at(90), "due, still waiting to be admitted: as told");
        assert_eq!(due_promise_kept(at(90), at(400), now), at(400), "planned later again (a cause): stored");
        assert_eq!(due_promise_kept(at(200), at(100), now), at(100), "earlier: stored");
        assert_eq!(due_promise_kept(None, at(100), now), at(100));
    }
}
