//! `inventoryChanged`: nodes added, removed, changing health (`STALE` when an agent falls
//! silent, and back), allocated to or released by a GPR, changing state or description.
//!
//! The nodes table is the truth, and a node changes through many writers (`upsertNodes`, agents,
//! the scheduler handing nodes to GPRs and taking them back, a cluster's removal) on any
//! replica, and through time alone (`STALE` is computed on read). So each replica runs one
//! watcher, while anyone there subscribes, that re-reads the nodes and publishes the difference
//! with what it read last ([`diff`]). It looks when told (a local mutation, another replica's
//! announcement over Redis, a GPR event that moves nodes), when the next node would turn
//! stale, and at least every [`FALLBACK_POLL`]. Every change is seen on every replica however
//! it was made, one read serves all of a replica's subscribers, and with nobody subscribed it
//! costs nothing.

use super::liveness::{STALE_AFTER_SECS, effective_health};
use crate::events::EventFeed;
use crate::ports::Announce;
use chrono::{DateTime, Utc};
use egs_entities::{Health, node};
use sea_orm::{DatabaseConnection, EntityTrait};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio::sync::{Mutex, Notify, broadcast};

/// What happened to a node.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "graphql", derive(async_graphql::Enum))]
pub enum InventoryChangeKind {
    /// Registered (`upsertNodes`).
    NodeAdded,
    /// Removed (`removeNode`, or its cluster was removed).
    NodeRemoved,
    /// Its health as readers see it changed: reported `HEALTHY`/`UNHEALTHY`, or `STALE` when
    /// its agent fell silent, and back when it reports again.
    HealthChanged,
    /// Handed to a GPR (or to another one).
    Allocated,
    /// Given back to the pool.
    Released,
    /// Its state changed otherwise (e.g. cordoned, draining).
    StateChanged,
    /// Its description changed (instance type, shape, GPUs, memory, driver, thresholds).
    NodeUpdated,
}

/// Changes a subscriber may fall behind by before it misses some.
const CHANNEL_CAPACITY: usize = 4096;
/// The watcher re-reads at least this often (a lost announcement, a write that told nobody).
pub const FALLBACK_POLL: Duration = Duration::from_secs(2);
/// A burst of wake-ups (one transaction, several events) settles into one read.
const SETTLE: Duration = Duration::from_millis(50);
/// One change of one node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeChange {
    pub kind: InventoryChangeKind,
    /// The node as read after the change (before it, for a removal).
    pub node: node::Model,
    /// Health as readers see it after the change.
    pub health: Health,
    /// Health before the change; `None` for a new node.
    pub previous_health: Option<Health>,
    pub at: DateTime<Utc>,
}

/// A node as the watcher last read it, with its health as readers saw it then.
#[derive(Clone, Debug, PartialEq)]
pub struct Seen {
    pub node: node::Model,
    pub health: Health,
}

pub type Snapshot = BTreeMap<i64, Seen>;

/// Reads every node, with its health at `now`.
pub async fn load(db: &DatabaseConnection, now: DateTime<Utc>) -> Result<Snapshot, sea_orm::DbErr> {
    Ok(node::Entity::find().all(db).await?.into_iter().map(|n| (n.id, Seen { health: effective_health(&n, now), node: n })).collect())
}

fn described_alike(a: &node::Model, b: &node::Model) -> bool {
    (&a.name, &a.instance_type, &a.gpu_shape, a.gpus_per_node, a.gpu_memory_mib, &a.driver_version)
        == (&b.name, &b.instance_type, &b.gpu_shape, b.gpus_per_node, b.gpu_memory_mib, &b.driver_version)
        && a.power_threshold_watts == b.power_threshold_watts
        && a.temperature_threshold_celsius == b.temperature_threshold_celsius
}

