//! Slice isolation: a user of one slice never reads, counts or changes another slice's data,
//! through any query or mutation that takes a slice or a GPR — and the errors they get are the
//! same as for an object that does not exist.

use egs_tests::TestApp;
use egs_tests::api_only;
use egs_tests::fixtures::{self, TwoSlices};
use serde_json::{Value, json};

/// A well-formed id of the right type that names nothing.
fn missing(kind: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{kind}:999999"))
}

struct World {
    app: TestApp,
    two: TwoSlices,
    /// A GPR in slice B (bob's), and one of its events.
    gpr_b: String,
    event_b: String,
}

async fn world() -> World {
    let app = TestApp::spawn_with(api_only).await;
    let two = fixtures::two_slices(&app).await;
    fixtures::create_gpr(&app, &two.token_a, &two.slice_a, "alice-job", json!({})).await;
    let gpr_b = fixtures::create_gpr(&app, &two.token_b, &two.slice_b, "bob-job", json!({})).await["id"].as_str().expect("id").to_owned();
    let events = app.ok(&two.token_b, "query($id: ID!) { gpr(id: $id) { events { edges { node { id } } } } }", json!({ "id": gpr_b })).await;
    let event_b = events["gpr"]["events"]["edges"][0]["node"]["id"].as_str().expect("event").to_owned();
    World { app, two, gpr_b, event_b }
}

/// The error of a GraphQL response: (code, message).
fn error_of(body: &Value) -> (String, String) {
    let error = &body["errors"][0];
    (error["extensions"]["code"].as_str().unwrap_or_default().to_owned(), error["message"].as_str().unwrap_or_default().to_owned())
}

#[tokio::test]
async fn lists_and_counts_show_only_the_callers_slices() {
    let World { app, two, .. } = world().await;
    let data = app
        .ok(
            &two.token_a,
            "{ slices { totalCount edges { node { name } } } gprs { totalCount edges { node { name slice { name } } } } gprEvents { totalCount edges { node { gpr { name } } } } }",
            json!({}),
        )
        .await;
    assert_eq!(data["slices"]["totalCount"], 1);
    assert_eq!(data["slices"]["edges"][0]["node"]["name"], "team-a");
    assert_eq!(data["gprs"]["totalCount"], 1);
    assert_eq!(data["gprs"]["edges"][0]["node"]["name"], "alice-job");
    let event_gprs: Vec<&Value> = data["gprEvents"]["edges"].as_array().expect("edges").iter().map(|e| &e["node"]["gpr"]["name"]).collect();
    assert!(!event_gprs.is_empty() && event_gprs.iter().all(|n| *n == "alice-job"), "{data}");
    assert_eq!(data["gprEvents"]["totalCount"], event_gprs.len());

    // Filtering by the other slice yields nothing to count, not an error that confirms it exists.
    let filtered = app.ok(&two.token_a, "query($s: ID!) { gprs(filter: { sliceId: $s }) { totalCount } }", json!({ "s": two.slice_b })).await;
    assert_eq!(filtered["gprs"]["totalCount"], 0);

    let admin = app.ok(&app.admin_token, "{ slices { totalCount } gprs { totalCount } }", json!({})).await;
    assert_eq!(admin["slices"]["totalCount"], 2);
    assert_eq!(admin["gprs"]["totalCount"], 2);
    app.finish().await;
}

