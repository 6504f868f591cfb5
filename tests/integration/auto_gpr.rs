//! GPR templates and auto-GPR: a slice's GPU pods that stay Pending on the fake cluster make
//! EGS create one GPR from the slice's template, and post an Event on a pod.

use egs_tests::fixtures::{self, SHAPE_H100};
use egs_tests::kube_backend::KubeBackend;
use egs_tests::on_both_backends;
use egs_tests::{TestApp, fixtures::member};
use serde_json::{Value, json};
use std::time::Duration;

const CREATE: &str = "mutation($input: CreateGprTemplateInput!) { createGprTemplate(input: $input) { template { id name nodeCount gpusPerNode gpuShape priority duration idleTimeout } userErrors { field message code } } }";
const UPDATE: &str = "mutation($input: UpdateGprTemplateInput!) { updateGprTemplate(input: $input) { template { id name nodeCount gpuShape priority duration idleTimeout } userErrors { field message code } } }";
const DELETE: &str =
    "mutation($input: DeleteGprTemplateInput!) { deleteGprTemplate(input: $input) { template { id name } userErrors { field message code } } }";
const SET_AUTO: &str = "mutation($input: SetSliceAutoGprInput!) { setSliceAutoGpr(input: $input) { slice { id autoGpr { enabled template { id name } } } userErrors { field message code } } }";
const SLICE_GPRS: &str = "query($id: ID!) { slice(id: $id) { gprs(first: 50) { edges { node { id name phase nodeCount gpuShape priority duration labels { key value } preferredClusters { id } } } } } }";

fn fields(payload: &Value) -> Vec<String> {
    payload["userErrors"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| e["field"].as_array().map(|f| f.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(".")).unwrap_or_default())
        .collect()
}

async fn create_template(app: &TestApp, input: Value) -> String {
    app.mutate(&app.admin_token, "createGprTemplate", CREATE, input).await["template"]["id"].as_str().expect("template id").to_owned()
}

