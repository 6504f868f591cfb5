//! The Kubernetes provider's core behaviour, run on both backends (`egs_tests::kube_backend`):
//! the fake API server and a real kube-apiserver with `deploy/`'s CRD and RBAC. What only the
//! fake can show (injected faults, its write log) stays in `kubernetes.rs`.

use crate::kubernetes::{early_release, gpr, has_slice_taint, labels, node_count, nodes, steps, wait_phase};
use egs_tests::fixtures::{self, SHAPE_H100};
use egs_tests::kube_backend::KubeBackend;
use egs_tests::{TestApp, on_both_backends, wait_for};
use serde_json::{Value, json};
use std::time::Duration;

/// `nodes` ready H100 nodes, registered and discovered, and slice `team-a` (namespace `team-a`
/// on it) with an editor: (cluster id, slice id, editor's token).
async fn cluster(app: &TestApp, kube: &KubeBackend, nodes: usize) -> (String, String, String) {
    for n in 0..nodes {
        kube.add_gpu_node(&format!("gpu-{n}"), SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true).await;
    }
    kube.add_namespace("team-a").await;
    let id = fixtures::register_kube_cluster(app, "k8s", &kube.kubeconfig(), "ADMISSION_PLUGINS").await;
    wait_for("the nodes to be discovered", || async { node_count(app, &id).await == nodes }).await;
    let slice = fixtures::create_slice(app, "team-a", &id, json!({})).await;
    let (_, token) = fixtures::member(app, "alice", &slice, "EDITOR").await;
    (id, slice, token)
}

async fn discovery_keeps_the_inventory_in_step_with_the_cluster(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    kube.add_gpu_node("gpu-a", SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true).await;
    kube.add_gpu_node("gpu-b", "NVIDIA-A100-SXM4-80GB", 4, "p4de.24xlarge", "us-east-1b", false).await;
    kube.create_with_status(
        json!({ "apiVersion": "v1", "kind": "Node", "metadata": { "name": "cpu-only", "labels": { "kubernetes.io/hostname": "cpu-only" } } }),
    )
    .await;
    let id = fixtures::register_kube_cluster(&app, "k8s", &kube.kubeconfig(), "ADMISSION_PLUGINS").await;

    wait_for("both GPU nodes", || async { node_count(&app, &id).await == 2 }).await;
    let found = nodes(&app, &id).await;
    let a = found.iter().find(|n| n["name"] == "gpu-a").expect("gpu-a");
    assert_eq!((a["gpuShape"].as_str(), a["gpusPerNode"].as_i64(), a["health"].as_str()), (Some(SHAPE_H100), Some(8), Some("HEALTHY")));
    assert_eq!((a["instanceType"].as_str(), a["zone"].as_str()), (Some("p5.48xlarge"), Some("us-east-1a")));
    let b = found.iter().find(|n| n["name"] == "gpu-b").expect("gpu-b");
    assert_eq!(b["health"], "UNHEALTHY", "a NotReady node is not schedulable");
    let status =
        app.ok(&app.admin_token, "query($id: ID!) { cluster(id: $id) { registrationStatus health credentials } }", json!({ "id": id })).await;
    assert_eq!(status["cluster"], json!({ "registrationStatus": "REGISTERED", "health": "HEALTHY", "credentials": "KUBECONFIG" }));

    kube.add_gpu_node("gpu-c", SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true).await;
    wait_for("the added node", || async { node_count(&app, &id).await == 3 }).await;
    kube.set_node_ready("gpu-a", false).await;
    wait_for("gpu-a to turn unhealthy", || async { nodes(&app, &id).await.iter().any(|n| n["name"] == "gpu-a" && n["health"] == "UNHEALTHY") }).await;
    kube.set_node_ready("gpu-b", true).await;
    wait_for("gpu-b to turn healthy", || async { nodes(&app, &id).await.iter().any(|n| n["name"] == "gpu-b" && n["health"] == "HEALTHY") }).await;
    kube.delete("nodes", None, "gpu-c").await;
    wait_for("the removed node to leave", || async { node_count(&app, &id).await == 2 }).await;
    app.finish().await;
}
on_both_backends!(discovery_keeps_the_inventory_in_step_with_the_cluster);

