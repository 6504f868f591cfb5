//! GPU metrics: `reportGpuSamples` for node agents, history and summaries for dashboards, and
//! the live `gpuMetrics` subscription. Who reads what is in [`access`], reports from agents in
//! [`ingest`], summaries and ranking in [`summary`], history in [`store`], live delivery in
//! [`live`]. The `Gpu` and `GpuNode` fields that read metrics call the helpers at
//! the end of this file.

use egs_domain::metrics::sample::StoredSample;
use egs_domain::metrics::{access, ingest, live, sample, store, summary};

use crate::ids::{self, Kind};
use crate::inventory::Gpu;
use crate::pagination::{Page, PageRequest, TotalCount};
use crate::scalars::Duration;
use crate::{app, loaded, loaders, session};
use access::{Access, Scope};
use async_graphql::connection::{Connection, Edge};
use async_graphql::{Context, Enum, ID, InputObject, Object, SimpleObject};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, Utc};
use egs_domain::error::{Error, Result, UserError};
use egs_entities::{gpu, node};
use sea_orm::{QuerySelect, Select};
use store::Holder;
pub use store::{Feed, MetricsStore, NoMetricsFanout};
use summary::Rank;

/// Shortest `gpuMetrics` interval.
pub const MIN_INTERVAL_SECS: i64 = 1;
/// Longest `gpuMetrics` interval.
pub const MAX_INTERVAL_SECS: i64 = 3600;

/// One sample of one GPU. Times are whole seconds.
#[derive(SimpleObject, Clone, Debug)]
pub struct GpuSample {
    pub gpu_id: ID,
    pub uuid: String,
    pub node_id: ID,
    pub time: DateTime<Utc>,
    /// GPU utilisation, %.
    pub util: f64,
    /// Memory-controller utilisation, %.
    pub mem_util: f64,
    /// Framebuffer memory in use, MiB.
    pub mem_used_mib: f64,
    /// °C.
    pub temperature: f64,
    /// W.
    pub power: f64,
    /// MHz.
    pub sm_clock_mhz: f64,
    /// XID error codes reported with this sample.
    pub xid_errors: Vec<i32>,
    /// Corrected (single-bit) ECC errors, as the driver counts them.
    pub ecc_corrected: Option<i64>,
    /// Uncorrected (double-bit) ECC errors, as the driver counts them.
    pub ecc_uncorrected: Option<i64>,
}

impl GpuSample {
    fn from_stored(uuid: &str, node_id: i64, s: &StoredSample) -> Option<Self> {
        let latest = summary::latest_of(
            s.last_sample_at,
            [s.latest_util, s.latest_mem_util, s.latest_mem_used_mib, s.latest_temperature_c, s.latest_power_w],
        )?;
        Some(Self {
            gpu_id: ids::encode(Kind::Gpu, s.id),
            uuid: uuid.to_owned(),
            node_id: ids::encode(Kind::GpuNode, node_id),
            time: s.last_sample_at?,
            util: latest.util,
            mem_util: latest.mem_util,
            mem_used_mib: latest.mem_used_mib,
            temperature: latest.temperature,
            power: latest.power,
            sm_clock_mhz: s.latest_sm_clock_mhz.unwrap_or_default(),
            xid_errors: s.latest_xid_errors.clone().map(|x| x.0).unwrap_or_default(),
            ecc_corrected: s.latest_ecc_corrected,
            ecc_uncorrected: s.latest_ecc_uncorrected,
        })
    }

    fn from_live(s: &sample::Sample) -> Self {
        Self {
            gpu_id: ids::encode(Kind::Gpu, s.gpu_id),
            uuid: s.uuid.to_string(),
            node_id: ids::encode(Kind::GpuNode, s.node_id),
            time: DateTime::from_timestamp(s.at, 0).unwrap_or_default(),
            util: s.values.util.into(),
            mem_util: s.values.mem_util.into(),
            mem_used_mib: s.values.mem_used_mib.into(),
            temperature: s.values.temperature.into(),
            power: s.values.power.into(),
            sm_clock_mhz: s.sm_clock_mhz.into(),
            xid_errors: s.xid_errors.clone(),
            ecc_corrected: s.ecc_corrected,
            ecc_uncorrected: s.ecc_uncorrected,
        }
    }
}

