//! Alerts: GPUs over their temperature or power threshold, XID and ECC errors, node agents gone
//! silent, and GPRs whose GPUs sit idle. Here is how the API shows them (`alerts`,
//! `alertThresholds`, the `alerts` subscription); `egs_domain::alerts` raises and clears them
//! with hysteresis, stores them, publishes every transition on every replica and posts each
//! one, once, to a Slack-compatible webhook.
//!
//! Sample-driven rules (temperature, power, XID, ECC) run inside `reportGpuSamples`; time-driven
//! ones (stale nodes, idle GPRs, quiet periods, subjects gone or handed over) in a sweeper
//! every replica runs.
//!
//! Isolation: admins read every alert. A user reads the alerts of their slices' GPRs and of
//! the nodes and GPUs those GPRs held when it was raised; alerts about nodes no slice held are
//! admin-only. An alert clears when its node changes hands, so a slice never reads what happens
//! on a node after it gave it back.

use egs_domain::alerts::{reads, rules, thresholds};

use crate::cluster::Cluster;
use crate::gpr::Gpr;
use crate::ids::{self, Kind};
use crate::inventory::{Gpu, GpuNode};
use crate::pagination::{Order, Page, PageRequest, keyset_page};
use crate::slice::Slice;
use crate::{app, loaded, loaders, payload, session};
use async_graphql::{Context, Enum, ID, InputObject, Object, SimpleObject};
use chrono::{DateTime, Utc};
use egs_domain::error::Result;
use egs_entities::{AlertKind, AlertSeverity, alert};
use rules::Source;

/// A condition on a GPU, node or GPR that someone should look at; open until it clears.
pub struct Alert(pub alert::Model);

#[Object]
impl Alert {
    pub async fn id(&self) -> ID {
        ids::encode(Kind::Alert, self.0.id)
    }
    async fn kind(&self) -> AlertKind {
        self.0.kind
    }
    async fn severity(&self) -> AlertSeverity {
        self.0.severity
    }
    /// What happened, in a sentence.
    async fn message(&self) -> &str {
        &self.0.message
    }
    /// What was measured when it was raised: °C (`OVER_TEMPERATURE`), W (`OVER_POWER`), the
    /// most serious XID code (`XID_ERROR`), the uncorrected ECC count (`ECC_ERROR`), seconds
    /// silent (`NODE_STALE`) or idle (`GPR_IDLE`).
    async fn value(&self) -> Option<f64> {
        self.0.value
    }
    /// What `value` was held against, in its unit: the threshold or limit, the ECC count before,
    /// the stale threshold, the idle timeout.
    async fn threshold(&self) -> Option<f64> {
        self.0.threshold
    }
    async fn raised_at(&self) -> DateTime<Utc> {
        self.0.raised_at
    }
    async fn cleared_at(&self) -> Option<DateTime<Utc>> {
        self.0.cleared_at
    }
    /// Why it cleared; null while open.
    async fn resolution(&self) -> Option<&str> {
        self.0.resolution.as_deref()
    }
    /// Not cleared yet.
    async fn open(&self) -> bool {
        self.0.is_open()
    }
    async fn cluster(&self, ctx: &Context<'_>) -> Result<Option<Cluster>> {
        let Some(id) = self.0.cluster_id else { return Ok(None) };
        Ok(loaded(loaders(ctx)?.cluster().load_one(id).await)?.map(Cluster))
    }
    async fn node(&self, ctx: &Context<'_>) -> Result<Option<GpuNode>> {
        let Some(id) = self.0.node_id else { return Ok(None) };
        Ok(loaded(loaders(ctx)?.node().load_one(id).await)?.map(GpuNode))
    }
    async fn gpu(&self, ctx: &Context<'_>) -> Result<Option<Gpu>> {
        let (Some(node_id), Some(gpu_id)) = (self.0.node_id, self.0.gpu_id) else { return Ok(None) };
        let gpus = loaded(loaders(ctx)?.gpus_by_node().load_one(node_id).await)?.unwrap_or_default();
        Ok(gpus.into_iter().find(|g| g.id == gpu_id).map(Gpu::from))
    }
    /// The slice whose GPR held the node (or is the GPR) when it was raised.
    async fn slice(&self, ctx: &Context<'_>) -> Result<Option<Slice>> {
        let Some(id) = self.0.slice_id else { return Ok(None) };
        let (caller, db) = session(ctx)?;
        if !caller.can_see_slice(db, id).await? {
            return Ok(None);
        }
        Ok(loaded(loaders(ctx)?.slice().load_one(id).await)?.map(Slice))
    }
    /// The GPR it is about, or that held the node when it was raised.
    async fn gpr(&self, ctx: &Context<'_>) -> Result<Option<Gpr>> {
        let Some(id) = self.0.gpr_id else { return Ok(None) };
        let (caller, db) = session(ctx)?;
        let Some(gpr) = loaded(loaders(ctx)?.gpr().load_one(id).await)? else { return Ok(None) };
        Ok(caller.can_see_slice(db, gpr.slice_id).await?.then_some(Gpr(gpr)))
    }
}

