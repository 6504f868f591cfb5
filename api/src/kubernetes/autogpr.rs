//! Auto-GPR: when a GPU pod of a slice stays Pending (no node can take it), EGS asks for nodes
//! with a GPR made from the slice's auto-GPR template.
//!
//! The controller watches the cluster's Pending pods (a reflector over a `status.phase=Pending`
//! watch) and looks at them every second, since time passing brings no watch event. A pod
//! counts when it is in a namespace of a slice on this cluster whose auto-GPR is enabled with
//! a template, is not bound to a node yet, not being deleted, a container requests or limits
//! `nvidia.com/gpu`, and it has been Pending (unscheduled) for `auto_gpr_pending_for`. Then,
//! once per slice rather than per pod: unless the slice already has an active auto-created
//! GPR (pending approval, queued, provisioning or provisioned, labelled `egs.io/auto-gpr=true`),
//! EGS creates one from the template, preferring this cluster, and posts a `GPRCreated` Event
//! on the pod. Failures are logged, posted once as a `GPRNotCreated` Warning Event on the pod,
//! and retried with backoff.

use super::GPU_RESOURCE;
use super::context::ControllerContext;
use super::provision::emit;
use egs_domain::auth::Caller;
use egs_domain::error::Error;
use egs_domain::gpr::service::create_gpr;
use egs_domain::gpr::spec::GprSpec;
use egs_entities::{GprPhase, cluster, gpr, gpr_template, slice, slice_namespace};
use egs_wire::backoff::Backoff;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use kube::api::Api;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// GPR label marking GPRs auto-GPR created.
pub const AUTO_GPR_LABEL: &str = "egs.io/auto-gpr";
/// GPR label naming the pod (`<namespace>/<name>`) that made auto-GPR act.
pub const TRIGGER_POD_LABEL: &str = "egs.io/trigger-pod";
/// How often the Pending pods are looked at.
const CHECK_EVERY: Duration = Duration::from_secs(1);
/// Wait before retrying a slice whose GPR could not be created; doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(5);
const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// Phases in which an auto-created GPR still stands for the slice's Pending pods.
const ACTIVE: [GprPhase; 4] = [GprPhase::PendingApproval, GprPhase::Queued, GprPhase::Provisioning, GprPhase::Provisioned];

/// Watches the cluster's Pending GPU pods until aborted.
pub async fn run(ctx: Arc<ControllerContext>, cluster: cluster::Model, client: kube::Client) {
    let mut state = AutoGpr { backoff: HashMap::new() };
    loop {
        let (reader, writer) = reflector::store::<Pod>();
        let pods: Api<Pod> = Api::all(client.clone());
        let stream = reflector(writer, watcher(pods, watcher::Config::default().fields("status.phase=Pending"))).default_backoff();
        let mut stream = std::pin::pin!(stream);
        let mut tick = tokio::time::interval(CHECK_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                event = stream.next() => match event {
                    Some(Ok(_)) => {}
                    Some(Err(error)) => tracing::warn!(cluster = %cluster.name, error = %egs_domain::redaction::scrubbed(&error), "auto-GPR: watching Pending pods failed; retrying"),
                    None => break,
                },
                _ = tick.tick() => state.check(&ctx, &cluster, &client, reader.state()).await,
            }
        }
        tracing::warn!(cluster = %cluster.name, "auto-GPR: the pod watch ended; starting it again");
        tokio::time::sleep(CHECK_EVERY).await;
    }
}

/// A Pending GPU pod that has waited long enough.
struct Waiting {
    namespace: String,
    name: String,
    uid: Option<String>,
    since: i64,
}

struct AutoGpr {
    /// Slices whose last attempt failed: when to try again, and the waits to come.
    backoff: HashMap<i64, (Instant, Backoff)>,
}

impl AutoGpr {
    async fn check(&mut self, ctx: &ControllerContext, cluster: &cluster::Model, client: &kube::Client, pods: Vec<Arc<Pod>>) {
        let now = chrono::Utc::now().timestamp();
        let threshold = i64::try_from(ctx.config.auto_gpr_pending_for.as_secs()).unwrap_or(i64::MAX);
        let waiting: Vec<Waiting> = pods.iter().filter_map(|pod| waiting(pod)).filter(|w| now - w.since >= threshold).collect();
        if waiting.is_empty() {
            return;
        }
        let by_slice = match self.slices_of(ctx, cluster, waiting).await {
            Ok(found) => found,
            Err(error) => {
                tracing::warn!(cluster = %cluster.name, ?error, "auto-GPR: cannot read the slices; retrying");
                return;
            }
        };
        for (owner, mut pods) in by_slice {
            if self.backoff.get(&owner.id).is_some_and(|(until, _)| Instant::now() < *until) {
                continue;
            }
            pods.sort_by(|a, b| (a.since, &a.namespace, &a.name).cmp(&(b.since, &b.namespace, &b.name)));
            let Some(trigger) = pods.first() else { continue };
            match self.act(ctx, cluster, client, &owner, trigger, pods.len()).await {
                Ok(()) => {
                    self.backoff.remove(&owner.id);
                }
                Err(why) => {
                    let (until, backoff) = self.backoff.entry(owner.id).or_insert_with(|| (Instant::now(), Backoff::new(FIRST_BACKOFF, MAX_BACKOFF)));
                    let wait = backoff.next_delay();
                    *until = Instant::now() + wait;
                    tracing::warn!(cluster = %cluster.name, slice = %owner.name, reason = %why, retry_in_s = wait.as_secs(), "auto-GPR: no GPR created");
                    let message = format!("EGS could not ask for GPU nodes for slice `{}`: {why} (retrying in {}s)", owner.name, wait.as_secs());
                    if let Err(error) = emit(client, pod_ref(trigger), "GPRNotCreated", &message, "Warning").await {
                        tracing::warn!(cluster = %cluster.name, error = %egs_domain::redaction::scrubbed(&error), "auto-GPR: cannot post the Event");
                    }
                }
            }
        }
    }