/// The five charted values.
#[derive(SimpleObject, Clone, Debug)]
pub struct GpuMetricValues {
    /// %.
    pub util: f64,
    /// %.
    pub mem_util: f64,
    pub mem_used_mib: f64,
    /// °C.
    pub temperature: f64,
    /// W.
    pub power: f64,
}

impl From<sample::Values> for GpuMetricValues {
    fn from(v: sample::Values) -> Self {
        Self {
            util: v.util.into(),
            mem_util: v.mem_util.into(),
            mem_used_mib: v.mem_used_mib.into(),
            temperature: v.temperature.into(),
            power: v.power.into(),
        }
    }
}

/// One step of a GPU's history: the averages of its samples, and their maxima in `max`.
#[derive(SimpleObject, Clone, Debug)]
pub struct GpuMetricPoint {
    /// Start of the step.
    pub time: DateTime<Utc>,
    /// Samples behind this point.
    pub samples: i32,
    pub util: f64,
    pub mem_util: f64,
    pub mem_used_mib: f64,
    pub temperature: f64,
    pub power: f64,
    pub max: GpuMetricValues,
}

impl From<store::Point> for GpuMetricPoint {
    fn from(p: store::Point) -> Self {
        let avg = GpuMetricValues::from(p.avg);
        Self {
            time: DateTime::from_timestamp(p.at, 0).unwrap_or_default(),
            samples: p.samples as i32,
            util: avg.util,
            mem_util: avg.mem_util,
            mem_used_mib: avg.mem_used_mib,
            temperature: avg.temperature,
            power: avg.power,
            max: p.max.into(),
        }
    }
}

/// Aggregates over the latest samples of a node's, GPR's or slice's GPUs (for dashboards).
#[derive(SimpleObject)]
pub struct GpuSummary {
    pub gpu_count: i32,
    /// GPUs that have reported a sample.
    pub reporting_gpu_count: i32,
    /// Reporting GPUs under 1 % utilisation.
    pub idle_gpu_count: i32,
    /// %; null when no GPU reported.
    pub average_utilization: Option<f64>,
    pub average_memory_utilization: Option<f64>,
    pub average_temperature: Option<f64>,
    pub memory_used_mib: Option<f64>,
    /// Sum over the GPUs, W.
    pub power_watts: Option<f64>,
    pub hottest_gpu: Option<Gpu>,
    pub highest_power_gpu: Option<Gpu>,
    /// The newest of the latest samples.
    pub newest_sample_at: Option<DateTime<Utc>>,
    /// The oldest of the latest samples: how current this summary is.
    pub oldest_sample_at: Option<DateTime<Utc>>,
}

impl From<summary::Summary> for GpuSummary {
    fn from(s: summary::Summary) -> Self {
        Self {
            gpu_count: s.gpus as i32,
            reporting_gpu_count: s.reporting as i32,
            idle_gpu_count: s.idle as i32,
            average_utilization: s.avg_util,
            average_memory_utilization: s.avg_mem_util,
            average_temperature: s.avg_temperature,
            memory_used_mib: s.mem_used_mib,
            power_watts: s.power,
            hottest_gpu: s.hottest.map(Gpu::from),
            highest_power_gpu: s.highest_power.map(Gpu::from),
            newest_sample_at: s.newest_sample_at,
            oldest_sample_at: s.oldest_sample_at,
        }
    }
}

/// An update of a `gpuMetrics` subscription: the newest sample of each GPU that reported since
/// the last update.
#[derive(SimpleObject)]
pub struct GpuMetricsUpdate {
    pub samples: Vec<GpuSample>,
}

/// How to order the `gpus` list.
#[derive(Enum, Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum GpuOrder {
    /// Oldest first (the default; stable cursors).
    #[default]
    Id,
    /// Hottest first (then highest power). GPUs without a sample you may read come last.
    HotSpotsFirst,
    /// Highest power draw first.
    HighestPowerFirst,
    /// Highest utilisation first.
    BusiestFirst,
    /// Lowest utilisation first: GPUs held but not used.
    IdlestFirst,
}

