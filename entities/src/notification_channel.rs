//! Where a user, or a slice's owners, want to hear of GPR milestones.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "notification_channels")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// A user's own channel: milestones of the GPRs they asked for.
    pub user_id: Option<i64>,
    /// A slice's channel: milestones of all the slice's GPRs.
    pub slice_id: Option<i64>,
    pub kind: NotificationKind,
    pub name: String,
    /// The webhook URL or the e-mail address. A URL is never returned whole through the API.
    pub target: String,
    /// The key a JSON webhook's bodies are signed with; shown once, when the channel is made.
    pub signing_secret: Option<String>,
    /// The milestones it wants, comma-separated.
    pub milestones: String,
    /// For `ESTIMATE_MOVED`: only moves of at least this many minutes.
    pub estimate_moved_minutes: Option<i32>,
    pub enabled: bool,
    pub created_by: i64,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
    pub last_delivered_at: Option<DateTimeUtc>,
    pub last_failed_at: Option<DateTimeUtc>,
    pub last_error: Option<String>,
    /// Deliveries given up since the last one that arrived.
    pub failures_in_a_row: i32,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
