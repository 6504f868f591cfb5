//! The `GPUProvisioningRequest` custom resource, on both backends (the fake API server and a
//! real kube-apiserver with `deploy/`'s CRD and RBAC): applied in a
//! slice's namespace it becomes a gateway GPR whose progress is written back to its status;
//! refused specs and namespaces say why in a condition; deleting it cancels or early-releases
//! the GPR and the `egs.io/gpr` finalizer holds the object until the GPR is finished. Every
//! check reads the cluster's objects, not only the gateway's.

use egs_api::kubernetes::crd::GPUProvisioningRequest;
use egs_tests::fixtures::{self, SHAPE_H100};
use egs_tests::kube_backend::KubeBackend;
use egs_tests::{TestApp, on_both_backends, wait_for};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use std::time::Duration;

const GPR_QUERY: &str = "query($id: ID!) { gpr(id: $id) { name phase duration releaseReason kubernetesResource queuePosition exitAt slice { name } preferredClusters { name } nodes { name } } }";
const GPRS_OF_SLICE: &str = "query($slice: ID!) { gprs(filter: { sliceId: $slice }, first: 50) { nodes { id name phase } } }";

/// A registered cluster with `nodes` discovered H100 nodes and slice `team-a` owning
/// namespace `team-a` on it.
struct Setup {
    slice: String,
}

async fn setup(app: &TestApp, kube: &KubeBackend, nodes: usize) -> Setup {
    for n in 0..nodes {
        kube.add_gpu_node(&format!("gpu-{n}"), SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true).await;
    }
    kube.add_namespace("team-a").await;
    let cluster = fixtures::register_kube_cluster(app, "k8s", &kube.kubeconfig(), "ADMISSION_PLUGINS").await;
    let query = "query($id: ID!) { cluster(id: $id) { nodes(first: 50) { nodes { name health } } } }";
    wait_for("the nodes to be discovered", || async {
        let found = app.ok(&app.admin_token, query, json!({ "id": cluster })).await;
        found["cluster"]["nodes"]["nodes"].as_array().is_some_and(|n| n.len() == nodes && n.iter().all(|n| n["health"] == "HEALTHY"))
    })
    .await;
    let slice = fixtures::create_slice(app, "team-a", &cluster, json!({})).await;
    Setup { slice }
}

fn gprs_api(kube: &KubeBackend, namespace: &str) -> Api<DynamicObject> {
    Api::namespaced_with(kube.admin(), namespace, &ApiResource::erase::<GPUProvisioningRequest>(&()))
}

/// Creates the resource as `kubectl apply -f` does the first time (a POST of the manifest with
/// the last-applied annotation).
async fn apply(kube: &KubeBackend, namespace: &str, name: &str, spec: Value) {
    let mut manifest = json!({
        "apiVersion": "egs.io/v1alpha1",
        "kind": "GPUProvisioningRequest",
        "metadata": { "name": name, "namespace": namespace },
        "spec": spec,
    });
    let applied = manifest.to_string();
    manifest["metadata"]["annotations"] = json!({ "kubectl.kubernetes.io/last-applied-configuration": applied });
    let object: DynamicObject = serde_json::from_value(manifest).expect("a manifest");
    let params = PostParams { field_manager: Some("kubectl-client-side-apply".into()), ..Default::default() };
    gprs_api(kube, namespace).create(&params, &object).await.expect("the API server takes the resource");
}

/// The resource as the cluster holds it.
async fn resource(kube: &KubeBackend, namespace: &str, name: &str) -> Option<Value> {
    kube.get("gpuprovisioningrequests", Some(namespace), name).await
}

/// Waits until the stored resource satisfies `check`; returns it.
async fn wait_resource(kube: &KubeBackend, namespace: &str, name: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let found = resource(kube, namespace, name).await;
        if let Some(found) = found.as_ref().filter(|r| check(r)) {
            return found.clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {namespace}/{name} to be {what}: {found:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn condition<'a>(resource: &'a Value, kind: &str) -> &'a Value {
    resource["status"]["conditions"].as_array().and_then(|c| c.iter().find(|c| c["type"] == kind)).unwrap_or(&Value::Null)
}

fn finalizers(resource: &Value) -> Vec<String> {
    resource["metadata"]["finalizers"].as_array().map(|f| f.iter().filter_map(|f| f.as_str().map(str::to_owned)).collect()).unwrap_or_default()
}

async fn gpr(app: &TestApp, id: &str) -> Value {
    app.ok(&app.admin_token, GPR_QUERY, json!({ "id": id })).await["gpr"].clone()
}

async fn slice_gprs(app: &TestApp, slice: &str) -> Vec<Value> {
    app.ok(&app.admin_token, GPRS_OF_SLICE, json!({ "slice": slice })).await["gprs"]["nodes"].as_array().cloned().unwrap_or_default()
}

fn has_slice_taint(node: &Value, slice: &str) -> bool {
    node["spec"]["taints"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["key"] == "egs.io/slice" && t["value"] == slice && t["effect"] == "NoSchedule"))
}

