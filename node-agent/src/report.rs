//! Getting samples to the gateway whatever it is doing. Each tick's samples form a [`Batch`]
//! in a bounded [`Buffer`]; the reporter sends the oldest batches first and drops them only
//! once the gateway has answered. While the gateway is unreachable the reporter waits with
//! exponential, jittered backoff ([`egs_wire::backoff`]), the sampler keeps filling the buffer,
//! and when it is full the oldest batch is dropped (counted in `egs_agent_samples_dropped_total` and logged). On
//! reconnect the buffer is sent in as few requests as the gateway's limit allows. A batch whose
//! answer was lost is sent again; the gateway keeps one sample per GPU and second and counts the
//! rest as `duplicates`, so nothing is stored twice.
//!
//! The gateway's answer to each report says how long to gather samples before the next
//! ([`ReportOutcome::report_interval`](crate::gateway::ReportOutcome::report_interval)): nothing while someone watches the node live, a few
//! seconds while nobody does (a report's cost to the gateway is mostly per request). The
//! sampler keeps its pace either way, so the history has every sample; at most
//! [`MAX_REPORT_INTERVAL`] whatever the gateway says, and the last batch of `--once` or a
//! shutdown goes at once.
//!
//! The processes and pods on each GPU go separately (`reportGpuWorkloads`), when they change
//! and at least every [`WORKLOADS_REFRESH`] ([`WorkloadSchedule`]); only the latest mapping
//! matters, so nothing of it is buffered.

use crate::gateway::{Gateway, GatewayError, GpuWorkloadInput, Health, NodeInput, SampleInput};
use crate::{Error, State};
use chrono::{DateTime, Utc};
use egs_wire::backoff::Backoff;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;

/// Most samples in one `reportGpuSamples` (the gateway accepts 10,000): ten minutes of an
/// 8-GPU node, so a reconnect after a short outage is one request.
pub const MAX_SAMPLES_PER_REPORT: usize = 5_000;
/// The first retry waits about this long…
pub const BACKOFF_BASE: Duration = Duration::from_millis(500);
/// …and no retry waits longer than this: short enough that a recovered gateway hears from
/// the node well before it is marked `STALE` for long.
pub const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// The longest the agent gathers samples before reporting, whatever the gateway asks: well
/// inside the 30 s after which the gateway calls a silent node stale.
pub const MAX_REPORT_INTERVAL: Duration = Duration::from_secs(10);

/// The pod mapping is sent again this long after the last delivery even when unchanged: the
/// gateway's view heals after a lost report or a gateway restore, and a slice that was just
/// handed the node sees its pods within this bound.
pub const WORKLOADS_REFRESH: Duration = Duration::from_secs(60);
/// After a failed delivery of the mapping, it is tried again no sooner than this.
pub const WORKLOADS_RETRY: Duration = Duration::from_secs(5);

/// When to send the pod mapping: when it changed (which processes, in which pods, on which
/// GPU; memory use alone is no change) or [`WORKLOADS_REFRESH`] after the last delivery, and
/// never sooner than [`WORKLOADS_RETRY`] after a failure.
#[derive(Debug, Default)]
pub struct WorkloadSchedule {
    /// What was last delivered (its identity), and when.
    delivered: Option<(Vec<WorkloadKey>, Instant)>,
    failed_at: Option<Instant>,
}

/// What identifies a GPU's workload: its processes and their pods, not their memory.
type WorkloadKey = (String, Vec<(i64, Option<crate::gateway::PodInput>)>);

fn workload_keys(mapping: &[GpuWorkloadInput]) -> Vec<WorkloadKey> {
    mapping.iter().map(|g| (g.uuid.clone(), g.processes.iter().map(|p| (p.pid, p.pod.clone())).collect())).collect()
}

impl WorkloadSchedule {
    /// Whether `mapping` is to be sent at `now`.
    pub fn due(&self, mapping: &[GpuWorkloadInput], now: Instant) -> bool {
        if self.failed_at.is_some_and(|at| now.saturating_duration_since(at) < WORKLOADS_RETRY) {
            return false;
        }
        match &self.delivered {
            None => true,
            Some((keys, at)) => now.saturating_duration_since(*at) >= WORKLOADS_REFRESH || *keys != workload_keys(mapping),
        }
    }

    /// `mapping` reached the gateway (or was refused for good) at `now`.
    pub fn delivered(&mut self, mapping: &[GpuWorkloadInput], now: Instant) {
        self.delivered = Some((workload_keys(mapping), now));
        self.failed_at = None;
    }

    /// Sending failed at `now`.
    pub fn failed(&mut self, now: Instant) {
        self.failed_at = Some(now);
    }
}

/// The samples of one tick.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// Increases by one per batch: what the reporter acknowledges.
    pub seq: u64,
    pub at: DateTime<Utc>,
    pub samples: Vec<SampleInput>,
}

