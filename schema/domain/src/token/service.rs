//! Access tokens: issued as JWTs, recorded by id so they can be listed and revoked.

use crate::auth::{Caller, Claims, TokenCache, TokenKeys, agent_subject};
use crate::error::{Error, Result, UserError};
use crate::ports::RevocationBroadcast;
use crate::validate;
use chrono::{DateTime, Duration, Utc};
use egs_entities::{Role, SliceScope, SliceScopes, access_token, cluster, slice, user};
use rand::Rng;
use sea_orm::{ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, Select, Set};

/// Lifetime of a token when none is asked for.
pub const DEFAULT_TOKEN_TTL_SECS: i64 = 90 * 24 * 3600;
/// Longest lifetime a token may have.
pub const MAX_TOKEN_TTL_SECS: i64 = 2 * 366 * 24 * 3600;

/// What to issue; checked by [`issue_token`] whoever asks.
pub struct IssueToken {
    pub name: String,
    pub role: Role,
    pub user_id: Option<i64>,
    pub slice_scopes: Option<Vec<SliceScope>>,
    pub cluster_id: Option<i64>,
    pub node_name: Option<String>,
    pub ttl_secs: i64,
    pub created_by: Option<i64>,
}

/// A new token: its record and the secret text, which is shown once and never stored.
pub struct IssuedToken {
    pub record: access_token::Model,
    pub secret: String,
    /// Why it lives less long than asked, or what may end it early, for whoever made it.
    pub notice: Option<String>,
}

fn new_jti() -> String {
    let bytes: [u8; 16] = rand::rng().random();
    hex::encode(bytes)
}

/// How long a single sign-on session's token lasts (sessions are made in `sso::signin`; here,
/// since a token made with one says what it ends with).
pub const SESSION_TTL_SECS: i64 = 12 * 3600;
/// Sessions a user keeps at once (each browser signs in on its own); older ones are revoked.
pub const SESSIONS_KEPT: usize = 5;
/// The name single sign-on sessions' tokens carry.
pub const SESSION_TOKEN_NAME: &str = "single sign-on";

/// Checks and issues a token; no caller checks (bootstrap, CLI, and [`create_token`]).
pub async fn issue_token(db: &impl ConnectionTrait, keys: &TokenKeys, spec: IssueToken) -> Result<IssuedToken> {
    issue_token_under(db, keys, spec, None).await
}

/// The token a new one is minted with: its id and when it expires.
pub struct Parent {
    pub id: i64,
    pub expires_at: DateTime<Utc>,
}

