//! Workloads: which processes, in which Kubernetes pods, run on which GPUs. Node agents report
//! the mapping (`reportGpuWorkloads`) when it changes and at least every minute; dashboards
//! read it as `Gpu.processes`/`Gpu.pods`, `GpuNode.pods` and `workloads(sliceId)` (workload →
//! pods → GPUs and their latest samples). Rules are in [`service`]; reading is isolated like
//! the metrics: admins read all, a slice reads only the nodes its GPRs hold, from the
//! assignment on.

use egs_domain::workloads::service;

use crate::ids::{self, Kind};
use crate::inventory::{Gpu, GpuNode};
use crate::{loaded, loaders, session};
use async_graphql::{ComplexObject, Context, ID, InputObject, Object, SimpleObject};
use chrono::{DateTime, Utc};
use egs_domain::error::{Error, Result, UserError};
use egs_domain::metrics::access::Access;
use egs_domain::metrics::ingest::NodeRef;
use egs_entities::{gpu, gpu_process, node};

/// The Kubernetes pod (and container) a GPU process belongs to. Only the UID is known when the
/// cluster lists no such pod on the node (or could not be asked when the agent reported).
#[derive(SimpleObject, Clone, Debug)]
pub struct PodRef {
    pub uid: String,
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub container: Option<String>,
}

/// A process using a GPU, as the node's agent last reported it.
pub struct GpuProcess(pub gpu_process::Model);

#[Object]
impl GpuProcess {
    /// In the host's PID namespace.
    async fn pid(&self) -> i64 {
        self.0.pid
    }
    /// GPU memory it holds, MiB; null when the driver does not say.
    async fn used_memory_mib(&self) -> Option<f64> {
        self.0.used_memory_mib
    }
    /// Null for a process outside any pod.
    async fn pod(&self) -> Option<PodRef> {
        let p = &self.0;
        Some(PodRef { uid: p.pod_uid.clone()?, namespace: p.pod_namespace.clone(), name: p.pod_name.clone(), container: p.container.clone() })
    }
    /// When the agent reported it.
    async fn reported_at(&self) -> DateTime<Utc> {
        self.0.reported_at
    }
}

/// A pod using GPUs of one node, with the GPUs it uses.
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct GpuPod {
    pub uid: String,
    /// Null when the node's agent could not list its pods.
    pub namespace: Option<String>,
    pub name: Option<String>,
    /// Containers whose processes use the GPUs.
    pub containers: Vec<String>,
    /// GPU memory its processes hold, MiB.
    pub used_memory_mib: f64,
    /// When the node's agent last reported it.
    pub reported_at: DateTime<Utc>,
    #[graphql(skip)]
    pub node_id: i64,
    #[graphql(skip)]
    pub gpu_ids: Vec<i64>,
    #[graphql(skip)]
    pub processes: Vec<gpu_process::Model>,
}

impl From<service::PodUse> for GpuPod {
    fn from(p: service::PodUse) -> Self {
        Self {
            uid: p.uid,
            namespace: p.namespace,
            name: p.name,
            containers: p.containers,
            used_memory_mib: p.used_memory_mib,
            reported_at: p.reported_at,
            node_id: p.node_id,
            gpu_ids: p.gpu_ids,
            processes: p.processes,
        }
    }
}

#[ComplexObject]
impl GpuPod {
    async fn node(&self, ctx: &Context<'_>) -> Result<Option<GpuNode>> {
        Ok(loaded(loaders(ctx)?.node().load_one(self.node_id).await)?.map(GpuNode))
    }
    /// The GPUs its processes use, with their latest samples (`Gpu.latestSample`).
    async fn gpus(&self, ctx: &Context<'_>) -> Result<Vec<Gpu>> {
        let gpus = loaded(loaders(ctx)?.gpus_by_node().load_one(self.node_id).await)?.unwrap_or_default();
        Ok(gpus.into_iter().filter(|g| self.gpu_ids.binary_search(&g.id).is_ok()).map(Gpu::from).collect())
    }
    /// Its processes on those GPUs.
    async fn processes(&self) -> Vec<GpuProcess> {
        self.processes.iter().cloned().map(GpuProcess).collect()
    }
}

