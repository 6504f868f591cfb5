//! Reports are checked, stored in memory and handed to live subscribers as they arrive, and
//! written to the database together ("group commit"): each `reportGpuSamples` still answers only
//! after its samples are written and the alert rules ran over them, but the reports that arrive
//! while the previous batch is written are written and evaluated as one.
//!
//! One batch costs a fixed handful of statements, whatever the number of reports in it: the
//! nodes and their GPUs (two reads), the latest samples and heartbeats (two writes, one
//! transaction), and the alert rules' open alerts and thresholds (two reads); one report alone
//! used to cost about 13. A lone report is written at once; under load a batch starts at most
//! every [`GATHER`], and live subscribers, who get samples before the write, wait for none of
//! it. (Gathering longer at fleet rates was tried: at 1,000 GPUs it halved the statements per
//! report but saved no CPU, and it throttled clients that wait for each answer.)
//!
//! The nodes reports name are kept from one batch to the next ([`ReportBatcher::known`]): a
//! report is checked against what the last batch read of its node, and a node not known, or a
//! report refused on what was known (a GPU added since), is read at once. Every batch reads
//! its nodes again, so what is kept is never older than the last batch; a report whose node was
//! removed meanwhile is refused by the batch (`NOT_FOUND`) although live subscribers saw it.
//!
//! Validation stays per report and all or nothing: a report with a bad sample is refused with
//! its own `userErrors` and changes nothing, whatever the others in its batch. A database
//! failure fails every report of the batch (none of them is written; agents resend, and the
//! history counts the resent samples as duplicates).

use super::ingest::{
    MAX_SAMPLES_PER_REPORT, NodeRef, NodeReport, SampleReport, check_samples, find_node, may_report_for, may_report_on, persist_latest,
};
use super::sample::Sample;
use super::store::{Ingested, MetricsStore};
use crate::alerts::hub::AlertHub;
use crate::alerts::service::{Reported, after_reports};
use crate::auth::Caller;
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use egs_entities::{gpu, node};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::{mpsc, oneshot};
use tokio::time::{Duration, Instant};

/// Under load, batches start at most this often: reports gather meanwhile.
pub const GATHER: Duration = Duration::from_millis(50);
/// Most reports in one batch (bounds one batch's statements' parameters and its work).
const MAX_BATCH: usize = 256;
/// Reports waiting for a batch beyond this wait for room (back-pressure on the agents).
const QUEUE: usize = 4096;

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
}

/// A node and its GPUs, as a read found them.
struct KnownNode {
    node: node::Model,
    gpus: Vec<gpu::Model>,
}

/// Takes reports and stores them in batches; one per process, in `Services`. Its task starts
/// with the first report.
pub struct ReportBatcher {
    db: DatabaseConnection,
    store: Arc<MetricsStore>,
    alerts: Arc<AlertHub>,
    queue: OnceLock<mpsc::Sender<Job>>,
    /// The nodes reports named, by both names, as the last read of each found them: only
    /// nodes that exist (a read that finds nothing keeps nothing), so at most two entries per
    /// node of the inventory.
    known: Mutex<HashMap<NodeKey, Arc<KnownNode>>>,
}

impl ReportBatcher {
    pub fn new(db: DatabaseConnection, store: Arc<MetricsStore>, alerts: Arc<AlertHub>) -> Arc<Self> {
        Arc::new(Self { db, store, alerts, queue: OnceLock::new(), known: Mutex::new(HashMap::new()) })
    }