/// Samples of one node's GPUs: name the node by `nodeId`, or by `clusterId` and `nodeName`
/// as in `upsertNodes` (what an agent token names).
#[derive(InputObject)]
pub struct ReportGpuSamplesInput {
    pub node_id: Option<ID>,
    pub cluster_id: Option<ID>,
    pub node_name: Option<String>,
    /// At most 10,000, of any of the node's GPUs, in any order.
    pub samples: Vec<ingest::SampleReport>,
}

#[derive(SimpleObject)]
pub struct ReportGpuSamplesPayload {
    /// Samples stored.
    pub accepted: i32,
    /// Samples already stored (same GPU and second), e.g. resent after a reconnect.
    pub duplicates: i32,
    /// How long the node's agent may gather samples before it reports again: 0 (send each
    /// sample as it is taken) while anyone watches the node's GPUs live, on any replica;
    /// otherwise the gateway's `--unwatched-report-interval` (5 by default, at most 10). Samples
    /// keep their timestamps, so the history has every second either way; `latestSample`, the
    /// alert rules and the heartbeat see them up to this much later.
    pub report_interval_seconds: i32,
    /// Problems with the input; when there are any, nothing was stored.
    pub user_errors: Vec<UserError>,
}

fn node_ref(input: &ReportGpuSamplesInput) -> Result<ingest::NodeRef> {
    match (&input.node_id, &input.cluster_id, &input.node_name) {
        (Some(id), None, None) => Ok(ingest::NodeRef::Id(ids::decode("nodeId", id, Kind::GpuNode)?)),
        (None, Some(cluster), Some(name)) => {
            Ok(ingest::NodeRef::Named { cluster_id: ids::decode("clusterId", cluster, Kind::Cluster)?, name: name.clone() })
        }
        _ => Err(Error::invalid("nodeId", "name the node by `nodeId`, or by `clusterId` and `nodeName`")),
    }
}

/// Exactly one of the scope arguments.
fn scope(gpu_id: Option<ID>, node_id: Option<ID>, gpr_id: Option<ID>, slice_id: Option<ID>) -> Result<Scope> {
    match (gpu_id, node_id, gpr_id, slice_id) {
        (Some(id), None, None, None) => Ok(Scope::Gpu(ids::decode("gpuId", &id, Kind::Gpu)?)),
        (None, Some(id), None, None) => Ok(Scope::Node(ids::decode("nodeId", &id, Kind::GpuNode)?)),
        (None, None, Some(id), None) => Ok(Scope::Gpr(ids::decode("gprId", &id, Kind::Gpr)?)),
        (None, None, None, Some(id)) => Ok(Scope::Slice(ids::decode("sliceId", &id, Kind::Slice)?)),
        _ => Err(Error::invalid("gpuId", "give exactly one of `gpuId`, `nodeId`, `gprId` or `sliceId`")),
    }
}

#[derive(Default)]
pub struct MetricsQuery;

#[Object]
impl MetricsQuery {
    /// Utilisation, temperature and power over the latest samples of a node's, a GPR's or a
    /// slice's GPUs (give exactly one). A GPR or slice covers the nodes it holds now.
    async fn gpu_summary(&self, ctx: &Context<'_>, node_id: Option<ID>, gpr_id: Option<ID>, slice_id: Option<ID>) -> Result<GpuSummary> {
        let (caller, db) = session(ctx)?;
        let scope = scope(None, node_id, gpr_id, slice_id)?;
        Ok(summary::summarize(access::scope_gpus(db, caller, scope).await?).into())
    }
}

#[derive(Default)]
pub struct MetricsMutation;

