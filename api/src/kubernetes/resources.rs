//! The `GPUProvisioningRequest` custom resource (`egs.io/v1alpha1`, short name `gpr`) and its
//! controller: a resource applied in a slice's namespace becomes a gateway GPR (the resource's
//! uid makes the create idempotent), spec edits of a pending GPR are passed on, the gateway's
//! view (phase, estimates, nodes, window) is written back to the status subresource, and
//! deleting the resource cancels or early-releases the GPR; the `egs.io/gpr` finalizer keeps
//! the object until the GPR is finished.
//!
//! Every write is a JSON merge patch: metadata ones carry `resourceVersion` (a 409 is retried
//! on the next round), status ones go to `/status` and only when the status would change.
//! Each object is reconciled on every watch event and again every `status_resync`, so changes
//! made through GraphQL reach the resource too.

use super::context::ControllerContext;
use super::provision::emit;
use super::{is_conflict, is_not_found};
use chrono::{DateTime, SecondsFormat, Utc};
use egs_entities::{GprPhase, cluster, gpr, gpr_node, node, slice, slice_namespace};
use egs_schema::auth::Caller;
use egs_schema::error::{Error, UserError};
use egs_schema::gpr::service::{self, DEFAULT_PRIORITY, GprChanges, GprSource, GprSpec};
use egs_schema::ids::{self, Kind};
use futures_util::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{CustomResource, CustomResourceExt, Resource, ResourceExt};
use schemars::JsonSchema;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

/// The finalizer that keeps a resource until its GPR is finished.
pub const FINALIZER: &str = "egs.io/gpr";
/// `status.phase` of a resource EGS did not accept (no GPR was created).
pub const PHASE_INVALID: &str = "Invalid";
/// Condition: EGS accepted the resource and holds a GPR for it.
pub const CONDITION_ACCEPTED: &str = "Accepted";
/// Condition: the GPR's nodes belong to the slice.
pub const CONDITION_PROVISIONED: &str = "Provisioned";
/// Condition: the latest spec (`metadata.generation`) was passed on to the GPR.
pub const CONDITION_SPEC_APPLIED: &str = "SpecApplied";

/// Asks EGS for whole GPU nodes for the slice that owns this namespace, for a strict reserved
/// window. EGS creates a GPU Provision Request (GPR) for it and writes its progress to the
/// status; deleting the resource cancels a waiting GPR or gives provisioned nodes back early.
// Clippy reads the printcolumns' `type_ = "string"` as one attribute given twice.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "egs.io",
    version = "v1alpha1",
    kind = "GPUProvisioningRequest",
    shortname = "gpr",
    namespaced,
    status = "GPUProvisioningRequestStatus",
    doc = "A request for whole GPU nodes for the slice that owns the namespace, served by EGS.",
    printcolumn(name = "Phase", type_ = "string", json_path = ".status.phase"),
    printcolumn(name = "Nodes", type_ = "integer", json_path = ".spec.nodes"),
    // Future times: `date` columns print ages, which kubectl shows as `<invalid>` for them.
    printcolumn(name = "Estimated start", type_ = "string", json_path = ".status.estimatedStartAt"),
    printcolumn(name = "Exit", type_ = "string", json_path = ".status.exitAt"),
    printcolumn(name = "Age", type_ = "date", json_path = ".metadata.creationTimestamp")
)]
#[serde(rename_all = "camelCase")]
pub struct GPUProvisioningRequestSpec {
    /// How many whole nodes, all from one pool.
    #[schemars(range(min = 1))]
    pub nodes: i32,
    /// GPUs wanted on each node; absent means every GPU of the node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus_per_node: Option<i32>,
    /// GPU product, e.g. `NVIDIA-H100-80GB-HBM3`; absent lets the scheduler pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_shape: Option<String>,
    /// Node instance type, e.g. `p5.48xlarge`; absent lets the scheduler pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance_type: Option<String>,
    /// 1–300, higher runs first; default 101.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<i32>,
    /// The strict reserved window: `2h30m`, `90m`, `1d12h` or ISO 8601 `PT2H30M`.
    pub duration: String,
    /// Release the nodes once all their GPUs stay idle this long (same format as `duration`);
    /// absent: the slice's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout: Option<String>,
    /// Whether a higher-priority GPR may take the nodes back; default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preemptible: Option<bool>,
    /// An advance reservation: not before this time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earliest_start_at: Option<String>,
    /// Labels of the GPR.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// The slice to ask for; absent: the slice that owns the namespace (the only one allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice: Option<String>,
}

