//! A raised (and maybe cleared) alert about a GPU, node or GPR.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "alerts")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub kind: AlertKind,
    pub severity: AlertSeverity,
    pub cluster_id: Option<i64>,
    pub node_id: Option<i64>,
    pub gpu_id: Option<i64>,
    pub slice_id: Option<i64>,
    pub gpr_id: Option<i64>,
    pub message: String,
    pub value: Option<f64>,
    pub threshold: Option<f64>,
    pub raised_at: DateTimeUtc,
    pub cleared_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
