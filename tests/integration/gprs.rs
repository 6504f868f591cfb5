//! GPR rules that hold without the scheduler: policy, approval, phases, versions, events.

use egs_tests::api_only;
use egs_tests::fixtures::{self, SHAPE_A100, SHAPE_H100};
use egs_tests::{TestApp, wait_for};
use serde_json::{Value, json};

const UPDATE: &str = "mutation($input: UpdateGprInput!) { updateGpr(input: $input) { gpr { id phase version nodeCount priority approval } userErrors { field message code } } }";
const CANCEL: &str =
    "mutation($input: GprActionInput!) { cancelGpr(input: $input) { gpr { id phase completedAt } userErrors { field message code } } }";
const EVENTS: &str = "query($id: ID!) { gpr(id: $id) { events { edges { node { kind message actor sequence } } } } }";

async fn event_kinds(app: &TestApp, token: &str, id: &str) -> Vec<String> {
    let data = app.ok(token, EVENTS, json!({ "id": id })).await;
    data["gpr"]["events"]["edges"].as_array().expect("edges").iter().map(|e| e["node"]["kind"].as_str().unwrap_or_default().to_owned()).collect()
}

#[tokio::test]
async fn a_gpr_within_policy_is_queued_with_defaults_and_a_history() {
    let app = TestApp::spawn_with(api_only).await;
    let two = fixtures::two_slices(&app).await;
    let data = app
        .mutate(
            &two.token_a,
            "createGpr",
            "mutation($input: CreateGprInput!) { createGpr(input: $input) { gpr { id phase priority priorityBand preemptible duration approval version requester { name } slice { name } labels { key value } } userErrors { field message code } } }",
            json!({ "sliceId": two.slice_a, "name": "train", "nodeCount": 2, "gpuShape": SHAPE_H100, "duration": "PT6H30M", "labels": [{ "key": "model", "value": "llama" }] }),
        )
        .await;
    let gpr = &data["gpr"];
    assert_eq!(gpr["phase"], "QUEUED");
    assert_eq!(gpr["priority"], 101);
    assert_eq!(gpr["priorityBand"], "MEDIUM");
    assert_eq!(gpr["preemptible"], true);
    assert_eq!(gpr["duration"], "PT6H30M");
    assert_eq!(gpr["approval"], "NOT_REQUIRED");
    assert_eq!(gpr["version"], 1);
    assert_eq!(gpr["requester"]["name"], "alice");
    assert_eq!(gpr["labels"], json!([{ "key": "model", "value": "llama" }]));
    let id = gpr["id"].as_str().expect("id");
    assert_eq!(event_kinds(&app, &two.token_a, id).await, ["CREATED", "QUEUED"]);
    let events = app.ok(&two.token_a, EVENTS, json!({ "id": id })).await;
    let sequences: Vec<i64> =
        events["gpr"]["events"]["edges"].as_array().expect("edges").iter().map(|e| e["node"]["sequence"].as_i64().expect("seq")).collect();
    assert!(sequences.windows(2).all(|w| w[0] < w[1]), "event sequence is monotonic: {sequences:?}");
    assert_eq!(events["gpr"]["events"]["edges"][0]["node"]["actor"], "alice");
    app.finish().await;
}