/// A node's processes that the caller may read: none when they may not read the node's
/// metrics; for a member of the holding slice, only those reported since the assignment, in
/// pods of the slice's namespaces.
async fn readable_processes(ctx: &Context<'_>, node: &node::Model) -> Result<Vec<gpu_process::Model>> {
    let access = crate::metrics::node_access(ctx, node).await?;
    if access == Access::Nothing {
        return Ok(Vec::new());
    }
    let (_, db) = session(ctx)?;
    let processes = service::node_processes(db, node.id).await?.into_iter().filter(|p| access.allows(Some(p.reported_at)));
    if access == Access::All {
        return Ok(processes.collect());
    }
    // A member of the holding slice sees the pods of the slice's namespaces on the node's
    // cluster, not the cluster's own (monitoring, drivers) or anyone else's.
    let Some(gpr_id) = node.allocated_gpr_id else { return Ok(Vec::new()) };
    let Some(gpr) = loaded(loaders(ctx)?.gpr().load_one(gpr_id).await)? else { return Ok(Vec::new()) };
    let namespaces = loaded(loaders(ctx)?.namespaces_by_slice().load_one(gpr.slice_id).await)?.unwrap_or_default();
    let ours = |namespace: &str| namespaces.iter().any(|ns| ns.cluster_id == node.cluster_id && ns.name == namespace);
    Ok(processes.filter(|p| p.pod_namespace.as_deref().is_some_and(ours)).collect())
}

async fn node_of_gpu(ctx: &Context<'_>, gpu: &gpu::Model) -> Result<Option<node::Model>> {
    loaded(loaders(ctx)?.node().load_one(gpu.node_id).await)
}

/// `Gpu.processes`: empty when none, or when the caller may not read the GPU's node.
pub(crate) async fn gpu_processes(ctx: &Context<'_>, gpu: &gpu::Model) -> Result<Vec<GpuProcess>> {
    let Some(node) = node_of_gpu(ctx, gpu).await? else { return Ok(Vec::new()) };
    Ok(readable_processes(ctx, &node).await?.into_iter().filter(|p| p.gpu_id == gpu.id).map(GpuProcess).collect())
}

/// `Gpu.pods`: the pods using the GPU, each with every GPU of the node it uses.
pub(crate) async fn gpu_pods(ctx: &Context<'_>, gpu: &gpu::Model) -> Result<Vec<GpuPod>> {
    let Some(node) = node_of_gpu(ctx, gpu).await? else { return Ok(Vec::new()) };
    let pods = service::pods_of(readable_processes(ctx, &node).await?);
    Ok(pods.into_iter().filter(|p| p.gpu_ids.contains(&gpu.id)).map(GpuPod::from).collect())
}

/// `GpuNode.pods`: the pods using the node's GPUs.
pub(crate) async fn node_pods(ctx: &Context<'_>, node: &node::Model) -> Result<Vec<GpuPod>> {
    Ok(service::pods_of(readable_processes(ctx, node).await?).into_iter().map(GpuPod::from).collect())
}

#[derive(Default)]
pub struct WorkloadQuery;

#[Object]
impl WorkloadQuery {
    /// The pods in a slice's namespaces that use GPUs its GPRs hold, each with its GPUs (and
    /// their latest samples) and processes, as the nodes' agents last reported them since each
    /// node was handed to the slice. `NOT_FOUND` for a slice you may not see.
    async fn workloads(&self, ctx: &Context<'_>, slice_id: ID) -> Result<Vec<GpuPod>> {
        let (caller, db) = session(ctx)?;
        let slice_id = ids::decode("sliceId", &slice_id, Kind::Slice)?;
        Ok(service::slice_workloads(db, caller, slice_id).await?.into_iter().map(GpuPod::from).collect())
    }
}

#[derive(InputObject)]
pub struct PodInput {
    /// The pod's UID (from the process's cgroup).
    pub uid: String,
    /// The pod's namespace, name and container, for a simulated cluster only: on a Kubernetes
    /// cluster the gateway names the pod from the cluster's own list of the node's pods, and
    /// these are ignored.
    pub namespace: Option<String>,
    pub name: Option<String>,
    pub container: Option<String>,
    /// The process's container id (from its cgroup, without the runtime's scheme): how the
    /// gateway names the container on a Kubernetes cluster.
    pub container_id: Option<String>,
}

#[derive(InputObject)]
pub struct GpuProcessInput {
    /// In the host's PID namespace.
    pub pid: i64,
    /// GPU memory it holds, MiB (at most the GPU's memory).
    pub used_memory_mib: Option<f64>,
    /// Null for a process outside any pod.
    pub pod: Option<PodInput>,
}

