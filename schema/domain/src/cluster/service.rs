//! Registering and managing clusters (admin only).

use super::credentials::CredentialCipher;
use crate::auth::Caller;
use crate::error::{Error, Result, UserError};
use crate::ports::KubeAccess;
use crate::validate;
use chrono::Utc;
use egs_entities::{ClusterProvider, GprPhase, Health, PodPlacement, RegistrationStatus, cluster, gpr, project};
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, Set};

/// Name of the project that exists after install.
pub const DEFAULT_PROJECT: &str = "default";

pub struct RegisterCluster {
    pub name: String,
    pub provider: ClusterProvider,
    pub cloud: Option<String>,
    pub region: Option<String>,
    pub credentials: Credentials,
    pub pod_placement: Option<PodPlacement>,
}

/// How EGS authenticates to a Kubernetes cluster.
pub enum Credentials {
    /// Simulated clusters.
    None,
    /// A kubeconfig (its current context), stored encrypted.
    Kubeconfig(String),
    /// The service account of the pod EGS runs in.
    InCluster,
}

pub struct UpdateCluster {
    pub id: i64,
    pub name: Option<String>,
    pub cloud: Option<Option<String>>,
    pub region: Option<Option<String>>,
    /// A new kubeconfig replaces the stored one (the controllers reconnect with it).
    pub kubeconfig: Option<String>,
    pub pod_placement: Option<PodPlacement>,
    /// Seconds; `Some(None)` clears it.
    pub firm_horizon: Option<Option<i64>>,
}

/// Longest firm horizon: a week (a promise further out than that is no promise to freeze).
pub const MAX_FIRM_HORIZON_SECS: i64 = 7 * 24 * 3600;

/// Largest kubeconfig accepted.
const MAX_KUBECONFIG_BYTES: usize = 256 * 1024;

/// What storing a kubeconfig needs: the cipher that seals it, and the Kubernetes adapter that
/// checks it is self-contained and usable.
#[derive(Clone, Copy)]
pub struct Sealer<'a> {
    pub cipher: &'a CredentialCipher,
    pub kube: &'a dyn KubeAccess,
}

/// Checks a kubeconfig and seals it. Only self-contained kubeconfigs are accepted: `exec`
/// and `auth-provider` plugins would run commands on the gateway, and file paths would read
/// its disk.
async fn seal_kubeconfig(field: &str, yaml: &str, sealer: Sealer<'_>) -> Result<String> {
    let invalid = |message: String| Error::User(vec![UserError::invalid(field, message)]);
    if yaml.len() > MAX_KUBECONFIG_BYTES {
        return Err(invalid(format!("at most {MAX_KUBECONFIG_BYTES} bytes")));
    }
    sealer.kube.check_kubeconfig(yaml).await.map_err(invalid)?;
    sealer.cipher.seal(yaml).map_err(|e| Error::Internal(anyhow::anyhow!(e)))
}

/// The default project's id (created at bootstrap).
pub async fn default_project_id(db: &impl ConnectionTrait) -> Result<i64> {
    project::Entity::find()
        .filter(project::Column::Name.eq(DEFAULT_PROJECT))
        .one(db)
        .await?
        .map(|p| p.id)
        .ok_or_else(|| Error::Internal(anyhow::anyhow!("the default project is missing; run `egs migrate`")))
}

pub async fn list_clusters(db: &DatabaseConnection, caller: &Caller) -> Result<Vec<cluster::Model>> {
    caller.require_person()?;
    Ok(cluster::Entity::find().order_by_asc(cluster::Column::Name).all(db).await?)
}

pub async fn find_cluster(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<cluster::Model> {
    caller.require_person()?;
    cluster::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("cluster"))
}

fn check_cluster_fields(name: Option<&str>, cloud: Option<&str>, region: Option<&str>) -> Result<()> {
    let mut errors: Vec<UserError> = Vec::new();
    if let Some(name) = name {
        validate::dns_label("name", name, 63, &mut errors);
    }
    if let Some(cloud) = cloud {
        validate::text("cloud", cloud, 64, &mut errors);
    }
    if let Some(region) = region {
        validate::text("region", region, 64, &mut errors);
    }
    validate::finish(errors)
}

async fn ensure_name_free(db: &DatabaseConnection, project_id: i64, name: &str, except: Option<i64>) -> Result<()> {
    let mut query = cluster::Entity::find().filter(cluster::Column::ProjectId.eq(project_id)).filter(cluster::Column::Name.eq(name));
    if let Some(id) = except {
        query = query.filter(cluster::Column::Id.ne(id));
    }
    if query.count(db).await? > 0 {
        return Err(Error::conflict("name", format!("a cluster named `{name}` already exists")));
    }
    Ok(())
}

