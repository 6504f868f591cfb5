//! The GPR lifecycle through GraphQL: the real scheduler loop, the simulated provider, durable
//! timers. Time in the window moves with the app's clock, not by sleeping.

use egs_tests::TestApp;
use egs_tests::fixtures::*;
use serde_json::{Value, json};
use std::time::Duration;

const GPR: &str = "query($id: ID!) { gpr(id: $id) { id name phase priority version queuePosition startNoLaterThan estimatedStartAt estimatedWait
    releaseReason provisionedAt exitAt completedAt reason preemptedBy { id } assignedCluster { id } assignedGpuShape nodes { id name } } }";
const EVENTS: &str = "query($id: ID!) { gprEvents(gprId: $id, first: 100) { nodes { kind message } } }";

async fn gpr(app: &TestApp, token: &str, id: &str) -> Value {
    app.ok(token, GPR, json!({ "id": id })).await["gpr"].clone()
}

/// Polls the GPR until `done` holds (the loop ticks every second and on every mutation).
async fn wait_for(app: &TestApp, token: &str, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let current = gpr(app, token, id).await;
        if done(&current) {
            return current;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}; the GPR is {current:#}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_phase(app: &TestApp, token: &str, id: &str, phase: &str) -> Value {
    wait_for(app, token, id, phase, |g| g["phase"] == phase).await
}

async fn event_kinds(app: &TestApp, token: &str, id: &str) -> Vec<String> {
    let events = app.ok(token, EVENTS, json!({ "id": id })).await;
    events["gprEvents"]["nodes"].as_array().expect("events").iter().map(|e| e["kind"].as_str().unwrap_or_default().to_owned()).collect()
}

fn count(kinds: &[String], kind: &str) -> usize {
    kinds.iter().filter(|k| *k == kind).count()
}

#[tokio::test]
async fn a_gpr_is_provisioned_progresses_and_exits_on_time_once() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    let created = create_gpr(&app, &setup.token_a, &setup.slice_a, "train", json!({ "nodeCount": 2, "duration": "2h" })).await;
    let id = id_of(&created);
    let provisioned = wait_phase(&app, &setup.token_a, &id, "PROVISIONED").await;
    assert_eq!(provisioned["nodes"].as_array().map(Vec::len), Some(2), "{provisioned}");
    assert_eq!(provisioned["assignedGpuShape"], SHAPE_H100);
    let window = time(&provisioned["exitAt"]) - time(&provisioned["provisionedAt"]);
    assert_eq!(window.num_seconds(), 7200);
    let kinds = event_kinds(&app, &setup.token_a, &id).await;
    for kind in ["CREATED", "QUEUED", "PROVISIONING_STARTED", "PRECHECK_PASSED", "PROVISIONED"] {
        assert_eq!(count(&kinds, kind), 1, "{kind} in {kinds:?}");
    }

    // Half the window: the 25 % and 50 % events, once each.
    app.clock.advance(Duration::from_secs(61 * 60));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while count(&event_kinds(&app, &setup.token_a, &id).await, "PROGRESS_50") == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no 50 % event");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Past the end: 75 %, the exit warning, the release and the completion.
    app.clock.advance(Duration::from_secs(60 * 60));
    let done = wait_phase(&app, &setup.token_a, &id, "COMPLETED").await;
    assert_eq!(done["releaseReason"], "EXPIRED");
    tokio::time::sleep(Duration::from_millis(1500)).await; // more ticks must not repeat anything
    let kinds = event_kinds(&app, &setup.token_a, &id).await;
    for kind in ["PROGRESS_25", "PROGRESS_50", "PROGRESS_75", "EXIT_WARNING", "RELEASING", "COMPLETED"] {
        assert_eq!(count(&kinds, kind), 1, "{kind} in {kinds:?}");
    }
    app.finish().await;
}