fn held_by_slice(node: &Value) -> bool {
    node["metadata"]["labels"].get("egs.io/slice").is_some()
        || node["spec"]["taints"].as_array().is_some_and(|t| t.iter().any(|t| t["key"] == "egs.io/slice"))
}

async fn an_applied_resource_becomes_a_gpr_and_its_progress_is_written_back(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    setup(&app, &kube, 2).await;
    apply(&kube, "team-a", "train", json!({ "nodes": 1, "gpuShape": SHAPE_H100, "duration": "2h30m", "labels": { "run": "42" } })).await;

    let provisioned = wait_resource(&kube, "team-a", "train", "PROVISIONED", |r| r["status"]["phase"] == "PROVISIONED").await;
    let status = &provisioned["status"];
    let gpr_id = status["gprId"].as_str().expect("the status names the GPR");
    let nodes: Vec<&str> = status["nodes"].as_array().expect("node names").iter().filter_map(Value::as_str).collect();
    assert_eq!(nodes.len(), 1, "{status:#}");
    assert!(status["exitAt"].is_string() && status["provisionedAt"].is_string(), "{status:#}");
    assert!(status["queuePosition"].is_null(), "a provisioned GPR has no queue position: {status:#}");
    assert_eq!(status["observedGeneration"], provisioned["metadata"]["generation"]);
    assert_eq!(
        (condition(&provisioned, "Accepted")["status"].as_str(), condition(&provisioned, "Provisioned")["status"].as_str()),
        (Some("True"), Some("True"))
    );
    assert_eq!(finalizers(&provisioned), ["egs.io/gpr"]);

    let found = gpr(&app, gpr_id).await;
    assert_eq!(found["phase"], "PROVISIONED");
    assert_eq!(found["name"], "train");
    assert_eq!(found["kubernetesResource"], "k8s/team-a/train");
    assert_eq!(found["slice"]["name"], "team-a");
    assert_eq!(found["preferredClusters"], json!([{ "name": "k8s" }]));
    let time = |v: &Value| chrono::DateTime::parse_from_rfc3339(v.as_str().expect("a time")).expect("RFC 3339").timestamp();
    assert_eq!(time(&found["exitAt"]), time(&status["exitAt"]), "the status carries the GPR's exit time (to the second)");
    assert_eq!(found["nodes"], json!([{ "name": nodes[0] }]));

    let node = kube.get("nodes", None, nodes[0]).await.expect("the node");
    assert_eq!(node["metadata"]["labels"]["egs.io/slice"], "team-a");
    assert!(has_slice_taint(&node, "team-a"), "{node:#}");
    let reasons: Vec<Value> = kube.events_for("GPUProvisioningRequest", "train").await.iter().map(|e| e["reason"].clone()).collect();
    assert!(reasons.contains(&json!("Accepted")), "{reasons:?}");
    app.finish().await;
}
on_both_backends!(an_applied_resource_becomes_a_gpr_and_its_progress_is_written_back);

async fn a_waiting_gpr_shows_its_queue_position_and_gateway_side_changes_reach_the_resource(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    setup(&app, &kube, 1).await;
    apply(&kube, "team-a", "first", json!({ "nodes": 1, "duration": "2h" })).await;
    wait_resource(&kube, "team-a", "first", "PROVISIONED", |r| r["status"]["phase"] == "PROVISIONED").await;
    apply(&kube, "team-a", "second", json!({ "nodes": 1, "duration": "1h" })).await;

    let queued = wait_resource(&kube, "team-a", "second", "queued with an estimate", |r| {
        r["status"]["phase"] == "QUEUED" && r["status"]["queuePosition"] == 1 && r["status"]["estimatedStartAt"].is_string()
    })
    .await;
    assert_eq!(condition(&queued, "Provisioned")["reason"], "Queued");
    assert!(queued["status"]["nodes"].is_null(), "{queued:#}");

    // Cancelled through GraphQL: the status follows; the finalizer is no longer needed but
    // harmless (deleting the resource lets it go at once).
    let id = queued["status"]["gprId"].as_str().expect("gprId").to_owned();
    app.mutate(
        &app.admin_token,
        "cancelGpr",
        "mutation($input: GprActionInput!) { cancelGpr(input: $input) { gpr { phase } userErrors { field message code } } }",
        json!({ "id": id }),
    )
    .await;
    let cancelled = wait_resource(&kube, "team-a", "second", "CANCELLED", |r| r["status"]["phase"] == "CANCELLED").await;
    assert!(cancelled["status"]["queuePosition"].is_null() && cancelled["status"]["estimatedStartAt"].is_null(), "{cancelled:#}");
    assert_eq!(condition(&cancelled, "Provisioned")["reason"], "Cancelled");
    gprs_api(&kube, "team-a").delete("second", &DeleteParams::default()).await.expect("deleted");
    wait_for("the cancelled resource to go", || async { resource(&kube, "team-a", "second").await.is_none() }).await;
    app.finish().await;
}
on_both_backends!(a_waiting_gpr_shows_its_queue_position_and_gateway_side_changes_reach_the_resource);

