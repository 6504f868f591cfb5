//! Test support: start the real gateway on port 0 against a fresh database and talk to it over
//! HTTP, as users do.
//!
//! Backends: SQLite in a temp dir by default; PostgreSQL when `EGS_TEST_DATABASE_URL` is set
//! (each test gets its own database on that server) and Redis when `EGS_TEST_REDIS_URL` is set.

pub mod bench_child;
pub mod cluster;
pub mod control_plane;
pub mod fake_kube;
pub mod kube_backend;
pub mod ticks;
pub mod ws;

use anyhow::Context;
use egs_api::Application;
use egs_api::settings::{Secret, ServeArgs, StorageArgs};
use egs_domain::clock::ManualClock;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use tokio::sync::oneshot;

pub const GRAPHQL_RESPONSE_JSON: &str = "application/graphql-response+json";

static NEXT_DATABASE: AtomicU32 = AtomicU32::new(0);

/// The value `q` of the way up `sorted` (nearest rank); zero when empty. For benchmarks.
pub fn quantile(sorted: &[std::time::Duration], q: f64) -> std::time::Duration {
    sorted.get(((sorted.len().max(1) - 1) as f64 * q).round() as usize).copied().unwrap_or_default()
}

/// Polls `check` every 50 ms until it holds; fails the test after 20 s, naming `what`.
pub async fn wait_for<F, Fut>(what: &str, check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    wait_for_within(what, std::time::Duration::from_secs(20), check).await
}

/// [`wait_for`] with its own limit.
pub async fn wait_for_within<F, Fut>(what: &str, within: std::time::Duration, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + within;
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// A running gateway with its own database.
pub struct TestApp {
    pub base: String,
    pub admin_token: String,
    pub client: reqwest::Client,
    pub statements: egs_api::db::StatementCounter,
    /// The database the gateway uses, for fixtures a user could not create through the API.
    pub db: sea_orm::DatabaseConnection,
    /// Where the gateway's queries read (on SQLite, its read-only connections).
    pub reads: sea_orm::DatabaseConnection,
    pub backend: &'static str,
    /// The database URL the gateway was given (PostgreSQL only).
    pub database_url: Option<String>,
    /// Holds the signing key and the admin token file.
    pub data_dir: std::path::PathBuf,
    /// The lifecycle's clock: tests move it forward instead of waiting for windows to pass.
    pub clock: Arc<ManualClock>,
    /// The scheduler this replica runs when it leads.
    pub scheduler: Arc<egs_domain::lifecycle::SchedulerHandle>,
    /// The turns subscriptions take to set up (`egs_schema::setting_up`).
    pub subscription_setups: Arc<tokio::sync::Semaphore>,
    stop: Option<oneshot::Sender<()>>,
    _data_dir: tempfile::TempDir,
    postgres_cleanup: Option<(String, String)>,
}

/// Creates a fresh PostgreSQL database on the server `server_url` points at; returns its URL.
async fn fresh_postgres_database(server_url: &str) -> anyhow::Result<(String, String)> {
    use sea_orm::ConnectionTrait;
    let name = format!("egs_t_{}_{}", std::process::id(), NEXT_DATABASE.fetch_add(1, Ordering::Relaxed));
    let admin = sea_orm::Database::connect(server_url).await.context("cannot reach EGS_TEST_DATABASE_URL")?;
    admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name}")).await?;
    admin.execute_unprepared(&format!("CREATE DATABASE {name}")).await?;
    admin.close().await?;
    let mut url = url::Url::parse(server_url)?;
    url.set_path(&format!("/{name}"));
    Ok((url.to_string(), name))
}

/// A fresh, empty PostgreSQL database when `EGS_TEST_DATABASE_URL` is set: its URL and name
/// (drop it with [`drop_postgres_database`]).
pub async fn fresh_postgres() -> Option<(String, String)> {
    let server = std::env::var("EGS_TEST_DATABASE_URL").ok().filter(|u| !u.is_empty())?;
    Some(fresh_postgres_database(&server).await.expect("a fresh PostgreSQL database"))
}

/// Drops a database [`fresh_postgres`] made.
pub async fn drop_postgres_database(name: &str) {
    if let Ok(server) = std::env::var("EGS_TEST_DATABASE_URL") {
        drop_database(&server, name).await;
    }
}

