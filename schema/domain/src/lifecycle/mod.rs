//! The GPR lifecycle in the gateway (docs/design.md §3, §4): a scheduler loop that only the holder of
//! the leader lease runs, woken on changes and on a timer. The leader keeps the pure core in
//! memory ([`driver::Driver`]), feeds it what was stored since the last tick, plans, and
//! persists every decision in transactions fenced by the lease epoch; provisioning and release
//! run as background jobs through a [`ClusterProvider`].
//! Timers (25/50/75 %, exit warning, exit) are derived from stored state plus a bit set of
//! the ones already written, so a restart or a new leader neither loses nor repeats one.

pub mod driver;
mod estimates;
mod jobs;
mod lease;
pub mod provider;
pub mod questions;
pub mod state;
pub mod steps;
mod tick;

use crate::auth::Principal;
use crate::error::Result;
use crate::ports::{ClusterProvider, ExtensionFit, LeaderTasks, Planner, PlannerHold};
use chrono::{DateTime, Duration, Utc};
use egs_scheduler::{ExtensionRoom, PoolEstimate, Request, Scheduler, WhatIfChange, WhatIfMove};
use sea_orm::{DatabaseConnection, DatabaseTransaction, TransactionTrait};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

use crate::ports::Clock;

const LEASE: &str = "scheduler";
const ACTOR: &str = "scheduler";
/// How long a job that failed transiently (API server unreachable, eviction blocked) waits
/// before it gives its slot back, so the next tick's retry does not hammer the cluster.
const RETRY_PAUSE: std::time::Duration = std::time::Duration::from_secs(2);
/// An estimate change smaller than this is not worth an event (a promise moving later always is).
const ESTIMATE_EVENT_SECS: i64 = 300;

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
    pub planning: egs_scheduler::Config,
    wake: Notify,
    /// The leader's scheduler; `None` on other replicas (and until the first tick).
    driver: tokio::sync::Mutex<Option<driver::Driver>>,
    /// Planning questions: shared planned copies, bounded per user and per replica.
    pub questions: questions::Questions,
    /// How long each of this replica's ticks took (exported as
    /// `egs_scheduler_tick_duration_seconds`): the figure the fleet-scale target is held to.
    pub tick_seconds: prometheus_client::metrics::histogram::Histogram,
}

