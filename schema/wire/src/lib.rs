//! What the gateway and the node agent both speak, defined once. The agent does not link the
//! gateway's crates (no database, no GraphQL server on a GPU node), so what both must agree on
//! lives here:
//!
//! - [`duration`]: how a span of time is written (`2h30m`, `500ms`, ISO 8601 `PT2H30M`);
//! - [`backoff`]: the wait between retries of every loop that calls something that can be down;
//! - [`dcgm`]: dcgm-exporter's metric families, which both `/metrics` endpoints export.
//!
//! The GraphQL operations the agent sends are typed from `schema/schema.graphql` itself
//! (`egs-node-agent`'s `operations` module), so there is no hand-written copy of the schema's
//! input types either.

pub mod backoff;
pub mod dcgm;
pub mod duration;
