//! Maintenance and eviction: cordoned nodes get no new GPR and leave the pool when their holder
//! is done, draining evicts and requeues (or waits), uncordoning puts them back, and admins evict
//! a GPR back into the queue with a reason its owner reads.

use crate::kubernetes::wait_phase;
use egs_tests::TestApp;
use egs_tests::fixtures::*;
use serde_json::{Value, json};
use std::time::Duration;

const NODES: &str = "query($id: ID!) { cluster(id: $id) { nodes(first: 50) { nodes { id name state cordonedAt cordonReason cordonedBy allocatedGpr { id name } } } } }";
const CORDON: &str =
    "mutation($input: CordonNodeInput!) { cordonNode(input: $input) { node { name state cordonReason } userErrors { field message code } } }";
const DRAIN: &str = "mutation($input: DrainNodeInput!) { drainNode(input: $input) { node { name state } userErrors { field message code } } }";
const UNCORDON: &str =
    "mutation($input: UncordonNodeInput!) { uncordonNode(input: $input) { node { name state cordonedAt } userErrors { field message code } } }";
const EVICT: &str = "mutation($input: EvictGprInput!) { evictGpr(input: $input) { gpr { phase reason } userErrors { field message code } } }";

async fn nodes(app: &TestApp, cluster: &str) -> Vec<Value> {
    app.ok(&app.admin_token, NODES, json!({ "id": cluster })).await["cluster"]["nodes"]["nodes"].as_array().cloned().unwrap_or_default()
}

async fn node(app: &TestApp, cluster: &str, name: &str) -> Value {
    nodes(app, cluster).await.into_iter().find(|n| n["name"] == name).unwrap_or_else(|| panic!("no node {name}"))
}

/// A cluster of `count` one-node pools' worth of H100 nodes, a slice and its editor.
async fn setup(app: &TestApp, count: usize) -> (String, String, String) {
    let cluster = register_cluster(app, "c1").await;
    add_nodes(app, &cluster, "h", count, SHAPE_H100, 8).await;
    let slice = create_slice(app, "team-a", &cluster, json!({})).await;
    let (_, token) = member(app, "alice", &slice, "EDITOR").await;
    (cluster, slice, token)
}

async fn holder_node(app: &TestApp, cluster: &str, gpr: &str) -> String {
    let found = nodes(app, cluster).await.into_iter().find(|n| n["allocatedGpr"]["id"] == gpr).expect("the GPR holds a node");
    found["name"].as_str().expect("a name").to_owned()
}