/// What EGS reports about the request.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GPUProvisioningRequestStatus {
    /// The GPR's phase (`PENDING_APPROVAL`, `QUEUED`, `PROVISIONING`, `PROVISIONED`, `RELEASING`,
    /// `COMPLETED`, `CANCELLED`, `REJECTED`, `FAILED`), or `Invalid` when EGS did not accept
    /// the resource (see the `Accepted` condition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The GPR's id in the EGS GraphQL API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpr_id: Option<String>,
    /// 1-based position in its queue while waiting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_position: Option<i32>,
    /// Expected start, allowing for early releases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_start_at: Option<String>,
    /// Planned start: an upper bound unless higher-priority work arrives or a node fails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_no_later_than: Option<String>,
    /// Names of the nodes handed to the slice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned_at: Option<String>,
    /// When the reserved window ends and the nodes are taken back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_at: Option<String>,
    /// Why the nodes were taken back (`EXPIRED`, `EARLY_RELEASED`, `IDLE_TIMEOUT`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release_reason: Option<String>,
    /// More about the phase, when there is more to say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The `metadata.generation` EGS last acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Accepted`, `Provisioned` and `SpecApplied`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<GprCondition>,
}

/// A condition in the Kubernetes convention.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GprCondition {
    #[serde(rename = "type")]
    pub type_: String,
    /// `True` or `False`.
    pub status: String,
    /// A CamelCase word for machines.
    pub reason: String,
    #[serde(default)]
    pub message: String,
    /// When `status` last changed (RFC 3339).
    pub last_transition_time: String,
}

