//! Reports are checked, stored in memory and handed to live subscribers as they arrive, and
//! written to the database together ("group commit"): each `reportGpuSamples` answers only
//! after its batch is through the alert rules and its write (below) is done, but the reports
//! that arrive while the previous batch is written are written and evaluated as one.
//!
//! **The database gets each node's latest values at most once per unwatched interval.**
//! History and live subscribers have every sample at once, and the alert rules see every
//! batch; what the database keeps of a node (each GPU's latest sample, busy time, the
//! heartbeat) is written with the first batch at least `--unwatched-report-interval` (5 s)
//! after the node's last write, or by a timer when no report comes by then, newest values
//! only ([`Unflushed`]). A watched node reporting every second then costs the database what an
//! unwatched one does: at 3,333 nodes at 1 Hz on one PostgreSQL replica, writing every report
//! took 300 ms of every 500 ms batch and fell seconds behind. `latestSample`, hot-spot ordering
//! and staleness see a node at most that interval late, as for nodes nobody watches; an
//! interval of 0 writes every batch.
//!
//! One batch costs a fixed handful of statements, whatever the number of reports in it: the
//! nodes and their GPUs (two reads), the latest samples and heartbeats (two writes, one
//! transaction), and the alert rules' open alerts and thresholds (two reads); one report alone
//! used to cost about 13. That fixed cost, not the reports, was most of ingest's CPU at fleet
//! rates (at 1,000 GPUs at 1 Hz, 20 batches a second took about 56 of 80 ms a second), so a
//! batch gathers as long as more reports are worth waiting for: batches start at most every
//! [`GATHER`], and a batch waits, after its first report arrived, [`GATHER_PER_REPORTER`] for
//! each other node that reported lately and before that too (up to [`MAX_GATHER`]) unless every
//! such node already has a report in it. A lone agent, a test reporting one node at a time, or
//! nodes reporting once each (registering, a backfill) wait for nothing past `GATHER`; a fleet
//! reporting once a second is written in about four batches a second; a fleet whose agents
//! each wait for their answer before sending again (closed loop) is written as soon as all of
//! them are in, so gathering does not throttle it. Live subscribers, who get samples before
//! the write, wait for none of it.

//! The nodes reports name are kept from one batch to the next ([`ReportBatcher::known`]): a
//! report is checked against what the last batch read of its node, and a node not known, or a
//! report refused on what was known (a GPU added since), is read at once. Every batch reads
//! its nodes again, so what is kept is never older than the last batch; a report whose node was
//! removed meanwhile is refused by the batch (`NOT_FOUND`) although live subscribers saw it.
//!
//! **Reports come as often as someone looks.** The answer to a report tells the agent how long
//! it may gather samples before the next ([`ReportAnswer::report_interval`]): zero (each sample
//! as it is taken) while anyone watches the node live ([`MetricsStore::watched`], on any
//! replica), otherwise the gateway's unwatched interval (5 s by default). Samples keep their own
//! timestamps, so history has every second either way; what waits is `latestSample`, the alert
//! rules and the node's heartbeat, by at most that interval (the database's copy of a watched
//! node is that late too, above). Most of a report's cost is per
//! request (HTTP, the GraphQL request, a batch slot), so a fleet nobody watches costs about
//! half as much (the `ingest` bench); a subscriber who starts watching gets the node every
//! second from its agent's next report on.
//!
//! Validation stays per report and all or nothing: a report with a bad sample is refused with
//! its own `userErrors` and changes nothing, whatever the others in its batch. A database
//! failure fails every report of the batch (agents resend, and history counts the resent
//! samples as duplicates); what the batch brought waits for the next write.

use super::ingest::{MAX_SAMPLES_PER_REPORT, NodeRef, SampleReport, Unwritten, check_samples, may_report_for, may_report_on, persist_latest};
use super::sample::Sample;
use super::store::{Ingested, MetricsStore};
use crate::alerts::feed::AlertFeed;
use crate::alerts::service::{Reported, after_reports};
use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::shared_reads::SharedReads;
use chrono::{DateTime, Utc};
use egs_entities::{gpu, node};
use sea_orm::{ColumnTrait, Condition, DatabaseConnection, EntityTrait, QueryFilter};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Duration, Instant};

