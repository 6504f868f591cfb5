//! Indexes the scheduler driver reads changes through: the leader asks for the GPRs, nodes and
//! slices stamped since its last look, so each tick reads what changed, not whole tables.

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let indexes = [
            ("idx_gprs_updated_at", Alias::new("gprs"), Alias::new("updated_at")),
            ("idx_nodes_updated_at", Alias::new("nodes"), Alias::new("updated_at")),
            ("idx_nodes_last_heartbeat_at", Alias::new("nodes"), Alias::new("last_heartbeat_at")),
        ];
        for (name, table, column) in indexes {
            manager.create_index(Index::create().name(name).table(table).col(column).if_not_exists().to_owned()).await?;
        }
        Ok(())
    }
}
