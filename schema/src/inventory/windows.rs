//! Maintenance windows as the API shows them: `maintenanceWindows`, `planMaintenance`,
//! `cancelMaintenance`. The rules are `egs_domain::inventory::windows`.

use super::GpuNode;
use crate::ids::{self, Kind};
use crate::{app, loaded, loaders, payload, session};
use async_graphql::{Context, ID, InputObject, Object};
use chrono::{DateTime, Utc};
use egs_domain::error::Result;
use egs_domain::inventory::windows::{self, MaintenanceWindowState, Plan, WindowFilter, cancel, plan};
use egs_entities::maintenance_window as window;

pub struct MaintenanceWindow(pub window::Model);

#[Object]
impl MaintenanceWindow {
    async fn id(&self) -> ID {
        ids::encode(Kind::MaintenanceWindow, self.0.id)
    }
    async fn node(&self, ctx: &Context<'_>) -> Result<Option<GpuNode>> {
        Ok(loaded(loaders(ctx)?.node().load_one(self.0.node_id).await)?.map(GpuNode))
    }
    async fn starts_at(&self) -> DateTime<Utc> {
        self.0.starts_at
    }
    async fn ends_at(&self) -> DateTime<Utc> {
        self.0.ends_at
    }
    async fn reason(&self) -> &str {
        &self.0.reason
    }
    async fn created_by(&self) -> &str {
        &self.0.created_by
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    /// When the node was cordoned for it.
    async fn started_at(&self) -> Option<DateTime<Utc>> {
        self.0.started_at
    }
    async fn finished_at(&self) -> Option<DateTime<Utc>> {
        self.0.finished_at
    }
    async fn state(&self, ctx: &Context<'_>) -> Result<MaintenanceWindowState> {
        Ok(windows::state_at(&self.0, app(ctx)?.scheduler.clock.now()))
    }
}

#[derive(InputObject)]
pub struct PlanMaintenanceInput {
    pub node_id: ID,
    /// From when the node is out (a start up to 5 minutes past is taken as now).
    pub starts_at: DateTime<Utc>,
    /// Until when (at most 30 days after the start).
    pub ends_at: DateTime<Utc>,
    /// Why (1–500 characters): owners of the GPRs it moves read it.
    pub reason: String,
}

#[derive(InputObject)]
pub struct CancelMaintenanceInput {
    pub id: ID,
}

payload!(PlanMaintenancePayload, window: MaintenanceWindow);
payload!(
    /// The window as it was when cancelled (ahead), or as it ended (running).
    CancelMaintenancePayload,
    window: MaintenanceWindow
);

#[derive(Default)]
pub struct MaintenanceWindowMutation;

#[Object]
impl MaintenanceWindowMutation {
    /// Plans a node out of service from `startsAt` to `endsAt` (admins). The scheduler plans
    /// around it at once: no GPR is placed on the node across it, and a waiting GPR whose
    /// promise it moves is told why. When it begins the node is cordoned (a GPR still on it is
    /// evicted and requeued); when it ends the node is back.
    async fn plan_maintenance(&self, ctx: &Context<'_>, input: PlanMaintenanceInput) -> async_graphql::Result<PlanMaintenancePayload> {
        let (caller, db) = session(ctx)?;
        let now = app(ctx)?.scheduler.clock.now();
        let result = async {
            let node_id = ids::decode("nodeId", &input.node_id, Kind::GpuNode)?;
            let asked = Plan { node_id, starts_at: input.starts_at, ends_at: input.ends_at, reason: input.reason };
            plan(db, caller, now, asked).await.map(MaintenanceWindow)
        };
        PlanMaintenancePayload::after_change(ctx, result).await
    }

    /// Cancels a window (admins): one ahead is removed; one running ends now and the node is
    /// back (unless an admin cordoned it otherwise meanwhile).
    async fn cancel_maintenance(&self, ctx: &Context<'_>, input: CancelMaintenanceInput) -> async_graphql::Result<CancelMaintenancePayload> {
        let (caller, db) = session(ctx)?;
        let now = app(ctx)?.scheduler.clock.now();
        let result = async { cancel(db, caller, now, ids::decode("id", &input.id, Kind::MaintenanceWindow)?).await.map(MaintenanceWindow) };
        let payload = CancelMaintenancePayload::after_change(ctx, result).await;
        crate::inventory_changed(ctx);
        payload
    }
}

#[derive(Default)]
pub struct MaintenanceWindowQuery;

#[Object]
impl MaintenanceWindowQuery {
    /// Maintenance windows, soonest first: those not over, or with `includeFinished` the
    /// finished ones too (latest 500). Anyone signed in may read them: they say when nodes are
    /// out.
    async fn maintenance_windows(
        &self,
        ctx: &Context<'_>,
        cluster_id: Option<ID>,
        node_id: Option<ID>,
        #[graphql(default = false)] include_finished: bool,
    ) -> Result<Vec<MaintenanceWindow>> {
        let (caller, db) = session(ctx)?;
        let now = app(ctx)?.scheduler.clock.now();
        let filter = WindowFilter {
            cluster_id: cluster_id.map(|id| ids::decode("clusterId", &id, Kind::Cluster)).transpose()?,
            node_id: node_id.map(|id| ids::decode("nodeId", &id, Kind::GpuNode)).transpose()?,
            include_finished,
        };
        Ok(windows::list(db, caller, now, filter).await?.into_iter().map(MaintenanceWindow).collect())
    }
}
