//! GPU Provision Requests: N whole nodes of a shape for a strict reserved window.
//!
//! The API's rooms: [`types`] (the objects), [`inputs`], [`query`], [`mutation`] and
//! [`subscription`] (the GraphQL roots). The rules behind them are `egs_domain::gpr`'s.

pub mod inputs;
pub mod mutation;
pub mod query;
pub mod subscription;
pub mod types;
pub mod what_if;
use egs_domain::gpr::{extend, queue_views, reads, service, spec};

pub use inputs::*;
pub use mutation::*;
pub use query::{GprFilter, GprQuery};
pub(crate) use query::{MAX_QUEUE_VIEW, list_gprs_page};
pub use subscription::{GprSubscription, QueueSubscription};
pub use types::*;
pub use what_if::WhatIfQuery;
