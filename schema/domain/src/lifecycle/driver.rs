//! The leader's scheduler driver (docs/design.md §3). While this replica holds the lease, the pure core
//! stays in memory and is fed what was stored since the last look, so a tick reads the rows
//! that changed, not the whole database. It is built from storage only when the lease is taken
//! (and after a tick failed, or a node or slice was deleted, or a node changed pool: rare
//! events where starting over is simplest); the integration test
//! `the_leaders_scheduler_fed_by_changes_equals_one_rebuilt_from_storage` checks that a rebuild
//! reaches the state the looks reached.
//!
//! Changes are found by their `updated_at` stamp (indexed). A row stamped before its
//! transaction commits becomes visible late, so each look re-reads an overlap (stamps and
//! versions first, whole rows only for what it has not seen: a burst of changes is otherwise
//! read again at every look for the overlap's length), and every few
//! looks a sweep of `(id, version)` pairs catches a commit later than that. Every GPR change
//! bumps its version except the estimates the leader itself writes, which it applies to its
//! copy as it writes them.

use super::state::{self, Snapshot};
use crate::error::Result;
use crate::gpr::phase::{ACTIVE, HOLDING};
use crate::inventory::liveness::STALE_AFTER_SECS;
use chrono::{DateTime, Duration, Utc};
use egs_entities::{GprPhase, cluster, gpr, node, slice, slice_cluster};
use egs_scheduler::{Config, Decision, Holding, Scheduler};
use sea_orm::{
    AccessMode, ColumnTrait, ConnectionTrait, DbBackend, EntityTrait, IsolationLevel, PaginatorTrait, QueryFilter, QuerySelect, TransactionSession,
    TransactionTrait,
};
use std::collections::{BTreeMap, HashMap};

/// How far back each look re-reads: a transaction may commit this long after stamping its rows.
const OVERLAP_SECS: i64 = 5;
/// Looks between sweeps of every active GPR's version (for commits later than the overlap).
const SWEEP_EVERY: u64 = 30;
/// The maintenance windows are read at most this often.
const WINDOWS_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

/// The rows of `E` whose `id` column is among `ids`, a thousand ids a statement.
async fn read_ids<E: EntityTrait>(db: &impl ConnectionTrait, id: E::Column, ids: &[i64]) -> Result<Vec<E::Model>> {
    let mut rows = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(1000) {
        rows.extend(E::find().filter(id.is_in(chunk.iter().copied())).all(db).await?);
    }
    Ok(rows)
}

pub struct Driver {
    /// The lease epoch it was built under: a new epoch means another leader may have written.
    pub epoch: i64,
    pub core: Scheduler,
    /// The stored rows the core was fed, as of the last look.
    pub state: Snapshot,
    /// Node failures under running GPRs the core decided on, for the tick to carry out.
    pub failures: Vec<Decision>,
    /// Rows stamped at or after this (less the overlap) are read on the next look.
    cursor: DateTime<Utc>,
    looks: u64,
    /// When the maintenance windows were last read; `None`: on the next look.
    pub windows_read: Option<std::time::Instant>,
}

impl Driver {
    /// The core as storage describes it, with the decisions for failed nodes under running GPRs.
    pub async fn build<C: ConnectionTrait + TransactionTrait>(db: &C, epoch: i64, now: DateTime<Utc>, config: &Config) -> Result<Self> {
        let cursor = Utc::now();
        // One consistent read: tables read at different moments could show a GPR without its
        // slice or its nodes. (SQLite's transactions read one snapshot already.)
        let txn = match db.get_database_backend() {
            DbBackend::Postgres => db.begin_with_config(Some(IsolationLevel::RepeatableRead), Some(AccessMode::ReadOnly)).await?,
            _ => db.begin().await?,
        };
        let state = Snapshot::load(&txn, now).await?;
        txn.commit().await?;
        let mut core = state.scheduler(config);
        let t = now.timestamp();
        let mut failures = Vec::new();
        for (_, node) in state.failed_links() {
            failures.extend(core.set_node_health(node, false, t));
        }
        Ok(Self { epoch, core, state, failures, cursor, looks: 0, windows_read: Some(std::time::Instant::now()) })
    }

