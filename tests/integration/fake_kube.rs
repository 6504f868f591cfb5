//! The fake Kubernetes API server, driven by the real kube client: it must answer as an API
//! server does, or tests of the Kubernetes provider prove nothing.

use egs_tests::fake_kube::FakeKube;
use futures_util::{StreamExt, TryStreamExt};
use k8s_openapi::api::authentication::v1::TokenRequest;
use k8s_openapi::api::core::v1::{Namespace, Node, Pod, ServiceAccount};
use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, EvictParams, GroupVersionKind, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use kube::core::Status;
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use serde_json::{Value, json};
use std::time::Duration;

const H100: &str = "NVIDIA-H100-80GB-HBM3";

/// The `Status` of a request that must fail.
fn api_error<T: std::fmt::Debug>(result: Result<T, kube::Error>) -> Status {
    match result {
        Err(kube::Error::Api(status)) => *status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn from_json<T: serde::de::DeserializeOwned>(value: Value) -> T {
    serde_json::from_value(value).expect("a valid object")
}

fn pod(name: &str) -> Pod {
    from_json(json!({ "metadata": { "name": name }, "spec": { "containers": [{ "name": "main", "image": "busybox" }] } }))
}

/// A client that shows 429/503 answers instead of retrying them as kube does by default.
fn client_without_retries(fake: &FakeKube) -> Client {
    let mut config = fake.config();
    config.default_retry = false;
    Client::try_from(config).expect("a client")
}

fn gprs(fake: &FakeKube, namespace: &str) -> (Api<DynamicObject>, ApiResource) {
    let gvk = GroupVersionKind::gvk("egs.io", "v1alpha1", "GPUProvisioningRequest");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "gpuprovisioningrequests");
    (Api::namespaced_with(fake.client(), namespace, &resource), resource)
}

async fn names(api: &Api<Pod>, params: ListParams) -> Vec<String> {
    api.list(&params).await.expect("a list").items.iter().map(ResourceExt::name_any).collect()
}

#[tokio::test]
async fn kube_talks_plain_http_to_it_from_a_kubeconfig_and_discovers_the_served_resources() {
    let fake = FakeKube::start().await;
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&fake.kubeconfig()).expect("a kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.expect("a config");
    let client = Client::try_from(config).expect("a client");
    assert_eq!(client.apiserver_version().await.expect("the version").git_version, "v1.34.1");

    let gvk = GroupVersionKind::gvk("egs.io", "v1alpha1", "GPUProvisioningRequest");
    for discovery in [
        kube::Discovery::new(client.clone()).run().await.expect("discovery"),
        kube::Discovery::new(client).run_aggregated().await.expect("aggregated discovery"),
    ] {
        let (resource, capabilities) = discovery.resolve_gvk(&gvk).expect("the GPR resource");
        assert_eq!(resource.plural, "gpuprovisioningrequests");
        assert!(
            capabilities.subresources.iter().any(|(sub, _)| sub.plural == "gpuprovisioningrequests/status" || sub.plural == "status"),
            "{capabilities:?}"
        );
        assert!(discovery.has_group("policy") && discovery.has_group("rbac.authorization.k8s.io"));
    }

    let anonymous = reqwest::get(format!("{}/api/v1/nodes", fake.url())).await.expect("an answer");
    assert_eq!(anonymous.status(), 401);
    let body: Value = anonymous.json().await.expect("a Status");
    assert_eq!((body["kind"].as_str(), body["reason"].as_str(), body["code"].as_u64()), (Some("Status"), Some("Unauthorized"), Some(401)));

    let unknown =
        reqwest::Client::new().get(format!("{}/api/v1/widgets", fake.url())).bearer_auth(fake.admin_token()).send().await.expect("an answer");
    assert_eq!(unknown.status(), 404);
    assert_eq!(unknown.json::<Value>().await.expect("a Status")["reason"], "NotFound");
}

#[tokio::test]
async fn objects_are_created_read_replaced_and_deleted_with_404_and_409_as_on_a_cluster() {
    let fake = FakeKube::start().await;
    let nodes: Api<Node> = Api::all(fake.client());
    let node: Node = from_json(json!({ "metadata": { "name": "gpu-1", "labels": { "pool": "h100" } } }));
    let created = nodes.create(&PostParams::default(), &node).await.expect("created");
    assert!(created.metadata.uid.is_some() && created.metadata.creation_timestamp.is_some());
    assert_eq!(created.metadata.generation, Some(1));

    let duplicate = api_error(nodes.create(&PostParams::default(), &node).await);
    assert_eq!((duplicate.code, duplicate.reason.as_str(), duplicate.message.as_str()), (409, "AlreadyExists", "nodes \"gpu-1\" already exists"));

    let mut fetched = nodes.get("gpu-1").await.expect("read");
    fetched.spec.get_or_insert_default().unschedulable = Some(true);
    let replaced = nodes.replace("gpu-1", &PostParams::default(), &fetched).await.expect("replaced");
    assert_eq!(replaced.metadata.generation, Some(2), "a spec change bumps the generation");
    let version = |n: &Node| n.resource_version().and_then(|v| v.parse::<u64>().ok()).expect("a numeric resourceVersion");
    assert!(version(&replaced) > version(&created));

    nodes.delete("gpu-1", &DeleteParams::default()).await.expect("deleted");
    let missing = api_error(nodes.get("gpu-1").await);
    assert_eq!((missing.code, missing.reason.as_str(), missing.message.as_str()), (404, "NotFound", "nodes \"gpu-1\" not found"));
    assert!(api_error(nodes.delete("gpu-1", &DeleteParams::default()).await).is_not_found());
    assert_eq!(fake.writes("POST", "/api/v1/nodes"), 1, "the duplicate create is audited as failed");
}

#[tokio::test]
async fn a_stale_resource_version_is_a_409_conflict_for_replace_and_patch() {
    let fake = FakeKube::start().await;
    fake.add_gpu_node("gpu-1", H100, 8, "p5.48xlarge", "us-east-1a", true);
    let nodes: Api<Node> = Api::all(fake.client());
    let stale = nodes.get("gpu-1").await.expect("read");
    fake.set_node_ready("gpu-1", false);

    let conflict = api_error(nodes.replace("gpu-1", &PostParams::default(), &stale).await);
    assert_eq!((conflict.code, conflict.reason.as_str()), (409, "Conflict"));
    assert_eq!(
        conflict.message,
        "Operation cannot be fulfilled on nodes \"gpu-1\": the object has been modified; please apply your changes to the latest version and try again"
    );

    let stale_patch = json!({ "metadata": { "resourceVersion": stale.resource_version(), "labels": { "egs.io/slice": "team-a" } } });
    let conflict = api_error(nodes.patch("gpu-1", &PatchParams::default(), &Patch::Merge(&stale_patch)).await);
    assert_eq!((conflict.code, conflict.reason.as_str()), (409, "Conflict"));

    let patched = nodes
        .patch("gpu-1", &PatchParams::default(), &Patch::Merge(json!({ "metadata": { "labels": { "egs.io/slice": "team-a" } } })))
        .await
        .expect("patched");
    assert_eq!(patched.labels()["egs.io/slice"], "team-a");
    assert_eq!(patched.labels()["nvidia.com/gpu.memory"], "81559");
}

#[tokio::test]
async fn label_and_field_selectors_and_pages_filter_lists() {
    let fake = FakeKube::start().await;
    fake.add_pod("team-a", "a", Some("gpu-1"), &[("app", "train"), ("tier", "gold")], 8, "Running");
    fake.add_pod("team-a", "b", Some("gpu-2"), &[("app", "train")], 8, "Running");
    fake.add_pod("team-a", "c", None, &[("app", "serve")], 1, "Pending");
    fake.add_pod("team-b", "d", Some("gpu-1"), &[], 0, "Succeeded");
    let all: Api<Pod> = Api::all(fake.client());
    let labels = |s: &str| ListParams::default().labels(s);
    let fields = |s: &str| ListParams::default().fields(s);
    assert_eq!(names(&all, labels("app=train")).await, ["a", "b"]);
    assert_eq!(names(&all, labels("app in (train, serve),tier!=gold")).await, ["b", "c"]);
    assert_eq!(names(&all, labels("!tier")).await, ["b", "c", "d"]);
    assert_eq!(names(&all, labels("app notin (train)")).await, ["c", "d"]);
    assert_eq!(names(&all, fields("spec.nodeName=gpu-1")).await, ["a", "d"]);
    assert_eq!(names(&all, fields("status.phase!=Running,metadata.namespace=team-a")).await, ["c"]);
    assert_eq!(names(&all, labels("app==train").fields("spec.nodeName=gpu-2")).await, ["b"]);
    assert_eq!(names(&Api::namespaced(fake.client(), "team-b"), ListParams::default()).await, ["d"]);

    let unsupported = api_error(all.list(&fields("spec.foo=bar")).await);
    assert_eq!((unsupported.code, unsupported.message.as_str()), (400, "field label not supported: spec.foo"));

    let first = all.list(&ListParams::default().limit(3)).await.expect("a page");
    assert_eq!(first.items.len(), 3);
    let token = first.metadata.continue_.clone().expect("a continue token");
    let rest = all.list(&ListParams::default().limit(3).continue_token(&token)).await.expect("the next page");
    assert_eq!(rest.items.iter().map(ResourceExt::name_any).collect::<Vec<_>>(), ["d"]);
    assert!(rest.metadata.continue_.is_none_or(|c| c.is_empty()));
}

#[tokio::test]
async fn a_watcher_sees_additions_changes_and_deletions_from_the_api_and_the_test_helpers() {
    let fake = FakeKube::start().await;
    fake.add_pod("team-a", "early", Some("gpu-1"), &[], 0, "Running");
    let pods: Api<Pod> = Api::namespaced(fake.client(), "team-a");
    let mut events = watcher(pods.clone(), watcher::Config::default()).boxed();
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(5), events.try_next())
            .await
            .expect("an event in time")
            .expect("no watch error")
            .expect("an open stream")
    };

    assert!(matches!(next().await, watcher::Event::Init));
    assert!(matches!(next().await, watcher::Event::InitApply(p) if p.name_any() == "early"));
    assert!(matches!(next().await, watcher::Event::InitDone));

    pods.create(&PostParams::default(), &pod("made")).await.expect("created");
    let watcher::Event::Apply(made) = next().await else { panic!("expected the new pod") };
    assert_eq!((made.name_any().as_str(), made.status.and_then(|s| s.phase).as_deref()), ("made", Some("Pending")));

    fake.set_pod_phase("team-a", "made", "Running");
    let watcher::Event::Apply(running) = next().await else { panic!("expected the phase change") };
    assert_eq!(running.status.and_then(|s| s.phase).as_deref(), Some("Running"));

    pods.delete("early", &DeleteParams::default()).await.expect("deleted");
    assert!(matches!(next().await, watcher::Event::Delete(p) if p.name_any() == "early"));
}

