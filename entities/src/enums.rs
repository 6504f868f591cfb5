//! Enums stored as strings. Each doc comment becomes the GraphQL description too.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $value:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, EnumIter, DeriveActiveEnum, Serialize, Deserialize)]
        #[cfg_attr(feature = "graphql", derive(async_graphql::Enum))]
        #[sea_orm(rs_type = "String", db_type = "String(StringLen::N(32))")]
        #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
        pub enum $name {
            $($(#[$vmeta])* #[sea_orm(string_value = $value)] $variant,)+
        }

        impl $name {
            /// The stored (and GraphQL) spelling.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $value,)+ }
            }
        }
    };
}

string_enum! {
    /// Who a token speaks for.
    Role {
        /// Platform team: everything.
        Admin = "ADMIN",
        /// A member of one or more slices.
        User = "USER",
        /// A node agent reporting for one node of one cluster.
        Agent = "AGENT",
    }
}

string_enum! {
    /// A member's rights within one slice.
    SliceRole {
        /// Manages members and policy-free settings of the slice, and all its GPRs.
        Owner = "OWNER",
        /// Creates and manages GPRs in the slice.
        Editor = "EDITOR",
        /// Reads the slice and its GPRs.
        Viewer = "VIEWER",
    }
}

impl SliceRole {
    /// Rank for "at least this role" checks: viewer < editor < owner.
    pub fn rank(self) -> u8 {
        match self {
            Self::Viewer => 0,
            Self::Editor => 1,
            Self::Owner => 2,
        }
    }
}

string_enum! {
    /// How EGS reaches a cluster.
    ClusterProvider {
        /// A Kubernetes API server, through a kubeconfig or in-cluster credentials.
        Kubernetes = "KUBERNETES",
        /// An in-process simulation (demo, tests, benchmarks).
        Simulated = "SIMULATED",
    }
}

string_enum! {
    /// How a Kubernetes cluster keeps other pods off a slice's nodes and steers the slice's
    /// pods onto them.
    PodPlacement {
        /// Namespace annotations read by the `PodNodeSelector` and
        /// `PodTolerationRestriction` admission plugins (enabled on the API server).
        AdmissionPlugins = "ADMISSION_PLUGINS",
        /// EGS's own mutating admission webhook (`/kubernetes/mutate`), for clusters without
        /// those plugins. The namespace annotations are written too.
        Webhook = "WEBHOOK",
    }
}

string_enum! {
    /// Which job a provisioning step belongs to.
    StepOperation {
        /// Handing nodes to the slice.
        Provision = "PROVISION",
        /// Taking them back.
        Release = "RELEASE",
    }
}

string_enum! {
    /// Where a provisioning or release step is.
    StepStatus {
        /// Started and not yet finished (or interrupted; the next leader runs it again).
        Running = "RUNNING",
        Done = "DONE",
        /// Failed on its last attempt; see its message. Transient failures are retried.
        Failed = "FAILED",
    }
}

string_enum! {
    /// Where a cluster is in its registration.
    RegistrationStatus {
        /// Registered, not yet contacted.
        Pending = "PENDING",
        /// Contacted and in use.
        Registered = "REGISTERED",
        /// Contact failed; see the cluster's health.
        Failed = "FAILED",
    }
}

string_enum! {
    /// Health of a cluster or node.
    Health {
        /// Reporting and within limits.
        Healthy = "HEALTHY",
        /// Reporting a fault.
        Unhealthy = "UNHEALTHY",
        /// Its agent has been silent past the threshold.
        Stale = "STALE",
        /// Never reported.
        Unknown = "UNKNOWN",
    }
}

string_enum! {
    /// Whether a node can be handed to a slice.
    NodeState {
        /// Free for the scheduler.
        Available = "AVAILABLE",
        /// Held by a provisioned GPR.
        Reserved = "RESERVED",
        /// Being returned to the pool.
        Draining = "DRAINING",
        /// Taken out of scheduling by an admin.
        Cordoned = "CORDONED",
    }
}

