//! Extending a provisioned GPR's window (`extendGpr`, seed 001's "small grace period") through
//! the live gateway: within the slice's grace at once, beyond it after an admin's approval,
//! never past a waiting GPR's promise, and the longer window is the one the scheduler ends.

use egs_tests::TestApp;
use egs_tests::fixtures::*;
use serde_json::{Value, json};
use std::time::Duration;

const GPR: &str = "query($id: ID!) { gpr(id: $id) { id phase version exitAt extendedBy extensionRequested startNoLaterThan releaseReason } }";
const EVENTS: &str = "query($id: ID!) { gprEvents(gprId: $id, first: 100) { nodes { kind message } } }";
const ROOM: &str = "query($id: ID!) { gprExtensionRoom(id: $id) { maxNow withoutApproval limitedBy } }";
const EXTEND: &str = "mutation($input: ExtendGprInput!) { extendGpr(input: $input) { gpr { id version exitAt extendedBy extensionRequested }
    userErrors { field message code } } }";
const APPROVE: &str = "mutation($input: GprDecisionInput!) { approveGpr(input: $input) { gpr { exitAt extendedBy extensionRequested }
    userErrors { field message code } } }";
const REJECT: &str = "mutation($input: GprDecisionInput!) { rejectGpr(input: $input) { gpr { exitAt extensionRequested }
    userErrors { field message code } } }";
const AWAITING: &str = "{ gprs(filter: { awaitingDecision: true }) { nodes { id phase extensionRequested } } }";

async fn gpr(app: &TestApp, id: &str) -> Value {
    app.ok(&app.admin_token, GPR, json!({ "id": id })).await["gpr"].clone()
}

async fn wait_for(app: &TestApp, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let current = gpr(app, id).await;
        if done(&current) {
            return current;
        }
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}; the GPR is {current:#}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn event_kinds(app: &TestApp, id: &str) -> Vec<String> {
    let events = app.ok(&app.admin_token, EVENTS, json!({ "id": id })).await;
    events["gprEvents"]["nodes"].as_array().expect("events").iter().map(|e| e["kind"].as_str().unwrap_or_default().to_owned()).collect()
}

