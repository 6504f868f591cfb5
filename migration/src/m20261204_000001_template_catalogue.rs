//! GPR templates as a catalogue of profiles users start from: an admin publishes a template to
//! some slices (or to all), their members list it and create GPRs from it, and a GPR remembers
//! the template it came from.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

fn fk(from_table: impl IntoIden, from_col: impl IntoIden, to_table: impl IntoIden) -> ForeignKeyCreateStatement {
    ForeignKey::create().from(from_table, from_col).to(to_table, Alias::new("id")).on_delete(ForeignKeyAction::Cascade).to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table(GprTemplates::Table).add_column(boolean(GprTemplates::AllSlices).default(false)).to_owned()).await?;
        manager
            .create_table(
                Table::create()
                    .table(GprTemplateSlices::Table)
                    .col(big_integer(GprTemplateSlices::TemplateId))
                    .col(big_integer(GprTemplateSlices::SliceId))
                    .primary_key(Index::create().col(GprTemplateSlices::TemplateId).col(GprTemplateSlices::SliceId))
                    .foreign_key(&mut fk(GprTemplateSlices::Table, GprTemplateSlices::TemplateId, GprTemplates::Table))
                    .foreign_key(&mut fk(GprTemplateSlices::Table, GprTemplateSlices::SliceId, Slices::Table))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create().name("ix_gpr_template_slices_slice").table(GprTemplateSlices::Table).col(GprTemplateSlices::SliceId).to_owned(),
            )
            .await?;
        // No foreign key: a GPR keeps naming the template it came from after the template is gone.
        manager.alter_table(Table::alter().table(Gprs::Table).add_column(big_integer_null(Gprs::TemplateId)).to_owned()).await?;
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum GprTemplates {
    Table,
    AllSlices,
}

#[derive(DeriveIden, Clone, Copy)]
enum GprTemplateSlices {
    Table,
    TemplateId,
    SliceId,
}

#[derive(DeriveIden, Clone, Copy)]
enum Slices {
    Table,
}

#[derive(DeriveIden, Clone, Copy)]
enum Gprs {
    Table,
    TemplateId,
}