/// What changed between two reads, by node id. A node may change in several ways at once
/// (handed to a GPR as its agent goes silent): each is a change of its own. Heartbeats alone
/// are not changes.
pub fn diff(before: &Snapshot, after: &Snapshot, at: DateTime<Utc>) -> Vec<NodeChange> {
    let mut changes = Vec::new();
    let change = |kind, seen: &Seen, previous_health| NodeChange { kind, node: seen.node.clone(), health: seen.health, previous_health, at };
    for (id, now) in after {
        let Some(was) = before.get(id) else {
            changes.push(change(InventoryChangeKind::NodeAdded, now, None));
            continue;
        };
        let previous = Some(was.health);
        if was.node.allocated_gpr_id != now.node.allocated_gpr_id {
            let kind = if now.node.allocated_gpr_id.is_some() { InventoryChangeKind::Allocated } else { InventoryChangeKind::Released };
            changes.push(change(kind, now, previous));
        } else if was.node.state != now.node.state {
            changes.push(change(InventoryChangeKind::StateChanged, now, previous));
        }
        if was.health != now.health {
            changes.push(change(InventoryChangeKind::HealthChanged, now, previous));
        }
        if !described_alike(&was.node, &now.node) {
            changes.push(change(InventoryChangeKind::NodeUpdated, now, previous));
        }
    }
    for (id, was) in before {
        if !after.contains_key(id) {
            changes.push(change(InventoryChangeKind::NodeRemoved, was, Some(was.health)));
        }
    }
    changes
}

/// How long until the watcher should look again: when the next node read as healthy would
/// turn stale, at most [`FALLBACK_POLL`].
pub fn next_look(known: &Snapshot, now: DateTime<Utc>) -> Duration {
    let next_stale = known
        .values()
        .filter(|s| s.health == Health::Healthy)
        .filter_map(|s| s.node.last_heartbeat_at)
        .map(|at| at + chrono::Duration::seconds(STALE_AFTER_SECS))
        .filter(|at| *at > now)
        .min();
    match next_stale {
        Some(at) => (at - now).to_std().unwrap_or_default().clamp(SETTLE, FALLBACK_POLL),
        None => FALLBACK_POLL,
    }
}

/// Node changes for this replica's `inventoryChanged` subscribers.
pub struct InventoryFeed {
    db: DatabaseConnection,
    sender: broadcast::Sender<Arc<NodeChange>>,
    wake: Notify,
    fanout: Arc<dyn Announce>,
    /// GPR events nudge the watcher when nodes change hands.
    events: Arc<EventFeed>,
    /// Whether the watcher runs; it stops with the last subscriber.
    running: Mutex<bool>,
}

impl InventoryFeed {
    pub fn new(db: DatabaseConnection, fanout: Arc<dyn Announce>, events: Arc<EventFeed>) -> Arc<Self> {
        let (sender, _) = broadcast::channel(CHANNEL_CAPACITY);
        Arc::new(Self { db, sender, wake: Notify::new(), fanout, events, running: Mutex::new(false) })
    }

    /// Nodes were written here: look now, and tell the other replicas.
    pub fn changed(&self) {
        self.wake();
        self.fanout.announce();
    }

    /// Nodes were written elsewhere.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Changes from now on. Starts the watcher (reading the nodes it compares against first)
    /// unless it runs already.
    pub async fn subscribe(self: &Arc<Self>) -> Result<broadcast::Receiver<Arc<NodeChange>>, sea_orm::DbErr> {
        let mut running = self.running.lock().await;
        let receiver = self.sender.subscribe();
        if !*running {
            let known = load(&self.db, Utc::now()).await?;
            *running = true;
            tokio::spawn(self.clone().watch(known));
        }
        Ok(receiver)
    }