#[derive(InputObject)]
pub struct GpuWorkloadInput {
    /// The GPU's UUID; must be a GPU of the reported node.
    pub uuid: String,
    /// Everything running on it now (at most 256); empty when idle.
    pub processes: Vec<GpuProcessInput>,
}

/// The processes on one node's GPUs now: name the node by `nodeId`, or by `clusterId` and
/// `nodeName` (what an agent token names).
#[derive(InputObject)]
pub struct ReportGpuWorkloadsInput {
    pub node_id: Option<ID>,
    pub cluster_id: Option<ID>,
    pub node_name: Option<String>,
    /// The node's GPUs; a GPU of the node left out has no processes afterwards.
    pub gpus: Vec<GpuWorkloadInput>,
}

#[derive(SimpleObject)]
pub struct ReportGpuWorkloadsPayload {
    /// Processes stored.
    pub processes: i32,
    /// The reported pods as their Kubernetes cluster names them (none on a simulated cluster,
    /// nor for a UID that is not on the node): the agent labels its own metrics with these.
    pub named_pods: Vec<NamedPod>,
    /// Problems with the input; when there are any, nothing was stored.
    pub user_errors: Vec<UserError>,
}

/// A pod on the reporting node, as its cluster names it.
#[derive(SimpleObject)]
pub struct NamedPod {
    pub uid: String,
    pub namespace: String,
    pub name: String,
    pub containers: Vec<NamedContainer>,
}

#[derive(SimpleObject)]
pub struct NamedContainer {
    /// Without the runtime's scheme, as in the process's cgroup.
    pub id: String,
    pub name: String,
}

impl From<egs_domain::ports::NodePod> for NamedPod {
    fn from(pod: egs_domain::ports::NodePod) -> Self {
        let mut containers: Vec<NamedContainer> = pod.containers.into_iter().map(|(id, name)| NamedContainer { id, name }).collect();
        containers.sort_by(|a, b| a.id.cmp(&b.id));
        Self { uid: pod.uid, namespace: pod.namespace, name: pod.name, containers }
    }
}

fn node_ref(input: &ReportGpuWorkloadsInput) -> Result<NodeRef> {
    match (&input.node_id, &input.cluster_id, &input.node_name) {
        (Some(id), None, None) => Ok(NodeRef::Id(ids::decode("nodeId", id, Kind::GpuNode)?)),
        (None, Some(cluster), Some(name)) => Ok(NodeRef::Named { cluster_id: ids::decode("clusterId", cluster, Kind::Cluster)?, name: name.clone() }),
        _ => Err(Error::invalid("nodeId", "name the node by `nodeId`, or by `clusterId` and `nodeName`")),
    }
}

#[derive(Default)]
pub struct WorkloadMutation;

#[Object]
impl WorkloadMutation {
    /// Replaces the processes (and their pods) on one node's GPUs (its agent, or an admin):
    /// all or nothing. Agents send it when the mapping changes and at least every minute.
    async fn report_gpu_workloads(&self, ctx: &Context<'_>, input: ReportGpuWorkloadsInput) -> async_graphql::Result<ReportGpuWorkloadsPayload> {
        let (caller, db) = session(ctx)?;
        let app = crate::app(ctx)?;
        let result = async {
            let node = node_ref(&input)?;
            let gpus = input
                .gpus
                .into_iter()
                .map(|g| service::GpuWorkloadReport {
                    uuid: g.uuid,
                    processes: g
                        .processes
                        .into_iter()
                        .map(|p| service::ProcessReport {
                            pid: p.pid,
                            used_memory_mib: p.used_memory_mib,
                            pod: p.pod.map(|pod| service::PodReport {
                                uid: pod.uid,
                                namespace: pod.namespace,
                                name: pod.name,
                                container: pod.container,
                                container_id: pod.container_id,
                            }),
                        })
                        .collect(),
                })
                .collect();
            service::report_workloads(db, caller, Utc::now(), node, gpus, app.kubernetes.as_ref(), &app.pod_names).await
        };
        match result.await {
            Ok(reported) => Ok(ReportGpuWorkloadsPayload {
                processes: reported.processes as i32,
                named_pods: reported.named.into_iter().map(NamedPod::from).collect(),
                user_errors: Vec::new(),
            }),
            Err(Error::User(user_errors)) => Ok(ReportGpuWorkloadsPayload { processes: 0, named_pods: Vec::new(), user_errors }),
            Err(other) => Err(other.into()),
        }
    }
}
