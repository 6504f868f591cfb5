//! The web portal, built from `web/portal` into `web/dist/portal` and embedded in the binary:
//! `/` and every client-side route answer the app's `index.html`, `/assets/*` its hashed
//! scripts and styles. Nothing is fetched from the internet.

use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rust_embed::Embed;

#[derive(Embed)]
#[folder = "../web/dist/portal"]
struct Portal;

/// The page may only load what the gateway serves and talk to the gateway (HTTP and WebSocket).
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; img-src 'self' data:; font-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self' ws: wss:; frame-ancestors 'none'";

/// `GET /` and the portal's own routes (`/queue/3`, `/admin/tokens`, …).
pub fn index() -> Response {
    let Some(file) = Portal::get("index.html") else {
        return (StatusCode::SERVICE_UNAVAILABLE, "the portal was not built into this binary (see web/README.md)").into_response();
    };
    let mut response = file.data.into_owned().into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    // The page names the current hashed assets, so it is always revalidated.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    response
}

/// `GET /assets/{file}`: content-hashed names, so cached for good.
pub async fn asset(Path(file): Path<String>) -> Response {
    let Some(found) = Portal::get(&format!("assets/{file}")) else {
        return (StatusCode::NOT_FOUND, "no such asset").into_response();
    };
    let mut response = found.data.into_owned().into_response();
    let headers = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(found.metadata.mimetype()) {
        headers.insert(header::CONTENT_TYPE, value);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// Any other GET: a browser navigating to a portal route gets the app (which routes on the
/// client); anything else a plain 404, so API clients and crawlers are not handed HTML.
pub async fn fallback(method: Method, headers: HeaderMap) -> Response {
    let wants_html = (method == Method::GET || method == Method::HEAD)
        && headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|accept| accept.contains("text/html"));
    if wants_html { index() } else { (StatusCode::NOT_FOUND, "not found").into_response() }
}