#[tokio::test]
async fn raw_watches_resume_from_a_resource_version_follow_selectors_and_expire_with_410() {
    let fake = FakeKube::start().await;
    fake.add_pod("team-a", "a", Some("gpu-1"), &[("app", "train")], 8, "Running");
    let pods: Api<Pod> = Api::namespaced(fake.client(), "team-a");
    let since = fake.resource_version().to_string();
    fake.put_object(json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "a", "namespace": "team-a", "labels": { "app": "serve" } } }));

    // From `since`, the relabel takes the pod out of the selection: DELETED for this watch.
    let stream = pods.watch(&WatchParams::default().labels("app=train").timeout(5), &since).await.expect("a watch");
    let events: Vec<WatchEvent<Pod>> = stream.take(1).try_collect().await.expect("events");
    assert!(matches!(&events[..], [WatchEvent::Deleted(p)] if p.name_any() == "a"), "{events:?}");

    fake.compact();
    let stream = pods.watch(&WatchParams::default(), &since).await.expect("a watch");
    let events: Vec<WatchEvent<Pod>> = stream.try_collect().await.expect("events");
    assert!(matches!(&events[..], [WatchEvent::Error(e)] if e.code == 410 && e.reason == "Expired"), "{events:?}");
}

#[tokio::test]
async fn finalizers_hold_a_deleted_object_until_the_last_one_is_removed() {
    let fake = FakeKube::start().await;
    fake.add_namespace("team-a");
    let (gprs, resource) = gprs(&fake, "team-a");
    let mut gpr = DynamicObject::new("train-1", &resource).data(json!({ "spec": { "nodes": 1, "duration": "1h" } }));
    gpr.metadata.finalizers = Some(vec!["egs.io/release".into()]);
    gprs.create(&PostParams::default(), &gpr).await.expect("created");

    gprs.delete("train-1", &DeleteParams::default()).await.expect("deletion accepted");
    let held = gprs.get("train-1").await.expect("still there");
    assert!(held.metadata.deletion_timestamp.is_some());

    let more = json!({ "metadata": { "finalizers": ["egs.io/release", "egs.io/other"] } });
    let refused = api_error(gprs.patch("train-1", &PatchParams::default(), &Patch::Merge(&more)).await);
    assert_eq!((refused.code, refused.reason.as_str()), (422, "Invalid"));

    gprs.patch("train-1", &PatchParams::default(), &Patch::Merge(json!({ "metadata": { "finalizers": null } }))).await.expect("finalizer removed");
    assert!(gprs.get_opt("train-1").await.expect("a read").is_none());
}