/// Bounds of the tick histogram, in seconds: fine below the 50 ms a tick must stay under at
/// fleet scale, and one bound at 50 ms itself, so a quantile says which side of it a tick fell.
const TICK_BUCKETS: [f64; 14] = [0.000_5, 0.001, 0.002, 0.004, 0.008, 0.016, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

impl SchedulerHandle {
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        let planning = egs_scheduler::Config::live(state::PROVISIONING_ALLOWANCE_SECS, state::RELEASE_ALLOWANCE_SECS);
        let tick_seconds = prometheus_client::metrics::histogram::Histogram::new(TICK_BUCKETS);
        Self { clock, planning, wake: Notify::new(), driver: tokio::sync::Mutex::new(None), questions: questions::Questions::new(), tick_seconds }
    }

    /// Plans with `planning` instead of the default allowances.
    pub fn with_planning(mut self, planning: egs_scheduler::Config) -> Self {
        self.planning = planning;
        self
    }

    /// Something changed that the scheduler should look at now.
    pub fn wake(&self) {
        self.questions.changed();
        self.wake.notify_one();
    }

    /// The scheduler as it stands now, not yet planned: on the leader a copy of its own brought
    /// up to date with storage (with the lock that keeps its passes waiting); elsewhere, or
    /// when the leader is busy for longer than a request should wait, the shadow driver's
    /// (fed, like the leader's, only what changed since its last look).
    async fn current<C>(&self, db: &C, now: DateTime<Utc>) -> Result<(Scheduler, Option<tokio::sync::MutexGuard<'_, Option<driver::Driver>>>)>
    where
        C: sea_orm::ConnectionTrait + TransactionTrait,
    {
        if let Ok(mut slot) = tokio::time::timeout(COPY_WAIT, self.driver.lock()).await
            && let Some(driver) = slot.as_mut()
        {
            match driver.look(db, now, &self.planning).await {
                Ok(true) => return Ok((driver.core.clone(), Some(slot))),
                // The next tick builds it again.
                _ => *slot = None,
            }
        }
        Ok((self.questions.from_shadow(db, now, &self.planning).await?, None))
    }

    /// A planned copy of the scheduler as it stands now (see [`Self::current`]), shared with
    /// the other questions asked meanwhile (see [`questions`]): the leader's passes go on.
    async fn planned_copy<C>(&self, db: &C, now: DateTime<Utc>) -> Result<Arc<Scheduler>>
    where
        C: sea_orm::ConnectionTrait + TransactionTrait,
    {
        self.questions.planned(now, async { Ok(self.current(db, now).await?.0) }).await
    }

    /// Answers a planning question of `who` ("Get wait time", an extension's room) on a
    /// shared planned copy, off the async workers; refused (`RATE_LIMITED`) when `who` has
    /// too many in flight or every planner stays busy.
    async fn ask<C, T>(&self, who: Principal, db: &C, now: DateTime<Utc>, question: impl FnOnce(&Scheduler) -> T + Send + 'static) -> Result<T>
    where
        C: sea_orm::ConnectionTrait + TransactionTrait,
        T: Send + 'static,
    {
        let _seat = self.questions.seat(who)?;
        let core = self.planned_copy(db, now).await?;
        self.questions.run(move || question(&core)).await
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

#[async_trait::async_trait]
impl Planner for SchedulerHandle {
    fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    async fn wait_times(&self, who: Principal, db: &DatabaseConnection, request: Request, now: DateTime<Utc>) -> Result<Vec<PoolEstimate>> {
        let t = now.timestamp();
        self.ask(who, db, now, move |core| core.wait_time(&request, t)).await
    }

    async fn extension_room(
        &self,
        who: Principal,
        db: &DatabaseConnection,
        gpr: i64,
        up_to: i64,
        step: i64,
        now: DateTime<Utc>,
    ) -> Result<Option<ExtensionRoom>> {
        let t = now.timestamp();
        self.ask(who, db, now, move |core| core.extension_room(gpr, up_to, step, t)).await
    }

    async fn what_if(&self, who: Principal, db: &DatabaseConnection, changes: Vec<WhatIfChange>, now: DateTime<Utc>) -> Result<Vec<WhatIfMove>> {
        let t = now.timestamp();
        self.ask(who, db, now, move |core| core.what_if(&changes, t)).await
    }

    /// On the leader no pass runs while the hold lives, so no new promise can be made between
    /// the check and the stored change; elsewhere the leader's next pass sees the change.
    /// Counted as a question of `who`.
    async fn hold_for_extension<'a>(
        &'a self,
        who: Principal,
        db: &DatabaseConnection,
        gpr: i64,
        by: i64,
        step: i64,
        now: DateTime<Utc>,
    ) -> Result<ExtensionFit<'a>> {
        let seat = self.questions.seat(who)?;
        let (core, passes_wait) = self.current(db, now).await?;
        let core = Arc::new(self.questions.plan(core, now.timestamp()).await?);
        let t = now.timestamp();
        let asked = core.clone();
        let fits = self.questions.run(move || asked.extension_room(gpr, by, by, t)).await?;
        match fits {
            Some(room) if room.room >= by => Ok(ExtensionFit::Fits(PlannerHold(Box::new((passes_wait, seat))))),
            None => Ok(ExtensionFit::TooLong(None)),
            // How much would fit: the leader's passes need not wait for that search.
            Some(_) => {
                drop(passes_wait);
                Ok(ExtensionFit::TooLong(self.questions.run(move || core.extension_room(gpr, by, step, t)).await?))
            }
        }
    }
}

/// How long a planning question waits for the leader's tick before it asks the shadow driver.
const COPY_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

/// The providers a lifecycle hands jobs to, by cluster provider.
pub struct Providers {
    pub simulated: Arc<dyn ClusterProvider>,
    /// `None` when this replica cannot reach Kubernetes clusters: their jobs fail, saying so.
    pub kubernetes: Option<Arc<dyn ClusterProvider>>,
    /// Started while this replica leads (the Kubernetes controllers).
    pub leader_tasks: Option<Arc<dyn LeaderTasks>>,
}

/// A database pool of the leader's own (PostgreSQL): opened on the scheduler's thread, so its
/// connections wake that thread's runtime, and never waiting behind requests or jobs for a
/// connection. SQLite has one writer, which the leader shares.
pub struct LeaderPool {
    pub options: sea_orm::ConnectOptions,
    /// Counts its statements with the gateway's.
    pub statements: prometheus_client::metrics::counter::Counter,
}

pub struct Lifecycle {
    /// The gateway's pool: the provider jobs' reads and writes.
    db: DatabaseConnection,
    /// The leader's own pool once [`Self::run_on_own_thread`] opened it; until then (and on
    /// SQLite) the gateway's.
    leader_db: std::sync::OnceLock<DatabaseConnection>,
    leader_pool: Option<LeaderPool>,
    /// The gateway's runtime: provider jobs, and what the tick's callees spawn, run there, so
    /// the leader's thread runs only ticks.
    jobs: tokio::runtime::Handle,
    handle: Arc<SchedulerHandle>,
    providers: Providers,
    config: LifecycleConfig,
    /// Provider jobs running in this process (a GPR id appears once).
    /// Aborted when the loop stops: a job is resumable, so the next leader finishes it.
    in_flight: Mutex<HashMap<i64, Option<tokio::task::AbortHandle>>>,
    /// Told after every commit, so subscribers see the events it wrote at once.
    events: Arc<crate::events::EventFeed>,
}

impl Lifecycle {
    /// `jobs`: the gateway's runtime. `leader_pool`: see [`LeaderPool`]; `None` to share `db`.
    pub fn new(
        db: DatabaseConnection,
        leader_pool: Option<LeaderPool>,
        jobs: tokio::runtime::Handle,
        handle: Arc<SchedulerHandle>,
        providers: Providers,
        config: LifecycleConfig,
        events: Arc<crate::events::EventFeed>,
    ) -> Arc<Self> {
        Arc::new(Self {
            db,
            leader_db: std::sync::OnceLock::new(),
            leader_pool,
            jobs,
            handle,
            providers,
            config,
            in_flight: Mutex::new(HashMap::new()),
            events,
        })
    }

    /// Where the loop itself (lease, looks, ticks) reads and writes.
    fn leader(&self) -> &DatabaseConnection {
        self.leader_db.get().unwrap_or(&self.db)
    }

    fn set_leading(&self, leading: bool) {
        if let Some(tasks) = &self.providers.leader_tasks {
            // The controllers it starts belong to the gateway's runtime.
            let _gateway = self.jobs.enter();
            tasks.set_leading(leading);
        }
    }

    /// Commits a fenced transaction and lets subscribers see the events it wrote.
    async fn commit(&self, txn: DatabaseTransaction) -> Result<()> {
        txn.commit().await?;
        // Telling the other replicas spawns a task: on the gateway's runtime.
        let _gateway = self.jobs.enter();
        self.events.changed();
        Ok(())
    }

    /// Runs [`Self::run`] on a thread of its own, with a runtime of its own; the receiver
    /// resolves when the loop has ended (and handed the lease back).
    ///
    /// A tick awaits the database a dozen times. On the gateway's runtime each of those
    /// wake-ups queued behind every request and subscription task ready to run: with 1,000
    /// `queueChanged` subscribers, writing a moved queue's estimates took a tick 300–500 ms, of
    /// which PostgreSQL spent about 40. The operating system runs a thread that mostly sleeps
    /// as soon as it wakes.
    pub fn run_on_own_thread(
        self: Arc<Self>,
        stop: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<tokio::sync::oneshot::Receiver<()>> {
        let (ended, ends) = tokio::sync::oneshot::channel();
        std::thread::Builder::new().name("egs-scheduler".into()).spawn(move || {
            match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(runtime) => runtime.block_on(async move {
                    if let Some(pool) = &self.leader_pool {
                        let statements = pool.statements.clone();
                        match sea_orm::Database::connect(pool.options.clone()).await {
                            Ok(mut db) => {
                                db.set_metric_callback(move |_| {
                                    statements.inc();
                                });
                                let _ = self.leader_db.set(db);
                            }
                            Err(error) => tracing::warn!(%error, "the scheduler's own database pool did not open; it shares the gateway's"),
                        }
                    }
                    self.run(stop).await
                }),
                Err(error) => tracing::error!(%error, "the scheduler's runtime did not start; this replica does not schedule"),
            }
            let _ = ended.send(());
        })?;
        Ok(ends)
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
                    let started = std::time::Instant::now();
                    if let Err(error) = self.clone().tick(epoch).await {
                        tracing::warn!(error = %format!("{error:?}"), "scheduler tick failed; retrying");
                    }
                    self.handle.tick_seconds.observe(started.elapsed().as_secs_f64());
                    // The pass may have admitted, preempted or moved estimates.
                    self.handle.questions.changed();
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
}