/// Drops `name` on the server `server_url` points at, closing whatever still uses it.
async fn drop_database(server_url: &str, name: &str) {
    use sea_orm::ConnectionTrait;
    if let Ok(admin) = sea_orm::Database::connect(server_url).await {
        let _ = admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await;
        let _ = admin.close().await;
    }
}

/// The database a new test gateway uses: a fresh PostgreSQL database on the server of
/// `EGS_TEST_DATABASE_URL` (its URL, and what to drop at the end), or none (SQLite in the data
/// dir).
async fn test_database() -> (Option<String>, Option<(String, String)>) {
    match std::env::var("EGS_TEST_DATABASE_URL").ok().filter(|u| !u.is_empty()) {
        Some(server) => {
            let (url, name) = fresh_postgres_database(&server).await.expect("a fresh PostgreSQL database");
            (Some(url), Some((server, name)))
        }
        None => (None, None),
    }
}

/// A Python virtual environment under the target directory with `packages` from PyPI (made once;
/// `import` names a module that shows it is ready): for the Python example, the SMTP server.
pub fn python_venv(dir: &str, import: &str, packages: &[&str]) -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf();
    let target = std::env::var("CARGO_TARGET_DIR").map(std::path::PathBuf::from).unwrap_or_else(|_| root.join("target"));
    let venv = target.join(dir);
    let python = venv.join("bin").join("python");
    let ready = || std::process::Command::new(&python).args(["-c", &format!("import {import}")]).status().is_ok_and(|s| s.success());
    if !ready() {
        let made = std::process::Command::new("python3").args(["-m", "venv"]).arg(&venv).status();
        assert!(made.is_ok_and(|s| s.success()), "python3 -m venv failed: these tests need Python 3 with venv (apt-get install python3-venv)");
        let installed = std::process::Command::new(venv.join("bin").join("pip")).args(["install", "-q"]).args(packages).status();
        assert!(installed.is_ok_and(|s| s.success()) && ready(), "pip could not install {packages:?} from PyPI");
    }
    python
}

/// A real OpenID Provider on loopback for the single sign-on tests: panva's `oidc-provider`
/// (OpenID Certified) from npm, installed once under the target directory, run by
/// `tests/oidc/provider.mjs` with one confidential client; stopped when dropped.
pub struct OidcProvider {
    child: std::process::Child,
    pub issuer: String,
}

impl OidcProvider {
    pub const VERSION: &str = "9.13.3";
    pub const CLIENT_ID: &str = "egs";
    pub const CLIENT_SECRET: &str = "egs-test-client-secret";

    /// A free loopback port for the provider: the gateway's settings name the issuer before the
    /// provider (which must know the gateway's redirect URL) starts.
    pub fn reserve_port() -> u16 {
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port()
    }

