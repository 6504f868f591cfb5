//! The Kubernetes cluster provider (docs/design.md §2 "cluster providers"): EGS reaches each registered
//! cluster's API server with the `kube` client, keeps the inventory in step with its GPU nodes,
//! hands nodes to slices and takes them back in recorded, resumable steps, serves the
//! `GPUProvisioningRequest` custom resource, issues slice kubeconfigs and creates GPRs for
//! Pending GPU pods. Controllers run on the leader only (the scheduler's lease).
//!
//! What EGS writes into a cluster, and removes again at release:
//! - on each node of a provisioned GPR: label `egs.io/slice=<slice>` and `egs.io/gpr=<id>`, the
//!   taint `egs.io/slice=<slice>:NoSchedule` (other pods stay off);
//! - on each slice namespace: label `egs.io/slice=<slice>`, and the annotations the
//!   `PodNodeSelector` and `PodTolerationRestriction` admission plugins read, so the slice's
//!   pods get the node selector and the toleration (or, with [`PodPlacement::Webhook`], EGS's
//!   own mutating webhook adds them: see [`webhook`]).

pub mod admission;
pub mod autogpr;
pub mod context;
pub mod controllers;
pub mod cordons;
pub mod crd;
pub mod discovery;
pub mod kubeconfig;
pub mod provision;
pub mod resources;
pub mod webhook;

use async_trait::async_trait;
use egs_domain::cluster::credentials::CredentialCipher;
use egs_domain::ports::ProviderError;
use egs_domain::ports::{IssuedKubeconfig, KubeAccess, NamespaceEvent, NodePod, ReviewedToken};
use egs_entities::{ClusterProvider, cluster};
use sea_orm::{DatabaseConnection, EntityTrait};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub use egs_entities::PodPlacement;

/// Label (on nodes and namespaces) and taint key naming the slice that holds them.
pub const SLICE_KEY: &str = "egs.io/slice";
/// Label naming the GPR a node is provisioned for.
pub const GPR_LABEL: &str = "egs.io/gpr";
/// Set on a node EGS cordoned, so release uncordons only what EGS cordoned.
pub const CORDONED_ANNOTATION: &str = "egs.io/cordoned";
/// Read by the `PodNodeSelector` admission plugin.
pub const NODE_SELECTOR_ANNOTATION: &str = "scheduler.alpha.kubernetes.io/node-selector";
/// Read by the `PodTolerationRestriction` admission plugin: tolerations added to every pod.
pub const DEFAULT_TOLERATIONS_ANNOTATION: &str = "scheduler.alpha.kubernetes.io/defaultTolerations";
/// Read by the `PodTolerationRestriction` admission plugin: the only tolerations allowed.
pub const TOLERATIONS_WHITELIST_ANNOTATION: &str = "scheduler.alpha.kubernetes.io/tolerationsWhitelist";
/// Node label with the GPU product name (set by NVIDIA GPU feature discovery).
pub const GPU_PRODUCT_LABEL: &str = "nvidia.com/gpu.product";
/// Node label with the memory of each GPU in MiB (GPU feature discovery).
pub const GPU_MEMORY_LABEL: &str = "nvidia.com/gpu.memory";
/// The extended resource the NVIDIA device plugin advertises.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";
pub const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
/// Who EGS says it is in Kubernetes Events and field managers.
pub const COMPONENT: &str = "egs";

/// The TokenReview `extra` key naming the node of the pod a ServiceAccount token is bound to.
pub const NODE_NAME_EXTRA: &str = "authentication.kubernetes.io/node-name";

/// The label Kubernetes' Pod Security admission enforces a level by.
pub const POD_SECURITY_LABEL: &str = "pod-security.kubernetes.io/enforce";

