//! Access tokens: issuing (the secret is shown once), listing, revoking ([`service`]), and node
//! agents' sign-in with their pod's ServiceAccount token ([`agent`]).

pub mod agent;
pub mod service;
