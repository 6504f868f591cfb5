//! The time-driven rules every replica runs: stale nodes, idle and under-used GPRs, quiet XID and ECC alerts,
//! subjects gone or handed over; and forgetting old transitions.

use super::rules::{self, GPU_KINDS};
use super::service::{CHANGE_RETENTION_SECS, Target, Writer, gpr_subject, node_subject, open_of};
use crate::error::Result;
use crate::inventory::liveness::STALE_AFTER_SECS;
use chrono::{DateTime, Duration, Utc};
use egs_entities::{AlertKind, GprPhase, alert, alert_change, gpr, gpr_node, gpu, node, slice};
use sea_orm::{ColumnTrait, Condition, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Runs the time-driven rules once: `NODE_STALE` (judged on `wall`, the time node health reads
/// with), `GPR_IDLE` (on `clock`, the lifecycle's, which the idle release itself reads), quiet
/// XID and ECC alerts, and alerts whose subject went away or whose node changed hands.
/// Returns how many transitions it stored.
pub async fn sweep(db: &DatabaseConnection, wall: DateTime<Utc>, clock: DateTime<Utc>, windows: &mut Windows) -> Result<usize> {
    let open = alert::Entity::find().filter(alert::Column::ClearedAt.is_null()).order_by_asc(alert::Column::Id).all(db).await?;
    let mut writer = Writer::new(db, open.clone());

    // Nodes that went silent, and those open alerts are about.
    let referenced: BTreeSet<i64> =
        open.iter().filter(|a| a.kind == AlertKind::NodeStale || GPU_KINDS.contains(&a.kind)).filter_map(|a| a.node_id).collect();
    let mut which = Condition::any().add(node::Column::LastHeartbeatAt.lte(wall - Duration::seconds(STALE_AFTER_SECS)));
    if !referenced.is_empty() {
        which = which.add(node::Column::Id.is_in(referenced.iter().copied()));
    }
    let nodes: BTreeMap<i64, node::Model> = node::Entity::find().filter(which).all(db).await?.into_iter().map(|n| (n.id, n)).collect();
    for n in nodes.values() {
        let subject = node_subject(n.id);
        let open = writer.rule_open(AlertKind::NodeStale, &subject);
        for decision in rules::node_staleness(wall, n.last_heartbeat_at, STALE_AFTER_SECS, open.as_ref(), n.allocated_gpr_id) {
            writer.apply(decision, &Target::Node(n), wall).await?;
        }
    }

    let gpu_ids: Vec<i64> = open.iter().filter(|a| GPU_KINDS.contains(&a.kind)).filter_map(|a| a.gpu_id).collect();
    let gpus: HashMap<i64, gpu::Model> = if gpu_ids.is_empty() {
        HashMap::new()
    } else {
        gpu::Entity::find().filter(gpu::Column::Id.is_in(gpu_ids)).all(db).await?.into_iter().map(|g| (g.id, g)).collect()
    };
    for a in &open {
        let node = a.node_id.and_then(|id| nodes.get(&id));
        let gone = match a.kind {
            AlertKind::NodeStale if node.is_none() => Some("the node was removed"),
            kind if GPU_KINDS.contains(&kind) => match (node, a.gpu_id.and_then(|id| gpus.get(&id))) {
                (None, _) => Some("the node was removed"),
                (_, None) => Some("the GPU was removed"),
                (Some(n), Some(g)) if g.node_id != n.id => Some("the GPU moved to another node"),
                (Some(n), _) if n.allocated_gpr_id != a.gpr_id => Some("the node changed hands"),
                _ => None,
            },
            _ => None,
        };
        if let Some(resolution) = gone {
            writer.clear(a.kind, &a.subject, resolution, wall).await?;
        } else if matches!(a.kind, AlertKind::XidError | AlertKind::EccError) {
            let mut state = Some(open_of(a));
            if let Some(decision) = rules::quiet(&mut state, a.kind, wall)
                && let (Some(n), Some(g)) = (node, a.gpu_id.and_then(|id| gpus.get(&id)))
            {
                writer.apply(decision, &Target::Gpu { node: n, gpu: g }, wall).await?;
            }
        }
    }

    let provisioned = gpr::Entity::find().filter(gpr::Column::Phase.eq(GprPhase::Provisioned)).all(db).await?;
    let floors = underuse_floors(db, &provisioned).await?;
    let idle_watched: Vec<&gpr::Model> = provisioned.iter().filter(|g| g.idle_timeout_secs.is_some()).collect();
    let underuse_watched: Vec<&gpr::Model> = provisioned.iter().filter(|g| floors.contains_key(&g.slice_id)).collect();
    let held = HeldGpus::load(db, idle_watched.iter().chain(&underuse_watched).map(|g| g.id).collect()).await?;
    sweep_idle_gprs(&mut writer, &open, &idle_watched, &held, clock).await?;
    sweep_underused_gprs(&mut writer, &open, &underuse_watched, &floors, &held, windows, clock).await?;
    Ok(writer.stored)
}

/// The GPUs of the nodes the watched GPRs hold, read once per sweep for both GPR rules.
struct HeldGpus {
    gpus_of_node: HashMap<i64, Vec<gpu::Model>>,
    nodes_of_gpr: HashMap<i64, Vec<i64>>,
}

impl HeldGpus {
    async fn load(db: &DatabaseConnection, gpr_ids: HashSet<i64>) -> Result<Self> {
        let mut held = Self { gpus_of_node: HashMap::new(), nodes_of_gpr: HashMap::new() };
        if gpr_ids.is_empty() {
            return Ok(held);
        }
        let links = gpr_node::Entity::find().filter(gpr_node::Column::GprId.is_in(gpr_ids)).all(db).await?;
        for l in &links {
            held.nodes_of_gpr.entry(l.gpr_id).or_default().push(l.node_id);
        }
        let node_ids: HashSet<i64> = links.iter().map(|l| l.node_id).collect();
        for g in gpu::Entity::find().filter(gpu::Column::NodeId.is_in(node_ids)).all(db).await? {
            held.gpus_of_node.entry(g.node_id).or_default().push(g);
        }
        Ok(held)
    }

    /// The GPUs of `g`'s nodes.
    fn of(&self, g: &gpr::Model) -> impl Iterator<Item = &gpu::Model> {
        self.nodes_of_gpr.get(&g.id).into_iter().flatten().filter_map(|n| self.gpus_of_node.get(n)).flatten()
    }
}

/// Whether `gpu` has reported since `g` got it.
fn reported_since_held(gpu: &gpu::Model, g: &gpr::Model) -> bool {
    gpu.last_sample_at.zip(g.provisioned_at).is_some_and(|(at, since)| at >= since)
}

async fn sweep_idle_gprs(
    writer: &mut Writer<'_>,
    open: &[alert::Model],
    watched: &[&gpr::Model],
    held: &HeldGpus,
    clock: DateTime<Utc>,
) -> Result<()> {
    for g in watched {
        // As the idle release reads it: no verdict until every GPU reported in the window.
        let gpus: Vec<&gpu::Model> = held.of(g).collect();
        let idle_since = g
            .provisioned_at
            .filter(|_| !gpus.is_empty() && gpus.iter().all(|gpu| reported_since_held(gpu, g)))
            .map(|since| gpus.iter().filter_map(|gpu| gpu.last_busy_at).max().unwrap_or(since).max(since));
        let is_open = writer.open.contains_key(&(AlertKind::GprIdle, gpr_subject(g.id)));
        if let Some(decision) = rules::gpr_idleness(clock, g.idle_timeout_secs.unwrap_or_default(), idle_since, is_open) {
            writer.apply(decision, &Target::Gpr(g), clock).await?;
        }
    }
    let ids: HashSet<i64> = watched.iter().map(|g| g.id).collect();
    for a in open.iter().filter(|a| a.kind == AlertKind::GprIdle && a.gpr_id.is_none_or(|id| !ids.contains(&id))) {
        writer.clear(AlertKind::GprIdle, &a.subject, "the GPR is no longer provisioned with an idle timeout", clock).await?;
    }
    Ok(())
}

/// Each watched GPR's utilisation as this replica sampled it, kept from sweep to sweep (a
/// replica that starts anew waits a whole period before it judges).
pub type Windows = HashMap<i64, rules::UtilisationWindow>;

/// The under-use floor (percent) and period of each slice of `provisioned` whose policy sets one.
async fn underuse_floors(db: &DatabaseConnection, provisioned: &[gpr::Model]) -> Result<HashMap<i64, (f64, i64)>> {
    let slice_ids: HashSet<i64> = provisioned.iter().map(|g| g.slice_id).collect();
    if slice_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let slices = slice::Entity::find().filter(slice::Column::Id.is_in(slice_ids)).all(db).await?;
    Ok(slices
        .into_iter()
        .filter_map(|s| s.policy.underuse_below_percent.map(|below| (s.id, (f64::from(below), s.policy.underuse_period_secs))))
        .collect())
}

/// `GPR_UNDERUSED`: samples the mean utilisation of every provisioned GPR whose slice policy
/// sets a floor, and judges its window.
async fn sweep_underused_gprs(
    writer: &mut Writer<'_>,
    open: &[alert::Model],
    watched: &[&gpr::Model],
    floors: &HashMap<i64, (f64, i64)>,
    held: &HeldGpus,
    windows: &mut Windows,
    clock: DateTime<Utc>,
) -> Result<()> {
    let ids: HashSet<i64> = watched.iter().map(|g| g.id).collect();
    windows.retain(|id, _| ids.contains(id));
    for g in watched {
        let (below, period) = floors[&g.slice_id];
        // GPUs that reported since the GPR got them; none yet, no verdict.
        let utils: Vec<f64> = held.of(g).filter(|gpu| reported_since_held(gpu, g)).filter_map(|gpu| gpu.latest_util).collect();
        if utils.is_empty() {
            continue;
        }
        let window = windows.entry(g.id).or_default();
        window.push_back((clock, utils.iter().sum::<f64>() / utils.len() as f64));
        // Keep the last sample before the period starts: it holds until the next.
        let from = clock - Duration::seconds(period);
        while window.len() >= 2 && window[1].0 <= from {
            window.pop_front();
        }
        let is_open = writer.open.contains_key(&(AlertKind::GprUnderused, gpr_subject(g.id)));
        if let Some(decision) = rules::gpr_underuse(clock, window, below, period, is_open) {
            writer.apply(decision, &Target::Gpr(g), clock).await?;
        }
    }
    for a in open.iter().filter(|a| a.kind == AlertKind::GprUnderused && a.gpr_id.is_none_or(|id| !ids.contains(&id))) {
        writer
            .clear(AlertKind::GprUnderused, &a.subject, "the GPR is no longer provisioned, or its slice no longer watches under-use", clock)
            .await?;
    }
    Ok(())
}

/// Forgets transitions older than [`CHANGE_RETENTION_SECS`].
pub async fn prune_changes(db: &DatabaseConnection, now: DateTime<Utc>) -> Result<u64> {
    let cutoff = now - Duration::seconds(CHANGE_RETENTION_SECS);
    Ok(alert_change::Entity::delete_many().filter(alert_change::Column::At.lt(cutoff)).exec(db).await?.rows_affected)
}

/// How often the sweeper forgets old transitions.
const PRUNE_EVERY: std::time::Duration = std::time::Duration::from_secs(3600);

/// Runs [`sweep`] every `every` until `stop` completes, waking `hub` when it stored transitions.
/// Every replica runs one: the unique index and the conditional clears make a transition
/// stored once however many sweep, and no replica has to be the leader for alerts to work.
pub async fn run_sweeper(
    db: DatabaseConnection,
    hub: std::sync::Arc<super::feed::AlertFeed>,
    clock: std::sync::Arc<dyn crate::ports::Clock>,
    every: std::time::Duration,
    stop: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(stop);
    let mut last_prune: Option<std::time::Instant> = None;
    let mut windows = Windows::new();
    loop {
        tokio::select! {
            _ = &mut stop => return,
            _ = tokio::time::sleep(every) => {}
        }
        match sweep(&db, Utc::now(), clock.now(), &mut windows).await {
            Ok(0) => {}
            Ok(_) => hub.changed(),
            Err(error) => tracing::warn!(error = ?error, "the alert sweep failed; retrying at the next one"),
        }
        if last_prune.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
            last_prune = Some(std::time::Instant::now());
            if let Err(error) = prune_changes(&db, Utc::now()).await {
                tracing::warn!(error = ?error, "could not prune old alert transitions");
            }
        }
    }
}
