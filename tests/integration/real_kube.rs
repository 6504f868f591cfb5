//! The Kubernetes provider against a real kube-apiserver and etcd (`egs_tests::control_plane`)
//! with what `deploy/` installs: the CRD, and the gateway's ServiceAccount, ClusterRoles and
//! bindings. The gateway acts with a token of that ServiceAccount (minted by TokenRequest), so
//! a verb the ClusterRole lacks fails here as it would in a cluster. No kubelet runs: the
//! tests create the Node objects (and their status) themselves.
//!
//! Without Go (or with a build that fails) these tests say loudly that they skipped; CI sets
//! `EGS_TEST_REQUIRE_KUBE`, so there they fail instead.

use crate::kubernetes::{early_release, has_slice_taint, labels, node_count, steps, wait_phase};
use egs_tests::control_plane::{ControlPlane, start_or_skip};
use egs_tests::fake_kube::FakeKube;
use egs_tests::fixtures::{self, SHAPE_H100};
use egs_tests::{TestApp, wait_for};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, Node, Pod, ServiceAccount};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use serde_json::{Value, json};
use std::path::Path;

/// The namespace `deploy/` puts the gateway in.
const EGS_NAMESPACE: &str = "egs";

/// Server-side applies every document of `deploy/kustomize/base/<file>`; namespaced objects
/// without a namespace go to `egs`, as kustomize's `namespace:` does.
async fn apply_deploy_file(client: &kube::Client, file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/kustomize/base").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text).unwrap_or_else(|e| panic!("{file} does not parse: {e}"));
    for doc in docs.into_iter().filter(|d| d.is_object()) {
        apply(client, doc).await;
    }
}

async fn apply(client: &kube::Client, mut doc: Value) {
    let (group_version, kind) = (doc["apiVersion"].as_str().expect("apiVersion").to_owned(), doc["kind"].as_str().expect("kind").to_owned());
    let (group, version) = group_version.split_once('/').unwrap_or(("", group_version.as_str()));
    let gvk = GroupVersionKind::gvk(group, version, &kind);
    let (resource, capabilities) = kube::discovery::pinned_kind(client, &gvk).await.unwrap_or_else(|e| panic!("{kind}: {e}"));
    let name = doc["metadata"]["name"].as_str().expect("a name").to_owned();
    let api: Api<DynamicObject> = if capabilities.scope == kube::discovery::Scope::Namespaced {
        let namespace = doc["metadata"]["namespace"].as_str().unwrap_or(EGS_NAMESPACE).to_owned();
        doc["metadata"]["namespace"] = json!(namespace);
        Api::namespaced_with(client.clone(), &namespace, &resource)
    } else {
        Api::all_with(client.clone(), &resource)
    };
    api.patch(&name, &PatchParams::apply("egs-tests").force(), &Patch::Apply(&doc)).await.unwrap_or_else(|e| panic!("applying {kind} {name}: {e}"));
}

/// Installs the CRD and the gateway's identity from `deploy/`; returns a token of the gateway's
/// ServiceAccount.
async fn install_deploy(plane: &ControlPlane) -> String {
    let admin = plane.client();
    for file in ["namespace.yaml", "crd.yaml", "gateway-serviceaccount.yaml", "gateway-rbac.yaml"] {
        apply_deploy_file(&admin, file).await;
    }
    // The CRD serves once it is Established.
    let gvk = GroupVersionKind::gvk("egs.io", "v1alpha1", "GPUProvisioningRequest");
    wait_for("the GPUProvisioningRequest CRD to serve", || async { kube::discovery::pinned_kind(&admin, &gvk).await.is_ok() }).await;
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), EGS_NAMESPACE);
    let request = TokenRequest { spec: Some(TokenRequestSpec { expiration_seconds: Some(3600), ..Default::default() }), ..Default::default() };
    let issued = accounts.create_token_request("egs-gateway", &PostParams::default(), &request).await.expect("a token for the gateway");
    issued.status.and_then(|s| s.token).expect("a token")
}

