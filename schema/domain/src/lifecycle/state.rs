//! Stored state → the pure scheduler. The leader builds the core from the database when it
//! takes the lease (the [`super::driver::Driver`] then feeds it what changes), so the database
//! is the only truth: a restart or a new leader plans from exactly what was stored (last plans
//! come back as holds, so promises survive a leader change).
//!
//! A GPR that holds nodes is planned on stored bounds, never on "now": a provisioning one until
//! its admission plus the provisioning allowance, its duration and the release allowance; a
//! provisioned one until its exit plus the release allowance; a releasing one until its
//! release's deadline. Nodes whose agent went silent (STALE) are never planned, and one that
//! stays silent under a provisioned GPR past a grace period is handled as a failed node.

use crate::error::Result;
use crate::gpr::phase::{ACTIVE, HOLDING};
use crate::inventory::liveness::STALE_AFTER_SECS;
use chrono::{DateTime, Utc};
use egs_entities::{GprPhase, Health, NodeState, gpr, gpr_node, gpu, node, slice, slice_cluster};
use egs_scheduler::{Config, Hold, Holding, NodeSpec, PoolKey, Request, RunningSpec, Scheduler, SliceSpec};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use std::collections::{BTreeMap, HashMap, HashSet};

/// How long a release may take by default, for planning: nodes of a releasing GPR are back
/// by its start plus this (the eviction deadline plus a minute for the steps around it).
pub const RELEASE_ALLOWANCE_SECS: i64 = 360;
/// How long provisioning may take by default: an admitted GPR's window ends no later than its
/// admission plus this plus its duration, so promises made behind it hold.
pub const PROVISIONING_ALLOWANCE_SECS: i64 = 600;
/// A node silent this long past STALE under a provisioned GPR counts as failed.
pub const STALE_GRACE_SECS: i64 = 300;
/// History the fair share and the usage predictor learn from.
const HISTORY_DAYS: i64 = 28;
const HISTORY_ROWS: u64 = 2000;

/// What a tick works from.
pub struct Snapshot {
    pub now: DateTime<Utc>,
    pub nodes: Vec<node::Model>,
    /// Nodes whose agent is silent (STALE, by the wall clock the agents report on), and those
    /// silent past the grace period.
    pub(super) stale: HashSet<i64>,
    pub(super) stale_past_grace: HashSet<i64>,
    pub slices: HashMap<i64, slice::Model>,
    /// GPRs queued or holding nodes, by id.
    pub active: BTreeMap<i64, gpr::Model>,
    /// Nodes each holding GPR has.
    pub links: BTreeMap<i64, Vec<i64>>,
    /// When each holding GPR's GPUs last did work, if any of them reported since it started.
    pub last_busy: HashMap<i64, DateTime<Utc>>,
    pub history: Vec<gpr::Model>,
    pub(super) slice_clusters: HashMap<i64, Vec<i64>>,
    /// Maintenance windows not over.
    pub(super) maintenance: crate::inventory::windows::Open,
    /// Clusters whose promises are firm some seconds ahead (their `firmHorizon`).
    pub(super) firm_horizons: HashMap<i64, i64>,
}

