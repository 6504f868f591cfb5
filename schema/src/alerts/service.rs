//! Alert storage and evaluation: what the [`rules`] read (open alerts, samples, heartbeats, idle
//! times) and the writes of their decisions.
//!
//! Writes happen only on transitions. A raise is an `INSERT … ON CONFLICT DO NOTHING` against
//! the partial unique index on open alerts (`kind`, `subject`), a clear an `UPDATE … WHERE
//! cleared_at IS NULL`; each logs its transition in `alert_changes` in the same transaction.
//! So when two replicas evaluate the same condition, exactly one stores the transition, and
//! only a stored transition is published (see [`super::hub`]).

use super::rules::{self, Decision, GPU_KINDS, GpuState, Limits, Open, Reading};
use crate::auth::{Caller, Visible};
use crate::error::{Error, Result, UserError};
use crate::inventory::liveness::STALE_AFTER_SECS;
use crate::metrics::sample::Sample;
use crate::validate;
use chrono::{DateTime, Duration, Utc};
use egs_entities::{AlertAction, AlertKind, GprPhase, alert, alert_change, alert_threshold, cluster, gpr, gpr_node, gpu, node};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Select, Set,
    TransactionTrait, TryInsertResult,
};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Alert transitions are kept this long in `alert_changes` (they are for live delivery; the
/// alerts themselves are the history).
pub const CHANGE_RETENTION_SECS: i64 = 24 * 3600;
/// Lowest and highest temperature threshold an admin may set, °C.
pub const TEMPERATURE_RANGE: (f64, f64) = (40.0, 120.0);
/// Lowest and highest power limit an admin may set, W (the range samples may report).
pub const POWER_RANGE: (f64, f64) = (10.0, 5000.0);

pub fn gpu_subject(gpu_id: i64) -> String {
    format!("gpu:{gpu_id}")
}

pub fn node_subject(node_id: i64) -> String {
    format!("node:{node_id}")
}

pub fn gpr_subject(gpr_id: i64) -> String {
    format!("gpr:{gpr_id}")
}

/// An alert to open.
#[derive(Clone, Debug)]
pub struct NewAlert {
    pub kind: AlertKind,
    pub severity: egs_entities::AlertSeverity,
    pub subject: String,
    pub cluster_id: Option<i64>,
    pub node_id: Option<i64>,
    pub gpu_id: Option<i64>,
    pub slice_id: Option<i64>,
    pub gpr_id: Option<i64>,
    pub message: String,
    pub value: Option<f64>,
    pub threshold: Option<f64>,
    pub at: DateTime<Utc>,
}

async fn log_change(db: &impl ConnectionTrait, alert_id: i64, action: AlertAction, at: DateTime<Utc>) -> Result<()> {
    let row = alert_change::ActiveModel { id: NotSet, alert_id: Set(alert_id), action: Set(action), at: Set(at), notified_by: Set(None) };
    alert_change::Entity::insert(row).exec_without_returning(db).await?;
    Ok(())
}

/// Opens an alert and logs the transition, in one transaction. `None` when an alert of its kind
/// is already open for the subject (another replica raised it first).
pub async fn raise(db: &DatabaseConnection, new: NewAlert) -> Result<Option<alert::Model>> {
    let subject = new.subject.clone();
    let row = alert::ActiveModel {
        id: NotSet,
        kind: Set(new.kind),
        severity: Set(new.severity),
        subject: Set(subject.clone()),
        cluster_id: Set(new.cluster_id),
        node_id: Set(new.node_id),
        gpu_id: Set(new.gpu_id),
        slice_id: Set(new.slice_id),
        gpr_id: Set(new.gpr_id),
        message: Set(new.message),
        value: Set(new.value),
        threshold: Set(new.threshold),
        raised_at: Set(new.at),
        cleared_at: Set(None),
        last_seen_at: Set(Some(new.at)),
        resolution: Set(None),
    };
    let open_only = OnConflict::columns([alert::Column::Kind, alert::Column::Subject])
        .target_and_where(sea_orm::sea_query::ExprTrait::is_null(Expr::col(alert::Column::ClearedAt)))
        .do_nothing()
        .to_owned();
    let txn = db.begin().await?;
    // Not `RETURNING`: SeaORM emulates it on SQLite with the connection's last insert id, which
    // after `DO NOTHING` is some earlier row's.
    let inserted = alert::Entity::insert(row).on_conflict(open_only).try_insert().exec_without_returning(&txn).await?;
    if !matches!(inserted, TryInsertResult::Inserted(1)) {
        // Dropping the transaction rolls it back: nothing was written.
        return Ok(None);
    }
    let model =
        find_open(&txn, new.kind, &subject).await?.ok_or_else(|| Error::Internal(anyhow::anyhow!("a raised alert vanished in its transaction")))?;
    log_change(&txn, model.id, AlertAction::Raised, new.at).await?;
    txn.commit().await?;
    Ok(Some(model))
}

/// The open alert of a kind about a subject, if any.
async fn find_open(db: &impl ConnectionTrait, kind: AlertKind, subject: &str) -> Result<Option<alert::Model>> {
    Ok(alert::Entity::find()
        .filter(alert::Column::Kind.eq(kind))
        .filter(alert::Column::Subject.eq(subject))
        .filter(alert::Column::ClearedAt.is_null())
        .one(db)
        .await?)
}

/// Closes an open alert and logs the transition; false when it was closed already.
pub async fn clear(db: &DatabaseConnection, alert_id: i64, resolution: &str, at: DateTime<Utc>) -> Result<bool> {
    let txn = db.begin().await?;
    let closed = alert::Entity::update_many()
        .col_expr(alert::Column::ClearedAt, Expr::value(at))
        .col_expr(alert::Column::Resolution, Expr::value(resolution.to_owned()))
        .filter(alert::Column::Id.eq(alert_id))
        .filter(alert::Column::ClearedAt.is_null())
        .exec(&txn)
        .await?
        .rows_affected
        == 1;
    if closed {
        log_change(&txn, alert_id, AlertAction::Cleared, at).await?;
        txn.commit().await?;
    }
    Ok(closed)
}

/// Records that an open alert's condition happened again (its quiet period starts over).
async fn recur(db: &DatabaseConnection, alert_id: i64, at: DateTime<Utc>) -> Result<()> {
    alert::Entity::update_many()
        .col_expr(alert::Column::LastSeenAt, Expr::value(at))
        .filter(alert::Column::Id.eq(alert_id))
        .filter(alert::Column::ClearedAt.is_null())
        .exec(db)
        .await?;
    Ok(())
}

fn open_of(model: &alert::Model) -> Open {
    Open { severity: model.severity, gpr_id: model.gpr_id, last_seen: model.last_seen_at.unwrap_or(model.raised_at) }
}

fn time_of(at: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(at, 0).unwrap_or_default()
}

/// Samples are `f32`: two decimals are all they carry.
fn round2(value: f32) -> f64 {
    (f64::from(value) * 100.0).round() / 100.0
}

/// What an alert is about, with what its raise needs to say so.
enum Target<'a> {
    Gpu { node: &'a node::Model, gpu: &'a gpu::Model },
    Node(&'a node::Model),
    Gpr(&'a gpr::Model),
}

impl Target<'_> {
    fn subject(&self) -> String {
        match self {
            Self::Gpu { gpu, .. } => gpu_subject(gpu.id),
            Self::Node(node) => node_subject(node.id),
            Self::Gpr(gpr) => gpr_subject(gpr.id),
        }
    }
}

/// Names and holders read while writing transitions, at most once each.
#[derive(Default)]
struct Names {
    clusters: HashMap<i64, String>,
    slices_of_gprs: HashMap<i64, Option<i64>>,
}

impl Names {
    async fn cluster(&mut self, db: &DatabaseConnection, id: i64) -> Result<String> {
        if let Some(name) = self.clusters.get(&id) {
            return Ok(name.clone());
        }
        let name = cluster::Entity::find_by_id(id).one(db).await?.map_or_else(|| format!("#{id}"), |c| c.name);
        self.clusters.insert(id, name.clone());
        Ok(name)
    }

    async fn slice_of(&mut self, db: &DatabaseConnection, gpr_id: Option<i64>) -> Result<Option<i64>> {
        let Some(gpr_id) = gpr_id else { return Ok(None) };
        if let Some(slice) = self.slices_of_gprs.get(&gpr_id) {
            return Ok(*slice);
        }
        let slice = gpr::Entity::find_by_id(gpr_id).one(db).await?.map(|g| g.slice_id);
        self.slices_of_gprs.insert(gpr_id, slice);
        Ok(slice)
    }
}

/// Applies decisions against the open alerts it was given, keeping them current.
struct Writer<'a> {
    db: &'a DatabaseConnection,
    /// Open alerts by kind and subject.
    open: HashMap<(AlertKind, String), alert::Model>,
    names: Names,
    /// Transitions this writer stored.
    stored: usize,
}