async fn a_gpr_gets_its_nodes_labelled_tainted_and_steered_then_everything_is_undone_at_exit(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let (_, slice, token) = cluster(&app, &kube, 2).await;
    let created = fixtures::create_gpr(&app, &token, &slice, "train", json!({ "nodeCount": 1 })).await;
    let id = created["id"].as_str().expect("id");
    let provisioned = wait_phase(&app, id, "PROVISIONED").await;
    let node_name = provisioned["nodes"][0]["name"].as_str().expect("a node").to_owned();
    let other_name = if node_name == "gpu-0" { "gpu-1" } else { "gpu-0" };

    // In the cluster: the node is the slice's and others are kept off; the slice's pods are steered there.
    let node = kube.get("nodes", None, &node_name).await.expect("node");
    assert_eq!(labels(&node)["egs.io/slice"], "team-a");
    assert!(labels(&node)["egs.io/gpr"].is_string());
    assert!(has_slice_taint(&node, "team-a"), "{node}");
    let other = kube.get("nodes", None, other_name).await.expect("other node");
    assert!(labels(&other).get("egs.io/slice").is_none() && !has_slice_taint(&other, "team-a"), "the other node is untouched");
    let ns = kube.get("namespaces", None, "team-a").await.expect("namespace");
    let annotations = &ns["metadata"]["annotations"];
    assert_eq!(annotations["scheduler.alpha.kubernetes.io/node-selector"], "egs.io/slice=team-a");
    let tolerations: Value =
        serde_json::from_str(annotations["scheduler.alpha.kubernetes.io/defaultTolerations"].as_str().expect("tolerations")).expect("json");
    assert_eq!(tolerations[0], json!({ "key": "egs.io/slice", "operator": "Equal", "value": "team-a", "effect": "NoSchedule" }));
    assert_eq!(ns["metadata"]["labels"]["egs.io/slice"], "team-a");
    assert_eq!(kube.events_for("Node", &node_name).await.iter().filter(|e| e["reason"] == "Provisioned").count(), 1);
    assert_eq!(
        steps(&provisioned, "PROVISION"),
        ["PRECHECK", "LABEL_AND_TAINT", "POD_PLACEMENT", "EVENTS"].map(|s| (s.to_owned(), "DONE".to_owned())).to_vec()
    );

    // A slice pod on the node is evicted at exit; a DaemonSet-style pod of another namespace stays.
    kube.add_pod("team-a", "trainer", Some(&node_name), &[("app", "trainer")], 8, "Running").await;
    kube.add_pod("kube-system", "dcgm-exporter", Some(&node_name), &[("app", "dcgm")], 0, "Running").await;
    app.clock.advance(Duration::from_secs(2 * 3600 + 1));
    // No kubelet on the real server: an evicted pod stays terminating until it is finished.
    wait_for("the slice's pod to be evicted", || async {
        kube.get("pods", Some("team-a"), "trainer").await.is_none_or(|p| !p["metadata"]["deletionTimestamp"].is_null())
    })
    .await;
    kube.finish_pod_deletion("team-a", "trainer").await;
    let completed = wait_phase(&app, id, "COMPLETED").await;
    assert_eq!(completed["releaseReason"], "EXPIRED");
    assert_eq!(
        steps(&completed, "RELEASE"),
        ["CORDON", "EVICT", "UNLABEL", "POD_PLACEMENT_REMOVED", "POSTCHECK"].map(|s| (s.to_owned(), "DONE".to_owned())).to_vec()
    );
    if let Some(fake) = kube.fake() {
        assert_eq!(fake.writes("POST", "/namespaces/team-a/pods/trainer/eviction"), 1, "evicted through the Eviction API");
    }
    assert!(kube.get("pods", Some("team-a"), "trainer").await.is_none());
    assert!(kube.get("pods", Some("kube-system"), "dcgm-exporter").await.is_some(), "other namespaces' pods are not the slice's to move");
    let node = kube.get("nodes", None, &node_name).await.expect("node");
    assert!(labels(&node).get("egs.io/slice").is_none() && labels(&node).get("egs.io/gpr").is_none(), "{node}");
    assert!(!has_slice_taint(&node, "team-a"));
    assert!(node["spec"]["unschedulable"].is_null() || node["spec"]["unschedulable"] == false, "uncordoned: {node}");
    assert!(node["metadata"]["annotations"].get("egs.io/cordoned").is_none());
    let ns = kube.get("namespaces", None, "team-a").await.expect("namespace");
    assert!(ns["metadata"]["annotations"].get("scheduler.alpha.kubernetes.io/node-selector").is_none(), "{ns}");
    // The tolerations whitelist stays: holding no nodes, the slice's pods still may not
    // tolerate another slice's taint (PodTolerationRestriction refuses them).
    let whitelist: Value =
        serde_json::from_str(ns["metadata"]["annotations"]["scheduler.alpha.kubernetes.io/tolerationsWhitelist"].as_str().expect("kept"))
            .expect("json");
    assert_eq!(whitelist, json!([{ "key": "egs.io/slice", "operator": "Equal", "value": "team-a", "effect": "NoSchedule" }]), "{ns}");
    assert_eq!(kube.events_for("Node", &node_name).await.iter().filter(|e| e["reason"] == "Released").count(), 1);
    app.finish().await;
}
on_both_backends!(a_gpr_gets_its_nodes_labelled_tainted_and_steered_then_everything_is_undone_at_exit);