impl Snapshot {
    pub async fn load(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<Self> {
        let nodes = node::Entity::find().order_by_asc(node::Column::Id).all(db).await?;
        let slices = slice::Entity::find().all(db).await?.into_iter().map(|s| (s.id, s)).collect();
        let mut slice_clusters: HashMap<i64, Vec<i64>> = HashMap::new();
        for link in slice_cluster::Entity::find().all(db).await? {
            slice_clusters.entry(link.slice_id).or_default().push(link.cluster_id);
        }
        let active: BTreeMap<i64, gpr::Model> =
            gpr::Entity::find().filter(gpr::Column::Phase.is_in(ACTIVE)).all(db).await?.into_iter().map(|g| (g.id, g)).collect();
        let holding: Vec<i64> = active.values().filter(|g| HOLDING.contains(&g.phase)).map(|g| g.id).collect();
        let links = load_links(db, holding).await?;
        let history = gpr::Entity::find()
            .filter(gpr::Column::ProvisionedAt.gt(now - chrono::Duration::days(HISTORY_DAYS)))
            .filter(gpr::Column::CompletedAt.is_not_null())
            .order_by_desc(gpr::Column::CompletedAt)
            .limit(HISTORY_ROWS)
            .all(db)
            .await?;
        let mut snapshot = Self {
            now,
            nodes,
            stale: HashSet::new(),
            stale_past_grace: HashSet::new(),
            slices,
            active,
            links,
            last_busy: HashMap::new(),
            history,
            slice_clusters,
            maintenance: crate::inventory::windows::open(db).await?,
            firm_horizons: load_firm_horizons(db).await?,
        };
        // Agents stamp heartbeats with the wall clock: staleness is judged on it too.
        let wall = Utc::now();
        let silent: Vec<(i64, DateTime<Utc>)> = snapshot.nodes.iter().filter_map(|n| Some((n.id, n.last_heartbeat_at?))).collect();
        snapshot.set_silent(&silent, wall);
        snapshot.last_busy = snapshot.load_last_busy(db).await?;
        Ok(snapshot)
    }

    /// Judges which healthy nodes are silent from their last heartbeats (nodes not listed
    /// reported recently), by the wall clock.
    pub(super) fn set_silent(&mut self, heartbeats: &[(i64, DateTime<Utc>)], wall: DateTime<Utc>) {
        let healthy: HashSet<i64> = self.nodes.iter().filter(|n| n.health == Health::Healthy).map(|n| n.id).collect();
        let stale_at = wall - chrono::Duration::seconds(STALE_AFTER_SECS);
        let failed_at = stale_at - chrono::Duration::seconds(STALE_GRACE_SECS);
        self.stale = heartbeats.iter().filter(|(id, at)| healthy.contains(id) && *at <= stale_at).map(|(id, _)| *id).collect();
        self.stale_past_grace = heartbeats.iter().filter(|(id, at)| healthy.contains(id) && *at <= failed_at).map(|(id, _)| *id).collect();
    }

    /// When each provisioned GPR with an idle timeout last had a busy GPU, if all its GPUs
    /// reported since its window began (no telemetry yet, no idle verdict: agents may not run).
    pub(super) async fn load_last_busy(&self, db: &impl ConnectionTrait) -> Result<HashMap<i64, DateTime<Utc>>> {
        let watched: Vec<&gpr::Model> = self
            .active
            .values()
            .filter(|g| g.phase == GprPhase::Provisioned && g.idle_timeout_secs.is_some() && g.provisioned_at.is_some())
            .collect();
        let held_nodes: Vec<i64> = watched.iter().flat_map(|g| self.links.get(&g.id).into_iter().flatten().copied()).collect();
        let mut last_busy = HashMap::new();
        if held_nodes.is_empty() {
            return Ok(last_busy);
        }
        let gpus = gpu::Entity::find().filter(gpu::Column::NodeId.is_in(held_nodes)).all(db).await?;
        let mut by_node: HashMap<i64, Vec<&gpu::Model>> = HashMap::new();
        for g in &gpus {
            by_node.entry(g.node_id).or_default().push(g);
        }
        for g in watched {
            let Some(since) = g.provisioned_at else { continue };
            let gpus: Vec<&gpu::Model> = self.links.get(&g.id).into_iter().flatten().filter_map(|n| by_node.get(n)).flatten().copied().collect();
            if gpus.is_empty() || gpus.iter().any(|gpu| gpu.last_sample_at.is_none_or(|t| t < since)) {
                continue;
            }
            let busy = gpus.iter().filter_map(|gpu| gpu.last_busy_at).max().unwrap_or(since).max(since);
            last_busy.insert(g.id, busy);
        }
        Ok(last_busy)
    }

    /// The pool a stored GPR is (or was planned) in.
    pub fn assigned_pool(g: &gpr::Model) -> Option<PoolKey> {
        Some(PoolKey { cluster: g.assigned_cluster_id?, instance_type: g.assigned_instance_type.clone()?, gpu_shape: g.assigned_gpu_shape.clone()? })
    }

    pub fn request(&self, g: &gpr::Model) -> Request {
        let evict_requeue = self.slices.get(&g.slice_id).is_some_and(|s| s.policy.requeue_on_eviction);
        crate::gpr::spec::GprSpec::of_stored(g).scheduler_request(g.id, g.created_at, evict_requeue)
    }

    /// GPUs per node in a pool (for GPU-hour accounting).
    fn pool_gpus(&self, pool: &PoolKey) -> u32 {
        self.nodes
            .iter()
            .find(|n| n.cluster_id == pool.cluster && n.instance_type == pool.instance_type && n.gpu_shape == pool.gpu_shape)
            .map_or(1, |n| n.gpus_per_node.max(1) as u32)
    }

    /// Whether a node is failed for a GPR running its window on it: reported unhealthy, or
    /// silent past the grace period.
    fn failed(&self, n: &node::Model) -> bool {
        n.health == Health::Unhealthy || self.stale_past_grace.contains(&n.id)
    }

    /// The GPRs running their window, by the nodes they hold.
    fn provisioned_holders(&self) -> HashMap<i64, i64> {
        let mut holders = HashMap::new();
        for g in self.active.values().filter(|g| g.phase == GprPhase::Provisioned) {
            for &n in self.links.get(&g.id).into_iter().flatten() {
                holders.insert(n, g.id);
            }
        }
        holders
    }

    /// Failed nodes a provisioned GPR still holds, as `(gpr, node)`. The tick turns each into a
    /// replacement or a degraded GPR and unlinks the node, so each is handled once.
    pub fn failed_links(&self) -> Vec<(i64, i64)> {
        self.failed_links_among(&self.provisioned_holders())
    }

    /// [`Snapshot::failed_links`] for holders already gathered.
    fn failed_links_among(&self, holders: &HashMap<i64, i64>) -> Vec<(i64, i64)> {
        self.nodes.iter().filter(|n| self.failed(n)).filter_map(|n| holders.get(&n.id).map(|g| (*g, n.id))).collect()
    }

    /// Each node's standing ([`Snapshot::usable`]) and the failed nodes under provisioned GPRs
    /// ([`Snapshot::failed_links`]), from one pass over the holders.
    pub fn usable_and_failed(&self) -> (HashMap<i64, bool>, Vec<(i64, i64)>) {
        let holders = self.provisioned_holders();
        (self.usable_among(&holders), self.failed_links_among(&holders))
    }

    /// Whether the core should count each node as capacity. A node under a provisioned GPR
    /// counts until it fails (a short silence is not a failure); a failed one counts until
    /// [`Snapshot::failed_links`] reports it, so that the core replaces it. A node an admin
    /// cordoned under a GPR stays its holder's but counts for nobody after it: no plan may count
    /// on it (they did, and lost their promises as "capacity lost" when the holder let it go).
    /// Any other node counts when healthy, not silent and not cordoned or draining (a node
    /// cordoned for a maintenance window counts: the core plans around the window itself).
    pub fn usable(&self) -> HashMap<i64, bool> {
        self.usable_among(&self.provisioned_holders())
    }

    fn usable_among(&self, holders: &HashMap<i64, i64>) -> HashMap<i64, bool> {
        self.nodes
            .iter()
            .map(|n| {
                let cordoned = n.cordoned_at.is_some() || matches!(n.state, NodeState::Cordoned | NodeState::Draining);
                let usable = if holders.contains_key(&n.id) {
                    !cordoned || self.in_window(n)
                } else {
                    n.health != Health::Unhealthy && !self.stale.contains(&n.id) && (!cordoned || self.in_window(n))
                };
                (n.id, usable)
            })
            .collect()
    }

    /// Whether a node is cordoned for a maintenance window that has begun: it still counts, and
    /// the window keeps it out until it ends, so plans behind the window can count on it. A
    /// window that has just ended counts too: the tick that sees it end gives the node back
    /// (the next look reads it uncordoned), and leaving it out for that tick took promises away
    /// as "capacity lost".
    fn in_window(&self, n: &node::Model) -> bool {
        let now = self.now.timestamp();
        n.cordon_reason.as_deref().is_some_and(crate::inventory::windows::is_window_cordon)
            && self.maintenance.windows.iter().any(|w| w.node == n.id && w.start <= now)
    }

    pub fn node_spec(n: &node::Model, usable: bool) -> NodeSpec {
        NodeSpec {
            id: n.id,
            pool: PoolKey { cluster: n.cluster_id, instance_type: n.instance_type.clone(), gpu_shape: n.gpu_shape.clone() },
            gpus: n.gpus_per_node.max(0) as u32,
            gpu_memory_mib: n.gpu_memory_mib,
            healthy: usable,
            rdma: n.rdma,
        }
    }

    pub fn slice_spec(&self, s: &slice::Model) -> SliceSpec {
        SliceSpec {
            id: s.id,
            clusters: self.slice_clusters.get(&s.id).cloned().unwrap_or_default(),
            evictable: s.policy.auto_eviction,
            shapes: s.policy.allowed_shapes.clone(),
        }
    }

    /// The scheduler as the stored state describes it, before any pass. Nodes in
    /// [`Snapshot::failed_links`] start out healthy, so that reporting their failure to the
    /// core (`set_node_health`) yields its replacement decision.
    pub fn scheduler(&self, config: &Config) -> Scheduler {
        let now = self.now.timestamp();
        let mut core = Scheduler::new(config.clone());
        let usable = self.usable();
        for n in &self.nodes {
            core.upsert_node(Self::node_spec(n, usable.get(&n.id).copied().unwrap_or(false)));
        }
        for s in self.slices.values() {
            core.upsert_slice(self.slice_spec(s));
        }
        core.set_maintenance(self.maintenance.windows.clone());
        for (&cluster, &horizon) in &self.firm_horizons {
            core.set_firm_horizon(cluster, Some(horizon));
        }
        // Fair share from finished windows; running ones are charged by the core as they run.
        for g in &self.history {
            let (Some(start), Some(pool)) = (g.provisioned_at, Self::assigned_pool(g)) else { continue };
            let end = g.completed_at.unwrap_or(self.now).min(self.now);
            let used = (end - start).num_seconds().max(0);
            let gpus = f64::from(self.pool_gpus(&pool)) * f64::from(g.node_count.max(1));
            core.charge(g.slice_id, gpus * used as f64, start.timestamp());
            core.predictor_mut().observe(g.slice_id, &pool.gpu_shape, used, g.duration_secs);
            // How its first estimate turned out (its start: when its window began).
            if let (Some(made), Some(foreseen)) = (g.foreseen_at, g.foreseen_start_at)
                && start > made
            {
                core.calibration_mut().observe(g.priority, (foreseen - made).num_seconds(), (start - made).num_seconds());
            }
        }
        // A preemption victim still releasing shares its nodes with the GPR that preempted it
        // (which waits for them): they are counted once, for the preemptor, whose bound is later.
        let mut claimed: HashMap<i64, i64> = HashMap::new();
        for g in self.active.values().filter(|g| matches!(g.phase, GprPhase::Provisioning | GprPhase::Provisioned)) {
            for &n in self.links.get(&g.id).into_iter().flatten() {
                claimed.insert(n, g.id);
            }
        }
        for g in self.active.values() {
            match g.phase {
                GprPhase::Queued => self.restore_queued(&mut core, g),
                _ => {
                    let nodes = self.links.get(&g.id).into_iter().flatten().copied().filter(|n| claimed.get(n).is_none_or(|by| *by == g.id));
                    self.restore_holding(&mut core, g, nodes.collect(), config, now);
                }
            }
        }
        core
    }

    /// Gives the core a queued GPR as stored: its last plan is its hold.
    pub(super) fn restore_queued(&self, core: &mut Scheduler, g: &gpr::Model) {
        let (hold, promised) = Self::stored_plan(g);
        core.restore_pending(self.request(g), hold, promised, g.fair_share_bonus);
        if let (Some(made), Some(start)) = (g.foreseen_at, g.foreseen_start_at) {
            core.restore_foreseen(g.id, made.timestamp(), start.timestamp());
        }
    }

    /// A queued GPR's stored plan: its hold, or the promise its own change dropped the plan of.
    pub(super) fn stored_plan(g: &gpr::Model) -> (Option<Hold>, Option<i64>) {
        let hold = g.start_no_later_than.zip(Self::assigned_pool(g)).map(|(start, pool)| Hold { pool, start: start.timestamp() });
        let promised = match hold {
            None => g.start_no_later_than.map(|t| t.timestamp()),
            Some(_) => None,
        };
        (hold, promised)
    }

    /// Gives the core a GPR that holds `nodes`, on its stored bounds.
    pub(super) fn restore_holding(&self, core: &mut Scheduler, g: &gpr::Model, nodes: Vec<i64>, config: &Config, now: i64) {
        let Some(pool) = Self::assigned_pool(g) else { return };
        let Some(spec) = Self::holding(g, g.phase, self.request(g), pool, config, now) else { return };
        core.add_running(RunningSpec { nodes, ..spec });
    }

    /// The core's view of a GPR that holds nodes, from its stored bounds (nodes left empty).
    pub(super) fn holding(g: &gpr::Model, phase: GprPhase, request: Request, pool: PoolKey, config: &Config, now: i64) -> Option<RunningSpec> {
        let since = g.holding_since.unwrap_or(g.updated_at).timestamp();
        let (started_at, ends_at, holding) = match phase {
            GprPhase::Provisioning => (since, config.latest_window_end(since, g.duration_secs), Holding::Provisioning),
            GprPhase::Provisioned => {
                let start = g.provisioned_at.map_or(now, |t| t.timestamp());
                (start, g.exit_at.map_or(start + g.duration_secs, |t| t.timestamp()), Holding::Provisioned)
            }
            GprPhase::Releasing => {
                let start = g.provisioned_at.map_or(since, |t| t.timestamp());
                let ends_at = g.exit_at.map_or(start + g.duration_secs, |t| t.timestamp());
                let until = release_deadline(since, g.holds_until.map(|t| t.timestamp()), config);
                (start, ends_at, Holding::Releasing { since, until })
            }
            _ => return None,
        };
        Some(RunningSpec { request, pool, nodes: Vec::new(), started_at, ends_at, holding })
    }
}

/// When a release begun at `since` has the nodes back at the latest: its own allowance, never
/// later than the bound the GPR had before (`previous`).
pub fn release_deadline(since: i64, previous: Option<i64>, config: &Config) -> i64 {
    let until = since.saturating_add(config.release_allowance);
    previous.map_or(until, |bound| until.min(bound))
}

/// The nodes each of `gprs` holds.
pub(super) async fn load_links(db: &impl ConnectionTrait, gprs: Vec<i64>) -> Result<BTreeMap<i64, Vec<i64>>> {
    let mut links: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for chunk in gprs.chunks(1000) {
        for link in gpr_node::Entity::find().filter(gpr_node::Column::GprId.is_in(chunk.to_vec())).all(db).await? {
            links.entry(link.gpr_id).or_default().push(link.node_id);
        }
    }
    Ok(links)
}

/// Each cluster's firm horizon, where one is set (few rows: read whole).
pub(super) async fn load_firm_horizons(db: &impl ConnectionTrait) -> Result<HashMap<i64, i64>> {
    use egs_entities::cluster;
    let rows: Vec<(i64, Option<i64>)> = cluster::Entity::find()
        .select_only()
        .columns([cluster::Column::Id, cluster::Column::FirmHorizonSecs])
        .filter(cluster::Column::FirmHorizonSecs.is_not_null())
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows.into_iter().filter_map(|(id, horizon)| Some((id, horizon?))).collect())
}
