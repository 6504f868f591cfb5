//! The first schema: projects, users, tokens, clusters, inventory, slices, GPRs, events, alerts.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Short enum-like strings (phases, roles, states).
const ENUM_LEN: u32 = 32;

fn enum_col<T: IntoIden>(name: T) -> ColumnDef {
    string_len(name, ENUM_LEN)
}

fn fk(from_table: impl IntoIden, from_col: impl IntoIden, to_table: impl IntoIden, on_delete: ForeignKeyAction) -> ForeignKeyCreateStatement {
    ForeignKey::create().from(from_table, from_col).to(to_table, Alias::new("id")).on_delete(on_delete).to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use ForeignKeyAction::{Cascade, SetNull};

        manager
            .create_table(
                Table::create()
                    .table(Projects::Table)
                    .col(big_pk_auto(Projects::Id))
                    .col(string_uniq(Projects::Name))
                    .col(timestamp_with_time_zone(Projects::CreatedAt))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Users::Table)
                    .col(big_pk_auto(Users::Id))
                    .col(string_uniq(Users::Name))
                    .col(string_null(Users::Email))
                    .col(enum_col(Users::Role))
                    .col(timestamp_with_time_zone(Users::CreatedAt))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Clusters::Table)
                    .col(big_pk_auto(Clusters::Id))
                    .col(big_integer(Clusters::ProjectId))
                    .col(string(Clusters::Name))
                    .col(enum_col(Clusters::Provider))
                    .col(string_null(Clusters::Cloud))
                    .col(string_null(Clusters::Region))
                    .col(enum_col(Clusters::RegistrationStatus))
                    .col(enum_col(Clusters::Health))
                    .col(timestamp_with_time_zone_null(Clusters::LastContactAt))
                    .col(timestamp_with_time_zone(Clusters::CreatedAt))
                    .col(timestamp_with_time_zone(Clusters::UpdatedAt))
                    .foreign_key(&mut fk(Clusters::Table, Clusters::ProjectId, Projects::Table, Cascade))
                    .to_owned(),
            )
            .await?;
        unique_index(manager, Clusters::Table, "ux_clusters_project_name", &[Clusters::ProjectId.into_iden(), Clusters::Name.into_iden()]).await?;

        manager
            .create_table(
                Table::create()
                    .table(AccessTokens::Table)
                    .col(big_pk_auto(AccessTokens::Id))
                    .col(string_uniq(AccessTokens::Jti))
                    .col(string(AccessTokens::Name))
                    .col(enum_col(AccessTokens::Role))
                    .col(big_integer_null(AccessTokens::UserId))
                    .col(big_integer_null(AccessTokens::ClusterId))
                    .col(string_null(AccessTokens::NodeName))
                    .col(json_binary_null(AccessTokens::SliceScopes))
                    .col(big_integer_null(AccessTokens::CreatedBy))
                    .col(timestamp_with_time_zone(AccessTokens::CreatedAt))
                    .col(timestamp_with_time_zone(AccessTokens::ExpiresAt))
                    .col(timestamp_with_time_zone_null(AccessTokens::RevokedAt))
                    .foreign_key(&mut fk(AccessTokens::Table, AccessTokens::UserId, Users::Table, Cascade))
                    .foreign_key(&mut fk(AccessTokens::Table, AccessTokens::ClusterId, Clusters::Table, Cascade))
                    .foreign_key(&mut fk(AccessTokens::Table, AccessTokens::CreatedBy, Users::Table, SetNull))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Nodes::Table)
                    .col(big_pk_auto(Nodes::Id))
                    .col(big_integer(Nodes::ClusterId))
                    .col(string(Nodes::Name))
                    .col(string(Nodes::InstanceType))
                    .col(string(Nodes::GpuShape))
                    .col(integer(Nodes::GpusPerNode))
                    .col(big_integer(Nodes::GpuMemoryMib))
                    .col(enum_col(Nodes::Health))
                    .col(enum_col(Nodes::State))
                    .col(big_integer_null(Nodes::AllocatedGprId))
                    .col(double_null(Nodes::PowerThresholdWatts))
                    .col(double_null(Nodes::TemperatureThresholdCelsius))
                    .col(string_null(Nodes::DriverVersion))
                    .col(timestamp_with_time_zone_null(Nodes::LastHeartbeatAt))
                    .col(timestamp_with_time_zone(Nodes::CreatedAt))
                    .col(timestamp_with_time_zone(Nodes::UpdatedAt))
                    .foreign_key(&mut fk(Nodes::Table, Nodes::ClusterId, Clusters::Table, Cascade))
                    .to_owned(),
            )
            .await?;
        unique_index(manager, Nodes::Table, "ux_nodes_cluster_name", &[Nodes::ClusterId.into_iden(), Nodes::Name.into_iden()]).await?;
        index(manager, Nodes::Table, "ix_nodes_pool", &[Nodes::ClusterId.into_iden(), Nodes::InstanceType.into_iden(), Nodes::GpuShape.into_iden()])
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(Gpus::Table)
                    .col(big_pk_auto(Gpus::Id))
                    .col(big_integer(Gpus::NodeId))
                    .col(string_uniq(Gpus::Uuid))
                    .col(integer(Gpus::GpuIndex))
                    .col(string(Gpus::Model))
                    .col(big_integer(Gpus::MemoryMib))
                    .col(boolean(Gpus::MigEnabled))
                    .col(timestamp_with_time_zone(Gpus::CreatedAt))
                    .col(timestamp_with_time_zone(Gpus::UpdatedAt))
                    .foreign_key(&mut fk(Gpus::Table, Gpus::NodeId, Nodes::Table, Cascade))
                    .to_owned(),
            )
            .await?;
        index(manager, Gpus::Table, "ix_gpus_node", &[Gpus::NodeId.into_iden()]).await?;

        manager
            .create_table(
                Table::create()
                    .table(Slices::Table)
                    .col(big_pk_auto(Slices::Id))
                    .col(big_integer(Slices::ProjectId))
                    .col(string(Slices::Name))
                    .col(text_null(Slices::Description))
                    .col(json_binary(Slices::Policy))
                    .col(timestamp_with_time_zone(Slices::CreatedAt))
                    .col(timestamp_with_time_zone(Slices::UpdatedAt))
                    .foreign_key(&mut fk(Slices::Table, Slices::ProjectId, Projects::Table, Cascade))
                    .to_owned(),
            )
            .await?;
        unique_index(manager, Slices::Table, "ux_slices_project_name", &[Slices::ProjectId.into_iden(), Slices::Name.into_iden()]).await?;

        manager
            .create_table(
                Table::create()
                    .table(SliceClusters::Table)
                    .col(big_integer(SliceClusters::SliceId))
                    .col(big_integer(SliceClusters::ClusterId))
                    .primary_key(Index::create().col(SliceClusters::SliceId).col(SliceClusters::ClusterId))
                    .foreign_key(&mut fk(SliceClusters::Table, SliceClusters::SliceId, Slices::Table, Cascade))
                    .foreign_key(&mut fk(SliceClusters::Table, SliceClusters::ClusterId, Clusters::Table, Cascade))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(SliceNamespaces::Table)
                    .col(big_pk_auto(SliceNamespaces::Id))
                    .col(big_integer(SliceNamespaces::SliceId))
                    .col(big_integer(SliceNamespaces::ClusterId))
                    .col(string(SliceNamespaces::Name))
                    .col(timestamp_with_time_zone(SliceNamespaces::CreatedAt))
                    .foreign_key(&mut fk(SliceNamespaces::Table, SliceNamespaces::SliceId, Slices::Table, Cascade))
                    .foreign_key(&mut fk(SliceNamespaces::Table, SliceNamespaces::ClusterId, Clusters::Table, Cascade))
                    .to_owned(),
            )
            .await?;
        // A namespace belongs to at most one slice: that is what keeps slices isolated.
        unique_index(
            manager,
            SliceNamespaces::Table,
            "ux_slice_namespaces_cluster_name",
            &[SliceNamespaces::ClusterId.into_iden(), SliceNamespaces::Name.into_iden()],
        )
        .await?;
        index(manager, SliceNamespaces::Table, "ix_slice_namespaces_slice", &[SliceNamespaces::SliceId.into_iden()]).await?;

        manager
            .create_table(
                Table::create()
                    .table(SliceMembers::Table)
                    .col(big_integer(SliceMembers::SliceId))
                    .col(big_integer(SliceMembers::UserId))
                    .col(enum_col(SliceMembers::Role))
                    .col(timestamp_with_time_zone(SliceMembers::CreatedAt))
                    .primary_key(Index::create().col(SliceMembers::SliceId).col(SliceMembers::UserId))
                    .foreign_key(&mut fk(SliceMembers::Table, SliceMembers::SliceId, Slices::Table, Cascade))
                    .foreign_key(&mut fk(SliceMembers::Table, SliceMembers::UserId, Users::Table, Cascade))
                    .to_owned(),
            )
            .await?;
        index(manager, SliceMembers::Table, "ix_slice_members_user", &[SliceMembers::UserId.into_iden()]).await?;

        manager
            .create_table(
                Table::create()
                    .table(Gprs::Table)
                    .col(big_pk_auto(Gprs::Id))
                    .col(big_integer(Gprs::SliceId))
                    .col(string(Gprs::Name))
                    .col(big_integer_null(Gprs::RequesterId))
                    .col(integer(Gprs::NodeCount))
                    .col(integer_null(Gprs::GpusPerNode))
                    .col(big_integer_null(Gprs::MinGpuMemoryMib))
                    .col(string_null(Gprs::GpuShape))
                    .col(string_null(Gprs::InstanceType))
                    .col(json_binary(Gprs::PreferredClusterIds))
                    .col(integer(Gprs::Priority))
                    .col(big_integer(Gprs::DurationSecs))
                    .col(big_integer_null(Gprs::IdleTimeoutSecs))
                    .col(boolean(Gprs::Preemptible))
                    .col(boolean(Gprs::RequeueOnFailure))
                    .col(timestamp_with_time_zone_null(Gprs::EarliestStartAt))
                    .col(json_binary(Gprs::Labels))
                    .col(enum_col(Gprs::Phase))
                    .col(text_null(Gprs::Reason))
                    .col(enum_col(Gprs::Approval))
                    .col(text_null(Gprs::ApprovalReason))
                    .col(integer_null(Gprs::QueuePosition))
                    .col(timestamp_with_time_zone_null(Gprs::StartNoLaterThan))
                    .col(timestamp_with_time_zone_null(Gprs::EstimatedStartAt))
                    .col(big_integer_null(Gprs::AssignedClusterId))
                    .col(string_null(Gprs::AssignedInstanceType))
                    .col(string_null(Gprs::AssignedGpuShape))
                    .col(timestamp_with_time_zone_null(Gprs::ProvisionedAt))
                    .col(timestamp_with_time_zone_null(Gprs::ExitAt))
                    .col(timestamp_with_time_zone_null(Gprs::CompletedAt))
                    .col(string_len_null(Gprs::ReleaseReason, ENUM_LEN))
                    .col(big_integer_null(Gprs::PreemptedById))
                    .col(integer(Gprs::Version))
                    .col(timestamp_with_time_zone(Gprs::CreatedAt))
                    .col(timestamp_with_time_zone(Gprs::UpdatedAt))
                    .foreign_key(&mut fk(Gprs::Table, Gprs::SliceId, Slices::Table, Cascade))
                    .foreign_key(&mut fk(Gprs::Table, Gprs::RequesterId, Users::Table, SetNull))
                    .foreign_key(&mut fk(Gprs::Table, Gprs::AssignedClusterId, Clusters::Table, SetNull))
                    .foreign_key(&mut fk(Gprs::Table, Gprs::PreemptedById, Gprs::Table, SetNull))
                    .to_owned(),
            )
            .await?;
        index(manager, Gprs::Table, "ix_gprs_slice_phase", &[Gprs::SliceId.into_iden(), Gprs::Phase.into_iden()]).await?;
        index(manager, Gprs::Table, "ix_gprs_phase", &[Gprs::Phase.into_iden()]).await?;

        manager
            .create_table(
                Table::create()
                    .table(GprNodes::Table)
                    .col(big_integer(GprNodes::GprId))
                    .col(big_integer(GprNodes::NodeId))
                    .col(timestamp_with_time_zone(GprNodes::AssignedAt))
                    .primary_key(Index::create().col(GprNodes::GprId).col(GprNodes::NodeId))
                    .foreign_key(&mut fk(GprNodes::Table, GprNodes::GprId, Gprs::Table, Cascade))
                    .foreign_key(&mut fk(GprNodes::Table, GprNodes::NodeId, Nodes::Table, Cascade))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(GprEvents::Table)
                    .col(big_pk_auto(GprEvents::Id))
                    .col(big_integer(GprEvents::GprId))
                    .col(big_integer(GprEvents::SliceId))
                    .col(enum_col(GprEvents::Kind))
                    .col(text(GprEvents::Message))
                    .col(string(GprEvents::Actor))
                    .col(timestamp_with_time_zone(GprEvents::CreatedAt))
                    .foreign_key(&mut fk(GprEvents::Table, GprEvents::GprId, Gprs::Table, Cascade))
                    .foreign_key(&mut fk(GprEvents::Table, GprEvents::SliceId, Slices::Table, Cascade))
                    .to_owned(),
            )
            .await?;
        index(manager, GprEvents::Table, "ix_gpr_events_gpr", &[GprEvents::GprId.into_iden(), GprEvents::Id.into_iden()]).await?;
        index(manager, GprEvents::Table, "ix_gpr_events_slice", &[GprEvents::SliceId.into_iden(), GprEvents::Id.into_iden()]).await?;

        // Alerts outlive what they were about, so their references are plain ids.
        manager
            .create_table(
                Table::create()
                    .table(Alerts::Table)
                    .col(big_pk_auto(Alerts::Id))
                    .col(enum_col(Alerts::Kind))
                    .col(enum_col(Alerts::Severity))
                    .col(big_integer_null(Alerts::ClusterId))
                    .col(big_integer_null(Alerts::NodeId))
                    .col(big_integer_null(Alerts::GpuId))
                    .col(big_integer_null(Alerts::SliceId))
                    .col(big_integer_null(Alerts::GprId))
                    .col(text(Alerts::Message))
                    .col(double_null(Alerts::Value))
                    .col(double_null(Alerts::Threshold))
                    .col(timestamp_with_time_zone(Alerts::RaisedAt))
                    .col(timestamp_with_time_zone_null(Alerts::ClearedAt))
                    .to_owned(),
            )
            .await?;
        index(manager, Alerts::Table, "ix_alerts_open", &[Alerts::ClearedAt.into_iden(), Alerts::RaisedAt.into_iden()]).await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            Alerts::Table.into_iden(),
            GprEvents::Table.into_iden(),
            GprNodes::Table.into_iden(),
            Gprs::Table.into_iden(),
            SliceMembers::Table.into_iden(),
            SliceNamespaces::Table.into_iden(),
            SliceClusters::Table.into_iden(),
            Slices::Table.into_iden(),
            Gpus::Table.into_iden(),
            Nodes::Table.into_iden(),
            AccessTokens::Table.into_iden(),
            Clusters::Table.into_iden(),
            Users::Table.into_iden(),
            Projects::Table.into_iden(),
        ] {
            manager.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}

