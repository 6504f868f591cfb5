//! The promise rule through the live gateway (docs/design.md §4.5, §4.12): GPRs go through provisioning,
//! a preemption, edits and a node failure on a real database, and every `ESTIMATE_CHANGED`
//! event that moves a promise later names a cause the design allows.

use egs_tests::TestApp;
use egs_tests::fixtures::*;
use serde_json::{Value, json};
use std::time::Duration;

const GPR: &str = "query($id: ID!) { gpr(id: $id) { id name phase version startNoLaterThan queuePosition nodes { name } } }";
const EVENTS: &str = "query($id: ID!) { gprEvents(gprId: $id, first: 100) { nodes { kind message } } }";
const UPDATE: &str =
    "mutation($input: UpdateGprInput!) { updateGpr(input: $input) { gpr { version startNoLaterThan } userErrors { field message code } } }";

async fn gpr(app: &TestApp, id: &str) -> Value {
    app.ok(&app.admin_token, GPR, json!({ "id": id })).await["gpr"].clone()
}

async fn wait_until(app: &TestApp, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let current = gpr(app, id).await;
        if done(&current) {
            return current;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}: {current:#}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The promise an `ESTIMATE_CHANGED` message states.
fn stated_promise(message: &str) -> Option<chrono::DateTime<chrono::Utc>> {
    let rest = message.strip_prefix("starts no later than ")?;
    let stamp = rest.split(',').next()?;
    chrono::DateTime::parse_from_rfc3339(stamp).ok().map(|t| t.with_timezone(&chrono::Utc))
}

/// Every event that moves a GPR's stated promise later (or takes it away) names an allowed
/// cause; returns how many did.
async fn check_promise_rule(app: &TestApp, ids: &[&String]) -> usize {
    let mut later = 0;
    for id in ids {
        let events = app.ok(&app.admin_token, EVENTS, json!({ "id": id })).await;
        let history: Vec<String> =
            events["gprEvents"]["nodes"].as_array().expect("events").iter().map(|e| format!("{}: {}", e["kind"], e["message"])).collect();
        let mut last: Option<chrono::DateTime<chrono::Utc>> = None;
        for event in events["gprEvents"]["nodes"].as_array().expect("events") {
            if event["kind"] != "ESTIMATE_CHANGED" {
                continue;
            }
            let message = event["message"].as_str().expect("message");
            let promise = stated_promise(message);
            let moved_later = match (last, promise) {
                (Some(before), Some(after)) => after > before + chrono::Duration::seconds(5),
                (Some(_), None) => true,
                _ => false,
            };
            if moved_later {
                later += 1;
                let allowed = ["of higher priority", "(fair share)", "capacity was lost", "its own size, window or priority"];
                assert!(
                    allowed.iter().any(|cause| message.contains(cause)),
                    "GPR {id}: a promise moved later without a §4.5 cause: {message}\n{history:#?}"
                );
            }
            assert!(!message.contains("held past their bound"), "GPR {id}: {message}");
            // After "no promise" (it fits nowhere now), the next one is new, not moved.
            last = promise;
        }
    }
    later
}

#[tokio::test]
async fn promises_move_later_only_for_the_causes_the_design_allows() {
    let app = TestApp::spawn().await;
    let cluster = register_cluster(&app, "c1").await;
    let nodes = add_nodes(&app, &cluster, "h100", 4, SHAPE_H100, 8).await;
    let batch = create_slice(&app, "batch", &cluster, json!({ "autoEviction": true, "requeueOnEviction": true })).await;
    let prod = create_slice(&app, "prod", &cluster, json!({ "priorityMax": 300 })).await;
    let team_c = create_slice(&app, "team-c", &cluster, json!({})).await;
    let team_d = create_slice(&app, "team-d", &cluster, json!({})).await;
    let team_e = create_slice(&app, "team-e", &cluster, json!({})).await;
    let (_, batch_token) = member(&app, "lou", &batch, "EDITOR").await;
    let (_, prod_token) = member(&app, "hana", &prod, "EDITOR").await;
    let (_, c_token) = member(&app, "cy", &team_c, "EDITOR").await;
    let (_, d_token) = member(&app, "di", &team_d, "EDITOR").await;
    let (_, e_token) = member(&app, "ed", &team_e, "EDITOR").await;

    // Two running GPRs fill the four nodes (each through the simulated provider's steps).
    let sweep = id_of(
        &create_gpr(&app, &batch_token, &batch, "sweep", json!({ "nodeCount": 2, "priority": 150, "preemptible": true, "duration": "2h" })).await,
    );
    wait_until(&app, &sweep, "sweep provisioned", |g| g["phase"] == "PROVISIONED").await;
    let train = id_of(&create_gpr(&app, &c_token, &team_c, "train", json!({ "nodeCount": 2, "duration": "1h", "preemptible": false })).await);
    let train_running = wait_until(&app, &train, "train provisioned", |g| g["phase"] == "PROVISIONED").await;

    // Two wait behind them.
    let big = id_of(&create_gpr(&app, &d_token, &team_d, "big", json!({ "nodeCount": 4, "duration": "2h" })).await);
    let small = id_of(&create_gpr(&app, &e_token, &team_e, "small", json!({ "nodeCount": 2, "duration": "1h" })).await);
    let small_planned = wait_until(&app, &small, "a promise", |g| !g["startNoLaterThan"].is_null()).await;
    wait_until(&app, &big, "a promise", |g| !g["startNoLaterThan"].is_null()).await;

    // Renaming and relabelling keeps the plan and its promise.
    let renamed = app
        .mutate(
            &e_token,
            "updateGpr",
            UPDATE,
            json!({ "id": small, "version": small_planned["version"], "name": "small-renamed", "labels": [{ "key": "team", "value": "e" }] }),
        )
        .await;
    assert_eq!(renamed["gpr"]["startNoLaterThan"], small_planned["startNoLaterThan"], "{renamed}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(gpr(&app, &small).await["startNoLaterThan"], small_planned["startNoLaterThan"], "a cosmetic edit keeps the promise");

    // A higher-priority GPR preempts the sweep and starts on its nodes; the promises behind move.
    let urgent = id_of(&create_gpr(&app, &prod_token, &prod, "urgent", json!({ "nodeCount": 2, "priority": 250, "duration": "3h" })).await);
    wait_until(&app, &urgent, "urgent provisioned", |g| g["phase"] == "PROVISIONED").await;
    wait_until(&app, &sweep, "the sweep requeued", |g| g["phase"] == "QUEUED").await;

    // One of train's nodes fails and no node is free: train runs degraded, capacity is lost.
    let failed = train_running["nodes"][0]["name"].as_str().expect("node").to_owned();
    assert!(nodes.len() == 4);
    let input = json!({ "clusterId": cluster, "nodes": [{
        "name": failed, "instanceType": "p5.48xlarge", "gpuShape": SHAPE_H100, "gpusPerNode": 8, "gpuMemoryMib": 81559, "health": "UNHEALTHY",
    }] });
    app.ok(
        &app.admin_token,
        "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { userErrors { message } } }",
        json!({ "input": input }),
    )
    .await;
    wait_until(&app, &train, "train degraded", |g| g["nodes"].as_array().is_some_and(|n| n.len() == 1)).await;
    // Four nodes no longer fit in three healthy ones: the big GPR loses its promise, and says why.
    wait_until(&app, &big, "the big GPR unplanned", |g| g["startNoLaterThan"].is_null()).await;

    // Its owner shrinks it to three: a change of its own, planned again.
    let current = gpr(&app, &big).await;
    let shrunk = app.mutate(&d_token, "updateGpr", UPDATE, json!({ "id": big, "version": current["version"], "nodeCount": 3 })).await;
    assert_eq!(shrunk["userErrors"], json!([]), "{shrunk}");
    wait_until(&app, &big, "a new promise", |g| !g["startNoLaterThan"].is_null()).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;

    let later = check_promise_rule(&app, &[&sweep, &train, &big, &small, &urgent]).await;
    assert!(later >= 2, "the preemption and the failure each moved a promise later ({later} seen)");
    // Queue positions follow start order: the earliest promise is position 1.
    let mut waiting = Vec::new();
    for id in [&sweep, &big, &small] {
        let g = gpr(&app, id).await;
        if g["phase"] == "QUEUED" && !g["startNoLaterThan"].is_null() {
            waiting.push((g["startNoLaterThan"].as_str().expect("time").to_owned(), g["queuePosition"].as_i64().expect("position")));
        }
    }
    waiting.sort();
    let positions: Vec<i64> = waiting.iter().map(|w| w.1).collect();
    let mut sorted = positions.clone();
    sorted.sort_unstable();
    assert_eq!(positions, sorted, "positions follow start order: {waiting:?}");
    app.finish().await;
}

#[tokio::test]
async fn a_clusters_firm_horizon_keeps_promises_against_medium_arrivals() {
    const UPDATE_CLUSTER: &str = "mutation($input: UpdateClusterInput!) { updateCluster(input: $input) {
        cluster { firmHorizon } userErrors { field message code } } }";
    let app = TestApp::spawn().await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 1, SHAPE_H100, 8).await;
    let too_far = app.ok(&app.admin_token, UPDATE_CLUSTER, json!({ "input": { "id": cluster, "firmHorizon": "8d" } })).await;
    assert_eq!(too_far["updateCluster"]["userErrors"][0]["field"], json!(["input", "firmHorizon"]), "{too_far}");
    let set = app.mutate(&app.admin_token, "updateCluster", UPDATE_CLUSTER, json!({ "id": cluster, "firmHorizon": "6h" })).await;
    assert_eq!(set["cluster"]["firmHorizon"], "PT6H", "{set}");
    let (first, second, third) = (
        create_slice(&app, "first", &cluster, json!({})).await,
        create_slice(&app, "second", &cluster, json!({})).await,
        create_slice(&app, "third", &cluster, json!({ "priorityMax": 200 })).await,
    );
    let (_, first_token) = member(&app, "fay", &first, "EDITOR").await;
    let (_, second_token) = member(&app, "sam", &second, "EDITOR").await;
    let (_, third_token) = member(&app, "tia", &third, "EDITOR").await;
    let running = id_of(&create_gpr(&app, &first_token, &first, "running", json!({ "duration": "1h", "preemptible": false })).await);
    wait_until(&app, &running, "provisioned", |g| g["phase"] == "PROVISIONED").await;
    let waiting = id_of(&create_gpr(&app, &second_token, &second, "waiting", json!({ "priority": 120, "duration": "1h" })).await);
    let promised = wait_until(&app, &waiting, "a promise", |g| !g["startNoLaterThan"].is_null()).await;
    // A medium arrival of higher priority plans around the firm promise instead of taking it.
    let later = id_of(&create_gpr(&app, &third_token, &third, "later", json!({ "priority": 190, "duration": "1h" })).await);
    let behind = wait_until(&app, &later, "a promise", |g| !g["startNoLaterThan"].is_null()).await;
    assert!(
        time(&behind["startNoLaterThan"]) > time(&promised["startNoLaterThan"]),
        "it waits behind the firm promise: {behind} {promised} now {}",
        gpr(&app, &waiting).await
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(gpr(&app, &waiting).await["startNoLaterThan"], promised["startNoLaterThan"], "the firm promise stands");
    app.finish().await;
}
