//! Stored state → the pure scheduler. Every tick rebuilds the core from the database, so the
//! database is the only truth: a restart or a new leader plans from exactly what was stored
//! (last plans come back as holds, so promises survive a leader change).
//!
//! A GPR that holds nodes is planned on stored bounds, never on "now": a provisioning one until
//! its admission plus the provisioning allowance, its duration and the release allowance; a
//! provisioned one until its exit plus the release allowance; a releasing one until its
//! release's deadline. Nodes whose agent went silent (STALE) are never planned, and one that
//! stays silent under a provisioned GPR past a grace period is handled as a failed node.

use crate::error::Result;
use crate::metrics::service::effective_health;
use crate::scheduler::{self, Config, Hold, Holding, NodeSpec, PoolKey, Request, RunningSpec, Scheduler, SliceSpec};
use chrono::{DateTime, Utc};
use egs_entities::{GprPhase, Health, NodeState, gpr, gpr_node, gpu, node, slice, slice_cluster};
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use std::collections::{BTreeMap, HashMap};

/// Phases in which a GPR holds nodes.
pub const HOLDING: [GprPhase; 3] = [GprPhase::Provisioning, GprPhase::Provisioned, GprPhase::Releasing];
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
    stale: std::collections::HashSet<i64>,
    stale_past_grace: std::collections::HashSet<i64>,
    pub slices: HashMap<i64, slice::Model>,
    pub active: Vec<gpr::Model>,
    /// Nodes each holding GPR has.
    pub links: BTreeMap<i64, Vec<i64>>,
    /// When each holding GPR's GPUs last did work, if any of them reported since it started.
    pub last_busy: HashMap<i64, DateTime<Utc>>,
    pub history: Vec<gpr::Model>,
    slice_clusters: Vec<slice_cluster::Model>,
}

