//! Notifications: channels that tell users and slices of their GPRs' milestones (a Slack
//! incoming webhook, a signed JSON webhook, e-mail through the gateway's SMTP server), and
//! Kubernetes Events for every milestone in the slice's namespaces.
//!
//! [`service`] holds who may keep which channel and what it may name; [`outbox`] the notifier
//! every replica runs (fan-out of stored events into deliveries, sending them once, retries);
//! [`message`] what is sent; [`milestones`] which events are milestones.

pub mod message;
pub mod milestones;
pub mod outbox;
pub mod service;

pub use outbox::{Notifier, NotifierConfig};
