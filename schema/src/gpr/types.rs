//! The GPR's GraphQL objects: the request, its steps and events, and a pool's wait estimate.

use super::query::list_events_page;
use crate::cluster::Cluster;
use crate::ids::{self, Kind};
use crate::inventory::GpuNode;
use crate::pagination::Page;
use crate::scalars::Duration;
use crate::slice::Slice;
use crate::user::User;
use crate::{loaded, loaders, session};
use async_graphql::{Context, Enum, ID, InputObject, Object, SimpleObject};
use chrono::{DateTime, Utc};
use egs_domain::error::Result;
use egs_entities::{ApprovalState, GprEventKind, GprPhase, ReleaseReason, gpr, gpr_event};

/// Events that can move a waiting GPR's estimates.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Enum)]
pub enum EstimateMover {
    /// A GPR of strictly higher priority arrives (or is approved or requeued) and needs the room.
    HigherPriorityArrival,
    /// A node of the planned pool fails or is cordoned.
    NodeFailure,
    /// An admin changes priorities.
    AdminReorder,
    /// Running windows end early (only ever makes a start earlier).
    EarlyRelease,
    /// Running windows end later than predicted from history (never past their reserved end).
    ReleaseLaterThanPredicted,
}

/// Priority bands: low 1–100, medium 101–200, high 201–300.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Enum)]
pub enum PriorityBand {
    Low,
    Medium,
    High,
}

impl PriorityBand {
    pub fn of(priority: i32) -> Self {
        match priority {
            ..=100 => Self::Low,
            101..=200 => Self::Medium,
            _ => Self::High,
        }
    }
}

/// A `key = value` label.
#[derive(SimpleObject, InputObject, Clone)]
#[graphql(input_name = "LabelInput")]
pub struct Label {
    pub key: String,
    pub value: String,
}

/// A GPU Provision Request: N whole nodes of a shape for a strict reserved window.
pub struct Gpr(pub gpr::Model);

/// Reads, one batch per relation, what the fields selected on a list of GPRs will ask for
/// (slices, requesters, nodes and what those nodes' fields ask for), so each GPR's fields
/// answer at once instead of every GPR waiting on a batch per level.
pub(crate) async fn prefetch_for_gprs<'a>(
    ctx: &Context<'_>,
    gprs: impl Iterator<Item = &'a gpr::Model> + Clone,
    selected: crate::pagination::Selection<'_>,
) -> Result<()> {
    let loaders = loaders(ctx)?;
    let slices = loaders.slice().prefetch_when(selected.field("slice").exists(), gprs.clone().map(|g| g.slice_id));
    let requesters = loaders.user().prefetch_when(selected.field("requester").exists(), gprs.clone().filter_map(|g| g.requester_id));
    let nodes = async {
        let nodes = selected.field("nodes");
        if !nodes.exists() {
            return Ok::<_, egs_domain::error::Error>(());
        }
        let links = loaded(loaders.node_links_by_gpr().load_many(gprs.clone().map(|g| g.id)).await)?;
        let held = loaded(loaders.node().load_many(links.values().flatten().map(|l| l.node_id)).await)?;
        crate::inventory::prefetch_for_nodes(ctx, held.values(), nodes).await
    };
    futures_util::future::try_join3(async { loaded(slices.await) }, async { loaded(requesters.await) }, nodes).await.map(drop)
}

/// The GPR `id` names (a node's holder, a preemptor), when there is one and the caller may see
/// its slice; otherwise `None`, exactly as for a missing one.
pub(crate) async fn visible_gpr(ctx: &Context<'_>, id: Option<i64>) -> Result<Option<Gpr>> {
    crate::boxed(async move {
        let Some(id) = id else { return Ok(None) };
        let (caller, db) = session(ctx)?;
        let Some(gpr) = loaded(loaders(ctx)?.gpr().load_one(id).await)? else { return Ok(None) };
        Ok(caller.can_see_slice(db, gpr.slice_id).await?.then_some(Gpr(gpr)))
    })
    .await
}

