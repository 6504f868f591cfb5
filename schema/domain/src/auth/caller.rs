//! The authenticated caller of one request, and the slice-isolation checks every rule makes
//! through it.

use crate::error::{Error, Result};
use crate::principal::Principal;
use chrono::{DateTime, Utc};
use egs_entities::{Role, SliceRole, SliceScope, slice_member};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::OnceCell;

/// What the database says about a token, cached briefly.
#[derive(Clone, Debug)]
pub struct TokenRecord {
    pub token_id: i64,
    pub role: Role,
    pub user_id: Option<i64>,
    pub user_name: String,
    pub scopes: Option<Vec<SliceScope>>,
    pub agent_cluster_id: Option<i64>,
    pub agent_node_name: Option<String>,
    pub expires_at: DateTime<Utc>,
    pub revoked: bool,
    /// The user's `access_version` when read: a later, higher one means the user lost slice
    /// access since, and streams started before must end.
    pub access_version: i64,
}

/// The authenticated principal of one request.
pub struct Caller {
    pub record: Arc<TokenRecord>,
    /// The user's slice roles, loaded on first use within the request.
    memberships: OnceCell<HashMap<i64, SliceRole>>,
}

/// Which slices a caller may see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Visible {
    All,
    Only(Vec<i64>),
}

impl Caller {
    pub fn new(record: Arc<TokenRecord>) -> Self {
        Self { record, memberships: OnceCell::new() }
    }

    /// EGS itself acting as an admin (bootstrap, the CLI, the demo seed); never from a token.
    pub fn system() -> Self {
        Self::new(Arc::new(TokenRecord {
            token_id: 0,
            role: Role::Admin,
            user_id: None,
            user_name: "system".into(),
            scopes: None,
            agent_cluster_id: None,
            agent_node_name: None,
            expires_at: DateTime::<Utc>::MAX_UTC,
            revoked: false,
            access_version: 0,
        }))
    }

    pub fn role(&self) -> Role {
        self.record.role
    }

    pub fn is_admin(&self) -> bool {
        self.record.role == Role::Admin
    }

    /// The name recorded as the actor of events this caller causes.
    pub fn actor(&self) -> &str {
        &self.record.user_name
    }

    pub fn require_admin(&self) -> Result<()> {
        if self.is_admin() { Ok(()) } else { Err(Error::Forbidden("this needs an admin token".into())) }
    }

    /// Whether this is an agent token that may report for node `name` of cluster `cluster_id`:
    /// its own node, or (a cluster-scoped token, which names no node) any node of its cluster.
    pub fn agent_covers(&self, cluster_id: i64, name: &str) -> bool {
        self.record.role == Role::Agent
            && self.record.agent_cluster_id == Some(cluster_id)
            && self.record.agent_node_name.as_deref().is_none_or(|own| own == name)
    }

    /// The `FORBIDDEN` an agent gets for a node outside its scope.
    pub fn foreign_node(&self) -> Error {
        Error::Forbidden(match self.record.agent_node_name {
            Some(_) => "an agent token may only report its own node".into(),
            None => "an agent token may only report nodes of its own cluster".into(),
        })
    }

    /// A user or admin (not an agent).
    pub fn require_person(&self) -> Result<()> {
        if self.record.role == Role::Agent { Err(Error::Forbidden("agent tokens may only report inventory and metrics".into())) } else { Ok(()) }
    }

    async fn memberships(&self, db: &DatabaseConnection) -> Result<&HashMap<i64, SliceRole>> {
        // Boxed: a query's future is kilobytes, and every field that checks a slice would
        // otherwise carry it inline (async-graphql boxes each field's future per object).
        self.memberships
            .get_or_try_init(|| {
                Box::pin(async {
                    let Some(user_id) = self.record.user_id.filter(|_| self.record.role == Role::User) else {
                        return Ok(HashMap::new());
                    };
                    let rows = slice_member::Entity::find().filter(slice_member::Column::UserId.eq(user_id)).all(db).await?;
                    let mut roles: HashMap<i64, SliceRole> = rows.into_iter().map(|m| (m.slice_id, m.role)).collect();
                    // A scoped token can do at most what its scopes say, and only where the user
                    // still is a member.
                    if let Some(scopes) = &self.record.scopes {
                        let caps: HashMap<i64, SliceRole> = scopes.iter().map(|s| (s.slice_id, s.role)).collect();
                        roles.retain(|slice, _| caps.contains_key(slice));
                        for (slice, role) in roles.iter_mut() {
                            if caps[slice].rank() < role.rank() {
                                *role = caps[slice];
                            }
                        }
                    }
                    Ok::<_, Error>(roles)
                })
            })
            .await
    }

    /// Whether the caller's token is limited to some slices (what it may do elsewhere, and with
    /// what spans every slice, such as the user's own notification channels, is nothing).
    pub fn is_scoped(&self) -> bool {
        self.record.scopes.is_some()
    }

    /// The caller's role in a slice; admins are owners everywhere.
    pub async fn slice_role(&self, db: &DatabaseConnection, slice_id: i64) -> Result<Option<SliceRole>> {
        if self.is_admin() {
            return Ok(Some(SliceRole::Owner));
        }
        Ok(self.memberships(db).await?.get(&slice_id).copied())
    }

    /// Fails unless the caller holds at least `min` in the slice. A caller with no role at all
    /// gets `NOT_FOUND` for `what`, so other slices' objects stay invisible.
    pub async fn require_slice_role(&self, db: &DatabaseConnection, slice_id: i64, min: SliceRole, what: &'static str) -> Result<SliceRole> {
        match self.slice_role(db, slice_id).await? {
            None => Err(Error::NotFound(what)),
            Some(role) if role.rank() < min.rank() => {
                Err(Error::Forbidden(format!("this needs the {} role in the slice; you are {}", min.as_str(), role.as_str())))
            }
            Some(role) => Ok(role),
        }
    }

    pub async fn can_see_slice(&self, db: &DatabaseConnection, slice_id: i64) -> Result<bool> {
        Ok(self.slice_role(db, slice_id).await?.is_some())
    }

    /// The slices whose objects this caller may list.
    pub async fn visible_slices(&self, db: &DatabaseConnection) -> Result<Visible> {
        if self.is_admin() {
            return Ok(Visible::All);
        }
        let mut ids: Vec<i64> = self.memberships(db).await?.keys().copied().collect();
        ids.sort_unstable();
        Ok(Visible::Only(ids))
    }
}

/// Whom `caller`'s requests count against (see [`Principal`]).
impl Principal {
    pub fn of(caller: Option<&Caller>) -> Self {
        match caller {
            None => Self::Anonymous,
            Some(caller) => match caller.record.user_id {
                Some(user) => Self::User(user),
                None => Self::Token(caller.record.token_id),
            },
        }
    }
}
