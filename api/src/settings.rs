//! Typed configuration of the `egs` binary: flags, with `EGS_*` environment variables as
//! equivalents (clap reads them; nothing else in the gateway reads the environment).

use clap::{Args, Parser, Subcommand};
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "egs", version, about = "Elastic GPU Service: share GPU nodes between teams across Kubernetes clusters")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

// Parsed once at start: the size of the `serve` settings beside the small commands costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the gateway (GraphQL API, playground, portal).
    Serve(ServeArgs),
    /// Apply database migrations and exit.
    Migrate(StorageArgs),
    /// Print the GraphQL schema (SDL).
    PrintSchema,
    /// Print the `GPUProvisioningRequest` CustomResourceDefinition (YAML) for `kubectl apply -f -`.
    PrintCrd,
    /// Manage access tokens.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Replay GPU cluster job traces through the scheduler on virtual time; print a JSON report.
    Replay(ReplayArgs),
    /// The client: `egs login`, `egs gpr …`, `egs events`, `egs gpus` against a gateway's API.
    #[command(flatten)]
    Client(crate::client::ClientCommand),
}

#[derive(Args, Debug, Clone)]
pub struct ReplayArgs {
    /// CSV or gzipped CSV with `job_id,submission_time,duration,num_gpu` (repeatable).
    #[arg(long = "trace", required = true)]
    pub traces: Vec<PathBuf>,
    /// Nodes in the replayed pool.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub nodes: u32,
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub gpus_per_node: u32,
    /// Slices the jobs are spread over (by job id); a slice runs one GPR at a time.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub slices: u32,
    /// Reserved window = the job's duration × its reserve factor, rounded up to a minute; the
    /// factors average this.
    #[arg(long, default_value_t = 1.5)]
    pub reserve_factor: f64,
    /// Each job's reserve factor is drawn from its id, uniform in [F − S, F + S], at least 1.
    #[arg(long, default_value_t = 0.5)]
    pub reserve_spread: f64,
    /// Seconds provisioning really takes (the scheduler plans the gateway's allowance).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(i64).range(0..=86_400))]
    pub provisioning_delay: i64,
    /// Seconds a release really takes.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(i64).range(0..=86_400))]
    pub release_delay: i64,
    /// Node failures a day (deterministic times and nodes; each repaired after 4 h).
    #[arg(long, default_value_t = 0.0)]
    pub failures_per_day: f64,
    /// Seconds ahead promises are firm against arrivals below the high band (a cluster's
    /// `firmHorizon`); 0: none.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(i64).range(0..=30 * 86_400))]
    pub firm_horizon: i64,
    #[arg(long, value_enum, default_value_t = ReplayPolicy::Egs)]
    pub policy: ReplayPolicy,
    /// What an EGS run is compared with, under the same delays and the one-GPR-per-slice rule.
    #[arg(long, value_enum, default_value_t = ReplayBaseline::Fifo)]
    pub baseline: ReplayBaseline,
    #[arg(long, value_enum, default_value_t = ReplayFormat::Json)]
    pub format: ReplayFormat,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayPolicy {
    /// The EGS scheduler; the report also carries the baseline on the same input.
    Egs,
    /// First come, first served.
    Fifo,
    /// EASY backfill (Slurm's), without promises.
    Easy,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayBaseline {
    Fifo,
    Easy,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplayFormat {
    /// One JSON object on one line.
    Json,
    /// Indented JSON.
    Pretty,
}

#[derive(Subcommand, Debug)]
pub enum TokenCommand {
    /// Issue a token and print it.
    Create(TokenCreateArgs),
}

/// Where state lives; shared by every command that opens the database.
#[derive(Args, Debug, Clone)]
pub struct StorageArgs {
    /// Directory for the SQLite database, the signing key and the bootstrap admin token.
    #[arg(long, env = "EGS_DATA_DIR", default_value = "./egs-data")]
    pub data_dir: PathBuf,
    /// Database URL (`sqlite://…` or `postgres://…`); default: a SQLite file in the data dir.
    #[arg(long, env = "EGS_DATABASE_URL")]
    pub database_url: Option<Secret>,
    /// Token signing key (at least 32 bytes); default: generated once and kept in the data dir.
    #[arg(long, env = "EGS_SIGNING_KEY", hide_env_values = true)]
    pub signing_key: Option<Secret>,
    /// SQLite: read-only connections queries read through beside the one writer (0: queries
    /// share the writer). Ignored on PostgreSQL.
    #[arg(long, env = "EGS_SQLITE_READERS", default_value_t = crate::db::SQLITE_READERS)]
    pub sqlite_readers: u32,
}

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    #[arg(long, env = "EGS_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Serve `/metrics` (without a token) on this address instead, for the platform's Prometheus
    /// on a private network. Without it, `/metrics` on `--listen` needs an admin token.
    #[arg(long, env = "EGS_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    #[command(flatten)]
    pub storage: StorageArgs,
    /// Redis URL for cross-replica fan-out; default: none (in-process).
    #[arg(long, env = "EGS_REDIS_URL")]
    pub redis_url: Option<Secret>,
    /// Serve the API only and never run the scheduler loop (another replica runs it).
    #[arg(long, env = "EGS_NO_SCHEDULER")]
    pub no_scheduler: bool,
    /// How long each step of the simulated cluster provider takes (provisioning, release).
    #[arg(long, env = "EGS_SIMULATED_STEP_MS", default_value_t = 500, hide = true)]
    pub simulated_step_ms: u64,
    /// Seed a demo inventory, slices, users and GPRs (once; skipped when present).
    #[arg(long, env = "EGS_DEMO")]
    pub demo: bool,
    /// Largest request body accepted, in bytes.
    #[arg(long, env = "EGS_MAX_BODY_BYTES", default_value_t = 1024 * 1024)]
    pub max_body_bytes: usize,
    /// Origins allowed to call the API from a browser (comma-separated); default: same origin only.
    #[arg(long, env = "EGS_CORS_ORIGINS", value_delimiter = ',')]
    pub cors_origins: Vec<String>,
    /// Refuse introspection queries (`__schema`, `__type`), e.g. on a public endpoint; the
    /// playground then has no schema to browse. The SDL stays available from `egs print-schema`.
    #[arg(long, env = "EGS_NO_INTROSPECTION")]
    pub no_introspection: bool,
    /// Query cost (complexity) each user may spend per second on this replica (agent tokens,
    /// which belong to no user, each have their own); an
    /// operation over budget is refused with `RATE_LIMITED` (HTTP 429 with `Retry-After`).
    /// 0 switches the budget off.
    #[arg(long, env = "EGS_RATE_LIMIT", default_value_t = ServeArgs::DEFAULT_RATE_LIMIT)]
    pub rate_limit: u32,
    /// How much cost a user may spend at once (their bucket); at least the complexity limit.
    #[arg(long, env = "EGS_RATE_LIMIT_BURST", default_value_t = ServeArgs::DEFAULT_RATE_LIMIT_BURST, value_parser = clap::value_parser!(u32).range(egs_schema::MAX_QUERY_COMPLEXITY as i64..))]
    pub rate_limit_burst: u32,
    /// Seconds a scheduler leader that stops renewing keeps the lease; another replica takes
    /// over after at most this (plus a tick). Shorter fails over faster but tolerates shorter
    /// stalls of the leader (it renews every second).
    #[arg(long, env = "EGS_LEASE_TTL", default_value_t = ServeArgs::DEFAULT_LEASE_TTL_SECS, value_parser = clap::value_parser!(u64).range(3..=300))]
    pub lease_ttl_secs: u64,
    /// Seconds a node agent may gather samples before it reports while nobody watches the
    /// node's GPUs live (it reports every sample as taken while someone does). Samples keep
    /// their timestamps, so history has every second either way; `latestSample`, alert rules
    /// and heartbeats see them up to this much later. Also how often at most a node's latest
    /// values and heartbeat are written to the database, watched or not (live subscribers and
    /// the alert rules still see every report at once). 0: agents always report as they
    /// sample, and every report is written.
    #[arg(long, env = "EGS_UNWATCHED_REPORT_INTERVAL", default_value_t = ServeArgs::DEFAULT_UNWATCHED_REPORT_INTERVAL_SECS, value_parser = clap::value_parser!(u64).range(0..=egs_domain::metrics::batch::MAX_UNWATCHED_INTERVAL.as_secs()))]
    pub unwatched_report_interval_secs: u64,
    #[command(flatten)]
    pub ws: WsArgs,
    #[command(flatten)]
    pub per_user: PerUserArgs,
    #[command(flatten)]
    pub alerts: AlertArgs,
    #[command(flatten)]
    pub notify: NotifyArgs,
    #[command(flatten)]
    pub kubernetes: KubernetesArgs,
    #[command(flatten)]
    pub oidc: OidcArgs,
}

impl ServeArgs {
    /// A portal user's heaviest page costs about 2,000; scripts get ~40 createGpr a second.
    pub const DEFAULT_RATE_LIMIT: u32 = 2_000;
    pub const DEFAULT_RATE_LIMIT_BURST: u32 = egs_schema::MAX_QUERY_COMPLEXITY as u32;
    pub const DEFAULT_LEASE_TTL_SECS: u64 = 6;
    /// A report's fixed cost is most of ingest's: five seconds' samples per report cut a
    /// fleet's cost about five times, and unwatched GPUs are a few seconds late, not lost.
    pub const DEFAULT_UNWATCHED_REPORT_INTERVAL_SECS: u64 = 5;

    /// The per-user cost budget the schema enforces.
    pub fn cost_budget(&self) -> Option<egs_schema::limits::CostBudget> {
        let per_second = std::num::NonZeroU32::new(self.rate_limit)?;
        let burst = std::num::NonZeroU32::new(self.rate_limit_burst.max(self.rate_limit))?;
        Some(egs_schema::limits::CostBudget { per_second, burst })
    }
}

/// The Kubernetes provider: how long release waits on PodDisruptionBudgets, how often the
/// controllers look for new clusters and refresh GPR resources, when auto-GPR steps in.
#[derive(Args, Debug, Clone)]
pub struct KubernetesArgs {
    /// Seconds release keeps retrying evictions a PodDisruptionBudget refuses before it reports
    /// the release blocked (it is retried later; the nodes stay the slice's meanwhile).
    #[arg(long = "eviction-deadline", env = "EGS_EVICTION_DEADLINE", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub eviction_deadline_secs: u64,
    /// Seconds a pod asking for `nvidia.com/gpu` stays Pending in an auto-GPR slice's namespace
    /// before a GPR is created for it.
    #[arg(long = "auto-gpr-after", env = "EGS_AUTO_GPR_AFTER", default_value_t = 30, value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub auto_gpr_after_secs: u64,
    /// How often the leader looks for registered or removed Kubernetes clusters, in ms.
    #[arg(long = "cluster-poll-ms", env = "EGS_CLUSTER_POLL_MS", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(50..=600_000), hide = true)]
    pub cluster_poll_ms: u64,
    /// How often GPR resources' status is refreshed from the gateway, in ms.
    #[arg(long = "gpr-status-resync-ms", env = "EGS_GPR_STATUS_RESYNC_MS", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(50..=600_000), hide = true)]
    pub status_resync_ms: u64,
    /// The Pod Security level enforced in the slice namespaces EGS creates
    /// (`pod-security.kubernetes.io/enforce`): `restricted`, `baseline` or `privileged`.
    /// Baseline keeps tenants off the host (no hostPath, hostPID, privileged containers).
    #[arg(long = "slice-pod-security", env = "EGS_SLICE_POD_SECURITY", default_value = "baseline", value_parser = ["restricted", "baseline", "privileged"])]
    pub slice_pod_security: String,
    /// The ServiceAccount (`<namespace>:<name>`) whose projected tokens sign node agents in
    /// (`signInAgent`): each gets a token for the node its pod runs on.
    #[arg(long = "agent-service-account", env = "EGS_AGENT_SERVICE_ACCOUNT", default_value = egs_domain::token::agent::DEFAULT_AGENT_SERVICE_ACCOUNT, value_parser = parse_service_account)]
    pub agent_service_account: String,
}

/// `<namespace>:<name>`, both DNS labels.
fn parse_service_account(text: &str) -> Result<String, String> {
    let label = |s: &str| !s.is_empty() && s.len() <= 253 && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    match text.split_once(':') {
        Some((ns, name)) if label(ns) && label(name) => Ok(text.to_owned()),
        _ => Err(format!("`{text}` is not `<namespace>:<name>` of a ServiceAccount")),
    }
}

impl Default for KubernetesArgs {
    fn default() -> Self {
        Self {
            eviction_deadline_secs: 300,
            auto_gpr_after_secs: 30,
            cluster_poll_ms: 5000,
            status_resync_ms: 5000,
            slice_pod_security: "baseline".into(),
            agent_service_account: egs_domain::token::agent::DEFAULT_AGENT_SERVICE_ACCOUNT.into(),
        }
    }
}

/// Alerts: the webhook they are posted to, and how often time-driven rules run.
#[derive(Args, Debug, Clone)]
pub struct AlertArgs {
    /// Slack-compatible incoming webhook every alert raise and clear is POSTed to (JSON with
    /// `text` and `attachments`); default: none. Logged as its scheme and host only. Given by
    /// `EGS_ALERT_WEBHOOK_URL` or `--alert-webhook-url-file`, never on the command line, where
    /// every local user could read it in the process list.
    #[arg(skip)]
    pub webhook_url: Option<Secret>,
    /// A file holding the alert webhook URL (a mounted Secret), instead of `EGS_ALERT_WEBHOOK_URL`.
    #[arg(long = "alert-webhook-url-file", env = "EGS_ALERT_WEBHOOK_URL_FILE")]
    pub webhook_url_file: Option<std::path::PathBuf>,
    /// How often the time-driven alert rules (stale nodes, idle GPRs, quiet periods) run, in ms.
    #[arg(long = "alert-sweep-interval-ms", env = "EGS_ALERT_SWEEP_INTERVAL_MS", default_value_t = AlertArgs::DEFAULT_SWEEP_INTERVAL_MS, value_parser = clap::value_parser!(u64).range(50..=600_000), hide = true)]
    pub sweep_interval_ms: u64,
}

impl AlertArgs {
    /// Well under the 30 s after which a silent agent's node is stale.
    pub const DEFAULT_SWEEP_INTERVAL_MS: u64 = 5000;

    /// The webhook URL: as set in code (tests), else from its file, else from
    /// `EGS_ALERT_WEBHOOK_URL`; `None` when none is configured.
    pub fn webhook_url(&self) -> anyhow::Result<Option<Secret>> {
        secret_setting(&self.webhook_url, self.webhook_url_file.as_deref(), "EGS_ALERT_WEBHOOK_URL", "the alert webhook URL")
    }
}

/// A secret setting: as set in code (tests), else read from its file (a mounted Secret), else
/// from the environment variable `env`; never a command-line argument, which every local user
/// could read in the process list.
fn secret_setting(set: &Option<Secret>, file: Option<&std::path::Path>, env: &str, what: &str) -> anyhow::Result<Option<Secret>> {
    if let Some(value) = set {
        return Ok(Some(value.clone()));
    }
    if let Some(path) = file {
        let text = std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("cannot read {what} from {}: {e}", path.display()))?;
        return Ok(Some(Secret::from(text.trim().to_owned())));
    }
    Ok(std::env::var(env).ok().filter(|v| !v.trim().is_empty()).map(Secret::from))
}

/// Single sign-on for the portal with an OpenID Connect identity provider (authorization code
/// with PKCE). Off unless `--oidc-issuer` is given.
#[derive(Args, Debug, Clone, Default)]
pub struct OidcArgs {
    /// The issuer URL; its `/.well-known/openid-configuration` is read on first use.
    #[arg(long = "oidc-issuer", env = "EGS_OIDC_ISSUER", requires = "client_id")]
    pub issuer: Option<String>,
    /// The client id EGS is registered under at the identity provider.
    #[arg(long = "oidc-client-id", env = "EGS_OIDC_CLIENT_ID")]
    pub client_id: Option<String>,
    /// A file holding the client secret (a mounted Secret), for a confidential client; without
    /// one EGS is a public client and PKCE alone protects the code.
    #[arg(long = "oidc-client-secret-file", env = "EGS_OIDC_CLIENT_SECRET_FILE")]
    pub client_secret_file: Option<std::path::PathBuf>,
    /// The redirect URL registered at the identity provider,
    /// `https://<egs>/auth/oidc/callback`; default: built from the request's Host (and
    /// `X-Forwarded-Proto`).
    #[arg(long = "oidc-redirect-url", env = "EGS_OIDC_REDIRECT_URL")]
    pub redirect_url: Option<String>,
    /// The scopes asked for.
    #[arg(long = "oidc-scopes", env = "EGS_OIDC_SCOPES", default_value = "openid profile email groups")]
    pub scopes: String,
    /// The ID token claim that lists the user's groups (the group rules match against it).
    #[arg(long = "oidc-groups-claim", env = "EGS_OIDC_GROUPS_CLAIM", default_value = "groups")]
    pub groups_claim: String,
}

/// Notification channels: the SMTP server e-mail channels use, which URLs users may name, how
/// soon a failed delivery is tried again.
#[derive(Args, Debug, Clone)]
pub struct NotifyArgs {
    /// SMTP server for e-mail channels: `smtp://relay:25` (a local relay, no TLS),
    /// `smtp://user:password@host:587?tls=required` (STARTTLS) or `smtps://user:password@host:465`;
    /// default: none (no e-mail channels). Given by `EGS_SMTP_URL` or `--smtp-url-file`.
    #[arg(skip)]
    pub smtp_url: Option<Secret>,
    /// A file holding the SMTP URL (a mounted Secret), instead of `EGS_SMTP_URL`.
    #[arg(long = "smtp-url-file", env = "EGS_SMTP_URL_FILE")]
    pub smtp_url_file: Option<std::path::PathBuf>,
    /// The sender of notification e-mails.
    #[arg(long = "smtp-from", env = "EGS_SMTP_FROM", default_value = NotifyArgs::DEFAULT_FROM)]
    pub smtp_from: String,
    /// Let users' webhooks name loopback and private addresses and plain http (receivers inside
    /// your network). Off, only public https URLs are posted to, so no user can make the gateway
    /// reach the database, Redis, the cloud's metadata service or the Kubernetes API.
    #[arg(long = "notify-private-targets", env = "EGS_NOTIFY_PRIVATE_TARGETS")]
    pub allow_private_targets: bool,
    /// Wait before a failed notification's second attempt, in ms; it doubles each time.
    #[arg(long = "notify-first-retry-ms", env = "EGS_NOTIFY_FIRST_RETRY_MS", default_value_t = NotifyArgs::DEFAULT_FIRST_RETRY_MS, value_parser = clap::value_parser!(u64).range(10..=3_600_000), hide = true)]
    pub first_retry_ms: u64,
    /// Domains e-mail channels may send to (comma-separated, e.g. `example.com`), besides
    /// the user's own address; default: none, so a user's channel mails only their own
    /// address and no one can make the gateway mail strangers.
    #[arg(long = "notify-email-domains", env = "EGS_NOTIFY_EMAIL_DOMAINS", value_delimiter = ',')]
    pub email_domains: Vec<String>,
}

impl NotifyArgs {
    pub const DEFAULT_FROM: &str = "EGS <egs@localhost>";
    pub const DEFAULT_FIRST_RETRY_MS: u64 = 10_000;

