//! Node-scoped agent identity: an agent trades its pod's projected ServiceAccount token for an
//! EGS token of the pod's node (`signInAgent`, a TokenReview on the cluster), on the fake API
//! server and on a real kube-apiserver. Tokens for another audience, of another account, not
//! bound to a pod, or of a pod since deleted sign nobody in; the token speaks for its node only.

use egs_tests::kube_backend::KubeBackend;
use egs_tests::on_both_backends;
use egs_tests::{TestApp, fixtures};
use k8s_openapi::api::authentication::v1::{BoundObjectReference, TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

pub(crate) const SIGN_IN: &str =
    "mutation($input: SignInAgentInput!) { signInAgent(input: $input) { token expiresAt nodeName userErrors { field message code } } }";
const UPSERT: &str = "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { name } userErrors { field message code } } }";
const SHAPE: &str = "NVIDIA-H100-80GB-HBM3";

/// `signInAgent` with no EGS token at all: the whole answer.
pub(crate) async fn sign_in(app: &TestApp, cluster: &str, token: &str) -> Value {
    let body = json!({ "query": SIGN_IN, "variables": { "input": { "clusterId": cluster, "serviceAccountToken": token } } });
    app.post(None, body).await.json().await.expect("a JSON body")
}

/// What a kubelet mounts for a projected token: one for `audience`, bound to `pod` (or to
/// nothing), of account `egs/<account>`.
pub(crate) async fn projected_token(kube: &KubeBackend, account: &str, pod: Option<&str>, audience: &str) -> String {
    let accounts: Api<ServiceAccount> = Api::namespaced(kube.admin(), "egs");
    let bound = pod.map(|pod| BoundObjectReference { kind: Some("Pod".into()), api_version: Some("v1".into()), name: Some(pod.into()), uid: None });
    let spec =
        TokenRequestSpec { audiences: Some(vec![audience.into()]), expiration_seconds: Some(3600), bound_object_ref: bound, ..Default::default() };
    let request = TokenRequest { spec: Some(spec), ..Default::default() };
    let issued =
        accounts.create_token_request(account, &PostParams::default(), &request).await.unwrap_or_else(|e| panic!("a token for {account}: {e}"));
    issued.status.and_then(|s| s.token).expect("a token")
}

/// Namespace `egs` with the agents' account and a tenant's, nodes `gpu-1` and `gpu-2`, and a
/// pod of each account on `gpu-1`; returns the Kubernetes cluster's id.
pub(crate) async fn cluster_with_agent_pods(app: &TestApp, kube: &KubeBackend) -> String {
    if kube.get("namespaces", None, "egs").await.is_none() {
        kube.add_namespace_labelled("egs", json!({})).await;
    }
    for account in ["egs-node-agent", "tenant"] {
        kube.create_with_status(json!({ "apiVersion": "v1", "kind": "ServiceAccount", "metadata": { "name": account, "namespace": "egs" } })).await;
    }
    for node in ["gpu-1", "gpu-2"] {
        kube.add_gpu_node(node, SHAPE, 8, "p5.48xlarge", "us-east-1a", true).await;
    }
    for (pod, account) in [("agent-gpu-1", "egs-node-agent"), ("tenant-gpu-1", "tenant")] {
        kube.create_with_status(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": { "name": pod, "namespace": "egs" },
            "spec": { "nodeName": "gpu-1", "serviceAccountName": account, "containers": [{ "name": "agent", "image": "egs-node-agent" }] },
        }))
        .await;
    }
    fixtures::register_kube_cluster(app, "kube", &kube.kubeconfig(), "ADMISSION_PLUGINS").await
}

fn node_input(cluster: &str, node: &str) -> Value {
    json!({ "clusterId": cluster, "nodes": [{ "name": node, "instanceType": "p5.48xlarge", "gpuShape": SHAPE, "gpusPerNode": 8, "gpuMemoryMib": 81559 }] })
}

fn code(answer: &Value) -> &str {
    answer["errors"][0]["extensions"]["code"].as_str().unwrap_or_default()
}

