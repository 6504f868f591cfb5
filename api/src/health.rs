//! `/healthz` (the process answers), `/readyz` (it can serve: database reachable, migrations
//! applied, Redis reachable when configured) and `/metrics` (OpenMetrics text: the gateway's own
//! metrics and the GPUs' latest samples under dcgm-exporter's names; see [`crate::metrics`]).

use crate::app::AppState;
use crate::db;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

pub async fn healthz() -> &'static str {
    "ok\n"
}

pub async fn readyz(State(state): State<AppState>) -> Response {
    let database = match state.services.db.ping().await {
        Ok(()) => "ok",
        Err(e) => {
            tracing::warn!(error = %e, "readiness: database unreachable");
            "unreachable"
        }
    };
    let migrations = match db::migrations_applied(&state.services.db).await {
        Ok(true) => "ok",
        Ok(false) => "pending",
        Err(_) => "unknown",
    };
    let redis = match &state.redis {
        None => "not configured",
        Some(manager) => {
            let mut connection = manager.clone();
            match redis::cmd("PING").query_async::<String>(&mut connection).await {
                Ok(_) => "ok",
                Err(e) => {
                    tracing::warn!(error = %e, "readiness: Redis unreachable");
                    "unreachable"
                }
            }
        }
    };
    let ready = database == "ok" && migrations == "ok" && matches!(redis, "ok" | "not configured");
    let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, axum::Json(json!({ "ready": ready, "database": database, "migrations": migrations, "redis": redis }))).into_response()
}

pub async fn metrics(State(state): State<AppState>) -> Response {
    match state.metrics.render(&state.services.db).await {
        Ok(text) => {
            let mut response = text.into_response();
            response
                .headers_mut()
                .insert(header::CONTENT_TYPE, HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"));
            response
        }
        Err(e) => {
            // The cause (the database's error) goes to the log only, never to the scraper.
            let cause = std::error::Error::source(&e).map(ToString::to_string);
            tracing::error!(error = %e, cause = cause.as_deref().unwrap_or(""), "failed to render /metrics");
            StatusCode::SERVICE_UNAVAILABLE.into_response()
        }
    }
}
