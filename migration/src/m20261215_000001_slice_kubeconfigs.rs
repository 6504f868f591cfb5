//! The slice kubeconfigs out there: one row per slice and cluster (issuing one revokes the one
//! before), with who asked for it, so a kubeconfig an admin issued goes when that admin stops
//! being one. EGS keeps no copy of the kubeconfig itself.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(SliceKubeconfigs::Table)
                    .col(big_pk_auto(SliceKubeconfigs::Id))
                    .col(big_integer(SliceKubeconfigs::SliceId))
                    .col(big_integer(SliceKubeconfigs::ClusterId))
                    .col(string_len(SliceKubeconfigs::ServiceAccount, 320))
                    .col(big_integer_null(SliceKubeconfigs::IssuedBy))
                    .col(timestamp_with_time_zone(SliceKubeconfigs::IssuedAt))
                    .col(timestamp_with_time_zone(SliceKubeconfigs::ExpiresAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(SliceKubeconfigs::Table, SliceKubeconfigs::SliceId)
                            .to(Slices::Table, Alias::new("id"))
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(SliceKubeconfigs::Table, SliceKubeconfigs::ClusterId)
                            .to(Clusters::Table, Alias::new("id"))
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ux_slice_kubeconfigs_place")
                    .table(SliceKubeconfigs::Table)
                    .col(SliceKubeconfigs::SliceId)
                    .col(SliceKubeconfigs::ClusterId)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create().name("ix_slice_kubeconfigs_issued_by").table(SliceKubeconfigs::Table).col(SliceKubeconfigs::IssuedBy).to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum SliceKubeconfigs {
    Table,
    Id,
    SliceId,
    ClusterId,
    ServiceAccount,
    IssuedBy,
    IssuedAt,
    ExpiresAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Slices {
    Table,
}

#[derive(DeriveIden, Clone, Copy)]
enum Clusters {
    Table,
}
