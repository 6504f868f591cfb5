//! An admin-managed GPR shape that auto-GPR (and users) start from.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "gpr_templates")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub name: String,
    pub description: Option<String>,
    pub node_count: i32,
    pub gpus_per_node: Option<i32>,
    pub gpu_shape: Option<String>,
    pub instance_type: Option<String>,
    pub priority: i32,
    pub duration_secs: i64,
    pub idle_timeout_secs: Option<i64>,
    /// Published to every slice (else only to those in `gpr_template_slices`).
    pub all_slices: bool,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