#[tokio::test]
async fn an_eviction_is_refused_with_429_by_a_pod_disruption_budget_until_another_pod_runs() {
    let fake = FakeKube::start().await;
    fake.add_pod("team-a", "a", Some("gpu-1"), &[("app", "train")], 8, "Running");
    fake.add_pdb("team-a", "train", &[("app", "train")], 1);
    let pods: Api<Pod> = Api::namespaced(client_without_retries(&fake), "team-a");

    let refused = api_error(pods.evict("a", &EvictParams::default()).await);
    assert_eq!((refused.code, refused.reason.as_str()), (429, "TooManyRequests"));
    assert_eq!(refused.message, "Cannot evict pod as it would violate the pod's disruption budget.");
    let cause = &refused.details.expect("details").causes[0];
    assert_eq!(
        (cause.reason.as_str(), cause.message.as_str()),
        ("DisruptionBudget", "The disruption budget train needs 1 healthy pods and has 1 currently")
    );

    fake.add_pod("team-a", "b", Some("gpu-2"), &[("app", "train")], 8, "Pending");
    assert_eq!(api_error(pods.evict("a", &EvictParams::default()).await).code, 429, "a pending pod is not healthy");
    fake.set_pod_phase("team-a", "b", "Running");
    assert_eq!(fake.get("pdb", Some("team-a"), "train").expect("the PDB")["status"]["disruptionsAllowed"], 1);

    assert!(pods.evict("a", &EvictParams::default()).await.expect("evicted").is_success());
    assert!(pods.get_opt("a").await.expect("a read").is_none());
    assert!(api_error(pods.evict("a", &EvictParams::default()).await).is_not_found());
    assert_eq!(fake.writes("POST", "/pods/a/eviction"), 1);
}

