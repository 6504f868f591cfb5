//! The mutating admission webhook for clusters without the `PodNodeSelector` and
//! `PodTolerationRestriction` admission plugins (`podPlacement: WEBHOOK`). The API server
//! sends each pod created in a namespace labelled `egs.io/slice` (the
//! MutatingWebhookConfiguration's namespaceSelector); while the slice holds nodes on that
//! cluster, the pod gets the slice's node selector and the toleration for its taint.

use super::SLICE_KEY;
use egs_entities::{GprPhase, cluster, gpr, slice, slice_namespace};
use kube::core::DynamicObject;
use kube::core::admission::{AdmissionRequest, AdmissionResponse, AdmissionReview, Operation};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::{Value, json};

/// Answers one AdmissionReview (as JSON, for the HTTP handler). Never refuses a pod: on any
/// doubt it is admitted unchanged (the webhook's failurePolicy is `Ignore` too).
pub async fn review(db: &DatabaseConnection, cluster_name: &str, body: Value) -> Value {
    let review: AdmissionReview<DynamicObject> = match serde_json::from_value(body) {
        Ok(review) => review,
        Err(error) => return json!(AdmissionResponse::invalid(format!("not an AdmissionReview: {error}")).into_review()),
    };
    let request: AdmissionRequest<DynamicObject> = match review.try_into() {
        Ok(request) => request,
        Err(error) => return json!(AdmissionResponse::invalid(error.to_string()).into_review()),
    };
    let response = match mutate(db, cluster_name, &request).await {
        Ok(response) => response,
        Err(error) => {
            tracing::warn!(cluster = cluster_name, error = %egs_schema::redaction::scrubbed(&error), "admission review failed; admitting the pod unchanged");
            AdmissionResponse::from(&request)
        }
    };
    json!(response.into_review())
}

async fn mutate(db: &DatabaseConnection, cluster_name: &str, request: &AdmissionRequest<DynamicObject>) -> anyhow::Result<AdmissionResponse> {
    let admit = AdmissionResponse::from(request);
    let (Some(pod), Some(ns)) = (request.object.as_ref(), request.namespace.as_deref()) else { return Ok(admit) };
    if request.kind.kind != "Pod" || request.operation != Operation::Create {
        return Ok(admit);
    }
    let Some(cluster) = cluster::Entity::find().filter(cluster::Column::Name.eq(cluster_name)).one(db).await? else { return Ok(admit) };
    let Some(owner) = slice_namespace::Entity::find()
        .filter(slice_namespace::Column::ClusterId.eq(cluster.id))
        .filter(slice_namespace::Column::Name.eq(ns))
        .one(db)
        .await?
    else {
        return Ok(admit);
    };
    let holds_nodes = gpr::Entity::find()
        .filter(gpr::Column::SliceId.eq(owner.slice_id))
        .filter(gpr::Column::AssignedClusterId.eq(cluster.id))
        .filter(gpr::Column::Phase.is_in([GprPhase::Provisioning, GprPhase::Provisioned]))
        .count(db)
        .await?
        > 0;
    let Some(slice) = slice::Entity::find_by_id(owner.slice_id).one(db).await? else { return Ok(admit) };
    if !holds_nodes {
        return Ok(admit);
    }
    let operations = placement_patch(&pod.data, &slice.name);
    if operations.is_empty() {
        return Ok(admit);
    }
    let patch: json_patch::Patch = serde_json::from_value(Value::Array(operations))?;
    Ok(admit.with_patch(patch)?)
}

/// JSON Patch operations giving a pod (its `data`: spec and status) the slice's node selector
/// and toleration, leaving what it already has.
pub fn placement_patch(pod: &Value, slice: &str) -> Vec<Value> {
    let toleration = super::slice_toleration(slice);
    let mut operations = Vec::new();
    match pod.pointer("/spec/nodeSelector") {
        Some(Value::Object(selector)) => {
            if selector.get(SLICE_KEY) != Some(&json!(slice)) {
                operations.push(json!({ "op": "add", "path": "/spec/nodeSelector/egs.io~1slice", "value": slice }));
            }
        }
        _ => operations.push(json!({ "op": "add", "path": "/spec/nodeSelector", "value": { SLICE_KEY: slice } })),
    }
    match pod.pointer("/spec/tolerations") {
        Some(Value::Array(existing)) => {
            if !existing.contains(&toleration) {
                operations.push(json!({ "op": "add", "path": "/spec/tolerations/-", "value": toleration }));
            }
        }
        _ => operations.push(json!({ "op": "add", "path": "/spec/tolerations", "value": [toleration] })),
    }
    operations
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_pod_gets_the_selector_and_toleration() {
        let ops = placement_patch(&json!({ "spec": { "containers": [] } }), "team-a");
        assert_eq!(ops.len(), 2);
        assert_eq!(ops[0]["path"], "/spec/nodeSelector");
        assert_eq!(ops[0]["value"]["egs.io/slice"], "team-a");
        assert_eq!(ops[1]["path"], "/spec/tolerations");
        assert_eq!(ops[1]["value"][0]["effect"], "NoSchedule");
    }

    #[test]
    fn existing_selectors_and_tolerations_are_kept_and_not_repeated() {
        let pod = json!({ "spec": { "nodeSelector": { "disk": "ssd" }, "tolerations": [{ "key": "x", "operator": "Exists" }] } });
        let ops = placement_patch(&pod, "team-a");
        assert_eq!(ops[0]["path"], "/spec/nodeSelector/egs.io~1slice");
        assert_eq!(ops[1]["path"], "/spec/tolerations/-");
        let done = json!({ "spec": {
            "nodeSelector": { "egs.io/slice": "team-a" },
            "tolerations": [{ "key": "egs.io/slice", "operator": "Equal", "value": "team-a", "effect": "NoSchedule" }] } });
        assert!(placement_patch(&done, "team-a").is_empty());
    }
}