async fn a_node_someone_else_cordoned_stays_cordoned_after_release(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let (_, slice, token) = cluster(&app, &kube, 1).await;
    let id = fixtures::create_gpr(&app, &token, &slice, "train", json!({})).await["id"].as_str().expect("id").to_owned();
    wait_phase(&app, &id, "PROVISIONED").await;
    let mut cordoned = kube.get("nodes", None, "gpu-0").await.expect("node");
    cordoned["spec"]["unschedulable"] = json!(true);
    kube.replace(cordoned).await;
    early_release(&app, &token, &id).await;
    wait_phase(&app, &id, "COMPLETED").await;
    let node = kube.get("nodes", None, "gpu-0").await.expect("node");
    assert_eq!(node["spec"]["unschedulable"], true, "an admin's cordon is theirs to lift");
    assert!(labels(&node).get("egs.io/slice").is_none());
    app.finish().await;
}
on_both_backends!(a_node_someone_else_cordoned_stays_cordoned_after_release);

async fn a_node_that_fails_mid_window_is_replaced_by_a_spare_handed_to_the_slice(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let (_, slice, token) = cluster(&app, &kube, 2).await;
    let id = fixtures::create_gpr(&app, &token, &slice, "train", json!({ "nodeCount": 1 })).await["id"].as_str().expect("id").to_owned();
    let provisioned = wait_phase(&app, &id, "PROVISIONED").await;
    let failed = provisioned["nodes"][0]["name"].as_str().expect("node").to_owned();
    let spare = if failed == "gpu-0" { "gpu-1" } else { "gpu-0" };

    // The kubelet stops reporting Ready: discovery marks the node unhealthy, the scheduler
    // swaps in the spare, and the provider hands the spare to the slice.
    kube.set_node_ready(&failed, false).await;
    wait_for("the spare to be labelled for the slice", || async {
        let node = kube.get("nodes", None, spare).await.expect("spare");
        labels(&node)["egs.io/slice"] == "team-a" && has_slice_taint(&node, "team-a")
    })
    .await;
    let now = gpr(&app, &id).await;
    assert_eq!(now["phase"], "PROVISIONED");
    assert_eq!(now["nodes"], json!([{ "name": spare }]));
    wait_for("the failed node to be taken back", || async {
        let node = kube.get("nodes", None, &failed).await.expect("failed node");
        labels(&node).get("egs.io/slice").is_none() && !has_slice_taint(&node, "team-a")
    })
    .await;
    let events =
        app.ok(&app.admin_token, "query($id: ID!) { gpr(id: $id) { events(first: 50) { nodes { kind message } } } }", json!({ "id": id })).await;
    assert!(events["gpr"]["events"]["nodes"].as_array().expect("events").iter().any(|e| e["kind"] == "NODE_REPLACED"), "{events}");
    // Taking the failed node back leaves the running GPR's placement and its release to come.
    let ns = kube.get("namespaces", None, "team-a").await.expect("namespace");
    assert_eq!(ns["metadata"]["annotations"]["scheduler.alpha.kubernetes.io/node-selector"], "egs.io/slice=team-a", "{ns}");
    assert!(steps(&gpr(&app, &id).await, "RELEASE").is_empty(), "the GPR's own release steps are untouched");

    // Its real release still runs every step and cleans the spare.
    early_release(&app, &token, &id).await;
    let done = wait_phase(&app, &id, "COMPLETED").await;
    assert_eq!(steps(&done, "RELEASE").len(), 5, "{done}");
    assert!(labels(&kube.get("nodes", None, spare).await.expect("spare")).get("egs.io/slice").is_none());
    app.finish().await;
}
on_both_backends!(a_node_that_fails_mid_window_is_replaced_by_a_spare_handed_to_the_slice);