impl<'a> Writer<'a> {
    fn new(db: &'a DatabaseConnection, open: Vec<alert::Model>) -> Self {
        Self { db, open: open.into_iter().map(|a| ((a.kind, a.subject.clone()), a)).collect(), names: Names::default(), stored: 0 }
    }

    fn rule_open(&self, kind: AlertKind, subject: &str) -> Option<Open> {
        self.open.get(&(kind, subject.to_owned())).map(open_of)
    }

    fn gpu_state(&self, subject: &str, ecc_uncorrected: Option<i64>) -> GpuState {
        GpuState {
            over_temperature: self.rule_open(AlertKind::OverTemperature, subject),
            over_power: self.rule_open(AlertKind::OverPower, subject),
            xid: self.rule_open(AlertKind::XidError, subject),
            ecc: self.rule_open(AlertKind::EccError, subject),
            ecc_uncorrected,
        }
    }

    async fn clear(&mut self, kind: AlertKind, subject: &str, resolution: &str, at: DateTime<Utc>) -> Result<()> {
        if let Some(open) = self.open.remove(&(kind, subject.to_owned()))
            && clear(self.db, open.id, resolution, at).await?
        {
            self.stored += 1;
        }
        Ok(())
    }

    async fn apply(&mut self, decision: Decision, target: &Target<'_>, at: DateTime<Utc>) -> Result<()> {
        let subject = target.subject();
        match decision {
            Decision::Clear { kind, resolution } => self.clear(kind, &subject, &resolution, at).await,
            Decision::Recur { kind } => match self.open.get_mut(&(kind, subject)) {
                Some(open) => {
                    open.last_seen_at = Some(at);
                    recur(self.db, open.id, at).await
                }
                None => Ok(()),
            },
            Decision::Raise { kind, severity, value, threshold, detail } => {
                let (cluster_id, node_id, gpu_id, gpr_id, message) = match target {
                    Target::Gpu { node, gpu } => {
                        let cluster = self.names.cluster(self.db, node.cluster_id).await?;
                        let message = format!("GPU {} ({}) of node `{}` in cluster `{cluster}` {detail}", gpu.gpu_index, gpu.uuid, node.name);
                        (Some(node.cluster_id), Some(node.id), Some(gpu.id), node.allocated_gpr_id, message)
                    }
                    Target::Node(node) => {
                        let cluster = self.names.cluster(self.db, node.cluster_id).await?;
                        (
                            Some(node.cluster_id),
                            Some(node.id),
                            None,
                            node.allocated_gpr_id,
                            format!("Node `{}` in cluster `{cluster}` {detail}", node.name),
                        )
                    }
                    Target::Gpr(gpr) => (gpr.assigned_cluster_id, None, None, Some(gpr.id), format!("GPR `{}` {detail}", gpr.name)),
                };
                let slice_id = match target {
                    Target::Gpr(gpr) => Some(gpr.slice_id),
                    _ => self.names.slice_of(self.db, gpr_id).await?,
                };
                let new = NewAlert {
                    kind,
                    severity,
                    subject: subject.clone(),
                    cluster_id,
                    node_id,
                    gpu_id,
                    slice_id,
                    gpr_id,
                    message,
                    value,
                    threshold,
                    at,
                };
                match raise(self.db, new).await? {
                    Some(model) => {
                        self.stored += 1;
                        self.open.insert((kind, subject), model);
                    }
                    // Raised meanwhile by another replica: later decisions act on that one.
                    None => {
                        if let Some(existing) = find_open(self.db, kind, &subject).await? {
                            self.open.insert((kind, subject), existing);
                        }
                    }
                }
                Ok(())
            }
        }
    }
}

