//! The scheduler's lifecycle: a leader lease with a fencing epoch, durable GPR timers, and the
//! GPU activity the idle timeout reads.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(LeaderLeases::Table)
                    .col(string(LeaderLeases::Name).primary_key())
                    .col(string(LeaderLeases::Holder))
                    .col(big_integer(LeaderLeases::Epoch))
                    .col(timestamp_with_time_zone(LeaderLeases::ExpiresAt))
                    .to_owned(),
            )
            .await?;
        // SQLite alters one column per statement.
        manager.alter_table(Table::alter().table(Gprs::Table).add_column(integer(Gprs::MilestonesDone).default(0)).to_owned()).await?;
        manager.alter_table(Table::alter().table(Gpus::Table).add_column(timestamp_with_time_zone_null(Gpus::LastSampleAt)).to_owned()).await?;
        manager.alter_table(Table::alter().table(Gpus::Table).add_column(timestamp_with_time_zone_null(Gpus::LastBusyAt)).to_owned()).await?;
        Ok(())
    }
}

#[derive(DeriveIden)]
enum LeaderLeases {
    Table,
    Name,
    Holder,
    Epoch,
    ExpiresAt,
}

#[derive(DeriveIden)]
enum Gprs {
    Table,
    MilestonesDone,
}

#[derive(DeriveIden)]
enum Gpus {
    Table,
    LastSampleAt,
    LastBusyAt,
}
