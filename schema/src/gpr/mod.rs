//! GPU Provision Requests: N whole nodes of a shape for a strict reserved window.

pub mod policy;
pub mod queue_views;
pub mod service;

use crate::auth::Caller;
use crate::cluster::Cluster;
use crate::error::{Error, Result};
use crate::ids::{self, Kind};
use crate::inventory::GpuNode;
use crate::pagination::{Order, Page, PageRequest, keyset_page};
use crate::scalars::Duration;
use crate::slice::Slice;
use crate::user::User;
use crate::{loaded, loaders, payload, session};
use async_graphql::{Context, Enum, ID, InputObject, MaybeUndefined, Object, SimpleObject};
use chrono::{DateTime, Utc};
use egs_entities::{ApprovalState, GprEventKind, GprPhase, ReleaseReason, gpr, gpr_event};
use sea_orm::{ColumnTrait, DatabaseConnection, QueryFilter, QueryOrder, QuerySelect};
use std::collections::BTreeMap;

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
    /// Expected start, allowing for early releases.
    async fn estimated_start_at(&self) -> Option<DateTime<Utc>> {
        self.0.estimated_start_at
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
        crate::metrics::gpr_summary(ctx, &self.0).await
    }
    async fn provisioned_at(&self) -> Option<DateTime<Utc>> {
        self.0.provisioned_at
    }
    /// When the window ends and the nodes go back.
    async fn exit_at(&self) -> Option<DateTime<Utc>> {
        self.0.exit_at
    }
    async fn completed_at(&self) -> Option<DateTime<Utc>> {
        self.0.completed_at
    }
    async fn release_reason(&self) -> Option<ReleaseReason> {
        self.0.release_reason
    }
    /// The GPR that preempted this one, when the caller may see it.
    async fn preempted_by(&self, ctx: &Context<'_>) -> Result<Option<Gpr>> {
        let Some(id) = self.0.preempted_by_id else { return Ok(None) };
        let (caller, db) = session(ctx)?;
        let Some(other) = loaded(loaders(ctx)?.gpr().load_one(id).await)? else { return Ok(None) };
        Ok(caller.can_see_slice(db, other.slice_id).await?.then_some(Gpr(other)))
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
        let (caller, db) = session(ctx)?;
        list_events_page(db, caller, Some(self.0.id), None, first, after).await
    }
    /// The steps of handing its nodes to the slice and of taking them back, as they went
    /// (the pre-provisioning checklist); a new round of provisioning starts a new list.
    async fn provisioning_steps(&self, ctx: &Context<'_>) -> Result<Vec<ProvisioningStep>> {
        let (_, db) = session(ctx)?;
        Ok(crate::lifecycle::steps::steps_of(db, self.0.id).await?.into_iter().map(ProvisioningStep).collect())
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

#[derive(InputObject, Default)]
pub struct GprFilter {
    pub slice_id: Option<ID>,
    /// Any of these phases.
    pub phases: Option<Vec<GprPhase>>,
    #[graphql(skip)]
    pub slice_row: Option<i64>,
}

impl GprFilter {
    pub(crate) fn within_slice(mut self, slice_id: i64) -> Self {
        self.slice_id = None;
        self.slice_row = Some(slice_id);
        self
    }
}

pub(crate) async fn list_gprs_page(
    db: &DatabaseConnection,
    caller: &Caller,
    filter: GprFilter,
    first: Option<i32>,
    after: Option<String>,
) -> Result<Page<Gpr>> {
    let request = PageRequest::new(first, after)?;
    let slice_id = match &filter.slice_id {
        Some(id) => Some(ids::decode("filter.sliceId", id, Kind::Slice)?),
        None => filter.slice_row,
    };
    let query = service::GprQuery { slice_id, phases: filter.phases.unwrap_or_default() };
    let select = service::gprs_select(db, caller, &query).await?;
    keyset_page(db, request, select, gpr::Column::Id, Order::NewestFirst, |g| g.id, Gpr).await
}

async fn list_events_page(
    db: &DatabaseConnection,
    caller: &Caller,
    gpr_id: Option<i64>,
    slice_id: Option<i64>,
    first: Option<i32>,
    after: Option<String>,
) -> Result<Page<GprEvent>> {
    caller.require_person()?;
    let request = PageRequest::new(first, after)?;
    let visible = caller.visible_slices(db).await?;
    let select = service::events_select(&visible, gpr_id, slice_id);
    keyset_page(db, request, select, gpr_event::Column::Id, Order::OldestFirst, |e| e.id, GprEvent).await
}

#[derive(Default)]
pub struct GprQuery;

#[Object]
impl GprQuery {
    /// GPRs in the caller's slices (all for admins), newest first.
    async fn gprs(&self, ctx: &Context<'_>, filter: Option<GprFilter>, first: Option<i32>, after: Option<String>) -> Result<Page<Gpr>> {
        let (caller, db) = session(ctx)?;
        list_gprs_page(db, caller, filter.unwrap_or_default(), first, after).await
    }

    /// "Get wait time": when a GPR like this would start in every pool the slice may use, if
    /// submitted now, soonest first. Changes nothing.
    async fn wait_time_estimates(&self, ctx: &Context<'_>, input: WaitTimeInput) -> Result<Vec<PoolWaitEstimate>> {
        let (caller, db) = session(ctx)?;
        let scheduler = &crate::services(ctx)?.scheduler;
        let now = scheduler.clock.now();
        let spec = service::GprSpec {
            slice_id: ids::decode("sliceId", &input.slice_id, Kind::Slice)?,
            name: "wait-time".into(),
            node_count: input.node_count,
            gpus_per_node: input.gpus_per_node,
            min_gpu_memory_mib: input.min_gpu_memory_mib,
            gpu_shape: input.gpu_shape,
            instance_type: input.instance_type,
            preferred_cluster_ids: decode_clusters("preferredClusterIds", &input.preferred_cluster_ids)?,
            priority: input.priority,
            duration_secs: input.duration.secs(),
            idle_timeout_secs: None,
            preemptible: true,
            requeue_on_failure: None,
            earliest_start_at: input.earliest_start_at,
            labels: BTreeMap::new(),
            source: None,
        };
        let rows = service::wait_time_estimates(db, caller, spec, scheduler, now).await?;
        Ok(rows.into_iter().map(|(r, own)| PoolWaitEstimate::new(r, own, now)).collect())
    }

    /// The queue in order (admins): every waiting GPR, or those of one slice or one pool.
    async fn queue(
        &self,
        ctx: &Context<'_>,
        slice_id: Option<ID>,
        cluster_id: Option<ID>,
        gpu_shape: Option<String>,
        instance_type: Option<String>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<Vec<Gpr>> {
        let (caller, db) = session(ctx)?;
        let query = queue_query(slice_id.as_ref(), cluster_id.as_ref(), gpu_shape, instance_type, first)?;
        Ok(service::queue(db, caller, query).await?.into_iter().map(Gpr).collect())
    }

    async fn gpr(&self, ctx: &Context<'_>, id: ID) -> Result<Gpr> {
        let (caller, db) = session(ctx)?;
        Ok(Gpr(service::find_gpr(db, caller, ids::decode("id", &id, Kind::Gpr)?).await?))
    }

    /// GPR events the caller may see, oldest first; narrow by GPR or slice.
    async fn gpr_events(
        &self,
        ctx: &Context<'_>,
        gpr_id: Option<ID>,
        slice_id: Option<ID>,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<GprEvent>> {
        let (caller, db) = session(ctx)?;
        let (gpr_id, slice_id) = event_scope(db, caller, gpr_id.as_ref(), slice_id.as_ref()).await?;
        list_events_page(db, caller, gpr_id, slice_id, first, after).await
    }
}

/// The GPR and slice an event list or stream is narrowed to. Checks visibility, so a hidden
/// GPR or slice reads as missing rather than as "no events".
async fn event_scope(db: &DatabaseConnection, caller: &Caller, gpr_id: Option<&ID>, slice_id: Option<&ID>) -> Result<(Option<i64>, Option<i64>)> {
    let gpr_id = match gpr_id {
        Some(id) => Some(service::find_gpr(db, caller, ids::decode("gprId", id, Kind::Gpr)?).await?.id),
        None => None,
    };
    let slice_id = match slice_id {
        Some(id) => Some(crate::slice::service::find_slice(db, caller, ids::decode("sliceId", id, Kind::Slice)?).await?.id),
        None => None,
    };
    Ok((gpr_id, slice_id))
}

/// Most GPRs one queue view shows.
const MAX_QUEUE_VIEW: i32 = 500;

/// `queue(...)`'s arguments, decoded; `first` out of range is refused, not clamped.
fn queue_query(
    slice_id: Option<&ID>,
    cluster_id: Option<&ID>,
    gpu_shape: Option<String>,
    instance_type: Option<String>,
    first: i32,
) -> Result<service::QueueQuery> {
    Ok(service::QueueQuery {
        slice_id: slice_id.map(|id| ids::decode("sliceId", id, Kind::Slice)).transpose()?,
        cluster_id: cluster_id.map(|id| ids::decode("clusterId", id, Kind::Cluster)).transpose()?,
        gpu_shape,
        instance_type,
        first: match first {
            1..=MAX_QUEUE_VIEW => first as u64,
            _ => return Err(Error::invalid("first", format!("`first` must be between 1 and {MAX_QUEUE_VIEW} (got {first})"))),
        },
    })
}

#[derive(Default)]
pub struct GprSubscription;

/// Events a live `gprEvents` subscriber reads from the database per page while catching up.
const CATCH_UP_PAGE: u64 = 500;

#[async_graphql::Subscription]
impl GprSubscription {
    /// GPR events the caller may see, live, narrowed by GPR or slice. With `after` (the id of
    /// the last event you saw, or its `sequence`), every stored event after it comes first,
    /// then live ones, with no gap or repeat between the two: reconnect with the last id you
    /// received and nothing is lost.
    async fn gpr_events(
        &self,
        ctx: &Context<'_>,
        gpr_id: Option<ID>,
        slice_id: Option<ID>,
        after: Option<ID>,
    ) -> Result<impl futures_util::Stream<Item = async_graphql::Result<GprEvent>> + use<>> {
        let (caller, db) = session(ctx)?;
        caller.require_person()?;
        let (gpr_id, slice_id) = event_scope(db, caller, gpr_id.as_ref(), slice_id.as_ref()).await?;
        let after = after.as_ref().map(event_cursor).transpose()?;
        let visible = caller.visible_slices(db).await?;
        let hub = crate::services(ctx)?.events.clone();
        let (mut live, settled) = hub.subscribe();
        // Without `after`, "from now on" means after every event already stored, including
        // those the hub has not published yet (its tailer may lag a busy database).
        let stored = match after {
            Some(_) => 0,
            None => <gpr_event::Entity as sea_orm::EntityTrait>::find()
                .select_only()
                .column_as(gpr_event::Column::Id.max(), "newest")
                .into_tuple::<Option<i64>>()
                .one(db)
                .await?
                .flatten()
                .unwrap_or(0),
        };
        let db = db.clone();
        let select = {
            let visible = visible.clone();
            move |after: i64| {
                service::events_select(&visible, gpr_id, slice_id).filter(gpr_event::Column::Id.gt(after)).order_by_asc(gpr_event::Column::Id)
            }
        };
        let wanted = move |e: &gpr_event::Model| {
            gpr_id.is_none_or(|g| g == e.gpr_id)
                && slice_id.is_none_or(|s| s == e.slice_id)
                && match &visible {
                    crate::auth::Visible::All => true,
                    crate::auth::Visible::Only(ids) => ids.binary_search(&e.slice_id).is_ok(),
                }
        };
        Ok(async_stream::stream! {
            // Without `after`: only what happens from now on.
            let floor = after.unwrap_or(settled.max(stored));
            let mut last = floor;
            // Ids read from the database that the live feed may still bring (not yet settled).
            let mut read = std::collections::HashSet::new();
            let mut catching_up = true;
            loop {
                if catching_up {
                    // Only what the hub has published: above it a gap may still be filling,
                    // and the live feed brings those rows in order.
                    match select(last).filter(gpr_event::Column::Id.lte(hub.published())).limit(CATCH_UP_PAGE).all(&db).await {
                        Ok(rows) => {
                            catching_up = rows.len() as u64 == CATCH_UP_PAGE;
                            for row in rows {
                                last = last.max(row.id);
                                if row.id > settled {
                                    read.insert(row.id);
                                }
                                yield Ok(GprEvent(row));
                            }
                        }
                        Err(error) => {
                            yield Err(Error::from(error).into());
                            return;
                        }
                    }
                    continue;
                }
                match live.recv().await {
                    // Late commits (an id below `last`) are new to this subscriber too.
                    Ok(row) if row.id > floor && wanted(&row) && !read.remove(&row.id) => {
                        last = last.max(row.id);
                        yield Ok(GprEvent((*row).clone()));
                    }
                    Ok(_) => {}
                    // Fell behind the feed: read what was missed from the database again.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => catching_up = true,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        })
    }
}

#[async_graphql::Subscription]
impl QueueSubscription {
    /// The queue as `queue(...)` shows it (one slice for its members; any view for admins):
    /// now, then again whenever a position, promise or estimate in it changes. Subscribers of
    /// the same view share one read per burst of changes (at most two a second).
    async fn queue_changed(
        &self,
        ctx: &Context<'_>,
        slice_id: Option<ID>,
        cluster_id: Option<ID>,
        gpu_shape: Option<String>,
        instance_type: Option<String>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<impl futures_util::Stream<Item = async_graphql::Result<Vec<Gpr>>> + use<>> {
        let (caller, db) = session(ctx)?;
        let query = queue_query(slice_id.as_ref(), cluster_id.as_ref(), gpu_shape, instance_type, first)?;
        // Checks access now, so a refused view is an error instead of an empty stream.
        let first_view = service::queue(db, caller, query.clone()).await?;
        let views = crate::services(ctx)?.queue_views.clone();
        let (mut view, watching) = views.watch(query, &first_view);
        Ok(async_stream::stream! {
            let _watching = watching;
            let mut last = queue_views::fingerprint(&first_view);
            yield Ok(first_view.into_iter().map(Gpr).collect());
            while view.changed().await.is_ok() {
                tokio::time::sleep(views.spread()).await;
                let read = view.borrow_and_update().clone();
                match &*read {
                    Ok(rows) => {
                        let now = queue_views::fingerprint(rows);
                        if now != last {
                            last = now;
                            yield Ok(rows.iter().cloned().map(Gpr).collect());
                        }
                    }
                    Err(error) => {
                        yield Err(error.clone());
                        return;
                    }
                }
            }
        })
    }
}

#[derive(Default)]
pub struct QueueSubscription;

/// An event id or a bare sequence number, as `gprEvents(after:)` takes it.
fn event_cursor(id: &ID) -> Result<i64> {
    match id.parse::<i64>() {
        Ok(sequence) if sequence >= 0 => Ok(sequence),
        _ => ids::decode("after", id, Kind::GprEvent),
    }
}

/// A GPR you are thinking of submitting.
#[derive(InputObject)]
pub struct WaitTimeInput {
    pub slice_id: ID,
    pub node_count: i32,
    pub gpus_per_node: Option<i32>,
    pub min_gpu_memory_mib: Option<i64>,
    /// Omit to see every shape the slice may use.
    pub gpu_shape: Option<String>,
    pub instance_type: Option<String>,
    #[graphql(default)]
    pub preferred_cluster_ids: Vec<ID>,
    #[graphql(default = 101)]
    pub priority: i32,
    pub duration: Duration,
    pub earliest_start_at: Option<DateTime<Utc>>,
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
    /// Expected start, allowing for windows that end early.
    pub estimated_start_at: DateTime<Utc>,
    pub estimated_wait: Duration,
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
    fn new(row: crate::scheduler::PoolEstimate, own_name: Option<String>, now: DateTime<Utc>) -> Self {
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

#[derive(InputObject)]
pub struct CreateGprInput {
    pub slice_id: ID,
    /// A DNS label, e.g. `llama-finetune-3`.
    pub name: String,
    /// Whole nodes, all from one pool.
    pub node_count: i32,
    /// GPUs needed on each node; omit for every GPU of the node.
    pub gpus_per_node: Option<i32>,
    pub min_gpu_memory_mib: Option<i64>,
    /// Omit to let the scheduler pick.
    pub gpu_shape: Option<String>,
    /// Omit to let the scheduler pick.
    pub instance_type: Option<String>,
    /// Omit for any of the slice's clusters.
    #[graphql(default)]
    pub preferred_cluster_ids: Vec<ID>,
    /// 1–300, higher runs first; default 101.
    #[graphql(default = 101)]
    pub priority: i32,
    /// The strict reserved window, e.g. `6h` or `PT6H`.
    pub duration: Duration,
    /// Release after the GPUs stay idle this long; defaults to the slice policy.
    pub idle_timeout: Option<Duration>,
    #[graphql(default = true)]
    pub preemptible: bool,
    /// Defaults to the slice policy.
    pub requeue_on_failure: Option<bool>,
    /// Reserve ahead: not before this time.
    pub earliest_start_at: Option<DateTime<Utc>>,
    #[graphql(default)]
    pub labels: Vec<Label>,
}

#[derive(InputObject)]
pub struct UpdateGprInput {
    pub id: ID,
    /// The version you read; the update is refused if the GPR changed since.
    pub version: i32,
    pub name: Option<String>,
    pub node_count: Option<i32>,
    pub gpus_per_node: MaybeUndefined<i32>,
    pub min_gpu_memory_mib: MaybeUndefined<i64>,
    pub gpu_shape: MaybeUndefined<String>,
    pub instance_type: MaybeUndefined<String>,
    pub preferred_cluster_ids: Option<Vec<ID>>,
    pub priority: Option<i32>,
    pub duration: Option<Duration>,
    pub idle_timeout: MaybeUndefined<Duration>,
    pub preemptible: Option<bool>,
    pub earliest_start_at: MaybeUndefined<DateTime<Utc>>,
    pub labels: Option<Vec<Label>>,
}

#[derive(InputObject)]
pub struct GprActionInput {
    pub id: ID,
    /// When given, the action is refused if the GPR changed since this version.
    pub version: Option<i32>,
}

#[derive(InputObject)]
pub struct SetGprPriorityInput {
    pub id: ID,
    pub priority: i32,
    pub version: Option<i32>,
}

#[derive(InputObject)]
pub struct GprDecisionInput {
    pub id: ID,
    /// Recorded in the GPR's events.
    pub reason: Option<String>,
    pub version: Option<i32>,
}

payload!(CreateGprPayload, gpr: Gpr);
payload!(UpdateGprPayload, gpr: Gpr);
payload!(CancelGprPayload, gpr: Gpr);
payload!(EarlyReleaseGprPayload, gpr: Gpr);
payload!(SetGprPriorityPayload, gpr: Gpr);
payload!(ApproveGprPayload, gpr: Gpr);
payload!(RejectGprPayload, gpr: Gpr);

fn decode_clusters(field: &str, list: &[ID]) -> Result<Vec<i64>> {
    list.iter().enumerate().map(|(i, id)| ids::decode(&format!("{field}.{i}"), id, Kind::Cluster)).collect()
}

fn labels_map(labels: Vec<Label>) -> Result<BTreeMap<String, String>> {
    let mut map = BTreeMap::new();
    for label in labels {
        if map.insert(label.key.clone(), label.value).is_some() {
            return Err(Error::invalid("labels", format!("label `{}` appears twice", label.key)));
        }
    }
    Ok(map)
}

#[derive(Default)]
pub struct GprMutation;

#[Object]
impl GprMutation {
    /// Asks for GPU nodes for a slice (slice editors). Lands `QUEUED`, or `PENDING_APPROVAL`
    /// when over the slice policy.
    async fn create_gpr(&self, ctx: &Context<'_>, input: CreateGprInput) -> async_graphql::Result<CreateGprPayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let spec = service::GprSpec {
                slice_id: ids::decode("sliceId", &input.slice_id, Kind::Slice)?,
                name: input.name,
                node_count: input.node_count,
                gpus_per_node: input.gpus_per_node,
                min_gpu_memory_mib: input.min_gpu_memory_mib,
                gpu_shape: input.gpu_shape,
                instance_type: input.instance_type,
                preferred_cluster_ids: decode_clusters("preferredClusterIds", &input.preferred_cluster_ids)?,
                priority: input.priority,
                duration_secs: input.duration.secs(),
                idle_timeout_secs: input.idle_timeout.map(Duration::secs),
                preemptible: input.preemptible,
                requeue_on_failure: input.requeue_on_failure,
                earliest_start_at: input.earliest_start_at,
                labels: labels_map(input.labels)?,
                source: None,
            };
            service::create_gpr(db, caller, spec).await.map(Gpr)
        };
        let result = result.await;
        crate::stored_changes(ctx);
        CreateGprPayload::from_result(result)
    }

    /// Edits a pending GPR (slice editors), given the version you read.
    async fn update_gpr(&self, ctx: &Context<'_>, input: UpdateGprInput) -> async_graphql::Result<UpdateGprPayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let id = ids::decode("id", &input.id, Kind::Gpr)?;
            let changes = service::GprChanges {
                name: input.name,
                node_count: input.node_count,
                gpus_per_node: input.gpus_per_node.into(),
                min_gpu_memory_mib: input.min_gpu_memory_mib.into(),
                gpu_shape: input.gpu_shape.into(),
                instance_type: input.instance_type.into(),
                preferred_cluster_ids: input.preferred_cluster_ids.as_deref().map(|list| decode_clusters("preferredClusterIds", list)).transpose()?,
                priority: input.priority,
                duration_secs: input.duration.map(Duration::secs),
                idle_timeout_secs: Option::<Option<Duration>>::from(input.idle_timeout).map(|t| t.map(Duration::secs)),
                preemptible: input.preemptible,
                earliest_start_at: input.earliest_start_at.into(),
                labels: input.labels.map(labels_map).transpose()?,
            };
            service::update_gpr(db, caller, id, input.version, changes).await.map(Gpr)
        };
        let result = result.await;
        crate::stored_changes(ctx);
        UpdateGprPayload::from_result(result)
    }

    /// Withdraws a pending GPR (slice editors).
    async fn cancel_gpr(&self, ctx: &Context<'_>, input: GprActionInput) -> async_graphql::Result<CancelGprPayload> {
        let (caller, db) = session(ctx)?;
        let result = async { service::cancel_gpr(db, caller, ids::decode("id", &input.id, Kind::Gpr)?, input.version).await.map(Gpr) };
        let result = result.await;
        crate::stored_changes(ctx);
        CancelGprPayload::from_result(result)
    }

    /// Gives a provisioned GPR's nodes back before its window ends (slice editors).
    async fn early_release_gpr(&self, ctx: &Context<'_>, input: GprActionInput) -> async_graphql::Result<EarlyReleaseGprPayload> {
        let (caller, db) = session(ctx)?;
        let result = async { service::early_release_gpr(db, caller, ids::decode("id", &input.id, Kind::Gpr)?, input.version).await.map(Gpr) };
        let result = result.await;
        crate::stored_changes(ctx);
        EarlyReleaseGprPayload::from_result(result)
    }

    /// Changes a GPR's priority (admin).
    async fn set_gpr_priority(&self, ctx: &Context<'_>, input: SetGprPriorityInput) -> async_graphql::Result<SetGprPriorityPayload> {
        let (caller, db) = session(ctx)?;
        let result =
            async { service::set_gpr_priority(db, caller, ids::decode("id", &input.id, Kind::Gpr)?, input.priority, input.version).await.map(Gpr) };
        let result = result.await;
        crate::stored_changes(ctx);
        SetGprPriorityPayload::from_result(result)
    }

    /// Approves a GPR held for being over policy (admin); it joins the queue.
    async fn approve_gpr(&self, ctx: &Context<'_>, input: GprDecisionInput) -> async_graphql::Result<ApproveGprPayload> {
        let (caller, db) = session(ctx)?;
        let result = async { service::approve_gpr(db, caller, ids::decode("id", &input.id, Kind::Gpr)?, input.reason, input.version).await.map(Gpr) };
        let result = result.await;
        crate::stored_changes(ctx);
        ApproveGprPayload::from_result(result)
    }

    /// Rejects a GPR held for being over policy (admin).
    async fn reject_gpr(&self, ctx: &Context<'_>, input: GprDecisionInput) -> async_graphql::Result<RejectGprPayload> {
        let (caller, db) = session(ctx)?;
        let result = async { service::reject_gpr(db, caller, ids::decode("id", &input.id, Kind::Gpr)?, input.reason, input.version).await.map(Gpr) };
        let result = result.await;
        crate::stored_changes(ctx);
        RejectGprPayload::from_result(result)
    }
}
