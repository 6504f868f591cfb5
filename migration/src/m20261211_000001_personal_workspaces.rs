//! The admins' policy that gives every new user a small private workspace: a slice of their
//! own, with a namespace of its name on one cluster and a size.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(PersonalWorkspacePolicy::Table)
                    // One row (id 1): the installation's policy.
                    .col(big_integer(PersonalWorkspacePolicy::Id).primary_key())
                    .col(boolean(PersonalWorkspacePolicy::Enabled))
                    .col(big_integer(PersonalWorkspacePolicy::ClusterId))
                    .col(integer_null(PersonalWorkspacePolicy::MaxNodesPerGpr))
                    .col(big_integer_null(PersonalWorkspacePolicy::GpuHourQuota))
                    .col(timestamp_with_time_zone(PersonalWorkspacePolicy::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(PersonalWorkspacePolicy::Table, PersonalWorkspacePolicy::ClusterId)
                            .to(Clusters::Table, Alias::new("id"))
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum PersonalWorkspacePolicy {
    Table,
    Id,
    Enabled,
    ClusterId,
    MaxNodesPerGpr,
    GpuHourQuota,
    UpdatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Clusters {
    Table,
}
