//! The ports: everything the schema needs from outside itself, as traits the gateway's adapters
//! implement (docs/design.md §2). The stand-ins for one process or for tests sit beside the code that
//! uses them; the real ones (Redis, the Kubernetes API) are wired in `egs-api`.
//!
//! | port | one process / tests | distributed |
//! |---|---|---|
//! | [`Clock`] | [`crate::clock::ManualClock`] in tests | [`crate::clock::SystemClock`] |
//! | [`Announce`] (stored changes) | [`crate::Alone`] | Redis pub/sub |
//! | [`RevocationBroadcast`] (tokens, access) | [`crate::auth::NoReplicas`] | Redis pub/sub |
//! | [`MetricsFanout`] (accepted samples) | [`crate::metrics::NoMetricsFanout`] | Redis pub/sub |
//! | [`ClusterProvider`] and its [`StepLog`] | simulated nodes | the Kubernetes API |
//! | [`LeaderTasks`] | none | the Kubernetes controllers |
//! | [`KubeAccess`] (kubeconfigs, agents' ServiceAccount tokens) | none: Kubernetes clusters are refused | the Kubernetes API |

use crate::error::Result;
use crate::metrics::sample::Sample;
use crate::principal::Principal;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use egs_entities::cluster;
use egs_scheduler::{ExtensionRoom, PoolEstimate, Request, WhatIfChange, WhatIfMove};
use sea_orm::DatabaseConnection;

/// Where lifecycle code reads the time; tests move it forward instead of sleeping.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// Tells the other replicas that something was stored, so they look at once instead of at
/// their next poll (Redis pub/sub when configured).
pub trait Announce: Send + Sync {
    fn announce(&self);
}

/// Tells other gateway replicas that a token was revoked, so they drop their cached record at
/// once instead of after the token cache's few seconds. The embedded mode has no other replicas.
pub trait RevocationBroadcast: Send + Sync {
    fn token_revoked(&self, jti: &str);
    /// The user lost slice access: drop their cached token records (see [`crate::auth::reduce_access`]).
    fn access_reduced(&self, user_id: i64);
}

/// The other replicas, for GPU samples (Redis pub/sub when configured): each replica keeps the
/// history of what was reported to it (see the `metrics::store` module's docs).
#[async_trait]
pub trait MetricsFanout: Send + Sync {
    /// Hands the samples this replica accepted to the replicas whose live subscribers watch
    /// the node, and finds out whether any of them watches it, or GPR `held_by` holding it
    /// (for [`MetricsFanout::watched_elsewhere`]). Fire and forget: a lost batch costs their
    /// subscribers one update.
    fn publish(&self, node_id: i64, held_by: Option<i64>, samples: &[Sample]);
    /// Whether other replicas may exist (history and live feeds are then shared).
    fn has_peers(&self) -> bool;
    /// Whether a live subscriber on another replica watched the node (or the GPR holding it)
    /// when its last batch was published (what decides how often its agent reports, see
    /// `MetricsStore::watched`).
    fn watched_elsewhere(&self, _node_id: i64) -> bool {
        false
    }
    /// What the other replicas hold of one GPU's history (as `MetricsStore::points` returns them),
    /// each replica's points in time order, all in one list; what does not answer in time is
    /// left out.
    async fn peer_points(&self, gpu_id: i64, from: i64, to: i64, step: i64) -> Vec<crate::metrics::sample::Point>;
}

/// Work only the leader does besides the scheduler loop (the Kubernetes controllers): told
/// whenever this replica gains or loses the lease.
pub trait LeaderTasks: Send + Sync {
    fn set_leading(&self, leading: bool);
}

/// What a provider needs to hand nodes to a slice (or take them back).
#[derive(Clone, Debug)]
pub struct NodeJob {
    pub gpr_id: i64,
    pub gpr_name: String,
    pub slice_name: String,
    pub cluster_id: i64,
    pub cluster_name: String,
    pub node_names: Vec<String>,
    /// GPUs each node should have allocatable, by node name (from the inventory).
    pub expected_gpus: std::collections::BTreeMap<String, i32>,
    /// Nodes whose agent is silent or reports a fault (the precheck refuses them).
    pub unhealthy_nodes: Vec<String>,
    /// The slice's namespaces on this cluster.
    pub namespaces: Vec<String>,
    /// `(namespace, name)` of the `GPUProvisioningRequest` the GPR came from, for its Events.
    pub resource: Option<(String, String)>,
    /// When the window ends (for messages); `None` before provisioning.
    pub exit_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Where a provider records its steps (visible as `Gpr.provisioningSteps`).
#[async_trait]
pub trait StepLog: Send + Sync {
    /// Whether `step` finished in an earlier attempt of this job (a resumed job skips it).
    async fn finished_before(&self, step: &str) -> bool;
    async fn started(&self, step: &str);
    async fn finished(&self, step: &str, message: &str);
    async fn failed(&self, step: &str, message: &str);
}

#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// Worth retrying later (API server unreachable, eviction blocked).
    #[error("{}", crate::redaction::scrub_credentials(.0))]
    Transient(String),
    /// Will not work as asked (precheck failed, provider missing).
    #[error("{}", crate::redaction::scrub_credentials(.0))]
    Permanent(String),
}

