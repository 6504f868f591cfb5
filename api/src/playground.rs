//! The GraphiQL playground, built from npm packages in `web/graphiql` and embedded in the
//! binary, so it works with no internet access (no CDN, no web fonts).

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

const INDEX_HTML: &str = include_str!("../../web/dist/graphiql/index.html");
const GRAPHIQL_JS: &[u8] = include_bytes!("../../web/dist/graphiql/graphiql.js");
const GRAPHIQL_CSS: &[u8] = include_bytes!("../../web/dist/graphiql/graphiql.css");

pub fn page() -> Response {
    let mut response = INDEX_HTML.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    // The page may only load what the gateway serves.
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; font-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self' ws: wss:; frame-ancestors 'none'",
        ),
    );
    response
}

pub async fn asset(Path(file): Path<String>) -> Response {
    let (body, content_type) = match file.as_str() {
        "graphiql.js" => (GRAPHIQL_JS, "text/javascript; charset=utf-8"),
        "graphiql.css" => (GRAPHIQL_CSS, "text/css; charset=utf-8"),
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=3600"));
    response
}
