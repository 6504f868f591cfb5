//! What GPR queries and mutations take.

use super::spec::{GprAsk, GprChanges, GprSpec};
use super::types::Label;
use crate::ids::{self, Kind};
use crate::scalars::Duration;
use async_graphql::{ID, InputObject, MaybeUndefined};
use chrono::{DateTime, Utc};
use egs_domain::error::{Error, Result};
use std::collections::BTreeMap;

/// What a GPR asks for and from when: everything its wait depends on. `waitTimeEstimates`
/// takes it alone (a GPR you are thinking of submitting); `createGpr` takes it with the rest.
#[derive(InputObject)]
pub struct WaitTimeInput {
    pub slice_id: ID,
    /// A template (profile) published to the slice: what this input leaves out is taken from
    /// it (`gprTemplates(sliceId:)` lists them).
    pub template_id: Option<ID>,
    /// Whole nodes, all from one pool; required without a template.
    pub node_count: Option<i32>,
    /// GPUs needed on each node; omit for every GPU of the node (or the template's).
    pub gpus_per_node: Option<i32>,
    pub min_gpu_memory_mib: Option<i64>,
    /// Omit to let the scheduler pick (a wait-time answer then covers every shape the slice
    /// may use), or for the template's.
    pub gpu_shape: Option<String>,
    /// Omit to let the scheduler pick, or for the template's.
    pub instance_type: Option<String>,
    /// Omit for any of the slice's clusters.
    #[graphql(default)]
    pub preferred_cluster_ids: Vec<ID>,
    /// 1–300, higher runs first; omit for the template's, or 101.
    pub priority: Option<i32>,
    /// The strict reserved window, e.g. `6h` or `PT6H`; required without a template.
    pub duration: Option<Duration>,
    /// Reserve ahead: not before this time.
    pub earliest_start_at: Option<DateTime<Utc>>,
    /// What the workload needs; `rdma` limits a multi-node GPR to pools that have it.
    pub workload: Option<WorkloadHintsInput>,
}

/// What a GPR's workload needs (all optional), shown with it and grouped by in the workloads
/// view.
#[derive(InputObject, Clone, Default)]
pub struct WorkloadHintsInput {
    /// e.g. `llama-3-70b`.
    pub model: Option<String>,
    /// Parameters, in billions.
    pub model_billions: Option<f64>,
    /// e.g. `pytorch`, `jax`, `vllm`.
    pub framework: Option<String>,
    pub kind: Option<egs_entities::WorkloadKind>,
    /// The nodes talk over RDMA (InfiniBand or RoCE): a multi-node GPR waits for a pool whose
    /// every node has it.
    #[graphql(default)]
    pub rdma: bool,
}

impl From<WorkloadHintsInput> for egs_entities::WorkloadHints {
    fn from(w: WorkloadHintsInput) -> Self {
        Self { model: w.model, model_billions: w.model_billions, framework: w.framework, kind: w.kind, rdma: w.rdma }
    }
}

#[derive(InputObject)]
pub struct CreateGprInput {
    /// What it asks for and from when, as `waitTimeEstimates` takes it.
    #[graphql(flatten)]
    pub ask: WaitTimeInput,
    /// A DNS label, e.g. `llama-finetune-3`.
    pub name: String,
    /// Release after the GPUs stay idle this long; defaults to the template's, else the slice
    /// policy's.
    pub idle_timeout: Option<Duration>,
    #[graphql(default = true)]
    pub preemptible: bool,
    /// Defaults to the slice policy.
    pub requeue_on_failure: Option<bool>,
    #[graphql(default)]
    pub labels: Vec<Label>,
}

#[derive(InputObject)]
pub struct UpdateGprInput {
    pub id: ID,
    /// The version you read; the update is refused if the GPR changed since.
    pub version: i32,
    pub name: Option<String>,
    pub node_count: Option<i32>,
    pub gpus_per_node: MaybeUndefined<i32>,
    pub min_gpu_memory_mib: MaybeUndefined<i64>,
    pub gpu_shape: MaybeUndefined<String>,
    pub instance_type: MaybeUndefined<String>,
    pub preferred_cluster_ids: Option<Vec<ID>>,
    pub priority: Option<i32>,
    pub duration: Option<Duration>,
    pub idle_timeout: MaybeUndefined<Duration>,
    pub preemptible: Option<bool>,
    pub earliest_start_at: MaybeUndefined<DateTime<Utc>>,
    pub labels: Option<Vec<Label>>,
}

#[derive(InputObject)]
pub struct GprActionInput {
    pub id: ID,
    /// When given, the action is refused if the GPR changed since this version.
    pub version: Option<i32>,
}

