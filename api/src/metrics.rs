//! Prometheus metrics: GraphQL requests and latencies by operation, SQL statements, and GPRs
//! by phase (counted from the database at scrape time, so every replica reports the truth).

use async_graphql::parser::types::OperationType;
use egs_entities::{GprPhase, gpr};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use sea_orm::Iterable;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QuerySelect};
use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

/// Distinct operation names kept as labels; later ones are counted as `other`, so clients
/// cannot blow up the series count.
const MAX_OPERATION_LABELS: usize = 200;
/// Operation names longer than this are counted as `other`.
const MAX_OPERATION_NAME_LEN: usize = 64;

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
    known_operations: Mutex<HashSet<String>>,
}

impl Metrics {
    pub fn new(statements: Counter) -> Self {
        let mut registry = Registry::with_prefix("egs");
        let requests = Family::<RequestLabels, Counter>::default();
        let latency = Family::<OperationLabels, Histogram>::new_with_constructor(|| Histogram::new(exponential_buckets(0.000_25, 2.0, 16)));
        let gprs = Family::<PhaseLabels, Gauge>::default();
        registry.register("graphql_requests", "GraphQL requests by operation, type and outcome", requests.clone());
        registry.register("graphql_request_duration_seconds", "GraphQL request latency by operation", latency.clone());
        registry.register("db_statements", "SQL statements sent to the database", statements);
        registry.register("gprs", "GPRs by phase", gprs.clone());
        Self { registry, requests, latency, gprs, known_operations: Mutex::new(HashSet::new()) }
    }

    fn operation_label(&self, name: Option<&str>) -> String {
        let Some(name) = name else { return "anonymous".into() };
        if name.len() > MAX_OPERATION_NAME_LEN {
            return "other".into();
        }
        let mut known = self.known_operations.lock().unwrap_or_else(|p| p.into_inner());
        if known.contains(name) || known.len() < MAX_OPERATION_LABELS {
            known.insert(name.to_owned());
            name.to_owned()
        } else {
            "other".into()
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

    /// Refreshes database-derived gauges and encodes everything in the OpenMetrics text format.
    pub async fn render(&self, db: &DatabaseConnection) -> Result<String, sea_orm::DbErr> {
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
        let mut text = String::new();
        if let Err(e) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!(error = %e, "failed to encode metrics");
        }
        Ok(text)
    }
}
