//! Users and the `viewer` (who the token speaks for).

use egs_domain::user::service;

use crate::ids::{self, Kind};
use crate::slice::Slice;
use crate::token::AccessToken;
use crate::{loaded, loaders, payload, session};
use async_graphql::{Context, ID, InputObject, Object};
use chrono::{DateTime, Utc};
use egs_domain::error::Result;
use egs_entities::{Role, SliceRole, access_token, slice_member, user};
use sea_orm::EntityTrait;

/// A person (or service account) that holds tokens and slice memberships.
pub struct User(pub user::Model);

#[Object]
impl User {
    pub async fn id(&self) -> ID {
        ids::encode(Kind::User, self.0.id)
    }
    async fn name(&self) -> &str {
        &self.0.name
    }
    async fn email(&self) -> Option<&str> {
        self.0.email.as_deref()
    }
    async fn role(&self) -> Role {
        self.0.role
    }
    async fn created_at(&self) -> DateTime<Utc> {
        self.0.created_at
    }
    /// Slices this user belongs to, with their role (as far as the caller may see).
    async fn memberships(&self, ctx: &Context<'_>) -> Result<Vec<Membership>> {
        crate::boxed(async move {
            let (caller, db) = session(ctx)?;
            Ok(service::list_memberships(db, caller, self.0.id).await?.into_iter().map(Membership).collect())
        })
        .await
    }
}

/// One slice a user belongs to, and their role there.
pub struct Membership(pub slice_member::Model);

#[Object]
impl Membership {
    async fn slice(&self, ctx: &Context<'_>) -> Result<Option<Slice>> {
        Ok(loaded(loaders(ctx)?.slice().load_one(self.0.slice_id).await)?.map(Slice))
    }
    async fn role(&self) -> SliceRole {
        self.0.role
    }
}

/// Who the presented token speaks for.
pub struct Viewer;

#[Object]
impl Viewer {
    /// The user's id, or the token's for agents.
    async fn id(&self, ctx: &Context<'_>) -> Result<ID> {
        let (caller, _) = session(ctx)?;
        Ok(match caller.record.user_id {
            Some(id) => ids::encode(Kind::User, id),
            None => ids::encode(Kind::AccessToken, caller.record.token_id),
        })
    }
    async fn name(&self, ctx: &Context<'_>) -> Result<String> {
        Ok(session(ctx)?.0.actor().to_owned())
    }
    async fn role(&self, ctx: &Context<'_>) -> Result<Role> {
        Ok(session(ctx)?.0.role())
    }
    async fn user(&self, ctx: &Context<'_>) -> Result<Option<User>> {
        let (caller, _) = session(ctx)?;
        let Some(id) = caller.record.user_id else { return Ok(None) };
        Ok(loaded(loaders(ctx)?.user().load_one(id).await)?.map(User))
    }
    /// Slices the token may act in, with the effective role.
    async fn memberships(&self, ctx: &Context<'_>) -> Result<Vec<Membership>> {
        let (caller, db) = session(ctx)?;
        let Some(id) = caller.record.user_id else { return Ok(Vec::new()) };
        Ok(service::list_memberships(db, caller, id).await?.into_iter().map(Membership).collect())
    }
    /// The token used for this request.
    async fn token(&self, ctx: &Context<'_>) -> Result<Option<AccessToken>> {
        let (caller, db) = session(ctx)?;
        Ok(access_token::Entity::find_by_id(caller.record.token_id).one(db).await?.map(AccessToken))
    }
}

#[derive(Default)]
pub struct UserQuery;

#[Object]
impl UserQuery {
    /// Who the token speaks for.
    async fn viewer(&self, ctx: &Context<'_>) -> Result<Viewer> {
        session(ctx)?;
        Ok(Viewer)
    }

    /// All users (admin).
    async fn users(&self, ctx: &Context<'_>) -> Result<Vec<User>> {
        let (caller, db) = session(ctx)?;
        Ok(service::list_users(db, caller).await?.into_iter().map(User).collect())
    }
}

#[derive(InputObject)]
pub struct CreateUserInput {
    /// 1–64 lowercase letters, digits, `.`, `_`, `-`.
    pub name: String,
    pub email: Option<String>,
    /// `USER` (default) or `ADMIN`.
    #[graphql(default_with = "Role::User")]
    pub role: Role,
}

payload!(CreateUserPayload, user: User);

#[derive(Default)]
pub struct UserMutation;

#[Object]
impl UserMutation {
    /// Creates a user (admin). Give them slice roles with `addSliceMember` and a token with `createToken`.
    async fn create_user(&self, ctx: &Context<'_>, input: CreateUserInput) -> async_graphql::Result<CreateUserPayload> {
        let (caller, db) = session(ctx)?;
        let input = service::CreateUser { name: input.name, email: input.email, role: input.role };
        let made = service::create_user(db, caller, input).await;
        if let Ok(made) = &made {
            egs_domain::slice::personal::welcome(db, made).await;
        }
        CreateUserPayload::from_result(made.map(User))
    }
}
