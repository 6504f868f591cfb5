//! One tick of the leader: feed the core what changed, plan, and persist each decision
//! (admissions, releases, node failures, milestones and estimates) in fenced transactions.

use super::state::Snapshot;
use super::*;
use crate::error::Result;
use crate::events::record_event;
use crate::gpr::phase::{EXIT_WARNING_BIT, MILESTONES};
use chrono::{DateTime, Duration, Utc};
use egs_entities::{GprEventKind, GprPhase, NodeState, ReleaseReason, StepOperation, cluster, gpr, gpr_node, node};
use egs_scheduler::Decision;
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Nodes one tick hands out (its first admission may be larger). Storing an admission costs
/// about 70 µs a node on PostgreSQL on a quiet database and two to three times that beside the
/// provisioning jobs of the GPRs just started, so a pass that starts a whole fleet at once
/// (GPRs that waited for the same start) would hold the tick for seconds; the next tick, which
/// runs at once, stores the rest a few milliseconds later. At fleet scale, ticks that stored
/// two admissions of 250 nodes took 65–134 ms, those that stored one 10–50 ms.
pub(super) const ADMITTED_NODES_PER_TICK: usize = 256;

/// Splits a pass's admissions into those this tick stores and those it leaves for the next:
/// in queue order while the nodes handed out stay within [`ADMITTED_NODES_PER_TICK`] (the
/// first always), and every preemptor (its victims are being released for it already). Once
/// one waits, those behind it wait too: a smaller GPR does not overtake a larger one.
pub(super) fn paced<T>(admissions: Vec<T>, id_and_nodes: impl Fn(&T) -> (i64, usize), preemptors: &HashSet<i64>) -> (Vec<T>, Vec<T>) {
    let mut handed_out = 0;
    let (mut now, mut later) = (Vec::new(), Vec::<T>::new());
    for admission in admissions {
        let (id, nodes) = id_and_nodes(&admission);
        let fits = later.is_empty() && (now.is_empty() || handed_out + nodes <= ADMITTED_NODES_PER_TICK);
        if fits || preemptors.contains(&id) {
            handed_out += nodes;
            now.push(admission);
        } else {
            later.push(admission);
        }
    }
    (now, later)
}

impl Lifecycle {
    pub(super) async fn tick(self: Arc<Self>, epoch: i64) -> Result<()> {
        let mut slot = self.handle.driver.lock().await;
        let result = self.clone().tick_with(epoch, &mut slot).await;
        if result.is_err() {
            // Storage is the truth: the next tick starts over from it.
            *slot = None;
        }
        result
    }

