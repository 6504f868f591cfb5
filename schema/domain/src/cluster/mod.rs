//! Clusters: the Kubernetes clusters (or simulated ones) whose GPU nodes EGS shares.

pub mod credentials;
pub mod service;