#[tokio::test]
async fn a_queued_gpr_gets_promise_and_estimate_and_starts_when_nodes_come_back_early() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    let first = id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "all-four", json!({ "nodeCount": 4, "duration": "2h" })).await);
    let running = wait_phase(&app, &setup.token_a, &first, "PROVISIONED").await;
    let exit = time(&running["exitAt"]);

    let second = id_of(&create_gpr(&app, &setup.token_b, &setup.slice_b, "waits", json!({ "nodeCount": 2, "duration": "1h" })).await);
    let queued = wait_for(&app, &setup.token_b, &second, "an estimate", |g| !g["startNoLaterThan"].is_null()).await;
    assert_eq!(queued["phase"], "QUEUED");
    assert_eq!(queued["queuePosition"], 1);
    // The promise is the running window's end (reserved windows are hard limits) plus the
    // release allowance (the test's eviction deadline, 2 s, plus a minute for the other steps).
    let promise = time(&queued["startNoLaterThan"]);
    let release_allowance = 2 + 60;
    assert!((promise - exit).num_seconds().abs_diff(release_allowance) <= 2, "promise {promise} vs exit {exit}");
    assert!(time(&queued["estimatedStartAt"]) <= promise);
    assert!(queued["estimatedWait"].as_str().is_some_and(|w| !w.is_empty()), "{queued}");

    let released = app
        .mutate(
            &setup.token_a,
            "earlyReleaseGpr",
            "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { phase releaseReason } userErrors { field message code } } }",
            json!({ "id": first }),
        )
        .await;
    assert_eq!(released["gpr"]["releaseReason"], "EARLY_RELEASED");
    wait_phase(&app, &setup.token_a, &first, "COMPLETED").await;
    let started = wait_phase(&app, &setup.token_b, &second, "PROVISIONED").await;
    assert!(time(&started["provisionedAt"]) < promise, "started before its promise");
    assert_eq!(count(&event_kinds(&app, &setup.token_a, &first).await, "COMPLETED"), 1);
    app.finish().await;
}

#[tokio::test]
async fn admin_priority_bump_reorders_the_queue_and_cancel_leaves_it() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    let slice_c = create_slice(&app, "team-c", &setup.cluster, json!({})).await;
    let (_, token_c) = member(&app, "carol", &slice_c, "EDITOR").await;
    // Not preemptible, or the bump below would (rightly) evict it.
    let blocker = id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "blocker", json!({ "nodeCount": 4, "preemptible": false })).await);
    wait_phase(&app, &setup.token_a, &blocker, "PROVISIONED").await;
    let b = id_of(&create_gpr(&app, &setup.token_b, &setup.slice_b, "b", json!({ "nodeCount": 3 })).await);
    let c = id_of(&create_gpr(&app, &token_c, &slice_c, "c", json!({ "nodeCount": 3 })).await);
    wait_for(&app, &token_c, &c, "position 2", |g| g["queuePosition"] == 2).await;
    assert_eq!(gpr(&app, &setup.token_b, &b).await["queuePosition"], 1);

    let bumped = app
        .mutate(
            &app.admin_token,
            "setGprPriority",
            "mutation($input: SetGprPriorityInput!) { setGprPriority(input: $input) { gpr { priority } userErrors { field message code } } }",
            json!({ "id": c, "priority": 200 }),
        )
        .await;
    assert_eq!(bumped["gpr"]["priority"], 200);
    wait_for(&app, &token_c, &c, "position 1", |g| g["queuePosition"] == 1).await;
    let b_now = wait_for(&app, &setup.token_b, &b, "position 2", |g| g["queuePosition"] == 2).await;
    let c_now = gpr(&app, &token_c, &c).await;
    assert!(time(&c_now["startNoLaterThan"]) <= time(&b_now["startNoLaterThan"]));

    app.mutate(
        &token_c,
        "cancelGpr",
        "mutation($input: GprActionInput!) { cancelGpr(input: $input) { gpr { phase } userErrors { field message code } } }",
        json!({ "id": c }),
    )
    .await;
    wait_for(&app, &setup.token_b, &b, "position 1 again", |g| g["queuePosition"] == 1).await;
    assert!(gpr(&app, &token_c, &c).await["queuePosition"].is_null());
    app.finish().await;
}