    pub(super) async fn tick_with(self: Arc<Self>, epoch: i64, slot: &mut Option<driver::Driver>) -> Result<()> {
        let now = self.now();
        let started = std::time::Instant::now();
        let planning = &self.handle.planning;
        let fed = match slot.as_mut().filter(|d| d.epoch == epoch) {
            Some(driver) => driver.look(self.leader(), now, planning).await?,
            None => false,
        };
        if !fed {
            *slot = Some(driver::Driver::build(self.leader(), epoch, now, planning).await?);
        }
        let Some(driver) = slot.as_mut() else { return Ok(()) };
        let t = now.timestamp();
        // Maintenance windows that began or ended: their nodes' cordons (the next look reads
        // them, and the windows again).
        if driver.state.maintenance.due(t) {
            self.advance_maintenance(epoch, now).await?;
            driver.windows_read = None;
        }

        // Timers and ends of windows first: what they free is planned in the same tick.
        let provisioned: Vec<gpr::Model> = driver.state.active.values().filter(|g| g.phase == GprPhase::Provisioned).cloned().collect();
        for g in &provisioned {
            if let Some(done) = self.milestones(epoch, g, now).await?
                && let Some(known) = driver.state.active.get_mut(&g.id)
            {
                known.milestones_done = done;
            }
        }
        let expired = driver.core.expired(t);
        let idle = driver.core.idle(t, |id| driver.state.last_busy.get(&id).map(|b| b.timestamp()).or(Some(t)));
        for g in &provisioned {
            let reason = if expired.contains(&g.id) {
                ReleaseReason::Expired
            } else if idle.contains(&g.id) {
                ReleaseReason::IdleTimeout
            } else {
                continue;
            };
            if let Some(until) = self.start_release(epoch, g, reason, None).await? {
                driver.core.start_release(g.id, until, t);
            }
        }

        // Failed nodes under provisioned GPRs: a spare from the pool, or run degraded.
        for decision in std::mem::take(&mut driver.failures) {
            let (Decision::ReplaceNode { gpr: id, .. } | Decision::Degraded { gpr: id, .. }) = decision else { continue };
            let Some(g) = driver.state.active.get(&id).cloned() else { continue };
            if let Some((failed, replacement)) = self.node_failed(epoch, &g, &driver.state, &decision).await? {
                driver.node_replaced(id, failed, replacement);
            }
        }

        let looked = started.elapsed();
        let decisions = driver.core.plan(t);
        let planned = started.elapsed();
        let mut stepped = false;
        let mut admissions = Vec::new();
        for decision in &decisions {
            match decision {
                Decision::Preempt { victim, by, .. } => {
                    if let Some(g) = driver.state.active.get(victim) {
                        self.start_release(epoch, g, ReleaseReason::Preempted, driver.state.active.get(by)).await?;
                        stepped = true;
                    }
                }
                Decision::Admit { gpr: id, pool, nodes, .. } => {
                    if let Some(g) = driver.state.active.get(id) {
                        admissions.push((g, pool, nodes.as_slice()));
                    }
                }
                Decision::ReplaceNode { .. } | Decision::Degraded { .. } => {}
            }
        }
        // After the preemptions their admissions wait for: in one transaction, as many as one
        // tick stores; the rest go back to the queue on their stored plan for the next tick.
        let preemptors: HashSet<i64> = decisions
            .iter()
            .filter_map(|d| match d {
                Decision::Preempt { by, .. } => Some(*by),
                _ => None,
            })
            .collect();
        let (admissions, deferred) = paced(admissions, |(g, _, nodes)| (g.id, nodes.len()), &preemptors);
        stepped |= self.admit_all(epoch, &admissions).await? > 0;
        for (g, ..) in &deferred {
            driver.core.finish(g.id, t);
            driver.state.restore_queued(&mut driver.core, g);
        }
        stepped |= !deferred.is_empty();
        let deferred = deferred.len();
        let causes: HashMap<i64, egs_scheduler::Cause> = driver.core.take_moves().into_iter().map(|m| (m.gpr, m.cause)).collect();
        let decided = started.elapsed();
        let estimates = self.store_estimates(epoch, &mut driver.state, &driver.core, &causes).await?;
        tracing::debug!(
            look_ms = looked.as_millis() as u64,
            plan_ms = (planned - looked).as_millis() as u64,
            decide_ms = (decided - planned).as_millis() as u64,
            estimates_ms = (started.elapsed() - decided).as_millis() as u64,
            estimates,
            decisions = decisions.len(),
            deferred,
            "tick"
        );

        // Jobs for GPRs mid-step (including those a previous leader left in flight).
        for g in driver.state.active.values().filter(|g| matches!(g.phase, GprPhase::Provisioning | GprPhase::Releasing)) {
            self.clone().spawn_job(epoch, g.clone());
        }
        if stepped {
            // The next tick reads back what these steps stored and starts their jobs.
            self.handle.wake();
        }
        Ok(())
    }

    /// Starts and ends the maintenance windows that are due (see `inventory::windows`).
    async fn advance_maintenance(&self, epoch: i64, now: DateTime<Utc>) -> Result<()> {
        let txn = self.fenced(epoch).await?;
        crate::inventory::windows::advance(&txn, now).await?;
        self.commit(txn).await?;
        Ok(())
    }

