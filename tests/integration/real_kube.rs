//! The Kubernetes provider against a real kube-apiserver and etcd (`egs_tests::kube_backend`)
//! with what `deploy/` installs: the CRD, and the gateway's ServiceAccount, ClusterRoles and
//! bindings. The gateway acts with a token of that ServiceAccount (minted by TokenRequest), so
//! a verb the ClusterRole lacks fails here as it would in a cluster. No kubelet runs: the
//! tests create the Node objects (and their status) themselves.
//!
//! Without Go (or with a build that fails) these tests say loudly that they skipped; CI sets
//! `EGS_TEST_REQUIRE_KUBE`, so there they fail instead.

use crate::kubernetes::{early_release, has_slice_taint, labels, node_count, steps, wait_phase};
use egs_tests::fixtures::{self, SHAPE_H100};
use egs_tests::kube_backend::KubeBackend;
use egs_tests::{TestApp, wait_for};
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use serde_json::{Value, json};

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
    let Some(kube) = KubeBackend::start_real("real_kube::the_crd_from_deploy_refuses_what_its_schema_forbids").await else { return };
    let admin = kube.admin();
    kube.add_namespace("team-a").await;
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
    let Some(kube) =
        KubeBackend::start_real("real_kube::the_gateway_with_deploys_rbac_provisions_releases_and_mints_a_working_slice_kubeconfig").await
    else {
        return;
    };
    let admin = kube.admin();
    for n in 0..2 {
        kube.add_gpu_node(&format!("gpu-{n}"), SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true).await;
    }
    kube.add_namespace("team-a").await;
    kube.add_namespace("other").await;

    let app = TestApp::spawn().await;
    let (cluster, slice) = gateway_on(&app, &kube, 2).await;
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
    let node = kube.get("nodes", None, &node_name).await.expect("the node");
    assert_eq!(labels(&node)["egs.io/slice"], "team-a", "{node}");
    assert!(has_slice_taint(&node, "team-a"), "{node}");

    // Someone else (another field manager) applied the slice's Role first, granting Secrets:
    // EGS's apply takes the rules over (force), so the kubeconfig gets EGS's rules only.
    let roles: Api<k8s_openapi::api::rbac::v1::Role> = Api::namespaced(admin.clone(), "team-a");
    let rogue = json!({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": { "name": "egs-slice-team-a", "namespace": "team-a" },
        "rules": [{ "apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list"] }],
    });
    roles.patch("egs-slice-team-a", &PatchParams::apply("someone-else"), &Patch::Apply(&rogue)).await.expect("the other manager's apply");

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
    let role = serde_json::to_value(roles.get("egs-slice-team-a").await.expect("the Role")).expect("json");
    assert!(!role["rules"].to_string().contains("secrets"), "EGS's rules replaced the other manager's: {role}");
    let managers: Vec<&str> =
        role["metadata"]["managedFields"].as_array().expect("managed fields").iter().filter_map(|m| m["manager"].as_str()).collect();
    assert!(managers.contains(&"egs"), "EGS owns the rules now: {managers:?}");

    // Release: unlabelled, untainted, uncordoned.
    early_release(&app, &owner, id).await;
    let completed = wait_phase(&app, id, "COMPLETED").await;
    assert!(steps(&completed, "RELEASE").iter().all(|(_, status)| status == "DONE"), "{completed}");
    let node = kube.get("nodes", None, &node_name).await.expect("the node");
    assert!(labels(&node).get("egs.io/slice").is_none() && !has_slice_taint(&node, "team-a"), "{node}");
    assert!(node["spec"]["unschedulable"].is_null() || node["spec"]["unschedulable"] == false, "{node}");
    app.finish().await;
}

/// What the disruption controller would write (it does not run here): how many disruptions
/// the budget allows now.
async fn set_pdb_allows(client: &kube::Client, namespace: &str, name: &str, allowed: i32) {
    let pdbs: Api<k8s_openapi::api::policy::v1::PodDisruptionBudget> = Api::namespaced(client.clone(), namespace);
    let generation = pdbs.get(name).await.expect("the PDB").metadata.generation.unwrap_or(1);
    let status = json!({ "status": {
        "observedGeneration": generation, "disruptionsAllowed": allowed,
        "currentHealthy": 1 + allowed, "desiredHealthy": 1, "expectedPods": 1 + allowed,
    } });
    pdbs.patch_status(name, &PatchParams::default(), &Patch::Merge(&status)).await.expect("the PDB's status");
}

