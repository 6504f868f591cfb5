//! GPU Provision Requests: N whole nodes of a shape for a strict reserved window.
//!
//! The rooms: [`types`] (the objects), [`inputs`], [`query`], [`mutation`] and
//! [`subscription`] (the GraphQL roots), [`service`] (the changes and their events), [`reads`],
//! [`checks`] (fields, inventory and policy before anything is stored), [`extend`] (longer
//! windows that keep every promise), [`policy`] (what a slice's policy allows), [`versioned`]
//! (version-checked writes of one GPR) and [`queue_views`] (live queue reads shared by
//! watchers).

pub mod inputs;
pub mod mutation;
pub mod query;
pub mod subscription;
pub mod types;
use egs_domain::gpr::{extend, queue_views, reads, service, spec};

pub use inputs::*;
pub use mutation::*;
pub use query::{GprFilter, GprQuery};
pub(crate) use query::{MAX_QUEUE_VIEW, list_gprs_page};
pub use subscription::{GprSubscription, QueueSubscription};
pub use types::*;
