//! Admin workflows: clusters, inventory, slices with namespaces, members and policies, users.

use egs_tests::TestApp;
use egs_tests::api_only;
use egs_tests::fixtures::{self, SHAPE_H100};
use serde_json::{Value, json};

#[tokio::test]
async fn the_newcomer_flow_works_and_a_users_token_is_refused_on_another_slice() {
    // The README's "done when": admin creates a slice, a user and a GPR; the user's token is
    // refused on another slice.
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_cluster(&app, "lab").await;
    fixtures::add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 8).await;
    let mine = fixtures::create_slice(&app, "mine", &cluster, json!({})).await;
    let theirs = fixtures::create_slice(&app, "theirs", &cluster, json!({})).await;
    let (_, token) = fixtures::member(&app, "newcomer", &mine, "EDITOR").await;
    let gpr = fixtures::create_gpr(&app, &token, &mine, "first-job", json!({})).await;
    assert_eq!(gpr["phase"], "QUEUED");
    let refused =
        app.gql(&token, fixtures::CREATE_GPR, json!({ "input": { "sliceId": theirs, "name": "nope", "nodeCount": 1, "duration": "1h" } })).await;
    assert_eq!(refused["errors"][0]["extensions"]["code"], "NOT_FOUND", "{refused}");
    app.finish().await;
}

#[tokio::test]
async fn pools_count_total_free_and_reserved_nodes() {
    use egs_entities::{NodeState, node};
    use sea_orm::{ActiveModelTrait, EntityTrait, Set};
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    fixtures::add_nodes(&app, &cluster, "h100", 3, SHAPE_H100, 8).await;
    let first = node::Entity::find().one(&app.db).await.expect("q").expect("node");
    let mut cordoned: node::ActiveModel = first.into();
    cordoned.state = Set(NodeState::Cordoned);
    cordoned.update(&app.db).await.expect("cordon");
    let pools = app
        .ok(
            &app.admin_token,
            "{ pools { cluster { name } instanceType gpuShape gpusPerNode totalNodes freeNodes reservedNodes unavailableNodes } }",
            json!({}),
        )
        .await;
    assert_eq!(
        pools["pools"],
        json!([{ "cluster": { "name": "c1" }, "instanceType": "p5.48xlarge", "gpuShape": SHAPE_H100, "gpusPerNode": 8, "totalNodes": 3, "freeNodes": 2, "reservedNodes": 0, "unavailableNodes": 1 }])
    );
    let filtered =
        app.ok(&app.admin_token, "{ nodes(filter: { state: CORDONED }) { totalCount edges { node { gpus { index } } } } }", json!({})).await;
    assert_eq!(filtered["nodes"]["totalCount"], 1);
    assert_eq!(filtered["nodes"]["edges"][0]["node"]["gpus"].as_array().map(Vec::len), Some(8));
    app.finish().await;
}

#[tokio::test]
async fn namespaces_belong_to_one_slice_and_names_are_unique() {
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    let a = fixtures::create_slice(&app, "alpha", &cluster, json!({})).await;
    let add = "mutation($input: SliceNamespaceInput!) { addSliceNamespace(input: $input) { slice { namespaces { name } } userErrors { field message code } } }";
    let taken = app.ok(&app.admin_token, add, json!({ "input": { "sliceId": a, "clusterId": cluster, "name": "alpha" } })).await;
    assert_eq!(taken["addSliceNamespace"]["userErrors"][0]["code"], "CONFLICT");
    let added = app.mutate(&app.admin_token, "addSliceNamespace", add, json!({ "sliceId": a, "clusterId": cluster, "name": "alpha-2" })).await;
    assert_eq!(added["slice"]["namespaces"], json!([{ "name": "alpha" }, { "name": "alpha-2" }]));

    let duplicate = app
        .ok(
            &app.admin_token,
            "mutation($input: CreateSliceInput!) { createSlice(input: $input) { slice { id } userErrors { field code } } }",
            json!({ "input": { "name": "alpha" } }),
        )
        .await;
    assert_eq!(duplicate["createSlice"]["userErrors"][0], json!({ "field": ["input", "name"], "code": "CONFLICT" }));
    app.finish().await;
}

#[tokio::test]
async fn policy_changes_merge_and_bad_policies_are_refused() {
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    let slice = fixtures::create_slice(&app, "p", &cluster, json!({ "maxNodesPerGpr": 4, "maxDuration": "12h" })).await;
    let set = "mutation($input: SetSlicePolicyInput!) { setSlicePolicy(input: $input) { slice { policy { maxNodesPerGpr maxDuration priorityMin priorityMax autoEviction } } userErrors { field message code } } }";
    let changed = app
        .mutate(&app.admin_token, "setSlicePolicy", set, json!({ "sliceId": slice, "policy": { "maxDuration": null, "autoEviction": false } }))
        .await;
    assert_eq!(
        changed["slice"]["policy"],
        json!({ "maxNodesPerGpr": 4, "maxDuration": null, "priorityMin": 1, "priorityMax": 200, "autoEviction": false })
    );
    let bad = app.ok(&app.admin_token, set, json!({ "input": { "sliceId": slice, "policy": { "priorityMin": 250, "priorityMax": 100 } } })).await;
    assert_eq!(bad["setSlicePolicy"]["userErrors"][0]["field"], json!(["input", "policy", "priorityMax"]), "{bad}");
    let unchanged =
        app.ok(&app.admin_token, "query($id: ID) { slice(id: $id) { policy { priorityMin priorityMax } } }", json!({ "id": slice })).await;
    assert_eq!(unchanged["slice"]["policy"], json!({ "priorityMin": 1, "priorityMax": 200 }));
    app.finish().await;
}

