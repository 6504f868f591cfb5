//! Node liveness: a node whose agent fell silent reads as `STALE`.

use chrono::{DateTime, Utc};
use egs_entities::{Health, node};
use sea_orm::{ColumnTrait, Condition};

/// A node whose agent has been silent this long reads as `STALE`.
pub const STALE_AFTER_SECS: i64 = 30;

/// A node's health as readers see it: `STALE` when it has an agent (it reported once) that
/// has been silent for [`STALE_AFTER_SECS`]. A reported `UNHEALTHY` stays as it is.
pub fn effective_health(node: &node::Model, now: DateTime<Utc>) -> Health {
    match (node.health, node.last_heartbeat_at) {
        (Health::Healthy, Some(at)) if (now - at).num_seconds() >= STALE_AFTER_SECS => Health::Stale,
        (health, _) => health,
    }
}

/// The `nodes(filter: { health })` condition matching [`effective_health`].
pub fn health_condition(health: Health, now: DateTime<Utc>) -> Condition {
    let cutoff = now - chrono::Duration::seconds(STALE_AFTER_SECS);
    let healthy = node::Column::Health.eq(Health::Healthy);
    match health {
        Health::Stale => Condition::any()
            .add(node::Column::Health.eq(Health::Stale))
            .add(Condition::all().add(healthy).add(node::Column::LastHeartbeatAt.lte(cutoff))),
        Health::Healthy => Condition::all()
            .add(healthy)
            .add(Condition::any().add(node::Column::LastHeartbeatAt.is_null()).add(node::Column::LastHeartbeatAt.gt(cutoff))),
        other => Condition::all().add(node::Column::Health.eq(other)),
    }
}