#[tokio::test]
async fn the_gpr_status_subresource_is_isolated_from_the_main_resource() {
    let fake = FakeKube::start().await;
    fake.add_namespace("team-a");
    let (gprs, resource) = gprs(&fake, "team-a");
    let gpr =
        DynamicObject::new("train-1", &resource).data(json!({ "spec": { "nodes": 1, "duration": "1h" }, "status": { "phase": "Provisioned" } }));
    let created = gprs.create(&PostParams::default(), &gpr).await.expect("created");
    assert!(created.data.get("status").is_none(), "status is dropped on create");

    let patched = gprs
        .patch_status("train-1", &PatchParams::default(), &Patch::Merge(json!({ "status": { "phase": "Pending" }, "spec": { "nodes": 9 } })))
        .await
        .expect("status patched");
    assert_eq!((patched.data["status"]["phase"].as_str(), patched.data["spec"]["nodes"].as_i64()), (Some("Pending"), Some(1)));
    assert_eq!(patched.metadata.generation, Some(1), "status writes keep the generation");

    let mut edited = patched.clone();
    edited.data["spec"]["nodes"] = json!(2);
    edited.data["status"]["phase"] = json!("Hacked");
    let replaced = gprs.replace("train-1", &PostParams::default(), &edited).await.expect("replaced");
    assert_eq!((replaced.data["status"]["phase"].as_str(), replaced.data["spec"]["nodes"].as_i64()), (Some("Pending"), Some(2)));
    assert_eq!(replaced.metadata.generation, Some(2));

    let strategic = api_error(gprs.patch("train-1", &PatchParams::default(), &Patch::Strategic(json!({ "spec": {} }))).await);
    assert_eq!(strategic.code, 415, "custom resources take no strategic merge patch");
}