#[tokio::test]
async fn an_approved_over_policy_gpr_is_admitted() {
    let app = TestApp::spawn().await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 8).await;
    let slice = create_slice(&app, "small", &cluster, json!({ "maxNodesPerGpr": 1 })).await;
    let (_, token) = member(&app, "dana", &slice, "EDITOR").await;
    let created = create_gpr(&app, &token, &slice, "big", json!({ "nodeCount": 2 })).await;
    assert_eq!(created["phase"], "PENDING_APPROVAL");
    let id = id_of(&created);
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(gpr(&app, &token, &id).await["phase"], "PENDING_APPROVAL", "the scheduler leaves held GPRs alone");
    app.mutate(
        &app.admin_token,
        "approveGpr",
        "mutation($input: GprDecisionInput!) { approveGpr(input: $input) { gpr { phase } userErrors { field message code } } }",
        json!({ "id": id }),
    )
    .await;
    wait_phase(&app, &token, &id, "PROVISIONED").await;
    app.finish().await;
}

#[tokio::test]
async fn a_higher_priority_gpr_preempts_and_the_victim_is_requeued() {
    let app = TestApp::spawn().await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 4, SHAPE_H100, 8).await;
    let low = create_slice(&app, "batch", &cluster, json!({ "autoEviction": true, "requeueOnEviction": true })).await;
    let high = create_slice(&app, "prod", &cluster, json!({ "priorityMax": 300 })).await;
    let (_, low_token) = member(&app, "lou", &low, "EDITOR").await;
    let (_, high_token) = member(&app, "hana", &high, "EDITOR").await;
    let victim = id_of(&create_gpr(&app, &low_token, &low, "sweep", json!({ "nodeCount": 4, "priority": 50, "preemptible": true })).await);
    wait_phase(&app, &low_token, &victim, "PROVISIONED").await;
    let urgent = id_of(&create_gpr(&app, &high_token, &high, "urgent", json!({ "nodeCount": 2, "priority": 250 })).await);
    let started = wait_phase(&app, &high_token, &urgent, "PROVISIONED").await;
    assert_eq!(started["nodes"].as_array().map(Vec::len), Some(2));

    wait_phase(&app, &low_token, &victim, "QUEUED").await;
    // The preempting GPR is in another slice: only an admin sees who it was.
    let requeued = gpr(&app, &app.admin_token, &victim).await;
    assert_eq!(requeued["preemptedBy"]["id"], urgent.as_str());
    assert_eq!(requeued["releaseReason"], "PREEMPTED");
    let kinds = event_kinds(&app, &low_token, &victim).await;
    for kind in ["PREEMPTED", "RELEASING", "REQUEUED"] {
        assert_eq!(count(&kinds, kind), 1, "{kind} in {kinds:?}");
    }
    // It waits for the urgent window now: only 2 of the 4 nodes are free.
    let waiting = wait_for(&app, &low_token, &victim, "a new promise", |g| !g["startNoLaterThan"].is_null()).await;
    assert!(time(&waiting["startNoLaterThan"]) >= time(&started["exitAt"]) - chrono::Duration::seconds(2));
    app.finish().await;
}

#[tokio::test]
async fn equal_priority_never_preempts() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    let first = id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "first", json!({ "nodeCount": 4, "preemptible": true })).await);
    wait_phase(&app, &setup.token_a, &first, "PROVISIONED").await;
    let second = id_of(&create_gpr(&app, &setup.token_b, &setup.slice_b, "second", json!({ "nodeCount": 1 })).await);
    wait_for(&app, &setup.token_b, &second, "an estimate", |g| !g["startNoLaterThan"].is_null()).await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(gpr(&app, &setup.token_a, &first).await["phase"], "PROVISIONED");
    assert_eq!(gpr(&app, &setup.token_b, &second).await["phase"], "QUEUED");
    app.finish().await;
}

