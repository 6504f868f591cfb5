//! How long the GPRs that started on one day waited, by slice, shape and priority.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "usage_wait_daily")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub day: Date,
    pub slice_id: i64,
    pub gpu_shape: String,
    pub priority: i32,
    pub started: i32,
    pub wait_total_secs: i64,
    pub wait_max_secs: i64,
    /// Starts that waited at most 15 minutes, 1 hour, 4 hours and 24 hours.
    pub within_15m: i32,
    pub within_1h: i32,
    pub within_4h: i32,
    pub within_24h: i32,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
