//! A waiting GPR's start range: the 10th and 90th percentiles of when it is likely to start
//! (`estimated_start_at` is the middle), calibrated on how past estimates turned out; and the
//! fair-share points it was given when first ranked, so a new leader ranks it the same; and
//! the start foreseen when it was first estimated (and when), which its admission compares with
//! to calibrate the ranges — kept, so a new leader learns from the same history.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite alters one column per statement.
        manager.alter_table(Table::alter().table(Gprs::Table).add_column(timestamp_with_time_zone_null(Gprs::StartP10At)).to_owned()).await?;
        manager.alter_table(Table::alter().table(Gprs::Table).add_column(timestamp_with_time_zone_null(Gprs::StartP90At)).to_owned()).await?;
        manager.alter_table(Table::alter().table(Gprs::Table).add_column(integer_null(Gprs::FairShareBonus)).to_owned()).await?;
        manager.alter_table(Table::alter().table(Gprs::Table).add_column(timestamp_with_time_zone_null(Gprs::ForeseenAt)).to_owned()).await?;
        manager.alter_table(Table::alter().table(Gprs::Table).add_column(timestamp_with_time_zone_null(Gprs::ForeseenStartAt)).to_owned()).await?;
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum Gprs {
    Table,
    StartP10At,
    StartP90At,
    FairShareBonus,
    ForeseenAt,
    ForeseenStartAt,
}
