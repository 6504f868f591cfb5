//! Handing nodes to a slice and taking them back, in steps (the seeds' pre-provisioning
//! checklist). Every step is idempotent and recorded, so a new leader resumes a job after the
//! last finished step and re-running an interrupted one does no harm.
//!
//! Provision: `PRECHECK` → `LABEL_AND_TAINT` → `POD_PLACEMENT` → `EVENTS`.
//! Release: `CORDON` → `EVICT` → `UNLABEL` → `POD_PLACEMENT_REMOVED` → `POSTCHECK`.

use super::{
    CORDONED_ANNOTATION, DEFAULT_TOLERATIONS_ANNOTATION, GPR_LABEL, GPU_RESOURCE, KubeClusters, NODE_SELECTOR_ANNOTATION, PodPlacement, SLICE_KEY,
    TOLERATIONS_WHITELIST_ANNOTATION, classify, is_conflict, is_not_found,
};
use async_trait::async_trait;
use egs_domain::lifecycle::provider::run_step;
use egs_domain::ports::{ClusterProvider, NodeJob, ProviderError, StepLog};
use egs_wire::backoff::Backoff;
use k8s_openapi::api::core::v1::{Event, Namespace, Node, ObjectReference, Pod, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use kube::api::{Api, EvictParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// How long release keeps retrying evictions a PodDisruptionBudget refuses (429) and waits
/// for evicted pods to go, before it reports the release as blocked (and retries later).
#[derive(Clone, Debug)]
pub struct EvictionPolicy {
    pub deadline: Duration,
    pub first_backoff: Duration,
    pub max_backoff: Duration,
}

impl Default for EvictionPolicy {
    fn default() -> Self {
        Self { deadline: Duration::from_secs(300), first_backoff: Duration::from_millis(500), max_backoff: Duration::from_secs(15) }
    }
}

pub struct KubernetesProvider {
    clusters: Arc<KubeClusters>,
    eviction: EvictionPolicy,
}

impl KubernetesProvider {
    pub fn new(clusters: Arc<KubeClusters>, eviction: EvictionPolicy) -> Self {
        Self { clusters, eviction }
    }

    async fn placement(&self, job: &NodeJob) -> PodPlacement {
        use sea_orm::EntityTrait;
        match egs_entities::cluster::Entity::find_by_id(job.cluster_id).one(self.clusters.db()).await {
            Ok(Some(c)) => c.pod_placement,
            _ => PodPlacement::AdmissionPlugins,
        }
    }
}

#[async_trait]
impl ClusterProvider for KubernetesProvider {
    async fn provision(&self, job: &NodeJob, steps: &dyn StepLog) -> Result<(), ProviderError> {
        let client = self.clusters.client(job.cluster_id).await?;
        let nodes: Api<Node> = Api::all(client.clone());
        run_step(steps, "PRECHECK", precheck(&nodes, self.clusters.db(), job)).await?;
        let handed = self.hand_over(&client, &nodes, job, steps).await;
        if let Err(ProviderError::Permanent(_)) = &handed {
            // The GPR fails (or goes back to the queue) and its nodes to the pool: they must
            // not keep the slice's label, taint or placement.
            for name in &job.node_names {
                if let Err(error) = take_node_back(&nodes, name, &job.slice_name).await {
                    tracing::warn!(node = %name, error = %egs_domain::redaction::scrubbed(&error), "could not undo a failed provisioning");
                }
            }
            let namespaces: Api<Namespace> = Api::all(client.clone());
            for ns in &job.namespaces {
                if let Err(error) = unsteer_namespace(&namespaces, ns).await {
                    tracing::warn!(namespace = %ns, error = %egs_domain::redaction::scrubbed(&error), "could not undo a failed provisioning");
                }
            }
        }
        handed
    }

    async fn release(&self, job: &NodeJob, steps: &dyn StepLog) -> Result<(), ProviderError> {
        self.take_back(job, steps).await
    }
}

impl KubernetesProvider {
    /// The provisioning steps after the precheck.
    async fn hand_over(&self, client: &kube::Client, nodes: &Api<Node>, job: &NodeJob, steps: &dyn StepLog) -> Result<(), ProviderError> {
        run_step(steps, "LABEL_AND_TAINT", async {
            for name in &job.node_names {
                hand_node_over(nodes, name, job).await?;
            }
            Ok(format!("{} labelled {SLICE_KEY}={} and tainted {SLICE_KEY}={}:NoSchedule", job.node_names.join(", "), job.slice_name, job.slice_name))
        })
        .await?;
        let placement = self.placement(job).await;
        run_step(steps, "POD_PLACEMENT", async {
            let namespaces: Api<Namespace> = Api::all(client.clone());
            for ns in &job.namespaces {
                steer_namespace(&namespaces, ns, &job.slice_name, self.clusters.pod_security()).await?;
            }
            let how = match placement {
                PodPlacement::AdmissionPlugins => "the PodNodeSelector and PodTolerationRestriction admission plugins (namespace annotations)",
                PodPlacement::Webhook => "the EGS mutating webhook (namespaces labelled egs.io/slice)",
            };
            Ok(format!("pods in {} land on the slice's nodes through {how}", list_or_none(&job.namespaces)))
        })
        .await?;
        run_step(steps, "EVENTS", async {
            // Events inform; one the cluster refuses does not undo the handover.
            let message = format!("handed to slice `{}` for GPR `{}` ({})", job.slice_name, job.gpr_name, job.gpr_id);
            let mut posted = 0;
            for name in &job.node_names {
                posted += usize::from(inform(client, node_ref(name), "Provisioned", &message, "Normal").await);
            }
            if let Some((ns, name)) = &job.resource {
                inform(client, resource_ref(ns, name), "Provisioned", &format!("nodes {}", job.node_names.join(", ")), "Normal").await;
            }
            Ok(format!("Kubernetes Events posted on {posted} of {} node(s)", job.node_names.len()))
        })
        .await
    }

    async fn take_back(&self, job: &NodeJob, steps: &dyn StepLog) -> Result<(), ProviderError> {
        let client = self.clusters.client(job.cluster_id).await?;
        let nodes: Api<Node> = Api::all(client.clone());
        run_step(steps, "CORDON", async {
            for name in &job.node_names {
                cordon(&nodes, name).await?;
            }
            Ok(format!("{} cordoned", job.node_names.join(", ")))
        })
        .await?;
        run_step(steps, "EVICT", self.evict_all(&client, job)).await?;
        run_step(steps, "UNLABEL", async {
            for name in &job.node_names {
                take_node_back(&nodes, name, &job.slice_name).await?;
            }
            Ok(format!("labels and taint removed and {} uncordoned", job.node_names.join(", ")))
        })
        .await?;
        run_step(steps, "POD_PLACEMENT_REMOVED", async {
            let namespaces: Api<Namespace> = Api::all(client.clone());
            for ns in &job.namespaces {
                unsteer_namespace(&namespaces, ns).await?;
            }
            Ok(format!("placement annotations removed from {}", list_or_none(&job.namespaces)))
        })
        .await?;
        run_step(steps, "POSTCHECK", async {
            let pods: Api<Pod> = Api::all(client.clone());
            for name in &job.node_names {
                let node = match nodes.get(name).await {
                    Ok(node) => node,
                    Err(e) if is_not_found(&e) => continue,
                    Err(e) => return Err(classify(&format!("cannot read node `{name}`"), e)),
                };
                if node.metadata.labels.as_ref().is_some_and(|l| l.contains_key(SLICE_KEY) || l.contains_key(GPR_LABEL))
                    || taints(&node).iter().any(|t| t.key == SLICE_KEY)
                {
                    return Err(ProviderError::Transient(format!("node `{name}` still carries the slice's label or taint")));
                }
                let left = slice_pods_on(&pods, name, &job.namespaces).await?;
                if !left.is_empty() {
                    return Err(ProviderError::Transient(format!("pods still on `{name}`: {}", left.join(", "))));
                }
                inform(&client, node_ref(name), "Released", &format!("taken back from slice `{}`", job.slice_name), "Normal").await;
            }
            if let Some((ns, name)) = &job.resource {
                inform(&client, resource_ref(ns, name), "Released", &format!("nodes {} are back in the pool", job.node_names.join(", ")), "Normal")
                    .await;
            }
            Ok(format!("{} clean and back in the pool", job.node_names.join(", ")))
        })
        .await
    }
}

impl KubernetesProvider {
    /// Evicts the slice's pods from the job's nodes through the Eviction API, so
    /// PodDisruptionBudgets are honoured: a 429 is retried with backoff until the deadline,
    /// then the release is reported blocked (and retried on a later tick).
    async fn evict_all(&self, client: &kube::Client, job: &NodeJob) -> Result<String, ProviderError> {
        let all_pods: Api<Pod> = Api::all(client.clone());
        let started = tokio::time::Instant::now();
        let mut backoff = Backoff::new(self.eviction.first_backoff, self.eviction.max_backoff);
        let mut evicted = 0usize;
        loop {
            let mut blocked = Vec::new();
            let mut remaining = Vec::new();
            let evicted_before = evicted;
            for node in &job.node_names {
                for pod in slice_pod_objects(&all_pods, node, &job.namespaces).await? {
                    let (ns, name) = (pod.metadata.namespace.clone().unwrap_or_default(), pod.metadata.name.clone().unwrap_or_default());
                    remaining.push(format!("{ns}/{name}"));
                    if pod.metadata.deletion_timestamp.is_some() {
                        continue; // already going
                    }
                    let api: Api<Pod> = Api::namespaced(client.clone(), &ns);
                    match api.evict(&name, &EvictParams::default()).await {
                        Ok(_) => evicted += 1,
                        Err(e) if is_not_found(&e) => {}
                        Err(kube::Error::Api(status)) if status.code == 429 => blocked.push(format!("{ns}/{name}: {}", status.message)),
                        Err(e) => return Err(classify(&format!("cannot evict pod {ns}/{name}"), e)),
                    }
                }
            }
            if remaining.is_empty() {
                return Ok(format!("{evicted} pod(s) evicted"));
            }
            if started.elapsed() >= self.eviction.deadline {
                let why = if blocked.is_empty() {
                    format!("pods still terminating after {}s: {}", self.eviction.deadline.as_secs(), remaining.join(", "))
                } else {
                    format!("eviction refused by a PodDisruptionBudget for {}s: {}", self.eviction.deadline.as_secs(), blocked.join("; "))
                };
                for node in &job.node_names {
                    inform(client, node_ref(node), "EvictionBlocked", &why, "Warning").await;
                }
                return Err(ProviderError::Transient(why));
            }
            if blocked.is_empty() && evicted > evicted_before {
                continue; // look again at once: pods without a grace period are gone already
            }
            tokio::time::sleep(backoff.next_delay()).await;
        }
    }
}

impl KubeClusters {
    pub(crate) fn db(&self) -> &sea_orm::DatabaseConnection {
        &self.db
    }
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() { "no namespace".into() } else { items.join(", ") }
}

fn taints(node: &Node) -> Vec<Taint> {
    node.spec.as_ref().and_then(|s| s.taints.clone()).unwrap_or_default()
}

fn slice_taint(slice: &str) -> Taint {
    Taint { key: SLICE_KEY.into(), value: Some(slice.into()), effect: "NoSchedule".into(), time_added: None }
}

/// Ready, the GPUs the inventory expects, an agent that is not silent or failing, and not
/// another slice's.
async fn precheck(nodes: &Api<Node>, db: &sea_orm::DatabaseConnection, job: &NodeJob) -> Result<String, ProviderError> {
    if let Some(bad) = job.unhealthy_nodes.first() {
        return Err(ProviderError::Permanent(format!("node `{bad}`: its agent is silent or reports a fault")));
    }
    for name in &job.node_names {
        let node = nodes.get(name).await.map_err(|e| classify(&format!("cannot read node `{name}`"), e))?;
        let status = node.status.clone().unwrap_or_default();
        let ready = status.conditions.unwrap_or_default().iter().any(|c| c.type_ == "Ready" && c.status == "True");
        if !ready {
            return Err(ProviderError::Permanent(format!("node `{name}` is not Ready")));
        }
        let allocatable = status.allocatable.unwrap_or_default().get(GPU_RESOURCE).and_then(|q| q.0.parse::<i64>().ok()).unwrap_or(0);
        let expected = job.expected_gpus.get(name).copied().unwrap_or(0) as i64;
        if allocatable < expected {
            return Err(ProviderError::Permanent(format!("node `{name}` has {allocatable} allocatable {GPU_RESOURCE}, expected {expected}")));
        }
        let labels = node.metadata.labels.clone().unwrap_or_default();
        if let Some(other) = labels.get(SLICE_KEY).filter(|s| **s != job.slice_name) {
            // Only a GPR still releasing the node holds it; a label left behind (a failed node
            // that could not be cleaned) is overwritten by the next step.
            let previous = labels.get(GPR_LABEL).and_then(|id| id.parse::<i64>().ok());
            if still_releasing(db, previous).await? {
                return Err(ProviderError::Transient(format!("node `{name}` is still being released by slice `{other}`")));
            }
        }
    }
    Ok(format!("{} Ready with {GPU_RESOURCE} allocatable as expected", job.node_names.join(", ")))
}

async fn still_releasing(db: &sea_orm::DatabaseConnection, gpr_id: Option<i64>) -> Result<bool, ProviderError> {
    use sea_orm::EntityTrait;
    let Some(id) = gpr_id else { return Ok(false) };
    let found =
        egs_entities::gpr::Entity::find_by_id(id).one(db).await.map_err(|e| ProviderError::Transient(format!("cannot read GPR {id}: {e}")))?;
    Ok(found.is_some_and(|g| g.phase == egs_entities::GprPhase::Releasing))
}

/// Posts an Event, logging (not failing) when the cluster refuses it; whether it was posted.
async fn inform(client: &kube::Client, object: ObjectReference, reason: &str, message: &str, kind: &str) -> bool {
    match emit(client, object, reason, message, kind).await {
        Ok(()) => true,
        Err(error) => {
            tracing::info!(reason, error = %egs_domain::redaction::scrubbed(&error), "could not post a Kubernetes Event");
            false
        }
    }
}

/// Retries a read-modify-write on a 409 (someone else changed the object in between).
const CONFLICT_RETRIES: usize = 8;

async fn hand_node_over(nodes: &Api<Node>, name: &str, job: &NodeJob) -> Result<(), ProviderError> {
    for _ in 0..CONFLICT_RETRIES {
        let node = nodes.get(name).await.map_err(|e| classify(&format!("cannot read node `{name}`"), e))?;
        let mut taints: Vec<Taint> = taints(&node).into_iter().filter(|t| t.key != SLICE_KEY).collect();
        taints.push(slice_taint(&job.slice_name));
        // The resourceVersion makes the merge patch conditional: the taint list is replaced
        // whole, so it must be the list we read.
        let patch = json!({
            "metadata": {
                "resourceVersion": node.metadata.resource_version,
                "labels": { SLICE_KEY: job.slice_name, GPR_LABEL: job.gpr_id.to_string() },
            },
            "spec": { "taints": taints },
        });
        match nodes.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(_) => return Ok(()),
            Err(e) if is_conflict(&e) => continue,
            Err(e) => return Err(classify(&format!("cannot label node `{name}`"), e)),
        }
    }
    Err(ProviderError::Transient(format!("node `{name}` kept changing under us")))
}

async fn cordon(nodes: &Api<Node>, name: &str) -> Result<(), ProviderError> {
    // A busy node (its kubelet, other controllers) changes between our read and our
    // conditional patch: read again at once rather than fail the step (the real API server
    // showed a node that changed on every try exhausting the step's retries).
    for _ in 0..CONFLICT_RETRIES {
        let node = match nodes.get(name).await {
            Ok(node) => node,
            Err(e) if is_not_found(&e) => return Ok(()),
            Err(e) => return Err(classify(&format!("cannot read node `{name}`"), e)),
        };
        let already = node.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false);
        if already {
            return Ok(()); // someone cordoned it (or we did, before a restart): leave the mark as is
        }
        // Conditional: had someone else cordoned it since our read, the annotation would
        // claim their cordon as ours, and release would undo it.
        let patch = json!({
            "metadata": { "resourceVersion": node.metadata.resource_version, "annotations": { CORDONED_ANNOTATION: "true" } },
            "spec": { "unschedulable": true },
        });
        match nodes.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(_) => return Ok(()),
            Err(e) if is_conflict(&e) => continue,
            Err(e) => return Err(classify(&format!("cannot cordon node `{name}`"), e)),
        }
    }
    Err(ProviderError::Transient(format!("node `{name}` kept changing while cordoning; retrying")))
}

