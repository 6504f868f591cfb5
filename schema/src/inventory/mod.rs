//! Inventory: GPU nodes, GPUs and pools, `upsertNodes` for admins and node agents,
//! `removeNode`, and the live `inventoryChanged` feed ([`live`]).

mod gpus;
pub mod windows;

use egs_domain::inventory::live::InventoryChangeKind;
use egs_domain::inventory::{live, liveness, maintenance, service};
pub use gpus::Gpu;
pub(crate) use gpus::prefetch_for_gpus;
use gpus::reads_rows;

use crate::cluster::Cluster;
use crate::gpr::Gpr;
use crate::ids::{self, Kind};
use crate::pagination::{Order, Page, PageRequest, TotalCount, encode_cursor, keyset_page};
use crate::{app, loaded, loaders, payload, session};
use async_graphql::connection::Edge;
use async_graphql::{Context, ID, InputObject, Object, SimpleObject};
use chrono::{DateTime, Utc};
use egs_domain::auth::Caller;
use egs_domain::error::Result;
use egs_entities::{Health, NodeState, gpu, node};
use sea_orm::{DatabaseConnection, QueryFilter};
pub use service::PoolSummary;

/// A whole GPU node: the unit EGS hands to a slice.
pub struct GpuNode(pub node::Model);

#[Object]
impl GpuNode {
    pub async fn id(&self) -> ID {
        ids::encode(Kind::GpuNode, self.0.id)
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn cluster(&self, ctx: &Context<'_>) -> Result<Option<Cluster>> {
        Ok(loaded(loaders(ctx)?.cluster().load_one(self.0.cluster_id).await)?.map(Cluster))
    }
    async fn instance_type(&self) -> &str {
        &self.0.instance_type
    }
    /// The cluster zone (`topology.kubernetes.io/zone`) of a discovered node.
    async fn zone(&self) -> Option<&str> {
        self.0.zone.as_deref()
    }
    /// The GPU product name, e.g. `NVIDIA-H100-80GB-HBM3`.
    async fn gpu_shape(&self) -> &str {
        &self.0.gpu_shape
    }
    async fn gpus_per_node(&self) -> i32 {
        self.0.gpus_per_node
    }
    /// Memory of each GPU, in MiB.
    async fn gpu_memory_mib(&self) -> i64 {
        self.0.gpu_memory_mib
    }
    /// As reported, or `STALE` when the node's agent has been silent for 30 s.
    async fn health(&self) -> Health {
        crate::metrics::node_health(&self.0)
    }
    /// `CORDONED`: out of scheduling; `DRAINING`: cordoned while a GPR still holds it.
    async fn state(&self) -> NodeState {
        self.0.state
    }
    /// Since when an admin has kept it out of scheduling (`cordonNode`, `drainNode`).
    async fn cordoned_at(&self) -> Option<chrono::DateTime<chrono::Utc>> {
        self.0.cordoned_at
    }
    /// Why, as the admin said.
    async fn cordon_reason(&self) -> Option<&str> {
        self.0.cordon_reason.as_deref()
    }
    async fn cordoned_by(&self) -> Option<&str> {
        self.0.cordoned_by.as_deref()
    }
    /// Maintenance windows planned on it that are not over, soonest first
    /// (`planMaintenance`).
    async fn maintenance_windows(&self, ctx: &Context<'_>) -> Result<Vec<windows::MaintenanceWindow>> {
        // Boxed: a query's state would otherwise size every field of every node on a page.
        crate::boxed(async move {
            let (_, db) = session(ctx)?;
            let now = app(ctx)?.scheduler.clock.now();
            Ok(egs_domain::inventory::windows::open_on(db, self.0.id, now).await?.into_iter().map(windows::MaintenanceWindow).collect())
        })
        .await
    }
    /// The GPR holding this node, when the caller may see it.
    async fn allocated_gpr(&self, ctx: &Context<'_>) -> Result<Option<Gpr>> {
        crate::boxed(crate::gpr::types::visible_gpr(ctx, self.0.allocated_gpr_id)).await
    }
    async fn power_threshold_watts(&self) -> Option<f64> {
        self.0.power_threshold_watts
    }
    async fn temperature_threshold_celsius(&self) -> Option<f64> {
        self.0.temperature_threshold_celsius
    }
    async fn driver_version(&self) -> Option<&str> {
        self.0.driver_version.as_deref()
    }
    /// The CUDA version the node's driver supports (`major.minor`), as its agent reports it.
    async fn cuda_version(&self) -> Option<&str> {
        self.0.cuda_version.as_deref()
    }
    /// An RDMA network (InfiniBand or RoCE) to its pool's other nodes.
    async fn rdma(&self) -> bool {
        self.0.rdma
    }
    /// When the node's agent last reported.
    async fn last_heartbeat_at(&self) -> Option<DateTime<Utc>> {
        self.0.last_heartbeat_at
    }
    async fn gpus(&self, ctx: &Context<'_>) -> Result<Vec<Gpu>> {
        Ok(loaded(loaders(ctx)?.gpus_by_node().load_one(self.0.id).await)?.unwrap_or_default().into_iter().map(Gpu::from).collect())
    }
    /// The pods whose processes use its GPUs, with the GPUs each uses, as its agent last
    /// reported them; empty when you may not read this node's metrics (users: from their
    /// GPR's assignment of the node on).
    async fn pods(&self, ctx: &Context<'_>) -> Result<Vec<crate::workloads::GpuPod>> {
        crate::boxed(crate::workloads::node_pods(ctx, &self.0)).await
    }
    /// Average utilisation (%) over the latest samples of its GPUs; null when none reported
    /// or when you may not read this node's metrics (held by another slice's GPR).
    async fn utilization(&self, ctx: &Context<'_>) -> Result<Option<f64>> {
        crate::boxed(async move { Ok(crate::metrics::node_summary(ctx, &self.0).await?.and_then(|s| s.average_utilization)) }).await
    }
    /// Utilisation, temperature and power over its GPUs' latest samples; null when you may
    /// not read this node's metrics.
    async fn gpu_summary(&self, ctx: &Context<'_>) -> Result<Option<crate::metrics::GpuSummary>> {
        crate::boxed(crate::metrics::node_summary(ctx, &self.0)).await
    }
}

/// The same for a list of nodes: their clusters, GPUs and holding GPRs, as selected.
pub(crate) async fn prefetch_for_nodes<'a>(
    ctx: &Context<'_>,
    nodes: impl Iterator<Item = &'a node::Model> + Clone,
    selected: crate::pagination::Selection<'_>,
) -> Result<()> {
    let loaders = loaders(ctx)?;
    loaded(
        futures_util::future::try_join3(
            loaders.cluster().prefetch_when(selected.field("cluster").exists(), nodes.clone().map(|n| n.cluster_id)),
            loaders.gpus_by_node().prefetch_when(selected.field("gpus").exists(), nodes.clone().map(|n| n.id)),
            loaders.gpr().prefetch_when(selected.field("allocatedGpr").exists(), nodes.clone().filter_map(|n| n.allocated_gpr_id)),
        )
        .await,
    )
    .map(drop)
}

