//! `/healthz` (the process answers), `/readyz` (it can serve: database reachable, migrations
//! applied; with Redis unreachable it is still ready, and says what is degraded) and `/metrics` (OpenMetrics text: the gateway's own
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

/// How long `/readyz` waits on the database.
const READYZ_DEADLINE: std::time::Duration = std::time::Duration::from_millis(1500);

pub async fn readyz(State(state): State<AppState>) -> Response {
    // Bounded: a database that never answers must not hold the probe of the orchestrator.
    let silent = state.db_watch.as_ref().is_some_and(|watch| !watch.answering());
    let ping = async { if silent { Err(None) } else { state.app.db.ping().await.map_err(Some) } };
    let database = match tokio::time::timeout(READYZ_DEADLINE, ping).await {
        Ok(Ok(())) => "ok",
        Ok(Err(e)) => {
            if let Some(e) = e {
                tracing::warn!(error = %e, "readiness: database unreachable");
            }
            "unreachable"
        }
        Err(_) => "unreachable",
    };
    let migrations = match tokio::time::timeout(READYZ_DEADLINE, db::migrations_applied(&state.app.db)).await {
        _ if database != "ok" => "unknown",
        Ok(Ok(true)) => "ok",
        Ok(Ok(false)) => "pending",
        _ => "unknown",
    };
    // Without Redis every replica still serves (see `replicas::RedisHealth`): degraded, not
    // unready, or a Redis outage would take every replica out of the Service at once.
    let redis = match state.redis.as_ref().map(|health| health.reachable()) {
        None => "not configured",
        Some(Some(true)) => "ok",
        Some(Some(false)) => "unreachable",
        Some(None) => "unknown",
    };
    let ready = database == "ok" && migrations == "ok";
    let mut degraded = Vec::new();
    if redis == "unreachable" {
        degraded.push(crate::replicas::REDIS_DEGRADED);
    }
    let status = match (ready, degraded.is_empty()) {
        (false, _) => "unavailable",
        (true, true) => "ok",
        (true, false) => "degraded",
    };
    let code = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    let body = json!({ "ready": ready, "status": status, "database": database, "migrations": migrations, "redis": redis, "degraded": degraded });
    (code, axum::Json(body)).into_response()
}

/// `/metrics` on the main listener: every slice's GPR names and GPU samples are in it, so only
/// an admin token may scrape it there (or run a separate `--metrics-listen`).
pub async fn metrics_for_admins(State(state): State<AppState>, headers: axum::http::HeaderMap) -> Response {
    let token = crate::graphql_http::bearer_token(&headers);
    let services = &state.app;
    let caller = match token {
        Some(token) => egs_domain::auth::authenticate(&services.db, &services.keys, &services.token_cache, token).await.ok(),
        None => None,
    };
    match caller {
        Some(caller) if caller.is_admin() => metrics(State(state)).await,
        Some(_) => (StatusCode::FORBIDDEN, "/metrics needs an admin token\n").into_response(),
        None => {
            let mut response =
                (StatusCode::UNAUTHORIZED, "/metrics needs an admin token (Authorization: Bearer <token>), or scrape --metrics-listen\n")
                    .into_response();
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            response
        }
    }
}

pub async fn metrics(State(state): State<AppState>) -> Response {
    match state.metrics.render(&state.app.db, state.app.samples.gpu_count()).await {
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