async fn take_node_back(nodes: &Api<Node>, name: &str, slice: &str) -> Result<(), ProviderError> {
    for _ in 0..CONFLICT_RETRIES {
        let node = match nodes.get(name).await {
            Ok(node) => node,
            Err(e) if is_not_found(&e) => return Ok(()),
            Err(e) => return Err(classify(&format!("cannot read node `{name}`"), e)),
        };
        let ours = node.metadata.labels.as_ref().and_then(|l| l.get(SLICE_KEY)).is_none_or(|s| s == slice);
        if !ours {
            return Ok(()); // already handed to another slice
        }
        let taints: Vec<Taint> = taints(&node).into_iter().filter(|t| t.key != SLICE_KEY).collect();
        let we_cordoned = node.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(CORDONED_ANNOTATION));
        // Kept cordoned for maintenance in EGS: the cordon stays, and is the maintenance's now.
        let maintenance = node.metadata.labels.as_ref().is_some_and(|l| l.contains_key(super::cordons::MAINTENANCE_LABEL));
        let mut patch = json!({
            "metadata": {
                "resourceVersion": node.metadata.resource_version,
                "labels": { SLICE_KEY: null, GPR_LABEL: null },
                "annotations": { CORDONED_ANNOTATION: null },
            },
            "spec": { "taints": if taints.is_empty() { serde_json::Value::Null } else { json!(taints) } },
        });
        if we_cordoned && maintenance {
            patch["metadata"]["annotations"][super::cordons::MAINTENANCE_ANNOTATION] = json!("cordoned");
        } else if we_cordoned {
            patch["spec"]["unschedulable"] = serde_json::Value::Null;
        }
        match nodes.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(_) => return Ok(()),
            Err(e) if is_conflict(&e) => continue,
            Err(e) => return Err(classify(&format!("cannot unlabel node `{name}`"), e)),
        }
    }
    Err(ProviderError::Transient(format!("node `{name}` kept changing under us")))
}