/// Takes namespace `ns` for slice `slice`: creates it, labelled for the slice and with
/// `pod_security` enforced, when the cluster does not have it; an existing one only when it
/// already is the slice's (labelled `egs.io/slice=<slice>`, by EGS when it created it or by
/// an admin handing it over). Anything else is refused before EGS writes a label, a Role or a
/// placement there: a namespace named in a slice request must not give the slice the
/// gateway's own namespace, the cluster's system namespaces, or someone else's.
pub async fn claim_namespace(
    namespaces: &kube::Api<k8s_openapi::api::core::v1::Namespace>,
    ns: &str,
    slice: &str,
    pod_security: &str,
) -> Result<(), ProviderError> {
    use k8s_openapi::api::core::v1::Namespace;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    if let Some(why) = egs_domain::slice::reserved_namespace(ns) {
        return Err(ProviderError::Permanent(format!("namespace `{ns}` {why}; it cannot be a slice's")));
    }
    match namespaces.get_opt(ns).await {
        Ok(Some(existing)) => {
            let owner = existing.metadata.labels.as_ref().and_then(|l| l.get(SLICE_KEY)).map(String::as_str);
            match owner {
                Some(owner) if owner == slice => Ok(()),
                Some(other) => Err(ProviderError::Permanent(format!("namespace `{ns}` belongs to slice `{other}` ({SLICE_KEY}={other})"))),
                None => Err(ProviderError::Permanent(format!(
                    "namespace `{ns}` already exists and is not the slice's; to hand it over, label it: kubectl label namespace {ns} {SLICE_KEY}={slice}"
                ))),
            }
        }
        Ok(None) => {
            let labels = std::collections::BTreeMap::from([
                (SLICE_KEY.to_owned(), slice.to_owned()),
                (POD_SECURITY_LABEL.to_owned(), pod_security.to_owned()),
            ]);
            // With the PodTolerationRestriction plugin, its pods may tolerate only the slice's
            // own taint from the start (see `provision::steer_namespace`).
            let whitelist = serde_json::json!([slice_toleration(slice)]).to_string();
            let annotations = std::collections::BTreeMap::from([(TOLERATIONS_WHITELIST_ANNOTATION.to_owned(), whitelist)]);
            let metadata = ObjectMeta { name: Some(ns.to_owned()), labels: Some(labels), annotations: Some(annotations), ..Default::default() };
            let namespace = Namespace { metadata, ..Default::default() };
            match namespaces.create(&kube::api::PostParams::default(), &namespace).await {
                Ok(_) => Ok(()),
                Err(e) if is_conflict(&e) => Err(ProviderError::Transient(format!("namespace `{ns}` appeared meanwhile; retrying"))),
                Err(e) => Err(classify(&format!("cannot create namespace `{ns}`"), e)),
            }
        }
        Err(e) => Err(classify(&format!("cannot read namespace `{ns}`"), e)),
    }
}

/// The toleration for the slice's taint (`egs.io/slice=<slice>:NoSchedule`) that its pods
/// get, from the admission plugins' annotation or from the webhook.
pub fn slice_toleration(slice: &str) -> serde_json::Value {
    serde_json::json!({ "key": SLICE_KEY, "operator": "Equal", "value": slice, "effect": "NoSchedule" })
}

/// One `kube::Client` per Kubernetes cluster, built from its stored credentials and rebuilt
/// when they change.
pub struct KubeClusters {
    db: DatabaseConnection,
    cipher: CredentialCipher,
    clients: Mutex<HashMap<i64, (Option<String>, kube::Client)>>,
    /// The Pod Security level of the slice namespaces EGS creates.
    pod_security: String,
}

impl KubeClusters {
    pub fn new(db: DatabaseConnection, cipher: CredentialCipher, pod_security: &str) -> Arc<Self> {
        Arc::new(Self { db, cipher, clients: Mutex::new(HashMap::new()), pod_security: pod_security.to_owned() })
    }

    /// The Pod Security level of the slice namespaces EGS creates.
    pub fn pod_security(&self) -> &str {
        &self.pod_security
    }

    pub fn cipher(&self) -> &CredentialCipher {
        &self.cipher
    }

    /// A client for cluster `id`: from its kubeconfig, or the in-cluster service account
    /// when it has none.
    pub async fn client(&self, id: i64) -> Result<kube::Client, ProviderError> {
        let row = cluster::Entity::find_by_id(id)
            .one(&self.db)
            .await
            .map_err(|e| ProviderError::Transient(format!("cannot read cluster {id}: {e}")))?
            .ok_or_else(|| ProviderError::Permanent(format!("cluster {id} no longer exists")))?;
        self.client_for(&row).await
    }

