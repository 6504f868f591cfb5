//! Publishing alert transitions to subscribers on every replica, and to the webhook once.
//!
//! **How a transition travels.** Whoever stores a transition (a report's rules, the sweeper)
//! logs it in `alert_changes` in the same transaction (see [`super::service`]). Each replica's
//! [`AlertFeed`] tails that table, as the GPR [`crate::events::EventFeed`] tails `gpr_events`, and
//! fans new rows out to its subscribers. A write only has to *wake* the tailers: locally with
//! [`AlertFeed::changed`], on other replicas through an [`crate::ports::Announce`] (Redis pub/sub when
//! `--redis-url` is set), and a short poll catches the rest.
//!
//! **Why the database and not a Redis message with the alert in it:** the stored row is the
//! truth, so a subscriber never hears of a transition that did not commit, never misses one
//! because Redis was down or a message was dropped, and the same path serves one replica
//! (SQLite, no Redis) and many. It also lets the rules run where there is no handle to this
//! hub (inside `reportGpuSamples`' service function): storing is enough. The price is a poll
//! of one indexed range query every [`POLL`] per replica, and up to that much latency for
//! transitions stored on another replica without Redis.
//!
//! **Webhook, exactly once.** A transition goes to the webhook from the replica that claims it
//! first (`UPDATE alert_changes SET notified_by = … WHERE notified_by IS NULL`); every other
//! replica's claim finds it taken. A replica posts what it claimed in order; a raise and its
//! clear claimed by two replicas may arrive out of order while the webhook is failing and
//! being retried (each payload says which transition it is and when it happened).

use super::transition::AlertTransition;
use super::webhook::Webhook;
use crate::events::IdTail;
use crate::ports::Announce;
use egs_entities::{alert, alert_change};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Notify, broadcast};

/// Transitions a subscriber may fall behind by before it misses some (it is told it lagged).
const CHANNEL_CAPACITY: usize = 1024;
/// The tailer looks this often without a wake-up (transitions stored by a report, or on
/// another replica whose announcement was lost).
pub const POLL: Duration = Duration::from_millis(250);
const BATCH: u64 = 500;

pub struct AlertFeed {
    db: DatabaseConnection,
    sender: broadcast::Sender<Arc<AlertTransition>>,
    wake: Notify,
    fanout: Arc<dyn Announce>,
    /// Where transitions are posted, when configured.
    webhook: Option<Arc<Webhook>>,
    /// This replica's name in webhook claims.
    instance: String,
    /// The newest stored transition when this hub started (the tail starts after it).
    start: i64,
}

impl AlertFeed {
    /// Starts after the newest stored transition: history is in the `alerts` list.
    pub async fn new(db: DatabaseConnection, fanout: Arc<dyn Announce>, webhook: Option<Arc<Webhook>>) -> Result<Arc<Self>, sea_orm::DbErr> {
        let start = alert_change::Entity::find().order_by_desc(alert_change::Column::Id).one(&db).await?.map_or(0, |c| c.id);
        let (sender, _) = broadcast::channel(CHANNEL_CAPACITY);
        let instance = format!("egs-{}-{:08x}", std::process::id(), rand::random::<u32>());
        Ok(Arc::new(Self { db, sender, wake: Notify::new(), fanout, webhook, instance, start }))
    }

    /// Transitions were stored here: look now, and tell the other replicas.
    pub fn changed(&self) {
        self.wake();
        self.fanout.announce();
    }

    /// Transitions were stored elsewhere.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Transitions from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<AlertTransition>> {
        self.sender.subscribe()
    }

    /// Tails `alert_changes` until `stop` completes.
    pub async fn run(self: Arc<Self>, stop: impl Future<Output = ()>) {
        let mut tail = IdTail::new(self.start);
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => return,
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(POLL) => {}
            }
            if let Err(error) = self.poll(&mut tail).await {
                tracing::warn!(%error, "the alert tailer failed to read new transitions; retrying");
            }
        }
    }

    async fn poll(&self, tail: &mut IdTail) -> Result<(), sea_orm::DbErr> {
        loop {
            let rows = alert_change::Entity::find()
                .filter(alert_change::Column::Id.gt(tail.settled()))
                .order_by_asc(alert_change::Column::Id)
                .limit(BATCH)
                .all(&self.db)
                .await?;
            let fetched = rows.len() as u64;
            // Moved only once the alerts are read: a failed read is retried from the same place.
            let mut next = tail.clone();
            let now = Instant::now();
            let fresh: Vec<alert_change::Model> = rows.into_iter().filter(|row| next.admit(row.id, now)).collect();
            let alerts: HashMap<i64, alert::Model> = if fresh.is_empty() {
                HashMap::new()
            } else {
                let ids: Vec<i64> = fresh.iter().map(|c| c.alert_id).collect();
                alert::Entity::find().filter(alert::Column::Id.is_in(ids)).all(&self.db).await?.into_iter().map(|a| (a.id, a)).collect()
            };
            next.settle(now);
            *tail = next;
            for change in &fresh {
                let Some(alert) = alerts.get(&change.alert_id) else { continue };
                let transition = Arc::new(AlertTransition::new(change, alert.clone()));
                // No subscriber is fine: nobody is listening yet.
                let _ = self.sender.send(transition.clone());
                if let Some(webhook) = &self.webhook {
                    self.post_once(webhook, transition).await;
                }
            }
            if fetched < BATCH {
                return Ok(());
            }
        }
    }

    /// Hands a transition to the webhook if this replica is the first to claim it.
    async fn post_once(&self, webhook: &Webhook, transition: Arc<AlertTransition>) {
        let claimed = alert_change::Entity::update_many()
            .col_expr(alert_change::Column::NotifiedBy, Expr::value(self.instance.clone()))
            .filter(alert_change::Column::Id.eq(transition.change_id))
            .filter(alert_change::Column::NotifiedBy.is_null())
            .exec(&self.db)
            .await;
        match claimed {
            Ok(done) if done.rows_affected == 1 => webhook.enqueue(transition),
            Ok(_) => {}
            Err(error) => {
                tracing::warn!(alert.id = transition.alert.id, %error, "could not claim an alert transition for the webhook; another replica may post it")
            }
        }
    }
}