/// The CustomResourceDefinition as YAML, as checked in at
/// `api/crds/gpuprovisioningrequests.egs.io.yaml` (`egs print-crd`).
pub fn crd_yaml() -> String {
    let crd = GPUProvisioningRequest::crd();
    match serde_saphyr::to_string(&crd) {
        Ok(yaml) => yaml,
        // JSON is YAML too; never expected, as the CRD is plain data.
        Err(_) => serde_json::to_string_pretty(&crd).unwrap_or_default() + "\n",
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ReconcileError(String);

impl From<Error> for ReconcileError {
    fn from(error: Error) -> Self {
        Self(match error {
            Error::Database(e) => format!("database: {e}"),
            Error::Internal(e) => format!("{e:#}"),
            other => other.public_message(),
        })
    }
}

impl From<sea_orm::DbErr> for ReconcileError {
    fn from(error: sea_orm::DbErr) -> Self {
        Self(format!("database: {error}"))
    }
}

struct Reconciler {
    ctx: Arc<ControllerContext>,
    cluster: cluster::Model,
    client: kube::Client,
}

/// Serves the cluster's `GPUProvisioningRequest` resources until aborted.
pub async fn run(ctx: Arc<ControllerContext>, cluster: cluster::Model, client: kube::Client) {
    let api: Api<GPUProvisioningRequest> = Api::all(client.clone());
    let cluster_name = cluster.name.clone();
    let reconciler = Arc::new(Reconciler { ctx, cluster, client });
    Controller::new(api, watcher::Config::default())
        .run(reconcile, error_policy, reconciler)
        .for_each(|result| {
            if let Err(error) = result {
                match &error {
                    kube::runtime::controller::Error::ReconcilerFailed(..) => {}
                    other => {
                        tracing::debug!(cluster = %cluster_name, error = %egs_schema::redaction::scrubbed(&other), "GPUProvisioningRequest controller")
                    }
                }
            }
            futures_util::future::ready(())
        })
        .await;
}

async fn reconcile(resource: Arc<GPUProvisioningRequest>, r: Arc<Reconciler>) -> Result<Action, ReconcileError> {
    // A panic in a reconcile would take the controller (and the cluster's other controllers)
    // down with it: it is an error of this round instead, retried like any other.
    match AssertUnwindSafe(r.reconcile(&resource)).catch_unwind().await {
        Ok(done) => done?,
        Err(panic) => {
            let what = panic.downcast_ref::<&str>().map(|s| (*s).to_owned()).or_else(|| panic.downcast_ref::<String>().cloned()).unwrap_or_default();
            return Err(ReconcileError(format!("the reconcile panicked: {what}")));
        }
    }
    Ok(Action::requeue(r.ctx.config.status_resync))
}

fn error_policy(resource: Arc<GPUProvisioningRequest>, error: &ReconcileError, r: Arc<Reconciler>) -> Action {
    tracing::warn!(
        cluster = %r.cluster.name,
        resource = %format!("{}/{}", resource.namespace().unwrap_or_default(), resource.name_any()),
        error = %egs_schema::redaction::scrubbed(&error),
        "could not reconcile a GPUProvisioningRequest; retrying"
    );
    Action::requeue(r.ctx.config.status_resync)
}

/// What this round decided beyond the GPR itself: carried into the status.
struct Notes {
    observed_generation: Option<i64>,
    spec_applied: Option<(bool, &'static str, String)>,
}

impl Reconciler {
    async fn reconcile(&self, resource: &GPUProvisioningRequest) -> Result<(), ReconcileError> {
        let (Some(ns), Some(uid)) = (resource.namespace(), resource.uid()) else { return Ok(()) };
        let name = resource.name_any();
        let api: Api<GPUProvisioningRequest> = Api::namespaced(self.client.clone(), &ns);
        let found = gpr::Entity::find().filter(gpr::Column::SourceUid.eq(uid.clone())).one(&self.ctx.db).await?;
        if resource.metadata.deletion_timestamp.is_some() {
            return self.finish(&api, resource, found).await;
        }
        let current = resource.status.clone().unwrap_or_default();
        let generation = resource.metadata.generation;
        let mut notes = Notes {
            observed_generation: current.observed_generation,
            spec_applied: condition(&current, CONDITION_SPEC_APPLIED).map(|c| (c.status == "True", "", c.message.clone())),
        };
        let found = match found {
            Some(found) => {
                if !found.phase.is_terminal() && !has_finalizer(resource) {
                    self.add_finalizer(&api, resource).await?;
                }
                if generation.is_some() && generation > current.observed_generation {
                    self.apply_spec(resource, found, &mut notes).await?
                } else {
                    found
                }
            }
            None => {
                let Some(owner) = self.slice_of(&ns).await? else {
                    let why = format!("namespace `{ns}` is not a namespace of any slice on cluster `{}`", self.cluster.name);
                    return self.refuse(&api, resource, "NotASliceNamespace", why).await;
                };
                if let Some(wanted) = resource.spec.slice.as_deref().filter(|s| *s != owner.name) {
                    let why = format!("namespace `{ns}` belongs to slice `{}`, not `{wanted}`", owner.name);
                    return self.refuse(&api, resource, "WrongSlice", why).await;
                }
                let refused_already = current.phase.as_deref() == Some(PHASE_INVALID)
                    && condition(&current, CONDITION_ACCEPTED).is_some_and(|c| c.reason == "Invalid")
                    && current.observed_generation == generation;
                if refused_already {
                    // Retried when the spec changes; a finalizer added before the gateway
                    // refused the spec has nothing to hold.
                    return if has_finalizer(resource) { self.remove_finalizer(&api, resource).await } else { Ok(()) };
                }
                let spec = match to_gpr_spec(&resource.spec, owner.id, &name, self.cluster.id, &uid, &format!("{}/{ns}/{name}", self.cluster.name)) {
                    Ok(spec) => spec,
                    Err(errors) => return self.refuse(&api, resource, "Invalid", describe(&errors)).await,
                };
                self.add_finalizer(&api, resource).await?;
                let created = match service::create_gpr(&self.ctx.db, &Caller::system(), spec).await {
                    Ok(created) => created,
                    Err(Error::User(errors)) => {
                        // Read again: the finalizer just added goes too.
                        let fresh = api.get(&name).await.map_err(|e| ReconcileError(format!("cannot read `{ns}/{name}`: {e}")))?;
                        return self.refuse(&api, &fresh, "Invalid", describe(&errors)).await;
                    }
                    Err(other) => return Err(other.into()),
                };
                self.ctx.changed();
                let gpr_id = ids::encode(Kind::Gpr, created.id).0;
                tracing::info!(cluster = %self.cluster.name, resource = %format!("{ns}/{name}"), gpr = %gpr_id, slice = %owner.name, "GPR created from a GPUProvisioningRequest");
                let message = format!("GPR {gpr_id} created for slice `{}` ({})", owner.name, created.phase.as_str());
                if let Err(error) = emit(&self.client, object_ref(resource), "Accepted", &message, "Normal").await {
                    tracing::debug!(error = %egs_schema::redaction::scrubbed(&error), "could not post the Accepted event");
                }
                notes.observed_generation = generation;
                notes.spec_applied = Some((true, "Applied", String::new()));
                created
            }
        };
        let desired = self.status_of(&found, &current, &notes).await?;
        write_status(&api, &name, &current, desired).await
    }

    /// The slice owning namespace `ns` of this cluster.
    async fn slice_of(&self, ns: &str) -> Result<Option<slice::Model>, ReconcileError> {
        let Some(link) = slice_namespace::Entity::find()
            .filter(slice_namespace::Column::ClusterId.eq(self.cluster.id))
            .filter(slice_namespace::Column::Name.eq(ns))
            .one(&self.ctx.db)
            .await?
        else {
            return Ok(None);
        };
        Ok(slice::Entity::find_by_id(link.slice_id).one(&self.ctx.db).await?)
    }

    /// A spec edit (a newer `metadata.generation`): passed on while the GPR is pending.
    async fn apply_spec(&self, resource: &GPUProvisioningRequest, found: gpr::Model, notes: &mut Notes) -> Result<gpr::Model, ReconcileError> {
        let generation = resource.metadata.generation;
        if !found.phase.is_pending() {
            notes.observed_generation = generation;
            let why = format!("the GPR is {}; spec changes are ignored once it is no longer waiting", found.phase.as_str());
            notes.spec_applied = Some((false, "NotPending", why));
            return Ok(found);
        }
        let changes = match to_changes(&resource.spec, &found) {
            Ok(changes) => changes,
            Err(errors) => {
                notes.observed_generation = generation;
                notes.spec_applied = Some((false, "Invalid", format!("the spec change was not applied: {}", describe(&errors))));
                return Ok(found);
            }
        };
        match service::update_gpr(&self.ctx.db, &Caller::system(), found.id, found.version, changes).await {
            Ok(updated) => {
                if updated.version != found.version {
                    self.ctx.changed();
                }
                notes.observed_generation = generation;
                notes.spec_applied = Some((true, "Applied", String::new()));
                Ok(updated)
            }
            // A stale version or a phase change meanwhile: read again next round.
            Err(Error::User(errors)) if errors.iter().any(|e| e.code == egs_schema::error::ErrorCode::Conflict) => {
                Err(ReconcileError(format!("the GPR changed meanwhile: {}", describe(&errors))))
            }
            Err(Error::User(errors)) => {
                notes.observed_generation = generation;
                notes.spec_applied = Some((false, "Invalid", format!("the spec change was not applied: {}", describe(&errors))));
                Ok(found)
            }
            Err(other) => Err(other.into()),
        }
    }

    /// `metadata.deletionTimestamp` is set: cancel or early-release the GPR, and let the
    /// object go once the GPR is finished.
    async fn finish(
        &self,
        api: &Api<GPUProvisioningRequest>,
        resource: &GPUProvisioningRequest,
        found: Option<gpr::Model>,
    ) -> Result<(), ReconcileError> {
        if !has_finalizer(resource) {
            return Ok(());
        }
        let Some(mut found) = found else { return self.remove_finalizer(api, resource).await };
        let system = Caller::system();
        let ended = if found.phase.is_pending() {
            Some(service::cancel_gpr(&self.ctx.db, &system, found.id, Some(found.version)).await)
        } else if found.phase == GprPhase::Provisioned {
            Some(service::early_release_gpr(&self.ctx.db, &system, found.id, Some(found.version)).await)
        } else {
            None // PROVISIONING: early-released once provisioned; RELEASING or finished: wait
        };
        if let Some(ended) = ended {
            found = ended?;
            self.ctx.changed();
            let message =
                format!("GPR {} {} as the resource is being deleted", ids::encode(Kind::Gpr, found.id).0, found.phase.as_str().to_lowercase());
            if let Err(error) = emit(&self.client, object_ref(resource), "Deleting", &message, "Normal").await {
                tracing::debug!(error = %egs_schema::redaction::scrubbed(&error), "could not post the Deleting event");
            }
        }
        let current = resource.status.clone().unwrap_or_default();
        let notes = Notes {
            observed_generation: current.observed_generation,
            spec_applied: condition(&current, CONDITION_SPEC_APPLIED).map(|c| (c.status == "True", "", c.message.clone())),
        };
        let desired = self.status_of(&found, &current, &notes).await?;
        write_status(api, &resource.name_any(), &current, desired).await?;
        if found.phase.is_terminal() { self.remove_finalizer(api, resource).await } else { Ok(()) }
    }

    /// The resource is not accepted: no GPR, no finalizer, status `Invalid` with the reason.
    async fn refuse(
        &self,
        api: &Api<GPUProvisioningRequest>,
        resource: &GPUProvisioningRequest,
        reason: &str,
        message: String,
    ) -> Result<(), ReconcileError> {
        // Before the status write, which moves the resourceVersion the patch is conditional on;
        // a conflict is retried on the next round.
        if has_finalizer(resource)
            && let Err(error) = self.remove_finalizer(api, resource).await
        {
            tracing::debug!(error = %egs_schema::redaction::scrubbed(&error), "could not remove the finalizer of a refused GPUProvisioningRequest");
        }
        let current = resource.status.clone().unwrap_or_default();
        let now = now_text();
        let mut conditions = Vec::new();
        set_condition(&mut conditions, &current, CONDITION_ACCEPTED, false, reason, &message, &now);
        set_condition(&mut conditions, &current, CONDITION_PROVISIONED, false, "NotAccepted", "", &now);
        let desired = GPUProvisioningRequestStatus {
            phase: Some(PHASE_INVALID.into()),
            message: Some(message),
            observed_generation: resource.metadata.generation,
            conditions,
            ..Default::default()
        };
        write_status(api, &resource.name_any(), &current, desired).await
    }

    async fn add_finalizer(&self, api: &Api<GPUProvisioningRequest>, resource: &GPUProvisioningRequest) -> Result<(), ReconcileError> {
        if has_finalizer(resource) {
            return Ok(());
        }
        let mut finalizers = resource.finalizers().to_vec();
        finalizers.push(FINALIZER.to_owned());
        patch_finalizers(api, resource, finalizers).await
    }

    async fn remove_finalizer(&self, api: &Api<GPUProvisioningRequest>, resource: &GPUProvisioningRequest) -> Result<(), ReconcileError> {
        let finalizers: Vec<String> = resource.finalizers().iter().filter(|f| *f != FINALIZER).cloned().collect();
        patch_finalizers(api, resource, finalizers).await?;
        self.ctx.changed();
        Ok(())
    }

    /// The status the GPR calls for; conditions keep their transition time while unchanged.
    async fn status_of(
        &self,
        found: &gpr::Model,
        current: &GPUProvisioningRequestStatus,
        notes: &Notes,
    ) -> Result<GPUProvisioningRequestStatus, ReconcileError> {
        let links = gpr_node::Entity::find().filter(gpr_node::Column::GprId.eq(found.id)).find_also_related(node::Entity).all(&self.ctx.db).await?;
        let mut nodes: Vec<String> = links.into_iter().filter_map(|(_, n)| n.map(|n| n.name)).collect();
        nodes.sort();
        let now = now_text();
        let gpr_id = ids::encode(Kind::Gpr, found.id).0;
        let mut conditions = Vec::new();
        let (accepted, accepted_reason, accepted_message) = match found.phase {
            GprPhase::Rejected => (false, "Rejected", found.reason.clone().unwrap_or_default()),
            _ => (true, "GprCreated", format!("EGS holds GPR {gpr_id} for this request")),
        };
        set_condition(&mut conditions, current, CONDITION_ACCEPTED, accepted, accepted_reason, &accepted_message, &now);
        let provisioned = found.phase == GprPhase::Provisioned;
        let provisioned_message =
            if provisioned { format!("nodes {} belong to the slice", nodes.join(", ")) } else { found.reason.clone().unwrap_or_default() };
        set_condition(&mut conditions, current, CONDITION_PROVISIONED, provisioned, &camel_case(found.phase.as_str()), &provisioned_message, &now);
        let mut message = found.reason.clone();
        if let Some((applied, reason, note)) = &notes.spec_applied {
            let reason = if reason.is_empty() {
                condition(current, CONDITION_SPEC_APPLIED).map(|c| c.reason.clone()).unwrap_or_else(|| "Applied".into())
            } else {
                (*reason).to_owned()
            };
            set_condition(&mut conditions, current, CONDITION_SPEC_APPLIED, *applied, &reason, note, &now);
            if !applied && !note.is_empty() {
                message = Some(note.clone());
            }
        }
        Ok(GPUProvisioningRequestStatus {
            phase: Some(found.phase.as_str().to_owned()),
            gpr_id: Some(gpr_id),
            queue_position: found.queue_position.filter(|_| found.phase.is_pending()),
            estimated_start_at: found.estimated_start_at.map(time_text),
            start_no_later_than: found.start_no_later_than.map(time_text),
            nodes,
            provisioned_at: found.provisioned_at.map(time_text),
            exit_at: found.exit_at.map(time_text),
            release_reason: found.release_reason.map(|r| r.as_str().to_owned()),
            message,
            observed_generation: notes.observed_generation,
            conditions,
        })
    }
}

fn has_finalizer(resource: &GPUProvisioningRequest) -> bool {
    resource.finalizers().iter().any(|f| f == FINALIZER)
}

/// Replaces `metadata.finalizers`, conditional on the resourceVersion we read.
async fn patch_finalizers(
    api: &Api<GPUProvisioningRequest>,
    resource: &GPUProvisioningRequest,
    finalizers: Vec<String>,
) -> Result<(), ReconcileError> {
    let patch = json!({ "metadata": { "resourceVersion": resource.resource_version(), "finalizers": finalizers } });
    let name = resource.name_any();
    match api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch)).await {
        Ok(_) => Ok(()),
        Err(e) if is_not_found(&e) => Ok(()),
        Err(e) if is_conflict(&e) => Err(ReconcileError(format!("`{name}` changed while updating its finalizers; retrying"))),
        Err(e) => Err(ReconcileError(format!("cannot update the finalizers of `{name}`: {e}"))),
    }
}

/// Merge-patches `/status` when `desired` differs from `current`; fields that went away are
/// written as `null` so the merge removes them.
async fn write_status(
    api: &Api<GPUProvisioningRequest>,
    name: &str,
    current: &GPUProvisioningRequestStatus,
    desired: GPUProvisioningRequestStatus,
) -> Result<(), ReconcileError> {
    if *current == desired {
        return Ok(());
    }
    let mut status = serde_json::to_value(&desired).map_err(|e| ReconcileError(e.to_string()))?;
    if let (Value::Object(before), Value::Object(after)) = (serde_json::to_value(current).unwrap_or_default(), &mut status) {
        for key in before.keys() {
            after.entry(key.clone()).or_insert(Value::Null);
        }
    }
    let patch = json!({ "status": status });
    match api.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch)).await {
        Ok(_) => Ok(()),
        Err(e) if is_not_found(&e) => Ok(()),
        Err(e) => Err(ReconcileError(format!("cannot write the status of `{name}`: {e}"))),
    }
}