#[tokio::test]
async fn idle_gpus_release_the_gpr_after_its_idle_timeout() {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    let id = id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "idle", json!({ "nodeCount": 1, "idleTimeout": "30m" })).await);
    let running = wait_phase(&app, &setup.token_a, &id, "PROVISIONED").await;
    let node_name = running["nodes"][0]["name"].as_str().expect("node name").to_owned();
    // Samples as the node agent reports them (ingestion lands with the live-platform issue):
    // the GPUs reported, and were last busy at the start of the window.
    let start = time(&running["provisionedAt"]);
    let node = egs_entities::node::Entity::find()
        .filter(egs_entities::node::Column::Name.eq(node_name))
        .one(&app.db)
        .await
        .expect("query")
        .expect("the node");
    egs_entities::gpu::Entity::update_many()
        .col_expr(egs_entities::gpu::Column::LastSampleAt, Expr::value(start + chrono::Duration::seconds(5)))
        .col_expr(egs_entities::gpu::Column::LastBusyAt, Expr::value(start))
        .filter(egs_entities::gpu::Column::NodeId.eq(node.id))
        .exec(&app.db)
        .await
        .expect("inject samples");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(gpr(&app, &setup.token_a, &id).await["phase"], "PROVISIONED", "not idle long enough yet");
    app.clock.advance(Duration::from_secs(31 * 60));
    let done = wait_phase(&app, &setup.token_a, &id, "COMPLETED").await;
    assert_eq!(done["releaseReason"], "IDLE_TIMEOUT");
    assert_eq!(count(&event_kinds(&app, &setup.token_a, &id).await, "IDLE_RELEASED"), 1);
    app.finish().await;
}

#[tokio::test]
async fn a_restart_mid_window_still_exits_exactly_once() {
    let mut app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    let id = id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "survives", json!({ "nodeCount": 2, "duration": "1h" })).await);
    wait_phase(&app, &setup.token_a, &id, "PROVISIONED").await;
    app.clock.advance(Duration::from_secs(20 * 60));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while count(&event_kinds(&app, &setup.token_a, &id).await, "PROGRESS_25") == 0 {
        assert!(tokio::time::Instant::now() < deadline, "no 25 % event");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A second gateway on the same database; the first one stops and hands over the lease.
    let replica = app.spawn_replica().await;
    app.stop().await;
    app.clock.advance(Duration::from_secs(45 * 60));
    let done = wait_phase(&replica, &setup.token_a, &id, "COMPLETED").await;
    assert_eq!(done["releaseReason"], "EXPIRED");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let kinds = event_kinds(&replica, &setup.token_a, &id).await;
    for kind in ["PROVISIONED", "PROGRESS_25", "PROGRESS_50", "PROGRESS_75", "EXIT_WARNING", "RELEASING", "COMPLETED"] {
        assert_eq!(count(&kinds, kind), 1, "{kind} in {kinds:?}");
    }
    replica.finish().await;
    app.finish().await;
}