async fn index(manager: &SchemaManager<'_>, table: impl IntoIden, name: &str, cols: &[DynIden]) -> Result<(), DbErr> {
    let mut stmt = Index::create();
    stmt.name(name).table(table);
    for col in cols {
        stmt.col(col.clone());
    }
    manager.create_index(stmt).await
}

async fn unique_index(manager: &SchemaManager<'_>, table: impl IntoIden, name: &str, cols: &[DynIden]) -> Result<(), DbErr> {
    let mut stmt = Index::create();
    stmt.name(name).table(table).unique();
    for col in cols {
        stmt.col(col.clone());
    }
    manager.create_index(stmt).await
}

#[derive(DeriveIden)]
enum Projects {
    Table,
    Id,
    Name,
    CreatedAt,
}

#[derive(DeriveIden)]
enum Users {
    Table,
    Id,
    Name,
    Email,
    Role,
    CreatedAt,
}

#[derive(DeriveIden)]
enum AccessTokens {
    Table,
    Id,
    Jti,
    Name,
    Role,
    UserId,
    ClusterId,
    NodeName,
    SliceScopes,
    CreatedBy,
    CreatedAt,
    ExpiresAt,
    RevokedAt,
}

#[derive(DeriveIden)]
enum Clusters {
    Table,
    Id,
    ProjectId,
    Name,
    Provider,
    Cloud,
    Region,
    RegistrationStatus,
    Health,
    LastContactAt,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum Nodes {
    Table,
    Id,
    ClusterId,
    Name,
    InstanceType,
    GpuShape,
    GpusPerNode,
    GpuMemoryMib,
    Health,
    State,
    AllocatedGprId,
    PowerThresholdWatts,
    TemperatureThresholdCelsius,
    DriverVersion,
    LastHeartbeatAt,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum Gpus {
    Table,
    Id,
    NodeId,
    Uuid,
    GpuIndex,
    Model,
    MemoryMib,
    MigEnabled,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum Slices {
    Table,
    Id,
    ProjectId,
    Name,
    Description,
    Policy,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum SliceClusters {
    Table,
    SliceId,
    ClusterId,
}

#[derive(DeriveIden)]
enum SliceNamespaces {
    Table,
    Id,
    SliceId,
    ClusterId,
    Name,
    CreatedAt,
}

#[derive(DeriveIden)]
enum SliceMembers {
    Table,
    SliceId,
    UserId,
    Role,
    CreatedAt,
}

#[derive(DeriveIden)]
enum Gprs {
    Table,
    Id,
    SliceId,
    Name,
    RequesterId,
    NodeCount,
    GpusPerNode,
    MinGpuMemoryMib,
    GpuShape,
    InstanceType,
    PreferredClusterIds,
    Priority,
    DurationSecs,
    IdleTimeoutSecs,
    Preemptible,
    RequeueOnFailure,
    EarliestStartAt,
    Labels,
    Phase,
    Reason,
    Approval,
    ApprovalReason,
    QueuePosition,
    StartNoLaterThan,
    EstimatedStartAt,
    AssignedClusterId,
    AssignedInstanceType,
    AssignedGpuShape,
    ProvisionedAt,
    ExitAt,
    CompletedAt,
    ReleaseReason,
    PreemptedById,
    Version,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum GprNodes {
    Table,
    GprId,
    NodeId,
    AssignedAt,
}

#[derive(DeriveIden)]
enum GprEvents {
    Table,
    Id,
    GprId,
    SliceId,
    Kind,
    Message,
    Actor,
    CreatedAt,
}

#[derive(DeriveIden)]
enum Alerts {
    Table,
    Id,
    Kind,
    Severity,
    ClusterId,
    NodeId,
    GpuId,
    SliceId,
    GprId,
    Message,
    Value,
    Threshold,
    RaisedAt,
    ClearedAt,
}
