//! A real Kubernetes control plane for tests, the envtest way: `etcd` and `kube-apiserver` built
//! from Go modules (`tests/control-plane/`) at pinned releases, started on loopback ports with
//! generated certificates, static token authentication for the test identities and the RBAC
//! authorizer, and stopped when dropped. No kubelet and no controllers run: tests create Node
//! objects and pods bound to nodes themselves, and do what a controller would.
//!
//! The binaries are built once per machine into a cache keyed by the versions (see
//! [`binaries`]); the first build takes minutes, later starts a few seconds.

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair, SanType};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The Kubernetes release `kube-apiserver` is built from (its staging modules are pinned to
/// the matching `v0.x` in `tests/control-plane/apiserver/go.mod`).
pub const KUBERNETES_VERSION: &str = "v1.37.2";
/// The etcd release (`tests/control-plane/etcd/go.mod`), the one that Kubernetes release's
/// etcd client is at.
pub const ETCD_VERSION: &str = "v3.7.0";

/// The admin identity's token (group `system:masters`).
const ADMIN_USER: &str = "egs-test-admin";

/// Where the binaries are cached: `$EGS_CONTROL_PLANE_CACHE`, else `~/.cache/egs/control-plane`,
/// one directory per pair of versions, outside the clone so every checkout on the machine
/// shares one build.
pub fn cache_dir() -> PathBuf {
    cache_root().join(format!("kubernetes-{KUBERNETES_VERSION}-etcd-{ETCD_VERSION}"))
}

fn cache_root() -> PathBuf {
    std::env::var_os("EGS_CONTROL_PLANE_CACHE").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
        home.join(".cache/egs/control-plane")
    })
}

/// The Helm release `helm` is built from (`tests/control-plane/helm/go.mod`), which renders
/// the chart in `deploy/helm/egs` in the deploy tests.
pub const HELM_VERSION: &str = "v3.22.0";

/// `helm`, built when missing, cached like the control plane's binaries (its own directory,
/// keyed by its version).
pub fn helm() -> Result<PathBuf, Unavailable> {
    static BUILT: std::sync::Mutex<Option<Result<PathBuf, String>>> = std::sync::Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(result) = built.as_ref() {
        return result.clone().map_err(Unavailable);
    }
    let dir = cache_root().join(format!("helm-{HELM_VERSION}"));
    let binary = dir.join("helm");
    let result = if binary.exists() {
        Ok(binary)
    } else {
        (|| {
            std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let _lock = FileLock::acquire(&dir.join(".build.lock"), Duration::from_secs(1800))?;
            go_build("helm", "helm.sh/helm/v3/cmd/helm", &binary)?;
            Ok(binary)
        })()
    };
    *built = Some(result.clone());
    result.map_err(Unavailable)
}

/// Why the real control plane could not start: the tests that need it say so (and fail
/// where `EGS_TEST_REQUIRE_KUBE` is set, as in CI).
#[derive(Debug)]
pub struct Unavailable(pub String);

/// `kube-apiserver` and `etcd`, built when missing. Concurrent callers (test threads, or
/// several test processes) build once: the build holds a lock file, and binaries appear by
/// rename only when complete.
pub fn binaries() -> Result<(PathBuf, PathBuf), Unavailable> {
    static BUILT: std::sync::Mutex<Option<Result<(PathBuf, PathBuf), String>>> = std::sync::Mutex::new(None);
    let mut built = BUILT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(result) = built.as_ref() {
        return result.clone().map_err(Unavailable);
    }
    let result = build_binaries();
    *built = Some(result.clone());
    result.map_err(Unavailable)
}