string_enum! {
    /// Where a GPU Provision Request is in its life.
    GprPhase {
        /// Outside the slice policy; waits for an admin to approve or reject it.
        PendingApproval = "PENDING_APPROVAL",
        /// Waiting in the queue for nodes.
        Queued = "QUEUED",
        /// Nodes are being handed to the slice.
        Provisioning = "PROVISIONING",
        /// Nodes belong to the slice until the window ends.
        Provisioned = "PROVISIONED",
        /// Nodes are being taken back.
        Releasing = "RELEASING",
        /// The window ended and the nodes went back.
        Completed = "COMPLETED",
        /// Withdrawn by its requester or an admin before it was provisioned.
        Cancelled = "CANCELLED",
        /// Refused by an admin.
        Rejected = "REJECTED",
        /// Provisioning failed and the GPR is not requeued.
        Failed = "FAILED",
    }
}

impl GprPhase {
    /// Pending GPRs can still be edited or cancelled.
    pub fn is_pending(self) -> bool {
        matches!(self, Self::PendingApproval | Self::Queued)
    }

    /// Terminal phases never change again.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Cancelled | Self::Rejected | Self::Failed)
    }
}

string_enum! {
    /// Why a GPR's nodes were taken back.
    ReleaseReason {
        /// The reserved window ended.
        Expired = "EXPIRED",
        /// The requester released the nodes early.
        EarlyReleased = "EARLY_RELEASED",
        /// All GPUs stayed idle for the idle timeout.
        IdleTimeout = "IDLE_TIMEOUT",
        /// A higher-priority GPR needed the nodes.
        Preempted = "PREEMPTED",
        /// A node failed and could not be replaced.
        NodeFailure = "NODE_FAILURE",
        /// An admin released it.
        Admin = "ADMIN",
        /// An admin evicted it (or drained its node): it goes back to the queue at its priority.
        Evicted = "EVICTED",
    }
}

string_enum! {
    /// Whether a GPR needed, and got, an admin's approval.
    ApprovalState {
        /// Within policy: no approval needed.
        NotRequired = "NOT_REQUIRED",
        /// Over policy: waiting for an admin.
        Pending = "PENDING",
        /// An admin approved it.
        Approved = "APPROVED",
        /// An admin rejected it.
        Rejected = "REJECTED",
    }
}

string_enum! {
    /// What happened to a GPR.
    GprEventKind {
        Created = "CREATED",
        Queued = "QUEUED",
        EstimateChanged = "ESTIMATE_CHANGED",
        ApprovalRequired = "APPROVAL_REQUIRED",
        Approved = "APPROVED",
        Rejected = "REJECTED",
        PriorityChanged = "PRIORITY_CHANGED",
        Edited = "EDITED",
        ProvisioningStarted = "PROVISIONING_STARTED",
        PrecheckPassed = "PRECHECK_PASSED",
        PrecheckFailed = "PRECHECK_FAILED",
        Provisioned = "PROVISIONED",
        Progress25 = "PROGRESS_25",
        Progress50 = "PROGRESS_50",
        Progress75 = "PROGRESS_75",
        ExitWarning = "EXIT_WARNING",
        Releasing = "RELEASING",
        Completed = "COMPLETED",
        EarlyReleased = "EARLY_RELEASED",
        IdleReleased = "IDLE_RELEASED",
        Preempted = "PREEMPTED",
        Requeued = "REQUEUED",
        Failed = "FAILED",
        Cancelled = "CANCELLED",
        NodeReplaced = "NODE_REPLACED",
        /// A node failed inside the window and none was free to replace it.
        Degraded = "DEGRADED",
        /// The window was made longer (`extendGpr`, or an admin approved an extension).
        Extended = "EXTENDED",
        /// An extension over the slice's grace waits for an admin's decision.
        ExtensionRequested = "EXTENSION_REQUESTED",
        /// An admin refused a requested extension; the window stays as it was.
        ExtensionRejected = "EXTENSION_REJECTED",
        /// An admin evicted it (or drained its node): released, then queued again.
        Evicted = "EVICTED",
    }
}

