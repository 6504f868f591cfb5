//! Room in every page of the rows updated in place all day (a node's state and holder at each
//! admission and release, a GPU's latest sample every second), so PostgreSQL can write the new
//! version beside the old one without touching the indexes (a HOT update): admitting a GPR of
//! 250 nodes, or a second of samples, then writes a fraction of the WAL.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::leave_room_for_updates(manager, &["nodes", "gpus"]).await
    }
}