fn build_binaries() -> Result<(PathBuf, PathBuf), String> {
    let dir = cache_dir();
    let (apiserver, etcd) = (dir.join("kube-apiserver"), dir.join("etcd"));
    if apiserver.exists() && etcd.exists() {
        return Ok((apiserver, etcd));
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let lock = dir.join(".build.lock");
    let _lock = FileLock::acquire(&lock, Duration::from_secs(1800))?;
    for (module, package, binary) in [("apiserver", "k8s.io/kubernetes/cmd/kube-apiserver", &apiserver), ("etcd", "go.etcd.io/etcd/server/v3", &etcd)]
    {
        if !binary.exists() {
            go_build(module, package, binary)?;
        }
    }
    Ok((apiserver, etcd))
}

/// Builds `package` with the versions pinned in `tests/control-plane/<module>` into `binary`
/// (which appears, by rename, only when complete). The caller holds the cache's lock.
fn go_build(module: &str, package: &str, binary: &Path) -> Result<(), String> {
    let go = which("go").ok_or_else(|| format!("{package} is built with Go, and `go` is not on PATH"))?;
    let modules = Path::new(env!("CARGO_MANIFEST_DIR")).join("control-plane");
    let started = Instant::now();
    let dir = binary.parent().ok_or("a binary path has a directory")?;
    eprintln!("building {package} into {} (once per machine; a few minutes)", dir.display());
    let partial = dir.join(format!(".{module}.partial"));
    let status = Command::new(&go)
        .args(["build", "-trimpath", "-ldflags=-s -w", "-o"])
        .arg(&partial)
        .arg(package)
        .current_dir(modules.join(module))
        .env("CGO_ENABLED", "0")
        .env("GOFLAGS", "-mod=readonly")
        .status()
        .map_err(|e| format!("cannot run go: {e}"))?;
    if !status.success() {
        return Err(format!("`go build {package}` in tests/control-plane/{module} failed ({status})"));
    }
    std::fs::rename(&partial, binary).map_err(|e| format!("cannot move the built {module}: {e}"))?;
    eprintln!("built {package} in {:.0?}", started.elapsed());
    Ok(())
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|p| p.join(name)).find(|p| p.is_file()))
}

/// A lock held by creating a file exclusively; waits for another holder to finish.
struct FileLock(PathBuf);

