//! The one integration test binary: each test starts the real gateway on port 0 with its own
//! database (SQLite, or PostgreSQL + Redis when `EGS_TEST_DATABASE_URL`/`EGS_TEST_REDIS_URL`
//! are set) and drives it over HTTP with the requests users send.

mod agent;
mod alerts;
mod architecture;
mod auth;
mod auto_gpr;
mod cli;
mod client;
mod dataloader;
mod deploy;
mod event_search;
mod examples;
mod exporter;
mod extensions;
mod fake_kube;
mod faults;
mod fuzz_corpora;
mod gpr_resources;
mod gprs;
mod http_spec;
mod input_errors;
mod isolation;
mod isolation_generated;
mod kubernetes;
mod kubernetes_both;
mod lifecycle;
mod limits;
mod live_inventory;
mod maintenance;
mod metrics;
mod notifications;
mod operations;
mod promises;
mod real_kube;
mod services;
mod slice_kubeconfig;
mod slices;
mod sso;
mod subscriptions;
mod templates;
mod usage;
mod websocket;
mod workload_hints;
mod workloads;
mod workspace_requests;
