//! Workspace requests: a user asks for a slice; an admin approves it (with edits), which creates
//! the slice with the requester as its owner, or rejects it with a reason the requester reads.

use super::Slice;
use super::service::{self, CreateSlice, MemberSpec, NamespaceSpec};
use crate::auth::Caller;
use crate::error::{Error, ErrorCode, Result, UserError};
use crate::ids::{self, Kind};
use crate::validate;
use crate::{payload, session};
use async_graphql::{Context, ID, InputObject, Object, SimpleObject};
use chrono::{DateTime, Utc};
use egs_entities::{
    RequestedNamespace, RequestedNamespaces, Role, SlicePolicy, SliceRole, WorkspaceRequestState as State, cluster, slice, user,
    workspace_request as request,
};
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, Set};
use std::collections::BTreeSet;

/// Requests one user may have waiting at once.
pub const MAX_PENDING: u64 = 3;
const MAX_NAMESPACES: usize = 8;

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

/// A user's request for a workspace.
pub struct WorkspaceRequest(pub request::Model);

/// A namespace a request asks for.
#[derive(SimpleObject)]
pub struct RequestedNamespaceView {
    pub cluster_id: ID,
    pub cluster_name: Option<String>,
    pub name: String,
}

#[Object]
impl WorkspaceRequest {
    async fn id(&self) -> ID {
        ids::encode(Kind::WorkspaceRequest, self.0.id)
    }
    /// The slice name asked for.
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn purpose(&self) -> &str {
        &self.0.purpose
    }
    async fn namespaces(&self, ctx: &Context<'_>) -> Result<Vec<RequestedNamespaceView>> {
        let (_, db) = session(ctx)?;
        let ids: BTreeSet<i64> = self.0.namespaces.0.iter().map(|ns| ns.cluster_id).collect();
        let clusters = cluster::Entity::find().filter(cluster::Column::Id.is_in(ids)).all(db).await?;
        Ok(self
            .0
            .namespaces
            .0
            .iter()
            .map(|ns| RequestedNamespaceView {
                cluster_id: ids::encode(Kind::Cluster, ns.cluster_id),
                cluster_name: clusters.iter().find(|c| c.id == ns.cluster_id).map(|c| c.name.clone()),
                name: ns.name.clone(),
            })
            .collect())
    }
    async fn max_nodes_per_gpr(&self) -> Option<i32> {
        self.0.max_nodes_per_gpr
    }
    async fn gpu_hour_quota(&self) -> Option<i64> {
        self.0.gpu_hour_quota
    }
    async fn state(&self) -> State {
        self.0.state
    }
    /// Who asked.
    async fn requester(&self, ctx: &Context<'_>) -> Result<Option<String>> {
        let (_, db) = session(ctx)?;
        Ok(user::Entity::find_by_id(self.0.requester_id).one(db).await?.map(|u| u.name))
    }
    async fn decided_by(&self) -> Option<&str> {
        self.0.decided_by.as_deref()
    }
    /// Why it was rejected (or what the approval said).
    async fn decision_reason(&self) -> Option<&str> {
        self.0.decision_reason.as_deref()
    }
    /// The slice the approval created, when the caller may see it.
    async fn slice(&self, ctx: &Context<'_>) -> Result<Option<Slice>> {
        let Some(id) = self.0.slice_id else { return Ok(None) };
        let (caller, db) = session(ctx)?;
        if !caller.can_see_slice(db, id).await? {
            return Ok(None);
        }
        Ok(slice::Entity::find_by_id(id).one(db).await?.map(Slice))
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    async fn decided_at(&self) -> Option<DateTime<Utc>> {
        self.0.decided_at
    }
}

#[derive(Default)]
pub struct WorkspaceRequestQuery;

#[Object]
impl WorkspaceRequestQuery {
    /// Workspace requests, newest first: every one for admins, your own for others.
    async fn workspace_requests(&self, ctx: &Context<'_>, state: Option<State>) -> Result<Vec<WorkspaceRequest>> {
        let (caller, db) = session(ctx)?;
        Ok(list_requests(db, caller, state).await?.into_iter().map(WorkspaceRequest).collect())
    }

