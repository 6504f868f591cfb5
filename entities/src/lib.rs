//! SeaORM entities: one module per table, plus the enums and JSON documents stored in them.
//!
//! Tables are created by `egs-migration`; this crate only describes them. Enums are stored as
//! short strings so the same rows read the same on SQLite and PostgreSQL, and so a new variant
//! needs no migration. With the `graphql` feature they double as GraphQL enums.

pub mod access_token;
pub mod alert;
pub mod alert_change;
pub mod alert_threshold;
pub mod cluster;
pub mod cursor;
pub mod enums;
pub mod gpr;
pub mod gpr_event;
pub mod gpr_node;
pub mod gpr_step;
pub mod gpr_template;
pub mod gpr_template_slice;
pub mod gpu;
pub mod gpu_process;
pub mod leader_lease;
pub mod maintenance_window;
pub mod node;
pub mod notification_channel;
pub mod notification_delivery;
pub mod personal_workspace_policy;
pub mod project;
pub mod slice;
pub mod slice_cluster;
pub mod slice_kubeconfig;
pub mod slice_member;
pub mod slice_namespace;
pub mod sso_group_rule;
pub mod usage_daily;
pub mod usage_utilisation_daily;
pub mod usage_wait_daily;
pub mod user;
pub mod workspace_request;

pub use enums::*;