#[tokio::test]
async fn a_real_pod_disruption_budget_holds_the_release_until_it_allows_the_eviction() {
    let Some(kube) = KubeBackend::start_real("real_kube::a_real_pod_disruption_budget_holds_the_release_until_it_allows_the_eviction").await else {
        return;
    };
    let admin = kube.admin();
    let (app, slice, editor) = one_node_slice(&kube).await;
    let id = fixtures::create_gpr(&app, &editor, &slice, "serve", json!({})).await["id"].as_str().expect("id").to_owned();
    wait_phase(&app, &id, "PROVISIONED").await;

    kube.add_pod("team-a", "server-0", Some("gpu-0"), &[("app", "server")], 8, "Running").await;
    let pdbs: Api<k8s_openapi::api::policy::v1::PodDisruptionBudget> = Api::namespaced(admin.clone(), "team-a");
    let pdb = serde_json::from_value(json!({
        "metadata": { "name": "server", "namespace": "team-a" },
        "spec": { "minAvailable": 1, "selector": { "matchLabels": { "app": "server" } } },
    }))
    .expect("a PDB");
    pdbs.create(&PostParams::default(), &pdb).await.expect("the PDB is created");
    set_pdb_allows(&admin, "team-a", "server", 0).await;

    // The real Eviction API refuses (429) while the budget allows nothing: the release waits
    // and says why; the node stays the slice's.
    early_release(&app, &editor, &id).await;
    wait_for("the blocked eviction to be reported", || async {
        let g = crate::kubernetes::gpr(&app, &id).await;
        g["provisioningSteps"].as_array().is_some_and(|s| {
            s.iter()
                .any(|s| s["step"] == "EVICT" && s["status"] != "DONE" && s["message"].as_str().is_some_and(|m| m.contains("PodDisruptionBudget")))
        })
    })
    .await;
    assert_eq!(crate::kubernetes::gpr(&app, &id).await["phase"], "RELEASING");
    let pods: Api<Pod> = Api::namespaced(admin.clone(), "team-a");
    let pod = pods.get("server-0").await.expect("the pod is still there");
    assert!(pod.metadata.deletion_timestamp.is_none(), "the budget is honoured");
    assert_eq!(labels(&kube.get("nodes", None, "gpu-0").await.expect("the node"))["egs.io/slice"], "team-a");

    // The budget allows one disruption: the eviction goes through. No kubelet runs, so the
    // pod stays terminating until the test finishes its deletion, as a kubelet would.
    set_pdb_allows(&admin, "team-a", "server", 1).await;
    wait_for("the pod to be evicted (terminating)", || async {
        pods.get_opt("server-0").await.ok().flatten().is_none_or(|p| p.metadata.deletion_timestamp.is_some())
    })
    .await;
    let _ = pods.delete("server-0", &kube::api::DeleteParams { grace_period_seconds: Some(0), ..Default::default() }).await;
    let done = wait_phase(&app, &id, "COMPLETED").await;
    assert!(steps(&done, "RELEASE").iter().all(|(_, status)| status == "DONE"), "{done}");
    assert!(pods.get_opt("server-0").await.expect("read").is_none());
    assert!(labels(&kube.get("nodes", None, "gpu-0").await.expect("the node")).get("egs.io/slice").is_none());
    app.finish().await;
}

/// `apiserver_request_total` for `verb` on `resource` (the object itself, no subresource),
/// answered `code` or (with `None`) any code, from the real API server's own metrics.
async fn requests_answered(client: &kube::Client, verb: &str, resource: &str, code: Option<u16>) -> u64 {
    let request = http::Request::get("/metrics").body(Vec::new()).expect("a request");
    let text = client.request_text(request).await.expect("the API server's metrics");
    text.lines()
        .filter(|line| line.starts_with("apiserver_request_total{"))
        .filter(|line| {
            line.contains(&format!("resource=\"{resource}\""))
                && line.contains(&format!("verb=\"{verb}\""))
                && line.contains("subresource=\"\"")
                && code.is_none_or(|code| line.contains(&format!("code=\"{code}\"")))
        })
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum::<f64>() as u64
}

