//! `--demo`'s simulated node agents, so the portal's charts, hot spots, alerts and workload
//! views move: GPU samples for every node of the simulated clusters (every tick while a GPR
//! holds the node, every fifth tick when idle) and, on held nodes, one pod per node with a
//! process on each GPU in the slice's namespace. Reports go through the same services an
//! agent's do (as the system admin, so they are not heartbeats).

use crate::bootstrap::schema_error;
use chrono::{DateTime, Utc};
use egs_domain::App;
use egs_domain::auth::Caller;
use egs_domain::metrics::ingest::{NodeRef, SampleReport};
use egs_domain::workloads::service::{GpuWorkloadReport, PodReport, ProcessReport, report_workloads};
use egs_entities::{ClusterProvider, cluster, gpr, gpu, node, slice_namespace};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

const TICK: Duration = Duration::from_secs(2);
const IDLE_EVERY: u64 = 5;

/// Reports until `stop` completes.
pub async fn run(services: App, stop: impl Future<Output = ()>) {
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut simulation = Simulation::default();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            () = &mut stop => return,
            _ = tick.tick() => {}
        }
        if let Err(error) = simulation.step(&services, Utc::now()).await {
            tracing::warn!(error = %error, "demo telemetry: a report failed");
        }
    }
}

#[derive(Default)]
struct Simulation {
    ticks: u64,
    /// The GPR each node's last workload report was for, so pods are reported on changes only.
    workloads_for: HashMap<i64, Option<i64>>,
}

impl Simulation {
    async fn step(&mut self, services: &App, now: DateTime<Utc>) -> anyhow::Result<()> {
        let db = &services.db;
        let system = Caller::system();
        self.ticks += 1;
        let simulated: Vec<i64> = cluster::Entity::find()
            .filter(cluster::Column::Provider.eq(ClusterProvider::Simulated))
            .all(db)
            .await?
            .into_iter()
            .map(|c| c.id)
            .collect();
        let nodes = node::Entity::find().filter(node::Column::ClusterId.is_in(simulated)).all(db).await?;
        let mut gpus: HashMap<i64, Vec<gpu::Model>> = HashMap::new();
        for g in gpu::Entity::find().filter(gpu::Column::NodeId.is_in(nodes.iter().map(|n| n.id))).all(db).await? {
            gpus.entry(g.node_id).or_default().push(g);
        }
        // Every node's samples at once, as a fleet's agents send them: they are stored as one batch.
        let reports = nodes.iter().filter(|node| node.allocated_gpr_id.is_some() || self.ticks % IDLE_EVERY == 1).filter_map(|node| {
            let held = node.allocated_gpr_id.is_some();
            let samples = gpus.get(&node.id)?.iter().map(|g| sample(node, g, held, now)).collect();
            let system = &system;
            Some(async move { (node, services.reports.report(system, now, NodeRef::Id(node.id), samples).await) })
        });
        // One node's failed report does not hold up the others.
        for (node, outcome) in futures_util::future::join_all(reports).await {
            if let Err(error) = outcome {
                tracing::warn!(node = %node.name, error = %schema_error(error), "demo telemetry: a report failed");
            }
        }
        for node in &nodes {
            let Some(node_gpus) = gpus.get(&node.id) else { continue };
            if let Err(error) = self.report_workloads(services, &system, node, node_gpus, now).await {
                tracing::warn!(node = %node.name, error = %error, "demo telemetry: a workload report failed");
            }
        }
        Ok(())
    }

    async fn report_workloads(
        &mut self,
        services: &App,
        system: &Caller,
        node: &node::Model,
        gpus: &[gpu::Model],
        now: DateTime<Utc>,
    ) -> anyhow::Result<()> {
        let db = &services.db;
        if self.workloads_for.get(&node.id) != Some(&node.allocated_gpr_id) {
            let pods = match node.allocated_gpr_id {
                Some(gpr_id) => pods_for(services, node, gpus, gpr_id).await?,
                None => Vec::new(),
            };
            report_workloads(db, system, now, NodeRef::Id(node.id), pods, services.kubernetes.as_ref(), &services.pod_names)
                .await
                .map_err(schema_error)?;
            self.workloads_for.insert(node.id, node.allocated_gpr_id);
        }
        Ok(())
    }
}

/// One pod per node for the GPR, in the slice's namespace on the node's cluster, with a
/// process on every GPU.
async fn pods_for(services: &App, node: &node::Model, gpus: &[gpu::Model], gpr_id: i64) -> anyhow::Result<Vec<GpuWorkloadReport>> {
    let Some(gpr) = gpr::Entity::find_by_id(gpr_id).one(&services.db).await? else { return Ok(Vec::new()) };
    let namespace = slice_namespace::Entity::find()
        .filter(slice_namespace::Column::SliceId.eq(gpr.slice_id))
        .filter(slice_namespace::Column::ClusterId.eq(node.cluster_id))
        .one(&services.db)
        .await?
        .map_or_else(|| "default".to_owned(), |ns| ns.name);
    let worker = node.name.rsplit('-').next().unwrap_or("0");
    let pod = PodReport {
        uid: format!("demo-{gpr_id}-{}", node.id),
        namespace: Some(namespace),
        name: Some(format!("{}-worker-{worker}", gpr.name)),
        container: Some("trainer".into()),
        container_id: None,
    };
    Ok(gpus
        .iter()
        .map(|g| GpuWorkloadReport {
            uuid: g.uuid.clone(),
            processes: vec![ProcessReport {
                pid: 4100 + i64::from(g.gpu_index),
                used_memory_mib: Some(g.memory_mib as f64 * 0.7),
                pod: Some(pod.clone()),
            }],
        })
        .collect())
}

/// A plausible sample: busy GPUs swing with the job's phases, idle ones sit near zero, and
/// GPU 3 of each pool's first node runs hot, so hot spots and alerts have something to show.
fn sample(node: &node::Model, g: &gpu::Model, held: bool, now: DateTime<Utc>) -> SampleReport {
    let t = now.timestamp() as f64;
    let phase = g.id as f64 * 0.7;
    let jitter = rand::random::<f64>() * 4.0 - 2.0;
    let hot = held && g.gpu_index == 3 && node.name.ends_with("-00");
    let util = if held { (72.0 + 22.0 * (t / 45.0 + phase).sin() + jitter).clamp(0.0, 100.0) } else { (1.0 + jitter / 2.0).max(0.0) };
    let memory = g.memory_mib as f64;
    let mem_used = if held { memory * (0.62 + 0.2 * (t / 300.0 + phase).sin().abs()) } else { 512.0 };
    let limit = node.power_threshold_watts.unwrap_or(400.0);
    let power = if hot { limit * 1.02 } else { limit * (0.12 + 0.8 * util / 100.0) };
    let temperature = 31.0 + util * 0.45 + if hot { 16.0 } else { 0.0 } + jitter / 2.0;
    SampleReport {
        uuid: g.uuid.clone(),
        timestamp: now,
        util,
        mem_util: (util * 0.8).min(100.0),
        mem_used_mib: mem_used.min(memory),
        temperature,
        power: power.min(limit * 1.1),
        sm_clock_mhz: if held { 1755.0 } else { 345.0 },
        xid_errors: Vec::new(),
        ecc_corrected: Some(0),
        ecc_uncorrected: Some(0),
    }
}
