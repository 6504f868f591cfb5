//! Reports from node agents: who may report for which node, sample validation, and storing
//! the latest sample of each GPU in the database ([`super::batch`] stores reports in batches;
//! history goes to the [`super::store::MetricsStore`]).

use super::sample::{Sample, Values};
use crate::auth::Caller;
use crate::error::{Error, Result, UserError};
use chrono::{DateTime, Utc};
use egs_entities::gpu::XidErrors;
use egs_entities::{Role, gpu, node};
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, EntityTrait, QueryFilter, Statement, TransactionTrait};
use std::collections::{BTreeMap, HashMap};
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
const MAX_XID_PER_SAMPLE: usize = 32;
/// A report full of bad samples gets this many errors listed, and a count of the rest.
pub(super) const MAX_LISTED_ERRORS: usize = 50;

/// One sample of one GPU, as an agent reports it.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "graphql", derive(async_graphql::InputObject))]
#[cfg_attr(feature = "graphql", graphql(name = "GpuSampleInput"))]
pub struct SampleReport {
    /// The GPU's UUID (`nvidia-smi -L`); must be a GPU of the reported node.
    pub uuid: String,
    /// When the sample was taken (whole seconds count; at most 60 s ahead, at most 24 h old).
    pub timestamp: DateTime<Utc>,
    /// GPU utilisation, 0–100 %.
    pub util: f64,
    /// Memory-controller utilisation, 0–100 %.
    pub mem_util: f64,
    /// Framebuffer memory in use, MiB (at most the GPU's memory).
    pub mem_used_mib: f64,
    /// −50–150 °C.
    pub temperature: f64,
    /// 0–5000 W.
    pub power: f64,
    /// 0–10000 MHz.
    pub sm_clock_mhz: f64,
    /// XID error codes the driver reported since the last sample.
    #[cfg_attr(feature = "graphql", graphql(default))]
    pub xid_errors: Vec<i32>,
    /// Corrected (single-bit) ECC errors, as the driver counts them.
    pub ecc_corrected: Option<i64>,
    /// Uncorrected (double-bit) ECC errors, as the driver counts them.
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

/// Who may report for `node_ref`, before anything is read: users are refused, and so is an
/// agent naming a node outside its token's scope. `true` for an agent, `false` for an admin.
pub(super) fn may_report_for(caller: &Caller, node_ref: &NodeRef) -> Result<bool> {
    let agent = caller_may_report(caller)?;
    if let NodeRef::Named { cluster_id, name } = node_ref
        && agent
        && !is_own_node(caller, *cluster_id, name)
    {
        return Err(caller.foreign_node());
    }
    Ok(agent)
}

/// The same for the node found (a node given by id is only known to be the agent's now).
pub(super) fn may_report_on(caller: &Caller, agent: bool, node: &node::Model) -> Result<()> {
    if agent && !is_own_node(caller, node.cluster_id, &node.name) {
        return Err(caller.foreign_node());
    }
    Ok(())
}

/// Finds the node an agent or an admin reports for (see [`may_report_for`]).
pub async fn reporting_node(db: &DatabaseConnection, caller: &Caller, node_ref: &NodeRef) -> Result<Reporting> {
    let agent = may_report_for(caller, node_ref)?;
    let node = find_node(db, node_ref).await?;
    may_report_on(caller, agent, &node)?;
    let gpus = gpu::Entity::find().filter(gpu::Column::NodeId.eq(node.id)).all(db).await?;
    Ok(Reporting { node, gpus, agent })
}

/// The node `node_ref` names, whoever asks (`NOT_FOUND` when there is none).
pub(super) async fn find_node(db: &DatabaseConnection, node_ref: &NodeRef) -> Result<node::Model> {
    let node = match node_ref {
        NodeRef::Id(id) => node::Entity::find_by_id(*id).one(db).await?,
        NodeRef::Named { cluster_id, name } => {
            node::Entity::find().filter(node::Column::ClusterId.eq(*cluster_id)).filter(node::Column::Name.eq(name.as_str())).one(db).await?
        }
    };
    node.ok_or(Error::NotFound("node"))
}

/// `field` names the value only when it is refused (the path is formatted then, not per sample).
fn check_range(field: impl FnOnce() -> String, value: f64, min: f64, max: f64, unit: &str, errors: &mut Vec<UserError>) {
    if !(value.is_finite() && (min..=max).contains(&value)) {
        errors.push(UserError::invalid(&field(), format!("must be between {min} and {max}{unit}, got {value}")));
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
        check_range(|| at("util"), r.util, 0.0, 100.0, " %", &mut errors);
        check_range(|| at("memUtil"), r.mem_util, 0.0, 100.0, " %", &mut errors);
        // The registered size is a little under what NVML may count: allow 5 % over it.
        let memory = gpu.map_or(16.0 * 1024.0 * 1024.0, |g| g.memory_mib as f64 * 1.05);
        check_range(|| at("memUsedMib"), r.mem_used_mib, 0.0, memory.floor(), " MiB", &mut errors);
        check_range(|| at("temperature"), r.temperature, -50.0, 150.0, " °C", &mut errors);
        check_range(|| at("power"), r.power, 0.0, 5000.0, " W", &mut errors);
        check_range(|| at("smClockMhz"), r.sm_clock_mhz, 0.0, 10_000.0, " MHz", &mut errors);
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

pub(super) fn time_of(at: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(at, 0).unwrap_or_default()
}

/// What one node's reports have brought that the database does not have yet: each GPU's
/// newest sample and newest busy time, and the newest heartbeat. Adding reports keeps only
/// what is newer, so it holds at most one sample per GPU however many reports went in.
#[derive(Default)]
pub(super) struct Unwritten {
    newest: BTreeMap<i64, Sample>,
    busy: BTreeMap<i64, i64>,
    heartbeat: Option<DateTime<Utc>>,
}

impl Unwritten {
    pub fn add(&mut self, samples: &[Sample], heartbeat: Option<DateTime<Utc>>) {
        for s in samples {
            if self.newest.get(&s.gpu_id).is_none_or(|kept| kept.at < s.at) {
                self.newest.insert(s.gpu_id, s.clone());
            }
            if f64::from(s.values.util) >= BUSY_UTIL_PERCENT {
                let at = self.busy.entry(s.gpu_id).or_insert(s.at);
                *at = (*at).max(s.at);
            }
        }
        self.heartbeat = self.heartbeat.max(heartbeat);
    }

    /// `gpu` as the database will have it once this is written (the columns only move forward).
    pub fn apply_to(&self, gpu: &mut gpu::Model) {
        if let Some(s) = self.newest.get(&gpu.id).filter(|s| gpu.last_sample_at.is_none_or(|t| t.timestamp() < s.at)) {
            gpu.last_sample_at = Some(time_of(s.at));
            gpu.latest_util = Some(f64::from(s.values.util));
            gpu.latest_mem_util = Some(f64::from(s.values.mem_util));
            gpu.latest_mem_used_mib = Some(f64::from(s.values.mem_used_mib));
            gpu.latest_temperature_c = Some(f64::from(s.values.temperature));
            gpu.latest_power_w = Some(f64::from(s.values.power));
            gpu.latest_sm_clock_mhz = Some(f64::from(s.sm_clock_mhz));
            gpu.latest_xid_errors = Some(XidErrors(s.xid_errors.clone()));
            gpu.latest_ecc_corrected = s.ecc_corrected;
            gpu.latest_ecc_uncorrected = s.ecc_uncorrected;
        }
        if let Some(&at) = self.busy.get(&gpu.id).filter(|&&at| gpu.last_busy_at.is_none_or(|t| t.timestamp() < at)) {
            gpu.last_busy_at = Some(time_of(at));
        }
    }
}

/// Moves each GPU's latest sample (and `last_sample_at`, `last_busy_at`) and each node's
/// heartbeat forward, never back, for what reports of one or more nodes brought (`nodes`, by
/// node id): a resend or a late batch changes nothing it should not. One
/// `UPDATE … FROM (VALUES …)` for all the GPUs (per [`GPUS_PER_STATEMENT`]), each column
/// guarded by its own "newer than stored" test, and one for the heartbeats, in one
/// transaction: a fixed number of statements whatever the number of GPUs and nodes (one
/// `UPDATE` per GPU was 2 + GPUs + 1 per report).
pub(super) async fn persist_latest(db: &DatabaseConnection, nodes: &[(i64, &Unwritten)]) -> Result<()> {
    // By GPU id: concurrent writers lock rows in the same order.
    let mut newest: BTreeMap<i64, &Sample> = BTreeMap::new();
    let mut busy: BTreeMap<i64, i64> = BTreeMap::new();
    let mut heartbeats: BTreeMap<i64, DateTime<Utc>> = BTreeMap::new();
    for &(node_id, unwritten) in nodes {
        newest.extend(unwritten.newest.iter().map(|(gpu, s)| (*gpu, s)));
        busy.extend(&unwritten.busy);
        if let Some(at) = unwritten.heartbeat {
            heartbeats.insert(node_id, at);
        }
    }
    let txn = db.begin().await?;
    let backend = db.get_database_backend();
    let newest: Vec<(i64, &Sample)> = newest.into_iter().collect();
    for chunk in newest.chunks(GPUS_PER_STATEMENT) {
        let mut values: Vec<sea_orm::Value> = Vec::with_capacity(chunk.len() * LATEST_COLUMNS);
        let mut rows = Vec::with_capacity(chunk.len());
        for &(gpu_id, s) in chunk {
            let first = values.len();
            values.extend([
                gpu_id.into(),
                time_of(s.at).into(),
                busy.get(&gpu_id).map(|at| time_of(*at)).into(),
                f64::from(s.values.util).into(),
                f64::from(s.values.mem_util).into(),
                f64::from(s.values.mem_used_mib).into(),
                f64::from(s.values.temperature).into(),
                f64::from(s.values.power).into(),
                f64::from(s.sm_clock_mhz).into(),
                XidErrors(s.xid_errors.clone()).into(),
                s.ecc_corrected.into(),
                s.ecc_uncorrected.into(),
            ]);
            let params: Vec<String> = (first + 1..=values.len()).map(|n| placeholder(backend, n)).collect();
            rows.push(format!("({})", params.join(", ")));
        }
        // VALUES columns are `column1`… on both backends: 1 id, 2 sample time, 3 newest busy
        // time (or null), then the values in LATEST order.
        let newer = "(gpus.last_sample_at IS NULL OR gpus.last_sample_at < v.column2)";
        let mut set: Vec<String> = LATEST
            .iter()
            .enumerate()
            .map(|(i, column)| format!("{column} = CASE WHEN {newer} THEN v.column{} ELSE gpus.{column} END", i + 4))
            .collect();
        set.push(format!("last_sample_at = CASE WHEN {newer} THEN v.column2 ELSE gpus.last_sample_at END"));
        // A late busy sample still counts.
        set.push("last_busy_at = CASE WHEN v.column3 IS NOT NULL AND (gpus.last_busy_at IS NULL OR gpus.last_busy_at < v.column3) THEN v.column3 ELSE gpus.last_busy_at END".into());
        let sql = format!("UPDATE gpus SET {} FROM (VALUES {}) AS v WHERE gpus.id = v.column1", set.join(", "), rows.join(", "));
        txn.execute_raw(Statement::from_sql_and_values(backend, sql, values)).await?;
    }
    if !heartbeats.is_empty() {
        let mut values: Vec<sea_orm::Value> = Vec::with_capacity(heartbeats.len() * 2);
        let mut rows = Vec::with_capacity(heartbeats.len());
        for (node_id, at) in heartbeats {
            values.extend([node_id.into(), at.into()]);
            rows.push(format!("({}, {})", placeholder(backend, values.len() - 1), placeholder(backend, values.len())));
        }
        let sql = format!("UPDATE nodes SET last_heartbeat_at = v.column2 FROM (VALUES {}) AS v WHERE nodes.id = v.column1", rows.join(", "));
        txn.execute_raw(Statement::from_sql_and_values(backend, sql, values)).await?;
    }
    txn.commit().await?;
    Ok(())
}

/// GPUs per `UPDATE` in `persist_latest`: 12 parameters each stays well under both backends'
/// limits on parameters per statement.
const GPUS_PER_STATEMENT: usize = 1000;

/// The latest-sample columns `persist_latest` sets from a report, in its `VALUES` order.
const LATEST: [&str; 9] = [
    "latest_util",
    "latest_mem_util",
    "latest_mem_used_mib",
    "latest_temperature_c",
    "latest_power_w",
    "latest_sm_clock_mhz",
    "latest_xid_errors",
    "latest_ecc_corrected",
    "latest_ecc_uncorrected",
];
/// Values per GPU in `persist_latest`'s `VALUES`: id, sample time, busy time, then [`LATEST`].
const LATEST_COLUMNS: usize = 3 + LATEST.len();

/// Parameter `n` (from 1) in the backend's syntax.
fn placeholder(backend: DbBackend, n: usize) -> String {
    match backend {
        DbBackend::Postgres => format!("${n}"),
        _ => "?".to_owned(),
    }
}
