//! A whole GPU node in a cluster: the unit EGS hands to a slice.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "nodes")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub cluster_id: i64,
    pub name: String,
    pub instance_type: String,
    pub gpu_shape: String,
    pub gpus_per_node: i32,
    /// `topology.kubernetes.io/zone` of a discovered node.
    pub zone: Option<String>,
    pub gpu_memory_mib: i64,
    pub health: Health,
    pub state: NodeState,
    /// The provisioned GPR holding this node, if any.
    pub allocated_gpr_id: Option<i64>,
    pub power_threshold_watts: Option<f64>,
    pub temperature_threshold_celsius: Option<f64>,
    pub driver_version: Option<String>,
    /// The CUDA version the node's driver supports (`major.minor`), as its agent reports it.
    pub cuda_version: Option<String>,
    /// The node has an RDMA network (InfiniBand or RoCE) to its pool's other nodes.
    pub rdma: bool,
    pub last_heartbeat_at: Option<DateTimeUtc>,
    /// Set while an admin has the node out of scheduling (`cordonNode`, `drainNode`).
    pub cordoned_at: Option<DateTimeUtc>,
    pub cordon_reason: Option<String>,
    pub cordoned_by: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
