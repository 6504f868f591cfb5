//! GPU metrics rules: who may report and read, sample validation, ingestion (the latest sample
//! of each GPU in the database, history in the [`MetricsStore`]), summaries, hot-spot ranking
//! and agent liveness.
//!
//! Reading follows slice isolation: admins read every GPU's metrics; a user reads those of
//! GPUs on nodes held by a GPR of one of their slices, from the node's assignment to that GPR
//! on (never what the node's previous holder ran). Anything else reads as missing.

use super::store::{Allocation, Holder, Ingested, MetricsStore, Sample, Values};
use crate::auth::{Caller, Visible};
use crate::error::{Error, Result, UserError};
use chrono::{DateTime, Utc};
use egs_entities::gpu::XidErrors;
use egs_entities::{Health, Role, gpr, gpr_node, gpu, node};
use sea_orm::sea_query::{Expr, Query};
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect, TransactionTrait};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// Most samples one report may carry (10 s of a 64-GPU node at 16 Hz, or an hour of buffered
/// 1 Hz samples of two GPUs): bounds the work of one request.
pub const MAX_SAMPLES_PER_REPORT: usize = 10_000;
/// Samples further ahead of the gateway's clock than this are refused (the agent's clock is off).
pub const MAX_FUTURE_SECS: i64 = 60;
/// Samples older than this are refused: history keeps 24 hours.
pub const MAX_AGE_SECS: i64 = 24 * 3600;
/// A GPU at or above this utilisation (%) is busy: the idle timeout counts from its last busy sample.
pub const BUSY_UTIL_PERCENT: f64 = 1.0;
/// A node whose agent has been silent this long reads as `STALE`.
pub const STALE_AFTER_SECS: i64 = 30;
/// 1-second history spans this long.
pub const SECOND_HISTORY_SECS: i64 = super::store::SECOND_SLOTS as i64;
/// Slack for the history windows: a client's `now - 10m` is a little older by the time it arrives.
const WINDOW_GRACE_SECS: i64 = 60;
const MAX_XID_PER_SAMPLE: usize = 32;
/// A report full of bad samples gets this many errors listed, and a count of the rest.
const MAX_LISTED_ERRORS: usize = 50;

/// One sample as an agent reports it.
#[derive(Clone, Debug)]
pub struct SampleReport {
    pub uuid: String,
    pub timestamp: DateTime<Utc>,
    pub util: f64,
    pub mem_util: f64,
    pub mem_used_mib: f64,
    pub temperature: f64,
    pub power: f64,
    pub sm_clock_mhz: f64,
    pub xid_errors: Vec<i32>,
    pub ecc_corrected: Option<i64>,
    pub ecc_uncorrected: Option<i64>,
}

/// The node a report is for: by id, or as agents know it (cluster and node name).
#[derive(Clone, Debug)]
pub enum NodeRef {
    Id(i64),
    Named { cluster_id: i64, name: String },
}

/// Whether an agent token covers the node: its own, or any of its cluster's (a cluster-scoped
/// token).
pub(crate) fn is_own_node(caller: &Caller, cluster_id: i64, name: &str) -> bool {
    caller.agent_covers(cluster_id, name)
}

/// Whether the caller is an agent (`true`) or an admin (`false`); users may not report.
fn caller_may_report(caller: &Caller) -> Result<bool> {
    match caller.role() {
        Role::Admin => Ok(false),
        Role::Agent => Ok(true),
        Role::User => Err(Error::Forbidden("this needs the node's agent token or an admin token".into())),
    }
}

/// The node a report is about, with its GPUs.
pub struct Reporting {
    pub node: node::Model,
    pub gpus: Vec<gpu::Model>,
    /// Sent by the node's agent (not an admin): the report is also its heartbeat.
    pub agent: bool,
}

/// Finds the node an agent or an admin reports for. Users are refused, and an agent naming a
/// node outside its token's scope is refused before anything is read about it.
pub async fn reporting_node(db: &DatabaseConnection, caller: &Caller, node_ref: &NodeRef) -> Result<Reporting> {
    let agent = caller_may_report(caller)?;
    if let NodeRef::Named { cluster_id, name } = node_ref
        && agent
        && !is_own_node(caller, *cluster_id, name)
    {
        return Err(caller.foreign_node());
    }
    let node = match node_ref {
        NodeRef::Id(id) => node::Entity::find_by_id(*id).one(db).await?,
        NodeRef::Named { cluster_id, name } => {
            node::Entity::find().filter(node::Column::ClusterId.eq(*cluster_id)).filter(node::Column::Name.eq(name.as_str())).one(db).await?
        }
    };
    let node = node.ok_or(Error::NotFound("node"))?;
    if agent && !is_own_node(caller, node.cluster_id, &node.name) {
        return Err(caller.foreign_node());
    }
    let gpus = gpu::Entity::find().filter(gpu::Column::NodeId.eq(node.id)).all(db).await?;
    Ok(Reporting { node, gpus, agent })
}