string_enum! {
    /// What an alert is about.
    AlertKind {
        /// A GPU above its temperature threshold.
        OverTemperature = "OVER_TEMPERATURE",
        /// A GPU above its power threshold.
        OverPower = "OVER_POWER",
        /// The driver reported an XID error.
        XidError = "XID_ERROR",
        /// Uncorrectable ECC errors.
        EccError = "ECC_ERROR",
        /// The node's agent has gone silent.
        NodeStale = "NODE_STALE",
        /// A provisioned GPR's GPUs sit idle.
        GprIdle = "GPR_IDLE",
        /// A provisioned GPR's GPUs averaged under the slice policy's utilisation floor for its
        /// period: held, but under-used.
        GprUnderused = "GPR_UNDERUSED",
    }
}

string_enum! {
    /// What happened to an alert.
    AlertAction {
        /// The condition began.
        Raised = "RAISED",
        /// The condition ended (or its subject went away).
        Cleared = "CLEARED",
    }
}

string_enum! {
    /// How urgent an alert is.
    AlertSeverity {
        Info = "INFO",
        Warning = "WARNING",
        Critical = "CRITICAL",
    }
}

string_enum! {
    /// What a GPR's nodes will run.
    WorkloadKind {
        Training = "TRAINING",
        FineTuning = "FINE_TUNING",
        Inference = "INFERENCE",
        /// Notebooks and other hands-on work.
        Interactive = "INTERACTIVE",
    }
}

/// What a GPR's workload needs, as its requester describes it (all optional): shown on the
/// GPR, grouped by in the workloads view, and `rdma` is planned on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, FromJsonQueryResult)]
#[serde(default, rename_all = "camelCase")]
pub struct WorkloadHints {
    /// e.g. `llama-3-70b`.
    pub model: Option<String>,
    /// Parameters, in billions.
    pub model_billions: Option<f64>,
    /// e.g. `pytorch`, `jax`, `vllm`.
    pub framework: Option<String>,
    pub kind: Option<WorkloadKind>,
    /// Its nodes talk over RDMA (InfiniBand or RoCE): a multi-node GPR is planned only in
    /// pools whose every node has it.
    pub rdma: bool,
}

/// A slice's policy, stored as one JSON document so a new rule needs no migration.
/// `None` means "no limit" for every bound.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, FromJsonQueryResult)]
#[serde(default, rename_all = "camelCase")]
pub struct SlicePolicy {
    /// Lowest priority the slice's GPRs may ask for without approval.
    pub priority_min: i32,
    /// Highest priority the slice's GPRs may ask for without approval.
    pub priority_max: i32,
    /// Most GPRs the slice may have pending at once; more need approval.
    pub max_queued_gprs: Option<i32>,
    /// Most nodes one GPR may ask for without approval.
    pub max_nodes_per_gpr: Option<i32>,
    /// Most GPUs (nodes × GPUs per node) one GPR may ask for without approval.
    pub max_gpus_per_gpr: Option<i32>,
    /// Longest reserved window, in seconds; longer GPRs are rejected.
    pub max_duration_secs: Option<i64>,
    /// GPU shapes the slice may ask for; empty means any.
    pub allowed_shapes: Vec<String>,
    /// Idle timeout given to GPRs that do not set one, in seconds.
    pub default_idle_timeout_secs: Option<i64>,
    /// Longest idle timeout a GPR may set, in seconds; also forbids turning it off.
    pub max_idle_timeout_secs: Option<i64>,
    /// Whether this slice's GPRs may be preempted by higher-priority ones.
    pub auto_eviction: bool,
    /// Whether an evicted GPR goes back to the queue.
    pub requeue_on_eviction: bool,
    /// Whether a GPR whose provisioning failed goes back to the queue.
    pub requeue_on_failure: bool,
    /// GPU-hours the slice may use per quota period; over it, GPRs need approval.
    pub gpu_hour_quota: Option<i64>,
    /// Length of the quota period, in seconds.
    pub quota_period_secs: i64,
    /// Whether the slice's kubeconfigs may read Secrets and exec, attach or port-forward into
    /// pods (off by default: a leaked kubeconfig then cannot read credentials or get a shell).
    pub kubeconfig_secrets_and_exec: bool,
    /// Seconds a GPR's window may be extended in all without an admin's approval (always only
    /// while no waiting GPR's promise moves later).
    pub extension_grace_secs: i64,
    /// Warn (`GPR_UNDERUSED`) when a provisioned GPR's GPUs average under this utilisation, in
    /// percent, over `underuse_period_secs`; `None`: no such warning.
    pub underuse_below_percent: Option<i32>,
    /// The period the utilisation is averaged over.
    pub underuse_period_secs: i64,
}