    pub fn smtp_url(&self) -> anyhow::Result<Option<Secret>> {
        secret_setting(&self.smtp_url, self.smtp_url_file.as_deref(), "EGS_SMTP_URL", "the SMTP URL")
    }
}

impl Default for NotifyArgs {
    fn default() -> Self {
        Self {
            smtp_url: None,
            smtp_url_file: None,
            smtp_from: Self::DEFAULT_FROM.into(),
            allow_private_targets: false,
            first_retry_ms: Self::DEFAULT_FIRST_RETRY_MS,
            email_domains: Vec::new(),
        }
    }
}

impl Default for AlertArgs {
    fn default() -> Self {
        Self { webhook_url: None, webhook_url_file: None, sweep_interval_ms: Self::DEFAULT_SWEEP_INTERVAL_MS }
    }
}

/// GraphQL over WebSocket (`/graphql/ws`).
#[derive(Args, Debug, Clone)]
pub struct WsArgs {
    /// Seconds a WebSocket client has to send `connection_init` before it is closed (4408).
    #[arg(long = "ws-init-timeout", env = "EGS_WS_INIT_TIMEOUT", default_value_t = WsArgs::DEFAULT_INIT_TIMEOUT_SECS, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub init_timeout_secs: u64,
    /// Seconds between the keep-alive pings the gateway sends on every WebSocket.
    #[arg(long = "ws-keep-alive", env = "EGS_WS_KEEP_ALIVE", default_value_t = WsArgs::DEFAULT_KEEP_ALIVE_SECS, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub keep_alive_secs: u64,
}

impl WsArgs {
    pub const DEFAULT_INIT_TIMEOUT_SECS: u64 = 10;
    /// Below the 30–60 s idle timeouts of common load balancers and proxies.
    pub const DEFAULT_KEEP_ALIVE_SECS: u64 = 15;
}

impl Default for WsArgs {
    fn default() -> Self {
        Self { init_timeout_secs: Self::DEFAULT_INIT_TIMEOUT_SECS, keep_alive_secs: Self::DEFAULT_KEEP_ALIVE_SECS }
    }
}

/// What one user may hold at once, so no team can crowd out the others: WebSocket connections
/// and live operations per replica, and unexpired tokens. 0 switches a limit off.
#[derive(Args, Debug, Clone)]
pub struct PerUserArgs {
    /// WebSocket connections one user (or agent token) may hold open on this replica.
    #[arg(long = "max-connections-per-user", env = "EGS_MAX_CONNECTIONS_PER_USER", default_value_t = PerUserArgs::DEFAULT_CONNECTIONS)]
    pub connections: u32,
    /// Operations (mostly subscriptions) one user may run at once over WebSocket on this
    /// replica, across all their connections.
    #[arg(long = "max-subscriptions-per-user", env = "EGS_MAX_SUBSCRIPTIONS_PER_USER", default_value_t = PerUserArgs::DEFAULT_SUBSCRIPTIONS)]
    pub subscriptions: u32,
    /// Unexpired, unrevoked tokens one user may hold; creating another is refused.
    #[arg(long = "max-tokens-per-user", env = "EGS_MAX_TOKENS_PER_USER", default_value_t = PerUserArgs::DEFAULT_TOKENS)]
    pub tokens: u32,
}

impl PerUserArgs {
    /// A person with a few portal tabs and scripts; a tab opens one connection.
    pub const DEFAULT_CONNECTIONS: u32 = 32;
    /// A dashboard runs a handful of subscriptions; a fleet script watching every GPR of a
    /// big slice a few hundred.
    pub const DEFAULT_SUBSCRIPTIONS: u32 = 500;
    pub const DEFAULT_TOKENS: u32 = 100;
}

impl Default for PerUserArgs {
    fn default() -> Self {
        Self { connections: Self::DEFAULT_CONNECTIONS, subscriptions: Self::DEFAULT_SUBSCRIPTIONS, tokens: Self::DEFAULT_TOKENS }
    }
}

#[derive(Args, Debug)]
pub struct TokenCreateArgs {
    #[command(flatten)]
    pub storage: StorageArgs,
    /// An admin token (for the bootstrap admin user).
    #[arg(long, conflicts_with = "user", required_unless_present = "user")]
    pub admin: bool,
    /// A user token for this user (created when missing).
    #[arg(long)]
    pub user: Option<String>,
    /// Limit the token to this slice (by name); the user becomes a member with `--role`.
    #[arg(long, requires = "user", requires = "role")]
    pub slice: Option<String>,
    /// Role in `--slice`: owner, editor or viewer.
    #[arg(long, requires = "slice")]
    pub role: Option<String>,
    /// Lifetime, e.g. `30d`, `12h`, `P90D`.
    #[arg(long, default_value = "90d")]
    pub ttl: String,
}

/// A configuration value that must not be printed (URLs with passwords, keys).
#[derive(Clone)]
pub struct Secret(String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Self(s.to_owned()))
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_alert_webhook_url_is_never_an_argument_and_comes_from_a_file() {
        // On the command line every local user could read it: refused.
        assert!(Cli::try_parse_from(["egs", "serve", "--alert-webhook-url", "https://hooks.example/secret"]).is_err());
        let dir = std::env::temp_dir().join(format!("egs-webhook-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("webhook-url");
        std::fs::write(&file, "https://hooks.example/T000/B000/secret\n").expect("write");
        let cli = Cli::try_parse_from(["egs", "serve", "--alert-webhook-url-file", file.to_str().expect("path")]).expect("parses");
        let Command::Serve(serve) = cli.command else { panic!("serve") };
        let url = serve.alerts.webhook_url().expect("readable").expect("a URL");
        assert_eq!(url.expose(), "https://hooks.example/T000/B000/secret");
        let missing = AlertArgs { webhook_url_file: Some(dir.join("absent")), ..AlertArgs::default() };
        assert!(missing.webhook_url().is_err(), "a missing file is an error, not silence");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
