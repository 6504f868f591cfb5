//! Signing in with the company's identity provider: the user an OpenID Connect identity is
//! (made on its first sign-in), the memberships and role its groups grant by the admins'
//! rules, and a session token. The adapter (egs-api) runs the protocol and verifies the ID
//! token; this takes only claims it verified.

use crate::auth::{AccessNews, Caller, TokenKeys, reduce_access};
use crate::error::{Error, Result};
use crate::token::service::{IssueToken, issue_token, revoke_token};
use chrono::Utc;
use egs_entities::{Role, SliceRole, access_token, slice_member, sso_group_rule, user};
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, Set, TransactionTrait};
use std::collections::{BTreeMap, BTreeSet};

/// What the adapter verified about who signed in.
#[derive(Clone, Debug)]
pub struct Identity {
    pub issuer: String,
    pub subject: String,
    /// `preferred_username`, else the e-mail's local part, else the subject.
    pub username: String,
    pub email: Option<String>,
    pub groups: Vec<String>,
}

pub use crate::token::service::{SESSION_TOKEN_NAME, SESSION_TTL_SECS, SESSIONS_KEPT};
/// Groups read from one ID token; a longer list is cut (the rules name few).
pub const MAX_GROUPS: usize = 500;

/// Who signed in and the secret of their new session token.
pub struct SignedIn {
    pub user: user::Model,
    pub token: String,
    /// Memberships added or changed, and removed, by the group rules at this sign-in.
    pub granted: usize,
    pub revoked: usize,
    /// Slices the user owned before this sign-in and does not now (their kubeconfigs go).
    pub owner_lost: Vec<i64>,
}

