//! Several real `egs serve` processes on loopback sharing one PostgreSQL database and one
//! Redis, for the fault tests and the replica benchmarks. The gateways are real processes that
//! get SIGKILL, SIGTERM, SIGSTOP and SIGCONT. PostgreSQL and Redis are the machine's own
//! servers (shared with other tests, so never signalled); each sits behind a [`TcpProxy`] that
//! can drop every connection and refuse new ones (as a killed server does) or hold the bytes in
//! flight (as a paused one does).

use crate::TestApp;
use anyhow::Context;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::Message;

/// What a [`TcpProxy`] does with traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// Forwards both ways.
    Up,
    /// Keeps connections open but forwards nothing until it is `Up` again.
    Held,
    /// Closes every connection and closes new ones at once.
    Down,
}

/// A loopback TCP proxy in front of a server, with a switch for faults.
pub struct TcpProxy {
    pub addr: SocketAddr,
    link: watch::Sender<Link>,
}

impl TcpProxy {
    pub async fn start(target: SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a proxy port");
        let addr = listener.local_addr().expect("its address");
        let (link, _) = watch::channel(Link::Up);
        let links = link.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if *links.borrow() == Link::Down {
                    continue;
                }
                let link = links.subscribe();
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(target).await else { return };
                    let _ = (client.set_nodelay(true), server.set_nodelay(true));
                    let (client_read, client_write) = client.into_split();
                    let (server_read, server_write) = server.into_split();
                    // Either way ending (or the link going down) drops both sockets.
                    tokio::select! {
                        _ = pump(client_read, server_write, link.clone()) => {}
                        _ = pump(server_read, client_write, link) => {}
                    }
                });
            }
        });
        Self { addr, link }
    }

    pub fn set(&self, link: Link) {
        self.link.send_replace(link);
    }

    /// `url` (`postgres://…`, `redis://…`) with its host and port replaced by this proxy's.
    pub fn url_for(&self, url: &str) -> String {
        let mut url = url::Url::parse(url).expect("a URL");
        url.set_host(Some("127.0.0.1")).expect("a host");
        url.set_port(Some(self.addr.port())).expect("a port");
        url.to_string()
    }
}

async fn pump(mut from: tokio::net::tcp::OwnedReadHalf, mut to: tokio::net::tcp::OwnedWriteHalf, mut link: watch::Receiver<Link>) {
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let read = tokio::select! {
            read = from.read(&mut buffer) => read,
            _ = link.wait_for(|l| *l == Link::Down) => return,
        };
        let n = match read {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        match link.wait_for(|l| *l != Link::Held).await {
            Ok(l) if *l == Link::Up => {}
            _ => return,
        }
        if to.write_all(&buffer[..n]).await.is_err() {
            return;
        }
    }
}

/// The socket address a `postgres://` or `redis://` URL points at.
pub fn target_of(url: &str) -> SocketAddr {
    let parsed = url::Url::parse(url).expect("a URL");
    let host = parsed.host_str().unwrap_or("127.0.0.1");
    let host = if host == "localhost" { "127.0.0.1" } else { host };
    let port = parsed.port_or_known_default().unwrap_or(match parsed.scheme() {
        "redis" => 6379,
        _ => 5432,
    });
    format!("{host}:{port}").parse().expect("a loopback address")
}