/// Takes the namespace for the slice (see [`super::claim_namespace`]: created when missing, an
/// existing one only when it is the slice's), then writes the admission plugins' annotations.
async fn steer_namespace(namespaces: &Api<Namespace>, ns: &str, slice: &str, pod_security: &str) -> Result<(), ProviderError> {
    super::claim_namespace(namespaces, ns, slice, pod_security).await?;
    let tolerations = json!([super::slice_toleration(slice)]).to_string();
    let patch = json!({
        "metadata": {
            "annotations": {
                NODE_SELECTOR_ANNOTATION: format!("{SLICE_KEY}={slice}"),
                DEFAULT_TOLERATIONS_ANNOTATION: tolerations,
                TOLERATIONS_WHITELIST_ANNOTATION: tolerations,
            },
        },
    });
    match namespaces.patch(ns, &PatchParams::default(), &Patch::Merge(&patch)).await {
        Ok(_) => Ok(()),
        Err(e) if is_not_found(&e) => Err(ProviderError::Transient(format!("namespace `{ns}` went away meanwhile; retrying"))),
        Err(e) => Err(classify(&format!("cannot annotate namespace `{ns}`"), e)),
    }
}

async fn unsteer_namespace(namespaces: &Api<Namespace>, ns: &str) -> Result<(), ProviderError> {
    let patch = json!({
        "metadata": {
            // The whitelist stays: with it the admission plugin refuses pods of the slice that
            // tolerate another slice's taint (or every taint) while the slice holds no nodes.
            "annotations": { NODE_SELECTOR_ANNOTATION: null, DEFAULT_TOLERATIONS_ANNOTATION: null },
        },
    });
    match namespaces.patch(ns, &PatchParams::default(), &Patch::Merge(&patch)).await {
        Ok(_) => Ok(()),
        Err(e) if is_not_found(&e) => Ok(()),
        Err(e) => Err(classify(&format!("cannot update namespace `{ns}`"), e)),
    }
}

