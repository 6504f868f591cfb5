//! The agent's settings: one typed [`Config`], read once from flags and `EGS_AGENT_*`
//! environment variables (a flag wins over its variable). Nothing else in the agent reads the
//! environment. The token is never a flag or a variable: it is read from a file (a mounted
//! Kubernetes Secret), so it shows in neither `ps` nor `kubectl describe`.

use clap::Parser;
use egs_wire::duration::parse as parse_duration;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The shortest sampling interval: the gateway keeps one sample per GPU and second.
pub const MIN_INTERVAL: Duration = Duration::from_secs(1);
/// The longest sampling interval: a node is `STALE` after 30 s without a report.
pub const MAX_INTERVAL: Duration = Duration::from_secs(15);
/// The largest buffer: the gateway refuses samples older than 24 hours.
pub const MAX_BUFFER: Duration = Duration::from_secs(6 * 3600);

#[derive(Parser, Debug, Clone)]
#[command(
    name = "egs-node-agent",
    version,
    about = "EGS node agent: registers this node's GPUs with the EGS gateway, reports their samples, \
             and serves dcgm-exporter-compatible /metrics."
)]
pub struct Config {
    /// The gateway's base URL; the agent posts GraphQL to `<gateway>/graphql`.
    #[arg(long, env = "EGS_AGENT_GATEWAY", default_value = "http://127.0.0.1:8080")]
    pub gateway: String,

    /// The global id of this node's cluster in EGS (as `registerCluster` returned it).
    #[arg(long, env = "EGS_AGENT_CLUSTER_ID")]
    pub cluster_id: Option<String>,

    /// The cluster's name, for the `cluster` label of `/metrics` (as the gateway labels it).
    #[arg(long, env = "EGS_AGENT_CLUSTER_NAME")]
    pub cluster_name: Option<String>,

    /// This node's name, as the agent token names it; defaults to the host name. In a
    /// DaemonSet, pass `spec.nodeName` through the downward API.
    #[arg(long, env = "EGS_AGENT_NODE_NAME")]
    pub node_name: Option<String>,

    /// A file holding the agent token (`createToken` with role `AGENT` and this cluster: without
    /// `nodeName` one token serves every node of the cluster, as a DaemonSet's one Secret; with
    /// it, only that node); re-read when the gateway refuses the token, so a rotated Secret is
    /// picked up.
    #[arg(long, env = "EGS_AGENT_TOKEN_FILE")]
    pub token_file: Option<PathBuf>,

    /// Instead of `--token-file`: the pod's projected ServiceAccount token (audience `egs`),
    /// which the gateway has the cluster vouch for (`signInAgent`) and answers with an hour's
    /// token for this pod's node only. Re-read at each sign-in, as the kubelet rotates it.
    #[arg(long, env = "EGS_AGENT_IDENTITY_TOKEN_FILE", conflicts_with = "token_file")]
    pub identity_token_file: Option<PathBuf>,

    /// The node's instance type (e.g. `p5.48xlarge`), which `upsertNodes` requires; read from
    /// the node's `node.kubernetes.io/instance-type` label when `--kube-api` is set.
    #[arg(long, env = "EGS_AGENT_INSTANCE_TYPE")]
    pub instance_type: Option<String>,

    /// The node's own power alert threshold, W (sent with the registration).
    #[arg(long, env = "EGS_AGENT_POWER_THRESHOLD_WATTS")]
    pub power_threshold_watts: Option<f64>,

    /// The node's own temperature alert threshold, °C (sent with the registration).
    #[arg(long, env = "EGS_AGENT_TEMPERATURE_THRESHOLD_CELSIUS")]
    pub temperature_threshold_celsius: Option<f64>,

    /// How often to sample the GPUs and report: 1s to 15s.
    #[arg(long, env = "EGS_AGENT_INTERVAL", default_value = "1s", value_parser = parse_interval)]
    pub interval: Duration,

    /// How much history to keep while the gateway is unreachable (oldest dropped first).
    #[arg(long, env = "EGS_AGENT_BUFFER", default_value = "10m", value_parser = parse_buffer)]
    pub buffer: Duration,

    /// Where to serve `/healthz` and `/metrics` (dcgm-exporter's port by default).
    #[arg(long, env = "EGS_AGENT_LISTEN", default_value = "0.0.0.0:9400")]
    pub listen: SocketAddr,

    /// Serve no HTTP at all.
    #[arg(long, env = "EGS_AGENT_NO_HTTP")]
    pub no_http: bool,

    /// Simulate this many GPUs instead of reading NVML (tests, demos, benchmarks).
    #[arg(long, env = "EGS_AGENT_SIMULATE", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub simulate: Option<u32>,

    /// Simulated GPUs always run a training job on the whole node from the start, its
    /// processes in pods of this Kubernetes namespace (without it, jobs come and go, in
    /// `ml-team`): for tests and demos of workload → pods → GPUs.
    #[arg(long, env = "EGS_AGENT_SIMULATE_PODS", value_name = "NAMESPACE")]
    pub simulate_pods: Option<String>,