    /// The installed package's entry point (installed on first use, once per target directory).
    fn module() -> std::path::PathBuf {
        static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _once = INSTALL.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf();
        let target = std::env::var("CARGO_TARGET_DIR").map(std::path::PathBuf::from).unwrap_or_else(|_| root.join("target"));
        let dir = target.join(format!("oidc-provider-{}", Self::VERSION));
        let entry = dir.join("node_modules/oidc-provider/lib/index.js");
        if !entry.exists() {
            std::fs::create_dir_all(&dir).expect("a directory for oidc-provider");
            std::fs::write(dir.join("package.json"), r#"{ "name": "egs-test-oidc-provider", "private": true, "type": "module" }"#)
                .expect("package.json");
            let installed = std::process::Command::new("npm")
                .args(["install", "--no-audit", "--no-fund", "--silent", &format!("oidc-provider@{}", Self::VERSION)])
                .current_dir(&dir)
                .status();
            assert!(
                installed.is_ok_and(|s| s.success()) && entry.exists(),
                "npm could not install oidc-provider: the single sign-on tests need Node.js 20.19+ with npm and the npm registry"
            );
        }
        entry
    }

    /// Starts the provider on `port` for a client redirecting to `redirect_uri`; `groups` maps
    /// each login to the groups its ID token lists.
    pub async fn start(port: u16, redirect_uri: &str, groups: Value) -> Self {
        let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("oidc/provider.mjs");
        let child = std::process::Command::new("node")
            .arg(script)
            .env("OIDC_PROVIDER_MODULE", Self::module())
            .env("PORT", port.to_string())
            .env("CLIENT_ID", Self::CLIENT_ID)
            .env("CLIENT_SECRET", Self::CLIENT_SECRET)
            .env("REDIRECT_URIS", redirect_uri)
            .env("GROUPS", groups.to_string())
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("node starts the provider");
        let provider = Self { child, issuer: format!("http://127.0.0.1:{port}") };
        let discovery = format!("{}/.well-known/openid-configuration", provider.issuer);
        wait_for("the OpenID Provider", || async { reqwest::get(&discovery).await.is_ok_and(|r| r.status().is_success()) }).await;
        provider
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Test settings: port 0, Redis from `EGS_TEST_REDIS_URL`, default limits.
fn serve_args(data_dir: std::path::PathBuf, database_url: Option<String>) -> ServeArgs {
    ServeArgs {
        listen: "127.0.0.1:0".parse().expect("addr"),
        metrics_listen: None,
        storage: StorageArgs { data_dir, database_url: database_url.map(Secret::from), signing_key: None, sqlite_readers: sqlite_readers() },
        redis_url: std::env::var("EGS_TEST_REDIS_URL").ok().filter(|u| !u.is_empty()).map(Secret::from),
        demo: false,
        max_body_bytes: 1024 * 1024,
        cors_origins: Vec::new(),
        no_introspection: false,
        rate_limit: ServeArgs::DEFAULT_RATE_LIMIT,
        rate_limit_burst: ServeArgs::DEFAULT_RATE_LIMIT_BURST,
        lease_ttl_secs: ServeArgs::DEFAULT_LEASE_TTL_SECS,
        unwatched_report_interval_secs: ServeArgs::DEFAULT_UNWATCHED_REPORT_INTERVAL_SECS,
        no_scheduler: false,
        simulated_step_ms: 20,
        ws: Default::default(),
        per_user: Default::default(),
        alerts: Default::default(),
        // Receivers in tests listen on loopback; retries come quickly.
        notify: egs_api::settings::NotifyArgs { allow_private_targets: true, first_retry_ms: 200, ..Default::default() },
        // Fast enough that tests against the fake API server do not wait on timers.
        kubernetes: egs_api::settings::KubernetesArgs {
            eviction_deadline_secs: 2,
            auto_gpr_after_secs: 1,
            cluster_poll_ms: 100,
            status_resync_ms: 200,
            slice_pod_security: "baseline".into(),
            ..Default::default()
        },
        oidc: Default::default(),
    }
}

/// Settings for a replica that serves the API without the scheduler loop: for tests of API
/// rules on pending GPRs that must not be provisioned underneath them.
pub fn api_only(settings: &mut ServeArgs) {
    settings.no_scheduler = true;
}

/// Settings for tests that read the database's copy of a node (latest samples, heartbeat,
/// busy time) right after each of several quick reports: every report is written at once (and
/// agents are asked for every sample). By default a node's are written at most once per
/// unwatched interval (`egs_domain::metrics::batch`), which its own test covers.
pub fn writes_every_report(settings: &mut ServeArgs) {
    settings.unwatched_report_interval_secs = 0;
}

/// Settings for a bench whose one test user stands in for a crowd: no per-user bound on
/// WebSocket connections and live operations, and no per-user query-cost budget (a real
/// fleet's subscribers are many users, each with their own).
pub fn one_user_for_many(settings: &mut ServeArgs) {
    settings.per_user.connections = 0;
    settings.per_user.subscriptions = 0;
    settings.rate_limit = 0;
}

/// `EGS_SQLITE_READERS` as `egs serve` reads it (benches compare 0, queries on the writer).
fn sqlite_readers() -> u32 {
    std::env::var("EGS_SQLITE_READERS").ok().and_then(|v| v.parse().ok()).unwrap_or(egs_api::db::SQLITE_READERS)
}

/// A gateway serving in the background.
struct Launched {
    base: String,
    statements: egs_api::db::StatementCounter,
    db: sea_orm::DatabaseConnection,
    reads: sea_orm::DatabaseConnection,
    stop: oneshot::Sender<()>,
    /// The bootstrap admin token, if this start created one.
    bootstrap_token: Option<String>,
    scheduler: Arc<egs_domain::lifecycle::SchedulerHandle>,
    subscription_setups: Arc<tokio::sync::Semaphore>,
}

async fn launch(settings: ServeArgs, clock: Arc<ManualClock>) -> Launched {
    if std::env::var_os("EGS_TEST_LOG").is_some() {
        let log = tracing_subscriber::fmt().with_env_filter("warn,egs=debug");
        // A bench's gateway child keeps stdout for its hello line to the driver.
        let _ = if bench_child::is_child() { log.with_writer(std::io::stderr).try_init() } else { log.with_test_writer().try_init() };
    }
    let app = Application::build_with_clock(settings, clock).await.expect("the gateway starts");
    let launched_token = app.admin_token.clone();
    let base = format!("http://{}", app.local_addr());
    let statements = app.state().statements.clone();
    let db = app.state().app.db.clone();
    let reads = app.state().app.reads.clone();
    let scheduler = app.state().app.scheduler.clone();
    let subscription_setups = app.state().app.subscription_setups.clone();
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(app.run_until_stopped(async {
        let _ = stopped.await;
    }));
    Launched { base, statements, db, reads, scheduler, subscription_setups, stop, bootstrap_token: launched_token }
}

impl TestApp {
    pub async fn spawn() -> Self {
        Self::spawn_with(|_| {}).await
    }

    /// Starts a gateway; `adjust` may change the settings first (limits, demo, CORS).
    pub async fn spawn_with(adjust: impl FnOnce(&mut ServeArgs)) -> Self {
        let data_dir = tempfile::tempdir().expect("temp dir");
        let (database_url, postgres_cleanup) = test_database().await;
        let given_database_url = database_url.clone();
        let mut settings = serve_args(data_dir.path().to_owned(), database_url);
        adjust(&mut settings);
        let clock = Arc::new(ManualClock::default());
        let launched = launch(settings, clock.clone()).await;
        Self {
            base: launched.base,
            admin_token: launched.bootstrap_token.expect("a fresh database yields a bootstrap admin token"),
            client: reqwest::Client::new(),
            statements: launched.statements,
            db: launched.db,
            reads: launched.reads,
            data_dir: data_dir.path().to_owned(),
            database_url: given_database_url,
            backend: if postgres_cleanup.is_some() { "postgres" } else { "sqlite" },
            clock,
            scheduler: launched.scheduler,
            subscription_setups: launched.subscription_setups,
            stop: Some(launched.stop),
            _data_dir: data_dir,
            postgres_cleanup,
        }
    }

    /// Starts a second gateway replica on the same database, data dir (signing key) and Redis.
    pub async fn spawn_replica(&self) -> TestApp {
        self.spawn_replica_with(|_| {}).await
    }

    /// A replica whose settings `adjust` may change first (say, an API-only one).
    pub async fn spawn_replica_with(&self, adjust: impl FnOnce(&mut ServeArgs)) -> TestApp {
        Self::join_with(self.database_url.clone(), self.data_dir.clone(), self.admin_token.clone(), self.clock.clone(), adjust).await
    }

    /// A replica of a gateway another process started, on its PostgreSQL database (or SQLite
    /// file when `database_url` is `None`), data dir (signing key) and Redis: for benches that
    /// run each replica in a process of its own.
    pub async fn join(
        database_url: Option<String>,
        data_dir: std::path::PathBuf,
        admin_token: String,
        adjust: impl FnOnce(&mut ServeArgs),
    ) -> TestApp {
        Self::join_with(database_url, data_dir, admin_token, Arc::new(ManualClock::default()), adjust).await
    }

    async fn join_with(
        database_url: Option<String>,
        data_dir: std::path::PathBuf,
        admin_token: String,
        clock: Arc<ManualClock>,
        adjust: impl FnOnce(&mut ServeArgs),
    ) -> TestApp {
        let url = database_url.clone().unwrap_or_else(|| format!("sqlite://{}?mode=rwc", data_dir.join("egs.db").display()));
        let mut settings = serve_args(data_dir.clone(), Some(url));
        adjust(&mut settings);
        let launched = launch(settings, clock.clone()).await;
        assert!(launched.bootstrap_token.is_none(), "a replica of an initialised database does not bootstrap again");
        TestApp {
            base: launched.base,
            admin_token,
            client: reqwest::Client::new(),
            statements: launched.statements,
            db: launched.db,
            reads: launched.reads,
            data_dir,
            backend: if database_url.is_some() { "postgres" } else { "sqlite" },
            database_url,
            clock,
            scheduler: launched.scheduler,
            subscription_setups: launched.subscription_setups,
            stop: Some(launched.stop),
            _data_dir: tempfile::tempdir().expect("temp dir"),
            postgres_cleanup: None,
        }
    }

    /// A handle on a gateway this process did not start (an `egs serve` process): fixtures
    /// and requests go to `base`, checks read `db`. Stopping it is up to its owner.
    pub fn attach(base: &str, admin_token: &str, db: sea_orm::DatabaseConnection, data_dir: std::path::PathBuf) -> TestApp {
        let clock = Arc::new(ManualClock::default());
        TestApp {
            base: base.to_owned(),
            admin_token: admin_token.to_owned(),
            client: reqwest::Client::new(),
            statements: Default::default(),
            reads: db.clone(),
            db,
            backend: "postgres",
            database_url: None,
            data_dir,
            clock: clock.clone(),
            scheduler: Arc::new(egs_domain::lifecycle::SchedulerHandle::new(clock)),
            // Another process's gateway: its turns are not reachable from here.
            subscription_setups: Arc::new(tokio::sync::Semaphore::new(egs_schema::SUBSCRIPTION_SETUPS)),
            stop: None,
            _data_dir: tempfile::tempdir().expect("temp dir"),
            postgres_cleanup: None,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// `/metrics` as the admin reads it; fails the test unless it answers 2xx.
    pub async fn metrics_text(&self) -> String {
        let response = self.client.get(self.url("/metrics")).bearer_auth(&self.admin_token).send().await.expect("/metrics answers");
        assert!(response.status().is_success(), "/metrics answered {}", response.status());
        response.text().await.expect("/metrics body")
    }

    /// POSTs a GraphQL request and returns the HTTP response.
    pub async fn post(&self, token: Option<&str>, body: Value) -> reqwest::Response {
        let mut request = self.client.post(self.url("/graphql")).header("accept", GRAPHQL_RESPONSE_JSON).json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().await.expect("the gateway answers")
    }

    /// Runs an operation and returns the whole response body.
    pub async fn gql(&self, token: &str, query: &str, variables: Value) -> Value {
        let response = self.post(Some(token), json!({ "query": query, "variables": variables })).await;
        response.json().await.expect("a JSON body")
    }

    /// Runs an operation that must succeed without errors; returns `data`.
    pub async fn ok(&self, token: &str, query: &str, variables: Value) -> Value {
        Gateway::ok(self, token, query, variables).await
    }

    /// Runs a mutation whose payload must have no `userErrors`; returns the payload.
    pub async fn mutate(&self, token: &str, field: &str, query: &str, input: Value) -> Value {
        Gateway::mutate(self, token, field, query, input).await
    }

    /// Stops the gateway and removes its PostgreSQL database.
    /// Stops serving (as on SIGTERM) but keeps the database, for restart tests.
    pub async fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        // Let the scheduler loop hand its lease back.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }

    pub async fn finish(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some((server, name)) = self.postgres_cleanup.take() {
            let _ = self.db.clone().close().await;
            drop_database(&server, &name).await;
        }
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// A bench setting from the environment: a positive whole number, or `default`.
pub fn env_count(name: &str, default: u64) -> u64 {
    Some(env_number(name, 0)).filter(|v| *v > 0).unwrap_or(default)
}

/// A bench setting from the environment: a whole number (0 included), or `default`.
pub fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok()).unwrap_or(default)
}

/// (resident KiB, peak resident KiB, CPU seconds) of process `pid`, from `/proc`: benches
/// that run the gateway in a child process measure it alone.
pub fn process_usage(pid: u32) -> Option<(u64, u64, f64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> { status.lines().find(|l| l.starts_with(name))?.split_whitespace().nth(1)?.parse().ok() };
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    let rest: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = rest.get(11)?.parse::<f64>().ok()? + rest.get(12)?.parse::<f64>().ok()?;
    Some((field("VmRSS:")?, field("VmHWM:")?, ticks / 100.0))
}

/// What fixtures and tests need of a gateway, over HTTP ([`TestApp`]) or in-process
/// ([`InProcess`]).
#[allow(async_fn_in_trait)]
pub trait Gateway {
    fn admin_token(&self) -> &str;

    /// Runs an operation and returns the whole response body.
    async fn gql(&self, token: &str, query: &str, variables: Value) -> Value;

    /// Runs an operation that must succeed without errors; returns `data`.
    async fn ok(&self, token: &str, query: &str, variables: Value) -> Value {
        let body = self.gql(token, query, variables).await;
        assert!(body.get("errors").is_none_or(|e| e.as_array().is_some_and(Vec::is_empty)), "unexpected errors: {body:#}");
        body["data"].clone()
    }

    /// Runs a mutation whose payload must have no `userErrors`; returns the payload.
    async fn mutate(&self, token: &str, field: &str, query: &str, input: Value) -> Value {
        let data = self.ok(token, query, json!({ "input": input })).await;
        let payload = data[field].clone();
        assert_eq!(payload["userErrors"], json!([]), "{field} failed: {payload:#}");
        payload
    }
}

impl Gateway for TestApp {
    fn admin_token(&self) -> &str {
        &self.admin_token
    }

    async fn gql(&self, token: &str, query: &str, variables: Value) -> Value {
        TestApp::gql(self, token, query, variables).await
    }
}

impl Gateway for InProcess {
    fn admin_token(&self) -> &str {
        &self.admin_token
    }

    async fn gql(&self, token: &str, query: &str, variables: Value) -> Value {
        self.execute(token, query, variables).await
    }
}

/// The schema executed in-process against a real database (SQLite, or PostgreSQL from
/// `EGS_TEST_DATABASE_URL`): the level between a service's unit tests and HTTP. No socket and
/// no scheduler loop run, so what a test sees is what the services did, in milliseconds.
pub struct InProcess {
    app: Application,
    pub admin_token: String,
    _data_dir: tempfile::TempDir,
    postgres_cleanup: Option<(String, String)>,
}

impl InProcess {
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    /// Builds the gateway (API only); `adjust` may change the settings first (limits).
    pub async fn start_with(adjust: impl FnOnce(&mut ServeArgs)) -> Self {
        let data_dir = tempfile::tempdir().expect("temp dir");
        let (database_url, postgres_cleanup) = test_database().await;
        let mut settings = serve_args(data_dir.path().to_owned(), database_url);
        api_only(&mut settings);
        adjust(&mut settings);
        let app = Application::build_with_clock(settings, Arc::new(ManualClock::default())).await.expect("the gateway builds");
        let admin_token = app.admin_token.clone().expect("a fresh database yields a bootstrap admin token");
        Self { app, admin_token, _data_dir: data_dir, postgres_cleanup }
    }

    pub fn services(&self) -> &egs_domain::App {
        &self.app.state().app
    }

    /// Runs `query` as the holder of `token`, the way the HTTP handler does; the response as JSON.
    pub async fn execute(&self, token: &str, query: &str, variables: Value) -> Value {
        let state = self.app.state();
        let services = &state.app;
        let caller = egs_domain::auth::authenticate(&services.db, &services.keys, &services.token_cache, token).await.expect("a valid token");
        let request = async_graphql::Request::new(query).variables(async_graphql::Variables::from_json(variables));
        let response = egs_schema::execute(&state.schema, services, request, Some(caller), egs_schema::operation::OperationSlot::new()).await;
        serde_json::to_value(&response).expect("a JSON response")
    }

    pub async fn finish(self) {
        let db = self.app.state().app.db.clone();
        drop(self.app);
        if let Some((server, name)) = self.postgres_cleanup {
            let _ = db.close().await;
            drop_database(&server, &name).await;
        }
    }
}

/// Fixtures built through the API, the way an admin would.
pub mod fixtures {
    use super::*;

    pub const SHAPE_H100: &str = "NVIDIA-H100-80GB-HBM3";
    pub const SHAPE_A100: &str = "NVIDIA-A100-SXM4-80GB";

    /// A GPU sample as an agent reports it, its values all following from `util`.
    /// A `DateTime` field of an answer; fails the test when it is not one.
    pub fn time(value: &Value) -> chrono::DateTime<chrono::Utc> {
        value.as_str().and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok()).unwrap_or_else(|| panic!("not a time: {value}")).to_utc()
    }

    /// The `id` of a created object; fails the test when it has none.
    pub fn id_of(created: &Value) -> String {
        created["id"].as_str().unwrap_or_else(|| panic!("no id in {created}")).to_owned()
    }

    pub fn gpu_sample(uuid: &str, at: chrono::DateTime<chrono::Utc>, util: f64) -> Value {
        json!({
            "uuid": uuid, "timestamp": at.to_rfc3339(), "util": util, "memUtil": util / 2.0, "memUsedMib": 1000.0 + util,
            "temperature": 40.0 + util / 4.0, "power": 100.0 + util * 5.0, "smClockMhz": 1980.0,
        })
    }

    /// A half-busy GPU's sample at `temperature` °C drawing `power` W (the alert rules' inputs).
    pub fn gpu_sample_hot(uuid: &str, at: chrono::DateTime<chrono::Utc>, temperature: f64, power: f64) -> Value {
        let mut sample = gpu_sample(uuid, at, 50.0);
        sample["temperature"] = json!(temperature);
        sample["power"] = json!(power);
        sample
    }

    /// An AGENT token for `node` of `cluster`.
    pub async fn agent_token(app: &impl Gateway, cluster: &str, node: &str) -> String {
        let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { field message code } } }";
        let input = json!({ "name": format!("agent {node}"), "role": "AGENT", "clusterId": cluster, "nodeName": node });
        app.mutate(app.admin_token(), "createToken", create, input).await["secret"].as_str().expect("secret").to_owned()
    }

    /// Polls GPR `id` (as `token` reads it) until it is provisioned; returns it with its nodes
    /// (`id name gpus { id uuid index }`).
    pub async fn provisioned(app: &impl Gateway, token: &str, id: &str) -> Value {
        let query = "query($id: ID!) { gpr(id: $id) { phase releaseReason nodes { id name gpus { id uuid index } } } }";
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
        loop {
            let gpr = app.ok(token, query, json!({ "id": id })).await["gpr"].clone();
            if gpr["phase"] == "PROVISIONED" {
                return gpr;
            }
            assert!(tokio::time::Instant::now() < deadline, "not provisioned: {gpr}");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    pub async fn register_cluster(app: &impl Gateway, name: &str) -> String {
        let payload = app
            .mutate(
                app.admin_token(),
                "registerCluster",
                "mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { cluster { id } userErrors { field message code } } }",
                json!({ "name": name, "provider": "SIMULATED" }),
            )
            .await;
        payload["cluster"]["id"].as_str().expect("cluster id").to_owned()
    }

    /// Registers a Kubernetes cluster reached through `kubeconfig` (e.g. the fake API
    /// server's); returns its id.
    pub async fn register_kube_cluster(app: &impl Gateway, name: &str, kubeconfig: &str, placement: &str) -> String {
        let payload = app
            .mutate(
                app.admin_token(),
                "registerCluster",
                "mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { cluster { id } userErrors { field message code } } }",
                json!({ "name": name, "provider": "KUBERNETES", "kubeconfig": kubeconfig, "podPlacement": placement }),
            )
            .await;
        payload["cluster"]["id"].as_str().unwrap_or_else(|| panic!("cluster not registered: {payload}")).to_owned()
    }

    /// Adds `count` nodes of `shape` with `gpus` GPUs each; returns their ids.
    pub async fn add_nodes(app: &impl Gateway, cluster_id: &str, prefix: &str, count: usize, shape: &str, gpus: i32) -> Vec<String> {
        let nodes: Vec<Value> = (0..count)
            .map(|n| {
                let name = format!("{prefix}-{n}");
                json!({
                    "name": name,
                    "instanceType": "p5.48xlarge",
                    "gpuShape": shape,
                    "gpusPerNode": gpus,
                    "gpuMemoryMib": 81559,
                    "gpus": (0..gpus).map(|i| json!({ "uuid": format!("GPU-{cluster_id}-{name}-{i}"), "index": i, "model": shape, "memoryMib": 81559 })).collect::<Vec<_>>(),
                })
            })
            .collect();
        let payload = app
            .mutate(
                app.admin_token(),
                "upsertNodes",
                "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { id } userErrors { field message code } } }",
                json!({ "clusterId": cluster_id, "nodes": nodes }),
            )
            .await;
        payload["nodes"].as_array().expect("nodes").iter().map(|n| n["id"].as_str().expect("id").to_owned()).collect()
    }

    /// Removes node `id` (as an admin); asserts it was removed.
    pub async fn remove_node(app: &impl Gateway, id: &str) {
        app.mutate(
            app.admin_token(),
            "removeNode",
            "mutation($input: RemoveNodeInput!) { removeNode(input: $input) { node { id } userErrors { field message code } } }",
            json!({ "id": id }),
        )
        .await;
    }

    pub async fn create_slice(app: &impl Gateway, name: &str, cluster_id: &str, policy: Value) -> String {
        let payload = app
            .mutate(
                app.admin_token(),
                "createSlice",
                "mutation($input: CreateSliceInput!) { createSlice(input: $input) { slice { id } userErrors { field message code } } }",
                json!({ "name": name, "namespaces": [{ "clusterId": cluster_id, "name": name }], "policy": policy }),
            )
            .await;
        payload["slice"]["id"].as_str().expect("slice id").to_owned()
    }

    /// Creates a user, makes them `role` in `slice_id`, and returns (user id, token).
    pub async fn member(app: &impl Gateway, name: &str, slice_id: &str, role: &str) -> (String, String) {
        let user = app
            .mutate(
                app.admin_token(),
                "createUser",
                "mutation($input: CreateUserInput!) { createUser(input: $input) { user { id } userErrors { field message code } } }",
                json!({ "name": name }),
            )
            .await;
        let user_id = user["user"]["id"].as_str().expect("user id").to_owned();
        app.mutate(
            app.admin_token(),
            "addSliceMember",
            "mutation($input: AddSliceMemberInput!) { addSliceMember(input: $input) { slice { id } userErrors { field message code } } }",
            json!({ "sliceId": slice_id, "userId": user_id, "role": role }),
        )
        .await;
        let token = app
            .mutate(
                app.admin_token(),
                "createToken",
                "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret token { id } userErrors { field message code } } }",
                json!({ "name": format!("{name} test token"), "role": "USER", "userId": user_id }),
            )
            .await;
        (user_id, token["secret"].as_str().expect("secret").to_owned())
    }

    pub const CREATE_GPR: &str = "mutation($input: CreateGprInput!) { createGpr(input: $input) { gpr { id name phase version reason approval priority } userErrors { field message code } } }";

    pub async fn create_gpr(app: &impl Gateway, token: &str, slice_id: &str, name: &str, extra: Value) -> Value {
        let mut input = json!({ "sliceId": slice_id, "name": name, "nodeCount": 1, "gpuShape": SHAPE_H100, "duration": "2h" });
        if let (Some(input), Some(extra)) = (input.as_object_mut(), extra.as_object()) {
            input.extend(extra.clone());
        }
        app.mutate(token, "createGpr", CREATE_GPR, input).await["gpr"].clone()
    }

    /// Two slices on one cluster with an editor each: the standard isolation setup.
    pub struct TwoSlices {
        pub cluster: String,
        pub slice_a: String,
        pub slice_b: String,
        pub token_a: String,
        pub token_b: String,
    }

    pub async fn two_slices(app: &impl Gateway) -> TwoSlices {
        let cluster = register_cluster(app, "c1").await;
        add_nodes(app, &cluster, "h100", 4, SHAPE_H100, 8).await;
        let slice_a = create_slice(app, "team-a", &cluster, json!({})).await;
        let slice_b = create_slice(app, "team-b", &cluster, json!({})).await;
        let (_, token_a) = member(app, "alice", &slice_a, "EDITOR").await;
        let (_, token_b) = member(app, "bob", &slice_b, "EDITOR").await;
        TwoSlices { cluster, slice_a, slice_b, token_a, token_b }
    }
}