async fn an_invalid_spec_is_refused_with_the_reasons_and_creates_no_gpr_until_it_is_fixed(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let Setup { slice } = setup(&app, &kube, 1).await;
    // What the CRD's schema forbids never reaches EGS: the API server refuses it (422), as a
    // real one does (`real_kube::the_crd_from_deploy_refuses_what_its_schema_forbids`).
    let zero: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "egs.io/v1alpha1", "kind": "GPUProvisioningRequest",
        "metadata": { "name": "zero", "namespace": "team-a" }, "spec": { "nodes": 0, "duration": "2h" },
    }))
    .expect("a manifest");
    match gprs_api(&kube, "team-a").create(&PostParams::default(), &zero).await {
        Err(kube::Error::Api(status)) => assert!(status.code == 422 && status.message.contains("spec.nodes"), "{status:?}"),
        other => panic!("nodes: 0 is refused by the CRD's schema: {other:?}"),
    }
    // What the schema allows but EGS cannot read is refused by EGS, in the resource's status.
    apply(&kube, "team-a", "garbled", json!({ "nodes": 1, "duration": "soon", "earliestStartAt": "tomorrow" })).await;

    let refused = |r: &Value| r["status"]["phase"] == "Invalid" && finalizers(r).is_empty();
    let garbled = wait_resource(&kube, "team-a", "garbled", "refused", refused).await;
    let message = condition(&garbled, "Accepted")["message"].as_str().unwrap_or_default().to_owned();
    assert!(message.contains("spec.duration: `soon` is not a duration") && message.contains("spec.earliestStartAt"), "{message}");
    assert_eq!(garbled["status"]["message"], message.as_str());
    assert!(garbled["status"]["gprId"].is_null());

    // Still refused a few resyncs later, and nothing was created.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(slice_gprs(&app, &slice).await.is_empty());

    // Fixing the spec (a new generation) is tried again.
    let fix = json!({ "spec": { "duration": "1h", "earliestStartAt": null } });
    gprs_api(&kube, "team-a").patch("garbled", &PatchParams::default(), &Patch::Merge(&fix)).await.expect("patched");
    let fixed = wait_resource(&kube, "team-a", "garbled", "accepted", |r| condition(r, "Accepted")["status"] == "True").await;
    assert_eq!(fixed["status"]["observedGeneration"], fixed["metadata"]["generation"]);
    let created = slice_gprs(&app, &slice).await;
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!((created[0]["id"].as_str(), created[0]["name"].as_str()), (fixed["status"]["gprId"].as_str(), Some("garbled")));
    app.finish().await;
}
on_both_backends!(an_invalid_spec_is_refused_with_the_reasons_and_creates_no_gpr_until_it_is_fixed);

async fn a_resource_outside_the_slice_namespaces_or_naming_another_slice_is_not_accepted(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let Setup { slice } = setup(&app, &kube, 1).await;
    kube.add_namespace("elsewhere").await;
    apply(&kube, "elsewhere", "stray", json!({ "nodes": 1, "duration": "1h" })).await;
    apply(&kube, "team-a", "other", json!({ "nodes": 1, "duration": "1h", "slice": "team-b" })).await;

    let stray = wait_resource(&kube, "elsewhere", "stray", "refused", |r| r["status"]["phase"] == "Invalid").await;
    assert_eq!(
        (condition(&stray, "Accepted")["status"].as_str(), condition(&stray, "Accepted")["reason"].as_str()),
        (Some("False"), Some("NotASliceNamespace"))
    );
    let other = wait_resource(&kube, "team-a", "other", "refused", |r| r["status"]["phase"] == "Invalid").await;
    assert_eq!(condition(&other, "Accepted")["reason"], "WrongSlice");
    assert!(condition(&other, "Accepted")["message"].as_str().is_some_and(|m| m.contains("team-a") && m.contains("team-b")));
    assert!(finalizers(&stray).is_empty() && finalizers(&other).is_empty());
    assert!(slice_gprs(&app, &slice).await.is_empty());

    // Nothing holds them: they are deleted at once.
    gprs_api(&kube, "elsewhere").delete("stray", &DeleteParams::default()).await.expect("deleted");
    assert!(resource(&kube, "elsewhere", "stray").await.is_none());
    app.finish().await;
}
on_both_backends!(a_resource_outside_the_slice_namespaces_or_naming_another_slice_is_not_accepted);

