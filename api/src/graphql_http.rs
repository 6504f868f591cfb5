//! GraphQL over HTTP, as the spec says (the stock async-graphql-axum responder always answers
//! 200 and does not negotiate media types):
//! - `POST` with `application/json`; `GET` with `query`/`variables`/`operationName` parameters,
//!   for queries only (a mutation over GET is `405`);
//! - the response is `application/graphql-response+json` when the client accepts it, and then a
//!   request that fails before execution (unparseable JSON, a document that does not parse or
//!   validate, limits exceeded) is `400`; with plain `application/json` it is `200`, as legacy
//!   clients expect; a client accepting neither gets `406`;
//! - a presented token that is bad is `401` with `WWW-Authenticate`; no token at all is allowed
//!   (introspection works) and protected fields answer `UNAUTHENTICATED`.

use crate::app::AppState;
use async_graphql::parser::types::OperationType;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use egs_domain::auth::{Caller, authenticate};
use egs_domain::error::ErrorCode;
use egs_schema::error::{code_of, code_request_errors, errors_json, is_request_error};
use egs_schema::operation::{OperationSlot, select_operation};
use serde_json::json;
use std::time::Instant;

pub const GRAPHQL_RESPONSE_JSON: &str = "application/graphql-response+json";
/// Longest query text accepted; longer documents are refused before parsing.
pub const MAX_QUERY_BYTES: usize = 64 * 1024;

/// The response media type the client gets.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Media {
    GraphqlResponseJson,
    Json,
}

impl Media {
    fn content_type(self) -> &'static str {
        match self {
            Self::GraphqlResponseJson => "application/graphql-response+json; charset=utf-8",
            Self::Json => "application/json; charset=utf-8",
        }
    }
}

/// Picks the response media type from `Accept` (first acceptable in the client's order of
/// quality); `None` means nothing we can produce is acceptable.
pub fn negotiate(headers: &HeaderMap) -> Option<Media> {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return Some(Media::Json);
    };
    let mut best: Option<(f32, Media)> = None;
    for item in accept.split(',') {
        let mut parts = item.split(';').map(str::trim);
        let range = parts.next().unwrap_or_default().to_ascii_lowercase();
        let quality = parts.find_map(|p| p.strip_prefix("q=").and_then(|q| q.parse::<f32>().ok())).unwrap_or(1.0);
        let media = match range.as_str() {
            GRAPHQL_RESPONSE_JSON => Media::GraphqlResponseJson,
            "application/json" | "application/*" | "*/*" => Media::Json,
            _ => continue,
        };
        if quality > 0.0 && best.is_none_or(|(q, _)| quality > q) {
            best = Some((quality, media));
        }
    }
    best.map(|(_, media)| media)
}

/// A request-level error in GraphQL response shape.
pub(crate) fn request_error(status: StatusCode, media: Media, code: ErrorCode, message: &str) -> Response {
    let body = json!({ "errors": errors_json(message, code) });
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(media.content_type()));
    response
}

/// 503 with `Retry-After` for a request the database did not answer.
fn database_silent(media: Media) -> Response {
    let mut response = request_error(
        StatusCode::SERVICE_UNAVAILABLE,
        media,
        ErrorCode::ServiceUnavailable,
        "the database is not answering right now; retry shortly",
    );
    response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

fn not_acceptable() -> Response {
    request_error(
        StatusCode::NOT_ACCEPTABLE,
        Media::Json,
        ErrorCode::InvalidInput,
        "accept `application/graphql-response+json` or `application/json`",
    )
}

/// The token of an `Authorization: Bearer <token>` header, if it has a usable one.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer ")).map(str::trim).filter(|t| !t.is_empty())
}

/// Authenticates the bearer token, if one is presented.
async fn caller_from(state: &AppState, headers: &HeaderMap, media: Media) -> Result<Option<Caller>, Response> {
    if headers.get(header::AUTHORIZATION).is_none() {
        return Ok(None);
    }
    let token = bearer_token(headers);
    let result = match token {
        Some(token) => authenticate(&state.app.db, &state.app.keys, &state.app.token_cache, token).await,
        None => Err(egs_domain::error::Error::Unauthenticated("send the token as `Authorization: Bearer <token>`".into())),
    };
    result.map(Some).map_err(|error| {
        let code = error.code();
        let mut response = request_error(
            if code == ErrorCode::Unauthenticated { StatusCode::UNAUTHORIZED } else { StatusCode::SERVICE_UNAVAILABLE },
            media,
            code,
            &error.public_message(),
        );
        if code == ErrorCode::Unauthenticated {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer error=\"invalid_token\""));
        } else {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            tracing::error!(error = ?error, "failed to authenticate a request");
        }
        response
    })
}

