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
    /// The template (profile) it was made from, if any.
    pub template_id: Option<i64>,
    /// What its workload needs, as the requester describes it.
    pub workload: Option<egs_entities::WorkloadHints>,
}

/// A new GPR as asked for, before the template it names fills in what it left out.
#[derive(Clone, Debug)]
pub struct GprAsk {
    /// Everything a template does not set (the fields below at placeholder values).
    pub rest: GprSpec,
    pub template_id: Option<i64>,
    pub node_count: Option<i32>,
    pub gpus_per_node: Option<i32>,
    pub gpu_shape: Option<String>,
    pub instance_type: Option<String>,
    pub priority: Option<i32>,
    pub duration_secs: Option<i64>,
    pub idle_timeout_secs: Option<i64>,
}

impl GprAsk {
    /// The GPR asked for: what was given, the rest from `template` (the one `template_id`
    /// names). Without a template, `nodeCount` and `duration` must be given.
    pub fn resolve(self, template: Option<&egs_entities::gpr_template::Model>) -> crate::error::Result<GprSpec> {
        let Self { rest, template_id, node_count, gpus_per_node, gpu_shape, instance_type, priority, duration_secs, idle_timeout_secs } = self;
        let spec = match template {
            Some(t) => GprSpec {
                node_count: node_count.unwrap_or(t.node_count),
                gpus_per_node: gpus_per_node.or(t.gpus_per_node),
                gpu_shape: gpu_shape.or_else(|| t.gpu_shape.clone()),
                instance_type: instance_type.or_else(|| t.instance_type.clone()),
                priority: priority.unwrap_or(t.priority),
                duration_secs: duration_secs.unwrap_or(t.duration_secs),
                idle_timeout_secs: idle_timeout_secs.or(t.idle_timeout_secs),
                template_id: Some(t.id),
                ..rest
            },
            None => {
                let mut errors = Vec::new();
                let required = |field: &str| crate::error::UserError::invalid(field, "required unless templateId names a template to take it from");
                if node_count.is_none() {
                    errors.push(required("nodeCount"));
                }
                if duration_secs.is_none() {
                    errors.push(required("duration"));
                }
                crate::validate::finish(errors)?;
                debug_assert!(template_id.is_none(), "a named template is resolved before this");
                GprSpec {
                    node_count: node_count.unwrap_or_default(),
                    gpus_per_node,
                    gpu_shape,
                    instance_type,
                    priority: priority.unwrap_or(DEFAULT_PRIORITY),
                    duration_secs: duration_secs.unwrap_or_default(),
                    idle_timeout_secs,
                    template_id: None,
                    ..rest
                }
            }
        };
        Ok(spec)
    }
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

impl GprSpec {
    /// What a stored GPR asks for (its plan and phase aside).
    pub fn of_stored(g: &egs_entities::gpr::Model) -> Self {
        Self {
            slice_id: g.slice_id,
            name: g.name.clone(),
            node_count: g.node_count,
            gpus_per_node: g.gpus_per_node,
            min_gpu_memory_mib: g.min_gpu_memory_mib,
            gpu_shape: g.gpu_shape.clone(),
            instance_type: g.instance_type.clone(),
            preferred_cluster_ids: g.preferred_cluster_ids.0.clone(),
            priority: g.priority,
            duration_secs: g.duration_secs,
            idle_timeout_secs: g.idle_timeout_secs,
            preemptible: g.preemptible,
            requeue_on_failure: Some(g.requeue_on_failure),
            earliest_start_at: g.earliest_start_at,
            labels: g.labels.0.clone(),
            source: None,
            template_id: g.template_id,
            workload: g.workload.clone(),
        }
    }

    /// This ask with an edit applied: each field the edit names replaces this one's.
    pub fn changed_by(self, changes: &GprChanges) -> Self {
        let GprChanges {
            name,
            node_count,
            gpus_per_node,
            min_gpu_memory_mib,
            gpu_shape,
            instance_type,
            preferred_cluster_ids,
            priority,
            duration_secs,
            idle_timeout_secs,
            preemptible,
            earliest_start_at,
            labels,
        } = changes.clone();
        Self {
            name: name.unwrap_or(self.name),
            node_count: node_count.unwrap_or(self.node_count),
            gpus_per_node: gpus_per_node.unwrap_or(self.gpus_per_node),
            min_gpu_memory_mib: min_gpu_memory_mib.unwrap_or(self.min_gpu_memory_mib),
            gpu_shape: gpu_shape.unwrap_or(self.gpu_shape),
            instance_type: instance_type.unwrap_or(self.instance_type),
            preferred_cluster_ids: preferred_cluster_ids.unwrap_or(self.preferred_cluster_ids),
            priority: priority.unwrap_or(self.priority),
            duration_secs: duration_secs.unwrap_or(self.duration_secs),
            idle_timeout_secs: idle_timeout_secs.unwrap_or(self.idle_timeout_secs),
            preemptible: preemptible.unwrap_or(self.preemptible),
            earliest_start_at: earliest_start_at.unwrap_or(self.earliest_start_at),
            labels: labels.unwrap_or(self.labels),
            ..self
        }
    }

    /// The one mapping from a GPR to what the scheduler plans: `id` is the GPR's (or -1 for
    /// an ask not yet stored), `submitted_at` its queue position, `requeue` whether its slice
    /// sends it back to the queue when evicted.
    pub fn scheduler_request(&self, id: i64, submitted_at: DateTime<Utc>, requeue: bool) -> egs_scheduler::Request {
        egs_scheduler::Request {
            id,
            slice: self.slice_id,
            nodes: self.node_count.max(1) as u32,
            gpus_per_node: self.gpus_per_node.map(|g| g.max(0) as u32),
            min_gpu_memory_mib: self.min_gpu_memory_mib,
            gpu_shape: self.gpu_shape.clone(),
            instance_type: self.instance_type.clone(),
            preferred_clusters: self.preferred_cluster_ids.clone(),
            priority: self.priority,
            duration: self.duration_secs,
            earliest_start: self.earliest_start_at.map(|t| t.timestamp()),
            submitted_at: submitted_at.timestamp(),
            preemptible: self.preemptible,
            requeue,
            idle_timeout: self.idle_timeout_secs,
            rdma: self.workload.as_ref().is_some_and(|w| w.rdma),
        }
    }
}