/// Under load, batches start at most this often: reports gather meanwhile.
pub const GATHER: Duration = Duration::from_millis(50);
/// Each node that reported lately lets a batch wait this much longer for the others' reports…
const GATHER_PER_REPORTER: Duration = Duration::from_millis(2);
/// …up to this long after its first report arrived.
const MAX_GATHER: Duration = Duration::from_millis(250);
/// A node that reported within this long is expected to report again soon…
const RECENT: Duration = Duration::from_secs(2);
/// …if it reported before that, within this long: the longest an agent is told to wait, and
/// some. (A node reporting once was waited for as well: the `fleet` bench's seed, one report
/// per node, 16 at a time, took 171 s, each batch waiting 250 ms for nodes that were done.)
const REMEMBER: Duration = Duration::from_secs(12);
/// Most reports in one batch (bounds one batch's statements' parameters and its work). Batches
/// are written one after another, at most one per [`GATHER`], so this also bounds a replica's
/// reports per second: 256 held one replica to about 3,000 a second (3,333 nodes at 1 Hz fell
/// behind by seconds), 1,024 leaves room for 10,000 nodes.
const MAX_BATCH: usize = 1024;
/// Reports waiting for a batch beyond this wait for room (back-pressure on the agents).
const QUEUE: usize = 4096;
/// The longest the unwatched interval may be: well inside the 30 s after which a silent node
/// is stale, so a report or two may be lost without the node going stale.
pub const MAX_UNWATCHED_INTERVAL: Duration = Duration::from_secs(10);
/// After a failed write of latest values with no report waiting, the next try waits this long.
const FLUSH_RETRY: Duration = Duration::from_secs(1);

/// What a report's sender is told.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ReportAnswer {
    pub ingested: Ingested,
    /// How long the agent may gather samples before it reports again: zero (send each as it
    /// is taken) while anyone watches the node live.
    pub report_interval: Duration,
}

/// What reports brought that the database's latest-sample columns and heartbeats do not have
/// yet, by node, and when each node's were last written. A node's are written with the first
/// batch at least `every` after its last write (at once when it was not written that lately),
/// or by a timer when no report comes by then.
struct Unflushed {
    every: Duration,
    nodes: HashMap<i64, Unwritten>,
    written: HashMap<i64, Instant>,
}

impl Unflushed {
    fn new(every: Duration) -> Self {
        Self { every, nodes: HashMap::new(), written: HashMap::new() }
    }

    fn due_at(&self, node_id: i64) -> Option<Instant> {
        self.written.get(&node_id).map(|at| *at + self.every)
    }

    /// When the next node falls due, if any is waiting.
    fn next_due(&self) -> Option<Instant> {
        let now = Instant::now();
        self.nodes.keys().map(|id| self.due_at(*id).unwrap_or(now)).min()
    }

    /// The waiting nodes due by `now` (all of them with `all`), with what waits of each.
    fn due(&self, now: Instant, all: bool) -> Vec<(i64, &Unwritten)> {
        self.nodes.iter().filter(|(id, _)| all || self.due_at(**id).is_none_or(|at| at <= now)).map(|(id, u)| (*id, u)).collect()
    }

    fn wrote(&mut self, nodes: &[i64], now: Instant) {
        for id in nodes {
            self.nodes.remove(id);
            self.written.insert(*id, now);
        }
        // A write longer ago than `every` counts as none.
        let every = self.every;
        self.written.retain(|_, at| now.duration_since(*at) < every);
    }

    fn forget(&mut self, gone: &[i64]) {
        for id in gone {
            self.nodes.remove(id);
            self.written.remove(id);
        }
    }
}

/// A node's samples from all its reports in a batch.
struct NodeSamples<'a> {
    known: &'a KnownNode,
    samples: Vec<Sample>,
    heartbeat: Option<DateTime<Utc>>,
}

/// A checked report, stored in memory and handed to live subscribers, waiting for its write.
struct Job {
    node_id: i64,
    samples: Vec<Sample>,
    /// When its agent sent it (an admin's report is no heartbeat).
    heartbeat: Option<DateTime<Utc>>,
    reply: oneshot::Sender<Result<()>>,
    arrived: Instant,
}

/// The nodes that reported lately: those that report again and again are waited for.
#[derive(Default)]
struct Reporters {
    nodes: HashMap<i64, Reporter>,
    /// How many nodes are [`Reporter::expected`].
    expected: usize,
}