pub async fn graphql_post(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    let Some(media) = negotiate(&headers) else { return not_acceptable() };
    // A body over the limit (or one that cannot be read) is a request error in JSON like any other.
    let body = match body {
        Ok(body) => body,
        Err(rejection) => {
            let status = rejection.status();
            let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
                "the request body is larger than this server accepts (EGS_MAX_BODY_BYTES)".to_owned()
            } else {
                format!("the request body cannot be read: {}", rejection.body_text())
            };
            return request_error(status, media, ErrorCode::InvalidInput, &message);
        }
    };
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let essence = content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    if essence != "application/json" {
        return request_error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            media,
            ErrorCode::InvalidInput,
            "send the request as `Content-Type: application/json`",
        );
    }
    if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        return request_error(
            StatusCode::BAD_REQUEST,
            media,
            ErrorCode::InvalidInput,
            "batched requests are not supported; send one operation per request",
        );
    }
    let request: async_graphql::Request = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(e) if e.is_syntax() || e.is_eof() => {
            return request_error(StatusCode::BAD_REQUEST, media, ErrorCode::InvalidInput, &format!("the request body is not valid JSON: {e}"));
        }
        Err(e) => {
            return request_error(StatusCode::BAD_REQUEST, media, ErrorCode::InvalidInput, &format!("the request is not a GraphQL request: {e}"));
        }
    };
    execute(state, headers, media, request, false).await
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct GetParams {
    query: Option<String>,
    variables: Option<String>,
    operation_name: Option<String>,
    extensions: Option<String>,
}

pub async fn graphql_get(State(state): State<AppState>, headers: HeaderMap, RawQuery(raw): RawQuery) -> Response {
    let raw = raw.unwrap_or_default();
    let wants_html = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|accept| accept.contains("text/html"));
    if wants_html && !raw.contains("query=") {
        return crate::playground::page();
    }
    let Some(media) = negotiate(&headers) else { return not_acceptable() };
    let params: GetParams = match serde_urlencoded::from_str(&raw) {
        Ok(params) => params,
        Err(e) => return request_error(StatusCode::BAD_REQUEST, media, ErrorCode::InvalidInput, &format!("bad query parameters: {e}")),
    };
    let Some(query) = params.query else {
        return request_error(StatusCode::BAD_REQUEST, media, ErrorCode::InvalidInput, "give the document in the `query` parameter");
    };
    let mut request = async_graphql::Request::new(query);
    if let Some(name) = params.operation_name {
        request = request.operation_name(name);
    }
    for (name, text, target) in [("variables", params.variables, 0), ("extensions", params.extensions, 1)] {
        let Some(text) = text else { continue };
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(serde_json::Value::Object(map)) if target == 0 => {
                request = request.variables(async_graphql::Variables::from_json(serde_json::Value::Object(map)))
            }
            Ok(serde_json::Value::Object(map)) => {
                for (key, value) in map {
                    if let Ok(value) = async_graphql::Value::from_json(value) {
                        request.extensions.insert(key, value);
                    }
                }
            }
            _ => return request_error(StatusCode::BAD_REQUEST, media, ErrorCode::InvalidInput, &format!("`{name}` must be a JSON object")),
        }
    }
    execute(state, headers, media, request, true).await
}