#[tokio::test]
async fn policy_refuses_disallowed_shapes_and_long_windows_precisely() {
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    fixtures::add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 8).await;
    fixtures::add_nodes(&app, &cluster, "a100", 2, SHAPE_A100, 8).await;
    let slice = fixtures::create_slice(&app, "strict", &cluster, json!({ "allowedShapes": [SHAPE_A100], "maxDuration": "4h" })).await;
    let (_, token) = fixtures::member(&app, "erin", &slice, "EDITOR").await;
    let body = app
        .gql(
            &token,
            fixtures::CREATE_GPR,
            json!({ "input": { "sliceId": slice, "name": "x", "nodeCount": 1, "gpuShape": SHAPE_H100, "duration": "8h" } }),
        )
        .await;
    let errors = &body["data"]["createGpr"]["userErrors"];
    assert_eq!(body["data"]["createGpr"]["gpr"], Value::Null);
    assert_eq!(errors[0]["field"], json!(["input", "gpuShape"]), "{body}");
    assert!(errors[0]["message"].as_str().unwrap_or_default().contains(SHAPE_A100));
    assert_eq!(errors[1]["field"], json!(["input", "duration"]));
    assert!(errors[1]["message"].as_str().unwrap_or_default().contains("PT8H is longer than the slice's maximum of PT4H"), "{body}");
    let count = app.ok(&app.admin_token, "{ gprs { totalCount } }", json!({})).await;
    assert_eq!(count["gprs"]["totalCount"], 0, "nothing stored");

    let too_big = app
        .gql(
            &token,
            fixtures::CREATE_GPR,
            json!({ "input": { "sliceId": slice, "name": "y", "nodeCount": 3, "gpuShape": SHAPE_A100, "duration": "1h" } }),
        )
        .await;
    assert!(
        too_big["data"]["createGpr"]["userErrors"][0]["message"].as_str().unwrap_or_default().contains("largest matching pool has 2"),
        "{too_big}"
    );

    // No shape named: the slice's allowed shapes still bound the pools. A bigger H100 pool
    // must neither make a 3-node GPR look feasible (it would wait forever) nor show up in
    // Get wait time; a GPR that fits is planned on A100.
    fixtures::add_nodes(&app, &cluster, "h100-more", 2, SHAPE_H100, 8).await;
    let no_shape =
        app.gql(&token, fixtures::CREATE_GPR, json!({ "input": { "sliceId": slice, "name": "z", "nodeCount": 3, "duration": "1h" } })).await;
    assert!(
        no_shape["data"]["createGpr"]["userErrors"][0]["message"].as_str().unwrap_or_default().contains("largest matching pool has 2"),
        "{no_shape}"
    );
    let waits = app
        .ok(
            &token,
            "query($input: WaitTimeInput!) { waitTimeEstimates(input: $input) { gpuShape } }",
            json!({ "input": { "sliceId": slice, "nodeCount": 1, "duration": "1h" } }),
        )
        .await;
    assert_eq!(waits["waitTimeEstimates"], json!([{ "gpuShape": SHAPE_A100 }]));
    let fits = fixtures::create_gpr(&app, &token, &slice, "fits", json!({ "nodeCount": 1, "duration": "1h", "gpuShape": null })).await;
    wait_for("the shapeless GPR provisioned on A100", || async {
        let gpr = app.ok(&token, "query($id: ID!) { gpr(id: $id) { phase assignedGpuShape } }", json!({ "id": fits["id"] })).await;
        gpr["gpr"]["phase"] == "PROVISIONED" && gpr["gpr"]["assignedGpuShape"] == SHAPE_A100
    })
    .await;
    app.finish().await;
}

