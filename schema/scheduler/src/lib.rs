//! The scheduling core (docs/design.md §4): pure — no database, no async, no clock reads; time is a
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

mod estimate;
mod extend;
mod maintenance;
mod nodes;
mod plan;
mod predict;
mod preempt;
pub mod queue;
pub mod replay;
pub mod timeline;
mod what_if;

#[cfg(test)]
mod tests;

mod queries;
mod state;
mod types;

pub use extend::ExtensionRoom;
pub use predict::{UsagePredictor, WaitCalibration};
pub use queue::{PendingQueue, QueueKey};
pub use timeline::Timeline;
pub use types::*;
pub use what_if::{WhatIfChange, WhatIfMove};

// Integer keys hashed millions of times a pass: FxHash, not SipHash (no untrusted keys here).
use rustc_hash::FxHashMap as HashMap;
use state::*;
use std::collections::BTreeMap;

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
    /// How the estimates' foreseen waits turned out: what start ranges are scaled by.
    calibration: WaitCalibration,
    share_epoch: Option<Time>,
    /// Something changed that a full pass should look at (a release, a failure, a requeue).
    dirty: bool,
    /// Pending GPRs whose hold a fresh higher-priority GPR voided, not yet placed again.
    displaced: Vec<GprId>,
    /// Promises that moved later since the caller last took them.
    moves: Vec<PromiseMove>,
    /// Maintenance windows planned ahead, sorted (see [`maintenance`]).
    maintenance: Vec<MaintenanceWindow>,
    /// Clusters whose promises are firm this far ahead (see [`Scheduler::set_firm_horizon`]).
    firm_horizons: HashMap<ClusterId, Time>,
}

