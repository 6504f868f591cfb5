//! Simulated GPUs that behave like a busy training node: jobs arrive after idle spells, take
//! some or all of the node's GPUs, ramp up (memory fills, utilisation climbs), train with
//! short dips (evaluation, checkpoints), then end. Utilisation drives power, power drives
//! temperature through a thermal lag, and heat throttles the clocks, so the three move together
//! as they do on real boards. Faults can be injected: overheating, any XID, an uncorrected ECC
//! error, and a GPU falling off the bus (XID 79, then silence).
//!
//! The simulation advances one step per [`GpuSource::sample`] call (one interval), from a seed,
//! so a test or a benchmark replays the same node every time, whatever the clock does.

use super::{GpuInfo, GpuProcess, GpuSource, Inventory, PodRef, Reading, throttle};
use crate::config::{Fault, FaultKind, ScheduledFault};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What a GPU model looks like to NVML.
#[derive(Clone, Debug, PartialEq)]
pub struct Board {
    /// NVML's product name.
    pub model: String,
    pub memory_mib: u64,
    /// Power at rest, W.
    pub idle_w: f64,
    /// The enforced power limit, W.
    pub limit_w: f64,
    pub boost_clock_mhz: f64,
    pub idle_clock_mhz: f64,
    pub mem_clock_mhz: f64,
}

/// Known boards by shape; other shapes get H100-like numbers under their own name.
pub fn board(shape: &str) -> Board {
    let upper = shape.to_ascii_uppercase();
    let (model, memory_mib, idle_w, limit_w, boost, mem) = if upper.contains("B200") {
        ("NVIDIA B200", 183_359, 140.0, 1000.0, 1965.0, 3996.0)
    } else if upper.contains("H200") {
        ("NVIDIA H200", 143_771, 75.0, 700.0, 1980.0, 3201.0)
    } else if upper.contains("H100") && upper.contains("PCIE") {
        ("NVIDIA H100 PCIe", 81_559, 50.0, 350.0, 1755.0, 1593.0)
    } else if upper.contains("H100") {
        ("NVIDIA H100 80GB HBM3", 81_559, 70.0, 700.0, 1980.0, 2619.0)
    } else if upper.contains("A100") && upper.contains("40GB") {
        ("NVIDIA A100-SXM4-40GB", 40_960, 55.0, 400.0, 1410.0, 1215.0)
    } else if upper.contains("A100") {
        ("NVIDIA A100-SXM4-80GB", 81_920, 60.0, 400.0, 1410.0, 1593.0)
    } else if upper.contains("L40S") {
        ("NVIDIA L40S", 46_068, 35.0, 350.0, 2520.0, 9001.0)
    } else {
        return Board {
            model: shape.replace('-', " "),
            memory_mib: 81_559,
            idle_w: 70.0,
            limit_w: 700.0,
            boost_clock_mhz: 1980.0,
            idle_clock_mhz: 345.0,
            mem_clock_mhz: 2619.0,
        };
    };
    Board { model: model.into(), memory_mib, idle_w, limit_w, boost_clock_mhz: boost, idle_clock_mhz: 345.0, mem_clock_mhz: mem }
}

/// Air temperature at the inlet, °C.
const AMBIENT_C: f64 = 28.0;
/// Die temperature rise per watt at steady state: a board at its limit settles near 80 °C.
const C_PER_WATT_OF_LIMIT: f64 = 52.0;
/// How quickly the die follows its steady-state temperature, s (healthy cooling).
const THERMAL_TIME_CONSTANT_S: f64 = 20.0;
/// Where a GPU whose cooling failed heads, °C, and how fast (s).
const OVERHEAT_TARGET_C: f64 = 97.0;
const OVERHEAT_TIME_CONSTANT_S: f64 = 3.0;
/// Above this the GPU throttles its clocks (hardware thermal slowdown).
const THROTTLE_C: f64 = 90.0;
/// How often the simulation starts in the middle of a job rather than idle.
const WARM_START_SHARE: f64 = 0.7;
/// Memory the driver holds on an idle GPU, MiB.
const DRIVER_RESERVED_MIB: f64 = 512.0;

