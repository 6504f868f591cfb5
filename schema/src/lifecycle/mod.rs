//! The GPR lifecycle in the gateway (DESIGN §3, §4): a scheduler loop that only the holder of
//! the leader lease runs, woken on changes and on a timer. The leader keeps the pure core in
//! memory ([`driver::Driver`]), feeds it what was stored since the last tick, plans, and
//! persists every decision in transactions fenced by the lease epoch; provisioning and release
//! run as background jobs through a [`ClusterProvider`].
//! Timers (25/50/75 %, exit warning, exit) are derived from stored state plus a bit set of
//! the ones already written, so a restart or a new leader neither loses nor repeats one.

pub mod driver;
pub mod provider;
pub mod state;
pub mod steps;

use crate::error::{Error, Result};
use crate::gpr::service::record_event;
use crate::scheduler::{Decision, Scheduler};
use chrono::{DateTime, Duration, Utc};
use egs_entities::{
    GprEventKind, GprPhase, Health, NodeState, ReleaseReason, StepOperation, cluster, gpr, gpr_node, leader_lease, node, slice, slice_namespace,
};
use provider::{ClusterProvider, NodeJob, ProviderError};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, QueryFilter, Set, TransactionTrait};
use state::Snapshot;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

const LEASE: &str = "scheduler";
const ACTOR: &str = "scheduler";
/// Milestone bits in `gprs.milestones_done`.
const MILESTONES: [(i32, GprEventKind, f64); 3] =
    [(1, GprEventKind::Progress25, 0.25), (2, GprEventKind::Progress50, 0.5), (4, GprEventKind::Progress75, 0.75)];
const EXIT_WARNING_BIT: i32 = 8;
/// How long a job that failed transiently (API server unreachable, eviction blocked) waits
/// before it gives its slot back, so the next tick's retry does not hammer the cluster.
const RETRY_PAUSE: std::time::Duration = std::time::Duration::from_secs(2);
/// An estimate change smaller than this is not worth an event.
const ESTIMATE_EVENT_SECS: i64 = 300;

/// Where lifecycle code reads the time; tests move it forward instead of sleeping.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// The system clock plus an offset that only moves forward.
#[derive(Default)]
pub struct ManualClock {
    offset_ms: AtomicI64,
}

impl ManualClock {
    pub fn advance(&self, by: std::time::Duration) {
        self.offset_ms.fetch_add(by.as_millis() as i64, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now() + Duration::milliseconds(self.offset_ms.load(Ordering::SeqCst))
    }
}

#[derive(Clone, Debug)]
pub struct LifecycleConfig {
    /// This replica's name in the lease.
    pub instance: String,
    /// The loop runs at least this often.
    pub tick: std::time::Duration,
    /// A leader that stops renewing loses the lease after this.
    pub lease_ttl: Duration,
    /// The exit warning comes this long before the exit.
    pub exit_warning: Duration,
}

impl Default for LifecycleConfig {
    fn default() -> Self {
        Self {
            instance: format!("egs-{}-{:08x}", std::process::id(), rand::random::<u32>()),
            tick: std::time::Duration::from_secs(1),
            lease_ttl: Duration::seconds(15),
            exit_warning: Duration::minutes(10),
        }
    }
}

/// Shared by resolvers (to wake the loop, to answer "Get wait time") and the loop itself.
pub struct SchedulerHandle {
    pub clock: Arc<dyn Clock>,
    /// How the core plans: the provisioning and release allowances, aging.
    pub planning: crate::scheduler::Config,
    wake: Notify,
    /// The leader's scheduler; `None` on other replicas (and until the first tick).
    driver: tokio::sync::Mutex<Option<driver::Driver>>,
}

impl SchedulerHandle {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        let planning = crate::scheduler::Config::live(state::PROVISIONING_ALLOWANCE_SECS, state::RELEASE_ALLOWANCE_SECS);
        Self { clock, planning, wake: Notify::new(), driver: tokio::sync::Mutex::new(None) }
    }

    /// Plans with `planning` instead of the default allowances.
    pub fn with_planning(mut self, planning: crate::scheduler::Config) -> Self {
        self.planning = planning;
        self
    }

    /// Something changed that the scheduler should look at now.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// On the leader, a copy of its scheduler brought up to date with storage (for "Get wait
    /// time"); `None` elsewhere, or when the leader is busy for longer than a query should wait.
    pub async fn scheduler_copy(&self, db: &impl sea_orm::ConnectionTrait) -> Option<Scheduler> {
        let mut slot = tokio::time::timeout(COPY_WAIT, self.driver.lock()).await.ok()?;
        let driver = slot.as_mut()?;
        match driver.look(db, self.clock.now(), &self.planning).await {
            Ok(true) => Some(driver.core.clone()),
            // The next tick builds it again.
            _ => {
                *slot = None;
                None
            }
        }
    }

    /// How the leader's scheduler, brought up to date, differs from one rebuilt from storage
    /// now (see [`driver::Driver::differences`]); `None` when this replica does not lead.
    pub async fn drift<C: sea_orm::ConnectionTrait + TransactionTrait>(&self, db: &C) -> Result<Option<Vec<String>>> {
        let mut slot = self.driver.lock().await;
        let Some(driver) = slot.as_mut() else { return Ok(None) };
        let now = self.clock.now();
        if !driver.look(db, now, &self.planning).await? {
            return Ok(None);
        }
        let rebuilt = driver::Driver::build(db, driver.epoch, now, &self.planning).await?;
        Ok(Some(driver.differences(&rebuilt)))
    }

