//! One day's measured GPU time on one cluster, per slice holding it (0: held by none), added to
//! by the usage sampler from the GPUs' latest samples.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "usage_utilisation_daily")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub day: Date,
    pub cluster_id: i64,
    pub slice_id: i64,
    /// GPU-seconds of GPUs in the inventory.
    pub gpu_secs: f64,
    /// GPU-seconds of GPUs whose agent had reported a fresh sample.
    pub reporting_gpu_secs: f64,
    /// Reporting GPU-seconds weighted by the GPUs' utilisation (100 % for a second = 1).
    pub busy_gpu_secs: f64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