    /// Feeds the core what was stored since the last look. `false`: something changed that the
    /// driver does not follow (a node or slice deleted, a node moved to another pool); build
    /// it again.
    pub async fn look(&mut self, db: &impl ConnectionTrait, now: DateTime<Utc>, config: &Config) -> Result<bool> {
        let wall = Utc::now();
        let since = self.cursor - Duration::seconds(OVERLAP_SECS);
        let t = now.timestamp();
        self.state.now = now;

        // The overlap re-reads rows already seen: their stamps first, whole rows only if new.
        let stamps: Vec<(i64, DateTime<Utc>)> = node::Entity::find()
            .select_only()
            .column(node::Column::Id)
            .column(node::Column::UpdatedAt)
            .filter(node::Column::UpdatedAt.gte(since))
            .into_tuple()
            .all(db)
            .await?;
        let fresh: Vec<i64> = stamps
            .into_iter()
            .filter(|(id, at)| self.state.nodes.binary_search_by_key(id, |m| m.id).map_or(true, |k| self.state.nodes[k].updated_at != *at))
            .map(|(id, _)| id)
            .collect();
        for n in read_ids::<node::Entity>(db, node::Column::Id, &fresh).await? {
            match self.state.nodes.binary_search_by_key(&n.id, |m| m.id) {
                Ok(at) => {
                    let known = &self.state.nodes[at];
                    if (&known.instance_type, &known.gpu_shape, known.cluster_id) != (&n.instance_type, &n.gpu_shape, n.cluster_id) {
                        return Ok(false);
                    }
                    self.state.nodes[at] = n;
                }
                Err(at) => {
                    // Counted as capacity below, once its health is judged.
                    self.core.upsert_node(Snapshot::node_spec(&n, false));
                    self.state.nodes.insert(at, n);
                }
            }
        }
        if node::Entity::find().count(db).await? != self.state.nodes.len() as u64 {
            return Ok(false);
        }
        let cutoff = wall - Duration::seconds(STALE_AFTER_SECS);
        let silent: Vec<(i64, Option<DateTime<Utc>>)> = node::Entity::find()
            .select_only()
            .column(node::Column::Id)
            .column(node::Column::LastHeartbeatAt)
            .filter(node::Column::LastHeartbeatAt.lte(cutoff))
            .into_tuple()
            .all(db)
            .await?;
        let silent: Vec<(i64, DateTime<Utc>)> = silent.into_iter().filter_map(|(id, at)| Some((id, at?))).collect();
        self.state.set_silent(&silent, wall);

        let slices = slice::Entity::find().filter(slice::Column::UpdatedAt.gte(since)).all(db).await?;
        if !slices.is_empty() {
            let ids: Vec<i64> = slices.iter().map(|s| s.id).collect();
            for id in &ids {
                self.state.slice_clusters.insert(*id, Vec::new());
            }
            for link in slice_cluster::Entity::find().filter(slice_cluster::Column::SliceId.is_in(ids)).all(db).await? {
                self.state.slice_clusters.entry(link.slice_id).or_default().push(link.cluster_id);
            }
            for s in slices {
                self.core.upsert_slice(self.state.slice_spec(&s));
                self.state.slices.insert(s.id, s);
            }
        }
        if slice::Entity::find().count(db).await? != self.state.slices.len() as u64 {
            return Ok(false);
        }

        // As for nodes: versions first; whole rows for what the core has not seen.
        let versions: Vec<(i64, i32, GprPhase)> = gpr::Entity::find()
            .select_only()
            .column(gpr::Column::Id)
            .column(gpr::Column::Version)
            .column(gpr::Column::Phase)
            .filter(gpr::Column::UpdatedAt.gte(since))
            .into_tuple()
            .all(db)
            .await?;
        let fresh: Vec<i64> = versions.into_iter().filter(|(id, version, phase)| self.unseen(*id, *version, phase)).map(|(id, ..)| id).collect();
        let mut rows = read_ids::<gpr::Entity>(db, gpr::Column::Id, &fresh).await?;
        self.looks += 1;
        if self.looks.is_multiple_of(SWEEP_EVERY) {
            rows.extend(self.sweep(db).await?);
        }
        let mut changed: HashMap<i64, gpr::Model> = HashMap::new();
        for row in rows {
            // Read again: it may have moved on since its version was (an unknown GPR ended).
            if self.unseen(row.id, row.version, &row.phase) {
                changed.insert(row.id, row);
            }
        }
        // The nodes of a GPR that holds nodes change only by this leader's own writes while it
        // holds the lease (admissions, replacements, which it also applies to its copy), and go
        // with a requeue: so they are read only for a GPR it does not know as holding yet. (A
        // provisioning step of a 250-node GPR read its 250 links again at every look.)
        let holding: Vec<i64> =
            changed.values().filter(|g| HOLDING.contains(&g.phase) && !self.state.links.contains_key(&g.id)).map(|g| g.id).collect();
        let mut links = state::load_links(db, holding).await?;
        let mut ids: Vec<i64> = changed.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let Some(row) = changed.remove(&id) else { continue };
            let nodes = links.remove(&id).or_else(|| self.state.links.get(&id).cloned()).unwrap_or_default();
            self.apply(row, nodes, config, t);
        }

