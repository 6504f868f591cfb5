//! A fake Kubernetes API server for tests of the Kubernetes provider: plain HTTP on
//! 127.0.0.1, answering the paths, JSON shapes, status codes, `Status` error bodies and watch
//! semantics of a real API server for the resources EGS uses (nodes, namespaces, pods and
//! evictions, events, service accounts and TokenRequests, roles and role bindings,
//! PodDisruptionBudgets, `egs.io/v1alpha1` GPUProvisioningRequests), with bearer-token
//! authentication and namespaced RBAC.
//!
//! What differs from a real cluster, on purpose:
//! - No controllers or kubelets beyond the few whose effects tests rely on, run synchronously
//!   on each write: PDB status (the disruption controller), `default` service accounts, and
//!   namespace deletion (contents deleted, the namespace removed once empty). Pods are deleted
//!   at once (as with a zero grace period) and never start: tests set their phase.
//! - Validation is limited to names, `apiVersion`/`kind`, namespaces and metadata shape; specs
//!   are stored as sent (no defaulting, no pod spec immutability).
//! - Strategic merge patch knows only the built-in lists EGS may touch (finalizers, owner
//!   references, containers, conditions...); server-side apply is a merge patch plus create,
//!   with no field ownership or conflicts (`force` is ignored) and no `managedFields`.
//! - Lists page by key over the current objects instead of a snapshot; history for watches
//!   holds the last 4096 changes (see [`FakeKube::compact`] to make older versions expire).
//! - No ClusterRoles: service account tokens are authorized by Roles in the request's
//!   namespace only.
//!
//! Use [`FakeKube::start`], then [`FakeKube::client`] or [`FakeKube::kubeconfig`].

mod kinds;
mod patch;
mod rbac;
mod schema;
mod selectors;
mod server;
mod status;
mod store;

use kinds::{KINDS, Kind};
use serde_json::{Value, json};
use server::{Fault, HoldRule, Shared, State};
use std::sync::Arc;
use store::Write;
use tokio::sync::watch;

/// A watch request: which collection, with which label selector.
#[derive(Clone, Debug)]
pub struct WatchEntry {
    pub path: String,
    pub label_selector: Option<String>,
}

/// One write request (POST, PUT, PATCH, DELETE) as the server answered it; reads are not
/// recorded, nor are the test-side fixture helpers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub method: String,
    /// The URL path, without the query.
    pub path: String,
    pub status: u16,
    /// `kubernetes-admin`, `system:serviceaccount:NS:NAME`, or `system:anonymous`.
    pub user: String,
}

/// A running fake API server; it stops when dropped.
pub struct FakeKube {
    shared: Arc<Shared>,
    url: String,
    admin_token: String,
    /// Dropping it stops the server and ends every watch stream.
    _stop: watch::Sender<()>,
}

/// Requests held by [`FakeKube::hold`]. [`Hold::release`] lets them (and later matches) through;
/// dropping the `Hold` without releasing stops holding new requests but leaves the held ones
/// frozen for good: they are never applied, as if the server had died under them.
pub struct Hold {
    shared: Arc<Shared>,
    id: u64,
    release: watch::Sender<bool>,
    arrived: watch::Receiver<usize>,
}

impl Hold {
    /// Resolves once at least one request is being held.
    pub async fn wait_arrived(&self) {
        let mut arrived = self.arrived.clone();
        let _ = arrived.wait_for(|n| *n > 0).await;
    }

    /// How many requests have been held so far.
    pub fn arrived(&self) -> usize {
        *self.arrived.borrow()
    }

    /// Serves the held requests and stops holding.
    pub fn release(self) {
        self.release.send_replace(true);
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        self.shared.lock().holds.retain(|h| h.id != self.id);
    }
}

/// Memory per GPU in MiB, as NVIDIA's GPU feature discovery labels it.
fn gpu_memory_mib(product: &str) -> i64 {
    match product {
        p if p.contains("H100") && p.contains("80GB") => 81559,
        p if p.contains("H200") => 143771,
        p if p.contains("A100") && p.contains("80GB") => 81920,
        p if p.contains("A100") && p.contains("40GB") => 40960,
        p if p.contains("L40S") => 46068,
        p => p.split('-').find_map(|part| part.strip_suffix("GB")?.parse::<i64>().ok()).map_or(0, |gb| gb * 1024),
    }
}