struct Reporter {
    last: Instant,
    /// Reported more than once while remembered: an agent, not a one-off (a registration
    /// storm, an admin's backfill), which a batch waiting for it would wait for in vain.
    recurs: bool,
    /// Recurs and reported within [`RECENT`]: expected again soon.
    expected: bool,
}

impl Reporters {
    /// How long a batch may wait, after its first report arrived, for the reports of the
    /// other nodes that report: nothing for a lone reporter, at most [`MAX_GATHER`].
    fn gather(&self) -> Duration {
        let others = u32::try_from(self.expected.saturating_sub(1)).unwrap_or(u32::MAX);
        GATHER_PER_REPORTER.saturating_mul(others).min(MAX_GATHER)
    }

    fn expects(&self, node_id: i64) -> bool {
        self.nodes.get(&node_id).is_some_and(|r| r.expected)
    }

    /// The nodes of a batch reported at `now`.
    fn saw(&mut self, nodes: impl IntoIterator<Item = i64>, now: Instant) {
        for node_id in nodes {
            self.nodes
                .entry(node_id)
                .and_modify(|r| {
                    r.last = now;
                    r.recurs = true;
                })
                .or_insert(Reporter { last: now, recurs: false, expected: false });
        }
        let mut expected = 0;
        self.nodes.retain(|_, r| {
            let quiet = now.duration_since(r.last);
            r.expected = r.recurs && quiet < RECENT;
            expected += usize::from(r.expected);
            quiet < REMEMBER
        });
        self.expected = expected;
    }
}

/// A batch being gathered.
struct Gathering {
    jobs: Vec<Job>,
    nodes: HashSet<i64>,
    /// How many of the nodes [`Reporters`] expects the batch holds a report of.
    reporters_in: usize,
}

impl Gathering {
    fn new(first: Job, reporters: &Reporters) -> Self {
        let mut batch = Self { jobs: Vec::new(), nodes: HashSet::new(), reporters_in: 0 };
        batch.push(first, reporters);
        batch
    }

    fn push(&mut self, job: Job, reporters: &Reporters) {
        if self.nodes.insert(job.node_id) && reporters.expects(job.node_id) {
            self.reporters_in += 1;
        }
        self.jobs.push(job);
    }

    fn full(&self) -> bool {
        self.jobs.len() >= MAX_BATCH
    }

    /// Every node expected has a report here: waiting longer gathers no more.
    fn everyone_in(&self, reporters: &Reporters) -> bool {
        self.reporters_in >= reporters.expected
    }
}

/// A node as a report names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum NodeKey {
    Id(i64),
    Named(i64, String),
}

impl NodeKey {
    fn of(node_ref: &NodeRef) -> Self {
        match node_ref {
            NodeRef::Id(id) => NodeKey::Id(*id),
            NodeRef::Named { cluster_id, name } => NodeKey::Named(*cluster_id, name.clone()),
        }
    }

    fn names(&self, node: &node::Model) -> bool {
        match self {
            NodeKey::Id(id) => node.id == *id,
            NodeKey::Named(cluster_id, name) => node.cluster_id == *cluster_id && node.name == *name,
        }
    }
}

/// The nodes `keys` name (those that exist): one statement.
async fn find_nodes(db: &DatabaseConnection, keys: &[NodeKey]) -> Result<Vec<node::Model>> {
    let mut ids = Vec::new();
    let mut names: HashMap<i64, Vec<&str>> = HashMap::new();
    for key in keys {
        match key {
            NodeKey::Id(id) => ids.push(*id),
            NodeKey::Named(cluster_id, name) => names.entry(*cluster_id).or_default().push(name),
        }
    }
    let mut any = Condition::any();
    if !ids.is_empty() {
        any = any.add(node::Column::Id.is_in(ids));
    }
    for (cluster_id, names) in names {
        any = any.add(Condition::all().add(node::Column::ClusterId.eq(cluster_id)).add(node::Column::Name.is_in(names)));
    }
    Ok(node::Entity::find().filter(any).all(db).await?)
}

/// Most nodes one read of unknown nodes takes along (bounds the statement's parameters).
const NODE_READS_TOGETHER: usize = 500;