/// Batches waiting for the gateway, oldest first, at most `capacity` of them.
#[derive(Debug)]
pub struct Buffer {
    batches: VecDeque<Batch>,
    capacity: usize,
    next_seq: u64,
    samples: usize,
}

impl Buffer {
    pub fn new(capacity: usize) -> Self {
        Self { batches: VecDeque::new(), capacity: capacity.max(1), next_seq: 0, samples: 0 }
    }

    /// Adds a tick's samples; returns how many samples were dropped (oldest first) to make room.
    pub fn push(&mut self, at: DateTime<Utc>, samples: Vec<SampleInput>) -> usize {
        let mut dropped = 0;
        while self.batches.len() >= self.capacity {
            if let Some(old) = self.batches.pop_front() {
                dropped += old.samples.len();
                self.samples -= old.samples.len();
            }
        }
        self.samples += samples.len();
        self.batches.push_back(Batch { seq: self.next_seq, at, samples });
        self.next_seq += 1;
        dropped
    }

    /// The oldest batches, whole, up to `max_samples` samples (at least one batch), and the
    /// sequence number to acknowledge once they are delivered.
    pub fn pending(&self, max_samples: usize) -> Option<(u64, Vec<SampleInput>)> {
        let mut taken: Vec<SampleInput> = Vec::new();
        let mut through = None;
        for batch in &self.batches {
            if through.is_some() && taken.len() + batch.samples.len() > max_samples {
                break;
            }
            taken.extend(batch.samples.iter().cloned());
            through = Some(batch.seq);
        }
        through.map(|seq| (seq, taken))
    }

    /// Forgets every batch up to `seq` (some may have been dropped meanwhile).
    pub fn ack(&mut self, seq: u64) {
        while self.batches.front().is_some_and(|b| b.seq <= seq) {
            if let Some(done) = self.batches.pop_front() {
                self.samples -= done.samples.len();
            }
        }
    }

    pub fn samples(&self) -> usize {
        self.samples
    }

    pub fn batches(&self) -> usize {
        self.batches.len()
    }
}

/// What the reporter registers: the node as its inventory and config describe it.
pub struct Registration {
    pub cluster_id: String,
    pub node: NodeInput,
}

/// Registers the node, then sends every batch the sampler buffers, until `once` is done
/// (when set) or forever. A registration the gateway refuses at start is fatal (a wrong token
/// or cluster id will not fix itself); every later failure is logged, counted and retried.
pub async fn run<G: Gateway>(gateway: &G, state: &State, registration: &Registration, once: bool, seed: u64) -> Result<(), Error> {
    let metrics = &state.metrics;
    let mut backoff = Backoff::jittered(BACKOFF_BASE, BACKOFF_MAX, seed);
    let mut registered: Option<bool> = None;
    let mut ever_registered = false;
    let mut outage: Option<Instant> = None;
    let mut workloads = WorkloadSchedule::default();
    // When the last report went out, and how long the gateway then let the next one wait.
    let mut last_report: Option<(Instant, Duration)> = None;
    loop {
        let unhealthy = state.unhealthy.load(Ordering::Relaxed);
        if registered != Some(unhealthy) {
            let mut node = registration.node.clone();
            node.health = unhealthy.then_some(Health::UNHEALTHY);
            match gateway.register(&registration.cluster_id, &node).await {
                Ok(()) => {
                    tracing::info!(node = %node.name, gpus = node.gpus.as_ref().map_or(0, Vec::len), unhealthy, "registered the node with the gateway");
                    registered = Some(unhealthy);
                    ever_registered = true;
                    metrics.registered.set(1);
                    recovered(&mut backoff, &mut outage, state);
                }
                Err(error) if !ever_registered && !error.is_transient() => return Err(Error::Registration(error)),
                Err(error) => {
                    failed(&error, "register", &mut outage, state);
                    tokio::time::sleep(backoff.next_delay()).await;
                }
            }
            continue;
        }
        if let Some(mapping) = state.workloads().filter(|m| workloads.due(m, Instant::now())) {
            send_workloads(gateway, state, registration, &mut workloads, &mapping).await;
        }
        let pending = state.buffer().pending(MAX_SAMPLES_PER_REPORT);
        let Some((through, samples)) = pending else {
            if once && state.sampling_done.load(Ordering::Relaxed) {
                return Ok(());
            }
            state.new_batch.notified().await;
            continue;
        };
        let last_batch = once && state.sampling_done.load(Ordering::Relaxed);
        if let Some(due) = last_report.map(|(at, wait)| at + wait).filter(|due| *due > Instant::now() && !last_batch) {
            // A new batch wakes the loop too: a health change or new pods go out at once.
            tokio::select! {
                () = tokio::time::sleep_until(due) => {}
                () = state.new_batch.notified() => {}
            }
            continue;
        }
        let sent_at = Instant::now();
        match gateway.report(&registration.cluster_id, &registration.node.name, &samples).await {
            Ok(outcome) => {
                let wait = outcome.report_interval.min(MAX_REPORT_INTERVAL);
                last_report = Some((sent_at, wait));
                metrics.report_interval.set(wait.as_secs() as i64);
                let mut buffer = state.buffer();
                buffer.ack(through);
                metrics.buffered_samples.set(buffer.samples() as i64);
                drop(buffer);
                metrics.samples_sent.inc_by(outcome.accepted);
                metrics.samples_duplicate.inc_by(outcome.duplicates);
                metrics.reports.inc();
                metrics.last_report_time.set(Utc::now().timestamp_millis() as f64 / 1000.0);
                if outcome.duplicates > 0 {
                    tracing::debug!(accepted = outcome.accepted, duplicates = outcome.duplicates, "the gateway already had some resent samples");
                }
                if outage.is_some() {
                    tracing::info!(samples = samples.len(), "delivered buffered samples");
                }
                recovered(&mut backoff, &mut outage, state);
            }
            Err(GatewayError::Rejected(errors)) => {
                // All or nothing, and sending it again would be refused again: drop it.
                state.buffer().ack(through);
                metrics.samples_rejected.inc_by(samples.len() as u64);
                metrics.report_errors.get_or_create(&crate::exporter::ReasonLabels { reason: "rejected".into() }).inc();
                let error = GatewayError::Rejected(errors);
                tracing::warn!(samples = samples.len(), error = %error, "the gateway rejected a batch; it is dropped");
                if error.to_string().contains("is not a GPU of node") {
                    registered = None;
                }
            }
            Err(GatewayError::NotFound(what)) => {
                // The node was removed (or never registered): register again, then resend.
                let error = GatewayError::NotFound(what);
                failed(&error, "report", &mut outage, state);
                registered = None;
                tokio::time::sleep(backoff.next_delay()).await;
            }
            Err(error) => {
                failed(&error, "report", &mut outage, state);
                tokio::time::sleep(backoff.next_delay()).await;
            }
        }
    }
}

