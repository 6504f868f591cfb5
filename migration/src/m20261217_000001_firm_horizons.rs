//! A cluster's firm horizon: promises of GPRs planned to start within it are kept against
//! arrivals below the high band (`updateCluster(firmHorizon:)`; none by default).

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table(Clusters::Table).add_column(big_integer_null(Clusters::FirmHorizonSecs)).to_owned()).await
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum Clusters {
    Table,
    FirmHorizonSecs,
}