    /// Writes the 25/50/75 % and exit-warning events that are due and not yet written; the
    /// milestone bits now stored, when it wrote them.
    pub(super) async fn milestones(&self, epoch: i64, g: &gpr::Model, now: DateTime<Utc>) -> Result<Option<i32>> {
        let (Some(start), Some(exit)) = (g.provisioned_at, g.exit_at) else { return Ok(None) };
        let window = (exit - start).num_seconds().max(1);
        let mut due: Vec<(i32, GprEventKind, String)> = Vec::new();
        for (bit, kind, share) in MILESTONES {
            let at = start + Duration::seconds((window as f64 * share) as i64);
            if g.milestones_done & bit == 0 && at <= now {
                due.push((bit, kind, format!("{}% of the window has passed; exits at {}", (share * 100.0) as i32, exit.to_rfc3339())));
            }
        }
        let warn_at = (exit - self.config.exit_warning).max(start);
        if g.milestones_done & EXIT_WARNING_BIT == 0 && warn_at <= now {
            // Written even when late (the gateway was down), so the history has no gap.
            let message = if now < exit {
                format!("the window ends in {}; save your work", egs_wire::duration::format_iso((exit - now).num_seconds().max(0)))
            } else {
                "the window has ended; the nodes are being released".to_owned()
            };
            due.push((EXIT_WARNING_BIT, GprEventKind::ExitWarning, message));
        }
        if due.is_empty() {
            return Ok(None);
        }
        let done = due.iter().fold(g.milestones_done, |acc, (bit, ..)| acc | bit);
        let txn = self.fenced(epoch).await?;
        let written = gpr::Entity::update_many()
            .col_expr(gpr::Column::MilestonesDone, Expr::value(done))
            .filter(gpr::Column::Id.eq(g.id))
            .filter(gpr::Column::MilestonesDone.eq(g.milestones_done))
            .filter(gpr::Column::Phase.eq(GprPhase::Provisioned))
            .exec(&txn)
            .await?
            .rows_affected;
        if written == 1 {
            for (_, kind, message) in due {
                record_event(&txn, g, kind, message, ACTOR).await?;
            }
        }
        self.commit(txn).await?;
        Ok((written == 1).then_some(done))
    }

    /// PROVISIONED → RELEASING (or a preemption victim) with its reason and events; when the
    /// nodes are back at the latest, if it moved.
    pub(super) async fn start_release(&self, epoch: i64, g: &gpr::Model, reason: ReleaseReason, by: Option<&gpr::Model>) -> Result<Option<i64>> {
        let txn = self.fenced(epoch).await?;
        let message = match (reason, by) {
            (ReleaseReason::Expired, _) => "the reserved window ended".to_owned(),
            (ReleaseReason::IdleTimeout, _) => {
                format!("every GPU stayed idle for {}", egs_wire::duration::format_iso(g.idle_timeout_secs.unwrap_or_default()))
            }
            (ReleaseReason::Preempted, Some(by)) => format!("preempted by GPR `{}` (priority {} over {})", by.name, by.priority, g.priority),
            _ => format!("released ({})", reason.as_str()),
        };
        let now = self.now();
        let deadline = state::release_deadline(now.timestamp(), g.holds_until.map(|t| t.timestamp()), &self.handle.planning);
        let until = DateTime::from_timestamp(deadline, 0).unwrap_or(now);
        let changes = gpr::ActiveModel {
            phase: Set(GprPhase::Releasing),
            release_reason: Set(Some(reason)),
            reason: Set(Some(message.clone())),
            preempted_by_id: Set(by.map(|b| b.id)),
            holding_since: Set(Some(now)),
            holds_until: Set(Some(until)),
            version: Set(g.version + 1),
            updated_at: Set(Utc::now()),
            ..Default::default()
        };
        let moved = gpr::Entity::update_many()
            .set(changes)
            .filter(gpr::Column::Id.eq(g.id))
            .filter(gpr::Column::Phase.is_in([GprPhase::Provisioned, GprPhase::Provisioning]))
            .exec(&txn)
            .await?
            .rows_affected
            == 1;
        if moved {
            let kind = match reason {
                ReleaseReason::IdleTimeout => Some(GprEventKind::IdleReleased),
                ReleaseReason::Preempted => Some(GprEventKind::Preempted),
                _ => None,
            };
            if let Some(kind) = kind {
                record_event(&txn, g, kind, message.clone(), ACTOR).await?;
            }
            record_event(&txn, g, GprEventKind::Releasing, format!("releasing its nodes: {message}"), ACTOR).await?;
        }
        self.commit(txn).await?;
        Ok(moved.then_some(deadline))
    }