/// A node and its GPUs, as a read that started at `read_at` found them.
#[derive(Clone)]
struct KnownNode {
    node: node::Model,
    gpus: Vec<gpu::Model>,
    read_at: Instant,
}

/// Takes reports and stores them in batches; one per process, in `App`. Its task starts
/// with the first report.
pub struct ReportBatcher {
    db: DatabaseConnection,
    store: Arc<MetricsStore>,
    alerts: Arc<AlertFeed>,
    queue: OnceLock<mpsc::Sender<Job>>,
    /// The nodes reports named, by both names, as the last read of each found them: only
    /// nodes that exist (a read that finds nothing keeps nothing), so at most two entries per
    /// node of the inventory.
    known: Mutex<HashMap<NodeKey, Arc<KnownNode>>>,
    /// Reports of nodes not known share their reads (see [`crate::shared_reads`]): a fleet's agents
    /// arriving together after a restart cost a few statements, not two per agent.
    node_reads: SharedReads<NodeKey>,
    /// How long the agent of a node nobody watches may gather samples (at most
    /// [`MAX_UNWATCHED_INTERVAL`]).
    unwatched_interval: Duration,
}

impl ReportBatcher {
    pub fn new(db: DatabaseConnection, store: Arc<MetricsStore>, alerts: Arc<AlertFeed>, unwatched_interval: Duration) -> Arc<Self> {
        let unwatched_interval = unwatched_interval.min(MAX_UNWATCHED_INTERVAL);
        Arc::new(Self {
            db,
            store,
            alerts,
            queue: OnceLock::new(),
            known: Mutex::new(HashMap::new()),
            node_reads: SharedReads::default(),
            unwatched_interval,
        })
    }

    /// Validates and stores one node's report, all or nothing: any invalid sample (or a GPU
    /// that is not the node's) stores none. Admins report for any node, an agent only for its
    /// own (refused before anything is read when it names another), and an agent's report is
    /// its node's heartbeat. New samples reach live subscribers at once, then are written with
    /// their batch and go through the alert rules (whose transitions `alerts` publishes). The
    /// answer says when to report next (see the module's docs).
    pub async fn report(
        self: &Arc<Self>,
        caller: &Caller,
        now: DateTime<Utc>,
        node_ref: NodeRef,
        reports: Vec<SampleReport>,
    ) -> Result<ReportAnswer> {
        let agent = may_report_for(caller, &node_ref)?;
        if reports.len() > MAX_SAMPLES_PER_REPORT {
            return Err(Error::invalid("samples", format!("at most {MAX_SAMPLES_PER_REPORT} samples per report, got {}", reports.len())));
        }
        let key = NodeKey::of(&node_ref);
        let check =
            |known: &KnownNode| may_report_on(caller, agent, &known.node).and_then(|()| check_samples(&known.node, &known.gpus, &reports, now));
        // What the last batch read, if it passes; otherwise the node as stored now decides.
        let kept = self.known.lock().expect("known nodes").get(&key).cloned();
        let (node_id, held_by, samples) = match kept.as_deref().map(|known| (known.node.id, known.node.allocated_gpr_id, check(known))) {
            Some((id, held_by, Ok(samples))) => (id, held_by, samples),
            _ => {
                let known = self.read_node(key).await?;
                (known.node.id, known.node.allocated_gpr_id, check(&known)?)
            }
        };
        let counts = self.store.ingest_held(node_id, held_by, samples.clone(), now.timestamp());
        let (reply, answer) = oneshot::channel();
        let job = Job { node_id, samples, heartbeat: agent.then_some(now), reply, arrived: Instant::now() };
        let queue = self.queue.get_or_init(|| {
            let (tx, rx) = mpsc::channel(QUEUE);
            tokio::spawn(self.clone().run(rx));
            tx
        });
        queue.send(job).await.map_err(|_| Error::Internal(anyhow::anyhow!("the report writer stopped")))?;
        answer.await.map_err(|_| Error::Internal(anyhow::anyhow!("the report writer dropped a report")))??;
        // Asked after the write, by when the batch's hand-over to the other replicas has
        // answered whether any of them listens.
        let report_interval = if self.store.watched(node_id) { Duration::ZERO } else { self.unwatched_interval };
        Ok(ReportAnswer { ingested: counts, report_interval })
    }