/// The `q` quantile of `sorted` (nearest rank; 0 when empty): the replay's report and the
/// wait calibration read the same way.
pub(crate) fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// The priority a GPR of `priority` is ranked at with fair share's `bonus`: never past its band.
fn ranked(priority: i32, bonus: i32) -> i32 {
    priority.saturating_add(bonus.max(0)).min(band_top(priority).max(priority))
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
            calibration: WaitCalibration::default(),
            share_epoch: None,
            dirty: false,
            displaced: Vec::new(),
            moves: Vec::new(),
            firm_horizons: HashMap::default(),
            maintenance: Vec::new(),
        }
    }

    /// The promises that moved later since the last call, with their causes.
    pub fn take_moves(&mut self) -> Vec<PromiseMove> {
        std::mem::take(&mut self.moves)
    }

    /// How long a request's plan reserves its pool: provisioning, the window, the release.
    fn span(&self, request: &Request) -> Time {
        self.config.span(request.duration)
    }

    /// The expected span, for estimates: the predicted use plus the observed overheads.
    fn expected_span(&self, slice: SliceId, shape: &str, duration: Time) -> Time {
        self.predictor.expected_use(slice, shape, duration).saturating_add(self.predictor.expected_overhead())
    }

    pub fn predictor_mut(&mut self) -> &mut UsagePredictor {
        &mut self.predictor
    }

    /// Makes the promises of cluster `cluster` firm `horizon` seconds ahead (`None`: not at
    /// all, the default): a plan starting within the horizon is kept against arrivals below the
    /// high band (priority 201 and up), which plan around it instead of taking its room. Fewer
    /// promises move; those arrivals may wait longer.
    pub fn set_firm_horizon(&mut self, cluster: ClusterId, horizon: Option<Time>) {
        match horizon.filter(|h| *h > 0) {
            Some(horizon) => self.firm_horizons.insert(cluster, horizon),
            None => self.firm_horizons.remove(&cluster),
        };
        self.dirty = true;
    }

    /// Plans in pool `index` starting before this are firm for an arrival ranked `priority`.
    pub(crate) fn firm_until(&self, index: usize, priority: i32, now: Time) -> Time {
        match self.firm_horizons.get(&self.pools[index].key.cluster) {
            Some(horizon) if priority <= 200 => now.saturating_add(*horizon),
            _ => Time::MIN,
        }
    }

    /// Restores when pending GPR `id` was first estimated and the start foreseen then (stored
    /// by the caller), so its admission teaches the calibration as if nothing had restarted.
    pub fn restore_foreseen(&mut self, id: GprId, made_at: Time, start: Time) {
        if let Some(p) = self.pending.get_mut(&id) {
            p.foreseen = Some((made_at, start));
        }
    }

    /// How past estimates turned out (see [`WaitCalibration`]).
    pub fn calibration(&self) -> &WaitCalibration {
        &self.calibration
    }

    pub fn calibration_mut(&mut self) -> &mut WaitCalibration {
        &mut self.calibration
    }

    /// Fair share's points for a GPR of `slice` ranked now: the full [`Config::fair_share_bonus`]
    /// for a slice that used nothing lately, half for one that used as much as the average
    /// slice with work here (waiting or running), less the more it used; none when nobody used
    /// anything (no one to be fairer to).
    pub fn fair_share_bonus_for(&self, slice: SliceId) -> i32 {
        let most = self.config.fair_share_bonus;
        if most <= 0 {
            return 0;
        }
        let active: Vec<f64> = self
            .slices
            .iter()
            .filter(|(id, s)| **id != slice && (!s.pending.is_empty() || s.busy.iter().any(|b| self.running.contains_key(&b.gpr))))
            .map(|(_, s)| s.share.max(0.0))
            .collect();
        let reference = active.iter().sum::<f64>() / active.len().max(1) as f64;
        if reference <= 0.0 {
            return 0;
        }
        let own = self.slices.get(&slice).map_or(0.0, |s| s.share.max(0.0));
        (f64::from(most) * reference / (own + reference)).round() as i32
    }

    pub fn upsert_slice(&mut self, spec: SliceSpec) {
        let slice = self.slices.entry(spec.id).or_default();
        slice.clusters = spec.clusters;
        slice.evictable = spec.evictable;
        slice.shapes = spec.shapes;
        // Its waiting GPRs, including any restored before the slice was known.
        let waiting: Vec<GprId> = self.pending.values().filter(|p| p.request.slice == spec.id).map(|p| p.request.id).collect();
        for id in &waiting {
            if !slice.pending.contains(id) {
                slice.pending.push(*id);
            }
        }
        self.rematch(waiting);
        self.dirty = true;
    }

    /// Matches waiting GPRs against today's pools and slices again (a pool appeared, a slice
    /// gained or lost a cluster or shape). A plan in a pool the GPR may no longer use is
    /// voided as lost capacity.
    fn rematch(&mut self, ids: Vec<GprId>) {
        for id in ids {
            let Some(p) = self.pending.get(&id) else { continue };
            let pools = self.matching_pools(&p.request);
            if pools == p.pools {
                continue;
            }
            match p.plan {
                Some(plan) if !pools.contains(&plan.pool) => {
                    let (request, promised) = (p.request.clone(), p.promised);
                    let hold = Hold { pool: self.pools[plan.pool].key.clone(), start: plan.start };
                    let bonus = p.bonus;
                    self.remove_pending(id);
                    self.restore_pending(request, Some(hold), promised, Some(bonus));
                }
                _ => {
                    if let Some(p) = self.pending.get_mut(&id) {
                        p.pools = pools;
                    }
                }
            }
            self.dirty = true;
        }
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
            // One node talks to no other: RDMA matters only across nodes.
            .filter(|(_, p)| !request.rdma || request.nodes <= 1 || p.rdma)
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
        self.restore_pending(request, hold, None, None);
    }

    /// [`Scheduler::add_pending`] for a GPR whose plan was dropped by a change of its own (an
    /// edit of its size or window, a new priority): `promised` is the promise it had, so a
    /// later one is reported as moved by [`Cause::OwnChange`].
    ///
    /// `bonus` is the fair-share points it was given when first ranked (stored by the caller);
    /// `None` for a GPR never ranked, which gets them now.
    pub fn restore_pending(&mut self, request: Request, hold: Option<Hold>, promised: Option<Time>, bonus: Option<i32>) {
        let pools = self.matching_pools(&request);
        let share = self.slices.get(&request.slice).map_or(0.0, |s| s.share);
        let bonus = bonus.unwrap_or_else(|| self.fair_share_bonus_for(request.slice)).clamp(0, self.config.fair_share_bonus.max(0));
        let priority = ranked(request.priority, bonus);
        let key = QueueKey { priority, share, submitted_at: request.submitted_at, id: request.id };
        let span = self.span(&request);
        let kept = hold.as_ref().and_then(|h| {
            let pool = *self.pool_index.get(&h.pool)?;
            pools.contains(&pool).then_some(Plan { pool, start: h.start, end: h.start.saturating_add(span) })
        });
        let voided = match (&hold, kept) {
            // The pool it was planned in is gone or no longer matches: capacity was lost.
            (Some(h), None) => Some(Cause::CapacityLost { pool: h.pool.clone() }),
            (None, _) if promised.is_some() => Some(Cause::OwnChange),
            _ => None,
        };
        if let Some(slice) = self.slices.get_mut(&request.slice) {
            slice.pending.push(request.id);
        }
        self.queue.insert(key);
        let fresh = kept.is_none();
        let promised = hold.map(|h| h.start).or(promised);
        let pending = Pending {
            request,
            key,
            pools,
            fresh,
            plan: kept,
            promised,
            voided,
            expected: None,
            expected_window: None,
            expected_hint: None,
            range: None,
            foreseen: None,
            bonus,
        };
        self.pending.insert(pending.request.id, pending);
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
        let charged_until = spec.started_at;
        self.running.insert(spec.request.id, Running { spec, pool, predicted_end, charged_until });
        self.dirty = true;
    }

    /// When a running GPR's nodes are expected back: its predicted use of the window, plus
    /// the provisioning and release it still has ahead, within its bound.
    fn predict_end(&self, spec: &RunningSpec) -> Time {
        let bound = spec.nodes_back_by(self.config.release_allowance);
        let shape = &spec.pool.gpu_shape;
        let (provisioning, release) = self.predictor.expected_overheads();
        let predicted = match spec.holding {
            Holding::Provisioning => {
                spec.started_at + provisioning + self.predictor.expected_use(spec.request.slice, shape, spec.request.duration) + release
            }
            Holding::Provisioned => {
                let reserved = spec.ends_at - spec.started_at;
                spec.started_at + self.predictor.expected_use(spec.request.slice, shape, reserved) + release
            }
            Holding::Releasing { since, .. } => since + release,
        };
        predicted.min(bound)
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
            pool.guards.forget(id);
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
        p.request.priority = priority;
        p.fresh = true;
        p.voided = Some(Cause::OwnChange);
        let ranked_at = ranked(priority, p.bonus);
        self.rank(id, ranked_at);
        true
    }

    /// Moves a pending GPR to `priority` in the queue and in the pools' lists of plans.
    fn rank(&mut self, id: GprId, priority: i32) {
        let Some(p) = self.pending.get_mut(&id) else { return };
        self.queue.remove(&p.key);
        p.key.priority = priority;
        let windows = [p.plan.map(|w| (w.pool, false)), p.expected_window.map(|w| (w.pool, true))];
        for (pool, expected) in windows.into_iter().flatten() {
            let pool = &mut self.pools[pool];
            if expected {
                pool.expected_planned.set_priority(id, priority);
            } else {
                pool.planned.set_priority(id, priority);
                pool.guards.set_priority(id, priority);
            }
        }
        self.queue.insert(p.key);
        self.dirty = true;
    }

    /// Ages the waiting GPRs (see [`Config::aging_per_hour`]): re-ranks without voiding
    /// anything, so every promise stands.
    fn age(&mut self, now: Time) {
        if self.config.aging_per_hour <= 0.0 || self.config.aging_cap <= 0 {
            return;
        }
        let (rate, cap, ceiling) = (self.config.aging_per_hour, self.config.aging_cap, self.config.aging_ceiling);
        let due: Vec<(GprId, i32)> = self
            .pending
            .values()
            .filter_map(|p| {
                let waited_hours = (now - p.request.submitted_at).max(0) as f64 / 3600.0;
                let base = ranked(p.request.priority, p.bonus);
                let gained = ((waited_hours * rate) as i32).min(cap).min(ceiling.saturating_sub(base).max(0));
                let aged = base.saturating_add(gained);
                (aged != p.key.priority).then_some((p.request.id, aged))
            })
            .collect();
        for (id, priority) in due {
            self.rank(id, priority);
        }
    }

    /// A provisioning GPR's window began at `now` and ends at `ends_at` (its exit timer).
    pub fn mark_provisioned(&mut self, id: GprId, ends_at: Time, now: Time) {
        self.rebound(id, now, |spec| {
            spec.started_at = now;
            spec.ends_at = ends_at;
            spec.holding = Holding::Provisioned;
        });
    }

    /// A running GPR began its release at `now`; its nodes are back by `until`.
    pub fn start_release(&mut self, id: GprId, until: Time, now: Time) {
        self.rebound(id, now, |spec| spec.holding = Holding::Releasing { since: now, until });
    }

    /// Applies a lifecycle step to a running GPR and moves its reservation from `now` on to
    /// the new bound. A bound that grows may break promises, so the next call re-plans.
    fn rebound(&mut self, id: GprId, now: Time, step: impl FnOnce(&mut RunningSpec)) {
        let allowance = self.config.release_allowance;
        let Some(r) = self.running.get_mut(&id) else { return };
        let (old_back, old_predicted) = (r.spec.nodes_back_by(allowance), r.predicted_end);
        step(&mut r.spec);
        let spec = r.spec.clone();
        let predicted = self.predict_end(&spec);
        let Some(r) = self.running.get_mut(&id) else { return };
        r.predicted_end = predicted;
        let new_back = spec.nodes_back_by(allowance);
        let nodes = r.healthy_nodes(&self.nodes);
        let pool = &mut self.pools[r.pool];
        pool.plan.add(now, old_back.max(now), -nodes);
        pool.plan.add(now, new_back.max(now), nodes);
        pool.expected.add(now, old_predicted.max(now), -nodes);
        pool.expected.add(now, predicted.max(now), nodes);
        if new_back > old_back {
            self.dirty = true;
        }
    }

    /// Charges every running GPR's use up to `now` to its slice's fair share: usage is charged
    /// as it is used, so a share only grows (and decays), never goes negative.
    fn accrue(&mut self, now: Time) {
        let ids: Vec<GprId> = self.running.values().filter(|r| now > r.charged_until).map(|r| r.spec.request.id).collect();
        for id in ids {
            self.accrue_one(id, now);
        }
    }

    fn accrue_one(&mut self, id: GprId, now: Time) {
        let Some(r) = self.running.get_mut(&id) else { return };
        if now <= r.charged_until {
            return;
        }
        let gpus = f64::from(self.pools[r.pool].gpus_per_node) * r.spec.nodes.len() as f64;
        let gpu_seconds = gpus * (now - r.charged_until) as f64;
        r.charged_until = now;
        let slice = r.spec.request.slice;
        self.charge(slice, gpu_seconds, now);
    }

    /// A slice's fair share at `now`: its GPU-seconds, each halved every half-life since use.
    pub fn share(&self, slice: SliceId, now: Time) -> f64 {
        let (Some(state), Some(epoch)) = (self.slices.get(&slice), self.share_epoch) else { return 0.0 };
        state.share * (-((now - epoch) as f64) / self.config.fair_share_half_life as f64).exp2()
    }

    /// A running GPR gave its nodes back at `now` (window over, early release, idle, failure).
    /// Teaches the predictor how much of the window was used.
    pub fn finish(&mut self, id: GprId, now: Time) -> Option<RunningSpec> {
        self.accrue_one(id, now);
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
        pool.plan.add(now, spec.nodes_back_by(self.config.release_allowance).max(now), -healthy);
        pool.expected.add(now, running.predicted_end.max(now), -healthy);
        // What the window taught: how much of it was used (not for a GPR that never started).
        let used_until = match spec.holding {
            Holding::Provisioning => None,
            Holding::Provisioned => Some(now.min(spec.ends_at)),
            Holding::Releasing { since, .. } => Some(since.min(spec.ends_at)),
        };
        let reserved = spec.ends_at - spec.started_at;
        if let Some(until) = used_until
            && reserved > 0
        {
            self.predictor.observe(spec.request.slice, &spec.pool.gpu_shape, (until - spec.started_at).clamp(0, reserved), reserved);
        }
        if let Some(slice) = self.slices.get_mut(&spec.request.slice) {
            slice.busy.retain(|b| b.gpr != id);
            slice.expected_busy.retain(|b| b.gpr != id);
        }
        self.dirty = true;
        Some(spec)
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