    pub async fn client_for(&self, row: &cluster::Model) -> Result<kube::Client, ProviderError> {
        if row.provider != ClusterProvider::Kubernetes {
            return Err(ProviderError::Permanent(format!("cluster `{}` is not a Kubernetes cluster", row.name)));
        }
        if let Ok(clients) = self.clients.lock()
            && let Some((credentials, client)) = clients.get(&row.id)
            && *credentials == row.credentials
        {
            return Ok(client.clone());
        }
        let config = match &row.credentials {
            Some(sealed) => {
                let yaml = self
                    .cipher
                    .open(sealed)
                    .map_err(|e| ProviderError::Permanent(format!("cluster `{}`: {}", row.name, egs_domain::redaction::scrubbed(&e))))?;
                config_from_kubeconfig(&yaml)
                    .await
                    .map_err(|e| ProviderError::Permanent(format!("cluster `{}`: {}", row.name, egs_domain::redaction::scrubbed(&e))))?
            }
            None => kube::Config::incluster().map_err(|e| {
                ProviderError::Permanent(format!(
                    "cluster `{}` has no kubeconfig and EGS is not running in a cluster: {}",
                    row.name,
                    egs_domain::redaction::scrubbed(&e)
                ))
            })?,
        };
        // kube retries 429/503/504 itself, up to 15 times over minutes: an eviction refused by a
        // PodDisruptionBudget would block release far past its deadline. EGS retries on its
        // own terms (release backoff, the next tick for other steps, watchers' backoff).
        let mut config = config;
        config.default_retry = false;
        let client = kube::Client::try_from(config)
            .map_err(|e| ProviderError::Permanent(format!("cluster `{}`: {}", row.name, egs_domain::redaction::scrubbed(&e))))?;
        if let Ok(mut clients) = self.clients.lock() {
            clients.insert(row.id, (row.credentials.clone(), client.clone()));
        }
        Ok(client)
    }
}

#[async_trait]
impl KubeAccess for KubeClusters {
    /// Only self-contained kubeconfigs: `exec` and `auth-provider` plugins would run commands on
    /// the gateway, and file paths would read its disk.
    async fn check_kubeconfig(&self, yaml: &str) -> Result<(), String> {
        let parsed = kube::config::Kubeconfig::from_yaml(yaml).map_err(|_| "not a kubeconfig (YAML with clusters, users and contexts)".to_owned())?;
        for named in &parsed.auth_infos {
            let Some(user) = &named.auth_info else { continue };
            let refused = if user.exec.is_some() {
                Some("an `exec` credential plugin")
            } else if user.auth_provider.is_some() {
                Some("an `auth-provider`")
            } else if user.token_file.is_some() || user.client_certificate.is_some() || user.client_key.is_some() {
                Some("a file path (use the inline `token`, `client-certificate-data` and `client-key-data`)")
            } else {
                None
            };
            if let Some(what) = refused {
                return Err(format!("user `{}` uses {what}, which EGS does not run; give a self-contained kubeconfig", named.name));
            }
        }
        if parsed.clusters.iter().any(|c| c.cluster.as_ref().is_some_and(|c| c.certificate_authority.is_some())) {
            return Err("a cluster's `certificate-authority` is a file path; use `certificate-authority-data`".into());
        }
        config_from_kubeconfig(yaml).await.map(drop)
    }

    async fn grant_slice_access(
        &self,
        target: &cluster::Model,
        slice: &str,
        namespaces: &[String],
        secrets_and_exec: bool,
        expires_in_secs: i64,
    ) -> Result<IssuedKubeconfig, ProviderError> {
        kubeconfig::grant_slice_access(self, target, slice, namespaces, secrets_and_exec, expires_in_secs).await
    }

    async fn revoke_slice_access(&self, target: &cluster::Model, slice: &str, namespaces: &[String]) -> Result<(), ProviderError> {
        let client = self.client_for(target).await?;
        kubeconfig::revoke(&client, slice, namespaces).await
    }

