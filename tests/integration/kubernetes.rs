//! The Kubernetes provider against the fake API server (`egs_tests::fake_kube`), through the
//! real `kube` client: discovery, provisioning steps, release with evictions and
//! PodDisruptionBudgets, retries, and a job resumed by the next leader. Every check of what
//! happened reads the fake cluster's state, not the gateway's.

use egs_tests::fake_kube::FakeKube;
use egs_tests::fixtures::{self, SHAPE_H100};
use egs_tests::{TestApp, wait_for};
use serde_json::{Value, json};
use std::time::Duration;

/// A cluster with `nodes` ready H100 nodes, registered and discovered, and slice `team-a`
/// (namespace `team-a` on it) with an editor.
struct Cluster {
    fake: FakeKube,
    slice: String,
    token: String,
}

async fn cluster(app: &TestApp, nodes: usize, placement: &str) -> Cluster {
    let fake = FakeKube::start().await;
    for n in 0..nodes {
        fake.add_gpu_node(&format!("gpu-{n}"), SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true);
    }
    fake.add_namespace("team-a");
    let id = fixtures::register_kube_cluster(app, "k8s", &fake.kubeconfig(), placement).await;
    wait_for("the nodes to be discovered", || async { node_count(app, &id).await == nodes }).await;
    let slice = fixtures::create_slice(app, "team-a", &id, json!({})).await;
    let (_, token) = fixtures::member(app, "alice", &slice, "EDITOR").await;
    Cluster { fake, slice, token }
}

pub(crate) async fn nodes(app: &TestApp, cluster: &str) -> Vec<Value> {
    let query = "query($id: ID!) { cluster(id: $id) { registrationStatus nodes(first: 50) { nodes { name health gpuShape gpusPerNode gpuMemoryMib instanceType zone } } } }";
    app.ok(&app.admin_token, query, json!({ "id": cluster })).await["cluster"]["nodes"]["nodes"].as_array().cloned().unwrap_or_default()
}

pub(crate) async fn node_count(app: &TestApp, cluster: &str) -> usize {
    nodes(app, cluster).await.len()
}

const GPR: &str =
    "query($id: ID!) { gpr(id: $id) { phase releaseReason nodes { name } provisioningSteps { operation step status message attempts } } }";

pub(crate) async fn gpr(app: &TestApp, id: &str) -> Value {
    app.ok(&app.admin_token, GPR, json!({ "id": id })).await["gpr"].clone()
}

pub(crate) async fn wait_phase(app: &TestApp, id: &str, phase: &str) -> Value {
    let mut last;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        last = gpr(app, id).await;
        if last["phase"] == phase {
            return last;
        }
        assert!(tokio::time::Instant::now() < deadline, "GPR not {phase}: {last}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub(crate) fn labels(node: &Value) -> &Value {
    &node["metadata"]["labels"]
}

pub(crate) fn has_slice_taint(node: &Value, slice: &str) -> bool {
    node["spec"]["taints"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["key"] == "egs.io/slice" && t["value"] == slice && t["effect"] == "NoSchedule"))
}