/// Validates and stores a batch of samples for one node, all or nothing: any invalid sample
/// (or a GPU that is not the node's) stores none. Admins report for any node; an agent only
/// for its own, and its report is the node's heartbeat. New samples reach live subscribers,
/// then go through the alert rules (whose transitions `alerts` publishes).
pub async fn report_samples(
    db: &DatabaseConnection,
    store: &MetricsStore,
    alerts: &crate::alerts::hub::AlertHub,
    caller: &Caller,
    now: DateTime<Utc>,
    node_ref: NodeRef,
    reports: Vec<SampleReport>,
) -> Result<Ingested> {
    let Reporting { node, gpus, agent } = reporting_node(db, caller, &node_ref).await?;
    if reports.len() > MAX_SAMPLES_PER_REPORT {
        return Err(Error::invalid("samples", format!("at most {MAX_SAMPLES_PER_REPORT} samples per report, got {}", reports.len())));
    }
    let samples = check_samples(&node, &gpus, &reports, now)?;
    persist_latest(db, node.id, &samples, agent.then_some(now)).await?;
    // Live subscribers first: evaluating the alert rules takes queries of its own.
    let ingested = store.ingest(node.id, samples.clone(), now.timestamp());
    if crate::alerts::service::after_report(db, &node, &gpus, &samples, agent.then_some(now)).await > 0 {
        alerts.changed();
    }
    Ok(ingested)
}

fn check_range(field: &str, value: f64, min: f64, max: f64, unit: &str, errors: &mut Vec<UserError>) {
    if !(value.is_finite() && (min..=max).contains(&value)) {
        errors.push(UserError::invalid(field, format!("must be between {min} and {max}{unit}, got {value}")));
    }
}

/// Every problem of every sample, by field path (`samples.3.temperature`); or the samples,
/// resolved to their GPUs, at whole-second resolution.
pub fn check_samples(node: &node::Model, gpus: &[gpu::Model], reports: &[SampleReport], now: DateTime<Utc>) -> Result<Vec<Sample>> {
    let by_uuid: HashMap<&str, &gpu::Model> = gpus.iter().map(|g| (g.uuid.as_str(), g)).collect();
    let uuids: HashMap<i64, Arc<str>> = gpus.iter().map(|g| (g.id, Arc::from(g.uuid.as_str()))).collect();
    let mut errors = Vec::new();
    let mut samples = Vec::with_capacity(reports.len());
    for (i, r) in reports.iter().enumerate() {
        let at = |f: &str| format!("samples.{i}.{f}");
        let gpu = by_uuid.get(r.uuid.as_str()).copied();
        if gpu.is_none() {
            errors.push(UserError::invalid(
                &at("uuid"),
                format!("`{}` is not a GPU of node `{}`", r.uuid.chars().take(128).collect::<String>(), node.name),
            ));
        }
        let ahead = (r.timestamp - now).num_seconds();
        if ahead > MAX_FUTURE_SECS {
            errors.push(UserError::invalid(
                &at("timestamp"),
                format!("is {ahead} s ahead of the gateway's clock (at most {MAX_FUTURE_SECS} s is accepted); check the agent's clock"),
            ));
        } else if (now - r.timestamp).num_seconds() > MAX_AGE_SECS {
            errors.push(UserError::invalid(&at("timestamp"), "is older than 24 hours, which history does not keep"));
        }
        check_range(&at("util"), r.util, 0.0, 100.0, " %", &mut errors);
        check_range(&at("memUtil"), r.mem_util, 0.0, 100.0, " %", &mut errors);
        // The registered size is a little under what NVML may count: allow 5 % over it.
        let memory = gpu.map_or(16.0 * 1024.0 * 1024.0, |g| g.memory_mib as f64 * 1.05);
        check_range(&at("memUsedMib"), r.mem_used_mib, 0.0, memory.floor(), " MiB", &mut errors);
        check_range(&at("temperature"), r.temperature, -50.0, 150.0, " °C", &mut errors);
        check_range(&at("power"), r.power, 0.0, 5000.0, " W", &mut errors);
        check_range(&at("smClockMhz"), r.sm_clock_mhz, 0.0, 10_000.0, " MHz", &mut errors);
        if r.xid_errors.len() > MAX_XID_PER_SAMPLE {
            errors.push(UserError::invalid(&at("xidErrors"), format!("at most {MAX_XID_PER_SAMPLE} XID codes per sample")));
        } else if let Some(bad) = r.xid_errors.iter().find(|x| !(1..=65_535).contains(*x)) {
            errors.push(UserError::invalid(&at("xidErrors"), format!("XID codes are between 1 and 65535, got {bad}")));
        }
        for (field, count) in [("eccCorrected", r.ecc_corrected), ("eccUncorrected", r.ecc_uncorrected)] {
            if count.is_some_and(|c| c < 0) {
                errors.push(UserError::invalid(&at(field), "must not be negative"));
            }
        }
        if let Some(gpu) = gpu
            && errors.is_empty()
        {
            samples.push(Sample {
                gpu_id: gpu.id,
                uuid: uuids.get(&gpu.id).cloned().unwrap_or_else(|| Arc::from(gpu.uuid.as_str())),
                node_id: node.id,
                at: r.timestamp.timestamp(),
                values: Values {
                    util: r.util as f32,
                    mem_util: r.mem_util as f32,
                    mem_used_mib: r.mem_used_mib as f32,
                    temperature: r.temperature as f32,
                    power: r.power as f32,
                },
                sm_clock_mhz: r.sm_clock_mhz as f32,
                xid_errors: r.xid_errors.clone(),
                ecc_corrected: r.ecc_corrected,
                ecc_uncorrected: r.ecc_uncorrected,
            });
        }
    }
    if errors.len() > MAX_LISTED_ERRORS {
        let more = errors.len() - MAX_LISTED_ERRORS;
        errors.truncate(MAX_LISTED_ERRORS);
        errors.push(UserError::invalid("samples", format!("and {more} more problems")));
    }
    crate::validate::finish(errors)?;
    Ok(samples)
}