#[Object]
impl MetricsMutation {
    /// Stores a batch of GPU samples of one node (its agent, or an admin): all or nothing.
    /// Samples already stored (same GPU and second) are counted as duplicates, so resending
    /// after a reconnect is safe. An agent's report is also its node's heartbeat.
    async fn report_gpu_samples(&self, ctx: &Context<'_>, input: ReportGpuSamplesInput) -> async_graphql::Result<ReportGpuSamplesPayload> {
        let (caller, _) = session(ctx)?;
        let app = app(ctx)?;
        let result = async {
            let node = node_ref(&input)?;
            app.reports.report(caller, Utc::now(), node, input.samples).await
        };
        match result.await {
            Ok(done) => Ok(ReportGpuSamplesPayload {
                accepted: done.ingested.accepted as i32,
                duplicates: done.ingested.duplicates as i32,
                report_interval_seconds: i32::try_from(done.report_interval.as_secs()).unwrap_or(i32::MAX),
                user_errors: Vec::new(),
            }),
            Err(Error::User(user_errors)) => Ok(ReportGpuSamplesPayload { accepted: 0, duplicates: 0, report_interval_seconds: 0, user_errors }),
            Err(other) => Err(other.into()),
        }
    }
}

#[derive(Default)]
pub struct MetricsSubscription;

#[async_graphql::Subscription]
impl MetricsSubscription {
    /// Live samples of one GPU, a node, the nodes a GPR holds, or the nodes a slice's GPRs
    /// hold (give exactly one), coalesced to `interval` (default and minimum 1s): each update
    /// carries the newest sample of every GPU that reported since the last one. A slow client
    /// skips to the newest samples; it never holds up others.
    async fn gpu_metrics(
        &self,
        ctx: &Context<'_>,
        gpu_id: Option<ID>,
        node_id: Option<ID>,
        gpr_id: Option<ID>,
        slice_id: Option<ID>,
        interval: Option<Duration>,
    ) -> Result<impl futures_util::Stream<Item = async_graphql::Result<GpuMetricsUpdate>> + use<>> {
        use futures_util::StreamExt;
        let (caller, db) = session(ctx)?;
        let interval = interval.map_or(MIN_INTERVAL_SECS, Duration::secs);
        if !(MIN_INTERVAL_SECS..=MAX_INTERVAL_SECS).contains(&interval) {
            return Err(Error::invalid("interval", "must be between 1s and 1h"));
        }
        let scope = scope(gpu_id, node_id, gpr_id, slice_id)?;
        let app = app(ctx)?;
        // Its turn covers its own access reads, not the wait below for the other replicas to
        // hear its node (nor the allocation, read once per process).
        // An agent's token is refused before it takes a turn.
        caller.require_person()?;
        let setup = crate::setting_up(ctx).await?;
        let gpus = access::scope_gpus(db, caller, scope).await?;
        let visible = caller.visible_slices(db).await?;
        drop(setup);
        // A GPU's or a node's subscriber hears that node's feed only. (A sample reported
        // between the check and here arrives with the next report, a second later.)
        let feed = match scope {
            Scope::Node(node_id) => Feed::Node(node_id),
            Scope::Gpu(_) => gpus.first().map_or(Feed::All, |g| Feed::Node(g.node_id)),
            Scope::Gpr(_) | Scope::Slice(_) => Feed::All,
        };
        // Its agents report every sample while it lasts (a node's or a GPU's subscriber counts
        // through its node feed).
        let scope_watch = match scope {
            Scope::Gpr(id) => Some(app.samples.watch_scope(store::WatchedScope::Gpr(id))),
            Scope::Slice(id) => Some(app.samples.watch_scope(store::WatchedScope::Slice(id))),
            Scope::Node(_) | Scope::Gpu(_) => None,
        };
        let live = app.samples.subscribe(feed).await;
        let allocation = live::shared_allocation(&app.samples, &app.events, db).await?;
        let wanted = move |sample: &sample::Sample, allocation: &store::Allocation| access::live_wanted(scope, &visible, allocation, sample);
        let updates = live::coalesced(live, std::time::Duration::from_secs(interval as u64), allocation, wanted);
        Ok(updates.map(move |samples| {
            let _watching = &scope_watch;
            Ok(GpuMetricsUpdate { samples: samples.iter().map(GpuSample::from_live).collect() })
        }))
    }
}