/// Nodes of one cluster with the same instance type and GPU shape: the unit the scheduler plans on.
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct Pool {
    #[graphql(skip)]
    pub cluster_id: i64,
    pub instance_type: String,
    pub gpu_shape: String,
    /// GPUs per node (the smallest in the pool).
    pub gpus_per_node: i32,
    /// Memory per GPU in MiB (the smallest in the pool).
    pub gpu_memory_mib: i64,
    pub total_nodes: i32,
    /// Healthy, available and not held by a GPR.
    pub free_nodes: i32,
    /// Held by GPRs.
    pub reserved_nodes: i32,
    /// Draining, cordoned, unhealthy or stale.
    pub unavailable_nodes: i32,
    /// Every node has an RDMA network: multi-node GPRs that need one are planned here.
    pub rdma: bool,
}

#[async_graphql::ComplexObject]
impl Pool {
    async fn cluster(&self, ctx: &Context<'_>) -> Result<Option<Cluster>> {
        Ok(loaded(loaders(ctx)?.cluster().load_one(self.cluster_id).await)?.map(Cluster))
    }
}

impl From<PoolSummary> for Pool {
    fn from(p: PoolSummary) -> Self {
        Self {
            cluster_id: p.cluster_id,
            instance_type: p.instance_type,
            gpu_shape: p.gpu_shape,
            gpus_per_node: p.gpus_per_node,
            gpu_memory_mib: p.gpu_memory_mib,
            total_nodes: p.total_nodes,
            free_nodes: p.free_nodes,
            reserved_nodes: p.reserved_nodes,
            unavailable_nodes: p.unavailable_nodes,
            rdma: p.rdma,
        }
    }
}