    /// Validates and stores one node's report, all or nothing: any invalid sample (or a GPU
    /// that is not the node's) stores none. Admins report for any node, an agent only for its
    /// own (refused before anything is read when it names another), and an agent's report is
    /// its node's heartbeat. New samples reach live subscribers at once, then are written with
    /// their batch and go through the alert rules (whose transitions `alerts` publishes).
    pub async fn report(self: &Arc<Self>, caller: &Caller, now: DateTime<Utc>, node_ref: NodeRef, reports: Vec<SampleReport>) -> Result<Ingested> {
        let agent = may_report_for(caller, &node_ref)?;
        if reports.len() > MAX_SAMPLES_PER_REPORT {
            return Err(Error::invalid("samples", format!("at most {MAX_SAMPLES_PER_REPORT} samples per report, got {}", reports.len())));
        }
        let key = NodeKey::of(&node_ref);
        let check =
            |known: &KnownNode| may_report_on(caller, agent, &known.node).and_then(|()| check_samples(&known.node, &known.gpus, &reports, now));
        // What the last batch read, if it passes; otherwise the node as stored now decides.
        let kept = self.known.lock().expect("known nodes").get(&key).cloned();
        let (node_id, samples) = match kept.as_deref().map(|known| (known.node.id, check(known))) {
            Some((id, Ok(samples))) => (id, samples),
            _ => {
                let known = self.read_node(&node_ref).await?;
                (known.node.id, check(&known)?)
            }
        };
        let counts = self.store.ingest(node_id, samples.clone(), now.timestamp());
        let (reply, answer) = oneshot::channel();
        let job = Job { node_id, samples, heartbeat: agent.then_some(now), reply };
        let queue = self.queue.get_or_init(|| {
            let (tx, rx) = mpsc::channel(QUEUE);
            tokio::spawn(self.clone().run(rx));
            tx
        });
        queue.send(job).await.map_err(|_| Error::Internal(anyhow::anyhow!("the report writer stopped")))?;
        answer.await.map_err(|_| Error::Internal(anyhow::anyhow!("the report writer dropped a report")))??;
        Ok(counts)
    }

    /// Reads one node and its GPUs as stored now, and keeps them for the next reports.
    async fn read_node(&self, node_ref: &NodeRef) -> Result<Arc<KnownNode>> {
        let node = find_node(&self.db, node_ref).await?;
        let known = self.with_gpus(vec![node]).await?;
        self.keep(&known, &[]);
        known.into_iter().next().ok_or(Error::NotFound("node"))
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
        while let Some(first) = queue.recv().await {
            if let Some(next) = last_start.map(|at| at + GATHER) {
                tokio::time::sleep_until(next).await;
            }
            let mut jobs = vec![first];
            while jobs.len() < MAX_BATCH {
                match queue.try_recv() {
                    Ok(job) => jobs.push(job),
                    Err(_) => break,
                }
            }
            last_start = Some(Instant::now());
            self.store_batch(jobs).await;
        }
    }

    async fn store_batch(&self, jobs: Vec<Job>) {
        let ids: BTreeSet<i64> = jobs.iter().map(|j| j.node_id).collect();
        let found = match self.read_nodes(&ids).await {
            Ok(found) => found,
            Err(error) => return fail_all(jobs, error),
        };
        let gone: Vec<i64> = ids.iter().copied().filter(|id| !found.iter().any(|k| k.node.id == *id)).collect();
        self.keep(&found, &gone);
        // Removed since its report was checked: nothing of it is written.
        let (jobs, removed): (Vec<Job>, Vec<Job>) = jobs.into_iter().partition(|j| !gone.contains(&j.node_id));
        for job in removed {
            let _ = job.reply.send(Err(Error::NotFound("node")));
        }
        if jobs.is_empty() {
            return;
        }
        let writes: Vec<NodeReport<'_>> =
            jobs.iter().map(|j| NodeReport { node_id: j.node_id, samples: &j.samples, heartbeat: j.heartbeat }).collect();
        let written = persist_latest(&self.db, &writes).await;
        drop(writes);
        if let Err(error) = written {
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
        let nodes = node::Entity::find().filter(node::Column::Id.is_in(ids.iter().copied())).all(&self.db).await?;
        self.with_gpus(nodes).await
    }

    /// `nodes` with their GPUs: one statement.
    async fn with_gpus(&self, nodes: Vec<node::Model>) -> Result<Vec<Arc<KnownNode>>> {
        let mut gpus: HashMap<i64, Vec<gpu::Model>> = HashMap::new();
        if !nodes.is_empty() {
            for gpu in gpu::Entity::find().filter(gpu::Column::NodeId.is_in(nodes.iter().map(|n| n.id))).all(&self.db).await? {
                gpus.entry(gpu.node_id).or_default().push(gpu);
            }
        }
        Ok(nodes.into_iter().map(|node| Arc::new(KnownNode { gpus: gpus.remove(&node.id).unwrap_or_default(), node })).collect())
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
