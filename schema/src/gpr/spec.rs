//! A GPR as the services take it: what a new one asks for, what an edit changes, where a
//! controller's comes from, and the bounds every GPR keeps.

use chrono::{DateTime, Utc};
use std::collections::BTreeMap;

pub const MIN_PRIORITY: i32 = 1;
pub const MAX_PRIORITY: i32 = crate::slice::service::MAX_PRIORITY;
/// Priority of a GPR that names none: the bottom of the medium band.
pub const DEFAULT_PRIORITY: i32 = 101;
pub const MAX_NODES_PER_GPR: i32 = 1000;
/// Shortest reserved window; shorter ones cost more in provisioning than they give.
pub const MIN_DURATION_SECS: i64 = 60;
/// Longest reserved window regardless of policy.
pub const MAX_DURATION_SECS: i64 = 366 * 24 * 3600;
pub const MAX_LABELS: usize = 32;
/// Most clusters a GPR may prefer.
pub const MAX_PREFERRED_CLUSTERS: usize = 32;
/// How far ahead an earliest start may be.
pub const MAX_EARLIEST_START_SECS: i64 = 366 * 24 * 3600;
/// How far in the past an `earliestStartAt` may be (clock skew between client and server).
pub(super) const EARLIEST_START_SKEW_SECS: i64 = 60;

/// What a new GPR asks for.
#[derive(Clone, Debug)]
pub struct GprSpec {
    pub slice_id: i64,
    pub name: String,
    pub node_count: i32,
    pub gpus_per_node: Option<i32>,
    pub min_gpu_memory_mib: Option<i64>,
    pub gpu_shape: Option<String>,
    pub instance_type: Option<String>,
    pub preferred_cluster_ids: Vec<i64>,
    pub priority: i32,
    pub duration_secs: i64,
    pub idle_timeout_secs: Option<i64>,
    pub preemptible: bool,
    pub requeue_on_failure: Option<bool>,
    pub earliest_start_at: Option<DateTime<Utc>>,
    pub labels: BTreeMap<String, String>,
    /// The `GPUProvisioningRequest` resource it comes from, if any.
    pub source: Option<GprSource>,
}

/// Where a GPR created by a controller comes from.
#[derive(Clone, Debug)]
pub struct GprSource {
    /// The resource's uid: at most one GPR per uid, so a controller retrying a create after a
    /// crash gets the GPR it created before.
    pub uid: String,
    /// `<cluster>/<namespace>/<name>`.
    pub reference: String,
}

/// Changes to a pending GPR; `None` keeps a field.
#[derive(Clone, Debug, Default)]
pub struct GprChanges {
    pub name: Option<String>,
    pub node_count: Option<i32>,
    pub gpus_per_node: Option<Option<i32>>,
    pub min_gpu_memory_mib: Option<Option<i64>>,
    pub gpu_shape: Option<Option<String>>,
    pub instance_type: Option<Option<String>>,
    pub preferred_cluster_ids: Option<Vec<i64>>,
    pub priority: Option<i32>,
    pub duration_secs: Option<i64>,
    pub idle_timeout_secs: Option<Option<i64>>,
    pub preemptible: Option<bool>,
    pub earliest_start_at: Option<Option<DateTime<Utc>>>,
    pub labels: Option<BTreeMap<String, String>>,
}
