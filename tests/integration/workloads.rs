//! Workload → pods → GPUs through the real gateway: a node agent (simulated GPUs running pods)
//! reports which pods use which GPUs; the slice holding the node reads its pods with their GPUs
//! and latest samples, another slice reads nothing; reports are validated like samples.

use egs_node_agent::{Agent, Config};
use egs_tests::TestApp;
use egs_tests::fixtures::*;
use serde_json::json;
use std::time::Duration;

const REPORT: &str = "mutation($input: ReportGpuWorkloadsInput!) {
    reportGpuWorkloads(input: $input) { processes userErrors { field message code } } }";
const WORKLOADS: &str = "query($slice: ID!) { workloads(sliceId: $slice) {
    uid namespace name containers usedMemoryMib node { name }
    gpus { uuid latestSample { util } } processes { pid usedMemoryMib pod { uid namespace name container } } } }";
const NODE_PODS: &str = "query($id: ID!) { node(id: $id) { ... on GpuNode { name
    pods { uid namespace name gpus { uuid } } gpus { uuid processes { pid pod { name } } pods { uid } } } } }";

async fn cluster_token(app: &TestApp, cluster: &str) -> String {
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { field message code } } }";
    let payload = app.mutate(&app.admin_token, "createToken", create, json!({ "name": "agents", "role": "AGENT", "clusterId": cluster })).await;
    payload["secret"].as_str().expect("secret").to_owned()
}

#[tokio::test]
async fn the_slice_holding_a_node_reads_its_pods_and_another_slice_cannot() {
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await;
    let created = create_gpr(&app, &two.token_a, &two.slice_a, "train", json!({ "nodeCount": 1 })).await;
    let gpr = provisioned(&app, &two.token_a, created["id"].as_str().expect("id")).await;
    let node_id = gpr["nodes"][0]["id"].as_str().expect("node id").to_owned();
    let node_name = gpr["nodes"][0]["name"].as_str().expect("node name").to_owned();

    // The node's agent: 8 simulated GPUs, all training in pods of team-a's namespace.
    let dir = tempfile::tempdir().expect("a temp dir");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, cluster_token(&app, &two.cluster).await).expect("write the token");
    let url = app.url("");
    let args = [
        "--gateway",
        url.as_str(),
        "--cluster-id",
        two.cluster.as_str(),
        "--node-name",
        node_name.as_str(),
        "--token-file",
        token_file.to_str().expect("a UTF-8 path"),
        "--simulate",
        "8",
        "--simulate-pods",
        "team-a",
        "--no-http",
        "--seed",
        "5",
    ];
    let agent = Agent::new(Config::from_args(args).expect("flags")).expect("the agent starts");
    let state = agent.state();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(agent.run(async move {
        let _ = stopped.await;
    }));
    let uuids: Vec<String> = state.inventory().gpus.iter().map(|g| g.uuid.clone()).collect();

    // Alice (team-a) sees the pod on all eight GPUs, with their latest samples.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let pods = loop {
        let pods = app.ok(&two.token_a, WORKLOADS, json!({ "slice": two.slice_a })).await["workloads"].clone();
        let sampled = pods[0]["gpus"].as_array().is_some_and(|g| g.len() == 8 && g.iter().all(|g| !g["latestSample"].is_null()));
        if sampled {
            break pods;
        }
        assert!(tokio::time::Instant::now() < deadline, "no pods with samples for team-a: {pods}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let pods = pods.as_array().expect("pods");
    assert_eq!(pods.len(), 1, "one training pod on the node: {pods:?}");
    let pod = &pods[0];
    assert_eq!((pod["namespace"].as_str(), pod["node"]["name"].as_str()), (Some("team-a"), Some(node_name.as_str())), "{pod}");
    assert_eq!(pod["containers"], json!(["trainer"]));
    let mut seen: Vec<String> = pod["gpus"].as_array().expect("gpus").iter().map(|g| g["uuid"].as_str().unwrap_or_default().to_owned()).collect();
    seen.sort();
    let mut expected = uuids.clone();
    expected.sort();
    assert_eq!(seen, expected, "the pod uses every GPU of the node");
    assert_eq!(pod["processes"].as_array().map(Vec::len), Some(8), "one process per GPU");
    assert!(pod["processes"].as_array().expect("processes").iter().all(|p| p["pod"]["uid"] == pod["uid"]));

    // The node's and its GPUs' own views agree.
    let node = app.ok(&two.token_a, NODE_PODS, json!({ "id": node_id })).await["node"].clone();
    assert_eq!(node["pods"].as_array().map(Vec::len), Some(1), "{node}");
    assert_eq!(node["pods"][0]["gpus"].as_array().map(Vec::len), Some(8));
    for gpu in node["gpus"].as_array().expect("gpus") {
        assert_eq!(gpu["processes"].as_array().map(Vec::len), Some(1), "{gpu}");
        assert_eq!(gpu["pods"][0]["uid"], pod["uid"], "{gpu}");
    }

    // Bob (team-b) sees none of it: team-a's workloads are not found, his own are empty, and
    // the node's pods and processes read as empty.
    let body = app.gql(&two.token_b, WORKLOADS, json!({ "slice": two.slice_a })).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "NOT_FOUND", "{body}");
    let own = app.ok(&two.token_b, WORKLOADS, json!({ "slice": two.slice_b })).await;
    assert_eq!(own["workloads"], json!([]));
    let node = app.ok(&two.token_b, NODE_PODS, json!({ "id": node_id })).await["node"].clone();
    assert_eq!(node["pods"], json!([]), "{node}");
    assert!(node["gpus"].as_array().expect("gpus").iter().all(|g| g["processes"] == json!([]) && g["pods"] == json!([])), "{node}");

    // Admins read everything.
    let all = app.ok(&app.admin_token, WORKLOADS, json!({ "slice": two.slice_a })).await;
    assert_eq!(all["workloads"].as_array().map(Vec::len), Some(1));

    let _ = stop.send(());
    task.await.expect("the agent task").expect("a clean stop");
    app.finish().await;
}

