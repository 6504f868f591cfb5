//! The EGS GraphQL API: objects, inputs, payloads, the query, mutation and subscription roots,
//! batch loaders, cost limits, Relay connections and scalars.
//!
//! Each domain module (`cluster`, `inventory`, `slice`, `user`, `token`, `gpr`, `metrics`,
//! `alerts`, `workloads`, `notify`, `template`, `usage`, `sso`) holds the GraphQL types and
//! resolvers of its domain; the rules behind them are `egs_domain`'s, and a resolver decodes,
//! calls one and shapes the answer. This crate never imports the web framework: the gateway
//! attaches per-request data (the caller, the [`loaders::Loaders`]) through [`execute`].

pub mod alerts;
pub mod cluster;
pub mod error;
pub mod gpr;
pub mod ids;
pub mod inventory;
pub mod limits;
pub mod loaders;
pub mod metrics;
pub mod notify;
pub mod operation;
pub mod pagination;
pub mod relay;
pub mod scalars;
pub mod slice;
pub mod sso;
pub mod template;
pub mod token;
pub mod usage;
pub mod user;
pub mod workloads;

use async_graphql::parser::types::OperationType;
use async_graphql::{Context, MergedObject, MergedSubscription, Schema};
use egs_domain::App;
use egs_domain::auth::Caller;
use egs_domain::error::{Error, ErrorCode, Result};
use egs_domain::log_throttle;
use sea_orm::DatabaseConnection;
use std::sync::Arc;

#[derive(MergedObject, Default)]
pub struct Query(
    relay::RelayQuery,
    user::UserQuery,
    cluster::ClusterQuery,
    inventory::InventoryQuery,
    slice::SliceQuery,
    gpr::GprQuery,
    gpr::WhatIfQuery,
    token::TokenQuery,
    metrics::MetricsQuery,
    alerts::AlertQuery,
    workloads::WorkloadQuery,
    template::TemplateQuery,
    notify::NotificationQuery,
    slice::requests::WorkspaceRequestQuery,
    usage::UsageQuery,
    sso::SsoQuery,
    slice::personal::PersonalWorkspaceQuery,
    inventory::windows::MaintenanceWindowQuery,
);

#[derive(MergedObject, Default)]
pub struct Mutation(
    cluster::ClusterMutation,
    inventory::InventoryMutation,
    slice::SliceMutation,
    user::UserMutation,
    token::TokenMutation,
    gpr::GprMutation,
    metrics::MetricsMutation,
    alerts::AlertMutation,
    workloads::WorkloadMutation,
    template::TemplateMutation,
    slice::kubeconfig::SliceKubeconfigMutation,
    notify::NotificationMutation,
    inventory::MaintenanceMutation,
    inventory::windows::MaintenanceWindowMutation,
    slice::requests::WorkspaceRequestMutation,
    usage::UsageMutation,
    sso::SsoMutation,
    slice::personal::PersonalWorkspaceMutation,
);

#[derive(MergedSubscription, Default)]
pub struct Subscription(
    gpr::GprSubscription,
    gpr::QueueSubscription,
    metrics::MetricsSubscription,
    alerts::AlertSubscription,
    inventory::InventorySubscription,
);

pub type EgsSchema = Schema<Query, Mutation, Subscription>;

/// Nesting deeper than this is refused before execution (a page of GPRs with slice, nodes and
/// GPUs is 6 deep; introspection needs about 12).
pub const MAX_QUERY_DEPTH: usize = 16;
/// Refused before execution when exceeded; a 100-item page of nested objects is ~2,000.
pub const MAX_QUERY_COMPLEXITY: usize = 20_000;

/// What a deployment may switch in the schema.
#[derive(Clone, Debug)]
pub struct SchemaOptions {
    /// Without it, `__schema` and `__type` are refused.
    pub introspection: bool,
    /// Per-user query cost budget; `None` for none.
    pub cost_budget: Option<limits::CostBudget>,
    /// Unexpired tokens one user may hold; `None` for no limit.
    pub max_tokens_per_user: Option<u32>,
    /// `<namespace>:<name>` of the ServiceAccount whose tokens sign node agents in.
    pub agent_service_account: String,
}