#[tokio::test]
async fn wait_time_estimates_cover_every_pool_soonest_first_and_change_nothing() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    add_nodes(&app, &setup.cluster, "a100", 2, SHAPE_A100, 8).await;
    let first = id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "all-h100", json!({ "nodeCount": 4, "duration": "3h" })).await);
    wait_phase(&app, &setup.token_a, &first, "PROVISIONED").await;
    let query = "query($input: WaitTimeInput!) { waitTimeEstimates(input: $input) {
        cluster { id } gpuShape instanceType startNoLaterThan estimatedStartAt estimatedWait freeNodes healthyNodes } }";
    let rows = app.ok(&setup.token_b, query, json!({ "input": { "sliceId": setup.slice_b, "nodeCount": 2, "duration": "1h" } })).await;
    let rows = rows["waitTimeEstimates"].as_array().expect("rows").clone();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["gpuShape"], SHAPE_A100, "the free A100 pool comes first: {rows:?}");
    assert_eq!(rows[0]["freeNodes"], 2);
    assert_eq!(rows[1]["gpuShape"], SHAPE_H100);
    assert!(time(&rows[0]["estimatedStartAt"]) <= time(&rows[1]["estimatedStartAt"]));
    let gprs = app.ok(&setup.token_b, "{ gprs(first: 10) { totalCount } }", json!({})).await;
    assert_eq!(gprs["gprs"]["totalCount"], 0, "asking changed nothing");
    // Impossible asks are refused with the reason, not left waiting forever.
    let refused = app.gql(&setup.token_b, query, json!({ "input": { "sliceId": setup.slice_b, "nodeCount": 9, "duration": "1h" } })).await;
    assert_eq!(refused["errors"][0]["extensions"]["code"], "INVALID_INPUT", "{refused}");
    app.finish().await;
}

#[tokio::test]
async fn wait_time_estimates_apply_the_slice_policy_as_create_gpr_does() {
    let app = TestApp::spawn().await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 8).await;
    add_nodes(&app, &cluster, "a100", 2, SHAPE_A100, 8).await;
    let slice = create_slice(&app, "strict", &cluster, json!({ "maxDuration": "2h", "allowedShapes": [SHAPE_H100] })).await;
    let (_, token) = member(&app, "sol", &slice, "EDITOR").await;
    let query = "query($input: WaitTimeInput!) { waitTimeEstimates(input: $input) { gpuShape startNoLaterThan } }";
    let ask = |extra: Value| {
        let mut input = json!({ "sliceId": slice, "nodeCount": 1, "duration": "1h" });
        input.as_object_mut().expect("object").extend(extra.as_object().expect("object").clone());
        json!({ "input": input })
    };
    // Within policy: only the allowed shape's pool is offered.
    let rows = app.ok(&token, query, ask(json!({}))).await;
    assert_eq!(
        rows["waitTimeEstimates"].as_array().map(|r| r.iter().map(|x| x["gpuShape"].clone()).collect::<Vec<_>>()),
        Some(vec![json!(SHAPE_H100)])
    );
    // A window over the slice's maximum and a forbidden shape are refused, with the reason,
    // exactly as createGpr refuses them.
    for (extra, field, words) in
        [(json!({ "duration": "3h" }), "duration", "maximum"), (json!({ "gpuShape": SHAPE_A100 }), "gpuShape", "not allowed")]
    {
        let refused = app.gql(&token, query, ask(extra.clone())).await;
        let error = &refused["errors"][0];
        assert_eq!(error["extensions"]["code"], "INVALID_INPUT", "{refused}");
        assert!(error.to_string().contains(field) && error["message"].as_str().is_some_and(|m| m.contains(words)), "{refused}");
        let created = app
            .gql(
                &token,
                CREATE_GPR,
                json!({ "input": ask(extra)["input"].clone().as_object().map(|o| {
            let mut o = o.clone();
            o.insert("name".into(), json!("x"));
            o
        }) }),
            )
            .await;
        assert_eq!(created["data"]["createGpr"]["gpr"], Value::Null, "createGpr refuses it too: {created}");
    }
    app.finish().await;
}

/// Reports `node` (by name) healthy or not, as an agent or an admin would.
async fn report_health(app: &TestApp, cluster: &str, node: &str, health: &str) -> Value {
    let input = json!({ "clusterId": cluster, "nodes": [{
        "name": node, "instanceType": "p5.48xlarge", "gpuShape": SHAPE_H100, "gpusPerNode": 8, "gpuMemoryMib": 81559, "health": health,
    }] });
    let query = "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { id health } userErrors { field message code } } }";
    app.ok(&app.admin_token, query, json!({ "input": input })).await["upsertNodes"].clone()
}

fn node_names(g: &Value) -> Vec<String> {
    g["nodes"].as_array().expect("nodes").iter().map(|n| n["name"].as_str().expect("name").to_owned()).collect()
}