    /// Reads the node `key` names and its GPUs as stored now, with those of other reports
    /// waiting for theirs meanwhile, and keeps them for the next reports. A node another read
    /// brought is taken only if that read started after this one was asked for.
    async fn read_node(&self, key: NodeKey) -> Result<Arc<KnownNode>> {
        let missed = Instant::now();
        let turn = self.node_reads.turn(key.clone()).await;
        let kept = self.known.lock().expect("known nodes").get(&key).filter(|known| known.read_at >= missed).cloned();
        if let Some(known) = kept {
            return Ok(known);
        }
        let read_at = Instant::now();
        // Nodes a read has brought since their reports missed are left out (their reports
        // find them when their turn comes); a report refused on what was kept reads its own.
        let kept = |key: &NodeKey| self.known.lock().expect("known nodes").contains_key(key);
        let nodes = find_nodes(&self.db, &turn.claim(NODE_READS_TOGETHER, [], kept)).await?;
        let found = self.with_gpus(nodes, read_at).await?;
        self.keep(&found, &[]);
        found.into_iter().find(|known| key.names(&known.node)).ok_or(Error::NotFound("node"))
    }

    /// Keeps `found` under both of their names, and forgets the nodes `gone`.
    fn keep(&self, found: &[Arc<KnownNode>], gone: &[i64]) {
        let mut known = self.known.lock().expect("known nodes");
        if !gone.is_empty() {
            known.retain(|_, k| !gone.contains(&k.node.id));
        }
        for k in found {
            known.insert(NodeKey::Id(k.node.id), k.clone());
            known.insert(NodeKey::Named(k.node.cluster_id, k.node.name.clone()), k.clone());
        }
    }

    async fn run(self: Arc<Self>, mut queue: mpsc::Receiver<Job>) {
        let mut last_start: Option<Instant> = None;
        let mut reporters = Reporters::default();
        let mut unflushed = Unflushed::new(self.unwatched_interval);
        loop {
            let next = match unflushed.next_due() {
                Some(due) => tokio::time::timeout_at(due, queue.recv()).await,
                None => Ok(queue.recv().await),
            };
            let first = match next {
                Ok(Some(job)) => job,
                Ok(None) => break,
                // No report came before a node fell due: its values are written on their own.
                Err(_) => {
                    if let Err(error) = self.flush(&mut unflushed, Instant::now(), false).await {
                        tracing::warn!(error = ?error, "could not write the latest samples; retrying");
                        tokio::time::sleep(FLUSH_RETRY).await;
                    }
                    continue;
                }
            };
            if let Some(next) = last_start.map(|at| at + GATHER) {
                tokio::time::sleep_until(next).await;
            }
            let deadline = first.arrived + reporters.gather();
            let mut batch = Gathering::new(first, &reporters);
            loop {
                while !batch.full() {
                    match queue.try_recv() {
                        Ok(job) => batch.push(job, &reporters),
                        Err(_) => break,
                    }
                }
                if batch.full() || batch.everyone_in(&reporters) {
                    break;
                }
                match tokio::time::timeout_at(deadline, queue.recv()).await {
                    Ok(Some(job)) => batch.push(job, &reporters),
                    Ok(None) | Err(_) => break,
                }
            }
            let now = Instant::now();
            reporters.saw(batch.nodes.iter().copied(), now);
            last_start = Some(now);
            self.store_batch(batch.jobs, &mut unflushed).await;
        }
        // Stopping: what is left is written now (a replica that dies loses at most `every` of
        // latest values, which the agents' next reports bring again).
        if let Err(error) = self.flush(&mut unflushed, Instant::now(), true).await {
            tracing::warn!(error = ?error, "could not write the latest samples on stopping");
        }
    }

    /// Writes the waiting nodes that are due (all of them with `all`).
    async fn flush(&self, unflushed: &mut Unflushed, now: Instant, all: bool) -> Result<()> {
        let writes = unflushed.due(now, all);
        if writes.is_empty() {
            return Ok(());
        }
        persist_latest(&self.db, &writes).await?;
        let written: Vec<i64> = writes.into_iter().map(|(id, _)| id).collect();
        unflushed.wrote(&written, now);
        Ok(())
    }