async fn every_milestone_is_a_kubernetes_event_in_the_slices_namespace(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let (_, slice, token) = cluster(&app, &kube, 1).await;
    let created = fixtures::create_gpr(&app, &token, &slice, "evented", json!({ "nodeCount": 1 })).await;
    let id = created["id"].as_str().expect("id");
    wait_phase(&app, id, "PROVISIONED").await;
    early_release(&app, &token, id).await;
    wait_phase(&app, id, "COMPLETED").await;
    let reasons = || async {
        let events = kube.events_for("Namespace", "team-a").await;
        events.iter().map(|e| e["reason"].as_str().unwrap_or_default().to_owned()).collect::<Vec<_>>()
    };
    wait_for("queued, provisioned and completed Events in team-a", || async {
        let found = reasons().await;
        ["GPRQueued", "GPRProvisioned", "GPRCompleted"].iter().all(|r| found.iter().any(|f| f == r))
    })
    .await;
    let events = kube.events_for("Namespace", "team-a").await;
    let provisioned = events.iter().find(|e| e["reason"] == "GPRProvisioned").expect("the provisioned Event");
    assert_eq!((provisioned["type"].as_str(), provisioned["metadata"]["namespace"].as_str()), (Some("Normal"), Some("team-a")), "{provisioned}");
    assert!(provisioned["message"].as_str().unwrap_or_default().contains("GPR evented in slice team-a is provisioned"), "{provisioned}");
    let completed = events.iter().find(|e| e["reason"] == "GPRCompleted").expect("the completed Event");
    assert!(completed["message"].as_str().unwrap_or_default().contains("released early"), "{completed}");
    // Once each, though the notifier may have read the events more than once.
    let found = reasons().await;
    assert_eq!(found.iter().filter(|r| *r == "GPRProvisioned").count(), 1, "{found:?}");
    app.finish().await;
}
on_both_backends!(every_milestone_is_a_kubernetes_event_in_the_slices_namespace);

/// The id of one of the cluster's nodes.
async fn node_id(app: &TestApp, cluster: &str, name: &str) -> String {
    let query = "query($id: ID!) { cluster(id: $id) { nodes(first: 50) { nodes { id name } } } }";
    let found = app.ok(&app.admin_token, query, json!({ "id": cluster })).await["cluster"]["nodes"]["nodes"].clone();
    let node = found.as_array().into_iter().flatten().find(|n| n["name"] == name).unwrap_or_else(|| panic!("no node {name}: {found}"));
    node["id"].as_str().expect("an id").to_owned()
}

fn unschedulable(node: &Value) -> bool {
    node["spec"]["unschedulable"] == true
}

