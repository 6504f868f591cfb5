//! A counter that goes up whenever a GPU's description changes: a GPU added or removed, or its
//! node, UUID, index, model, memory or MIG mode changed (not its samples). Each replica keeps
//! the GPU descriptions in memory and serves a GPU page from them while the counter it read
//! them at is still the database's, so a page costs one tiny read instead of a page of rows.
//! Triggers keep it, so no write path can forget to.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The described columns: a change to any of these changes the catalog.
const DESCRIBED: [&str; 6] = ["node_id", "uuid", "gpu_index", "model", "memory_mib", "mig_enabled"];

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(GpuCatalogVersions::Table)
                    .col(integer(GpuCatalogVersions::Id).primary_key())
                    .col(big_integer(GpuCatalogVersions::Version).default(0))
                    .to_owned(),
            )
            .await?;
        let db = manager.get_connection();
        db.execute_unprepared("INSERT INTO gpu_catalog_versions (id, version) VALUES (1, 0)").await?;
        let changed = DESCRIBED.iter().map(|c| format!("OLD.{c} IS DISTINCT FROM NEW.{c}")).collect::<Vec<_>>().join(" OR ");
        let bump = "UPDATE gpu_catalog_versions SET version = version + 1 WHERE id = 1";
        match manager.get_database_backend() {
            sea_orm::DbBackend::Postgres => {
                db.execute_unprepared(&format!(
                    "CREATE FUNCTION egs_gpu_catalog_changed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {bump}; RETURN NULL; END $$"
                ))
                .await?;
                // Once per statement for inserts and deletes (registering 10,000 nodes is one
                // bump per statement, not per GPU); per row, and only when a described
                // column changed, for updates (a node's agent registering again unchanged is
                // no change).
                db.execute_unprepared(
                    "CREATE TRIGGER gpus_catalog_rows AFTER INSERT OR DELETE ON gpus FOR EACH STATEMENT EXECUTE FUNCTION egs_gpu_catalog_changed()",
                )
                .await?;
                db.execute_unprepared(&format!(
                    "CREATE TRIGGER gpus_catalog_described AFTER UPDATE ON gpus FOR EACH ROW WHEN ({changed}) EXECUTE FUNCTION egs_gpu_catalog_changed()"
                ))
                .await?;
            }
            _ => {
                // SQLite has only row triggers; `IS NOT` is its `IS DISTINCT FROM`.
                let changed = changed.replace("IS DISTINCT FROM", "IS NOT");
                for (name, event) in [("gpus_catalog_insert", "INSERT"), ("gpus_catalog_delete", "DELETE")] {
                    db.execute_unprepared(&format!("CREATE TRIGGER {name} AFTER {event} ON gpus BEGIN {bump}; END")).await?;
                }
                db.execute_unprepared(&format!("CREATE TRIGGER gpus_catalog_described AFTER UPDATE ON gpus WHEN {changed} BEGIN {bump}; END"))
                    .await?;
            }
        }
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum GpuCatalogVersions {
    Table,
    Id,
    Version,
}