/// A stable private address for a node name.
fn node_ip(name: &str) -> String {
    let hash = name.bytes().fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    format!("10.0.{}.{}", (hash >> 8) % 250 + 1, hash % 250 + 1)
}

fn labels_json(labels: &[(&str, &str)]) -> Value {
    Value::Object(labels.iter().map(|(k, v)| ((*k).to_owned(), json!(v))).collect())
}

fn random_hex(bytes: usize) -> String {
    (0..bytes).map(|_| format!("{:02x}", rand::random::<u8>())).collect()
}

impl FakeKube {
    /// Starts a server on 127.0.0.1:0 with the namespaces a new cluster has (`default`,
    /// `kube-system`, `kube-public`, `kube-node-lease`) and one cluster-admin token.
    pub async fn start() -> FakeKube {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let address = listener.local_addr().expect("local address").to_string();
        let admin_token = format!("fake-admin-{}", random_hex(16));
        let (stop, shutdown) = watch::channel(());
        let shared = Arc::new(Shared::new(State::new(&admin_token), shutdown.clone(), address.clone()));
        {
            let mut state = shared.lock();
            for namespace in ["default", "kube-system", "kube-public", "kube-node-lease"] {
                state.store.add_namespace(namespace);
            }
        }
        let app = server::router(shared.clone());
        let mut signal = shutdown;
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async move {
                    let _ = signal.changed().await;
                })
                .await;
        });
        FakeKube { shared, url: format!("http://{address}"), admin_token, _stop: stop }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A bearer token with every right (cluster-admin).
    pub fn admin_token(&self) -> &str {
        &self.admin_token
    }

    /// A kubeconfig for the admin token.
    pub fn kubeconfig(&self) -> String {
        self.kubeconfig_for_token(&self.admin_token)
    }

    /// A kubeconfig (one cluster, user and current context) that authenticates with `token`.
    pub fn kubeconfig_for_token(&self, token: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake-kube\n  cluster:\n    server: {url}\nusers:\n- name: fake-kube-user\n  user:\n    token: {token}\ncontexts:\n- name: fake-kube\n  context:\n    cluster: fake-kube\n    user: fake-kube-user\n    namespace: default\ncurrent-context: fake-kube\npreferences: {{}}\n",
            url = self.url
        )
    }

    /// A kube client configuration for `token` (kube's defaults otherwise, retries included:
    /// set `default_retry = false` to see 429/503/504 answers instead of kube retrying them).
    pub fn config_for_token(&self, token: &str) -> kube::Config {
        let mut config = kube::Config::new(self.url.parse().expect("the fake's URL"));
        config.auth_info = serde_json::from_value(json!({ "token": token })).expect("auth info");
        config
    }

    pub fn config(&self) -> kube::Config {
        self.config_for_token(&self.admin_token)
    }

    /// A kube client with the admin token.
    pub fn client(&self) -> kube::Client {
        self.client_for_token(&self.admin_token)
    }

    pub fn client_for_token(&self, token: &str) -> kube::Client {
        kube::Client::try_from(self.config_for_token(token)).expect("a kube client")
    }

    /// Issues a token for service account `namespace/name` without a TokenRequest (one hour).
    pub fn token_for(&self, namespace: &str, name: &str) -> String {
        let audiences = json!(["https://kubernetes.default.svc.cluster.local"]);
        self.shared.lock().issue_token(namespace, name, 3600, &audiences, &Value::Null).expect("the service account exists").0
    }

    /// A projected token of service account `namespace/name` for `audiences`, bound to pod
    /// `pod` of that namespace (as the kubelet mounts one): a review names the pod's node, and
    /// the token dies with the pod.
    pub fn pod_token_for(&self, namespace: &str, name: &str, pod: &str, audiences: &[&str]) -> String {
        let bound = json!({ "kind": "Pod", "apiVersion": "v1", "name": pod });
        self.shared.lock().issue_token(namespace, name, 3600, &json!(audiences), &bound).expect("the service account and pod exist").0
    }

    /// A served kind by name (`Node`, `nodes`, `pdb`...) or collection path (`/api/v1/nodes`,
    /// `/apis/egs.io/v1alpha1/gpuprovisioningrequests`).
    fn kind(name: &str) -> &'static Kind {
        let found = match name.trim_matches('/').split('/').collect::<Vec<_>>().as_slice() {
            ["api", version, plural] => Kind::find("", version, plural),
            ["apis", group, version, plural] => Kind::find(group, version, plural),
            _ => Kind::named(name),
        };
        found.unwrap_or_else(|| panic!("the fake does not serve {name}"))
    }

    /// The served kind of an object, from its `apiVersion` and `kind`.
    fn kind_of_object(object: &Value) -> &'static Kind {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        KINDS
            .iter()
            .find(|k| k.group == group && k.version == version && object["kind"] == k.kind)
            .unwrap_or_else(|| panic!("the fake does not serve {api_version} {}", object["kind"]))
    }

    /// Creates an object as given (status included; a missing namespace is created). Panics
    /// when it exists.
    pub fn create(&self, object: Value) -> Value {
        let kind = Self::kind_of_object(&object);
        let namespace = kind.namespaced.then(|| object["metadata"]["namespace"].as_str().unwrap_or("default").to_owned());
        self.shared.lock().store.create(kind, namespace.as_deref(), object, Write { fixture: true, dry_run: false }).expect("the fixture is created")
    }

    /// Creates or replaces an object as given, status included (watches see ADDED/MODIFIED).
    pub fn put_object(&self, object: Value) -> Value {
        let kind = Self::kind_of_object(&object);
        self.shared.lock().store.put_fixture(kind, object).expect("the fixture is stored")
    }

    /// One object; `kind` is a kind, plural, singular or short name (`Node`, `pods`, `pdb`...)
    /// or a collection path (`/api/v1/nodes`).
    pub fn get(&self, kind: &str, namespace: Option<&str>, name: &str) -> Option<Value> {
        self.shared.lock().store.get(Self::kind(kind), namespace, name)
    }

    /// The objects of `kind`, in `namespace` or in all namespaces.
    pub fn list(&self, kind: &str, namespace: Option<&str>) -> Vec<Value> {
        self.shared.lock().store.list(Self::kind(kind), namespace).into_iter().map(|(_, o)| o).collect()
    }

    /// Deletes as DELETE does (finalizers hold the object with a deletionTimestamp).
    /// Returns the object, or `None` when there was none.
    pub fn delete(&self, kind: &str, namespace: Option<&str>, name: &str) -> Option<Value> {
        self.shared.lock().store.delete(Self::kind(kind), namespace, name, &json!({}), Write::default()).ok()
    }

    /// The current resourceVersion (the global write counter).
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().store.resource_version()
    }

    /// Forgets the watch history, as an etcd compaction does: watches from an older
    /// resourceVersion get a 410 Expired ERROR event and re-list.
    pub fn compact(&self) {
        self.shared.lock().store.compact();
    }

    /// A namespace (no-op when it exists), with its `default` service account, handed to the
    /// slice of the same name (`egs.io/slice=<name>`).
    pub fn add_namespace(&self, name: &str) -> Value {
        let mut state = self.shared.lock();
        state.store.add_namespace(name);
        state.store.get(Self::kind("namespaces"), None, name).expect("the namespace")
    }

    /// A namespace with only `labels`: one no slice was given.
    pub fn add_namespace_labelled(&self, name: &str, labels: Value) -> Value {
        let mut state = self.shared.lock();
        state.store.add_namespace_labelled(name, labels);
        state.store.get(Self::kind("namespaces"), None, name).expect("the namespace")
    }

    /// A GPU node as a kubelet and NVIDIA GPU feature discovery register it.
    /// The Node object [`FakeKube::add_gpu_node`] stores, for other API servers too.
    pub fn gpu_node_manifest(name: &str, product: &str, gpus: i64, instance_type: &str, zone: &str, ready: bool) -> Value {
        let cpus = (gpus * 24).max(8);
        let memory_ki = gpus.max(1) * 256 * 1024 * 1024;
        let region = zone.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let ip = node_ip(name);
        json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {
                    "beta.kubernetes.io/arch": "amd64",
                    "beta.kubernetes.io/os": "linux",
                    "kubernetes.io/arch": "amd64",
                    "kubernetes.io/os": "linux",
                    "kubernetes.io/hostname": name,
                    "node.kubernetes.io/instance-type": instance_type,
                    "topology.kubernetes.io/zone": zone,
                    "topology.kubernetes.io/region": region,
                    "nvidia.com/gpu.present": "true",
                    "nvidia.com/gpu.product": product,
                    "nvidia.com/gpu.count": gpus.to_string(),
                    "nvidia.com/gpu.memory": gpu_memory_mib(product).to_string(),
                },
                "annotations": {
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
            },
            "spec": { "podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"] },
            "status": {
                "capacity": { "cpu": cpus.to_string(), "memory": format!("{memory_ki}Ki"), "pods": "110", "ephemeral-storage": "1967840Mi", "nvidia.com/gpu": gpus.to_string() },
                "allocatable": {
                    "cpu": format!("{}m", cpus * 1000 - 100),
                    "memory": format!("{}Ki", memory_ki - 1024 * 1024),
                    "pods": "110",
                    "ephemeral-storage": "1813552Mi",
                    "nvidia.com/gpu": gpus.to_string(),
                },
                "conditions": Self::node_conditions(ready, &store::now()),
                "addresses": [{ "type": "InternalIP", "address": ip }, { "type": "Hostname", "address": name }],
                "daemonEndpoints": { "kubeletEndpoint": { "Port": 10250 } },
                "nodeInfo": {
                    "architecture": "amd64",
                    "bootID": store::uid(),
                    "machineID": random_hex(16),
                    "systemUUID": store::uid(),
                    "containerRuntimeVersion": "containerd://1.7.27",
                    "kernelVersion": "6.8.0-1024-aws",
                    "kubeProxyVersion": "",
                    "kubeletVersion": "v1.34.1",
                    "operatingSystem": "linux",
                    "osImage": "Ubuntu 22.04.5 LTS",
                },
            },
        })
    }

    /// A GPU node as a kubelet and NVIDIA GPU feature discovery register it.
    pub fn add_gpu_node(&self, name: &str, product: &str, gpus: i64, instance_type: &str, zone: &str, ready: bool) -> Value {
        self.put_object(Self::gpu_node_manifest(name, product, gpus, instance_type, zone, ready))
    }

    fn node_conditions(ready: bool, now: &str) -> Value {
        let pressure = |kind: &str, reason: &str, message: &str| json!({ "type": kind, "status": "False", "reason": reason, "message": message, "lastHeartbeatTime": now, "lastTransitionTime": now });
        let ready = if ready {
            json!({ "type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status", "lastHeartbeatTime": now, "lastTransitionTime": now })
        } else {
            json!({ "type": "Ready", "status": "False", "reason": "KubeletNotReady", "message": "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized", "lastHeartbeatTime": now, "lastTransitionTime": now })
        };
        json!([
            pressure("MemoryPressure", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
            pressure("DiskPressure", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
            pressure("PIDPressure", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
            ready,
        ])
    }

    /// Flips a node's Ready condition, as its kubelet would report it (a MODIFIED event).
    pub fn set_node_ready(&self, name: &str, ready: bool) -> Value {
        let mut node = self.get("nodes", None, name).unwrap_or_else(|| panic!("no node {name}"));
        node["status"]["conditions"] = Self::node_conditions(ready, &store::now());
        self.put_object(node)
    }

    /// A pod with one container that requests and limits `gpus` NVIDIA GPUs (none when 0),
    /// bound to `node`, in `phase` (Running ones are Ready; Pending ones without a node carry
    /// the scheduler's `PodScheduled=False`, reason `Unschedulable`).
    pub fn add_pod(&self, namespace: &str, name: &str, node: Option<&str>, labels: &[(&str, &str)], gpus: i64, phase: &str) -> Value {
        let resources = if gpus > 0 {
            json!({ "requests": { "nvidia.com/gpu": gpus.to_string() }, "limits": { "nvidia.com/gpu": gpus.to_string() } })
        } else {
            json!({})
        };
        let mut pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": { "name": name, "namespace": namespace, "labels": labels_json(labels) },
            "spec": {
                "containers": [{
                    "name": "main",
                    "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
                    "command": ["sleep", "infinity"],
                    "resources": resources,
                    "imagePullPolicy": "IfNotPresent",
                    "terminationMessagePath": "/dev/termination-log",
                    "terminationMessagePolicy": "File",
                }],
                "restartPolicy": "Always",
                "schedulerName": "default-scheduler",
                "serviceAccountName": "default",
                "terminationGracePeriodSeconds": 30,
                "dnsPolicy": "ClusterFirst",
                "tolerations": [
                    { "key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule" },
                    { "key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300 },
                    { "key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300 },
                ],
            },
        });
        if let Some(node) = node {
            pod["spec"]["nodeName"] = json!(node);
        }
        pod["status"] = self.pod_status(&pod, phase);
        self.put_object(pod)
    }

    /// Moves a pod to `phase`, with the conditions and container states a kubelet reports.
    pub fn set_pod_phase(&self, namespace: &str, name: &str, phase: &str) -> Value {
        let mut pod = self.get("pods", Some(namespace), name).unwrap_or_else(|| panic!("no pod {namespace}/{name}"));
        pod["status"] = self.pod_status(&pod, phase);
        self.put_object(pod)
    }

    fn pod_status(&self, pod: &Value, phase: &str) -> Value {
        Self::pod_status_with(pod, phase, self.list("nodes", None).len())
    }

    /// The status a scheduler and kubelet give `pod` in `phase`, in a cluster of `nodes`
    /// nodes (a Pending pod without a node is `Unschedulable`), for other API servers too.
    pub fn pod_status_with(pod: &Value, phase: &str, nodes: usize) -> Value {
        let now = store::now();
        let node = pod["spec"]["nodeName"].as_str();
        let condition = |kind: &str, ok: bool, reason: Option<&str>| {
            let mut c = json!({ "type": kind, "status": if ok { "True" } else { "False" }, "lastProbeTime": null, "lastTransitionTime": now });
            if let Some(reason) = reason {
                c["reason"] = json!(reason);
            }
            c
        };
        let mut status = json!({ "phase": phase, "qosClass": "BestEffort" });
        if node.is_none() && phase == "Pending" {
            let mut unschedulable = condition("PodScheduled", false, Some("Unschedulable"));
            unschedulable["message"] = json!(format!(
                "0/{nodes} nodes are available: {nodes} Insufficient nvidia.com/gpu. preemption: 0/{nodes} nodes are available: {nodes} No preemption victims found for incoming pod."
            ));
            status["conditions"] = json!([unschedulable]);
            return status;
        }
        if let Some(node) = node {
            status["hostIP"] = json!(node_ip(node));
            status["hostIPs"] = json!([{ "ip": node_ip(node) }]);
        }
        status["startTime"] = json!(now);
        let running = phase == "Running";
        let done = matches!(phase, "Succeeded" | "Failed");
        let not_ready = if done {
            Some("PodCompleted")
        } else if running {
            None
        } else {
            Some("ContainersNotReady")
        };
        status["conditions"] = json!([
            condition("PodScheduled", true, None),
            condition("Initialized", true, if done { Some("PodCompleted") } else { None }),
            condition("ContainersReady", running, not_ready),
            condition("Ready", running, not_ready),
        ]);
        if phase != "Pending" {
            status["podIP"] = json!(format!("10.244.0.{}", pod["metadata"]["name"].as_str().unwrap_or_default().len() + 10));
        }
        let state = match phase {
            "Running" => json!({ "running": { "startedAt": now } }),
            "Succeeded" | "Failed" => {
                let code = i32::from(phase == "Failed");
                json!({ "terminated": { "exitCode": code, "reason": if code == 0 { "Completed" } else { "Error" }, "startedAt": now, "finishedAt": now } })
            }
            _ => json!({ "waiting": { "reason": "ContainerCreating" } }),
        };
        let containers = pod["spec"]["containers"].as_array().cloned().unwrap_or_default();
        status["containerStatuses"] = containers
            .iter()
            .map(|c| {
                json!({
                    "name": c["name"], "image": c["image"], "imageID": "", "ready": running, "started": running, "restartCount": 0, "state": state,
                    "containerID": if phase == "Pending" { Value::Null } else { json!(format!("containerd://{}", random_hex(32))) },
                })
            })
            .collect();
        status
    }

    /// A policy/v1 PodDisruptionBudget selecting `match_labels` with an integer minAvailable;
    /// its status is kept current as pods come and go.
    pub fn add_pdb(&self, namespace: &str, name: &str, match_labels: &[(&str, &str)], min_available: i64) -> Value {
        self.put_object(json!({
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": { "name": name, "namespace": namespace },
            "spec": { "minAvailable": min_available, "selector": { "matchLabels": labels_json(match_labels) } },
        }));
        self.get("poddisruptionbudgets", Some(namespace), name).expect("the PDB")
    }

    /// core/v1 Events (including those written through events.k8s.io/v1) about the object
    /// `kind`/`name` (`involvedObject`), oldest first.
    pub fn events_for(&self, kind: &str, name: &str) -> Vec<Value> {
        let mut events: Vec<Value> =
            self.list("events", None).into_iter().filter(|e| e["involvedObject"]["kind"] == kind && e["involvedObject"]["name"] == name).collect();
        events.sort_by_key(|e| {
            (
                e["metadata"]["creationTimestamp"].as_str().unwrap_or_default().to_owned(),
                e["metadata"]["resourceVersion"].as_str().and_then(|v| v.parse::<u64>().ok()),
            )
        });
        events
    }

    /// Every watch opened so far, in order: its collection path and label selector.
    pub fn watches(&self) -> Vec<WatchEntry> {
        self.shared.lock().watches.clone()
    }

    /// Every write request so far, in order.
    pub fn audit(&self) -> Vec<AuditEntry> {
        self.shared.lock().audit.clone()
    }

    /// How many successful (2xx) writes with `method` ("" or "*" for any) had a path
    /// containing `path_contains`.
    pub fn writes(&self, method: &str, path_contains: &str) -> usize {
        let method_matches = |m: &str| method.is_empty() || method == "*" || method.eq_ignore_ascii_case(m);
        self.shared
            .lock()
            .audit
            .iter()
            .filter(|e| (200..300).contains(&e.status) && method_matches(&e.method) && e.path.contains(path_contains))
            .count()
    }

    /// Answers the next `times` requests with `method` ("" or "*" for any) and a path
    /// containing `path_contains` with a `status` error (reason and message as a real server
    /// gives them) instead of serving them. Note kube's client retries 429, 503 and 504 itself.
    pub fn fail_next(&self, method: &str, path_contains: &str, status: u16, times: usize) {
        if times > 0 {
            self.shared.lock().faults.push(Fault { method: method.to_owned(), path_contains: path_contains.to_owned(), status, remaining: times });
        }
    }

    /// Holds requests with `method` ("" or "*" for any) and a path containing `path_contains`
    /// until the returned [`Hold`] is released (authentication and RBAC are checked first).
    pub fn hold(&self, method: &str, path_contains: &str) -> Hold {
        let (release, release_rx) = watch::channel(false);
        let (arrived_tx, arrived) = watch::channel(0usize);
        let mut state = self.shared.lock();
        state.next_hold += 1;
        let id = state.next_hold;
        state.holds.push(HoldRule {
            id,
            method: method.to_owned(),
            path_contains: path_contains.to_owned(),
            release: release_rx,
            arrived: arrived_tx,
        });
        Hold { shared: self.shared.clone(), id, release, arrived }
    }
}
