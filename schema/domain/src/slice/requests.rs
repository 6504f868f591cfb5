//! Workspace requests: a user asks for a slice; an admin approves it (with edits), which creates
//! the slice with the requester as its owner, or rejects it with a reason the requester reads.

use super::service::{self, CreateSlice, MemberSpec, NamespaceSpec};
use crate::auth::Caller;
use crate::error::{Error, ErrorCode, Result, UserError};
use crate::validate;
use chrono::Utc;
use egs_entities::{
    RequestedNamespace, RequestedNamespaces, Role, SlicePolicy, SliceRole, WorkspaceRequestState as State, cluster, slice, user,
    workspace_request as request,
};
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, Set};
use std::collections::BTreeSet;

/// Requests one user may have waiting at once.
pub const MAX_PENDING: u64 = 3;

/// What a request asks for (and an approval may change).
pub struct Ask {
    pub name: String,
    pub purpose: String,
    pub namespaces: Vec<RequestedNamespace>,
    pub max_nodes_per_gpr: Option<i32>,
    pub gpu_hour_quota: Option<i64>,
}

async fn check_ask(db: &DatabaseConnection, ask: &Ask) -> Result<()> {
    let mut errors = Vec::new();
    validate::dns_label("name", &ask.name, 63, &mut errors);
    validate::text("purpose", &ask.purpose, 2000, &mut errors);
    if ask.namespaces.is_empty() || ask.namespaces.len() > MAX_NAMESPACES {
        errors.push(UserError::invalid("namespaces", format!("ask for 1 to {MAX_NAMESPACES} namespaces")));
    }
    for (i, ns) in ask.namespaces.iter().enumerate() {
        validate::dns_label(&format!("namespaces.{i}.name"), &ns.name, 63, &mut errors);
        service::refuse_reserved(&format!("namespaces.{i}.name"), &ns.name, &mut errors);
    }
    if let Some(nodes) = ask.max_nodes_per_gpr {
        validate::range("maxNodesPerGpr", nodes.into(), 1, 100_000, &mut errors);
    }
    if ask.gpu_hour_quota.is_some_and(|q| q < 0) {
        errors.push(UserError::invalid("gpuHourQuota", "must not be negative"));
    }
    validate::finish(errors)?;
    let clusters: BTreeSet<i64> = ask.namespaces.iter().map(|ns| ns.cluster_id).collect();
    service::ensure_clusters_exist(db, "namespaces", &clusters).await?;
    let project = crate::cluster::service::default_project_id(db).await?;
    service::ensure_slice_name_free(db, project, &ask.name, None).await
}

/// A user asks for a workspace.
pub async fn request_workspace(db: &DatabaseConnection, caller: &Caller, ask: Ask) -> Result<request::Model> {
    caller.require_person()?;
    let requester = caller.record.user_id.ok_or_else(|| Error::Forbidden("only a user's token asks for a workspace".into()))?;
    check_ask(db, &ask).await?;
    let waiting = request::Entity::find()
        .filter(request::Column::RequesterId.eq(requester))
        .filter(request::Column::State.eq(State::Pending))
        .count(db)
        .await?;
    if waiting >= MAX_PENDING {
        return Err(Error::User(vec![UserError {
            field: Vec::new(),
            message: format!("you have {MAX_PENDING} workspace requests waiting already; withdraw one or wait for an admin"),
            code: ErrorCode::LimitExceeded,
        }]));
    }
    let row = request::ActiveModel {
        requester_id: Set(requester),
        name: Set(ask.name),
        purpose: Set(ask.purpose.trim().to_owned()),
        namespaces: Set(RequestedNamespaces(ask.namespaces)),
        max_nodes_per_gpr: Set(ask.max_nodes_per_gpr),
        gpu_hour_quota: Set(ask.gpu_hour_quota),
        state: Set(State::Pending),
        decided_by: Set(None),
        decision_reason: Set(None),
        slice_id: Set(None),
        created_at: Set(Utc::now()),
        decided_at: Set(None),
        ..Default::default()
    };
    Ok(row.insert(db).await?)
}

/// Admins see every request, others their own; newest first.
pub async fn list_requests(db: &DatabaseConnection, caller: &Caller, state: Option<State>) -> Result<Vec<request::Model>> {
    caller.require_person()?;
    let mut query = request::Entity::find().order_by_desc(request::Column::Id);
    if !caller.is_admin() {
        query = query.filter(request::Column::RequesterId.eq(caller.record.user_id.unwrap_or_default()));
    }
    if let Some(state) = state {
        query = query.filter(request::Column::State.eq(state));
    }
    Ok(query.all(db).await?)
}

/// A request the caller may see (`NOT_FOUND` otherwise).
async fn find_request(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<request::Model> {
    caller.require_person()?;
    let found = request::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("workspace request"))?;
    if caller.is_admin() || caller.record.user_id == Some(found.requester_id) { Ok(found) } else { Err(Error::NotFound("workspace request")) }
}

fn still_pending(found: &request::Model) -> Result<()> {
    if found.state == State::Pending {
        return Ok(());
    }
    Err(Error::conflict("id", format!("the request is {} already", found.state.as_str().to_lowercase())))
}

