//! Writing one GPR safely: optimistic concurrency on its version, retries for callers who
//! asked for none, and the wording of phase and version refusals. Shared by the services that
//! change GPRs ([`super::service`], [`super::extend`]).

use crate::error::{Error, ErrorCode, Result};
use chrono::Utc;
use egs_entities::gpr;
use sea_orm::{ColumnTrait, DatabaseTransaction, EntityTrait, QueryFilter, Set};

/// Writes `changes` if the row is still at `expected_version`; bumps the version.
pub(super) async fn save_versioned(txn: &DatabaseTransaction, before: &gpr::Model, mut changes: gpr::ActiveModel) -> Result<gpr::Model> {
    changes.version = Set(before.version + 1);
    changes.updated_at = Set(Utc::now());
    let updated = gpr::Entity::update_many()
        .set(changes)
        .filter(gpr::Column::Id.eq(before.id))
        .filter(gpr::Column::Version.eq(before.version))
        .exec(txn)
        .await?;
    if updated.rows_affected != 1 {
        return Err(stale(before.version));
    }
    gpr::Entity::find_by_id(before.id).one(txn).await?.ok_or(Error::NotFound("GPR"))
}

/// Times a change is read and tried again after losing a race to another writer.
const RACE_RETRIES: usize = 4;

/// Runs a read-check-write of one GPR. A caller who gave no `version` asked for no optimistic
/// check, so a write that lost a race (the scheduler planned the GPR in between) is read
/// again and retried instead of answered with a `CONFLICT` the caller did not ask for.
pub(super) async fn unless_raced<T, F, Fut>(version: Option<i32>, mut attempt: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T>>,
{
    for _ in 0..RACE_RETRIES {
        match attempt().await {
            Err(Error::User(errors))
                if version.is_none() && errors.iter().any(|e| e.code == ErrorCode::Conflict && e.field.last().is_some_and(|f| f == "version")) => {}
            other => return other,
        }
    }
    attempt().await
}

fn stale(read: i32) -> Error {
    Error::conflict("version", format!("the GPR changed since version {read}; read it again and retry"))
}

pub(super) fn check_version(found: &gpr::Model, expected: Option<i32>) -> Result<()> {
    match expected {
        Some(v) if v != found.version => {
            Err(Error::conflict("version", format!("the GPR is at version {}, not {v}; read it again and retry", found.version)))
        }
        _ => Ok(()),
    }
}

pub(super) fn phase_error(found: &gpr::Model, action: &str, allowed: &str) -> Error {
    Error::conflict("id", format!("cannot {action} a GPR that is {}; only {allowed}", found.phase.as_str()))
}
