//! The daily rollups of GPU-hours and waits, recomputed from the GPRs and their stored events
//! for every day that can still change (today, and yesterday for an hour after midnight);
//! earlier days are final and kept as they are.

use super::ledger::{self, SpanKind};
use super::{cursor_position, set_cursor};
use crate::error::{Error, Result};
use chrono::{DateTime, Datelike, Duration, NaiveDate, Utc};
use egs_entities::{GprPhase, gpr, gpr_event, node, usage_daily, usage_wait_daily};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set, SqlErr, TransactionTrait,
};
use std::collections::{BTreeMap, HashMap};

/// The first day not yet final, as days from the Common Era.
const OPEN_FROM: &str = "usage.open_from";
/// How far back a first rollup of an existing database goes.
const BACKFILL_DAYS: i64 = 400;
/// A day stays open this long after its midnight, for events stored a little late.
const GRACE: Duration = Duration::hours(1);
/// The shape key of a GPR that named none and was not placed.
pub const ANY_SHAPE: &str = "any";

type UsageKey = (NaiveDate, i64, i64, String, i64);
type WaitKey = (NaiveDate, i64, String, i32);

#[derive(Default)]
struct Usage {
    reserved: i64,
    used: i64,
    waiting: i64,
    started: i32,
}

#[derive(Default)]
struct Waits {
    started: i32,
    total: i64,
    max: i64,
    within: [i32; 4],
}

/// Recomputes every open day up to `now`'s, then closes the days that can no longer change.
/// Returns the days it wrote.
pub async fn refresh(db: &DatabaseConnection, now: DateTime<Utc>) -> Result<(NaiveDate, NaiveDate)> {
    let today = now.date_naive();
    let first = match cursor_position(db, OPEN_FROM).await? {
        Some(days) => NaiveDate::from_num_days_from_ce_opt(days as i32).unwrap_or(today),
        None => first_day_of_history(db, today).await?,
    }
    .min(today);
    // Another replica rolling the same days at once makes one of the two commits refuse a key
    // the other wrote: read again and write once more.
    let mut attempt = 1;
    loop {
        match roll(db, first, today, now).await {
            Err(Error::Database(e)) if attempt < 3 && matches!(e.sql_err(), Some(SqlErr::UniqueConstraintViolation(_))) => attempt += 1,
            done => break done?,
        }
    }
    let open_from = (now - GRACE).date_naive();
    if open_from > first {
        set_cursor(db, OPEN_FROM, i64::from(open_from.num_days_from_ce())).await?;
    }
    Ok((first, today))
}

/// The day the oldest GPR was asked for (at most [`BACKFILL_DAYS`] back), for a database
/// rolled up for the first time.
async fn first_day_of_history(db: &DatabaseConnection, today: NaiveDate) -> Result<NaiveDate> {
    let oldest: Option<DateTime<Utc>> =
        gpr::Entity::find().select_only().column(gpr::Column::CreatedAt).order_by_asc(gpr::Column::CreatedAt).into_tuple().one(db).await?;
    let floor = today - Duration::days(BACKFILL_DAYS);
    Ok(oldest.map_or(today, |at| at.date_naive().max(floor)))
}

