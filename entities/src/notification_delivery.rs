//! One notification to send: a milestone for a channel, or a Kubernetes Event for a namespace.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "notification_deliveries")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// `None` for a Kubernetes Event (then `cluster_id` and `namespace` say where).
    pub channel_id: Option<i64>,
    pub cluster_id: Option<i64>,
    pub namespace: Option<String>,
    /// Unique: where it goes and which event it is for, so fanning out twice adds nothing.
    pub dedup_key: String,
    pub gpr_id: Option<i64>,
    /// `None` for a test message.
    pub gpr_event_id: Option<i64>,
    pub milestone: String,
    pub state: DeliveryState,
    pub attempts: i32,
    pub next_attempt_at: DateTimeUtc,
    /// A replica is sending it until then; after, another may take it over.
    pub claimed_until: Option<DateTimeUtc>,
    pub last_error: Option<String>,
    pub created_at: DateTimeUtc,
    pub delivered_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