/// How a simulated job is going.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stage {
    /// Loading the model: memory fills, utilisation climbs.
    Warmup,
    /// Steady training.
    Training,
    /// Evaluation or a checkpoint: utilisation dips for a few steps.
    Dip,
}

/// A training job on some of the node's GPUs.
#[derive(Clone, Debug)]
struct Job {
    name: String,
    pod_uid: String,
    /// GPU indices it uses.
    gpus: Vec<u32>,
    stage: Stage,
    /// Steps left in `stage`.
    stage_left: u32,
    /// Steps left in the job.
    left: u32,
    /// Share of GPU memory it fills once loaded.
    memory_share: f64,
    /// Its steady utilisation, %.
    util: f64,
}

/// One simulated GPU's state.
#[derive(Clone, Debug)]
struct SimGpu {
    info: GpuInfo,
    util: f64,
    mem_used_mib: f64,
    temperature: f64,
    energy_mj: u64,
    ecc_corrected: u64,
    ecc_uncorrected: u64,
    pending_xids: Vec<u32>,
    overheating: bool,
    lost: bool,
    /// The final reading after falling off the bus has gone out.
    silent: bool,
}

/// A handle to inject faults into a running [`SimulatedSource`] (tests, the demo).
#[derive(Clone, Default)]
pub struct Faults(Arc<Mutex<Vec<Fault>>>);

impl Faults {
    /// Applied at the next step.
    pub fn inject(&self, fault: Fault) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(fault);
    }

    fn take(&self) -> Vec<Fault> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

/// Simulated GPUs of one node.
pub struct SimulatedSource {
    board: Board,
    gpus: Vec<SimGpu>,
    rng: StdRng,
    /// Seconds per step.
    dt: f64,
    step: u64,
    job: Option<Job>,
    jobs_started: u32,
    /// Steps until the next job arrives while idle.
    idle_left: u32,
    /// Faults due at a step.
    schedule: Vec<(u64, Fault)>,
    faults: Faults,
    /// Where the jobs' pods run.
    namespace: String,
    /// `--simulate-pods`: jobs take the whole node and follow each other without idling.
    always_busy: bool,
}

