//! Private workspaces by policy: when the admins turn it on, every new user (made by an admin or
//! by a first single sign-on) gets a small slice of their own — `<name>-private`, with a
//! namespace of that name on the policy's cluster, the user as its owner, and the policy's size.

use super::service::{self, CreateSlice, MemberSpec, NamespaceSpec};
use crate::auth::Caller;
use crate::error::{Error, ErrorCode, Result, UserError};
use crate::validate;
use chrono::Utc;
use egs_entities::{SlicePolicy, SliceRole, cluster, personal_workspace_policy as policy, slice, user};
use sea_orm::sea_query::OnConflict;
use sea_orm::{DatabaseConnection, EntityTrait, Set};

const ROW: i64 = 1;
/// Names tried for one user's workspace before giving up (`name-private`, `-2`, …).
const NAME_TRIES: usize = 20;

pub async fn current(db: &DatabaseConnection) -> Result<Option<policy::Model>> {
    Ok(policy::Entity::find_by_id(ROW).one(db).await?)
}

/// What an admin sets.
pub struct NewPolicy {
    pub enabled: bool,
    pub cluster_id: i64,
    pub max_nodes_per_gpr: Option<i32>,
    pub gpu_hour_quota: Option<i64>,
}

pub async fn set_policy(db: &DatabaseConnection, caller: &Caller, new: NewPolicy) -> Result<policy::Model> {
    caller.require_admin()?;
    let mut errors = Vec::new();
    if let Some(nodes) = new.max_nodes_per_gpr {
        validate::range("maxNodesPerGpr", nodes.into(), 1, 100_000, &mut errors);
    }
    if new.gpu_hour_quota.is_some_and(|q| q < 0) {
        errors.push(UserError::invalid("gpuHourQuota", "must not be negative"));
    }
    validate::finish(errors)?;
    if cluster::Entity::find_by_id(new.cluster_id).one(db).await?.is_none() {
        return Err(Error::invalid("clusterId", "no such cluster"));
    }
    let row = policy::ActiveModel {
        id: Set(ROW),
        enabled: Set(new.enabled),
        cluster_id: Set(new.cluster_id),
        max_nodes_per_gpr: Set(new.max_nodes_per_gpr),
        gpu_hour_quota: Set(new.gpu_hour_quota),
        updated_at: Set(Utc::now()),
    };
    let upsert = OnConflict::column(policy::Column::Id)
        .update_columns([
            policy::Column::Enabled,
            policy::Column::ClusterId,
            policy::Column::MaxNodesPerGpr,
            policy::Column::GpuHourQuota,
            policy::Column::UpdatedAt,
        ])
        .to_owned();
    policy::Entity::insert(row).on_conflict(upsert).exec_without_returning(db).await?;
    current(db).await?.ok_or_else(|| Error::Internal(anyhow::anyhow!("the policy row is gone")))
}

/// A DNS label from a user name: lowercase letters, digits and `-`, at most 50 long.
fn label_of(name: &str) -> String {
    let cleaned: String = name.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).take(50).collect();
    let trimmed = cleaned.trim_matches('-');
    if trimmed.is_empty() { "user".into() } else { trimmed.into() }
}

/// Gives a person just made (by an admin, or by a first single sign-on) their private
/// workspace where the policy says so. The user stands either way: a workspace that cannot be
/// made is logged, not the user's creation undone.
pub async fn welcome(db: &DatabaseConnection, made: &user::Model) {
    if made.role != egs_entities::Role::User {
        return;
    }
    if let Err(error) = give_private_workspace(db, made).await {
        tracing::warn!(user = %made.name, error = %error.public_message(), "could not make the new user's private workspace");
    }
}

/// Gives `new_user` a private workspace when the policy is on; `None` when it is off. A taken
/// name (or namespace) gets a suffix.
pub async fn give_private_workspace(db: &DatabaseConnection, new_user: &user::Model) -> Result<Option<slice::Model>> {
    let Some(rule) = current(db).await?.filter(|p| p.enabled) else { return Ok(None) };
    let base = format!("{}-private", label_of(&new_user.name));
    for n in 1..=NAME_TRIES {
        let name = if n == 1 { base.clone() } else { format!("{base}-{n}") };
        let spec = CreateSlice {
            name: name.clone(),
            description: Some(format!("{}'s private workspace", new_user.name)),
            cluster_ids: Vec::new(),
            namespaces: vec![NamespaceSpec { cluster_id: rule.cluster_id, name }],
            members: vec![MemberSpec { user_id: new_user.id, role: SliceRole::Owner }],
            policy: SlicePolicy { max_nodes_per_gpr: rule.max_nodes_per_gpr, gpu_hour_quota: rule.gpu_hour_quota, ..SlicePolicy::default() },
        };
        match service::create_slice(db, &Caller::system(), spec).await {
            Ok(made) => return Ok(Some(made)),
            Err(Error::User(errors)) if errors.iter().all(|e| e.code == ErrorCode::Conflict) => continue,
            Err(other) => return Err(other),
        }
    }
    Err(Error::conflict("name", format!("no free name for {}'s private workspace", new_user.name)))
}

/// The policy as admins read it (`None` until set), with its cluster's name.
pub async fn read_policy(db: &DatabaseConnection, caller: &Caller) -> Result<Option<(policy::Model, Option<String>)>> {
    caller.require_admin()?;
    match current(db).await? {
        Some(p) => Ok(Some(named(db, p).await?)),
        None => Ok(None),
    }
}

/// A policy with its cluster's name (`None`: the cluster is gone).
pub async fn named(db: &DatabaseConnection, p: policy::Model) -> Result<(policy::Model, Option<String>)> {
    let cluster_name = cluster::Entity::find_by_id(p.cluster_id).one(db).await?.map(|c| c.name);
    Ok((p, cluster_name))
}
