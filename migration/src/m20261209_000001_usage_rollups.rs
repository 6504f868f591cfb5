//! Usage over time: daily rollups of GPU-hours (reserved, used, waited for) per slice,
//! requester, shape and cluster; waits per slice, shape and priority; and measured utilisation
//! per cluster and holding slice. Each key is unique, so two replicas writing one day cannot
//! both land.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(UsageDaily::Table)
                    .col(big_pk_auto(UsageDaily::Id))
                    .col(date(UsageDaily::Day))
                    .col(big_integer(UsageDaily::SliceId))
                    .col(big_integer(UsageDaily::UserId))
                    .col(string_len(UsageDaily::GpuShape, 128))
                    .col(big_integer(UsageDaily::ClusterId))
                    .col(big_integer(UsageDaily::ReservedGpuSecs))
                    .col(big_integer(UsageDaily::UsedGpuSecs))
                    .col(big_integer(UsageDaily::WaitingGpuSecs))
                    .col(integer(UsageDaily::GprsStarted))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ux_usage_daily_key")
                    .table(UsageDaily::Table)
                    .col(UsageDaily::Day)
                    .col(UsageDaily::SliceId)
                    .col(UsageDaily::UserId)
                    .col(UsageDaily::GpuShape)
                    .col(UsageDaily::ClusterId)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(UsageWaitDaily::Table)
                    .col(big_pk_auto(UsageWaitDaily::Id))
                    .col(date(UsageWaitDaily::Day))
                    .col(big_integer(UsageWaitDaily::SliceId))
                    .col(string_len(UsageWaitDaily::GpuShape, 128))
                    .col(integer(UsageWaitDaily::Priority))
                    .col(integer(UsageWaitDaily::Started))
                    .col(big_integer(UsageWaitDaily::WaitTotalSecs))
                    .col(big_integer(UsageWaitDaily::WaitMaxSecs))
                    .col(integer(UsageWaitDaily::Within15m))
                    .col(integer(UsageWaitDaily::Within1h))
                    .col(integer(UsageWaitDaily::Within4h))
                    .col(integer(UsageWaitDaily::Within24h))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ux_usage_wait_daily_key")
                    .table(UsageWaitDaily::Table)
                    .col(UsageWaitDaily::Day)
                    .col(UsageWaitDaily::SliceId)
                    .col(UsageWaitDaily::GpuShape)
                    .col(UsageWaitDaily::Priority)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(UsageUtilisationDaily::Table)
                    .col(big_pk_auto(UsageUtilisationDaily::Id))
                    .col(date(UsageUtilisationDaily::Day))
                    .col(big_integer(UsageUtilisationDaily::ClusterId))
                    .col(big_integer(UsageUtilisationDaily::SliceId))
                    .col(double(UsageUtilisationDaily::GpuSecs))
                    .col(double(UsageUtilisationDaily::ReportingGpuSecs))
                    .col(double(UsageUtilisationDaily::BusyGpuSecs))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ux_usage_utilisation_daily_key")
                    .table(UsageUtilisationDaily::Table)
                    .col(UsageUtilisationDaily::Day)
                    .col(UsageUtilisationDaily::ClusterId)
                    .col(UsageUtilisationDaily::SliceId)
                    .unique()
                    .to_owned(),
            )
            .await?;
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum UsageDaily {
    Table,
    Id,
    Day,
    SliceId,
    UserId,
    GpuShape,
    ClusterId,
    ReservedGpuSecs,
    UsedGpuSecs,
    WaitingGpuSecs,
    GprsStarted,
}

#[derive(DeriveIden, Clone, Copy)]
enum UsageWaitDaily {
    Table,
    Id,
    Day,
    SliceId,
    GpuShape,
    Priority,
    Started,
    WaitTotalSecs,
    WaitMaxSecs,
    #[sea_orm(iden = "within_15m")]
    Within15m,
    #[sea_orm(iden = "within_1h")]
    Within1h,
    #[sea_orm(iden = "within_4h")]
    Within4h,
    #[sea_orm(iden = "within_24h")]
    Within24h,
}

#[derive(DeriveIden, Clone, Copy)]
enum UsageUtilisationDaily {
    Table,
    Id,
    Day,
    ClusterId,
    SliceId,
    GpuSecs,
    ReportingGpuSecs,
    BusyGpuSecs,
}