/// A Node as a kubelet would register it (the object, then its status, which a kubelet
/// reports through the status subresource).
async fn add_gpu_node(client: &kube::Client, name: &str) {
    let manifest = FakeKube::gpu_node_manifest(name, SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true);
    let nodes: Api<Node> = Api::all(client.clone());
    let mut object = manifest.clone();
    object.as_object_mut().expect("an object").remove("status");
    let node: Node = serde_json::from_value(object).expect("a Node");
    nodes.create(&PostParams::default(), &node).await.expect("the node is created");
    let status = json!({ "status": manifest["status"] });
    nodes.patch_status(name, &PatchParams::default(), &Patch::Merge(&status)).await.expect("the node's status");
}

async fn add_namespace(client: &kube::Client, name: &str) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace: Namespace = serde_json::from_value(json!({ "metadata": { "name": name } })).expect("a Namespace");
    namespaces.create(&PostParams::default(), &namespace).await.expect("the namespace is created");
}

async fn node_json(client: &kube::Client, name: &str) -> Value {
    let nodes: Api<Node> = Api::all(client.clone());
    serde_json::to_value(nodes.get(name).await.expect("the node")).expect("json")
}

fn gpr_resource(name: &str, nodes: i64) -> Value {
    json!({
        "apiVersion": "egs.io/v1alpha1",
        "kind": "GPUProvisioningRequest",
        "metadata": { "name": name, "namespace": "team-a" },
        "spec": { "nodes": nodes, "gpuShape": SHAPE_H100, "duration": "1h" },
    })
}

#[tokio::test]
async fn the_crd_from_deploy_refuses_what_its_schema_forbids() {
    let Some(plane) = start_or_skip("real_kube::the_crd_from_deploy_refuses_what_its_schema_forbids").await else { return };
    install_deploy(&plane).await;
    let admin = plane.client();
    add_namespace(&admin, "team-a").await;
    let gvk = GroupVersionKind::gvk("egs.io", "v1alpha1", "GPUProvisioningRequest");
    let (resource, _) = kube::discovery::pinned_kind(&admin, &gvk).await.expect("the CRD");
    let api: Api<DynamicObject> = Api::namespaced_with(admin.clone(), "team-a", &resource);
    let object = |value: Value| serde_json::from_value::<DynamicObject>(value).expect("an object");
    // `nodes: 0` is below the schema's minimum: 422 from the API server, nothing stored.
    match api.create(&PostParams::default(), &object(gpr_resource("none", 0))).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422, "{status:?}");
            assert!(status.message.contains("spec.nodes"), "{status:?}");
        }
        other => panic!("nodes: 0 must be refused: {other:?}"),
    }
    assert!(api.get_opt("none").await.expect("read").is_none());
    // The same refusals the fake gives (`fake_kube::gpr_resources_are_checked_against_the_crd_schema_from_deploy_as_a_real_server_does`).
    for (spec, field) in [(json!({ "nodes": "two", "duration": "1h" }), "spec.nodes"), (json!({ "nodes": 1 }), "spec.duration")] {
        let manifest = json!({ "apiVersion": "egs.io/v1alpha1", "kind": "GPUProvisioningRequest", "metadata": { "name": "bad", "namespace": "team-a" }, "spec": spec });
        match api.create(&PostParams::default(), &object(manifest)).await {
            Err(kube::Error::Api(status)) => assert!(status.code == 422 && status.message.contains(field), "{spec}: {status:?}"),
            other => panic!("{spec} must be refused: {other:?}"),
        }
    }
    // A well-formed one is stored.
    api.create(&PostParams::default(), &object(gpr_resource("one", 1))).await.expect("a valid request is stored");
}

