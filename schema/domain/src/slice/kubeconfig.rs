//! Slice kubeconfigs: a kubeconfig that acts in a slice's namespaces on one cluster. Here are
//! the rules (who may ask, for how long, on which cluster; what is revoked when access goes);
//! the Kubernetes work (ServiceAccount, Roles, TokenRequest) is the [`KubeAccess`] adapter's.

use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::ports::{IssuedKubeconfig, KubeAccess};
use chrono::Utc;
use egs_entities::{ClusterProvider, SliceRole, cluster, slice, slice_kubeconfig, slice_member, slice_namespace};
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, Set};

/// Lifetime of a kubeconfig when none is asked for.
pub const DEFAULT_EXPIRY_SECS: i64 = 30 * 24 * 3600;
/// Longest lifetime a kubeconfig may have.
pub const MAX_EXPIRY_SECS: i64 = 365 * 24 * 3600;
/// Shortest: the API server refuses TokenRequests for less than ten minutes.
pub const MIN_EXPIRY_SECS: i64 = 600;

/// Issues a kubeconfig for slice `slice_id` on cluster `cluster_id` (admins and the slice's
/// owners), revoking the one issued before.
pub async fn issue(
    db: &DatabaseConnection,
    kube: &dyn KubeAccess,
    caller: &Caller,
    slice_id: i64,
    cluster_id: i64,
    expires_in_secs: Option<i64>,
) -> Result<IssuedKubeconfig> {
    caller.require_person()?;
    caller.require_slice_role(db, slice_id, SliceRole::Owner, "slice").await?;
    let owner = slice::Entity::find_by_id(slice_id).one(db).await?.ok_or(Error::NotFound("slice"))?;
    let asked = expires_in_secs.unwrap_or(DEFAULT_EXPIRY_SECS);
    if !(MIN_EXPIRY_SECS..=MAX_EXPIRY_SECS).contains(&asked) {
        return Err(Error::invalid("expiresIn", "must be between 10 minutes and 1 year"));
    }
    // No longer than the token asking: a kubeconfig must not outlive the access it came from.
    let caller_left = (caller.record.expires_at - Utc::now()).num_seconds();
    let expires = asked.min(caller_left);
    if expires < MIN_EXPIRY_SECS {
        return Err(Error::invalid("expiresIn", "your token expires in less than 10 minutes; sign in again first"));
    }
    let target = cluster::Entity::find_by_id(cluster_id).one(db).await?.ok_or_else(|| Error::invalid("clusterId", "no such cluster"))?;
    if target.provider != ClusterProvider::Kubernetes {
        return Err(Error::invalid("clusterId", format!("cluster `{}` is simulated; kubeconfigs are for Kubernetes clusters", target.name)));
    }
    let namespaces: Vec<String> = slice_namespace::Entity::find()
        .filter(slice_namespace::Column::SliceId.eq(slice_id))
        .filter(slice_namespace::Column::ClusterId.eq(cluster_id))
        .order_by_asc(slice_namespace::Column::Name)
        .all(db)
        .await?
        .into_iter()
        .map(|ns| ns.name)
        .collect();
    if namespaces.is_empty() {
        return Err(Error::invalid(
            "clusterId",
            format!("slice `{}` has no namespace on cluster `{}`; ask an admin to add one", owner.name, target.name),
        ));
    }
    let issued = kube
        .grant_slice_access(&target, &owner.name, &namespaces, owner.policy.kubeconfig_secrets_and_exec, expires)
        .await
        .map_err(|e| Error::invalid("clusterId", format!("cluster `{}`: {e}", target.name)))?;
    tracing::info!(slice = %owner.name, cluster = %target.name, service_account = %issued.service_account, actor = caller.actor(), "slice kubeconfig issued");
    // The one issued before was revoked with this one: one row per slice and cluster, naming
    // who asked (an admin's goes when they stop being one, see [`issued_without_ownership`]).
    forget_issued(db, slice_id, cluster_id).await?;
    slice_kubeconfig::ActiveModel {
        slice_id: Set(slice_id),
        cluster_id: Set(cluster_id),
        service_account: Set(issued.service_account.clone()),
        issued_by: Set(caller.record.user_id),
        issued_at: Set(Utc::now()),
        expires_at: Set(issued.expires_at),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(issued)
}

/// Drops the record of slice `slice_id`'s kubeconfig on cluster `cluster_id` (revoked, or
/// about to be replaced).
async fn forget_issued(db: &DatabaseConnection, slice_id: i64, cluster_id: i64) -> std::result::Result<(), sea_orm::DbErr> {
    slice_kubeconfig::Entity::delete_many()
        .filter(slice_kubeconfig::Column::SliceId.eq(slice_id))
        .filter(slice_kubeconfig::Column::ClusterId.eq(cluster_id))
        .exec(db)
        .await?;
    Ok(())
}

/// Where user `user_id` issued a slice's kubeconfig without owning the slice now (as an admin,
/// or as an owner since removed): each slice with its namespaces on that cluster, for
/// [`revoke_all`] when the user's access shrinks.
pub async fn issued_without_ownership(db: &DatabaseConnection, user_id: i64) -> Result<Vec<(slice::Model, (cluster::Model, Vec<String>))>> {
    let issued = slice_kubeconfig::Entity::find().filter(slice_kubeconfig::Column::IssuedBy.eq(user_id)).all(db).await?;
    let mut places = Vec::new();
    for row in issued {
        let owns = slice_member::Entity::find_by_id((row.slice_id, user_id)).one(db).await?.is_some_and(|m| m.role == SliceRole::Owner);
        if owns {
            continue;
        }
        let Some(owner) = slice::Entity::find_by_id(row.slice_id).one(db).await? else { continue };
        let place = kube_namespaces(db, row.slice_id).await?.into_iter().find(|(c, _)| c.id == row.cluster_id);
        if let Some(place) = place {
            places.push((owner, place));
        }
    }
    Ok(places)
}

/// The slice's namespaces on each Kubernetes cluster, for [`revoke_all`]: read before a
/// slice is deleted (its namespaces go with it).
pub async fn kube_namespaces(db: &DatabaseConnection, slice_id: i64) -> Result<Vec<(cluster::Model, Vec<String>)>> {
    let mut by_cluster: std::collections::BTreeMap<i64, Vec<String>> = std::collections::BTreeMap::new();
    for ns in slice_namespace::Entity::find().filter(slice_namespace::Column::SliceId.eq(slice_id)).all(db).await? {
        by_cluster.entry(ns.cluster_id).or_default().push(ns.name);
    }
    let clusters = cluster::Entity::find()
        .filter(cluster::Column::Id.is_in(by_cluster.keys().copied()))
        .filter(cluster::Column::Provider.eq(ClusterProvider::Kubernetes))
        .all(db)
        .await?;
    Ok(clusters.into_iter().filter_map(|c| by_cluster.remove(&c.id).map(|names| (c, names))).collect())
}

/// Revokes the slice's kubeconfigs on every cluster in `places`, in the background: whoever
/// asked for one may have lost the right to it (an owner removed or demoted, an admin demoted,
/// the slice deleted). Failures are logged and the record kept; the next kubeconfig issued
/// revokes the old ones too.
pub fn revoke_all(db: DatabaseConnection, kube: std::sync::Arc<dyn KubeAccess>, slice: slice::Model, places: Vec<(cluster::Model, Vec<String>)>) {
    if places.is_empty() {
        return;
    }
    tokio::spawn(async move {
        for (target, namespaces) in places {
            match kube.revoke_slice_access(&target, &slice.name, &namespaces).await {
                Ok(()) => {
                    tracing::info!(slice = %slice.name, cluster = %target.name, "slice kubeconfigs revoked: someone who could issue them lost access");
                    if let Err(error) = forget_issued(&db, slice.id, target.id).await {
                        tracing::warn!(slice = %slice.name, cluster = %target.name, %error, "the revoked kubeconfig's record stays");
                    }
                }
                Err(error) => tracing::warn!(slice = %slice.name, cluster = %target.name, %error, "could not revoke the slice's kubeconfigs"),
            }
        }
    });
}

/// Revokes what a user's shrunken access no longer covers: every kubeconfig of the slices in
/// `owned_before` (they were an owner there and are not now), and each they issued elsewhere
/// without owning that slice (as an admin, when they are one no more).
pub async fn revoke_for_user(
    db: &DatabaseConnection,
    kube: std::sync::Arc<dyn KubeAccess>,
    user_id: i64,
    is_admin: bool,
    owned_before: &[i64],
) -> Result<()> {
    for &slice_id in owned_before {
        let Some(owner) = slice::Entity::find_by_id(slice_id).one(db).await? else { continue };
        let places = kube_namespaces(db, slice_id).await?;
        revoke_all(db.clone(), kube.clone(), owner, places);
    }
    if !is_admin {
        for (owner, place) in issued_without_ownership(db, user_id).await? {
            if !owned_before.contains(&owner.id) {
                revoke_all(db.clone(), kube.clone(), owner, vec![place]);
            }
        }
    }
    Ok(())
}