    async fn watch(self: Arc<Self>, mut known: Snapshot) {
        let (mut nudges, _) = self.events.subscribe();
        let mut nudged = true;
        loop {
            tokio::select! {
                _ = self.wake.notified() => {}
                received = nudges.recv(), if nudged => match received {
                    Ok(event) if !crate::events::MOVES_NODES.contains(&event.kind) => continue,
                    Ok(_) | Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => {
                        nudged = false;
                        continue;
                    }
                },
                _ = tokio::time::sleep(next_look(&known, Utc::now())) => {}
            }
            tokio::time::sleep(SETTLE).await;
            while !matches!(nudges.try_recv(), Err(TryRecvError::Empty | TryRecvError::Closed)) {}
            if self.sender.receiver_count() == 0 {
                let mut running = self.running.lock().await;
                if self.sender.receiver_count() == 0 {
                    *running = false;
                    return;
                }
            }
            let now = Utc::now();
            match load(&self.db, now).await {
                Ok(current) => {
                    for change in diff(&known, &current, now) {
                        // No subscriber left is fine: the next look stops the watcher.
                        let _ = self.sender.send(Arc::new(change));
                    }
                    known = current;
                }
                Err(error) => tracing::warn!(%error, "the inventory watcher could not read the nodes; retrying"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use egs_entities::NodeState;

    fn node(id: i64) -> node::Model {
        let t = DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default();
        node::Model {
            id,
            cluster_id: 1,
            name: format!("n{id}"),
            instance_type: "p5".into(),
            gpu_shape: "H100".into(),
            gpus_per_node: 8,
            zone: None,
            gpu_memory_mib: 81_559,
            health: Health::Healthy,
            state: NodeState::Available,
            allocated_gpr_id: None,
            power_threshold_watts: None,
            temperature_threshold_celsius: None,
            driver_version: None,
            cuda_version: None,
            rdma: false,
            last_heartbeat_at: Some(t),
            cordoned_at: None,
            cordon_reason: None,
            cordoned_by: None,
            created_at: t,
            updated_at: t,
        }
    }

    fn snapshot(nodes: Vec<node::Model>, now: DateTime<Utc>) -> Snapshot {
        nodes.into_iter().map(|n| (n.id, Seen { health: effective_health(&n, now), node: n })).collect()
    }

    fn kinds(changes: &[NodeChange]) -> Vec<(i64, InventoryChangeKind)> {
        changes.iter().map(|c| (c.node.id, c.kind)).collect()
    }

    #[test]
    fn every_kind_of_change_is_seen_and_heartbeats_are_not_changes() {
        let t = DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default();
        let before = snapshot(vec![node(1), node(2), node(3), node(4)], t);
        let mut beat = node(1);
        beat.last_heartbeat_at = Some(t + chrono::Duration::seconds(5));
        let mut held = node(2);
        held.allocated_gpr_id = Some(9);
        held.state = NodeState::Reserved;
        let mut cordoned = node(3);
        cordoned.state = NodeState::Cordoned;
        cordoned.driver_version = Some("550.54".into());
        let after = snapshot(vec![beat, held, cordoned, node(5)], t + chrono::Duration::seconds(5));
        assert_eq!(
            kinds(&diff(&before, &after, t)),
            vec![
                (2, InventoryChangeKind::Allocated),
                (3, InventoryChangeKind::StateChanged),
                (3, InventoryChangeKind::NodeUpdated),
                (5, InventoryChangeKind::NodeAdded),
                (4, InventoryChangeKind::NodeRemoved),
            ]
        );
    }

    #[test]
    fn a_silent_agent_turns_its_node_stale_and_a_report_brings_it_back() {
        let t = DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default();
        let fresh = snapshot(vec![node(1)], t);
        let later = t + chrono::Duration::seconds(STALE_AFTER_SECS);
        let stale = snapshot(vec![node(1)], later);
        let changes = diff(&fresh, &stale, later);
        assert_eq!(kinds(&changes), vec![(1, InventoryChangeKind::HealthChanged)]);
        assert_eq!((changes[0].previous_health, changes[0].health), (Some(Health::Healthy), Health::Stale));
        let mut reported = node(1);
        reported.last_heartbeat_at = Some(later);
        let back = diff(&stale, &snapshot(vec![reported], later), later);
        assert_eq!((back[0].kind, back[0].health), (InventoryChangeKind::HealthChanged, Health::Healthy));
    }

    #[test]
    fn the_watcher_looks_again_when_the_next_node_turns_stale() {
        let t = DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default();
        let known = snapshot(vec![node(1)], t);
        assert_eq!(next_look(&known, t + chrono::Duration::seconds(29)), Duration::from_secs(1));
        assert_eq!(next_look(&known, t), FALLBACK_POLL, "at most the fallback");
        assert_eq!(next_look(&Snapshot::new(), t), FALLBACK_POLL);
    }
}