#[tokio::test]
async fn over_policy_gprs_wait_for_approval_and_admins_decide() {
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    fixtures::add_nodes(&app, &cluster, "h100", 4, SHAPE_H100, 8).await;
    let slice = fixtures::create_slice(&app, "capped", &cluster, json!({ "maxNodesPerGpr": 1, "priorityMax": 150 })).await;
    let (_, token) = fixtures::member(&app, "erin", &slice, "EDITOR").await;

    let big = fixtures::create_gpr(&app, &token, &slice, "big", json!({ "nodeCount": 2, "priority": 250 })).await;
    assert_eq!(big["phase"], "PENDING_APPROVAL");
    assert_eq!(big["approval"], "PENDING");
    let reason = big["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("asks for 2 nodes") && reason.contains("priority 250 is outside"), "{reason}");

    let approve = "mutation($input: GprDecisionInput!) { approveGpr(input: $input) { gpr { phase approval } userErrors { field message code } } }";
    let by_user = app.gql(&token, approve, json!({ "input": { "id": big["id"] } })).await;
    assert_eq!(by_user["errors"][0]["extensions"]["code"], "FORBIDDEN");
    let approved = app.mutate(&app.admin_token, "approveGpr", approve, json!({ "id": big["id"], "reason": "deadline" })).await;
    assert_eq!(approved["gpr"], json!({ "phase": "QUEUED", "approval": "APPROVED" }));
    let again = app.ok(&app.admin_token, approve, json!({ "input": { "id": big["id"] } })).await;
    assert_eq!(again["approveGpr"]["userErrors"][0]["code"], "CONFLICT", "approving twice is refused: {again}");

    let other = fixtures::create_gpr(&app, &token, &slice, "other", json!({ "nodeCount": 2 })).await;
    let reject = "mutation($input: GprDecisionInput!) { rejectGpr(input: $input) { gpr { phase approval reason completedAt } userErrors { field message code } } }";
    let rejected = app.mutate(&app.admin_token, "rejectGpr", reject, json!({ "id": other["id"], "reason": "too big this week" })).await;
    assert_eq!(rejected["gpr"]["phase"], "REJECTED");
    assert!(rejected["gpr"]["reason"].as_str().unwrap_or_default().contains("too big this week"));
    assert!(rejected["gpr"]["completedAt"].is_string());
    let kinds = event_kinds(&app, &token, big["id"].as_str().expect("id")).await;
    // The scheduler may already be at work on it after that (estimates, provisioning).
    assert_eq!(kinds[..4], ["CREATED", "APPROVAL_REQUIRED", "APPROVED", "QUEUED"], "{kinds:?}");
    app.finish().await;
}

#[tokio::test]
async fn edits_need_the_current_version_and_only_pending_gprs_change() {
    let app = TestApp::spawn_with(api_only).await;
    let two = fixtures::two_slices(&app).await;
    let gpr = fixtures::create_gpr(&app, &two.token_a, &two.slice_a, "edit-me", json!({})).await;
    let edited = app.mutate(&two.token_a, "updateGpr", UPDATE, json!({ "id": gpr["id"], "version": 1, "nodeCount": 2, "priority": 120 })).await;
    assert_eq!(edited["gpr"]["version"], 2);
    assert_eq!(edited["gpr"]["nodeCount"], 2);

    let stale = app.ok(&two.token_a, UPDATE, json!({ "input": { "id": gpr["id"], "version": 1, "nodeCount": 3 } })).await;
    let error = &stale["updateGpr"]["userErrors"][0];
    assert_eq!(error["code"], "CONFLICT");
    assert_eq!(error["field"], json!(["input", "version"]));
    let now = app.ok(&two.token_a, "query($id: ID!) { gpr(id: $id) { nodeCount version } }", json!({ "id": gpr["id"] })).await;
    assert_eq!(now["gpr"], json!({ "nodeCount": 2, "version": 2 }), "the stale edit changed nothing");

    app.mutate(&two.token_a, "cancelGpr", CANCEL, json!({ "id": gpr["id"] })).await;
    let late_edit = app.ok(&two.token_a, UPDATE, json!({ "input": { "id": gpr["id"], "version": 3, "nodeCount": 1 } })).await;
    assert!(late_edit["updateGpr"]["userErrors"][0]["message"].as_str().unwrap_or_default().contains("CANCELLED"), "{late_edit}");
    let late_cancel = app.ok(&two.token_a, CANCEL, json!({ "input": { "id": gpr["id"] } })).await;
    assert_eq!(late_cancel["cancelGpr"]["userErrors"][0]["code"], "CONFLICT");
    let kinds = event_kinds(&app, &two.token_a, gpr["id"].as_str().expect("id")).await;
    assert_eq!(kinds, ["CREATED", "QUEUED", "EDITED", "CANCELLED"]);
    app.finish().await;
}

#[tokio::test]
async fn early_release_is_only_for_provisioned_gprs_and_cancel_is_not() {
    use egs_entities::{GprPhase, gpr};
    use sea_orm::{ActiveModelTrait, EntityTrait, Set};
    // The test moves the row itself, as the scheduler would: no scheduler may race it.
    let app = TestApp::spawn_with(api_only).await;
    let two = fixtures::two_slices(&app).await;
    let queued = fixtures::create_gpr(&app, &two.token_a, &two.slice_a, "waiting", json!({})).await;
    let release =
        "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { phase releaseReason } userErrors { field message code } } }";
    let refused = app.ok(&two.token_a, release, json!({ "input": { "id": queued["id"] } })).await;
    assert_eq!(refused["earlyReleaseGpr"]["userErrors"][0]["code"], "CONFLICT");

    // The scheduler does this in production; here the row is moved as it would.
    let (_, row) = egs_domain::ids::decode_any(queued["id"].as_str().expect("id")).expect("id");
    let mut model: gpr::ActiveModel = gpr::Entity::find_by_id(row).one(&app.db).await.expect("q").expect("row").into();
    model.phase = Set(GprPhase::Provisioned);
    model.update(&app.db).await.expect("provision");

    let cancel = app.ok(&two.token_a, CANCEL, json!({ "input": { "id": queued["id"] } })).await;
    assert!(cancel["cancelGpr"]["userErrors"][0]["message"].as_str().unwrap_or_default().contains("earlyReleaseGpr"), "{cancel}");
    let released = app.mutate(&two.token_a, "earlyReleaseGpr", release, json!({ "id": queued["id"] })).await;
    assert_eq!(released["gpr"], json!({ "phase": "RELEASING", "releaseReason": "EARLY_RELEASED" }));
    app.finish().await;
}

#[tokio::test]
async fn admins_bump_priority_within_range_and_it_is_recorded() {
    let app = TestApp::spawn_with(api_only).await;
    let two = fixtures::two_slices(&app).await;
    let gpr = fixtures::create_gpr(&app, &two.token_a, &two.slice_a, "bump", json!({})).await;
    let set = "mutation($input: SetGprPriorityInput!) { setGprPriority(input: $input) { gpr { priority priorityBand } userErrors { field message code } } }";
    let out_of_range = app.ok(&app.admin_token, set, json!({ "input": { "id": gpr["id"], "priority": 301 } })).await;
    assert_eq!(out_of_range["setGprPriority"]["userErrors"][0]["field"], json!(["input", "priority"]));
    let bumped = app.mutate(&app.admin_token, "setGprPriority", set, json!({ "id": gpr["id"], "priority": 250 })).await;
    assert_eq!(bumped["gpr"], json!({ "priority": 250, "priorityBand": "HIGH" }));
    let events = app.ok(&two.token_a, EVENTS, json!({ "id": gpr["id"] })).await;
    let last = &events["gpr"]["events"]["edges"][2]["node"];
    assert_eq!(last["kind"], "PRIORITY_CHANGED");
    assert_eq!(last["message"], "priority 101 → 250");
    assert_eq!(last["actor"], "admin");
    app.finish().await;
}

#[tokio::test]
async fn a_slice_default_idle_timeout_applies_on_create_and_when_an_edit_clears_it() {
    // API rules only: with the scheduler running, the GPR could be admitted between edits.
    let app = TestApp::spawn_with(api_only).await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    fixtures::add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 8).await;
    let slice = fixtures::create_slice(&app, "idle", &cluster, json!({ "defaultIdleTimeout": "30m", "maxIdleTimeout": "2h" })).await;
    let (_, token) = fixtures::member(&app, "ivy", &slice, "EDITOR").await;
    let created = app
        .mutate(
            &token,
            "createGpr",
            "mutation($input: CreateGprInput!) { createGpr(input: $input) { gpr { id idleTimeout } userErrors { field message code } } }",
            json!({ "sliceId": slice, "name": "job", "nodeCount": 1, "duration": "4h" }),
        )
        .await;
    assert_eq!(created["gpr"]["idleTimeout"], "PT30M");
    let update = "mutation($input: UpdateGprInput!) { updateGpr(input: $input) { gpr { idleTimeout version } userErrors { field message code } } }";
    let longer = app.mutate(&token, "updateGpr", update, json!({ "id": created["gpr"]["id"], "version": 1, "idleTimeout": "1h" })).await;
    assert_eq!(longer["gpr"]["idleTimeout"], "PT1H");
    let cleared = app.mutate(&token, "updateGpr", update, json!({ "id": created["gpr"]["id"], "version": 2, "idleTimeout": null })).await;
    assert_eq!(cleared["gpr"]["idleTimeout"], "PT30M", "clearing it falls back to the slice default, as on create");
    let too_long = app.ok(&token, update, json!({ "input": { "id": created["gpr"]["id"], "version": 3, "idleTimeout": "3h" } })).await;
    assert_eq!(too_long["updateGpr"]["userErrors"][0]["field"], json!(["input", "idleTimeout"]), "{too_long}");
    app.finish().await;
}