impl Default for SchemaOptions {
    fn default() -> Self {
        Self {
            introspection: true,
            cost_budget: None,
            max_tokens_per_user: None,
            agent_service_account: egs_domain::token::agent::DEFAULT_AGENT_SERVICE_ACCOUNT.into(),
        }
    }
}

/// Builds the schema with its limits (depth, complexity, aliases, the cost budget); `app`
/// is reachable from every resolver.
pub fn build_schema(app: App, options: SchemaOptions) -> EgsSchema {
    let builder = Schema::build(Query::default(), Mutation::default(), Subscription::default())
        .data(app)
        .data(token::TokenLimit(options.max_tokens_per_user))
        .data(egs_domain::token::agent::AgentSignIn::new(&options.agent_service_account))
        // Checked in front of the schema by [`execute`], not as extensions (see `limits::Gate`).
        .data(limits::Gate::new(options.cost_budget))
        .limit_depth(MAX_QUERY_DEPTH)
        .limit_complexity(MAX_QUERY_COMPLEXITY);
    if options.introspection { builder.finish() } else { builder.disable_introspection().finish() }
}

/// The schema without any state, for exporting the SDL.
pub fn sdl() -> String {
    Schema::build(Query::default(), Mutation::default(), Subscription::default())
        .finish()
        .sdl_with_options(async_graphql::SDLExportOptions::new().sorted_fields().sorted_enum_items())
}

/// Executes a request for `caller` (if any) with a fresh set of batch loaders, starting their
/// batches as the request becomes idle (see [`loaders`]). `operation` learns what ran.
pub async fn execute(
    schema: &EgsSchema,
    app: &App,
    request: async_graphql::Request,
    caller: Option<Caller>,
    operation: Arc<operation::OperationSlot>,
) -> async_graphql::Response {
    let (request, batches) = match prepare(schema, app, request, caller) {
        Ok((request, batches, found)) => {
            operation.set(found);
            (request, batches)
        }
        Err(refused) => return async_graphql::Response::from_errors(vec![refused]),
    };
    coded(loaders::WithBatches::new(schema.execute(request), batches).await)
}

/// Admits a request (see [`admit`]) and attaches what its resolvers need: the caller, and
/// batch loaders on the database its operation uses. A query reads from `reads` and keeps
/// what it read for the rest of the request; a subscription reads from `reads` and keeps
/// nothing, so each event reads fresh rows; a mutation uses the writer and keeps nothing, so
/// a field after a write reads what it wrote.
#[allow(clippy::type_complexity)]
fn prepare(
    schema: &EgsSchema,
    app: &App,
    mut request: async_graphql::Request,
    caller: Option<Caller>,
) -> async_graphql::ServerResult<(async_graphql::Request, loaders::BatchQueue, Option<(OperationType, Option<String>)>)> {
    let found = admit(schema, &mut request, caller.as_ref())?;
    let query = matches!(found, Some((OperationType::Query, _)));
    // Subscriptions only read too: their setup (thousands at once when dashboards reconnect)
    // must not queue the writes of agents' reports behind it.
    let reads = !matches!(found, Some((OperationType::Mutation, _)));
    let batches = loaders::BatchQueue::default();
    request = request.data(loaders::Loaders::new(if reads { &app.reads } else { &app.db }, &batches, query));
    if let Some(caller) = caller {
        request = request.data(caller);
    }
    Ok((request, batches, found))
}

/// The schema's [`limits::Gate`]: parses the request once and checks its limits.
fn admit(
    schema: &EgsSchema,
    request: &mut async_graphql::Request,
    caller: Option<&Caller>,
) -> async_graphql::ServerResult<Option<(OperationType, Option<String>)>> {
    let gate = schema.data::<limits::Gate>().ok_or_else(|| error::coded_error("the schema was built without its limits", ErrorCode::Internal))?;
    gate.admit(request, egs_domain::auth::Principal::of(caller))
}