#[tokio::test]
async fn a_failed_node_is_replaced_from_the_pool_or_the_gpr_runs_degraded_once() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await; // four H100 nodes
    let id = id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "train", json!({ "nodeCount": 3, "duration": "2h" })).await);
    let running = wait_phase(&app, &setup.token_a, &id, "PROVISIONED").await;
    let held = node_names(&running);
    assert_eq!(held.len(), 3);

    // Only agents' and admins' views of health are accepted: the gateway decides STALE.
    let refused = report_health(&app, &setup.cluster, &held[0], "STALE").await;
    assert_eq!(refused["userErrors"][0]["code"], "INVALID_INPUT", "{refused}");
    assert_eq!(node_names(&gpr(&app, &setup.token_a, &id).await), held, "a refused report changes nothing");

    // The fourth node is free: it replaces the failed one.
    let reported = report_health(&app, &setup.cluster, &held[0], "UNHEALTHY").await;
    assert_eq!((&reported["nodes"][0]["health"], &reported["userErrors"]), (&json!("UNHEALTHY"), &json!([])), "{reported}");
    let replaced = wait_for(&app, &setup.token_a, &id, "a replacement", |g| !node_names(g).contains(&held[0])).await;
    let now_held = node_names(&replaced);
    assert_eq!(now_held.len(), 3, "{replaced}");
    assert_eq!(replaced["phase"], "PROVISIONED");

    // No node is free now: the GPR runs on two.
    report_health(&app, &setup.cluster, &now_held[1], "UNHEALTHY").await;
    let degraded = wait_for(&app, &setup.token_a, &id, "running degraded", |g| node_names(g).len() == 2).await;
    assert!(!node_names(&degraded).contains(&now_held[1]));
    assert_eq!(degraded["phase"], "PROVISIONED");

    tokio::time::sleep(Duration::from_millis(1500)).await; // more ticks must not repeat anything
    let kinds = event_kinds(&app, &setup.token_a, &id).await;
    assert_eq!((count(&kinds, "NODE_REPLACED"), count(&kinds, "DEGRADED")), (1, 1), "{kinds:?}");
    app.finish().await;
}

#[tokio::test]
async fn wait_time_estimates_say_what_they_wait_behind_and_what_they_would_preempt() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await; // four H100 nodes
    let first =
        id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "all-four", json!({ "nodeCount": 4, "duration": "3h", "preemptible": true })).await);
    let running = wait_phase(&app, &setup.token_a, &first, "PROVISIONED").await;
    let query = "query($input: WaitTimeInput!) { waitTimeEstimates(input: $input) { startNoLaterThan estimatedStartAt wouldPreempt waitsFor } }";
    let ask = |slice: &str, priority: i32| json!({ "input": { "sliceId": slice, "nodeCount": 1, "duration": "1h", "priority": priority } });

    // Its own slice waits for its running GPR, whatever the priority: one GPR at a time.
    let own = app.ok(&setup.token_a, query, ask(&setup.slice_a, 150)).await["waitTimeEstimates"][0].clone();
    assert_eq!(own["wouldPreempt"], 0, "{own}");
    assert!(own["waitsFor"].as_str().is_some_and(|w| w.contains("`all-four`")), "{own}");
    assert!(time(&own["startNoLaterThan"]) >= time(&running["exitAt"]), "{own}");

    // Another slice at equal priority waits for the pool's reservations.
    let other = app.ok(&setup.token_b, query, ask(&setup.slice_b, 101)).await["waitTimeEstimates"][0].clone();
    assert_eq!(other["wouldPreempt"], 0, "{other}");
    assert!(other["waitsFor"].as_str().is_some_and(|w| w.contains("reserved")), "{other}");

    // At a higher priority it would preempt the running GPR and start now, as createGpr would.
    let higher = app.ok(&setup.token_b, query, ask(&setup.slice_b, 150)).await["waitTimeEstimates"][0].clone();
    assert_eq!(higher["wouldPreempt"], 1, "{higher}");
    assert_eq!(higher["waitsFor"], Value::Null, "{higher}");
    assert!((time(&higher["startNoLaterThan"]) - chrono::Utc::now()).num_seconds().abs() <= 5, "{higher}");
    assert_eq!(gpr(&app, &setup.token_a, &first).await["phase"], "PROVISIONED", "asking changed nothing");
    app.finish().await;
}

