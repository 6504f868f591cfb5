//! Notifications: channels (a Slack incoming webhook, a JSON webhook or an e-mail address) that a
//! user keeps for their own GPRs or a slice's owners keep for the slice's, the milestones each
//! wants, and an outbox of deliveries every replica drains (claimed one at a time, retried,
//! their failures kept for the channel's owner). Kubernetes Events for milestones go through
//! the same outbox, one per namespace. A GPR event's `estimate_moved_secs` says how far an
//! estimate moved, for channels that want to hear only of moves past a threshold.

use sea_orm_migration::{prelude::*, schema::*};

#[derive(DeriveMigrationName)]
pub struct Migration;

fn fk(from_table: impl IntoIden, from_col: impl IntoIden, to_table: impl IntoIden) -> ForeignKeyCreateStatement {
    ForeignKey::create().from(from_table, from_col).to(to_table, Alias::new("id")).on_delete(ForeignKeyAction::Cascade).to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(NotificationChannels::Table)
                    .col(big_pk_auto(NotificationChannels::Id))
                    // Exactly one of the two: a user's own channel, or a slice's.
                    .col(big_integer_null(NotificationChannels::UserId))
                    .col(big_integer_null(NotificationChannels::SliceId))
                    .col(string_len(NotificationChannels::Kind, 32))
                    .col(string_len(NotificationChannels::Name, 64))
                    // The URL (its path is a Slack webhook's secret) or the address.
                    .col(text(NotificationChannels::Target))
                    // The key JSON webhooks' bodies are signed with (HMAC-SHA256).
                    .col(string_len_null(NotificationChannels::SigningSecret, 128))
                    .col(string_len(NotificationChannels::Milestones, 512))
                    .col(integer_null(NotificationChannels::EstimateMovedMinutes))
                    .col(boolean(NotificationChannels::Enabled).default(true))
                    .col(big_integer(NotificationChannels::CreatedBy))
                    .col(timestamp_with_time_zone(NotificationChannels::CreatedAt))
                    .col(timestamp_with_time_zone(NotificationChannels::UpdatedAt))
                    .col(timestamp_with_time_zone_null(NotificationChannels::LastDeliveredAt))
                    .col(timestamp_with_time_zone_null(NotificationChannels::LastFailedAt))
                    .col(text_null(NotificationChannels::LastError))
                    .col(integer(NotificationChannels::FailuresInARow).default(0))
                    .foreign_key(&mut fk(NotificationChannels::Table, NotificationChannels::UserId, Users::Table))
                    .foreign_key(&mut fk(NotificationChannels::Table, NotificationChannels::SliceId, Slices::Table))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create().name("ix_notification_channels_user").table(NotificationChannels::Table).col(NotificationChannels::UserId).to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_notification_channels_slice")
                    .table(NotificationChannels::Table)
                    .col(NotificationChannels::SliceId)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(NotificationDeliveries::Table)
                    .col(big_pk_auto(NotificationDeliveries::Id))
                    // A channel's delivery, or (no channel) a Kubernetes Event in a namespace.
                    .col(big_integer_null(NotificationDeliveries::ChannelId))
                    .col(big_integer_null(NotificationDeliveries::ClusterId))
                    .col(string_len_null(NotificationDeliveries::Namespace, 63))
                    // Where and what it is for: a second replica fanning out the same event
                    // finds it there and adds nothing.
                    .col(string_len_uniq(NotificationDeliveries::DedupKey, 160))
                    .col(big_integer_null(NotificationDeliveries::GprId))
                    .col(big_integer_null(NotificationDeliveries::GprEventId))
                    .col(string_len(NotificationDeliveries::Milestone, 32))
                    .col(string_len(NotificationDeliveries::State, 32))
                    .col(integer(NotificationDeliveries::Attempts).default(0))
                    .col(timestamp_with_time_zone(NotificationDeliveries::NextAttemptAt))
                    .col(timestamp_with_time_zone_null(NotificationDeliveries::ClaimedUntil))
                    .col(text_null(NotificationDeliveries::LastError))
                    .col(timestamp_with_time_zone(NotificationDeliveries::CreatedAt))
                    .col(timestamp_with_time_zone_null(NotificationDeliveries::DeliveredAt))
                    .foreign_key(&mut fk(NotificationDeliveries::Table, NotificationDeliveries::ChannelId, NotificationChannels::Table))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_notification_deliveries_due")
                    .table(NotificationDeliveries::Table)
                    .col(NotificationDeliveries::State)
                    .col(NotificationDeliveries::NextAttemptAt)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_notification_deliveries_channel")
                    .table(NotificationDeliveries::Table)
                    .col(NotificationDeliveries::ChannelId)
                    .col(NotificationDeliveries::Id)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create().table(Cursors::Table).col(string_len(Cursors::Name, 64).primary_key()).col(big_integer(Cursors::Position)).to_owned(),
            )
            .await?;
        manager.alter_table(Table::alter().table(GprEvents::Table).add_column(big_integer_null(GprEvents::EstimateMovedSecs)).to_owned()).await?;
        Ok(())
    }
}

#[derive(DeriveIden, Clone, Copy)]
enum NotificationChannels {
    Table,
    Id,
    UserId,
    SliceId,
    Kind,
    Name,
    Target,
    SigningSecret,
    Milestones,
    EstimateMovedMinutes,
    Enabled,
    CreatedBy,
    CreatedAt,
    UpdatedAt,
    LastDeliveredAt,
    LastFailedAt,
    LastError,
    FailuresInARow,
}

#[derive(DeriveIden, Clone, Copy)]
enum NotificationDeliveries {
    Table,
    Id,
    ChannelId,
    ClusterId,
    Namespace,
    DedupKey,
    GprId,
    GprEventId,
    Milestone,
    State,
    Attempts,
    NextAttemptAt,
    ClaimedUntil,
    LastError,
    CreatedAt,
    DeliveredAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Cursors {
    Table,
    Name,
    Position,
}

#[derive(DeriveIden, Clone, Copy)]
enum Users {
    Table,
}

#[derive(DeriveIden, Clone, Copy)]
enum Slices {
    Table,
}

#[derive(DeriveIden, Clone, Copy)]
enum GprEvents {
    Table,
    EstimateMovedSecs,
}
