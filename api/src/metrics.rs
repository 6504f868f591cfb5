//! Prometheus metrics: GraphQL requests and latencies by operation, SQL statements, GPRs by
//! phase, and the latest sample of every GPU under NVIDIA dcgm-exporter's names. Everything read
//! from the database is read at scrape time, so every replica reports the same truth.
//!
//! # GPU metrics (dcgm-exporter names)
//!
//! So that dashboards built for dcgm-exporter (Grafana's "NVIDIA DCGM Exporter Dashboard",
//! 12239) work against the gateway, the latest sample of each GPU is exported unprefixed, under
//! the names and label names dcgm-exporter uses: the families of [`egs_wire::dcgm`], the same
//! table the node agent exports. The gateway has the ones an agent reports in a sample (SM
//! clock, temperature, power, utilisation, memory-controller utilisation, the last XID code of
//! the latest sample, framebuffer used and free, the two ECC counts); free memory is the GPU's
//! registered memory less what is used, absent when the size is unknown.
//!
//! Labels, in dcgm-exporter's order: `gpu` (the index on its node), `UUID`, `device`
//! (`nvidia<index>`), `modelName` (the GPU's model), `Hostname` (the node's name),
//! `DCGM_FI_DRIVER_VERSION` (when the node reported one); then EGS's: `cluster` (the cluster's
//! name) and, where dcgm-exporter adds the `namespace` and `pod` using a GPU, `slice` and `gpr`:
//! the names of the slice and the GPR holding the node. Names, not ids, as dcgm-exporter's are;
//! a slice runs one GPR at a time, so the pair names one GPR. They are present only when the
//! sample was taken after the node was handed to that GPR (what its slice may read), so a new
//! holder is never credited with the previous one's work.
//!
//! GPUs that never reported are left out, and so are those of nodes whose agent is silent
//! (`STALE`, see [`egs_domain::inventory::liveness::effective_health`]): a stale value must not look live. One SQL
//! statement reads them all, whatever the GPU count.

use async_graphql::parser::types::OperationType;
use chrono::Utc;
use egs_domain::metrics::export::{GpuRow, live_gpus};
use egs_domain::metrics::store::Holder;
use egs_entities::{GprPhase, gpr};
use egs_wire::dcgm::{GpuValues, Labels, gpu_labels};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, Iterable, QuerySelect};
use std::collections::HashSet;
use std::time::Duration;

/// The operations EGS's own clients send (the portal, the `egs` CLI, the node agent), read
/// from their documents when the gateway is built. Only these are labels: any other name a
/// caller makes up is counted as `other`, so no caller, signed in or not, adds series.
const CLIENT_DOCUMENTS: [&str; 3] = [
    include_str!("../../web/portal/src/gql/gql.ts"),
    include_str!("client/operations.graphql"),
    include_str!("../../node-agent/src/operations.graphql"),
];

/// The names of the operations defined in `text` (`query Name`, `mutation Name`, …), wherever
/// they stand (the portal's documents are string literals with `\n` for line breaks).
fn operation_names(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .scan(false, |after_keyword, word| {
            let name = (*after_keyword && word.chars().next().is_some_and(|c| c.is_ascii_uppercase())).then_some(word);
            // `\n` leaves an `n` before the keyword; the keyword itself is what counts.
            *after_keyword = matches!(word, "query" | "mutation" | "subscription" | "nquery" | "nmutation" | "nsubscription");
            Some(name)
        })
        .flatten()
}

fn client_operations() -> &'static HashSet<&'static str> {
    static KNOWN: std::sync::OnceLock<HashSet<&'static str>> = std::sync::OnceLock::new();
    KNOWN.get_or_init(|| CLIENT_DOCUMENTS.iter().flat_map(|text| operation_names(text)).collect())
}
/// The operation label of every request without a token, whatever it names: only
/// authenticated callers take label slots.
pub const UNAUTHENTICATED: &str = "unauthenticated";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    operation: String,
    r#type: String,
    outcome: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    operation: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct PhaseLabels {
    phase: String,
}

pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    latency: Family<OperationLabels, Histogram>,
    gprs: Family<PhaseLabels, Gauge>,
    histories: Gauge,
}

impl Metrics {
    /// `tick_seconds`: the scheduler's tick durations on this replica (ticks only on the leader).
    pub fn new(statements: Counter, tick_seconds: Histogram) -> Self {
        let mut registry = Registry::with_prefix("egs");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<OperationLabels, Histogram>::new_with_constructor(|| Histogram::new(exponential_buckets(0.000_25, 2.0, 16)));
        let gprs = Family::<PhaseLabels, Gauge>::default();
        registry.register("graphql_requests", "GraphQL requests by operation, type and outcome", requests.clone());
        registry.register("graphql_request_duration_seconds", "GraphQL request latency by operation", latency.clone());
        registry.register("db_statements", "SQL statements sent to the database", statements);
        registry.register("gprs", "GPRs by phase", gprs.clone());
        registry.register("scheduler_tick_duration_seconds", "How long the scheduler's ticks took on this replica (the leader)", tick_seconds);
        let histories = Gauge::default();
        registry.register("gpu_histories", "GPUs whose sample history this replica holds (those reporting to it)", histories.clone());
        Self { registry, requests, latency, gprs, histories }
    }

    fn operation_label(&self, name: Option<&str>) -> String {
        match name {
            None => "anonymous".into(),
            Some(name) if name == UNAUTHENTICATED || client_operations().contains(name) => name.to_owned(),
            Some(_) => "other".into(),
        }
    }

