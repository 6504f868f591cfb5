//! `meta/v1` `Status` error bodies with the codes, reasons and messages a real API server uses.

use super::kinds::Kind;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// An API error, answered as a `Status` body.
#[derive(Debug, Clone)]
pub(crate) struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

/// `details` naming a resource as `NotFound`, `AlreadyExists`, `Conflict` and `Forbidden` do:
/// `kind` is the plural resource there, not the kind.
fn resource_details(kind: &Kind, name: &str) -> Value {
    let mut details = json!({ "kind": kind.plural });
    if !name.is_empty() {
        details["name"] = json!(name);
    }
    if !kind.group.is_empty() {
        details["group"] = json!(kind.group);
    }
    details
}

impl ApiError {
    pub(crate) fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self { code, reason, message: message.into(), details: None }
    }

    pub(crate) fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    pub(crate) fn not_found(kind: &Kind, name: &str) -> Self {
        Self::new(404, "NotFound", format!("{} \"{name}\" not found", kind.qualified())).with_details(resource_details(kind, name))
    }

    /// The answer for paths that name no served resource.
    pub(crate) fn no_such_resource() -> Self {
        Self::new(404, "NotFound", "the server could not find the requested resource").with_details(json!({}))
    }

    pub(crate) fn already_exists(kind: &Kind, name: &str) -> Self {
        Self::new(409, "AlreadyExists", format!("{} \"{name}\" already exists", kind.qualified())).with_details(resource_details(kind, name))
    }

    pub(crate) fn conflict(kind: &Kind, name: &str, why: &str) -> Self {
        Self::new(409, "Conflict", format!("Operation cannot be fulfilled on {} \"{name}\": {why}", kind.qualified()))
            .with_details(resource_details(kind, name))
    }

    /// The optimistic-concurrency failure: the caller's `resourceVersion` is stale.
    pub(crate) fn modified(kind: &Kind, name: &str) -> Self {
        Self::conflict(kind, name, "the object has been modified; please apply your changes to the latest version and try again")
    }

    /// 422 for one bad field; `cause_reason` is `FieldValueInvalid`, `FieldValueRequired`...
    /// and `cause` the text after the field, e.g. `Required value: name or generateName is required`.
    pub(crate) fn invalid(kind: &Kind, name: &str, field: &str, cause_reason: &str, cause: &str) -> Self {
        let mut details = json!({ "kind": kind.kind, "causes": [{ "reason": cause_reason, "message": cause, "field": field }] });
        if !name.is_empty() {
            details["name"] = json!(name);
        }
        if !kind.group.is_empty() {
            details["group"] = json!(kind.group);
        }
        Self::new(422, "Invalid", format!("{} \"{name}\" is invalid: {field}: {cause}", kind.qualified_kind())).with_details(details)
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 403 as the RBAC authorizer words it; `why` is `User "..." cannot ...`.
    pub(crate) fn forbidden(kind: &Kind, name: &str, why: &str) -> Self {
        let message = if name.is_empty() {
            format!("{} is forbidden: {why}", kind.qualified())
        } else {
            format!("{} \"{name}\" is forbidden: {why}", kind.qualified())
        };
        Self::new(403, "Forbidden", message).with_details(resource_details(kind, name))
    }

    pub(crate) fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    pub(crate) fn method_not_allowed() -> Self {
        Self::new(405, "MethodNotAllowed", "the server does not allow this method on the requested resource").with_details(json!({}))
    }

    pub(crate) fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(500, "InternalError", format!("Internal error occurred: {message}"))
            .with_details(json!({ "causes": [{ "message": message.to_string() }] }))
    }

    pub(crate) fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    pub(crate) fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message)
    }

    pub(crate) fn too_many_requests(message: impl Into<String>, causes: Value) -> Self {
        Self::new(429, "TooManyRequests", message).with_details(json!({ "causes": causes }))
    }

    /// An injected fault: the reason and message a real server gives for `code`.
    pub(crate) fn injected(code: u16, kind: Option<&Kind>, name: &str) -> Self {
        match (code, kind) {
            (404, Some(kind)) => Self::not_found(kind, name),
            (409, Some(kind)) => Self::modified(kind, name),
            (401, _) => Self::unauthorized(),
            (429, _) => Self::new(429, "TooManyRequests", "Too many requests, please try again later."),
            (503, _) => Self::new(503, "ServiceUnavailable", "the server is currently unable to handle the request"),
            (504, _) => {
                Self::new(504, "Timeout", "the server was unable to return a response in the time allotted, but may still be processing the request")
            }
            (500, _) => Self::internal("injected fault"),
            (code, _) => {
                let reason = match code {
                    400 => "BadRequest",
                    403 => "Forbidden",
                    404 => "NotFound",
                    409 => "Conflict",
                    410 => "Expired",
                    422 => "Invalid",
                    _ => "InternalError",
                };
                Self::new(code, reason, format!("injected fault ({code})"))
            }
        }
    }

    /// The `Status` object.
    pub(crate) fn status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        json_response(code, &self.status())
    }
}

/// A JSON answer; the API server always says `application/json` for JSON.
pub(crate) fn json_response(code: StatusCode, body: &Value) -> Response {
    let mut response = (code, body.to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}