/// A user name from what the identity provider calls the user: lowercase, only the characters
/// user names allow, at most 56 long (room for a `-N` suffix).
fn user_name_from(username: &str) -> String {
    let cleaned: String = username
        .to_lowercase()
        .chars()
        .map(|c| if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-') { c } else { '-' })
        .take(56)
        .collect();
    let trimmed = cleaned.trim_matches(|c| matches!(c, '.' | '_' | '-'));
    if trimmed.is_empty() { "user".to_owned() } else { trimmed.to_owned() }
}

/// Signs `identity` in: finds or makes its user, applies the group rules, issues a session.
pub async fn sign_in(db: &DatabaseConnection, keys: &TokenKeys, news: AccessNews<'_>, identity: Identity) -> Result<SignedIn> {
    require_identity(&identity)?;
    let groups: BTreeSet<&str> = identity.groups.iter().take(MAX_GROUPS).map(String::as_str).collect();
    let rules = sso_group_rule::Entity::find().order_by_asc(sso_group_rule::Column::Id).all(db).await?;
    let matching: Vec<&sso_group_rule::Model> = rules.iter().filter(|r| groups.contains(r.group_name.as_str())).collect();
    // Where no rule grants the admin role, the admin role is not the rules' to manage: a user's
    // stays as an admin set it. Where one does, it follows the groups.
    let admin_by_rules = rules.iter().any(|r| r.grants_admin);
    let role_by_rules = if matching.iter().any(|r| r.grants_admin) { Role::Admin } else { Role::User };
    // The highest role any matching rule gives in each slice.
    let mut wanted: BTreeMap<i64, SliceRole> = BTreeMap::new();
    for r in &matching {
        if let (Some(slice), Some(given)) = (r.slice_id, r.slice_role) {
            let entry = wanted.entry(slice).or_insert(given);
            if given.rank() > entry.rank() {
                *entry = given;
            }
        }
    }

    let txn = db.begin().await?;
    let found = user::Entity::find()
        .filter(user::Column::OidcIssuer.eq(identity.issuer.as_str()))
        .filter(user::Column::OidcSubject.eq(identity.subject.as_str()))
        .one(&txn)
        .await?;
    let email = identity.email.filter(|e| e.len() <= 254 && e.contains('@'));
    // An address another user holds stays theirs: the identity's is not stored (a provider
    // may vouch for an address an admin already gave someone).
    let email = match email {
        Some(address) => {
            let holders = crate::user::service::holders_of_email(&txn, &address).await?;
            let mine = found.as_ref().map(|u| u.id);
            holders.iter().all(|h| Some(*h) == mine).then_some(address)
        }
        None => None,
    };
    let previous_role = found.as_ref().map(|u| u.role);
    let account = match found {
        Some(existing) => {
            let mut changed: user::ActiveModel = existing.clone().into();
            if admin_by_rules {
                changed.role = Set(role_by_rules);
            }
            if email.is_some() {
                changed.email = Set(email);
            }
            changed.update(&txn).await?
        }
        None => {
            // Never linked to an existing user by name or e-mail: an identity provider that lets
            // people choose either would hand over that account. A taken name gets a suffix.
            let base = user_name_from(&identity.username);
            let mut name = base.clone();
            let mut n = 1;
            while user::Entity::find().filter(user::Column::Name.eq(name.as_str())).count(&txn).await? > 0 {
                n += 1;
                name = format!("{base}-{n}");
            }
            user::ActiveModel {
                name: Set(name),
                email: Set(email),
                role: Set(role_by_rules),
                created_at: Set(Utc::now()),
                oidc_issuer: Set(Some(identity.issuer.clone())),
                oidc_subject: Set(Some(identity.subject.clone())),
                ..Default::default()
            }
            .insert(&txn)
            .await?
        }
    };

    let held = slice_member::Entity::find().filter(slice_member::Column::UserId.eq(account.id)).all(&txn).await?;
    let (mut granted, mut revoked) = (0, 0);
    let mut lost_access = false;
    let mut owner_lost = Vec::new();
    for m in &held {
        match wanted.get(&m.slice_id) {
            // An owner's or admin's grant is theirs to change.
            _ if !m.granted_by_sso => {}
            Some(&role) if role == m.role => {}
            Some(&role) => {
                lost_access |= role.rank() < m.role.rank();
                if m.role == SliceRole::Owner {
                    owner_lost.push(m.slice_id);
                }
                let mut changed: slice_member::ActiveModel = m.clone().into();
                changed.role = Set(role);
                changed.update(&txn).await?;
                granted += 1;
            }
            None => {
                // A slice keeps one owner: the rule's grant stays while it is the last.
                let owners = slice_member::Entity::find()
                    .filter(slice_member::Column::SliceId.eq(m.slice_id))
                    .filter(slice_member::Column::Role.eq(SliceRole::Owner))
                    .count(&txn)
                    .await?;
                if m.role == SliceRole::Owner && owners <= 1 {
                    continue;
                }
                slice_member::Entity::delete_many()
                    .filter(slice_member::Column::SliceId.eq(m.slice_id))
                    .filter(slice_member::Column::UserId.eq(account.id))
                    .exec(&txn)
                    .await?;
                if m.role == SliceRole::Owner {
                    owner_lost.push(m.slice_id);
                }
                lost_access = true;
                revoked += 1;
            }
        }
    }
    for (&slice, &role) in &wanted {
        if held.iter().all(|m| m.slice_id != slice) {
            slice_member::ActiveModel {
                slice_id: Set(slice),
                user_id: Set(account.id),
                role: Set(role),
                created_at: Set(Utc::now()),
                granted_by_sso: Set(true),
            }
            .insert(&txn)
            .await?;
            granted += 1;
        }
    }
    if lost_access {
        reduce_access(&txn, AccessNews { cache: news.cache, others: news.others }, &[account.id]).await?;
    }
    let issued = issue_token(
        &txn,
        keys,
        IssueToken {
            name: SESSION_TOKEN_NAME.into(),
            role: account.role,
            user_id: Some(account.id),
            slice_scopes: None,
            cluster_id: None,
            node_name: None,
            ttl_secs: SESSION_TTL_SECS,
            created_by: None,
        },
    )
    .await?;
    txn.commit().await?;
    if previous_role.is_none() {
        crate::slice::personal::welcome(db, &account).await;
    }

    // Older sessions beyond the newest few are revoked, so signing in often never runs into
    // the per-user token limit.
    let sessions = access_token::Entity::find()
        .filter(access_token::Column::UserId.eq(account.id))
        .filter(access_token::Column::Name.eq(SESSION_TOKEN_NAME))
        .filter(access_token::Column::RevokedAt.is_null())
        .filter(access_token::Column::ExpiresAt.gt(Utc::now()))
        .order_by_desc(access_token::Column::Id)
        .all(db)
        .await?;
    for old in sessions.iter().skip(SESSIONS_KEPT) {
        revoke_token(db, news.cache, news.others, &Caller::system(), old.id).await?;
    }
    // A token carries its role: when the groups no longer make the user an admin, every admin
    // token they hold goes (the new session is a user's).
    if previous_role == Some(Role::Admin) && account.role != Role::Admin {
        let admin_tokens = access_token::Entity::find()
            .filter(access_token::Column::UserId.eq(account.id))
            .filter(access_token::Column::Role.eq(Role::Admin))
            .filter(access_token::Column::RevokedAt.is_null())
            .all(db)
            .await?;
        for t in admin_tokens {
            revoke_token(db, news.cache, news.others, &Caller::system(), t.id).await?;
        }
    }
    Ok(SignedIn { user: account, token: issued.secret, granted, revoked, owner_lost })
}

/// The refusal for an identity without a subject or issuer (the adapter checks first; this is
/// the service's own guard).
fn require_identity(identity: &Identity) -> Result<()> {
    if identity.issuer.is_empty() || identity.subject.is_empty() || identity.subject.len() > 255 {
        return Err(Error::invalid("subject", "the identity provider gave no usable subject"));
    }
    Ok(())
}
