//! GPU metrics: the latest sample of every GPU, next to `last_sample_at`, so any replica (and a
//! restarted one) can answer `latestSample`, summaries and hot-spot ordering. History stays in
//! memory (bounded rings), not in the database.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite alters one column per statement.
        for column in
            [Gpus::LatestUtil, Gpus::LatestMemUtil, Gpus::LatestMemUsedMib, Gpus::LatestTemperatureC, Gpus::LatestPowerW, Gpus::LatestSmClockMhz]
        {
            manager.alter_table(Table::alter().table(Gpus::Table).add_column(double_null(column)).to_owned()).await?;
        }
        manager.alter_table(Table::alter().table(Gpus::Table).add_column(json_binary_null(Gpus::LatestXidErrors)).to_owned()).await?;
        for column in [Gpus::LatestEccCorrected, Gpus::LatestEccUncorrected] {
            manager.alter_table(Table::alter().table(Gpus::Table).add_column(big_integer_null(column)).to_owned()).await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum Gpus {
    Table,
    LatestUtil,
    LatestMemUtil,
    LatestMemUsedMib,
    LatestTemperatureC,
    LatestPowerW,
    LatestSmClockMhz,
    LatestXidErrors,
    LatestEccCorrected,
    LatestEccUncorrected,
}
