//! Access tokens: create (the secret is shown once), list, revoke.

use egs_domain::token::{agent, service};

use crate::cluster::Cluster;
use crate::ids::{self, Kind};
use crate::pagination::{Order, Page, PageRequest, keyset_page};
use crate::scalars::Duration;
use crate::slice::Slice;
use crate::user::User;
use crate::{app, loaded, loaders, payload, session};
use async_graphql::{Context, ID, InputObject, Object, SimpleObject};
use chrono::{DateTime, Utc};
use egs_domain::error::{Error, Result, UserError};
use egs_entities::{Role, SliceRole, SliceScope, access_token};

/// An issued token, by id. Its secret text is shown only by `createToken`.
pub struct AccessToken(pub access_token::Model);

#[Object]
impl AccessToken {
    pub async fn id(&self) -> ID {
        ids::encode(Kind::AccessToken, self.0.id)
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn role(&self) -> Role {
        self.0.role
    }
    async fn user(&self, ctx: &Context<'_>) -> Result<Option<User>> {
        let Some(id) = self.0.user_id else { return Ok(None) };
        Ok(loaded(loaders(ctx)?.user().load_one(id).await)?.map(User))
    }
    /// Agent tokens: the cluster the agent reports for.
    async fn cluster(&self, ctx: &Context<'_>) -> Result<Option<Cluster>> {
        let Some(id) = self.0.cluster_id else { return Ok(None) };
        Ok(loaded(loaders(ctx)?.cluster().load_one(id).await)?.map(Cluster))
    }
    /// Agent tokens: the node the agent reports for; null for a cluster-scoped agent token,
    /// which reports for any node of its cluster.
    async fn node_name(&self) -> Option<&str> {
        self.0.node_name.as_deref()
    }
    /// The slices and roles the token is limited to; `null` when it carries the user's roles.
    async fn slice_scopes(&self) -> Option<Vec<TokenScope>> {
        self.0.slice_scopes.as_ref().map(|s| s.0.iter().map(|s| TokenScope { slice_id: s.slice_id, role: s.role }).collect())
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    async fn expires_at(&self) -> DateTime<Utc> {
        self.0.expires_at
    }
    async fn revoked_at(&self) -> Option<DateTime<Utc>> {
        self.0.revoked_at
    }
}

/// One slice a token may act in, and the most it may do there.
#[derive(SimpleObject)]
#[graphql(complex)]
pub struct TokenScope {
    #[graphql(skip)]
    slice_id: i64,
    role: SliceRole,
}

#[async_graphql::ComplexObject]
impl TokenScope {
    /// `null` when the caller may not see the slice.
    async fn slice(&self, ctx: &Context<'_>) -> Result<Option<Slice>> {
        let (caller, db) = session(ctx)?;
        if !caller.can_see_slice(db, self.slice_id).await? {
            return Ok(None);
        }
        Ok(loaded(loaders(ctx)?.slice().load_one(self.slice_id).await)?.map(Slice))
    }
}

#[derive(Default)]
pub struct TokenQuery;

#[Object]
impl TokenQuery {
    /// Tokens: all for admins, your own for users. Newest first.
    async fn tokens(&self, ctx: &Context<'_>, first: Option<i32>, after: Option<String>) -> Result<Page<AccessToken>> {
        let (caller, db) = session(ctx)?;
        let request = PageRequest::new(first, after)?;
        let select = service::tokens_select(caller)?;
        keyset_page(db, request, select, access_token::Column::Id, Order::NewestFirst, |t| t.id, AccessToken).await
    }
}

#[derive(InputObject)]
pub struct TokenScopeInput {
    pub slice_id: ID,
    pub role: SliceRole,
}

#[derive(InputObject)]
pub struct CreateTokenInput {
    /// What the token is for, e.g. `ci-pipeline`.
    pub name: String,
    pub role: Role,
    /// The user the token speaks for (ADMIN and USER tokens); defaults to the caller.
    pub user_id: Option<ID>,
    /// Limit a USER token to these slices and at most these roles.
    pub slice_scopes: Option<Vec<TokenScopeInput>>,
    /// AGENT tokens: the cluster the agent reports for.
    pub cluster_id: Option<ID>,
    /// AGENT tokens: the one node the agent reports for. Leave it out for a cluster-scoped
    /// token, which may register and report any node of `clusterId` (and nothing else): one
    /// Kubernetes Secret for a whole DaemonSet.
    pub node_name: Option<String>,
    /// Lifetime; 90 days when omitted, at most two years.
    pub ttl: Option<Duration>,
}

#[derive(InputObject)]
pub struct RevokeTokenInput {
    pub id: ID,
}

/// A new token and its secret, which is shown only here.
#[derive(SimpleObject)]
pub struct CreateTokenPayload {
    pub token: Option<AccessToken>,
    /// The bearer token text. Store it now: EGS keeps only its id.
    pub secret: Option<String>,
    /// What will end it sooner than its lifetime says, when something will: the token it was
    /// made with (a single sign-on session above all, which lasts 12 h). An admin's AGENT
    /// tokens are not tied to the token that made them.
    pub notice: Option<String>,
    pub user_errors: Vec<UserError>,
}

payload!(RevokeTokenPayload, token: AccessToken);

#[derive(InputObject)]
pub struct SignInAgentInput {
    /// The Kubernetes cluster the agent's node is in.
    pub cluster_id: ID,
    /// The agent pod's projected ServiceAccount token (audience `egs`), as mounted.
    pub service_account_token: String,
}

/// A token for the node the agent runs on, good for an hour: sign in again before it lapses.
#[derive(SimpleObject)]
pub struct SignInAgentPayload {
    /// The bearer token for `upsertNodes` and the reports of this node only.
    pub token: Option<String>,
    pub expires_at: Option<DateTime<Utc>>,
    /// The node the cluster says the agent's pod runs on.
    pub node_name: Option<String>,
    pub user_errors: Vec<UserError>,
}

/// Unexpired tokens one user may hold (schema data; `None`: no limit).
pub struct TokenLimit(pub Option<u32>);

#[derive(Default)]
pub struct TokenMutation;

#[Object]
impl TokenMutation {
    /// Issues a token. Admins issue any; users issue USER tokens for themselves within their roles.
    async fn create_token(&self, ctx: &Context<'_>, input: CreateTokenInput) -> async_graphql::Result<CreateTokenPayload> {
        let (caller, db) = session(ctx)?;
        let keys = &app(ctx)?.keys;
        let result = async {
            let user_id = match (&input.user_id, input.role) {
                (Some(id), _) => Some(ids::decode("userId", id, Kind::User)?),
                (None, Role::Agent) => None,
                (None, _) => caller.record.user_id,
            };
            let slice_scopes = input
                .slice_scopes
                .map(|scopes| {
                    scopes
                        .iter()
                        .enumerate()
                        .map(|(i, s)| {
                            Ok(SliceScope { slice_id: ids::decode(&format!("sliceScopes.{i}.sliceId"), &s.slice_id, Kind::Slice)?, role: s.role })
                        })
                        .collect::<Result<Vec<_>>>()
                })
                .transpose()?;
            let spec = service::IssueToken {
                name: input.name,
                role: input.role,
                user_id,
                slice_scopes,
                cluster_id: input.cluster_id.as_ref().map(|id| ids::decode("clusterId", id, Kind::Cluster)).transpose()?,
                node_name: input.node_name,
                ttl_secs: input.ttl.map_or(service::DEFAULT_TOKEN_TTL_SECS, Duration::secs),
                created_by: None,
            };
            let limit = ctx.data_opt::<TokenLimit>().and_then(|limit| limit.0);
            service::create_token(db, keys, caller, limit, spec).await
        };
        match result.await {
            Ok(issued) => Ok(CreateTokenPayload {
                token: Some(AccessToken(issued.record)),
                secret: Some(issued.secret),
                notice: issued.notice,
                user_errors: Vec::new(),
            }),
            Err(Error::User(user_errors)) => Ok(CreateTokenPayload { token: None, secret: None, notice: None, user_errors }),
            Err(other) => Err(other.into()),
        }
    }

    /// Signs a node agent in with its pod's ServiceAccount token, which the cluster reviews:
    /// needs no EGS token, and gives one that speaks for the pod's node only. Cut an agent off
    /// in the cluster (its ServiceAccount or pod); revoking the EGS token lasts until it signs
    /// in again.
    async fn sign_in_agent(&self, ctx: &Context<'_>, input: SignInAgentInput) -> async_graphql::Result<SignInAgentPayload> {
        let app = app(ctx)?;
        // Built once with the schema: a stand-in here would hold review permits of its own.
        let config = ctx.data::<agent::AgentSignIn>().map_err(|_| Error::Internal(anyhow::anyhow!("the schema was built without agent sign-in")))?;
        let result = async {
            let cluster_id = ids::decode("clusterId", &input.cluster_id, Kind::Cluster)?;
            agent::sign_in_agent(&app.db, &app.keys, &app.token_cache, app.kubernetes.as_ref(), config, cluster_id, &input.service_account_token)
                .await
        };
        match result.await {
            Ok(node) => Ok(SignInAgentPayload {
                token: Some(node.token),
                expires_at: Some(node.expires_at),
                node_name: Some(node.node_name),
                user_errors: Vec::new(),
            }),
            Err(Error::User(user_errors)) => Ok(SignInAgentPayload { token: None, expires_at: None, node_name: None, user_errors }),
            Err(other) => Err(other.into()),
        }
    }

    /// Revokes a token at once (admins any, users their own).
    async fn revoke_token(&self, ctx: &Context<'_>, input: RevokeTokenInput) -> async_graphql::Result<RevokeTokenPayload> {
        let (caller, db) = session(ctx)?;
        let app = app(ctx)?;
        let result = async {
            let id = ids::decode("id", &input.id, Kind::AccessToken)?;
            service::revoke_token(db, &app.token_cache, app.revocations.as_ref(), caller, id).await.map(AccessToken)
        };
        RevokeTokenPayload::from_result(result.await)
    }
}
