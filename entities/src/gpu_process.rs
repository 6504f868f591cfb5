//! A process using a GPU, with the Kubernetes pod it belongs to, as the node's agent last
//! reported it (`reportGpuWorkloads` replaces a node's rows).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "gpu_processes")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub gpu_id: i64,
    /// The GPU's node (denormalised: a node's rows are replaced and read together).
    pub node_id: i64,
    /// In the host's PID namespace.
    pub pid: i64,
    /// GPU memory it holds, MiB, when the driver says.
    pub used_memory_mib: Option<f64>,
    /// Null for a process outside any pod.
    pub pod_uid: Option<String>,
    /// Null when the agent could not list the node's pods (the UID alone is known).
    pub pod_namespace: Option<String>,
    pub pod_name: Option<String>,
    pub container: Option<String>,
    pub reported_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