impl FileLock {
    fn acquire(path: &Path, within: Duration) -> Result<Self, String> {
        let deadline = Instant::now() + within;
        loop {
            match std::fs::OpenOptions::new().write(true).create_new(true).open(path) {
                Ok(_) => return Ok(Self(path.to_owned())),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    // A holder that died leaves its lock: an hour-old one is stale.
                    let stale = std::fs::metadata(path)
                        .and_then(|m| m.modified())
                        .is_ok_and(|at| at.elapsed().unwrap_or_default() > Duration::from_secs(3600));
                    if stale {
                        let _ = std::fs::remove_file(path);
                        continue;
                    }
                    if Instant::now() > deadline {
                        return Err(format!("another build holds {} for too long", path.display()));
                    }
                    std::thread::sleep(Duration::from_millis(500));
                }
                Err(e) => return Err(format!("cannot lock {}: {e}", path.display())),
            }
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A port that is free now, below Linux's ephemeral range (32768–60999): a port the kernel
/// hands out for `bind(0)` or an outgoing connection can be taken by another test between our
/// check and the server's own bind; one outside that range is only taken by another pick like
/// this one, and [`ControlPlane::start_with`] retries that rare collision.
fn free_port() -> u16 {
    loop {
        let port = 20_000 + rand::random::<u16>() % 12_000;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// How many times a start is tried when a port it picked was taken before the server bound it.
const START_ATTEMPTS: usize = 4;

/// A running etcd and kube-apiserver; both are killed when this is dropped.
pub struct ControlPlane {
    /// `https://127.0.0.1:PORT`.
    pub url: String,
    /// The CA that signed the API server's certificate (PEM).
    pub ca_pem: String,
    /// A token of group `system:masters`.
    pub admin_token: String,
    /// etcd, then the API server.
    processes: Vec<Child>,
    /// How the API server was started: its binary and flags.
    apiserver: (PathBuf, Vec<String>),
    dir: tempfile::TempDir,
}

impl ControlPlane {
    /// Starts etcd and kube-apiserver, waits until the API server is ready.
    pub async fn start() -> Result<Self, Unavailable> {
        Self::start_with(&[]).await
    }

    /// [`ControlPlane::start`] with more kube-apiserver flags.
    pub async fn start_with(extra_flags: &[&str]) -> Result<Self, Unavailable> {
        let mut attempt = 1;
        loop {
            match Self::start_once(extra_flags).await {
                Err(Unavailable(why)) if why.contains("address already in use") && attempt < START_ATTEMPTS => {
                    eprintln!("control plane: a port was taken before etcd or the API server bound it; trying other ports");
                    attempt += 1;
                }
                started => return started,
            }
        }
    }

    async fn start_once(extra_flags: &[&str]) -> Result<Self, Unavailable> {
        let (apiserver, etcd) = tokio::task::spawn_blocking(binaries).await.map_err(|e| Unavailable(e.to_string()))??;
        let apiserver_binary = apiserver.clone();
        let dir = tempfile::tempdir().map_err(|e| Unavailable(e.to_string()))?;
        let path = |name: &str| dir.path().join(name);
        let write = |name: &str, text: &str| std::fs::write(path(name), text).map_err(|e| Unavailable(e.to_string()));

        // A CA, the API server's serving certificate for 127.0.0.1, and the key that signs
        // service-account tokens.
        let ca_key = KeyPair::generate().map_err(|e| Unavailable(e.to_string()))?;
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(|e| Unavailable(e.to_string()))?;
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params.distinguished_name.push(DnType::CommonName, "egs-test-ca");
        let ca = ca_params.self_signed(&ca_key).map_err(|e| Unavailable(e.to_string()))?;
        let issuer = rcgen::Issuer::new(ca_params, ca_key);
        let serving_key = KeyPair::generate().map_err(|e| Unavailable(e.to_string()))?;
        let mut serving = CertificateParams::new(vec!["localhost".to_owned()]).map_err(|e| Unavailable(e.to_string()))?;
        serving.subject_alt_names.push(SanType::IpAddress(std::net::IpAddr::from([127, 0, 0, 1])));
        serving.distinguished_name.push(DnType::CommonName, "kube-apiserver");
        let serving = serving.signed_by(&serving_key, &issuer).map_err(|e| Unavailable(e.to_string()))?;
        let service_accounts = KeyPair::generate().map_err(|e| Unavailable(e.to_string()))?;
        write("ca.crt", &ca.pem())?;
        write("serving.crt", &serving.pem())?;
        write("serving.key", &serving_key.serialize_pem())?;
        write("sa.key", &service_accounts.serialize_pem())?;
        write("sa.pub", &service_accounts.public_key_pem())?;
        let admin_token = format!("admin-{}", random_hex(16));
        write("tokens.csv", &format!("{admin_token},{ADMIN_USER},{ADMIN_USER},\"system:masters\"\n"))?;

        let (etcd_port, peer_port, api_port) = (free_port(), free_port(), free_port());
        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let log = |name: &str| std::fs::File::create(path(name)).map(Stdio::from).map_err(|e| Unavailable(e.to_string()));
        let etcd = Command::new(etcd)
            .arg(format!("--data-dir={}", path("etcd").display()))
            .arg(format!("--listen-client-urls={etcd_url}"))
            .arg(format!("--advertise-client-urls={etcd_url}"))
            .arg(format!("--listen-peer-urls=http://127.0.0.1:{peer_port}"))
            .arg(format!("--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}"))
            .arg(format!("--initial-cluster=default=http://127.0.0.1:{peer_port}"))
            .arg("--unsafe-no-fsync")
            .stdout(log("etcd.log")?)
            .stderr(log("etcd.err")?)
            .spawn()
            .map_err(|e| Unavailable(format!("cannot start etcd: {e}")))?;
        let mut processes = vec![etcd];
        // Kept to start the API server again (`restart_apiserver`) with the same flags.
        let args: Vec<String> = [
            format!("--etcd-servers={etcd_url}"),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            // The kubernetes Service endpoints may not name a loopback address; nothing here needs them.
            "--endpoint-reconciler-type=none".into(),
            format!("--secure-port={api_port}"),
            format!("--tls-cert-file={}", path("serving.crt").display()),
            format!("--tls-private-key-file={}", path("serving.key").display()),
            format!("--token-auth-file={}", path("tokens.csv").display()),
            "--authorization-mode=RBAC".into(),
            format!("--service-account-key-file={}", path("sa.pub").display()),
            format!("--service-account-signing-key-file={}", path("sa.key").display()),
            "--service-account-issuer=https://kubernetes.default.svc".into(),
            "--service-cluster-ip-range=10.96.0.0/16".into(),
            "--allow-privileged=true".into(),
            format!("--cert-dir={}", path("certs").display()),
        ]
        .into_iter()
        .chain(extra_flags.iter().map(|f| (*f).to_owned()))
        .collect();
        let apiserver = spawn_apiserver(&apiserver, &args, dir.path());
        match apiserver {
            Ok(child) => processes.push(child),
            Err(e) => {
                kill_all(&mut processes);
                return Err(e);
            }
        }
        let mut plane =
            Self { url: format!("https://127.0.0.1:{api_port}"), ca_pem: ca.pem(), admin_token, processes, apiserver: (apiserver_binary, args), dir };
        plane.wait_ready(Duration::from_secs(90)).await?;
        Ok(plane)
    }

    /// Stops the API server (as a crash or an upgrade does: every connection drops) and starts
    /// it again on the same address with the same state in etcd; waits until it is ready.
    /// Its watch cache starts afresh, so a client resuming a watch from before gets 410 Gone.
    pub async fn restart_apiserver(&mut self) -> Result<(), Unavailable> {
        if let Some(mut old) = self.processes.pop() {
            let _ = old.kill();
            let _ = old.wait();
        }
        let child = spawn_apiserver(&self.apiserver.0, &self.apiserver.1, self.dir.path())?;
        self.processes.push(child);
        self.wait_ready(Duration::from_secs(90)).await
    }

    /// Waits for `/readyz`; fails at once, with the logs, if etcd or the API server has exited.
    async fn wait_ready(&mut self, within: Duration) -> Result<(), Unavailable> {
        let client = self.client();
        let deadline = Instant::now() + within;
        loop {
            if self.processes.iter_mut().any(|child| matches!(child.try_wait(), Ok(Some(_)))) {
                return Err(Unavailable(format!("etcd or kube-apiserver exited while starting:\n{}", self.logs())));
            }
            let request = http::Request::get("/readyz").body(Vec::new()).map_err(|e| Unavailable(e.to_string()))?;
            let last = match client.request_text(request).await {
                Ok(text) if text.trim() == "ok" => return Ok(()),
                Ok(text) => text,
                Err(e) => e.to_string(),
            };
            if Instant::now() > deadline {
                return Err(Unavailable(format!("kube-apiserver was not ready within {within:?} (last answer: {last}):\n{}", self.logs())));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// The tails of etcd's and the API server's logs, for failure messages.
    pub fn logs(&self) -> String {
        ["etcd.err", "apiserver.err"]
            .iter()
            .map(|name| {
                let text = std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(30).collect::<Vec<_>>().into_iter().rev().collect();
                format!("--- {name}\n{}", tail.join("\n"))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// A kubeconfig (one cluster, user and current context) that authenticates with `token`
    /// and trusts the test CA.
    pub fn kubeconfig_for_token(&self, token: &str) -> String {
        use base64::Engine;
        let ca = base64::engine::general_purpose::STANDARD.encode(&self.ca_pem);
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: real-kube\n  cluster:\n    server: {url}\n    certificate-authority-data: {ca}\nusers:\n- name: real-kube-user\n  user:\n    token: {token}\ncontexts:\n- name: real-kube\n  context:\n    cluster: real-kube\n    user: real-kube-user\n    namespace: default\ncurrent-context: real-kube\npreferences: {{}}\n",
            url = self.url
        )
    }

    pub fn kubeconfig(&self) -> String {
        self.kubeconfig_for_token(&self.admin_token)
    }

    /// A kube client for `token`.
    pub fn client_for_token(&self, token: &str) -> kube::Client {
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&self.kubeconfig_for_token(token)).expect("our kubeconfig parses");
        let config = futures_util::FutureExt::now_or_never(kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()))
            .expect("a kubeconfig without exec resolves at once")
            .expect("a usable kubeconfig");
        kube::Client::try_from(config).expect("a kube client")
    }

    /// A kube client with the admin token.
    pub fn client(&self) -> kube::Client {
        self.client_for_token(&self.admin_token)
    }
}

fn spawn_apiserver(binary: &Path, args: &[String], dir: &Path) -> Result<Child, Unavailable> {
    let log = |name: &str| {
        std::fs::OpenOptions::new().create(true).append(true).open(dir.join(name)).map(Stdio::from).map_err(|e| Unavailable(e.to_string()))
    };
    Command::new(binary)
        .args(args)
        .stdout(log("apiserver.log")?)
        .stderr(log("apiserver.err")?)
        .spawn()
        .map_err(|e| Unavailable(format!("cannot start kube-apiserver: {e}")))
}

fn kill_all(processes: &mut [Child]) {
    for child in processes.iter_mut().rev() {
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for ControlPlane {
    fn drop(&mut self) {
        kill_all(&mut self.processes);
    }
}

fn random_hex(bytes: usize) -> String {
    (0..bytes).map(|_| format!("{:02x}", rand::random::<u8>())).collect()
}

/// The real control plane, or why not: with `EGS_TEST_REQUIRE_KUBE` set (CI) a missing one
/// fails the test; otherwise the test says loudly that it skipped.
pub async fn start_or_skip(test: &str) -> Option<ControlPlane> {
    start_with_or_skip(test, &[]).await
}

/// [`start_or_skip`] with more kube-apiserver flags.
pub async fn start_with_or_skip(test: &str, extra_flags: &[&str]) -> Option<ControlPlane> {
    match ControlPlane::start_with(extra_flags).await {
        Ok(plane) => Some(plane),
        Err(Unavailable(why)) => {
            assert!(std::env::var_os("EGS_TEST_REQUIRE_KUBE").is_none(), "{test}: the real kube-apiserver was required but: {why}");
            eprintln!("\n*** SKIPPED {test}: no real kube-apiserver ({why}) ***\n");
            None
        }
    }
}