#[tokio::test]
async fn slices_and_clusters_with_unfinished_work_cannot_be_deleted() {
    let app = TestApp::spawn_with(api_only).await;
    let two = fixtures::two_slices(&app).await;
    let gpr = fixtures::create_gpr(&app, &two.token_a, &two.slice_a, "busy", json!({})).await;
    let delete = "mutation($input: DeleteSliceInput!) { deleteSlice(input: $input) { slice { name } userErrors { message code } } }";
    let refused = app.ok(&app.admin_token, delete, json!({ "input": { "id": two.slice_a } })).await;
    assert_eq!(refused["deleteSlice"]["userErrors"][0]["code"], "CONFLICT", "{refused}");
    app.mutate(
        &two.token_a,
        "cancelGpr",
        "mutation($input: GprActionInput!) { cancelGpr(input: $input) { gpr { id } userErrors { code } } }",
        json!({ "id": gpr["id"] }),
    )
    .await;
    let deleted = app.mutate(&app.admin_token, "deleteSlice", delete, json!({ "id": two.slice_a })).await;
    assert_eq!(deleted["slice"]["name"], "team-a");
    let gone = app.gql(&app.admin_token, "query($id: ID) { slice(id: $id) { name } }", json!({ "id": two.slice_a })).await;
    assert_eq!(gone["errors"][0]["extensions"]["code"], "NOT_FOUND");
    app.finish().await;
}

#[tokio::test]
async fn slice_owners_manage_members_but_editors_cannot() {
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    let slice = fixtures::create_slice(&app, "team", &cluster, json!({})).await;
    let (_, owner) = fixtures::member(&app, "olga", &slice, "OWNER").await;
    let (editor_id, editor) = fixtures::member(&app, "ed", &slice, "EDITOR").await;
    let add =
        "mutation($input: AddSliceMemberInput!) { addSliceMember(input: $input) { slice { members { user { name } role } } userErrors { code } } }";
    let denied = app.gql(&editor, add, json!({ "input": { "sliceId": slice, "userId": editor_id, "role": "OWNER" } })).await;
    assert_eq!(denied["errors"][0]["extensions"]["code"], "FORBIDDEN", "{denied}");
    let promoted = app.mutate(&owner, "addSliceMember", add, json!({ "sliceId": slice, "userId": editor_id, "role": "VIEWER" })).await;
    assert!(promoted["slice"]["members"].as_array().expect("members").contains(&json!({ "user": { "name": "ed" }, "role": "VIEWER" })));
    let as_viewer =
        app.gql(&editor, fixtures::CREATE_GPR, json!({ "input": { "sliceId": slice, "name": "x", "nodeCount": 1, "duration": "1h" } })).await;
    assert_eq!(as_viewer["errors"][0]["extensions"]["code"], "FORBIDDEN", "the demotion took effect at once: {as_viewer}");
    app.finish().await;
}

#[tokio::test]
async fn the_last_owner_stays_and_a_users_memberships_show_their_own_roles() {
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    let slice = fixtures::create_slice(&app, "team", &cluster, json!({})).await;
    let (owner_id, owner) = fixtures::member(&app, "olga", &slice, "OWNER").await;
    let (viewer_id, _) = fixtures::member(&app, "vic", &slice, "VIEWER").await;
    let add = "mutation($input: AddSliceMemberInput!) { addSliceMember(input: $input) { slice { id } userErrors { field code message } } }";
    let remove = "mutation($input: RemoveSliceMemberInput!) { removeSliceMember(input: $input) { slice { id } userErrors { field code message } } }";
    // The only owner can neither demote nor remove themselves (nor can an admin leave the slice ownerless).
    for (token, query, input) in [
        (&owner, add, json!({ "sliceId": slice, "userId": owner_id, "role": "EDITOR" })),
        (&owner, remove, json!({ "sliceId": slice, "userId": owner_id })),
        (&app.admin_token, add, json!({ "sliceId": slice, "userId": owner_id, "role": "VIEWER" })),
    ] {
        let body = app.ok(token, query, json!({ "input": input })).await;
        let payload = body.as_object().and_then(|o| o.values().next()).cloned().unwrap_or_default();
        assert_eq!(payload["userErrors"][0]["code"], "CONFLICT", "{body}");
    }
    // With a second owner, the first may step down.
    app.mutate(&owner, "addSliceMember", add, json!({ "sliceId": slice, "userId": viewer_id, "role": "OWNER" })).await;
    app.mutate(&owner, "addSliceMember", add, json!({ "sliceId": slice, "userId": owner_id, "role": "EDITOR" })).await;

    // Looking at another member, the role shown is theirs, not the caller's.
    let seen = app.ok(&owner, "query($id: ID) { slice(id: $id) { members { user { name memberships { role } } } } }", json!({ "id": slice })).await;
    let members = seen["slice"]["members"].as_array().expect("members");
    let vic = members.iter().find(|m| m["user"]["name"] == "vic").expect("vic");
    assert_eq!(vic["user"]["memberships"], json!([{ "role": "OWNER" }]), "vic's role, not olga's (EDITOR): {seen}");
    app.finish().await;
}