fn time_of(at: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(at, 0).unwrap_or_default()
}

/// Moves each GPU's latest sample (and `last_sample_at`, `last_busy_at`) forward, never back:
/// a resend or a late batch changes nothing it should not. One conditional `UPDATE` per GPU
/// (measured faster on both backends than one `UPDATE` with a `CASE` per column) and the
/// heartbeat, in one transaction.
async fn persist_latest(db: &DatabaseConnection, node_id: i64, samples: &[Sample], heartbeat: Option<DateTime<Utc>>) -> Result<()> {
    // By GPU id: concurrent reports for a node lock its rows in the same order.
    let mut newest: BTreeMap<i64, &Sample> = BTreeMap::new();
    let mut busy: BTreeMap<i64, i64> = BTreeMap::new();
    for s in samples {
        if newest.get(&s.gpu_id).is_none_or(|kept| kept.at < s.at) {
            newest.insert(s.gpu_id, s);
        }
        if f64::from(s.values.util) >= BUSY_UTIL_PERCENT {
            let at = busy.entry(s.gpu_id).or_insert(s.at);
            *at = (*at).max(s.at);
        }
    }
    let txn = db.begin().await?;
    for (gpu_id, s) in newest {
        let at = time_of(s.at);
        let mut update = gpu::Entity::update_many()
            .col_expr(gpu::Column::LastSampleAt, Expr::value(at))
            .col_expr(gpu::Column::LatestUtil, Expr::value(f64::from(s.values.util)))
            .col_expr(gpu::Column::LatestMemUtil, Expr::value(f64::from(s.values.mem_util)))
            .col_expr(gpu::Column::LatestMemUsedMib, Expr::value(f64::from(s.values.mem_used_mib)))
            .col_expr(gpu::Column::LatestTemperatureC, Expr::value(f64::from(s.values.temperature)))
            .col_expr(gpu::Column::LatestPowerW, Expr::value(f64::from(s.values.power)))
            .col_expr(gpu::Column::LatestSmClockMhz, Expr::value(f64::from(s.sm_clock_mhz)))
            .col_expr(gpu::Column::LatestXidErrors, Expr::value(XidErrors(s.xid_errors.clone())))
            .col_expr(gpu::Column::LatestEccCorrected, Expr::value(s.ecc_corrected))
            .col_expr(gpu::Column::LatestEccUncorrected, Expr::value(s.ecc_uncorrected));
        // The common case, a busy newest sample: one statement. A newer last sample implies
        // an older last busy one, so it may move with it.
        let busy_now = busy.get(&gpu_id) == Some(&s.at);
        if busy_now {
            update = update.col_expr(gpu::Column::LastBusyAt, Expr::value(at));
        }
        let moved = update
            .filter(gpu::Column::Id.eq(gpu_id))
            .filter(Condition::any().add(gpu::Column::LastSampleAt.is_null()).add(gpu::Column::LastSampleAt.lt(at)))
            .exec(&txn)
            .await?
            .rows_affected
            == 1;
        if moved && busy_now {
            busy.remove(&gpu_id);
        }
    }
    // A late busy sample still counts.
    for (gpu_id, at) in busy {
        let at = time_of(at);
        gpu::Entity::update_many()
            .col_expr(gpu::Column::LastBusyAt, Expr::value(at))
            .filter(gpu::Column::Id.eq(gpu_id))
            .filter(Condition::any().add(gpu::Column::LastBusyAt.is_null()).add(gpu::Column::LastBusyAt.lt(at)))
            .exec(&txn)
            .await?;
    }
    if let Some(now) = heartbeat {
        node::Entity::update_many().col_expr(node::Column::LastHeartbeatAt, Expr::value(now)).filter(node::Column::Id.eq(node_id)).exec(&txn).await?;
    }
    txn.commit().await?;
    Ok(())
}

