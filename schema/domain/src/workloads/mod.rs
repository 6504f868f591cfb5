//! Workloads: which processes, in which Kubernetes pods, run on which GPUs. Node agents report
//! the mapping when it changes and at least every minute ([`service`]); on a Kubernetes cluster
//! the gateway names the pods from the cluster's own list ([`pod_names`]).

pub mod pod_names;
pub mod service;
