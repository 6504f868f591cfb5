//! A user's request for a workspace (slice), and an admin's decision on it.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "workspace_requests")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub requester_id: i64,
    /// The slice name asked for (a DNS label).
    pub name: String,
    pub purpose: String,
    pub namespaces: RequestedNamespaces,
    /// The size asked for: most nodes per GPR, GPU-hours per quota period.
    pub max_nodes_per_gpr: Option<i32>,
    pub gpu_hour_quota: Option<i64>,
    pub state: WorkspaceRequestState,
    pub decided_by: Option<String>,
    pub decision_reason: Option<String>,
    /// The slice an approval created.
    pub slice_id: Option<i64>,
    pub created_at: DateTimeUtc,
    pub decided_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
