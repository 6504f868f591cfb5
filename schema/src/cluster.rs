//! Clusters: the Kubernetes clusters (or simulated ones) whose GPU nodes EGS shares.

use egs_domain::cluster::service;

use crate::ids::{self, Kind};
use crate::inventory::{GpuNode, NodeFilter, Pool};
use crate::pagination::Page;
use crate::scalars::Duration;
use crate::{payload, session};
use async_graphql::{Context, ID, InputObject, Object};
use chrono::{DateTime, Utc};
use egs_domain::error::Result;
use egs_entities::{ClusterProvider, Health, PodPlacement, RegistrationStatus, cluster};

/// A Kubernetes cluster (or a simulated one) whose GPU nodes EGS shares.
pub struct Cluster(pub cluster::Model);

#[Object]
impl Cluster {
    pub async fn id(&self) -> ID {
        ids::encode(Kind::Cluster, self.0.id)
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn provider(&self) -> ClusterProvider {
        self.0.provider
    }
    async fn cloud(&self) -> Option<&str> {
        self.0.cloud.as_deref()
    }
    async fn region(&self) -> Option<&str> {
        self.0.region.as_deref()
    }
    /// How EGS authenticates to the cluster (the kubeconfig itself is never returned).
    async fn credentials(&self) -> CredentialSource {
        match (self.0.provider, self.0.credentials.is_some()) {
            (ClusterProvider::Simulated, _) => CredentialSource::None,
            (ClusterProvider::Kubernetes, true) => CredentialSource::Kubeconfig,
            (ClusterProvider::Kubernetes, false) => CredentialSource::InCluster,
        }
    }
    /// How the slice's pods are steered onto its nodes (Kubernetes clusters).
    async fn pod_placement(&self) -> PodPlacement {
        self.0.pod_placement
    }
    /// Promises of GPRs planned to start within this are firm against arrivals below the high
    /// band; `null`: none are.
    async fn firm_horizon(&self) -> Option<Duration> {
        self.0.firm_horizon_secs.map(Duration)
    }
    /// Admins: the path the cluster's API server calls the admission webhook on
    /// (`podPlacement: WEBHOOK`), secret included: put it in the MutatingWebhookConfiguration.
    async fn webhook_path(&self, ctx: &Context<'_>) -> Result<String> {
        let (caller, _) = crate::session(ctx)?;
        caller.require_admin()?;
        let key = egs_domain::auth::webhook_key(&crate::app(ctx)?.keys, &self.0.name);
        Ok(format!("/kubernetes/clusters/{}/mutate/{key}", self.0.name))
    }
    async fn registration_status(&self) -> RegistrationStatus {
        self.0.registration_status
    }
    async fn health(&self) -> Health {
        self.0.health
    }
    /// When EGS last heard from the cluster.
    async fn last_contact_at(&self) -> Option<DateTime<Utc>> {
        self.0.last_contact_at
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    /// GPU nodes of this cluster.
    async fn nodes(&self, ctx: &Context<'_>, first: Option<i32>, after: Option<String>, filter: Option<NodeFilter>) -> Result<Page<GpuNode>> {
        crate::boxed(async move {
            let filter = filter.unwrap_or_default().with_cluster(self.0.id);
            crate::inventory::list_nodes_page(ctx, filter, first, after).await
        })
        .await
    }
    /// Node pools (instance type × GPU shape) of this cluster with their free and reserved counts.
    async fn pools(&self, ctx: &Context<'_>) -> Result<Vec<Pool>> {
        crate::boxed(async move {
            let (caller, db) = session(ctx)?;
            crate::inventory::list_pools(db, caller, Some(self.0.id), None).await
        })
        .await
    }
}

#[derive(Default)]
pub struct ClusterQuery;

#[Object]
impl ClusterQuery {
    /// Every registered cluster.
    async fn clusters(&self, ctx: &Context<'_>) -> Result<Vec<Cluster>> {
        let (caller, db) = session(ctx)?;
        Ok(service::list_clusters(db, caller).await?.into_iter().map(Cluster).collect())
    }

    async fn cluster(&self, ctx: &Context<'_>, id: ID) -> Result<Cluster> {
        let (caller, db) = session(ctx)?;
        let id = ids::decode("id", &id, Kind::Cluster)?;
        Ok(Cluster(service::find_cluster(db, caller, id).await?))
    }
}

/// How EGS authenticates to a cluster.
#[derive(async_graphql::Enum, Copy, Clone, PartialEq, Eq)]
pub enum CredentialSource {
    /// A kubeconfig given at registration, stored encrypted.
    Kubeconfig,
    /// The service account of the pod EGS runs in.
    InCluster,
    /// Simulated clusters need none.
    None,
}

#[derive(InputObject)]
pub struct RegisterClusterInput {
    /// A DNS label, unique among clusters.
    pub name: String,
    pub provider: ClusterProvider,
    pub cloud: Option<String>,
    pub region: Option<String>,
    /// KUBERNETES: a self-contained kubeconfig (inline token or client certificate; no `exec`
    /// plugins or file paths). Stored encrypted and never returned.
    pub kubeconfig: Option<String>,
    /// KUBERNETES: use the service account of the pod EGS runs in instead of a kubeconfig.
    #[graphql(default)]
    pub in_cluster: bool,
    /// KUBERNETES: how the slice's pods are steered onto its nodes (default: the admission
    /// plugins' namespace annotations).
    pub pod_placement: Option<PodPlacement>,
}

#[derive(InputObject)]
pub struct UpdateClusterInput {
    pub id: ID,
    pub name: Option<String>,
    /// `null` clears it.
    pub cloud: async_graphql::MaybeUndefined<String>,
    /// `null` clears it.
    pub region: async_graphql::MaybeUndefined<String>,
    /// Replaces the stored kubeconfig (Kubernetes clusters).
    pub kubeconfig: Option<String>,
    pub pod_placement: Option<PodPlacement>,
    /// Promises of GPRs planned to start within this are kept against arrivals below the high
    /// band (priority 201 and up), which plan around them: fewer promises move, those arrivals
    /// may wait longer. Up to 7 days; `null` or 0: none (the default).
    pub firm_horizon: async_graphql::MaybeUndefined<Duration>,
}

#[derive(InputObject)]
pub struct RemoveClusterInput {
    pub id: ID,
}

payload!(RegisterClusterPayload, cluster: Cluster);
payload!(UpdateClusterPayload, cluster: Cluster);
payload!(
    /// The removed cluster, as it was.
    RemoveClusterPayload,
    cluster: Cluster
);

#[derive(Default)]
pub struct ClusterMutation;

#[Object]
impl ClusterMutation {
    /// Registers a cluster (admin).
    async fn register_cluster(&self, ctx: &Context<'_>, input: RegisterClusterInput) -> async_graphql::Result<RegisterClusterPayload> {
        let (caller, db) = session(ctx)?;
        let credentials = match (input.kubeconfig, input.in_cluster) {
            (Some(_), true) => {
                let error = egs_domain::error::Error::User(vec![egs_domain::error::UserError::invalid(
                    "inCluster",
                    "give a kubeconfig or inCluster, not both",
                )]);
                return RegisterClusterPayload::from_result(Err(error));
            }
            (Some(yaml), false) => service::Credentials::Kubeconfig(yaml),
            (None, true) => service::Credentials::InCluster,
            (None, false) => service::Credentials::None,
        };
        let input = service::RegisterCluster {
            name: input.name,
            provider: input.provider,
            cloud: input.cloud,
            region: input.region,
            credentials,
            pod_placement: input.pod_placement,
        };
        let sealer = crate::app(ctx)?.sealer();
        RegisterClusterPayload::from_result(service::register_cluster(db, caller, sealer, input).await.map(Cluster))
    }

    /// Renames a cluster or changes its cloud and region (admin).
    async fn update_cluster(&self, ctx: &Context<'_>, input: UpdateClusterInput) -> async_graphql::Result<UpdateClusterPayload> {
        let (caller, db) = session(ctx)?;
        let sealer = crate::app(ctx)?.sealer();
        let result = async {
            let input = service::UpdateCluster {
                id: ids::decode("id", &input.id, Kind::Cluster)?,
                name: input.name,
                cloud: input.cloud.as_opt_ref().map(|v| v.cloned()).or(if input.cloud.is_null() { Some(None) } else { None }),
                region: input.region.as_opt_ref().map(|v| v.cloned()).or(if input.region.is_null() { Some(None) } else { None }),
                kubeconfig: input.kubeconfig,
                pod_placement: input.pod_placement,
                firm_horizon: match input.firm_horizon {
                    async_graphql::MaybeUndefined::Undefined => None,
                    async_graphql::MaybeUndefined::Null => Some(None),
                    async_graphql::MaybeUndefined::Value(d) => Some(Some(d.secs())),
                },
            };
            service::update_cluster(db, caller, sealer, input).await.map(Cluster)
        };
        UpdateClusterPayload::from_result(result.await)
    }

    /// Removes a cluster with its nodes and slice namespaces (admin); refused while GPRs hold nodes there.
    async fn remove_cluster(&self, ctx: &Context<'_>, input: RemoveClusterInput) -> async_graphql::Result<RemoveClusterPayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let id = ids::decode("id", &input.id, Kind::Cluster)?;
            service::remove_cluster(db, caller, id).await.map(Cluster)
        };
        RemoveClusterPayload::from_result(result.await)
    }
}