/// A refused `field`: one error with `code`, as the payload's `userErrors` (a problem with the
/// input) or as the request's error (a role the caller lacks); returns its message.
async fn refused(app: &TestApp, token: &str, query: &str, field: &str, input: Value, code: &str) -> String {
    let body = app.gql(token, query, json!({ "input": input })).await;
    let errors = match body["errors"].as_array() {
        Some(errors) => {
            assert!(body["data"].is_null() || body["data"][field].is_null(), "{body:#}");
            errors.clone()
        }
        None => {
            assert!(body["data"][field]["gpr"].is_null(), "{body:#}");
            body["data"][field]["userErrors"].as_array().cloned().unwrap_or_default()
        }
    };
    assert_eq!(errors.len(), 1, "{field} should be refused with {code}: {body:#}");
    let found = if errors[0]["code"].is_null() { &errors[0]["extensions"]["code"] } else { &errors[0]["code"] };
    assert_eq!(found, code, "{body:#}");
    errors[0]["message"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_window_extends_at_once_within_the_grace_and_beyond_it_after_an_admins_decision() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    let (_, viewer) = member(&app, "vic", &setup.slice_a, "VIEWER").await;
    let id = id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "train", json!({ "nodeCount": 2, "duration": "1h" })).await);
    let running = wait_for(&app, &id, "provisioned", |g| g["phase"] == "PROVISIONED").await;
    let exit = time(&running["exitAt"]);
    assert_eq!(running["extendedBy"], "PT0S");

    // No one waits: a week fits, the slice's default grace (30 min) of it at once.
    let room = app.ok(&viewer, ROOM, json!({ "id": id })).await["gprExtensionRoom"].clone();
    assert_eq!(room, json!({ "maxNow": "P7D", "withoutApproval": "PT30M", "limitedBy": null }));

    // Bad asks change nothing.
    for by in ["0m", "30s", "8d"] {
        refused(&app, &setup.token_a, EXTEND, "extendGpr", json!({ "id": id, "by": by }), "INVALID_INPUT").await;
    }
    refused(&app, &viewer, EXTEND, "extendGpr", json!({ "id": id, "by": "10m" }), "FORBIDDEN").await;
    refused(&app, &setup.token_b, EXTEND, "extendGpr", json!({ "id": id, "by": "10m" }), "NOT_FOUND").await;
    refused(&app, &setup.token_a, EXTEND, "extendGpr", json!({ "id": id, "by": "10m", "version": 1 }), "CONFLICT").await;
    assert_eq!(gpr(&app, &id).await["exitAt"], running["exitAt"]);

    // Within the grace: at once.
    let extended = app.mutate(&setup.token_a, "extendGpr", EXTEND, json!({ "id": id, "by": "20m" })).await;
    assert_eq!(time(&extended["gpr"]["exitAt"]), exit + chrono::Duration::minutes(20));
    assert_eq!(extended["gpr"]["extendedBy"], "PT20M");
    let room = app.ok(&setup.token_a, ROOM, json!({ "id": id })).await["gprExtensionRoom"].clone();
    assert_eq!(room["withoutApproval"], "PT10M", "{room}");

    // Beyond it: asked, not applied, and on the admins' list.
    let asked = app.mutate(&setup.token_a, "extendGpr", EXTEND, json!({ "id": id, "by": "30m" })).await;
    assert_eq!(asked["gpr"]["extensionRequested"], "PT30M");
    assert_eq!(time(&asked["gpr"]["exitAt"]), exit + chrono::Duration::minutes(20));
    let waiting = app.ok(&app.admin_token, AWAITING, json!({})).await;
    assert_eq!(waiting["gprs"]["nodes"], json!([{ "id": id, "phase": "PROVISIONED", "extensionRequested": "PT30M" }]));
    let again = refused(&app, &setup.token_a, EXTEND, "extendGpr", json!({ "id": id, "by": "10m" }), "CONFLICT").await;
    assert!(again.contains("already waits"), "{again}");
    // Only an admin decides.
    refused(&app, &setup.token_a, APPROVE, "approveGpr", json!({ "id": id }), "FORBIDDEN").await;
    let approved = app.mutate(&app.admin_token, "approveGpr", APPROVE, json!({ "id": id, "reason": "deadline" })).await;
    assert_eq!(time(&approved["gpr"]["exitAt"]), exit + chrono::Duration::minutes(50));
    assert_eq!(approved["gpr"]["extendedBy"], "PT50M");
    assert!(approved["gpr"]["extensionRequested"].is_null());
    assert_eq!(app.ok(&app.admin_token, AWAITING, json!({})).await["gprs"]["nodes"], json!([]));

    // Asked again and rejected: the window stays.
    app.mutate(&setup.token_a, "extendGpr", EXTEND, json!({ "id": id, "by": "1h" })).await;
    let rejected = app.mutate(&app.admin_token, "rejectGpr", REJECT, json!({ "id": id, "reason": "no" })).await;
    assert_eq!(time(&rejected["gpr"]["exitAt"]), exit + chrono::Duration::minutes(50));
    assert!(rejected["gpr"]["extensionRequested"].is_null());
    refused(&app, &app.admin_token, REJECT, "rejectGpr", json!({ "id": id }), "CONFLICT").await;

    let kinds = event_kinds(&app, &id).await;
    let of = |kind: &str| kinds.iter().filter(|k| *k == kind).count();
    assert_eq!((of("EXTENDED"), of("EXTENSION_REQUESTED"), of("EXTENSION_REJECTED")), (2, 2, 1), "{kinds:?}");

    // The scheduler ends the longer window, not the first one.
    app.clock.advance(Duration::from_secs(65 * 60));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(gpr(&app, &id).await["phase"], "PROVISIONED", "the extended window has 45 minutes left");
    app.clock.advance(Duration::from_secs(50 * 60));
    let done = wait_for(&app, &id, "completed", |g| g["phase"] == "COMPLETED").await;
    assert_eq!(done["releaseReason"], "EXPIRED");
    // A finished GPR cannot be extended.
    refused(&app, &setup.token_a, EXTEND, "extendGpr", json!({ "id": id, "by": "10m" }), "CONFLICT").await;
    app.finish().await;
}

