//! Reports are stored together ("group commit"): each `reportGpuSamples` still answers only
//! after its samples are stored and the alert rules ran over them, but the reports that arrive
//! while the previous batch is written are read, written and evaluated as one.
//!
//! One batch costs a fixed handful of statements, whatever the number of reports in it: the
//! nodes and their GPUs (two reads), the latest samples and heartbeats (two writes, one
//! transaction), and the alert rules' open alerts and thresholds (two reads); one report alone
//! used to cost about 13. A lone report is written at once; under load a batch starts at most
//! every [`GATHER`], so the cost per report falls as the rate rises, and a report waits at most
//! one batch plus [`GATHER`] longer than it did alone.
//!
//! Validation stays per report and all or nothing: a report with a bad sample is refused with
//! its own `userErrors` and changes nothing, whatever the others in its batch. A database
//! failure fails every report of the batch (none of them is stored; agents resend).

use super::ingest::{MAX_SAMPLES_PER_REPORT, NodeRef, NodeReport, SampleReport, check_samples, may_report_for, may_report_on, persist_latest};
use super::sample::Sample;
use super::store::{Ingested, MetricsStore};
use crate::alerts::hub::AlertHub;
use crate::alerts::service::{Reported, after_reports};
use crate::auth::{Caller, TokenRecord};
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use egs_entities::{Role, gpu, node};
use sea_orm::{ColumnTrait, Condition, DatabaseConnection, EntityTrait, QueryFilter};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
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
    node: &'a node::Model,
    samples: Vec<Sample>,
    heartbeat: Option<DateTime<Utc>>,
}

struct Job {
    /// The reporter's token record: its scope is checked once the node is known.
    record: Arc<TokenRecord>,
    node_ref: NodeRef,
    reports: Vec<SampleReport>,
    now: DateTime<Utc>,
    reply: oneshot::Sender<Result<Ingested>>,
}

/// Takes reports and stores them in batches; one per process, in `Services`. Its task starts
/// with the first report.
pub struct ReportBatcher {
    db: DatabaseConnection,
    store: Arc<MetricsStore>,
    alerts: Arc<AlertHub>,
    queue: OnceLock<mpsc::Sender<Job>>,
}

impl ReportBatcher {
    pub fn new(db: DatabaseConnection, store: Arc<MetricsStore>, alerts: Arc<AlertHub>) -> Arc<Self> {
        Arc::new(Self { db, store, alerts, queue: OnceLock::new() })
    }

