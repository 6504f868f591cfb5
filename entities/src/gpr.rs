//! A GPU Provision Request: N whole nodes of a shape for a strict reserved window.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "gprs")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub slice_id: i64,
    pub name: String,
    pub requester_id: Option<i64>,
    pub node_count: i32,
    /// GPUs wanted on each node; `None` means every GPU of the node.
    pub gpus_per_node: Option<i32>,
    pub min_gpu_memory_mib: Option<i64>,
    /// `None` lets the scheduler choose.
    pub gpu_shape: Option<String>,
    pub instance_type: Option<String>,
    #[sea_orm(column_type = "JsonBinary")]
    pub preferred_cluster_ids: IdList,
    pub priority: i32,
    pub duration_secs: i64,
    pub idle_timeout_secs: Option<i64>,
    pub preemptible: bool,
    pub requeue_on_failure: bool,
    pub earliest_start_at: Option<DateTimeUtc>,
    #[sea_orm(column_type = "JsonBinary")]
    pub labels: Labels,
    pub phase: GprPhase,
    pub reason: Option<String>,
    pub approval: ApprovalState,
    pub approval_reason: Option<String>,
    pub queue_position: Option<i32>,
    pub start_no_later_than: Option<DateTimeUtc>,
    /// The middle of its start range (see `start_p10_at`, `start_p90_at`).
    pub estimated_start_at: Option<DateTimeUtc>,
    /// While it waits: it starts before this one time in ten, and before `start_p90_at` nine
    /// times in ten (calibrated on how past estimates turned out).
    pub start_p10_at: Option<DateTimeUtc>,
    pub start_p90_at: Option<DateTimeUtc>,
    /// The priority points fair share gave it when it was first ranked (fixed for its life).
    pub fair_share_bonus: Option<i32>,
    /// When it was first estimated, and the start foreseen then: its admission is compared with
    /// them to calibrate everyone's start ranges.
    pub foreseen_at: Option<DateTimeUtc>,
    pub foreseen_start_at: Option<DateTimeUtc>,
    pub assigned_cluster_id: Option<i64>,
    pub assigned_instance_type: Option<String>,
    pub assigned_gpu_shape: Option<String>,
    pub provisioned_at: Option<DateTimeUtc>,
    pub exit_at: Option<DateTimeUtc>,
    pub completed_at: Option<DateTimeUtc>,
    pub release_reason: Option<ReleaseReason>,
    pub preempted_by_id: Option<i64>,
    /// While it holds nodes without a window (PROVISIONING) or after it (RELEASING): when that
    /// began (the admission, the start of the release).
    pub holding_since: Option<DateTimeUtc>,
    /// The latest its nodes are back: the scheduler plans other GPRs on it, so a promise made
    /// behind this GPR is kept however long its provisioning or release takes within bounds.
    pub holds_until: Option<DateTimeUtc>,
    /// Timer events already written for the current window (bits: 25 %, 50 %, 75 %, exit
    /// warning), so a restart or a new leader neither loses nor repeats one.
    pub milestones_done: i32,
    /// Seconds `extendGpr` has added to the window in all (counted against the slice's
    /// extension grace).
    pub extended_secs: i64,
    /// An extension, in seconds, waiting for an admin's decision (over the slice's grace).
    pub extension_requested_secs: Option<i64>,
    /// What its workload needs, as the requester described it.
    #[sea_orm(column_type = "JsonBinary", nullable)]
    pub workload: Option<WorkloadHints>,
    /// The template (profile) it was created from, if any; kept after the template is gone.
    pub template_id: Option<i64>,
    /// Optimistic concurrency: every change bumps it; writers name the version they read.
    pub version: i32,
    /// Uid of the `GPUProvisioningRequest` resource this GPR was created from (unique).
    pub source_uid: Option<String>,
    /// `<cluster>/<namespace>/<name>` of that resource.
    pub source_ref: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}

impl Model {
    /// The namespace and name of the `GPUProvisioningRequest` this GPR came from, when it lives
    /// in cluster `cluster` (`source_ref` is `<cluster>/<namespace>/<name>`).
    pub fn source_resource_in(&self, cluster: &str) -> Option<(&str, &str)> {
        let mut parts = self.source_ref.as_deref()?.splitn(3, '/');
        let (from, ns, name) = (parts.next()?, parts.next()?, parts.next()?);
        (from == cluster).then_some((ns, name))
    }
}
