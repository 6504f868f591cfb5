//! Single sign-on (OpenID Connect): the admins' group rules (here) and, in [`signin`], what a
//! verified sign-in does. The protocol itself (the redirects, the code exchange, the ID token's
//! signature against the issuer's keys) is the adapter's, in egs-api.

pub mod signin;

use crate::error::{Error, Result, UserError};
use chrono::Utc;
use egs_entities::{SliceRole, slice, sso_group_rule as rule};
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, Set};

/// Rules an installation may hold.
pub const MAX_RULES: u64 = 500;

/// What an admin asks a group to grant.
pub struct NewRule {
    pub group: String,
    pub slice_id: Option<i64>,
    pub role: Option<SliceRole>,
    pub grants_admin: bool,
}

/// The rules (admins).
pub async fn list_rules(db: &DatabaseConnection, caller: &crate::auth::Caller) -> Result<Vec<rule::Model>> {
    caller.require_admin()?;
    Ok(rule::Entity::find().order_by_asc(rule::Column::GroupName).order_by_asc(rule::Column::Id).all(db).await?)
}

/// Stores a rule: a group grants a role in a slice, or the admin role (one of the two).
pub async fn create_rule(db: &DatabaseConnection, new: NewRule) -> Result<rule::Model> {
    let mut errors = Vec::new();
    let group = new.group.trim().to_owned();
    if group.is_empty() || group.len() > 256 || group.chars().any(char::is_control) {
        errors.push(UserError::invalid("group", "a group name of 1–256 characters, as the identity provider's groups claim gives it"));
    }
    match (new.slice_id, new.role, new.grants_admin) {
        (Some(_), Some(_), false) | (None, None, true) => {}
        (_, _, true) => errors.push(UserError::invalid("grantsAdmin", "a rule grants the admin role or a slice role, not both")),
        (None, _, false) => errors.push(UserError::invalid("sliceId", "name the slice the group's members join (or grant the admin role)")),
        (Some(_), None, false) => errors.push(UserError::invalid("role", "name the role the group's members get in the slice")),
    }
    crate::validate::finish(errors)?;
    if let Some(slice) = new.slice_id
        && slice::Entity::find_by_id(slice).one(db).await?.is_none()
    {
        return Err(Error::invalid("sliceId", "no such slice"));
    }
    let mut same = rule::Entity::find().filter(rule::Column::GroupName.eq(group.as_str()));
    same = match new.slice_id {
        Some(slice) => same.filter(rule::Column::SliceId.eq(slice)),
        None => same.filter(rule::Column::GrantsAdmin.eq(true)),
    };
    if same.count(db).await? > 0 {
        return Err(Error::conflict("group", format!("a rule for `{group}` already grants that; delete it to change it")));
    }
    if rule::Entity::find().count(db).await? >= MAX_RULES {
        return Err(Error::User(vec![UserError {
            field: vec!["input".into()],
            message: format!("at most {MAX_RULES} rules; delete one first"),
            code: crate::error::ErrorCode::LimitExceeded,
        }]));
    }
    Ok(rule::ActiveModel {
        group_name: Set(group),
        slice_id: Set(new.slice_id),
        slice_role: Set(new.role),
        grants_admin: Set(new.grants_admin),
        created_at: Set(Utc::now()),
        ..Default::default()
    }
    .insert(db)
    .await?)
}

pub async fn delete_rule(db: &DatabaseConnection, id: i64) -> Result<rule::Model> {
    let found = rule::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("rule"))?;
    rule::Entity::delete_by_id(id).exec(db).await?;
    Ok(found)
}