    /// Validates and stores one node's report, all or nothing: any invalid sample (or a GPU
    /// that is not the node's) stores none. Admins report for any node, an agent only for its
    /// own (refused before anything is read when it names another), and an agent's report is
    /// its node's heartbeat. New samples reach live subscribers, then go through the alert
    /// rules (whose transitions `alerts` publishes).
    pub async fn report(self: &Arc<Self>, caller: &Caller, now: DateTime<Utc>, node_ref: NodeRef, reports: Vec<SampleReport>) -> Result<Ingested> {
        may_report_for(caller, &node_ref)?;
        if reports.len() > MAX_SAMPLES_PER_REPORT {
            return Err(Error::invalid("samples", format!("at most {MAX_SAMPLES_PER_REPORT} samples per report, got {}", reports.len())));
        }
        let (reply, answer) = oneshot::channel();
        let job = Job { record: caller.record.clone(), node_ref, reports, now, reply };
        let queue = self.queue.get_or_init(|| {
            let (tx, rx) = mpsc::channel(QUEUE);
            tokio::spawn(self.clone().run(rx));
            tx
        });
        queue.send(job).await.map_err(|_| Error::Internal(anyhow::anyhow!("the report writer stopped")))?;
        answer.await.map_err(|_| Error::Internal(anyhow::anyhow!("the report writer dropped a report")))?
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
        let (nodes, gpus) = match self.read_nodes(&jobs).await {
            Ok(found) => found,
            Err(error) => return fail_all(jobs, error),
        };
        // Check each report against its node; refuse the bad ones now.
        let mut accepted: Vec<(Job, &node::Model, Vec<Sample>)> = Vec::with_capacity(jobs.len());
        for job in jobs {
            let node = match &job.node_ref {
                NodeRef::Id(id) => nodes.iter().find(|n| n.id == *id),
                NodeRef::Named { cluster_id, name } => nodes.iter().find(|n| n.cluster_id == *cluster_id && n.name == *name),
            };
            let checked = match node {
                None => Err(Error::NotFound("node")),
                Some(node) => may_report_on(&Caller::new(job.record.clone()), job.record.role == Role::Agent, node)
                    .and_then(|()| check_samples(node, gpus.get(&node.id).map_or(&[][..], Vec::as_slice), &job.reports, job.now))
                    .map(|samples| (node, samples)),
            };
            match checked {
                Ok((node, samples)) => accepted.push((job, node, samples)),
                Err(error) => {
                    let _ = job.reply.send(Err(error));
                }
            }
        }
        if accepted.is_empty() {
            return;
        }
        // Agents' reports are their nodes' heartbeats.
        let heartbeat = |job: &Job| (job.record.role == Role::Agent).then_some(job.now);
        let writes: Vec<NodeReport<'_>> =
            accepted.iter().map(|(job, node, samples)| NodeReport { node_id: node.id, samples, heartbeat: heartbeat(job) }).collect();
        if let Err(error) = persist_latest(&self.db, &writes).await {
            return fail_all(accepted.into_iter().map(|(job, _, _)| job).collect(), error);
        }
        // One entry per node, its reports' samples together, for the rules; and the samples to
        // live subscribers first, as the rules take queries of their own.
        let mut by_node: HashMap<i64, NodeSamples<'_>> = HashMap::new();
        let mut answered = Vec::with_capacity(accepted.len());
        for (job, node, samples) in accepted {
            let entry = by_node.entry(node.id).or_insert_with(|| NodeSamples { node, samples: Vec::new(), heartbeat: None });
            entry.samples.extend(samples.iter().cloned());
            entry.heartbeat = entry.heartbeat.max(heartbeat(&job));
            let counts = self.store.ingest(node.id, samples, job.now.timestamp());
            answered.push((job, counts));
        }
        let reported: Vec<Reported<'_>> = by_node
            .values()
            .map(|n| Reported {
                node: n.node,
                gpus: gpus.get(&n.node.id).map_or(&[][..], Vec::as_slice),
                samples: &n.samples,
                heartbeat: n.heartbeat,
            })
            .collect();
        if after_reports(&self.db, &reported).await > 0 {
            self.alerts.changed();
        }
        for (job, counts) in answered {
            let _ = job.reply.send(Ok(counts));
        }
    }

    /// The batch's nodes and their GPUs (as they are before the batch): two statements.
    async fn read_nodes(&self, jobs: &[Job]) -> Result<(Vec<node::Model>, HashMap<i64, Vec<gpu::Model>>)> {
        let mut wanted = Condition::any();
        for job in jobs {
            wanted = wanted.add(match &job.node_ref {
                NodeRef::Id(id) => Condition::all().add(node::Column::Id.eq(*id)),
                NodeRef::Named { cluster_id, name } => {
                    Condition::all().add(node::Column::ClusterId.eq(*cluster_id)).add(node::Column::Name.eq(name.as_str()))
                }
            });
        }
        let nodes = node::Entity::find().filter(wanted).all(&self.db).await?;
        let mut gpus: HashMap<i64, Vec<gpu::Model>> = HashMap::new();
        if !nodes.is_empty() {
            for gpu in gpu::Entity::find().filter(gpu::Column::NodeId.is_in(nodes.iter().map(|n| n.id))).all(&self.db).await? {
                gpus.entry(gpu.node_id).or_default().push(gpu);
            }
        }
        Ok((nodes, gpus))
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
