//! Provisioning and release steps as stored rows (`gpr_steps`): what `Gpr.provisioningSteps`
//! shows, and what lets a new leader resume a job where the old one stopped. A row is keyed by
//! (GPR, operation, step); a new round of provisioning (after a requeue) starts from none.

use crate::ports::StepLog;
use async_trait::async_trait;
use chrono::Utc;
use egs_entities::{StepOperation, StepStatus, gpr_step};
use sea_orm::sea_query::OnConflict;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, Set};

/// Longest step message stored (API server errors can be long).
const MAX_MESSAGE_CHARS: usize = 2000;

/// The steps of one GPR's job, written as they happen.
pub struct DbStepLog {
    db: DatabaseConnection,
    gpr_id: i64,
    operation: StepOperation,
    /// A job that must run every step again (a replacement node) ignores earlier rows.
    resume: bool,
}

impl DbStepLog {
    pub fn new(db: DatabaseConnection, gpr_id: i64, operation: StepOperation, resume: bool) -> Self {
        Self { db, gpr_id, operation, resume }
    }

    async fn write(&self, step: &str, status: StepStatus, message: &str) {
        let now = Utc::now();
        let message: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
        let row = gpr_step::ActiveModel {
            gpr_id: Set(self.gpr_id),
            operation: Set(self.operation),
            step: Set(step.to_owned()),
            status: Set(status),
            message: Set(message),
            attempts: Set(1),
            started_at: Set(now),
            finished_at: Set((status != StepStatus::Running).then_some(now)),
            ..Default::default()
        };
        // A step started again keeps its last message (why the previous attempt failed)
        // until it finishes.
        let update = if status == StepStatus::Running {
            vec![gpr_step::Column::Status, gpr_step::Column::FinishedAt, gpr_step::Column::StartedAt]
        } else {
            vec![gpr_step::Column::Status, gpr_step::Column::Message, gpr_step::Column::FinishedAt]
        };
        let mut conflict = OnConflict::columns([gpr_step::Column::GprId, gpr_step::Column::Operation, gpr_step::Column::Step]);
        conflict.update_columns(update);
        if status == StepStatus::Running {
            // Each start of a step is an attempt. Qualified: PostgreSQL finds a bare column
            // ambiguous between the stored row and `excluded`.
            let stored = sea_orm::sea_query::Expr::col((gpr_step::Entity, gpr_step::Column::Attempts));
            conflict.value(gpr_step::Column::Attempts, sea_orm::sea_query::ExprTrait::add(stored, 1));
        }
        if let Err(error) = gpr_step::Entity::insert(row).on_conflict(conflict).exec_without_returning(&self.db).await {
            tracing::warn!(gpr = self.gpr_id, step, %error, "could not record a provisioning step");
        }
    }
}

#[async_trait]
impl StepLog for DbStepLog {
    async fn finished_before(&self, step: &str) -> bool {
        if !self.resume {
            return false;
        }
        let found = gpr_step::Entity::find()
            .filter(gpr_step::Column::GprId.eq(self.gpr_id))
            .filter(gpr_step::Column::Operation.eq(self.operation))
            .filter(gpr_step::Column::Step.eq(step))
            .one(&self.db)
            .await;
        matches!(found, Ok(Some(row)) if row.status == StepStatus::Done)
    }

    async fn started(&self, step: &str) {
        self.write(step, StepStatus::Running, "").await;
    }

    async fn finished(&self, step: &str, message: &str) {
        self.write(step, StepStatus::Done, message).await;
    }

    async fn failed(&self, step: &str, message: &str) {
        self.write(step, StepStatus::Failed, message).await;
    }
}

/// A GPR's steps, provisioning first, each in the order it started.
pub async fn steps_of(db: &impl sea_orm::ConnectionTrait, gpr_id: i64) -> Result<Vec<gpr_step::Model>, sea_orm::DbErr> {
    let mut rows = gpr_step::Entity::find().filter(gpr_step::Column::GprId.eq(gpr_id)).order_by_asc(gpr_step::Column::Id).all(db).await?;
    rows.sort_by_key(|r| (r.operation != StepOperation::Provision, r.id));
    Ok(rows)
}

/// Forgets a GPR's steps: a new round of provisioning starts from the first.
pub async fn forget(db: &impl sea_orm::ConnectionTrait, gpr_id: i64) -> Result<(), sea_orm::DbErr> {
    gpr_step::Entity::delete_many().filter(gpr_step::Column::GprId.eq(gpr_id)).exec(db).await?;
    Ok(())
}
