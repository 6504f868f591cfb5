//! Workspace requests: a user asks for a slice, an admin approves it with edits (the slice is
//! made with the requester as owner) or rejects it with a reason; bounds and refusals.

use egs_tests::TestApp;
use egs_tests::fixtures::*;
use serde_json::{Value, json};

const REQUEST: &str = "mutation($input: RequestWorkspaceInput!) { requestWorkspace(input: $input) { request { id name state purpose namespaces { clusterName name } maxNodesPerGpr requester } userErrors { field message code } } }";
const APPROVE: &str = "mutation($input: ApproveWorkspaceRequestInput!) { approveWorkspaceRequest(input: $input) { request { state decidedBy decisionReason slice { id name policy { maxNodesPerGpr } members { role user { name } } namespaces { name } } } userErrors { field message code } } }";
const REJECT: &str = "mutation($input: RejectWorkspaceRequestInput!) { rejectWorkspaceRequest(input: $input) { request { state decisionReason } userErrors { field message code } } }";
const MINE: &str = "query { workspaceRequests { id name state decisionReason slice { name } } }";

async fn user(app: &TestApp, name: &str) -> String {
    let made = app
        .mutate(
            &app.admin_token,
            "createUser",
            "mutation($input: CreateUserInput!) { createUser(input: $input) { user { id } userErrors { message } } }",
            json!({ "name": name }),
        )
        .await;
    let id = made["user"]["id"].as_str().expect("id").to_owned();
    let token = app
        .mutate(
            &app.admin_token,
            "createToken",
            "mutation($input: CreateTokenInput!) { createToken(input: $input) { secret userErrors { message } } }",
            json!({ "name": format!("{name} token"), "role": "USER", "userId": id }),
        )
        .await;
    token["secret"].as_str().expect("secret").to_owned()
}

fn ask(cluster: &str, name: &str) -> Value {
    json!({ "name": name, "purpose": "fine-tune a 7B model for support", "namespaces": [{ "clusterId": cluster, "name": name }], "maxNodesPerGpr": 2 })
}

#[tokio::test]
async fn a_user_asks_for_a_workspace_and_an_admin_approves_it_with_edits() {
    let app = TestApp::spawn().await;
    let cluster = register_cluster(&app, "c1").await;
    let dana = user(&app, "dana").await;
    let eve = user(&app, "eve").await;
    // A user in no slice yet still sees where a workspace can be asked for.
    let choices = app.ok(&dana, "query { workspaceClusters { id name } }", json!({})).await;
    assert_eq!(choices["workspaceClusters"], json!([{ "id": cluster, "name": "c1" }]));
    let asked = app.mutate(&dana, "requestWorkspace", REQUEST, ask(&cluster, "dana-ft")).await["request"].clone();
    assert_eq!(
        (asked["state"].as_str(), asked["requester"].as_str(), asked["namespaces"][0]["clusterName"].as_str()),
        (Some("PENDING"), Some("dana"), Some("c1")),
        "{asked}"
    );
    // Only the requester and admins see it; only admins decide.
    assert_eq!(app.ok(&eve, MINE, json!({})).await["workspaceRequests"], json!([]));
    assert_eq!(app.ok(&app.admin_token, MINE, json!({})).await["workspaceRequests"].as_array().map(Vec::len), Some(1));
    let by_user = app.gql(&dana, APPROVE, json!({ "input": { "id": id_of(&asked) } })).await;
    assert_eq!(by_user["errors"][0]["extensions"]["code"], "FORBIDDEN", "{by_user}");
    // An admin's edit may not hand over the gateway's own namespace either; nothing is decided.
    let into_egs = json!({ "input": { "id": id_of(&asked), "namespaces": [{ "clusterId": cluster, "name": "egs" }] } });
    let refused = app.ok(&app.admin_token, APPROVE, into_egs).await["approveWorkspaceRequest"].clone();
    assert_eq!(refused["userErrors"][0]["field"], json!(["input", "namespaces", "0", "name"]), "{refused}");
    assert_eq!(app.ok(&dana, MINE, json!({})).await["workspaceRequests"][0]["state"], "PENDING");

    let approved = app
        .mutate(
            &app.admin_token,
            "approveWorkspaceRequest",
            APPROVE,
            json!({ "id": id_of(&asked), "name": "support-ft", "maxNodesPerGpr": 4, "reason": "renamed to our convention" }),
        )
        .await["request"]
        .clone();
    assert_eq!((approved["state"].as_str(), approved["decidedBy"].as_str()), (Some("APPROVED"), Some("admin")), "{approved}");
    let slice = &approved["slice"];
    assert_eq!(slice["name"], "support-ft");
    assert_eq!(slice["policy"]["maxNodesPerGpr"], 4);
    assert_eq!(slice["members"], json!([{ "role": "OWNER", "user": { "name": "dana" } }]));
    assert_eq!(slice["namespaces"], json!([{ "name": "dana-ft" }]));
    // Dana owns it now: she sees it, and the request says which it is.
    let mine = app.ok(&dana, MINE, json!({})).await;
    assert_eq!(mine["workspaceRequests"][0]["slice"]["name"], "support-ft", "{mine}");
    let again = app.ok(&app.admin_token, APPROVE, json!({ "input": { "id": id_of(&asked) } })).await["approveWorkspaceRequest"].clone();
    assert_eq!(again["userErrors"][0]["code"], "CONFLICT", "decided once: {again}");
    app.finish().await;
}