/// Where a threshold in force comes from.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq)]
pub enum ThresholdSource {
    /// Set by an admin with `setAlertThreshold`.
    Configured,
    /// EGS's default: 87 °C, and the power limit of the GPU model when EGS knows it.
    BuiltIn,
}

impl From<Source> for ThresholdSource {
    fn from(source: Source) -> Self {
        match source {
            Source::Shape | Source::Node => Self::Configured,
            Source::BuiltIn => Self::BuiltIn,
        }
    }
}

/// The alert thresholds of one GPU shape. A node that sets its own thresholds in
/// `upsertNodes` is held to those instead.
#[derive(SimpleObject)]
pub struct AlertThreshold {
    pub gpu_shape: String,
    /// `OVER_TEMPERATURE` is raised above this, °C.
    pub temperature_celsius: f64,
    /// An open `OVER_TEMPERATURE` clears below this, °C (5 °C of hysteresis).
    pub temperature_clears_below_celsius: f64,
    pub temperature_source: ThresholdSource,
    /// `OVER_POWER` is raised above this, W; null when the model has no built-in limit and
    /// none is set (no power alerts).
    pub power_watts: Option<f64>,
    /// An open `OVER_POWER` clears below this, W (5 % of hysteresis).
    pub power_clears_below_watts: Option<f64>,
    pub power_source: ThresholdSource,
    /// When an admin last set them; null for built-in defaults.
    pub updated_at: Option<DateTime<Utc>>,
}

impl From<thresholds::ShapeThresholds> for AlertThreshold {
    fn from(t: thresholds::ShapeThresholds) -> Self {
        Self {
            gpu_shape: t.gpu_shape,
            temperature_celsius: t.limits.temperature_celsius,
            temperature_clears_below_celsius: t.limits.temperature_clear_below(),
            temperature_source: t.limits.temperature_source.into(),
            power_watts: t.limits.power_watts,
            power_clears_below_watts: t.limits.power_clear_below(),
            power_source: t.limits.power_source.into(),
            updated_at: t.updated_at,
        }
    }
}

#[derive(InputObject)]
pub struct SetAlertThresholdInput {
    /// The GPU shape, as nodes report it (e.g. `NVIDIA-H100-80GB-HBM3`); it need not be in the
    /// inventory yet.
    pub gpu_shape: String,
    /// 40–120 °C; null restores the built-in 87 °C.
    pub temperature_celsius: Option<f64>,
    /// 10–5000 W; null restores the model's built-in limit (or none).
    pub power_watts: Option<f64>,
}

payload!(SetAlertThresholdPayload, threshold: AlertThreshold);

fn decode_opt(field: &str, id: Option<&ID>, kind: Kind) -> Result<Option<i64>> {
    id.map(|id| ids::decode(field, id, kind)).transpose()
}