pub(crate) fn steps(gpr: &Value, operation: &str) -> Vec<(String, String)> {
    gpr["provisioningSteps"]
        .as_array()
        .map(|s| {
            s.iter()
                .filter(|s| s["operation"] == operation)
                .map(|s| (s["step"].as_str().unwrap_or_default().to_owned(), s["status"].as_str().unwrap_or_default().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) async fn early_release(app: &TestApp, token: &str, id: &str) {
    app.mutate(
        token,
        "earlyReleaseGpr",
        "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { phase } userErrors { field message code } } }",
        json!({ "id": id }),
    )
    .await;
}

#[tokio::test]
async fn a_kubeconfig_that_would_run_commands_or_read_files_is_refused_and_never_returned() {
    let app = TestApp::spawn().await;
    let exec = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://10.0.0.1\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\n";
    let register = "mutation($input: RegisterClusterInput!) { registerCluster(input: $input) { cluster { id } userErrors { field message code } } }";
    for (kubeconfig, says) in [(exec, "exec"), ("not: [a kubeconfig", "not a kubeconfig")] {
        let payload =
            app.ok(&app.admin_token, register, json!({ "input": { "name": "bad", "provider": "KUBERNETES", "kubeconfig": kubeconfig } })).await;
        let error = &payload["registerCluster"]["userErrors"][0];
        assert_eq!(error["field"], json!(["input", "kubeconfig"]), "{payload}");
        assert!(error["message"].as_str().unwrap_or_default().contains(says), "{payload}");
    }
    let missing = app.ok(&app.admin_token, register, json!({ "input": { "name": "bad", "provider": "KUBERNETES" } })).await;
    assert_eq!(missing["registerCluster"]["userErrors"][0]["field"], json!(["input", "kubeconfig"]));
    let clusters = app.ok(&app.admin_token, "{ clusters { name } }", json!({})).await;
    assert_eq!(clusters["clusters"], json!([]), "nothing stored");

    // Stored sealed: the token is not in the database row.
    let fake = FakeKube::start().await;
    fixtures::register_kube_cluster(&app, "k8s", &fake.kubeconfig(), "WEBHOOK").await;
    use sea_orm::EntityTrait;
    let row = egs_entities::cluster::Entity::find().one(&app.db).await.expect("read").expect("the cluster");
    let sealed = row.credentials.expect("credentials");
    assert!(sealed.starts_with("v1:") && !sealed.contains(fake.admin_token()), "the kubeconfig is stored encrypted");
}

#[tokio::test]
async fn a_pod_disruption_budget_holds_the_release_until_it_allows_the_eviction() {
    let app = TestApp::spawn().await;
    let k = cluster(&app, 1, "ADMISSION_PLUGINS").await;
    let id = fixtures::create_gpr(&app, &k.token, &k.slice, "serve", json!({})).await["id"].as_str().expect("id").to_owned();
    wait_phase(&app, &id, "PROVISIONED").await;
    k.fake.add_pod("team-a", "server-0", Some("gpu-0"), &[("app", "server")], 8, "Running");
    k.fake.add_pdb("team-a", "server", &[("app", "server")], 1);
    early_release(&app, &k.token, &id).await;

    // Refused (429) until the deadline (2 s in tests), then reported and retried (the step
    // keeps the reason while it runs again); the node stays the slice's.
    wait_for("the blocked eviction to be reported", || async {
        let g = gpr(&app, &id).await;
        g["provisioningSteps"].as_array().is_some_and(|s| {
            s.iter()
                .any(|s| s["step"] == "EVICT" && s["status"] != "DONE" && s["message"].as_str().is_some_and(|m| m.contains("PodDisruptionBudget")))
        })
    })
    .await;
    assert_eq!(gpr(&app, &id).await["phase"], "RELEASING");
    assert!(k.fake.get("pods", Some("team-a"), "server-0").is_some(), "the budget is honoured");
    assert_eq!(labels(&k.fake.get("nodes", None, "gpu-0").expect("node"))["egs.io/slice"], "team-a");
    assert!(k.fake.events_for("Node", "gpu-0").iter().any(|e| e["reason"] == "EvictionBlocked" && e["type"] == "Warning"));
    assert!(k.fake.audit().iter().any(|e| e.path.ends_with("/pods/server-0/eviction") && e.status == 429));

    // A second replica comes up elsewhere: the budget now allows one disruption.
    k.fake.add_pod("team-a", "server-1", None, &[("app", "server")], 0, "Running");
    let done = wait_phase(&app, &id, "COMPLETED").await;
    assert!(k.fake.get("pods", Some("team-a"), "server-0").is_none());
    assert!(steps(&done, "RELEASE").iter().all(|(_, status)| status == "DONE"), "{done}");
}

#[tokio::test]
async fn a_failing_api_call_is_retried_and_the_step_records_its_attempts() {
    let app = TestApp::spawn().await;
    let k = cluster(&app, 1, "WEBHOOK").await;
    k.fake.fail_next("PATCH", "/api/v1/nodes/gpu-0", 500, 2);
    let id = fixtures::create_gpr(&app, &k.token, &k.slice, "train", json!({})).await["id"].as_str().expect("id").to_owned();
    let done = wait_phase(&app, &id, "PROVISIONED").await;
    let label = done["provisioningSteps"].as_array().expect("steps").iter().find(|s| s["step"] == "LABEL_AND_TAINT").expect("the step").clone();
    assert_eq!(label["status"], "DONE");
    assert!(label["attempts"].as_i64().unwrap_or(0) >= 2, "{label}");
    let placement = done["provisioningSteps"].as_array().expect("steps").iter().find(|s| s["step"] == "POD_PLACEMENT").expect("the step").clone();
    assert!(placement["message"].as_str().unwrap_or_default().contains("webhook"), "says which mechanism steers pods: {placement}");
    assert_eq!(labels(&k.fake.get("nodes", None, "gpu-0").expect("node"))["egs.io/slice"], "team-a");
}

#[tokio::test]
async fn the_webhook_steers_the_slices_pods_while_it_holds_nodes() {
    let app = TestApp::spawn().await;
    let k = cluster(&app, 1, "WEBHOOK").await;
    let review = |ns: &str| {
        json!({
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {
                "uid": "4b8f1a2e-0000-0000-0000-000000000001",
                "kind": { "group": "", "version": "v1", "kind": "Pod" },
                "resource": { "group": "", "version": "v1", "resource": "pods" },
                "requestKind": { "group": "", "version": "v1", "kind": "Pod" },
                "requestResource": { "group": "", "version": "v1", "resource": "pods" },
                "name": "trainer",
                "namespace": ns,
                "operation": "CREATE",
                "userInfo": { "username": "alice" },
                "object": { "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "trainer", "namespace": ns }, "spec": { "containers": [{ "name": "c", "image": "x" }] } },
                "oldObject": null,
                "dryRun": false,
                "options": null
            }
        })
    };
    // The webhook's path carries a secret only admins can read; without it there is nothing there.
    let clusters = app.ok(&app.admin_token, "{ clusters { name webhookPath } }", json!({})).await;
    let path = clusters["clusters"].as_array().expect("clusters").iter().find(|c| c["name"] == "k8s").expect("k8s")["webhookPath"]
        .as_str()
        .expect("a path")
        .to_owned();
    assert!(path.starts_with("/kubernetes/clusters/k8s/mutate/") && path.len() > 40, "{path}");
    for guess in ["/kubernetes/clusters/k8s/mutate".to_owned(), "/kubernetes/clusters/k8s/mutate/00000000000000000000000000000000".to_owned()] {
        let response = app.client.post(app.url(&guess)).json(&review("team-a")).send().await.expect("answer");
        assert_eq!(response.status(), 404, "{guess}");
    }
    let hidden = app.gql(&k.token, "{ clusters { webhookPath } }", json!({})).await;
    assert_eq!(hidden["errors"][0]["extensions"]["code"], "FORBIDDEN", "{hidden}");
    let post = |ns: &'static str| {
        let app = &app;
        let body = review(ns);
        let path = path.clone();
        async move {
            let response = app.client.post(app.url(&path)).json(&body).send().await.expect("webhook");
            assert_eq!(response.status(), 200);
            response.json::<Value>().await.expect("json")["response"].clone()
        }
    };
    let idle = post("team-a").await;
    assert_eq!((idle["allowed"].as_bool(), idle.get("patch")), (Some(true), None), "no nodes yet: admitted unchanged");
    // Holding no nodes, a pod that tolerates every taint and selects another slice's nodes
    // loses both; one whose affinity asks for another slice's nodes is refused.
    let mut hostile = review("team-a");
    hostile["request"]["object"]["spec"]["tolerations"] = json!([{ "operator": "Exists" }]);
    hostile["request"]["object"]["spec"]["nodeSelector"] = json!({ "egs.io/slice": "team-b" });
    let answer =
        app.client.post(app.url(&path)).json(&hostile).send().await.expect("webhook").json::<Value>().await.expect("json")["response"].clone();
    let bytes: Vec<u8> = serde_json::from_value(answer["patch"].clone()).expect("a patch");
    let stripped: Value = serde_json::from_slice(&bytes).expect("json");
    assert!(
        stripped.as_array().into_iter().flatten().any(|op| op == &json!({ "op": "remove", "path": "/spec/nodeSelector/egs.io~1slice" })),
        "{stripped}"
    );
    assert!(stripped.as_array().into_iter().flatten().any(|op| op["path"] == "/spec/tolerations" && op["value"] == json!([])), "{stripped}");
    let mut aimed = review("team-a");
    aimed["request"]["object"]["spec"]["affinity"] = json!({ "nodeAffinity": { "requiredDuringSchedulingIgnoredDuringExecution": { "nodeSelectorTerms": [
        { "matchExpressions": [{ "key": "egs.io/slice", "operator": "In", "values": ["team-b"] }] }] } } });
    let refused =
        app.client.post(app.url(&path)).json(&aimed).send().await.expect("webhook").json::<Value>().await.expect("json")["response"].clone();
    assert_eq!(refused["allowed"], false, "{refused}");

    let id = fixtures::create_gpr(&app, &k.token, &k.slice, "train", json!({})).await["id"].as_str().expect("id").to_owned();
    wait_phase(&app, &id, "PROVISIONED").await;
    let steered = post("team-a").await;
    assert_eq!(steered["uid"], "4b8f1a2e-0000-0000-0000-000000000001");
    assert_eq!(steered["patchType"], "JSONPatch");
    // kube serialises the patch bytes as a JSON array of numbers, which Go's []byte decoding
    // (the API server's) accepts as well as base64.
    let bytes: Vec<u8> = serde_json::from_value(steered["patch"].clone()).expect("patch bytes");
    let patch: Value = serde_json::from_slice(&bytes).expect("json");
    assert_eq!(patch[0], json!({ "op": "add", "path": "/spec/nodeSelector", "value": { "egs.io/slice": "team-a" } }));
    assert_eq!(patch[1]["value"][0]["key"], "egs.io/slice");
    let foreign = post("default").await;
    assert!(foreign.get("patch").is_none(), "pods of other namespaces are left alone");
}

#[tokio::test]
async fn a_job_interrupted_mid_step_is_finished_once_by_the_next_leader() {
    let app = TestApp::spawn().await;
    let k = cluster(&app, 1, "ADMISSION_PLUGINS").await;
    // The leader's job stops inside POD_PLACEMENT (its namespace PATCH never answers).
    let hold = k.fake.hold("PATCH", "/api/v1/namespaces/team-a");
    let id = fixtures::create_gpr(&app, &k.token, &k.slice, "train", json!({})).await["id"].as_str().expect("id").to_owned();
    hold.wait_arrived().await;
    let mid = gpr(&app, &id).await;
    assert_eq!(mid["phase"], "PROVISIONING");
    assert_eq!(steps(&mid, "PROVISION")[..2], [("PRECHECK".into(), "DONE".into()), ("LABEL_AND_TAINT".into(), "DONE".into())]);

    // A second replica starts; the leader goes away with its job unfinished, and the
    // replica takes the lease (a higher epoch) before the held request is answered.
    use sea_orm::EntityTrait;
    let lease = || async { egs_entities::leader_lease::Entity::find().one(&app.db).await.expect("read").map_or(0, |l| l.epoch) };
    let before = lease().await;
    let next = app.spawn_replica().await;
    let mut app = app;
    app.stop().await;
    let db = app.db.clone();
    wait_for("the replica to take the lease", || async {
        egs_entities::leader_lease::Entity::find().one(&db).await.expect("read").is_some_and(|l| l.epoch > before)
    })
    .await;
    hold.release();
    let done = wait_phase(&next, &id, "PROVISIONED").await;

    assert_eq!(k.fake.writes("PATCH", "/api/v1/nodes/gpu-0"), 1, "finished steps are not run again");
    assert_eq!(k.fake.events_for("Node", "gpu-0").iter().filter(|e| e["reason"] == "Provisioned").count(), 1);
    let placement = done["provisioningSteps"].as_array().expect("steps").iter().find(|s| s["step"] == "POD_PLACEMENT").expect("step").clone();
    assert_eq!((placement["status"].as_str(), placement["attempts"].as_i64()), (Some("DONE"), Some(2)), "{placement}");
    let events = next.ok(&next.admin_token, "query($id: ID!) { gpr(id: $id) { events(first: 50) { nodes { kind } } } }", json!({ "id": id })).await;
    let provisioned = events["gpr"]["events"]["nodes"].as_array().expect("events").iter().filter(|e| e["kind"] == "PROVISIONED").count();
    assert_eq!(provisioned, 1, "provisioned exactly once: {events}");
}

#[tokio::test]
async fn a_permanent_failure_after_labelling_undoes_the_labels_before_the_nodes_go_back() {
    let app = TestApp::spawn().await;
    let k = cluster(&app, 1, "ADMISSION_PLUGINS").await;
    // The cluster refuses the namespace change (say, RBAC): a permanent failure.
    k.fake.fail_next("PATCH", "/api/v1/namespaces/team-a", 403, 100);
    let id =
        fixtures::create_gpr(&app, &k.token, &k.slice, "train", json!({ "requeueOnFailure": false })).await["id"].as_str().expect("id").to_owned();
    let failed = wait_phase(&app, &id, "FAILED").await;
    assert!(
        failed["provisioningSteps"].as_array().expect("steps").iter().any(|s| s["step"] == "POD_PLACEMENT" && s["status"] == "FAILED"),
        "{failed}"
    );
    let node = k.fake.get("nodes", None, "gpu-0").expect("node");
    assert!(labels(&node).get("egs.io/slice").is_none() && !has_slice_taint(&node, "team-a"), "the node goes back clean: {node}");
}

#[tokio::test]
async fn only_the_leader_watches_the_cluster_and_the_next_one_takes_over() {
    let app = TestApp::spawn().await;
    let k = cluster(&app, 1, "ADMISSION_PLUGINS").await;
    let node_watches = || k.fake.watches().iter().filter(|w| w.path == "/api/v1/nodes").count();
    let replica = app.spawn_replica().await;
    // The replica ticks (1 s) without the lease: it must not start the controllers.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(node_watches(), 1, "{:?}", k.fake.watches());
    assert_eq!(k.fake.watches().iter().filter(|w| w.path.ends_with("/gpuprovisioningrequests")).count(), 1);

    // The leader goes; the replica leads and watches, and discovery works through it.
    let mut app = app;
    app.stop().await;
    wait_for("the replica to watch the nodes", || async { node_watches() == 2 }).await;
    k.fake.add_gpu_node("gpu-9", SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true);
    let id = replica.ok(&replica.admin_token, "{ clusters { id } }", json!({})).await["clusters"][0]["id"].as_str().expect("id").to_owned();
    wait_for("the new node through the new leader", || async { node_count(&replica, &id).await == 2 }).await;
}