#[tokio::test]
async fn reading_another_slices_objects_reads_as_not_found() {
    let World { app, two, gpr_b, event_b } = world().await;
    let cases: Vec<(&str, &str, Value, Value)> = vec![
        ("slice(id)", "query($id: ID) { slice(id: $id) { name } }", json!({ "id": two.slice_b }), json!({ "id": missing("Slice") })),
        ("slice(name)", "query($n: String) { slice(name: $n) { name } }", json!({ "n": "team-b" }), json!({ "n": "no-such-slice" })),
        ("gpr", "query($id: ID!) { gpr(id: $id) { name } }", json!({ "id": gpr_b }), json!({ "id": missing("Gpr") })),
        ("node(gpr)", "query($id: ID!) { node(id: $id) { id } }", json!({ "id": gpr_b }), json!({ "id": missing("Gpr") })),
        ("node(slice)", "query($id: ID!) { node(id: $id) { id } }", json!({ "id": two.slice_b }), json!({ "id": missing("Slice") })),
        ("node(event)", "query($id: ID!) { node(id: $id) { id } }", json!({ "id": event_b }), json!({ "id": missing("GprEvent") })),
        ("gprEvents(gprId)", "query($id: ID) { gprEvents(gprId: $id) { totalCount } }", json!({ "id": gpr_b }), json!({ "id": missing("Gpr") })),
        (
            "gprEvents(sliceId)",
            "query($id: ID) { gprEvents(sliceId: $id) { totalCount } }",
            json!({ "id": two.slice_b }),
            json!({ "id": missing("Slice") }),
        ),
    ];
    for (case, query, hidden, absent) in cases {
        let seen = app.gql(&two.token_a, query, hidden).await;
        let none = app.gql(&two.token_a, query, absent).await;
        assert_eq!(error_of(&seen).0, "NOT_FOUND", "{case}: {seen}");
        assert_eq!(error_of(&seen), error_of(&none), "{case}: a hidden object must read exactly like a missing one");
        assert!(!seen.to_string().contains("team-b") && !seen.to_string().contains("bob-job"), "{case} leaked: {seen}");
    }
    app.finish().await;
}

#[tokio::test]
async fn changing_another_slices_objects_fails_and_changes_nothing() {
    let World { app, two, gpr_b, .. } = world().await;
    let before = app.ok(&app.admin_token, "query($id: ID!) { gpr(id: $id) { name phase version priority nodeCount events { totalCount } } slice(name: \"team-b\") { members { user { name } role } namespaces { name } policy { priorityMax } } }", json!({ "id": gpr_b })).await;
    let alice_id = app.ok(&two.token_a, "{ viewer { id } }", json!({})).await["viewer"]["id"].clone();
    let cases: Vec<(&str, &str, Value, &str)> = vec![
        ("createGpr", fixtures::CREATE_GPR, json!({ "sliceId": two.slice_b, "name": "sneaky", "nodeCount": 1, "duration": "1h" }), "NOT_FOUND"),
        (
            "updateGpr",
            "mutation($input: UpdateGprInput!) { updateGpr(input: $input) { gpr { id } userErrors { code } } }",
            json!({ "id": gpr_b, "version": 1, "nodeCount": 2 }),
            "NOT_FOUND",
        ),
        (
            "cancelGpr",
            "mutation($input: GprActionInput!) { cancelGpr(input: $input) { gpr { id } userErrors { code } } }",
            json!({ "id": gpr_b }),
            "NOT_FOUND",
        ),
        (
            "earlyReleaseGpr",
            "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { id } userErrors { code } } }",
            json!({ "id": gpr_b }),
            "NOT_FOUND",
        ),
        (
            "setGprPriority",
            "mutation($input: SetGprPriorityInput!) { setGprPriority(input: $input) { gpr { id } userErrors { code } } }",
            json!({ "id": gpr_b, "priority": 300 }),
            "FORBIDDEN",
        ),
        (
            "approveGpr",
            "mutation($input: GprDecisionInput!) { approveGpr(input: $input) { gpr { id } userErrors { code } } }",
            json!({ "id": gpr_b }),
            "FORBIDDEN",
        ),
        (
            "rejectGpr",
            "mutation($input: GprDecisionInput!) { rejectGpr(input: $input) { gpr { id } userErrors { code } } }",
            json!({ "id": gpr_b }),
            "FORBIDDEN",
        ),
        (
            "addSliceMember",
            "mutation($input: AddSliceMemberInput!) { addSliceMember(input: $input) { slice { id } userErrors { code } } }",
            json!({ "sliceId": two.slice_b, "userId": alice_id, "role": "OWNER" }),
            "NOT_FOUND",
        ),
        (
            "removeSliceMember",
            "mutation($input: RemoveSliceMemberInput!) { removeSliceMember(input: $input) { slice { id } userErrors { code } } }",
            json!({ "sliceId": two.slice_b, "userId": alice_id }),
            "NOT_FOUND",
        ),
        (
            "addSliceNamespace",
            "mutation($input: SliceNamespaceInput!) { addSliceNamespace(input: $input) { slice { id } userErrors { code } } }",
            json!({ "sliceId": two.slice_b, "clusterId": two.cluster, "name": "grab" }),
            "FORBIDDEN",
        ),
        (
            "removeSliceNamespace",
            "mutation($input: SliceNamespaceInput!) { removeSliceNamespace(input: $input) { slice { id } userErrors { code } } }",
            json!({ "sliceId": two.slice_b, "clusterId": two.cluster, "name": "team-b" }),
            "FORBIDDEN",
        ),
        (
            "setSlicePolicy",
            "mutation($input: SetSlicePolicyInput!) { setSlicePolicy(input: $input) { slice { id } userErrors { code } } }",
            json!({ "sliceId": two.slice_b, "policy": { "priorityMax": 1 } }),
            "FORBIDDEN",
        ),
        (
            "updateSlice",
            "mutation($input: UpdateSliceInput!) { updateSlice(input: $input) { slice { id } userErrors { code } } }",
            json!({ "id": two.slice_b, "name": "renamed" }),
            "FORBIDDEN",
        ),
        (
            "deleteSlice",
            "mutation($input: DeleteSliceInput!) { deleteSlice(input: $input) { slice { id } userErrors { code } } }",
            json!({ "id": two.slice_b }),
            "FORBIDDEN",
        ),
    ];
    for (case, mutation, input, code) in cases {
        let body = app.gql(&two.token_a, mutation, json!({ "input": input })).await;
        assert_eq!(error_of(&body).0, code, "{case}: {body}");
        assert!(!body.to_string().contains("team-b") && !body.to_string().contains("bob-job"), "{case} leaked: {body}");
    }
    let after = app.ok(&app.admin_token, "query($id: ID!) { gpr(id: $id) { name phase version priority nodeCount events { totalCount } } slice(name: \"team-b\") { members { user { name } role } namespaces { name } policy { priorityMax } } }", json!({ "id": gpr_b })).await;
    assert_eq!(before, after, "slice B is exactly as it was");
    let gprs_b = app.ok(&app.admin_token, "query($s: ID!) { gprs(filter: { sliceId: $s }) { totalCount } }", json!({ "s": two.slice_b })).await;
    assert_eq!(gprs_b["gprs"]["totalCount"], 1, "no GPR was created in slice B");
    app.finish().await;
}