#[tokio::test]
async fn token_request_tokens_are_bound_by_rbac_to_their_namespace_and_die_with_their_account() {
    let fake = FakeKube::start().await;
    let admin = fake.client();
    for namespace in ["team-a", "team-b"] {
        Api::<Namespace>::all(admin.clone())
            .create(&PostParams::default(), &from_json(json!({ "metadata": { "name": namespace } })))
            .await
            .expect("namespace");
    }
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), "team-a");
    let account: ServiceAccount = from_json(json!({ "metadata": { "name": "slice-agent" } }));
    accounts.create(&PostParams::default(), &account).await.expect("account");
    let role =
        json!({ "metadata": { "name": "pod-reader" }, "rules": [{ "apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"] }] });
    Api::<Role>::namespaced(admin.clone(), "team-a").create(&PostParams::default(), &from_json(role)).await.expect("role");
    let binding = json!({
        "metadata": { "name": "slice-agent" },
        "subjects": [{ "kind": "ServiceAccount", "name": "slice-agent", "namespace": "team-a" }],
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader" },
    });
    Api::<RoleBinding>::namespaced(admin.clone(), "team-a").create(&PostParams::default(), &from_json(binding)).await.expect("binding");

    let request: TokenRequest = from_json(json!({ "spec": { "audiences": [], "expirationSeconds": 1200 } }));
    let issued = accounts.create_token_request("slice-agent", &PostParams::default(), &request).await.expect("a token");
    let status = issued.status.expect("a status");
    assert_eq!(issued.spec.and_then(|s| s.expiration_seconds), Some(1200));
    let agent = fake.client_for_token(&status.token.expect("a token"));

    Api::<Pod>::namespaced(agent.clone(), "team-a").list(&ListParams::default()).await.expect("allowed in its namespace");
    let elsewhere = api_error(Api::<Pod>::namespaced(agent.clone(), "team-b").list(&ListParams::default()).await);
    assert_eq!((elsewhere.code, elsewhere.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        elsewhere.message,
        "pods is forbidden: User \"system:serviceaccount:team-a:slice-agent\" cannot list resource \"pods\" in API group \"\" in the namespace \"team-b\""
    );
    let cluster = api_error(Api::<Node>::all(agent.clone()).list(&ListParams::default()).await);
    assert!(cluster.message.ends_with("cannot list resource \"nodes\" in API group \"\" at the cluster scope"), "{}", cluster.message);
    assert_eq!(api_error(Api::<Pod>::namespaced(agent.clone(), "team-a").create(&PostParams::default(), &pod("x")).await).code, 403, "not granted");

    accounts.delete("slice-agent", &DeleteParams::default()).await.expect("account deleted");
    accounts.create(&PostParams::default(), &account).await.expect("same name, new uid");
    let gone = api_error(Api::<Pod>::namespaced(agent, "team-a").list(&ListParams::default()).await);
    assert_eq!((gone.code, gone.reason.as_str()), (401, "Unauthorized"));

    let short: TokenRequest = from_json(json!({ "spec": { "audiences": [], "expirationSeconds": 60 } }));
    assert_eq!(api_error(accounts.create_token_request("slice-agent", &PostParams::default(), &short).await).code, 422);
    assert!(api_error(accounts.create_token_request("nobody", &PostParams::default(), &request).await).is_not_found());
}

