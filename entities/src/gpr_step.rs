//! One step of handing a GPR's nodes to its slice or taking them back, as last recorded. A new
//! leader resumes the job from these rows (each step is idempotent, so re-running an
//! interrupted one is safe).

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "gpr_steps")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub gpr_id: i64,
    pub operation: StepOperation,
    /// Stable step name, e.g. `PRECHECK`, `LABEL_AND_TAINT`, `EVICT`.
    pub step: String,
    pub status: StepStatus,
    pub message: String,
    pub attempts: i32,
    pub started_at: DateTimeUtc,
    pub finished_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