#[tokio::test]
async fn a_node_allocated_to_another_slice_does_not_reveal_its_gpr() {
    use egs_entities::{NodeState, node};
    use sea_orm::{ActiveModelTrait, EntityTrait, Set};
    let World { app, two, gpr_b, .. } = world().await;
    let (_, gpr_row) = egs_domain::ids::decode_any(&gpr_b).expect("gpr id");
    let first = node::Entity::find().one(&app.db).await.expect("query").expect("a node");
    let node_id = egs_domain::ids::encode(egs_domain::ids::Kind::GpuNode, first.id);
    let mut held: node::ActiveModel = first.into();
    held.state = Set(NodeState::Reserved);
    held.allocated_gpr_id = Set(Some(gpr_row));
    held.update(&app.db).await.expect("allocate");

    let query = "query($id: ID!) { node(id: $id) { ... on GpuNode { state allocatedGpr { name } } } }";
    let as_alice = app.ok(&two.token_a, query, json!({ "id": node_id })).await;
    assert_eq!(as_alice["node"], json!({ "state": "RESERVED", "allocatedGpr": null }));
    let as_bob = app.ok(&two.token_b, query, json!({ "id": node_id })).await;
    assert_eq!(as_bob["node"]["allocatedGpr"]["name"], "bob-job");
    app.finish().await;
}