async fn execute(state: AppState, headers: HeaderMap, media: Media, request: async_graphql::Request, via_get: bool) -> Response {
    let started = Instant::now();
    if request.query.len() > MAX_QUERY_BYTES {
        return request_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            media,
            ErrorCode::InvalidInput,
            &format!("the query is longer than {MAX_QUERY_BYTES} bytes"),
        );
    }
    // GET must refuse mutations before running anything, so it parses up front (the parse is
    // kept for execution); POST learns the operation from the gate's parse.
    let mut request = request;
    let requested = request.operation_name.clone();
    if via_get
        && let Ok(document) = request.parsed_query()
        && select_operation(document, requested.as_deref()).is_some_and(|(ty, _)| ty != OperationType::Query)
    {
        let mut response =
            request_error(StatusCode::METHOD_NOT_ALLOWED, media, ErrorCode::InvalidInput, "only queries may be sent with GET; use POST");
        response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return response;
    }
    let operation = OperationSlot::new();
    let run = async {
        let caller = caller_from(&state, &headers, media).await?;
        let authenticated = caller.is_some();
        Ok((egs_schema::execute(&state.schema, &state.app, request, caller, operation.clone()).await, authenticated))
    };
    // A database that stopped answering fails the request now rather than when TCP gives up.
    let ran: Result<_, Response> = match &state.db_watch {
        Some(watch) => tokio::select! {
            ran = run => ran,
            () = watch.silent() => Err(database_silent(media)),
        },
        None => run.await,
    };
    let (mut response, authenticated) = match ran {
        Ok(ran) => ran,
        Err(response) => return response,
    };

    let failed_before_execution = is_request_error(&response);
    // Refusals that say "later" get their own status whatever the media type, so proxies and
    // HTTP clients back off without reading the body.
    let codes: Vec<Option<&str>> = response.errors.iter().map(code_of).collect();
    let retry_after = |code: &str| codes.contains(&Some(code));
    let (status, retry_secs) = if retry_after(ErrorCode::RateLimited.as_str()) {
        let wait_ms = response.errors.iter().filter_map(|e| e.extensions.as_ref()?.get("retryAfterMs")?.clone().into_json().ok()?.as_u64()).max();
        (StatusCode::TOO_MANY_REQUESTS, wait_ms.map(|ms| ms.div_ceil(1000).max(1)))
    } else if retry_after(ErrorCode::ServiceUnavailable.as_str()) {
        (StatusCode::SERVICE_UNAVAILABLE, Some(1))
    } else if media == Media::GraphqlResponseJson && failed_before_execution {
        (StatusCode::BAD_REQUEST, None)
    } else {
        (StatusCode::OK, None)
    };
    let outcome = if failed_before_execution {
        "rejected"
    } else if response.errors.is_empty() {
        "ok"
    } else {
        "error"
    };
    let (op_type, name) = operation.get().map_or((None, None), |(ty, name)| (Some(ty), name));
    // Only callers with a token name label series: anyone else could fill the slots.
    let name = if authenticated { name } else { Some(crate::metrics::UNAUTHENTICATED.to_owned()) };
    state.metrics.observe_request(name.as_deref(), op_type, outcome, started.elapsed());

    let body = if failed_before_execution {
        // A request error: no `data` entry at all, and every error carries a stable code.
        code_request_errors(&mut response.errors);
        json!({ "errors": response.errors }).to_string()
    } else {
        let mut body = Capped(Vec::new());
        match serde_json::to_writer(&mut body, &response) {
            Ok(()) => String::from_utf8(body.0).unwrap_or_default(),
            Err(e) if e.is_io() => {
                let message =
                    format!("the response is larger than {} MiB; ask for fewer items (`first`) or fewer fields", MAX_RESPONSE_BYTES / (1024 * 1024));
                return request_error(StatusCode::BAD_REQUEST, media, ErrorCode::TooComplex, &message);
            }
            Err(e) => {
                tracing::error!(error = %e, "failed to serialize a GraphQL response");
                return request_error(StatusCode::INTERNAL_SERVER_ERROR, media, ErrorCode::Internal, "internal error; it has been logged");
            }
        }
    };
    let mut http = (status, body).into_response();
    http.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(media.content_type()));
    if let Some(secs) = retry_secs {
        http.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    http
}

/// The backstop behind the output-cost limit (lists longer than their assumed bound): no
/// response body grows past this; the client gets `TOO_COMPLEX` instead.
pub const MAX_RESPONSE_BYTES: usize = 32 * 1024 * 1024;

/// A body that refuses to grow past [`MAX_RESPONSE_BYTES`].
struct Capped(Vec<u8>);

impl std::io::Write for Capped {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.0.len() + bytes.len() > MAX_RESPONSE_BYTES {
            return Err(std::io::Error::other("response too large"));
        }
        self.0.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_response_body_never_grows_past_the_backstop() {
        let big = serde_json::json!({ "data": { "x": "y".repeat(MAX_RESPONSE_BYTES) } });
        let mut body = Capped(Vec::new());
        let error = serde_json::to_writer(&mut body, &big).expect_err("refused");
        assert!(error.is_io());
        assert!(body.0.len() <= MAX_RESPONSE_BYTES);
        let mut small = Capped(Vec::new());
        serde_json::to_writer(&mut small, &serde_json::json!({ "data": { "x": 1 } })).expect("fits");
    }

    fn accept(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_str(value).expect("header"));
        headers
    }

    #[test]
    fn negotiation_prefers_the_clients_best_acceptable_type() {
        assert_eq!(negotiate(&HeaderMap::new()), Some(Media::Json));
        assert_eq!(negotiate(&accept("application/graphql-response+json, application/json;q=0.9")), Some(Media::GraphqlResponseJson));
        assert_eq!(negotiate(&accept("application/json, application/graphql-response+json;q=0.5")), Some(Media::Json));
        assert_eq!(negotiate(&accept("*/*")), Some(Media::Json));
        assert_eq!(negotiate(&accept("text/plain")), None);
        assert_eq!(negotiate(&accept("application/json;q=0")), None);
    }
}