    /// The waiting pods grouped by the auto-GPR slice whose namespace they are in.
    async fn slices_of(
        &self,
        ctx: &ControllerContext,
        cluster: &cluster::Model,
        waiting: Vec<Waiting>,
    ) -> Result<Vec<(slice::Model, Vec<Waiting>)>, sea_orm::DbErr> {
        let mut names: Vec<&str> = waiting.iter().map(|w| w.namespace.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let namespaces = slice_namespace::Entity::find()
            .filter(slice_namespace::Column::ClusterId.eq(cluster.id))
            .filter(slice_namespace::Column::Name.is_in(names))
            .all(&ctx.db)
            .await?;
        if namespaces.is_empty() {
            return Ok(Vec::new());
        }
        let slice_of: HashMap<&str, i64> = namespaces.iter().map(|ns| (ns.name.as_str(), ns.slice_id)).collect();
        let slices = slice::Entity::find()
            .filter(slice::Column::Id.is_in(slice_of.values().copied()))
            .filter(slice::Column::AutoGprEnabled.eq(true))
            .filter(slice::Column::AutoGprTemplateId.is_not_null())
            .order_by_asc(slice::Column::Id)
            .all(&ctx.db)
            .await?;
        let mut grouped: BTreeMap<i64, (slice::Model, Vec<Waiting>)> = slices.into_iter().map(|s| (s.id, (s, Vec::new()))).collect();
        for pod in waiting {
            if let Some(id) = slice_of.get(pod.namespace.as_str())
                && let Some((_, pods)) = grouped.get_mut(id)
            {
                pods.push(pod);
            }
        }
        Ok(grouped.into_values().filter(|(_, pods)| !pods.is_empty()).collect())
    }

    /// Creates the slice's GPR unless it has an active auto-created one. The error says why not.
    async fn act(
        &self,
        ctx: &ControllerContext,
        cluster: &cluster::Model,
        client: &kube::Client,
        owner: &slice::Model,
        trigger: &Waiting,
        count: usize,
    ) -> Result<(), String> {
        let db_error = |e: sea_orm::DbErr| format!("database error: {e}");
        let active = gpr::Entity::find()
            .filter(gpr::Column::SliceId.eq(owner.id))
            .filter(gpr::Column::Phase.is_in(ACTIVE))
            .all(&ctx.db)
            .await
            .map_err(db_error)?;
        if active.iter().any(|g| g.labels.0.get(AUTO_GPR_LABEL).is_some_and(|v| v == "true")) {
            return Ok(());
        }
        let Some(template_id) = owner.auto_gpr_template_id else { return Ok(()) };
        let template = gpr_template::Entity::find_by_id(template_id)
            .one(&ctx.db)
            .await
            .map_err(db_error)?
            .ok_or_else(|| "its auto-GPR template no longer exists".to_owned())?;
        let trigger_ref: String = format!("{}/{}", trigger.namespace, trigger.name).chars().take(256).collect();
        let spec = GprSpec {
            slice_id: owner.id,
            name: gpr_name(&trigger.name),
            node_count: template.node_count,
            gpus_per_node: template.gpus_per_node,
            min_gpu_memory_mib: None,
            gpu_shape: template.gpu_shape.clone(),
            instance_type: template.instance_type.clone(),
            preferred_cluster_ids: vec![cluster.id],
            priority: template.priority,
            duration_secs: template.duration_secs,
            idle_timeout_secs: template.idle_timeout_secs,
            preemptible: true,
            requeue_on_failure: None,
            earliest_start_at: None,
            labels: BTreeMap::from([(AUTO_GPR_LABEL.to_owned(), "true".to_owned()), (TRIGGER_POD_LABEL.to_owned(), trigger_ref.clone())]),
            source: None,
            template_id: Some(template.id),
            workload: None,
        };
        let created = match create_gpr(&ctx.db, &Caller::system(), spec).await {
            Ok(created) => created,
            Err(error @ (Error::Database(_) | Error::Internal(_))) => {
                tracing::warn!(slice = %owner.name, ?error, "auto-GPR: creating the GPR failed");
                return Err("an internal error; it has been logged".into());
            }
            Err(other) => return Err(format!("template `{}`: {}", template.name, other.public_message())),
        };
        ctx.changed();
        tracing::info!(
            cluster = %cluster.name, slice = %owner.name, gpr = created.id, template = %template.name, trigger = %trigger_ref,
            "auto-GPR: created a GPR for Pending GPU pods"
        );
        let message = format!(
            "EGS asked for {} node(s) with GPR `{}` ({}) from template `{}` for slice `{}`: {count} GPU pod(s) Pending",
            created.node_count,
            created.name,
            egs_domain::ids::encode(egs_domain::ids::Kind::Gpr, created.id),
            template.name,
            owner.name
        );
        if let Err(error) = emit(client, pod_ref(trigger), "GPRCreated", &message, "Normal").await {
            tracing::warn!(cluster = %cluster.name, error = %egs_domain::redaction::scrubbed(&error), "auto-GPR: cannot post the Event");
        }
        Ok(())
    }
}

/// The pod as a waiting GPU pod, with when it started waiting (Unix seconds), or `None` when it
/// does not count.
fn waiting(pod: &Pod) -> Option<Waiting> {
    let status = pod.status.as_ref()?;
    if status.phase.as_deref() != Some("Pending") || pod.metadata.deletion_timestamp.is_some() {
        return None;
    }
    let spec = pod.spec.as_ref()?;
    if spec.node_name.as_deref().is_some_and(|n| !n.is_empty()) {
        return None; // bound: it waits for its node, not for nodes
    }
    let wants_gpus = spec.containers.iter().chain(spec.init_containers.iter().flatten()).any(|c| {
        let resources = c.resources.as_ref();
        let asks = |list: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>| {
            list.and_then(|l| l.get(GPU_RESOURCE)).is_some_and(|q| q.0.trim().parse::<f64>().map_or(true, |n| n > 0.0))
        };
        asks(resources.and_then(|r| r.requests.as_ref())) || asks(resources.and_then(|r| r.limits.as_ref()))
    });
    if !wants_gpus {
        return None;
    }
    let scheduled = status.conditions.iter().flatten().find(|c| c.type_ == "PodScheduled");
    let since = scheduled.and_then(|c| c.last_transition_time.as_ref()).or(pod.metadata.creation_timestamp.as_ref()).map(|t| t.0.as_second())?;
    Some(Waiting { namespace: pod.metadata.namespace.clone()?, name: pod.metadata.name.clone()?, uid: pod.metadata.uid.clone(), since })
}

/// `auto-<pod>` as a DNS label (GPR names are).
fn gpr_name(pod: &str) -> String {
    let cleaned: String =
        format!("auto-{pod}").chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).take(63).collect();
    cleaned.trim_end_matches('-').to_owned()
}