/// List pages read their items' relations ahead, whoever may see them (another slice's GPR
/// holding a node on the page included), and keep them for the rest of the query: what each
/// field hands out must still be only what its caller may see, whichever root field read it.
#[tokio::test]
async fn pages_that_read_ahead_hand_out_only_what_the_caller_may_see() {
    use egs_entities::{NodeState, node};
    use sea_orm::{ActiveModelTrait, EntityTrait, Set};
    let World { app, two, gpr_b, .. } = world().await;
    let (_, gpr_row) = egs_domain::ids::decode_any(&gpr_b).expect("gpr id");
    let first = node::Entity::find().one(&app.db).await.expect("query").expect("a node");
    let held_name = first.name.clone();
    let mut held: node::ActiveModel = first.into();
    held.state = Set(NodeState::Reserved);
    held.allocated_gpr_id = Set(Some(gpr_row));
    held.update(&app.db).await.expect("allocate");

    // Bob's GPR is read ahead by both pages (and Alice's own GPRs by the third root field).
    let query = "{ mine: gprs(first: 100) { nodes { name } } \
                   nodes(first: 100) { nodes { name allocatedGpr { name } } } \
                   gpus(first: 100) { nodes { node { name allocatedGpr { name } } latestSample { util } } } }";
    let as_alice = app.ok(&two.token_a, query, json!({})).await;
    let mine: Vec<&str> = as_alice["mine"]["nodes"].as_array().expect("gprs").iter().filter_map(|g| g["name"].as_str()).collect();
    assert_eq!(mine, ["alice-job"], "{as_alice}");
    let nodes = as_alice["nodes"]["nodes"].as_array().expect("nodes");
    assert!(nodes.iter().any(|n| n["name"] == held_name.as_str()), "the held node is on the page: {as_alice}");
    assert!(nodes.iter().all(|n| n["allocatedGpr"].is_null()), "no GPR of slice B through the node page: {as_alice}");
    let gpus = as_alice["gpus"]["nodes"].as_array().expect("gpus");
    assert!(gpus.iter().any(|g| g["node"]["name"] == held_name.as_str()), "the held node's GPUs are on the page: {as_alice}");
    assert!(gpus.iter().all(|g| g["node"]["allocatedGpr"].is_null()), "no GPR of slice B through the GPU page: {as_alice}");
    assert!(gpus.iter().all(|g| g["latestSample"].is_null()), "no samples of a node Alice does not hold: {as_alice}");

    // A viewer of slice A reads the same as Alice; an agent token reads no inventory pages.
    let (_, viewer) = fixtures::member(&app, "vera", &two.slice_a, "VIEWER").await;
    let as_viewer = app.ok(&viewer, query, json!({})).await;
    assert_eq!((&as_viewer["nodes"], &as_viewer["gpus"]), (&as_alice["nodes"], &as_alice["gpus"]), "{as_viewer}");
    let agent = fixtures::agent_token(&app, &two.cluster, &held_name).await;
    let as_agent = app.gql(&agent, query, json!({})).await;
    assert!(as_agent["errors"].as_array().is_some_and(|e| !e.is_empty()), "agents read no pages: {as_agent}");
    assert!(!as_agent.to_string().contains("bob-job"), "{as_agent}");

    let as_bob = app.ok(&two.token_b, query, json!({})).await;
    let bobs: Vec<&Value> = as_bob["nodes"]["nodes"].as_array().expect("nodes").iter().filter(|n| n["allocatedGpr"]["name"] == "bob-job").collect();
    assert_eq!(bobs.len(), 1, "Bob sees his GPR on the node it holds: {as_bob}");
    app.finish().await;
}

/// Reports `node` of `cluster` with the given GPU UUIDs, as `token`; the mutation's payload.
async fn report_gpus(app: &TestApp, token: &str, cluster: &str, node: &str, uuids: &[String]) -> Value {
    let gpus: Vec<Value> = uuids.iter().enumerate().map(|(i, u)| json!({ "uuid": u, "index": i, "model": "H100", "memoryMib": 81559 })).collect();
    let input = json!({ "clusterId": cluster, "nodes": [{
        "name": node, "instanceType": "p5.48xlarge", "gpuShape": fixtures::SHAPE_H100, "gpusPerNode": 8, "gpuMemoryMib": 81559, "gpus": gpus,
    }] });
    let query = "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { id } userErrors { field message code } } }";
    app.gql(token, query, json!({ "input": input })).await
}

