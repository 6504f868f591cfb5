//! A maintenance window planned ahead: a node out of service from `starts_at` to `ends_at`.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "maintenance_windows")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub node_id: i64,
    pub starts_at: DateTimeUtc,
    pub ends_at: DateTimeUtc,
    /// What the owners of GPRs it moves read.
    pub reason: String,
    pub created_by: String,
    pub created_at: DateTimeUtc,
    /// When the leader cordoned the node for it.
    pub started_at: Option<DateTimeUtc>,
    /// When the leader gave the node back (or the window was cancelled while it ran).
    pub finished_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
