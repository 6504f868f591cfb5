//! The leader lease: one replica at a time runs the scheduler loop, and every write it makes
//! is fenced by the lease's epoch, so a replica that lost the lease cannot write.

use super::{LEASE, Lifecycle};
use crate::error::{Error, Result};
use chrono::Duration;
use egs_entities::leader_lease;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseTransaction, DbBackend, EntityTrait, QueryFilter, QuerySelect, Set, TransactionTrait,
};

impl Lifecycle {
    /// Takes or renews the lease; the epoch when this replica leads.
    pub(super) async fn lead(&self) -> Result<Option<i64>> {
        let now = self.now();
        let expires_at = now + self.config.lease_ttl;
        let me = &self.config.instance;
        let Some(current) = leader_lease::Entity::find_by_id(LEASE).one(self.leader()).await? else {
            let inserted = leader_lease::ActiveModel { name: Set(LEASE.into()), holder: Set(me.clone()), epoch: Set(1), expires_at: Set(expires_at) }
                .insert(self.leader())
                .await;
            return Ok(inserted.ok().map(|l| l.epoch));
        };
        let (epoch, guard_holder) = if current.holder == *me {
            (current.epoch, true)
        } else if current.expires_at < now {
            (current.epoch + 1, false)
        } else {
            return Ok(None);
        };
        let mut update = leader_lease::Entity::update_many()
            .col_expr(leader_lease::Column::Holder, Expr::value(me.clone()))
            .col_expr(leader_lease::Column::Epoch, Expr::value(epoch))
            .col_expr(leader_lease::Column::ExpiresAt, Expr::value(expires_at))
            .filter(leader_lease::Column::Name.eq(LEASE))
            .filter(leader_lease::Column::Epoch.eq(current.epoch));
        if guard_holder {
            update = update.filter(leader_lease::Column::Holder.eq(me.clone()));
        }
        let taken = update.exec(self.leader()).await?.rows_affected == 1;
        if taken && !guard_holder {
            tracing::info!(epoch, instance = %me, "took the scheduler lease");
        }
        Ok(taken.then_some(epoch))
    }

    pub(super) async fn release_lease(&self) {
        let expired = self.now() - Duration::seconds(1);
        let result = leader_lease::Entity::update_many()
            .col_expr(leader_lease::Column::ExpiresAt, Expr::value(expired))
            .filter(leader_lease::Column::Name.eq(LEASE))
            .filter(leader_lease::Column::Holder.eq(self.config.instance.clone()))
            .exec(self.leader())
            .await;
        if let Err(error) = result {
            tracing::warn!(error = %error, "could not hand the scheduler lease back");
        }
    }

    /// Opens a transaction that only commits if this replica still holds the lease at `epoch`.
    ///
    /// On PostgreSQL the check locks the lease row for share: a takeover (an update) waits for
    /// every fenced transaction in flight, and one that commits first is seen by the check,
    /// while fenced transactions (a tick's admissions beside the provisioning jobs' steps) do
    /// not wait for each other. A no-op update here serialized them all on the one row: a tick
    /// waited 100–140 ms behind the jobs at fleet scale. SQLite has one writer at a time, so
    /// there the check is that no-op update, taking the write lock at once.
    pub(super) async fn fenced(&self, epoch: i64) -> Result<DatabaseTransaction> {
        self.fenced_on(self.leader(), epoch).await
    }

    /// [`Self::fenced`] on `db` (the provider jobs write on the gateway's pool).
    pub(super) async fn fenced_on(&self, db: &sea_orm::DatabaseConnection, epoch: i64) -> Result<DatabaseTransaction> {
        let txn = db.begin().await?;
        let me = self.config.instance.clone();
        let held = match txn.get_database_backend() {
            DbBackend::Postgres => leader_lease::Entity::find()
                .filter(leader_lease::Column::Name.eq(LEASE))
                .filter(leader_lease::Column::Holder.eq(me))
                .filter(leader_lease::Column::Epoch.eq(epoch))
                .lock_shared()
                .one(&txn)
                .await?
                .map_or(0, |_| 1),
            _ => {
                leader_lease::Entity::update_many()
                    .col_expr(leader_lease::Column::Epoch, Expr::col(leader_lease::Column::Epoch))
                    .filter(leader_lease::Column::Name.eq(LEASE))
                    .filter(leader_lease::Column::Holder.eq(me))
                    .filter(leader_lease::Column::Epoch.eq(epoch))
                    .exec(&txn)
                    .await?
                    .rows_affected
            }
        };
        if held != 1 {
            return Err(Error::Internal(anyhow::anyhow!("lost the scheduler lease (epoch {epoch})")));
        }
        Ok(txn)
    }
}