/// Makes node `name` look like one whose agent reported `silent_for` ago and then fell silent.
async fn silence(app: &TestApp, name: &str, silent_for: chrono::Duration) {
    use sea_orm::sea_query::Expr;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    egs_entities::node::Entity::update_many()
        .col_expr(egs_entities::node::Column::LastHeartbeatAt, Expr::value(chrono::Utc::now() - silent_for))
        .filter(egs_entities::node::Column::Name.eq(name))
        .exec(&app.db)
        .await
        .expect("update");
}

#[tokio::test]
async fn stale_nodes_are_never_handed_over_and_one_silent_past_the_grace_is_replaced() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await; // four H100 nodes
    // A free node whose agent fell silent a minute ago (STALE): three are usable.
    silence(&app, "h100-3", chrono::Duration::seconds(60)).await;
    let four = id_of(&create_gpr(&app, &setup.token_b, &setup.slice_b, "four", json!({ "nodeCount": 4, "duration": "1h" })).await);
    let three = id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "three", json!({ "nodeCount": 3, "duration": "2h" })).await);
    let running = wait_phase(&app, &setup.token_a, &three, "PROVISIONED").await;
    assert!(!node_names(&running).contains(&"h100-3".to_owned()), "a STALE node was handed over: {running}");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let waiting = gpr(&app, &setup.token_b, &four).await;
    assert_eq!(waiting["phase"], "QUEUED", "four nodes need the STALE one: {waiting}");

    // The silent node's agent comes back; one of the GPR's nodes falls silent past the grace
    // period: it is handled as a failed node and the spare replaces it.
    silence(&app, "h100-3", chrono::Duration::seconds(0)).await;
    let held = node_names(&running);
    silence(&app, &held[0], chrono::Duration::seconds(30 + 300 + 5)).await;
    let replaced = wait_for(&app, &setup.token_a, &three, "a replacement", |g| !node_names(g).contains(&held[0])).await;
    assert!(node_names(&replaced).contains(&"h100-3".to_owned()), "{replaced}");
    let kinds = event_kinds(&app, &setup.token_a, &three).await;
    assert_eq!(count(&kinds, "NODE_REPLACED"), 1, "{kinds:?}");
    app.finish().await;
}

/// The leader's scheduler, fed each stored change, equals one rebuilt from storage.
async fn assert_no_drift(app: &TestApp, after: &str) {
    tokio::time::sleep(Duration::from_millis(1200)).await; // a tick or two
    let drift = app.scheduler.drift(&app.db).await.expect("drift").expect("this replica leads");
    assert!(drift.is_empty(), "after {after}, the fed scheduler differs from a rebuilt one: {drift:#?}");
}

