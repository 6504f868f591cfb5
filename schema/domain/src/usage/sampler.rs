//! Measured utilisation over time: every minute one replica claims the time since the last
//! sample and adds, per cluster and holding slice, the GPU-seconds present, reporting, and
//! weighted by the GPUs' latest utilisation.

use super::ledger;
use super::{claim_cursor, cursor_position, set_cursor};
use crate::error::Result;
use chrono::{DateTime, Duration, NaiveDate, Utc};
use egs_entities::{gpr, gpu, node, usage_utilisation_daily as util};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect, Set};
use std::collections::{BTreeMap, HashMap};

const SAMPLED_AT: &str = "usage.sampled_at";
/// A sample older than this does not count: its agent may have gone quiet.
pub const FRESH_FOR: Duration = Duration::seconds(120);
/// The most one sample stands for: after a longer gap (no replica ran), the rest is unknown.
pub const MAX_STEP: Duration = Duration::minutes(5);
/// Samples closer together than this are skipped (another replica just took one).
const MIN_STEP: Duration = Duration::seconds(10);

#[derive(Default, Debug, PartialEq)]
struct Secs {
    present: f64,
    reporting: f64,
    busy: f64,
}

/// Takes one sample as of `now` (the lifecycle clock, which times the steps), unless another
/// replica took one within [`MIN_STEP`]. A GPU's sample is fresh by `wall`, the clock agents'
/// samples are stamped and checked with. The first sample of a database only starts the clock.
/// Returns the seconds it stood for.
pub async fn sample(db: &DatabaseConnection, now: DateTime<Utc>, wall: DateTime<Utc>) -> Result<i64> {
    let Some(last) = cursor_position(db, SAMPLED_AT).await? else {
        set_cursor(db, SAMPLED_AT, now.timestamp()).await?;
        return Ok(0);
    };
    let Some(last) = DateTime::from_timestamp(last, 0) else { return Ok(0) };
    if now - last < MIN_STEP || !claim_cursor(db, SAMPLED_AT, last.timestamp(), now.timestamp()).await? {
        return Ok(0);
    }
    let from = last.max(now - MAX_STEP);
    let step: Vec<(NaiveDate, i64)> = ledger::days(from, now).collect();

    let nodes: Vec<(i64, i64, Option<i64>)> = node::Entity::find()
        .select_only()
        .columns([node::Column::Id, node::Column::ClusterId, node::Column::AllocatedGprId])
        .into_tuple()
        .all(db)
        .await?;
    let held: Vec<i64> = nodes.iter().filter_map(|n| n.2).collect();
    let slice_of_gpr: HashMap<i64, i64> = if held.is_empty() {
        HashMap::new()
    } else {
        gpr::Entity::find()
            .select_only()
            .columns([gpr::Column::Id, gpr::Column::SliceId])
            .filter(gpr::Column::Id.is_in(held))
            .into_tuple::<(i64, i64)>()
            .all(db)
            .await?
            .into_iter()
            .collect()
    };
    let where_node: HashMap<i64, (i64, i64)> =
        nodes.iter().map(|&(id, cluster, gpr)| (id, (cluster, gpr.and_then(|g| slice_of_gpr.get(&g).copied()).unwrap_or(0)))).collect();
    let gpus: Vec<(i64, Option<f64>, Option<DateTime<Utc>>)> = gpu::Entity::find()
        .select_only()
        .columns([gpu::Column::NodeId, gpu::Column::LatestUtil, gpu::Column::LastSampleAt])
        .into_tuple()
        .all(db)
        .await?;

    let mut sums: BTreeMap<(NaiveDate, i64, i64), Secs> = BTreeMap::new();
    for (node_id, util, sampled_at) in gpus {
        let Some(&(cluster, slice)) = where_node.get(&node_id) else { continue };
        let fresh = util.filter(|_| sampled_at.is_some_and(|at| at >= wall - FRESH_FOR));
        for &(day, secs) in &step {
            let s = sums.entry((day, cluster, slice)).or_default();
            let secs = secs as f64;
            s.present += secs;
            if let Some(util) = fresh {
                s.reporting += secs;
                s.busy += secs * util.clamp(0.0, 100.0) / 100.0;
            }
        }
    }
    for ((day, cluster, slice), s) in sums {
        add(db, day, cluster, slice, &s).await?;
    }
    Ok((now - from).num_seconds())
}

/// Adds to a day's row, making it if it is the first.
async fn add(db: &DatabaseConnection, day: NaiveDate, cluster: i64, slice: i64, s: &Secs) -> Result<()> {
    let row = util::ActiveModel {
        day: Set(day),
        cluster_id: Set(cluster),
        slice_id: Set(slice),
        gpu_secs: Set(s.present),
        reporting_gpu_secs: Set(s.reporting),
        busy_gpu_secs: Set(s.busy),
        ..Default::default()
    };
    let sum = |col: util::Column| {
        sea_orm::sea_query::ExprTrait::add(Expr::col((util::Entity, col)), Expr::col((sea_orm::sea_query::Alias::new("excluded"), col)))
    };
    let upsert = OnConflict::columns([util::Column::Day, util::Column::ClusterId, util::Column::SliceId])
        .value(util::Column::GpuSecs, sum(util::Column::GpuSecs))
        .value(util::Column::ReportingGpuSecs, sum(util::Column::ReportingGpuSecs))
        .value(util::Column::BusyGpuSecs, sum(util::Column::BusyGpuSecs))
        .to_owned();
    util::Entity::insert(row).on_conflict(upsert).exec_without_returning(db).await?;
    Ok(())
}