#[tokio::test]
async fn editing_a_gpr_with_an_earliest_start_keeps_it_without_resending_it() {
    let app = TestApp::spawn_with(api_only).await;
    let two = fixtures::two_slices(&app).await;
    let later = (chrono::Utc::now() + chrono::Duration::hours(3)).to_rfc3339();
    let gpr = fixtures::create_gpr(&app, &two.token_a, &two.slice_a, "later", json!({ "earliestStartAt": later })).await;
    let edited = app.mutate(&two.token_a, "updateGpr", UPDATE, json!({ "id": gpr["id"], "version": 1, "nodeCount": 2 })).await;
    assert_eq!(edited["gpr"]["nodeCount"], 2, "{edited}");
}

#[tokio::test]
async fn the_gpu_hour_quota_counts_queued_windows_and_whole_nodes() {
    // API only: nothing is admitted, so every GPR stays queued and only the quota decides.
    let app = TestApp::spawn_with(api_only).await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    fixtures::add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 8).await;
    let slice = fixtures::create_slice(&app, "metered", &cluster, json!({ "gpuHourQuota": 20 })).await;
    let (_, token) = fixtures::member(&app, "mia", &slice, "EDITOR").await;
    // 1 node × 8 GPUs × 2 h = 16 of 20 GPU-hours: within the quota, queued.
    let first = fixtures::create_gpr(&app, &token, &slice, "first", json!({ "duration": "2h" })).await;
    assert_eq!(first["phase"], "QUEUED", "{first}");
    // The queued window counts: 16 + 8 > 20, so the next one needs approval.
    let second = fixtures::create_gpr(&app, &token, &slice, "second", json!({ "duration": "1h" })).await;
    assert_eq!(second["phase"], "PENDING_APPROVAL", "{second}");
    assert!(second["reason"].as_str().is_some_and(|r| r.contains("quota")), "{second}");

    // Asking for one GPU per node still takes a whole 8-GPU node: 30 min counts 4 GPU-hours.
    let small = fixtures::create_slice(&app, "small", &cluster, json!({ "gpuHourQuota": 3 })).await;
    let (_, small_token) = fixtures::member(&app, "sam", &small, "EDITOR").await;
    let one_gpu = fixtures::create_gpr(&app, &small_token, &small, "one-gpu", json!({ "gpusPerNode": 1, "duration": "30m" })).await;
    assert_eq!(one_gpu["phase"], "PENDING_APPROVAL", "{one_gpu}");
    app.finish().await;
}

