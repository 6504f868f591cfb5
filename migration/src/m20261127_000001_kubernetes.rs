//! Kubernetes provisioning: encrypted cluster credentials and how pods are steered onto slice
//! nodes; node zones; the provisioning and release steps of each GPR (resumable by a new
//! leader); GPRs created from `GPUProvisioningRequest` resources (their uid makes creation
//! idempotent); GPR templates and each slice's auto-GPR binding.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        for column in [text_null(Clusters::Credentials), string_len(Clusters::PodPlacement, 32).default("ADMISSION_PLUGINS").to_owned()] {
            manager.alter_table(Table::alter().table(Clusters::Table).add_column(column).to_owned()).await?;
        }
        manager.alter_table(Table::alter().table(Nodes::Table).add_column(string_len_null(Nodes::Zone, 128)).to_owned()).await?;
        for column in [string_len_null(Gprs::SourceUid, 64), string_len_null(Gprs::SourceRef, 600)] {
            manager.alter_table(Table::alter().table(Gprs::Table).add_column(column).to_owned()).await?;
        }
        manager.create_index(Index::create().name("ux_gprs_source_uid").table(Gprs::Table).col(Gprs::SourceUid).unique().to_owned()).await?;
        for column in [big_integer_null(Slices::AutoGprTemplateId), boolean(Slices::AutoGprEnabled).default(false).to_owned()] {
            manager.alter_table(Table::alter().table(Slices::Table).add_column(column).to_owned()).await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(GprSteps::Table)
                    .col(big_pk_auto(GprSteps::Id))
                    .col(big_integer(GprSteps::GprId))
                    .col(string_len(GprSteps::Operation, 32))
                    .col(string_len(GprSteps::Step, 64))
                    .col(string_len(GprSteps::Status, 32))
                    .col(text(GprSteps::Message))
                    .col(integer(GprSteps::Attempts))
                    .col(timestamp_with_time_zone(GprSteps::StartedAt))
                    .col(timestamp_with_time_zone_null(GprSteps::FinishedAt))
                    .foreign_key(
                        ForeignKey::create().from(GprSteps::Table, GprSteps::GprId).to(Gprs::Table, Gprs::Id).on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ux_gpr_steps")
                    .table(GprSteps::Table)
                    .col(GprSteps::GprId)
                    .col(GprSteps::Operation)
                    .col(GprSteps::Step)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(GprTemplates::Table)
                    .col(big_pk_auto(GprTemplates::Id))
                    .col(string_len(GprTemplates::Name, 63).unique_key())
                    .col(text_null(GprTemplates::Description))
                    .col(integer(GprTemplates::NodeCount))
                    .col(integer_null(GprTemplates::GpusPerNode))
                    .col(string_len_null(GprTemplates::GpuShape, 128))
                    .col(string_len_null(GprTemplates::InstanceType, 128))
                    .col(integer(GprTemplates::Priority))
                    .col(big_integer(GprTemplates::DurationSecs))
                    .col(big_integer_null(GprTemplates::IdleTimeoutSecs))
                    .col(timestamp_with_time_zone(GprTemplates::CreatedAt))
                    .col(timestamp_with_time_zone(GprTemplates::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(GprTemplates::Table).to_owned()).await?;
        manager.drop_table(Table::drop().table(GprSteps::Table).to_owned()).await?;
        for column in [Slices::AutoGprEnabled, Slices::AutoGprTemplateId] {
            manager.alter_table(Table::alter().table(Slices::Table).drop_column(column).to_owned()).await?;
        }
        manager.drop_index(Index::drop().name("ux_gprs_source_uid").table(Gprs::Table).to_owned()).await?;
        for column in [Gprs::SourceRef, Gprs::SourceUid] {
            manager.alter_table(Table::alter().table(Gprs::Table).drop_column(column).to_owned()).await?;
        }
        manager.alter_table(Table::alter().table(Nodes::Table).drop_column(Nodes::Zone).to_owned()).await?;
        for column in [Clusters::PodPlacement, Clusters::Credentials] {
            manager.alter_table(Table::alter().table(Clusters::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum Clusters {
    Table,
    Credentials,
    PodPlacement,
}

#[derive(DeriveIden, Clone, Copy)]
enum Nodes {
    Table,
    Zone,
}

#[derive(DeriveIden, Clone, Copy)]
enum Gprs {
    Table,
    Id,
    SourceUid,
    SourceRef,
}

#[derive(DeriveIden, Clone, Copy)]
enum Slices {
    Table,
    AutoGprTemplateId,
    AutoGprEnabled,
}

#[derive(DeriveIden, Clone, Copy)]
enum GprSteps {
    Table,
    Id,
    GprId,
    Operation,
    Step,
    Status,
    Message,
    Attempts,
    StartedAt,
    FinishedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum GprTemplates {
    Table,
    Id,
    Name,
    Description,
    NodeCount,
    GpusPerNode,
    GpuShape,
    InstanceType,
    Priority,
    DurationSecs,
    IdleTimeoutSecs,
    CreatedAt,
    UpdatedAt,
}
