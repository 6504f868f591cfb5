//! Wiring the gateway: storage, the signing keys, Redis, the feeds and the scheduler's handle
//! into the process-wide [`App`], the adapters behind its ports, and the state handlers share.

use super::background::{Loops, RedisLoops};
use super::routes;
use crate::db::{self, StatementCounter};
use crate::db_watch::DbWatch;
use crate::kubernetes::KubeClusters;
use crate::kubernetes::context::{ControllerConfig, ControllerContext};
use crate::kubernetes::controllers::Controllers;
use crate::kubernetes::provision::{EvictionPolicy, KubernetesProvider};
use crate::metrics::Metrics;
use crate::replicas::{self, RedisHealth};
use crate::settings::ServeArgs;
use crate::{bootstrap, demo, graphql_ws, health};
use anyhow::Context;
use axum::Router;
use axum::routing::get;
use egs_domain::alerts::feed::AlertFeed;
use egs_domain::alerts::webhook::Webhook;
use egs_domain::auth::{NoReplicas, TokenCache};
use egs_domain::cluster::credentials::CredentialCipher;
use egs_domain::events::EventFeed;
use egs_domain::inventory::live::InventoryFeed;
use egs_domain::lifecycle::provider::SimulatedProvider;
use egs_domain::lifecycle::{Lifecycle, LifecycleConfig, Providers, SchedulerHandle};
use egs_domain::metrics::MetricsStore;
use egs_domain::notify::{Notifier, NotifierConfig};
use egs_domain::ports::{Announce, Clock, RevocationBroadcast};
use egs_domain::{Alone, App};
use egs_schema::{EgsSchema, SchemaOptions, build_schema};
use futures_util::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// Everything a handler may need; cheap to clone.
#[derive(Clone)]
pub struct AppState {
    pub schema: EgsSchema,
    pub app: App,
    pub metrics: Arc<Metrics>,
    pub statements: StatementCounter,
    /// Whether Redis answers, when it is configured.
    pub redis: Option<Arc<RedisHealth>>,
    /// Open GraphQL WebSockets: their settings, and closing them on shutdown.
    pub sockets: Arc<graphql_ws::Sockets>,
    /// What each user holds open on this replica (connections, live operations).
    pub per_user: Arc<crate::per_user::PerUser>,
    /// Whether PostgreSQL answers (`None` on SQLite).
    pub db_watch: Option<Arc<DbWatch>>,
    /// Single sign-on, when an issuer is configured.
    pub oidc: Option<Arc<crate::oidc::Oidc>>,
}

/// A wired gateway, not yet serving.
pub(super) struct Wired {
    pub listener: TcpListener,
    pub router: Router,
    pub state: AppState,
    pub loops: Loops,
    pub admin_token: Option<String>,
}

/// Wires a gateway for `settings`, its lifecycle reading `clock`.
pub(super) async fn wire(settings: ServeArgs, clock: Arc<dyn Clock>) -> anyhow::Result<Wired> {
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
    let events = EventFeed::new(db.clone(), fanouts.events).await.context("failed to read the newest GPR event")?;
    let alerts = AlertFeed::new(db.clone(), fanouts.alerts, webhook.clone()).await.context("failed to read the newest alert transition")?;
    let inventory = InventoryFeed::new(db.clone(), fanouts.inventory, events.clone());
    // Releases are planned to take the eviction deadline plus a minute for the other steps.
    let release_allowance = settings.kubernetes.eviction_deadline_secs as i64 + 60;
    let planning = egs_scheduler::Config::live(egs_domain::lifecycle::state::PROVISIONING_ALLOWANCE_SECS, release_allowance);
    let scheduler = Arc::new(SchedulerHandle::new(clock.clone()).with_planning(planning));
    let redis = redis.map(|(connection, client)| RedisLoops {
        client,
        connection,
        deployment: keys.deployment().to_owned(),
        origin: fanouts.origin,
        metrics: fanouts.metrics.clone(),
        health: RedisHealth::new(),
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
    let (db_watch, db_probe) = match DbWatch::new(&db) {
        Some((watch, probe)) => (Some(watch), Some(Box::pin(probe) as BoxFuture<'static, ()>)),
        None => (None, None),
    };
    let app = App {
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
        samples: metrics,
        alerts,
        inventory,
        credentials: Arc::new(CredentialCipher::new(&credentials_key)),
        kubernetes,
        notifier,
        subscription_setups: Arc::new(tokio::sync::Semaphore::new(egs_schema::SUBSCRIPTION_SETUPS)),
    };
    if settings.demo {
        demo::seed(&app, &settings.storage.data_dir).await.context("failed to seed the demo data")?;
    }
    let tick_seconds = app.scheduler.tick_seconds.clone();
    let sockets = Arc::new(graphql_ws::Sockets::new(graphql_ws::WsConfig::from_settings(&settings)));
    let state = AppState {
        schema: build_schema(
            app.clone(),
            SchemaOptions {
                introspection: !settings.no_introspection,
                cost_budget: settings.cost_budget(),
                max_tokens_per_user: (settings.per_user.tokens > 0).then_some(settings.per_user.tokens),
                agent_service_account: settings.kubernetes.agent_service_account.clone(),
            },
        ),
        app,
        metrics: Arc::new(Metrics::new(statements.0.clone(), tick_seconds)),
        statements,
        redis: redis.as_ref().map(|r| r.health.clone()),
        sockets,
        per_user: crate::per_user::PerUser::new(settings.per_user.connections, settings.per_user.subscriptions),
        db_watch,
        oidc: crate::oidc::Oidc::from_settings(&settings.oidc, sign_in_key)?.map(Arc::new),
    };
    let router = routes::router(state.clone(), &settings)?;
    let listener = TcpListener::bind(settings.listen).await.with_context(|| format!("failed to listen on {}", settings.listen))?;
    let metrics_server = match settings.metrics_listen {
        Some(address) => {
            let listener = TcpListener::bind(address).await.with_context(|| format!("failed to listen on {address} for /metrics"))?;
            Some((listener, Router::new().route("/metrics", get(health::metrics)).with_state(state.clone())))
        }
        None => None,
    };
    let loops = Loops {
        lifecycle,
        webhook,
        alert_sweep: Duration::from_millis(settings.alerts.sweep_interval_ms),
        clock,
        demo_telemetry: settings.demo,
        metrics_server,
        redis,
        db_probe,
    };
    Ok(Wired { listener, router, state, loops, admin_token })
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