/// The slice's pods on `node` (pods of other namespaces, such as DaemonSets' in
/// `kube-system`, are not the slice's to move).
async fn slice_pod_objects(pods: &Api<Pod>, node: &str, namespaces: &[String]) -> Result<Vec<Pod>, ProviderError> {
    let params = ListParams::default().fields(&format!("spec.nodeName={node}"));
    let list = pods.list(&params).await.map_err(|e| classify(&format!("cannot list pods on `{node}`"), e))?;
    Ok(list
        .items
        .into_iter()
        .filter(|p| p.metadata.namespace.as_ref().is_some_and(|ns| namespaces.contains(ns)))
        .filter(|p| !matches!(p.status.as_ref().and_then(|s| s.phase.as_deref()), Some("Succeeded" | "Failed")))
        .collect())
}

async fn slice_pods_on(pods: &Api<Pod>, node: &str, namespaces: &[String]) -> Result<Vec<String>, ProviderError> {
    Ok(slice_pod_objects(pods, node, namespaces)
        .await?
        .into_iter()
        .map(|p| format!("{}/{}", p.metadata.namespace.unwrap_or_default(), p.metadata.name.unwrap_or_default()))
        .collect())
}

fn node_ref(name: &str) -> ObjectReference {
    ObjectReference { api_version: Some("v1".into()), kind: Some("Node".into()), name: Some(name.into()), ..Default::default() }
}

