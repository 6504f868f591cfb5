//! Workload rules: who may report which processes run on a node's GPUs (and in which pods),
//! validation, storage (a report replaces the node's processes), and who may read them.
//!
//! Reading follows the metrics' slice isolation ([`Access`]): admins read every node's
//! processes; a user reads those of nodes held by a GPR of one of their slices, as reported
//! from the node's assignment on (never what the node's previous holder ran).

use crate::auth::Caller;
use crate::error::{Error, Result, UserError};
use crate::metrics::access::{Access, allocation};
use crate::metrics::ingest::{NodeRef, Reporting, reporting_node};
use crate::ports::{KubeAccess, NodePod};
use crate::workloads::pod_names::PodDirectory;
use chrono::{DateTime, Utc};
use egs_entities::{ClusterProvider, cluster, gpr, gpu, gpu_process, node, slice_namespace};
use sea_orm::sea_query::Query;
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, Set, TransactionTrait};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Most processes one GPU may report (a GPU shared by MPS or time-slicing runs dozens).
pub const MAX_PROCESSES_PER_GPU: usize = 256;
/// Longest pod UID, namespace, name or container name accepted (Kubernetes names are shorter).
const MAX_NAME_LEN: usize = 253;

/// A pod as the agent knows it: the UID and container id from the process's cgroup. On a
/// simulated cluster the agent's names are all there is; on a Kubernetes cluster the
/// cluster names the pod and container ([`PodDirectory`]) and the agent's names are ignored.
#[derive(Clone, Debug, PartialEq)]
pub struct PodReport {
    pub uid: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub container: Option<String>,
    pub container_id: Option<String>,
}

/// A stored report: how many processes, and the pods the cluster named (none on a simulated
/// cluster), for the agent's own labels.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reported {
    pub processes: usize,
    pub named: Vec<NodePod>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ProcessReport {
    pub pid: i64,
    pub used_memory_mib: Option<f64>,
    /// `None`: a process outside any pod.
    pub pod: Option<PodReport>,
}

/// The processes on one GPU now.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuWorkloadReport {
    pub uuid: String,
    pub processes: Vec<ProcessReport>,
}

/// Every problem of the report, by field path (`gpus.1.processes.0.pid`).
fn check_report(node: &node::Model, gpus: &[gpu::Model], reports: &[GpuWorkloadReport]) -> Result<()> {
    let by_uuid: HashMap<&str, &gpu::Model> = gpus.iter().map(|g| (g.uuid.as_str(), g)).collect();
    let mut errors = Vec::new();
    let mut seen = HashSet::new();
    for (i, r) in reports.iter().enumerate() {
        let at = |f: &str| format!("gpus.{i}.{f}");
        let gpu = by_uuid.get(r.uuid.as_str()).copied();
        if gpu.is_none() {
            let uuid: String = r.uuid.chars().take(128).collect();
            errors.push(UserError::invalid(&at("uuid"), format!("`{uuid}` is not a GPU of node `{}`", node.name)));
        }
        if !seen.insert(r.uuid.as_str()) {
            errors.push(UserError::invalid(&at("uuid"), "this GPU appears twice"));
        }
        if r.processes.len() > MAX_PROCESSES_PER_GPU {
            errors.push(UserError::invalid(&at("processes"), format!("at most {MAX_PROCESSES_PER_GPU} processes per GPU")));
            continue;
        }
        let mut pids = HashSet::new();
        for (j, p) in r.processes.iter().enumerate() {
            let at = |f: &str| format!("gpus.{i}.processes.{j}.{f}");
            crate::validate::range(&at("pid"), p.pid, 1, i64::from(i32::MAX), &mut errors);
            if !pids.insert(p.pid) {
                errors.push(UserError::invalid(&at("pid"), format!("process {} appears twice on this GPU", p.pid)));
            }
            // As for samples: the registered size is a little under what NVML may count.
            let memory = gpu.map_or(16.0 * 1024.0 * 1024.0, |g| g.memory_mib as f64 * 1.05).floor();
            if p.used_memory_mib.is_some_and(|m| !(m.is_finite() && (0.0..=memory).contains(&m))) {
                errors.push(UserError::invalid(&at("usedMemoryMib"), format!("must be between 0 and {memory} MiB")));
            }
            if let Some(pod) = &p.pod {
                crate::validate::name(&at("pod.uid"), &pod.uid, 128, &mut errors);
                let names = [
                    ("pod.namespace", &pod.namespace),
                    ("pod.name", &pod.name),
                    ("pod.container", &pod.container),
                    ("pod.containerId", &pod.container_id),
                ];
                for (field, value) in names {
                    if let Some(value) = value {
                        crate::validate::name(&at(field), value, MAX_NAME_LEN, &mut errors);
                    }
                }
            }
        }
    }
    crate::validate::finish(errors)
}

