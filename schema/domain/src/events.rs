//! Live GPR events. The stored `gpr_events` rows are the truth; the [`EventFeed`] tails that
//! table and fans new rows out to this process's subscribers. A write anywhere only has to
//! *wake* the tailer: here through [`EventFeed::changed`], on other replicas through an
//! [`Announce`] (Redis pub/sub), and a slow timer catches whatever a lost wake-up missed.
//! So subscribers never miss a stored event while Redis is down; they hear of other replicas'
//! events a little later, and one query per wake-up serves every subscriber.
//!
//! Every writer stores its events with [`record_event`], inside the transaction that made the
//! change.

use crate::error::Result;
use crate::ports::Announce;
use chrono::Utc;
use egs_entities::{GprEventKind, gpr, gpr_event};
use sea_orm::{ActiveModelTrait, ConnectionTrait, Set};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::{Notify, broadcast, watch};

/// Stores an event about a GPR (call inside the transaction that made the change).
pub async fn record_event(
    db: &impl ConnectionTrait,
    gpr: &gpr::Model,
    kind: GprEventKind,
    message: impl Into<String>,
    actor: &str,
) -> Result<gpr_event::Model> {
    Ok(new_event(gpr, kind, message, actor).insert(db).await?)
}

/// An event of `gpr` as [`record_event`] stores it, for writing many in one statement.
pub fn new_event(gpr: &gpr::Model, kind: GprEventKind, message: impl Into<String>, actor: &str) -> gpr_event::ActiveModel {
    gpr_event::ActiveModel {
        gpr_id: Set(gpr.id),
        slice_id: Set(gpr.slice_id),
        kind: Set(kind),
        message: Set(message.into()),
        actor: Set(actor.to_owned()),
        created_at: Set(Utc::now()),
        ..Default::default()
    }
}

/// Events a subscriber may fall behind by before it lags (it then re-reads the database).
const CHANNEL_CAPACITY: usize = 4096;
/// The tailer looks this often even without a wake-up (events from a replica whose
/// announcement was lost, or from Redis being down).
const FALLBACK_POLL: Duration = Duration::from_millis(500);
/// PostgreSQL hands out ids before commit, so a row may become visible after a higher one.
/// An id missing for this long belonged to a transaction that rolled back.
const GAP_PATIENCE: Duration = Duration::from_secs(10);
/// Rows above a gap wait this long for it, so subscribers get events in id order and can
/// resume after the last id they saw. Most gaps are commits a few milliseconds behind; a gap
/// still open after this is a long transaction (the leader storing a deep queue's estimates)
/// or a rollback, and waiting longer would delay every subscriber behind it: the rows above it
/// go out, and if it does commit later it goes out late, out of order.
const HOLD_FOR_GAP: Duration = Duration::from_millis(500);
/// Gaps wider than this are not tracked id by id (a sequence jump, not commits in flight).
const MAX_TRACKED_GAP: i64 = 10_000;
const BATCH: u64 = 1000;

pub struct EventFeed {
    db: DatabaseConnection,
    sender: broadcast::Sender<Arc<gpr_event::Model>>,
    wake: Notify,
    fanout: Arc<dyn Announce>,
    /// Every event with an id at or below this has been published (or its gap stopped waiting).
    published: AtomicI64,
    /// Bumped whenever queue positions or estimates may have changed (queue views re-read).
    queue: watch::Sender<u64>,
}

impl EventFeed {
    /// Starts at the newest stored event: history is for subscribers to read.
    pub async fn new(db: DatabaseConnection, fanout: Arc<dyn Announce>) -> Result<Arc<Self>, sea_orm::DbErr> {
        let newest = gpr_event::Entity::find().order_by_desc(gpr_event::Column::Id).one(&db).await?.map_or(0, |e| e.id);
        let (sender, _) = broadcast::channel(CHANNEL_CAPACITY);
        let (queue, _) = watch::channel(0);
        Ok(Arc::new(Self { db, sender, wake: Notify::new(), fanout, published: AtomicI64::new(newest), queue }))
    }

    /// Something was stored here (events, queue positions, estimates): look now, and tell
    /// the other replicas.
    pub fn changed(&self) {
        self.wake();
        self.fanout.announce();
    }

    /// Another replica stored something.
    pub fn wake(&self) {
        self.wake.notify_one();
        self.queue.send_modify(|version| *version = version.wrapping_add(1));
    }

    /// Tells when queue views may have changed.
    pub fn watch_queue(&self) -> watch::Receiver<u64> {
        self.queue.subscribe()
    }

    /// Live events from now on (in id order, but for a very late commit), and the id up to
    /// which everything was already published: what a subscriber must read from the database.
    pub fn subscribe(&self) -> (broadcast::Receiver<Arc<gpr_event::Model>>, i64) {
        let receiver = self.sender.subscribe();
        (receiver, self.published())
    }

    /// The id up to which every event has been published. Reading the database beyond it
    /// could return a row above a gap that is still filling, out of order.
    pub fn published(&self) -> i64 {
        self.published.load(Ordering::Acquire)
    }