impl Default for SlicePolicy {
    fn default() -> Self {
        Self {
            priority_min: 1,
            priority_max: 200,
            max_queued_gprs: None,
            max_nodes_per_gpr: None,
            max_gpus_per_gpr: None,
            max_duration_secs: None,
            allowed_shapes: Vec::new(),
            default_idle_timeout_secs: None,
            max_idle_timeout_secs: None,
            auto_eviction: true,
            requeue_on_eviction: true,
            requeue_on_failure: true,
            gpu_hour_quota: None,
            quota_period_secs: 30 * 24 * 3600,
            kubeconfig_secrets_and_exec: false,
            // "A small grace period" (seed 001): half an hour without asking anyone.
            extension_grace_secs: 30 * 60,
            underuse_below_percent: None,
            underuse_period_secs: 3600,
        }
    }
}

/// Free-form `key → value` labels.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, FromJsonQueryResult)]
pub struct Labels(pub BTreeMap<String, String>);

/// A list of row ids kept in one JSON column (ordered preferences, small).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, FromJsonQueryResult)]
pub struct IdList(pub Vec<i64>);

/// The slices and roles a token is limited to; `None` on the token means "whatever the user's
/// memberships allow".
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, FromJsonQueryResult)]
pub struct SliceScopes(pub Vec<SliceScope>);

/// One slice a token may act in, and the most it may do there.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SliceScope {
    pub slice_id: i64,
    pub role: SliceRole,
}

string_enum! {
    /// Where a notification channel sends.
    NotificationKind {
        /// A Slack incoming webhook (`https://hooks.slack.com/services/…`).
        Slack = "SLACK",
        /// Any HTTPS endpoint: a JSON body signed with the channel's key (`X-EGS-Signature`).
        Webhook = "WEBHOOK",
        /// An e-mail address, through the gateway's SMTP server (`EGS_SMTP_URL`).
        Email = "EMAIL",
    }
}

string_enum! {
    /// A moment in a GPR's life a notification channel can be told of.
    Milestone {
        /// It joined the queue.
        Queued = "QUEUED",
        /// Its nodes are the slice's.
        Provisioned = "PROVISIONED",
        /// A quarter of its window has passed.
        Progress25 = "PROGRESS_25",
        /// Half of its window has passed.
        Progress50 = "PROGRESS_50",
        /// Three quarters of its window have passed.
        Progress75 = "PROGRESS_75",
        /// Its window ends soon.
        ExitWarning = "EXIT_WARNING",
        /// Its nodes went back (the window ended, it was released early or went idle).
        Released = "RELEASED",
        /// A higher-priority GPR took its nodes.
        Preempted = "PREEMPTED",
        /// Its promised or expected start moved by more than the channel's threshold.
        EstimateMoved = "ESTIMATE_MOVED",
        /// Provisioning failed.
        Failed = "FAILED",
        /// It or an extension waits for an admin, or an admin decided.
        Approval = "APPROVAL",
    }
}

string_enum! {
    /// Where a notification stands.
    DeliveryState {
        /// Waiting to be sent, or to be tried again.
        Pending = "PENDING",
        /// The receiver took it.
        Delivered = "DELIVERED",
        /// Given up: refused, or every attempt failed.
        Failed = "FAILED",
    }
}

string_enum! {
    /// Where a user's request for a workspace (slice) stands.
    WorkspaceRequestState {
        /// Waiting for an admin.
        Pending = "PENDING",
        /// An admin approved it: the slice exists, with the requester as its owner.
        Approved = "APPROVED",
        /// An admin refused it, saying why.
        Rejected = "REJECTED",
        /// The requester took it back.
        Withdrawn = "WITHDRAWN",
    }
}

/// Namespaces a workspace request asks for, one per cluster and name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, FromJsonQueryResult)]
pub struct RequestedNamespaces(pub Vec<RequestedNamespace>);

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestedNamespace {
    pub cluster_id: i64,
    pub name: String,
}
