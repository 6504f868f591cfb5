//! What the Kubernetes controllers share: the database, the cluster clients, the feeds they
//! wake and their timers.

use super::KubeClusters;
use egs_domain::events::EventFeed;
use egs_domain::inventory::live::InventoryFeed;
use egs_domain::lifecycle::SchedulerHandle;
use sea_orm::DatabaseConnection;
use std::sync::Arc;
use std::time::Duration;

/// What the controllers share.
pub struct ControllerContext {
    pub db: DatabaseConnection,
    pub clusters: Arc<KubeClusters>,
    pub inventory: Arc<InventoryFeed>,
    pub scheduler: Arc<SchedulerHandle>,
    pub events: Arc<EventFeed>,
    pub config: ControllerConfig,
}

impl ControllerContext {
    /// Something the controllers stored: tell subscribers and the scheduler.
    pub fn changed(&self) {
        self.events.changed();
        self.scheduler.wake();
    }
}

#[derive(Clone, Debug)]
pub struct ControllerConfig {
    /// How often the supervisor looks for registered or removed clusters.
    pub cluster_poll: Duration,
    /// How often GPR resources' status is refreshed from the gateway (besides on changes).
    pub status_resync: Duration,
    /// How long a GPU pod stays Pending before auto-GPR asks for nodes.
    pub auto_gpr_pending_for: Duration,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self { cluster_poll: Duration::from_secs(5), status_resync: Duration::from_secs(5), auto_gpr_pending_for: Duration::from_secs(30) }
    }
}