    /// This replica stopped leading: what it knew may be stale when it leads again.
    async fn forget_driver(&self) {
        *self.driver.lock().await = None;
    }
}

/// How long "Get wait time" waits for the leader's tick before it reads storage itself.
const COPY_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

/// Work only the leader does besides the scheduler loop (the Kubernetes controllers): told
/// whenever this replica gains or loses the lease.
pub trait LeaderTasks: Send + Sync {
    fn set_leading(&self, leading: bool);
}

/// The providers a lifecycle hands jobs to, by cluster provider.
pub struct Providers {
    pub simulated: Arc<dyn ClusterProvider>,
    /// `None` when this replica cannot reach Kubernetes clusters: their jobs fail, saying so.
    pub kubernetes: Option<Arc<dyn ClusterProvider>>,
    /// Started while this replica leads (the Kubernetes controllers).
    pub leader_tasks: Option<Arc<dyn LeaderTasks>>,
}

pub struct Lifecycle {
    db: DatabaseConnection,
    handle: Arc<SchedulerHandle>,
    providers: Providers,
    config: LifecycleConfig,
    /// Provider jobs running in this process (a GPR id appears once).
    /// Aborted when the loop stops: a job is resumable, so the next leader finishes it.
    in_flight: Mutex<HashMap<i64, Option<tokio::task::AbortHandle>>>,
    /// Told after every commit, so subscribers see the events it wrote at once.
    events: Arc<crate::events::EventHub>,
}

impl Lifecycle {
    pub fn new(
        db: DatabaseConnection,
        handle: Arc<SchedulerHandle>,
        providers: Providers,
        config: LifecycleConfig,
        events: Arc<crate::events::EventHub>,
    ) -> Arc<Self> {
        Arc::new(Self { db, handle, providers, config, in_flight: Mutex::new(HashMap::new()), events })
    }

    fn set_leading(&self, leading: bool) {
        if let Some(tasks) = &self.providers.leader_tasks {
            tasks.set_leading(leading);
        }
    }

    /// Commits a fenced transaction and lets subscribers see the events it wrote.
    async fn commit(&self, txn: DatabaseTransaction) -> Result<()> {
        txn.commit().await?;
        self.events.changed();
        Ok(())
    }

    fn now(&self) -> DateTime<Utc> {
        self.handle.clock.now()
    }

    /// Runs until `stop` resolves: renew or take the lease, tick while leading.
    pub async fn run(self: Arc<Self>, stop: impl std::future::Future<Output = ()>) {
        tokio::pin!(stop);
        let mut leading_epoch = None;
        loop {
            match self.lead().await {
                Ok(Some(epoch)) => {
                    leading_epoch = Some(epoch);
                    self.set_leading(true);
                    if let Err(error) = self.clone().tick(epoch).await {
                        tracing::warn!(error = %format!("{error:?}"), "scheduler tick failed; retrying");
                    }
                }
                // Another replica leads (or may): its jobs resume ours, so ours stop here.
                Ok(None) => {
                    if let Some(epoch) = leading_epoch.take() {
                        // Paused or cut off past the lease: any write still on its way is
                        // refused by the fence (it names `epoch`, the lease has moved on).
                        tracing::warn!(epoch, "another replica took the scheduler lease; this one stops its jobs");
                    }
                    self.set_leading(false);
                    self.abandon_jobs();
                    self.handle.forget_driver().await;
                }
                Err(error) => {
                    self.set_leading(false);
                    self.abandon_jobs();
                    self.handle.forget_driver().await;
                    tracing::warn!(error = %format!("{error:?}"), "leader lease check failed");
                }
            }
            tokio::select! {
                _ = &mut stop => break,
                _ = self.handle.wake.notified() => {}
                _ = tokio::time::sleep(self.config.tick) => {}
            }
        }
        self.set_leading(false);
        self.abandon_jobs();
        self.handle.forget_driver().await;
        self.release_lease().await;
    }

    /// Takes or renews the lease; the epoch when this replica leads.
    async fn lead(&self) -> Result<Option<i64>> {
        let now = self.now();
        let expires_at = now + self.config.lease_ttl;
        let me = &self.config.instance;
        let Some(current) = leader_lease::Entity::find_by_id(LEASE).one(&self.db).await? else {
            let inserted = leader_lease::ActiveModel { name: Set(LEASE.into()), holder: Set(me.clone()), epoch: Set(1), expires_at: Set(expires_at) }
                .insert(&self.db)
                .await;
            return Ok(inserted.ok().map(|l| l.epoch));
        };
        let (epoch, guard_holder) = if current.holder == *me {
            (current.epoch, true)
        } else if current.expires_at < now {
            (current.epoch + 1, false)
        } else {
            return Ok(None);
        };
        let mut update = leader_lease::Entity::update_many()
            .col_expr(leader_lease::Column::Holder, Expr::value(me.clone()))
            .col_expr(leader_lease::Column::Epoch, Expr::value(epoch))
            .col_expr(leader_lease::Column::ExpiresAt, Expr::value(expires_at))
            .filter(leader_lease::Column::Name.eq(LEASE))
            .filter(leader_lease::Column::Epoch.eq(current.epoch));
        if guard_holder {
            update = update.filter(leader_lease::Column::Holder.eq(me.clone()));
        }
        let taken = update.exec(&self.db).await?.rows_affected == 1;
        if taken && !guard_holder {
            tracing::info!(epoch, instance = %me, "took the scheduler lease");
        }
        Ok(taken.then_some(epoch))
    }