#[derive(InputObject, Default)]
pub struct NodeFilter {
    pub cluster_id: Option<ID>,
    pub gpu_shape: Option<String>,
    pub instance_type: Option<String>,
    pub state: Option<NodeState>,
    pub health: Option<Health>,
    #[graphql(skip)]
    pub cluster_row: Option<i64>,
}

impl NodeFilter {
    pub(crate) fn with_cluster(mut self, cluster_id: i64) -> Self {
        self.cluster_id = None;
        self.cluster_row = Some(cluster_id);
        self
    }
}

#[derive(InputObject, Default)]
pub struct GpuFilter {
    pub cluster_id: Option<ID>,
    pub node_id: Option<ID>,
    pub model: Option<String>,
}

/// A page of GPU nodes, with what its selection asks of them prefetched.
pub(crate) async fn list_nodes_page(ctx: &Context<'_>, filter: NodeFilter, first: Option<i32>, after: Option<String>) -> Result<Page<GpuNode>> {
    let (caller, db) = session(ctx)?;
    caller.require_person()?;
    let request = PageRequest::new(first, after)?;
    let cluster_id = match &filter.cluster_id {
        Some(id) => Some(ids::decode("filter.clusterId", id, Kind::Cluster)?),
        None => filter.cluster_row,
    };
    let query =
        service::NodeQuery { cluster_id, gpu_shape: filter.gpu_shape, instance_type: filter.instance_type, state: filter.state, health: None };
    let mut select = service::nodes_select(&query);
    // Health as readers see it: a silent agent's node is STALE, not its stored HEALTHY.
    if let Some(health) = filter.health {
        select = select.filter(liveness::health_condition(health, Utc::now()));
    }
    let page = keyset_page(db, request, select, node::Column::Id, Order::OldestFirst, |n| n.id, GpuNode).await?;
    prefetch_for_nodes(ctx, page.edges.iter().map(|e| &e.node.0), crate::pagination::Selection::of_page(ctx)).await?;
    Ok(page)
}

pub(crate) async fn list_pools(db: &DatabaseConnection, caller: &Caller, cluster_id: Option<i64>, shape: Option<String>) -> Result<Vec<Pool>> {
    Ok(service::list_pools(db, caller, cluster_id, shape).await?.into_iter().map(Pool::from).collect())
}

#[derive(Default)]
pub struct InventoryQuery;

#[Object]
impl InventoryQuery {
    /// GPU nodes across clusters, filtered.
    async fn nodes(&self, ctx: &Context<'_>, filter: Option<NodeFilter>, first: Option<i32>, after: Option<String>) -> Result<Page<GpuNode>> {
        list_nodes_page(ctx, filter.unwrap_or_default(), first, after).await
    }

    /// GPUs across nodes, filtered; `orderBy: HOT_SPOTS_FIRST` (or another metrics order) for
    /// dashboards, ranked by the latest samples you may read.
    async fn gpus(
        &self,
        ctx: &Context<'_>,
        filter: Option<GpuFilter>,
        #[graphql(default)] order_by: crate::metrics::GpuOrder,
        first: Option<i32>,
        after: Option<String>,
    ) -> Result<Page<Gpu>> {
        let (caller, db) = session(ctx)?;
        caller.require_person()?;
        let filter = filter.unwrap_or_default();
        let query = service::GpuQuery {
            cluster_id: filter.cluster_id.as_ref().map(|id| ids::decode("filter.clusterId", id, Kind::Cluster)).transpose()?,
            node_id: filter.node_id.as_ref().map(|id| ids::decode("filter.nodeId", id, Kind::GpuNode)).transpose()?,
            model: filter.model,
        };
        let selected = crate::pagination::Selection::of_page(ctx);
        let page = if order_by != crate::metrics::GpuOrder::Id {
            crate::metrics::ranked_gpus(ctx, service::gpus_select(&query), order_by, first, after).await?
        } else {
            let request = PageRequest::new(first, after)?;
            // A page is described from the catalog while it is current; its latest samples,
            // if asked, are read for the page in one narrow statement (see `prefetch_for_gpus`).
            let described = match reads_rows(&selected) {
                true => None,
                false => app(ctx)?.gpu_catalog.page(db, &query, request.after, request.limit as usize).await?,
            };
            match described {
                Some(described) => {
                    let mut page = Page::with_additional_fields(request.after.is_some(), described.has_next, TotalCount(described.total));
                    page.edges.extend(described.gpus.into_iter().map(|g| Edge::new(encode_cursor(g.id), Gpu::described(g))));
                    page
                }
                None => keyset_page(db, request, service::gpus_select(&query), gpu::Column::Id, Order::OldestFirst, |g| g.id, Gpu::from).await?,
            }
        };
        prefetch_for_gpus(ctx, page.edges.iter().map(|e| &e.node), selected).await?;
        Ok(page)
    }