/// [`issue_token`] for a token minted with `parent`: it expires no later than the parent.
async fn issue_token_under(db: &impl ConnectionTrait, keys: &TokenKeys, spec: IssueToken, parent: Option<Parent>) -> Result<IssuedToken> {
    let mut errors: Vec<UserError> = Vec::new();
    validate::text("name", &spec.name, 128, &mut errors);
    validate::range("ttl", spec.ttl_secs, 60, MAX_TOKEN_TTL_SECS, &mut errors);
    let owner = match spec.user_id {
        Some(id) => user::Entity::find_by_id(id).one(db).await?,
        None => None,
    };
    match spec.role {
        Role::Admin | Role::User => match &owner {
            None => errors.push(UserError::invalid("userId", "ADMIN and USER tokens belong to a user")),
            Some(owner) if owner.role != spec.role => errors.push(UserError::invalid(
                "role",
                format!("user `{}` is {}, so the token must be {} too", owner.name, owner.role.as_str(), owner.role.as_str()),
            )),
            Some(_) => {}
        },
        Role::Agent => {
            if spec.user_id.is_some() {
                errors.push(UserError::invalid("userId", "agent tokens do not belong to a user"));
            }
            // With a node name the token speaks for that node only; without, for every node of
            // the cluster (one Secret for a whole DaemonSet).
            match spec.cluster_id {
                Some(cluster_id) => {
                    if let Some(node) = &spec.node_name {
                        validate::text("nodeName", node, 253, &mut errors);
                    }
                    if cluster::Entity::find_by_id(cluster_id).one(db).await?.is_none() {
                        errors.push(UserError::invalid("clusterId", "no such cluster"));
                    }
                }
                None => errors.push(UserError::invalid("clusterId", "agent tokens name the cluster (and optionally the node) they report for")),
            }
        }
    }
    if spec.role != Role::Agent && (spec.cluster_id.is_some() || spec.node_name.is_some()) {
        errors.push(UserError::invalid("clusterId", "only agent tokens name a cluster and node"));
    }
    if let Some(scopes) = &spec.slice_scopes {
        if spec.role != Role::User {
            errors.push(UserError::invalid("sliceScopes", "only USER tokens are limited to slices"));
        }
        let ids: Vec<i64> = scopes.iter().map(|s| s.slice_id).collect();
        if slice::Entity::find().filter(slice::Column::Id.is_in(ids.clone())).count(db).await? as usize != ids.len() {
            errors.push(UserError::invalid("sliceScopes", "names a slice that does not exist"));
        }
    }
    validate::finish(errors)?;

    let now = Utc::now();
    let asked = now + Duration::seconds(spec.ttl_secs);
    let mut expires_at = asked;
    let mut notice = None;
    if let Some(parent) = &parent {
        expires_at = expires_at.min(parent.expires_at);
        let made_with = access_token::Entity::find_by_id(parent.id).one(db).await?;
        let session = made_with.is_some_and(|t| t.name == SESSION_TOKEN_NAME);
        let clipped =
            (expires_at < asked).then(|| format!("it expires at {}, with the token it was made with, not when asked", expires_at.to_rfc3339()));
        let how = if session {
            format!(
                "it was made with a single sign-on session, so it is revoked with it (sessions last {} h, and each sign-in past the newest {} revokes the oldest); for a longer-lived token, make it with a token of your own",
                SESSION_TTL_SECS / 3600,
                SESSIONS_KEPT
            )
        } else {
            "it is revoked with the token it was made with".to_owned()
        };
        notice = Some(match clipped {
            Some(clipped) => format!("{clipped}; {how}"),
            None => how,
        });
    }
    let jti = new_jti();
    let subject = match &owner {
        Some(owner) => owner.name.clone(),
        None => agent_subject(spec.cluster_id, spec.node_name.as_deref()),
    };
    let claims = Claims::new(subject, jti.clone(), spec.role, spec.slice_scopes.clone().unwrap_or_default(), now, expires_at);
    let secret = keys.sign(&claims)?;
    let record = access_token::ActiveModel {
        jti: Set(jti),
        name: Set(spec.name),
        role: Set(spec.role),
        user_id: Set(spec.user_id),
        cluster_id: Set(spec.cluster_id),
        node_name: Set(spec.node_name),
        slice_scopes: Set(spec.slice_scopes.map(SliceScopes)),
        created_by: Set(spec.created_by),
        parent_id: Set(parent.map(|p| p.id)),
        created_at: Set(now),
        expires_at: Set(expires_at),
        revoked_at: Set(None),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(IssuedToken { record, secret, notice })
}

/// Admins issue any token; users issue USER tokens for themselves, within their own roles.
/// A user holding `max_per_user` unexpired tokens gets no more (`LIMIT_EXCEEDED`) until one is
/// revoked or expires, whoever asks: each token is a way in to watch and revoke.
pub async fn create_token(
    db: &DatabaseConnection,
    keys: &TokenKeys,
    caller: &Caller,
    max_per_user: Option<u32>,
    mut spec: IssueToken,
) -> Result<IssuedToken> {
    caller.require_person()?;
    spec.created_by = caller.record.user_id;
    if !caller.is_admin() {
        if spec.role != Role::User || spec.user_id != caller.record.user_id {
            return Err(Error::Forbidden("users may only create USER tokens for themselves".into()));
        }
        // Without scopes the new token would carry the user's full roles, which a scoped token
        // must not hand out; so a user's new token is scoped to what the caller can do.
        let scopes = match spec.slice_scopes.take() {
            Some(scopes) => scopes,
            None => caller_scopes(db, caller).await?,
        };
        for (i, scope) in scopes.iter().enumerate() {
            match caller.slice_role(db, scope.slice_id).await? {
                Some(role) if role.rank() >= scope.role.rank() => {}
                _ => return Err(Error::invalid(&format!("sliceScopes.{i}"), "you can only pass on roles you hold")),
            }
        }
        spec.slice_scopes = Some(scopes);
    }
    // After the checks of who may ask: a refused caller learns nothing of the count.
    if let (Some(limit), Some(user_id)) = (max_per_user, spec.user_id) {
        let held = access_token::Entity::find()
            .filter(access_token::Column::UserId.eq(user_id))
            .filter(access_token::Column::RevokedAt.is_null())
            .filter(access_token::Column::ExpiresAt.gt(Utc::now()))
            .count(db)
            .await?;
        if held >= u64::from(limit) {
            return Err(Error::User(vec![UserError {
                field: Vec::new(),
                message: format!("this user already holds {held} unexpired tokens (at most {limit}); revoke one first"),
                code: crate::error::ErrorCode::LimitExceeded,
            }]));
        }
    }
    // Made with a token (not by the system): it lives no longer than that token, and dies with
    // it. Except an admin's AGENT tokens: they speak for nodes, not for the admin, and are
    // mounted on the nodes for months; an admin's session must not take them along.
    let detached = spec.role == Role::Agent && caller.is_admin();
    let parent = (caller.record.token_id > 0 && !detached).then(|| Parent { id: caller.record.token_id, expires_at: caller.record.expires_at });
    issue_token_under(db, keys, spec, parent).await
}

async fn caller_scopes(db: &DatabaseConnection, caller: &Caller) -> Result<Vec<SliceScope>> {
    let mut scopes = Vec::new();
    if let crate::auth::Visible::Only(ids) = caller.visible_slices(db).await? {
        for slice_id in ids {
            if let Some(role) = caller.slice_role(db, slice_id).await? {
                scopes.push(SliceScope { slice_id, role });
            }
        }
    }
    Ok(scopes)
}

/// Tokens the caller may see: all for admins, their own for users. A token limited to slices
/// sees only itself and the tokens it minted, so a leaked viewer token cannot list or revoke
/// the user's other tokens.
pub fn tokens_select(caller: &Caller) -> Result<Select<access_token::Entity>> {
    caller.require_person()?;
    Ok(if caller.is_admin() {
        access_token::Entity::find()
    } else if caller.record.scopes.is_some() {
        let own = caller.record.token_id;
        access_token::Entity::find()
            .filter(access_token::Column::UserId.eq(caller.record.user_id.unwrap_or_default()))
            .filter(Condition::any().add(access_token::Column::Id.eq(own)).add(access_token::Column::ParentId.eq(own)))
    } else {
        access_token::Entity::find().filter(access_token::Column::UserId.eq(caller.record.user_id.unwrap_or_default()))
    })
}

pub async fn find_token(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<access_token::Model> {
    tokens_select(caller)?.filter(access_token::Column::Id.eq(id)).one(db).await?.ok_or(Error::NotFound("token"))
}

/// Revokes a token at once: this replica forgets it, and the others are told to.
pub async fn revoke_token(
    db: &DatabaseConnection,
    cache: &TokenCache,
    others: &dyn RevocationBroadcast,
    caller: &Caller,
    id: i64,
) -> Result<access_token::Model> {
    let found = find_token(db, caller, id).await?;
    if found.revoked_at.is_some() {
        return Ok(found);
    }
    let now = Utc::now();
    let mut model: access_token::ActiveModel = found.into();
    model.revoked_at = Set(Some(now));
    let revoked = model.update(db).await?;
    cache.forget(&revoked.jti);
    others.token_revoked(&revoked.jti);
    // Every token minted with it, and theirs, goes with it.
    let mut parents = vec![revoked.id];
    while !parents.is_empty() {
        let children = access_token::Entity::find().filter(access_token::Column::ParentId.is_in(parents)).all(db).await?;
        parents = children.iter().map(|c| c.id).collect();
        for child in children.into_iter().filter(|c| c.revoked_at.is_none()) {
            let jti = child.jti.clone();
            let mut model: access_token::ActiveModel = child.into();
            model.revoked_at = Set(Some(now));
            model.update(db).await?;
            cache.forget(&jti);
            others.token_revoked(&jti);
        }
    }
    Ok(revoked)
}
