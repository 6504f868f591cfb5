//! Errors of the control plane, and the one table that maps them to what clients see.
//!
//! App return [`Error`]. Problems the caller can fix (bad input, a stale version) become
//! `userErrors` in mutation payloads; everything else becomes a GraphQL error whose
//! `extensions.code` is one of [`ErrorCode`]. Internal errors are logged once, here, with their
//! cause chain, and reach the client only as `INTERNAL` with no database text.
//!
//! | code              | when                                                            | HTTP status                                   |
//! |-------------------|-----------------------------------------------------------------|-----------------------------------------------|
//! | `UNAUTHENTICATED` | a presented token is malformed, forged, expired or revoked      | 401 (no token at all: a field error, 200)     |
//! | `FORBIDDEN`       | the caller is known but its role does not allow this            | 200 (a field error)                           |
//! | `NOT_FOUND`       | no such object, or one the caller may not see                   | 200 (a field error)                           |
//! | `INVALID_INPUT`   | a value the caller can correct (also in `userErrors`)           | 200; 400 when the document fails validation   |
//! | `CONFLICT`        | a stale `version`, a duplicate name, a wrong phase              | 200 (in `userErrors`)                         |
//! | `RATE_LIMITED`    | the user's query cost budget is spent (`retryAfterMs` says when) | 429 with `Retry-After`                     |
//! | `LIMIT_EXCEEDED`  | the user holds as many connections, subscriptions or tokens as allowed; free one | 200 (in `userErrors` or the operation's error) |
//! | `SERVICE_UNAVAILABLE` | the database cannot be reached; retry shortly               | 503 with `Retry-After`                        |
//! | `INTERNAL`        | our fault; logged with its cause, never detailed to the caller  | 200 (a field error)                           |

use crate::log_throttle::Throttle;
#[cfg(feature = "graphql")]
use async_graphql::ErrorExtensions;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The stable codes in `extensions.code` and `userErrors.code`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "graphql", derive(async_graphql::Enum))]
pub enum ErrorCode {
    /// No valid token was presented.
    Unauthenticated,
    /// The token is valid but may not do this.
    Forbidden,
    /// No such object, or one the caller may not see.
    NotFound,
    /// A value the caller can correct.
    InvalidInput,
    /// The object changed, already exists, or is in the wrong phase.
    Conflict,
    /// Too many requests; retry later.
    RateLimited,
    /// The user already holds as many of something (WebSocket connections, live
    /// subscriptions, tokens) as allowed; close or revoke one first.
    LimitExceeded,
    /// The operation could build more than a request may (lists multiplied out); ask for less.
    TooComplex,
    /// A backing service (the database) cannot be reached; retry shortly.
    ServiceUnavailable,
    /// Our fault; logged on the server.
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unauthenticated => "UNAUTHENTICATED",
            Self::Forbidden => "FORBIDDEN",
            Self::NotFound => "NOT_FOUND",
            Self::InvalidInput => "INVALID_INPUT",
            Self::Conflict => "CONFLICT",
            Self::RateLimited => "RATE_LIMITED",
            Self::LimitExceeded => "LIMIT_EXCEEDED",
            Self::TooComplex => "TOO_COMPLEX",
            Self::ServiceUnavailable => "SERVICE_UNAVAILABLE",
            Self::Internal => "INTERNAL",
        }
    }
}

/// A problem with one input field, as reported in `userErrors`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "graphql", derive(async_graphql::SimpleObject))]
pub struct UserError {
    /// Path to the input field, e.g. `["input", "priority"]`; empty when not about one field.
    pub field: Vec<String>,
    /// What is wrong and how to fix it.
    pub message: String,
    pub code: ErrorCode,
}

impl UserError {
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Self { field: field_path(field), message: message.into(), code: ErrorCode::InvalidInput }
    }

    pub fn conflict(field: &str, message: impl Into<String>) -> Self {
        Self { field: field_path(field), message: message.into(), code: ErrorCode::Conflict }
    }
}

fn field_path(field: &str) -> Vec<String> {
    if field.is_empty() { Vec::new() } else { std::iter::once("input").chain(field.split('.')).map(str::to_owned).collect() }
}

/// Errors of the schema layer. Deliberately not `Display`: the only way out to a client is the
/// mapping below, so an internal cause can never be formatted into a response by accident.
#[derive(Debug)]
pub enum Error {
    Unauthenticated(String),
    Forbidden(String),
    /// Deliberately says nothing about why, so a hidden object and a missing one read the same.
    NotFound(&'static str),
    /// One or more problems the caller can fix.
    User(Vec<UserError>),
    RateLimited,
    Database(sea_orm::DbErr),
    Internal(anyhow::Error),
}

impl From<sea_orm::DbErr> for Error {
    fn from(error: sea_orm::DbErr) -> Self {
        Self::Database(error)
    }
}

impl From<anyhow::Error> for Error {
    fn from(error: anyhow::Error) -> Self {
        Self::Internal(error)
    }
}

impl Error {
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        Self::User(vec![UserError::invalid(field, message)])
    }

