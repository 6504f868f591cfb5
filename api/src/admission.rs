//! `POST /kubernetes/clusters/{cluster}/mutate`: the mutating admission webhook Kubernetes
//! clusters with `podPlacement: WEBHOOK` call for pods created in slice namespaces (see
//! `egs_schema::kubernetes::webhook`). The API server must reach it over HTTPS: put the
//! gateway behind a TLS Service or ingress and give that CA in the webhook configuration.

use crate::app::AppState;
use axum::Json;
use axum::extract::{Path, State};
use serde_json::Value;

pub async fn mutate(State(state): State<AppState>, Path(cluster): Path<String>, Json(review): Json<Value>) -> Json<Value> {
    Json(egs_schema::kubernetes::webhook::review(&state.services.db, &cluster, review).await)
}
