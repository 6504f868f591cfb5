//! Building and running the gateway: `Application::build` binds the listener (port 0 works, so
//! tests get a free port) and wires state; `run_until_stopped` serves until shutdown.

use crate::db::{self, StatementCounter};
use crate::kubernetes::KubeClusters;
use crate::kubernetes::admission;
use crate::kubernetes::context::{ControllerConfig, ControllerContext};
use crate::kubernetes::controllers::Controllers;
use crate::kubernetes::provision::{EvictionPolicy, KubernetesProvider};
use crate::metrics::Metrics;
use crate::settings::ServeArgs;
use crate::{bootstrap, demo, graphql_http, graphql_ws, health, playground, portal, replicas};
use anyhow::Context;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::routing::get;
use egs_domain::Alone;
use egs_domain::Services;
use egs_domain::alerts::hub::AlertHub;
use egs_domain::alerts::webhook::Webhook;
use egs_domain::auth::{NoReplicas, TokenCache};
use egs_domain::clock::SystemClock;
use egs_domain::cluster::credentials::CredentialCipher;
use egs_domain::events::EventHub;
use egs_domain::inventory::live::InventoryFeed;
use egs_domain::lifecycle::provider::SimulatedProvider;
use egs_domain::lifecycle::{Lifecycle, LifecycleConfig, Providers, SchedulerHandle};
use egs_domain::metrics::MetricsStore;
use egs_domain::notify::{Notifier, NotifierConfig};
use egs_domain::ports::{Announce, Clock, RevocationBroadcast};
use egs_schema::{EgsSchema, SchemaOptions, build_schema};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tower_http::compression::CompressionLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};

/// Everything a handler may need; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub schema: EgsSchema,
    pub services: Services,
    pub metrics: Arc<Metrics>,
    pub statements: StatementCounter,
    /// Whether Redis answers, when it is configured.
    pub redis: Option<Arc<replicas::RedisHealth>>,
    /// Open GraphQL WebSockets: their settings, and closing them on shutdown.
    pub sockets: Arc<graphql_ws::Sockets>,
    /// What each user holds open on this replica (connections, live operations).
    pub per_user: Arc<crate::per_user::PerUser>,
    /// Whether PostgreSQL answers (`None` on SQLite).
    pub db_watch: Option<Arc<crate::db_watch::DbWatch>>,
    /// Single sign-on, when an issuer is configured.
    pub oidc: Option<Arc<crate::oidc::Oidc>>,
}

pub struct Application {
    listener: TcpListener,
    router: Router,
    /// `--metrics-listen`: `/metrics` without a token, on a private address.
    metrics: Option<(TcpListener, Router)>,
    state: AppState,
    /// The bootstrap admin token, when this start created the admin (first start).
    pub admin_token: Option<String>,
    /// `None` when this replica serves the API only.
    lifecycle: Option<Arc<Lifecycle>>,
    /// Posts alert transitions, when a webhook is configured.
    webhook: Option<Arc<Webhook>>,
    /// How often the time-driven alert rules run.
    alert_sweep: std::time::Duration,
    /// The lifecycle's clock, which the idle-GPR alert reads like the idle release.
    clock: Arc<dyn Clock>,
    /// `--demo`: simulated agents report samples and pods for the simulated clusters.
    demo_telemetry: bool,
}

impl Application {
    pub async fn build(settings: ServeArgs) -> anyhow::Result<Self> {
        Self::build_with_clock(settings, Arc::new(SystemClock)).await
    }

