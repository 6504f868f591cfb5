//! A user's role in a slice.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "slice_members")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub slice_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub user_id: i64,
    pub role: SliceRole,
    pub created_at: DateTimeUtc,
    /// Granted by a single sign-on group rule: a later sign-in whose groups no longer match
    /// takes it back (a membership an owner or admin gave is never touched).
    pub granted_by_sso: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
