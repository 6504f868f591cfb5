//! The agent's own HTTP face: `/healthz` and `/metrics`.
//!
//! `/metrics` speaks OpenMetrics and exports the latest reading of each GPU under NVIDIA
//! dcgm-exporter's names and labels: the families of [`egs_wire::dcgm`], the table the gateway's
//! `/metrics` re-exports too, so the agent is a drop-in replacement for dcgm-exporter (same port,
//! 9400) and dashboards built for either work on both. The agent reads every family in it; the
//! XID family is the last code the GPU reported since the agent started.
//!
//! After dcgm-exporter's labels come `cluster` (when `--cluster-name` is set, as the gateway
//! labels it) and, as dcgm-exporter does in Kubernetes, `namespace`, `pod` and `container` of
//! the pod using the GPU, when exactly one pod does.
//! `egs_agent_gpu_pod_memory_used_mib` lists every pod on every GPU with the memory it holds.
//!
//! The agent's own health is under `egs_agent_*`: samples taken, sent, duplicate, dropped
//! (buffer full) and rejected, report errors by reason, buffered samples, registration.

use crate::State;
use crate::source::{PodRef, Reading};
use axum::extract::State as Extract;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use egs_wire::dcgm::{GpuValues, Labels, gpu_labels};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReasonLabels {
    pub reason: String,
}

/// The agent's own metrics (`egs_agent_*`).
pub struct Metrics {
    registry: Registry,
    pub samples_taken: Counter,
    pub samples_sent: Counter,
    pub samples_duplicate: Counter,
    pub samples_dropped: Counter,
    pub samples_rejected: Counter,
    pub reports: Counter,
    /// Pod mappings (`reportGpuWorkloads`) delivered.
    pub workload_reports: Counter,
    pub report_errors: Family<ReasonLabels, Counter>,
    pub buffered_samples: Gauge,
    pub registered: Gauge,
    pub gpus: Gauge,
    pub last_report_time: Gauge<f64, AtomicU64>,
    /// What the gateway last asked for (0: every sample as it is taken).
    pub report_interval: Gauge,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("egs_agent");
        let metrics = Self {
            samples_taken: Counter::default(),
            samples_sent: Counter::default(),
            samples_duplicate: Counter::default(),
            samples_dropped: Counter::default(),
            samples_rejected: Counter::default(),
            reports: Counter::default(),
            workload_reports: Counter::default(),
            report_errors: Family::default(),
            buffered_samples: Gauge::default(),
            registered: Gauge::default(),
            gpus: Gauge::default(),
            last_report_time: Gauge::default(),
            report_interval: Gauge::default(),
            registry: Registry::default(),
        };
        registry.register("samples", "GPU samples taken", metrics.samples_taken.clone());
        registry.register("samples_sent", "Samples the gateway stored", metrics.samples_sent.clone());
        registry.register("samples_duplicate", "Resent samples the gateway already had", metrics.samples_duplicate.clone());
        registry.register(
            "samples_dropped",
            "Samples dropped, oldest first, because the buffer was full while the gateway was unreachable",
            metrics.samples_dropped.clone(),
        );
        registry.register("samples_rejected", "Samples the gateway rejected as invalid (dropped)", metrics.samples_rejected.clone());
        registry.register("reports", "Batches delivered to the gateway", metrics.reports.clone());
        registry.register("workload_reports", "GPU process and pod mappings delivered to the gateway", metrics.workload_reports.clone());
        registry.register("report_errors", "Failed calls to the gateway, by reason", metrics.report_errors.clone());
        registry.register("buffered_samples", "Samples waiting for the gateway", metrics.buffered_samples.clone());
        registry.register("registered", "1 once the gateway accepted the node's registration", metrics.registered.clone());
        registry.register("gpus", "GPUs on this node", metrics.gpus.clone());
        registry.register("last_report_timestamp_seconds", "When the gateway last stored a batch (Unix time)", metrics.last_report_time.clone());
        registry.register(
            "report_interval_seconds",
            "How long the gateway lets this agent gather samples before reporting (0 while someone watches the node live)",
            metrics.report_interval.clone(),
        );
        Self { registry, ..metrics }
    }
}

/// `/healthz` and `/metrics`.
pub fn router(state: Arc<State>) -> axum::Router {
    axum::Router::new().route("/healthz", get(healthz)).route("/metrics", get(metrics)).with_state(state)
}