/// A pass that starts more nodes than one tick hands out (GPRs that waited for the same start)
/// stores the first admissions and puts the rest back in the queue for the next tick: every
/// GPR starts, and the leader's scheduler still equals one rebuilt from storage.
#[tokio::test]
async fn a_pass_starting_more_nodes_than_a_tick_hands_out_finishes_in_the_next_ticks() {
    let app = TestApp::spawn().await;
    let cluster = register_cluster(&app, "wide").await;
    for part in 0..2 {
        add_nodes(&app, &cluster, &format!("n{part}"), 450, SHAPE_H100, 1).await;
    }
    // Three GPRs of 300 nodes that may start in half an hour, all in the same pass then.
    let at = (chrono::Utc::now() + chrono::Duration::minutes(30)).to_rfc3339();
    let mut gprs = Vec::new();
    for s in 0..3 {
        let slice = create_slice(&app, &format!("team-{s}"), &cluster, json!({})).await;
        let (_, token) = member(&app, &format!("user-{s}"), &slice, "EDITOR").await;
        let created =
            create_gpr(&app, &token, &slice, &format!("wide-{s}"), json!({ "nodeCount": 300, "duration": "1h", "earliestStartAt": at })).await;
        gprs.push((token, id_of(&created)));
    }
    for (token, id) in &gprs {
        wait_for(&app, token, id, "a promise", |g| !g["startNoLaterThan"].is_null()).await;
    }
    app.clock.advance(Duration::from_secs(31 * 60));
    for (token, id) in &gprs {
        let started = wait_for(&app, token, id, "its start", |g| g["phase"] != "QUEUED").await;
        assert_eq!(started["nodes"].as_array().map(Vec::len), Some(300), "{started}");
    }
    assert_no_drift(&app, "a pass that started 900 nodes").await;
    app.finish().await;
}

#[tokio::test]
async fn the_leaders_scheduler_fed_by_changes_equals_one_rebuilt_from_storage() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await; // four H100 nodes
    let update = "mutation($input: UpdateGprInput!) { updateGpr(input: $input) { gpr { id } userErrors { field message code } } }";
    let action = |name: &str| format!("mutation($input: GprActionInput!) {{ {name}(input: $input) {{ userErrors {{ message }} }} }}");

    let big = id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "big", json!({ "nodeCount": 3, "duration": "2h" })).await);
    let running = wait_phase(&app, &setup.token_a, &big, "PROVISIONED").await;
    let waits = id_of(&create_gpr(&app, &setup.token_b, &setup.slice_b, "waits", json!({ "nodeCount": 2, "duration": "1h" })).await);
    let behind = id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "behind", json!({ "nodeCount": 1, "duration": "1h" })).await);
    let gone = id_of(&create_gpr(&app, &setup.token_b, &setup.slice_b, "gone", json!({ "nodeCount": 4, "duration": "1h" })).await);
    wait_for(&app, &setup.token_b, &waits, "a promise", |g| !g["startNoLaterThan"].is_null()).await;
    assert_no_drift(&app, "submissions and a provisioning").await;

    // A rename keeps the plan; a new size drops it; a cancel takes one out.
    let version = gpr(&app, &setup.token_b, &waits).await["version"].clone();
    app.mutate(&setup.token_b, "updateGpr", update, json!({ "id": waits, "version": version, "name": "waits-renamed" })).await;
    let version = gpr(&app, &setup.token_a, &behind).await["version"].clone();
    app.mutate(&setup.token_a, "updateGpr", update, json!({ "id": behind, "version": version, "nodeCount": 2 })).await;
    app.mutate(&setup.token_b, "cancelGpr", &action("cancelGpr"), json!({ "id": gone })).await;
    assert_no_drift(&app, "edits and a cancel").await;

    // A node of the running GPR fails (the spare replaces it); a free node falls silent.
    let held = node_names(&running);
    report_health(&app, &setup.cluster, &held[0], "UNHEALTHY").await;
    wait_for(&app, &setup.token_a, &big, "a replacement", |g| !node_names(g).contains(&held[0])).await;
    assert_no_drift(&app, "a failed node").await;
    report_health(&app, &setup.cluster, &held[0], "HEALTHY").await;
    silence(&app, &held[0], chrono::Duration::seconds(60)).await;
    assert_no_drift(&app, "a silent node").await;

    // The window is given back early: the queue moves on.
    app.mutate(&setup.token_a, "earlyReleaseGpr", &action("earlyReleaseGpr"), json!({ "id": big })).await;
    wait_phase(&app, &setup.token_a, &big, "COMPLETED").await;
    wait_phase(&app, &setup.token_b, &waits, "PROVISIONED").await;
    assert_no_drift(&app, "a release and an admission").await;
    app.finish().await;
}