    async fn release_lease(&self) {
        let expired = self.now() - Duration::seconds(1);
        let result = leader_lease::Entity::update_many()
            .col_expr(leader_lease::Column::ExpiresAt, Expr::value(expired))
            .filter(leader_lease::Column::Name.eq(LEASE))
            .filter(leader_lease::Column::Holder.eq(self.config.instance.clone()))
            .exec(&self.db)
            .await;
        if let Err(error) = result {
            tracing::warn!(error = %error, "could not hand the scheduler lease back");
        }
    }

    /// Opens a transaction that only commits if this replica still holds the lease at `epoch`.
    /// The no-op update also locks the lease row (PostgreSQL), so a takeover waits for us.
    async fn fenced(&self, epoch: i64) -> Result<DatabaseTransaction> {
        let txn = self.db.begin().await?;
        let held = leader_lease::Entity::update_many()
            .col_expr(leader_lease::Column::Epoch, Expr::col(leader_lease::Column::Epoch))
            .filter(leader_lease::Column::Name.eq(LEASE))
            .filter(leader_lease::Column::Holder.eq(self.config.instance.clone()))
            .filter(leader_lease::Column::Epoch.eq(epoch))
            .exec(&txn)
            .await?
            .rows_affected;
        if held != 1 {
            return Err(Error::Internal(anyhow::anyhow!("lost the scheduler lease (epoch {epoch})")));
        }
        Ok(txn)
    }

    async fn tick(self: Arc<Self>, epoch: i64) -> Result<()> {
        let mut slot = self.handle.driver.lock().await;
        let result = self.clone().tick_with(epoch, &mut slot).await;
        if result.is_err() {
            // Storage is the truth: the next tick starts over from it.
            *slot = None;
        }
        result
    }

    async fn tick_with(self: Arc<Self>, epoch: i64, slot: &mut Option<driver::Driver>) -> Result<()> {
        let now = self.now();
        let planning = &self.handle.planning;
        let fed = match slot.as_mut().filter(|d| d.epoch == epoch) {
            Some(driver) => driver.look(&self.db, now, planning).await?,
            None => false,
        };
        if !fed {
            *slot = Some(driver::Driver::build(&self.db, epoch, now, planning).await?);
        }
        let Some(driver) = slot.as_mut() else { return Ok(()) };
        let t = now.timestamp();

        // Timers and ends of windows first: what they free is planned in the same tick.
        let provisioned: Vec<gpr::Model> = driver.state.active.values().filter(|g| g.phase == GprPhase::Provisioned).cloned().collect();
        for g in &provisioned {
            if let Some(done) = self.milestones(epoch, g, now).await?
                && let Some(known) = driver.state.active.get_mut(&g.id)
            {
                known.milestones_done = done;
            }
        }
        let expired = driver.core.expired(t);
        let idle = driver.core.idle(t, |id| driver.state.last_busy.get(&id).map(|b| b.timestamp()).or(Some(t)));
        for g in &provisioned {
            let reason = if expired.contains(&g.id) {
                ReleaseReason::Expired
            } else if idle.contains(&g.id) {
                ReleaseReason::IdleTimeout
            } else {
                continue;
            };
            if let Some(until) = self.start_release(epoch, g, reason, None).await? {
                driver.core.start_release(g.id, until, t);
            }
        }

        // Failed nodes under provisioned GPRs: a spare from the pool, or run degraded.
        for decision in std::mem::take(&mut driver.failures) {
            let (Decision::ReplaceNode { gpr: id, .. } | Decision::Degraded { gpr: id, .. }) = decision else { continue };
            let Some(g) = driver.state.active.get(&id).cloned() else { continue };
            if let Some((failed, replacement)) = self.node_failed(epoch, &g, &driver.state, &decision).await? {
                driver.node_replaced(id, failed, replacement);
            }
        }

        let decisions = driver.core.plan(t);
        let mut stepped = false;
        for decision in &decisions {
            match decision {
                Decision::Preempt { victim, by, .. } => {
                    if let Some(g) = driver.state.active.get(victim) {
                        self.start_release(epoch, g, ReleaseReason::Preempted, driver.state.active.get(by)).await?;
                        stepped = true;
                    }
                }
                Decision::Admit { gpr: id, pool, nodes, .. } => {
                    if let Some(g) = driver.state.active.get(id) {
                        self.admit(epoch, g, pool, nodes).await?;
                        stepped = true;
                    }
                }
                Decision::ReplaceNode { .. } | Decision::Degraded { .. } => {}
            }
        }
        let causes: HashMap<i64, crate::scheduler::Cause> = driver.core.take_moves().into_iter().map(|m| (m.gpr, m.cause)).collect();
        self.store_estimates(epoch, &mut driver.state, &driver.core, &causes).await?;

        // Jobs for GPRs mid-step (including those a previous leader left in flight).
        for g in driver.state.active.values().filter(|g| matches!(g.phase, GprPhase::Provisioning | GprPhase::Releasing)) {
            self.clone().spawn_job(epoch, g.clone());
        }
        if stepped {
            // The next tick reads back what these steps stored and starts their jobs.
            self.handle.wake();
        }
        Ok(())
    }

