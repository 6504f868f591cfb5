//! The scheduling core (DESIGN §4): pure — no database, no async, no clock reads; time is a
//! parameter. The gateway feeds it the stored state and persists its decisions; `egs replay`
//! drives the same code on virtual time; the property tests and benchmarks call it directly.
//!
//! The core keeps two promises about a pending GPR:
//! - `start_no_later_than` is the start of its current plan, computed from reserved windows.
//!   The plan is kept as a *hold* for the next pass, and a later pass moves a hold only
//!   earlier, unless a GPR of strictly higher priority that was ranked after the hold was made
//!   needs the room, or capacity is lost (a node fails). See [`plan`] for how.
//! - `estimated_start` replays the same queue on predicted window ends (users release early),
//!   so it is the expected start; it is never later than `start_no_later_than`.

mod plan;
mod predict;
pub mod queue;
pub mod replay;
pub mod timeline;

#[cfg(test)]
mod tests;

pub use predict::UsagePredictor;
pub use queue::{PendingQueue, QueueKey};
pub use timeline::Timeline;

// Integer keys hashed millions of times a pass: FxHash, not SipHash (no untrusted keys here).
use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

/// Seconds on whatever clock the caller uses (Unix time in the gateway, trace time in replay).
pub type Time = i64;
pub type GprId = i64;
pub type NodeId = i64;
pub type SliceId = i64;
pub type ClusterId = i64;

/// The unit the scheduler plans on: whole nodes of one instance type and GPU shape on one cluster.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PoolKey {
    pub cluster: ClusterId,
    pub instance_type: String,
    pub gpu_shape: String,
}

#[derive(Clone, Debug)]
pub struct NodeSpec {
    pub id: NodeId,
    pub pool: PoolKey,
    pub gpus: u32,
    pub gpu_memory_mib: i64,
    pub healthy: bool,
}

#[derive(Clone, Debug)]
pub struct SliceSpec {
    pub id: SliceId,
    pub clusters: Vec<ClusterId>,
    /// Whether the slice's policy lets its GPRs be preempted (`autoEviction`).
    pub evictable: bool,
    /// GPU shapes the slice's policy allows (`allowedShapes`); empty means any. A GPR that
    /// names no shape is planned only in these pools.
    pub shapes: Vec<String>,
}

/// What a GPR asks for, as the scheduler sees it.
#[derive(Clone, Debug)]
pub struct Request {
    pub id: GprId,
    pub slice: SliceId,
    pub nodes: u32,
    pub gpus_per_node: Option<u32>,
    pub min_gpu_memory_mib: Option<i64>,
    pub gpu_shape: Option<String>,
    pub instance_type: Option<String>,
    /// Empty: any of the slice's clusters.
    pub preferred_clusters: Vec<ClusterId>,
    pub priority: i32,
    /// The strict reserved window.
    pub duration: Time,
    pub earliest_start: Option<Time>,
    pub submitted_at: Time,
    pub preemptible: bool,
    pub requeue: bool,
    /// Released when all its GPUs stay idle this long.
    pub idle_timeout: Option<Time>,
}

/// A plan made by an earlier pass, kept so later passes never start the GPR later than promised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hold {
    pub pool: PoolKey,
    pub start: Time,
}

/// A GPR that holds nodes now (provisioning, provisioned or releasing).
#[derive(Clone, Debug)]
pub struct RunningSpec {
    pub request: Request,
    pub pool: PoolKey,
    pub nodes: Vec<NodeId>,
    pub started_at: Time,
    /// Nodes come back no later than this (the reserved window's end, or a release deadline).
    pub ends_at: Time,
}

/// What the gateway must carry out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Start provisioning `gpr` on these nodes now.
    Admit { gpr: GprId, pool: PoolKey, nodes: Vec<NodeId>, start: Time, end: Time },
    /// Release `victim` so that `by` can start; `requeued` when its policy asks for it.
    Preempt { victim: GprId, by: GprId, requeued: bool },
    /// `failed` left the GPR; `replacement` from the same pool took its place.
    ReplaceNode { gpr: GprId, failed: NodeId, replacement: NodeId },
    /// `failed` left the GPR and no node of the pool was free to replace it.
    Degraded { gpr: GprId, failed: NodeId },
}

