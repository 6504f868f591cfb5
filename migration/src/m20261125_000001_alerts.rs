//! Alerts: a subject per alert with a partial unique index, so at most one alert of a kind is
//! open per GPU, node or GPR however many replicas evaluate the rules; the log of transitions
//! every replica tails to publish them; and per-shape thresholds an admin sets.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite alters one column per statement.
        manager.alter_table(Table::alter().table(Alerts::Table).add_column(string(Alerts::Subject).default("")).to_owned()).await?;
        manager.alter_table(Table::alter().table(Alerts::Table).add_column(timestamp_with_time_zone_null(Alerts::LastSeenAt)).to_owned()).await?;
        manager.alter_table(Table::alter().table(Alerts::Table).add_column(text_null(Alerts::Resolution)).to_owned()).await?;
        // Nothing wrote alerts before this migration; should a row exist, it gets a subject of
        // its own so the unique index below can be built.
        let legacy = Query::update()
            .table(Alerts::Table)
            .value(Alerts::Subject, Expr::cust("'legacy:' || CAST(id AS VARCHAR(20))"))
            .and_where(Expr::col(Alerts::Subject).eq(""))
            .to_owned();
        manager.exec_stmt(legacy).await?;
        manager
            .create_index(
                Index::create()
                    .name("ux_alerts_open_subject")
                    .table(Alerts::Table)
                    .col(Alerts::Kind)
                    .col(Alerts::Subject)
                    .unique()
                    .and_where(Expr::col(Alerts::ClearedAt).is_null())
                    .to_owned(),
            )
            .await?;
        manager.create_index(Index::create().name("ix_alerts_node").table(Alerts::Table).col(Alerts::NodeId).to_owned()).await?;
        manager.create_index(Index::create().name("ix_alerts_slice").table(Alerts::Table).col(Alerts::SliceId).col(Alerts::Id).to_owned()).await?;

        manager
            .create_table(
                Table::create()
                    .table(AlertChanges::Table)
                    .col(big_pk_auto(AlertChanges::Id))
                    .col(big_integer(AlertChanges::AlertId))
                    .col(string_len(AlertChanges::Action, 32))
                    .col(timestamp_with_time_zone(AlertChanges::At))
                    .col(string_null(AlertChanges::NotifiedBy))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(AlertThresholds::Table)
                    .col(big_pk_auto(AlertThresholds::Id))
                    .col(string_uniq(AlertThresholds::GpuShape))
                    .col(double_null(AlertThresholds::TemperatureCelsius))
                    .col(double_null(AlertThresholds::PowerWatts))
                    .col(timestamp_with_time_zone(AlertThresholds::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(AlertThresholds::Table).to_owned()).await?;
        manager.drop_table(Table::drop().table(AlertChanges::Table).to_owned()).await?;
        for index in ["ix_alerts_slice", "ix_alerts_node", "ux_alerts_open_subject"] {
            manager.drop_index(Index::drop().name(index).table(Alerts::Table).to_owned()).await?;
        }
        for column in [Alerts::Resolution, Alerts::LastSeenAt, Alerts::Subject] {
            manager.alter_table(Table::alter().table(Alerts::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum Alerts {
    Table,
    Id,
    Kind,
    Subject,
    NodeId,
    SliceId,
    ClearedAt,
    LastSeenAt,
    Resolution,
}

#[derive(DeriveIden)]
enum AlertChanges {
    Table,
    Id,
    AlertId,
    Action,
    At,
    NotifiedBy,
}

#[derive(DeriveIden)]
enum AlertThresholds {
    Table,
    Id,
    GpuShape,
    TemperatureCelsius,
    PowerWatts,
    UpdatedAt,
}
