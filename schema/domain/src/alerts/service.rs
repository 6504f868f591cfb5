//! Alert storage and evaluation: what the [`rules`] read (open alerts, samples, heartbeats, idle
//! times) and the writes of their decisions.
//!
//! Writes happen only on transitions. A raise is an `INSERT … ON CONFLICT DO NOTHING` against
//! the partial unique index on open alerts (`kind`, `subject`), a clear an `UPDATE … WHERE
//! cleared_at IS NULL`; each logs its transition in `alert_changes` in the same transaction.
//! So when two replicas evaluate the same condition, exactly one stores the transition, and
//! only a stored transition is published (see [`super::feed`]).

use super::rules::{self, Decision, GpuState, Limits, Open, Reading};
use crate::error::{Error, Result};
use crate::metrics::sample::Sample;
use chrono::{DateTime, Utc};
use egs_entities::{AlertAction, AlertKind, alert, alert_change, alert_threshold, cluster, gpr, gpu, node};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, Set, TransactionTrait, TryInsertResult,
};
use std::collections::HashMap;

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

pub(super) async fn log_change(db: &impl ConnectionTrait, alert_id: i64, action: AlertAction, at: DateTime<Utc>) -> Result<()> {
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
pub(super) async fn find_open(db: &impl ConnectionTrait, kind: AlertKind, subject: &str) -> Result<Option<alert::Model>> {
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
pub(super) async fn recur(db: &DatabaseConnection, alert_id: i64, at: DateTime<Utc>) -> Result<()> {
    alert::Entity::update_many()
        .col_expr(alert::Column::LastSeenAt, Expr::value(at))
        .filter(alert::Column::Id.eq(alert_id))
        .filter(alert::Column::ClearedAt.is_null())
        .exec(db)
        .await?;
    Ok(())
}

pub(super) fn open_of(model: &alert::Model) -> Open {
    Open { severity: model.severity, gpr_id: model.gpr_id, last_seen: model.last_seen_at.unwrap_or(model.raised_at) }
}

pub(super) fn time_of(at: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(at, 0).unwrap_or_default()
}

/// Samples are `f32`: two decimals are all they carry.
pub(super) fn round2(value: f32) -> f64 {
    (f64::from(value) * 100.0).round() / 100.0
}

/// What an alert is about, with what its raise needs to say so.
pub(super) enum Target<'a> {
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
pub(super) struct Names {
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
pub(super) struct Writer<'a> {
    pub(super) db: &'a DatabaseConnection,
    /// Open alerts by kind and subject.
    pub(super) open: HashMap<(AlertKind, String), alert::Model>,
    pub(super) names: Names,
    /// Transitions this writer stored.
    pub(super) stored: usize,
}

impl<'a> Writer<'a> {
    pub(super) fn new(db: &'a DatabaseConnection, open: Vec<alert::Model>) -> Self {
        Self { db, open: open.into_iter().map(|a| ((a.kind, a.subject.clone()), a)).collect(), names: Names::default(), stored: 0 }
    }

    pub(super) fn rule_open(&self, kind: AlertKind, subject: &str) -> Option<Open> {
        self.open.get(&(kind, subject.to_owned())).map(open_of)
    }

    pub(super) fn gpu_state(&self, subject: &str, ecc_uncorrected: Option<i64>) -> GpuState {
        GpuState {
            over_temperature: self.rule_open(AlertKind::OverTemperature, subject),
            over_power: self.rule_open(AlertKind::OverPower, subject),
            xid: self.rule_open(AlertKind::XidError, subject),
            ecc: self.rule_open(AlertKind::EccError, subject),
            ecc_uncorrected,
        }
    }

    pub(super) async fn clear(&mut self, kind: AlertKind, subject: &str, resolution: &str, at: DateTime<Utc>) -> Result<()> {
        if let Some(open) = self.open.remove(&(kind, subject.to_owned()))
            && clear(self.db, open.id, resolution, at).await?
        {
            self.stored += 1;
        }
        Ok(())
    }

    pub(super) async fn apply(&mut self, decision: Decision, target: &Target<'_>, at: DateTime<Utc>) -> Result<()> {
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

/// One node's part of the reports just stored, for the alert rules: its GPUs as they were
/// before, its new samples, and the heartbeat when its agent sent them.
pub struct Reported<'a> {
    pub node: &'a node::Model,
    pub gpus: &'a [gpu::Model],
    pub samples: &'a [Sample],
    pub heartbeat: Option<DateTime<Utc>>,
}

impl Reported<'_> {
    /// New samples only, oldest first per GPU: a resend or a late batch opens and closes nothing.
    fn fresh(&self) -> Vec<&Sample> {
        let before: HashMap<i64, &gpu::Model> = self.gpus.iter().map(|g| (g.id, g)).collect();
        let mut fresh: Vec<&Sample> =
            self.samples.iter().filter(|s| before.get(&s.gpu_id).is_some_and(|g| g.last_sample_at.is_none_or(|t| s.at > t.timestamp()))).collect();
        fresh.sort_by_key(|s| (s.gpu_id, s.at));
        fresh
    }
}

/// Runs the sample-driven rules over reports just stored (several nodes' at once). Costs one
/// query for the nodes' open alerts and one for their shapes' thresholds, whatever the number
/// of nodes, and writes only transitions. It never fails the reports: an error is logged, and
/// as the rules are level-triggered, the next report repairs what this one could not write.
pub async fn after_reports(db: &DatabaseConnection, reported: &[Reported<'_>]) -> usize {
    match evaluate_reports(db, reported).await {
        Ok(stored) => stored,
        Err(error) => {
            tracing::warn!(nodes = reported.len(), error = ?error, "could not evaluate the alert rules of reports; the next ones will");
            0
        }
    }
}

async fn evaluate_reports(db: &DatabaseConnection, reported: &[Reported<'_>]) -> Result<usize> {
    let work: Vec<(&Reported<'_>, Vec<&Sample>)> =
        reported.iter().map(|r| (r, r.fresh())).filter(|(r, fresh)| !fresh.is_empty() || r.heartbeat.is_some()).collect();
    if work.is_empty() {
        return Ok(0);
    }
    let node_ids: Vec<i64> = work.iter().map(|(r, _)| r.node.id).collect();
    let mut open: HashMap<i64, Vec<alert::Model>> = HashMap::new();
    for alert in alert::Entity::find().filter(alert::Column::NodeId.is_in(node_ids)).filter(alert::Column::ClearedAt.is_null()).all(db).await? {
        if let Some(node_id) = alert.node_id {
            open.entry(node_id).or_default().push(alert);
        }
    }
    let shapes: Vec<&str> = work
        .iter()
        .filter(|(r, fresh)| !fresh.is_empty() && (r.node.temperature_threshold_celsius.is_none() || r.node.power_threshold_watts.is_none()))
        .map(|(r, _)| r.node.gpu_shape.as_str())
        .collect();
    let thresholds: HashMap<String, (Option<f64>, Option<f64>)> = if shapes.is_empty() {
        HashMap::new()
    } else {
        alert_threshold::Entity::find()
            .filter(alert_threshold::Column::GpuShape.is_in(shapes))
            .all(db)
            .await?
            .into_iter()
            .map(|t| (t.gpu_shape, (t.temperature_celsius, t.power_watts)))
            .collect()
    };
    let mut stored = 0;
    for (reported, fresh) in work {
        let node = reported.node;
        let shape = thresholds.get(&node.gpu_shape).copied().unwrap_or((None, None));
        stored += evaluate_node(db, reported, &fresh, open.remove(&node.id).unwrap_or_default(), shape).await?;
    }
    Ok(stored)
}

async fn evaluate_node(
    db: &DatabaseConnection,
    reported: &Reported<'_>,
    fresh: &[&Sample],
    open: Vec<alert::Model>,
    shape: (Option<f64>, Option<f64>),
) -> Result<usize> {
    let node = reported.node;
    let before: HashMap<i64, &gpu::Model> = reported.gpus.iter().map(|g| (g.id, g)).collect();
    let mut writer = Writer::new(db, open);
    if let Some(now) = reported.heartbeat {
        writer.clear(AlertKind::NodeStale, &node_subject(node.id), "its agent reported again", now).await?;
    }
    if fresh.is_empty() {
        return Ok(writer.stored);
    }
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
