//! Slices (workspaces): namespaces on clusters, members with roles, and a policy ([`service`]);
//! workspace requests ([`requests`]), private workspaces ([`personal`]) and slice kubeconfigs
//! ([`kubeconfig`]).

pub mod kubeconfig;
pub mod personal;
pub mod requests;
pub mod service;

pub use service::reserved_namespace;
