//! An issued JWT, by its id (`jti`), so it can be listed and revoked. The token text is never stored.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "access_tokens")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub jti: String,
    pub name: String,
    pub role: Role,
    pub user_id: Option<i64>,
    /// Agent tokens only: the cluster and node the agent may report for.
    pub cluster_id: Option<i64>,
    pub node_name: Option<String>,
    /// When set, the token is limited to these slices and roles.
    #[sea_orm(column_type = "JsonBinary", nullable)]
    pub slice_scopes: Option<SliceScopes>,
    pub created_by: Option<i64>,
    /// The token this one was created with, if any: it expires no later and is revoked with it.
    pub parent_id: Option<i64>,
    pub created_at: DateTimeUtc,
    pub expires_at: DateTimeUtc,
    pub revoked_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