/// The thresholds an admin set for a shape: (temperature, power).
async fn shape_thresholds(db: &impl ConnectionTrait, shape: &str) -> Result<(Option<f64>, Option<f64>)> {
    let row = alert_threshold::Entity::find().filter(alert_threshold::Column::GpuShape.eq(shape)).one(db).await?;
    Ok(row.map_or((None, None), |t| (t.temperature_celsius, t.power_watts)))
}

/// Runs the sample-driven rules over a report `report_samples` just stored: `gpus` are the
/// node's GPUs as they were before it, `heartbeat` is set when the node's agent sent it. Costs
/// one query for the node's open alerts and one for its shape's thresholds, and writes only
/// transitions. It never fails the report: an error is logged, and as the rules are
/// level-triggered, the next report repairs what this one could not write.
pub async fn after_report(
    db: &DatabaseConnection,
    node: &node::Model,
    gpus: &[gpu::Model],
    samples: &[Sample],
    heartbeat: Option<DateTime<Utc>>,
) -> usize {
    match evaluate_report(db, node, gpus, samples, heartbeat).await {
        Ok(stored) => stored,
        Err(error) => {
            tracing::warn!(node.id = node.id, error = ?error, "could not evaluate the alert rules of a report; the next report will");
            0
        }
    }
}