/// Where a pending GPR stands after the last pass.
#[derive(Clone, Debug, PartialEq)]
pub struct PendingStatus {
    /// 1-based position in the whole queue.
    pub position: usize,
    pub start_no_later_than: Option<Time>,
    pub estimated_start: Option<Time>,
    pub pool: Option<PoolKey>,
}

/// One row of "Get wait time".
#[derive(Clone, Debug, PartialEq)]
pub struct PoolEstimate {
    pub pool: PoolKey,
    pub start_no_later_than: Time,
    pub estimated_start: Time,
    pub free_nodes_now: u32,
    pub healthy_nodes: u32,
}

/// Why a request can never be planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unfit {
    /// No pool on the allowed clusters matches shape, instance type, GPUs and memory.
    NoMatchingPool,
    /// Pools match, but none has this many healthy nodes.
    TooManyNodes { largest: u32 },
}

#[derive(Clone, Debug)]
pub struct Config {
    /// Fair share forgets a slice's use with this half-life.
    pub fair_share_half_life: Time,
    /// Share of the reserved window a GPR is expected to use before anything is observed.
    pub prior_use_ratio: f64,
    /// Planning stops giving fresh plans after this many GPRs per pass (deeper GPRs keep
    /// their holds); `usize::MAX` plans everything.
    pub max_plan_depth: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self { fair_share_half_life: 7 * 24 * 3600, prior_use_ratio: 1.0, max_plan_depth: usize::MAX }
    }
}

#[derive(Clone, Debug)]
struct Pool {
    key: PoolKey,
    gpus_per_node: u32,
    gpu_memory_mib: i64,
    nodes: Vec<NodeId>,
    healthy: i32,
    /// Running reservations plus every pending plan: what promises are checked against.
    plan: Timeline,
    /// Running reservations on predicted ends plus every pending GPR's expected window.
    expected: Timeline,
    /// Pending plans here, unordered (for "what if I were ahead of them" views).
    planned: Reservations,
    /// Pending GPRs' expected windows here (the same, for estimates).
    expected_planned: Reservations,
}

#[derive(Clone, Debug)]
struct NodeState {
    pool: usize,
    healthy: bool,
    holder: Option<GprId>,
}

#[derive(Clone, Debug, Default)]
struct SliceState {
    clusters: Vec<ClusterId>,
    evictable: bool,
    shapes: Vec<String>,
    /// Decayed GPU-seconds, weighted to the scheduler's share epoch.
    share: f64,
    pending: Vec<GprId>,
    /// Windows the slice is busy in: running GPRs and pending plans (one GPR at a time).
    busy: Vec<Busy>,
    expected_busy: Vec<Busy>,
}

#[derive(Clone, Copy, Debug)]
struct Busy {
    gpr: GprId,
    start: Time,
    end: Time,
}

/// A pending GPR's window in a pool's list, with what views filter on, so building a view
/// needs no lookups.
#[derive(Clone, Copy, Debug)]
struct Reservation {
    gpr: GprId,
    priority: i32,
    start: Time,
    end: Time,
    nodes: i32,
}

/// A pool's pending windows (plans, or expected windows), unordered: what "what if I went
/// ahead of the lower-priority ones" views take away (see `plan::View`).
#[derive(Clone, Debug, Default)]
struct Reservations {
    list: Vec<Reservation>,
}

impl Reservations {
    fn push(&mut self, r: Reservation) {
        self.list.push(r);
    }

    fn forget(&mut self, gpr: GprId) {
        if let Some(at) = self.list.iter().position(|r| r.gpr == gpr) {
            self.list.swap_remove(at);
        }
    }

    fn set_priority(&mut self, gpr: GprId, priority: i32) {
        for r in self.list.iter_mut().filter(|r| r.gpr == gpr) {
            r.priority = priority;
        }
    }

    fn replace(&mut self, list: Vec<Reservation>) -> Vec<Reservation> {
        std::mem::replace(&mut self.list, list)
    }

