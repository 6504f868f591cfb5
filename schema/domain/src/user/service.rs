//! Users: people who hold tokens and slice memberships.

use crate::auth::Caller;
use crate::error::{Error, Result};
use crate::validate;
use chrono::Utc;
use egs_entities::{Role, slice_member, user};
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, Set};

pub struct CreateUser {
    pub name: String,
    pub email: Option<String>,
    pub role: Role,
}

/// User names: 1–64 of lowercase letters, digits, `.`, `_`, `-` (they appear as event actors).
fn check_user_name(name: &str, errors: &mut Vec<crate::error::UserError>) {
    let ok =
        !name.is_empty() && name.len() <= 64 && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_' | b'-'));
    if !ok {
        errors.push(crate::error::UserError::invalid(
            "name",
            format!("`{name}` is not a valid user name: use 1–64 lowercase letters, digits, `.`, `_` or `-`"),
        ));
    }
}

/// The users whose e-mail address is `email`, ignoring case: at most one unless stored before
/// addresses were unique.
pub async fn holders_of_email(db: &impl ConnectionTrait, email: &str) -> Result<Vec<i64>> {
    use sea_orm::QuerySelect;
    use sea_orm::sea_query::{Expr, ExprTrait, Func};
    let lowered = Expr::expr(Func::lower(Expr::col((user::Entity, user::Column::Email))));
    Ok(user::Entity::find().select_only().column(user::Column::Id).filter(lowered.eq(email.trim().to_lowercase())).into_tuple().all(db).await?)
}

/// Creates a user without checking who asks: for bootstrap and the CLI.
pub async fn insert_user(db: &impl ConnectionTrait, input: CreateUser) -> Result<user::Model> {
    let mut errors = Vec::new();
    check_user_name(&input.name, &mut errors);
    if let Some(email) = &input.email
        && (email.len() > 254 || !email.contains('@'))
    {
        errors.push(crate::error::UserError::invalid("email", "is not an email address"));
    }
    if input.role == Role::Agent {
        errors.push(crate::error::UserError::invalid("role", "users are ADMIN or USER; agents get agent tokens, not users"));
    }
    validate::finish(errors)?;
    if user::Entity::find().filter(user::Column::Name.eq(input.name.as_str())).count(db).await? > 0 {
        return Err(Error::conflict("name", format!("a user named `{}` already exists", input.name)));
    }
    if let Some(email) = &input.email
        && !holders_of_email(db, email).await?.is_empty()
    {
        return Err(Error::conflict("email", "another user has this e-mail address (addresses are unique, ignoring case)"));
    }
    Ok(user::ActiveModel { name: Set(input.name), email: Set(input.email), role: Set(input.role), created_at: Set(Utc::now()), ..Default::default() }
        .insert(db)
        .await?)
}

/// Creates a user (admins). Their private workspace, where the policy gives one, is
/// `slice::personal::welcome`'s to make.
pub async fn create_user(db: &DatabaseConnection, caller: &Caller, input: CreateUser) -> Result<user::Model> {
    caller.require_admin()?;
    insert_user(db, input).await
}

pub async fn find_user_by_name(db: &impl ConnectionTrait, name: &str) -> Result<Option<user::Model>> {
    Ok(user::Entity::find().filter(user::Column::Name.eq(name)).one(db).await?)
}

/// Users are visible to admins, and each user to themself.
pub async fn find_user(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<user::Model> {
    if !caller.is_admin() && caller.record.user_id != Some(id) {
        return Err(Error::NotFound("user"));
    }
    user::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("user"))
}

pub async fn list_users(db: &DatabaseConnection, caller: &Caller) -> Result<Vec<user::Model>> {
    caller.require_admin()?;
    Ok(user::Entity::find().order_by_asc(user::Column::Name).all(db).await?)
}

/// A user's memberships, as the caller may see them (scoped tokens see only their scopes).
pub async fn list_memberships(db: &DatabaseConnection, caller: &Caller, user_id: i64) -> Result<Vec<slice_member::Model>> {
    let rows =
        slice_member::Entity::find().filter(slice_member::Column::UserId.eq(user_id)).order_by_asc(slice_member::Column::SliceId).all(db).await?;
    if caller.is_admin() {
        return Ok(rows);
    }
    // Slices the caller can see; for the caller's own memberships, the role its token may
    // use there (a scoped token's, which may be less than the membership's); for another
    // user's, that user's role.
    let own = caller.record.user_id == Some(user_id);
    let mut visible = Vec::with_capacity(rows.len());
    for mut row in rows {
        if let Some(role) = caller.slice_role(db, row.slice_id).await? {
            if own {
                row.role = role;
            }
            visible.push(row);
        }
    }
    Ok(visible)
}