/// A node's health as readers see it: `STALE` when it has an agent (it reported once) that
/// has been silent for [`STALE_AFTER_SECS`]. A reported `UNHEALTHY` stays as it is.
pub fn effective_health(node: &node::Model, now: DateTime<Utc>) -> Health {
    match (node.health, node.last_heartbeat_at) {
        (Health::Healthy, Some(at)) if (now - at).num_seconds() >= STALE_AFTER_SECS => Health::Stale,
        (health, _) => health,
    }
}

/// The `nodes(filter: { health })` condition matching [`effective_health`].
pub fn health_condition(health: Health, now: DateTime<Utc>) -> Condition {
    let cutoff = now - chrono::Duration::seconds(STALE_AFTER_SECS);
    let healthy = node::Column::Health.eq(Health::Healthy);
    match health {
        Health::Stale => Condition::any()
            .add(node::Column::Health.eq(Health::Stale))
            .add(Condition::all().add(healthy).add(node::Column::LastHeartbeatAt.lte(cutoff))),
        Health::Healthy => Condition::all()
            .add(healthy)
            .add(Condition::any().add(node::Column::LastHeartbeatAt.is_null()).add(node::Column::LastHeartbeatAt.gt(cutoff))),
        other => Condition::all().add(node::Column::Health.eq(other)),
    }
}

/// Which of a node's samples a caller may read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// Admins: everything.
    All,
    /// A member of the slice holding the node: samples from its assignment on, so a slice
    /// never reads what the node's previous holder ran.
    Since(DateTime<Utc>),
    Nothing,
}

impl Access {
    /// How a user's access to a node held by `holder` (with `holder_visible`: the caller may
    /// see its slice) reads; admins get [`Access::All`] before this.
    pub fn of(holder: Option<Holder>, holder_visible: bool) -> Self {
        match holder {
            Some(h) if holder_visible => Self::Since(time_of(h.since)),
            _ => Self::Nothing,
        }
    }

    /// Whether a sample taken at `at` may be read.
    pub fn allows(self, at: Option<DateTime<Utc>>) -> bool {
        match self {
            Self::All => true,
            Self::Since(since) => at.is_some_and(|at| at >= since),
            Self::Nothing => false,
        }
    }
}

/// Clears a GPU's latest sample (for a caller who may not read it): it reads as never reported.
pub fn redact(g: &mut gpu::Model) {
    g.last_sample_at = None;
    g.last_busy_at = None;
    g.latest_util = None;
    g.latest_mem_util = None;
    g.latest_mem_used_mib = None;
    g.latest_temperature_c = None;
    g.latest_power_w = None;
    g.latest_sm_clock_mhz = None;
    g.latest_xid_errors = None;
    g.latest_ecc_corrected = None;
    g.latest_ecc_uncorrected = None;
}

/// Which GPR (and slice) holds each held node, and since when: one statement per table, for
/// all nodes or only `nodes`.
pub async fn allocation(db: &impl ConnectionTrait, nodes: Option<Vec<i64>>) -> Result<Allocation> {
    let mut held = node::Entity::find().select_only().column(node::Column::Id).column(node::Column::AllocatedGprId);
    held = held.filter(node::Column::AllocatedGprId.is_not_null());
    if let Some(nodes) = nodes {
        held = held.filter(node::Column::Id.is_in(nodes));
    }
    let held: Vec<(i64, Option<i64>)> = held.into_tuple().all(db).await?;
    let gpr_ids: Vec<i64> = held.iter().filter_map(|(_, g)| *g).collect::<HashSet<_>>().into_iter().collect();
    if gpr_ids.is_empty() {
        return Ok(Allocation::new());
    }
    let slices: HashMap<i64, i64> = gpr::Entity::find()
        .select_only()
        .column(gpr::Column::Id)
        .column(gpr::Column::SliceId)
        .filter(gpr::Column::Id.is_in(gpr_ids.clone()))
        .into_tuple::<(i64, i64)>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let since: HashMap<(i64, i64), DateTime<Utc>> = gpr_node::Entity::find()
        .filter(gpr_node::Column::GprId.is_in(gpr_ids))
        .all(db)
        .await?
        .into_iter()
        .map(|l| ((l.gpr_id, l.node_id), l.assigned_at))
        .collect();
    Ok(held
        .into_iter()
        .filter_map(|(node_id, gpr_id)| {
            let gpr_id = gpr_id?;
            // No assignment row would be an inconsistency: read nothing rather than too much.
            let since = since.get(&(gpr_id, node_id))?.timestamp();
            Some((node_id, Holder { gpr_id, slice_id: *slices.get(&gpr_id)?, since }))
        })
        .collect())
}

