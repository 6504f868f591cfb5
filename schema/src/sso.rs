//! Single sign-on's group rules as the API shows them: `ssoGroupRules`, `createSsoGroupRule`,
//! `deleteSsoGroupRule`. The rules and what a sign-in does are `egs_domain::sso`.

use crate::ids::{self, Kind};
use crate::slice::Slice;
use crate::{loaded, loaders, payload, session};
use async_graphql::{Context, ID, InputObject, Object};
use chrono::{DateTime, Utc};
use egs_domain::error::Result;
use egs_domain::sso::{NewRule, create_rule, delete_rule, list_rules};
use egs_entities::{SliceRole, sso_group_rule as rule};

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
        Ok(loaded(loaders(ctx)?.slice().load_one(id).await)?.map(Slice))
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
        Ok(list_rules(db, caller).await?.into_iter().map(SsoGroupRule).collect())
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