    /// Pools (cluster × instance type × GPU shape) with total, free, reserved and unavailable nodes.
    async fn pools(&self, ctx: &Context<'_>, cluster_id: Option<ID>, gpu_shape: Option<String>) -> Result<Vec<Pool>> {
        let (caller, db) = session(ctx)?;
        let cluster_id = cluster_id.as_ref().map(|id| ids::decode("clusterId", id, Kind::Cluster)).transpose()?;
        list_pools(db, caller, cluster_id, gpu_shape).await
    }
}

#[derive(InputObject)]
pub struct UpsertNodesInput {
    pub cluster_id: ID,
    pub nodes: Vec<service::NodeReport>,
}

payload!(UpsertNodesPayload, nodes: Vec<GpuNode>);

#[derive(Default)]
pub struct InventoryMutation;

#[Object]
impl InventoryMutation {
    /// Creates or updates GPU nodes of a cluster and their GPUs, all or nothing (admins, or an
    /// agent for its own node; a cluster-scoped agent token for any node of its cluster). Fields
    /// left out keep their values on existing nodes.
    async fn upsert_nodes(&self, ctx: &Context<'_>, input: UpsertNodesInput) -> async_graphql::Result<UpsertNodesPayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let cluster_id = ids::decode("clusterId", &input.cluster_id, Kind::Cluster)?;
            Ok(service::upsert_nodes(db, caller, cluster_id, input.nodes).await?.into_iter().map(GpuNode).collect())
        };
        // New nodes or changed health: the scheduler and inventory watchers look at once.
        UpsertNodesPayload::from_result(nodes_changed(ctx, result.await))
    }

    /// Removes a GPU node and its GPUs from the inventory (admins). Refused with `CONFLICT`
    /// while a GPR holds the node: release it first, or report it `UNHEALTHY` to have it
    /// replaced.
    async fn remove_node(&self, ctx: &Context<'_>, input: RemoveNodeInput) -> async_graphql::Result<RemoveNodePayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let id = ids::decode("id", &input.id, Kind::GpuNode)?;
            Ok(GpuNode(service::remove_node(db, caller, id).await?))
        };
        RemoveNodePayload::from_result(nodes_changed(ctx, result.await))
    }
}

/// After a change to nodes: the scheduler and inventory watchers look at once.
fn nodes_changed<T>(ctx: &Context<'_>, result: Result<T>) -> Result<T> {
    if result.is_ok() {
        crate::stored_changes(ctx);
        crate::inventory_changed(ctx);
    }
    result
}

#[derive(InputObject)]
pub struct CordonNodeInput {
    pub id: ID,
    /// Why (1–500 characters): shown on the node, and to the owner of a GPR it evicts.
    pub reason: String,
}

#[derive(InputObject)]
pub struct DrainNodeInput {
    pub id: ID,
    /// Why (1–500 characters): shown on the node, and to the owner of a GPR it evicts.
    pub reason: String,
    /// Evict the GPR holding the node now (it is requeued at its priority) instead of letting
    /// its window run out.
    #[graphql(default)]
    pub evict: bool,
}

#[derive(InputObject)]
pub struct UncordonNodeInput {
    pub id: ID,
}

payload!(CordonNodePayload, node: GpuNode);
payload!(DrainNodePayload, node: GpuNode);
payload!(UncordonNodePayload, node: GpuNode);

#[derive(Default)]
pub struct MaintenanceMutation;

