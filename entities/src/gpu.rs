//! One GPU of a node.

use sea_orm::entity::prelude::*;

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
    pub last_sample_at: Option<DateTimeUtc>,
    /// Last sample showing work; the idle timeout counts from here.
    pub last_busy_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
