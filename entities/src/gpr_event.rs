//! Something that happened to a GPR; ids are monotonic so streams can resume after one.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "gpr_events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub gpr_id: i64,
    pub slice_id: i64,
    pub kind: GprEventKind,
    pub message: String,
    /// Who caused it: a user name, or `system`.
    pub actor: String,
    /// For `ESTIMATE_CHANGED`: how far the promise (or, without one, the expected start) moved,
    /// later positive; `None` when one of the two is unknown.
    pub estimate_moved_secs: Option<i64>,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