#[tokio::test]
async fn a_report_naming_a_gpu_of_another_node_is_refused_and_nothing_is_stored() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    let ids = add_nodes(&app, &cluster, "n", 2, SHAPE_H100, 2).await;
    let gpus = |node: &str| (0..2).map(|i| format!("GPU-{cluster}-{node}-{i}")).collect::<Vec<_>>();
    let (mine, theirs) = (gpus("n-0"), gpus("n-1"));
    let pod = json!({ "uid": "0b5a1c2e-5f0b-4a6e-9c1e-123456789abc", "namespace": "ml", "name": "train-0", "container": "trainer" });
    let good = json!({ "nodeId": ids[0], "gpus": [{ "uuid": mine[0], "processes": [{ "pid": 100, "usedMemoryMib": 1000.0, "pod": pod }] }] });
    let stored = app.mutate(&app.admin_token, "reportGpuWorkloads", REPORT, good).await;
    assert_eq!(stored["processes"], 1);

    let bad = json!({ "nodeId": ids[0], "gpus": [
        { "uuid": mine[0], "processes": [{ "pid": 100, "pod": pod }, { "pid": 100 }] },
        { "uuid": theirs[0], "processes": [{ "pid": 7 }] },
        { "uuid": mine[1], "processes": [{ "pid": 0, "usedMemoryMib": 1e9 }] } ] });
    let body = app.gql(&app.admin_token, REPORT, json!({ "input": bad })).await;
    let payload = &body["data"]["reportGpuWorkloads"];
    let fields: Vec<(String, String)> = payload["userErrors"]
        .as_array()
        .expect("userErrors")
        .iter()
        .map(|e| {
            let path: Vec<&str> = e["field"].as_array().expect("a path").iter().map(|p| p.as_str().unwrap_or_default()).collect();
            (path.join("."), e["code"].as_str().unwrap_or_default().to_owned())
        })
        .collect();
    let invalid = |f: &str| (f.to_owned(), "INVALID_INPUT".to_owned());
    assert_eq!(
        fields,
        vec![
            invalid("input.gpus.0.processes.1.pid"),
            invalid("input.gpus.1.uuid"),
            invalid("input.gpus.2.processes.0.pid"),
            invalid("input.gpus.2.processes.0.usedMemoryMib"),
        ],
        "{body}"
    );
    assert_eq!(payload["processes"], 0);
    let node = app.ok(&app.admin_token, NODE_PODS, json!({ "id": ids[0] })).await["node"].clone();
    assert_eq!(node["pods"].as_array().map(Vec::len), Some(1), "the earlier report stands: {node}");
    assert_eq!(node["pods"][0]["name"], "train-0");
    assert_eq!(node["gpus"][0]["processes"], json!([{ "pid": 100, "pod": { "name": "train-0" } }]));
    // Users report nothing.
    let two_user = member(&app, "carol", &create_slice(&app, "ml", &cluster, json!({})).await, "OWNER").await.1;
    let body = app.gql(&two_user, REPORT, json!({ "input": { "nodeId": ids[0], "gpus": [] } })).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "FORBIDDEN", "{body}");
    // An empty report clears the node.
    let cleared = app.mutate(&app.admin_token, "reportGpuWorkloads", REPORT, json!({ "nodeId": ids[0], "gpus": [] })).await;
    assert_eq!(cleared["processes"], 0);
    let node = app.ok(&app.admin_token, NODE_PODS, json!({ "id": ids[0] })).await["node"].clone();
    assert_eq!(node["pods"], json!([]));
    app.finish().await;
}

