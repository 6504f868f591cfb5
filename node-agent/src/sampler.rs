//! The sampling loop: every interval, read the GPUs, name the pods of their processes, keep
//! the latest readings for `/metrics`, and turn them into the gateway's samples: one batch per
//! tick, stamped with the tick's whole second, into the report buffer (or onto stdout with
//! `--print`). A GPU that falls off the bus, or reports an XID that takes it out of service,
//! marks the node `UNHEALTHY` for the reporter to register.

use crate::gateway::{GpuProcessInput, GpuWorkloadInput, NodeInput, PodInput, SampleInput};
use crate::pods::PodMapper;
use crate::source::{GpuSource, Inventory, Reading};
use crate::{Clock, Error, State};
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::MissedTickBehavior;

/// XID codes after which the GPU needs a reset or replacement, so the node is reported
/// `UNHEALTHY`: a row-remapping failure (64), the GPU falling off the bus (79), an uncontained
/// ECC error (95).
pub const FATAL_XIDS: [u32; 3] = [64, 79, 95];
/// Most XID codes per sample the gateway accepts.
const MAX_XIDS_PER_SAMPLE: usize = 32;
/// Most processes per GPU the gateway accepts.
const MAX_PROCESSES_PER_GPU: usize = 256;
/// How far over its registered memory a GPU's usage may read (the gateway allows 5 %).
const MEMORY_SLACK: f64 = 1.05;

/// One batch as `--print` writes it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Printed<'a> {
    timestamp: DateTime<Utc>,
    cluster_id: Option<&'a str>,
    node: &'a NodeInput,
    /// What `reportGpuSamples` would receive.
    samples: &'a [SampleInput],
    /// Everything read, processes and pods included.
    readings: &'a [Reading],
}

/// What the sampler needs besides the source.
pub struct Sampler {
    pub interval: Duration,
    pub once: bool,
    pub print: bool,
    pub cluster_id: Option<String>,
    pub node: NodeInput,
    pub clock: std::sync::Arc<dyn Clock>,
    pub pods: Option<PodMapper>,
}

impl Sampler {
    /// Samples until `once` is done, or forever.
    pub async fn run(mut self, mut source: Box<dyn GpuSource>, state: &State) -> Result<(), Error> {
        let inventory = state.inventory();
        let mut ticker = tokio::time::interval(self.interval);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Skip);
        let mut last_second = None;
        let mut dropping = false;
        loop {
            ticker.tick().await;
            let at = self.clock.now();
            // The gateway keeps one sample per GPU and second: never stamp two ticks alike.
            let second = at.timestamp();
            if last_second.is_some_and(|last| second <= last) {
                tracing::debug!("a tick in the same second as the last one is skipped");
                continue;
            }
            last_second = Some(second);
            let at = DateTime::from_timestamp(second, 0).unwrap_or(at);
            let mut readings;
            (source, readings) = read(source).await?;
            if let Some(pods) = self.pods.as_mut() {
                name_pods(pods, &mut readings, &state.named_pods()).await;
            }
            if !state.unhealthy.load(Ordering::Relaxed)
                && let Some(bad) = readings.iter().find(|r| r.lost || r.xid_errors.iter().any(|x| FATAL_XIDS.contains(x)))
            {
                tracing::error!(gpu = bad.index, uuid = %bad.uuid, xids = ?bad.xid_errors, lost = bad.lost, "a GPU failed: reporting the node UNHEALTHY");
                state.unhealthy.store(true, Ordering::Relaxed);
            }
            state.set_workloads(workload_inputs(&readings, &inventory));
            let samples = sample_inputs(&readings, at, &inventory);
            state.metrics.samples_taken.inc_by(samples.len() as u64);
            if self.print {
                print(&Printed { timestamp: at, cluster_id: self.cluster_id.as_deref(), node: &self.node, samples: &samples, readings: &readings });
            } else if !samples.is_empty() {
                let mut buffer = state.buffer();
                let dropped = buffer.push(at, samples);
                state.metrics.buffered_samples.set(buffer.samples() as i64);
                drop(buffer);
                if dropped > 0 {
                    state.metrics.samples_dropped.inc_by(dropped as u64);
                    if !dropping {
                        tracing::warn!(dropped, "the sample buffer is full: dropping the oldest samples until the gateway answers");
                    }
                }
                dropping = dropped > 0;
            }
            state.record(readings);
            state.new_batch.notify_one();
            if self.once {
                state.sampling_done.store(true, Ordering::Relaxed);
                state.new_batch.notify_one();
                return Ok(());
            }
        }
    }
}

/// One reading of every GPU, on the blocking pool when the source blocks (NVML).
async fn read(mut source: Box<dyn GpuSource>) -> Result<(Box<dyn GpuSource>, Vec<Reading>), Error> {
    if !source.blocking() {
        let readings = source.sample();
        return Ok((source, readings));
    }
    tokio::task::spawn_blocking(move || {
        let readings = source.sample();
        (source, readings)
    })
    .await
    .map_err(|e| Error::Sampler(e.to_string()))
}

/// Fills in the pods of processes the source could not name (`named`: the gateway's names).
async fn name_pods(pods: &mut PodMapper, readings: &mut [Reading], named: &std::collections::HashMap<String, crate::kube::PodMeta>) {
    let pids: Vec<u32> = readings.iter().flat_map(|r| r.processes.iter().filter(|p| p.pod.is_none()).map(|p| p.pid)).collect();
    if pids.is_empty() {
        return;
    }
    let named = pods.resolve(&pids, named).await;
    for process in readings.iter_mut().flat_map(|r| r.processes.iter_mut()).filter(|p| p.pod.is_none()) {
        process.pod = named.get(&process.pid).cloned();
    }
}

