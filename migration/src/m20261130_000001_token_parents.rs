//! Which token minted a token: a token made with a token expires no later than its parent and
//! is revoked with it, and a slice-scoped token manages only itself and what it minted.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table(AccessTokens::Table).add_column(big_integer_null(AccessTokens::ParentId)).to_owned()).await?;
        manager
            .create_index(
                Index::create().name("idx_access_tokens_parent_id").table(AccessTokens::Table).col(AccessTokens::ParentId).if_not_exists().to_owned(),
            )
            .await
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum AccessTokens {
    Table,
    ParentId,
}
