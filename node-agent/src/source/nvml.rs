//! Real GPUs through NVIDIA's management library (NVML, `libnvidia-ml.so.1`, loaded at run
//! time, so the agent builds and starts on machines without a driver). Per GPU it reads what
//! dcgm-exporter's default counters read, and more: utilisation, memory, temperature, power and
//! its enforced limit, SM and memory clocks, total energy, volatile ECC counts, throttle
//! reasons, MIG mode, and the running compute processes with their memory. XID and ECC events
//! arrive on a dedicated thread waiting on an NVML event set; each XID is attached to the GPU's
//! next reading.

use super::{GpuInfo, GpuProcess, GpuSource, Inventory, Reading, SourceError};
use nvml_wrapper::bitmasks::event::EventTypes;
use nvml_wrapper::enum_wrappers::device::{Clock, EccCounter, MemoryError, TemperatureSensor};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::enums::event::XidError;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const MIB: f64 = 1024.0 * 1024.0;
/// How long the event thread waits for an event before checking whether to stop, ms.
const EVENT_WAIT_MS: u32 = 1000;
/// XIDs kept per GPU between two readings; a storm beyond that is summarised by its newest.
const MAX_PENDING_XIDS: usize = 32;

/// XID codes waiting for their GPU's next reading, by UUID.
type PendingXids = Arc<Mutex<HashMap<String, Vec<u32>>>>;

/// The node's GPUs through NVML.
pub struct NvmlSource {
    nvml: Arc<Nvml>,
    inventory: Inventory,
    xids: PendingXids,
    /// Tells the event thread to finish.
    stop: Arc<AtomicBool>,
    /// (GPU index, what) already warned about, so a missing feature is logged once.
    warned: HashSet<(u32, &'static str)>,
    /// Last known reading of each GPU, for one that stops answering.
    last: HashMap<u32, Reading>,
    /// GPUs already reported lost (they then stay silent).
    lost: HashSet<u32>,
}

/// Maps an NVML start-up failure to what the operator should hear.
fn init_error(error: NvmlError) -> SourceError {
    match error {
        NvmlError::LibloadingError(e) => SourceError::NoDriver(format!("cannot load the NVML library ({e})")),
        NvmlError::LibraryNotFound => SourceError::NoDriver("the NVML library was not found".into()),
        NvmlError::DriverNotLoaded => SourceError::NoDriver("the NVIDIA kernel driver is not loaded".into()),
        NvmlError::FailedToLoadSymbol(symbol) => SourceError::NoDriver(format!("the NVML library is too old or broken ({symbol})")),
        NvmlError::NoPermission => SourceError::NoPermission(error.to_string()),
        other => SourceError::Nvml(other.to_string()),
    }
}

impl NvmlSource {
    /// Loads NVML (from `lib`, or the loader's path) and reads the GPUs. Fails with
    /// [`SourceError::NoDriver`] on a node without the library or driver.
    pub fn open(lib: Option<&Path>) -> Result<Self, SourceError> {
        let nvml = match lib {
            Some(path) => Nvml::builder().lib_path(path.as_os_str()).init(),
            None => Nvml::init(),
        }
        .map_err(init_error)?;
        let nvml = Arc::new(nvml);
        let count = nvml.device_count().map_err(|e| SourceError::Nvml(format!("cannot count the GPUs: {e}")))?;
        let mut gpus = Vec::with_capacity(count as usize);
        for index in 0..count {
            let device = nvml.device_by_index(index).map_err(|e| SourceError::Nvml(format!("cannot open GPU {index}: {e}")))?;
            gpus.push(GpuInfo {
                uuid: device.uuid().map_err(|e| SourceError::Nvml(format!("cannot read GPU {index}'s UUID: {e}")))?,
                index,
                model: device.name().unwrap_or_else(|_| "NVIDIA GPU".into()),
                memory_mib: device.memory_info().map(|m| (m.total as f64 / MIB) as u64).unwrap_or(0),
                mig_enabled: device.mig_mode().map(|m| m.current == 1).unwrap_or(false),
            });
        }
        let cuda_version = nvml
            .sys_cuda_driver_version()
            .ok()
            .map(|v| format!("{}.{}", nvml_wrapper::cuda_driver_version_major(v), nvml_wrapper::cuda_driver_version_minor(v)));
        let inventory = Inventory { driver_version: nvml.sys_driver_version().ok(), cuda_version, gpus };
        tracing::info!(
            gpus = count,
            driver = inventory.driver_version.as_deref().unwrap_or("unknown"),
            cuda = inventory.cuda_version.as_deref().unwrap_or("unknown"),
            "NVML opened"
        );
        let xids = PendingXids::default();
        let stop = Arc::new(AtomicBool::new(false));
        if count > 0 {
            let (nvml, xids, stop) = (nvml.clone(), xids.clone(), stop.clone());
            let spawned = std::thread::Builder::new().name("nvml-events".into()).spawn(move || watch_events(&nvml, &xids, &stop));
            if let Err(error) = spawned {
                tracing::warn!(error = %error, "cannot start the NVML event thread: XID errors will not be reported");
            }
        }
        Ok(Self { nvml, inventory, xids, stop, warned: HashSet::new(), last: HashMap::new(), lost: HashSet::new() })
    }