fn condition<'a>(status: &'a GPUProvisioningRequestStatus, kind: &str) -> Option<&'a GprCondition> {
    status.conditions.iter().find(|c| c.type_ == kind)
}

fn set_condition(out: &mut Vec<GprCondition>, current: &GPUProvisioningRequestStatus, kind: &str, ok: bool, reason: &str, message: &str, now: &str) {
    let status = if ok { "True" } else { "False" };
    let since = condition(current, kind).filter(|c| c.status == status).map_or_else(|| now.to_owned(), |c| c.last_transition_time.clone());
    out.push(GprCondition {
        type_: kind.to_owned(),
        status: status.to_owned(),
        reason: reason.to_owned(),
        message: message.to_owned(),
        last_transition_time: since,
    });
}

fn object_ref(resource: &GPUProvisioningRequest) -> ObjectReference {
    ObjectReference {
        api_version: Some(GPUProvisioningRequest::api_version(&()).into_owned()),
        kind: Some(GPUProvisioningRequest::kind(&()).into_owned()),
        namespace: resource.namespace(),
        name: Some(resource.name_any()),
        uid: resource.uid(),
        resource_version: resource.resource_version(),
        ..Default::default()
    }
}

fn time_text(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn now_text() -> String {
    time_text(Utc::now())
}

/// `PENDING_APPROVAL` → `PendingApproval`.
fn camel_case(text: &str) -> String {
    text.split('_')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map(|first| first.to_uppercase().chain(chars.flat_map(char::to_lowercase)).collect::<String>()).unwrap_or_default()
        })
        .collect()
}