/// 200 while the GPUs are being sampled; 503 when sampling has stalled.
async fn healthz(Extract(state): Extract<Arc<State>>) -> Response {
    let age = state.snapshot().taken_at.map(|at| at.elapsed());
    let limit = (state.interval * 3).max(std::time::Duration::from_secs(5));
    let body = serde_json::json!({
        "status": if age.is_some_and(|a| a <= limit) { "ok" } else { "stalled" },
        "gpus": state.metrics.gpus.get(),
        "registered": state.metrics.registered.get() == 1,
        "bufferedSamples": state.metrics.buffered_samples.get(),
        "lastSampleAgeSeconds": age.map(|a| a.as_secs_f64()),
    });
    let status = if age.is_some_and(|a| a <= limit) { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

async fn metrics(Extract(state): Extract<Arc<State>>) -> Response {
    match render(&state) {
        Ok(text) => ([(header::CONTENT_TYPE, OPENMETRICS)], text).into_response(),
        Err(error) => {
            tracing::error!(error = %error, "failed to encode /metrics");
            (StatusCode::INTERNAL_SERVER_ERROR, "failed to encode metrics\n").into_response()
        }
    }
}

/// The whole `/metrics` body: the agent's own families, the GPUs', one `# EOF`.
pub fn render(state: &State) -> Result<String, std::fmt::Error> {
    let snapshot = state.snapshot();
    let mut gpus = Registry::default();
    gpus.register_collector(Box::new(DcgmGauges::new(state, &snapshot.readings, &snapshot.last_xid)));
    let mut text = String::new();
    encode_registry(&mut text, &state.metrics.registry)?;
    encode_registry(&mut text, &gpus)?;
    encode_eof(&mut text)?;
    Ok(text)
}

/// The GPU families of one scrape; GPUs gone from the bus are left out, and so is a family no
/// GPU has a value for.
struct DcgmGauges {
    gpus: Vec<(Labels, GpuValues)>,
    /// (labels, MiB) per pod on a GPU.
    pods: Vec<(Labels, f64)>,
}

impl std::fmt::Debug for DcgmGauges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DcgmGauges").field("gpus", &self.gpus.len()).finish()
    }
}

impl DcgmGauges {
    fn new(state: &State, readings: &[Reading], last_xid: &HashMap<String, u32>) -> Self {
        let inventory = state.inventory();
        let mut gpus = Vec::with_capacity(readings.len());
        let mut pods = Vec::new();
        for reading in readings.iter().filter(|r| !r.lost) {
            let model = inventory.gpus.iter().find(|g| g.uuid == reading.uuid).map_or_else(String::new, |g| g.model.clone());
            let mut labels = gpu_labels(i64::from(reading.index), reading.uuid.clone(), model, state.node.clone(), inventory.driver_version.clone());
            if let Some(cluster) = &state.cluster_name {
                labels.push(("cluster", cluster.clone()));
            }
            let gpu_labels = labels.clone();
            let mut on_gpu: Vec<(&PodRef, f64)> = Vec::new();
            for process in &reading.processes {
                let Some(pod) = &process.pod else { continue };
                let memory = process.used_memory_mib.unwrap_or(0.0);
                match on_gpu.iter_mut().find(|(p, _)| p.uid == pod.uid && p.container == pod.container) {
                    Some((_, total)) => *total += memory,
                    None => on_gpu.push((pod, memory)),
                }
            }
            if let [(pod, _)] = on_gpu.as_slice() {
                labels.extend(pod_labels(pod));
            }
            for (pod, memory) in on_gpu {
                let mut labels = gpu_labels.clone();
                labels.extend(pod_labels(pod));
                pods.push((labels, memory));
            }
            gpus.push((labels, values(reading, last_xid.get(&reading.uuid).copied())));
        }
        Self { gpus, pods }
    }
}

/// What the agent read of a GPU, as the exported families take it.
fn values(r: &Reading, last_xid: Option<u32>) -> GpuValues {
    let count = |n: u64| n.min(i64::MAX as u64) as i64;
    GpuValues {
        sm_clock_mhz: Some(r.sm_clock_mhz),
        mem_clock_mhz: r.mem_clock_mhz,
        temperature_c: Some(r.temperature),
        power_w: Some(r.power_w),
        power_limit_w: r.power_limit_w,
        energy_mj: r.energy_mj.map(count),
        util: Some(r.util),
        mem_util: Some(r.mem_util),
        last_xid: Some(i64::from(last_xid.unwrap_or(0))),
        fb_used_mib: Some(r.mem_used_mib),
        fb_total_mib: Some(r.mem_total_mib),
        ecc_corrected: r.ecc_corrected.map(count),
        ecc_uncorrected: r.ecc_uncorrected.map(count),
        throttle_reasons: Some(count(r.throttle_reasons)),
    }
}

fn pod_labels(pod: &PodRef) -> Labels {
    vec![
        ("namespace", pod.namespace.clone().unwrap_or_default()),
        ("pod", pod.name.clone().unwrap_or_else(|| pod.uid.clone())),
        ("container", pod.container.clone().unwrap_or_default()),
    ]
}

impl Collector for DcgmGauges {
    fn encode(&self, encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        encode_gpus(self, encoder)
    }
}

fn encode_gpus(gauges: &DcgmGauges, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
    egs_wire::dcgm::encode(&mut encoder, &gauges.gpus)?;
    if !gauges.pods.is_empty() {
        let mut metric = encoder.encode_descriptor(
            "egs_agent_gpu_pod_memory_used_mib",
            "GPU memory held by each pod's processes, MiB (0 when the driver does not say).",
            None,
            MetricType::Gauge,
        )?;
        for (labels, memory) in &gauges.pods {
            metric.encode_family(labels)?.encode_gauge(memory)?;
        }
    }
    Ok(())
}