/// Argument values that fail to coerce (an `Int` over 32 bits, a `DateTime` that is not
/// RFC 3339) surface from async-graphql as field errors without a code; they are the
/// caller's to correct, so they carry `INVALID_INPUT` like every other bad value.
fn coded(mut response: async_graphql::Response) -> async_graphql::Response {
    for error in response.errors.iter_mut().filter(|error| error.message.starts_with("Failed to parse")) {
        error::set_default_code(error, ErrorCode::InvalidInput);
    }
    response
}

/// Runs a subscription (or any operation, as a stream) for `caller` over a socket, with the
/// same per-request data and checks as [`execute`]; each event's fields load in batches.
pub fn execute_stream(
    schema: &EgsSchema,
    app: &App,
    request: async_graphql::Request,
    caller: Option<Caller>,
) -> impl futures_util::Stream<Item = async_graphql::Response> + Send + 'static {
    use futures_util::StreamExt;
    let (request, batches) = match prepare(schema, app, request, caller) {
        Ok((request, batches, _)) => (request, batches),
        Err(refused) => return futures_util::stream::once(std::future::ready(async_graphql::Response::from_errors(vec![refused]))).boxed(),
    };
    loaders::WithBatches::new(schema.execute_stream(request), batches).map(coded).boxed()
}

pub(crate) fn app<'a>(ctx: &Context<'a>) -> Result<&'a App> {
    ctx.data::<App>().map_err(|_| Error::Internal(anyhow::anyhow!("schema built without its app")))
}

/// Subscriptions that may run their setup reads (access checks, first views) at once. A crowd
/// of dashboards opening together waits here, a few bytes each, instead of each holding a
/// database read's buffers (about 20 KiB) while it waits for the read pool's connections: with
/// 2,000 `gpuMetrics` subscribers opening at once those reads held 44 MB at the peak, which the
/// allocator then kept as resident memory (`live_load`). A few times the read pool, so the
/// pool stays busy.
pub const SUBSCRIPTION_SETUPS: usize = 32;
/// How long a subscription waits for its turn to set up before `SERVICE_UNAVAILABLE`: as long
/// as a read waits for a connection, so a database that is down fails a crowd as fast as before.
const SETUP_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// A subscription's turn to run its setup reads; hold it until they are done.
pub(crate) async fn setting_up<'a>(ctx: &Context<'a>) -> Result<tokio::sync::SemaphorePermit<'a>> {
    let setups = &app(ctx)?.subscription_setups;
    match tokio::time::timeout(SETUP_WAIT, setups.acquire()).await {
        Ok(Ok(permit)) => Ok(permit),
        // Never closed; a timeout reads as the pool's own.
        _ => Err(Error::Database(sea_orm::DbErr::ConnectionAcquire(sea_orm::error::ConnAcquireErr::Timeout))),
    }
}

/// The authenticated caller, or `UNAUTHENTICATED`.
pub(crate) fn caller<'a>(ctx: &Context<'a>) -> Result<&'a Caller> {
    ctx.data::<Caller>().map_err(|_| Error::Unauthenticated("this needs a token: send `Authorization: Bearer <token>`".into()))
}

pub(crate) fn loaders<'a>(ctx: &Context<'a>) -> Result<&'a loaders::Loaders> {
    ctx.data::<loaders::Loaders>().map_err(|_| Error::Internal(anyhow::anyhow!("request prepared without loaders")))
}

/// The caller and the database, the pair nearly every resolver starts with.
pub(crate) fn session<'a>(ctx: &Context<'a>) -> Result<(&'a Caller, &'a DatabaseConnection)> {
    Ok((caller(ctx)?, loaders(ctx)?.db()))
}

/// Tells the scheduler loop and the event tailer something changed (both also run on a
/// timer, so a miss only delays).
pub(crate) fn stored_changes(ctx: &Context<'_>) {
    if let Ok(app) = app(ctx) {
        app.scheduler.wake();
        app.events.changed();
    }
}

/// Tells the inventory watchers (here and on other replicas) that nodes were written.
pub(crate) fn inventory_changed(ctx: &Context<'_>) {
    if let Ok(app) = app(ctx) {
        app.inventory.changed();
    }
}