/// The `egs` binary of this checkout, built now (cheap when up to date) so a test never runs a
/// stale one; `release` for benchmarks.
pub fn egs_binary(release: bool) -> PathBuf {
    static BUILT: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(path) = built.as_ref() {
        return path.clone();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = std::process::Command::new(cargo);
    command.current_dir(&root).args(["build", "-q"]);
    // Cargo hands a test its own package's variables (CARGO_MANIFEST_DIR, CARGO_PKG_NAME, ...).
    // Build scripts that watch them (ring's does) would see another package's values, run again
    // and rebuild their crate and every crate above it, here and again in the next `cargo test`.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        let of_a_package = name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_BIN_")
            || matches!(
                name.as_str(),
                "OUT_DIR"
                    | "CARGO_MANIFEST_DIR"
                    | "CARGO_MANIFEST_PATH"
                    | "CARGO_MANIFEST_LINKS"
                    | "CARGO_CRATE_NAME"
                    | "CARGO_PRIMARY_PACKAGE"
                    | "CARGO_TARGET_TMPDIR"
                    | "CARGO_RUSTC_CURRENT_DIR"
            );
        if of_a_package {
            command.env_remove(name);
        }
    }
    if release {
        command.args(["--release", "-p", "egs-api", "--bin", "egs"]);
    } else {
        // The same packages, targets and so features as `cargo test --workspace` (a
        // dev-dependency turns on tokio's `test-util`): the binary reuses every dependency the
        // test build compiled, where `-p egs-api` would build a second copy of them all (minutes
        // and gigabytes; CI once ran out of disk on it).
        command.args(["--workspace", "--bins", "--tests"]);
    }
    let status = command.status().expect("cargo runs");
    assert!(status.success(), "building the egs binary failed");
    let target = std::env::var("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|_| root.join("target"));
    let path = target.join(if release { "release" } else { "debug" }).join("egs");
    assert!(path.exists(), "no binary at {}", path.display());
    *built = Some(path.clone());
    path
}

/// One `egs serve` process. Killed when dropped.
pub struct Gateway {
    pub name: String,
    pub base: String,
    binary: PathBuf,
    env: Vec<(String, String)>,
    log: PathBuf,
    child: Option<tokio::process::Child>,
}

impl Gateway {
    /// Starts `binary` with `env` (plus `EGS_LISTEN` on a free port) and waits until it answers.
    pub async fn start(name: &str, binary: &Path, mut env: Vec<(String, String)>, log_dir: &Path) -> Self {
        let port = TcpListener::bind("127.0.0.1:0").await.expect("a free port").local_addr().expect("addr").port();
        env.push(("EGS_LISTEN".into(), format!("127.0.0.1:{port}")));
        let mut gateway = Self {
            name: name.to_owned(),
            base: format!("http://127.0.0.1:{port}"),
            binary: binary.to_owned(),
            env,
            log: log_dir.join(format!("{name}.log")),
            child: None,
        };
        gateway.launch().await;
        gateway
    }

    async fn launch(&mut self) {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log).expect("a log file");
        let child = tokio::process::Command::new(&self.binary)
            .arg("serve")
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("egs starts");
        self.child = Some(child);
        let client = reqwest::Client::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            if client.get(format!("{}/healthz", self.base)).send().await.is_ok_and(|r| r.status().is_success()) {
                return;
            }
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                panic!("gateway {} exited at start ({status}):\n{}", self.name, self.log_tail());
            }
            assert!(tokio::time::Instant::now() < deadline, "gateway {} did not answer within 60 s:\n{}", self.name, self.log_tail());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().and_then(|c| c.id())
    }

    fn signal(&self, signal: &str) {
        if let Some(pid) = self.pid() {
            let status = std::process::Command::new("kill").args(["-s", signal, &pid.to_string()]).status().expect("kill runs");
            assert!(status.success(), "kill -s {signal} {pid} failed");
        }
    }

    /// SIGKILL, and reaps it.
    pub async fn kill(&mut self) {
        self.signal("KILL");
        if let Some(mut child) = self.child.take() {
            let _ = child.wait().await;
        }
    }

    /// SIGTERM; waits for it to exit and returns how long that took and whether it exited 0.
    pub async fn terminate(&mut self) -> (Duration, bool) {
        let started = std::time::Instant::now();
        self.signal("TERM");
        let Some(mut child) = self.child.take() else { return (Duration::ZERO, false) };
        let status = tokio::time::timeout(Duration::from_secs(30), child.wait()).await.expect("exits within 30 s of SIGTERM").expect("status");
        (started.elapsed(), status.success())
    }

    pub fn pause(&self) {
        self.signal("STOP");
    }

    pub fn resume(&self) {
        self.signal("CONT");
    }

    /// Starts the process again with the same settings and port.
    pub async fn restart(&mut self) {
        assert!(self.child.is_none(), "stop it first");
        self.launch().await;
    }

    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

