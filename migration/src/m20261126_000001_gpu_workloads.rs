//! Workloads: the processes running on each GPU as its node agent last reported them, with the
//! Kubernetes pod (and container) each belongs to; and the CUDA version of each node. A report
//! replaces the node's rows, so the table holds the current mapping, not history.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(GpuProcesses::Table)
                    .col(big_pk_auto(GpuProcesses::Id))
                    .col(big_integer(GpuProcesses::GpuId))
                    .col(big_integer(GpuProcesses::NodeId))
                    .col(big_integer(GpuProcesses::Pid))
                    .col(double_null(GpuProcesses::UsedMemoryMib))
                    .col(string_len_null(GpuProcesses::PodUid, 128))
                    .col(string_len_null(GpuProcesses::PodNamespace, 253))
                    .col(string_len_null(GpuProcesses::PodName, 253))
                    .col(string_len_null(GpuProcesses::Container, 253))
                    .col(timestamp_with_time_zone(GpuProcesses::ReportedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(GpuProcesses::Table, GpuProcesses::GpuId)
                            .to(Gpus::Table, Gpus::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .foreign_key(
                        ForeignKey::create()
                            .from(GpuProcesses::Table, GpuProcesses::NodeId)
                            .to(Nodes::Table, Nodes::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        manager.create_index(Index::create().name("ix_gpu_processes_gpu").table(GpuProcesses::Table).col(GpuProcesses::GpuId).to_owned()).await?;
        manager.create_index(Index::create().name("ix_gpu_processes_node").table(GpuProcesses::Table).col(GpuProcesses::NodeId).to_owned()).await?;
        manager
            .create_index(Index::create().name("ix_gpu_processes_namespace").table(GpuProcesses::Table).col(GpuProcesses::PodNamespace).to_owned())
            .await?;
        manager.alter_table(Table::alter().table(Nodes::Table).add_column(string_len_null(Nodes::CudaVersion, 32)).to_owned()).await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table(Nodes::Table).drop_column(Nodes::CudaVersion).to_owned()).await?;
        manager.drop_table(Table::drop().table(GpuProcesses::Table).to_owned()).await?;
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum GpuProcesses {
    Table,
    Id,
    GpuId,
    NodeId,
    Pid,
    UsedMemoryMib,
    PodUid,
    PodNamespace,
    PodName,
    Container,
    ReportedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Gpus {
    Table,
    Id,
}

#[derive(DeriveIden, Clone, Copy)]
enum Nodes {
    Table,
    Id,
    CudaVersion,
}
