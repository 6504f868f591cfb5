//! Room in every page of the rows updated in place all day (a node's state and holder at each
//! admission and release, a GPU's latest sample every second), so PostgreSQL can write the new
//! version beside the old one without touching the indexes (a HOT update): admitting a GPR of
//! 250 nodes, or a second of samples, then writes a fraction of the WAL. Pages written from now
//! on get the room; SQLite has no such setting.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != sea_orm::DbBackend::Postgres {
            return Ok(());
        }
        let db = manager.get_connection();
        db.execute_unprepared("ALTER TABLE nodes SET (fillfactor = 70)").await?;
        db.execute_unprepared("ALTER TABLE gpus SET (fillfactor = 70)").await?;
        Ok(())
    }
}
