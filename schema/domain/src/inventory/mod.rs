//! Inventory: GPU nodes, GPUs and pools ([`service`]); cordon, drain and uncordon
//! ([`maintenance`]) and windows planned ahead ([`windows`]); when a silent node reads `STALE`
//! ([`liveness`]); the live `inventoryChanged` feed ([`live`]); and the GPUs' descriptions kept
//! in memory ([`catalog`]).

pub mod catalog;
pub mod live;
pub mod liveness;
pub mod maintenance;
pub mod service;
pub mod windows;
