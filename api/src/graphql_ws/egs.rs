//! The transport wired to EGS: tokens in `connection_init`, checked again every few seconds and
//! for each operation, per-user limits, and operations that end when their user loses access.

use super::TRANSPORT_WS;
use super::transport::{GraphqlWs, InitError, refuse};
use crate::app::AppState;
use crate::per_user::{Hold, PerUser};
use async_graphql::{Data, Request, Response};
use axum::extract::State;
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::response::Response as HttpResponse;
use egs_domain::App;
use egs_domain::auth::Principal;
use egs_domain::auth::{Caller, authenticate};
use egs_domain::error::ErrorCode;
use egs_schema::EgsSchema;
use egs_schema::error::{code_request_errors, coded_error, is_request_error};
use futures_util::future::BoxFuture;
use futures_util::stream::BoxStream;
use futures_util::{FutureExt, StreamExt};
use serde_json::Value;
use std::any::TypeId;
use std::future::pending;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The connection's token, checked again for each operation, so a token revoked or expired
/// while a socket is open stops working there as soon as on HTTP.
struct ConnectionToken(String);

/// The highest `access_version` of the connection's user seen by the token checks: an
/// operation started under a lower one ends (see [`end_when_access_shrinks`]).
struct AccessSeen(watch::Sender<i64>);

/// The connection's place among what its user may hold open; given back when it closes.
struct ConnectionHold(#[allow(dead_code)] Hold);

/// `GET /graphql/ws`: GraphQL over WebSocket for the EGS schema. Tokens come in
/// `connection_init`, never from cookies, so a cross-site page cannot ride a user's session.
pub async fn graphql_ws(State(state): State<AppState>, upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>) -> HttpResponse {
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => {
            let message = format!(
                "{}: this endpoint speaks GraphQL over WebSocket (`{TRANSPORT_WS}`); send plain HTTP requests to /graphql",
                rejection.body_text()
            );
            return refuse(rejection.status(), &message);
        }
    };
    let (init_services, init_per_user) = (state.app.clone(), state.per_user.clone());
    let recheck_services = state.app.clone();
    let (services, per_user) = (state.app.clone(), state.per_user.clone());
    GraphqlWs::new(state.schema.clone(), state.sockets.config.clone())
        .on_connection_init(move |payload| authenticate_connection(init_services.clone(), init_per_user.clone(), payload))
        .on_operation(move |schema, request, session| execute_operation(schema, &services, &per_user, request, &session))
        .recheck_every(RECHECK_TOKEN, move |session| recheck_token(recheck_services.clone(), session))
        .going_away(state.sockets.subscribe())
        .upgrade(upgrade)
}

/// How often a connection's token is checked again: a revoked one is forgotten by every
/// replica's cache at once (Redis), an expired one fails the check, so streams end within this.
/// The same check sees that the user lost slice access.
const RECHECK_TOKEN: Duration = Duration::from_secs(2);

fn session_data<T: 'static>(session: &Data) -> Option<&T> {
    session.get(&TypeId::of::<T>()).and_then(|data| data.downcast_ref::<T>())
}

/// Whether the connection's token still authenticates (not revoked, not expired); passes on
/// the user's access version to the running operations.
async fn recheck_token(services: App, session: Arc<Data>) -> Result<(), InitError> {
    let Some(token) = session_data::<ConnectionToken>(&session).map(|t| t.0.clone()) else {
        return Err(InitError::Forbidden("the connection is not authenticated".into()));
    };
    let caller = verify(&services, &token).await?;
    if let Some(seen) = session_data::<AccessSeen>(&session) {
        let now = caller.record.access_version;
        seen.0.send_if_modified(|seen| (now > *seen).then(|| *seen = now).is_some());
    }
    Ok(())
}

/// The token from `connection_init`: `{"authorization": "Bearer <token>"}` (any case of the key
/// and of `Bearer`), or `{"token": "<token>"}`.
pub(super) fn token_from(payload: Option<&Value>) -> Option<String> {
    let fields = payload?.as_object()?;
    let token = match fields.get("authorization").or_else(|| fields.get("Authorization")).and_then(Value::as_str) {
        Some(header) => {
            let (scheme, token) = header.trim().split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then_some(token)?
        }
        None => fields.get("token").and_then(Value::as_str)?,
    };
    Some(token.trim()).filter(|t| !t.is_empty()).map(str::to_owned)
}