impl Snapshot {
    pub async fn load(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<Self> {
        let nodes = node::Entity::find().order_by_asc(node::Column::Id).all(db).await?;
        let slices = slice::Entity::find().all(db).await?.into_iter().map(|s| (s.id, s)).collect();
        let slice_clusters = slice_cluster::Entity::find().all(db).await?;
        let active = gpr::Entity::find()
            .filter(gpr::Column::Phase.is_in([GprPhase::Queued, GprPhase::Provisioning, GprPhase::Provisioned, GprPhase::Releasing]))
            .order_by_asc(gpr::Column::Id)
            .all(db)
            .await?;
        let holding: Vec<i64> = active.iter().filter(|g| HOLDING.contains(&g.phase)).map(|g| g.id).collect();
        let mut links: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
        if !holding.is_empty() {
            for link in gpr_node::Entity::find().filter(gpr_node::Column::GprId.is_in(holding.clone())).all(db).await? {
                links.entry(link.gpr_id).or_default().push(link.node_id);
            }
        }
        let mut last_busy = HashMap::new();
        let held_nodes: Vec<i64> = links.values().flatten().copied().collect();
        if !held_nodes.is_empty() {
            let gpus = gpu::Entity::find().filter(gpu::Column::NodeId.is_in(held_nodes)).all(db).await?;
            let by_node: HashMap<i64, Vec<&gpu::Model>> = gpus.iter().fold(HashMap::new(), |mut m, g| {
                m.entry(g.node_id).or_default().push(g);
                m
            });
            for g in active.iter().filter(|g| g.phase == GprPhase::Provisioned) {
                let Some(since) = g.provisioned_at else { continue };
                let gpus: Vec<&&gpu::Model> = links.get(&g.id).into_iter().flatten().filter_map(|n| by_node.get(n)).flatten().collect();
                // No telemetry since the window began, no idle verdict: agents may not run yet.
                if gpus.is_empty() || gpus.iter().any(|gpu| gpu.last_sample_at.is_none_or(|t| t < since)) {
                    continue;
                }
                let busy = gpus.iter().filter_map(|gpu| gpu.last_busy_at).max().unwrap_or(since).max(since);
                last_busy.insert(g.id, busy);
            }
        }
        let history = gpr::Entity::find()
            .filter(gpr::Column::ProvisionedAt.gt(now - chrono::Duration::days(HISTORY_DAYS)))
            .filter(gpr::Column::CompletedAt.is_not_null())
            .order_by_desc(gpr::Column::CompletedAt)
            .limit(HISTORY_ROWS)
            .all(db)
            .await?;
        // Agents stamp heartbeats with the wall clock: staleness is judged on it too.
        let wall = Utc::now();
        let stale = nodes.iter().filter(|n| effective_health(n, wall) == Health::Stale).map(|n| n.id).collect();
        let grace = wall - chrono::Duration::seconds(STALE_GRACE_SECS);
        let stale_past_grace =
            nodes.iter().filter(|n| effective_health(n, grace) == Health::Stale && n.health == Health::Healthy).map(|n| n.id).collect();
        Ok(Self { now, nodes, stale, stale_past_grace, slices, active, links, last_busy, history, slice_clusters })
    }

    /// The pool a stored GPR is (or was planned) in.
    pub fn assigned_pool(g: &gpr::Model) -> Option<PoolKey> {
        Some(PoolKey { cluster: g.assigned_cluster_id?, instance_type: g.assigned_instance_type.clone()?, gpu_shape: g.assigned_gpu_shape.clone()? })
    }

    pub fn request(&self, g: &gpr::Model) -> Request {
        let evict_requeue = self.slices.get(&g.slice_id).is_some_and(|s| s.policy.requeue_on_eviction);
        Request {
            id: g.id,
            slice: g.slice_id,
            nodes: g.node_count.max(1) as u32,
            gpus_per_node: g.gpus_per_node.map(|n| n.max(0) as u32),
            min_gpu_memory_mib: g.min_gpu_memory_mib,
            gpu_shape: g.gpu_shape.clone(),
            instance_type: g.instance_type.clone(),
            preferred_clusters: g.preferred_cluster_ids.0.clone(),
            priority: g.priority,
            duration: g.duration_secs,
            earliest_start: g.earliest_start_at.map(|t| t.timestamp()),
            submitted_at: g.created_at.timestamp(),
            preemptible: g.preemptible,
            requeue: evict_requeue,
            idle_timeout: g.idle_timeout_secs,
        }
    }

    /// GPUs per node in a pool (for GPU-hour accounting).
    fn pool_gpus(&self, pool: &PoolKey) -> u32 {
        self.nodes
            .iter()
            .find(|n| n.cluster_id == pool.cluster && n.instance_type == pool.instance_type && n.gpu_shape == pool.gpu_shape)
            .map_or(1, |n| n.gpus_per_node.max(1) as u32)
    }

    /// Failed nodes a provisioned GPR still holds, as `(gpr, node)`: reported unhealthy, or
    /// silent past the grace period. The tick turns each into a replacement or a degraded GPR
    /// and unlinks the node, so each is handled once.
    pub fn failed_links(&self) -> Vec<(i64, i64)> {
        let unhealthy: std::collections::HashSet<i64> =
            self.nodes.iter().filter(|n| n.health == Health::Unhealthy || self.stale_past_grace.contains(&n.id)).map(|n| n.id).collect();
        self.active
            .iter()
            .filter(|g| g.phase == GprPhase::Provisioned)
            .flat_map(|g| self.links.get(&g.id).into_iter().flatten().filter(|n| unhealthy.contains(n)).map(move |n| (g.id, *n)))
            .collect()
    }

    /// The scheduler as the stored state describes it, before any pass. Nodes in
    /// [`Snapshot::failed_links`] start out healthy, so that reporting their failure to the
    /// core (`set_node_health`) yields its replacement decision.
    pub fn scheduler(&self, config: &Config) -> Scheduler {
        let now = self.now.timestamp();
        let mut core = Scheduler::new(config.clone());
        let failed: Vec<i64> = self.failed_links().into_iter().map(|(_, node)| node).collect();
        for n in &self.nodes {
            let usable = (n.health != Health::Unhealthy && !self.stale.contains(&n.id)) || failed.contains(&n.id);
            core.upsert_node(NodeSpec {
                id: n.id,
                pool: PoolKey { cluster: n.cluster_id, instance_type: n.instance_type.clone(), gpu_shape: n.gpu_shape.clone() },
                gpus: n.gpus_per_node.max(0) as u32,
                gpu_memory_mib: n.gpu_memory_mib,
                healthy: usable && !matches!(n.state, NodeState::Cordoned | NodeState::Draining),
            });
        }
        let mut clusters: HashMap<i64, Vec<i64>> = HashMap::new();
        for link in &self.slice_clusters {
            clusters.entry(link.slice_id).or_default().push(link.cluster_id);
        }
        for s in self.slices.values() {
            core.upsert_slice(SliceSpec {
                id: s.id,
                clusters: clusters.remove(&s.id).unwrap_or_default(),
                evictable: s.policy.auto_eviction,
                shapes: s.policy.allowed_shapes.clone(),
            });
        }
        // Fair share from finished windows; running ones are charged by the core as they run.
        for g in &self.history {
            let (Some(start), Some(pool)) = (g.provisioned_at, Self::assigned_pool(g)) else { continue };
            let end = g.completed_at.unwrap_or(self.now).min(self.now);
            let used = (end - start).num_seconds().max(0);
            let gpus = f64::from(self.pool_gpus(&pool)) * f64::from(g.node_count.max(1));
            core.charge(g.slice_id, gpus * used as f64, start.timestamp());
            core.predictor_mut().observe(g.slice_id, &pool.gpu_shape, used, g.duration_secs);
        }
        // A preemption victim still releasing shares its nodes with the GPR that preempted it
        // (which waits for them): they are counted once, for the preemptor, whose bound is later.
        let mut claimed: HashMap<i64, i64> = HashMap::new();
        for g in self.active.iter().filter(|g| matches!(g.phase, GprPhase::Provisioning | GprPhase::Provisioned)) {
            for &n in self.links.get(&g.id).into_iter().flatten() {
                claimed.insert(n, g.id);
            }
        }
        for g in &self.active {
            let request = self.request(g);
            match g.phase {
                GprPhase::Queued => {
                    let hold = g.start_no_later_than.zip(Self::assigned_pool(g)).map(|(start, pool)| Hold { pool, start: start.timestamp() });
                    // A promise without a pool: its plan was dropped by its own change.
                    let promised = match hold {
                        None => g.start_no_later_than.map(|t| t.timestamp()),
                        Some(_) => None,
                    };
                    core.restore_pending(request, hold, promised);
                }
                phase => {
                    let Some(pool) = Self::assigned_pool(g) else { continue };
                    let Some(spec) = Self::holding(g, phase, request, pool, config, now) else { continue };
                    let nodes =
                        self.links.get(&g.id).into_iter().flatten().copied().filter(|n| claimed.get(n).is_none_or(|by| *by == g.id)).collect();
                    core.add_running(RunningSpec { nodes, ..spec });
                }
            }
        }
        core
    }

    /// The core's view of a GPR that holds nodes, from its stored bounds (nodes left empty).
    fn holding(g: &gpr::Model, phase: GprPhase, request: Request, pool: PoolKey, config: &Config, now: i64) -> Option<RunningSpec> {
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

/// "Get wait time" for a request that is not stored, against the current stored state.
pub async fn wait_time(db: &impl ConnectionTrait, config: &Config, request: &Request, now: DateTime<Utc>) -> Result<Vec<scheduler::PoolEstimate>> {
    let snapshot = Snapshot::load(db, now).await?;
    let mut core = snapshot.scheduler(config);
    // The pass fills in plans and expected windows; admissions it makes stay in this copy.
    core.plan(now.timestamp());
    Ok(core.wait_time(request, now.timestamp()))
}
