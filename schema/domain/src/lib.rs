//! The EGS control plane: everything the GraphQL API stands on, and nothing of GraphQL itself.
//!
//! Each domain folder (`cluster`, `inventory`, `slice`, `user`, `token`, `template`, `gpr`,
//! `metrics`, `alerts`, `workloads`, `notify`, `usage`, `sso`) holds its rules: plain async
//! functions over a database connection and an authenticated [`auth::Caller`], returning
//! [`error::Error`]. Beside them: the leader's loop ([`lifecycle`]) that feeds the pure
//! scheduler (`egs-scheduler`) and persists its decisions, the live feeds and in-memory stores,
//! and the [`ports`] through which the gateway's adapters (Redis, Kubernetes, SMTP) are reached.
//! The `graphql` feature adds only derives and the conversion of an [`error::Error`] into a
//! GraphQL error; resolvers live in `egs-schema`.

pub mod alerts;
pub mod auth;
pub mod clock;
pub mod cluster;
pub mod error;
pub mod events;
pub mod gpr;
pub mod ids;
pub mod inventory;
pub mod lifecycle;
pub mod log_throttle;
pub mod metrics;
pub mod notify;
pub mod outbound;
pub mod pagination;
pub mod patch;
pub mod per_hour;
pub mod ports;
pub mod principal;
pub mod redaction;
pub mod shared_reads;
pub mod slice;
pub mod sso;
pub mod template;
pub mod token;
pub mod usage;
pub mod user;
pub mod validate;
pub mod workloads;

use auth::{TokenCache, TokenKeys};
use ports::{Announce, RevocationBroadcast};
use sea_orm::DatabaseConnection;
use std::sync::Arc;

/// The process-wide state: storage, the scheduler's handle, the live feeds and in-memory stores,
/// and the ports to the outside world. One per process, shared by every resolver and background job.
#[derive(Clone)]
pub struct App {
    /// Where writes go: mutations, and the background jobs.
    pub db: DatabaseConnection,
    /// Where queries and subscriptions read: on SQLite, read-only connections beside the one
    /// writer; on PostgreSQL, a pool of its own beside `db`'s.
    pub reads: DatabaseConnection,
    pub keys: Arc<TokenKeys>,
    pub token_cache: Arc<TokenCache>,
    /// Reaches the other replicas' token caches (Redis in distributed mode).
    pub revocations: Arc<dyn RevocationBroadcast>,
    /// Wakes the scheduler loop after a change; the lifecycle clock.
    pub scheduler: Arc<lifecycle::SchedulerHandle>,
    /// Live GPR events for subscriptions.
    pub events: Arc<events::EventFeed>,
    /// GPU metrics history and the live feed of samples (per process).
    pub samples: Arc<metrics::MetricsStore>,
    /// Stores agents' reports in batches (`reportGpuSamples`).
    pub reports: Arc<metrics::batch::ReportBatcher>,
    /// Alert transitions for subscribers (and the webhook), from every replica.
    pub alerts: Arc<alerts::feed::AlertFeed>,
    /// Node changes for `inventoryChanged` subscribers, from every replica.
    pub inventory: Arc<inventory::live::InventoryFeed>,
    /// The GPUs' descriptions in memory, for GPU pages that read no samples.
    pub gpu_catalog: Arc<inventory::catalog::GpuCatalog>,
    /// What is asked of Kubernetes clusters' APIs outside the provider's jobs (kubeconfigs).
    pub kubernetes: Arc<dyn ports::KubeAccess>,
    /// Seals and opens the clusters' stored credentials.
    pub credentials: Arc<cluster::credentials::CredentialCipher>,
    /// Live queue views, one reader per distinct view (`queueChanged`).
    pub queue_views: Arc<gpr::queue_views::QueueViews>,
    /// The pods on each Kubernetes node, as its cluster lists them (to name reported pods).
    pub pod_names: Arc<workloads::pod_names::PodDirectory>,
    /// Notification channels' deliveries and milestones' Kubernetes Events.
    pub notifier: Arc<notify::Notifier>,
    /// Subscriptions setting up now (see `egs_schema::setting_up`): `egs_schema::SUBSCRIPTION_SETUPS` permits.
    pub subscription_setups: Arc<tokio::sync::Semaphore>,
}

impl App {
    /// What storing a cluster's kubeconfig needs.
    pub fn sealer(&self) -> cluster::service::Sealer<'_> {
        cluster::service::Sealer { cipher: &self.credentials, kube: self.kubernetes.as_ref() }
    }

    /// Where news that users lost slice access goes (see [`auth::reduce_access`]).
    pub fn access_news(&self) -> auth::AccessNews<'_> {
        auth::AccessNews { cache: &self.token_cache, others: self.revocations.as_ref() }
    }
}

/// One replica: nobody else to tell.
pub struct Alone;

impl Announce for Alone {
    fn announce(&self) {}
}