async fn deleting_a_pending_resource_cancels_its_gpr_before_the_object_goes(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    setup(&app, &kube, 1).await;
    let later = (chrono::Utc::now() + chrono::Duration::days(2)).to_rfc3339();
    apply(&kube, "team-a", "reserve", json!({ "nodes": 1, "duration": "1h", "earliestStartAt": later })).await;
    let queued = wait_resource(&kube, "team-a", "reserve", "queued", |r| r["status"]["phase"] == "QUEUED").await;
    let id = queued["status"]["gprId"].as_str().expect("gprId").to_owned();

    // A spec edit of the waiting GPR is passed on.
    let edit = json!({ "spec": { "duration": "3h" } });
    gprs_api(&kube, "team-a").patch("reserve", &PatchParams::default(), &Patch::Merge(&edit)).await.expect("patched");
    let edited = wait_resource(&kube, "team-a", "reserve", "edited", |r| r["status"]["observedGeneration"] == 2).await;
    assert_eq!(condition(&edited, "SpecApplied")["status"], "True");
    assert_eq!(gpr(&app, &id).await["duration"], "PT3H");

    gprs_api(&kube, "team-a").delete("reserve", &DeleteParams::default()).await.expect("deleted");
    wait_for("the object to go", || async { resource(&kube, "team-a", "reserve").await.is_none() }).await;
    assert_eq!(gpr(&app, &id).await["phase"], "CANCELLED");
    // The finalizer was removed by a merge patch on the resource, after the GPR was cancelled.
    if let Some(fake) = kube.fake() {
        let audit = fake.audit();
        let last =
            audit.iter().rev().find(|e| e.method == "PATCH" && e.path.ends_with("/gpuprovisioningrequests/reserve")).expect("a finalizer patch");
        assert_eq!(last.status, 200);
    }
    app.finish().await;
}
on_both_backends!(deleting_a_pending_resource_cancels_its_gpr_before_the_object_goes);

async fn deleting_a_provisioned_resource_early_releases_its_nodes_before_the_object_goes(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    setup(&app, &kube, 1).await;
    apply(&kube, "team-a", "train", json!({ "nodes": 1, "duration": "2h" })).await;
    let provisioned = wait_resource(&kube, "team-a", "train", "PROVISIONED", |r| r["status"]["phase"] == "PROVISIONED").await;
    let id = provisioned["status"]["gprId"].as_str().expect("gprId").to_owned();
    assert!(held_by_slice(&kube.get("nodes", None, "gpu-0").await.expect("the node")));

    gprs_api(&kube, "team-a").delete("train", &DeleteParams::default()).await.expect("deleted");
    // Held by the finalizer while the nodes are taken back.
    let deleting = resource(&kube, "team-a", "train").await.expect("held by the finalizer");
    assert!(deleting["metadata"]["deletionTimestamp"].is_string());
    wait_for("the object to go", || async { resource(&kube, "team-a", "train").await.is_none() }).await;

    let released = gpr(&app, &id).await;
    assert_eq!((released["phase"].as_str(), released["releaseReason"].as_str()), (Some("COMPLETED"), Some("EARLY_RELEASED")));
    let node = kube.get("nodes", None, "gpu-0").await.expect("the node");
    assert!(!held_by_slice(&node), "the node is back in the pool: {node:#}");
    // The nodes were unlabelled before the finalizer went.
    if let Some(fake) = kube.fake() {
        let audit = fake.audit();
        let unlabelled = audit.iter().rposition(|e| e.method == "PATCH" && e.path == "/api/v1/nodes/gpu-0").expect("node patches");
        let finalized =
            audit.iter().rposition(|e| e.method == "PATCH" && e.path.ends_with("/gpuprovisioningrequests/train")).expect("the finalizer patch");
        assert!(unlabelled < finalized, "{audit:#?}");
    }
    app.finish().await;
}
on_both_backends!(deleting_a_provisioned_resource_early_releases_its_nodes_before_the_object_goes);