#[derive(Default)]
pub struct AlertQuery;

#[Object]
impl AlertQuery {
    /// Alerts you may read, newest first: of one slice or cluster, of one kind, open or
    /// cleared. Users read the alerts of their slices' GPRs and of the nodes those held;
    /// alerts about nodes no slice held are for admins.
    #[allow(clippy::too_many_arguments)]
    async fn alerts(
        &self,
        ctx: &Context<'_>,
        slice_id: Option<ID>,
        cluster_id: Option<ID>,
        kind: Option<AlertKind>,
        open: Option<bool>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<Alert>> {
        let (caller, db) = session(ctx)?;
        let query = reads::AlertQuery {
            slice_id: decode_opt("sliceId", slice_id.as_ref(), Kind::Slice)?,
            cluster_id: decode_opt("clusterId", cluster_id.as_ref(), Kind::Cluster)?,
            kind,
            open,
        };
        let request = PageRequest::new(first, after)?;
        let select = reads::alerts_select(db, caller, &query).await?;
        keyset_page(db, request, select, alert::Column::Id, Order::NewestFirst, |a| a.id, Alert).await
    }

    /// The alert thresholds of every GPU shape in the inventory or configured (admins).
    async fn alert_thresholds(&self, ctx: &Context<'_>) -> Result<Vec<AlertThreshold>> {
        let (caller, db) = session(ctx)?;
        Ok(thresholds::list_thresholds(db, caller).await?.into_iter().map(AlertThreshold::from).collect())
    }
}

#[derive(Default)]
pub struct AlertMutation;

#[Object]
impl AlertMutation {
    /// Sets the temperature threshold and power limit of a GPU shape (admins); null restores
    /// a built-in default. Values out of range are refused and nothing changes. Open alerts
    /// clear, and new ones are raised, against the new values from the next sample on.
    async fn set_alert_threshold(&self, ctx: &Context<'_>, input: SetAlertThresholdInput) -> async_graphql::Result<SetAlertThresholdPayload> {
        let (caller, db) = session(ctx)?;
        let result = thresholds::set_threshold(db, caller, input.gpu_shape, input.temperature_celsius, input.power_watts).await;
        SetAlertThresholdPayload::from_result(result.map(AlertThreshold::from))
    }
}

#[derive(Default)]
pub struct AlertSubscription;

#[async_graphql::Subscription]
impl AlertSubscription {
    /// Every alert raised or cleared from now on that you may read (the rules of the `alerts`
    /// list), of one slice or one cluster if you name it: the alert as it was raised
    /// (`open: true`), then again when it clears (`open: false`). Transitions stored on any
    /// replica arrive within a second.
    async fn alerts(
        &self,
        ctx: &Context<'_>,
        slice_id: Option<ID>,
        cluster_id: Option<ID>,
    ) -> Result<impl futures_util::Stream<Item = async_graphql::Result<Alert>> + use<>> {
        let (caller, db) = session(ctx)?;
        caller.require_person()?;
        let slice_id = decode_opt("sliceId", slice_id.as_ref(), Kind::Slice)?;
        let cluster_id = decode_opt("clusterId", cluster_id.as_ref(), Kind::Cluster)?;
        // Subscribe first, so nothing stored while checking is missed.
        let mut live = app(ctx)?.alerts.subscribe();
        let setup = crate::setting_up(ctx).await?;
        if let Some(slice) = slice_id {
            egs_domain::slice::service::find_slice(db, caller, slice).await?;
        }
        if let Some(cluster) = cluster_id {
            egs_domain::cluster::service::find_cluster(db, caller, cluster).await?;
        }
        let visible = caller.visible_slices(db).await?;
        drop(setup);
        Ok(async_stream::stream! {
            loop {
                match live.recv().await {
                    Ok(transition) if reads::wanted(&visible, slice_id, cluster_id, &transition.alert) => {
                        yield Ok(Alert(transition.alert.clone()));
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "an alerts subscriber fell behind and missed transitions");
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        })
    }
}