/// Where each GPU UUID is stored: its node's name.
async fn gpu_homes(app: &TestApp) -> std::collections::BTreeMap<String, String> {
    use sea_orm::EntityTrait;
    let nodes: std::collections::BTreeMap<i64, String> =
        egs_entities::node::Entity::find().all(&app.db).await.expect("nodes").into_iter().map(|n| (n.id, n.name)).collect();
    egs_entities::gpu::Entity::find().all(&app.db).await.expect("gpus").into_iter().map(|g| (g.uuid, nodes[&g.node_id].clone())).collect()
}

fn error_code(body: &Value) -> Value {
    match body["errors"][0]["extensions"]["code"].clone() {
        Value::Null => body["data"]["upsertNodes"]["userErrors"][0]["code"].clone(),
        code => code,
    }
}

#[tokio::test]
async fn an_agent_cannot_take_the_gpus_of_a_node_it_may_not_write() {
    let app = TestApp::spawn_with(api_only).await;
    let c1 = fixtures::register_cluster(&app, "c1").await;
    let c2 = fixtures::register_cluster(&app, "c2").await;
    fixtures::add_nodes(&app, &c1, "a", 2, fixtures::SHAPE_H100, 8).await;
    fixtures::add_nodes(&app, &c2, "b", 1, fixtures::SHAPE_H100, 8).await;
    let before = gpu_homes(&app).await;
    let of = |node: &str| before.iter().filter(|(_, n)| n.as_str() == node).map(|(u, _)| u.clone()).collect::<Vec<String>>();
    let (own, neighbour, foreign) = (of("a-0"), of("a-1"), of("b-0"));
    assert_eq!((own.len(), neighbour.len(), foreign.len()), (8, 8, 8));
    let agent = fixtures::agent_token(&app, &c1, "a-0").await;

    // Its own node with a GPU of the node beside it, or of another cluster's node: refused.
    for stolen in [&neighbour[0], &foreign[0]] {
        let mut uuids = own[..7].to_vec();
        uuids.push(stolen.clone());
        let body = report_gpus(&app, &agent, &c1, "a-0", &uuids).await;
        assert_eq!(error_code(&body), "FORBIDDEN", "{body}");
        assert!(!body.to_string().contains("a-1") && !body.to_string().contains("b-0"), "the error names the victim: {body}");
        assert_eq!(gpu_homes(&app).await, before, "nothing moved, nothing was deleted");
    }
    // Its own GPUs, reported again: fine.
    let body = report_gpus(&app, &agent, &c1, "a-0", &own).await;
    assert!(body["errors"].is_null() && body["data"]["upsertNodes"]["userErrors"] == json!([]), "{body}");

    // An admin may move a GPU between nodes of one cluster (a card moved), not across clusters.
    let body = report_gpus(&app, &app.admin_token, &c2, "b-0", &[own[0].clone()]).await;
    assert_eq!(error_code(&body), "FORBIDDEN", "{body}");
    assert_eq!(gpu_homes(&app).await, before);
    let mut uuids = neighbour.clone();
    uuids[7] = own[7].clone();
    let body = report_gpus(&app, &app.admin_token, &c1, "a-1", &uuids).await;
    assert!(body["errors"].is_null() && body["data"]["upsertNodes"]["userErrors"] == json!([]), "{body}");
    assert_eq!(gpu_homes(&app).await[&own[7]], "a-1");
    app.finish().await;
}