impl SimulatedSource {
    /// `count` GPUs of `shape` on node `node` (which seeds the UUIDs, so each node's differ and
    /// a restart keeps them), stepping 1 s at a time.
    pub fn new(node: &str, count: u32, shape: &str, seed: u64) -> Self {
        let board = board(shape);
        let node_hash = fnv1a(node.as_bytes());
        let gpus = (0..count)
            .map(|index| SimGpu {
                info: GpuInfo {
                    uuid: uuid_like("GPU-", node_hash ^ u64::from(index).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
                    index,
                    model: board.model.clone(),
                    memory_mib: board.memory_mib,
                    mig_enabled: false,
                },
                util: 0.0,
                mem_used_mib: DRIVER_RESERVED_MIB,
                temperature: AMBIENT_C + 6.0,
                energy_mj: 0,
                ecc_corrected: 0,
                ecc_uncorrected: 0,
                pending_xids: Vec::new(),
                overheating: false,
                lost: false,
                silent: false,
            })
            .collect();
        let mut rng = StdRng::seed_from_u64(seed);
        let idle_left = rng.random_range(2..8);
        let mut source = Self {
            board,
            gpus,
            rng,
            dt: 1.0,
            step: 0,
            job: None,
            jobs_started: 0,
            idle_left,
            schedule: Vec::new(),
            faults: Faults::default(),
            namespace: "ml-team".into(),
            always_busy: false,
        };
        // A GPU node is mostly busy: usually the agent starts in the middle of a job.
        if source.rng.random_bool(WARM_START_SHARE) {
            source.start_warm();
        }
        source
    }

    /// Starts with a job already training on warmed-up GPUs.
    fn start_warm(&mut self) {
        self.idle_left = 0;
        self.advance_job();
        let Some(job) = self.job.as_mut() else { return };
        job.stage = Stage::Training;
        job.stage_left = self.rng.random_range(10..60);
        let job = job.clone();
        for index in &job.gpus {
            if let Some(gpu) = self.gpus.get_mut(*index as usize) {
                gpu.util = job.util;
                gpu.mem_used_mib = self.board.memory_mib as f64 * job.memory_share;
                gpu.temperature = AMBIENT_C + C_PER_WATT_OF_LIMIT * 0.9;
            }
        }
    }

    /// Every GPU runs a job's process from the first reading on, in a pod of `namespace`; a job
    /// that ends is followed at once by the next (new pods), so the pod mapping is always there
    /// and changes only now and then.
    pub fn with_pods(mut self, namespace: &str) -> Self {
        self.namespace = namespace.to_owned();
        self.always_busy = true;
        self.job = None;
        self.start_warm();
        self
    }

    /// Steps of `interval` instead of 1 s.
    pub fn with_interval(mut self, interval: Duration) -> Self {
        self.dt = interval.as_secs_f64().max(0.001);
        self
    }

    /// Faults to inject once their delay has passed (in steps of the interval).
    pub fn with_schedule(mut self, faults: &[ScheduledFault]) -> Self {
        self.schedule = faults.iter().map(|f| ((f.after.as_secs_f64() / self.dt).ceil() as u64, f.fault)).collect();
        self
    }

    /// A handle to inject faults while the agent runs.
    pub fn faults(&self) -> Faults {
        self.faults.clone()
    }

    pub fn board(&self) -> &Board {
        &self.board
    }

    fn apply(&mut self, fault: Fault) {
        let Some(gpu) = self.gpus.get_mut(fault.gpu as usize) else {
            tracing::warn!(gpu = fault.gpu, "a fault for a GPU this node does not have is ignored");
            return;
        };
        tracing::info!(gpu = fault.gpu, fault = ?fault.kind, "injecting a simulated fault");
        match fault.kind {
            FaultKind::Overheat => gpu.overheating = true,
            FaultKind::Recover => gpu.overheating = false,
            FaultKind::Xid(code) => gpu.pending_xids.push(code),
            FaultKind::Ecc => {
                gpu.ecc_uncorrected += 1;
                gpu.pending_xids.push(48);
            }
            FaultKind::Lost => {
                if !gpu.lost {
                    gpu.lost = true;
                    gpu.pending_xids.push(79);
                }
            }
        }
    }

    /// Starts, advances or ends the node's job.
    fn advance_job(&mut self) {
        let count = self.gpus.len() as u32;
        match &mut self.job {
            None => {
                if self.idle_left > 0 {
                    self.idle_left -= 1;
                    return;
                }
                self.jobs_started += 1;
                // Distributed training mostly takes the whole node; sometimes half of it.
                let width = if count > 1 && !self.always_busy && self.rng.random_bool(0.25) { count / 2 } else { count };
                let name = format!("llm-finetune-{}", self.jobs_started);
                self.job = Some(Job {
                    pod_uid: uuid_like("", fnv1a(name.as_bytes()) ^ self.step),
                    name,
                    gpus: (0..width).collect(),
                    stage: Stage::Warmup,
                    stage_left: self.rng.random_range(6..15),
                    left: self.rng.random_range(300..1800),
                    memory_share: self.rng.random_range(0.55..0.93),
                    util: self.rng.random_range(88.0..99.0),
                });
            }
            Some(job) => {
                job.left = job.left.saturating_sub(1);
                if job.left == 0 {
                    self.job = None;
                    if self.always_busy {
                        // The next job's pods take over at once.
                        self.idle_left = 0;
                        self.advance_job();
                    } else {
                        self.idle_left = self.rng.random_range(20..180);
                    }
                    return;
                }
                job.stage_left = job.stage_left.saturating_sub(1);
                if job.stage_left == 0 {
                    (job.stage, job.stage_left) = match job.stage {
                        Stage::Warmup | Stage::Dip => (Stage::Training, self.rng.random_range(40..120)),
                        Stage::Training => (Stage::Dip, self.rng.random_range(2..6)),
                    };
                }
            }
        }
    }

    /// Utilisation (%) and memory share a GPU is heading for under the current job.
    fn demand(&self, index: u32) -> Option<(f64, f64, Stage)> {
        let job = self.job.as_ref().filter(|j| j.gpus.contains(&index))?;
        Some((job.util, job.memory_share, job.stage))
    }

    fn step_gpu(&mut self, i: usize) -> Reading {
        let demand = self.demand(i as u32);
        let board = self.board.clone();
        let dt = self.dt;
        let noise = |rng: &mut StdRng, spread: f64| rng.random_range(-spread..=spread);
        let (n1, n2, n3) = (noise(&mut self.rng, 2.5), noise(&mut self.rng, 0.03), noise(&mut self.rng, 25.0));
        let dip = self.rng.random_range(20.0..55.0);
        let gpu = &mut self.gpus[i];
        let memory = board.memory_mib as f64;
        let (target_util, target_mem) = match demand {
            None => (0.0, DRIVER_RESERVED_MIB),
            Some((util, share, Stage::Warmup)) => (util * 0.3, memory * share),
            Some((util, share, Stage::Training)) => (util, memory * share),
            Some((_, share, Stage::Dip)) => (dip, memory * share),
        };
        // Utilisation follows demand within a couple of steps; memory fills over the warm-up.
        gpu.util = (gpu.util + (target_util - gpu.util) * 0.6 + if target_util > 0.0 { n1 } else { 0.0 }).clamp(0.0, 100.0);
        gpu.mem_used_mib = (gpu.mem_used_mib + (target_mem - gpu.mem_used_mib) * 0.35).clamp(0.0, memory);
        let throttled = gpu.temperature >= THROTTLE_C;
        let load = (gpu.util / 100.0).powf(1.3);
        let mut power = board.idle_w + (board.limit_w - board.idle_w) * load * (0.93 + n2);
        if throttled {
            power *= 0.7;
        }
        let power = power.clamp(0.0, board.limit_w);
        let (target_c, tau) = if gpu.overheating {
            (OVERHEAT_TARGET_C, OVERHEAT_TIME_CONSTANT_S)
        } else {
            (AMBIENT_C + C_PER_WATT_OF_LIMIT * power / board.limit_w, THERMAL_TIME_CONSTANT_S)
        };
        gpu.temperature += (target_c - gpu.temperature) * (1.0 - (-dt / tau).exp());
        gpu.energy_mj += (power * dt * 1000.0) as u64;
        let throttled = gpu.temperature >= THROTTLE_C;
        let active = gpu.util > 1.0;
        let mut sm_clock = if active { (board.boost_clock_mhz + n3.min(0.0)).max(board.idle_clock_mhz) } else { board.idle_clock_mhz };
        let mut reasons = if active { 0 } else { throttle::GPU_IDLE };
        if throttled {
            sm_clock *= 0.6;
            reasons |= throttle::HW_THERMAL_SLOWDOWN | throttle::HW_SLOWDOWN;
        } else if power >= board.limit_w * 0.98 {
            reasons |= throttle::SW_POWER_CAP;
        }
        let processes = match (demand, &self.job) {
            (Some(_), Some(job)) => vec![GpuProcess {
                pid: 40_000 + self.jobs_started * 64 + i as u32,
                used_memory_mib: Some((gpu.mem_used_mib - DRIVER_RESERVED_MIB).max(0.0).round()),
                pod: Some(PodRef {
                    uid: job.pod_uid.clone(),
                    namespace: Some(self.namespace.clone()),
                    name: Some(format!("{}-worker-0", job.name)),
                    container: Some("trainer".into()),
                    container_id: None,
                }),
            }],
            _ => Vec::new(),
        };
        Reading {
            uuid: gpu.info.uuid.clone(),
            index: gpu.info.index,
            util: round(gpu.util, 1),
            mem_util: round((gpu.util * 0.45).clamp(0.0, 100.0), 1),
            mem_used_mib: gpu.mem_used_mib.round(),
            mem_total_mib: memory,
            temperature: round(gpu.temperature, 0),
            power_w: round(power, 1),
            power_limit_w: Some(board.limit_w),
            sm_clock_mhz: sm_clock.round(),
            mem_clock_mhz: Some(board.mem_clock_mhz),
            energy_mj: Some(gpu.energy_mj),
            ecc_corrected: Some(gpu.ecc_corrected),
            ecc_uncorrected: Some(gpu.ecc_uncorrected),
            throttle_reasons: reasons,
            xid_errors: std::mem::take(&mut gpu.pending_xids),
            processes,
            lost: false,
        }
    }
}

impl GpuSource for SimulatedSource {
    fn inventory(&self) -> Inventory {
        Inventory {
            driver_version: Some("550.90.07".into()),
            cuda_version: Some("12.4".into()),
            gpus: self.gpus.iter().map(|g| g.info.clone()).collect(),
        }
    }