#[tokio::test]
async fn a_provisioning_gpr_counts_against_the_gpu_hour_quota() {
    use sea_orm::{ActiveModelTrait, Set};
    let app = TestApp::spawn_with(api_only).await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    fixtures::add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 8).await;
    let slice = fixtures::create_slice(&app, "metered", &cluster, json!({ "gpuHourQuota": 20 })).await;
    let (_, token) = fixtures::member(&app, "mia", &slice, "EDITOR").await;
    // 16 of 20 GPU-hours, admitted: its nodes are being handed over (no `provisionedAt` yet).
    let first = fixtures::create_gpr(&app, &token, &slice, "first", json!({ "duration": "2h" })).await;
    let id = egs_domain::ids::decode("id", first["id"].as_str().expect("id"), egs_domain::ids::Kind::Gpr).expect("a GPR id");
    egs_entities::gpr::ActiveModel { id: Set(id), phase: Set(egs_entities::GprPhase::Provisioning), ..Default::default() }
        .update(&app.db)
        .await
        .expect("admitted");
    // 16 + 8 > 20: the next one needs approval (it was queued while the first provisioned).
    let second = fixtures::create_gpr(&app, &token, &slice, "second", json!({ "duration": "1h" })).await;
    assert_eq!(second["phase"], "PENDING_APPROVAL", "{second}");
    assert!(second["reason"].as_str().is_some_and(|r| r.contains("quota")), "{second}");
    app.finish().await;
}