/// The resource's name for a gateway input field.
fn resource_field(field: &[String]) -> String {
    let gateway = field.last().map(String::as_str).unwrap_or_default();
    match gateway {
        "" => "spec".into(),
        "name" => "metadata.name".into(),
        "nodeCount" => "spec.nodes".into(),
        "sliceId" => "spec.slice".into(),
        "preferredClusterIds" => "cluster".into(),
        other => format!("spec.{other}"),
    }
}

/// `spec.nodes: must be at least 1; spec.duration: ...`.
fn describe(errors: &[UserError]) -> String {
    let parts: Vec<String> = errors.iter().map(|e| format!("{}: {}", resource_field(&e.field), e.message)).collect();
    if parts.is_empty() { "invalid".into() } else { parts.join("; ") }
}

struct Parsed {
    duration_secs: i64,
    idle_timeout_secs: Option<i64>,
    earliest_start_at: Option<DateTime<Utc>>,
}

/// The text fields of the spec, parsed; every problem at once.
fn parse_fields(spec: &GPUProvisioningRequestSpec) -> Result<Parsed, Vec<UserError>> {
    let mut errors = Vec::new();
    let duration_secs = egs_schema::scalars::parse_duration(&spec.duration).map_err(|e| errors.push(UserError::invalid("duration", e))).unwrap_or(0);
    let idle_timeout_secs = match &spec.idle_timeout {
        Some(text) => {
            egs_schema::scalars::parse_duration(text).map(Some).map_err(|e| errors.push(UserError::invalid("idleTimeout", e))).unwrap_or(None)
        }
        None => None,
    };
    let earliest_start_at = match &spec.earliest_start_at {
        Some(text) => DateTime::parse_from_rfc3339(text.trim())
            .map(|t| Some(t.with_timezone(&Utc)))
            .map_err(|e| {
                errors.push(UserError::invalid("earliestStartAt", format!("`{text}` is not an RFC 3339 time ({e}), e.g. 2030-01-02T15:04:05Z")))
            })
            .unwrap_or(None),
        None => None,
    };
    if errors.is_empty() { Ok(Parsed { duration_secs, idle_timeout_secs, earliest_start_at }) } else { Err(errors) }
}