async fn evaluate_report(
    db: &DatabaseConnection,
    node: &node::Model,
    gpus: &[gpu::Model],
    samples: &[Sample],
    heartbeat: Option<DateTime<Utc>>,
) -> Result<usize> {
    let before: HashMap<i64, &gpu::Model> = gpus.iter().map(|g| (g.id, g)).collect();
    // New samples only, oldest first: a resend or a late batch opens and closes nothing.
    let mut fresh: Vec<&Sample> =
        samples.iter().filter(|s| before.get(&s.gpu_id).is_some_and(|g| g.last_sample_at.is_none_or(|t| s.at > t.timestamp()))).collect();
    if fresh.is_empty() && heartbeat.is_none() {
        return Ok(0);
    }
    fresh.sort_by_key(|s| (s.gpu_id, s.at));
    let open = alert::Entity::find().filter(alert::Column::NodeId.eq(node.id)).filter(alert::Column::ClearedAt.is_null()).all(db).await?;
    let mut writer = Writer::new(db, open);
    if let Some(now) = heartbeat {
        writer.clear(AlertKind::NodeStale, &node_subject(node.id), "its agent reported again", now).await?;
    }
    if fresh.is_empty() {
        return Ok(writer.stored);
    }
    let shape = match (node.temperature_threshold_celsius, node.power_threshold_watts) {
        (Some(_), Some(_)) => (None, None),
        _ => shape_thresholds(db, &node.gpu_shape).await?,
    };
    let limits = Limits::resolve((node.temperature_threshold_celsius, node.power_threshold_watts), shape, &node.gpu_shape);
    for group in fresh.chunk_by(|a, b| a.gpu_id == b.gpu_id) {
        let Some(gpu) = group.first().and_then(|s| before.get(&s.gpu_id)).copied() else { continue };
        let target = Target::Gpu { node, gpu };
        let mut state = writer.gpu_state(&target.subject(), gpu.latest_ecc_uncorrected);
        for sample in group {
            let reading = Reading {
                at: time_of(sample.at),
                temperature: round2(sample.values.temperature),
                power: round2(sample.values.power),
                xid_errors: &sample.xid_errors,
                ecc_uncorrected: sample.ecc_uncorrected,
            };
            for decision in rules::evaluate_gpu(&mut state, &limits, node.allocated_gpr_id, &reading) {
                writer.apply(decision, &target, reading.at).await?;
            }
        }
    }
    Ok(writer.stored)
}