fn print(batch: &Printed<'_>) {
    let mut out = std::io::stdout().lock();
    let written = serde_json::to_writer(&mut out, batch).map_err(std::io::Error::from).and_then(|()| writeln!(out)).and_then(|()| out.flush());
    if let Err(error) = written {
        tracing::warn!(error = %error, "cannot print a batch");
    }
}

/// The gateway's samples of one tick. Values are held to the ranges the gateway accepts (a
/// driver glitch must not get a whole batch refused); a GPU gone from the bus sends only its
/// last XIDs.
pub fn sample_inputs(readings: &[Reading], at: DateTime<Utc>, inventory: &Inventory) -> Vec<SampleInput> {
    readings
        .iter()
        .filter(|r| !r.lost || !r.xid_errors.is_empty())
        .map(|r| {
            let registered = inventory.gpus.iter().find(|g| g.uuid == r.uuid).map_or(r.mem_total_mib, |g| g.memory_mib as f64);
            let mut xids: Vec<i64> = r.xid_errors.iter().filter(|x| (1..=65_535).contains(*x)).map(|x| i64::from(*x)).collect();
            if xids.len() > MAX_XIDS_PER_SAMPLE {
                xids.drain(..xids.len() - MAX_XIDS_PER_SAMPLE);
            }
            SampleInput {
                uuid: r.uuid.clone(),
                timestamp: at,
                util: clamp(r.util, 0.0, 100.0),
                mem_util: clamp(r.mem_util, 0.0, 100.0),
                mem_used_mib: clamp(r.mem_used_mib, 0.0, (registered * MEMORY_SLACK).floor()),
                temperature: clamp(r.temperature, -50.0, 150.0),
                power: clamp(r.power_w, 0.0, 5000.0),
                sm_clock_mhz: clamp(r.sm_clock_mhz, 0.0, 10_000.0),
                xid_errors: xids,
                ecc_corrected: r.ecc_corrected.map(|c| c.min(i64::MAX as u64) as i64),
                ecc_uncorrected: r.ecc_uncorrected.map(|c| c.min(i64::MAX as u64) as i64),
            }
        })
        .collect()
}

/// What `reportGpuWorkloads` gets: the processes (and pods) on every registered GPU still on
/// the bus, by GPU index then PID; memory held to the range the gateway accepts.
pub fn workload_inputs(readings: &[Reading], inventory: &Inventory) -> Vec<GpuWorkloadInput> {
    let mut gpus: Vec<GpuWorkloadInput> = readings
        .iter()
        .filter(|r| !r.lost)
        .filter_map(|r| {
            let registered = inventory.gpus.iter().find(|g| g.uuid == r.uuid)?;
            let mut processes: Vec<GpuProcessInput> = r
                .processes
                .iter()
                .map(|p| GpuProcessInput {
                    pid: i64::from(p.pid),
                    used_memory_mib: p
                        .used_memory_mib
                        .filter(|m| m.is_finite())
                        .map(|m| clamp(m, 0.0, (registered.memory_mib as f64 * MEMORY_SLACK).floor())),
                    pod: p.pod.as_ref().map(|pod| PodInput {
                        uid: pod.uid.clone(),
                        namespace: pod.namespace.clone(),
                        name: pod.name.clone(),
                        container: pod.container.clone(),
                        container_id: pod.container_id.clone(),
                    }),
                })
                .collect();
            processes.sort_by_key(|p| p.pid);
            processes.dedup_by_key(|p| p.pid);
            processes.truncate(MAX_PROCESSES_PER_GPU);
            Some(GpuWorkloadInput { uuid: r.uuid.clone(), processes })
        })
        .collect();
    gpus.dedup_by(|a, b| a.uuid == b.uuid);
    gpus
}

fn clamp(value: f64, min: f64, max: f64) -> f64 {
    if value.is_finite() { value.clamp(min, max) } else { min.max(0.0) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::GpuInfo;

    fn inventory() -> Inventory {
        Inventory {
            driver_version: None,
            cuda_version: None,
            gpus: vec![GpuInfo { uuid: "GPU-a".into(), index: 0, model: "NVIDIA H100 80GB HBM3".into(), memory_mib: 1000, mig_enabled: false }],
        }
    }

    #[test]
    fn samples_are_held_to_the_gateways_ranges() {
        let reading = Reading {
            uuid: "GPU-a".into(),
            util: 104.0,
            mem_util: f64::NAN,
            mem_used_mib: 5000.0,
            temperature: -300.0,
            power_w: 9999.0,
            sm_clock_mhz: 20_000.0,
            xid_errors: (1..=40).chain([0, 70_000]).collect(),
            ..Reading::default()
        };
        let at = DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default();
        let sample = sample_inputs(&[reading], at, &inventory()).remove(0);
        assert_eq!((sample.util, sample.mem_util, sample.mem_used_mib), (100.0, 0.0, 1050.0));
        assert_eq!((sample.temperature, sample.power, sample.sm_clock_mhz), (-50.0, 5000.0, 10_000.0));
        assert_eq!(sample.xid_errors, (9..=40).collect::<Vec<i64>>(), "the newest 32 valid codes");
    }

    #[test]
    fn a_lost_gpu_sends_its_last_xids_and_then_nothing() {
        let at = Utc::now();
        let lost = Reading { uuid: "GPU-a".into(), lost: true, xid_errors: vec![79], temperature: 60.0, ..Reading::default() };
        let samples = sample_inputs(std::slice::from_ref(&lost), at, &inventory());
        assert_eq!((samples.len(), samples[0].xid_errors.clone()), (1, vec![79]));
        let silent = Reading { xid_errors: Vec::new(), ..lost };
        assert!(sample_inputs(&[silent], at, &inventory()).is_empty());
    }
}