#[tokio::test]
async fn fail_next_answers_matching_requests_with_an_injected_error_instead_of_serving_them() {
    let fake = FakeKube::start().await;
    let nodes: Api<Node> = Api::all(client_without_retries(&fake));
    let node: Node = from_json(json!({ "metadata": { "name": "gpu-1" } }));
    fake.fail_next("POST", "/api/v1/nodes", 500, 1);
    let failed = api_error(nodes.create(&PostParams::default(), &node).await);
    assert_eq!((failed.code, failed.reason.as_str()), (500, "InternalError"));
    assert!(nodes.get_opt("gpu-1").await.expect("a read").is_none(), "a failed request is not applied");
    nodes.create(&PostParams::default(), &node).await.expect("the next one is served");

    // kube's default client retries 503 by itself; the audit log shows each attempt.
    fake.fail_next("PATCH", "/api/v1/nodes/gpu-1", 503, 2);
    let labels = Patch::Merge(json!({ "metadata": { "labels": { "a": "b" } } }));
    Api::<Node>::all(fake.client()).patch("gpu-1", &PatchParams::default(), &labels).await.expect("retried until served");
    let patches: Vec<u16> = fake.audit().iter().filter(|e| e.method == "PATCH").map(|e| e.status).collect();
    assert_eq!(patches, [503, 503, 200]);
    assert_eq!((fake.writes("POST", "/api/v1/nodes"), fake.writes("PATCH", "gpu-1")), (1, 1));
}

#[tokio::test]
async fn a_hold_freezes_matching_requests_until_released() {
    let fake = FakeKube::start().await;
    fake.add_namespace("team-a");
    let pods: Api<Pod> = Api::namespaced(fake.client(), "team-a");
    let hold = fake.hold("POST", "/namespaces/team-a/pods");
    let creating = tokio::spawn({
        let pods = pods.clone();
        async move { pods.create(&PostParams::default(), &pod("held")).await }
    });
    tokio::time::timeout(Duration::from_secs(5), hold.wait_arrived()).await.expect("the request arrives");
    assert!(pods.get_opt("held").await.expect("reads are not held").is_none());
    hold.release();
    creating.await.expect("the task").expect("served once released");
    assert!(fake.get("pods", Some("team-a"), "held").is_some());
}

#[tokio::test]
async fn a_request_frozen_by_a_dropped_hold_is_never_applied() {
    let fake = FakeKube::start().await;
    fake.add_namespace("team-a");
    let pods: Api<Pod> = Api::namespaced(fake.client(), "team-a");
    let hold = fake.hold("POST", "/pods");
    let creating = tokio::spawn({
        let pods = pods.clone();
        async move { pods.create(&PostParams::default(), &pod("frozen")).await }
    });
    tokio::time::timeout(Duration::from_secs(5), hold.wait_arrived()).await.expect("the request arrives");
    creating.abort();
    drop(hold);
    pods.create(&PostParams::default(), &pod("later")).await.expect("new requests pass");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(fake.get("pods", Some("team-a"), "frozen").is_none());
    assert_eq!(fake.writes("POST", "/pods"), 1);
}

