//! `inventoryChanged` over a real WebSocket: nodes added, updated, turning unhealthy or stale
//! and back, allocated and released, and removed, seen by subscribers of their cluster on any
//! replica; and `removeNode`'s rules.

use crate::alerts::{nodes, provisioned_node};
use chrono::Utc;
use egs_tests::TestApp;
use egs_tests::fixtures::*;
use egs_tests::ws::Socket;
use serde_json::{Value, json};
use std::time::Duration;

const CHANGES: &str = "subscription($cluster: ID) { inventoryChanged(clusterId: $cluster) {
    kind nodeId nodeName clusterId health previousHealth state node { id name health } cluster { name } } }";
const UPSERT: &str = "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { id } userErrors { field message code } } }";
const REMOVE: &str = "mutation($input: RemoveNodeInput!) { removeNode(input: $input) { node { id name } userErrors { field message code } } }";

fn node_input(name: &str, health: Option<&str>) -> Value {
    let mut node = json!({
        "name": name, "instanceType": "p5.48xlarge", "gpuShape": SHAPE_H100, "gpusPerNode": 1, "gpuMemoryMib": 81559,
        "gpus": [{ "uuid": format!("GPU-{name}"), "index": 0, "model": SHAPE_H100, "memoryMib": 81559 }],
    });
    if let Some(health) = health {
        node["health"] = json!(health);
    }
    node
}

/// The next change of subscription `id`, skipping those of other nodes.
async fn change_of(socket: &mut Socket, id: &str, node_name: &str) -> Value {
    loop {
        let change = socket.next(id, "inventoryChanged").await;
        if change["nodeName"] == node_name {
            return change;
        }
    }
}

#[tokio::test]
async fn nodes_added_updated_unhealthy_and_removed_reach_subscribers_of_their_cluster() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    let other = register_cluster(&app, "c2").await;
    let mut admin = Socket::open(&app, &app.admin_token).await;
    admin.subscribe("c1", CHANGES, json!({ "cluster": cluster })).await;
    // Users see the inventory too (not who holds it).
    let (_, user) = member(&app, "carol", &create_slice(&app, "team-c", &cluster, json!({})).await, "VIEWER").await;
    let mut viewer = Socket::open(&app, &user).await;
    viewer.subscribe("all", CHANGES, json!({})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;

    app.mutate(&app.admin_token, "upsertNodes", UPSERT, json!({ "clusterId": other, "nodes": [node_input("elsewhere", None)] })).await;
    let added = app.mutate(&app.admin_token, "upsertNodes", UPSERT, json!({ "clusterId": cluster, "nodes": [node_input("n1", None)] })).await;
    let node_id = added["nodes"][0]["id"].as_str().expect("id").to_owned();
    let change = admin.next("c1", "inventoryChanged").await;
    assert_eq!(
        (change["kind"].as_str(), change["nodeId"].as_str(), change["clusterId"].as_str()),
        (Some("NODE_ADDED"), Some(node_id.as_str()), Some(cluster.as_str())),
        "only the cluster's own nodes: {change}"
    );
    assert_eq!((&change["health"], &change["previousHealth"], &change["node"]["name"]), (&json!("HEALTHY"), &Value::Null, &json!("n1")));
    assert_eq!(change["cluster"]["name"], "c1");
    let seen = change_of(&mut viewer, "all", "n1").await;
    assert_eq!(seen["kind"], "NODE_ADDED", "{seen}");

    // The same report again is no change; a reported fault is.
    app.mutate(&app.admin_token, "upsertNodes", UPSERT, json!({ "clusterId": cluster, "nodes": [node_input("n1", None)] })).await;
    app.mutate(&app.admin_token, "upsertNodes", UPSERT, json!({ "clusterId": cluster, "nodes": [node_input("n1", Some("UNHEALTHY"))] })).await;
    let change = admin.next("c1", "inventoryChanged").await;
    assert_eq!(
        (change["kind"].as_str(), change["previousHealth"].as_str(), change["health"].as_str()),
        (Some("HEALTH_CHANGED"), Some("HEALTHY"), Some("UNHEALTHY")),
        "{change}"
    );
    let mut described = node_input("n1", Some("UNHEALTHY"));
    described["driverVersion"] = json!("550.54.15");
    app.mutate(&app.admin_token, "upsertNodes", UPSERT, json!({ "clusterId": cluster, "nodes": [described] })).await;
    assert_eq!(admin.next("c1", "inventoryChanged").await["kind"], "NODE_UPDATED");

    let removed = app.mutate(&app.admin_token, "removeNode", REMOVE, json!({ "id": node_id })).await;
    assert_eq!(removed["node"]["name"], "n1");
    let change = admin.next("c1", "inventoryChanged").await;
    assert_eq!((change["kind"].as_str(), &change["node"], change["nodeId"].as_str()), (Some("NODE_REMOVED"), &Value::Null, Some(node_id.as_str())));
    admin.quiet_for(Duration::from_millis(500)).await;
    // Users may not remove nodes; a removed node is gone.
    let body = app.gql(&user, REMOVE, json!({ "input": { "id": node_id } })).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "FORBIDDEN", "{body}");
    let body = app.gql(&app.admin_token, REMOVE, json!({ "input": { "id": node_id } })).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "NOT_FOUND", "{body}");
    app.finish().await;
}