#[tokio::test]
async fn templates_are_validated_and_managed_by_admins_only() {
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    let slice = fixtures::create_slice(&app, "team-a", &cluster, json!({})).await;
    let (_, user) = member(&app, "alice", &slice, "OWNER").await;

    let bad = app
        .ok(
            &app.admin_token,
            CREATE,
            json!({ "input": { "name": "Not A Label", "nodeCount": 0, "gpusPerNode": 0, "priority": 500, "duration": "30s", "idleTimeout": "10s" } }),
        )
        .await["createGprTemplate"]
        .clone();
    assert_eq!(bad["template"], Value::Null);
    let mut got = fields(&bad);
    got.sort();
    assert_eq!(got, ["input.duration", "input.gpusPerNode", "input.idleTimeout", "input.name", "input.nodeCount", "input.priority"], "{bad}");

    let input = json!({ "name": "one-h100", "description": "one H100 node for 2h", "nodeCount": 1, "gpuShape": SHAPE_H100, "priority": 150, "duration": "2h" });
    let created = app.mutate(&app.admin_token, "createGprTemplate", CREATE, input.clone()).await["template"].clone();
    assert_eq!(created["priority"], 150);
    assert_eq!(created["duration"], "PT2H");
    let id = created["id"].as_str().expect("id").to_owned();
    let twice = app.ok(&app.admin_token, CREATE, json!({ "input": input })).await;
    assert_eq!(twice["createGprTemplate"]["userErrors"][0]["code"], "CONFLICT", "{twice}");

    let out_of_range = app.ok(&app.admin_token, UPDATE, json!({ "input": { "id": id, "nodeCount": 0, "duration": "400d" } })).await;
    assert_eq!(fields(&out_of_range["updateGprTemplate"]), ["input.nodeCount", "input.duration"], "{out_of_range}");
    let updated =
        app.mutate(&app.admin_token, "updateGprTemplate", UPDATE, json!({ "id": id, "nodeCount": 2, "gpuShape": null, "idleTimeout": "30m" })).await;
    assert_eq!(updated["template"]["nodeCount"], 2);
    assert_eq!(updated["template"]["gpuShape"], Value::Null);
    assert_eq!(updated["template"]["idleTimeout"], "PT30M");
    assert_eq!(updated["template"]["priority"], 150, "omitted fields keep their value");

    // Users read the templates published to their slices but may not change them or the
    // slice's auto-GPR, even as owners.
    let unpublished = app.ok(&user, "{ gprTemplates { id } }", json!({})).await;
    assert_eq!(unpublished["gprTemplates"], json!([]), "not published to the user's slice yet");
    app.mutate(
        &app.admin_token,
        "publishGprTemplate",
        "mutation($input: PublishGprTemplateInput!) { publishGprTemplate(input: $input) { template { id } userErrors { message } } }",
        json!({ "id": id, "sliceIds": [slice] }),
    )
    .await;
    let listed = app.ok(&user, "{ gprTemplates { id name nodeCount } }", json!({})).await;
    assert_eq!(listed["gprTemplates"], json!([{ "id": id, "name": "one-h100", "nodeCount": 2 }]));
    for (query, input) in [
        (CREATE, json!({ "name": "mine", "nodeCount": 1, "duration": "1h" })),
        (UPDATE, json!({ "id": id, "priority": 300 })),
        (DELETE, json!({ "id": id })),
        (SET_AUTO, json!({ "sliceId": slice, "templateId": id, "enabled": true })),
    ] {
        let refused = app.gql(&user, query, json!({ "input": input })).await;
        assert_eq!(refused["errors"][0]["extensions"]["code"], "FORBIDDEN", "{refused}");
    }

    // The auto-GPR binding.
    let no_template = app.ok(&app.admin_token, SET_AUTO, json!({ "input": { "sliceId": slice, "templateId": null, "enabled": true } })).await;
    assert_eq!(fields(&no_template["setSliceAutoGpr"]), ["input.enabled"], "{no_template}");
    let bound = app.mutate(&app.admin_token, "setSliceAutoGpr", SET_AUTO, json!({ "sliceId": slice, "templateId": id, "enabled": true })).await;
    assert_eq!(bound["slice"]["autoGpr"], json!({ "enabled": true, "template": { "id": id, "name": "one-h100" } }));
    let seen = app.ok(&user, "query($id: ID!) { slice(id: $id) { autoGpr { enabled template { name } } } }", json!({ "id": slice })).await;
    assert_eq!(seen["slice"]["autoGpr"]["template"]["name"], "one-h100");

    let in_use = app.ok(&app.admin_token, DELETE, json!({ "input": { "id": id } })).await;
    assert_eq!(in_use["deleteGprTemplate"]["userErrors"][0]["code"], "CONFLICT", "{in_use}");
    let cleared = app.mutate(&app.admin_token, "setSliceAutoGpr", SET_AUTO, json!({ "sliceId": slice, "templateId": null, "enabled": false })).await;
    assert_eq!(cleared["slice"]["autoGpr"], json!({ "enabled": false, "template": null }));
    app.mutate(&app.admin_token, "deleteGprTemplate", DELETE, json!({ "id": id })).await;
    let empty = app.ok(&user, "{ gprTemplates { id } }", json!({})).await;
    assert_eq!(empty["gprTemplates"], json!([]));
    app.finish().await;
}

/// A cluster with two H100 nodes, registered and discovered; returns the cluster id.
async fn gpu_cluster(app: &TestApp, kube: &KubeBackend) -> String {
    for n in 0..2 {
        kube.add_gpu_node(&format!("gpu-{n}"), SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true).await;
    }
    let cluster = fixtures::register_kube_cluster(app, "kube", &kube.kubeconfig(), "ADMISSION_PLUGINS").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let found = app.ok(&app.admin_token, "query($id: ID!) { cluster(id: $id) { nodes { totalCount } } }", json!({ "id": cluster })).await;
        if found["cluster"]["nodes"]["totalCount"] == 2 {
            return cluster;
        }
        assert!(tokio::time::Instant::now() < deadline, "nodes not discovered: {found}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn slice_gprs(app: &TestApp, slice: &str) -> Vec<Value> {
    let data = app.ok(&app.admin_token, SLICE_GPRS, json!({ "id": slice })).await;
    data["slice"]["gprs"]["edges"].as_array().into_iter().flatten().map(|e| e["node"].clone()).collect()
}

/// Waits until the slice has a GPR; fails after 15 s.
async fn first_gpr(app: &TestApp, slice: &str) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let gprs = slice_gprs(app, slice).await;
        if !gprs.is_empty() {
            return gprs;
        }
        assert!(tokio::time::Instant::now() < deadline, "auto-GPR created nothing");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn label<'a>(gpr: &'a Value, key: &str) -> Option<&'a str> {
    gpr["labels"].as_array()?.iter().find(|l| l["key"] == key)?["value"].as_str()
}

async fn auto_slice(app: &TestApp, kube: &KubeBackend, cluster: &str, name: &str, template: Option<&str>) -> String {
    kube.add_namespace(name).await;
    let slice = fixtures::create_slice(app, name, cluster, json!({})).await;
    if let Some(template) = template {
        app.mutate(&app.admin_token, "setSliceAutoGpr", SET_AUTO, json!({ "sliceId": slice, "templateId": template, "enabled": true })).await;
    }
    slice
}