/// Runs the time-driven rules once: `NODE_STALE` (judged on `wall`, the time node health reads
/// with), `GPR_IDLE` (on `clock`, the lifecycle's, which the idle release itself reads), quiet
/// XID and ECC alerts, and alerts whose subject went away or whose node changed hands.
/// Returns how many transitions it stored.
pub async fn sweep(db: &DatabaseConnection, wall: DateTime<Utc>, clock: DateTime<Utc>) -> Result<usize> {
    let open = alert::Entity::find().filter(alert::Column::ClearedAt.is_null()).order_by_asc(alert::Column::Id).all(db).await?;
    let mut writer = Writer::new(db, open.clone());

    // Nodes that went silent, and those open alerts are about.
    let referenced: BTreeSet<i64> =
        open.iter().filter(|a| a.kind == AlertKind::NodeStale || GPU_KINDS.contains(&a.kind)).filter_map(|a| a.node_id).collect();
    let mut which = Condition::any().add(node::Column::LastHeartbeatAt.lte(wall - Duration::seconds(STALE_AFTER_SECS)));
    if !referenced.is_empty() {
        which = which.add(node::Column::Id.is_in(referenced.iter().copied()));
    }
    let nodes: BTreeMap<i64, node::Model> = node::Entity::find().filter(which).all(db).await?.into_iter().map(|n| (n.id, n)).collect();
    for n in nodes.values() {
        let subject = node_subject(n.id);
        let open = writer.rule_open(AlertKind::NodeStale, &subject);
        for decision in rules::node_staleness(wall, n.last_heartbeat_at, STALE_AFTER_SECS, open.as_ref(), n.allocated_gpr_id) {
            writer.apply(decision, &Target::Node(n), wall).await?;
        }
    }

    let gpu_ids: Vec<i64> = open.iter().filter(|a| GPU_KINDS.contains(&a.kind)).filter_map(|a| a.gpu_id).collect();
    let gpus: HashMap<i64, gpu::Model> = if gpu_ids.is_empty() {
        HashMap::new()
    } else {
        gpu::Entity::find().filter(gpu::Column::Id.is_in(gpu_ids)).all(db).await?.into_iter().map(|g| (g.id, g)).collect()
    };
    for a in &open {
        let node = a.node_id.and_then(|id| nodes.get(&id));
        let gone = match a.kind {
            AlertKind::NodeStale if node.is_none() => Some("the node was removed"),
            kind if GPU_KINDS.contains(&kind) => match (node, a.gpu_id.and_then(|id| gpus.get(&id))) {
                (None, _) => Some("the node was removed"),
                (_, None) => Some("the GPU was removed"),
                (Some(n), Some(g)) if g.node_id != n.id => Some("the GPU moved to another node"),
                (Some(n), _) if n.allocated_gpr_id != a.gpr_id => Some("the node changed hands"),
                _ => None,
            },
            _ => None,
        };
        if let Some(resolution) = gone {
            writer.clear(a.kind, &a.subject, resolution, wall).await?;
        } else if matches!(a.kind, AlertKind::XidError | AlertKind::EccError) {
            let mut state = Some(open_of(a));
            if let Some(decision) = rules::quiet(&mut state, a.kind, wall)
                && let (Some(n), Some(g)) = (node, a.gpu_id.and_then(|id| gpus.get(&id)))
            {
                writer.apply(decision, &Target::Gpu { node: n, gpu: g }, wall).await?;
            }
        }
    }

    sweep_idle_gprs(db, &mut writer, &open, clock).await?;
    Ok(writer.stored)
}

async fn sweep_idle_gprs(db: &DatabaseConnection, writer: &mut Writer<'_>, open: &[alert::Model], clock: DateTime<Utc>) -> Result<()> {
    let provisioned =
        gpr::Entity::find().filter(gpr::Column::Phase.eq(GprPhase::Provisioned)).filter(gpr::Column::IdleTimeoutSecs.is_not_null()).all(db).await?;
    let watched: HashSet<i64> = provisioned.iter().map(|g| g.id).collect();
    let mut idle_since: HashMap<i64, DateTime<Utc>> = HashMap::new();
    if !provisioned.is_empty() {
        let links = gpr_node::Entity::find().filter(gpr_node::Column::GprId.is_in(watched.iter().copied())).all(db).await?;
        let node_ids: HashSet<i64> = links.iter().map(|l| l.node_id).collect();
        let gpus = gpu::Entity::find().filter(gpu::Column::NodeId.is_in(node_ids)).all(db).await?;
        let mut by_node: HashMap<i64, Vec<&gpu::Model>> = HashMap::new();
        for g in &gpus {
            by_node.entry(g.node_id).or_default().push(g);
        }
        let mut nodes_of: HashMap<i64, Vec<i64>> = HashMap::new();
        for l in &links {
            nodes_of.entry(l.gpr_id).or_default().push(l.node_id);
        }
        for g in &provisioned {
            let Some(since) = g.provisioned_at else { continue };
            let gpus: Vec<&gpu::Model> = nodes_of.get(&g.id).into_iter().flatten().filter_map(|n| by_node.get(n)).flatten().copied().collect();
            // As the idle release reads it: no verdict until every GPU reported in the window.
            if gpus.is_empty() || gpus.iter().any(|gpu| gpu.last_sample_at.is_none_or(|t| t < since)) {
                continue;
            }
            idle_since.insert(g.id, gpus.iter().filter_map(|gpu| gpu.last_busy_at).max().unwrap_or(since).max(since));
        }
    }
    for g in &provisioned {
        let subject = gpr_subject(g.id);
        let is_open = writer.open.contains_key(&(AlertKind::GprIdle, subject));
        if let Some(decision) = rules::gpr_idleness(clock, g.idle_timeout_secs.unwrap_or_default(), idle_since.get(&g.id).copied(), is_open) {
            writer.apply(decision, &Target::Gpr(g), clock).await?;
        }
    }
    for a in open.iter().filter(|a| a.kind == AlertKind::GprIdle && a.gpr_id.is_none_or(|id| !watched.contains(&id))) {
        writer.clear(AlertKind::GprIdle, &a.subject, "the GPR is no longer provisioned with an idle timeout", clock).await?;
    }
    Ok(())
}