#[tokio::test]
async fn a_member_sees_only_the_pods_of_their_slices_namespaces_on_the_node_their_gpr_holds() {
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await;
    let created = create_gpr(&app, &two.token_a, &two.slice_a, "train", json!({ "nodeCount": 1 })).await;
    let gpr = provisioned(&app, &two.token_a, created["id"].as_str().expect("id")).await;
    let node_id = gpr["nodes"][0]["id"].as_str().expect("node id").to_owned();
    let node_name = gpr["nodes"][0]["name"].as_str().expect("node name").to_owned();
    let uuid = format!("GPU-{}-{node_name}-0", two.cluster);
    let pod = |uid: &str, namespace: &str, name: &str| json!({ "uid": uid, "namespace": namespace, "name": name, "container": "c" });
    let report = json!({ "nodeId": node_id, "gpus": [{ "uuid": uuid, "processes": [
        { "pid": 100, "pod": pod("0b5a1c2e-5f0b-4a6e-9c1e-000000000001", "team-a", "train-0") },
        { "pid": 200, "pod": pod("0b5a1c2e-5f0b-4a6e-9c1e-000000000002", "gpu-monitoring", "dcgm-exporter") },
        { "pid": 300 } ] }] });
    assert_eq!(app.mutate(&app.admin_token, "reportGpuWorkloads", REPORT, report).await["processes"], 3);

    let mine = app.ok(&two.token_a, NODE_PODS, json!({ "id": node_id })).await["node"].clone();
    assert_eq!(mine["pods"].as_array().map(|p| p.iter().map(|p| p["name"].clone()).collect::<Vec<_>>()), Some(vec![json!("train-0")]), "{mine}");
    let gpu = mine["gpus"].as_array().expect("gpus").iter().find(|g| g["uuid"] == uuid.as_str()).expect("the GPU").clone();
    assert_eq!(gpu["processes"], json!([{ "pid": 100, "pod": { "name": "train-0" } }]), "not the cluster's own nor a bare process: {gpu}");
    // Admins see every process on the node.
    let all = app.ok(&app.admin_token, NODE_PODS, json!({ "id": node_id })).await["node"].clone();
    assert_eq!(all["pods"].as_array().map(Vec::len), Some(2), "{all}");
    let gpu = all["gpus"].as_array().expect("gpus").iter().find(|g| g["uuid"] == uuid.as_str()).expect("the GPU").clone();
    assert_eq!(gpu["processes"].as_array().map(Vec::len), Some(3), "{gpu}");
    app.finish().await;
}

/// A pod on `node` whose one container `trainer` runs as `containerd://<container_id>`, as its
/// kubelet would report it; returns its UID.
async fn running_pod(kube: &egs_tests::kube_backend::KubeBackend, name: &str, node: &str, container_id: &str) -> String {
    kube.create_with_status(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": { "name": name, "namespace": "egs" },
        "spec": { "nodeName": node, "serviceAccountName": "tenant", "containers": [{ "name": "trainer", "image": "trainer" }] },
        "status": { "phase": "Running", "containerStatuses": [{
            "name": "trainer", "image": "trainer", "imageID": "", "ready": true, "restartCount": 0,
            "containerID": format!("containerd://{container_id}"), "state": { "running": {} } }] },
    }))
    .await;
    let pod = kube.get("pods", Some("egs"), name).await.expect("the pod");
    pod["metadata"]["uid"].as_str().expect("a uid").to_owned()
}

