//! Extending a provisioned GPR's window (`extendGpr`): how much it has been extended in all
//! (what the slice's extension grace is counted against) and an extension waiting for an
//! admin's decision.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite alters one column per statement.
        manager.alter_table(Table::alter().table(Gprs::Table).add_column(big_integer(Gprs::ExtendedSecs).default(0)).to_owned()).await?;
        manager.alter_table(Table::alter().table(Gprs::Table).add_column(big_integer_null(Gprs::ExtensionRequestedSecs)).to_owned()).await?;
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum Gprs {
    Table,
    ExtendedSecs,
    ExtensionRequestedSecs,
}