    pub fn observe_request(&self, name: Option<&str>, op_type: Option<OperationType>, outcome: &str, elapsed: Duration) {
        let operation = self.operation_label(name);
        let r#type = match op_type {
            Some(OperationType::Query) => "query",
            Some(OperationType::Mutation) => "mutation",
            Some(OperationType::Subscription) => "subscription",
            None => "unknown",
        };
        self.requests.get_or_create(&RequestLabels { operation: operation.clone(), r#type: r#type.into(), outcome: outcome.into() }).inc();
        self.latency.get_or_create(&OperationLabels { operation }).observe(elapsed.as_secs_f64());
    }

    /// Refreshes database-derived gauges, reads the latest GPU samples and encodes everything
    /// in the OpenMetrics text format (one `# EOF` at the end). Two SQL statements.
    /// `histories`: GPUs whose history this replica holds.
    pub async fn render(&self, db: &DatabaseConnection, histories: usize) -> Result<String, RenderError> {
        self.histories.set(histories as i64);
        let counts: Vec<(GprPhase, i64)> = gpr::Entity::find()
            .select_only()
            .column(gpr::Column::Phase)
            .column_as(gpr::Column::Id.count(), "n")
            .group_by(gpr::Column::Phase)
            .into_tuple()
            .all(db)
            .await?;
        for phase in GprPhase::iter() {
            let count = counts.iter().find(|(p, _)| *p == phase).map_or(0, |(_, n)| *n);
            self.gprs.get_or_create(&PhaseLabels { phase: phase.as_str().into() }).set(count);
        }
        // Unprefixed, and read per scrape, so a GPU that stopped reporting leaves no series behind.
        let read = std::time::Instant::now();
        let gpus: Vec<_> = live_gpus(db, Utc::now()).await?.into_iter().map(exported).collect();
        let written = std::time::Instant::now();
        // Sized once: a fleet's text is 100+ MB, and growing it by doubling copies it over and over.
        let mut text = String::with_capacity(64 * 1024 + gpus.len() * BYTES_PER_GPU);
        encode_registry(&mut text, &self.registry)?;
        egs_wire::dcgm::write_text(&mut text, &gpus);
        encode_eof(&mut text)?;
        tracing::debug!(
            gpus = gpus.len(),
            read_ms = (written - read).as_millis() as u64,
            write_ms = written.elapsed().as_millis() as u64,
            bytes = text.len(),
            "rendered /metrics"
        );
        Ok(text)
    }
}

/// Room for one GPU's lines in every family (about 1.3–1.9 KB with EGS's labels); memory
/// reserved and never written costs nothing.
const BYTES_PER_GPU: usize = 2048;

/// Why `/metrics` could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("failed to read metrics from the database")]
    Database(#[from] DbErr),
    #[error("failed to encode metrics")]
    Encode(#[from] std::fmt::Error),
}

// ---- GPU metrics under dcgm-exporter's names (see the module docs) ----

/// One GPU as exported: its labels and its latest values.
fn exported(mut row: GpuRow) -> (Labels, GpuValues) {
    // The holder's names only on samples its slice may read: taken since the assignment.
    let holder = match (row.gpr_id, row.slice_id, row.assigned_at) {
        (Some(gpr_id), Some(slice_id), Some(at)) => Some(Holder { gpr_id, slice_id, since: at.timestamp() }),
        _ => None,
    };
    let held = egs_domain::metrics::access::Access::of(holder, true).allows(Some(row.last_sample_at));
    let mut labels = gpu_labels(
        i64::from(row.gpu_index),
        std::mem::take(&mut row.uuid),
        std::mem::take(&mut row.model),
        std::mem::take(&mut row.node_name),
        row.driver_version.take(),
    );
    labels.push(("cluster", std::mem::take(&mut row.cluster_name)));
    if let (true, Some(slice), Some(gpr)) = (held, row.slice_name.take(), row.gpr_name.take()) {
        labels.push(("slice", slice));
        labels.push(("gpr", gpr));
    }
    let values = GpuValues {
        sm_clock_mhz: row.latest_sm_clock_mhz,
        temperature_c: row.latest_temperature_c,
        power_w: row.latest_power_w,
        util: row.latest_util,
        mem_util: row.latest_mem_util,
        last_xid: Some(row.latest_xid_errors.as_ref().and_then(|x| x.0.last()).map_or(0, |&code| i64::from(code))),
        fb_used_mib: row.latest_mem_used_mib,
        fb_total_mib: Some(row.memory_mib as f64),
        ecc_corrected: row.latest_ecc_corrected,
        ecc_uncorrected: row.latest_ecc_uncorrected,
        ..GpuValues::default()
    };
    (labels, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_labels_are_the_operations_of_the_portal_the_cli_and_the_agent() {
        let found: Vec<&str> =
            operation_names("\"\\n  query CreateGprSlices {\\n slices { id } }\" mutation EgsCliCreateGpr($input: X!) { a }").collect();
        assert_eq!(found, ["CreateGprSlices", "EgsCliCreateGpr"]);
        // Field names after a keyword-like word are not names (lowercase), nor is `query` alone.
        assert_eq!(operation_names("{ query { id } } query { a }").count(), 0);
        let known = client_operations();
        for name in ["CreateGprSlices", "EgsCliCreateGpr", "EgsAgentReport", "BellAlerts"] {
            assert!(known.contains(name), "{name} is one of EGS's operations");
        }
        assert!(known.len() > 40 && known.len() < 500, "{}", known.len());
    }
}