    /// Writes the 25/50/75 % and exit-warning events that are due and not yet written; the
    /// milestone bits now stored, when it wrote them.
    async fn milestones(&self, epoch: i64, g: &gpr::Model, now: DateTime<Utc>) -> Result<Option<i32>> {
        let (Some(start), Some(exit)) = (g.provisioned_at, g.exit_at) else { return Ok(None) };
        let window = (exit - start).num_seconds().max(1);
        let mut due: Vec<(i32, GprEventKind, String)> = Vec::new();
        for (bit, kind, share) in MILESTONES {
            let at = start + Duration::seconds((window as f64 * share) as i64);
            if g.milestones_done & bit == 0 && at <= now {
                due.push((bit, kind, format!("{}% of the window has passed; exits at {}", (share * 100.0) as i32, exit.to_rfc3339())));
            }
        }
        let warn_at = (exit - self.config.exit_warning).max(start);
        if g.milestones_done & EXIT_WARNING_BIT == 0 && warn_at <= now {
            // Written even when late (the gateway was down), so the history has no gap.
            let message = if now < exit {
                format!("the window ends in {}; save your work", crate::scalars::format_duration((exit - now).num_seconds().max(0)))
            } else {
                "the window has ended; the nodes are being released".to_owned()
            };
            due.push((EXIT_WARNING_BIT, GprEventKind::ExitWarning, message));
        }
        if due.is_empty() {
            return Ok(None);
        }
        let done = due.iter().fold(g.milestones_done, |acc, (bit, ..)| acc | bit);
        let txn = self.fenced(epoch).await?;
        let written = gpr::Entity::update_many()
            .col_expr(gpr::Column::MilestonesDone, Expr::value(done))
            .filter(gpr::Column::Id.eq(g.id))
            .filter(gpr::Column::MilestonesDone.eq(g.milestones_done))
            .filter(gpr::Column::Phase.eq(GprPhase::Provisioned))
            .exec(&txn)
            .await?
            .rows_affected;
        if written == 1 {
            for (_, kind, message) in due {
                record_event(&txn, g, kind, message, ACTOR).await?;
            }
        }
        self.commit(txn).await?;
        Ok((written == 1).then_some(done))
    }

    /// PROVISIONED → RELEASING (or a preemption victim) with its reason and events; when the
    /// nodes are back at the latest, if it moved.
    async fn start_release(&self, epoch: i64, g: &gpr::Model, reason: ReleaseReason, by: Option<&gpr::Model>) -> Result<Option<i64>> {
        let txn = self.fenced(epoch).await?;
        let message = match (reason, by) {
            (ReleaseReason::Expired, _) => "the reserved window ended".to_owned(),
            (ReleaseReason::IdleTimeout, _) => {
                format!("every GPU stayed idle for {}", crate::scalars::format_duration(g.idle_timeout_secs.unwrap_or_default()))
            }
            (ReleaseReason::Preempted, Some(by)) => format!("preempted by GPR `{}` (priority {} over {})", by.name, by.priority, g.priority),
            _ => format!("released ({})", reason.as_str()),
        };
        let now = self.now();
        let deadline = state::release_deadline(now.timestamp(), g.holds_until.map(|t| t.timestamp()), &self.handle.planning);
        let until = DateTime::from_timestamp(deadline, 0).unwrap_or(now);
        let changes = gpr::ActiveModel {
            phase: Set(GprPhase::Releasing),
            release_reason: Set(Some(reason)),
            reason: Set(Some(message.clone())),
            preempted_by_id: Set(by.map(|b| b.id)),
            holding_since: Set(Some(now)),
            holds_until: Set(Some(until)),
            version: Set(g.version + 1),
            updated_at: Set(Utc::now()),
            ..Default::default()
        };
        let moved = gpr::Entity::update_many()
            .set(changes)
            .filter(gpr::Column::Id.eq(g.id))
            .filter(gpr::Column::Phase.is_in([GprPhase::Provisioned, GprPhase::Provisioning]))
            .exec(&txn)
            .await?
            .rows_affected
            == 1;
        if moved {
            let kind = match reason {
                ReleaseReason::IdleTimeout => Some(GprEventKind::IdleReleased),
                ReleaseReason::Preempted => Some(GprEventKind::Preempted),
                _ => None,
            };
            if let Some(kind) = kind {
                record_event(&txn, g, kind, message.clone(), ACTOR).await?;
            }
            record_event(&txn, g, GprEventKind::Releasing, format!("releasing its nodes: {message}"), ACTOR).await?;
        }
        self.commit(txn).await?;
        Ok(moved.then_some(deadline))
    }

