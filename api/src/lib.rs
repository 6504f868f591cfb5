//! The `egs` gateway: HTTP and WebSocket front, start-up, CLI commands. It holds no business
//! rules: those live in `egs-schema`. Here are the adapters the schema's ports are wired to
//! (docs/design.md §2): Redis between replicas ([`replicas`]) and the Kubernetes clusters
//! ([`kubernetes`]: provider, controllers, admission webhook, slice kubeconfigs).

// The merged GraphQL root (one object per room) nests deeper than rustc's default layout
// recursion allows in release builds.
#![recursion_limit = "256"]

pub mod app;
pub mod bootstrap;
pub mod cli;
pub mod client;
pub mod db;
pub mod db_watch;
pub mod demo;
pub mod graphql_http;
pub mod graphql_ws;
pub mod health;
pub mod kubernetes;
pub mod mail;
pub mod metrics;
pub mod oidc;
pub mod per_user;
pub mod playground;
pub mod portal;
pub mod replay;
pub mod replicas;
pub mod settings;
pub mod telemetry;

pub use app::{AppState, Application};
