//! Queue views shared by their subscribers: every `queueChanged` subscriber of one view (the
//! same slice, pool filter and length) waits on one task that re-reads the view once per burst
//! of changes, so a stored change costs one query per distinct view, not one per subscriber.
//!
//! Access is checked when a subscriber starts (its first view is read with its own rights);
//! a subscriber whose user later loses access is ended by the transport (see the WebSocket
//! wiring's access check), so the shared read runs with no caller.

use crate::error::PublicError;
use crate::events::EventFeed;
use crate::gpr::reads::{self, QueueQuery};
use egs_entities::gpr;
use sea_orm::DatabaseConnection;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;

/// A view as last read: its rows, or why it could not be read (sent to every subscriber,
/// which then ends; its next subscriber starts a new reader).
pub type QueueView = Arc<Result<Vec<gpr::Model>, PublicError>>;

/// Queue views re-read at most this often, however busy the scheduler is: a change after a
/// quiet spell is read at once, the changes of a busy one together this long after the last
/// read began. (Waiting this long after each first change instead, a change that arrived
/// during a read waited for the read, the wait and the next read: about a second at 50
/// changes a second, the `queue_watch` bench.)
const COALESCE: Duration = Duration::from_millis(500);
/// How far apart subscribers' deliveries of one read are spread, per subscriber watching, up
/// to [`MAX_SPREAD`]. Waking 25,000 subscribers at once queues every other request behind them
/// (a quarter of a second on two cores, the `queue_watch` bench); spread over half a second,
/// other requests slip in between.
const SPREAD_PER_WATCHER: Duration = Duration::from_micros(20);
const MAX_SPREAD: Duration = Duration::from_millis(500);

pub struct QueueViews {
    db: DatabaseConnection,
    events: Arc<EventFeed>,
    /// One sender per view being watched; its reader task ends when the last subscriber goes.
    views: Mutex<HashMap<QueueQuery, watch::Sender<QueueView>>>,
    /// Subscribers watching any view now.
    watchers: Arc<std::sync::atomic::AtomicUsize>,
}

/// A subscriber's place among the watchers; counts while it lives.
pub struct Watching(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for Watching {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl QueueViews {
    pub fn new(db: DatabaseConnection, events: Arc<EventFeed>) -> Arc<Self> {
        Arc::new(Self { db, events, views: Mutex::new(HashMap::new()), watchers: Default::default() })
    }

    /// Later reads of `query`'s view, starting with `first` (read by the subscriber with its
    /// own rights) when this view has no reader yet. The receiver sees the current value as
    /// seen: only reads made after it subscribed wake it.
    pub fn watch(self: &Arc<Self>, query: QueueQuery, first: &[gpr::Model]) -> (watch::Receiver<QueueView>, Watching) {
        self.watchers.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let watching = Watching(self.watchers.clone());
        let mut views = self.views.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(view) = views.get(&query) {
            let mut receiver = view.subscribe();
            receiver.borrow_and_update();
            return (receiver, watching);
        }
        let (sender, mut receiver) = watch::channel(Arc::new(Ok(first.to_vec())));
        receiver.borrow_and_update();
        views.insert(query.clone(), sender.clone());
        tokio::spawn(self.clone().read_on_change(query, sender));
        (receiver, watching)
    }

    /// How long one subscriber waits before taking a new read: a random share of the spread,
    /// which grows with the number watching (nothing to speak of for a few hundred).
    pub fn spread(&self) -> Duration {
        let watchers = self.watchers.load(std::sync::atomic::Ordering::Relaxed) as u32;
        let spread = SPREAD_PER_WATCHER.saturating_mul(watchers).min(MAX_SPREAD);
        spread.mul_f64(rand::random::<f64>())
    }

    /// Reads `query`'s view after changes, at most once per [`COALESCE`], and publishes it
    /// when it differs, until nobody watches it.
    async fn read_on_change(self: Arc<Self>, query: QueueQuery, view: watch::Sender<QueueView>) {
        let mut changes = self.events.watch_queue();
        changes.borrow_and_update();
        let mut last_read: Option<tokio::time::Instant> = None;
        loop {
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { break },
                () = view.closed() => {}
            }
            // What changes meanwhile goes into this read.
            if let Some(at) = last_read {
                tokio::time::sleep_until(at + COALESCE).await;
            }
            changes.borrow_and_update();
            if self.forget_if_unwatched(&query, &view) {
                return;
            }
            last_read = Some(tokio::time::Instant::now());
            let read = reads::queue_unchecked(&self.db, query.clone()).await.map_err(PublicError::from);
            let failed = read.is_err();
            view.send_if_modified(|current| {
                let differs = match (&**current, &read) {
                    (Ok(before), Ok(now)) => fingerprint(before) != fingerprint(now),
                    _ => true,
                };
                if differs {
                    *current = Arc::new(read);
                }
                differs
            });
            if failed {
                break;
            }
        }
        // The feed ended or the read failed: subscribers have been told; the next one starts over.
        let mut views = self.views.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if views.get(&query).is_some_and(|current| current.same_channel(&view)) {
            views.remove(&query);
        }
    }

    /// Drops the view when nobody watches it; under the lock, so a subscriber joining now
    /// either finds the view alive or starts a new reader.
    fn forget_if_unwatched(&self, query: &QueueQuery, view: &watch::Sender<QueueView>) -> bool {
        let mut views = self.views.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if view.receiver_count() > 0 {
            return false;
        }
        if views.get(query).is_some_and(|current| current.same_channel(view)) {
            views.remove(query);
        }
        true
    }

    /// Views being read now (for tests and the bench).
    pub fn readers(&self) -> usize {
        self.views.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).len()
    }
}

type When = Option<chrono::DateTime<chrono::Utc>>;

/// What a subscriber compares to decide whether the view changed for it: each GPR's id,
/// position, promise, estimate and priority.
pub fn fingerprint(rows: &[gpr::Model]) -> Vec<(i64, Option<i32>, When, When, i32)> {
    rows.iter().map(|g| (g.id, g.queue_position, g.start_no_later_than, g.estimated_start_at, g.priority)).collect()
}
