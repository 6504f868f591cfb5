//! One cluster API for the Kubernetes tests, on two backends: the fake API server (fast,
//! fault injection, every write audited) and a real kube-apiserver with etcd (fidelity), like
//! SQLite and PostgreSQL for the database. A test written against [`KubeBackend`] runs on
//! both; what only the fake can show (injected faults, its write log) is reached through
//! [`KubeBackend::fake`].
//!
//! On the real server the gateway uses a token of the ServiceAccount `deploy/` creates, bound
//! to `deploy/`'s ClusterRoles, and the CRD comes from `deploy/` too. No kubelet or controller
//! runs there: this module writes what they would (node status, the `default` account, a pod's
//! phase).

use crate::control_plane::{ControlPlane, start_with_or_skip};
use crate::fake_kube::FakeKube;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};
use std::path::Path;

/// The namespace `deploy/` puts the gateway in.
pub const EGS_NAMESPACE: &str = "egs";

pub enum KubeBackend {
    Fake(FakeKube),
    Real(RealKube),
}

pub struct RealKube {
    pub plane: ControlPlane,
    /// A token of the gateway's ServiceAccount (`deploy/`).
    pub gateway_token: String,
}

impl KubeBackend {
    pub async fn start_fake() -> Self {
        Self::Fake(FakeKube::start().await)
    }

    /// The real control plane with `deploy/` installed, or `None` (said loudly) without one.
    pub async fn start_real(test: &str) -> Option<Self> {
        Self::start_real_with(test, &[]).await
    }

    /// [`KubeBackend::start_real`] with more kube-apiserver flags.
    pub async fn start_real_with(test: &str, extra_flags: &[&str]) -> Option<Self> {
        let plane = start_with_or_skip(test, extra_flags).await?;
        let gateway_token = install_deploy(&plane).await;
        Some(Self::Real(RealKube { plane, gateway_token }))
    }