/// Records a decision, unless someone decided first.
async fn decide(
    db: &DatabaseConnection,
    found: &request::Model,
    state: State,
    by: &str,
    reason: Option<String>,
    slice_id: Option<i64>,
) -> Result<request::Model> {
    let row = request::ActiveModel {
        state: Set(state),
        decided_by: Set(Some(by.to_owned())),
        decision_reason: Set(reason),
        slice_id: Set(slice_id),
        decided_at: Set(Some(Utc::now())),
        ..Default::default()
    };
    let updated = request::Entity::update_many()
        .set(row)
        .filter(request::Column::Id.eq(found.id))
        .filter(request::Column::State.eq(State::Pending))
        .exec_with_returning(db)
        .await?;
    updated.into_iter().next().ok_or_else(|| Error::conflict("id", "someone decided on the request meanwhile"))
}

/// An admin approves a request, with `edits` where given: the slice is created with the
/// requester as its owner.
pub async fn approve_request(db: &DatabaseConnection, caller: &Caller, id: i64, edits: Edits, reason: Option<String>) -> Result<request::Model> {
    caller.require_admin()?;
    let found = find_request(db, caller, id).await?;
    still_pending(&found)?;
    let ask = Ask {
        name: edits.name.unwrap_or_else(|| found.name.clone()),
        purpose: found.purpose.clone(),
        namespaces: edits.namespaces.unwrap_or_else(|| found.namespaces.0.clone()),
        max_nodes_per_gpr: edits.max_nodes_per_gpr.unwrap_or(found.max_nodes_per_gpr),
        gpu_hour_quota: edits.gpu_hour_quota.unwrap_or(found.gpu_hour_quota),
    };
    check_ask(db, &ask).await?;
    let exists = user::Entity::find_by_id(found.requester_id).one(db).await?.is_some_and(|u| u.role != Role::Agent);
    if !exists {
        return Err(Error::conflict("id", "the requester is gone"));
    }
    let policy = SlicePolicy { max_nodes_per_gpr: ask.max_nodes_per_gpr, gpu_hour_quota: ask.gpu_hour_quota, ..SlicePolicy::default() };
    let spec = CreateSlice {
        name: ask.name,
        description: Some(ask.purpose),
        cluster_ids: Vec::new(),
        namespaces: ask.namespaces.into_iter().map(|ns| NamespaceSpec { cluster_id: ns.cluster_id, name: ns.name }).collect(),
        members: vec![MemberSpec { user_id: found.requester_id, role: SliceRole::Owner }],
        policy,
    };
    let created = service::create_slice(db, caller, spec).await?;
    decide(db, &found, State::Approved, caller.actor(), reason, Some(created.id)).await
}

/// An admin refuses a request, saying why.
pub async fn reject_request(db: &DatabaseConnection, caller: &Caller, id: i64, reason: &str) -> Result<request::Model> {
    caller.require_admin()?;
    let reason = validate::reason("reason", reason, "the requester")?;
    let found = find_request(db, caller, id).await?;
    still_pending(&found)?;
    decide(db, &found, State::Rejected, caller.actor(), Some(reason), None).await
}

/// The requester takes a waiting request back.
pub async fn withdraw_request(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<request::Model> {
    let found = find_request(db, caller, id).await?;
    if caller.record.user_id != Some(found.requester_id) {
        return Err(Error::Forbidden("only the requester withdraws a request".into()));
    }
    still_pending(&found)?;
    decide(db, &found, State::Withdrawn, caller.actor(), None, None).await
}

/// What an approval changes; `None` keeps what was asked.
#[derive(Default)]
pub struct Edits {
    pub name: Option<String>,
    pub namespaces: Option<Vec<RequestedNamespace>>,
    pub max_nodes_per_gpr: Option<Option<i32>>,
    pub gpu_hour_quota: Option<Option<i64>>,
}

/// Each namespace a request asks for, with its cluster's name (`None`: the cluster is gone).
pub async fn namespaces_named(db: &DatabaseConnection, found: &request::Model) -> Result<Vec<(RequestedNamespace, Option<String>)>> {
    let ids: BTreeSet<i64> = found.namespaces.0.iter().map(|ns| ns.cluster_id).collect();
    let clusters = cluster::Entity::find().filter(cluster::Column::Id.is_in(ids)).all(db).await?;
    Ok(found.namespaces.0.iter().map(|ns| (ns.clone(), clusters.iter().find(|c| c.id == ns.cluster_id).map(|c| c.name.clone()))).collect())
}

/// The name of the user who asked.
pub async fn requester_name(db: &DatabaseConnection, found: &request::Model) -> Result<Option<String>> {
    Ok(user::Entity::find_by_id(found.requester_id).one(db).await?.map(|u| u.name))
}

/// The slice the approval created, when `caller` may see it.
pub async fn created_slice(db: &DatabaseConnection, caller: &Caller, found: &request::Model) -> Result<Option<slice::Model>> {
    let Some(id) = found.slice_id else { return Ok(None) };
    if !caller.can_see_slice(db, id).await? {
        return Ok(None);
    }
    Ok(slice::Entity::find_by_id(id).one(db).await?)
}

/// The clusters a workspace may be asked on, by name (people only: ids and names, so a user who
/// belongs to no slice yet learns nothing else of them).
pub async fn cluster_choices(db: &DatabaseConnection, caller: &Caller) -> Result<Vec<cluster::Model>> {
    caller.require_person()?;
    Ok(cluster::Entity::find().order_by_asc(cluster::Column::Name).all(db).await?)
}

/// Most namespaces one request may ask for.
pub const MAX_NAMESPACES: usize = 8;
