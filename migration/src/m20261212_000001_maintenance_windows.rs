//! Maintenance windows planned ahead: a node out of service from `starts_at` to `ends_at`.
//! `started_at` and `finished_at` record when the leader cordoned the node for the window and
//! gave it back.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(MaintenanceWindows::Table)
                    .col(big_pk_auto(MaintenanceWindows::Id))
                    .col(big_integer(MaintenanceWindows::NodeId))
                    .col(timestamp_with_time_zone(MaintenanceWindows::StartsAt))
                    .col(timestamp_with_time_zone(MaintenanceWindows::EndsAt))
                    .col(string_len(MaintenanceWindows::Reason, 500))
                    .col(string_len(MaintenanceWindows::CreatedBy, 255))
                    .col(timestamp_with_time_zone(MaintenanceWindows::CreatedAt))
                    .col(timestamp_with_time_zone_null(MaintenanceWindows::StartedAt))
                    .col(timestamp_with_time_zone_null(MaintenanceWindows::FinishedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(MaintenanceWindows::Table, MaintenanceWindows::NodeId)
                            .to(Nodes::Table, Alias::new("id"))
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_maintenance_windows_node")
                    .table(MaintenanceWindows::Table)
                    .col(MaintenanceWindows::NodeId)
                    .col(MaintenanceWindows::StartsAt)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create().name("ix_maintenance_windows_ends").table(MaintenanceWindows::Table).col(MaintenanceWindows::EndsAt).to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum MaintenanceWindows {
    Table,
    Id,
    NodeId,
    StartsAt,
    EndsAt,
    Reason,
    CreatedBy,
    CreatedAt,
    StartedAt,
    FinishedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Nodes {
    Table,
}