    pub fn name(&self) -> &'static str {
        match self {
            Self::Fake(_) => "fake",
            Self::Real(_) => "real",
        }
    }

    /// Restarts the real API server (see [`ControlPlane::restart_apiserver`]).
    pub async fn restart_apiserver(&mut self) {
        match self {
            Self::Fake(_) => panic!("only the real backend restarts its API server"),
            Self::Real(real) => real.plane.restart_apiserver().await.unwrap_or_else(|e| panic!("the API server did not come back: {}", e.0)),
        }
    }

    /// The fake, for what only it can show.
    pub fn fake(&self) -> Option<&FakeKube> {
        match self {
            Self::Fake(fake) => Some(fake),
            Self::Real(_) => None,
        }
    }

    /// The kubeconfig the gateway registers the cluster with: the fake's admin, or the real
    /// server's gateway ServiceAccount.
    pub fn kubeconfig(&self) -> String {
        match self {
            Self::Fake(fake) => fake.kubeconfig(),
            Self::Real(real) => real.plane.kubeconfig_for_token(&real.gateway_token),
        }
    }

    /// The API server's URL.
    pub fn url(&self) -> &str {
        match self {
            Self::Fake(fake) => fake.url(),
            Self::Real(real) => &real.plane.url,
        }
    }

    /// A client with every right, for setting the cluster up and reading it back.
    pub fn admin(&self) -> kube::Client {
        match self {
            Self::Fake(fake) => fake.client(),
            Self::Real(real) => real.plane.client(),
        }
    }

    pub async fn add_gpu_node(&self, name: &str, product: &str, gpus: i64, instance_type: &str, zone: &str, ready: bool) {
        match self {
            Self::Fake(fake) => {
                fake.add_gpu_node(name, product, gpus, instance_type, zone, ready);
            }
            Self::Real(_) => {
                let manifest = FakeKube::gpu_node_manifest(name, product, gpus, instance_type, zone, ready);
                self.create_with_status(manifest).await;
            }
        }
    }

    /// Creates `object`, then writes its `status` as its controller (a kubelet) would.
    pub async fn create_with_status(&self, mut object: Value) {
        let status = object.as_object_mut().and_then(|o| o.remove("status"));
        let (api, name) = self.api_for(&object);
        let created: DynamicObject = serde_json::from_value(object).expect("an object");
        api.create(&PostParams::default(), &created).await.unwrap_or_else(|e| panic!("creating {name}: {e}"));
        if let Some(status) = status {
            api.patch_status(&name, &PatchParams::default(), &Patch::Merge(&json!({ "status": status })))
                .await
                .unwrap_or_else(|e| panic!("the status of {name}: {e}"));
        }
    }

    pub async fn set_node_ready(&self, name: &str, ready: bool) {
        match self {
            Self::Fake(fake) => {
                fake.set_node_ready(name, ready);
            }
            Self::Real(_) => {
                let conditions = FakeKube::gpu_node_manifest(name, "x", 1, "x", "x-1a", ready)["status"]["conditions"].clone();
                let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(self.admin());
                nodes
                    .patch_status(name, &PatchParams::default(), &Patch::Merge(&json!({ "status": { "conditions": conditions } })))
                    .await
                    .expect("the node's conditions");
            }
        }
    }

    /// A namespace handed to the slice of the same name (`egs.io/slice=<name>`).
    pub async fn add_namespace(&self, name: &str) {
        self.add_namespace_labelled(name, json!({ "egs.io/slice": name })).await;
    }

    /// A namespace with only `labels` (`{}`: one no slice was given).
    pub async fn add_namespace_labelled(&self, name: &str, labels: Value) {
        match self {
            Self::Fake(fake) => {
                fake.add_namespace_labelled(name, labels);
            }
            Self::Real(_) => {
                self.create_with_status(json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name, "labels": labels } })).await;
                // What the service-account controller gives every namespace.
                self.create_with_status(
                    json!({ "apiVersion": "v1", "kind": "ServiceAccount", "metadata": { "name": "default", "namespace": name } }),
                )
                .await;
            }
        }
    }

    /// A pod with one container asking for `gpus` GPUs, bound to `node`, in `phase` (as its
    /// kubelet would report it).
    pub async fn add_pod(&self, namespace: &str, name: &str, node: Option<&str>, labels: &[(&str, &str)], gpus: i64, phase: &str) {
        match self {
            Self::Fake(fake) => {
                fake.add_pod(namespace, name, node, labels, gpus, phase);
            }
            Self::Real(_) => {
                let labels: serde_json::Map<String, Value> = labels.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect();
                let limits = if gpus > 0 { json!({ "nvidia.com/gpu": gpus.to_string() }) } else { json!({}) };
                let mut pod = json!({
                    "apiVersion": "v1", "kind": "Pod",
                    "metadata": { "name": name, "namespace": namespace, "labels": labels },
                    "spec": { "containers": [{ "name": "main", "image": "busybox", "resources": { "limits": limits } }] },
                });
                if let Some(node) = node {
                    pod["spec"]["nodeName"] = json!(node);
                }
                // What the scheduler and the kubelet would report (neither runs here).
                let nodes = self.list("nodes", None).await.len();
                pod["status"] = FakeKube::pod_status_with(&pod, phase, nodes);
                // Pods need their namespace's `default` account (the controller's job).
                let account: ServiceAccount =
                    serde_json::from_value(json!({ "metadata": { "name": "default", "namespace": namespace } })).expect("an account");
                let _ = Api::<ServiceAccount>::namespaced(self.admin(), namespace).create(&PostParams::default(), &account).await;
                self.create_with_status(pod).await;
            }
        }
    }

    /// The object as the cluster holds it (`plural` as in its API path).
    pub async fn get(&self, plural: &str, namespace: Option<&str>, name: &str) -> Option<Value> {
        match self {
            Self::Fake(fake) => fake.get(plural, namespace, name),
            Self::Real(_) => {
                let api = self.api(plural, namespace);
                api.get_opt(name).await.unwrap_or_else(|e| panic!("reading {plural} {name}: {e}")).map(|o| serde_json::to_value(o).expect("json"))
            }
        }
    }

    /// Every object of `plural` (in `namespace`, or everywhere).
    pub async fn list(&self, plural: &str, namespace: Option<&str>) -> Vec<Value> {
        match self {
            Self::Fake(fake) => fake.list(plural, namespace),
            Self::Real(_) => {
                let api = self.api(plural, namespace);
                api.list(&ListParams::default()).await.expect("a list").items.into_iter().map(|o| serde_json::to_value(o).expect("json")).collect()
            }
        }
    }

    /// Replaces an object as another client would (an admin's `kubectl edit`).
    pub async fn replace(&self, object: Value) {
        match self {
            Self::Fake(fake) => {
                fake.put_object(object);
            }
            Self::Real(_) => {
                let (api, name) = self.api_for(&object);
                let object: DynamicObject = serde_json::from_value(object).expect("an object");
                api.replace(&name, &PostParams::default(), &object).await.unwrap_or_else(|e| panic!("replacing {name}: {e}"));
            }
        }
    }

    pub async fn delete(&self, plural: &str, namespace: Option<&str>, name: &str) {
        match self {
            Self::Fake(fake) => {
                fake.delete(plural, namespace, name);
            }
            Self::Real(_) => {
                let _ = self.api(plural, namespace).delete(name, &DeleteParams::default()).await;
            }
        }
    }

    /// Finishes the deletion of a terminating pod, as its kubelet would once the containers
    /// stopped (the fake deletes pods at once).
    pub async fn finish_pod_deletion(&self, namespace: &str, name: &str) {
        if let Self::Real(_) = self {
            let params = DeleteParams { grace_period_seconds: Some(0), ..Default::default() };
            let _ = self.api("pods", Some(namespace)).delete(name, &params).await;
        }
    }

    /// core/v1 Events about `kind`/`name`, oldest first.
    pub async fn events_for(&self, kind: &str, name: &str) -> Vec<Value> {
        match self {
            Self::Fake(fake) => fake.events_for(kind, name),
            Self::Real(_) => {
                let events: Api<k8s_openapi::api::core::v1::Event> = Api::all(self.admin());
                let selector = format!("involvedObject.kind={kind},involvedObject.name={name}");
                let mut found: Vec<Value> = events
                    .list(&ListParams::default().fields(&selector))
                    .await
                    .expect("events")
                    .items
                    .into_iter()
                    .map(|e| serde_json::to_value(e).expect("json"))
                    .collect();
                found.sort_by_key(|e| e["metadata"]["creationTimestamp"].as_str().unwrap_or_default().to_owned());
                found
            }
        }
    }

    fn api(&self, plural: &str, namespace: Option<&str>) -> Api<DynamicObject> {
        let resource = resource_of(plural);
        match namespace {
            Some(namespace) => Api::namespaced_with(self.admin(), namespace, &resource),
            None => Api::all_with(self.admin(), &resource),
        }
    }

    fn api_for(&self, object: &Value) -> (Api<DynamicObject>, String) {
        let kind = object["kind"].as_str().expect("a kind");
        let plural = plural_of(kind);
        let namespace = object["metadata"]["namespace"].as_str();
        (self.api(plural, namespace), object["metadata"]["name"].as_str().expect("a name").to_owned())
    }
}

