//! A slice a GPR template is published to: its members may create GPRs from it.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "gpr_template_slices")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub template_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub slice_id: i64,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