#[tokio::test]
async fn events_published_by_the_kube_recorder_are_core_events_about_their_object() {
    use kube::runtime::events::{Event, EventType, Recorder, Reporter};
    let fake = FakeKube::start().await;
    let node = fake.add_gpu_node("gpu-1", H100, 8, "p5.48xlarge", "us-east-1a", true);
    let node: Node = from_json(node);
    let recorder = Recorder::new(fake.client(), Reporter { controller: "egs".into(), instance: None });
    let event = Event {
        type_: EventType::Normal,
        reason: "Allocated".into(),
        note: Some("given to team-a".into()),
        action: "Allocate".into(),
        secondary: None,
    };
    recorder.publish(&event, &node.object_ref(&())).await.expect("published");
    let events = fake.events_for("Node", "gpu-1");
    assert_eq!(events.len(), 1);
    assert_eq!(
        (events[0]["reason"].as_str(), events[0]["message"].as_str(), events[0]["type"].as_str()),
        (Some("Allocated"), Some("given to team-a"), Some("Normal"))
    );
    assert_eq!(events[0]["metadata"]["namespace"], "default");
}

#[tokio::test]
async fn a_watcher_relists_after_410_and_streaming_lists_end_with_the_initial_events_bookmark() {
    let fake = FakeKube::start().await;
    fake.add_pod("team-a", "a", None, &[("app", "train")], 8, "Pending");
    let pods: Api<Pod> = Api::namespaced(fake.client(), "team-a");

    let mut streaming = watcher(pods.clone(), watcher::Config::default().streaming_lists()).boxed();
    let mut kinds = Vec::new();
    for _ in 0..3 {
        kinds.push(match streaming.try_next().await.expect("no error").expect("open") {
            watcher::Event::Init => "Init",
            watcher::Event::InitApply(_) => "InitApply",
            watcher::Event::InitDone => "InitDone",
            other => panic!("unexpected {other:?}"),
        });
    }
    assert_eq!(kinds, ["Init", "InitApply", "InitDone"]);

    // The watch starts from the list's resourceVersion; once the history is compacted past it,
    // that is 410 Expired and the watcher re-lists.
    let mut events = watcher(pods, watcher::Config::default()).boxed();
    for _ in 0..3 {
        events.try_next().await.expect("the initial list");
    }
    fake.add_pod("team-a", "other", None, &[("app", "serve")], 0, "Pending");
    fake.compact();
    let expired = tokio::time::timeout(Duration::from_secs(10), events.next()).await.expect("in time").expect("open");
    assert!(matches!(&expired, Err(watcher::Error::WatchError(e)) if e.code == 410), "{expired:?}");
    assert!(matches!(events.try_next().await, Ok(Some(watcher::Event::Init))), "a fresh list follows");
}