    fn iter(&self) -> std::slice::Iter<'_, Reservation> {
        self.list.iter()
    }

    /// `(at, delta)` edges, sorted by time, of the windows below `priority` that touch
    /// `[from, until)` (the others cannot change a search there).
    fn edges_below(&self, priority: i32, from: Time, until: Time) -> Vec<(Time, i32)> {
        let wanted = self.list.iter().filter(|r| r.priority < priority && r.start < until && r.end > from);
        let mut edges: Vec<(Time, i32)> = wanted.flat_map(|r| [(r.start, r.nodes), (r.end, -r.nodes)]).collect();
        edges.sort_unstable_by_key(|e| e.0);
        edges
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Plan {
    pool: usize,
    start: Time,
    end: Time,
}

#[derive(Clone, Debug)]
struct Pending {
    request: Request,
    key: QueueKey,
    pools: Vec<usize>,
    /// Ranked since the last plan was made (new, re-prioritised, requeued or edited): it may
    /// displace lower-priority holds made before it.
    fresh: bool,
    plan: Option<Plan>,
    expected: Option<Time>,
    /// The expected window (pool, start, predicted end) behind `expected`.
    expected_window: Option<Plan>,
    /// The pool of the last expected window: tried first in the next pass.
    expected_hint: Option<usize>,
}

#[derive(Clone, Debug)]
struct Running {
    spec: RunningSpec,
    pool: usize,
    predicted_end: Time,
}

impl Running {
    fn healthy_nodes(&self, nodes: &HashMap<NodeId, NodeState>) -> i32 {
        self.spec.nodes.iter().filter(|n| nodes.get(n).is_some_and(|s| s.healthy)).count() as i32
    }
}

/// The scheduler's whole state; see the module docs.
#[derive(Clone, Debug)]
pub struct Scheduler {
    config: Config,
    pools: Vec<Pool>,
    pool_index: HashMap<PoolKey, usize>,
    nodes: HashMap<NodeId, NodeState>,
    slices: HashMap<SliceId, SliceState>,
    queue: PendingQueue,
    pending: HashMap<GprId, Pending>,
    running: BTreeMap<GprId, Running>,
    predictor: UsagePredictor,
    share_epoch: Option<Time>,
    /// Something changed that a full pass should look at (a release, a failure, a requeue).
    dirty: bool,
    /// Pending GPRs whose hold a fresh higher-priority GPR voided, not yet placed again.
    displaced: Vec<GprId>,
}

impl Scheduler {
    pub fn new(config: Config) -> Self {
        let predictor = UsagePredictor::new(config.prior_use_ratio);
        Self {
            config,
            pools: Vec::new(),
            pool_index: HashMap::default(),
            nodes: HashMap::default(),
            slices: HashMap::default(),
            queue: PendingQueue::default(),
            pending: HashMap::default(),
            running: BTreeMap::new(),
            predictor,
            share_epoch: None,
            dirty: false,
            displaced: Vec::new(),
        }
    }

    pub fn predictor_mut(&mut self) -> &mut UsagePredictor {
        &mut self.predictor
    }

    /// Adds a node (or moves it between health states); new pools appear as needed.
    pub fn upsert_node(&mut self, spec: NodeSpec) {
        let pool = match self.pool_index.get(&spec.pool) {
            Some(&i) => i,
            None => {
                self.pools.push(Pool {
                    key: spec.pool.clone(),
                    gpus_per_node: spec.gpus,
                    gpu_memory_mib: spec.gpu_memory_mib,
                    nodes: Vec::new(),
                    healthy: 0,
                    plan: Timeline::default(),
                    expected: Timeline::default(),
                    planned: Reservations::default(),
                    expected_planned: Reservations::default(),
                });
                self.pool_index.insert(spec.pool.clone(), self.pools.len() - 1);
                self.pools.len() - 1
            }
        };
        if let Some(existing) = self.nodes.get(&spec.id) {
            if existing.healthy != spec.healthy {
                self.dirty = true;
                self.pools[existing.pool].healthy += if spec.healthy { 1 } else { -1 };
                if let Some(state) = self.nodes.get_mut(&spec.id) {
                    state.healthy = spec.healthy;
                }
            }
            return;
        }
        let p = &mut self.pools[pool];
        p.gpus_per_node = p.gpus_per_node.min(spec.gpus);
        p.gpu_memory_mib = p.gpu_memory_mib.min(spec.gpu_memory_mib);
        p.nodes.push(spec.id);
        p.healthy += i32::from(spec.healthy);
        self.nodes.insert(spec.id, NodeState { pool, healthy: spec.healthy, holder: None });
        self.dirty = true;
    }

    pub fn upsert_slice(&mut self, spec: SliceSpec) {
        let slice = self.slices.entry(spec.id).or_default();
        slice.clusters = spec.clusters;
        slice.evictable = spec.evictable;
        slice.shapes = spec.shapes;
        self.dirty = true;
    }

    /// Adds to a slice's recent use (GPU-seconds at `at`); fair share forgets it over time.
    pub fn charge(&mut self, slice: SliceId, gpu_seconds: f64, at: Time) {
        let epoch = *self.share_epoch.get_or_insert(at);
        let weight = ((at - epoch) as f64 / self.config.fair_share_half_life as f64).exp2();
        let Some(state) = self.slices.get_mut(&slice) else { return };
        state.share += gpu_seconds * weight;
        let ids = state.pending.clone();
        let share = state.share;
        for id in ids {
            if let Some(p) = self.pending.get_mut(&id) {
                self.queue.remove(&p.key);
                p.key.share = share;
                self.queue.insert(p.key);
            }
        }
    }

    /// Pools a request may use, in pool order.
    fn matching_pools(&self, request: &Request) -> Vec<usize> {
        let Some(slice) = self.slices.get(&request.slice) else { return Vec::new() };
        self.pools
            .iter()
            .enumerate()
            .filter(|(_, p)| slice.clusters.contains(&p.key.cluster))
            .filter(|(_, p)| slice.shapes.is_empty() || slice.shapes.contains(&p.key.gpu_shape))
            .filter(|(_, p)| request.preferred_clusters.is_empty() || request.preferred_clusters.contains(&p.key.cluster))
            .filter(|(_, p)| request.gpu_shape.as_ref().is_none_or(|s| *s == p.key.gpu_shape))
            .filter(|(_, p)| request.instance_type.as_ref().is_none_or(|t| *t == p.key.instance_type))
            .filter(|(_, p)| request.gpus_per_node.is_none_or(|g| g <= p.gpus_per_node))
            .filter(|(_, p)| request.min_gpu_memory_mib.is_none_or(|m| m <= p.gpu_memory_mib))
            .map(|(i, _)| i)
            .collect()
    }

    /// Whether the request could ever be planned with today's inventory.
    pub fn check_fit(&self, request: &Request) -> Result<(), Unfit> {
        let pools = self.matching_pools(request);
        if pools.is_empty() {
            return Err(Unfit::NoMatchingPool);
        }
        let largest = pools.iter().map(|&p| self.pools[p].healthy.max(0) as u32).max().unwrap_or(0);
        if request.nodes > largest {
            return Err(Unfit::TooManyNodes { largest });
        }
        Ok(())
    }

    /// Restores a pending GPR from storage; `hold` is its last plan, if it has one.
    pub fn add_pending(&mut self, request: Request, hold: Option<Hold>) {
        let pools = self.matching_pools(&request);
        let share = self.slices.get(&request.slice).map_or(0.0, |s| s.share);
        let key = QueueKey { priority: request.priority, share, submitted_at: request.submitted_at, id: request.id };
        let plan = hold.and_then(|h| {
            let pool = *self.pool_index.get(&h.pool)?;
            pools.contains(&pool).then_some(Plan { pool, start: h.start, end: h.start.saturating_add(request.duration) })
        });
        if let Some(slice) = self.slices.get_mut(&request.slice) {
            slice.pending.push(request.id);
        }
        self.queue.insert(key);
        let fresh = plan.is_none();
        self.pending.insert(request.id, Pending { request, key, pools, fresh, plan, expected: None, expected_window: None, expected_hint: None });
        self.dirty = true;
    }

    /// Restores a GPR that holds nodes.
    pub fn add_running(&mut self, spec: RunningSpec) {
        let Some(&pool) = self.pool_index.get(&spec.pool) else { return };
        for node in &spec.nodes {
            if let Some(state) = self.nodes.get_mut(node) {
                state.holder = Some(spec.request.id);
            }
        }
        let predicted_end = self.predict_end(&spec);
        self.running.insert(spec.request.id, Running { spec, pool, predicted_end });
        self.dirty = true;
    }

    fn predict_end(&self, spec: &RunningSpec) -> Time {
        let reserved = spec.ends_at - spec.started_at;
        let shape = &spec.pool.gpu_shape;
        let predicted = spec.started_at + self.predictor.expected_use(spec.request.slice, shape, reserved);
        predicted.min(spec.ends_at)
    }

    /// Takes a pending GPR out of the queue (cancelled, rejected, edited away).
    pub fn remove_pending(&mut self, id: GprId) -> bool {
        self.forget_expected(id);
        let Some(p) = self.pending.remove(&id) else { return false };
        self.queue.remove(&p.key);
        if let Some(slice) = self.slices.get_mut(&p.request.slice) {
            slice.pending.retain(|g| *g != id);
            slice.busy.retain(|b| b.gpr != id);
        }
        if let Some(plan) = p.plan {
            let pool = &mut self.pools[plan.pool];
            pool.plan.add(plan.start, plan.end, -(p.request.nodes as i32));
            pool.planned.forget(id);
        }
        self.dirty = true;
        true
    }

    /// Takes a pending GPR's expected window out of the expected timelines.
    fn forget_expected(&mut self, id: GprId) {
        let Some(p) = self.pending.get_mut(&id) else { return };
        p.expected = None;
        let Some(window) = p.expected_window.take() else { return };
        let (nodes, slice) = (p.request.nodes as i32, p.request.slice);
        let pool = &mut self.pools[window.pool];
        pool.expected.add(window.start, window.end, -nodes);
        pool.expected_planned.forget(id);
        if let Some(slice) = self.slices.get_mut(&slice) {
            slice.expected_busy.retain(|b| b.gpr != id);
        }
    }

    /// Changes a pending GPR's priority: it is ranked anew (and may displace lower holds).
    pub fn set_priority(&mut self, id: GprId, priority: i32) -> bool {
        let Some(p) = self.pending.get_mut(&id) else { return false };
        self.queue.remove(&p.key);
        p.key.priority = priority;
        p.request.priority = priority;
        p.fresh = true;
        let windows = [p.plan.map(|w| (w.pool, false)), p.expected_window.map(|w| (w.pool, true))];
        for (pool, expected) in windows.into_iter().flatten() {
            let pool = &mut self.pools[pool];
            let list = if expected { &mut pool.expected_planned } else { &mut pool.planned };
            list.set_priority(id, priority);
        }
        self.queue.insert(p.key);
        self.dirty = true;
        true
    }

    /// A running GPR gave its nodes back at `now` (window over, early release, idle, failure).
    /// Teaches the predictor how much of the window was used.
    pub fn finish(&mut self, id: GprId, now: Time) -> Option<RunningSpec> {
        let running = self.running.remove(&id)?;
        let spec = running.spec;
        let healthy = spec.nodes.iter().filter(|n| self.nodes.get(n).is_some_and(|s| s.healthy)).count() as i32;
        for node in &spec.nodes {
            if let Some(state) = self.nodes.get_mut(node)
                && state.holder == Some(id)
            {
                state.holder = None;
            }
        }
        let pool = &mut self.pools[running.pool];
        pool.plan.add(now, spec.ends_at, -healthy);
        pool.expected.add(now, running.predicted_end.max(now), -healthy);
        let reserved = spec.ends_at - spec.started_at;
        if reserved > 0 {
            self.predictor.observe(spec.request.slice, &spec.pool.gpu_shape, (now - spec.started_at).clamp(0, reserved), reserved);
            // Fair share counts what was used: give back the unused part of the charge.
            let gpus = f64::from(self.pools[running.pool].gpus_per_node) * spec.nodes.len() as f64;
            self.charge(spec.request.slice, -(gpus * (spec.ends_at - now).max(0) as f64), now);
        }
        if let Some(slice) = self.slices.get_mut(&spec.request.slice) {
            slice.busy.retain(|b| b.gpr != id);
            slice.expected_busy.retain(|b| b.gpr != id);
        }
        self.dirty = true;
        Some(spec)
    }

    /// Whether a full pass would see something the last one did not.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    pub fn running_len(&self) -> usize {
        self.running.len()
    }

    pub fn status(&self, id: GprId) -> Option<PendingStatus> {
        let p = self.pending.get(&id)?;
        Some(PendingStatus {
            position: self.queue.rank(&p.key) + 1,
            start_no_later_than: p.plan.map(|plan| plan.start),
            estimated_start: p.expected.or(p.plan.map(|plan| plan.start)),
            pool: p.plan.map(|plan| self.pools[plan.pool].key.clone()),
        })
    }

    /// 1-based position, O(log n).
    pub fn position_of(&self, id: GprId) -> Option<usize> {
        self.pending.get(&id).map(|p| self.queue.rank(&p.key) + 1)
    }

    /// The GPR at the head of the queue.
    pub fn peek(&self) -> Option<GprId> {
        self.queue.peek().map(|k| k.id)
    }

    /// Pending GPR ids in queue order.
    pub fn queue_order(&self) -> Vec<GprId> {
        self.queue.in_order().into_iter().map(|k| k.id).collect()
    }

    /// The earliest planned start among pending GPRs after `now`: when a pass is due at the
    /// latest if nothing else happens.
    pub fn next_planned_start(&self, now: Time) -> Option<Time> {
        self.pending.values().filter_map(|p| p.plan.map(|plan| plan.start)).filter(|t| *t > now).min()
    }

    /// Running GPRs whose window has ended by `now`.
    pub fn expired(&self, now: Time) -> Vec<GprId> {
        self.running.values().filter(|r| r.spec.ends_at <= now).map(|r| r.spec.request.id).collect()
    }

    /// Running GPRs whose GPUs have all been idle for their idle timeout. `last_busy` says
    /// when a GPR's GPUs last did work (`None`: never since it started).
    pub fn idle(&self, now: Time, last_busy: impl Fn(GprId) -> Option<Time>) -> Vec<GprId> {
        self.running
            .values()
            .filter_map(|r| {
                let timeout = r.spec.request.idle_timeout?;
                let since = last_busy(r.spec.request.id).unwrap_or(r.spec.started_at).max(r.spec.started_at);
                (now - since >= timeout).then_some(r.spec.request.id)
            })
            .collect()
    }

    /// A node's health changed at `now`. A failed node inside a running GPR is replaced from
    /// the same pool when one is free, otherwise the GPR runs degraded.
    pub fn set_node_health(&mut self, node: NodeId, healthy: bool, now: Time) -> Vec<Decision> {
        let Some(state) = self.nodes.get(&node).cloned() else { return Vec::new() };
        if state.healthy == healthy {
            return Vec::new();
        }
        self.dirty = true;
        let pool = state.pool;
        self.pools[pool].healthy += if healthy { 1 } else { -1 };
        if let Some(s) = self.nodes.get_mut(&node) {
            s.healthy = healthy;
        }
        let Some(holder) = state.holder else { return Vec::new() };
        let Some(ends_at) = self.running.get(&holder).map(|r| r.spec.ends_at) else { return Vec::new() };
        if healthy {
            self.pools[pool].plan.add(now, ends_at, 1);
            return Vec::new();
        }
        let spare = self.pools[pool].nodes.iter().copied().find(|n| self.nodes.get(n).is_some_and(|s| s.healthy && s.holder.is_none()));
        match spare {
            Some(replacement) => {
                if let Some(s) = self.nodes.get_mut(&node) {
                    s.holder = None;
                }
                if let Some(s) = self.nodes.get_mut(&replacement) {
                    s.holder = Some(holder);
                }
                if let Some(r) = self.running.get_mut(&holder) {
                    r.spec.nodes.retain(|n| *n != node);
                    r.spec.nodes.push(replacement);
                }
                vec![Decision::ReplaceNode { gpr: holder, failed: node, replacement }]
            }
            None => {
                self.pools[pool].plan.add(now, ends_at, -1);
                vec![Decision::Degraded { gpr: holder, failed: node }]
            }
        }
    }

    /// Checks the invariants the property tests rely on; returns what is wrong, if anything.
    pub fn audit(&self, now: Time) -> Vec<String> {
        let mut problems = Vec::new();
        let mut per_slice: HashMap<SliceId, usize> = HashMap::default();
        for r in self.running.values() {
            *per_slice.entry(r.spec.request.slice).or_default() += 1;
            for n in &r.spec.nodes {
                if self.nodes.get(n).and_then(|s| s.holder) != Some(r.spec.request.id) {
                    problems.push(format!("GPR {} lists node {n} it does not hold", r.spec.request.id));
                }
            }
        }
        for (slice, count) in per_slice {
            if count > 1 {
                problems.push(format!("slice {slice} holds {count} running GPRs"));
            }
        }
        for pool in &self.pools {
            let held = pool.nodes.iter().filter(|n| self.nodes.get(n).is_some_and(|s| s.healthy && s.holder.is_some())).count() as i32;
            if held > pool.healthy {
                problems.push(format!("pool {:?} has {held} nodes held but {} healthy", pool.key, pool.healthy));
            }
            if pool.plan.used_at(now) > pool.healthy.max(0) && !self.dirty {
                problems.push(format!("pool {:?} plans {} nodes now but has {}", pool.key, pool.plan.used_at(now), pool.healthy));
            }
        }
        problems
    }
}