async fn authenticate_connection(services: App, per_user: Arc<PerUser>, payload: Option<Value>) -> Result<Data, InitError> {
    let Some(token) = token_from(payload.as_ref()) else {
        return Err(InitError::Forbidden("send the token in `connection_init`: {\"authorization\": \"Bearer <token>\"}".into()));
    };
    let caller = verify(&services, &token).await?;
    let hold = per_user.connection(Principal::of(Some(&caller))).map_err(InitError::TooMany)?;
    let mut session = Data::default();
    session.insert(AccessSeen(watch::Sender::new(caller.record.access_version)));
    session.insert(caller);
    session.insert(ConnectionToken(token));
    session.insert(ConnectionHold(hold));
    Ok(session)
}

async fn verify(services: &App, token: &str) -> Result<Caller, InitError> {
    authenticate(&services.db, &services.keys, &services.token_cache, token).await.map_err(|error| {
        if error.code() == ErrorCode::Unauthenticated {
            InitError::Forbidden(error.public_message())
        } else {
            static UNAVAILABLE: egs_domain::log_throttle::Throttle = egs_domain::log_throttle::Throttle::new(egs_domain::log_throttle::EVERY);
            if let Some(left_out) = UNAVAILABLE.admit() {
                tracing::error!(error = ?error, left_out, "failed to authenticate a WebSocket connection");
            }
            InitError::Unavailable("the database is unavailable; reconnect later".into())
        }
    })
}

/// One error response with `code`, as an operation's whole answer.
fn refused_operation(message: String, code: ErrorCode) -> BoxStream<'static, Response> {
    futures_util::stream::once(async move { Response::from_errors(vec![coded_error(message, code)]) }).boxed()
}

/// Runs an operation the way HTTP does (fresh DataLoaders, a fresh caller whose memberships
/// load once per operation), after checking the connection's token again. It holds one of its
/// user's places for live operations while it runs, and ends when the user loses slice access.
fn execute_operation(schema: &EgsSchema, services: &App, per_user: &Arc<PerUser>, request: Request, session: &Data) -> BoxStream<'static, Response> {
    let token = session_data::<ConnectionToken>(session).map(|t| t.0.clone());
    let access = session_data::<AccessSeen>(session).map(|seen| seen.0.subscribe());
    let (schema, services, per_user) = (schema.clone(), services.clone(), per_user.clone());
    futures_util::stream::once(async move {
        let caller = match token {
            Some(token) => verify(&services, &token).await,
            None => Err(InitError::Forbidden("the connection is not authenticated".into())),
        };
        match caller {
            Ok(caller) => {
                let hold = match per_user.operation(Principal::of(Some(&caller))) {
                    Ok(hold) => hold,
                    Err(why) => return refused_operation(why, ErrorCode::LimitExceeded),
                };
                let started = caller.record.access_version;
                let responses = egs_schema::execute_stream(&schema, &services, request, Some(caller)).map(mark_request_errors);
                let responses = match access {
                    Some(access) => end_when_access_shrinks(responses, access, started),
                    None => responses.boxed(),
                };
                // The place is given back when the stream is dropped, however it ends.
                responses
                    .map(move |response| {
                        let _held = &hold;
                        response
                    })
                    .boxed()
            }
            Err(InitError::Forbidden(why)) => refused_operation(why, ErrorCode::Unauthenticated),
            Err(InitError::Unavailable(why) | InitError::TooMany(why)) => refused_operation(why, ErrorCode::Internal),
        }
    })
    .flatten()
    .boxed()
}

/// Passes `responses` on until the user's access version rises above `started` (they were
/// removed from a slice, given a lower role, or a slice of theirs was deleted), then ends with
/// a `FORBIDDEN` error: what it streams was decided under access the user no longer has. A
/// new subscription is judged afresh.
fn end_when_access_shrinks(
    responses: impl futures_util::Stream<Item = Response> + Send + 'static,
    mut access: watch::Receiver<i64>,
    started: i64,
) -> BoxStream<'static, Response> {
    let shrunk: BoxFuture<'static, ()> = async move {
        // A dropped sender means the connection is closing: nothing to say.
        if access.wait_for(|now| *now > started).await.is_err() {
            pending::<()>().await;
        }
    }
    .boxed();
    futures_util::stream::unfold(Some((responses.boxed(), shrunk)), |state| async move {
        let (mut responses, mut shrunk) = state?;
        tokio::select! {
            biased;
            () = &mut shrunk => {
                let why = "your access to slices changed since this operation started; start it again to see what you may see now";
                Some((Response::from_errors(vec![coded_error(why, ErrorCode::Forbidden)]), None))
            }
            next = responses.next() => next.map(|response| (response, Some((responses, shrunk)))),
        }
    })
    .boxed()
}

/// Request errors carry a stable code, as on HTTP.
fn mark_request_errors(mut response: Response) -> Response {
    if is_request_error(&response) {
        code_request_errors(&mut response.errors);
    }
    response
}