#[tokio::test]
async fn the_clusters_own_namespaces_are_never_a_slices() {
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    let create = "mutation($input: CreateSliceInput!) { createSlice(input: $input) { slice { id } userErrors { field code message } } }";
    for name in ["default", "kube-system", "kube-public"] {
        let input = json!({ "name": format!("team-{}", name.len()), "namespaces": [{ "clusterId": cluster, "name": name }] });
        let payload = app.ok(&app.admin_token, create, json!({ "input": input })).await["createSlice"].clone();
        assert_eq!(payload["userErrors"][0]["code"], "INVALID_INPUT", "{name}: {payload}");
        assert!(payload["userErrors"][0]["message"].as_str().is_some_and(|m| m.contains("reserved")), "{payload}");
        assert!(payload["slice"].is_null());
    }
    app.finish().await;
}

#[tokio::test]
async fn an_owner_cannot_enumerate_users_by_guessing_ids_or_names() {
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    let slice = fixtures::create_slice(&app, "team", &cluster, json!({})).await;
    let elsewhere = fixtures::create_slice(&app, "elsewhere", &cluster, json!({})).await;
    let (_, owner) = fixtures::member(&app, "olga", &slice, "OWNER").await;
    let stranger = app
        .mutate(
            &app.admin_token,
            "createUser",
            "mutation($input: CreateUserInput!) { createUser(input: $input) { user { id } userErrors { field message code } } }",
            json!({ "name": "stranger", "email": "stranger@example.com" }),
        )
        .await;
    let stranger_id = stranger["user"]["id"].as_str().expect("id").to_owned();
    app.mutate(
        &app.admin_token,
        "addSliceMember",
        "mutation($input: AddSliceMemberInput!) { addSliceMember(input: $input) { slice { id } userErrors { field message code } } }",
        json!({ "sliceId": elsewhere, "userId": stranger_id, "role": "VIEWER" }),
    )
    .await;
    let add = "mutation($input: AddSliceMemberInput!) { addSliceMember(input: $input) { slice { members { user { name } } } userErrors { field code message } } }";
    let errors = |body: &Value| body["addSliceMember"]["userErrors"].clone();

    // By id, an existing stranger and an id nobody has read the same.
    let missing_id = egs_domain::ids::encode(egs_domain::ids::Kind::User, 999_999);
    let by_id = app.ok(&owner, add, json!({ "input": { "sliceId": slice, "userId": stranger_id, "role": "VIEWER" } })).await;
    let by_missing = app.ok(&owner, add, json!({ "input": { "sliceId": slice, "userId": missing_id, "role": "VIEWER" } })).await;
    assert_eq!(errors(&by_id)[0]["code"], "INVALID_INPUT", "{by_id}");
    assert_eq!(errors(&by_id), errors(&by_missing), "a stranger and nobody read the same");

    // By exact name or e-mail, someone you know can be added.
    let added = app.mutate(&owner, "addSliceMember", add, json!({ "sliceId": slice, "user": "stranger@example.com", "role": "VIEWER" })).await;
    assert!(added["slice"]["members"].as_array().expect("members").contains(&json!({ "user": { "name": "stranger" } })), "{added}");

    // Guessing runs out: 20 misses an hour (the two by id above count), then LIMIT_EXCEEDED.
    let mut codes = Vec::new();
    for n in 0..19 {
        let body = app.ok(&owner, add, json!({ "input": { "sliceId": slice, "user": format!("guess-{n}"), "role": "VIEWER" } })).await;
        codes.push(errors(&body)[0]["code"].as_str().unwrap_or_default().to_owned());
    }
    assert!(codes[..18].iter().all(|c| c == "INVALID_INPUT"), "{codes:?}");
    assert_eq!(codes[18], "LIMIT_EXCEEDED");
    // Both or neither of `userId` and `user` is a mistake.
    let neither = app.ok(&owner, add, json!({ "input": { "sliceId": slice, "role": "VIEWER" } })).await;
    assert_eq!(errors(&neither)[0]["code"], "INVALID_INPUT", "{neither}");
    app.finish().await;
}