    /// The simulated GPUs' shape, as the gateway names shapes.
    #[arg(long, env = "EGS_AGENT_SHAPE", default_value = "NVIDIA-H100-80GB-HBM3")]
    pub shape: String,

    /// A fault to inject into a simulated GPU: `overheat:GPU`, `xid:CODE:GPU`, `lost:GPU`
    /// (falls off the bus), `ecc:GPU` (an uncorrected ECC error) or `recover:GPU`, optionally
    /// `@DELAY` after start (e.g. `overheat:0@30s`). Repeat or separate with commas.
    #[arg(long = "fault", env = "EGS_AGENT_FAULTS", value_delimiter = ',', value_parser = parse_fault)]
    pub faults: Vec<ScheduledFault>,

    /// Seed of the simulation (and of the retry jitter), for reproducible runs.
    #[arg(long, env = "EGS_AGENT_SEED")]
    pub seed: Option<u64>,

    /// The NVML library to load (default: `libnvidia-ml.so.1` from the loader's path).
    #[arg(long, env = "EGS_AGENT_NVML_LIB")]
    pub nvml_lib: Option<PathBuf>,

    /// Stay up with zero GPUs when no NVIDIA driver is found (instead of exiting).
    #[arg(long, env = "EGS_AGENT_ALLOW_NO_GPU")]
    pub allow_no_gpu: bool,

    /// Where the host's processes are: `/proc` with `hostPID: true`.
    #[arg(long, env = "EGS_AGENT_PROC_ROOT", default_value = "/proc")]
    pub proc_root: PathBuf,

    /// The Kubernetes API server (e.g. `https://kubernetes.default.svc`): the node's instance
    /// type is read there (the gateway names the pods using the GPUs).
    #[arg(long, env = "EGS_AGENT_KUBE_API")]
    pub kube_api: Option<String>,

    /// Name the pods using the GPUs from the kubelet's list of this node's pods as well (e.g.
    /// `https://$(HOST_IP):10250`), for `/metrics` before the gateway answers; needs
    /// `nodes/proxy` access, which reaches every kubelet: off by default.
    #[arg(long, env = "EGS_AGENT_KUBELET")]
    pub kubelet: Option<String>,

    /// Do not verify the kubelet's serving certificate (commonly self-signed).
    #[arg(long, env = "EGS_AGENT_KUBELET_INSECURE_TLS")]
    pub kubelet_insecure_tls: bool,

    /// The service account's token and CA, as Kubernetes mounts them.
    #[arg(long, env = "EGS_AGENT_SERVICE_ACCOUNT_DIR", default_value = "/var/run/secrets/kubernetes.io/serviceaccount")]
    pub service_account_dir: PathBuf,

    /// Take one batch of samples, send (or print) it, and exit.
    #[arg(long)]
    pub once: bool,

    /// Print each batch as one JSON line on stdout instead of sending it (a dry run).
    #[arg(long)]
    pub print: bool,

    /// Log as JSON lines (for log collectors) instead of text.
    #[arg(long, env = "EGS_AGENT_LOG_JSON")]
    pub log_json: bool,
}

impl Config {
    /// Parses flags as the agent's command line would (`egs-node-agent` is added in front);
    /// `EGS_AGENT_*` variables fill what the flags leave out.
    pub fn from_args<I, S>(args: I) -> Result<Self, clap::Error>
    where
        I: IntoIterator<Item = S>,
        S: Into<std::ffi::OsString> + Clone,
    {
        Self::try_parse_from(std::iter::once(std::ffi::OsString::from("egs-node-agent")).chain(args.into_iter().map(Into::into)))
    }

    /// The node name: as configured, else the host name.
    pub fn node_name(&self) -> String {
        self.node_name.clone().filter(|n| !n.trim().is_empty()).unwrap_or_else(host_name)
    }

    /// Buffered batches at most: `buffer / interval`, at least one.
    pub fn buffer_batches(&self) -> usize {
        ((self.buffer.as_millis() / self.interval.as_millis().max(1)) as usize).max(1)
    }
}

/// The kernel's host name, or `localhost` when it cannot be read.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

fn parse_interval(text: &str) -> Result<Duration, String> {
    let interval = parse_duration(text)?;
    if !(MIN_INTERVAL..=MAX_INTERVAL).contains(&interval) {
        return Err(format!("the interval must be between {MIN_INTERVAL:?} and {MAX_INTERVAL:?}"));
    }
    Ok(interval)
}

fn parse_buffer(text: &str) -> Result<Duration, String> {
    let buffer = parse_duration(text)?;
    if buffer.is_zero() || buffer > MAX_BUFFER {
        return Err(format!("the buffer must be more than 0s and at most {}h", MAX_BUFFER.as_secs() / 3600));
    }
    Ok(buffer)
}

/// What a fault does to a simulated GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// Its cooling fails: the temperature climbs past the alert threshold and it throttles.
    Overheat,
    /// The driver reports this XID code once.
    Xid(u32),
    /// It falls off the bus: XID 79, then it answers nothing.
    Lost,
    /// An uncorrected (double-bit) ECC error: the count goes up, with XID 48.
    Ecc,
    /// Undoes overheating (a lost GPU stays lost until the agent restarts, as on real nodes).
    Recover,
}

