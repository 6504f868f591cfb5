//! A cluster a slice may use.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "slice_clusters")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub slice_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub cluster_id: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
