//! One GPU of a node, with its latest sample from the node agent.

use sea_orm::entity::prelude::*;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "gpus")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub node_id: i64,
    #[sea_orm(unique)]
    pub uuid: String,
    pub gpu_index: i32,
    pub model: String,
    pub memory_mib: i64,
    pub mig_enabled: bool,
    /// When the latest sample was taken (the `latest_*` columns are that sample).
    pub last_sample_at: Option<DateTimeUtc>,
    /// Last sample showing work; the idle timeout counts from here.
    pub last_busy_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    /// GPU utilisation, %.
    pub latest_util: Option<f64>,
    /// Memory-controller utilisation, %.
    pub latest_mem_util: Option<f64>,
    pub latest_mem_used_mib: Option<f64>,
    pub latest_temperature_c: Option<f64>,
    pub latest_power_w: Option<f64>,
    pub latest_sm_clock_mhz: Option<f64>,
    /// XID error codes the driver reported with the latest sample.
    pub latest_xid_errors: Option<XidErrors>,
    /// ECC error counts as the driver reports them (volatile counters).
    pub latest_ecc_corrected: Option<i64>,
    pub latest_ecc_uncorrected: Option<i64>,
}

/// XID error codes, stored as one small JSON list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, FromJsonQueryResult)]
pub struct XidErrors(pub Vec<i32>);

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