    /// Like [`Application::build`], with the clock the lifecycle reads (tests move it forward).
    pub async fn build_with_clock(settings: ServeArgs, clock: Arc<dyn Clock>) -> anyhow::Result<Self> {
        let statements = StatementCounter::default();
        let db = db::connect(&settings.storage, &statements).await?;
        let applied = db::migrate(&db).await?;
        if applied > 0 {
            tracing::info!(migrations.applied = applied, "database migrated");
        }
        let reads = db::connect_reads(&settings.storage, &statements, &db).await?;
        let keys = bootstrap::load_signing_key(&settings.storage)?;
        let admin_token = bootstrap::ensure_initialized(&db, &keys, &settings.storage.data_dir).await?;
        let token_cache = Arc::new(TokenCache::default());
        let redis = match &settings.redis_url {
            Some(url) => {
                let info = redis::IntoConnectionInfo::into_connection_info(url.expose()).context("the Redis URL is not valid")?;
                // Pub/sub messages are small: without TCP_NODELAY one may wait for the previous
                // one's delayed ACK (up to 40 ms on Linux) before it leaves.
                let tcp = info.tcp_settings().clone().set_nodelay(true);
                let client = redis::Client::open(info.set_tcp_settings(tcp)).context("the Redis URL is not valid")?;
                let manager = connect_redis(client.clone())?;
                replicas::spawn_revocation_listener(client.clone(), keys.deployment(), token_cache.clone());
                Some((manager, client))
            }
            None => None,
        };
        let fanouts = Fanouts::new(redis.as_ref().map(|(manager, _)| manager), keys.deployment());
        let metrics = Arc::new(match &fanouts.metrics {
            Some(redis) => MetricsStore::with_fanout(redis.clone()),
            None => MetricsStore::new(),
        });
        let webhook_url = settings.alerts.webhook_url()?;
        let webhook = match webhook_url.as_ref().filter(|url| !url.expose().trim().is_empty()) {
            Some(url) => {
                let webhook = Webhook::new(url.expose())?;
                tracing::info!(webhook = %webhook.shown(), "alerts are posted to a webhook");
                Some(webhook)
            }
            None => None,
        };
        let events = EventHub::new(db.clone(), fanouts.events).await.context("failed to read the newest GPR event")?;
        let alerts = AlertHub::new(db.clone(), fanouts.alerts, webhook.clone()).await.context("failed to read the newest alert transition")?;
        let inventory = InventoryFeed::new(db.clone(), fanouts.inventory, events.clone());
        // Releases are planned to take the eviction deadline plus a minute for the other steps.
        let release_allowance = settings.kubernetes.eviction_deadline_secs as i64 + 60;
        let planning = egs_scheduler::Config::live(egs_domain::lifecycle::state::PROVISIONING_ALLOWANCE_SECS, release_allowance);
        let scheduler = Arc::new(SchedulerHandle::new(clock.clone()).with_planning(planning));
        let redis = redis.map(|(manager, client)| {
            replicas::spawn_event_listener(client.clone(), keys.deployment(), events.clone(), scheduler.clone(), fanouts.origin);
            replicas::spawn_alert_listener(client.clone(), keys.deployment(), alerts.clone());
            replicas::spawn_inventory_listener(client.clone(), keys.deployment(), inventory.clone());
            if let Some(fanout) = &fanouts.metrics {
                replicas::spawn_metrics_listener(client, metrics.clone(), fanout.clone());
            }
            // While Redis is away every replica still finds what the others stored on its
            // timers; when it is back, look at once rather than at the next poll.
            let (events, alerts, inventory) = (events.clone(), alerts.clone(), inventory.clone());
            replicas::RedisHealth::watch(manager, move || {
                events.wake();
                alerts.wake();
                inventory.wake();
            })
        });
        let credentials_key = *keys.credentials_key();
        let sign_in_key = *keys.sign_in_key();
        let kubernetes = KubeClusters::new(db.clone(), CredentialCipher::new(&credentials_key), &settings.kubernetes.slice_pod_security);
        let lifecycle = (!settings.no_scheduler).then(|| {
            let k8s = &settings.kubernetes;
            let eviction = EvictionPolicy { deadline: Duration::from_secs(k8s.eviction_deadline_secs), ..Default::default() };
            let controllers = Controllers::new(ControllerContext {
                db: db.clone(),
                clusters: kubernetes.clone(),
                inventory: inventory.clone(),
                scheduler: scheduler.clone(),
                events: events.clone(),
                config: ControllerConfig {
                    cluster_poll: Duration::from_millis(k8s.cluster_poll_ms),
                    status_resync: Duration::from_millis(k8s.status_resync_ms),
                    auto_gpr_pending_for: Duration::from_secs(k8s.auto_gpr_after_secs),
                },
            });
            let providers = Providers {
                simulated: Arc::new(SimulatedProvider::new(Duration::from_millis(settings.simulated_step_ms))),
                kubernetes: Some(Arc::new(KubernetesProvider::new(kubernetes.clone(), eviction))),
                leader_tasks: Some(controllers),
            };
            let config = LifecycleConfig { lease_ttl: chrono::Duration::seconds(settings.lease_ttl_secs as i64), ..LifecycleConfig::default() };
            let leader_pool = db::leader_pool(&settings.storage, &statements);
            Lifecycle::new(db.clone(), leader_pool, tokio::runtime::Handle::current(), scheduler.clone(), providers, config, events.clone())
        });
        let mailer = match settings.notify.smtp_url()? {
            Some(url) => {
                let mailer = crate::mail::SmtpMailer::new(url.expose(), &settings.notify.smtp_from)?;
                tracing::info!(smtp = %mailer.shown(), "e-mail notification channels send through an SMTP server");
                Some(Arc::new(mailer) as Arc<dyn egs_domain::ports::Mailer>)
            }
            None => None,
        };
        let notifier_config = NotifierConfig {
            allow_private_targets: settings.notify.allow_private_targets,
            first_retry: Duration::from_millis(settings.notify.first_retry_ms),
            mail_domains: settings
                .notify
                .email_domains
                .iter()
                .map(|d| d.trim().trim_start_matches('@').to_lowercase())
                .filter(|d| !d.is_empty())
                .collect(),
            ..NotifierConfig::default()
        };
        let notifier = Notifier::new(db.clone(), events.clone(), mailer, kubernetes.clone(), notifier_config)?;
        let db_for_watch = db.clone();
        let services = Services {
            gpu_catalog: Default::default(),
            queue_views: egs_domain::gpr::queue_views::QueueViews::new(db.clone(), events.clone()),
            pod_names: Arc::default(),
            reports: egs_domain::metrics::batch::ReportBatcher::new(
                db.clone(),
                metrics.clone(),
                alerts.clone(),
                Duration::from_secs(settings.unwatched_report_interval_secs),
            ),
            db,
            reads,
            keys: Arc::new(keys),
            token_cache,
            revocations: fanouts.revocations,
            scheduler,
            events,
            metrics,
            alerts,
            inventory,
            credentials: Arc::new(CredentialCipher::new(&credentials_key)),
            kubernetes,
            notifier,
            subscription_setups: Arc::new(tokio::sync::Semaphore::new(egs_schema::SUBSCRIPTION_SETUPS)),
        };
        if settings.demo {
            demo::seed(&services, &settings.storage.data_dir).await.context("failed to seed the demo data")?;
        }
        let tick_seconds = services.scheduler.tick_seconds.clone();
        let sockets = Arc::new(graphql_ws::Sockets::new(graphql_ws::WsConfig::from_settings(&settings)));
        let state = AppState {
            schema: build_schema(
                services.clone(),
                SchemaOptions {
                    introspection: !settings.no_introspection,
                    cost_budget: settings.cost_budget(),
                    max_tokens_per_user: (settings.per_user.tokens > 0).then_some(settings.per_user.tokens),
                    agent_service_account: settings.kubernetes.agent_service_account.clone(),
                },
            ),
            services,
            metrics: Arc::new(Metrics::new(statements.0.clone(), tick_seconds)),
            statements,
            redis,
            sockets,
            per_user: crate::per_user::PerUser::new(settings.per_user.connections, settings.per_user.subscriptions),
            db_watch: crate::db_watch::DbWatch::spawn(&db_for_watch),
            oidc: crate::oidc::Oidc::from_settings(&settings.oidc, sign_in_key)?.map(Arc::new),
        };
        let router = router(state.clone(), &settings)?;
        let listener = TcpListener::bind(settings.listen).await.with_context(|| format!("failed to listen on {}", settings.listen))?;
        let metrics = match settings.metrics_listen {
            Some(address) => {
                let listener = TcpListener::bind(address).await.with_context(|| format!("failed to listen on {address} for /metrics"))?;
                Some((listener, Router::new().route("/metrics", get(health::metrics)).with_state(state.clone())))
            }
            None => None,
        };
        let alert_sweep = std::time::Duration::from_millis(settings.alerts.sweep_interval_ms);
        Ok(Self { listener, router, metrics, state, admin_token, lifecycle, webhook, alert_sweep, clock, demo_telemetry: settings.demo })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Where `/metrics` is served without a token, with `--metrics-listen`.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics.as_ref().and_then(|(listener, _)| listener.local_addr().ok())
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves until `shutdown` completes, then lets in-flight requests finish. The scheduler
    /// loop runs alongside (it leads only while this replica holds the lease) and hands the
    /// lease back on the way out.
    pub async fn run_until_stopped(self, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let until_stopped = move || {
            let mut stopped = stopped.clone();
            async move {
                let _ = stopped.wait_for(|s| *s).await;
            }
        };
        let tailer = tokio::spawn(self.state.services.events.clone().run(until_stopped()));
        let services = &self.state.services;
        let alert_tailer = tokio::spawn(services.alerts.clone().run(until_stopped()));
        let sweeper = tokio::spawn(egs_domain::alerts::sweeper::run_sweeper(
            services.db.clone(),
            services.alerts.clone(),
            self.clock.clone(),
            self.alert_sweep,
            until_stopped(),
        ));
        let webhook = self.webhook.map(|webhook| tokio::spawn(webhook.run(until_stopped())));
        let notifier = tokio::spawn(services.notifier.clone().run(until_stopped()));
        let usage = tokio::spawn(egs_domain::usage::run(services.db.clone(), self.clock.clone(), egs_domain::usage::EVERY, until_stopped()));
        let lifecycle = match self.lifecycle {
            Some(lifecycle) => Some(lifecycle.run_on_own_thread(until_stopped()).context("failed to start the scheduler's thread")?),
            None => None,
        };
        let demo = self.demo_telemetry.then(|| tokio::spawn(demo::telemetry::run(services.clone(), until_stopped())));
        let metrics = self.metrics.map(|(listener, router)| {
            let stopped = until_stopped();
            tokio::spawn(async move { axum::serve(listener, router).with_graceful_shutdown(stopped).await })
        });
        let served = axum::serve(self.listener, self.router)
            .with_graceful_shutdown(self.state.sockets.shut_down_on(shutdown))
            .await
            .context("the HTTP server failed");
        let _ = stop.send(true);
        let _ = tailer.await;
        let _ = alert_tailer.await;
        let _ = sweeper.await;
        if let Some(webhook) = webhook {
            let _ = webhook.await;
        }
        let _ = notifier.await;
        let _ = usage.await;
        if let Some(demo) = demo {
            let _ = demo.await;
        }
        if let Some(metrics) = metrics {
            let _ = metrics.await;
        }
        if let Some(ended) = lifecycle
            && ended.await.is_err()
        {
            tracing::warn!("the scheduler loop ended abnormally");
        }
        // Sockets were told to close when shutdown began; let their close frames go out.
        self.state.sockets.closed().await;
        served
    }
}

/// How this replica tells the others what it stored: over Redis, or to nobody.
struct Fanouts {
    revocations: Arc<dyn RevocationBroadcast>,
    events: Arc<dyn Announce>,
    alerts: Arc<dyn Announce>,
    inventory: Arc<dyn Announce>,
    /// GPU sample batches go to the other replicas' live subscribers; history queries ask them.
    metrics: Option<Arc<replicas::RedisMetrics>>,
    /// This replica in its messages, so it can skip its own.
    origin: u64,
}

impl Fanouts {
    fn new(redis: Option<&redis::aio::ConnectionManager>, deployment: &str) -> Self {
        let origin = rand::random();
        match redis {
            Some(manager) => Self {
                revocations: Arc::new(replicas::RedisRevocations::new(manager.clone(), deployment)),
                events: Arc::new(replicas::RedisAnnounce::new(manager.clone(), deployment, replicas::GPR_EVENTS_CHANNEL, origin)),
                alerts: Arc::new(replicas::RedisAnnounce::new(manager.clone(), deployment, replicas::ALERTS_CHANNEL, origin)),
                inventory: Arc::new(replicas::RedisAnnounce::new(manager.clone(), deployment, replicas::INVENTORY_CHANNEL, origin)),
                metrics: Some(Arc::new(replicas::RedisMetrics::new(manager.clone(), deployment, origin))),
                origin,
            },
            None => Self {
                revocations: Arc::new(NoReplicas),
                events: Arc::new(Alone),
                alerts: Arc::new(Alone),
                inventory: Arc::new(Alone),
                metrics: None,
                origin,
            },
        }
    }
}

/// A connection that is made on first use and remade after Redis comes back; commands give up
/// after 2 s, so a stalled Redis never holds up a request (fan-out is fire and forget).
fn connect_redis(client: redis::Client) -> anyhow::Result<redis::aio::ConnectionManager> {
    let config = redis::aio::ConnectionManagerConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(2)))
        .set_response_timeout(Some(Duration::from_secs(2)))
        .set_number_of_retries(2)
        .set_max_delay(Duration::from_secs(1));
    redis::aio::ConnectionManager::new_lazy_with_config(client, config).context("failed to set up the Redis connection")
}