    /// A node of a provisioned GPR failed: it leaves the GPR, and a spare takes its place
    /// (`NODE_REPLACED`, then the provider hands the spare to the slice) or the GPR runs on
    /// fewer nodes (`DEGRADED`). Unlinking the failed node makes this happen once.
    /// The failed node and its replacement, once stored.
    async fn node_failed(
        self: &Arc<Self>,
        epoch: i64,
        g: &gpr::Model,
        snapshot: &Snapshot,
        decision: &Decision,
    ) -> Result<Option<(i64, Option<i64>)>> {
        let (failed, replacement) = match *decision {
            Decision::ReplaceNode { failed, replacement, .. } => (failed, Some(replacement)),
            Decision::Degraded { failed, .. } => (failed, None),
            _ => return Ok(None),
        };
        let name = |id: i64| snapshot.nodes.iter().find(|n| n.id == id).map_or_else(|| format!("#{id}"), |n| n.name.clone());
        let txn = self.fenced(epoch).await?;
        let unlinked = gpr_node::Entity::delete_many()
            .filter(gpr_node::Column::GprId.eq(g.id))
            .filter(gpr_node::Column::NodeId.eq(failed))
            .exec(&txn)
            .await?
            .rows_affected;
        if unlinked == 0 {
            // Another leader handled it since the snapshot.
            return Ok(None);
        }
        node::Entity::update_many()
            .col_expr(node::Column::State, Expr::value(NodeState::Available))
            .col_expr(node::Column::AllocatedGprId, Expr::value(Option::<i64>::None))
            .filter(node::Column::Id.eq(failed))
            .filter(node::Column::AllocatedGprId.eq(g.id))
            .exec(&txn)
            .await?;
        let (kind, message) = match replacement {
            Some(spare) => {
                gpr_node::ActiveModel { gpr_id: Set(g.id), node_id: Set(spare), assigned_at: Set(Utc::now()) }.insert(&txn).await?;
                node::Entity::update_many()
                    .col_expr(node::Column::State, Expr::value(NodeState::Reserved))
                    .col_expr(node::Column::AllocatedGprId, Expr::value(g.id))
                    .filter(node::Column::Id.eq(spare))
                    .exec(&txn)
                    .await?;
                (GprEventKind::NodeReplaced, format!("node `{}` failed; node `{}` from the same pool took its place", name(failed), name(spare)))
            }
            None => {
                let left = snapshot.links.get(&g.id).map_or(0, |l| l.len().saturating_sub(1));
                let message = format!(
                    "node `{}` failed and no node of the pool was free to replace it; running on {left} of {} node(s)",
                    name(failed),
                    g.node_count
                );
                (GprEventKind::Degraded, message)
            }
        };
        record_event(&txn, g, kind, message, ACTOR).await?;
        self.commit(txn).await?;
        if let Some(spare) = replacement {
            let (mut job, provider) = self.job_for(g).await?;
            let mut failed_job = job.clone();
            job.node_names = vec![name(spare)];
            job.unhealthy_nodes.retain(|n| job.node_names.contains(n));
            failed_job.node_names = vec![name(failed)];
            // The slice keeps its namespaces' placement (the GPR still runs on the spare).
            failed_job.namespaces.clear();
            failed_job.resource = None;
            let db = self.db.clone();
            tokio::spawn(async move {
                // Every step runs again for the spare (the GPR's rows are from its first round).
                let log = steps::DbStepLog::new(db.clone(), job.gpr_id, StepOperation::Provision, false);
                if let Err(error) = provider.provision(&job, &log).await {
                    tracing::warn!(gpr = job.gpr_id, node = ?job.node_names, %error, "handing the replacement node to the slice failed");
                }
                // Best effort, and not recorded: the GPR's release steps are for its own release.
                // What the failed node keeps is overwritten when it is next provisioned.
                if let Err(error) = provider.release(&failed_job, &provider::Unrecorded).await {
                    tracing::info!(gpr = failed_job.gpr_id, node = ?failed_job.node_names, %error, "taking the failed node back did not finish");
                }
            });
        }
        Ok(Some((failed, replacement)))
    }

    /// QUEUED → PROVISIONING on the chosen nodes.
    async fn admit(&self, epoch: i64, g: &gpr::Model, pool: &crate::scheduler::PoolKey, nodes: &[i64]) -> Result<()> {
        let txn = self.fenced(epoch).await?;
        let now = self.now();
        let changes = gpr::ActiveModel {
            holding_since: Set(Some(now)),
            holds_until: Set(Some(now + Duration::seconds(self.handle.planning.span(g.duration_secs)))),
            phase: Set(GprPhase::Provisioning),
            reason: Set(None),
            queue_position: Set(None),
            assigned_cluster_id: Set(Some(pool.cluster)),
            assigned_instance_type: Set(Some(pool.instance_type.clone())),
            assigned_gpu_shape: Set(Some(pool.gpu_shape.clone())),
            estimated_start_at: Set(None),
            start_no_later_than: Set(None),
            milestones_done: Set(0),
            version: Set(g.version + 1),
            updated_at: Set(Utc::now()),
            ..Default::default()
        };
        let moved = gpr::Entity::update_many()
            .set(changes)
            .filter(gpr::Column::Id.eq(g.id))
            .filter(gpr::Column::Version.eq(g.version))
            .filter(gpr::Column::Phase.eq(GprPhase::Queued))
            .exec(&txn)
            .await?
            .rows_affected
            == 1;
        if !moved {
            // Edited or cancelled since the snapshot: the next tick plans it afresh.
            return Ok(());
        }
        steps::forget(&txn, g.id).await?;
        let at = Utc::now();
        for &node_id in nodes {
            gpr_node::ActiveModel { gpr_id: Set(g.id), node_id: Set(node_id), assigned_at: Set(at) }.insert(&txn).await?;
        }
        node::Entity::update_many()
            .col_expr(node::Column::State, Expr::value(NodeState::Reserved))
            .col_expr(node::Column::AllocatedGprId, Expr::value(g.id))
            .filter(node::Column::Id.is_in(nodes.to_vec()))
            .exec(&txn)
            .await?;
        let cluster = cluster::Entity::find_by_id(pool.cluster).one(&txn).await?.map(|c| c.name).unwrap_or_default();
        let message = format!("provisioning {} node(s) of {} ({}) on cluster `{cluster}`", nodes.len(), pool.gpu_shape, pool.instance_type);
        record_event(&txn, g, GprEventKind::ProvisioningStarted, message, ACTOR).await?;
        self.commit(txn).await?;
        Ok(())
    }

