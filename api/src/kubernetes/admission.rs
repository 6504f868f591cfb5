//! `POST /kubernetes/clusters/{cluster}/mutate/{key}`: the mutating admission webhook
//! Kubernetes clusters with `podPlacement: WEBHOOK` call for pods created in slice namespaces
//! (see [`super::webhook`]). The key (`Cluster.webhookPath`, for admins) is
//! derived from the signing key and the cluster's name: without it the route answers 404, so
//! nobody but the API server learns which slice owns a namespace. The API server must reach it
//! over HTTPS: put the gateway behind a TLS Service or ingress and give that CA in the webhook
//! configuration.

use crate::app::AppState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

pub async fn mutate(State(state): State<AppState>, Path((cluster, key)): Path<(String, String)>, Json(review): Json<Value>) -> Response {
    let expected = egs_domain::auth::webhook_key(&state.app.keys, &cluster);
    if !egs_domain::auth::same_secret(&key, &expected) {
        return StatusCode::NOT_FOUND.into_response();
    }
    Json(super::webhook::review(&state.app.db, &cluster, review).await).into_response()
}