#[tokio::test]
async fn a_node_that_keeps_changing_is_labelled_through_409_conflicts_and_retries() {
    let Some(kube) = KubeBackend::start_real("real_kube::a_node_that_keeps_changing_is_labelled_through_409_conflicts_and_retries").await else {
        return;
    };
    let admin = kube.admin();
    let (app, slice, editor) = one_node_slice(&kube).await;

    // A busy kubelet: the node's annotations change back to back while EGS labels it, so its
    // read-then-conditional-patch meets 409 Conflicts and must read again.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let heartbeat = {
        let (nodes, stop) = (Api::<Node>::all(admin.clone()), stop.clone());
        tokio::spawn(async move {
            let mut beat = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                beat += 1;
                let patch = json!({ "metadata": { "annotations": { "egs-tests/heartbeat": beat.to_string() } } });
                let _ = nodes.patch("gpu-0", &PatchParams::default(), &Patch::Merge(&patch)).await;
            }
        })
    };
    let conflicts_before = requests_answered(&admin, "PATCH", "nodes", Some(409)).await;
    // Each round hands the node over and takes it back; a conflict is likely in each, and the
    // rounds stop at the first (five rounds without one would mean nothing was tested).
    let mut conflicts = 0;
    for round in 0..5 {
        let id = fixtures::create_gpr(&app, &editor, &slice, &format!("train-{round}"), json!({})).await["id"].as_str().expect("id").to_owned();
        let provisioned = wait_phase(&app, &id, "PROVISIONED").await;
        assert!(steps(&provisioned, "PROVISION").iter().all(|(_, status)| status == "DONE"), "{provisioned}");
        let node = kube.get("nodes", None, "gpu-0").await.expect("the node");
        assert_eq!(labels(&node)["egs.io/slice"], "team-a", "{node}");
        assert!(has_slice_taint(&node, "team-a"), "{node}");
        early_release(&app, &editor, &id).await;
        let done = wait_phase(&app, &id, "COMPLETED").await;
        assert!(steps(&done, "RELEASE").iter().all(|(_, status)| status == "DONE"), "{done}");
        let node = kube.get("nodes", None, "gpu-0").await.expect("the node");
        assert!(labels(&node).get("egs.io/slice").is_none() && !has_slice_taint(&node, "team-a"), "{node}");
        conflicts = requests_answered(&admin, "PATCH", "nodes", Some(409)).await - conflicts_before;
        if conflicts > 0 {
            break;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    heartbeat.await.expect("the heartbeat task");
    let node = kube.get("nodes", None, "gpu-0").await.expect("the node");
    assert!(node["metadata"]["annotations"]["egs-tests/heartbeat"].is_string(), "the other writer's changes are kept: {node}");
    assert!(conflicts >= 1, "the real server answered no 409 to EGS's conditional patches in five rounds, so nothing was retried");
    eprintln!("409 Conflicts on node patches while provisioning and releasing: {conflicts}");
    app.finish().await;
}

/// One H100 node `gpu-0`, namespace `team-a`, the gateway on the cluster and slice `team-a`
/// with an editor: (the gateway, the slice's id, the editor's token).
async fn one_node_slice(kube: &KubeBackend) -> (TestApp, String, String) {
    kube.add_gpu_node("gpu-0", SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true).await;
    kube.add_namespace("team-a").await;
    let app = TestApp::spawn().await;
    let (_, slice) = gateway_on(&app, kube, 1).await;
    let (_, editor) = fixtures::member(&app, "ed", &slice, "EDITOR").await;
    (app, slice, editor)
}

/// Registers the real cluster with the gateway's ServiceAccount token and waits for its nodes;
/// the slice `team-a` owns namespace `team-a`. (cluster id, slice id)
async fn gateway_on(app: &TestApp, kube: &KubeBackend, nodes: usize) -> (String, String) {
    let cluster = fixtures::register_kube_cluster(app, "real", &kube.kubeconfig(), "ADMISSION_PLUGINS").await;
    wait_for("the real nodes to be discovered", || async { node_count(app, &cluster).await == nodes }).await;
    let slice = fixtures::create_slice(app, "team-a", &cluster, json!({})).await;
    (cluster, slice)
}

#[tokio::test]
async fn an_applied_resource_becomes_a_gpr_whose_status_and_finalizer_the_gateway_writes_with_deploys_rbac() {
    let Some(kube) =
        KubeBackend::start_real("real_kube::an_applied_resource_becomes_a_gpr_whose_status_and_finalizer_the_gateway_writes_with_deploys_rbac").await
    else {
        return;
    };
    let admin = kube.admin();
    let (app, _, _) = one_node_slice(&kube).await;

    let gvk = GroupVersionKind::gvk("egs.io", "v1alpha1", "GPUProvisioningRequest");
    let (resource, _) = kube::discovery::pinned_kind(&admin, &gvk).await.expect("the CRD");
    let api: Api<DynamicObject> = Api::namespaced_with(admin.clone(), "team-a", &resource);
    let manifest = json!({
        "apiVersion": "egs.io/v1alpha1", "kind": "GPUProvisioningRequest",
        "metadata": { "name": "train", "namespace": "team-a" },
        "spec": { "nodes": 1, "gpuShape": SHAPE_H100, "duration": "1h" },
    });
    api.patch("train", &PatchParams::apply("kubectl"), &Patch::Apply(&manifest)).await.expect("applied");
    let read = |api: Api<DynamicObject>| async move { api.get_opt("train").await.expect("read").map(|o| serde_json::to_value(o).expect("json")) };
    wait_for("the resource's status to say PROVISIONED", || async {
        read(api.clone()).await.is_some_and(|r| r["status"]["phase"] == "PROVISIONED" && r["status"]["gprId"].is_string())
    })
    .await;
    let provisioned = read(api.clone()).await.expect("the resource");
    assert!(provisioned["metadata"]["finalizers"].as_array().is_some_and(|f| f.iter().any(|f| f == "egs.io/gpr")), "{provisioned}");
    assert_eq!(labels(&kube.get("nodes", None, "gpu-0").await.expect("the node"))["egs.io/slice"], "team-a");

    // Deleting it gives the nodes back early; the finalizer holds the object until then.
    api.delete("train", &kube::api::DeleteParams::default()).await.expect("deleted");
    wait_for("the resource to go once its GPR is finished", || async { read(api.clone()).await.is_none() }).await;
    assert!(labels(&kube.get("nodes", None, "gpu-0").await.expect("the node")).get("egs.io/slice").is_none(), "the node came back");
    app.finish().await;
}

#[tokio::test]
async fn after_the_api_server_restarts_the_watches_resume_and_the_inventory_stays_in_step() {
    let Some(mut kube) = KubeBackend::start_real("real_kube::after_the_api_server_restarts_the_watches_resume_and_the_inventory_stays_in_step").await
    else {
        return;
    };
    for n in 0..2 {
        kube.add_gpu_node(&format!("gpu-{n}"), SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true).await;
    }
    kube.add_namespace("team-a").await;
    let app = TestApp::spawn().await;
    let (cluster, _) = gateway_on(&app, &kube, 2).await;

    // The API server goes away (every connection drops) and comes back with a fresh watch
    // cache: the gateway's node watch must resume and see what changed after it.
    kube.restart_apiserver().await;
    kube.delete("nodes", None, "gpu-1").await;
    kube.add_gpu_node("gpu-2", SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true).await;
    wait_for("the inventory to follow the cluster after the restart", || async {
        let mut names: Vec<String> =
            crate::kubernetes::nodes(&app, &cluster).await.iter().filter_map(|n| n["name"].as_str().map(str::to_owned)).collect();
        names.sort();
        names == ["gpu-0", "gpu-2"]
    })
    .await;
    app.finish().await;
}

#[tokio::test]
async fn a_watch_resumed_past_the_servers_window_gets_410_and_the_gateway_lists_again() {
    // Watches served by etcd itself, which forgets history older than a second or two: a
    // watch resumed from before that is answered 410 Gone (the watch cache, by default,
    // remembers minutes).
    let flags = ["--watch-cache=false", "--etcd-compaction-interval=1s"];
    let Some(kube) =
        KubeBackend::start_real_with("real_kube::a_watch_resumed_past_the_servers_window_gets_410_and_the_gateway_lists_again", &flags).await
    else {
        return;
    };
    let KubeBackend::Real(real) = &kube else { unreachable!("a real backend") };
    for n in 0..2 {
        kube.add_gpu_node(&format!("gpu-{n}"), SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true).await;
    }
    // The gateway reaches the API server through a proxy the test can cut.
    let proxy = egs_tests::cluster::TcpProxy::start(egs_tests::cluster::target_of(&real.plane.url)).await;
    let through_proxy = kube.kubeconfig().replace(&real.plane.url, &format!("https://127.0.0.1:{}", proxy.addr.port()));
    let app = TestApp::spawn().await;
    let cluster = fixtures::register_kube_cluster(&app, "real", &through_proxy, "ADMISSION_PLUGINS").await;
    wait_for("the real nodes to be discovered", || async { node_count(&app, &cluster).await == 2 }).await;
    let admin = kube.admin();
    let lists_before = requests_answered(&admin, "LIST", "nodes", None).await;

    // Cut off, the gateway's node watch drops. Meanwhile the nodes change, and etcd compacts
    // away the history the watch would resume from: 410 Gone.
    proxy.set(egs_tests::cluster::Link::Down);
    kube.delete("nodes", None, "gpu-1").await;
    kube.add_gpu_node("gpu-2", SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true).await;
    let nodes: Api<Node> = Api::all(admin.clone());
    for beat in 0..40 {
        let patch = json!({ "metadata": { "annotations": { "egs-tests/churn": beat.to_string() } } });
        nodes.patch("gpu-0", &PatchParams::default(), &Patch::Merge(&patch)).await.expect("churn");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    proxy.set(egs_tests::cluster::Link::Up);

    wait_for("the inventory to follow the cluster once reconnected", || async {
        let mut names: Vec<String> =
            crate::kubernetes::nodes(&app, &cluster).await.iter().filter_map(|n| n["name"].as_str().map(str::to_owned)).collect();
        names.sort();
        names == ["gpu-0", "gpu-2"]
    })
    .await;
    let lists_after = requests_answered(&admin, "LIST", "nodes", None).await;
    assert!(lists_after > lists_before, "the gateway listed the nodes again ({lists_before} → {lists_after} LISTs): its resumed watch was refused");
    app.finish().await;
}