#[tokio::test]
async fn rejections_say_why_and_bad_requests_change_nothing() {
    let app = TestApp::spawn().await;
    let cluster = register_cluster(&app, "c1").await;
    create_slice(&app, "taken", &cluster, json!({})).await;
    let dana = user(&app, "dana").await;
    let bad = [
        (json!({ "name": "Not A Label", "purpose": "x", "namespaces": [{ "clusterId": cluster, "name": "ns" }] }), "name"),
        (json!({ "name": "ok", "purpose": " ", "namespaces": [{ "clusterId": cluster, "name": "ns" }] }), "purpose"),
        (json!({ "name": "ok", "purpose": "x", "namespaces": [] }), "namespaces"),
        (json!({ "name": "ok", "purpose": "x", "namespaces": [{ "clusterId": cluster, "name": "kube-system" }] }), "namespaces.0.name"),
        // The gateway's own namespace: approving it would write a slice's Role beside EGS's secrets.
        (json!({ "name": "ok", "purpose": "x", "namespaces": [{ "clusterId": cluster, "name": "egs" }] }), "namespaces.0.name"),
        (json!({ "name": "taken", "purpose": "x", "namespaces": [{ "clusterId": cluster, "name": "ns" }] }), "name"),
        (json!({ "name": "ok", "purpose": "x", "namespaces": [{ "clusterId": cluster, "name": "ns" }], "maxNodesPerGpr": 0 }), "maxNodesPerGpr"),
    ];
    for (input, field) in bad {
        let refused = app.ok(&dana, REQUEST, json!({ "input": input })).await["requestWorkspace"].clone();
        let path: Vec<&str> = std::iter::once("input").chain(field.split('.')).collect();
        assert_eq!(refused["userErrors"][0]["field"], json!(path), "{input}: {refused}");
    }
    assert_eq!(app.ok(&dana, MINE, json!({})).await["workspaceRequests"], json!([]), "nothing stored");
    let first = app.mutate(&dana, "requestWorkspace", REQUEST, ask(&cluster, "one")).await["request"].clone();
    app.mutate(&dana, "requestWorkspace", REQUEST, ask(&cluster, "two")).await;
    app.mutate(&dana, "requestWorkspace", REQUEST, ask(&cluster, "three")).await;
    let fourth = app.ok(&dana, REQUEST, json!({ "input": ask(&cluster, "four") })).await["requestWorkspace"].clone();
    assert_eq!(fourth["userErrors"][0]["code"], "LIMIT_EXCEEDED", "{fourth}");

    let empty = app.ok(&app.admin_token, REJECT, json!({ "input": { "id": id_of(&first), "reason": "" } })).await["rejectWorkspaceRequest"].clone();
    assert_eq!(empty["userErrors"][0]["field"], json!(["input", "reason"]), "{empty}");
    let rejected =
        app.mutate(&app.admin_token, "rejectWorkspaceRequest", REJECT, json!({ "id": id_of(&first), "reason": "use the shared nlp slice" })).await;
    assert_eq!(rejected["request"], json!({ "state": "REJECTED", "decisionReason": "use the shared nlp slice" }));
    let mine = app.ok(&dana, MINE, json!({})).await["workspaceRequests"].clone();
    let seen = mine.as_array().into_iter().flatten().find(|r| r["name"] == "one").cloned().unwrap_or_default();
    assert_eq!(seen["decisionReason"], "use the shared nlp slice", "the requester reads why");
    // A rejected request cannot be approved after all; a withdrawn one frees a place.
    let late = app.ok(&app.admin_token, APPROVE, json!({ "input": { "id": id_of(&first) } })).await["approveWorkspaceRequest"].clone();
    assert_eq!(late["userErrors"][0]["code"], "CONFLICT", "{late}");
    let slices = app.ok(&app.admin_token, "query { slices(first: 100) { nodes { name } } }", json!({})).await;
    assert_eq!(slices["slices"]["nodes"], json!([{ "name": "taken" }]), "no slice was made");
    app.finish().await;
}