fn pod_ref(pod: &Waiting) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        namespace: Some(pod.namespace.clone()),
        name: Some(pod.name.clone()),
        uid: pod.uid.clone(),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(node: Option<&str>, gpus: Option<&str>, phase: &str) -> Pod {
        let resources = gpus.map_or(json!({}), |g| json!({ "limits": { "nvidia.com/gpu": g } }));
        let mut value = json!({
            "metadata": { "name": "train.0", "namespace": "team-a", "creationTimestamp": "2025-01-01T00:00:00Z" },
            "spec": { "containers": [{ "name": "main", "resources": resources }] },
            "status": { "phase": phase, "conditions": [{ "type": "PodScheduled", "status": "False", "lastTransitionTime": "2025-01-01T00:01:00Z" }] },
        });
        if let Some(node) = node {
            value["spec"]["nodeName"] = json!(node);
        }
        serde_json::from_value(value).expect("a pod")
    }

    #[test]
    fn only_unbound_pending_gpu_pods_wait() {
        let found = waiting(&pod(None, Some("8"), "Pending")).expect("waits");
        assert_eq!(found.since, 1_735_689_660);
        assert!(waiting(&pod(None, None, "Pending")).is_none());
        assert!(waiting(&pod(None, Some("0"), "Pending")).is_none());
        assert!(waiting(&pod(Some("n1"), Some("8"), "Pending")).is_none());
        assert!(waiting(&pod(None, Some("8"), "Running")).is_none());
    }

    #[test]
    fn gpr_names_are_dns_labels() {
        assert_eq!(gpr_name("train.0"), "auto-train-0");
        let long = gpr_name(&"x".repeat(100));
        assert_eq!(long.len(), 63);
        assert_eq!(gpr_name("a-----------------------------------------------------------------b"), "auto-a");
    }
}