async fn pending_gpu_pods_get_exactly_one_gpr_from_the_template(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let cluster = gpu_cluster(&app, &kube).await;
    let template =
        create_template(&app, json!({ "name": "one-h100", "nodeCount": 1, "gpuShape": SHAPE_H100, "priority": 150, "duration": "2h" })).await;
    let slice = auto_slice(&app, &kube, &cluster, "team-a", Some(&template)).await;

    kube.add_pod("team-a", "train-0", None, &[("app", "train")], 8, "Pending").await;
    kube.add_pod("team-a", "train-1", None, &[("app", "train")], 8, "Pending").await;

    let gprs = first_gpr(&app, &slice).await;
    // Both pods keep waiting past the threshold several times over: still one GPR.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let gprs_later = slice_gprs(&app, &slice).await;
    assert_eq!(gprs_later.len(), 1, "one GPR per slice, not per pod: {gprs_later:#?}");
    let gpr = &gprs[0];
    assert_eq!(gpr["nodeCount"], 1);
    assert_eq!(gpr["gpuShape"], SHAPE_H100);
    assert_eq!(gpr["priority"], 150);
    assert_eq!(gpr["duration"], "PT2H");
    assert_eq!(gpr["preferredClusters"], json!([{ "id": cluster }]));
    assert_eq!(label(gpr, "egs.io/auto-gpr"), Some("true"), "{gpr}");
    let trigger = label(gpr, "egs.io/trigger-pod").expect("the trigger pod").to_owned();
    assert!(trigger == "team-a/train-0" || trigger == "team-a/train-1", "{trigger}");

    let pod = trigger.trim_start_matches("team-a/");
    let events = kube.events_for("Pod", pod).await;
    let created: Vec<&Value> = events.iter().filter(|e| e["reason"] == "GPRCreated").collect();
    assert_eq!(created.len(), 1, "{events:#?}");
    assert_eq!(created[0]["involvedObject"]["namespace"], "team-a");
    assert_eq!(created[0]["type"], "Normal");
    assert!(created[0]["message"].as_str().is_some_and(|m| m.contains("one-h100")), "{created:?}");
    let other = if pod == "train-0" { "train-1" } else { "train-0" };
    assert!(kube.events_for("Pod", other).await.iter().all(|e| e["reason"] != "GPRCreated"));
    app.finish().await;
}
on_both_backends!(pending_gpu_pods_get_exactly_one_gpr_from_the_template);

async fn pods_without_gpus_and_slices_without_auto_gpr_get_none(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let cluster = gpu_cluster(&app, &kube).await;
    let template = create_template(&app, json!({ "name": "one-h100", "nodeCount": 1, "gpuShape": SHAPE_H100, "duration": "1h" })).await;
    let with_auto = auto_slice(&app, &kube, &cluster, "team-a", Some(&template)).await;
    let without = auto_slice(&app, &kube, &cluster, "team-b", None).await;
    // Bound to a template but turned off.
    let off = auto_slice(&app, &kube, &cluster, "team-c", None).await;
    app.mutate(&app.admin_token, "setSliceAutoGpr", SET_AUTO, json!({ "sliceId": off, "templateId": template, "enabled": false })).await;

    kube.add_pod("team-a", "cpu-only", None, &[], 0, "Pending").await;
    kube.add_pod("team-b", "train", None, &[], 8, "Pending").await;
    kube.add_pod("team-c", "train", None, &[], 8, "Pending").await;
    kube.add_pod("default", "not-a-slice", None, &[], 8, "Pending").await;
    // Auto-GPR acts after 1 s and looks every second: give it three.
    tokio::time::sleep(Duration::from_secs(3)).await;
    for slice in [&with_auto, &without, &off] {
        assert_eq!(slice_gprs(&app, slice).await, Vec::<Value>::new());
    }
    assert!(kube.list("events", None).await.iter().all(|e| e["reason"] != "GPRCreated"));

    // The controller was watching all along: a GPU pod in the auto-GPR slice gets one.
    kube.add_pod("team-a", "train", None, &[], 8, "Pending").await;
    let gprs = first_gpr(&app, &with_auto).await;
    assert_eq!(label(&gprs[0], "egs.io/trigger-pod"), Some("team-a/train"));
    assert_eq!(slice_gprs(&app, &without).await.len() + slice_gprs(&app, &off).await.len(), 0);
    app.finish().await;
}
on_both_backends!(pods_without_gpus_and_slices_without_auto_gpr_get_none);
