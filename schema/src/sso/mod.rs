//! Single sign-on (OpenID Connect): the admins' group rules (`ssoGroupRules`,
//! `createSsoGroupRule`, `deleteSsoGroupRule`) and, in `signin`, what a verified sign-in does.
//! The protocol itself (the redirects, the code exchange, the ID token's signature against the
//! issuer's keys) is the adapter's, in egs-api.

pub mod signin;

use crate::error::{Error, Result, UserError};
use crate::ids::{self, Kind};
use crate::slice::Slice;
use crate::{payload, session};
use async_graphql::{Context, ID, InputObject, Object};
use chrono::{DateTime, Utc};
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

pub async fn list_rules(db: &DatabaseConnection) -> Result<Vec<rule::Model>> {
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

/// A single sign-on rule: members of an identity-provider group get a slice role, or become
/// admins, when they sign in (and lose what it gave when they no longer are).
pub struct SsoGroupRule(pub rule::Model);

#[Object]
impl SsoGroupRule {
    async fn id(&self) -> ID {
        ids::encode(Kind::SsoGroupRule, self.0.id)
    }
    /// The group, as the identity provider's groups claim names it.
    async fn group(&self) -> &str {
        &self.0.group_name
    }
    async fn slice(&self, ctx: &Context<'_>) -> Result<Option<Slice>> {
        let Some(id) = self.0.slice_id else { return Ok(None) };
        let (_, db) = session(ctx)?;
        Ok(slice::Entity::find_by_id(id).one(db).await?.map(Slice))
    }
    async fn role(&self) -> Option<SliceRole> {
        self.0.slice_role
    }
    async fn grants_admin(&self) -> bool {
        self.0.grants_admin
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
}

#[derive(Default)]
pub struct SsoQuery;

#[Object]
impl SsoQuery {
    /// The single sign-on group rules (admins).
    async fn sso_group_rules(&self, ctx: &Context<'_>) -> Result<Vec<SsoGroupRule>> {
        let (caller, db) = session(ctx)?;
        caller.require_admin()?;
        Ok(list_rules(db).await?.into_iter().map(SsoGroupRule).collect())
    }
}

#[derive(InputObject)]
pub struct CreateSsoGroupRuleInput {
    /// The group's name in the identity provider's groups claim.
    pub group: String,
    /// With `role`: the slice the group's members join.
    pub slice_id: Option<ID>,
    pub role: Option<SliceRole>,
    /// Instead: the group's members are admins.
    #[graphql(default)]
    pub grants_admin: bool,
}

#[derive(InputObject)]
pub struct SsoGroupRuleRef {
    pub id: ID,
}

payload!(SsoGroupRulePayload, rule: SsoGroupRule);

#[derive(Default)]
pub struct SsoMutation;

#[Object]
impl SsoMutation {
    /// Adds a group rule (admins); it applies at each member's next sign-in.
    async fn create_sso_group_rule(&self, ctx: &Context<'_>, input: CreateSsoGroupRuleInput) -> async_graphql::Result<SsoGroupRulePayload> {
        let result = async {
            let (caller, db) = session(ctx)?;
            caller.require_admin()?;
            let slice_id = input.slice_id.as_ref().map(|id| ids::decode("sliceId", id, Kind::Slice)).transpose()?;
            let new = NewRule { group: input.group, slice_id, role: input.role, grants_admin: input.grants_admin };
            create_rule(db, new).await.map(SsoGroupRule)
        }
        .await;
        SsoGroupRulePayload::from_result(result)
    }

    /// Deletes a group rule (admins); what it granted goes at each member's next sign-in.
    async fn delete_sso_group_rule(&self, ctx: &Context<'_>, input: SsoGroupRuleRef) -> async_graphql::Result<SsoGroupRulePayload> {
        let result = async {
            let (caller, db) = session(ctx)?;
            caller.require_admin()?;
            let id = ids::decode("id", &input.id, Kind::SsoGroupRule)?;
            delete_rule(db, id).await.map(SsoGroupRule)
        }
        .await;
        SsoGroupRulePayload::from_result(result)
    }
}