    async fn review_token(&self, target: &cluster::Model, token: &str, audience: &str) -> Result<ReviewedToken, ProviderError> {
        use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
        let client = self.client_for(target).await?;
        let reviews: kube::Api<TokenReview> = kube::Api::all(client);
        let review =
            TokenReview { spec: TokenReviewSpec { token: token.to_owned(), audiences: Some(vec![audience.to_owned()]) }, ..Default::default() };
        let answered = reviews.create(&kube::api::PostParams::default(), &review).await.map_err(|e| classify("cannot review the token", e))?;
        let status = answered.status.unwrap_or_default();
        let user = status.user.unwrap_or_default();
        let node_name = user.extra.as_ref().and_then(|extra| extra.get(NODE_NAME_EXTRA)).and_then(|names| names.first()).cloned();
        Ok(ReviewedToken {
            authenticated: status.authenticated.unwrap_or(false),
            username: user.username.unwrap_or_default(),
            audiences: status.audiences.unwrap_or_default(),
            node_name,
            error: status.error.filter(|e| !e.is_empty()),
        })
    }

    async fn node_pods(&self, target: &cluster::Model, node: &str) -> Result<Vec<NodePod>, ProviderError> {
        use k8s_openapi::api::core::v1::Pod;
        let client = self.client_for(target).await?;
        let pods: kube::Api<Pod> = kube::Api::all(client);
        let listed = pods
            .list(&kube::api::ListParams::default().fields(&format!("spec.nodeName={node}")))
            .await
            .map_err(|e| classify("cannot list the node's pods", e))?;
        Ok(listed.items.into_iter().map(node_pod).collect())
    }

    async fn post_namespace_event(&self, cluster_id: i64, namespace: &str, event: &NamespaceEvent) -> Result<(), ProviderError> {
        let client = self.client(cluster_id).await?;
        let object = match &event.resource {
            Some(name) => provision::resource_ref(namespace, name),
            None => provision::namespace_ref(namespace),
        };
        let kind = if event.warning { "Warning" } else { "Normal" };
        provision::emit(&client, object, &event.reason, &event.message, kind).await
    }
}

/// A pod's names and its (init) containers' ids, the runtime's scheme taken off (a process's
/// cgroup carries the bare id).
fn node_pod(pod: k8s_openapi::api::core::v1::Pod) -> NodePod {
    let status = pod.status.unwrap_or_default();
    let containers = status
        .container_statuses
        .into_iter()
        .flatten()
        .chain(status.init_container_statuses.into_iter().flatten())
        .filter_map(|c| {
            let id = c.container_id?;
            let bare = id.split_once("://").map_or(id.as_str(), |(_, bare)| bare).to_owned();
            Some((bare, c.name))
        })
        .collect();
    NodePod {
        uid: pod.metadata.uid.unwrap_or_default(),
        namespace: pod.metadata.namespace.unwrap_or_default(),
        name: pod.metadata.name.unwrap_or_default(),
        containers,
    }
}

/// Parses a kubeconfig (its current context) into a client configuration; the error says
/// what is wrong without echoing the file (it holds secrets).
pub async fn config_from_kubeconfig(yaml: &str) -> Result<kube::Config, String> {
    let kubeconfig = kube::config::Kubeconfig::from_yaml(yaml)
        .map_err(|e| format!("the kubeconfig is not valid YAML for a kubeconfig: {}", egs_domain::redaction::first_line(&e)))?;
    kube::Config::from_custom_kubeconfig(kubeconfig, &kube::config::KubeConfigOptions::default())
        .await
        .map_err(|e| format!("the kubeconfig cannot be used: {}", egs_domain::redaction::first_line(&e)))
}

/// Whether a Kubernetes API error is worth retrying (server trouble, throttling, conflicts)
/// rather than a refusal that will not change.
pub fn classify(context: &str, error: kube::Error) -> ProviderError {
    match &error {
        kube::Error::Api(status) if matches!(status.code, 400 | 401 | 403 | 404 | 422) => {
            ProviderError::Permanent(format!("{context}: {} ({})", status.message, status.code))
        }
        kube::Error::Api(status) => ProviderError::Transient(format!("{context}: {} ({})", status.message, status.code)),
        _ => ProviderError::Transient(format!("{context}: {}", egs_domain::redaction::scrubbed(&error))),
    }
}

/// Whether `error` is the API server's 404.
pub fn is_not_found(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 404)
}

/// Whether `error` is the API server's 409 (stale resourceVersion or already exists).
pub fn is_conflict(error: &kube::Error) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == 409)
}