        // Few rows (windows not over), read whole at most every second: a look runs at every
        // wake-up, many a second under load. Before the nodes are judged: a node cordoned for
        // a window that runs still counts (the window keeps it out).
        let windows_due = self.windows_read.is_none_or(|at| at.elapsed() >= WINDOWS_EVERY);
        if windows_due {
            self.state.maintenance = crate::inventory::windows::open(db).await?;
            self.windows_read = Some(std::time::Instant::now());
        }
        // Clusters' firm horizons: few rows, read whole with the windows, and at once when a
        // cluster changed (an admin who sets a horizon expects the next arrival to see it).
        let clusters_changed = windows_due || cluster::Entity::find().filter(cluster::Column::UpdatedAt.gte(since)).count(db).await? > 0;
        if clusters_changed {
            let horizons = super::state::load_firm_horizons(db).await?;
            for cluster in self.state.firm_horizons.keys().filter(|c| !horizons.contains_key(c)) {
                self.core.set_firm_horizon(*cluster, None);
            }
            for (&cluster, &horizon) in horizons.iter().filter(|(c, h)| self.state.firm_horizons.get(c) != Some(h)) {
                self.core.set_firm_horizon(cluster, Some(horizon));
            }
            self.state.firm_horizons = horizons;
        }
        self.judge_nodes(t);
        self.core.set_maintenance(self.state.maintenance.windows.clone());
        self.state.last_busy = self.state.load_last_busy(db).await?;
        self.cursor = wall;
        Ok(true)
    }

    /// Whether a stored GPR version is news to the core: another version of one it follows, or
    /// one it does not follow yet that is queued or holding nodes.
    fn unseen(&self, id: i64, version: i32, phase: &GprPhase) -> bool {
        match self.state.active.get(&id) {
            Some(known) => known.version != version,
            None => ACTIVE.contains(phase),
        }
    }

    /// Active GPRs whose stored version differs from the one the core was fed, and those that
    /// left the active phases unseen.
    async fn sweep(&self, db: &impl ConnectionTrait) -> Result<Vec<gpr::Model>> {
        let stored: HashMap<i64, i32> = gpr::Entity::find()
            .select_only()
            .column(gpr::Column::Id)
            .column(gpr::Column::Version)
            .filter(gpr::Column::Phase.is_in(ACTIVE))
            .into_tuple::<(i64, i32)>()
            .all(db)
            .await?
            .into_iter()
            .collect();
        let mut behind: Vec<i64> =
            stored.iter().filter(|(id, version)| self.state.active.get(id).is_none_or(|g| g.version != **version)).map(|(id, _)| *id).collect();
        behind.extend(self.state.active.keys().filter(|id| !stored.contains_key(id)));
        read_ids::<gpr::Entity>(db, gpr::Column::Id, &behind).await
    }

    /// Tells the core about one stored GPR change. A step the leader took itself (an admission,
    /// a preemption, a release it began) is already in the core and comes back as no change.
    fn apply(&mut self, row: gpr::Model, nodes: Vec<i64>, config: &Config, t: i64) {
        let id = row.id;
        let old = self.state.active.remove(&id);
        if let Some(before) = &old {
            self.learn_overheads(before, &row);
        }
        let pending = self.core.is_pending(id);
        let holding = self.core.holding(id);
        match row.phase {
            GprPhase::Queued => {
                if holding.is_some() {
                    self.core.finish(id, t);
                }
                match (&old, pending) {
                    // An edit: the core sees it again only when what it plans on changed.
                    (Some(before), true) if before.phase == GprPhase::Queued => {
                        if self.state.request(before) != self.state.request(&row) || Snapshot::stored_plan(before) != Snapshot::stored_plan(&row) {
                            self.core.remove_pending(id);
                            self.state.restore_queued(&mut self.core, &row);
                        }
                    }
                    // Requeued by the pass that preempted it: that pass's plan stands.
                    (_, true) => {}
                    (_, false) => self.state.restore_queued(&mut self.core, &row),
                }
                self.state.links.remove(&id);
            }
            GprPhase::Provisioning | GprPhase::Provisioned | GprPhase::Releasing => {
                // A victim the core requeued in the pass that preempted it waits there already.
                let requeued_victim = pending && holding.is_none() && row.phase == GprPhase::Releasing;
                if !requeued_victim {
                    if pending {
                        self.core.remove_pending(id);
                    }
                    self.step(&row, holding, &nodes, config, t);
                }
                self.state.links.insert(id, nodes);
            }
            _ => {
                if pending {
                    self.core.remove_pending(id);
                }
                if holding.is_some() {
                    self.core.finish(id, t);
                }
                self.state.links.remove(&id);
                return;
            }
        }
        self.state.active.insert(id, row);
    }

    /// Teaches the core's predictor how long a provisioning or a release took, when `row` is
    /// the step after one (`holding_since` marks when each began): estimates count on the
    /// overheads seen here, not only on a replay's.
    fn learn_overheads(&mut self, before: &gpr::Model, row: &gpr::Model) {
        let Some(began) = before.holding_since else { return };
        match (before.phase, row.phase, row.provisioned_at, row.completed_at) {
            (GprPhase::Provisioning, GprPhase::Provisioned, Some(done), _) => {
                self.core.predictor_mut().observe_provisioning((done - began).num_seconds());
            }
            (GprPhase::Releasing, GprPhase::Completed | GprPhase::Queued | GprPhase::Failed, _, Some(done)) => {
                self.core.predictor_mut().observe_release((done - began).num_seconds());
            }
            _ => {}
        }
    }

    /// Moves a GPR that holds nodes to its stored step.
    fn step(&mut self, row: &gpr::Model, holding: Option<Holding>, nodes: &[i64], config: &Config, t: i64) {
        let id = row.id;
        let Some(holding) = holding else {
            // Not in the core (a victim the core already took the nodes of, or a step another
            // leader took): on the nodes no other GPR holds there.
            let free: Vec<i64> = nodes.iter().copied().filter(|n| self.core.node(*n).is_some_and(|(_, by)| by.is_none_or(|by| by == id))).collect();
            self.state.restore_holding(&mut self.core, row, free, config, t);
            return;
        };
        let Some(stored) = Snapshot::assigned_pool(row).and_then(|pool| Snapshot::holding(row, row.phase, self.state.request(row), pool, config, t))
        else {
            return;
        };
        match (holding, stored.holding) {
            (Holding::Provisioning, Holding::Provisioned) => self.core.mark_provisioned(id, stored.ends_at, t),
            // Extended (`extendGpr`): checked against this core's promises before it was stored.
            (Holding::Provisioned, Holding::Provisioned) if self.core.running(id).is_some_and(|r| r.ends_at != stored.ends_at) => {
                self.core.extend(id, stored.ends_at, t)
            }
            (Holding::Provisioning | Holding::Provisioned, Holding::Releasing { until, .. }) => self.core.start_release(id, until, t),
            _ => {}
        }
    }

    /// Brings each node's standing in the core in line with its stored health, silence and
    /// state (see [`Snapshot::usable`]); failed nodes under running GPRs become decisions.
    fn judge_nodes(&mut self, t: i64) {
        let (usable, failed) = self.state.usable_and_failed();
        let failed: std::collections::HashSet<i64> = failed.into_iter().map(|(_, n)| n).collect();
        // Capacity first, so a node back from silence can replace one that just failed.
        for (&id, &usable) in &usable {
            let wanted = usable && !failed.contains(&id);
            if self.core.node(id).is_some_and(|(counted, _)| counted != wanted) && !failed.contains(&id) {
                self.core.mark_node(id, wanted, t);
            }
        }
        let mut failed: Vec<i64> = failed.into_iter().filter(|id| self.core.node(*id).is_some_and(|(counted, _)| counted)).collect();
        failed.sort_unstable();
        for id in failed {
            let decisions = self.core.set_node_health(id, false, t);
            self.failures.extend(decisions);
        }
    }

    /// A failed node left a running GPR; `replacement` took its place, if one was free.
    pub fn node_replaced(&mut self, gpr: i64, failed: i64, replacement: Option<i64>) {
        if let Some(nodes) = self.state.links.get_mut(&gpr) {
            nodes.retain(|n| *n != failed);
            nodes.extend(replacement);
        }
    }

    /// How this driver's core differs from `other`'s: the GPRs waiting (with their promises,
    /// pools and positions), those holding nodes (and their step) and each node's standing.
    /// Empty when a rebuild would plan exactly as this driver does.
    pub fn differences(&self, other: &Driver) -> Vec<String> {
        fn view(d: &Driver) -> (BTreeMap<i64, String>, BTreeMap<i64, String>, BTreeMap<i64, String>) {
            let positions = d.core.positions();
            let mut pending = BTreeMap::new();
            let mut running = BTreeMap::new();
            for g in d.state.active.values() {
                if let Some(status) = d.core.status_unpositioned(g.id) {
                    let promise = (status.start_no_later_than, status.pool, positions.get(&g.id), d.core.pending_request(g.id));
                    pending.insert(g.id, format!("{promise:?}"));
                }
                if let Some(holding) = d.core.running(g.id) {
                    // When a release began is when the core heard of it: the bound is what counts.
                    let step = match holding.holding {
                        Holding::Releasing { until, .. } => format!("releasing until {until}"),
                        Holding::Provisioning => format!("provisioning, window ends by {}", holding.ends_at),
                        Holding::Provisioned => format!("provisioned until {}", holding.ends_at),
                    };
                    running.insert(g.id, format!("{step} on {:?}", holding.nodes));
                }
            }
            let nodes = d.state.nodes.iter().filter_map(|n| Some((n.id, format!("{:?}", d.core.node(n.id)?)))).collect();
            (pending, running, nodes)
        }
        let (mine, theirs) = (view(self), view(other));
        let mut differences = Vec::new();
        for (what, a, b) in [("waiting GPR", &mine.0, &theirs.0), ("GPR holding nodes", &mine.1, &theirs.1), ("node", &mine.2, &theirs.2)] {
            for id in a.keys().chain(b.keys()).collect::<std::collections::BTreeSet<_>>() {
                if a.get(id) != b.get(id) {
                    differences.push(format!("{what} {id}: {:?} here, {:?} rebuilt", a.get(id), b.get(id)));
                }
            }
        }
        differences
    }
}