/// Replaces the processes of one node's GPUs with `reports`, all or nothing: GPUs the report
/// leaves out have none afterwards. Admins report for any node; an agent for its own (or,
/// cluster-scoped, its cluster's). The pods of a Kubernetes node are named by its cluster
/// (through `directory`), never by the report.
pub async fn report_workloads(
    db: &DatabaseConnection,
    caller: &Caller,
    now: DateTime<Utc>,
    node_ref: NodeRef,
    reports: Vec<GpuWorkloadReport>,
    kube: &dyn KubeAccess,
    directory: &PodDirectory,
) -> Result<Reported> {
    let Reporting { node, gpus, .. } = reporting_node(db, caller, &node_ref).await?;
    check_report(&node, &gpus, &reports)?;
    let place = cluster::Entity::find_by_id(node.cluster_id).one(db).await?.ok_or(Error::NotFound("cluster"))?;
    let reported_pods = || reports.iter().flat_map(|r| &r.processes).filter_map(|p| p.pod.as_ref());
    let by_cluster = if place.provider == ClusterProvider::Kubernetes {
        let uids: Vec<&str> = reported_pods().map(|pod| pod.uid.as_str()).collect();
        Some(directory.pods_on(place.id, &node.name, &uids, || kube.node_pods(&place, &node.name)).await)
    } else {
        None
    };
    // (namespace, name, container) of a reported pod, as the cluster says when it is asked.
    let names = |pod: &PodReport| -> (Option<String>, Option<String>, Option<String>) {
        let Some(listed) = &by_cluster else { return (pod.namespace.clone(), pod.name.clone(), pod.container.clone()) };
        let Some(known) = listed.get(&pod.uid) else { return (None, None, None) };
        let container = pod.container_id.as_ref().and_then(|id| known.containers.get(id).cloned());
        (Some(known.namespace.clone()), Some(known.name.clone()), container)
    };
    let ids: HashMap<&str, i64> = gpus.iter().map(|g| (g.uuid.as_str(), g.id)).collect();
    let rows: Vec<gpu_process::ActiveModel> = reports
        .iter()
        .flat_map(|r| r.processes.iter().map(move |p| (r, p)))
        .filter_map(|(r, p)| {
            let (namespace, name, container) = p.pod.as_ref().map(&names).unwrap_or_default();
            Some(gpu_process::ActiveModel {
                gpu_id: Set(*ids.get(r.uuid.as_str())?),
                node_id: Set(node.id),
                pid: Set(p.pid),
                used_memory_mib: Set(p.used_memory_mib),
                pod_uid: Set(p.pod.as_ref().map(|pod| pod.uid.clone())),
                pod_namespace: Set(namespace),
                pod_name: Set(name),
                container: Set(container),
                reported_at: Set(now),
                ..Default::default()
            })
        })
        .collect();
    let processes = rows.len();
    let txn = db.begin().await?;
    gpu_process::Entity::delete_many().filter(gpu_process::Column::NodeId.eq(node.id)).exec(&txn).await?;
    if !rows.is_empty() {
        gpu_process::Entity::insert_many(rows).exec(&txn).await?;
    }
    txn.commit().await?;
    let mut named: Vec<NodePod> = Vec::new();
    if let Some(listed) = &by_cluster {
        for pod in reported_pods() {
            if let Some(known) = listed.get(&pod.uid).filter(|_| !named.iter().any(|n| n.uid == pod.uid)) {
                named.push(known.clone());
            }
        }
    }
    Ok(Reported { processes, named })
}

/// The processes of a node's GPUs, by GPU then PID.
pub async fn node_processes(db: &impl ConnectionTrait, node_id: i64) -> Result<Vec<gpu_process::Model>> {
    Ok(gpu_process::Entity::find()
        .filter(gpu_process::Column::NodeId.eq(node_id))
        .order_by_asc(gpu_process::Column::GpuId)
        .order_by_asc(gpu_process::Column::Pid)
        .all(db)
        .await?)
}

/// One pod's use of a node's GPUs, gathered from its processes.
#[derive(Clone, Debug, PartialEq)]
pub struct PodUse {
    pub uid: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub node_id: i64,
    /// Containers named by its processes, sorted.
    pub containers: Vec<String>,
    /// GPU ids, ascending.
    pub gpu_ids: Vec<i64>,
    pub processes: Vec<gpu_process::Model>,
    /// GPU memory its processes hold, MiB (those the driver gave a number for).
    pub used_memory_mib: f64,
    /// When the agent last reported them.
    pub reported_at: DateTime<Utc>,
}