const SET_PRIVATE: &str = "mutation($input: SetPersonalWorkspacePolicyInput!) { setPersonalWorkspacePolicy(input: $input) { policy { enabled clusterName maxNodesPerGpr gpuHourQuota } userErrors { field message code } } }";
const PRIVATE_POLICY: &str = "{ personalWorkspacePolicy { enabled clusterName maxNodesPerGpr gpuHourQuota } }";
const SLICE_BY_NAME: &str = "query($name: String!) { slice(name: $name) { name members { role user { name } } namespaces { name cluster { name } } policy { maxNodesPerGpr gpuHourQuota } } }";

async fn slice_named(app: &TestApp, name: &str) -> Value {
    app.gql(&app.admin_token, SLICE_BY_NAME, json!({ "name": name })).await["data"]["slice"].clone()
}

#[tokio::test]
async fn with_the_policy_on_every_new_user_gets_a_private_workspace_and_bad_policies_change_nothing() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    // Off until an admin sets it.
    user(&app, "bea").await;
    assert_eq!(slice_named(&app, "bea-private").await, Value::Null);
    assert_eq!(app.ok(&app.admin_token, PRIVATE_POLICY, json!({})).await["personalWorkspacePolicy"], Value::Null);

    // Refused per field, by admins only, storing nothing.
    let slice = create_slice(&app, "team-a", &cluster, json!({})).await;
    let (_, owner) = member(&app, "olga", &slice, "OWNER").await;
    let forbidden = app.gql(&owner, SET_PRIVATE, json!({ "input": { "enabled": true, "clusterId": cluster } })).await;
    assert_eq!(forbidden["errors"][0]["extensions"]["code"], "FORBIDDEN", "{forbidden}");
    for (input, field) in [
        (json!({ "enabled": true, "clusterId": slice }), "clusterId"),
        (json!({ "enabled": true, "clusterId": cluster, "maxNodesPerGpr": 0 }), "maxNodesPerGpr"),
        (json!({ "enabled": true, "clusterId": cluster, "gpuHourQuota": -1 }), "gpuHourQuota"),
    ] {
        let refused = app.ok(&app.admin_token, SET_PRIVATE, json!({ "input": input })).await["setPersonalWorkspacePolicy"].clone();
        assert_eq!(refused["userErrors"][0]["field"], json!(["input", field]), "{input}: {refused}");
    }
    assert_eq!(app.ok(&app.admin_token, PRIVATE_POLICY, json!({})).await["personalWorkspacePolicy"], Value::Null);

    // On: a new user owns `<name>-private`, its namespace on the cluster, with the policy's size.
    let set = app
        .mutate(
            &app.admin_token,
            "setPersonalWorkspacePolicy",
            SET_PRIVATE,
            json!({ "enabled": true, "clusterId": cluster, "maxNodesPerGpr": 1, "gpuHourQuota": 100 }),
        )
        .await;
    assert_eq!(set["policy"], json!({ "enabled": true, "clusterName": "c1", "maxNodesPerGpr": 1, "gpuHourQuota": 100 }));
    user(&app, "dana.b").await;
    let private = slice_named(&app, "dana-b-private").await;
    assert_eq!(private["members"], json!([{ "role": "OWNER", "user": { "name": "dana.b" } }]));
    assert_eq!(private["namespaces"], json!([{ "name": "dana-b-private", "cluster": { "name": "c1" } }]));
    assert_eq!(private["policy"], json!({ "maxNodesPerGpr": 1, "gpuHourQuota": 100 }));
    // A taken name gets a suffix; the user is made either way.
    create_slice(&app, "erin-private", &cluster, json!({})).await;
    user(&app, "erin").await;
    assert_eq!(slice_named(&app, "erin-private-2").await["members"][0]["user"]["name"], "erin");

    // Off again: nothing more is made.
    app.mutate(&app.admin_token, "setPersonalWorkspacePolicy", SET_PRIVATE, json!({ "enabled": false, "clusterId": cluster })).await;
    user(&app, "frank").await;
    assert_eq!(slice_named(&app, "frank-private").await, Value::Null);
    app.finish().await;
}
