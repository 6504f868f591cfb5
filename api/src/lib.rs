//! The `egs` gateway: HTTP and WebSocket front, start-up, CLI commands. It holds no business
//! rules: those live in `egs-schema`.

pub mod admission;
pub mod app;
pub mod bootstrap;
pub mod cli;
pub mod db;
pub mod db_watch;
pub mod demo;
pub mod graphql_http;
pub mod graphql_ws;
pub mod health;
pub mod metrics;
pub mod per_user;
pub mod playground;
pub mod portal;
pub mod replay;
pub mod replicas;
pub mod settings;

pub use app::{AppState, Application};
