//! Maintenance: an admin cordons a node (no new GPR gets it; one holding it keeps it until its
//! window ends) or drains it (its GPR is evicted and requeued, or runs out its window), and
//! uncordons it when the work is done. Who cordoned it, when and why are kept for the inventory.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [timestamp_with_time_zone_null(Nodes::CordonedAt), text_null(Nodes::CordonReason), string_len_null(Nodes::CordonedBy, 128)] {
            manager.alter_table(Table::alter().table(Nodes::Table).add_column(column).to_owned()).await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum Nodes {
    Table,
    CordonedAt,
    CordonReason,
    CordonedBy,
}
