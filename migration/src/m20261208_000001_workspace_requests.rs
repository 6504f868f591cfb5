//! Workspace requests: a user asks for a slice (its name, namespaces, size and purpose); an admin
//! approves it, with edits, which creates the slice with the requester as its owner, or rejects
//! it with a reason the requester reads.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(WorkspaceRequests::Table)
                    .col(big_pk_auto(WorkspaceRequests::Id))
                    .col(big_integer(WorkspaceRequests::RequesterId))
                    .col(string_len(WorkspaceRequests::Name, 63))
                    .col(text(WorkspaceRequests::Purpose))
                    .col(json_binary(WorkspaceRequests::Namespaces))
                    .col(integer_null(WorkspaceRequests::MaxNodesPerGpr))
                    .col(big_integer_null(WorkspaceRequests::GpuHourQuota))
                    .col(string_len(WorkspaceRequests::State, 32))
                    .col(string_len_null(WorkspaceRequests::DecidedBy, 128))
                    .col(text_null(WorkspaceRequests::DecisionReason))
                    // No foreign key: the request keeps naming the slice it made after it is gone.
                    .col(big_integer_null(WorkspaceRequests::SliceId))
                    .col(timestamp_with_time_zone(WorkspaceRequests::CreatedAt))
                    .col(timestamp_with_time_zone_null(WorkspaceRequests::DecidedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(WorkspaceRequests::Table, WorkspaceRequests::RequesterId)
                            .to(Users::Table, Alias::new("id"))
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_workspace_requests_requester")
                    .table(WorkspaceRequests::Table)
                    .col(WorkspaceRequests::RequesterId)
                    .col(WorkspaceRequests::State)
                    .to_owned(),
            )
            .await?;
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum WorkspaceRequests {
    Table,
    Id,
    RequesterId,
    Name,
    Purpose,
    Namespaces,
    MaxNodesPerGpr,
    GpuHourQuota,
    State,
    DecidedBy,
    DecisionReason,
    SliceId,
    CreatedAt,
    DecidedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Users {
    Table,
}