/// Per node, what a user may read of its samples; `None` means everything (admins).
pub async fn readable(db: &DatabaseConnection, caller: &Caller, nodes: Option<Vec<i64>>) -> Result<Option<HashMap<i64, DateTime<Utc>>>> {
    caller.require_person()?;
    let slices = match caller.visible_slices(db).await? {
        Visible::All => return Ok(None),
        Visible::Only(slices) => slices,
    };
    if slices.is_empty() {
        return Ok(Some(HashMap::new()));
    }
    let held = allocation(db, nodes).await?;
    Ok(Some(held.into_iter().filter(|(_, h)| slices.binary_search(&h.slice_id).is_ok()).map(|(node, h)| (node, time_of(h.since))).collect()))
}

/// What a metrics query or subscription is about.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    Gpu(i64),
    Node(i64),
    /// The nodes a GPR holds now.
    Gpr(i64),
    /// The nodes the slice's GPRs hold now.
    Slice(i64),
}

/// The GPUs of `scope`, when the caller may read their metrics, with samples the caller may
/// not read (a previous holder's) cleared. A GPU or node the caller may not read, and a GPR or
/// slice they may not see, is `NOT_FOUND`, exactly like a missing one.
pub async fn scope_gpus(db: &DatabaseConnection, caller: &Caller, scope: Scope) -> Result<Vec<gpu::Model>> {
    caller.require_person()?;
    let held_by = |condition: Condition| {
        let nodes = Query::select().column(node::Column::Id).from(node::Entity).cond_where(condition).to_owned();
        gpu::Entity::find().filter(gpu::Column::NodeId.in_subquery(nodes))
    };
    let (select, node, missing) = match scope {
        Scope::Gpu(id) => {
            let gpu = gpu::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("GPU"))?;
            (gpu::Entity::find_by_id(id), Some(gpu.node_id), "GPU")
        }
        Scope::Node(id) => (gpu::Entity::find().filter(gpu::Column::NodeId.eq(id)), Some(id), "node"),
        Scope::Gpr(id) => {
            let gpr = crate::gpr::service::find_gpr(db, caller, id).await?;
            (held_by(Condition::all().add(node::Column::AllocatedGprId.eq(gpr.id))), None, "GPR")
        }
        Scope::Slice(id) => {
            let slice = crate::slice::service::find_slice(db, caller, id).await?;
            let gprs = Query::select().column(gpr::Column::Id).from(gpr::Entity).and_where(gpr::Column::SliceId.eq(slice.id)).to_owned();
            (held_by(Condition::all().add(node::Column::AllocatedGprId.in_subquery(gprs))), None, "slice")
        }
    };
    if let Some(node) = node
        && node::Entity::find_by_id(node).one(db).await?.is_none()
    {
        return Err(Error::NotFound(missing));
    }
    let mut gpus = select.all(db).await?;
    let Some(readable) = readable(db, caller, node.map(|n| vec![n])).await? else { return Ok(gpus) };
    if node.is_some_and(|n| !readable.contains_key(&n)) {
        return Err(Error::NotFound(missing));
    }
    for g in &mut gpus {
        let access = readable.get(&g.node_id).map_or(Access::Nothing, |since| Access::Since(*since));
        if !access.allows(g.last_sample_at) {
            redact(g);
        }
    }
    Ok(gpus)
}

/// Whether a live subscriber of `scope` who sees `visible` slices receives `sample`, given who
/// holds which node now.
pub fn live_wanted(scope: Scope, visible: &Visible, allocation: &Allocation, sample: &Sample) -> bool {
    let holder = allocation.get(&sample.node_id);
    let readable = match visible {
        Visible::All => true,
        Visible::Only(slices) => holder.is_some_and(|h| slices.binary_search(&h.slice_id).is_ok() && sample.at >= h.since),
    };
    readable
        && match scope {
            Scope::Gpu(gpu) => sample.gpu_id == gpu,
            Scope::Node(node) => sample.node_id == node,
            Scope::Gpr(gpr) => holder.is_some_and(|h| h.gpr_id == gpr),
            Scope::Slice(slice) => holder.is_some_and(|h| h.slice_id == slice),
        }
}

/// A point in time of history, and the validated window of a history query.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Window {
    pub from: i64,
    pub to: i64,
    pub step: i64,
}