async fn an_agent_signs_in_with_its_pods_token_and_speaks_for_its_node_only(kube: KubeBackend) {
    let app = TestApp::spawn().await;
    let cluster = cluster_with_agent_pods(&app, &kube).await;

    let token = projected_token(&kube, "egs-node-agent", Some("agent-gpu-1"), "egs").await;
    let signed = sign_in(&app, &cluster, &token).await;
    let node_token = signed["data"]["signInAgent"]["token"].as_str().unwrap_or_else(|| panic!("signed in: {signed}")).to_owned();
    assert_eq!(signed["data"]["signInAgent"]["nodeName"], "gpu-1", "the cluster names the pod's node: {signed}");
    let left = fixtures::time(&signed["data"]["signInAgent"]["expiresAt"]) - chrono::Utc::now();
    assert!(left <= chrono::Duration::minutes(60) && left > chrono::Duration::minutes(58), "an hour: {signed}");
    // It registers its node, and no other.
    let own = app.mutate(&node_token, "upsertNodes", UPSERT, node_input(&cluster, "gpu-1")).await;
    assert_eq!(own["nodes"][0]["name"], "gpu-1", "{own}");
    let other = app.gql(&node_token, UPSERT, json!({ "input": node_input(&cluster, "gpu-2") })).await;
    assert_eq!(code(&other), "FORBIDDEN", "another node: {other}");
    // Signing in again extends the one token row of the node; the earlier token still works.
    let again = sign_in(&app, &cluster, &token).await;
    assert!(again["data"]["signInAgent"]["token"].is_string(), "{again}");
    let rows = app.ok(&app.admin_token, "{ tokens(first: 50) { nodes { name nodeName role } } }", json!({})).await;
    let node_rows: Vec<&Value> = rows["tokens"]["nodes"].as_array().expect("tokens").iter().filter(|t| t["name"] == "node sign-in").collect();
    assert_eq!(node_rows.len(), 1, "one row per node: {rows}");
    assert_eq!((node_rows[0]["nodeName"].as_str(), node_rows[0]["role"].as_str()), (Some("gpu-1"), Some("AGENT")));
    assert_eq!(app.mutate(&node_token, "upsertNodes", UPSERT, node_input(&cluster, "gpu-1")).await["nodes"][0]["name"], "gpu-1");

    // What signs nobody in, each with a reason and nothing stored.
    let refusals = [
        (
            "the API server's audience",
            projected_token(&kube, "egs-node-agent", Some("agent-gpu-1"), "https://kubernetes.default.svc.cluster.local").await,
        ),
        ("a tenant's account on the same node", projected_token(&kube, "tenant", Some("tenant-gpu-1"), "egs").await),
        ("a token bound to no pod", projected_token(&kube, "egs-node-agent", None, "egs").await),
        ("a made-up token", "eyJhbGciOiJSUzI1NiJ9.e30.c2lnbmF0dXJl".to_owned()),
    ];
    for (what, refused) in &refusals {
        let answer = sign_in(&app, &cluster, refused).await;
        assert_eq!(code(&answer), "UNAUTHENTICATED", "{what}: {answer}");
        assert_eq!(answer["data"]["signInAgent"], Value::Null, "{what}: {answer}");
        assert!(!answer.to_string().contains(refused.as_str()), "{what}: the token is not echoed");
        assert!(!answer.to_string().contains("`kube`"), "{what}: an anonymous caller is not told the cluster's name: {answer}");
    }
    // The pod is gone: its token signs nobody in (the API server invalidates it).
    kube.delete("pods", Some("egs"), "agent-gpu-1").await;
    kube.finish_pod_deletion("egs", "agent-gpu-1").await;
    egs_tests::wait_for("the deleted pod's token to be refused", || async { code(&sign_in(&app, &cluster, &token).await) == "UNAUTHENTICATED" })
        .await;
    let rows = app.ok(&app.admin_token, "{ tokens(first: 50) { nodes { name } } }", json!({})).await;
    assert_eq!(rows["tokens"]["nodes"].as_array().expect("tokens").iter().filter(|t| t["name"] == "node sign-in").count(), 1, "{rows}");
    app.finish().await;
}
on_both_backends!(an_agent_signs_in_with_its_pods_token_and_speaks_for_its_node_only);

#[tokio::test]
async fn bad_sign_ins_are_refused_before_any_cluster_is_asked() {
    let app = TestApp::spawn().await;
    let kube = KubeBackend::start_fake().await;
    let cluster = cluster_with_agent_pods(&app, &kube).await;
    let simulated = fixtures::register_cluster(&app, "sim").await;
    let fake = kube.fake().expect("the fake");
    let reviews = || fake.audit().iter().filter(|e| e.path.contains("tokenreviews")).count();
    let asked_before = reviews();

    let huge = "x".repeat(16 * 1024 + 1);
    let cases = [
        (cluster.as_str(), huge.as_str(), "serviceAccountToken"),
        (cluster.as_str(), "  ", "serviceAccountToken"),
        (simulated.as_str(), "abc", "clusterId"),
    ];
    for (target, token, field) in cases {
        let answer = sign_in(&app, target, token).await;
        let errors = &answer["data"]["signInAgent"]["userErrors"];
        assert_eq!(errors[0]["field"][1], field, "{answer}");
        assert_eq!(errors[0]["code"], "INVALID_INPUT", "{answer}");
        assert_eq!(answer["data"]["signInAgent"]["token"], Value::Null);
    }
    // The caller is anonymous: a simulated cluster answers exactly as a missing one, by no name.
    let missing = sign_in(&app, "Q2x1c3Rlcjo5OTk=", "abc").await;
    let simulated_answer = sign_in(&app, &simulated, "abc").await;
    assert_eq!(missing["data"]["signInAgent"]["userErrors"][0]["message"], "no such cluster", "{missing}");
    assert_eq!(simulated_answer["data"]["signInAgent"]["userErrors"], missing["data"]["signInAgent"]["userErrors"], "{simulated_answer}");
    assert_eq!(reviews(), asked_before, "no TokenReview was posted for any of them");
    app.finish().await;
}

