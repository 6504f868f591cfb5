//! GPU Provision Requests: N whole nodes of a shape for a strict reserved window.
//!
//! The rooms: [`service`] (the changes and their events), [`reads`], [`checks`] (fields,
//! inventory and policy before anything is stored), [`extend`] (longer windows that keep every
//! promise), [`policy`] (what a slice's policy allows), [`spec`] (a GPR as the rules take it),
//! [`versioned`] (version-checked writes of one GPR) and [`queue_views`] (live queue reads
//! shared by watchers).

pub mod checks;
pub mod extend;
pub mod phase;
pub mod policy;
pub mod queue_views;
pub mod reads;
pub mod service;
pub mod spec;
pub mod versioned;
pub mod what_if;
