//! A person (or service account) that holds tokens and slice memberships.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "users")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    #[sea_orm(unique)]
    pub name: String,
    pub email: Option<String>,
    pub role: Role,
    pub created_at: DateTimeUtc,
    /// Goes up whenever the user loses slice access; live subscriptions started before end.
    pub access_version: i64,
    /// The OpenID Connect identity this user signs in as (issuer URL and subject), if any.
    pub oidc_issuer: Option<String>,
    pub oidc_subject: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
