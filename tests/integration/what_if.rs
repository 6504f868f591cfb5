//! `whatIf` through the live gateway: an admin weighs changes on a copy of the queue and reads
//! which promises would move; nothing changes, and only admins may ask.

use egs_tests::TestApp;
use egs_tests::fixtures::*;
use serde_json::{Value, json};
use std::time::Duration;

const WHAT_IF: &str = "query($input: WhatIfInput!) { whatIf(input: $input) {
    gpr { id name } promiseBefore promiseAfter expectedBefore expectedAfter promiseShiftSeconds } }";
const GPR: &str = "query($id: ID!) { gpr(id: $id) { phase startNoLaterThan } }";

async fn gpr(app: &TestApp, id: &str) -> Value {
    app.ok(&app.admin_token, GPR, json!({ "id": id })).await["gpr"].clone()
}

async fn promised(app: &TestApp, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let found = gpr(app, id).await;
        if found["startNoLaterThan"].is_string() {
            return found;
        }
        assert!(tokio::time::Instant::now() < deadline, "no promise: {found}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_admin_weighs_more_nodes_and_a_raised_gpr_and_nothing_changes() {
    let app = TestApp::spawn().await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 1, SHAPE_H100, 8).await;
    let (a, b, c) = (
        create_slice(&app, "a", &cluster, json!({})).await,
        create_slice(&app, "b", &cluster, json!({})).await,
        create_slice(&app, "c", &cluster, json!({})).await,
    );
    let (_, a_token) = member(&app, "ann", &a, "EDITOR").await;
    let (_, b_token) = member(&app, "bo", &b, "EDITOR").await;
    let (_, c_token) = member(&app, "cy", &c, "EDITOR").await;
    let running = id_of(&create_gpr(&app, &a_token, &a, "running", json!({ "duration": "2h", "preemptible": false })).await);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while gpr(&app, &running).await["phase"] != "PROVISIONED" {
        assert!(tokio::time::Instant::now() < deadline, "not provisioned");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let first = id_of(&create_gpr(&app, &b_token, &b, "first", json!({ "priority": 150, "duration": "1h" })).await);
    let second = id_of(&create_gpr(&app, &c_token, &c, "second", json!({ "priority": 120, "duration": "1h" })).await);
    let (first_before, second_before) = (promised(&app, &first).await, promised(&app, &second).await);

    // Two more H100 nodes: both would start now.
    let pool = json!({ "clusterId": cluster, "instanceType": "p5.48xlarge", "gpuShape": SHAPE_H100, "count": 2 });
    let answer = app.ok(&app.admin_token, WHAT_IF, json!({ "input": { "changes": [{ "addNodes": pool }] } })).await["whatIf"].clone();
    let moves = answer.as_array().expect("moves");
    assert_eq!(moves.len(), 2, "{answer:#}");
    for m in moves {
        assert!(m["promiseShiftSeconds"].as_i64().is_some_and(|s| s < 0), "earlier: {m}");
        assert!(time(&m["promiseAfter"]) <= chrono::Utc::now() + chrono::Duration::seconds(5), "now: {m}");
    }
    // The second raised above the first: it goes first, the first waits behind it.
    let raise = json!({ "gprPriority": { "gprId": second, "priority": 200 } });
    let answer = app.ok(&app.admin_token, WHAT_IF, json!({ "input": { "changes": [raise] } })).await["whatIf"].clone();
    let shift = |id: &str| answer.as_array().and_then(|a| a.iter().find(|m| m["gpr"]["id"] == id)).map(|m| m["promiseShiftSeconds"].as_i64());
    assert!(shift(&second).flatten().is_some_and(|s| s < 0) && shift(&first).flatten().is_some_and(|s| s > 0), "{answer:#}");
    // Nothing changed.
    assert_eq!(
        (gpr(&app, &first).await["startNoLaterThan"].clone(), gpr(&app, &second).await["startNoLaterThan"].clone()),
        (first_before["startNoLaterThan"].clone(), second_before["startNoLaterThan"].clone())
    );

    // Only admins ask; a change is one thing at a time; an unknown pool is named.
    let refused = app.gql(&b_token, WHAT_IF, json!({ "input": { "changes": [{ "addNodes": pool }] } })).await;
    assert_eq!(refused["errors"][0]["extensions"]["code"], "FORBIDDEN", "{refused}");
    let two = app.gql(&app.admin_token, WHAT_IF, json!({ "input": { "changes": [{ "addNodes": pool, "cordonNode": "x" }] } })).await;
    assert_eq!(two["errors"][0]["extensions"]["code"], "INVALID_INPUT", "{two}");
    let nowhere = json!({ "clusterId": cluster, "instanceType": "p5.48xlarge", "gpuShape": "NVIDIA-B200", "count": 2 });
    let unknown = app.gql(&app.admin_token, WHAT_IF, json!({ "input": { "changes": [{ "addNodes": nowhere }] } })).await;
    assert_eq!(unknown["errors"][0]["extensions"]["field"], "input.changes.0.pool", "{unknown}");
    app.finish().await;
}
