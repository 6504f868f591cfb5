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
use super::crd::*;
use super::provision::emit;
use super::{is_conflict, is_not_found};
use chrono::{DateTime, SecondsFormat, Utc};
use egs_domain::auth::Caller;
use egs_domain::error::Error;
use egs_domain::gpr::service::{self};
use egs_domain::ids::{self, Kind};
use egs_entities::{GprPhase, cluster, gpr, gpr_node, node, slice, slice_namespace};
use futures_util::{FutureExt, StreamExt};
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Resource, ResourceExt};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

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
                        tracing::debug!(cluster = %cluster_name, error = %egs_domain::redaction::scrubbed(&other), "GPUProvisioningRequest controller")
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
        error = %egs_domain::redaction::scrubbed(&error),
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
                let gpr_id = ids::encode(Kind::Gpr, created.id);
                tracing::info!(cluster = %self.cluster.name, resource = %format!("{ns}/{name}"), gpr = %gpr_id, slice = %owner.name, "GPR created from a GPUProvisioningRequest");
                let message = format!("GPR {gpr_id} created for slice `{}` ({})", owner.name, created.phase.as_str());
                if let Err(error) = emit(&self.client, object_ref(resource), "Accepted", &message, "Normal").await {
                    tracing::debug!(error = %egs_domain::redaction::scrubbed(&error), "could not post the Accepted event");
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
            Err(Error::User(errors)) if errors.iter().any(|e| e.code == egs_domain::error::ErrorCode::Conflict) => {
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
                format!("GPR {} {} as the resource is being deleted", ids::encode(Kind::Gpr, found.id), found.phase.as_str().to_lowercase());
            if let Err(error) = emit(&self.client, object_ref(resource), "Deleting", &message, "Normal").await {
                tracing::debug!(error = %egs_domain::redaction::scrubbed(&error), "could not post the Deleting event");
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
            tracing::debug!(error = %egs_domain::redaction::scrubbed(&error), "could not remove the finalizer of a refused GPUProvisioningRequest");
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
        let gpr_id = ids::encode(Kind::Gpr, found.id);
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