    pub fn conflict(field: &str, message: impl Into<String>) -> Self {
        Self::User(vec![UserError::conflict(field, message)])
    }

    /// The message a client may see.
    pub fn public_message(&self) -> String {
        match self {
            Self::Unauthenticated(why) | Self::Forbidden(why) => why.clone(),
            Self::NotFound(what) => format!("{what} not found"),
            Self::User(errors) => errors.first().map_or_else(|| "invalid input".to_owned(), |e| e.message.clone()),
            Self::RateLimited => "too many requests; slow down and retry".to_owned(),
            _ if self.unavailable() => "the database cannot be reached right now; retry shortly".to_owned(),
            Self::Database(_) | Self::Internal(_) => "internal error; it has been logged".to_owned(),
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Unauthenticated(_) => ErrorCode::Unauthenticated,
            Self::Forbidden(_) => ErrorCode::Forbidden,
            Self::NotFound(_) => ErrorCode::NotFound,
            Self::User(errors) => errors.first().map_or(ErrorCode::InvalidInput, |e| e.code),
            Self::RateLimited => ErrorCode::RateLimited,
            _ if self.unavailable() => ErrorCode::ServiceUnavailable,
            Self::Database(_) | Self::Internal(_) => ErrorCode::Internal,
        }
    }

    /// Whether the database could not be reached (down, restarting, the pool exhausted), as
    /// opposed to a query that failed: the caller may retry the same request shortly.
    fn unavailable(&self) -> bool {
        match self {
            Self::Database(error) => connection_lost(error),
            Self::Internal(error) => error.chain().any(|cause| cause.downcast_ref::<sea_orm::DbErr>().is_some_and(connection_lost)),
            _ => false,
        }
    }
}

/// A database error that says the connection, not the statement, failed.
pub fn connection_lost(error: &sea_orm::DbErr) -> bool {
    use sea_orm::sqlx::Error as Sqlx;
    use sea_orm::{DbErr, RuntimeErr};
    let sqlx = match error {
        DbErr::ConnectionAcquire(_) => return true,
        DbErr::Conn(RuntimeErr::SqlxError(e)) | DbErr::Exec(RuntimeErr::SqlxError(e)) | DbErr::Query(RuntimeErr::SqlxError(e)) => e,
        DbErr::Conn(_) => return true,
        _ => return false,
    };
    match sqlx.as_ref() {
        // A protocol error is a stream cut mid-message (the link went away), not a bad statement.
        Sqlx::Io(_) | Sqlx::Tls(_) | Sqlx::Protocol(_) | Sqlx::PoolTimedOut | Sqlx::PoolClosed | Sqlx::WorkerCrashed => true,
        // 57P01–57P03: the server is shutting down or starting; 08xxx: connection exceptions.
        Sqlx::Database(db) => db.code().is_some_and(|code| code.starts_with("57P") || code.starts_with("08")),
        _ => false,
    }
}

impl Error {
    /// Logs what the caller is not told: internal causes with their chain, once; an unreachable
    /// database at most every few seconds.
    fn log_on_the_way_out(&self) {
        match self {
            _ if self.code() == ErrorCode::ServiceUnavailable => {
                static UNREACHABLE: Throttle = Throttle::new(crate::log_throttle::EVERY);
                if let Some(left_out) = UNREACHABLE.admit() {
                    tracing::warn!(error.cause_chain = ?self, left_out, "the database is unreachable");
                }
            }
            Error::Database(cause) => tracing::error!(error.cause_chain = ?cause, "database error while serving a request"),
            Error::Internal(cause) => tracing::error!(error.cause_chain = ?cause, "internal error while serving a request"),
            _ => {}
        }
    }
}

/// An error as clients see it, for an answer many share (a queue view's failed read): the
/// cause is logged once when it is made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicError {
    pub code: ErrorCode,
    pub message: String,
}

impl From<Error> for PublicError {
    fn from(error: Error) -> Self {
        error.log_on_the_way_out();
        Self { code: error.code(), message: error.public_message() }
    }
}

#[cfg(feature = "graphql")]
impl From<PublicError> for async_graphql::Error {
    fn from(error: PublicError) -> Self {
        async_graphql::Error::new(error.message).extend_with(|_, ext| ext.set("code", error.code.as_str()))
    }
}

#[cfg(feature = "graphql")]
impl From<Error> for async_graphql::Error {
    fn from(error: Error) -> Self {
        error.log_on_the_way_out();
        let code = error.code();
        let message = error.public_message();
        async_graphql::Error::new(message).extend_with(|_, ext| {
            ext.set("code", code.as_str());
            if let Error::User(errors) = &error
                && let Some(first) = errors.first()
                && !first.field.is_empty()
            {
                ext.set("field", first.field.join("."));
            }
        })
    }
}