/// Three (or `n`) gateways on one fresh PostgreSQL database and Redis, both behind proxies.
pub struct Cluster {
    pub gateways: Vec<Gateway>,
    pub postgres: TcpProxy,
    pub redis: TcpProxy,
    /// A handle for fixtures and checks: the first gateway, and the database directly.
    pub app: TestApp,
    database: String,
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// `None` unless `EGS_TEST_DATABASE_URL` and `EGS_TEST_REDIS_URL` are set.
    pub async fn start(n: usize, release: bool, extra_env: &[(&str, &str)]) -> Option<Self> {
        let redis_url = std::env::var("EGS_TEST_REDIS_URL").ok().filter(|u| !u.is_empty())?;
        let (database_url, database) = crate::fresh_postgres().await?;
        let postgres = TcpProxy::start(target_of(&database_url)).await;
        let redis = TcpProxy::start(target_of(&redis_url)).await;
        let dir = tempfile::tempdir().expect("temp dir");
        let binary = egs_binary(release);
        let signing_key = format!("fault-test-signing-key-{}-{}", std::process::id(), rand::random::<u64>());
        let mut gateways = Vec::new();
        for i in 0..n {
            let data_dir = dir.path().join(format!("g{i}"));
            let mut env: Vec<(String, String)> = vec![
                ("EGS_DATA_DIR".into(), data_dir.display().to_string()),
                ("EGS_DATABASE_URL".into(), postgres.url_for(&database_url)),
                ("EGS_REDIS_URL".into(), redis.url_for(&redis_url)),
                ("EGS_SIGNING_KEY".into(), signing_key.clone()),
                ("EGS_LOG".into(), "info,sqlx=warn".into()),
            ];
            env.extend(extra_env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
            // The first one applies the migrations and creates the admin; the others follow.
            gateways.push(Gateway::start(&format!("g{i}"), &binary, env, dir.path()).await);
        }
        let token_file = egs_api::bootstrap::admin_token_path(&dir.path().join("g0"));
        let admin_token = std::fs::read_to_string(&token_file).expect("the first gateway wrote the admin token").trim().to_owned();
        let db = sea_orm::Database::connect(database_url.as_str()).await.expect("the test database");
        let app = TestApp::attach(&gateways[0].base, &admin_token, db, dir.path().join("g0"));
        Some(Self { gateways, postgres, redis, app, database, _dir: dir })
    }

    /// The gateway holding the scheduler lease now, by the process id in the holder's name.
    pub async fn leader(&self) -> Option<usize> {
        use sea_orm::EntityTrait;
        let lease = egs_entities::leader_lease::Entity::find_by_id("scheduler").one(&self.app.db).await.ok()??;
        if lease.expires_at < chrono::Utc::now() {
            return None;
        }
        self.gateways.iter().position(|g| g.pid().is_some_and(|pid| lease.holder.starts_with(&format!("egs-{pid}-"))))
    }

    /// Waits (up to `within`) for a leader other than `not`; returns it and how long it took.
    pub async fn wait_for_leader(&self, not: Option<usize>, within: Duration) -> (usize, Duration) {
        let started = std::time::Instant::now();
        loop {
            if let Some(leader) = self.leader().await.filter(|l| Some(*l) != not) {
                return (leader, started.elapsed());
            }
            assert!(started.elapsed() < within, "no new leader within {within:?}:\n{}", self.logs());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The gateways' last log lines, for a failure message.
    pub fn logs(&self) -> String {
        self.gateways.iter().map(|g| format!("--- {}\n{}", g.name, g.log_tail())).collect::<Vec<_>>().join("\n")
    }

    pub async fn finish(mut self) {
        for gateway in &mut self.gateways {
            gateway.resume();
            gateway.kill().await;
        }
        let _ = self.app.db.clone().close().await;
        crate::drop_postgres_database(&self.database).await;
    }
}

/// One event as a [`Subscriber`] got it.
#[derive(Clone, Debug)]
pub struct Delivery {
    pub sequence: i64,
    pub gpr: String,
    pub kind: String,
    pub at: std::time::Instant,
}

/// What a [`Subscriber`] saw, in arrival order.
#[derive(Clone, Debug, Default)]
pub struct Received {
    pub events: Vec<Delivery>,
    /// How many times the socket was opened again after closing.
    pub reconnects: usize,
    /// Close codes the gateway sent.
    pub close_codes: Vec<u16>,
}

/// A `gprEvents` subscriber that behaves like the portal: when the socket closes or fails it
/// opens another (to the same gateway, or the next one in `bases` if that one does not
/// answer) and resumes after the last event it received.
pub struct Subscriber {
    pub received: Arc<Mutex<Received>>,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

const EVENTS: &str = "subscription($slice: ID, $after: ID) { gprEvents(sliceId: $slice, after: $after) { id sequence kind gpr { id } } }";

impl Subscriber {
    /// Subscribes to `slice`'s events (all the token may see without one) from `after` (an
    /// event id or sequence) on.
    pub fn start(bases: Vec<String>, token: String, slice: Option<String>, after: Option<String>) -> Self {
        let received = Arc::new(Mutex::new(Received::default()));
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(run_subscriber(bases, token, slice, after, received.clone(), stopped));
        Self { received, stop, task }
    }

    pub fn snapshot(&self) -> Received {
        self.received.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub async fn stop(self) -> Received {
        self.stop.send_replace(true);
        let _ = self.task.await;
        self.received.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

async fn run_subscriber(
    bases: Vec<String>,
    token: String,
    slice: Option<String>,
    mut after: Option<String>,
    received: Arc<Mutex<Received>>,
    mut stopped: watch::Receiver<bool>,
) {
    let mut attempt = 0usize;
    loop {
        let base = &bases[attempt % bases.len()];
        let outcome = tokio::select! {
            outcome = subscribe_once(base, &token, &slice, &mut after, &received) => outcome,
            _ = stopped.wait_for(|s| *s) => return,
        };
        {
            let mut r = received.lock().unwrap_or_else(|p| p.into_inner());
            match outcome {
                Ok(Some(code)) => r.close_codes.push(code),
                // A gateway that closed abruptly or never answered: try the next one.
                Ok(None) | Err(_) => attempt += 1,
            }
            r.reconnects += 1;
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            _ = stopped.wait_for(|s| *s) => return,
        }
    }
}

/// One socket's life: `Ok(Some(code))` when the gateway closed it with `code`.
async fn subscribe_once(
    base: &str,
    token: &str,
    slice: &Option<String>,
    after: &mut Option<String>,
    received: &Mutex<Received>,
) -> anyhow::Result<Option<u16>> {
    let (mut ws, _) =
        tokio::time::timeout(Duration::from_secs(2), crate::ws::connect(base, crate::ws::TRANSPORT_WS)).await.context("connect timed out")??;
    ws.send(crate::ws::connection_init(token)).await?;
    let subscribe = crate::ws::subscribe("1", EVENTS, json!({ "slice": slice, "after": after }));
    let mut subscribed = false;
    loop {
        // A paused gateway sends nothing, not even pings (every 15 s); 20 s of silence is a dead socket.
        let frame = match tokio::time::timeout(Duration::from_secs(20), ws.next()).await {
            Err(_) => anyhow::bail!("silent for 20 s"),
            Ok(None) => return Ok(None),
            Ok(Some(frame)) => frame?,
        };
        match frame {
            Message::Text(text) => {
                let message: Value = serde_json::from_str(&text)?;
                match message["type"].as_str() {
                    Some("connection_ack") if !subscribed => {
                        ws.send(subscribe.clone()).await?;
                        subscribed = true;
                    }
                    Some("ping") => ws.send(crate::ws::pong()).await?,
                    Some("next") => {
                        if let Some(errors) = message["payload"]["errors"].as_array() {
                            // The database was away when it subscribed: ask again.
                            anyhow::bail!("the subscription failed: {errors:?}");
                        }
                        let event = &message["payload"]["data"]["gprEvents"];
                        let sequence = event["sequence"].as_i64().context("a sequence")?;
                        let id = event["id"].as_str().context("an id")?.to_owned();
                        let mut r = received.lock().unwrap_or_else(|p| p.into_inner());
                        r.events.push(Delivery {
                            sequence,
                            gpr: event["gpr"]["id"].as_str().unwrap_or_default().to_owned(),
                            kind: event["kind"].as_str().unwrap_or_default().to_owned(),
                            at: std::time::Instant::now(),
                        });
                        *after = Some(id);
                    }
                    Some("error") => anyhow::bail!("the subscription was refused: {message}"),
                    Some("complete") => return Ok(None),
                    _ => {}
                }
            }
            Message::Close(frame) => return Ok(frame.map(|f| u16::from(f.code))),
            _ => {}
        }
    }
}

/// Sends one GraphQL request to `base`; the status and body (or the transport error).
pub async fn post(client: &reqwest::Client, base: &str, token: &str, query: &str, variables: Value) -> anyhow::Result<(u16, Value)> {
    let response = client
        .post(format!("{base}/graphql"))
        .header("accept", crate::GRAPHQL_RESPONSE_JSON)
        .bearer_auth(token)
        .json(&json!({ "query": query, "variables": variables }))
        .timeout(Duration::from_secs(10))
        .send()
        .await?;
    let status = response.status().as_u16();
    Ok((status, response.json().await?))
}
