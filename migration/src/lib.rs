//! Ordered schema migrations. They run at gateway start-up and with `egs migrate`, and the same
//! statements serve SQLite and PostgreSQL (sea-query writes each dialect).

pub use sea_orm_migration::prelude::*;

/// Leaves 30 % of each page of `tables` free on PostgreSQL, for rows updated in place all day:
/// the new version of a row fits beside the old one, and when no indexed column changed the
/// indexes are left alone (a HOT update). Pages written from then on get the room; SQLite has
/// no such setting.
async fn leave_room_for_updates(manager: &SchemaManager<'_>, tables: &[&str]) -> Result<(), DbErr> {
    if manager.get_database_backend() != sea_orm::DbBackend::Postgres {
        return Ok(());
    }
    for table in tables {
        manager.get_connection().execute_unprepared(&format!("ALTER TABLE {table} SET (fillfactor = 70)")).await?;
    }
    Ok(())
}

mod m20261121_000001_create_core_tables;
mod m20261122_000001_scheduler_lifecycle;
mod m20261124_000001_gpu_latest_sample;
mod m20261125_000001_alerts;
mod m20261126_000001_gpu_workloads;
mod m20261127_000001_kubernetes;
mod m20261128_000001_gpr_holding_bounds;
mod m20261129_000001_change_cursors;
mod m20261130_000001_token_parents;
mod m20261201_000001_access_versions;
mod m20261202_000001_gpu_catalog_version;
mod m20261203_000001_gpr_extensions;
mod m20261204_000001_template_catalogue;
mod m20261205_000001_workload_hints;
mod m20261206_000001_notifications;
mod m20261207_000001_node_maintenance;
mod m20261208_000001_workspace_requests;
mod m20261209_000001_usage_rollups;
mod m20261210_000001_single_sign_on;
mod m20261211_000001_personal_workspaces;
mod m20261212_000001_maintenance_windows;
mod m20261213_000001_hot_updates;
mod m20261214_000001_gpr_hot_updates;
mod m20261215_000001_slice_kubeconfigs;
mod m20261216_000001_gpr_start_ranges;
mod m20261217_000001_firm_horizons;

pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261121_000001_create_core_tables::Migration),
            Box::new(m20261122_000001_scheduler_lifecycle::Migration),
            Box::new(m20261124_000001_gpu_latest_sample::Migration),
            Box::new(m20261125_000001_alerts::Migration),
            Box::new(m20261126_000001_gpu_workloads::Migration),
            Box::new(m20261127_000001_kubernetes::Migration),
            Box::new(m20261128_000001_gpr_holding_bounds::Migration),
            Box::new(m20261129_000001_change_cursors::Migration),
            Box::new(m20261130_000001_token_parents::Migration),
            Box::new(m20261201_000001_access_versions::Migration),
            Box::new(m20261202_000001_gpu_catalog_version::Migration),
            Box::new(m20261203_000001_gpr_extensions::Migration),
            Box::new(m20261204_000001_template_catalogue::Migration),
            Box::new(m20261205_000001_workload_hints::Migration),
            Box::new(m20261206_000001_notifications::Migration),
            Box::new(m20261207_000001_node_maintenance::Migration),
            Box::new(m20261208_000001_workspace_requests::Migration),
            Box::new(m20261209_000001_usage_rollups::Migration),
            Box::new(m20261210_000001_single_sign_on::Migration),
            Box::new(m20261211_000001_personal_workspaces::Migration),
            Box::new(m20261212_000001_maintenance_windows::Migration),
            Box::new(m20261213_000001_hot_updates::Migration),
            Box::new(m20261214_000001_gpr_hot_updates::Migration),
            Box::new(m20261215_000001_slice_kubeconfigs::Migration),
            Box::new(m20261216_000001_gpr_start_ranges::Migration),
            Box::new(m20261217_000001_firm_horizons::Migration),
        ]
    }
}
