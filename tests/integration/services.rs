//! App through `schema.execute()` on a real database, without HTTP or the scheduler loop
//! (`egs_tests::InProcess`): rules checked in milliseconds, on SQLite and on PostgreSQL.

use egs_tests::fixtures::{self, SHAPE_H100};
use egs_tests::{Gateway, InProcess};
use serde_json::{Value, json};

const UPDATE: &str =
    "mutation($input: UpdateGprInput!) { updateGpr(input: $input) { gpr { id phase approval version } userErrors { field message code } } }";
const APPROVE: &str =
    "mutation($input: GprDecisionInput!) { approveGpr(input: $input) { gpr { phase approval version } userErrors { field message code } } }";
const LAST_EVENT: &str = "query($id: ID!) { gpr(id: $id) { events(first: 100) { edges { node { kind message } } } } }";

/// A GPR over `policy` (created with `over`), approved by an admin: its id, version and the
/// editor's token.
async fn approved(app: &InProcess, policy: Value, over: Value) -> (String, i64, String) {
    let cluster = fixtures::register_cluster(app, "c1").await;
    fixtures::add_nodes(app, &cluster, "h100", 4, SHAPE_H100, 8).await;
    let slice = fixtures::create_slice(app, "capped", &cluster, policy).await;
    let (_, token) = fixtures::member(app, "erin", &slice, "EDITOR").await;
    let gpr = fixtures::create_gpr(app, &token, &slice, "asks-much", over).await;
    assert_eq!(gpr["phase"], "PENDING_APPROVAL", "{gpr}");
    let id = gpr["id"].as_str().expect("id").to_owned();
    let approved = app.mutate(app.admin_token(), "approveGpr", APPROVE, json!({ "id": id })).await;
    assert_eq!((&approved["gpr"]["phase"], &approved["gpr"]["approval"]), (&json!("QUEUED"), &json!("APPROVED")), "{approved}");
    (id, approved["gpr"]["version"].as_i64().expect("version"), token)
}

async fn last_event(app: &InProcess, token: &str, id: &str) -> Value {
    let events = app.ok(token, LAST_EVENT, json!({ "id": id })).await;
    events["gpr"]["events"]["edges"].as_array().and_then(|e| e.last()).expect("an event")["node"].clone()
}

#[tokio::test]
async fn an_approved_gpr_whose_priority_alone_leaves_the_slices_range_needs_approval_again() {
    let app = InProcess::start().await;
    let (id, version, token) = approved(&app, json!({ "priorityMax": 150 }), json!({ "priority": 160 })).await;
    // Back within the slice's range: nothing left to approve, so the approval stands.
    let lower = app.mutate(&token, "updateGpr", UPDATE, json!({ "id": id, "version": version, "priority": 140 })).await;
    assert_eq!((&lower["gpr"]["phase"], &lower["gpr"]["approval"]), (&json!("QUEUED"), &json!("APPROVED")), "{lower}");
    // Past it: back to the admin, saying why.
    let version = lower["gpr"]["version"].as_i64().expect("version");
    let higher = app.mutate(&token, "updateGpr", UPDATE, json!({ "id": id, "version": version, "priority": 300 })).await;
    assert_eq!((&higher["gpr"]["phase"], &higher["gpr"]["approval"]), (&json!("PENDING_APPROVAL"), &json!("PENDING")), "{higher}");
    let event = last_event(&app, &token, &id).await;
    assert_eq!(event["kind"], "APPROVAL_REQUIRED", "{event}");
    assert!(event["message"].as_str().is_some_and(|m| m.contains("priority 300")), "{event}");
    app.finish().await;
}

#[tokio::test]
async fn an_approved_gpr_asking_more_gpus_per_node_than_allowed_needs_approval_again() {
    let app = InProcess::start().await;
    let (id, version, token) = approved(&app, json!({ "maxGpusPerGpr": 4 }), json!({ "gpusPerNode": 6 })).await;
    let more = app.mutate(&token, "updateGpr", UPDATE, json!({ "id": id, "version": version, "gpusPerNode": 8 })).await;
    assert_eq!((&more["gpr"]["phase"], &more["gpr"]["approval"]), (&json!("PENDING_APPROVAL"), &json!("PENDING")), "{more}");
    let event = last_event(&app, &token, &id).await;
    assert!(event["message"].as_str().is_some_and(|m| m.contains("asks for 8 GPUs")), "{event}");
    app.finish().await;
}

#[tokio::test]
async fn a_user_at_the_token_limit_asking_for_an_admin_token_is_told_forbidden_not_limited() {
    let app = InProcess::start_with(|s| s.per_user.tokens = 1).await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    let slice = fixtures::create_slice(&app, "team", &cluster, json!({})).await;
    // The fixture's token is the one this user may hold.
    let (_, token) = fixtures::member(&app, "uma", &slice, "EDITOR").await;
    let create = "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { field message code } } }";
    let admin = app.gql(&token, create, json!({ "input": { "name": "escalate", "role": "ADMIN" } })).await;
    let code = admin["data"]["createToken"]["userErrors"][0]["code"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| admin["errors"][0]["extensions"]["code"].as_str().map(str::to_owned));
    assert_eq!(code.as_deref(), Some("FORBIDDEN"), "who may ask is decided before how many they hold: {admin}");
    let user = app.gql(&token, create, json!({ "input": { "name": "one more", "role": "USER" } })).await;
    assert_eq!(user["data"]["createToken"]["userErrors"][0]["code"], "LIMIT_EXCEEDED", "{user}");
    app.finish().await;
}

#[tokio::test]
async fn a_slice_kubeconfig_is_refused_for_a_simulated_cluster_and_for_editors() {
    let app = InProcess::start().await;
    let cluster = fixtures::register_cluster(&app, "sim").await;
    let slice = fixtures::create_slice(&app, "team", &cluster, json!({})).await;
    let (_, editor) = fixtures::member(&app, "ed", &slice, "EDITOR").await;
    let issue = "mutation($input: SliceKubeconfigInput!) { sliceKubeconfig(input: $input) { kubeconfig userErrors { field message code } } }";
    let input = json!({ "input": { "sliceId": slice, "clusterId": cluster } });
    let by_editor = app.gql(&editor, issue, input.clone()).await;
    assert_eq!(by_editor["errors"][0]["extensions"]["code"], "FORBIDDEN", "only owners and admins: {by_editor}");
    let simulated = app.ok(app.admin_token(), issue, input).await;
    let error = &simulated["sliceKubeconfig"]["userErrors"][0];
    assert_eq!((&error["field"], &error["code"]), (&json!(["input", "clusterId"]), &json!("INVALID_INPUT")), "{simulated}");
    assert!(error["message"].as_str().is_some_and(|m| m.contains("simulated")), "{simulated}");
    assert!(simulated["sliceKubeconfig"]["kubeconfig"].is_null());
    // Out of range lifetimes are refused before any cluster is asked.
    let short = app.ok(app.admin_token(), issue, json!({ "input": { "sliceId": slice, "clusterId": cluster, "expiresIn": "5m" } })).await;
    assert_eq!(short["sliceKubeconfig"]["userErrors"][0]["field"], json!(["input", "expiresIn"]), "{short}");
    app.finish().await;
}