#[tokio::test]
async fn a_node_turning_stale_and_back_is_a_health_change() {
    use sea_orm::sea_query::Expr;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 1, SHAPE_H100, 1).await;
    let node = nodes(&app, &cluster).await.remove(0);
    let agent = agent_token(&app, &cluster, &node.name).await;
    let report = "mutation($input: ReportGpuSamplesInput!) { reportGpuSamples(input: $input) { accepted userErrors { field message code } } }";
    let agent_report = || {
        let sample = json!({ "uuid": node.uuids[0], "timestamp": Utc::now().to_rfc3339(), "util": 5.0, "memUtil": 1.0, "memUsedMib": 100.0,
            "temperature": 40.0, "power": 100.0, "smClockMhz": 1000.0 });
        app.mutate(&agent, "reportGpuSamples", report, json!({ "clusterId": cluster, "nodeName": node.name, "samples": [sample] }))
    };
    agent_report().await;
    let mut socket = Socket::open(&app, &app.admin_token).await;
    socket.subscribe("s", CHANGES, json!({ "cluster": cluster })).await;
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Its agent's last word was 31 s ago: nobody wrote the node, time alone made it stale.
    egs_entities::node::Entity::update_many()
        .col_expr(egs_entities::node::Column::LastHeartbeatAt, Expr::value(Utc::now() - chrono::Duration::seconds(31)))
        .filter(egs_entities::node::Column::Name.eq(node.name.as_str()))
        .exec(&app.db)
        .await
        .expect("age the heartbeat");
    let stale = socket.next("s", "inventoryChanged").await;
    assert_eq!(
        (stale["kind"].as_str(), stale["previousHealth"].as_str(), stale["health"].as_str(), stale["node"]["health"].as_str()),
        (Some("HEALTH_CHANGED"), Some("HEALTHY"), Some("STALE"), Some("STALE")),
        "{stale}"
    );
    agent_report().await;
    let back = socket.next("s", "inventoryChanged").await;
    assert_eq!((back["kind"].as_str(), back["health"].as_str()), (Some("HEALTH_CHANGED"), Some("HEALTHY")), "{back}");
    socket.quiet_for(Duration::from_millis(2500)).await;
    app.finish().await;
}

#[tokio::test]
async fn nodes_allocated_and_released_are_seen_on_another_replica_and_held_nodes_stay() {
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await;
    let replica = app.spawn_replica_with(egs_tests::api_only).await;
    let mut socket = Socket::open(&replica, &two.token_b).await;
    socket.subscribe("s", CHANGES, json!({ "cluster": two.cluster })).await;
    tokio::time::sleep(Duration::from_millis(300)).await;

    let gpr = create_gpr(&app, &two.token_a, &two.slice_a, "train", json!({ "nodeCount": 1 })).await["id"].as_str().expect("id").to_owned();
    let (node_id, node_name, _) = provisioned_node(&app, &two.token_a, &gpr).await;
    let allocated = change_of(&mut socket, "s", &node_name).await;
    assert_eq!((allocated["kind"].as_str(), allocated["state"].as_str()), (Some("ALLOCATED"), Some("RESERVED")), "{allocated}");
    assert_eq!(allocated["nodeId"], node_id.as_str());

    // A held node cannot be removed.
    let refused = app.ok(&app.admin_token, REMOVE, json!({ "input": { "id": node_id } })).await["removeNode"].clone();
    assert_eq!((&refused["node"], &refused["userErrors"][0]["code"]), (&Value::Null, &json!("CONFLICT")), "{refused}");

    let release = "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { phase } userErrors { field message code } } }";
    app.mutate(&two.token_a, "earlyReleaseGpr", release, json!({ "id": gpr })).await;
    let released = change_of(&mut socket, "s", &node_name).await;
    assert_eq!((released["kind"].as_str(), released["state"].as_str()), (Some("RELEASED"), Some("AVAILABLE")), "{released}");
    replica.finish().await;
    app.finish().await;
}