#[async_trait]
pub trait ClusterProvider: Send + Sync {
    /// Prechecks the nodes and makes them the slice's. Must be idempotent: a new leader
    /// re-runs a step that was in flight when the old one died.
    async fn provision(&self, job: &NodeJob, steps: &dyn StepLog) -> Result<(), ProviderError>;
    /// Takes the nodes back from the slice. Idempotent like `provision`.
    async fn release(&self, job: &NodeJob, steps: &dyn StepLog) -> Result<(), ProviderError>;
}

/// What EGS asks of a Kubernetes cluster's API outside the provider's jobs: the adapter is
/// `egs-api`'s Kubernetes module. Who may ask, and for what, is decided before (the slice and
/// cluster services).
#[async_trait]
pub trait KubeAccess: Send + Sync {
    /// Whether a kubeconfig is self-contained (no credential plugin, no file path) and gives a
    /// usable client configuration; the error says what is wrong without echoing the file (it
    /// holds secrets).
    async fn check_kubeconfig(&self, yaml: &str) -> std::result::Result<(), String>;
    /// Gives slice `slice` access to `namespaces` (the first is home) on cluster `target`,
    /// revoking what was issued before, and hands back a kubeconfig whose token expires in
    /// `expires_in_secs`.
    async fn grant_slice_access(
        &self,
        target: &cluster::Model,
        slice: &str,
        namespaces: &[String],
        secrets_and_exec: bool,
        expires_in_secs: i64,
    ) -> std::result::Result<IssuedKubeconfig, ProviderError>;
    /// Revokes every kubeconfig issued for slice `slice` on cluster `target` (its ServiceAccount
    /// goes, and the tokens bound to it with it); nothing to do is no error.
    async fn revoke_slice_access(&self, target: &cluster::Model, slice: &str, namespaces: &[String]) -> std::result::Result<(), ProviderError>;
    /// Asks cluster `target` who `token` (a ServiceAccount token an agent presents) speaks for,
    /// for `audience` (a Kubernetes TokenReview). A token the cluster does not vouch for is
    /// `authenticated: false`, not an error; an error is the cluster not answering.
    async fn review_token(&self, target: &cluster::Model, token: &str, audience: &str) -> std::result::Result<ReviewedToken, ProviderError>;
    /// The pods bound to node `node` of cluster `target` (a `spec.nodeName` field selector),
    /// with their containers' ids: how the gateway names the pods an agent reports by UID, so
    /// no agent needs to list pods and none can claim another namespace's.
    async fn node_pods(&self, target: &cluster::Model, node: &str) -> std::result::Result<Vec<NodePod>, ProviderError>;
    /// Posts a core/v1 Event in `namespace` of Kubernetes cluster `cluster_id`, about the GPR
    /// resource `resource` in it when the GPR came from one, else about the namespace.
    async fn post_namespace_event(&self, cluster_id: i64, namespace: &str, event: &NamespaceEvent) -> std::result::Result<(), ProviderError>;
}

/// What a cluster said of a token it was asked about (its TokenReview's status).
#[derive(Clone, Debug, Default)]
pub struct ReviewedToken {
    pub authenticated: bool,
    /// `system:serviceaccount:<namespace>:<name>` for a ServiceAccount's token.
    pub username: String,
    /// The asked-for audiences the token is valid for.
    pub audiences: Vec<String>,
    /// The node of the pod the token is bound to (`authentication.kubernetes.io/node-name`).
    pub node_name: Option<String>,
    /// Why the cluster did not vouch for it, as it says.
    pub error: Option<String>,
}