// ---- Fields of `Gpu` and `GpuNode` (inventory) ----

/// What the caller may read of `node`'s samples (see [`access::Access`]).
pub(crate) async fn node_access(ctx: &Context<'_>, node: &node::Model) -> Result<Access> {
    let (caller, db) = session(ctx)?;
    caller.require_person()?;
    if caller.is_admin() {
        return Ok(Access::All);
    }
    let Some(gpr_id) = node.allocated_gpr_id else { return Ok(Access::Nothing) };
    let Some(gpr) = loaded(loaders(ctx)?.gpr().load_one(gpr_id).await)? else { return Ok(Access::Nothing) };
    let links = loaded(loaders(ctx)?.node_links_by_gpr().load_one(gpr_id).await)?.unwrap_or_default();
    let holder = links.iter().find(|l| l.node_id == node.id).map(|l| Holder { gpr_id, slice_id: gpr.slice_id, since: l.assigned_at.timestamp() });
    Ok(Access::of(holder, caller.can_see_slice(db, gpr.slice_id).await?))
}

/// What the caller may read of the metrics of a GPU on node `node_id`.
async fn gpu_access(ctx: &Context<'_>, node_id: i64) -> Result<Access> {
    let caller = crate::caller(ctx)?;
    caller.require_person()?;
    if caller.is_admin() {
        return Ok(Access::All);
    }
    match loaded(loaders(ctx)?.node().load_one(node_id).await)? {
        Some(node) => node_access(ctx, &node).await,
        None => Ok(Access::Nothing),
    }
}

/// `Gpu.latestSample` of GPU `uuid` on node `node_id`: null when none, or when the caller may
/// not read it.
pub(crate) async fn latest_sample(ctx: &Context<'_>, uuid: &str, node_id: i64, stored: &StoredSample) -> Result<Option<GpuSample>> {
    if stored.last_sample_at.is_none() || !gpu_access(ctx, node_id).await?.allows(stored.last_sample_at) {
        return Ok(None);
    }
    Ok(GpuSample::from_stored(uuid, node_id, stored))
}

/// `Gpu.metrics`: `NOT_FOUND` when the caller may not read it, as for a missing GPU.
pub(crate) async fn history(
    ctx: &Context<'_>,
    gpu: &gpu::Model,
    from: Option<DateTime<Utc>>,
    to: Option<DateTime<Utc>>,
    step: Option<Duration>,
) -> Result<Vec<GpuMetricPoint>> {
    let since = match gpu_access(ctx, gpu.node_id).await? {
        Access::Nothing => return Err(Error::NotFound("GPU")),
        Access::All => i64::MIN,
        Access::Since(since) => since.timestamp(),
    };
    let window = summary::window(Utc::now(), from, to, step.map(Duration::secs))?;
    // A step straddling the assignment would mix in the previous holder's samples: start at a step boundary after it.
    let from = if since > window.from { since + (window.step - since.rem_euclid(window.step)) % window.step } else { window.from };
    Ok(app(ctx)?.samples.all_points(gpu.id, from, window.to, window.step).await.into_iter().map(GpuMetricPoint::from).collect())
}

/// `GpuNode.gpuSummary`: null when the caller may not read the node's metrics.
pub(crate) async fn node_summary(ctx: &Context<'_>, node: &node::Model) -> Result<Option<GpuSummary>> {
    let access = node_access(ctx, node).await?;
    if access == Access::Nothing {
        return Ok(None);
    }
    let mut gpus = loaded(loaders(ctx)?.gpus_by_node().load_one(node.id).await)?.unwrap_or_default();
    for g in gpus.iter_mut().filter(|g| !access.allows(g.last_sample_at)) {
        access::redact(g);
    }
    Ok(Some(summary::summarize(gpus).into()))
}

/// `GpuNode.health`, with `STALE` for a silent agent.
pub(crate) fn node_health(node: &node::Model) -> egs_entities::Health {
    egs_domain::inventory::liveness::effective_health(node, Utc::now())
}