    /// A node of a provisioned GPR failed: it leaves the GPR, and a spare takes its place
    /// (`NODE_REPLACED`, then the provider hands the spare to the slice) or the GPR runs on
    /// fewer nodes (`DEGRADED`). Unlinking the failed node makes this happen once.
    /// The failed node and its replacement, once stored.
    pub(super) async fn node_failed(
        self: &Arc<Self>,
        epoch: i64,
        g: &gpr::Model,
        snapshot: &Snapshot,
        decision: &Decision,
    ) -> Result<Option<(i64, Option<i64>)>> {
        let (failed, replacement) = match *decision {
            Decision::ReplaceNode { failed, replacement, .. } => (failed, Some(replacement)),
            Decision::Degraded { failed, .. } => (failed, None),
            _ => return Ok(None),
        };
        let name = |id: i64| snapshot.nodes.iter().find(|n| n.id == id).map_or_else(|| format!("#{id}"), |n| n.name.clone());
        let txn = self.fenced(epoch).await?;
        let unlinked = gpr_node::Entity::delete_many()
            .filter(gpr_node::Column::GprId.eq(g.id))
            .filter(gpr_node::Column::NodeId.eq(failed))
            .exec(&txn)
            .await?
            .rows_affected;
        if unlinked == 0 {
            // Another leader handled it since the snapshot.
            return Ok(None);
        }
        node::Entity::update_many()
            .col_expr(node::Column::State, crate::inventory::maintenance::freed_state())
            .col_expr(node::Column::AllocatedGprId, Expr::value(Option::<i64>::None))
            .filter(node::Column::Id.eq(failed))
            .filter(node::Column::AllocatedGprId.eq(g.id))
            .exec(&txn)
            .await?;
        let (kind, message) = match replacement {
            Some(spare) => {
                gpr_node::ActiveModel { gpr_id: Set(g.id), node_id: Set(spare), assigned_at: Set(Utc::now()) }.insert(&txn).await?;
                node::Entity::update_many()
                    .col_expr(node::Column::State, Expr::value(NodeState::Reserved))
                    .col_expr(node::Column::AllocatedGprId, Expr::value(g.id))
                    .filter(node::Column::Id.eq(spare))
                    .exec(&txn)
                    .await?;
                (GprEventKind::NodeReplaced, format!("node `{}` failed; node `{}` from the same pool took its place", name(failed), name(spare)))
            }
            None => {
                let left = snapshot.links.get(&g.id).map_or(0, |l| l.len().saturating_sub(1));
                let message = format!(
                    "node `{}` failed and no node of the pool was free to replace it; running on {left} of {} node(s)",
                    name(failed),
                    g.node_count
                );
                (GprEventKind::Degraded, message)
            }
        };
        record_event(&txn, g, kind, message, ACTOR).await?;
        self.commit(txn).await?;
        if let Some(spare) = replacement {
            let (mut job, provider) = self.job_for(self.leader(), g).await?;
            let mut failed_job = job.clone();
            job.node_names = vec![name(spare)];
            job.unhealthy_nodes.retain(|n| job.node_names.contains(n));
            failed_job.node_names = vec![name(failed)];
            // The slice keeps its namespaces' placement (the GPR still runs on the spare).
            failed_job.namespaces.clear();
            failed_job.resource = None;
            let db = self.db.clone();
            self.jobs.spawn(async move {
                // Every step runs again for the spare (the GPR's rows are from its first round).
                let log = steps::DbStepLog::new(db.clone(), job.gpr_id, StepOperation::Provision, false);
                if let Err(error) = provider.provision(&job, &log).await {
                    tracing::warn!(gpr = job.gpr_id, node = ?job.node_names, %error, "handing the replacement node to the slice failed");
                }
                // Best effort, and not recorded: the GPR's release steps are for its own release.
                // What the failed node keeps is overwritten when it is next provisioned.
                if let Err(error) = provider.release(&failed_job, &provider::Unrecorded).await {
                    tracing::info!(gpr = failed_job.gpr_id, node = ?failed_job.node_names, %error, "taking the failed node back did not finish");
                }
            });
        }
        Ok(Some((failed, replacement)))
    }

