//! What the Prometheus exporter reads (`/metrics` under dcgm-exporter's names): the latest
//! sample of every GPU that reported, on nodes that are not `STALE`, with its node, cluster and
//! holder, in one statement whatever the GPU count.

use chrono::{DateTime, Utc};
use egs_entities::gpu::XidErrors;
use egs_entities::{Health, cluster, gpr, gpr_node, gpu, node, slice};
use sea_orm::{
    ColumnTrait, Condition, DatabaseConnection, DbErr, EntityTrait, FromQueryResult, Iterable, JoinType, QueryFilter, QueryOrder, QuerySelect,
};

/// The latest sample of one GPU, with what its labels name.
#[derive(Debug, FromQueryResult)]
pub struct GpuRow {
    pub uuid: String,
    pub gpu_index: i32,
    pub model: String,
    pub memory_mib: i64,
    pub last_sample_at: DateTime<Utc>,
    pub latest_util: Option<f64>,
    pub latest_mem_util: Option<f64>,
    pub latest_mem_used_mib: Option<f64>,
    pub latest_temperature_c: Option<f64>,
    pub latest_power_w: Option<f64>,
    pub latest_sm_clock_mhz: Option<f64>,
    pub latest_xid_errors: Option<XidErrors>,
    pub latest_ecc_corrected: Option<i64>,
    pub latest_ecc_uncorrected: Option<i64>,
    pub node_name: String,
    pub driver_version: Option<String>,
    pub cluster_name: String,
    pub gpr_id: Option<i64>,
    pub gpr_name: Option<String>,
    pub slice_id: Option<i64>,
    pub slice_name: Option<String>,
    /// When the node was handed to the GPR holding it.
    pub assigned_at: Option<DateTime<Utc>>,
}

/// The latest samples of the GPUs that reported, on nodes that are not `STALE` at `now`, with
/// their node, cluster and holder: one statement, by cluster, node and GPU index.
pub async fn live_gpus(db: &DatabaseConnection, now: DateTime<Utc>) -> Result<Vec<GpuRow>, DbErr> {
    // Every health but STALE, as `nodes(filter: { health })` reads it.
    let not_stale =
        Health::iter().filter(|h| *h != Health::Stale).fold(Condition::any(), |any, h| any.add(crate::inventory::liveness::health_condition(h, now)));
    gpu::Entity::find()
        .select_only()
        .columns([gpu::Column::Uuid, gpu::Column::GpuIndex, gpu::Column::Model, gpu::Column::MemoryMib])
        .columns(super::sample::StoredSample::COLUMNS)
        .column_as(node::Column::Name, "node_name")
        .column_as(node::Column::DriverVersion, "driver_version")
        .column_as(cluster::Column::Name, "cluster_name")
        .column_as(node::Column::AllocatedGprId, "gpr_id")
        .column_as(gpr::Column::Name, "gpr_name")
        .column_as(gpr::Column::SliceId, "slice_id")
        .column_as(slice::Column::Name, "slice_name")
        .column_as(gpr_node::Column::AssignedAt, "assigned_at")
        .join(JoinType::InnerJoin, gpu::Entity::belongs_to(node::Entity).from(gpu::Column::NodeId).to(node::Column::Id).into())
        .join(JoinType::InnerJoin, node::Entity::belongs_to(cluster::Entity).from(node::Column::ClusterId).to(cluster::Column::Id).into())
        .join(JoinType::LeftJoin, node::Entity::belongs_to(gpr::Entity).from(node::Column::AllocatedGprId).to(gpr::Column::Id).into())
        .join(JoinType::LeftJoin, gpr::Entity::belongs_to(slice::Entity).from(gpr::Column::SliceId).to(slice::Column::Id).into())
        .join(
            JoinType::LeftJoin,
            node::Entity::belongs_to(gpr_node::Entity)
                .from((node::Column::AllocatedGprId, node::Column::Id))
                .to((gpr_node::Column::GprId, gpr_node::Column::NodeId))
                .into(),
        )
        .filter(gpu::Column::LastSampleAt.is_not_null())
        .filter(not_stale)
        .order_by_asc(cluster::Column::Name)
        .order_by_asc(node::Column::Name)
        .order_by_asc(gpu::Column::GpuIndex)
        .into_model::<GpuRow>()
        .all(db)
        .await
}