/// On a Kubernetes cluster the agent reports pod UIDs and the gateway names them from the
/// cluster's list of the node's pods: what the agent claims is ignored, and a UID that is not
/// on the node (another node's pod, or none at all) is stored without names.
async fn the_cluster_names_the_pods_an_agent_reports_not_the_agent(kube: egs_tests::kube_backend::KubeBackend) {
    use crate::agent_sign_in::{cluster_with_agent_pods, projected_token, sign_in};
    const NAMED: &str = "mutation($input: ReportGpuWorkloadsInput!) { reportGpuWorkloads(input: $input) {
        processes namedPods { uid namespace name containers { id name } } userErrors { field message code } } }";
    let app = TestApp::spawn().await;
    let cluster = cluster_with_agent_pods(&app, &kube).await;
    let here = running_pod(&kube, "train-gpu-1", "gpu-1", "c0ffee").await;
    let elsewhere = running_pod(&kube, "train-gpu-2", "gpu-2", "beef").await;
    let signed = sign_in(&app, &cluster, &projected_token(&kube, "egs-node-agent", Some("agent-gpu-1"), "egs").await).await;
    let token = signed["data"]["signInAgent"]["token"].as_str().unwrap_or_else(|| panic!("signed in: {signed}")).to_owned();
    let gpu = json!({ "uuid": "GPU-kube-gpu-1-0", "index": 0, "model": SHAPE_H100, "memoryMib": 81559 });
    let node =
        json!({ "name": "gpu-1", "instanceType": "p5.48xlarge", "gpuShape": SHAPE_H100, "gpusPerNode": 1, "gpuMemoryMib": 81559, "gpus": [gpu] });
    let upserted = app
        .mutate(
            &token,
            "upsertNodes",
            "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { id } userErrors { field message code } } }",
            json!({ "clusterId": cluster, "nodes": [node] }),
        )
        .await;
    let node_id = upserted["nodes"][0]["id"].as_str().expect("the node").to_owned();

    // The agent claims its pod is team-b's `evil`, and reports another node's pod and a made-up one.
    let claim =
        |uid: &str, container_id: &str| json!({ "uid": uid, "namespace": "team-b", "name": "evil", "container": "x", "containerId": container_id });
    let report = json!({ "nodeId": node_id, "gpus": [{ "uuid": "GPU-kube-gpu-1-0", "processes": [
        { "pid": 100, "pod": claim(&here, "c0ffee") },
        { "pid": 101, "pod": claim(&here, "not-a-container-of-it") },
        { "pid": 200, "pod": claim(&elsewhere, "beef") },
        { "pid": 300, "pod": claim("0b5a1c2e-5f0b-4a6e-9c1e-000000000009", "c0ffee") } ] }] });
    let payload = app.mutate(&token, "reportGpuWorkloads", NAMED, report).await;
    assert_eq!(payload["processes"], 4, "{payload}");
    assert_eq!(
        payload["namedPods"],
        json!([{ "uid": here, "namespace": "egs", "name": "train-gpu-1", "containers": [{ "id": "c0ffee", "name": "trainer" }] }]),
        "only the node's own pod is named, and by the cluster: {payload}"
    );

    const STORED: &str = "query($id: ID!) { node(id: $id) { ... on GpuNode {
        gpus { processes { pid pod { uid namespace name container } } } } } }";
    let stored = app.ok(&app.admin_token, STORED, json!({ "id": node_id })).await["node"]["gpus"][0]["processes"].clone();
    let unnamed = |uid: &str| json!({ "uid": uid, "namespace": null, "name": null, "container": null });
    assert_eq!(
        stored,
        json!([
            { "pid": 100, "pod": { "uid": here, "namespace": "egs", "name": "train-gpu-1", "container": "trainer" } },
            { "pid": 101, "pod": { "uid": here, "namespace": "egs", "name": "train-gpu-1", "container": null } },
            { "pid": 200, "pod": unnamed(&elsewhere) },
            { "pid": 300, "pod": unnamed("0b5a1c2e-5f0b-4a6e-9c1e-000000000009") },
        ]),
        "{stored}"
    );
    assert!(!stored.to_string().contains("evil") && !stored.to_string().contains("team-b"), "nothing the agent claimed is kept: {stored}");
    app.finish().await;
}
egs_tests::on_both_backends!(the_cluster_names_the_pods_an_agent_reports_not_the_agent);