fn to_gpr_spec(
    spec: &GPUProvisioningRequestSpec,
    slice_id: i64,
    name: &str,
    cluster_id: i64,
    uid: &str,
    reference: &str,
) -> Result<GprSpec, Vec<UserError>> {
    let parsed = parse_fields(spec)?;
    Ok(GprSpec {
        slice_id,
        name: name.to_owned(),
        node_count: spec.nodes,
        gpus_per_node: spec.gpus_per_node,
        min_gpu_memory_mib: None,
        gpu_shape: spec.gpu_shape.clone(),
        instance_type: spec.instance_type.clone(),
        preferred_cluster_ids: vec![cluster_id],
        priority: spec.priority.unwrap_or(DEFAULT_PRIORITY),
        duration_secs: parsed.duration_secs,
        idle_timeout_secs: parsed.idle_timeout_secs,
        preemptible: spec.preemptible.unwrap_or(true),
        requeue_on_failure: None,
        earliest_start_at: parsed.earliest_start_at,
        labels: spec.labels.clone().unwrap_or_default(),
        source: Some(GprSource { uid: uid.to_owned(), reference: reference.to_owned() }),
    })
}

/// The earliest start to send with an edit. Always sent: `update_gpr` checks an unchanged one
/// against the minimum time, which overflows (a panic) in `check_spec_fields`. An unchanged
/// one that has passed is cleared instead (it no longer holds the GPR back), as a passed time
/// that is sent is refused as in the past.
fn earliest_start_change(wanted: Option<DateTime<Utc>>, stored: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    match wanted {
        Some(at) if Some(at) == stored && at < now => None,
        other => other,
    }
}

