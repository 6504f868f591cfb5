//! The client's GraphQL operations ([`operations.graphql`](operations.graphql)), checked and
//! typed against `schema/schema.graphql` by `graphql_client`, as the node agent's are: the
//! variables are the schema's own input types. Answers are read as JSON (what
//! `--output json` prints), not into the generated response types.

use graphql_client::GraphQLQuery;

// The derive reads these files, but cargo does not know it: naming them here makes a change to
// either rebuild this module (else a stale build hides an operation the schema broke).
const _SCHEMA: &str = include_str!("../../../schema/schema.graphql");
const _OPERATIONS: &str = include_str!("operations.graphql");

/// The schema's `DateTime` (RFC 3339) and `Duration` (`2h30m` or ISO 8601) scalars.
type DateTime = chrono::DateTime<chrono::Utc>;
type Duration = String;

macro_rules! operation {
    ($name:ident) => {
        #[derive(GraphQLQuery)]
        #[graphql(
            schema_path = "../schema/schema.graphql",
            query_path = "src/client/operations.graphql",
            variables_derives = "Clone, Debug, Default",
            response_derives = "Debug",
            skip_serializing_none
        )]
        pub struct $name;
    };
}

operation!(EgsCliViewer);
operation!(EgsCliTemplates);
operation!(EgsCliCreateGpr);
operation!(EgsCliGprs);
operation!(EgsCliGpr);
operation!(EgsCliUpdateGpr);
operation!(EgsCliCancelGpr);
operation!(EgsCliReleaseGpr);
operation!(EgsCliExtendGpr);
operation!(EgsCliWaitTime);
operation!(EgsCliWhatIf);
operation!(EgsCliClusters);
operation!(EgsCliEvents);
operation!(EgsCliSlices);

/// Its variables name an order (no default), so they have no `Default`.
#[derive(GraphQLQuery)]
#[graphql(
    schema_path = "../schema/schema.graphql",
    query_path = "src/client/operations.graphql",
    variables_derives = "Clone, Debug",
    response_derives = "Debug",
    skip_serializing_none
)]
pub struct EgsCliHotGpus;