/// Groups processes by pod (node, then UID); processes outside pods are left out.
pub fn pods_of(processes: impl IntoIterator<Item = gpu_process::Model>) -> Vec<PodUse> {
    let mut pods: BTreeMap<(i64, String), PodUse> = BTreeMap::new();
    let mut containers: HashMap<(i64, String), BTreeSet<String>> = HashMap::new();
    let mut gpu_ids: HashMap<(i64, String), BTreeSet<i64>> = HashMap::new();
    for p in processes {
        let Some(uid) = p.pod_uid.clone() else { continue };
        let key = (p.node_id, uid.clone());
        let pod = pods.entry(key.clone()).or_insert_with(|| PodUse {
            uid,
            namespace: None,
            name: None,
            node_id: p.node_id,
            containers: Vec::new(),
            gpu_ids: Vec::new(),
            processes: Vec::new(),
            used_memory_mib: 0.0,
            reported_at: p.reported_at,
        });
        pod.namespace = pod.namespace.take().or_else(|| p.pod_namespace.clone());
        pod.name = pod.name.take().or_else(|| p.pod_name.clone());
        pod.used_memory_mib += p.used_memory_mib.unwrap_or_default();
        pod.reported_at = pod.reported_at.max(p.reported_at);
        if let Some(container) = &p.container {
            containers.entry(key.clone()).or_default().insert(container.clone());
        }
        gpu_ids.entry(key).or_default().insert(p.gpu_id);
        pod.processes.push(p);
    }
    pods.into_iter()
        .map(|(key, mut pod)| {
            pod.containers = containers.remove(&key).map(|c| c.into_iter().collect()).unwrap_or_default();
            pod.gpu_ids = gpu_ids.remove(&key).map(|g| g.into_iter().collect()).unwrap_or_default();
            pod
        })
        .collect()
}

/// The pods in a slice's namespaces that use GPUs of nodes the slice's GPRs hold, with their
/// processes as reported since each node's assignment (admins: all reported). A slice the
/// caller may not see is `NOT_FOUND`.
pub async fn slice_workloads(db: &DatabaseConnection, caller: &Caller, slice_id: i64) -> Result<Vec<PodUse>> {
    caller.require_person()?;
    let slice = crate::slice::service::find_slice(db, caller, slice_id).await?;
    let namespaces: HashSet<(i64, String)> = slice_namespace::Entity::find()
        .filter(slice_namespace::Column::SliceId.eq(slice.id))
        .all(db)
        .await?
        .into_iter()
        .map(|n| (n.cluster_id, n.name))
        .collect();
    if namespaces.is_empty() {
        return Ok(Vec::new());
    }
    let gprs = Query::select().column(gpr::Column::Id).from(gpr::Entity).and_where(gpr::Column::SliceId.eq(slice.id)).to_owned();
    let held: Vec<node::Model> = node::Entity::find().filter(node::Column::AllocatedGprId.in_subquery(gprs)).all(db).await?;
    if held.is_empty() {
        return Ok(Vec::new());
    }
    let holders = allocation(db, Some(held.iter().map(|n| n.id).collect())).await?;
    let access: HashMap<i64, (i64, Access)> = held
        .iter()
        .filter_map(|n| {
            let holder = holders.get(&n.id).filter(|h| h.slice_id == slice.id)?;
            let access = if caller.is_admin() { Access::All } else { Access::of(Some(*holder), true) };
            Some((n.id, (n.cluster_id, access)))
        })
        .collect();
    let processes = gpu_process::Entity::find()
        .filter(gpu_process::Column::NodeId.is_in(access.keys().copied().collect::<Vec<_>>()))
        .filter(gpu_process::Column::PodNamespace.is_not_null())
        .order_by_asc(gpu_process::Column::GpuId)
        .order_by_asc(gpu_process::Column::Pid)
        .all(db)
        .await?;
    let visible = processes.into_iter().filter(|p| {
        let Some((cluster_id, access)) = access.get(&p.node_id) else { return false };
        access.allows(Some(p.reported_at)) && p.pod_namespace.as_ref().is_some_and(|ns| namespaces.contains(&(*cluster_id, ns.clone())))
    });
    Ok(pods_of(visible))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn process(gpu_id: i64, pid: i64, pod: Option<(&str, &str)>, container: &str) -> gpu_process::Model {
        gpu_process::Model {
            id: pid,
            gpu_id,
            node_id: 1,
            pid,
            used_memory_mib: Some(100.0),
            pod_uid: pod.map(|(uid, _)| uid.to_owned()),
            pod_namespace: pod.map(|_| "team-a".to_owned()),
            pod_name: pod.map(|(_, name)| name.to_owned()),
            container: pod.map(|_| container.to_owned()),
            reported_at: Utc::now(),
        }
    }

    #[test]
    fn processes_group_into_pods_with_their_gpus_and_containers() {
        let pods = pods_of([
            process(2, 10, Some(("u1", "train-0")), "trainer"),
            process(1, 11, Some(("u1", "train-0")), "trainer"),
            process(1, 12, Some(("u1", "train-0")), "sidecar"),
            process(3, 13, Some(("u2", "notebook")), "jupyter"),
            process(3, 14, None, ""),
        ]);
        assert_eq!(pods.len(), 2, "the process outside a pod is left out");
        assert_eq!((pods[0].uid.as_str(), pods[0].name.as_deref()), ("u1", Some("train-0")));
        assert_eq!(pods[0].gpu_ids, vec![1, 2]);
        assert_eq!(pods[0].containers, vec!["sidecar".to_owned(), "trainer".to_owned()]);
        assert_eq!((pods[0].processes.len(), pods[0].used_memory_mib), (3, 300.0));
        assert_eq!(pods[1].gpu_ids, vec![3]);
    }
}