#[Object]
impl MaintenanceMutation {
    /// Keeps a node out of scheduling (admins): no new GPR gets it; a GPR holding it keeps it
    /// until its window ends, then the node reads `CORDONED`.
    async fn cordon_node(&self, ctx: &Context<'_>, input: CordonNodeInput) -> async_graphql::Result<CordonNodePayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let id = ids::decode("id", &input.id, Kind::GpuNode)?;
            maintenance::cordon_node(db, caller, id, &input.reason, maintenance::Drain::No).await.map(GpuNode)
        };
        CordonNodePayload::from_result(nodes_changed(ctx, result.await))
    }

    /// Cordons a node and empties it (admins): with `evict`, the GPR holding it is evicted now
    /// and requeued at its priority; without, it runs out its window (the node reads
    /// `DRAINING` until then).
    async fn drain_node(&self, ctx: &Context<'_>, input: DrainNodeInput) -> async_graphql::Result<DrainNodePayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let id = ids::decode("id", &input.id, Kind::GpuNode)?;
            let drain = if input.evict { maintenance::Drain::Evict } else { maintenance::Drain::Wait };
            maintenance::cordon_node(db, caller, id, &input.reason, drain).await.map(GpuNode)
        };
        DrainNodePayload::from_result(nodes_changed(ctx, result.await))
    }

    /// Puts a cordoned or drained node back in the pool (admins).
    async fn uncordon_node(&self, ctx: &Context<'_>, input: UncordonNodeInput) -> async_graphql::Result<UncordonNodePayload> {
        let (caller, db) = session(ctx)?;
        let result = async { maintenance::uncordon_node(db, caller, ids::decode("id", &input.id, Kind::GpuNode)?).await.map(GpuNode) };
        UncordonNodePayload::from_result(nodes_changed(ctx, result.await))
    }
}

#[derive(InputObject)]
pub struct RemoveNodeInput {
    pub id: ID,
}

payload!(
    /// The node as it was when removed.
    RemoveNodePayload,
    node: GpuNode
);

/// One change of one GPU node.
pub struct InventoryChange(pub std::sync::Arc<live::NodeChange>);

#[Object]
impl InventoryChange {
    async fn kind(&self) -> InventoryChangeKind {
        self.0.kind
    }
    async fn node_id(&self) -> ID {
        ids::encode(Kind::GpuNode, self.0.node.id)
    }
    async fn node_name(&self) -> &str {
        &self.0.node.name
    }
    async fn cluster_id(&self) -> ID {
        ids::encode(Kind::Cluster, self.0.node.cluster_id)
    }
    async fn cluster(&self, ctx: &Context<'_>) -> Result<Option<Cluster>> {
        Ok(loaded(loaders(ctx)?.cluster().load_one(self.0.node.cluster_id).await)?.map(Cluster))
    }
    /// The node after the change; null when it was removed.
    async fn node(&self) -> Option<GpuNode> {
        (self.0.kind != InventoryChangeKind::NodeRemoved).then(|| GpuNode(self.0.node.clone()))
    }
    /// Health after the change, as `GpuNode.health` reads it.
    async fn health(&self) -> Health {
        self.0.health
    }
    /// Health before the change; null for a new node.
    async fn previous_health(&self) -> Option<Health> {
        self.0.previous_health
    }
    async fn state(&self) -> NodeState {
        self.0.node.state
    }
    /// When the change was seen.
    async fn at(&self) -> DateTime<Utc> {
        self.0.at
    }
}

#[derive(Default)]
pub struct InventorySubscription;

#[async_graphql::Subscription]
impl InventorySubscription {
    /// Changes of the GPU nodes of a cluster (or of every cluster), from now on: nodes added
    /// and removed, health changes (`STALE` when an agent falls silent for 30 s, and back),
    /// nodes allocated to and released by GPRs, state and description changes. A change made
    /// through any replica arrives within a couple of seconds (at once on this one).
    async fn inventory_changed(
        &self,
        ctx: &Context<'_>,
        cluster_id: Option<ID>,
    ) -> Result<impl futures_util::Stream<Item = async_graphql::Result<InventoryChange>> + use<>> {
        let (caller, db) = session(ctx)?;
        caller.require_person()?;
        let cluster_id = cluster_id.as_ref().map(|id| ids::decode("clusterId", id, Kind::Cluster)).transpose()?;
        if let Some(id) = cluster_id {
            let _setup = crate::setting_up(ctx).await?;
            egs_domain::cluster::service::find_cluster(db, caller, id).await?;
        }
        let mut live = app(ctx)?.inventory.subscribe().await?;
        Ok(async_stream::stream! {
            loop {
                match live.recv().await {
                    Ok(change) if cluster_id.is_none_or(|id| change.node.cluster_id == id) => yield Ok(InventoryChange(change)),
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "an inventoryChanged subscriber fell behind and missed changes");
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        })
    }
}