#[tokio::test]
async fn the_gateway_with_deploys_rbac_provisions_releases_and_mints_a_working_slice_kubeconfig() {
    let Some(plane) = start_or_skip("real_kube::the_gateway_with_deploys_rbac_provisions_releases_and_mints_a_working_slice_kubeconfig").await else {
        return;
    };
    let gateway_token = install_deploy(&plane).await;
    let admin = plane.client();
    for n in 0..2 {
        add_gpu_node(&admin, &format!("gpu-{n}")).await;
    }
    add_namespace(&admin, "team-a").await;
    add_namespace(&admin, "other").await;

    let app = TestApp::spawn().await;
    let cluster = fixtures::register_kube_cluster(&app, "real", &plane.kubeconfig_for_token(&gateway_token), "ADMISSION_PLUGINS").await;
    wait_for("the real nodes to be discovered", || async { node_count(&app, &cluster).await == 2 }).await;
    let slice = fixtures::create_slice(&app, "team-a", &cluster, json!({})).await;
    let (_, owner) = fixtures::member(&app, "olga", &slice, "OWNER").await;

    // Provisioning with the gateway's own rights: labels, taint, namespace steering.
    let created = fixtures::create_gpr(&app, &owner, &slice, "train", json!({ "nodeCount": 1 })).await;
    let id = created["id"].as_str().expect("id");
    let provisioned = wait_phase(&app, id, "PROVISIONED").await;
    assert_eq!(
        steps(&provisioned, "PROVISION"),
        ["PRECHECK", "LABEL_AND_TAINT", "POD_PLACEMENT", "EVENTS"].map(|s| (s.to_owned(), "DONE".to_owned())).to_vec()
    );
    let node_name = provisioned["nodes"][0]["name"].as_str().expect("a node").to_owned();
    let node = node_json(&admin, &node_name).await;
    assert_eq!(labels(&node)["egs.io/slice"], "team-a", "{node}");
    assert!(has_slice_taint(&node, "team-a"), "{node}");

    // The slice kubeconfig, minted through TokenRequest: its namespace yes, elsewhere 403.
    let issued = app
        .mutate(
            &owner,
            "sliceKubeconfig",
            "mutation($input: SliceKubeconfigInput!) { sliceKubeconfig(input: $input) { kubeconfig userErrors { field message code } } }",
            json!({ "sliceId": slice, "clusterId": cluster }),
        )
        .await;
    let kubeconfig = kube::config::Kubeconfig::from_yaml(issued["kubeconfig"].as_str().expect("a kubeconfig")).expect("parses");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.expect("usable");
    let slice_client = kube::Client::try_from(config).expect("a client");
    let pods = |namespace: &str| {
        let api: Api<Pod> = Api::namespaced(slice_client.clone(), namespace);
        async move { api.list(&ListParams::default()).await.map(|l| l.items.len()).map_err(|e| if let kube::Error::Api(s) = e { s.code } else { 0 }) }
    };
    assert_eq!(pods("team-a").await, Ok(0), "its own namespace");
    assert_eq!(pods("other").await, Err(403), "another namespace, refused by the real authorizer");
    assert_eq!(pods("kube-system").await, Err(403));
    let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(slice_client.clone(), "team-a");
    assert!(matches!(secrets.list(&ListParams::default()).await, Err(kube::Error::Api(s)) if s.code == 403), "no Secrets without the policy");

    // Release: unlabelled, untainted, uncordoned.
    early_release(&app, &owner, id).await;
    let completed = wait_phase(&app, id, "COMPLETED").await;
    assert!(steps(&completed, "RELEASE").iter().all(|(_, status)| status == "DONE"), "{completed}");
    let node = node_json(&admin, &node_name).await;
    assert!(labels(&node).get("egs.io/slice").is_none() && !has_slice_taint(&node, "team-a"), "{node}");
    assert!(node["spec"]["unschedulable"].is_null() || node["spec"]["unschedulable"] == false, "{node}");
    app.finish().await;
}