async fn egs_cordons_are_kubernetes_cordons_and_only_its_own_are_lifted(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let (cluster, _, _) = cluster(&app, &kube, 2).await;
    // gpu-0 goes out for a maintenance window that begins now.
    let now = chrono::Utc::now();
    let plan = "mutation($input: PlanMaintenanceInput!) { planMaintenance(input: $input) { window { id } userErrors { field message } } }";
    let input = json!({ "nodeId": node_id(&app, &cluster, "gpu-0").await, "startsAt": now.to_rfc3339(), "endsAt": (now + chrono::Duration::hours(2)).to_rfc3339(), "reason": "firmware" });
    let window = app.mutate(&app.admin_token, "planMaintenance", plan, input).await["window"]["id"].as_str().expect("an id").to_owned();
    // gpu-1 was cordoned by someone else before an admin cordons it in EGS.
    let mut theirs = kube.get("nodes", None, "gpu-1").await.expect("node");
    theirs["spec"]["unschedulable"] = json!(true);
    kube.replace(theirs).await;
    let cordon = "mutation($input: CordonNodeInput!) { cordonNode(input: $input) { node { state } userErrors { message } } }";
    app.mutate(&app.admin_token, "cordonNode", cordon, json!({ "id": node_id(&app, &cluster, "gpu-1").await, "reason": "flaky NIC" })).await;

    wait_for("both nodes to carry EGS's cordon", || async {
        let (a, b) = (kube.get("nodes", None, "gpu-0").await, kube.get("nodes", None, "gpu-1").await);
        [a, b].iter().all(|n| n.as_ref().is_some_and(|n| unschedulable(n) && labels(n)["egs.io/maintenance"] == "true"))
    })
    .await;
    let a = kube.get("nodes", None, "gpu-0").await.expect("node");
    let b = kube.get("nodes", None, "gpu-1").await.expect("node");
    assert_eq!(a["metadata"]["annotations"]["egs.io/maintenance-cordon"], "cordoned", "{a}");
    assert_eq!(b["metadata"]["annotations"]["egs.io/maintenance-cordon"], "kept", "{b}");

    // Let go in EGS: the window cancelled, the cordon lifted.
    let cancel = "mutation($input: CancelMaintenanceInput!) { cancelMaintenance(input: $input) { window { id } userErrors { message } } }";
    app.mutate(&app.admin_token, "cancelMaintenance", cancel, json!({ "id": window })).await;
    let uncordon = "mutation($input: UncordonNodeInput!) { uncordonNode(input: $input) { node { state } userErrors { message } } }";
    app.mutate(&app.admin_token, "uncordonNode", uncordon, json!({ "id": node_id(&app, &cluster, "gpu-1").await })).await;
    wait_for("EGS's marks to go", || async {
        let (a, b) = (kube.get("nodes", None, "gpu-0").await, kube.get("nodes", None, "gpu-1").await);
        [a, b].iter().all(|n| n.as_ref().is_some_and(|n| labels(n).get("egs.io/maintenance").is_none()))
    })
    .await;
    let a = kube.get("nodes", None, "gpu-0").await.expect("node");
    assert!(!unschedulable(&a), "EGS lifted its own cordon: {a}");
    let b = kube.get("nodes", None, "gpu-1").await.expect("node");
    assert!(unschedulable(&b), "someone else's cordon stays: {b}");
    assert!(b["metadata"]["annotations"].get("egs.io/maintenance-cordon").is_none(), "{b}");
    app.finish().await;
}
on_both_backends!(egs_cordons_are_kubernetes_cordons_and_only_its_own_are_lifted);

async fn a_drained_node_stays_cordoned_in_the_cluster_after_its_release_until_uncordoned(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let (cluster, slice, token) = cluster(&app, &kube, 1).await;
    let id = fixtures::create_gpr(&app, &token, &slice, "train", json!({})).await["id"].as_str().expect("id").to_owned();
    wait_phase(&app, &id, "PROVISIONED").await;
    let drain = "mutation($input: DrainNodeInput!) { drainNode(input: $input) { node { state } userErrors { message } } }";
    app.mutate(&app.admin_token, "drainNode", drain, json!({ "id": node_id(&app, &cluster, "gpu-0").await, "reason": "swap a GPU", "evict": true }))
        .await;
    // The release cordons and uncordons as it always does; EGS's cordon outlives it.
    wait_for("the release to finish", || async { kube.get("nodes", None, "gpu-0").await.is_some_and(|n| labels(&n).get("egs.io/slice").is_none()) })
        .await;
    wait_for("EGS's cordon", || async { kube.get("nodes", None, "gpu-0").await.is_some_and(|n| labels(&n)["egs.io/maintenance"] == "true") }).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let node = kube.get("nodes", None, "gpu-0").await.expect("node");
    assert!(unschedulable(&node) && node["metadata"]["annotations"].get("egs.io/cordoned").is_none(), "{node}");
    assert_eq!(node["metadata"]["annotations"]["egs.io/maintenance-cordon"], "cordoned", "{node}");
    let uncordon = "mutation($input: UncordonNodeInput!) { uncordonNode(input: $input) { node { state } userErrors { message } } }";
    app.mutate(&app.admin_token, "uncordonNode", uncordon, json!({ "id": node_id(&app, &cluster, "gpu-0").await })).await;
    wait_for("the cordon to be lifted", || async { kube.get("nodes", None, "gpu-0").await.is_some_and(|n| !unschedulable(&n)) }).await;
    app.finish().await;
}
on_both_backends!(a_drained_node_stays_cordoned_in_the_cluster_after_its_release_until_uncordoned);