    /// The value, or `None` when the GPU cannot give it (logged once per GPU and value);
    /// sets `lost` when the GPU has fallen off the bus.
    fn read<T>(&mut self, index: u32, what: &'static str, result: Result<T, NvmlError>, lost: &mut bool) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(NvmlError::GpuLost) => {
                *lost = true;
                None
            }
            Err(NvmlError::NotSupported) => None,
            Err(error) => {
                if self.warned.insert((index, what)) {
                    tracing::warn!(gpu = index, value = what, error = %error, "cannot read a GPU value; it is left out");
                }
                None
            }
        }
    }

    fn read_gpu(&mut self, info: &GpuInfo, xids: Vec<u32>) -> Reading {
        let nvml = self.nvml.clone();
        let index = info.index;
        let mut lost = false;
        let device: Option<Device<'_>> = {
            let result = nvml.device_by_index(index);
            self.read(index, "device", result, &mut lost)
        };
        let Some(device) = device.filter(|_| !lost) else {
            return self.lost_reading(info, xids);
        };
        let utilization = self.read(index, "utilization", device.utilization_rates(), &mut lost);
        let memory = self.read(index, "memory", device.memory_info(), &mut lost);
        let temperature = self.read(index, "temperature", device.temperature(TemperatureSensor::Gpu), &mut lost);
        let power = self.read(index, "power", device.power_usage(), &mut lost);
        let limit = self.read(index, "power limit", device.enforced_power_limit(), &mut lost);
        let sm_clock = self.read(index, "SM clock", device.clock_info(Clock::SM), &mut lost);
        let mem_clock = self.read(index, "memory clock", device.clock_info(Clock::Memory), &mut lost);
        let energy = self.read(index, "energy", device.total_energy_consumption(), &mut lost);
        let ecc_corrected = self.read(index, "ECC", device.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile), &mut lost);
        let ecc_uncorrected = self.read(index, "ECC", device.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile), &mut lost);
        let throttle = self.read(index, "throttle reasons", device.current_throttle_reasons(), &mut lost);
        let processes = self.read(index, "processes", device.running_compute_processes(), &mut lost).unwrap_or_default();
        if lost {
            return self.lost_reading(info, xids);
        }
        let reading = Reading {
            uuid: info.uuid.clone(),
            index,
            util: utilization.as_ref().map_or(0.0, |u| f64::from(u.gpu)),
            mem_util: utilization.as_ref().map_or(0.0, |u| f64::from(u.memory)),
            mem_used_mib: memory.as_ref().map_or(0.0, |m| m.used as f64 / MIB),
            mem_total_mib: memory.as_ref().map_or(info.memory_mib as f64, |m| m.total as f64 / MIB),
            temperature: temperature.map_or(0.0, f64::from),
            power_w: power.map_or(0.0, |mw| f64::from(mw) / 1000.0),
            power_limit_w: limit.map(|mw| f64::from(mw) / 1000.0),
            sm_clock_mhz: sm_clock.map_or(0.0, f64::from),
            mem_clock_mhz: mem_clock.map(f64::from),
            energy_mj: energy,
            ecc_corrected,
            ecc_uncorrected,
            throttle_reasons: throttle.map_or(0, |t| t.bits()),
            xid_errors: xids,
            processes: processes
                .into_iter()
                .map(|p| GpuProcess {
                    pid: p.pid,
                    used_memory_mib: match p.used_gpu_memory {
                        UsedGpuMemory::Used(bytes) => Some(bytes as f64 / MIB),
                        UsedGpuMemory::Unavailable => None,
                    },
                    pod: None,
                })
                .collect(),
            lost: false,
        };
        self.last.insert(index, reading.clone());
        reading
    }

    /// The last word of a GPU gone from the bus: its last known values and pending XIDs.
    fn lost_reading(&mut self, info: &GpuInfo, xids: Vec<u32>) -> Reading {
        if self.lost.insert(info.index) {
            tracing::error!(gpu = info.index, uuid = %info.uuid, "a GPU has fallen off the bus or stopped answering");
        }
        let last = self.last.get(&info.index);
        Reading {
            uuid: info.uuid.clone(),
            index: info.index,
            mem_total_mib: info.memory_mib as f64,
            temperature: last.map_or(0.0, |r| r.temperature),
            xid_errors: xids,
            lost: true,
            ..Reading::default()
        }
    }
}

impl GpuSource for NvmlSource {
    fn inventory(&self) -> Inventory {
        self.inventory.clone()
    }

    fn sample(&mut self) -> Vec<Reading> {
        let mut pending = std::mem::take(&mut *self.xids.lock().unwrap_or_else(|p| p.into_inner()));
        let gpus = self.inventory.gpus.clone();
        let mut readings = Vec::with_capacity(gpus.len());
        for info in &gpus {
            let xids = pending.remove(&info.uuid).unwrap_or_default();
            // A lost GPU says nothing more, unless the driver still has XIDs for it.
            if self.lost.contains(&info.index) && xids.is_empty() {
                continue;
            }
            readings.push(self.read_gpu(info, xids));
        }
        readings
    }

