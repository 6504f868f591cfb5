//! A namespace on one cluster that belongs to a slice (one slice per namespace).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "slice_namespaces")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub slice_id: i64,
    pub cluster_id: i64,
    pub name: String,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
