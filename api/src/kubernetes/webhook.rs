//! The mutating admission webhook for clusters without the `PodNodeSelector` and
//! `PodTolerationRestriction` admission plugins (`podPlacement: WEBHOOK`). The API server
//! sends each pod created in a namespace labelled `egs.io/slice` (the
//! MutatingWebhookConfiguration's namespaceSelector); while the slice holds nodes on that
//! cluster, the pod gets the slice's node selector and the toleration for its taint. Whether or
//! not it holds nodes, what would let the pod onto another slice's nodes is taken out: a
//! toleration of another slice's taint (or of every taint: `operator: Exists` without a key),
//! a node selector naming another slice; node affinity naming another slice is refused.

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
            tracing::warn!(cluster = cluster_name, error = %egs_domain::redaction::scrubbed(&error), "admission review failed; admitting the pod unchanged");
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
    if let Some(why) = foreign_affinity(&pod.data, &slice.name) {
        return Ok(admit.deny(why));
    }
    let operations = placement_patch(&pod.data, &slice.name, holds_nodes);
    if operations.is_empty() {
        return Ok(admit);
    }
    let patch: json_patch::Patch = serde_json::from_value(Value::Array(operations))?;
    Ok(admit.with_patch(patch)?)
}

/// Whether a toleration lets a pod of `slice` onto nodes that are not the slice's: one of
/// another slice's taint (any value, or `Exists` on the slice key), or of every taint (`Exists`
/// without a key).
fn tolerates_elsewhere(toleration: &Value, slice: &str) -> bool {
    let key = toleration["key"].as_str().unwrap_or_default();
    let exists = toleration["operator"].as_str() == Some("Exists");
    (key.is_empty() && exists) || (key == SLICE_KEY && (exists || toleration["value"].as_str() != Some(slice)))
}

/// Why the pod is refused, when its node affinity asks for another slice's nodes.
fn foreign_affinity(pod: &Value, slice: &str) -> Option<String> {
    let affinity = pod.pointer("/spec/affinity/nodeAffinity")?;
    let mut terms: Vec<&Value> = Vec::new();
    if let Some(required) = affinity.pointer("/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms").and_then(Value::as_array) {
        terms.extend(required);
    }
    if let Some(preferred) = affinity.pointer("/preferredDuringSchedulingIgnoredDuringExecution").and_then(Value::as_array) {
        terms.extend(preferred.iter().map(|p| &p["preference"]));
    }
    let foreign = terms
        .iter()
        .flat_map(|t| t["matchExpressions"].as_array().into_iter().flatten())
        .any(|e| e["key"].as_str() == Some(SLICE_KEY) && !(e["operator"].as_str() == Some("In") && e["values"] == json!([slice])));
    foreign.then(|| format!("pods of slice `{slice}` may not ask for nodes by `{SLICE_KEY}` other than `{SLICE_KEY} In [{slice}]`"))
}