/// Sends the pod mapping once. A failure is logged and retried later (the samples' delivery
/// does the backing off); a mapping the gateway rejects is not sent again until it changes or
/// the refresh is due.
async fn send_workloads<G: Gateway>(
    gateway: &G,
    state: &State,
    registration: &Registration,
    schedule: &mut WorkloadSchedule,
    mapping: &[GpuWorkloadInput],
) {
    match gateway.report_workloads(&registration.cluster_id, &registration.node.name, mapping).await {
        Ok(named) => {
            state.learn_pod_names(named);
            state.metrics.workload_reports.inc();
            schedule.delivered(mapping, Instant::now());
        }
        Err(GatewayError::Rejected(errors)) => {
            let error = GatewayError::Rejected(errors);
            state.metrics.report_errors.get_or_create(&crate::exporter::ReasonLabels { reason: error.reason().into() }).inc();
            tracing::warn!(error = %error, "the gateway rejected the GPU workloads (processes and pods)");
            schedule.delivered(mapping, Instant::now());
        }
        Err(error) => {
            state.metrics.report_errors.get_or_create(&crate::exporter::ReasonLabels { reason: error.reason().into() }).inc();
            tracing::debug!(error = %error, "cannot deliver the GPU workloads; retrying later");
            schedule.failed(Instant::now());
        }
    }
}

/// Counts and logs a failed call: the first of an outage as a warning, later ones quieter.
fn failed(error: &GatewayError, call: &'static str, outage: &mut Option<Instant>, state: &State) {
    state.metrics.report_errors.get_or_create(&crate::exporter::ReasonLabels { reason: error.reason().into() }).inc();
    let buffered = state.buffer().samples();
    if outage.is_none() {
        *outage = Some(Instant::now());
        tracing::warn!(call, error = %error, buffered_samples = buffered, "cannot reach the gateway; buffering samples and retrying with backoff");
    } else {
        tracing::debug!(call, error = %error, buffered_samples = buffered, "the gateway is still unreachable");
    }
}

