//! Reading GPRs: lists, the queue, events and "Get wait time".

use super::inputs::WaitTimeInput;
use super::reads;
use super::types::{Gpr, GprEvent, PoolWaitEstimate};
use crate::ids::{self, Kind};
use crate::pagination::{Order, Page, PageRequest, keyset_page};
use crate::session;
use async_graphql::{Context, ID, InputObject, Object};
use egs_domain::auth::Caller;
use egs_domain::error::{Error, Result};
use egs_entities::{GprPhase, gpr, gpr_event};
use sea_orm::DatabaseConnection;

#[derive(InputObject, Default)]
pub struct GprFilter {
    pub slice_id: Option<ID>,
    /// Any of these phases.
    pub phases: Option<Vec<GprPhase>>,
    /// Only GPRs an admin must decide on: `PENDING_APPROVAL` ones and provisioned ones with an
    /// extension requested.
    #[graphql(default)]
    pub awaiting_decision: bool,
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

/// A page of the GPRs the caller may see, with what its selection asks of them prefetched.
pub(crate) async fn list_gprs_page(ctx: &Context<'_>, filter: GprFilter, first: Option<i32>, after: Option<String>) -> Result<Page<Gpr>> {
    let (caller, db) = session(ctx)?;
    let request = PageRequest::new(first, after)?;
    let slice_id = match &filter.slice_id {
        Some(id) => Some(ids::decode("filter.sliceId", id, Kind::Slice)?),
        None => filter.slice_row,
    };
    let query = reads::GprQuery { slice_id, phases: filter.phases.unwrap_or_default(), awaiting_decision: filter.awaiting_decision };
    let select = reads::gprs_select(db, caller, &query).await?;
    let page = keyset_page(db, request, select, gpr::Column::Id, Order::NewestFirst, |g| g.id, Gpr).await?;
    super::types::prefetch_for_gprs(ctx, page.edges.iter().map(|e| &e.node.0), crate::pagination::Selection::of_page(ctx)).await?;
    Ok(page)
}

/// A page of the events `search` asks for that the caller may see, oldest first.
pub(super) async fn list_events_page(
    db: &DatabaseConnection,
    caller: &Caller,
    search: &reads::EventSearch,
    request: PageRequest,
) -> Result<Page<GprEvent>> {
    caller.require_person()?;
    search.check()?;
    let visible = caller.visible_slices(db).await?;
    let select = reads::search_events(&visible, search);
    keyset_page(db, request, select, gpr_event::Column::Id, Order::OldestFirst, |e| e.id, GprEvent).await
}

#[derive(Default)]
pub struct GprQuery;

#[Object]
impl GprQuery {
    /// GPRs in the caller's slices (all for admins), newest first.
    async fn gprs(&self, ctx: &Context<'_>, filter: Option<GprFilter>, first: Option<i32>, after: Option<String>) -> Result<Page<Gpr>> {
        list_gprs_page(ctx, filter.unwrap_or_default(), first, after).await
    }

    /// "Get wait time": when a GPR like this would start in every pool the slice may use, if
    /// submitted now, soonest first. Changes nothing. A planning question: it costs
    /// 1,000 of the query budget, and a request may ask at most 4.
    #[graphql(complexity = "crate::limits::PLANNING_COMPLEXITY + child_complexity")]
    async fn wait_time_estimates(&self, ctx: &Context<'_>, input: WaitTimeInput) -> Result<Vec<PoolWaitEstimate>> {
        let (caller, db) = session(ctx)?;
        let scheduler = crate::app(ctx)?.scheduler.as_ref();
        let now = scheduler.clock.now();
        let spec = egs_domain::template::service::resolve_ask(db, caller, input.into_ask()?).await?;
        let rows = reads::wait_time_estimates(db, caller, spec, scheduler, now).await?;
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
        let queue = reads::queue(db, caller, query).await?;
        super::types::prefetch_for_gprs(ctx, queue.iter(), crate::pagination::Selection::of_list(ctx)).await?;
        Ok(queue.into_iter().map(Gpr).collect())
    }

    async fn gpr(&self, ctx: &Context<'_>, id: ID) -> Result<Gpr> {
        let (caller, db) = session(ctx)?;
        Ok(Gpr(reads::find_gpr(db, caller, ids::decode("id", &id, Kind::Gpr)?).await?))
    }