    async fn store_batch(&self, jobs: Vec<Job>, unflushed: &mut Unflushed) {
        let now = Instant::now();
        let ids: BTreeSet<i64> = jobs.iter().map(|j| j.node_id).collect();
        let found = match self.read_nodes(&ids).await {
            Ok(found) => found,
            Err(error) => return fail_all(jobs, error),
        };
        let gone: Vec<i64> = ids.iter().copied().filter(|id| !found.iter().any(|k| k.node.id == *id)).collect();
        unflushed.forget(&gone);
        // The GPUs as earlier batches left them, written or not: the alert rules' "before".
        let found: Vec<Arc<KnownNode>> = found
            .into_iter()
            .map(|mut known| {
                if let Some(unwritten) = unflushed.nodes.get(&known.node.id) {
                    Arc::make_mut(&mut known).gpus.iter_mut().for_each(|gpu| unwritten.apply_to(gpu));
                }
                known
            })
            .collect();
        self.keep(&found, &gone);
        // Removed since its report was checked: nothing of it is written.
        let (jobs, removed): (Vec<Job>, Vec<Job>) = jobs.into_iter().partition(|j| !gone.contains(&j.node_id));
        for job in removed {
            let _ = job.reply.send(Err(Error::NotFound("node")));
        }
        if jobs.is_empty() {
            return;
        }
        for job in &jobs {
            unflushed.nodes.entry(job.node_id).or_default().add(&job.samples, job.heartbeat);
        }
        if let Err(error) = self.flush(unflushed, now, false).await {
            return fail_all(jobs, error);
        }
        // One entry per node, its reports' samples together, for the rules.
        let mut by_node: HashMap<i64, NodeSamples<'_>> = HashMap::new();
        for job in &jobs {
            let Some(known) = found.iter().find(|k| k.node.id == job.node_id) else { continue };
            let entry = by_node.entry(job.node_id).or_insert_with(|| NodeSamples { known, samples: Vec::new(), heartbeat: None });
            entry.samples.extend(job.samples.iter().cloned());
            entry.heartbeat = entry.heartbeat.max(job.heartbeat);
        }
        let reported: Vec<Reported<'_>> =
            by_node.values().map(|n| Reported { node: &n.known.node, gpus: &n.known.gpus, samples: &n.samples, heartbeat: n.heartbeat }).collect();
        if after_reports(&self.db, &reported).await > 0 {
            self.alerts.changed();
        }
        for job in jobs {
            let _ = job.reply.send(Ok(()));
        }
    }

    /// The batch's nodes and their GPUs (as they are before the batch): two statements.
    async fn read_nodes(&self, ids: &BTreeSet<i64>) -> Result<Vec<Arc<KnownNode>>> {
        let read_at = Instant::now();
        let nodes = node::Entity::find().filter(node::Column::Id.is_in(ids.iter().copied())).all(&self.db).await?;
        self.with_gpus(nodes, read_at).await
    }

    /// `nodes` (read from `read_at`) with their GPUs: one statement.
    async fn with_gpus(&self, nodes: Vec<node::Model>, read_at: Instant) -> Result<Vec<Arc<KnownNode>>> {
        let mut gpus: HashMap<i64, Vec<gpu::Model>> = HashMap::new();
        if !nodes.is_empty() {
            for gpu in gpu::Entity::find().filter(gpu::Column::NodeId.is_in(nodes.iter().map(|n| n.id))).all(&self.db).await? {
                gpus.entry(gpu.node_id).or_default().push(gpu);
            }
        }
        Ok(nodes.into_iter().map(|node| Arc::new(KnownNode { gpus: gpus.remove(&node.id).unwrap_or_default(), node, read_at })).collect())
    }
}

/// Fails every report of a batch with the same error: the first gets it, the others its
/// equal (a lost connection stays `SERVICE_UNAVAILABLE`, so agents retry shortly).
fn fail_all(jobs: Vec<Job>, error: Error) {
    let unavailable = matches!(&error, Error::Database(e) if crate::error::connection_lost(e));
    let message = format!("{error:?}");
    let mut first = Some(error);
    for job in jobs {
        let error = first.take().unwrap_or_else(|| {
            Error::Database(if unavailable {
                sea_orm::DbErr::Conn(sea_orm::RuntimeErr::Internal(message.clone()))
            } else {
                sea_orm::DbErr::Custom(message.clone())
            })
        });
        let _ = job.reply.send(Err(error));
    }
}

#[cfg(test)]
mod tests;