#[tokio::test]
async fn an_approved_gpr_edited_over_policy_needs_approval_again() {
    let app = TestApp::spawn_with(api_only).await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    fixtures::add_nodes(&app, &cluster, "h100", 4, SHAPE_H100, 8).await;
    let slice = fixtures::create_slice(&app, "capped", &cluster, json!({ "maxNodesPerGpr": 1, "priorityMax": 150 })).await;
    let (_, token) = fixtures::member(&app, "erin", &slice, "EDITOR").await;
    let big = fixtures::create_gpr(&app, &token, &slice, "big", json!({ "nodeCount": 2 })).await;
    let id = big["id"].as_str().expect("id").to_owned();
    let approve =
        "mutation($input: GprDecisionInput!) { approveGpr(input: $input) { gpr { phase approval version } userErrors { field message code } } }";
    let approved = app.mutate(&app.admin_token, "approveGpr", approve, json!({ "id": id })).await;
    assert_eq!((&approved["gpr"]["phase"], &approved["gpr"]["approval"]), (&json!("QUEUED"), &json!("APPROVED")));

    // Renaming what was approved changes nothing the approval covered.
    let renamed = app.mutate(&token, "updateGpr", UPDATE, json!({ "id": id, "version": approved["gpr"]["version"], "name": "big-renamed" })).await;
    assert_eq!((&renamed["gpr"]["phase"], &renamed["gpr"]["approval"]), (&json!("QUEUED"), &json!("APPROVED")), "{renamed}");

    // Laundering: more nodes and a priority over the slice's range, after the approval.
    let grown =
        app.mutate(&token, "updateGpr", UPDATE, json!({ "id": id, "version": renamed["gpr"]["version"], "nodeCount": 4, "priority": 150 })).await;
    assert_eq!((&grown["gpr"]["phase"], &grown["gpr"]["approval"]), (&json!("PENDING_APPROVAL"), &json!("PENDING")), "{grown}");
    let events = app.ok(&token, EVENTS, json!({ "id": id })).await;
    let last = events["gpr"]["events"]["edges"].as_array().and_then(|e| e.last()).expect("an event")["node"].clone();
    assert_eq!(last["kind"], "APPROVAL_REQUIRED", "{events}");
    assert!(last["message"].as_str().is_some_and(|m| m.contains("again") && m.contains("asks for 4 nodes")), "{last}");
    app.finish().await;
}

#[tokio::test]
async fn preferred_clusters_and_earliest_starts_are_bounded_and_nothing_is_stored_when_refused() {
    let app = TestApp::spawn_with(api_only).await;
    let two = fixtures::two_slices(&app).await;
    let create = "mutation($input: CreateGprInput!) { createGpr(input: $input) { gpr { id } userErrors { field message code } } }";
    let base = json!({ "sliceId": two.slice_a, "name": "bounded", "nodeCount": 1, "gpuShape": SHAPE_H100, "duration": "1h" });
    let with = |extra: Value| {
        let mut input = base.clone();
        if let (Some(i), Some(e)) = (input.as_object_mut(), extra.as_object()) {
            i.extend(e.clone());
        }
        input
    };
    let far = (chrono::Utc::now() + chrono::Duration::days(400)).to_rfc3339();
    let cases = [
        (json!({ "preferredClusterIds": vec![two.cluster.clone(); 20_000] }), "preferredClusterIds", "at most 32"),
        (json!({ "preferredClusterIds": [two.cluster, two.cluster] }), "preferredClusterIds", "twice"),
        (json!({ "earliestStartAt": "9999-12-31T00:00:00Z" }), "earliestStartAt", "a year"),
        (json!({ "earliestStartAt": far }), "earliestStartAt", "a year"),
    ];
    for (extra, field, says) in cases {
        let payload = app.ok(&two.token_a, create, json!({ "input": with(extra) })).await["createGpr"].clone();
        let error = &payload["userErrors"][0];
        assert_eq!((error["field"][1].as_str(), error["code"].as_str()), (Some(field), Some("INVALID_INPUT")), "{payload}");
        assert!(error["message"].as_str().is_some_and(|m| m.contains(says)), "{payload}");
        assert!(payload["gpr"].is_null());
    }
    let listed = app.ok(&two.token_a, "query($id: ID!) { slice(id: $id) { gprs { totalCount } } }", json!({ "id": two.slice_a })).await;
    assert_eq!(listed["slice"]["gprs"]["totalCount"], 0, "nothing stored: {listed}");
    let ok = app.mutate(&two.token_a, "createGpr", create, with(json!({ "preferredClusterIds": [two.cluster] }))).await;
    assert!(ok["gpr"]["id"].is_string(), "{ok}");
    app.finish().await;
}