    /// How much longer a provisioned GPR's window may be made now (`extendGpr`) without a
    /// waiting GPR's promised start moving later, how much of that needs no approval, and why
    /// not more. Changes nothing. A planning question: it costs 1,000 of the query budget,
    /// and a request may ask at most 4.
    #[graphql(complexity = "crate::limits::PLANNING_COMPLEXITY + child_complexity")]
    async fn gpr_extension_room(&self, ctx: &Context<'_>, id: ID) -> Result<GprExtensionRoom> {
        let (caller, db) = session(ctx)?;
        let scheduler = crate::app(ctx)?.scheduler.as_ref();
        let room = super::extend::room(db, caller, scheduler, ids::decode("id", &id, Kind::Gpr)?).await?;
        Ok(GprExtensionRoom(room))
    }

    /// GPR events the caller may see, oldest first ("Events can be searched", seed 001): narrow
    /// by GPR, slice, kinds, time (`since` ≤ createdAt < `until`) and text (in the message or
    /// the actor, ignoring case; looked for in the newest 20,000 events the other filters leave:
    /// narrow by time to search older ones). Pages forward (`first`, `after`) or back (`last`, `before`;
    /// `last` alone gives the newest).
    #[allow(clippy::too_many_arguments)]
    async fn gpr_events(
        &self,
        ctx: &Context<'_>,
        gpr_id: Option<ID>,
        slice_id: Option<ID>,
        kinds: Option<Vec<egs_entities::GprEventKind>>,
        since: Option<chrono::DateTime<chrono::Utc>>,
        until: Option<chrono::DateTime<chrono::Utc>>,
        text: Option<String>,
        first: Option<i32>,
        after: Option<String>,
        last: Option<i32>,
        before: Option<String>,
    ) -> Result<Page<GprEvent>> {
        let (caller, db) = session(ctx)?;
        let request = PageRequest::both_ways(first, after, last, before)?;
        let (gpr_id, slice_id) = event_scope(db, caller, gpr_id.as_ref(), slice_id.as_ref()).await?;
        let search = reads::EventSearch { gpr_id, slice_id, kinds: kinds.unwrap_or_default(), since, until, text };
        list_events_page(db, caller, &search, request).await
    }
}

/// The GPR and slice an event list or stream is narrowed to. Checks visibility, so a hidden
/// GPR or slice reads as missing rather than as "no events".
pub(super) async fn event_scope(
    db: &DatabaseConnection,
    caller: &Caller,
    gpr_id: Option<&ID>,
    slice_id: Option<&ID>,
) -> Result<(Option<i64>, Option<i64>)> {
    let gpr_id = match gpr_id {
        Some(id) => Some(reads::find_gpr(db, caller, ids::decode("gprId", id, Kind::Gpr)?).await?.id),
        None => None,
    };
    let slice_id = match slice_id {
        Some(id) => Some(egs_domain::slice::service::find_slice(db, caller, ids::decode("sliceId", id, Kind::Slice)?).await?.id),
        None => None,
    };
    Ok((gpr_id, slice_id))
}

/// Most GPRs one queue view shows.
pub const MAX_QUEUE_VIEW: i32 = 500;

/// `queue(...)`'s arguments, decoded; `first` out of range is refused, not clamped.
pub(super) fn queue_query(
    slice_id: Option<&ID>,
    cluster_id: Option<&ID>,
    gpu_shape: Option<String>,
    instance_type: Option<String>,
    first: i32,
) -> Result<reads::QueueQuery> {
    Ok(reads::QueueQuery {
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

/// How much longer a GPR's window may be made now.
pub struct GprExtensionRoom(super::extend::Room);

#[Object]
impl GprExtensionRoom {
    /// The most `extendGpr` accepts now (searched up to a week, in whole minutes).
    async fn max_now(&self) -> crate::scalars::Duration {
        crate::scalars::Duration(self.0.now)
    }
    /// Of that, how much applies at once; the rest waits for an admin's approval.
    async fn without_approval(&self) -> crate::scalars::Duration {
        crate::scalars::Duration(self.0.without_approval)
    }
    /// Why not more: the promise in the way, or why it cannot be extended at all.
    async fn limited_by(&self) -> Option<&str> {
        self.0.limited_by.as_deref()
    }
}