/// The `gpus` list in a metrics order. Cursors are positions in the ranking, which changes as
/// samples arrive: a dashboard reads the first page or two, not a stable walk.
pub(crate) async fn ranked_gpus(
    ctx: &Context<'_>,
    select: Select<gpu::Entity>,
    order: GpuOrder,
    first: Option<i32>,
    after: Option<String>,
) -> Result<Page<Gpu>> {
    let (caller, db) = session(ctx)?;
    let rank = match order {
        GpuOrder::Id => return Err(Error::Internal(anyhow::anyhow!("ranked_gpus called for id order"))),
        GpuOrder::HotSpotsFirst => Rank::HotSpots,
        GpuOrder::HighestPowerFirst => Rank::Power,
        GpuOrder::BusiestFirst => Rank::Busiest,
        GpuOrder::IdlestFirst => Rank::Idlest,
    };
    let limit = PageRequest::new(first, None)?.limit as usize;
    let offset = after.as_deref().map(decode_rank_cursor).transpose()?.map_or(0, |n| n + 1);
    let readable = access::readable(db, caller, None).await?;
    let total = TotalCount::of(db.clone(), select.clone());
    let page = summary::rank_in_sql(select, rank, readable.as_ref()).offset(offset as u64).limit(limit as u64 + 1).all(db).await?;
    let has_next = page.len() > limit;
    let mut connection = Connection::with_additional_fields(offset > 0, has_next, total);
    connection.edges.extend(page.into_iter().take(limit).enumerate().map(|(i, g)| Edge::new(encode_rank_cursor(offset + i), Gpu::from(g))));
    Ok(connection)
}

/// Rank cursors name positions below this (far more GPUs than one EGS holds).
const MAX_RANK_POSITION: usize = 100_000_000;

fn encode_rank_cursor(position: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("r:{position}"))
}

fn decode_rank_cursor(cursor: &str) -> Result<usize> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| text.strip_prefix("r:").and_then(|n| n.parse::<usize>().ok()))
        // A position past any inventory is forged (and `usize::MAX + 1` would wrap to the start).
        .filter(|position| *position < MAX_RANK_POSITION)
        .ok_or_else(|| Error::invalid("after", format!("`{cursor}` is not a cursor of this ordering")))
}

/// `Gpr.gpuSummary`: what `gpuSummary(gprId:)` gives, under the same rules (admins read every
/// sample; members of the GPR's slice those taken since each node was handed to it), read
/// through the request's loaders so that a page of GPRs costs a fixed number of statements.
/// Null while the GPR holds no nodes, or when the caller may not see its slice.
pub(crate) async fn gpr_summary(ctx: &Context<'_>, gpr: &egs_entities::gpr::Model) -> Result<Option<GpuSummary>> {
    let (caller, db) = session(ctx)?;
    caller.require_person()?;
    if !caller.can_see_slice(db, gpr.slice_id).await? {
        return Ok(None);
    }
    let loaders = loaders(ctx)?;
    let links = loaded(loaders.node_links_by_gpr().load_one(gpr.id).await)?.unwrap_or_default();
    let nodes = loaded(loaders.node().load_many(links.iter().map(|l| l.node_id)).await)?;
    // The nodes it holds now: linked to it and still allocated to it.
    let held: Vec<_> = links.iter().filter(|l| nodes.get(&l.node_id).is_some_and(|n| n.allocated_gpr_id == Some(gpr.id))).collect();
    if held.is_empty() {
        return Ok(None);
    }
    let mut by_node = loaded(loaders.gpus_by_node().load_many(held.iter().map(|l| l.node_id)).await)?;
    let mut gpus = Vec::new();
    for link in held {
        let access = if caller.is_admin() {
            Access::All
        } else {
            Access::of(Some(Holder { gpr_id: gpr.id, slice_id: gpr.slice_id, since: link.assigned_at.timestamp() }), true)
        };
        for mut g in by_node.remove(&link.node_id).unwrap_or_default() {
            if !access.allows(g.last_sample_at) {
                access::redact(&mut g);
            }
            gpus.push(g);
        }
    }
    gpus.sort_unstable_by_key(|g| g.id);
    Ok(Some(summary::summarize(gpus).into()))
}