    /// Stores this tick's admissions in one fenced transaction: per GPR only the
    /// version-checked phase change and its nodes' owner; the steps forgotten, the node links
    /// and the events in one statement each. A GPR edited or cancelled since the snapshot is
    /// skipped (the next tick plans it afresh). Returns how many were stored.
    pub(super) async fn admit_all(&self, epoch: i64, admissions: &[(&gpr::Model, &egs_scheduler::PoolKey, &[i64])]) -> Result<usize> {
        if admissions.is_empty() {
            return Ok(0);
        }
        let txn = self.fenced(epoch).await?;
        let now = self.now();
        let mut stored = Vec::with_capacity(admissions.len());
        for &(g, pool, nodes) in admissions {
            let changes = gpr::ActiveModel {
                holding_since: Set(Some(now)),
                holds_until: Set(Some(now + Duration::seconds(self.handle.planning.span(g.duration_secs)))),
                phase: Set(GprPhase::Provisioning),
                reason: Set(None),
                queue_position: Set(None),
                assigned_cluster_id: Set(Some(pool.cluster)),
                assigned_instance_type: Set(Some(pool.instance_type.clone())),
                assigned_gpu_shape: Set(Some(pool.gpu_shape.clone())),
                estimated_start_at: Set(None),
                start_p10_at: Set(None),
                start_p90_at: Set(None),
                start_no_later_than: Set(None),
                milestones_done: Set(0),
                version: Set(g.version + 1),
                updated_at: Set(Utc::now()),
                ..Default::default()
            };
            let moved = gpr::Entity::update_many()
                .set(changes)
                .filter(gpr::Column::Id.eq(g.id))
                .filter(gpr::Column::Version.eq(g.version))
                .filter(gpr::Column::Phase.eq(GprPhase::Queued))
                .exec(&txn)
                .await?
                .rows_affected
                == 1;
            if !moved {
                continue;
            }
            node::Entity::update_many()
                .col_expr(node::Column::State, Expr::value(NodeState::Reserved))
                .col_expr(node::Column::AllocatedGprId, Expr::value(g.id))
                .filter(node::Column::Id.is_in(nodes.to_vec()))
                .exec(&txn)
                .await?;
            stored.push((g, pool, nodes));
        }
        if stored.is_empty() {
            return Ok(0);
        }
        let ids: Vec<i64> = stored.iter().map(|(g, _, _)| g.id).collect();
        egs_entities::gpr_step::Entity::delete_many().filter(egs_entities::gpr_step::Column::GprId.is_in(ids)).exec(&txn).await?;
        let at = Utc::now();
        let links: Vec<gpr_node::ActiveModel> = stored
            .iter()
            .flat_map(|&(g, _, nodes)| {
                nodes.iter().map(move |&node_id| gpr_node::ActiveModel { gpr_id: Set(g.id), node_id: Set(node_id), assigned_at: Set(at) })
            })
            .collect();
        // Three values a row: far under either database's bound-parameter limit.
        for chunk in links.chunks(5000) {
            gpr_node::Entity::insert_many(chunk.to_vec()).exec_without_returning(&txn).await?;
        }
        let mut clusters: Vec<i64> = stored.iter().map(|(_, pool, _)| pool.cluster).collect();
        clusters.sort_unstable();
        clusters.dedup();
        let names: HashMap<i64, String> =
            cluster::Entity::find().filter(cluster::Column::Id.is_in(clusters)).all(&txn).await?.into_iter().map(|c| (c.id, c.name)).collect();
        let events = stored.iter().map(|&(g, pool, nodes)| {
            let cluster = names.get(&pool.cluster).map_or("", String::as_str);
            let message = format!("provisioning {} node(s) of {} ({}) on cluster `{cluster}`", nodes.len(), pool.gpu_shape, pool.instance_type);
            crate::events::new_event(g, GprEventKind::ProvisioningStarted, message, ACTOR)
        });
        egs_entities::gpr_event::Entity::insert_many(events).exec_without_returning(&txn).await?;
        self.commit(txn).await?;
        Ok(stored.len())
    }
}

#[cfg(test)]
mod tests;
