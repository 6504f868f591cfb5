//! What a GPR's workload needs (model, size, framework, kind, RDMA between nodes), and which
//! nodes have an RDMA network: a multi-node GPR that needs RDMA is planned only where it is.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table(Nodes::Table).add_column(boolean(Nodes::Rdma).default(false)).to_owned()).await?;
        manager.alter_table(Table::alter().table(Gprs::Table).add_column(json_binary_null(Gprs::Workload)).to_owned()).await?;
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum Nodes {
    Table,
    Rdma,
}

#[derive(DeriveIden, Clone, Copy)]
enum Gprs {
    Table,
    Workload,
}
