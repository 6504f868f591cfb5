//! The admins' policy for new users' private workspaces (one row, id 1).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "personal_workspace_policy")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: i64,
    pub enabled: bool,
    /// Where the workspace's namespace is made.
    pub cluster_id: i64,
    pub max_nodes_per_gpr: Option<i32>,
    pub gpu_hour_quota: Option<i64>,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