    /// Queue positions, promises, expectations and planned pools of pending GPRs.
    /// `causes` says why promises moved later in this tick (an event that moves one names it).
    /// The driver's copy of each row is brought in line with what was written.
    async fn store_estimates(
        &self,
        epoch: i64,
        snapshot: &mut Snapshot,
        core: &Scheduler,
        causes: &HashMap<i64, crate::scheduler::Cause>,
    ) -> Result<()> {
        let positions = core.positions();
        let mut changed = Vec::new();
        for g in snapshot.active.values().filter(|g| g.phase == GprPhase::Queued) {
            let Some(status) = core.status_unpositioned(g.id) else { continue };
            let promise = status.start_no_later_than.and_then(|t| DateTime::from_timestamp(t, 0));
            let expected = status.estimated_start.and_then(|t| DateTime::from_timestamp(t, 0));
            let position = positions.get(&g.id).and_then(|p| i32::try_from(*p).ok());
            let pool = status.pool.clone();
            let same_pool = Snapshot::assigned_pool(g) == pool;
            if g.queue_position == position && g.start_no_later_than == promise && g.estimated_start_at == expected && same_pool {
                continue;
            }
            changed.push((g.clone(), position, promise, expected, pool));
        }
        if changed.is_empty() {
            return Ok(());
        }
        let txn = self.fenced(epoch).await?;
        let mut stored = Vec::with_capacity(changed.len());
        for (g, position, promise, expected, pool) in changed {
            let g = &g;
            let changes = gpr::ActiveModel {
                queue_position: Set(position),
                start_no_later_than: Set(promise),
                estimated_start_at: Set(expected),
                assigned_cluster_id: Set(pool.as_ref().map(|p| p.cluster)),
                assigned_instance_type: Set(pool.as_ref().map(|p| p.instance_type.clone())),
                assigned_gpu_shape: Set(pool.as_ref().map(|p| p.gpu_shape.clone())),
                ..Default::default()
            };
            // Not a user-visible change: the version stays, but a concurrent edit wins.
            let written = gpr::Entity::update_many()
                .set(changes)
                .filter(gpr::Column::Id.eq(g.id))
                .filter(gpr::Column::Version.eq(g.version))
                .exec(&txn)
                .await?
                .rows_affected;
            let moved = |before: Option<DateTime<Utc>>, after: Option<DateTime<Utc>>| match (before, after) {
                (Some(b), Some(a)) => (a - b).num_seconds().abs() >= ESTIMATE_EVENT_SECS,
                // A promise given, or taken away (it fits nowhere now): both worth an event.
                (None, Some(_)) | (Some(_), None) => true,
                (None, None) => false,
            };
            if written == 1 && (moved(g.start_no_later_than, promise) || moved(g.estimated_start_at, expected)) {
                let describe = |t: Option<DateTime<Utc>>| t.map_or_else(|| "unknown (it fits in no pool now)".to_owned(), |t| t.to_rfc3339());
                let mut message = format!("starts no later than {}, expected {}", describe(promise), describe(expected));
                let later = match (g.start_no_later_than, promise) {
                    (Some(before), Some(after)) => after > before,
                    (Some(_), None) => true,
                    _ => false,
                };
                if later {
                    let why = causes.get(&g.id).map_or_else(|| "the plan was re-made".to_owned(), |c| describe_cause(c, snapshot));
                    message = format!("{message}; the promise moved later: {why}");
                }
                record_event(&txn, g, GprEventKind::EstimateChanged, message, ACTOR).await?;
            }
            if written == 1 {
                stored.push((g.id, position, promise, expected, pool));
            }
        }
        self.commit(txn).await?;
        for (id, position, promise, expected, pool) in stored {
            if let Some(g) = snapshot.active.get_mut(&id) {
                g.queue_position = position;
                g.start_no_later_than = promise;
                g.estimated_start_at = expected;
                g.assigned_cluster_id = pool.as_ref().map(|p| p.cluster);
                g.assigned_instance_type = pool.as_ref().map(|p| p.instance_type.clone());
                g.assigned_gpu_shape = pool.map(|p| p.gpu_shape);
            }
        }
        Ok(())
    }
}

/// Why a promise moved later, in words (DESIGN §4.5's causes).
fn describe_cause(cause: &crate::scheduler::Cause, snapshot: &Snapshot) -> String {
    use crate::scheduler::Cause;
    match cause {
        Cause::HigherPriority { gpr, priority } => {
            let name = snapshot.active.get(gpr).map_or_else(|| format!("#{gpr}"), |g| format!("`{}`", g.name));
            format!("GPR {name} of higher priority ({priority}) was ranked ahead of it")
        }
        Cause::CapacityLost { pool } => format!(
            "capacity was lost in its pool ({} × {}, cluster {}): a node failed, went silent or was cordoned",
            pool.gpu_shape,
            pool.instance_type,
            crate::ids::encode(crate::ids::Kind::Cluster, pool.cluster).0
        ),
        Cause::OwnChange => "its own size, window or priority changed".to_owned(),
        Cause::Overdue => "its planned start passed while nodes were held past their bound".to_owned(),
    }
}