async fn wait_node_state(app: &TestApp, cluster: &str, name: &str, state: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let found = node(app, cluster, name).await;
        if found["state"] == state {
            return found;
        }
        assert!(tokio::time::Instant::now() < deadline, "node {name} not {state}: {found}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_cordoned_node_gets_no_new_gpr_and_leaves_the_pool_when_its_holder_is_done() {
    let app = TestApp::spawn().await;
    let (cluster, slice, token) = setup(&app, 2).await;
    let id_of_node = |name: &str| {
        let cluster = cluster.clone();
        let app = &app;
        let name = name.to_owned();
        async move { id_of(&node(app, &cluster, &name).await) }
    };
    let cordoned = app.mutate(&app.admin_token, "cordonNode", CORDON, json!({ "id": id_of_node("h-0").await, "reason": "firmware update" })).await;
    assert_eq!(cordoned["node"], json!({ "name": "h-0", "state": "CORDONED", "cordonReason": "firmware update" }));
    let first = id_of(&create_gpr(&app, &token, &slice, "first", json!({})).await);
    provisioned(&app, &token, &first).await;
    assert_eq!(holder_node(&app, &cluster, &first).await, "h-1", "not the cordoned node");

    // Cordoning the held node: its GPR keeps it; nothing else may have it.
    let held = app.mutate(&app.admin_token, "cordonNode", CORDON, json!({ "id": id_of_node("h-1").await, "reason": "fan noise" })).await;
    assert_eq!(held["node"]["state"], "RESERVED", "{held}");
    let second = id_of(&create_gpr(&app, &token, &slice, "second", json!({})).await);
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(wait_phase(&app, &second, "QUEUED").await["phase"], "QUEUED");
    let release = "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { id } userErrors { message } } }";
    app.mutate(&token, "earlyReleaseGpr", release, json!({ "id": first })).await;
    let h1 = wait_node_state(&app, &cluster, "h-1", "CORDONED").await;
    assert_eq!((h1["cordonReason"].as_str(), h1["cordonedBy"].as_str()), (Some("fan noise"), Some("admin")), "{h1}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(wait_phase(&app, &second, "QUEUED").await["phase"], "QUEUED", "both nodes are cordoned");

    let back = app.mutate(&app.admin_token, "uncordonNode", UNCORDON, json!({ "id": id_of_node("h-0").await })).await;
    assert_eq!(back["node"], json!({ "name": "h-0", "state": "AVAILABLE", "cordonedAt": null }));
    provisioned(&app, &token, &second).await;
    assert_eq!(holder_node(&app, &cluster, &second).await, "h-0");
    app.finish().await;
}

#[tokio::test]
async fn draining_evicts_and_requeues_or_waits_for_the_window() {
    let app = TestApp::spawn().await;
    let (cluster, slice, token) = setup(&app, 2).await;
    let gpr = id_of(&create_gpr(&app, &token, &slice, "moved", json!({ "priority": 150 })).await);
    provisioned(&app, &token, &gpr).await;
    let was_on = holder_node(&app, &cluster, &gpr).await;
    let node_id = id_of(&node(&app, &cluster, &was_on).await);
    let drained = app.mutate(&app.admin_token, "drainNode", DRAIN, json!({ "id": node_id, "reason": "replace the NIC", "evict": true })).await;
    assert_eq!(drained["node"]["state"], "DRAINING", "{drained}");
    wait_node_state(&app, &cluster, &was_on, "CORDONED").await;
    // Back in the queue at its priority, then on the other node.
    provisioned(&app, &token, &gpr).await;
    assert_ne!(holder_node(&app, &cluster, &gpr).await, was_on);
    let seen = app
        .ok(&token, "query($id: ID!) { gpr(id: $id) { priority reason events(first: 50) { nodes { kind message } } } }", json!({ "id": gpr }))
        .await;
    assert_eq!(seen["gpr"]["priority"], 150);
    let events = seen["gpr"]["events"]["nodes"].as_array().cloned().unwrap_or_default();
    let evicted = events.iter().find(|e| e["kind"] == "EVICTED").unwrap_or_else(|| panic!("no EVICTED event: {seen}"));
    let message = evicted["message"].as_str().unwrap_or_default();
    assert!(message.contains(&format!("node `{was_on}` is drained for maintenance: replace the NIC")), "{message}");
    assert!(message.contains("back to the queue at priority 150"), "{message}");
    assert!(events.iter().any(|e| e["kind"] == "REQUEUED"), "{seen}");

    // Without evicting: the GPR keeps the node until it is done.
    let now_on = holder_node(&app, &cluster, &gpr).await;
    let now_id = id_of(&node(&app, &cluster, &now_on).await);
    let waiting = app.mutate(&app.admin_token, "drainNode", DRAIN, json!({ "id": now_id, "reason": "reboot" })).await;
    assert_eq!(waiting["node"]["state"], "DRAINING");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(wait_phase(&app, &gpr, "PROVISIONED").await["phase"], "PROVISIONED", "not evicted");
    let release = "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { id } userErrors { message } } }";
    app.mutate(&token, "earlyReleaseGpr", release, json!({ "id": gpr })).await;
    wait_node_state(&app, &cluster, &now_on, "CORDONED").await;
    app.finish().await;
}

#[tokio::test]
async fn admins_evict_a_gpr_back_into_the_queue_and_nobody_else_can() {
    let app = TestApp::spawn().await;
    let (cluster, slice, token) = setup(&app, 1).await;
    let gpr = id_of(&create_gpr(&app, &token, &slice, "evicted", json!({})).await);
    provisioned(&app, &token, &gpr).await;
    let by_user = app.gql(&token, EVICT, json!({ "input": { "id": gpr, "reason": "mine" } })).await;
    assert_eq!(by_user["errors"][0]["extensions"]["code"], "FORBIDDEN", "{by_user}");
    let node_id = id_of(&node(&app, &cluster, "h-0").await);
    for (mutation, input) in [(CORDON, json!({ "id": node_id, "reason": "x" })), (UNCORDON, json!({ "id": node_id }))] {
        let refused = app.gql(&token, mutation, json!({ "input": input })).await;
        assert_eq!(refused["errors"][0]["extensions"]["code"], "FORBIDDEN", "{refused}");
    }
    for reason in ["", "   ", &"x".repeat(501)] {
        let refused = app.ok(&app.admin_token, EVICT, json!({ "input": { "id": gpr, "reason": reason } })).await["evictGpr"].clone();
        assert_eq!(refused["userErrors"][0]["field"], json!(["input", "reason"]), "{refused}");
    }
    let not_a_node = app.ok(&app.admin_token, CORDON, json!({ "input": { "id": gpr, "reason": "x" } })).await["cordonNode"].clone();
    assert_eq!(not_a_node["userErrors"][0]["field"], json!(["input", "id"]), "{not_a_node}");
    assert_eq!(wait_phase(&app, &gpr, "PROVISIONED").await["phase"], "PROVISIONED", "refusals changed nothing");

    let evicted = app.mutate(&app.admin_token, "evictGpr", EVICT, json!({ "id": gpr, "reason": "a higher-priority demo" })).await;
    assert_eq!(evicted["gpr"]["phase"], "RELEASING");
    // Alone on its node's pool, it is provisioned again once the node is free.
    provisioned(&app, &token, &gpr).await;
    let told = app.ok(&token, "query($id: ID!) { gpr(id: $id) { events(first: 50) { nodes { kind message actor } } } }", json!({ "id": gpr })).await;
    let events = told["gpr"]["events"]["nodes"].as_array().cloned().unwrap_or_default();
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["kind"].as_str()).collect();
    let from = kinds.iter().position(|k| *k == "EVICTED").unwrap_or_else(|| panic!("no EVICTED: {kinds:?}"));
    let order: Vec<&str> = kinds[from..].iter().copied().filter(|k| ["EVICTED", "REQUEUED", "PROVISIONED"].contains(k)).collect();
    assert_eq!(order, ["EVICTED", "REQUEUED", "PROVISIONED"]);
    assert!(events[from]["message"].as_str().unwrap_or_default().starts_with("evicted by admin: a higher-priority demo"), "{told}");
    assert_eq!(events[from]["actor"], "admin");
    // A GPR that is not running cannot be evicted.
    let queued = id_of(&create_gpr(&app, &token, &slice, "waiting", json!({})).await);
    let refused = app.ok(&app.admin_token, EVICT, json!({ "input": { "id": queued, "reason": "x" } })).await["evictGpr"].clone();
    assert_eq!(refused["userErrors"][0]["code"], "CONFLICT", "{refused}");
    app.finish().await;
}

const PLAN_WINDOW: &str = "mutation($input: PlanMaintenanceInput!) { planMaintenance(input: $input) { window { id state startsAt endsAt reason createdBy node { name } } userErrors { field message code } } }";
const CANCEL_WINDOW: &str =
    "mutation($input: CancelMaintenanceInput!) { cancelMaintenance(input: $input) { window { id state } userErrors { field message code } } }";
const WINDOWS: &str =
    "query($cluster: ID, $all: Boolean) { maintenanceWindows(clusterId: $cluster, includeFinished: $all) { id state reason node { name } } }";
const QUEUED_GPR: &str = "query($id: ID!) { gpr(id: $id) { phase startNoLaterThan events(first: 50) { nodes { kind message } } } }";

fn stamp(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn promise_of(gpr: &Value) -> Option<chrono::DateTime<chrono::Utc>> {
    gpr["startNoLaterThan"].as_str().and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok()).map(|t| t.with_timezone(&chrono::Utc))
}

async fn wait_gpr(app: &TestApp, token: &str, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let found = app.ok(token, QUEUED_GPR, json!({ "id": id })).await["gpr"].clone();
        if done(&found) {
            return found;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}: {found:#}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn windows(app: &TestApp, token: &str, cluster: &str, all: bool) -> Vec<Value> {
    app.ok(token, WINDOWS, json!({ "cluster": cluster, "all": all })).await["maintenanceWindows"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn a_maintenance_window_planned_ahead_is_planned_around_named_and_kept() {
    let app = TestApp::spawn().await;
    let (cluster, slice, token) = setup(&app, 2).await;
    let t0 = chrono::Utc::now();
    let hours = |h: f64| t0 + chrono::Duration::seconds((h * 3600.0) as i64);
    // Both nodes for an hour, from two hours on: promised then.
    let wide =
        id_of(&create_gpr(&app, &token, &slice, "wide", json!({ "nodeCount": 2, "duration": "1h", "earliestStartAt": stamp(hours(2.0)) })).await);
    let planned = wait_gpr(&app, &token, &wide, "a promise", |g| g["startNoLaterThan"].is_string()).await;
    assert_eq!(promise_of(&planned), Some(chrono::DateTime::parse_from_rfc3339(&stamp(hours(2.0))).expect("a time").into()));

    // h-1 is out from 2.5 h to 4 h: the window overlaps wide's span (provisioning, the hour,
    // the release), so wide waits for the node to be back.
    let h1 = id_of(&node(&app, &cluster, "h-1").await);
    let (from, until) = (stamp(hours(2.5)), stamp(hours(4.0)));
    let input = json!({ "nodeId": h1, "startsAt": from, "endsAt": until, "reason": "replace the PSU" });
    let by_user = app.gql(&token, PLAN_WINDOW, json!({ "input": input })).await;
    assert_eq!(by_user["errors"][0]["extensions"]["code"], "FORBIDDEN", "{by_user}");
    let made = app.mutate(&app.admin_token, "planMaintenance", PLAN_WINDOW, input).await["window"].clone();
    assert_eq!((made["state"].as_str(), made["node"]["name"].as_str(), made["createdBy"].as_str()), (Some("PLANNED"), Some("h-1"), Some("admin")));
    let window_id = made["id"].as_str().expect("an id").to_owned();
    let moved = wait_gpr(&app, &token, &wide, "the promise to move past the window", |g| promise_of(g) > Some(hours(3.0))).await;
    assert_eq!(promise_of(&moved).map(stamp), Some(until.clone()), "{moved:#}");
    let events = moved["events"]["nodes"].as_array().cloned().unwrap_or_default();
    let named = events.iter().filter_map(|e| e["message"].as_str()).find(|m| m.contains("the promise moved later"));
    let named = named.unwrap_or_else(|| panic!("no event names why the promise moved: {moved:#}"));
    assert!(named.contains("node `h-1` of its pool is planned out for maintenance") && named.contains(&window_id), "{named}");

    // Everyone signed in sees the window, on the node and in the list.
    let seen = windows(&app, &token, &cluster, false).await;
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0]["reason"].as_str(), seen[0]["node"]["name"].as_str()), (Some("replace the PSU"), Some("h-1")));
    let on_node = app.ok(&token, "query($id: ID!) { node(id: $id) { ... on GpuNode { maintenanceWindows { id } } } }", json!({ "id": h1 })).await;
    assert_eq!(on_node["node"]["maintenanceWindows"][0]["id"], window_id.as_str());

    // Refusals store nothing.
    let h0 = id_of(&node(&app, &cluster, "h-0").await);
    let refusals = [
        (json!({ "nodeId": h0, "startsAt": stamp(hours(5.0)), "endsAt": stamp(hours(5.0)), "reason": "x" }), "endsAt", "INVALID_INPUT"),
        (json!({ "nodeId": h0, "startsAt": stamp(hours(-1.0)), "endsAt": stamp(hours(1.0)), "reason": "x" }), "startsAt", "INVALID_INPUT"),
        (json!({ "nodeId": h0, "startsAt": stamp(hours(1.0)), "endsAt": stamp(hours(1.0 + 31.0 * 24.0)), "reason": "x" }), "endsAt", "INVALID_INPUT"),
        (
            json!({ "nodeId": h0, "startsAt": stamp(hours(400.0 * 24.0)), "endsAt": stamp(hours(400.0 * 24.0 + 1.0)), "reason": "x" }),
            "startsAt",
            "INVALID_INPUT",
        ),
        (json!({ "nodeId": h0, "startsAt": stamp(hours(1.0)), "endsAt": stamp(hours(2.0)), "reason": "  " }), "reason", "INVALID_INPUT"),
        (json!({ "nodeId": h1, "startsAt": stamp(hours(3.0)), "endsAt": stamp(hours(5.0)), "reason": "again" }), "startsAt", "CONFLICT"),
    ];
    for (input, field, code) in refusals {
        let refused = app.ok(&app.admin_token, PLAN_WINDOW, json!({ "input": input })).await["planMaintenance"].clone();
        assert!(refused["window"].is_null(), "{refused}");
        let errors = refused["userErrors"].as_array().cloned().unwrap_or_default();
        assert!(errors.iter().any(|e| e["field"] == json!(["input", field]) && e["code"] == code), "{input}: {refused}");
    }
    let unknown = app
        .gql(
            &app.admin_token,
            PLAN_WINDOW,
            json!({ "input": { "nodeId": id_of(&json!({ "id": cluster })), "startsAt": from, "endsAt": until, "reason": "x" } }),
        )
        .await;
    assert!(
        unknown["errors"][0]["extensions"]["code"] == "INVALID_INPUT"
            || unknown["data"]["planMaintenance"]["userErrors"][0]["code"] == "INVALID_INPUT",
        "a cluster's id is not a node's: {unknown}"
    );
    assert_eq!(windows(&app, &app.admin_token, &cluster, true).await.len(), 1, "the refusals stored nothing");

    // The window begins: h-1 is cordoned for it; wide keeps its promise.
    app.clock.advance(Duration::from_secs(2 * 3600 + 31 * 60));
    let cordoned = wait_node_state(&app, &cluster, "h-1", "CORDONED").await;
    let reason = cordoned["cordonReason"].as_str().unwrap_or_default();
    assert!(reason.starts_with("maintenance window until") && reason.ends_with("replace the PSU"), "{cordoned}");
    assert_eq!(windows(&app, &token, &cluster, false).await[0]["state"], "ACTIVE");
    let waiting = wait_gpr(&app, &token, &wide, "queued", |g| g["phase"] == "QUEUED").await;
    assert_eq!(promise_of(&waiting).map(stamp), Some(until.clone()), "the promise stands");

    // It ends: the node is back and wide starts.
    app.clock.advance(Duration::from_secs(90 * 60));
    wait_node_state(&app, &cluster, "h-1", "RESERVED").await;
    provisioned(&app, &token, &wide).await;
    // The tick that ended the window still counted the node: no "capacity lost" took wide's
    // promise away for a tick (it used to, and a GPR behind it could start first).
    let history = wait_gpr(&app, &token, &wide, "its history", |_| true).await;
    let moves: Vec<&str> = history["events"]["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["message"].as_str())
        .filter(|m| m.contains("moved later"))
        .collect();
    assert_eq!(moves.len(), 1, "only the window's planning moved the promise: {moves:#?}");
    assert!(
        history["events"]["nodes"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|e| !e["message"].as_str().unwrap_or_default().contains("unknown (it fits in no pool now)")),
        "{history:#}"
    );
    let all = windows(&app, &app.admin_token, &cluster, true).await;
    assert_eq!(all.iter().map(|w| w["state"].as_str()).collect::<Vec<_>>(), vec![Some("FINISHED")]);
    assert!(windows(&app, &token, &cluster, false).await.is_empty());

    // A window ahead is cancelled: gone, and a second cancel finds nothing.
    let later = json!({ "nodeId": h0, "startsAt": stamp(hours(30.0)), "endsAt": stamp(hours(31.0)), "reason": "BIOS" });
    let ahead = app.mutate(&app.admin_token, "planMaintenance", PLAN_WINDOW, later).await["window"]["id"].as_str().expect("an id").to_owned();
    let refused = app.gql(&token, CANCEL_WINDOW, json!({ "input": { "id": ahead } })).await;
    assert_eq!(refused["errors"][0]["extensions"]["code"], "FORBIDDEN", "{refused}");
    let cancelled = app.mutate(&app.admin_token, "cancelMaintenance", CANCEL_WINDOW, json!({ "id": ahead })).await;
    assert_eq!(cancelled["window"]["id"], ahead.as_str());
    assert!(windows(&app, &token, &cluster, false).await.is_empty());
    let again = app.gql(&app.admin_token, CANCEL_WINDOW, json!({ "input": { "id": ahead } })).await;
    assert_eq!(again["errors"][0]["extensions"]["code"], "NOT_FOUND", "{again}");
    app.finish().await;
}

#[tokio::test]
async fn a_window_that_begins_under_a_running_gpr_evicts_it_and_a_cancel_gives_the_node_back() {
    let app = TestApp::spawn().await;
    let (cluster, slice, token) = setup(&app, 2).await;
    let gpr = id_of(&create_gpr(&app, &token, &slice, "running", json!({ "priority": 150 })).await);
    provisioned(&app, &token, &gpr).await;
    let was_on = holder_node(&app, &cluster, &gpr).await;
    let node_id = id_of(&node(&app, &cluster, &was_on).await);
    let now = chrono::Utc::now();
    let input = json!({ "nodeId": node_id, "startsAt": stamp(now), "endsAt": stamp(now + chrono::Duration::hours(1)), "reason": "urgent firmware" });
    let made = app.mutate(&app.admin_token, "planMaintenance", PLAN_WINDOW, input).await["window"].clone();
    // Evicted and requeued at its priority; it runs again on the other node.
    wait_node_state(&app, &cluster, &was_on, "CORDONED").await;
    provisioned(&app, &token, &gpr).await;
    assert_ne!(holder_node(&app, &cluster, &gpr).await, was_on);
    let seen = app.ok(&token, QUEUED_GPR, json!({ "id": gpr })).await;
    let events = seen["gpr"]["events"]["nodes"].as_array().cloned().unwrap_or_default();
    let evicted = events.iter().find(|e| e["kind"] == "EVICTED").unwrap_or_else(|| panic!("no EVICTED event: {seen}"));
    assert!(evicted["message"].as_str().unwrap_or_default().contains("urgent firmware"), "{evicted}");
    // Cancelled while it runs: it ends now and the node is back.
    let ended = app.mutate(&app.admin_token, "cancelMaintenance", CANCEL_WINDOW, json!({ "id": made["id"] })).await;
    assert_eq!(ended["window"]["state"], "FINISHED", "{ended}");
    wait_node_state(&app, &cluster, &was_on, "AVAILABLE").await;
    app.finish().await;
}

#[tokio::test]
async fn a_node_takes_at_most_fifty_open_windows() {
    let app = TestApp::spawn().await;
    let (cluster, _, _) = setup(&app, 1).await;
    let h0 = id_of(&node(&app, &cluster, "h-0").await);
    let t0 = chrono::Utc::now() + chrono::Duration::hours(1);
    let at = |i: i64| stamp(t0 + chrono::Duration::hours(2 * i));
    for i in 0..50 {
        let input = json!({ "nodeId": h0, "startsAt": at(i), "endsAt": stamp(t0 + chrono::Duration::hours(2 * i + 1)), "reason": "firmware" });
        app.mutate(&app.admin_token, "planMaintenance", PLAN_WINDOW, input).await;
    }
    let over = json!({ "nodeId": h0, "startsAt": at(60), "endsAt": stamp(t0 + chrono::Duration::hours(121)), "reason": "one more" });
    let refused = app.ok(&app.admin_token, PLAN_WINDOW, json!({ "input": over })).await["planMaintenance"].clone();
    assert!(refused["window"].is_null(), "{refused}");
    assert_eq!(refused["userErrors"][0]["code"], "LIMIT_EXCEEDED", "{refused}");
    assert_eq!(windows(&app, &app.admin_token, &cluster, false).await.len(), 50, "the refusal stored nothing");
    app.finish().await;
}
