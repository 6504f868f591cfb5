//! One alert transition (raised or cleared), in the order replicas publish them: the log every
//! replica's alert hub tails, and the claim that makes one replica post it to the webhook.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "alert_changes")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub alert_id: i64,
    pub action: AlertAction,
    pub at: DateTimeUtc,
    /// The replica that took on posting it to the webhook, once one has.
    pub notified_by: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