pub(crate) fn namespace_ref(ns: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Namespace".into()),
        name: Some(ns.into()),
        namespace: Some(ns.into()),
        ..Default::default()
    }
}

pub(crate) fn resource_ref(ns: &str, name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("egs.io/v1alpha1".into()),
        kind: Some("GPUProvisioningRequest".into()),
        namespace: Some(ns.into()),
        name: Some(name.into()),
        ..Default::default()
    }
}

/// Posts a core/v1 Event about `object` (Nodes' Events live in `default`, as the kubelet's do).
pub async fn emit(client: &kube::Client, object: ObjectReference, reason: &str, message: &str, kind: &str) -> Result<(), ProviderError> {
    let ns = object.namespace.clone().unwrap_or_else(|| "default".into());
    let now = k8s_openapi::jiff::Timestamp::now();
    let subject = object.name.clone().unwrap_or_default().to_lowercase();
    let event = Event {
        metadata: ObjectMeta { generate_name: Some(format!("{subject}.")), namespace: Some(ns.clone()), ..Default::default() },
        involved_object: object,
        reason: Some(reason.into()),
        message: Some(message.chars().take(1024).collect()),
        type_: Some(kind.into()),
        source: Some(k8s_openapi::api::core::v1::EventSource { component: Some(super::COMPONENT.into()), host: None }),
        reporting_component: Some(super::COMPONENT.into()),
        reporting_instance: Some(super::COMPONENT.into()),
        first_timestamp: Some(Time(now)),
        last_timestamp: Some(Time(now)),
        event_time: Some(MicroTime(now)),
        action: Some(reason.into()),
        count: Some(1),
        ..Default::default()
    };
    let events: Api<Event> = Api::namespaced(client.clone(), &ns);
    events.create(&PostParams::default(), &event).await.map(|_| ()).map_err(|e| classify("cannot post a Kubernetes Event", e))
}