    fn blocking(&self) -> bool {
        true
    }
}

impl Drop for NvmlSource {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The event thread: registers every GPU for XID and ECC events and files each XID under its
/// GPU's UUID until `stop` is set.
fn watch_events(nvml: &Nvml, xids: &PendingXids, stop: &AtomicBool) {
    let wanted = EventTypes::CRITICAL_XID_ERROR | EventTypes::SINGLE_BIT_ECC_ERROR | EventTypes::DOUBLE_BIT_ECC_ERROR;
    let mut set = match nvml.create_event_set() {
        Ok(set) => set,
        Err(error) => {
            tracing::warn!(error = %error, "cannot create an NVML event set: XID errors will not be reported");
            return;
        }
    };
    let count = nvml.device_count().unwrap_or(0);
    let mut watched = 0;
    for index in 0..count {
        let Ok(device) = nvml.device_by_index(index) else { continue };
        let events = device.supported_event_types().map(|s| s & wanted).unwrap_or(wanted);
        if events.is_empty() {
            continue;
        }
        set = match device.register_events(events, set) {
            Ok(set) => {
                watched += 1;
                set
            }
            Err(error) => {
                // A failed registration frees the set: start a new one for the other GPUs.
                tracing::warn!(gpu = index, error = %error.error, "cannot watch a GPU's XID and ECC events");
                match nvml.create_event_set() {
                    Ok(set) => set,
                    Err(_) => return,
                }
            }
        };
    }
    if watched == 0 {
        return;
    }
    tracing::debug!(gpus = watched, "watching XID and ECC events");
    while !stop.load(Ordering::Relaxed) {
        match set.wait(EVENT_WAIT_MS) {
            Ok(event) => {
                let uuid = event.device.uuid().unwrap_or_default();
                if event.event_type.contains(EventTypes::CRITICAL_XID_ERROR) {
                    let code = match event.event_data {
                        Some(XidError::Value(code)) => u32::try_from(code).unwrap_or(u32::MAX).min(65_535),
                        Some(XidError::Unknown) | None => continue,
                    };
                    tracing::warn!(uuid = %uuid, xid = code, "the driver reported an XID error");
                    let mut pending = xids.lock().unwrap_or_else(|p| p.into_inner());
                    let list = pending.entry(uuid).or_default();
                    if list.len() >= MAX_PENDING_XIDS {
                        list.remove(0);
                    }
                    list.push(code.max(1));
                } else if event.event_type.contains(EventTypes::DOUBLE_BIT_ECC_ERROR) {
                    tracing::error!(uuid = %uuid, "uncorrected (double-bit) ECC error");
                } else if event.event_type.contains(EventTypes::SINGLE_BIT_ECC_ERROR) {
                    tracing::debug!(uuid = %uuid, "corrected (single-bit) ECC error");
                }
            }
            Err(NvmlError::Timeout) => {}
            Err(error) => {
                tracing::debug!(error = %error, "waiting for NVML events failed");
                std::thread::sleep(Duration::from_millis(u64::from(EVENT_WAIT_MS)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_is_a_clear_start_up_error_not_a_panic() {
        let missing = Path::new("/nonexistent/egs/libnvidia-ml.so.1");
        let Err(error) = NvmlSource::open(Some(missing)) else { panic!("NVML cannot open from a missing library") };
        assert!(matches!(error, SourceError::NoDriver(_)), "{error:?}");
        let message = error.to_string();
        assert!(message.starts_with("no NVIDIA driver found on this node: "), "{message}");
        assert!(message.contains("--allow-no-gpu"), "says what to do: {message}");
    }

    #[test]
    fn a_library_that_is_not_nvml_is_no_driver_either() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let fake = dir.path().join("libnvidia-ml.so.1");
        std::fs::write(&fake, b"not an ELF file").expect("write");
        let Err(error) = NvmlSource::open(Some(&fake)) else { panic!("a text file is no NVML") };
        assert!(matches!(error, SourceError::NoDriver(_)), "{error:?}");
    }

    #[test]
    fn the_default_library_path_fails_cleanly_on_a_machine_without_a_driver() {
        // On a GPU node this opens NVML; here (no driver) it must be the same clear error.
        match NvmlSource::open(None) {
            Ok(source) => assert_eq!(source.inventory().gpus.len(), source.inventory.gpus.len()),
            Err(error) => assert!(error.to_string().starts_with("no NVIDIA driver found on this node: "), "{error}"),
        }
    }

    #[test]
    fn no_gpu_is_allowed_when_asked() {
        let config = crate::config::Config::from_args(["--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--allow-no-gpu"]).expect("flags");
        let mut source = super::super::open(&config).expect("an agent without GPUs");
        assert!(source.inventory().gpus.is_empty() && source.sample().is_empty());
        let strict = crate::config::Config::from_args(["--nvml-lib", "/nonexistent/libnvidia-ml.so.1"]).expect("flags");
        assert!(matches!(super::super::open(&strict), Err(SourceError::NoDriver(_))));
    }
}