/// One `upsertNodes` call writes all its nodes' GPUs together: a GPU another node of the call
/// reports moves there with its row, one no report names leaves, a new one is added, and the
/// call costs about one statement per node (it was one per GPU and three per node). A GPU
/// reported on two nodes of one call is refused and nothing changes.
#[tokio::test]
async fn one_upsert_call_replaces_the_gpus_of_all_its_nodes_at_once() {
    use egs_entities::gpu;
    use sea_orm::EntityTrait;
    let app = TestApp::spawn_with(api_only).await;
    let c1 = fixtures::register_cluster(&app, "c1").await;
    fixtures::add_nodes(&app, &c1, "a", 3, fixtures::SHAPE_H100, 8).await;
    let before = gpu_homes(&app).await;
    let of = |node: &str| before.iter().filter(|(_, n)| n.as_str() == node).map(|(u, _)| u.clone()).collect::<Vec<String>>();
    let (a0, a1, a2) = (of("a-0"), of("a-1"), of("a-2"));
    let row_of = |rows: &[gpu::Model], uuid: &str| rows.iter().find(|g| g.uuid == uuid).map(|g| g.id);
    let rows_before = gpu::Entity::find().all(&app.db).await.expect("gpus");

    let node = |name: &str, uuids: &[String]| {
        let gpus: Vec<Value> = uuids.iter().enumerate().map(|(i, u)| json!({ "uuid": u, "index": i, "model": "H100", "memoryMib": 81559 })).collect();
        json!({ "name": name, "instanceType": "p5.48xlarge", "gpuShape": fixtures::SHAPE_H100, "gpusPerNode": 8, "gpuMemoryMib": 81559, "gpus": gpus })
    };
    let query = "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { id } userErrors { field message code } } }";

    // The same GPU on two nodes of one call: refused, nothing stored.
    let mut a1_and_a_gpu_of_a0 = a1[1..].to_vec();
    a1_and_a_gpu_of_a0.push(a0[0].clone());
    let twice = json!({ "clusterId": c1, "nodes": [node("a-0", &a0), node("a-1", &a1_and_a_gpu_of_a0)] });
    let body = app.gql(&app.admin_token, query, json!({ "input": twice })).await;
    let error = &body["data"]["upsertNodes"]["userErrors"][0];
    let field: Vec<&str> = error["field"].as_array().expect("a field").iter().filter_map(Value::as_str).collect();
    assert_eq!((error["code"].as_str(), field.join(".").as_str()), (Some("INVALID_INPUT"), "input.nodes.1.gpus.7.uuid"), "{body}");
    assert_eq!(gpu_homes(&app).await, before, "nothing changed");

    // a-0 gives its last GPU to a-1, which drops its own last one; a-2 gets a new card.
    let mut on_a0 = a0.clone();
    let moved = on_a0.pop().expect("a GPU");
    let mut on_a1 = a1[..7].to_vec();
    on_a1.push(moved.clone());
    let mut on_a2 = a2[..7].to_vec();
    on_a2.push("GPU-new-card".into());
    let call = json!({ "clusterId": c1, "nodes": [node("a-0", &on_a0), node("a-1", &on_a1), node("a-2", &on_a2)] });
    let body = app.gql(&app.admin_token, query, json!({ "input": call })).await;
    assert_eq!(body["data"]["upsertNodes"]["userErrors"], json!([]), "{body}");

    let after = gpu_homes(&app).await;
    assert_eq!(after[&moved], "a-1");
    assert!(!after.contains_key(&a1[7]) && !after.contains_key(&a2[7]), "GPUs no report names are gone: {after:?}");
    assert_eq!(after["GPU-new-card"], "a-2");
    assert_eq!(after.values().filter(|n| n.as_str() == "a-0").count(), 7);
    let rows_after = gpu::Entity::find().all(&app.db).await.expect("gpus");
    assert_eq!(row_of(&rows_after, &moved), row_of(&rows_before, &moved), "the moved GPU keeps its row (and its history)");
    assert_eq!(row_of(&rows_after, &a0[0]), row_of(&rows_before, &a0[0]), "an unchanged GPU keeps its row");

    // Registering nodes of 8 GPUs, and registering them again unchanged: one save per node and
    // a handful for the call (the cluster, the nodes by name, the GPUs by UUID and by node, the
    // GPUs inserted or stamped). The fewest of three tries counts: a background tailer's poll
    // can land inside a call on a busy machine and is not the call's cost.
    for n in [10, 40] {
        let (mut new, mut again) = (u64::MAX, u64::MAX);
        for attempt in 0..3 {
            for fewest in [&mut new, &mut again] {
                let before = app.statements.get();
                fixtures::add_nodes(&app, &c1, &format!("x{n}-{attempt}"), n, fixtures::SHAPE_H100, 8).await;
                *fewest = (*fewest).min(app.statements.get() - before);
            }
        }
        assert!(new <= n as u64 + 8 && again <= n as u64 + 8, "{new} statements to register {n} nodes, {again} to register them again");
    }
    app.finish().await;
}
