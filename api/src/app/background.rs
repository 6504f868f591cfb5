//! What the gateway runs beside its HTTP server, in one list ([`Background::start`]): every
//! long-lived loop by name, started together before the server answers and stopped together
//! once it has finished. Nothing else starts a loop that outlives a request: the services spawn
//! only tasks that end with the work they serve (a queue view's reader while it is watched, a
//! batch of reports, a kubeconfig's revocation).

use crate::replicas::{self, RedisHealth, RedisMetrics};
use anyhow::Context;
use axum::Router;
use egs_domain::App;
use egs_domain::alerts::webhook::Webhook;
use egs_domain::lifecycle::Lifecycle;
use egs_domain::ports::Clock;
use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinSet;

/// What the build prepared for the loops: the optional ones, and what they need beside [`App`].
pub struct Loops {
    /// The scheduler's loop; `None` when this replica serves the API only.
    pub lifecycle: Option<Arc<Lifecycle>>,
    /// Posts alert transitions, when a webhook is configured.
    pub webhook: Option<Arc<Webhook>>,
    /// How often the time-driven alert rules run.
    pub alert_sweep: Duration,
    /// The lifecycle's clock, which the idle-GPR alert and usage rollups read.
    pub clock: Arc<dyn Clock>,
    /// `--demo`: simulated agents report samples and pods for the simulated clusters.
    pub demo_telemetry: bool,
    /// `--metrics-listen`: `/metrics` without a token, on a private address.
    pub metrics_server: Option<(TcpListener, Router)>,
    /// Redis's listeners and health check, in distributed mode.
    pub redis: Option<RedisLoops>,
    /// The probe behind `/readyz`'s database check (PostgreSQL only).
    pub db_probe: Option<BoxFuture<'static, ()>>,
}

/// Redis's side of the loops: the channels this replica hears.
pub struct RedisLoops {
    pub client: redis::Client,
    pub connection: redis::aio::ConnectionManager,
    pub deployment: String,
    /// This replica in its messages, so it skips its own.
    pub origin: u64,
    pub metrics: Option<Arc<RedisMetrics>>,
    pub health: Arc<RedisHealth>,
}

/// The running loops.
pub struct Background {
    stop: watch::Sender<bool>,
    tasks: JoinSet<()>,
    names: HashMap<tokio::task::Id, &'static str>,
    /// The scheduler runs on a thread of its own; this fires when it has handed its lease back.
    scheduler: Option<oneshot::Receiver<()>>,
}

impl Background {
    /// Starts every loop.
    pub fn start(app: &App, loops: Loops) -> anyhow::Result<Self> {
        let (stop, _) = watch::channel(false);
        let mut running = Self { stop, tasks: JoinSet::new(), names: HashMap::new(), scheduler: None };
        let until = running.until_stopped();

        running.spawn("gpr event tailer", app.events.clone().run(until()));
        running.spawn("alert tailer", app.alerts.clone().run(until()));
        running.spawn(
            "alert sweeper",
            egs_domain::alerts::sweeper::run_sweeper(app.db.clone(), app.alerts.clone(), loops.clock.clone(), loops.alert_sweep, until()),
        );
        if let Some(webhook) = loops.webhook {
            running.spawn("alert webhook", webhook.run(until()));
        }
        running.spawn("notifier", app.notifier.clone().run(until()));
        running.spawn("usage rollup", egs_domain::usage::run(app.db.clone(), loops.clock.clone(), egs_domain::usage::EVERY, until()));
        if loops.demo_telemetry {
            running.spawn("demo telemetry", crate::demo::telemetry::run(app.clone(), until()));
        }
        if let Some((listener, router)) = loops.metrics_server {
            let stopped = until();
            running.spawn("metrics server", async move {
                if let Err(error) = axum::serve(listener, router).with_graceful_shutdown(stopped).await {
                    tracing::warn!(error = %error, "the /metrics listener failed");
                }
            });
        }
        if let Some(probe) = loops.db_probe {
            running.spawn_until_stopped("database probe", probe);
        }
        if let Some(redis) = loops.redis {
            running.start_redis(app, redis);
        }
        if let Some(lifecycle) = loops.lifecycle {
            running.scheduler = Some(lifecycle.run_on_own_thread(until()).context("failed to start the scheduler's thread")?);
        }
        Ok(running)
    }

    fn start_redis(&mut self, app: &App, redis: RedisLoops) {
        let RedisLoops { client, connection, deployment, origin, metrics, health } = redis;
        let d = deployment.as_str();
        self.spawn_until_stopped("redis: token revocations", replicas::revocation_listener(client.clone(), d, app.token_cache.clone()));
        let (events, scheduler) = (app.events.clone(), app.scheduler.clone());
        self.spawn_until_stopped("redis: gpr events", replicas::event_listener(client.clone(), d, events, scheduler, origin));
        self.spawn_until_stopped("redis: alerts", replicas::alert_listener(client.clone(), d, app.alerts.clone()));
        self.spawn_until_stopped("redis: inventory", replicas::inventory_listener(client.clone(), d, app.inventory.clone()));
        if let Some(fanout) = metrics {
            self.spawn_until_stopped("redis: gpu samples", replicas::metrics_listener(client, app.samples.clone(), fanout));
        }
        // While Redis is away every replica still finds what the others stored on its timers;
        // when it is back, look at once rather than at the next poll.
        let (events, alerts, inventory) = (app.events.clone(), app.alerts.clone(), app.inventory.clone());
        let checking = health.checking(connection, move || {
            events.wake();
            alerts.wake();
            inventory.wake();
        });
        self.spawn_until_stopped("redis: health check", checking);
    }

    /// A future that completes when the loops are told to stop.
    fn until_stopped(&self) -> impl Fn() -> BoxFuture<'static, ()> + use<> {
        let stopped = self.stop.subscribe();
        move || {
            let mut stopped = stopped.clone();
            Box::pin(async move {
                let _ = stopped.wait_for(|s| *s).await;
            })
        }
    }

    /// Runs `work`, which watches the stop signal itself.
    fn spawn(&mut self, name: &'static str, work: impl Future<Output = ()> + Send + 'static) {
        let id = self.tasks.spawn(work).id();
        self.names.insert(id, name);
    }

    /// Runs `work`, which would run forever, until the loops are told to stop.
    fn spawn_until_stopped(&mut self, name: &'static str, work: impl Future<Output = ()> + Send + 'static) {
        let stopped = self.until_stopped()();
        self.spawn(name, async move {
            tokio::select! {
                () = work => {}
                () = stopped => {}
            }
        });
    }

    /// Tells every loop to stop and waits for each; the scheduler hands its lease back.
    pub async fn stop(mut self) {
        let _ = self.stop.send(true);
        while let Some(ended) = self.tasks.join_next_with_id().await {
            if let Err(error) = ended {
                let name = self.names.get(&error.id()).copied().unwrap_or("a background loop");
                tracing::warn!(task = name, error = %error, "a background loop ended abnormally");
            }
        }
        if let Some(ended) = self.scheduler
            && ended.await.is_err()
        {
            tracing::warn!("the scheduler loop ended abnormally");
        }
    }
}