/// Recomputes days `first..=last` (as of `now`) and replaces their rows in one transaction.
pub async fn roll(db: &DatabaseConnection, first: NaiveDate, last: NaiveDate, now: DateTime<Utc>) -> Result<()> {
    let (from, to) = (ledger::day_start(first), ledger::day_start(last) + Duration::days(1));
    // Every GPR that may have a span in the range: asked for before its end, and not finished
    // (nor its booked window over) before its start.
    let touching = Condition::all().add(gpr::Column::CreatedAt.lt(to)).add(
        Condition::any()
            .add(gpr::Column::Phase.is_not_in([GprPhase::Completed, GprPhase::Cancelled, GprPhase::Rejected, GprPhase::Failed]))
            .add(gpr::Column::UpdatedAt.gte(from))
            .add(gpr::Column::ExitAt.gte(from)),
    );
    let gprs = gpr::Entity::find().filter(touching).all(db).await?;
    let gpus_of_shape = gpus_per_node_by_shape(db).await?;
    let events = lifecycle_events(db, &gprs).await?;

    let mut usage: BTreeMap<UsageKey, Usage> = BTreeMap::new();
    let mut waits: BTreeMap<WaitKey, Waits> = BTreeMap::new();
    let in_range = |day: &NaiveDate| (first..=last).contains(day);
    for g in &gprs {
        let shape = g.assigned_gpu_shape.clone().or_else(|| g.gpu_shape.clone()).unwrap_or_else(|| ANY_SHAPE.to_owned());
        let cluster = g.assigned_cluster_id.or_else(|| single(&g.preferred_cluster_ids.0)).unwrap_or(0);
        let per_node = g.gpus_per_node.map(i64::from).unwrap_or_else(|| shape_gpus(&gpus_of_shape, &shape));
        let gpus = i64::from(g.node_count.max(1)) * per_node;
        let timeline = ledger::timeline(g, events.get(&g.id).map_or(&[][..], Vec::as_slice), now);
        for span in &timeline.spans {
            for (day, secs) in ledger::days(span.from.max(from), span.to.min(to)) {
                let row = usage.entry((day, g.slice_id, g.requester_id.unwrap_or(0), shape.clone(), cluster)).or_default();
                let field = match span.kind {
                    SpanKind::Waiting => &mut row.waiting,
                    SpanKind::Used => &mut row.used,
                    SpanKind::Reserved => &mut row.reserved,
                };
                *field += secs * gpus;
            }
        }
        for start in timeline.starts.iter().filter(|s| in_range(&s.at.date_naive())) {
            let day = start.at.date_naive();
            usage.entry((day, g.slice_id, g.requester_id.unwrap_or(0), shape.clone(), cluster)).or_default().started += 1;
            let w = waits.entry((day, g.slice_id, shape.clone(), g.priority)).or_default();
            w.started += 1;
            w.total += start.waited_secs;
            w.max = w.max.max(start.waited_secs);
            for (count, hit) in w.within.iter_mut().zip(ledger::within(start.waited_secs)) {
                *count += i32::from(hit);
            }
        }
    }

    let txn = db.begin().await?;
    usage_daily::Entity::delete_many().filter(usage_daily::Column::Day.between(first, last)).exec(&txn).await?;
    usage_wait_daily::Entity::delete_many().filter(usage_wait_daily::Column::Day.between(first, last)).exec(&txn).await?;
    let usage_rows = usage.into_iter().map(|((day, slice, user, shape, cluster), u)| usage_daily::ActiveModel {
        day: Set(day),
        slice_id: Set(slice),
        user_id: Set(user),
        gpu_shape: Set(shape),
        cluster_id: Set(cluster),
        reserved_gpu_secs: Set(u.reserved),
        used_gpu_secs: Set(u.used),
        waiting_gpu_secs: Set(u.waiting),
        gprs_started: Set(u.started),
        ..Default::default()
    });
    insert_in_chunks(&txn, usage_rows.collect(), usage_daily::Entity::insert_many).await?;
    let wait_rows = waits.into_iter().map(|((day, slice, shape, priority), w)| usage_wait_daily::ActiveModel {
        day: Set(day),
        slice_id: Set(slice),
        gpu_shape: Set(shape),
        priority: Set(priority),
        started: Set(w.started),
        wait_total_secs: Set(w.total),
        wait_max_secs: Set(w.max),
        within_15m: Set(w.within[0]),
        within_1h: Set(w.within[1]),
        within_4h: Set(w.within[2]),
        within_24h: Set(w.within[3]),
        ..Default::default()
    });
    insert_in_chunks(&txn, wait_rows.collect(), usage_wait_daily::Entity::insert_many).await?;
    txn.commit().await?;
    Ok(())
}

/// Inserts in statements small enough for SQLite's bound-parameter limit.
async fn insert_in_chunks<A, E>(txn: &impl ConnectionTrait, rows: Vec<A>, insert: impl Fn(Vec<A>) -> sea_orm::InsertMany<A>) -> Result<()>
where
    A: sea_orm::ActiveModelTrait<Entity = E>,
    E: EntityTrait,
{
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let chunk: Vec<A> = rows.by_ref().take(500).collect();
        insert(chunk).exec_without_returning(txn).await?;
    }
    Ok(())
}

/// The GPRs' events the ledger reads, oldest first, per GPR.
async fn lifecycle_events(db: &DatabaseConnection, gprs: &[gpr::Model]) -> Result<HashMap<i64, Vec<(egs_entities::GprEventKind, DateTime<Utc>)>>> {
    let mut by_gpr: HashMap<i64, Vec<_>> = HashMap::new();
    for ids in gprs.chunks(1000) {
        let rows: Vec<(i64, egs_entities::GprEventKind, DateTime<Utc>)> = gpr_event::Entity::find()
            .select_only()
            .columns([gpr_event::Column::GprId, gpr_event::Column::Kind, gpr_event::Column::CreatedAt])
            .filter(gpr_event::Column::GprId.is_in(ids.iter().map(|g| g.id)))
            .filter(gpr_event::Column::Kind.is_in(ledger::KINDS))
            .order_by_asc(gpr_event::Column::Id)
            .into_tuple()
            .all(db)
            .await?;
        for (gpr, kind, at) in rows {
            by_gpr.entry(gpr).or_default().push((kind, at));
        }
    }
    Ok(by_gpr)
}

/// GPUs per node of each shape in the inventory (the most any node of it has).
async fn gpus_per_node_by_shape(db: &DatabaseConnection) -> Result<HashMap<String, i64>> {
    let rows: Vec<(String, i32)> =
        node::Entity::find().select_only().columns([node::Column::GpuShape, node::Column::GpusPerNode]).into_tuple().all(db).await?;
    let mut by_shape: HashMap<String, i64> = HashMap::new();
    for (shape, gpus) in rows {
        let entry = by_shape.entry(shape).or_default();
        *entry = (*entry).max(i64::from(gpus));
    }
    Ok(by_shape)
}

/// A GPR's GPUs per node when it asked for whole nodes: its shape's, or (no shape, or one no
/// node has any more) the largest node's, or 8.
fn shape_gpus(by_shape: &HashMap<String, i64>, shape: &str) -> i64 {
    by_shape.get(shape).copied().or_else(|| by_shape.values().copied().max()).unwrap_or(8).max(1)
}

fn single(ids: &[i64]) -> Option<i64> {
    match ids {
        [one] => Some(*one),
        _ => None,
    }
}