/// The edits that bring a pending GPR in line with the spec. Fields the spec leaves out keep
/// what the gateway filled in (the slice's idle timeout, an admin's priority).
fn to_changes(spec: &GPUProvisioningRequestSpec, found: &gpr::Model) -> Result<GprChanges, Vec<UserError>> {
    let parsed = parse_fields(spec)?;
    Ok(GprChanges {
        node_count: Some(spec.nodes),
        gpus_per_node: Some(spec.gpus_per_node),
        gpu_shape: Some(spec.gpu_shape.clone()),
        instance_type: Some(spec.instance_type.clone()),
        // Left out: as it is (an admin may have re-prioritised it).
        priority: spec.priority,
        duration_secs: Some(parsed.duration_secs),
        idle_timeout_secs: parsed.idle_timeout_secs.map(Some),
        preemptible: spec.preemptible,
        earliest_start_at: Some(earliest_start_change(parsed.earliest_start_at, found.earliest_start_at, Utc::now())),
        labels: Some(spec.labels.clone().unwrap_or_default()),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHECKED_IN: &str = include_str!("../../crds/gpuprovisioningrequests.egs.io.yaml");

    #[test]
    fn the_checked_in_crd_matches_the_resource_type() {
        assert!(
            CHECKED_IN == crd_yaml(),
            "api/crds/gpuprovisioningrequests.egs.io.yaml is out of date with the GPUProvisioningRequest type; regenerate it with\n\n    \
             cargo run -p egs-api --bin egs -- print-crd > api/crds/gpuprovisioningrequests.egs.io.yaml\n"
        );
    }

    #[test]
    fn the_crd_names_the_group_kind_short_name_and_status_subresource() {
        let crd: Value = serde_json::to_value(GPUProvisioningRequest::crd()).expect("json");
        assert_eq!(crd["metadata"]["name"], "gpuprovisioningrequests.egs.io");
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        assert_eq!(crd["spec"]["names"]["shortNames"], json!(["gpr"]));
        let version = &crd["spec"]["versions"][0];
        assert_eq!(version["name"], "v1alpha1");
        assert!(version["subresources"]["status"].is_object());
        let columns: Vec<&str> = version["additionalPrinterColumns"].as_array().expect("columns").iter().filter_map(|c| c["name"].as_str()).collect();
        assert_eq!(columns, ["Phase", "Nodes", "Estimated start", "Exit", "Age"]);
        let spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(spec["required"], json!(["duration", "nodes"]));
        assert_eq!(spec["properties"]["nodes"]["minimum"].as_f64(), Some(1.0));
    }

    fn spec(json: Value) -> GPUProvisioningRequestSpec {
        serde_json::from_value(json).expect("a spec")
    }

    #[test]
    fn a_spec_becomes_a_gpr_spec_with_its_source_and_cluster() {
        let s = spec(json!({ "nodes": 2, "duration": "2h30m", "idleTimeout": "PT30M", "gpuShape": "H100", "labels": { "team": "a" } }));
        let out = to_gpr_spec(&s, 7, "train", 3, "uid-1", "c1/team-a/train").expect("valid");
        assert_eq!((out.node_count, out.duration_secs, out.idle_timeout_secs), (2, 9000, Some(1800)));
        assert_eq!((out.priority, out.preemptible, out.preferred_cluster_ids.as_slice()), (DEFAULT_PRIORITY, true, &[3][..]));
        let source = out.source.expect("a source");
        assert_eq!((source.uid.as_str(), source.reference.as_str()), ("uid-1", "c1/team-a/train"));
    }

    #[test]
    fn unparsable_text_fields_are_all_reported_with_the_resource_field_names() {
        let s = spec(json!({ "nodes": 1, "duration": "soon", "idleTimeout": "2x", "earliestStartAt": "tomorrow" }));
        let errors = to_gpr_spec(&s, 1, "n", 1, "u", "r").expect_err("invalid");
        let text = describe(&errors);
        assert!(text.contains("spec.duration: `soon` is not a duration"), "{text}");
        assert!(text.contains("spec.idleTimeout:") && text.contains("spec.earliestStartAt:"), "{text}");
        assert_eq!(resource_field(&["input".into(), "nodeCount".into()]), "spec.nodes");
    }

    #[test]
    fn an_unchanged_earliest_start_is_sent_again_unless_it_has_passed() {
        let now = Utc::now();
        let (past, future) = (now - chrono::Duration::hours(1), now + chrono::Duration::hours(1));
        assert_eq!(earliest_start_change(Some(future), Some(future), now), Some(future));
        assert_eq!(earliest_start_change(Some(past), Some(past), now), None, "cleared: it no longer holds the GPR back");
        assert_eq!(earliest_start_change(Some(past), None, now), Some(past), "a new past time is sent, and refused");
        assert_eq!(earliest_start_change(None, Some(future), now), None);
    }

    #[test]
    fn conditions_keep_their_transition_time_until_their_status_flips() {
        let mut before = Vec::new();
        set_condition(&mut before, &Default::default(), CONDITION_ACCEPTED, true, "GprCreated", "", "t0");
        let current = GPUProvisioningRequestStatus { conditions: before, ..Default::default() };
        let mut same = Vec::new();
        set_condition(&mut same, &current, CONDITION_ACCEPTED, true, "GprCreated", "again", "t1");
        assert_eq!(same[0].last_transition_time, "t0");
        let mut flipped = Vec::new();
        set_condition(&mut flipped, &current, CONDITION_ACCEPTED, false, "Rejected", "", "t2");
        assert_eq!(flipped[0].last_transition_time, "t2");
        assert_eq!(camel_case("PENDING_APPROVAL"), "PendingApproval");
    }
}