/// A fault for one simulated GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub kind: FaultKind,
    pub gpu: u32,
}

/// A fault and when to inject it, after the agent starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScheduledFault {
    pub fault: Fault,
    pub after: Duration,
}

/// Parses `overheat:0`, `xid:79:1@30s`, `lost:3@2m`, `ecc:2`, `recover:0@1m`.
pub fn parse_fault(text: &str) -> Result<ScheduledFault, String> {
    let (spec, after) = match text.split_once('@') {
        Some((spec, after)) => (spec, parse_duration(after)?),
        None => (text, Duration::ZERO),
    };
    let parts: Vec<&str> = spec.trim().split(':').collect();
    let gpu = |s: &str| s.parse::<u32>().map_err(|_| format!("`{text}`: `{s}` is not a GPU index"));
    let fault = match parts.as_slice() {
        ["overheat", g] => Fault { kind: FaultKind::Overheat, gpu: gpu(g)? },
        ["lost", g] => Fault { kind: FaultKind::Lost, gpu: gpu(g)? },
        ["ecc", g] => Fault { kind: FaultKind::Ecc, gpu: gpu(g)? },
        ["recover", g] => Fault { kind: FaultKind::Recover, gpu: gpu(g)? },
        ["xid", code, g] => {
            let code: u32 = code.parse().ok().filter(|c| (1..=65_535).contains(c)).ok_or_else(|| format!("`{text}`: XID codes are 1 to 65535"))?;
            Fault { kind: FaultKind::Xid(code), gpu: gpu(g)? }
        }
        _ => {
            return Err(format!(
                "`{text}` is not a fault: use overheat:GPU, xid:CODE:GPU, lost:GPU, ecc:GPU or recover:GPU, with an optional @DELAY"
            ));
        }
    };
    Ok(ScheduledFault { fault, after })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_the_gateway_reads_them() {
        assert_eq!(parse_duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m30s"), Ok(Duration::from_secs(150)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse_duration("").is_err());
        assert!(parse_duration("10").is_err(), "a unit is required");
        assert_eq!(parse_duration("1d"), Ok(Duration::from_secs(86_400)), "the gateway's grammar: days too");
        assert_eq!(parse_duration("PT1M"), Ok(Duration::from_secs(60)));
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn faults_parse_with_an_optional_delay() {
        assert_eq!(parse_fault("overheat:0"), Ok(ScheduledFault { fault: Fault { kind: FaultKind::Overheat, gpu: 0 }, after: Duration::ZERO }));
        assert_eq!(
            parse_fault("xid:79:3@30s"),
            Ok(ScheduledFault { fault: Fault { kind: FaultKind::Xid(79), gpu: 3 }, after: Duration::from_secs(30) })
        );
        assert_eq!(parse_fault("lost:1@2m").map(|f| f.fault.kind), Ok(FaultKind::Lost));
        assert!(parse_fault("xid:0:1").is_err());
        assert!(parse_fault("melt:1").is_err());
        assert!(parse_fault("overheat:x").is_err());
    }

    #[test]
    fn the_daemonset_sets_only_variables_the_agent_reads() {
        use clap::CommandFactory;
        let known: Vec<String> = Config::command().get_arguments().filter_map(|a| a.get_env()).map(|e| e.to_string_lossy().into_owned()).collect();
        let manifest = include_str!("../../deploy/kustomize/base/agent-daemonset.yaml");
        let used: Vec<&str> = manifest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).filter(|w| w.starts_with("EGS_AGENT_")).collect();
        assert!(used.len() >= 8, "{used:?}");
        for name in used {
            assert!(known.iter().any(|k| k == name), "the DaemonSet sets {name}, which the agent does not read");
        }
        // The node from the downward API.
        assert!(manifest.contains("fieldPath: spec.nodeName"), "the node name comes from the downward API");
        // No EGS secret on the node: the pod's projected ServiceAccount token, for EGS alone.
        assert!(manifest.contains("value: /var/run/egs-node-agent/identity/token") && !manifest.contains("$(EGS_AGENT_NODE_NAME)"));
        assert!(manifest.contains("audience: egs") && !manifest.contains("secretName"), "a projected token, no Secret");
    }

    #[test]
    fn flags_have_defaults_and_limits() {
        let config = Config::from_args(["--simulate", "4"]).expect("valid flags");
        assert_eq!(config.interval, Duration::from_secs(1));
        assert_eq!(config.buffer_batches(), 600, "ten minutes of 1 s batches");
        assert_eq!(config.listen.port(), 9400, "dcgm-exporter's port");
        assert!(Config::from_args(["--interval", "100ms"]).is_err(), "the gateway keeps one sample per second");
        assert!(Config::from_args(["--simulate", "0"]).is_err());
        let faults = Config::from_args(["--fault", "overheat:0,lost:1@5s"]).expect("valid faults").faults;
        assert_eq!(faults.len(), 2);
    }
}