#[derive(InputObject)]
pub struct EvictGprInput {
    pub id: ID,
    /// Why (1–500 characters): its owner reads it.
    pub reason: String,
    /// When given, refused if the GPR changed since this version.
    pub version: Option<i32>,
}

#[derive(InputObject)]
pub struct SetGprPriorityInput {
    pub id: ID,
    pub priority: i32,
    pub version: Option<i32>,
}

#[derive(InputObject)]
pub struct ExtendGprInput {
    pub id: ID,
    /// How much longer the window should be, e.g. `30m` or `PT2H` (whole minutes count).
    pub by: crate::scalars::Duration,
    /// When given, refused if the GPR changed since this version.
    pub version: Option<i32>,
}

#[derive(InputObject)]
pub struct GprDecisionInput {
    pub id: ID,
    /// Recorded in the GPR's events.
    pub reason: Option<String>,
    pub version: Option<i32>,
}

pub(super) fn decode_clusters(field: &str, list: &[ID]) -> Result<Vec<i64>> {
    list.iter().enumerate().map(|(i, id)| ids::decode(&format!("{field}.{i}"), id, Kind::Cluster)).collect()
}

pub(super) fn labels_map(labels: Vec<Label>) -> Result<BTreeMap<String, String>> {
    let mut map = BTreeMap::new();
    for label in labels {
        if map.insert(label.key.clone(), label.value).is_some() {
            return Err(Error::invalid("labels", format!("label `{}` appears twice", label.key)));
        }
    }
    Ok(map)
}

impl CreateGprInput {
    /// The request as the service takes it, before its template fills it in; ids decoded,
    /// labels checked.
    pub fn into_ask(self) -> Result<GprAsk> {
        let mut ask = self.ask.into_ask()?;
        ask.rest = GprSpec {
            name: self.name,
            preemptible: self.preemptible,
            requeue_on_failure: self.requeue_on_failure,
            labels: labels_map(self.labels)?,
            ..ask.rest
        };
        ask.idle_timeout_secs = self.idle_timeout.map(Duration::secs);
        Ok(ask)
    }
}

impl UpdateGprInput {
    /// The edits as the service takes them; absent fields stay as stored.
    pub fn into_changes(self) -> Result<GprChanges> {
        Ok(GprChanges {
            name: self.name,
            node_count: self.node_count,
            gpus_per_node: self.gpus_per_node.into(),
            min_gpu_memory_mib: self.min_gpu_memory_mib.into(),
            gpu_shape: self.gpu_shape.into(),
            instance_type: self.instance_type.into(),
            preferred_cluster_ids: self.preferred_cluster_ids.as_deref().map(|list| decode_clusters("preferredClusterIds", list)).transpose()?,
            priority: self.priority,
            duration_secs: self.duration.map(Duration::secs),
            idle_timeout_secs: Option::<Option<Duration>>::from(self.idle_timeout).map(|t| t.map(Duration::secs)),
            preemptible: self.preemptible,
            earliest_start_at: self.earliest_start_at.into(),
            labels: self.labels.map(labels_map).transpose()?,
        })
    }
}

impl WaitTimeInput {
    /// The GPR being thought of, as `createGpr` would take it (defaults where it asks nothing),
    /// before its template fills it in.
    pub fn into_ask(self) -> Result<GprAsk> {
        let rest = GprSpec {
            slice_id: ids::decode("sliceId", &self.slice_id, Kind::Slice)?,
            name: "wait-time".into(),
            node_count: 0,
            gpus_per_node: None,
            min_gpu_memory_mib: self.min_gpu_memory_mib,
            gpu_shape: None,
            instance_type: None,
            preferred_cluster_ids: decode_clusters("preferredClusterIds", &self.preferred_cluster_ids)?,
            priority: 0,
            duration_secs: 0,
            idle_timeout_secs: None,
            preemptible: true,
            requeue_on_failure: None,
            earliest_start_at: self.earliest_start_at,
            labels: BTreeMap::new(),
            source: None,
            template_id: None,
            workload: self.workload.map(Into::into),
        };
        Ok(GprAsk {
            rest,
            template_id: self.template_id.as_ref().map(|id| ids::decode("templateId", id, Kind::GprTemplate)).transpose()?,
            node_count: self.node_count,
            gpus_per_node: self.gpus_per_node,
            gpu_shape: self.gpu_shape,
            instance_type: self.instance_type,
            priority: self.priority,
            duration_secs: self.duration.map(Duration::secs),
            idle_timeout_secs: None,
        })
    }
}