/// A pod on a node, as the cluster names it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodePod {
    pub uid: String,
    pub namespace: String,
    pub name: String,
    /// Container id (without the runtime's `containerd://` scheme) → container name.
    pub containers: std::collections::HashMap<String, String>,
}

/// A Kubernetes Event about a GPR, for one of its slice's namespaces.
#[derive(Clone, Debug)]
pub struct NamespaceEvent {
    /// `GPRProvisioned`, `GPRExitWarning`, …
    pub reason: String,
    pub message: String,
    pub warning: bool,
    /// The name of the GPUProvisioningRequest in this namespace the GPR came from.
    pub resource: Option<String>,
}

/// Sends e-mail (the gateway's SMTP server, when one is configured): the adapter is `egs-api`'s
/// `mail` module.
#[async_trait]
pub trait Mailer: Send + Sync {
    /// Sends one plain-text message to `to`.
    async fn send(&self, to: &str, subject: &str, body: &str) -> crate::outbound::Outcome;
}

/// A slice kubeconfig, shown once: EGS keeps no copy. `Debug` leaves the secret out.
pub struct IssuedKubeconfig {
    /// The kubeconfig YAML, token included.
    pub kubeconfig: String,
    /// `<namespace>/<name>` of the ServiceAccount the token speaks for.
    pub service_account: String,
    /// The namespaces where it may act; the first is the context's namespace.
    pub namespaces: Vec<String>,
    pub expires_at: DateTime<Utc>,
}

impl std::fmt::Debug for IssuedKubeconfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuedKubeconfig")
            .field("kubeconfig", &"<redacted>")
            .field("service_account", &self.service_account)
            .field("namespaces", &self.namespaces)
            .field("expires_at", &self.expires_at)
            .finish()
    }
}

/// The scheduler as the rules ask it: planning questions answered on a planned copy of the
/// core, and a hold on the leader's passes while a change the core must agree with is stored.
/// The leader's loop implements it (`lifecycle::SchedulerHandle`), so the GPR rules the loop
/// calls never import the loop.
#[async_trait]
pub trait Planner: Send + Sync {
    /// The lifecycle clock's now.
    fn now(&self) -> DateTime<Utc>;
    /// "Get wait time" for `request`, which is not stored, asked by `who`: its estimate in every
    /// pool it may use.
    async fn wait_times(&self, who: Principal, db: &DatabaseConnection, request: Request, now: DateTime<Utc>) -> Result<Vec<PoolEstimate>>;
    /// How much longer (up to `up_to` seconds, searched in `step`s) provisioned GPR `gpr`'s
    /// window may grow with no waiting GPR's promise moving later; `None` while it is not in the
    /// scheduler yet.
    async fn extension_room(
        &self,
        who: Principal,
        db: &DatabaseConnection,
        gpr: i64,
        up_to: i64,
        step: i64,
        now: DateTime<Utc>,
    ) -> Result<Option<ExtensionRoom>>;
    /// Which waiting GPRs' promises and expected starts `changes` would move (see
    /// `egs_scheduler::Scheduler::what_if`), asked by `who` of a planned copy; nothing changes.
    async fn what_if(&self, who: Principal, db: &DatabaseConnection, changes: Vec<WhatIfChange>, now: DateTime<Utc>) -> Result<Vec<WhatIfMove>>;
    /// Holds the leader's passes when `gpr`'s window fits `by` more seconds, so the extension is
    /// stored before any pass plans without it; otherwise the room there is, searched in `step`s
    /// with the hold let go.
    async fn hold_for_extension<'a>(
        &'a self,
        who: Principal,
        db: &DatabaseConnection,
        gpr: i64,
        by: i64,
        step: i64,
        now: DateTime<Utc>,
    ) -> Result<ExtensionFit<'a>>;
}

/// Whether an extension fits (see [`Planner::hold_for_extension`]).
pub enum ExtensionFit<'a> {
    /// It fits: store it, then let the hold go.
    Fits(PlannerHold<'a>),
    /// It does not: the room there is (`None`: the GPR is not in the scheduler yet).
    TooLong(Option<ExtensionRoom>),
}

/// A hold on the leader's passes: none plans while it lives.
pub struct PlannerHold<'a>(pub Box<dyn Send + 'a>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_leaves_the_token_out() {
        let issued =
            IssuedKubeconfig { kubeconfig: "token: hunter2".into(), service_account: "a/b".into(), namespaces: vec![], expires_at: Utc::now() };
        assert!(!format!("{issued:?}").contains("hunter2"));
    }
}
