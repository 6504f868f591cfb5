//! The gateway's routes: GraphQL over HTTP and WebSocket, the portal and the playground, the
//! probes and `/metrics`, the admission webhook and single sign-on.

use super::AppState;
use crate::kubernetes::admission;
use crate::settings::ServeArgs;
use crate::{graphql_http, graphql_ws, health, playground, portal};
use anyhow::Context;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::routing::get;
use tower_http::compression::CompressionLayer;
use tower_http::cors::{AllowOrigin, CorsLayer};

pub(super) fn router(state: AppState, settings: &ServeArgs) -> anyhow::Result<Router> {
    let mut router = Router::new()
        .route("/", get(|| async { portal::index() }))
        // The portal's and the playground's bundles are large text: gzip them for slow links.
        .route("/assets/{file}", get(portal::asset).layer(CompressionLayer::new()))
        .route("/graphql", get(graphql_http::graphql_get).post(graphql_http::graphql_post))
        .route("/graphql/ws", get(graphql_ws::graphql_ws))
        .route("/graphql/assets/{file}", get(playground::asset).layer(CompressionLayer::new()))
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route(
            "/metrics",
            if settings.metrics_listen.is_some() {
                // Served on its own listener: not here at all.
                get(|| async { StatusCode::NOT_FOUND })
            } else {
                get(health::metrics_for_admins)
            },
        )
        .route("/kubernetes/clusters/{cluster}/mutate/{key}", axum::routing::post(admission::mutate))
        .route("/auth/oidc", get(crate::oidc::info))
        .route("/auth/oidc/login", get(crate::oidc::login))
        .route("/auth/oidc/callback", get(crate::oidc::callback))
        .fallback(portal::fallback)
        .layer(DefaultBodyLimit::max(settings.max_body_bytes))
        .with_state(state);
    if !settings.cors_origins.is_empty() {
        let origins = settings
            .cors_origins
            .iter()
            .map(|o| HeaderValue::from_str(o).with_context(|| format!("`{o}` is not a valid CORS origin")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        router = router.layer(CorsLayer::new().allow_origin(AllowOrigin::list(origins)).allow_methods([Method::GET, Method::POST]).allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            header::ACCEPT,
        ]));
    }
    Ok(router)
}
