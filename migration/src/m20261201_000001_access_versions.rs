//! A counter per user that goes up whenever the user loses slice access (removed from a
//! slice, a lower role, the slice deleted). Every replica reads it with the token record, so a
//! live subscription started before the change ends within seconds instead of streaming what
//! its user may no longer see.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table(Users::Table).add_column(big_integer(Users::AccessVersion).default(0)).to_owned()).await
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum Users {
    Table,
    AccessVersion,
}