/// Checks a `metrics(from, to, step)` request. Defaults: from 10 minutes ago to whatever
/// came in (agents' clocks may run a little ahead), at 1 s steps when `from` is within the
/// 1 s history and 1 min steps before that.
pub fn window(now: DateTime<Utc>, from: Option<DateTime<Utc>>, to: Option<DateTime<Utc>>, step: Option<i64>) -> Result<Window> {
    let now = now.timestamp();
    let to = to.map_or(now + MAX_FUTURE_SECS, |t| t.timestamp());
    let from = from.map_or(to.min(now) - SECOND_HISTORY_SECS, |t| t.timestamp());
    let step = step.unwrap_or(if from >= now - SECOND_HISTORY_SECS - WINDOW_GRACE_SECS { 1 } else { 60 });
    let mut errors = Vec::new();
    if from >= to {
        errors.push(UserError::invalid("from", "must be before `to`"));
    } else if to - from > MAX_AGE_SECS {
        errors.push(UserError::invalid("from", "at most 24 hours of history at a time"));
    }
    if step < 1 {
        errors.push(UserError::invalid("step", "must be at least 1s"));
    } else if step > MAX_AGE_SECS {
        errors.push(UserError::invalid("step", "must be at most 24h"));
    } else if step >= 60 && step % 60 != 0 {
        errors.push(UserError::invalid("step", "a step of a minute or more must be whole minutes, e.g. `5m`"));
    }
    if step < 60 && from < now - SECOND_HISTORY_SECS - WINDOW_GRACE_SECS {
        errors.push(UserError::invalid("from", "1-second history covers the last 10 minutes; ask for older data with a step of 1m or more"));
    } else if from < now - MAX_AGE_SECS - WINDOW_GRACE_SECS {
        errors.push(UserError::invalid("from", "history covers the last 24 hours"));
    }
    crate::validate::finish(errors)?;
    Ok(Window { from, to, step })
}

/// Aggregates over the latest samples of a set of GPUs.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub gpus: usize,
    /// GPUs with a latest sample.
    pub reporting: usize,
    /// Reporting GPUs under [`BUSY_UTIL_PERCENT`].
    pub idle: usize,
    pub avg_util: Option<f64>,
    pub avg_mem_util: Option<f64>,
    pub avg_temperature: Option<f64>,
    pub mem_used_mib: Option<f64>,
    pub power: Option<f64>,
    pub hottest: Option<gpu::Model>,
    pub highest_power: Option<gpu::Model>,
    pub newest_sample_at: Option<DateTime<Utc>>,
    pub oldest_sample_at: Option<DateTime<Utc>>,
}

/// The latest values of a GPU, if it reported.
pub struct Latest {
    pub util: f64,
    pub mem_util: f64,
    pub mem_used_mib: f64,
    pub temperature: f64,
    pub power: f64,
}

pub fn latest(g: &gpu::Model) -> Option<Latest> {
    g.last_sample_at?;
    Some(Latest {
        util: g.latest_util?,
        mem_util: g.latest_mem_util?,
        mem_used_mib: g.latest_mem_used_mib?,
        temperature: g.latest_temperature_c?,
        power: g.latest_power_w?,
    })
}

pub fn summarize(gpus: Vec<gpu::Model>) -> Summary {
    let mut summary = Summary { gpus: gpus.len(), ..Summary::default() };
    let (mut util, mut mem_util, mut temperature, mut mem_used, mut power) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let mut hottest: Option<(f64, usize)> = None;
    let mut highest: Option<(f64, usize)> = None;
    for (i, g) in gpus.iter().enumerate() {
        let Some(l) = latest(g) else { continue };
        summary.reporting += 1;
        if l.util < BUSY_UTIL_PERCENT {
            summary.idle += 1;
        }
        util += l.util;
        mem_util += l.mem_util;
        temperature += l.temperature;
        mem_used += l.mem_used_mib;
        power += l.power;
        if hottest.is_none_or(|(t, _)| l.temperature > t) {
            hottest = Some((l.temperature, i));
        }
        if highest.is_none_or(|(p, _)| l.power > p) {
            highest = Some((l.power, i));
        }
        summary.newest_sample_at = summary.newest_sample_at.max(g.last_sample_at);
        summary.oldest_sample_at = match summary.oldest_sample_at {
            Some(t) => Some(g.last_sample_at.map_or(t, |at| at.min(t))),
            None => g.last_sample_at,
        };
    }
    if summary.reporting > 0 {
        let n = summary.reporting as f64;
        summary.avg_util = Some(util / n);
        summary.avg_mem_util = Some(mem_util / n);
        summary.avg_temperature = Some(temperature / n);
        summary.mem_used_mib = Some(mem_used);
        summary.power = Some(power);
    }
    summary.hottest = hottest.and_then(|(_, i)| gpus.get(i).cloned());
    summary.highest_power = highest.and_then(|(_, i)| gpus.get(i).cloned());
    summary
}

/// Orders of the `gpus` list by their latest sample.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Rank {
    HotSpots,
    Power,
    Busiest,
    Idlest,
}