    /// Tails the table until `stop` completes.
    pub async fn run(self: Arc<Self>, stop: impl Future<Output = ()>) {
        let mut tail = IdTail::new(self.published());
        // Rows read but waiting for a gap below them to fill.
        let mut held = BTreeMap::new();
        tokio::pin!(stop);
        loop {
            tokio::select! {
                _ = &mut stop => return,
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(FALLBACK_POLL) => {}
            }
            if let Err(error) = self.poll(&mut tail, &mut held).await {
                tracing::warn!(%error, "the event tailer failed to read new events; retrying");
            }
        }
    }

    async fn poll(&self, tail: &mut IdTail, held: &mut BTreeMap<i64, Arc<gpr_event::Model>>) -> Result<(), sea_orm::DbErr> {
        loop {
            let rows = gpr_event::Entity::find()
                .filter(gpr_event::Column::Id.gt(tail.settled()))
                .order_by_asc(gpr_event::Column::Id)
                .limit(BATCH)
                .all(&self.db)
                .await?;
            let fetched = rows.len() as u64;
            let now = Instant::now();
            for row in rows {
                if tail.admit(row.id, now) {
                    held.insert(row.id, Arc::new(row));
                }
            }
            let releasable = tail.releasable(now);
            while let Some(row) = held.first_entry().filter(|row| *row.key() <= releasable) {
                // No subscriber is fine: nobody is listening yet.
                let _ = self.sender.send(row.remove());
            }
            tail.settle(now);
            self.published.store(releasable, Ordering::Release);
            if fetched < BATCH {
                return Ok(());
            }
        }
    }
}

/// Where a tailer of an id-ordered table stands (GPR events here, alert transitions in
/// [`crate::alerts::feed`]). PostgreSQL hands out ids before commit, so a row may become visible
/// after a higher one: ids skipped over are remembered for a while, and a late row filling one
/// is still new.
#[derive(Clone, Debug)]
pub(crate) struct IdTail {
    /// Every row with an id at or below this has been seen (or given up on).
    settled: i64,
    newest: i64,
    /// Ids below `newest` not seen yet, with when the gap was noticed.
    missing: BTreeMap<i64, Instant>,
}

impl IdTail {
    /// A tail that has seen everything up to `start`.
    pub(crate) fn new(start: i64) -> Self {
        Self { settled: start, newest: start, missing: BTreeMap::new() }
    }

    /// Read rows with ids above this.
    pub(crate) fn settled(&self) -> i64 {
        self.settled
    }

    /// Whether the row `id` (read in ascending order, above [`IdTail::settled`]) is new: not
    /// seen before, or a late commit filling a gap.
    pub(crate) fn admit(&mut self, id: i64, now: Instant) -> bool {
        if id > self.newest {
            if id - self.newest <= MAX_TRACKED_GAP {
                self.missing.extend((self.newest + 1..id).map(|gap| (gap, now)));
            }
            self.newest = id;
            true
        } else {
            self.missing.remove(&id).is_some()
        }
    }

    /// Rows up to this may go out: everything below the first gap younger than
    /// [`HOLD_FOR_GAP`] has been seen.
    pub(crate) fn releasable(&self, now: Instant) -> i64 {
        self.missing.iter().find(|(_, since)| now.duration_since(**since) < HOLD_FOR_GAP).map_or(self.newest, |(gap, _)| gap - 1)
    }

    /// Gives up on gaps older than [`GAP_PATIENCE`] and moves `settled` up to the first gap left.
    pub(crate) fn settle(&mut self, now: Instant) {
        self.missing.retain(|_, since| now.duration_since(*since) < GAP_PATIENCE);
        self.settled = self.missing.keys().next().map_or(self.newest, |first| first - 1);
    }
}

/// GPR events written in the transactions that hand nodes to GPRs or take them back.
pub const MOVES_NODES: [GprEventKind; 11] = [
    GprEventKind::ProvisioningStarted,
    GprEventKind::NodeReplaced,
    GprEventKind::Degraded,
    GprEventKind::Releasing,
    GprEventKind::Completed,
    GprEventKind::EarlyReleased,
    GprEventKind::IdleReleased,
    GprEventKind::Preempted,
    GprEventKind::Requeued,
    GprEventKind::Failed,
    GprEventKind::Cancelled,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_commit_filling_a_gap_is_new_once_and_old_gaps_are_given_up() {
        let now = Instant::now();
        let mut tail = IdTail::new(10);
        assert!(tail.admit(11, now) && tail.admit(14, now), "ids 12 and 13 are in flight");
        tail.settle(now);
        assert_eq!(tail.settled(), 11, "read again from the first gap");
        assert_eq!(tail.releasable(now), 11, "14 waits for 12 and 13");
        assert_eq!(tail.releasable(now + HOLD_FOR_GAP), 14, "but not for ever");
        assert!(tail.admit(13, now), "a late commit is new");
        assert!(!tail.admit(13, now) && !tail.admit(14, now), "seen rows are not new again");
        tail.settle(now + GAP_PATIENCE);
        assert_eq!(tail.settled(), 14, "12 rolled back: given up");
    }
}
