//! An admin's rule for single sign-on: members of an identity-provider group get a role in a
//! slice, or the admin role, when they sign in.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "sso_group_rules")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The group's name as the identity provider's `groups` claim gives it.
    pub group_name: String,
    /// With `slice_role`: the slice membership the group grants.
    pub slice_id: Option<i64>,
    pub slice_role: Option<SliceRole>,
    /// The group makes its members admins.
    pub grants_admin: bool,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