/// Sorts GPUs by their latest sample. GPUs whose metrics the caller may not read (`readable`
/// false) or that never reported come last, by id, so the order reveals nothing about them.
pub fn rank(gpus: &mut [gpu::Model], order: Rank, readable: impl Fn(&gpu::Model) -> bool) {
    use std::cmp::Ordering;
    let key = |g: &gpu::Model| -> Option<[f64; 3]> {
        let l = latest(g).filter(|_| readable(g))?;
        Some(match order {
            Rank::HotSpots => [-l.temperature, -l.power, -l.util],
            Rank::Power => [-l.power, -l.temperature, -l.util],
            Rank::Busiest => [-l.util, -l.mem_util, -l.temperature],
            Rank::Idlest => [l.util, l.mem_util, l.power],
        })
    };
    let mut keyed: Vec<(Option<[f64; 3]>, i64, usize)> = gpus.iter().enumerate().map(|(i, g)| (key(g), g.id, i)).collect();
    keyed.sort_by(|(a, a_id, _), (b, b_id, _)| {
        let by_key = match (a, b) {
            (Some(a), Some(b)) => a.iter().zip(b).map(|(x, y)| x.total_cmp(y)).find(|o| o.is_ne()).unwrap_or(Ordering::Equal),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        };
        by_key.then(a_id.cmp(b_id))
    });
    let order: Vec<usize> = keyed.into_iter().map(|(_, _, i)| i).collect();
    let mut sorted: Vec<gpu::Model> = order.iter().filter_map(|&i| gpus.get(i).cloned()).collect();
    gpus.swap_with_slice(&mut sorted);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node() -> node::Model {
        let now = Utc::now();
        node::Model {
            id: 1,
            cluster_id: 1,
            name: "n1".into(),
            instance_type: "p5".into(),
            gpu_shape: "H100".into(),
            gpus_per_node: 1,
            zone: None,
            gpu_memory_mib: 81_559,
            health: Health::Healthy,
            state: egs_entities::NodeState::Available,
            allocated_gpr_id: None,
            power_threshold_watts: None,
            temperature_threshold_celsius: None,
            driver_version: None,
            cuda_version: None,
            last_heartbeat_at: None,
            created_at: now,
            updated_at: now,
        }
    }

    fn gpu(id: i64, sample: Option<(f64, f64, f64)>) -> gpu::Model {
        let now = Utc::now();
        gpu::Model {
            id,
            node_id: 1,
            uuid: format!("GPU-{id}"),
            gpu_index: id as i32,
            model: "H100".into(),
            memory_mib: 81_559,
            mig_enabled: false,
            last_sample_at: sample.map(|_| now),
            last_busy_at: None,
            created_at: now,
            updated_at: now,
            latest_util: sample.map(|s| s.0),
            latest_mem_util: sample.map(|_| 10.0),
            latest_mem_used_mib: sample.map(|_| 1000.0),
            latest_temperature_c: sample.map(|s| s.1),
            latest_power_w: sample.map(|s| s.2),
            latest_sm_clock_mhz: sample.map(|_| 1980.0),
            latest_xid_errors: None,
            latest_ecc_corrected: None,
            latest_ecc_uncorrected: None,
        }
    }

    fn report(uuid: &str, timestamp: DateTime<Utc>) -> SampleReport {
        SampleReport {
            uuid: uuid.into(),
            timestamp,
            util: 50.0,
            mem_util: 20.0,
            mem_used_mib: 40_000.0,
            temperature: 60.0,
            power: 400.0,
            sm_clock_mhz: 1980.0,
            xid_errors: Vec::new(),
            ecc_corrected: Some(0),
            ecc_uncorrected: None,
        }
    }

    fn fields(error: Error) -> Vec<String> {
        match error {
            Error::User(errors) => errors.into_iter().map(|e| e.field.join(".")).collect(),
            other => panic!("expected user errors, got {other:?}"),
        }
    }

    #[test]
    fn every_bad_field_is_named_and_nothing_passes() {
        let now = Utc::now();
        let gpus = [gpu(1, None)];
        let ok = report("GPU-1", now);
        assert_eq!(check_samples(&node(), &gpus, std::slice::from_ref(&ok), now).expect("valid").len(), 1);
        let bad = vec![
            ok.clone(),
            SampleReport { util: 101.0, temperature: f64::NAN, ..ok.clone() },
            SampleReport { uuid: "GPU-of-another-node".into(), ..ok.clone() },
            SampleReport { timestamp: now + chrono::Duration::seconds(120), ..ok.clone() },
            SampleReport { timestamp: now - chrono::Duration::hours(25), ..ok.clone() },
            SampleReport { mem_used_mib: 200_000.0, power: -1.0, xid_errors: vec![0], ecc_uncorrected: Some(-2), ..ok.clone() },
        ];
        assert_eq!(
            fields(check_samples(&node(), &gpus, &bad, now).expect_err("invalid")),
            vec![
                "input.samples.1.util",
                "input.samples.1.temperature",
                "input.samples.2.uuid",
                "input.samples.3.timestamp",
                "input.samples.4.timestamp",
                "input.samples.5.memUsedMib",
                "input.samples.5.power",
                "input.samples.5.xidErrors",
                "input.samples.5.eccUncorrected",
            ]
        );
        let flood: Vec<SampleReport> = (0..200).map(|_| SampleReport { util: -1.0, ..ok.clone() }).collect();
        let listed = fields(check_samples(&node(), &gpus, &flood, now).expect_err("invalid"));
        assert_eq!(listed.len(), MAX_LISTED_ERRORS + 1, "the list is bounded");
    }

    #[test]
    fn a_silent_agent_makes_a_healthy_node_stale_but_not_an_unhealthy_one() {
        let now = Utc::now();
        let mut n = node();
        assert_eq!(effective_health(&n, now), Health::Healthy, "no agent yet: as reported");
        n.last_heartbeat_at = Some(now - chrono::Duration::seconds(5));
        assert_eq!(effective_health(&n, now), Health::Healthy);
        n.last_heartbeat_at = Some(now - chrono::Duration::seconds(STALE_AFTER_SECS));
        assert_eq!(effective_health(&n, now), Health::Stale);
        n.health = Health::Unhealthy;
        assert_eq!(effective_health(&n, now), Health::Unhealthy);
    }

    #[test]
    fn windows_pick_a_ring_and_refuse_what_history_does_not_hold() {
        let now = Utc::now();
        let t = now.timestamp();
        assert_eq!(window(now, None, None, None).ok(), Some(Window { from: t - 600, to: t + 60, step: 1 }));
        let hour = now - chrono::Duration::hours(1);
        assert_eq!(window(now, Some(hour), None, None).ok(), Some(Window { from: t - 3600, to: t + 60, step: 60 }));
        let field = |r: Result<Window>| fields(r.expect_err("refused"));
        assert_eq!(field(window(now, Some(now), Some(hour), None)), vec!["input.from"]);
        assert_eq!(field(window(now, Some(hour), None, Some(5))), vec!["input.from"], "1 s history is 10 minutes deep");
        assert_eq!(field(window(now, None, None, Some(90))), vec!["input.step"]);
        assert_eq!(field(window(now, None, None, Some(0))), vec!["input.step"]);
        assert_eq!(field(window(now, Some(now - chrono::Duration::hours(30)), None, Some(60))), vec!["input.from", "input.from"]);
    }

    #[test]
    fn live_samples_reach_only_the_holding_slice_and_only_from_its_assignment() {
        let t = 1_800_000_000;
        let allocation = Allocation::from([(1, Holder { gpr_id: 10, slice_id: 100, since: t })]);
        let at = |node_id: i64, gpu_id: i64, at: i64| Sample {
            gpu_id,
            uuid: Arc::from("GPU"),
            node_id,
            at,
            values: Values::default(),
            sm_clock_mhz: 0.0,
            xid_errors: Vec::new(),
            ecc_corrected: None,
            ecc_uncorrected: None,
        };
        let member = Visible::Only(vec![100]);
        let outsider = Visible::Only(vec![200]);
        for scope in [Scope::Gpu(5), Scope::Node(1), Scope::Gpr(10), Scope::Slice(100)] {
            assert!(live_wanted(scope, &member, &allocation, &at(1, 5, t)), "{scope:?}");
            assert!(!live_wanted(scope, &member, &allocation, &at(1, 5, t - 1)), "{scope:?}: the previous holder's sample");
            assert!(!live_wanted(scope, &outsider, &allocation, &at(1, 5, t)), "{scope:?}");
        }
        assert!(!live_wanted(Scope::Gpr(10), &member, &allocation, &at(2, 6, t)), "a node the GPR does not hold");
        assert!(live_wanted(Scope::Node(2), &Visible::All, &allocation, &at(2, 6, t - 99)), "admins see free nodes too");
        let since = DateTime::from_timestamp(t, 0);
        assert!(Access::of(allocation.get(&1).copied(), true).allows(since));
        assert!(!Access::of(allocation.get(&1).copied(), false).allows(since));
        assert!(!Access::of(None, true).allows(since));
    }

    #[test]
    fn hot_spots_come_first_and_unreadable_gpus_last() {
        let mut gpus = vec![gpu(1, Some((10.0, 50.0, 100.0))), gpu(2, None), gpu(3, Some((90.0, 85.0, 700.0))), gpu(4, Some((99.0, 95.0, 690.0)))];
        rank(&mut gpus, Rank::HotSpots, |g| g.id != 4);
        assert_eq!(gpus.iter().map(|g| g.id).collect::<Vec<_>>(), vec![3, 1, 2, 4]);
        rank(&mut gpus, Rank::Idlest, |_| true);
        assert_eq!(gpus.iter().map(|g| g.id).collect::<Vec<_>>(), vec![1, 3, 4, 2]);
        let summary = summarize(gpus);
        assert_eq!((summary.gpus, summary.reporting, summary.idle), (4, 3, 0));
        assert_eq!(summary.hottest.map(|g| g.id), Some(4));
        assert_eq!(summary.highest_power.map(|g| g.id), Some(3));
        assert!((summary.avg_util.unwrap_or_default() - 199.0 / 3.0).abs() < 1e-9);
    }
}