/// Forgets transitions older than [`CHANGE_RETENTION_SECS`].
pub async fn prune_changes(db: &DatabaseConnection, now: DateTime<Utc>) -> Result<u64> {
    let cutoff = now - Duration::seconds(CHANGE_RETENTION_SECS);
    Ok(alert_change::Entity::delete_many().filter(alert_change::Column::At.lt(cutoff)).exec(db).await?.rows_affected)
}

/// Filters of the `alerts` list.
#[derive(Clone, Debug, Default)]
pub struct AlertQuery {
    pub slice_id: Option<i64>,
    pub cluster_id: Option<i64>,
    pub kind: Option<AlertKind>,
    /// `Some(true)`: open only; `Some(false)`: cleared only.
    pub open: Option<bool>,
}

/// The alerts `caller` may read, filtered. Users read the alerts of their slices' GPRs and of
/// the nodes those held; alerts about nodes no slice held are for admins. A slice the caller
/// may not see is `NOT_FOUND`.
pub async fn alerts_select(db: &DatabaseConnection, caller: &Caller, query: &AlertQuery) -> Result<Select<alert::Entity>> {
    caller.require_person()?;
    if let Some(slice) = query.slice_id {
        crate::slice::service::find_slice(db, caller, slice).await?;
    }
    let mut select = alert::Entity::find();
    if let Visible::Only(slices) = caller.visible_slices(db).await? {
        select = select.filter(alert::Column::SliceId.is_in(slices));
    }
    if let Some(slice) = query.slice_id {
        select = select.filter(alert::Column::SliceId.eq(slice));
    }
    if let Some(cluster) = query.cluster_id {
        select = select.filter(alert::Column::ClusterId.eq(cluster));
    }
    if let Some(kind) = query.kind {
        select = select.filter(alert::Column::Kind.eq(kind));
    }
    select = match query.open {
        Some(true) => select.filter(alert::Column::ClearedAt.is_null()),
        Some(false) => select.filter(alert::Column::ClearedAt.is_not_null()),
        None => select,
    };
    Ok(select)
}