fn recovered(backoff: &mut Backoff, outage: &mut Option<Instant>, state: &State) {
    if let Some(since) = outage.take() {
        tracing::info!(
            outage_ms = since.elapsed().as_millis() as u64,
            failures = backoff.failures(),
            dropped_samples_total = state.metrics.samples_dropped.get(),
            "the gateway answers again"
        );
    }
    backoff.reset();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples(n: usize) -> Vec<SampleInput> {
        (0..n)
            .map(|i| SampleInput {
                uuid: format!("GPU-{i}"),
                timestamp: DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default(),
                util: 0.0,
                mem_util: 0.0,
                mem_used_mib: 0.0,
                temperature: 30.0,
                power: 60.0,
                sm_clock_mhz: 0.0,
                xid_errors: Vec::new(),
                ecc_corrected: None,
                ecc_uncorrected: None,
            })
            .collect()
    }

    #[test]
    fn a_full_buffer_drops_the_oldest_batches_and_says_how_many_samples() {
        let mut buffer = Buffer::new(3);
        for _ in 0..3 {
            assert_eq!(buffer.push(Utc::now(), samples(8)), 0);
        }
        assert_eq!(buffer.push(Utc::now(), samples(8)), 8, "one batch of 8 made room");
        assert_eq!((buffer.batches(), buffer.samples()), (3, 24));
        let (through, pending) = buffer.pending(usize::MAX).expect("pending");
        assert_eq!((through, pending.len()), (3, 24), "batches 1, 2 and 3 are left");
    }

    #[test]
    fn pending_takes_whole_batches_up_to_the_limit_and_ack_forgets_them() {
        let mut buffer = Buffer::new(100);
        for _ in 0..10 {
            buffer.push(Utc::now(), samples(8));
        }
        let (through, first) = buffer.pending(20).expect("pending");
        assert_eq!((through, first.len()), (1, 16), "two whole batches fit in 20");
        // A batch bigger than the limit still goes, alone.
        assert_eq!(buffer.pending(3).map(|(s, p)| (s, p.len())), Some((0, 8)));
        buffer.ack(through);
        assert_eq!((buffer.batches(), buffer.samples()), (8, 64));
        // Acknowledging batches dropped meanwhile is harmless.
        buffer.ack(0);
        assert_eq!(buffer.batches(), 8);
        buffer.ack(u64::MAX);
        assert_eq!((buffer.batches(), buffer.pending(10)), (0, None));
    }

    fn mapping(pods: &[(&str, i64, Option<&str>)], memory: f64) -> Vec<GpuWorkloadInput> {
        pods.iter()
            .map(|(uuid, pid, pod)| GpuWorkloadInput {
                uuid: (*uuid).to_owned(),
                processes: vec![crate::gateway::GpuProcessInput {
                    pid: *pid,
                    used_memory_mib: Some(memory),
                    pod: pod.map(|uid| crate::gateway::PodInput {
                        uid: uid.to_owned(),
                        namespace: None,
                        name: None,
                        container: None,
                        container_id: None,
                    }),
                }],
            })
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn workloads_go_out_when_they_change_and_at_least_every_minute() {
        let mut schedule = WorkloadSchedule::default();
        let first = mapping(&[("GPU-0", 10, Some("pod-a")), ("GPU-1", 11, Some("pod-a"))], 100.0);
        assert!(schedule.due(&first, Instant::now()), "the first mapping goes out at once");
        schedule.delivered(&first, Instant::now());
        for _ in 0..59 {
            tokio::time::advance(Duration::from_secs(1)).await;
            let wobbling = mapping(&[("GPU-0", 10, Some("pod-a")), ("GPU-1", 11, Some("pod-a"))], 100.0 + 1.0);
            assert!(!schedule.due(&wobbling, Instant::now()), "unchanged (memory use is no change): nothing before a minute");
        }
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(schedule.due(&first, Instant::now()), "a minute after the last delivery: sent again");
        schedule.delivered(&first, Instant::now());

        tokio::time::advance(Duration::from_secs(3)).await;
        let moved = mapping(&[("GPU-0", 10, Some("pod-a")), ("GPU-1", 12, Some("pod-b"))], 100.0);
        assert!(schedule.due(&moved, Instant::now()), "a new pod: sent at once");
        let gone = mapping(&[("GPU-0", 10, Some("pod-a"))], 100.0);
        assert!(schedule.due(&gone, Instant::now()), "a process gone: sent at once");

        // The gateway is away: tried again after the retry delay, not on every tick.
        schedule.failed(Instant::now());
        tokio::time::advance(WORKLOADS_RETRY - Duration::from_secs(1)).await;
        assert!(!schedule.due(&moved, Instant::now()));
        tokio::time::advance(Duration::from_secs(1)).await;
        assert!(schedule.due(&moved, Instant::now()));
        schedule.delivered(&moved, Instant::now());
        assert!(!schedule.due(&moved, Instant::now()));
    }

    #[test]
    fn two_agents_seeded_differently_do_not_retry_in_lockstep() {
        let mut a = Backoff::jittered(BACKOFF_BASE, BACKOFF_MAX, 1);
        let mut b = Backoff::jittered(BACKOFF_BASE, BACKOFF_MAX, 2);
        let same = (0..10).filter(|_| a.next_delay() == b.next_delay()).count();
        assert!(same < 3);
    }
}
