//! GPU Provision Requests: N whole nodes of a shape for a strict reserved window.
//!
//! The rooms: [`types`] (the objects), [`inputs`], [`query`], [`mutation`] and
//! [`subscription`] (the GraphQL roots), [`service`] (the changes and their events), [`reads`],
//! [`checks`] (fields, inventory and policy before anything is stored), [`extend`] (longer
//! windows that keep every promise), [`policy`] (what a slice's policy allows), [`versioned`]
//! (version-checked writes of one GPR) and [`queue_views`] (live queue reads shared by
//! watchers).

pub mod checks;
pub mod extend;
pub mod inputs;
pub mod mutation;
pub mod policy;
pub mod query;
pub mod queue_views;
pub mod reads;
pub mod service;
pub mod spec;
pub mod subscription;
pub mod types;
pub mod versioned;

pub use inputs::*;
pub use mutation::*;
pub use query::{GprFilter, GprQuery};
pub(crate) use query::{MAX_QUEUE_VIEW, list_gprs_page};
pub use subscription::{GprSubscription, QueueSubscription};
pub use types::*;