/// One alert, under the rule of [`alerts_select`]: one the caller may not read is `NOT_FOUND`,
/// like a missing one.
pub async fn find_alert(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<alert::Model> {
    let query = AlertQuery { slice_id: None, cluster_id: None, kind: None, open: None };
    alerts_select(db, caller, &query).await?.filter(alert::Column::Id.eq(id)).one(db).await?.ok_or(Error::NotFound("alert"))
}

/// Whether a subscriber who sees `visible` slices, filtered by slice and cluster, receives an
/// alert's transitions: the same rule as [`alerts_select`].
pub fn wanted(visible: &Visible, slice_id: Option<i64>, cluster_id: Option<i64>, alert: &alert::Model) -> bool {
    let readable = match visible {
        Visible::All => true,
        Visible::Only(slices) => alert.slice_id.is_some_and(|s| slices.binary_search(&s).is_ok()),
    };
    readable && slice_id.is_none_or(|s| alert.slice_id == Some(s)) && cluster_id.is_none_or(|c| alert.cluster_id == Some(c))
}

/// The thresholds in force for one GPU shape (for nodes that set none of their own).
#[derive(Clone, Debug, PartialEq)]
pub struct ShapeThresholds {
    pub gpu_shape: String,
    pub limits: Limits,
    /// When an admin last set them; `None` for built-in defaults.
    pub updated_at: Option<DateTime<Utc>>,
}

fn shape_view(gpu_shape: String, row: Option<&alert_threshold::Model>) -> ShapeThresholds {
    let set = row.map_or((None, None), |r| (r.temperature_celsius, r.power_watts));
    let limits = Limits::resolve((None, None), set, &gpu_shape);
    ShapeThresholds { gpu_shape, limits, updated_at: row.map(|r| r.updated_at) }
}

/// Thresholds of every shape in the inventory or configured, by shape (admins).
pub async fn list_thresholds(db: &DatabaseConnection, caller: &Caller) -> Result<Vec<ShapeThresholds>> {
    caller.require_admin()?;
    let configured: BTreeMap<String, alert_threshold::Model> =
        alert_threshold::Entity::find().all(db).await?.into_iter().map(|t| (t.gpu_shape.clone(), t)).collect();
    let mut shapes: BTreeSet<String> =
        node::Entity::find().select_only().column(node::Column::GpuShape).distinct().into_tuple::<String>().all(db).await?.into_iter().collect();
    shapes.extend(configured.keys().cloned());
    Ok(shapes
        .into_iter()
        .map(|shape| {
            let row = configured.get(&shape);
            shape_view(shape, row)
        })
        .collect())
}

/// Sets the thresholds of a GPU shape (admins); `None` restores the built-in default. Invalid
/// values change nothing.
pub async fn set_threshold(
    db: &DatabaseConnection,
    caller: &Caller,
    gpu_shape: String,
    temperature_celsius: Option<f64>,
    power_watts: Option<f64>,
) -> Result<ShapeThresholds> {
    caller.require_admin()?;
    let mut errors: Vec<UserError> = Vec::new();
    validate::text("gpuShape", &gpu_shape, 128, &mut errors);
    for (field, value, (min, max), unit) in
        [("temperatureCelsius", temperature_celsius, TEMPERATURE_RANGE, " °C"), ("powerWatts", power_watts, POWER_RANGE, " W")]
    {
        if let Some(v) = value
            && !(v.is_finite() && (min..=max).contains(&v))
        {
            errors.push(UserError::invalid(field, format!("must be between {min}{unit} and {max}{unit}, got {v}")));
        }
    }
    validate::finish(errors)?;
    let gpu_shape = gpu_shape.trim().to_owned();
    if temperature_celsius.is_none() && power_watts.is_none() {
        alert_threshold::Entity::delete_many().filter(alert_threshold::Column::GpuShape.eq(gpu_shape.as_str())).exec(db).await?;
        return Ok(shape_view(gpu_shape, None));
    }
    let row = alert_threshold::ActiveModel {
        id: NotSet,
        gpu_shape: Set(gpu_shape.clone()),
        temperature_celsius: Set(temperature_celsius),
        power_watts: Set(power_watts),
        updated_at: Set(Utc::now()),
    };
    let upsert = OnConflict::column(alert_threshold::Column::GpuShape)
        .update_columns([alert_threshold::Column::TemperatureCelsius, alert_threshold::Column::PowerWatts, alert_threshold::Column::UpdatedAt])
        .to_owned();
    alert_threshold::Entity::insert(row).on_conflict(upsert).exec_without_returning(db).await?;
    let stored = alert_threshold::Entity::find().filter(alert_threshold::Column::GpuShape.eq(gpu_shape.as_str())).one(db).await?;
    let stored = stored.ok_or_else(|| Error::Internal(anyhow::anyhow!("alert thresholds of `{gpu_shape}` vanished after being stored")))?;
    Ok(shape_view(gpu_shape, Some(&stored)))
}

/// How often the sweeper forgets old transitions.
const PRUNE_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// Runs [`sweep`] every `every` until `stop` completes, waking `hub` when it stored transitions.
/// Every replica runs one: the unique index and the conditional clears make a transition
/// stored once however many sweep, and no replica has to be the leader for alerts to work.
pub async fn run_sweeper(
    db: DatabaseConnection,
    hub: std::sync::Arc<super::hub::AlertHub>,
    clock: std::sync::Arc<dyn crate::ports::Clock>,
    every: std::time::Duration,
    stop: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(stop);
    let mut last_prune: Option<std::time::Instant> = None;
    loop {
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(every) => {}
        }
        match sweep(&db, Utc::now(), clock.now()).await {
            Ok(0) => {}
            Ok(_) => hub.changed(),
            Err(error) => tracing::warn!(error = ?error, "the alert sweep failed; retrying at the next one"),
        }
        if last_prune.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
            last_prune = Some(std::time::Instant::now());
            if let Err(error) = prune_changes(&db, Utc::now()).await {
                tracing::warn!(error = ?error, "could not prune old alert transitions");
            }
        }
    }
}
