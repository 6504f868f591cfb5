//! GraphQL errors that carry a code of the error table (`egs_domain::error`): the refusals made
//! outside a resolver (limits, WebSocket operations, request errors) and the codes given to
//! async-graphql's own parse and validation errors.

use egs_domain::error::ErrorCode;

/// A GraphQL error carrying `code`: the one shape of every refusal made outside a resolver
/// (limits, WebSocket operations, request errors).
pub fn coded_error(message: impl Into<String>, code: ErrorCode) -> async_graphql::ServerError {
    let mut error = async_graphql::ServerError::new(message, None);
    error.extensions.get_or_insert_with(Default::default).set("code", code.as_str());
    error
}

/// The `extensions.code` of an error, when it has one.
pub fn code_of(error: &async_graphql::ServerError) -> Option<&str> {
    match error.extensions.as_ref()?.get("code")? {
        async_graphql::Value::String(code) => Some(code),
        _ => None,
    }
}

/// Gives `code` to an error that has none (parse and validation errors carry none of their own).
pub fn set_default_code(error: &mut async_graphql::ServerError, code: ErrorCode) {
    if code_of(error).is_none() {
        error.extensions.get_or_insert_with(Default::default).set("code", code.as_str());
    }
}

/// Whether a response failed before execution (parse, validation, limits): no data, and only
/// errors without a path.
pub fn is_request_error(response: &async_graphql::Response) -> bool {
    response.data == async_graphql::Value::Null && !response.errors.is_empty() && response.errors.iter().all(|e| e.path.is_empty())
}

/// Gives a request error's errors `INVALID_INPUT` where they carry no code: parse and validation
/// errors have none of their own; refusals (`RATE_LIMITED`, `TOO_COMPLEX`) keep theirs.
pub fn code_request_errors(errors: &mut [async_graphql::ServerError]) {
    for error in errors {
        set_default_code(error, ErrorCode::InvalidInput);
    }
}

/// `[{"message": …, "extensions": {"code": …}}]`: a GraphQL error list as JSON, for answers
/// that are not an executed response (an HTTP refusal, a WebSocket `error` message).
pub fn errors_json(message: &str, code: ErrorCode) -> serde_json::Value {
    serde_json::to_value([coded_error(message, code)]).unwrap_or_default()
}