    /// The clusters a workspace may be asked on (ids and names only: a user who belongs to no
    /// slice yet sees no cluster elsewhere).
    async fn workspace_clusters(&self, ctx: &Context<'_>) -> Result<Vec<ClusterChoice>> {
        let (caller, db) = session(ctx)?;
        caller.require_person()?;
        let clusters = cluster::Entity::find().order_by_asc(cluster::Column::Name).all(db).await?;
        Ok(clusters.into_iter().map(|c| ClusterChoice { id: ids::encode(Kind::Cluster, c.id), name: c.name }).collect())
    }
}

/// A cluster to ask for namespaces on.
#[derive(SimpleObject)]
pub struct ClusterChoice {
    pub id: ID,
    pub name: String,
}

#[derive(InputObject)]
pub struct RequestedNamespaceInput {
    pub cluster_id: ID,
    pub name: String,
}

fn decode_namespaces(field: &str, given: Vec<RequestedNamespaceInput>) -> Result<Vec<RequestedNamespace>> {
    given
        .into_iter()
        .take(MAX_NAMESPACES + 1)
        .enumerate()
        .map(|(i, ns)| {
            Ok(RequestedNamespace { cluster_id: ids::decode(&format!("{field}.{i}.clusterId"), &ns.cluster_id, Kind::Cluster)?, name: ns.name })
        })
        .collect()
}

#[derive(InputObject)]
pub struct RequestWorkspaceInput {
    /// The slice name (a DNS label, unique).
    pub name: String,
    /// What it is for (1–2,000 characters).
    pub purpose: String,
    /// 1–8 namespaces, on the clusters where the work runs.
    pub namespaces: Vec<RequestedNamespaceInput>,
    /// The size: most nodes one GPR may take.
    pub max_nodes_per_gpr: Option<i32>,
    /// The size: GPU-hours per quota period.
    pub gpu_hour_quota: Option<i64>,
}

/// An approval; fields given replace what was asked.
#[derive(InputObject)]
pub struct ApproveWorkspaceRequestInput {
    pub id: ID,
    pub name: Option<String>,
    pub namespaces: Option<Vec<RequestedNamespaceInput>>,
    pub max_nodes_per_gpr: Option<i32>,
    pub gpu_hour_quota: Option<i64>,
    /// A note to the requester.
    pub reason: Option<String>,
}

#[derive(InputObject)]
pub struct RejectWorkspaceRequestInput {
    pub id: ID,
    /// Why (1–500 characters): the requester reads it.
    pub reason: String,
}

#[derive(InputObject)]
pub struct WorkspaceRequestRef {
    pub id: ID,
}

payload!(WorkspaceRequestPayload, request: WorkspaceRequest);

#[derive(Default)]
pub struct WorkspaceRequestMutation;

#[Object]
impl WorkspaceRequestMutation {
    /// Asks the admins for a workspace (at most 3 waiting per user).
    async fn request_workspace(&self, ctx: &Context<'_>, input: RequestWorkspaceInput) -> async_graphql::Result<WorkspaceRequestPayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let ask = Ask {
                name: input.name,
                purpose: input.purpose,
                namespaces: decode_namespaces("namespaces", input.namespaces)?,
                max_nodes_per_gpr: input.max_nodes_per_gpr,
                gpu_hour_quota: input.gpu_hour_quota,
            };
            request_workspace(db, caller, ask).await.map(WorkspaceRequest)
        };
        WorkspaceRequestPayload::from_result(result.await)
    }

    /// Approves a request (admins), with edits where given: creates the slice with the requester
    /// as its owner.
    async fn approve_workspace_request(
        &self,
        ctx: &Context<'_>,
        input: ApproveWorkspaceRequestInput,
    ) -> async_graphql::Result<WorkspaceRequestPayload> {
        let (caller, db) = session(ctx)?;
        let result = async {
            let id = ids::decode("id", &input.id, Kind::WorkspaceRequest)?;
            let edits = Edits {
                name: input.name,
                namespaces: input.namespaces.map(|n| decode_namespaces("namespaces", n)).transpose()?,
                max_nodes_per_gpr: input.max_nodes_per_gpr.map(Some),
                gpu_hour_quota: input.gpu_hour_quota.map(Some),
            };
            approve_request(db, caller, id, edits, input.reason).await.map(WorkspaceRequest)
        };
        WorkspaceRequestPayload::after_change(ctx, result).await
    }

    /// Refuses a request (admins), saying why.
    async fn reject_workspace_request(
        &self,
        ctx: &Context<'_>,
        input: RejectWorkspaceRequestInput,
    ) -> async_graphql::Result<WorkspaceRequestPayload> {
        let (caller, db) = session(ctx)?;
        let result =
            async { reject_request(db, caller, ids::decode("id", &input.id, Kind::WorkspaceRequest)?, &input.reason).await.map(WorkspaceRequest) };
        WorkspaceRequestPayload::from_result(result.await)
    }

    /// Takes back a waiting request (its requester).
    async fn withdraw_workspace_request(&self, ctx: &Context<'_>, input: WorkspaceRequestRef) -> async_graphql::Result<WorkspaceRequestPayload> {
        let (caller, db) = session(ctx)?;
        let result = async { withdraw_request(db, caller, ids::decode("id", &input.id, Kind::WorkspaceRequest)?).await.map(WorkspaceRequest) };
        WorkspaceRequestPayload::from_result(result.await)
    }
}
