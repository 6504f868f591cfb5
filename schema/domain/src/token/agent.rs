//! Node-scoped agent identity: an agent on a Kubernetes node trades the projected
//! ServiceAccount token its pod is given (audience [`AGENT_AUDIENCE`], bound to the pod and so
//! to its node) for an EGS token that speaks for that node only. The cluster vouches for the
//! token (a TokenReview), so no long-lived EGS secret is mounted on GPU nodes, and a tenant who
//! gets onto one node can speak for that node and no other.

use crate::auth::{Claims, TokenCache, TokenKeys, agent_subject};
use crate::error::{Error, ErrorCode, Result, UserError};
use crate::ports::KubeAccess;
use crate::token::service::{IssueToken, issue_token};
use chrono::{DateTime, Duration, Utc};
use egs_entities::{ClusterProvider, Role, access_token, cluster};
use sea_orm::{ActiveModelTrait, ColumnTrait, Condition, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, Set};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::Semaphore;

/// The audience the agents' projected ServiceAccount tokens are minted for.
pub const AGENT_AUDIENCE: &str = "egs";
/// The name of the token rows node sign-ins make (one per node, extended at each sign-in).
pub const NODE_SIGN_IN_TOKEN_NAME: &str = "node sign-in";
/// How long a node's EGS token lives; the agent signs in again before.
pub const NODE_TOKEN_TTL_SECS: i64 = 3600;
/// The longest ServiceAccount token looked at (a real one is about 1 KiB): what is longer is
/// refused before any cluster is asked.
pub const MAX_SERVICE_ACCOUNT_TOKEN_BYTES: usize = 16 * 1024;
/// TokenReviews in flight at once per cluster: a flood of sign-ins (anonymous by nature) waits
/// on nobody and costs the cluster's API server at most this many requests at a time.
pub const REVIEWS_PER_CLUSTER: usize = 8;
/// The agents' ServiceAccount by default, as `deploy/` names it (`<namespace>:<name>`).
pub const DEFAULT_AGENT_SERVICE_ACCOUNT: &str = "egs:egs-node-agent";

/// Who may sign in as a node, and how many reviews run at once (schema data).
pub struct AgentSignIn {
    /// `<namespace>:<name>` of the ServiceAccount whose tokens speak for nodes.
    service_account: String,
    reviews: Mutex<HashMap<i64, Arc<Semaphore>>>,
}

impl AgentSignIn {
    pub fn new(service_account: &str) -> Self {
        Self { service_account: service_account.to_owned(), reviews: Mutex::new(HashMap::new()) }
    }

    fn reviews_for(&self, cluster_id: i64) -> Arc<Semaphore> {
        let mut reviews = self.reviews.lock().unwrap_or_else(|p| p.into_inner());
        reviews.entry(cluster_id).or_insert_with(|| Arc::new(Semaphore::new(REVIEWS_PER_CLUSTER))).clone()
    }
}

/// A node's EGS token, shown once.
pub struct SignedInNode {
    pub token: String,
    pub expires_at: DateTime<Utc>,
    pub node_name: String,
}

