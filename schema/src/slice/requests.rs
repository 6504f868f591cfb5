//! Workspace requests as the API shows them: `workspaceRequests`, `workspaceClusters`,
//! `requestWorkspace`, `approveWorkspaceRequest`, `rejectWorkspaceRequest`,
//! `withdrawWorkspaceRequest`. The rules are `egs_domain::slice::requests`.

use super::Slice;
use crate::ids::{self, Kind};
use crate::{payload, session};
use async_graphql::{Context, ID, InputObject, Object, SimpleObject};
use chrono::{DateTime, Utc};
use egs_domain::error::Result;
use egs_domain::slice::requests::{
    self, Ask, Edits, MAX_NAMESPACES, approve_request, list_requests, reject_request, request_workspace, withdraw_request,
};
use egs_entities::{RequestedNamespace, WorkspaceRequestState as State, workspace_request as request};

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
        Ok(requests::namespaces_named(db, &self.0)
            .await?
            .into_iter()
            .map(|(ns, cluster_name)| RequestedNamespaceView { cluster_id: ids::encode(Kind::Cluster, ns.cluster_id), cluster_name, name: ns.name })
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
        requests::requester_name(db, &self.0).await
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
        let (caller, db) = session(ctx)?;
        Ok(requests::created_slice(db, caller, &self.0).await?.map(Slice))
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
        let clusters = requests::cluster_choices(db, caller).await?;
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
