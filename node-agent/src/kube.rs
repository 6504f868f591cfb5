//! The little the agent asks of Kubernetes, over plain HTTPS with the pod's service account:
//! the node's instance-type label (RBAC `get nodes`) and, only with `--kubelet`, the pods the
//! kubelet runs (`GET https://<node>:10250/pods`, RBAC `nodes/proxy`). The agent may not list
//! pods through the API server: a field selector cannot be written in RBAC, so that right
//! would reach every node's pods; the gateway names the pods it reports instead. The kubelet's
//! pod-resources gRPC socket would map devices to pods without host PIDs, but needs a gRPC
//! stack; it is not used.

use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A request to the API server or kubelet gives up after this long.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Why a Kubernetes request failed.
#[derive(Debug, thiserror::Error)]
pub enum KubeError {
    #[error("cannot read the service account's {what} at {path}: {source}")]
    ServiceAccount { what: &'static str, path: PathBuf, source: std::io::Error },
    #[error("invalid CA certificate: {0}")]
    Certificate(reqwest::Error),
    #[error("request failed: {0}")]
    Http(#[from] reqwest::Error),
    #[error("answered HTTP {0}")]
    Status(u16),
}

/// An HTTPS endpoint reached with the service account's bearer token.
#[derive(Clone)]
pub struct KubeClient {
    base: String,
    client: reqwest::Client,
    token_path: PathBuf,
}

impl KubeClient {
    /// The API server at `base`, verified against the service account's CA.
    pub fn api_server(base: &str, service_account: &Path) -> Result<Self, KubeError> {
        let ca_path = service_account.join("ca.crt");
        let pem = std::fs::read(&ca_path).map_err(|source| KubeError::ServiceAccount { what: "CA", path: ca_path, source })?;
        let ca = reqwest::Certificate::from_pem(&pem).map_err(KubeError::Certificate)?;
        let client = reqwest::Client::builder().timeout(TIMEOUT).add_root_certificate(ca).build()?;
        Ok(Self { base: base.trim_end_matches('/').to_owned(), client, token_path: service_account.join("token") })
    }

    /// The kubelet at `base`; its serving certificate is often self-signed, hence `insecure`.
    pub fn kubelet(base: &str, service_account: &Path, insecure: bool) -> Result<Self, KubeError> {
        let mut builder = reqwest::Client::builder().timeout(TIMEOUT).danger_accept_invalid_certs(insecure);
        if let Ok(pem) = std::fs::read(service_account.join("ca.crt")) {
            builder = builder.add_root_certificate(reqwest::Certificate::from_pem(&pem).map_err(KubeError::Certificate)?);
        }
        Ok(Self { base: base.trim_end_matches('/').to_owned(), client: builder.build()?, token_path: service_account.join("token") })
    }

    /// GETs `path` as JSON. The token is read each time: Kubernetes rotates bound tokens.
    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, KubeError> {
        let token = std::fs::read_to_string(&self.token_path).map_err(|source| KubeError::ServiceAccount {
            what: "token",
            path: self.token_path.clone(),
            source,
        })?;
        let response = self.client.get(format!("{}{path}", self.base)).bearer_auth(token.trim()).send().await?;
        if !response.status().is_success() {
            return Err(KubeError::Status(response.status().as_u16()));
        }
        Ok(response.json().await?)
    }

    /// The pods the kubelet runs (this node's).
    pub async fn kubelet_pods(&self) -> Result<Vec<PodMeta>, KubeError> {
        let list: PodList = self.get("/pods").await?;
        Ok(list.items.into_iter().map(PodMeta::from).collect())
    }

    /// The node's instance type, from its well-known label (or the older beta one).
    pub async fn instance_type(&self, node: &str) -> Result<Option<String>, KubeError> {
        let node: Object = self.get(&format!("/api/v1/nodes/{node}")).await?;
        let labels = node.metadata.labels.unwrap_or_default();
        Ok(labels.get("node.kubernetes.io/instance-type").or_else(|| labels.get("beta.kubernetes.io/instance-type")).cloned())
    }
}

/// A pod, as far as naming GPU users goes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PodMeta {
    pub uid: String,
    pub namespace: String,
    pub name: String,
    /// Container id (without the `containerd://` scheme) → container name.
    pub containers: HashMap<String, String>,
}

#[derive(Deserialize)]
struct PodList {
    #[serde(default)]
    items: Vec<Pod>,
}

#[derive(Deserialize)]
struct Pod {
    metadata: Metadata,
    #[serde(default)]
    status: Option<PodStatus>,
}

#[derive(Deserialize, Default)]
struct Metadata {
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    uid: String,
    #[serde(default)]
    labels: Option<HashMap<String, String>>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct PodStatus {
    #[serde(default)]
    container_statuses: Vec<ContainerStatus>,
    #[serde(default)]
    init_container_statuses: Vec<ContainerStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ContainerStatus {
    name: String,
    #[serde(default, rename = "containerID")]
    container_id: Option<String>,
}

#[derive(Deserialize)]
struct Object {
    metadata: Metadata,
}

impl From<Pod> for PodMeta {
    fn from(pod: Pod) -> Self {
        let status = pod.status.unwrap_or_default();
        let containers = status
            .container_statuses
            .into_iter()
            .chain(status.init_container_statuses)
            .filter_map(|c| {
                let id = c.container_id?;
                let id = id.split_once("://").map_or(id.as_str(), |(_, id)| id).to_owned();
                Some((id, c.name))
            })
            .collect();
        Self { uid: pod.metadata.uid, namespace: pod.metadata.namespace, name: pod.metadata.name, containers }
    }
}

/// Parses a `PodList` body (for tests of the mapping).
pub fn parse_pod_list(body: &str) -> Result<Vec<PodMeta>, serde_json::Error> {
    Ok(serde_json::from_str::<PodList>(body)?.items.into_iter().map(PodMeta::from).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pod_list_names_pods_and_their_containers() {
        let body = r#"{"kind":"PodList","apiVersion":"v1","items":[
            {"metadata":{"name":"llama-0","namespace":"team-a","uid":"0b5a1c2e-5f0b-4a6e-9c1e-123456789abc"},
             "status":{"containerStatuses":[{"name":"trainer","containerID":"containerd://4f1e0c"}],
                       "initContainerStatuses":[{"name":"fetch","containerID":"cri-o://77aa"}]}},
            {"metadata":{"name":"pending","namespace":"team-b","uid":"u2"},"status":{}}]}"#;
        let pods = parse_pod_list(body).expect("a pod list");
        assert_eq!(pods.len(), 2);
        assert_eq!((pods[0].namespace.as_str(), pods[0].name.as_str()), ("team-a", "llama-0"));
        assert_eq!(pods[0].containers.get("4f1e0c").map(String::as_str), Some("trainer"));
        assert_eq!(pods[0].containers.get("77aa").map(String::as_str), Some("fetch"));
        assert!(pods[1].containers.is_empty());
    }
}
