//! Bounds of a GPR that holds nodes, so promises made behind it are kept: when it was admitted
//! (or began its release) and when its nodes are back at the latest. The scheduler plans other
//! GPRs on `holds_until` instead of guessing from "now".

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite alters one column per statement.
        for column in [Gprs::HoldingSince, Gprs::HoldsUntil] {
            manager.alter_table(Table::alter().table(Gprs::Table).add_column(timestamp_with_time_zone_null(column)).to_owned()).await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum Gprs {
    Table,
    HoldingSince,
    HoldsUntil,
}
