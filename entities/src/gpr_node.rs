//! A node assigned to a GPR.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "gpr_nodes")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub gpr_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub node_id: i64,
    pub assigned_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {
    #[sea_orm(belongs_to = "super::node::Entity", from = "Column::NodeId", to = "super::node::Column::Id")]
    Node,
}

impl Related<super::node::Entity> for Entity {
    fn to() -> RelationDef {
        Relation::Node.def()
    }
}

impl ActiveModelBehavior for ActiveModel {}