#[tokio::test]
async fn an_extension_never_moves_a_waiting_gprs_promise() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    let slice_c = create_slice(&app, "team-c", &setup.cluster, json!({})).await;
    let (_, token_c) = member(&app, "cy", &slice_c, "EDITOR").await;
    // A holds two nodes for an hour, B the other two for three hours (B may extend by 2 h at once).
    app.mutate(
        &app.admin_token,
        "setSlicePolicy",
        "mutation($input: SetSlicePolicyInput!) { setSlicePolicy(input: $input) { slice { id } userErrors { message } } }",
        json!({ "sliceId": setup.slice_b, "policy": { "extensionGrace": "2h" } }),
    )
    .await;
    let a = id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "short", json!({ "nodeCount": 2, "duration": "1h" })).await);
    wait_for(&app, &a, "A provisioned", |g| g["phase"] == "PROVISIONED").await;
    let b = id_of(&create_gpr(&app, &setup.token_b, &setup.slice_b, "long", json!({ "nodeCount": 2, "duration": "3h" })).await);
    let b_running = wait_for(&app, &b, "B provisioned", |g| g["phase"] == "PROVISIONED").await;
    // C waits for A's nodes: promised for the end of A's window.
    let c = id_of(&create_gpr(&app, &token_c, &slice_c, "next", json!({ "nodeCount": 2, "duration": "1h" })).await);
    let promised = wait_for(&app, &c, "C's promise", |g| !g["startNoLaterThan"].is_null()).await["startNoLaterThan"].clone();

    // A may not grow at all: C's promise is in the way, and C is not A's to see.
    let room = app.ok(&setup.token_a, ROOM, json!({ "id": a })).await["gprExtensionRoom"].clone();
    assert_eq!(room["maxNow"], "PT0S", "{room}");
    let why = room["limitedBy"].as_str().unwrap_or_default();
    assert!(why.contains("a GPR of another slice is promised nodes"), "{why}");
    // Neither its name nor when it is promised to start: how busy another slice is, is theirs.
    assert!(!why.contains("next") && !why.contains(" by "), "{why}");
    let promised_day = promised.as_str().unwrap_or_default().get(..10).unwrap_or("?").to_owned();
    assert!(!why.contains(&promised_day), "{why} names {promised}");
    let message = refused(&app, &setup.token_a, EXTEND, "extendGpr", json!({ "id": a, "by": "10m" }), "CONFLICT").await;
    assert!(message.contains("without delaying another GPR"), "{message}");
    // The admin sees the name.
    let room = app.ok(&app.admin_token, ROOM, json!({ "id": a })).await["gprExtensionRoom"].clone();
    assert!(room["limitedBy"].as_str().unwrap_or_default().contains("GPR `next`"), "{room}");

    // B's nodes are no one's promise: it grows by an hour at once, and C keeps its promise.
    let room = app.ok(&setup.token_b, ROOM, json!({ "id": b })).await["gprExtensionRoom"].clone();
    assert_eq!((room["maxNow"].as_str(), room["withoutApproval"].as_str()), (Some("P7D"), Some("PT2H")), "{room}");
    let extended = app.mutate(&setup.token_b, "extendGpr", EXTEND, json!({ "id": b, "by": "1h" })).await;
    assert_eq!(time(&extended["gpr"]["exitAt"]), time(&b_running["exitAt"]) + chrono::Duration::hours(1));
    tokio::time::sleep(Duration::from_millis(1500)).await; // the scheduler's passes see the longer window
    assert_eq!(gpr(&app, &c).await["startNoLaterThan"], promised, "an extension moved a waiting GPR's promise");

    // A four-node GPR now waits for B's longer window; B cannot grow past what it was promised.
    let d = id_of(&create_gpr(&app, &setup.token_a, &setup.slice_a, "wide", json!({ "nodeCount": 4, "duration": "1h" })).await);
    let d_promise = time(&wait_for(&app, &d, "D's promise", |g| !g["startNoLaterThan"].is_null()).await["startNoLaterThan"]);
    assert!(d_promise >= time(&extended["gpr"]["exitAt"]), "D is planned after B's extended window");
    let room = app.ok(&setup.token_b, ROOM, json!({ "id": b })).await["gprExtensionRoom"].clone();
    assert_eq!(room["maxNow"], "PT0S", "{room}");
    assert!(room["limitedBy"].as_str().unwrap_or_default().contains("a GPR of another slice"), "{room}");
    app.finish().await;
}

#[tokio::test]
async fn an_extension_within_the_grace_but_over_the_gpu_hour_quota_waits_for_an_admin() {
    let app = TestApp::spawn().await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 8).await;
    // 1 node × 8 GPUs × 2 h = 16 of 20 GPU-hours; the grace (2 h) would allow an hour more.
    let slice = create_slice(&app, "metered", &cluster, json!({ "gpuHourQuota": 20, "extensionGrace": "2h" })).await;
    let (_, token) = member(&app, "mia", &slice, "EDITOR").await;
    let id = id_of(&create_gpr(&app, &token, &slice, "train", json!({ "duration": "2h" })).await);
    let running = wait_for(&app, &id, "provisioned", |g| g["phase"] == "PROVISIONED").await;
    // Half an hour is 4 GPU-hours: 20 of 20, within the quota.
    let room = app.ok(&token, ROOM, json!({ "id": id })).await["gprExtensionRoom"].clone();
    assert_eq!(room["withoutApproval"], "PT30M", "the quota, not the grace, bounds it: {room}");
    // An hour is 8 more: 24 of 20, so an admin decides (it was applied at once before).
    let asked = app.mutate(&token, "extendGpr", EXTEND, json!({ "id": id, "by": "1h" })).await;
    assert_eq!(asked["userErrors"], json!([]), "{asked}");
    assert_eq!((&asked["gpr"]["extensionRequested"], &asked["gpr"]["exitAt"]), (&json!("PT1H"), &running["exitAt"]), "{asked}");
    let events = app.ok(&app.admin_token, EVENTS, json!({ "id": id })).await;
    let requested = events["gprEvents"]["nodes"].as_array().expect("events").iter().find(|e| e["kind"] == "EXTENSION_REQUESTED").cloned();
    assert!(requested.as_ref().is_some_and(|e| e["message"].as_str().is_some_and(|m| m.contains("GPU-hour quota"))), "{events}");
    app.finish().await;
}