/// Checks `service_account_token` with cluster `cluster_id` and hands back a token for the
/// node its pod runs on. Refusals say why, but never echo the token.
pub async fn sign_in_agent(
    db: &DatabaseConnection,
    keys: &TokenKeys,
    cache: &TokenCache,
    kube: &dyn KubeAccess,
    config: &AgentSignIn,
    cluster_id: i64,
    service_account_token: &str,
) -> Result<SignedInNode> {
    let presented = service_account_token.trim();
    if presented.is_empty() || presented.len() > MAX_SERVICE_ACCOUNT_TOKEN_BYTES {
        return Err(Error::invalid(
            "serviceAccountToken",
            format!("give the projected ServiceAccount token (1 to {MAX_SERVICE_ACCOUNT_TOKEN_BYTES} bytes)"),
        ));
    }
    // The caller is anonymous: a simulated cluster answers as a missing one, and no refusal
    // names the cluster or how the gateway reaches it (the log keeps the details).
    let no_such_cluster = || Error::invalid("clusterId", "no such cluster");
    let target = cluster::Entity::find_by_id(cluster_id).one(db).await?.ok_or_else(no_such_cluster)?;
    if target.provider != ClusterProvider::Kubernetes {
        return Err(no_such_cluster());
    }
    let reviews = config.reviews_for(cluster_id);
    let Ok(_permit) = reviews.try_acquire() else { return Err(Error::RateLimited) };
    let reviewed = kube.review_token(&target, presented, AGENT_AUDIENCE).await.map_err(|e| {
        tracing::warn!(cluster = %target.name, error = %e, "a TokenReview for a node sign-in failed");
        Error::User(vec![UserError {
            field: vec!["clusterId".into()],
            message: "the cluster could not review the token now; try again shortly".into(),
            code: ErrorCode::ServiceUnavailable,
        }])
    })?;
    if !reviewed.authenticated {
        let why = reviewed.error.as_deref().map_or_else(|| "no reason given".to_owned(), |e| crate::redaction::first_line(&e));
        tracing::info!(cluster = %target.name, reason = %why, "the cluster did not vouch for a node sign-in");
        return Err(Error::Unauthenticated("the cluster does not vouch for the token".into()));
    }
    if !reviewed.audiences.iter().any(|a| a == AGENT_AUDIENCE) {
        return Err(Error::Unauthenticated(format!("the token is not for audience `{AGENT_AUDIENCE}`; project one with that audience")));
    }
    let expected = format!("system:serviceaccount:{}", config.service_account);
    if reviewed.username != expected {
        return Err(Error::Unauthenticated(format!("the token speaks for `{}`; only {expected} signs in as a node", reviewed.username)));
    }
    let Some(node_name) = reviewed.node_name.filter(|n| !n.is_empty() && n.len() <= 253) else {
        return Err(Error::Unauthenticated(
            "the token is not bound to a pod on a node; mount a projected ServiceAccount token (the cluster then names the node)".into(),
        ));
    };
    let (token, expires_at) = node_token(db, keys, cache, cluster_id, &node_name).await?;
    tracing::info!(cluster = %target.name, node = %node_name, "a node agent signed in with its ServiceAccount token");
    Ok(SignedInNode { token, expires_at, node_name })
}

/// The node's token: its live sign-in row extended by [`NODE_TOKEN_TTL_SECS`] and signed
/// again, or a new row when it has none (one row per node, however often it signs in).
async fn node_token(db: &DatabaseConnection, keys: &TokenKeys, cache: &TokenCache, cluster_id: i64, node: &str) -> Result<(String, DateTime<Utc>)> {
    let now = Utc::now();
    let this_node = Condition::all()
        .add(access_token::Column::Name.eq(NODE_SIGN_IN_TOKEN_NAME))
        .add(access_token::Column::Role.eq(Role::Agent))
        .add(access_token::Column::ClusterId.eq(cluster_id))
        .add(access_token::Column::NodeName.eq(node));
    let live = access_token::Entity::find()
        .filter(this_node.clone())
        .filter(access_token::Column::RevokedAt.is_null())
        .filter(access_token::Column::ExpiresAt.gt(now))
        .order_by_desc(access_token::Column::Id)
        .one(db)
        .await?;
    let expires_at = now + Duration::seconds(NODE_TOKEN_TTL_SECS);
    let Some(live) = live else {
        // What lapsed before goes: only the new row speaks for the node.
        access_token::Entity::delete_many().filter(this_node).filter(access_token::Column::ExpiresAt.lte(now)).exec(db).await?;
        let issued = issue_token(
            db,
            keys,
            IssueToken {
                name: NODE_SIGN_IN_TOKEN_NAME.into(),
                role: Role::Agent,
                user_id: None,
                slice_scopes: None,
                cluster_id: Some(cluster_id),
                node_name: Some(node.to_owned()),
                ttl_secs: NODE_TOKEN_TTL_SECS,
                created_by: None,
            },
        )
        .await?;
        return Ok((issued.secret, issued.record.expires_at));
    };
    let claims = Claims::new(agent_subject(Some(cluster_id), Some(node)), live.jti.clone(), Role::Agent, Vec::new(), now, expires_at);
    let secret = keys.sign(&claims)?;
    let jti = live.jti.clone();
    let mut extended: access_token::ActiveModel = live.into();
    extended.expires_at = Set(expires_at);
    extended.update(db).await?;
    // This replica reads the new expiry at the next use; the others' cached records still hold
    // the old one, which has not passed (the row was live).
    cache.forget(&jti);
    Ok((secret, expires_at))
}