impl Lifecycle {
    /// Starts the provider step for a GPR mid-lifecycle, unless one is already running here.
    fn spawn_job(self: Arc<Self>, epoch: i64, g: gpr::Model) {
        let fresh = self
            .in_flight
            .lock()
            .map(|mut jobs| match jobs.entry(g.id) {
                std::collections::hash_map::Entry::Occupied(_) => false,
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(None);
                    true
                }
            })
            .unwrap_or(false);
        if !fresh {
            return;
        }
        let id = g.id;
        let this = self.clone();
        let task = tokio::spawn(async move {
            let this = this;
            let result = match g.phase {
                GprPhase::Provisioning => this.provision(epoch, &g).await,
                _ => this.release(epoch, &g).await,
            };
            if let Err(error) = result {
                tracing::warn!(gpr = g.id, error = %format!("{error:?}"), "lifecycle job failed; the next tick retries");
            }
            if let Ok(mut jobs) = this.in_flight.lock() {
                jobs.remove(&g.id);
            }
            this.handle.wake();
        });
        // The job may have finished already (and removed its entry): then there is nothing to keep.
        if let Ok(mut jobs) = self.in_flight.lock()
            && let Some(slot) = jobs.get_mut(&id)
        {
            *slot = Some(task.abort_handle());
        }
    }

    /// Stops the jobs running here (on the way out): each is resumable from its recorded steps.
    fn abandon_jobs(&self) {
        if let Ok(mut jobs) = self.in_flight.lock() {
            for (_, task) in jobs.drain() {
                if let Some(task) = task {
                    task.abort();
                }
            }
        }
    }

    async fn job_for(&self, g: &gpr::Model) -> Result<(NodeJob, Arc<dyn ClusterProvider>)> {
        let links = gpr_node::Entity::find().filter(gpr_node::Column::GprId.eq(g.id)).all(&self.db).await?;
        let node_ids: Vec<i64> = links.iter().map(|l| l.node_id).collect();
        let nodes = node::Entity::find().filter(node::Column::Id.is_in(node_ids)).all(&self.db).await?;
        let cluster = match g.assigned_cluster_id {
            Some(id) => cluster::Entity::find_by_id(id).one(&self.db).await?,
            None => None,
        };
        let slice = slice::Entity::find_by_id(g.slice_id).one(&self.db).await?;
        let provider = match cluster.as_ref().map(|c| c.provider) {
            Some(egs_entities::ClusterProvider::Kubernetes) => match &self.providers.kubernetes {
                Some(provider) => provider.clone(),
                None => Arc::new(provider::Unavailable("this replica was started without the Kubernetes provider")),
            },
            _ => self.providers.simulated.clone(),
        };
        let namespaces = match &cluster {
            Some(c) => slice_namespace::Entity::find()
                .filter(slice_namespace::Column::SliceId.eq(g.slice_id))
                .filter(slice_namespace::Column::ClusterId.eq(c.id))
                .all(&self.db)
                .await?
                .into_iter()
                .map(|n| n.name)
                .collect(),
            None => Vec::new(),
        };
        // `<cluster>/<namespace>/<name>`: the resource lives in the cluster it came from.
        let resource = g.source_ref.as_deref().and_then(|r| {
            let mut parts = r.splitn(3, '/');
            let (from, ns, name) = (parts.next()?, parts.next()?, parts.next()?);
            (Some(from) == cluster.as_ref().map(|c| c.name.as_str())).then(|| (ns.to_owned(), name.to_owned()))
        });
        let job = NodeJob {
            gpr_id: g.id,
            gpr_name: g.name.clone(),
            slice_name: slice.map(|s| s.name).unwrap_or_default(),
            cluster_id: cluster.as_ref().map_or(0, |c| c.id),
            cluster_name: cluster.map(|c| c.name).unwrap_or_default(),
            expected_gpus: nodes.iter().map(|n| (n.name.clone(), n.gpus_per_node)).collect(),
            unhealthy_nodes: nodes.iter().filter(|n| matches!(n.health, Health::Unhealthy | Health::Stale)).map(|n| n.name.clone()).collect(),
            node_names: nodes.into_iter().map(|n| n.name).collect(),
            namespaces,
            resource,
            exit_at: g.exit_at,
        };
        Ok((job, provider))
    }

    /// Waits until no releasing GPR (a preemption victim) still holds one of `g`'s nodes.
    async fn wait_for_nodes(&self, g: &gpr::Model) -> Result<()> {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(state::RELEASE_ALLOWANCE_SECS as u64);
        loop {
            let mine: Vec<i64> =
                gpr_node::Entity::find().filter(gpr_node::Column::GprId.eq(g.id)).all(&self.db).await?.iter().map(|l| l.node_id).collect();
            let others: Vec<i64> = gpr_node::Entity::find()
                .filter(gpr_node::Column::NodeId.is_in(mine))
                .filter(gpr_node::Column::GprId.ne(g.id))
                .all(&self.db)
                .await?
                .iter()
                .map(|l| l.gpr_id)
                .collect();
            let releasing = !others.is_empty()
                && gpr::Entity::find()
                    .filter(gpr::Column::Id.is_in(others))
                    .filter(gpr::Column::Phase.eq(GprPhase::Releasing))
                    .one(&self.db)
                    .await?
                    .is_some();
            if !releasing || tokio::time::Instant::now() > deadline {
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }

    async fn provision(&self, epoch: i64, g: &gpr::Model) -> Result<()> {
        self.wait_for_nodes(g).await?;
        let (job, provider) = self.job_for(g).await?;
        let log = steps::DbStepLog::new(self.db.clone(), g.id, StepOperation::Provision, true);
        let outcome = provider.provision(&job, &log).await;
        let now = self.now();
        let txn = self.fenced(epoch).await?;
        let Some(current) = gpr::Entity::find_by_id(g.id).one(&txn).await? else { return Ok(()) };
        if current.phase != GprPhase::Provisioning {
            return Ok(());
        }
        match outcome {
            Ok(()) => {
                // The window ends as planned at admission at the latest: a provisioning that
                // overran its allowance shortens the window rather than break promises.
                let planning = &self.handle.planning;
                let mut exit = now + Duration::seconds(current.duration_secs);
                if let Some(admitted) = current.holding_since {
                    exit = exit.min(admitted + Duration::seconds(planning.latest_window_end(0, current.duration_secs)));
                }
                let changes = gpr::ActiveModel {
                    phase: Set(GprPhase::Provisioned),
                    provisioned_at: Set(Some(now)),
                    exit_at: Set(Some(exit)),
                    holding_since: Set(None),
                    holds_until: Set(Some(exit + Duration::seconds(planning.release_allowance))),
                    milestones_done: Set(0),
                    version: Set(current.version + 1),
                    updated_at: Set(Utc::now()),
                    ..Default::default()
                };
                gpr::Entity::update_many()
                    .set(changes)
                    .filter(gpr::Column::Id.eq(g.id))
                    .filter(gpr::Column::Version.eq(current.version))
                    .exec(&txn)
                    .await?;
                record_event(&txn, &current, GprEventKind::PrecheckPassed, format!("nodes ready: {}", job.node_names.join(", ")), ACTOR).await?;
                record_event(&txn, &current, GprEventKind::Provisioned, format!("the nodes are the slice's until {}", exit.to_rfc3339()), ACTOR)
                    .await?;
            }
            Err(ProviderError::Transient(message)) => {
                // Left in PROVISIONING: the next tick tries again.
                tracing::warn!(gpr = g.id, %message, "provisioning will be retried");
                // Not while holding the lease row (the fenced transaction locks it).
                drop(txn);
                tokio::time::sleep(RETRY_PAUSE).await;
                return Ok(());
            }
            Err(ProviderError::Permanent(message)) => {
                record_event(&txn, &current, GprEventKind::PrecheckFailed, message.clone(), ACTOR).await?;
                self.give_back(&txn, &current, current.requeue_on_failure, &format!("provisioning failed: {message}")).await?;
            }
        }
        self.commit(txn).await?;
        Ok(())
    }

    async fn release(&self, epoch: i64, g: &gpr::Model) -> Result<()> {
        let (job, provider) = self.job_for(g).await?;
        let log = steps::DbStepLog::new(self.db.clone(), g.id, StepOperation::Release, true);
        if let Err(error) = provider.release(&job, &log).await {
            tracing::warn!(gpr = g.id, error = %error, "release will be retried");
            tokio::time::sleep(RETRY_PAUSE).await;
            return Ok(());
        }
        let txn = self.fenced(epoch).await?;
        let Some(current) = gpr::Entity::find_by_id(g.id).one(&txn).await? else { return Ok(()) };
        if current.phase != GprPhase::Releasing {
            return Ok(());
        }
        let requeue = current.release_reason == Some(ReleaseReason::Preempted)
            && slice::Entity::find_by_id(current.slice_id).one(&txn).await?.is_some_and(|s| s.policy.requeue_on_eviction);
        self.give_back(&txn, &current, requeue, "").await?;
        self.commit(txn).await?;
        Ok(())
    }

    /// Returns a GPR's nodes to the pool and ends it: COMPLETED (after a release), FAILED, or
    /// QUEUED again when it is to be requeued.
    async fn give_back(&self, txn: &DatabaseTransaction, g: &gpr::Model, requeue: bool, failure: &str) -> Result<()> {
        let now = self.now();
        let links = gpr_node::Entity::find().filter(gpr_node::Column::GprId.eq(g.id)).all(txn).await?;
        let node_ids: Vec<i64> = links.iter().map(|l| l.node_id).collect();
        node::Entity::update_many()
            .col_expr(node::Column::State, Expr::value(NodeState::Available))
            .col_expr(node::Column::AllocatedGprId, Expr::value(Option::<i64>::None))
            .filter(node::Column::Id.is_in(node_ids))
            .filter(node::Column::AllocatedGprId.eq(g.id))
            .exec(txn)
            .await?;
        let mut changes = gpr::ActiveModel {
            holding_since: Set(None),
            holds_until: Set(None),
            version: Set(g.version + 1),
            updated_at: Set(Utc::now()),
            ..Default::default()
        };
        let (kind, message) = if requeue {
            gpr_node::Entity::delete_many().filter(gpr_node::Column::GprId.eq(g.id)).exec(txn).await?;
            changes.phase = Set(GprPhase::Queued);
            changes.reason = Set(Some(if failure.is_empty() { "requeued after preemption".into() } else { format!("requeued: {failure}") }));
            changes.assigned_cluster_id = Set(None);
            changes.assigned_instance_type = Set(None);
            changes.assigned_gpu_shape = Set(None);
            changes.start_no_later_than = Set(None);
            changes.estimated_start_at = Set(None);
            changes.provisioned_at = Set(None);
            changes.exit_at = Set(None);
            changes.milestones_done = Set(0);
            (GprEventKind::Requeued, "back in the queue".to_owned())
        } else if !failure.is_empty() {
            changes.phase = Set(GprPhase::Failed);
            changes.reason = Set(Some(failure.to_owned()));
            changes.completed_at = Set(Some(now));
            (GprEventKind::Failed, failure.to_owned())
        } else {
            changes.phase = Set(GprPhase::Completed);
            changes.completed_at = Set(Some(now));
            (GprEventKind::Completed, "the nodes are back in the pool".to_owned())
        };
        gpr::Entity::update_many().set(changes).filter(gpr::Column::Id.eq(g.id)).filter(gpr::Column::Version.eq(g.version)).exec(txn).await?;
        if requeue && !failure.is_empty() {
            record_event(txn, g, GprEventKind::Failed, failure.to_owned(), ACTOR).await?;
        }
        record_event(txn, g, kind, message, ACTOR).await?;
        Ok(())
    }
}