/// Sign-ins are anonymous: however many arrive at once, a cluster's API server gets at most
/// `REVIEWS_PER_CLUSTER` reviews at a time, and the rest are told to retry.
#[tokio::test]
async fn a_flood_of_sign_ins_holds_at_most_eight_reviews_per_cluster_and_the_rest_retry() {
    let app = TestApp::spawn().await;
    let kube = KubeBackend::start_fake().await;
    let cluster = cluster_with_agent_pods(&app, &kube).await;
    let token = projected_token(&kube, "egs-node-agent", Some("agent-gpu-1"), "egs").await;
    let fake = kube.fake().expect("the fake");
    let hold = fake.hold("POST", "tokenreviews");
    let app = std::sync::Arc::new(app);
    let waiting: Vec<_> = (0..8)
        .map(|_| {
            let (app, cluster, token) = (app.clone(), cluster.clone(), token.clone());
            tokio::spawn(async move { sign_in(&app, &cluster, &token).await })
        })
        .collect();
    egs_tests::wait_for("eight reviews to reach the API server", || async { hold.arrived() == 8 }).await;
    let ninth = sign_in(&app, &cluster, &token).await;
    assert_eq!(code(&ninth), "RATE_LIMITED", "{ninth}");
    assert_eq!(hold.arrived(), 8, "the ninth never reached the cluster");
    hold.release();
    for answer in waiting {
        let answer = answer.await.expect("the request");
        assert_eq!(answer["data"]["signInAgent"]["nodeName"], "gpu-1", "{answer}");
    }
    assert!(sign_in(&app, &cluster, &token).await["data"]["signInAgent"]["token"].is_string(), "free again once they finish");
    std::sync::Arc::into_inner(app).expect("the only handle").finish().await;
}

/// The agent itself, given only the projected token's file: it signs in, registers its node
/// and delivers a batch; given a tenant's token instead, it is refused and says so.
#[tokio::test]
async fn the_agent_signs_in_with_the_projected_token_file_and_reports_its_node() {
    use egs_node_agent::{Agent, Config};
    let app = TestApp::spawn().await;
    let kube = KubeBackend::start_fake().await;
    let cluster = cluster_with_agent_pods(&app, &kube).await;
    let dir = tempfile::tempdir().expect("a temp dir");
    let file = dir.path().join("token");
    let run = |file: std::path::PathBuf| {
        let gateway = app.url("");
        let cluster = cluster.clone();
        async move {
            let args = [
                "--gateway",
                &gateway,
                "--cluster-id",
                &cluster,
                "--node-name",
                "gpu-1",
                "--instance-type",
                "p5.48xlarge",
                "--identity-token-file",
                file.to_str().expect("a UTF-8 path"),
                "--simulate",
                "8",
                "--no-http",
                "--once",
                "--seed",
                "3",
            ];
            let agent = Agent::new(Config::from_args(args).expect("valid flags")).expect("the agent starts");
            tokio::time::timeout(std::time::Duration::from_secs(30), agent.run(std::future::pending())).await.expect("the agent returns")
        }
    };
    std::fs::write(&file, projected_token(&kube, "egs-node-agent", Some("agent-gpu-1"), "egs").await).expect("the token file");
    run(file.clone()).await.expect("signed in, registered and reported");
    egs_tests::wait_for("gpu-1's samples to arrive", || async {
        let nodes = app.ok(&app.admin_token, "{ nodes(first: 10) { nodes { name gpus { latestSample { util } } } } }", json!({})).await;
        let gpu_1 = nodes["nodes"]["nodes"].as_array().into_iter().flatten().find(|n| n["name"] == "gpu-1").cloned().unwrap_or_default();
        gpu_1["gpus"].as_array().is_some_and(|g| g.iter().any(|g| g["latestSample"].is_object()))
    })
    .await;

    std::fs::write(&file, projected_token(&kube, "tenant", Some("tenant-gpu-1"), "egs").await).expect("the token file");
    let refused = run(file).await.expect_err("a tenant's token signs nobody in");
    assert!(refused.to_string().contains("UNAUTHENTICATED"), "{refused}");
    app.finish().await;
}