/// The resources the tests read and write, by plural.
const RESOURCES: [(&str, &str, &str, &str); 9] = [
    ("nodes", "", "v1", "Node"),
    ("namespaces", "", "v1", "Namespace"),
    ("pods", "", "v1", "Pod"),
    ("serviceaccounts", "", "v1", "ServiceAccount"),
    ("events", "", "v1", "Event"),
    ("poddisruptionbudgets", "policy", "v1", "PodDisruptionBudget"),
    ("gpuprovisioningrequests", "egs.io", "v1alpha1", "GPUProvisioningRequest"),
    ("roles", "rbac.authorization.k8s.io", "v1", "Role"),
    ("rolebindings", "rbac.authorization.k8s.io", "v1", "RoleBinding"),
];

fn resource_of(plural: &str) -> ApiResource {
    let (plural, group, version, kind) = RESOURCES.iter().find(|r| r.0 == plural).unwrap_or_else(|| panic!("add {plural} to RESOURCES"));
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

fn plural_of(kind: &str) -> &'static str {
    RESOURCES.iter().find(|r| r.3 == kind).unwrap_or_else(|| panic!("add {kind} to RESOURCES")).0
}

/// Server-side applies every document of `deploy/kustomize/base/<file>`; namespaced objects
/// without a namespace go to `egs`, as kustomize's `namespace:` does.
pub async fn apply_deploy_file(client: &kube::Client, file: &str) {
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
pub async fn install_deploy(plane: &ControlPlane) -> String {
    let admin = plane.client();
    for file in ["namespace.yaml", "crd.yaml", "gateway-serviceaccount.yaml", "gateway-rbac.yaml"] {
        apply_deploy_file(&admin, file).await;
    }
    // The CRD serves once it is Established.
    let gvk = GroupVersionKind::gvk("egs.io", "v1alpha1", "GPUProvisioningRequest");
    crate::wait_for("the GPUProvisioningRequest CRD to serve", || async { kube::discovery::pinned_kind(&admin, &gvk).await.is_ok() }).await;
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), EGS_NAMESPACE);
    let request = TokenRequest { spec: Some(TokenRequestSpec { expiration_seconds: Some(3600), ..Default::default() }), ..Default::default() };
    let issued = accounts.create_token_request("egs-gateway", &PostParams::default(), &request).await.expect("a token for the gateway");
    issued.status.and_then(|s| s.token).expect("a token")
}

/// Runs a test body on both backends: `<name>_on_fake` and `<name>_on_real` (the real one
/// skips loudly without Go, and fails then under `EGS_TEST_REQUIRE_KUBE`).
#[macro_export]
macro_rules! on_both_backends {
    ($body:ident) => {
        pub(crate) mod $body {
            #[tokio::test]
            async fn on_fake() {
                super::$body($crate::kube_backend::KubeBackend::start_fake().await).await;
            }

            #[tokio::test]
            async fn on_real() {
                if let Some(backend) = $crate::kube_backend::KubeBackend::start_real(concat!(module_path!(), "::on_real")).await {
                    super::$body(backend).await;
                }
            }
        }
    };
}