/// JSON Patch operations for a pod (its `data`: spec and status) of slice `slice`: what would
/// place it on another slice's nodes goes; while the slice holds nodes (`holds_nodes`), the
/// slice's node selector and toleration are added. What else it has is left.
pub fn placement_patch(pod: &Value, slice: &str, holds_nodes: bool) -> Vec<Value> {
    let toleration = super::slice_toleration(slice);
    let mut operations = Vec::new();
    match pod.pointer("/spec/nodeSelector") {
        Some(Value::Object(selector)) => match selector.get(SLICE_KEY) {
            Some(value) if value == &json!(slice) => {}
            Some(_) if holds_nodes => operations.push(json!({ "op": "replace", "path": "/spec/nodeSelector/egs.io~1slice", "value": slice })),
            Some(_) => operations.push(json!({ "op": "remove", "path": "/spec/nodeSelector/egs.io~1slice" })),
            None if holds_nodes => operations.push(json!({ "op": "add", "path": "/spec/nodeSelector/egs.io~1slice", "value": slice })),
            None => {}
        },
        _ if holds_nodes => operations.push(json!({ "op": "add", "path": "/spec/nodeSelector", "value": { SLICE_KEY: slice } })),
        _ => {}
    }
    let existing: Vec<Value> = pod.pointer("/spec/tolerations").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut kept: Vec<Value> = existing.iter().filter(|t| !tolerates_elsewhere(t, slice)).cloned().collect();
    if holds_nodes && !kept.contains(&toleration) {
        kept.push(toleration);
    }
    if kept != existing {
        let op = if pod.pointer("/spec/tolerations").is_some() { "replace" } else { "add" };
        operations.push(json!({ "op": op, "path": "/spec/tolerations", "value": kept }));
    }
    operations
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_pod_gets_the_selector_and_toleration() {
        let ops = placement_patch(&json!({ "spec": { "containers": [] } }), "team-a", true);
        assert_eq!(ops.len(), 2);
        assert_eq!(ops[0]["path"], "/spec/nodeSelector");
        assert_eq!(ops[0]["value"]["egs.io/slice"], "team-a");
        assert_eq!(ops[1]["path"], "/spec/tolerations");
        assert_eq!(ops[1]["value"][0]["effect"], "NoSchedule");
        assert!(placement_patch(&json!({ "spec": { "containers": [] } }), "team-a", false).is_empty(), "nothing to add without nodes");
    }

    #[test]
    fn existing_selectors_and_tolerations_are_kept_and_not_repeated() {
        let pod = json!({ "spec": { "nodeSelector": { "disk": "ssd" }, "tolerations": [{ "key": "x", "operator": "Exists" }] } });
        let ops = placement_patch(&pod, "team-a", true);
        assert_eq!(ops[0]["path"], "/spec/nodeSelector/egs.io~1slice");
        assert_eq!(ops[1]["path"], "/spec/tolerations");
        assert_eq!(ops[1]["value"][0], json!({ "key": "x", "operator": "Exists" }));
        let done = json!({ "spec": {
            "nodeSelector": { "egs.io/slice": "team-a" },
            "tolerations": [{ "key": "egs.io/slice", "operator": "Equal", "value": "team-a", "effect": "NoSchedule" }] } });
        assert!(placement_patch(&done, "team-a", true).is_empty());
    }

    /// Applies `ops` to `pod` as the API server would.
    fn patched(pod: &Value, ops: Vec<Value>) -> Value {
        let mut pod = pod.clone();
        json_patch::patch(&mut pod, &serde_json::from_value::<json_patch::Patch>(Value::Array(ops)).expect("a patch")).expect("applies");
        pod
    }

    #[test]
    fn a_pod_aimed_at_another_slices_nodes_loses_the_way_there_whether_or_not_its_slice_holds_nodes() {
        let hostile = json!({ "spec": {
            "nodeSelector": { "egs.io/slice": "team-b", "disk": "ssd" },
            "tolerations": [
                { "operator": "Exists" },
                { "key": "egs.io/slice", "operator": "Exists" },
                { "key": "egs.io/slice", "operator": "Equal", "value": "team-b", "effect": "NoSchedule" },
                { "key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300 },
            ] } });
        for holds_nodes in [false, true] {
            let pod = patched(&hostile, placement_patch(&hostile, "team-a", holds_nodes));
            let tolerations = pod["spec"]["tolerations"].as_array().expect("tolerations");
            assert!(tolerations.iter().all(|t| !tolerates_elsewhere(t, "team-a")), "{pod}");
            assert!(tolerations.iter().any(|t| t["key"] == "node.kubernetes.io/not-ready"), "the rest is kept: {pod}");
            assert_eq!(pod["spec"]["nodeSelector"]["disk"], "ssd");
            let selector = &pod["spec"]["nodeSelector"]["egs.io/slice"];
            if holds_nodes {
                assert_eq!(selector, "team-a", "{pod}");
            } else {
                assert!(selector.is_null(), "{pod}");
            }
        }
        let affinity = json!({ "spec": { "affinity": { "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": { "nodeSelectorTerms": [
            { "matchExpressions": [{ "key": "egs.io/slice", "operator": "In", "values": ["team-b"] }] }] } } } } });
        assert!(foreign_affinity(&affinity, "team-a").is_some());
        let own = json!({ "spec": { "affinity": { "nodeAffinity": { "preferredDuringSchedulingIgnoredDuringExecution": [{ "weight": 1, "preference":
            { "matchExpressions": [{ "key": "egs.io/slice", "operator": "In", "values": ["team-a"] }] } }] } } } });
        assert!(foreign_affinity(&own, "team-a").is_none());
    }
}
