//! Single sign-on: users linked to an OpenID Connect identity (issuer and subject, unique),
//! memberships a group rule granted (so a later login can take them back), and the rules that
//! map identity-provider groups to slice roles or to the admin role.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        manager.alter_table(Table::alter().table(Users::Table).add_column(string_len_null(Users::OidcIssuer, 512)).to_owned()).await?;
        manager.alter_table(Table::alter().table(Users::Table).add_column(string_len_null(Users::OidcSubject, 255)).to_owned()).await?;
        manager
            .create_index(
                Index::create().name("ux_users_oidc_identity").table(Users::Table).col(Users::OidcIssuer).col(Users::OidcSubject).unique().to_owned(),
            )
            .await?;
        manager
            .alter_table(Table::alter().table(SliceMembers::Table).add_column(boolean(SliceMembers::GrantedBySso).default(false)).to_owned())
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(SsoGroupRules::Table)
                    .col(big_pk_auto(SsoGroupRules::Id))
                    .col(string_len(SsoGroupRules::GroupName, 256))
                    .col(big_integer_null(SsoGroupRules::SliceId))
                    .col(string_len_null(SsoGroupRules::SliceRole, 16))
                    .col(boolean(SsoGroupRules::GrantsAdmin))
                    .col(timestamp_with_time_zone(SsoGroupRules::CreatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(SsoGroupRules::Table, SsoGroupRules::SliceId)
                            .to(Slices::Table, Alias::new("id"))
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum Users {
    Table,
    OidcIssuer,
    OidcSubject,
}

#[derive(DeriveIden, Clone, Copy)]
enum SliceMembers {
    Table,
    GrantedBySso,
}

#[derive(DeriveIden, Clone, Copy)]
enum Slices {
    Table,
}

#[derive(DeriveIden, Clone, Copy)]
enum SsoGroupRules {
    Table,
    Id,
    GroupName,
    SliceId,
    SliceRole,
    GrantsAdmin,
    CreatedAt,
}