/// Runs a field's work in a box of its own. async-graphql allocates each field of an object
/// a future as large as the object's largest field, so a field that queries (kilobytes of
/// state) makes every scalar beside it on a page of 100 pay for it; boxed, it costs only
/// where it is asked for.
pub(crate) fn boxed<'a, T>(work: impl std::future::Future<Output = T> + Send + 'a) -> futures_util::future::BoxFuture<'a, T> {
    Box::pin(work)
}

/// Turns a batch loader's failure into our error.
pub(crate) fn loaded<T>(result: Result<T, Arc<sea_orm::DbErr>>) -> Result<T> {
    result.map_err(|e| {
        // The loader shares its error; an unreachable database must still read as one
        // (SERVICE_UNAVAILABLE, retry), not as our fault.
        if egs_domain::error::connection_lost(&e) {
            static UNREACHABLE: log_throttle::Throttle = log_throttle::Throttle::new(log_throttle::EVERY);
            if let Some(left_out) = UNREACHABLE.admit() {
                tracing::warn!(error = %e, left_out, "a data loader could not reach the database");
            }
            Error::Database(sea_orm::DbErr::ConnectionAcquire(sea_orm::ConnAcquireErr::ConnectionClosed))
        } else {
            Error::Internal(anyhow::anyhow!("data loader failed: {e}"))
        }
    })
}

/// Declares a mutation payload: the changed object (absent on failure) and `userErrors`.
macro_rules! payload {
    ($(#[$doc:meta])* $name:ident, $field:ident: $ty:ty) => {
        $(#[$doc])*
        #[derive(async_graphql::SimpleObject)]
        pub struct $name {
            pub $field: Option<$ty>,
            /// Problems with the input that the caller can fix; empty on success.
            pub user_errors: Vec<egs_domain::error::UserError>,
        }

        impl $name {
            /// Caller-fixable errors become `userErrors`; the rest become GraphQL errors.
            pub fn from_result(result: egs_domain::error::Result<$ty>) -> async_graphql::Result<Self> {
                match result {
                    Ok(value) => Ok(Self { $field: Some(value), user_errors: Vec::new() }),
                    Err(egs_domain::error::Error::User(user_errors)) => Ok(Self { $field: None, user_errors }),
                    Err(other) => Err(other.into()),
                }
            }

            /// Answers a mutation that stores changes: whatever it did, the scheduler and the
            /// event tailer look at once (both also run on a timer, so a miss only delays).
            pub async fn after_change(
                ctx: &async_graphql::Context<'_>,
                change: impl std::future::Future<Output = egs_domain::error::Result<$ty>>,
            ) -> async_graphql::Result<Self> {
                let result = change.await;
                crate::stored_changes(ctx);
                Self::from_result(result)
            }
        }
    };
}
pub(crate) use payload;

#[cfg(test)]
mod tests {
    /// The checked-in SDL is the API contract reviewers read; it must match the code.
    #[test]
    fn exported_schema_matches_the_code() {
        let checked_in = include_str!("../schema.graphql");
        let current = super::sdl();
        assert!(
            checked_in == current,
            "schema/schema.graphql is out of date; regenerate it with `cargo build -p egs-api --bin egs && target/debug/egs print-schema > schema/schema.graphql` (build first: the client's operations are typed from this file, so a redirect that empties it before the build would break the build)"
        );
    }
}

#[cfg(test)]
mod loaded_tests {
    use super::*;

    #[test]
    fn an_unreachable_database_behind_a_loader_reads_as_unavailable() {
        let lost = Arc::new(sea_orm::DbErr::ConnectionAcquire(sea_orm::ConnAcquireErr::Timeout));
        assert_eq!(loaded::<()>(Err(lost)).err().map(|e| e.code()), Some(ErrorCode::ServiceUnavailable));
        let failed = Arc::new(sea_orm::DbErr::Custom("a query failed".into()));
        assert_eq!(loaded::<()>(Err(failed)).err().map(|e| e.code()), Some(ErrorCode::Internal));
    }
}