fn router(state: AppState, settings: &ServeArgs) -> anyhow::Result<Router> {
    let mut router = Router::new()
        .route("/", get(|| async { portal::index() }))
        // The portal's and the playground's bundles are large text: gzip them for slow links.
        .route("/assets/{file}", get(portal::asset).layer(CompressionLayer::new()))
        .route("/graphql", get(graphql_http::graphql_get).post(graphql_http::graphql_post))
        .route("/graphql/ws", get(graphql_ws::graphql_ws))
        .route("/graphql/assets/{file}", get(playground::asset).layer(CompressionLayer::new()))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route(
            "/metrics",
            if settings.metrics_listen.is_some() {
                // Served on its own listener: not here at all.
                get(|| async { StatusCode::NOT_FOUND })
            } else {
                get(health::metrics_for_admins)
            },
        )
        .route("/kubernetes/clusters/{cluster}/mutate/{key}", axum::routing::post(admission::mutate))
        .route("/auth/oidc", get(crate::oidc::info))
        .route("/auth/oidc/login", get(crate::oidc::login))
        .route("/auth/oidc/callback", get(crate::oidc::callback))
        .fallback(portal::fallback)
        .layer(DefaultBodyLimit::max(settings.max_body_bytes))
        .with_state(state);
    if !settings.cors_origins.is_empty() {
        let origins = settings
            .cors_origins
            .iter()
            .map(|o| HeaderValue::from_str(o).with_context(|| format!("`{o}` is not a valid CORS origin")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        router = router.layer(CorsLayer::new().allow_origin(AllowOrigin::list(origins)).allow_methods([Method::GET, Method::POST]).allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::ACCEPT,
        ]));
    }
    Ok(router)
}