#[tokio::test]
async fn each_patch_type_merges_as_the_api_server_does() {
    let fake = FakeKube::start().await;
    fake.add_namespace("team-a");
    let pods: Api<Pod> = Api::namespaced(fake.client(), "team-a");
    let mut held = pod("p");
    held.metadata.finalizers = Some(vec!["a".into()]);
    pods.create(&PostParams::default(), &held).await.expect("created");
    let finalizers = |p: Pod| p.metadata.finalizers.unwrap_or_default();
    let params = PatchParams::default();

    // Strategic merge: finalizers are a set (union), removed with a directive.
    let merged = pods.patch("p", &params, &Patch::Strategic(json!({ "metadata": { "finalizers": ["b"] } }))).await.expect("patched");
    assert_eq!(finalizers(merged), ["a", "b"]);
    let removed =
        pods.patch("p", &params, &Patch::Strategic(json!({ "metadata": { "$deleteFromPrimitiveList/finalizers": ["a"] } }))).await.expect("patched");
    assert_eq!(finalizers(removed), ["b"]);
    // Merge patch: lists are replaced.
    let replaced = pods.patch("p", &params, &Patch::Merge(json!({ "metadata": { "finalizers": ["c"] } }))).await.expect("patched");
    assert_eq!(finalizers(replaced), ["c"]);

    // JSON patch: a failed test is 422 and changes nothing.
    let json_patch = |body: &'static str| {
        let url = format!("{}/api/v1/namespaces/team-a/pods/p", fake.url());
        reqwest::Client::new().patch(url).bearer_auth(fake.admin_token()).header("content-type", "application/json-patch+json").body(body).send()
    };
    let failed = json_patch(r#"[{"op":"test","path":"/metadata/finalizers/0","value":"x"},{"op":"remove","path":"/metadata/finalizers"}]"#)
        .await
        .expect("an answer");
    assert_eq!(failed.status(), 422);
    assert!(
        json_patch(r#"[{"op":"test","path":"/metadata/finalizers/0","value":"c"},{"op":"remove","path":"/metadata/finalizers"}]"#)
            .await
            .expect("an answer")
            .status()
            .is_success()
    );
    assert!(fake.get("pods", Some("team-a"), "p").expect("the pod")["metadata"]["finalizers"].is_null());

    // Server-side apply creates what is missing, and needs a field manager.
    let applied =
        json!({ "apiVersion": "v1", "kind": "Pod", "metadata": { "name": "q" }, "spec": { "containers": [{ "name": "main", "image": "busybox" }] } });
    pods.patch("q", &PatchParams::apply("egs"), &Patch::Apply(&applied)).await.expect("created by apply");
    assert_eq!(api_error(pods.patch("q", &PatchParams::default(), &Patch::Apply(&applied)).await).code, 422);
}

#[tokio::test]
async fn deleting_a_namespace_deletes_its_contents_and_then_the_namespace() {
    let fake = FakeKube::start().await;
    fake.add_pod("team-a", "p", None, &[], 0, "Pending");
    let (gprs, resource) = gprs(&fake, "team-a");
    let mut gpr = DynamicObject::new("train-1", &resource).data(json!({ "spec": { "nodes": 1, "duration": "1h" } }));
    gpr.metadata.finalizers = Some(vec!["egs.io/release".into()]);
    gprs.create(&PostParams::default(), &gpr).await.expect("created");
    let namespaces: Api<Namespace> = Api::all(fake.client());

    namespaces.delete("team-a", &DeleteParams::default()).await.expect("deletion accepted");
    let terminating = namespaces.get("team-a").await.expect("still there while a finalizer holds its content");
    assert_eq!(terminating.status.and_then(|s| s.phase).as_deref(), Some("Terminating"));
    assert!(fake.get("pods", Some("team-a"), "p").is_none());
    let refused = api_error(Api::<Pod>::namespaced(fake.client(), "team-a").create(&PostParams::default(), &pod("late")).await);
    assert_eq!(refused.code, 403);

    gprs.patch("train-1", &PatchParams::default(), &Patch::Merge(json!({ "metadata": { "finalizers": null } }))).await.expect("released");
    assert!(namespaces.get_opt("team-a").await.expect("a read").is_none());
}

#[tokio::test]
async fn gpr_resources_are_checked_against_the_crd_schema_from_deploy_as_a_real_server_does() {
    let fake = FakeKube::start().await;
    fake.add_namespace("team-a");
    let (gprs, resource) = gprs(&fake, "team-a");
    let object = |spec: Value| DynamicObject::new("train", &resource).data(json!({ "spec": spec }));
    for (spec, field, says) in [
        (json!({ "nodes": 0, "duration": "1h" }), "spec.nodes", "greater than or equal to 1"),
        (json!({ "nodes": "two", "duration": "1h" }), "spec.nodes", "must be of type integer"),
        (json!({ "nodes": 1 }), "spec.duration", "Required value"),
    ] {
        let refused = api_error(gprs.create(&PostParams::default(), &object(spec.clone())).await);
        assert_eq!(refused.code, 422, "{spec}: {refused:?}");
        assert!(refused.message.contains(field) && refused.message.contains(says), "{spec}: {}", refused.message);
    }
    assert!(gprs.get_opt("train").await.expect("read").is_none(), "nothing stored");
    // Fields the schema does not know are pruned, not stored.
    let created = gprs.create(&PostParams::default(), &object(json!({ "nodes": 1, "duration": "1h", "colour": "red" }))).await.expect("created");
    assert!(created.data["spec"].get("colour").is_none(), "{:?}", created.data);
    // An update is checked too.
    let mut edited = created.clone();
    edited.data["spec"]["nodes"] = json!(-1);
    assert_eq!(api_error(gprs.replace("train", &PostParams::default(), &edited).await).code, 422);
}
