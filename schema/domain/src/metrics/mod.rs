//! GPU metrics: who reads what ([`access`]), reports from agents ([`ingest`], stored in
//! batches by [`batch`]), summaries and ranking ([`summary`]), the in-memory history
//! ([`store`]), live delivery ([`live`]) and the dcgm-exporter view ([`export`]).

pub mod access;
pub mod batch;
pub mod export;
pub mod ingest;
pub mod live;
pub mod sample;
pub mod store;
pub mod summary;
#[cfg(test)]
mod tests;

pub use store::{Feed, MetricsStore, NoMetricsFanout};
