//! Workload hints (seed 003's "model params, network requirements"): a GPR says what it runs,
//! the API shows it back, and a multi-node GPR that needs RDMA is planned only in a pool whose
//! every node has it (or refused, changing nothing, when no pool does).

use egs_tests::TestApp;
use egs_tests::fixtures::*;
use serde_json::{Value, json};

const CREATE: &str = "mutation($input: CreateGprInput!) { createGpr(input: $input) {
    gpr { id workload { model modelBillions framework kind rdma } } userErrors { field message code } } }";
const GPR: &str = "query($id: ID!) { gpr(id: $id) { phase nodes { name rdma } } }";

async fn rdma_nodes(app: &TestApp, cluster: &str, names: &[&str]) {
    let nodes: Vec<Value> = names
        .iter()
        .map(|name| json!({ "name": name, "instanceType": "p5-efa", "gpuShape": SHAPE_H100, "gpusPerNode": 8, "gpuMemoryMib": 81559, "rdma": true }))
        .collect();
    app.mutate(
        &app.admin_token,
        "upsertNodes",
        "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { id rdma } userErrors { field message code } } }",
        json!({ "clusterId": cluster, "nodes": nodes }),
    )
    .await;
}

#[tokio::test]
async fn a_multi_node_gpr_that_needs_rdma_runs_only_on_nodes_that_have_it() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await; // four plain H100 nodes
    rdma_nodes(&app, &setup.cluster, &["efa-0", "efa-1"]).await;
    let pools = app.ok(&setup.token_a, "{ pools { instanceType rdma totalNodes } }", json!({})).await;
    let mut pools: Vec<Value> = pools["pools"].as_array().expect("pools").clone();
    pools.sort_by_key(|p| p["instanceType"].as_str().unwrap_or_default().to_owned());
    assert_eq!(
        pools,
        [
            json!({ "instanceType": "p5-efa", "rdma": true, "totalNodes": 2 }),
            json!({ "instanceType": "p5.48xlarge", "rdma": false, "totalNodes": 4 })
        ]
    );

    // Two nodes over RDMA: the RDMA pool, though the plain one has more free nodes.
    let hints = json!({ "model": "llama-3-70b", "modelBillions": 70.6, "framework": "pytorch", "kind": "TRAINING", "rdma": true });
    let created = app
        .mutate(
            &setup.token_a,
            "createGpr",
            CREATE,
            json!({ "sliceId": setup.slice_a, "name": "pretrain", "nodeCount": 2, "gpuShape": SHAPE_H100, "duration": "1h", "workload": hints }),
        )
        .await;
    assert_eq!(created["gpr"]["workload"], hints);
    let id = created["gpr"]["id"].as_str().expect("id").to_owned();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
    let running = loop {
        let g = app.ok(&app.admin_token, GPR, json!({ "id": id })).await["gpr"].clone();
        if g["phase"] == "PROVISIONED" {
            break g;
        }
        assert!(tokio::time::Instant::now() < deadline, "not provisioned: {g}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let mut nodes: Vec<Value> = running["nodes"].as_array().expect("nodes").clone();
    nodes.sort_by_key(|n| n["name"].as_str().unwrap_or_default().to_owned());
    assert_eq!(nodes, [json!({ "name": "efa-0", "rdma": true }), json!({ "name": "efa-1", "rdma": true })]);

    // Three nodes over RDMA: no pool has three with it; refused, nothing stored.
    let before = app.ok(&app.admin_token, "{ gprs { totalCount } }", json!({})).await;
    let refused = app
        .ok(
            &setup.token_b,
            CREATE,
            json!({ "input": { "sliceId": setup.slice_b, "name": "wide", "nodeCount": 3, "duration": "1h", "workload": { "rdma": true } } }),
        )
        .await;
    assert_eq!(refused["createGpr"]["userErrors"][0]["field"], json!(["input", "workload", "rdma"]), "{refused}");
    assert_eq!(app.ok(&app.admin_token, "{ gprs { totalCount } }", json!({})).await, before);
    // Bad hints are named.
    let bad = app
        .ok(&setup.token_b, CREATE, json!({ "input": { "sliceId": setup.slice_b, "name": "bad", "nodeCount": 1, "duration": "1h", "workload": { "modelBillions": -1, "model": "x".repeat(200) } } }))
        .await;
    let mut fields: Vec<String> = bad["createGpr"]["userErrors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|e| e["field"].as_array().expect("field").iter().map(|f| f.as_str().unwrap_or_default()).collect::<Vec<_>>().join("."))
        .collect();
    fields.sort();
    assert_eq!(fields, ["input.workload.model", "input.workload.modelBillions"], "{bad}");
    // One node needs no fabric: planned anywhere; the hints come back as given.
    let single = app
        .mutate(
            &setup.token_b,
            "createGpr",
            CREATE,
            json!({ "sliceId": setup.slice_b, "name": "serve", "nodeCount": 1, "duration": "1h", "workload": { "kind": "INFERENCE", "rdma": true } }),
        )
        .await;
    assert_eq!(single["gpr"]["workload"], json!({ "model": null, "modelBillions": null, "framework": null, "kind": "INFERENCE", "rdma": true }));
    app.finish().await;
}
