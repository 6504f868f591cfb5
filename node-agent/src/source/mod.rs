//! Where GPU readings come from: a [`GpuSource`] describes the node's GPUs once
//! ([`Inventory`]) and then takes a [`Reading`] of each on every tick. Two implementations:
//! [`nvml`] reads NVIDIA's management library, [`simulated`] models GPUs that train and idle
//! and can be made to fail (tests, the demo, benchmarks). [`open`] picks one from the config.

pub mod nvml;
pub mod simulated;

use crate::config::Config;
use serde::Serialize;

/// One GPU as the node registers it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuInfo {
    /// `GPU-…`, as `nvidia-smi -L` prints it.
    pub uuid: String,
    /// Index on the node, as NVML numbers it.
    pub index: u32,
    /// The product name, as NVML gives it (`NVIDIA H100 80GB HBM3`).
    pub model: String,
    /// Framebuffer size, MiB.
    pub memory_mib: u64,
    pub mig_enabled: bool,
}

/// The node's GPUs and software, read once at start.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Inventory {
    pub driver_version: Option<String>,
    /// The CUDA version the driver supports, `major.minor`.
    pub cuda_version: Option<String>,
    pub gpus: Vec<GpuInfo>,
}

impl Inventory {
    /// The GPU shape as the gateway (and NVIDIA's GPU feature discovery) names it: the product
    /// name with dashes for spaces, `NVIDIA-H100-80GB-HBM3`.
    pub fn shape(&self) -> Option<String> {
        self.gpus.first().map(|g| g.model.trim().replace(' ', "-"))
    }
}

/// A process using a GPU.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuProcess {
    /// In the host's PID namespace.
    pub pid: u32,
    /// GPU memory it holds, MiB, when the driver says.
    pub used_memory_mib: Option<f64>,
    /// The Kubernetes pod it belongs to, once [`crate::pods`] has mapped it.
    pub pod: Option<PodRef>,
}

/// A Kubernetes pod (and container) using a GPU.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodRef {
    pub uid: String,
    /// Unknown when the agent cannot list the node's pods (only the cgroup's UID is known).
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub container: Option<String>,
    /// The container's id from the process's cgroup: the gateway names the container by it.
    pub container_id: Option<String>,
}

/// Clock-throttle reasons, as NVML's bitmask (`nvmlClocksThrottleReason*`).
pub mod throttle {
    pub const GPU_IDLE: u64 = 0x1;
    pub const SW_POWER_CAP: u64 = 0x4;
    pub const HW_SLOWDOWN: u64 = 0x8;
    pub const SW_THERMAL_SLOWDOWN: u64 = 0x20;
    pub const HW_THERMAL_SLOWDOWN: u64 = 0x40;
}

/// One GPU at one moment. Values the GPU does not support are `None` (or 0 for the ones the
/// gateway requires).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reading {
    pub uuid: String,
    pub index: u32,
    /// GPU utilisation, %.
    pub util: f64,
    /// Memory-controller utilisation, %.
    pub mem_util: f64,
    pub mem_used_mib: f64,
    pub mem_total_mib: f64,
    /// °C.
    pub temperature: f64,
    /// Power draw, W.
    pub power_w: f64,
    /// The enforced power limit, W.
    pub power_limit_w: Option<f64>,
    pub sm_clock_mhz: f64,
    pub mem_clock_mhz: Option<f64>,
    /// Energy since the driver loaded, mJ.
    pub energy_mj: Option<u64>,
    /// Volatile corrected (single-bit) ECC errors.
    pub ecc_corrected: Option<u64>,
    /// Volatile uncorrected (double-bit) ECC errors.
    pub ecc_uncorrected: Option<u64>,
    /// See [`throttle`].
    pub throttle_reasons: u64,
    /// XID codes the driver reported since the previous reading.
    pub xid_errors: Vec<u32>,
    pub processes: Vec<GpuProcess>,
    /// Fallen off the bus (or otherwise gone): the values are the last known ones.
    pub lost: bool,
}

/// Reads the node's GPUs. Readings never fail as a whole: a value a GPU cannot give is left
/// out, and a GPU that stops answering is marked [`Reading::lost`].
pub trait GpuSource: Send + 'static {
    /// The GPUs and driver, as registered with the gateway.
    fn inventory(&self) -> Inventory;
    /// One reading of every GPU, by index.
    fn sample(&mut self) -> Vec<Reading>;
    /// Whether [`GpuSource::sample`] blocks on a driver (it then runs on tokio's blocking pool).
    fn blocking(&self) -> bool {
        false
    }
}

/// A node without GPUs (no driver, with `--allow-no-gpu`): the agent stays up, reports nothing.
pub struct NoGpus;

impl GpuSource for NoGpus {
    fn inventory(&self) -> Inventory {
        Inventory::default()
    }
    fn sample(&mut self) -> Vec<Reading> {
        Vec::new()
    }
}

/// Why no GPU source could be opened.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("no NVIDIA driver found on this node: {0} (run with --allow-no-gpu to stay up with zero GPUs, or --simulate N)")]
    NoDriver(String),
    #[error("NVML refused access to the GPUs: {0} (the agent needs the NVIDIA devices: run it with the NVIDIA container runtime)")]
    NoPermission(String),
    #[error("NVML failed: {0}")]
    Nvml(String),
}

/// The source the config asks for: simulated GPUs, else NVML; with `--allow-no-gpu`, a node
/// without a driver gets [`NoGpus`] and a warning instead of an error.
pub fn open(config: &Config) -> Result<Box<dyn GpuSource>, SourceError> {
    if let Some(count) = config.simulate {
        let seed = config.seed.unwrap_or_else(rand::random);
        let mut source = simulated::SimulatedSource::new(&config.node_name(), count, &config.shape, seed)
            .with_interval(config.interval)
            .with_schedule(&config.faults);
        if let Some(namespace) = &config.simulate_pods {
            source = source.with_pods(namespace);
        }
        return Ok(Box::new(source));
    }
    if !config.faults.is_empty() {
        tracing::warn!("--fault applies to simulated GPUs only (--simulate N); ignored");
    }
    match nvml::NvmlSource::open(config.nvml_lib.as_deref()) {
        Ok(source) => Ok(Box::new(source)),
        Err(error @ SourceError::NoDriver(_)) if config.allow_no_gpu => {
            tracing::warn!(error = %error, "no GPUs: the agent stays up and reports none (--allow-no-gpu)");
            Ok(Box::new(NoGpus))
        }
        Err(error) => Err(error),
    }
}