#[Object]
impl Gpr {
    pub async fn id(&self) -> ID {
        ids::encode(Kind::Gpr, self.0.id)
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn slice(&self, ctx: &Context<'_>) -> Result<Option<Slice>> {
        Ok(loaded(loaders(ctx)?.slice().load_one(self.0.slice_id).await)?.map(Slice))
    }
    /// Who asked for it.
    async fn requester(&self, ctx: &Context<'_>) -> Result<Option<User>> {
        let Some(id) = self.0.requester_id else { return Ok(None) };
        Ok(loaded(loaders(ctx)?.user().load_one(id).await)?.map(User))
    }
    async fn node_count(&self) -> i32 {
        self.0.node_count
    }
    /// GPUs wanted on each node; `null` means every GPU of the node.
    async fn gpus_per_node(&self) -> Option<i32> {
        self.0.gpus_per_node
    }
    async fn min_gpu_memory_mib(&self) -> Option<i64> {
        self.0.min_gpu_memory_mib
    }
    /// `null`: the scheduler picks.
    async fn gpu_shape(&self) -> Option<&str> {
        self.0.gpu_shape.as_deref()
    }
    /// `null`: the scheduler picks.
    async fn instance_type(&self) -> Option<&str> {
        self.0.instance_type.as_deref()
    }
    /// Empty: any of the slice's clusters.
    async fn preferred_clusters(&self, ctx: &Context<'_>) -> Result<Vec<Cluster>> {
        let found = loaded(loaders(ctx)?.cluster().load_many(self.0.preferred_cluster_ids.0.iter().copied()).await)?;
        Ok(self.0.preferred_cluster_ids.0.iter().filter_map(|id| found.get(id).cloned()).map(Cluster).collect())
    }
    /// 1–300; higher runs first.
    async fn priority(&self) -> i32 {
        self.0.priority
    }
    async fn priority_band(&self) -> PriorityBand {
        PriorityBand::of(self.0.priority)
    }
    /// The strict reserved window.
    async fn duration(&self) -> Duration {
        Duration(self.0.duration_secs)
    }
    /// Released when all its GPUs stay idle this long; `null`: never.
    async fn idle_timeout(&self) -> Option<Duration> {
        self.0.idle_timeout_secs.map(Duration)
    }
    async fn preemptible(&self) -> bool {
        self.0.preemptible
    }
    async fn requeue_on_failure(&self) -> bool {
        self.0.requeue_on_failure
    }
    /// An advance reservation: not before this time.
    async fn earliest_start_at(&self) -> Option<DateTime<Utc>> {
        self.0.earliest_start_at
    }
    async fn labels(&self) -> Vec<Label> {
        self.0.labels.0.iter().map(|(key, value)| Label { key: key.clone(), value: value.clone() }).collect()
    }
    async fn phase(&self) -> GprPhase {
        self.0.phase
    }
    /// Why it is in its phase, when there is more to say.
    async fn reason(&self) -> Option<&str> {
        self.0.reason.as_deref()
    }
    async fn approval(&self) -> ApprovalState {
        self.0.approval
    }
    /// Why approval is (or was) needed.
    async fn approval_reason(&self) -> Option<&str> {
        self.0.approval_reason.as_deref()
    }
    /// 1-based position in its queue while pending.
    async fn queue_position(&self) -> Option<i32> {
        self.0.queue_position
    }
    /// Planned start: an upper bound unless higher-priority work arrives or a node fails.
    async fn start_no_later_than(&self) -> Option<DateTime<Utc>> {
        self.0.start_no_later_than
    }
    /// Priority points fair share gave it when it was first ranked (its slice had used less GPU
    /// time lately than the other slices with work here): it is ranked at `priority` plus these,
    /// never past its band's top, and they never make it preempt anyone.
    async fn fair_share_points(&self) -> i32 {
        self.0.fair_share_bonus.unwrap_or(0)
    }
    /// Expected start: the middle of `startRange`.
    async fn estimated_start_at(&self) -> Option<DateTime<Utc>> {
        self.0.estimated_start_at
    }
    /// When it is likely to start, while it waits: before `p10` one time in ten, before `p90`
    /// nine times in ten. Calibrated on how this gateway's past estimates turned out, so it
    /// carries what a single estimate cannot (windows ending early, higher-priority arrivals).
    async fn start_range(&self) -> Option<StartRange> {
        match (self.0.start_p10_at, self.0.estimated_start_at, self.0.start_p90_at) {
            (Some(p10), Some(p50), Some(p90)) if self.0.phase.is_pending() => Some(StartRange { p10, p50, p90 }),
            _ => None,
        }
    }
    /// Time from now until the expected start.
    async fn estimated_wait(&self) -> Option<Duration> {
        self.0.estimated_start_at.map(|at| Duration((at - Utc::now()).num_seconds().max(0)))
    }
    /// What could make `startNoLaterThan` later while the GPR waits. Nothing else can: a
    /// later arrival of equal or lower priority, a fair-share change or a re-plan never does,
    /// and early releases only make it earlier.
    async fn start_no_later_than_moves_later_on(&self) -> Option<Vec<EstimateMover>> {
        self.0.phase.is_pending().then(|| vec![EstimateMover::HigherPriorityArrival, EstimateMover::NodeFailure, EstimateMover::AdminReorder])
    }
    /// What could move `estimatedStartAt`, either way: it also predicts when running windows
    /// end from what the slice and shape used before, so it moves when they end sooner or
    /// later than predicted.
    async fn estimated_start_moves_on(&self) -> Option<Vec<EstimateMover>> {
        self.0.phase.is_pending().then(|| {
            vec![
                EstimateMover::HigherPriorityArrival,
                EstimateMover::NodeFailure,
                EstimateMover::AdminReorder,
                EstimateMover::EarlyRelease,
                EstimateMover::ReleaseLaterThanPredicted,
            ]
        })
    }
    async fn assigned_cluster(&self, ctx: &Context<'_>) -> Result<Option<Cluster>> {
        let Some(id) = self.0.assigned_cluster_id else { return Ok(None) };
        Ok(loaded(loaders(ctx)?.cluster().load_one(id).await)?.map(Cluster))
    }
    async fn assigned_instance_type(&self) -> Option<&str> {
        self.0.assigned_instance_type.as_deref()
    }
    async fn assigned_gpu_shape(&self) -> Option<&str> {
        self.0.assigned_gpu_shape.as_deref()
    }
    /// Nodes handed to the slice for this GPR.
    async fn nodes(&self, ctx: &Context<'_>) -> Result<Vec<GpuNode>> {
        let loaders = loaders(ctx)?;
        let links = loaded(loaders.node_links_by_gpr().load_one(self.0.id).await)?.unwrap_or_default();
        let mut nodes: Vec<GpuNode> = loaded(loaders.node().load_many(links.iter().map(|l| l.node_id)).await)?.into_values().map(GpuNode).collect();
        nodes.sort_by(|a, b| a.0.name.cmp(&b.0.name));
        Ok(nodes)
    }
    /// Utilisation, temperature and power over the latest samples of the GPUs on the nodes it
    /// holds now (what `gpuSummary(gprId:)` gives); null while it holds none.
    async fn gpu_summary(&self, ctx: &Context<'_>) -> Result<Option<crate::metrics::GpuSummary>> {
        crate::boxed(crate::metrics::gpr_summary(ctx, &self.0)).await
    }
    async fn provisioned_at(&self) -> Option<DateTime<Utc>> {
        self.0.provisioned_at
    }
    /// When the window ends and the nodes go back.
    async fn exit_at(&self) -> Option<DateTime<Utc>> {
        self.0.exit_at
    }
    /// What its workload needs, as its requester described it.
    async fn workload(&self) -> Option<WorkloadHintsView<'_>> {
        self.0.workload.as_ref().map(WorkloadHintsView)
    }
    /// The template (profile) it was created from, while it exists and the caller may see it.
    async fn template(&self, ctx: &Context<'_>) -> Result<Option<crate::template::GprTemplate>> {
        let Some(id) = self.0.template_id else { return Ok(None) };
        let (caller, db) = session(ctx)?;
        match egs_domain::template::service::find_template(db, caller, id).await {
            Ok(t) => Ok(Some(crate::template::GprTemplate(t))),
            Err(egs_domain::error::Error::NotFound(_)) => Ok(None),
            Err(other) => Err(other),
        }
    }
    /// How much `extendGpr` has added to the window in all.
    async fn extended_by(&self) -> Duration {
        Duration(self.0.extended_secs)
    }
    /// An extension waiting for an admin's decision (over the slice's extension grace).
    async fn extension_requested(&self) -> Option<Duration> {
        self.0.extension_requested_secs.filter(|_| self.0.phase == GprPhase::Provisioned).map(Duration)
    }
    async fn completed_at(&self) -> Option<DateTime<Utc>> {
        self.0.completed_at
    }
    async fn release_reason(&self) -> Option<ReleaseReason> {
        self.0.release_reason
    }
    /// The GPR that preempted this one, when the caller may see it.
    async fn preempted_by(&self, ctx: &Context<'_>) -> Result<Option<Gpr>> {
        visible_gpr(ctx, self.0.preempted_by_id).await
    }
    /// Bumped by every change; pass it back to `updateGpr` to avoid overwriting someone else's edit.
    async fn version(&self) -> i32 {
        self.0.version
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    async fn updated_at(&self) -> DateTime<Utc> {
        self.0.updated_at
    }
    /// What happened to this GPR, oldest first.
    async fn events(&self, ctx: &Context<'_>, first: Option<i32>, after: Option<String>) -> Result<Page<GprEvent>> {
        crate::boxed(async move {
            let (caller, db) = session(ctx)?;
            let search = super::reads::EventSearch { gpr_id: Some(self.0.id), ..Default::default() };
            list_events_page(db, caller, &search, crate::pagination::PageRequest::new(first, after)?).await
        })
        .await
    }
    /// The steps of handing its nodes to the slice and of taking them back, as they went
    /// (the pre-provisioning checklist); a new round of provisioning starts a new list.
    async fn provisioning_steps(&self, ctx: &Context<'_>) -> Result<Vec<ProvisioningStep>> {
        crate::boxed(async move {
            let (_, db) = session(ctx)?;
            Ok(egs_domain::lifecycle::steps::steps_of(db, self.0.id).await?.into_iter().map(ProvisioningStep).collect())
        })
        .await
    }
    /// `<cluster>/<namespace>/<name>` of the `GPUProvisioningRequest` resource it came from.
    async fn kubernetes_resource(&self) -> Option<&str> {
        self.0.source_ref.as_deref()
    }
}

/// One step of handing a GPR's nodes to its slice, or of taking them back.
pub struct ProvisioningStep(pub egs_entities::gpr_step::Model);

#[Object]
impl ProvisioningStep {
    async fn operation(&self) -> egs_entities::StepOperation {
        self.0.operation
    }
    /// `PRECHECK`, `LABEL_AND_TAINT`, `POD_PLACEMENT`, `EVENTS`; at release `CORDON`, `EVICT`,
    /// `UNLABEL`, `POD_PLACEMENT_REMOVED`, `POSTCHECK` (simulated clusters: `HAND_OVER`,
    /// `TAKE_BACK`).
    async fn step(&self) -> &str {
        &self.0.step
    }
    async fn status(&self) -> egs_entities::StepStatus {
        self.0.status
    }
    /// What it did, or why it failed.
    async fn message(&self) -> &str {
        &self.0.message
    }
    /// How many times it was started (retries and resumptions by a new leader).
    async fn attempts(&self) -> i32 {
        self.0.attempts
    }
    async fn started_at(&self) -> DateTime<Utc> {
        self.0.started_at
    }
    async fn finished_at(&self) -> Option<DateTime<Utc>> {
        self.0.finished_at
    }
}

/// Something that happened to a GPR.
pub struct GprEvent(pub gpr_event::Model);

#[Object]
impl GprEvent {
    pub async fn id(&self) -> ID {
        ids::encode(Kind::GprEvent, self.0.id)
    }
    /// Monotonic across all events: resume a stream after the last one you saw.
    async fn sequence(&self) -> i64 {
        self.0.id
    }
    async fn gpr(&self, ctx: &Context<'_>) -> Result<Option<Gpr>> {
        Ok(loaded(loaders(ctx)?.gpr().load_one(self.0.gpr_id).await)?.map(Gpr))
    }
    async fn slice(&self, ctx: &Context<'_>) -> Result<Option<Slice>> {
        Ok(loaded(loaders(ctx)?.slice().load_one(self.0.slice_id).await)?.map(Slice))
    }
    async fn kind(&self) -> GprEventKind {
        self.0.kind
    }
    async fn message(&self) -> &str {
        &self.0.message
    }
    /// Who caused it: a user name, or `system`.
    async fn actor(&self) -> &str {
        &self.0.actor
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
}

/// A start-time range (see `Gpr.startRange`).
#[derive(SimpleObject, Clone, Copy)]
pub struct StartRange {
    /// It starts before this one time in ten.
    pub p10: DateTime<Utc>,
    /// The middle: `estimatedStartAt`.
    pub p50: DateTime<Utc>,
    /// It starts before this nine times in ten.
    pub p90: DateTime<Utc>,
}

/// One pool's answer to "Get wait time".
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct PoolWaitEstimate {
    #[graphql(skip)]
    pub cluster_id: i64,
    pub gpu_shape: String,
    pub instance_type: String,
    /// Guaranteed start unless higher-priority work arrives or a node fails.
    pub start_no_later_than: DateTime<Utc>,
    /// Expected start: the middle of `startRange`.
    pub estimated_start_at: DateTime<Utc>,
    pub estimated_wait: Duration,
    /// When it would likely start: before `p10` one time in ten, before `p90` nine in ten
    /// (calibrated on how past estimates turned out).
    pub start_range: StartRange,
    /// Healthy nodes of the pool not reserved right now.
    pub free_nodes: i32,
    pub healthy_nodes: i32,
    /// Running GPRs of lower priority it would preempt to start now, where their slices allow
    /// eviction (0: it does not preempt; then it waits as the estimates say).
    pub would_preempt: i32,
    /// What it waits behind, in words: the slice's own GPR that holds nodes (a slice runs one
    /// GPR at a time), or the pool's reservations. Null when it would start now.
    pub waits_for: Option<String>,
}

impl PoolWaitEstimate {
    pub(super) fn new(row: egs_scheduler::PoolEstimate, own_name: Option<String>, now: DateTime<Utc>) -> Self {
        let at = |t: i64| DateTime::from_timestamp(t, 0).unwrap_or(now);
        let waits_for = (row.start_no_later_than > now.timestamp()).then(|| match row.behind_own {
            Some((id, back)) if back >= row.start_no_later_than => format!(
                "your slice's GPR `{}` holds its nodes until {} at the latest; a slice runs one GPR at a time",
                own_name.unwrap_or_else(|| ids::encode(Kind::Gpr, id).0),
                at(back).to_rfc3339()
            ),
            _ => format!(
                "the pool's nodes are reserved until then by running GPRs and GPRs planned ahead ({} of {} free now)",
                row.free_nodes_now, row.healthy_nodes
            ),
        });
        Self {
            would_preempt: row.preempts.len() as i32,
            waits_for,
            cluster_id: row.pool.cluster,
            gpu_shape: row.pool.gpu_shape,
            instance_type: row.pool.instance_type,
            start_no_later_than: at(row.start_no_later_than),
            estimated_start_at: at(row.estimated_start),
            estimated_wait: Duration((row.estimated_start - now.timestamp()).max(0)),
            start_range: StartRange { p10: at(row.start_range.p10), p50: at(row.start_range.p50), p90: at(row.start_range.p90) },
            free_nodes: row.free_nodes_now as i32,
            healthy_nodes: row.healthy_nodes as i32,
        }
    }
}

#[async_graphql::ComplexObject]
impl PoolWaitEstimate {
    async fn cluster(&self, ctx: &Context<'_>) -> Result<Option<Cluster>> {
        Ok(loaded(loaders(ctx)?.cluster().load_one(self.cluster_id).await)?.map(Cluster))
    }
}

/// What a GPR's workload needs, as its requester described it.
pub struct WorkloadHintsView<'a>(&'a egs_entities::WorkloadHints);

#[Object(name = "WorkloadHints")]
impl WorkloadHintsView<'_> {
    async fn model(&self) -> Option<&str> {
        self.0.model.as_deref()
    }
    /// Parameters, in billions.
    async fn model_billions(&self) -> Option<f64> {
        self.0.model_billions
    }
    async fn framework(&self) -> Option<&str> {
        self.0.framework.as_deref()
    }
    async fn kind(&self) -> Option<egs_entities::WorkloadKind> {
        self.0.kind
    }
    /// Its nodes talk over RDMA: planned only in pools that have it (with more than one node).
    async fn rdma(&self) -> bool {
        self.0.rdma
    }
}