    fn sample(&mut self) -> Vec<Reading> {
        let due: Vec<Fault> = self.schedule.iter().filter(|(at, _)| *at == self.step).map(|(_, f)| *f).collect();
        for fault in due.into_iter().chain(self.faults.take()) {
            self.apply(fault);
        }
        self.advance_job();
        let mut readings = Vec::with_capacity(self.gpus.len());
        for i in 0..self.gpus.len() {
            if self.gpus[i].silent {
                continue;
            }
            if self.gpus[i].lost {
                // The last word of a GPU that fell off the bus: its XIDs, then nothing.
                let gpu = &mut self.gpus[i];
                gpu.silent = true;
                readings.push(Reading {
                    uuid: gpu.info.uuid.clone(),
                    index: gpu.info.index,
                    mem_total_mib: gpu.info.memory_mib as f64,
                    temperature: round(gpu.temperature, 0),
                    xid_errors: std::mem::take(&mut gpu.pending_xids),
                    lost: true,
                    ..Reading::default()
                });
                continue;
            }
            readings.push(self.step_gpu(i));
        }
        self.step += 1;
        readings
    }
}

fn round(value: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (value * scale).round() / scale
}

/// FNV-1a: a stable hash (the standard library's may change between releases).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3))
}

/// A UUID-shaped id from a number (`GPU-…` for GPUs, bare for pod UIDs).
fn uuid_like(prefix: &str, seed: u64) -> String {
    let a = seed;
    let b = seed.rotate_left(29).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5bd1_e995;
    format!("{prefix}{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", (a >> 32) as u32, (a >> 16) as u16, a as u16, (b >> 48) as u16, b & 0xffff_ffff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(count: u32) -> SimulatedSource {
        SimulatedSource::new("node-a", count, "NVIDIA-H100-80GB-HBM3", 7)
    }

    #[test]
    fn uuids_are_stable_per_node_and_distinct() {
        let a = source(8).inventory();
        assert_eq!(a, source(8).inventory(), "the same node gets the same GPUs after a restart");
        let uuids: std::collections::HashSet<_> = a.gpus.iter().map(|g| g.uuid.clone()).collect();
        assert_eq!(uuids.len(), 8);
        assert!(a.gpus.iter().all(|g| g.uuid.starts_with("GPU-") && g.uuid.len() == 40), "{:?}", a.gpus[0].uuid);
        let other = SimulatedSource::new("node-b", 8, "NVIDIA-H100-80GB-HBM3", 7).inventory();
        assert!(other.gpus.iter().all(|g| !uuids.contains(&g.uuid)));
        assert_eq!(a.shape().as_deref(), Some("NVIDIA-H100-80GB-HBM3"));
    }

    #[test]
    fn every_reading_is_within_what_the_gateway_accepts() {
        let mut sim = source(8);
        for _ in 0..3600 {
            for r in sim.sample() {
                assert!((0.0..=100.0).contains(&r.util) && (0.0..=100.0).contains(&r.mem_util), "{r:?}");
                assert!((0.0..=r.mem_total_mib).contains(&r.mem_used_mib), "{r:?}");
                assert!((-50.0..=150.0).contains(&r.temperature), "{r:?}");
                assert!((0.0..=700.0).contains(&r.power_w), "{r:?}");
                assert!((0.0..=10_000.0).contains(&r.sm_clock_mhz), "{r:?}");
            }
        }
    }

    #[test]
    fn training_bursts_move_utilisation_power_and_temperature_together() {
        let mut sim = source(1);
        let readings: Vec<Reading> = (0..3600).map(|_| sim.sample().remove(0)).collect();
        let busy: Vec<&Reading> = readings.iter().filter(|r| r.util > 80.0).collect();
        let idle: Vec<&Reading> = readings.iter().filter(|r| r.util < 1.0).collect();
        assert!(busy.len() > 600 && idle.len() > 10, "an hour has both training and idle spells: {} busy, {} idle", busy.len(), idle.len());
        let mean = |rs: &[&Reading], f: fn(&Reading) -> f64| rs.iter().map(|r| f(r)).sum::<f64>() / rs.len() as f64;
        assert!(mean(&busy, |r| r.power_w) > 3.0 * mean(&idle, |r| r.power_w), "busy GPUs draw more power");
        assert!(mean(&busy, |r| r.temperature) > mean(&idle, |r| r.temperature) + 15.0, "and run hotter");
        assert!(mean(&busy, |r| r.mem_used_mib) > 30_000.0, "a job fills memory");
        assert!(busy.iter().all(|r| r.processes.len() == 1 && r.processes[0].pod.is_some()), "a busy GPU runs a pod's process");
        assert!(idle.iter().all(|r| r.throttle_reasons & throttle::GPU_IDLE != 0));
        let energy: Vec<u64> = readings.iter().filter_map(|r| r.energy_mj).collect();
        assert!(energy.windows(2).all(|w| w[0] <= w[1]), "energy only grows");
    }

    #[test]
    fn an_overheating_gpu_crosses_the_alert_threshold_within_seconds_and_throttles() {
        let mut sim = source(2);
        sim.faults().inject(Fault { kind: FaultKind::Overheat, gpu: 1 });
        let mut crossed = None;
        for step in 0..30 {
            let r = sim.sample().remove(1);
            if r.temperature > 87.0 && crossed.is_none() {
                crossed = Some(step);
            }
            if r.temperature >= THROTTLE_C + 1.0 {
                assert!(r.throttle_reasons & throttle::HW_THERMAL_SLOWDOWN != 0, "{r:?}");
            }
        }
        assert!(crossed.is_some_and(|s| s <= 10), "crossed 87 °C at step {crossed:?}");
        sim.faults().inject(Fault { kind: FaultKind::Recover, gpu: 1 });
        let cooled = (0..120).map(|_| sim.sample().remove(1).temperature).last().unwrap_or(f64::MAX);
        assert!(cooled < 82.0, "it cools once the fault clears: {cooled}");
    }

    #[test]
    fn a_gpu_that_falls_off_the_bus_says_xid_79_once_then_nothing() {
        let mut sim = source(4).with_schedule(&[ScheduledFault { fault: Fault { kind: FaultKind::Lost, gpu: 2 }, after: Duration::from_secs(3) }]);
        for _ in 0..3 {
            assert_eq!(sim.sample().len(), 4);
        }
        let last = sim.sample();
        let lost = last.iter().find(|r| r.index == 2).expect("its last reading");
        assert!(lost.lost && lost.xid_errors == vec![79], "{lost:?}");
        for _ in 0..5 {
            let readings = sim.sample();
            assert_eq!(readings.iter().map(|r| r.index).collect::<Vec<_>>(), vec![0, 1, 3]);
        }
    }

    #[test]
    fn with_pods_every_gpu_runs_a_pod_of_the_namespace_from_the_first_reading() {
        let mut sim = source(4).with_pods("team-a");
        for _ in 0..600 {
            let readings = sim.sample();
            assert_eq!(readings.len(), 4);
            for r in &readings {
                assert_eq!(r.processes.len(), 1, "{r:?}");
                let pod = r.processes[0].pod.as_ref().expect("a pod");
                assert_eq!((pod.namespace.as_deref(), pod.container.as_deref()), (Some("team-a"), Some("trainer")));
            }
            let uids: std::collections::HashSet<_> = readings.iter().filter_map(|r| r.processes[0].pod.as_ref().map(|p| p.uid.clone())).collect();
            assert_eq!(uids.len(), 1, "one job's pod on the whole node");
        }
    }

    #[test]
    fn an_injected_xid_is_reported_once() {
        let mut sim = source(2);
        sim.faults().inject(Fault { kind: FaultKind::Xid(13), gpu: 0 });
        sim.faults().inject(Fault { kind: FaultKind::Ecc, gpu: 1 });
        let first = sim.sample();
        assert_eq!(first[0].xid_errors, vec![13]);
        assert_eq!((first[1].xid_errors.clone(), first[1].ecc_uncorrected), (vec![48], Some(1)));
        assert!(sim.sample().iter().all(|r| r.xid_errors.is_empty()));
    }
}
