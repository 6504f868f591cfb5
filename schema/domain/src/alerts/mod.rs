//! Alerts: GPUs over their temperature or power threshold, XID and ECC errors, node agents gone
//! silent, and GPRs whose GPUs sit idle. The [`rules`] raise and clear them with hysteresis,
//! [`service`] stores them (at most one open alert per kind and subject, enforced by the
//! database), the [`feed`] publishes every transition to `alerts` subscribers on every replica,
//! and [`webhook`] posts each one, once, to a Slack-compatible webhook.
//!
//! Sample-driven rules (temperature, power, XID, ECC) run inside `reportGpuSamples`; time-driven
//! ones (stale nodes, idle GPRs, quiet periods, subjects gone or handed over) in a sweeper
//! every replica runs ([`sweeper::run_sweeper`]).

pub mod feed;
pub mod reads;
pub mod rules;
pub mod service;
pub mod sweeper;
pub mod thresholds;
pub mod transition;
pub mod webhook;