pub async fn register_cluster(db: &DatabaseConnection, caller: &Caller, sealer: Sealer<'_>, input: RegisterCluster) -> Result<cluster::Model> {
    caller.require_admin()?;
    check_cluster_fields(Some(&input.name), input.cloud.as_deref(), input.region.as_deref())?;
    let credentials = match (input.provider, &input.credentials) {
        (ClusterProvider::Simulated, Credentials::None) => None,
        (ClusterProvider::Simulated, _) => {
            return Err(Error::User(vec![UserError::invalid("kubeconfig", "a simulated cluster takes no credentials")]));
        }
        (ClusterProvider::Kubernetes, Credentials::None) => {
            return Err(Error::User(vec![UserError::invalid("kubeconfig", "give the cluster's kubeconfig, or set inCluster")]));
        }
        (ClusterProvider::Kubernetes, Credentials::InCluster) => None,
        (ClusterProvider::Kubernetes, Credentials::Kubeconfig(yaml)) => Some(seal_kubeconfig("kubeconfig", yaml, sealer).await?),
    };
    let project_id = default_project_id(db).await?;
    ensure_name_free(db, project_id, &input.name, None).await?;
    let now = Utc::now();
    // A simulated cluster is "contacted" the moment it exists; a Kubernetes one once its
    // provider has reached the API server.
    let (status, health) = match input.provider {
        ClusterProvider::Simulated => (RegistrationStatus::Registered, Health::Healthy),
        ClusterProvider::Kubernetes => (RegistrationStatus::Pending, Health::Unknown),
    };
    let model = cluster::ActiveModel {
        project_id: Set(project_id),
        name: Set(input.name),
        provider: Set(input.provider),
        cloud: Set(input.cloud),
        region: Set(input.region),
        registration_status: Set(status),
        health: Set(health),
        last_contact_at: Set((input.provider == ClusterProvider::Simulated).then_some(now)),
        credentials: Set(credentials),
        pod_placement: Set(input.pod_placement.unwrap_or(PodPlacement::AdmissionPlugins)),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    };
    Ok(model.insert(db).await?)
}

pub async fn update_cluster(db: &DatabaseConnection, caller: &Caller, sealer: Sealer<'_>, input: UpdateCluster) -> Result<cluster::Model> {
    caller.require_admin()?;
    let existing = cluster::Entity::find_by_id(input.id).one(db).await?.ok_or(Error::NotFound("cluster"))?;
    let sealed = match &input.kubeconfig {
        Some(_) if existing.provider != ClusterProvider::Kubernetes => {
            return Err(Error::User(vec![UserError::invalid("kubeconfig", "a simulated cluster takes no credentials")]));
        }
        Some(yaml) => Some(seal_kubeconfig("kubeconfig", yaml, sealer).await?),
        None => None,
    };
    check_cluster_fields(input.name.as_deref(), input.cloud.as_ref().and_then(|c| c.as_deref()), input.region.as_ref().and_then(|r| r.as_deref()))?;
    if let Some(name) = &input.name {
        ensure_name_free(db, existing.project_id, name, Some(existing.id)).await?;
    }
    let mut model: cluster::ActiveModel = existing.into();
    if let Some(name) = input.name {
        model.name = Set(name);
    }
    if let Some(cloud) = input.cloud {
        model.cloud = Set(cloud);
    }
    if let Some(region) = input.region {
        model.region = Set(region);
    }
    if let Some(sealed) = sealed {
        model.credentials = Set(Some(sealed));
        model.registration_status = Set(RegistrationStatus::Pending);
    }
    if let Some(placement) = input.pod_placement {
        model.pod_placement = Set(placement);
    }
    if let Some(horizon) = input.firm_horizon {
        if horizon.is_some_and(|h| !(0..=MAX_FIRM_HORIZON_SECS).contains(&h)) {
            return Err(Error::invalid("firmHorizon", "from 0 to 7 days (null: no firm promises)"));
        }
        model.firm_horizon_secs = Set(horizon.filter(|h| *h > 0));
    }
    model.updated_at = Set(Utc::now());
    Ok(model.update(db).await?)
}

/// Removes a cluster with its nodes, GPUs and slice namespaces. Refused while any GPR holds
/// or is taking nodes there, so no running reservation loses its nodes.
pub async fn remove_cluster(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<cluster::Model> {
    caller.require_admin()?;
    let existing = cluster::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("cluster"))?;
    let active = gpr::Entity::find()
        .filter(gpr::Column::AssignedClusterId.eq(id))
        .filter(gpr::Column::Phase.is_in([GprPhase::Provisioning, GprPhase::Provisioned, GprPhase::Releasing]))
        .count(db)
        .await?;
    if active > 0 {
        return Err(Error::conflict("id", format!("cluster `{}` has {active} GPR(s) holding nodes; release them first", existing.name)));
    }
    cluster::Entity::delete_by_id(id).exec(db).await?;
    Ok(existing)
}
