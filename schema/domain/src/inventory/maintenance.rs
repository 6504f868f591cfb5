//! Taking nodes out for maintenance (admins).
//!
//! - **Cordon**: no new GPR gets the node. A GPR holding it keeps it until its window ends; then
//!   the node reads `CORDONED` instead of going back to the pool.
//! - **Drain**: cordon, and the node reads `DRAINING` while a GPR still holds it: either until its
//!   window ends, or (`evict`) its GPR is evicted at once and goes back to the queue at its
//!   priority, with the reason its owner sees.
//! - **Uncordon**: the node is the pool's again (or its holder's, if one still holds it).

use crate::auth::Caller;
use crate::error::{Error, Result};
use chrono::Utc;
use egs_entities::{GprPhase, NodeState, gpr, node};
use sea_orm::sea_query::{Expr, ExprTrait, SimpleExpr};
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, QueryFilter, Set, TransactionTrait};

/// The state of a node whose GPR just gave it back: the pool's, unless it is cordoned.
pub fn freed_state() -> SimpleExpr {
    Expr::case(Expr::col(node::Column::CordonedAt).is_null(), Expr::value(NodeState::Available.as_str()))
        .finally(Expr::value(NodeState::Cordoned.as_str()))
        .into()
}

/// What a drain does to the GPR holding the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Drain {
    /// Only cordon: a holder keeps the node.
    No,
    /// The holder runs out its window; the node reads `DRAINING` meanwhile.
    Wait,
    /// The holder is evicted now and requeued.
    Evict,
}

/// Cordons (and drains) a node; cordoning again changes the reason.
pub async fn cordon_node(db: &DatabaseConnection, caller: &Caller, id: i64, reason: &str, drain: Drain) -> Result<node::Model> {
    caller.require_admin()?;
    let reason = crate::validate::reason("reason", reason, "whoever uses the node")?;
    let txn = db.begin().await?;
    let updated = cordon_in(&txn, id, &reason, caller.actor(), drain).await?;
    txn.commit().await?;
    Ok(updated)
}

/// [`cordon_node`] inside `txn`, for `actor` (an admin, or the leader starting a maintenance
/// window in its fenced transaction).
pub(crate) async fn cordon_in(txn: &DatabaseTransaction, id: i64, reason: &str, actor: &str, drain: Drain) -> Result<node::Model> {
    let found = node::Entity::find_by_id(id).one(txn).await?.ok_or(Error::NotFound("node"))?;
    let holder = match found.allocated_gpr_id {
        Some(gpr_id) => gpr::Entity::find_by_id(gpr_id).one(txn).await?,
        None => None,
    };
    let now = Utc::now();
    let state = match (&holder, drain) {
        (None, _) => NodeState::Cordoned,
        (Some(_), Drain::No) => found.state,
        (Some(_), Drain::Wait | Drain::Evict) => NodeState::Draining,
    };
    if let (Some(holder), Drain::Evict) = (&holder, drain) {
        if holder.phase != GprPhase::Provisioned {
            return Err(Error::conflict(
                "evict",
                format!(
                    "GPR `{}` on this node is {}; evict it once it is PROVISIONED, or drain without evicting",
                    holder.name,
                    holder.phase.as_str()
                ),
            ));
        }
        let said = format!("node `{}` is drained for maintenance: {reason}", found.name);
        crate::gpr::service::evict_in(txn, holder, &said, actor).await?;
    }
    let row = node::ActiveModel {
        state: Set(state),
        cordoned_at: Set(Some(found.cordoned_at.unwrap_or(now))),
        cordon_reason: Set(Some(reason.to_owned())),
        cordoned_by: Set(Some(actor.to_owned())),
        updated_at: Set(now),
        ..Default::default()
    };
    let updated = unless_handed_over(node::Entity::update_many().set(row), &found).exec_with_returning(txn).await?;
    updated.into_iter().next().ok_or_else(|| changed_meanwhile(&found))
}

/// Only while the node has the holder it was read with (the leader may hand a free node to a
/// GPR, or take one back, at any moment).
fn unless_handed_over(update: sea_orm::UpdateMany<node::Entity>, found: &node::Model) -> sea_orm::UpdateMany<node::Entity> {
    let update = update.filter(node::Column::Id.eq(found.id));
    match found.allocated_gpr_id {
        Some(holder) => update.filter(node::Column::AllocatedGprId.eq(holder)),
        None => update.filter(node::Column::AllocatedGprId.is_null()),
    }
}

fn changed_meanwhile(found: &node::Model) -> Error {
    Error::conflict("id", format!("node `{}` changed hands while this was decided; try again", found.name))
}

/// Puts a cordoned node back in the pool (or back to its holder).
pub async fn uncordon_node(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<node::Model> {
    caller.require_admin()?;
    let found = node::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("node"))?;
    uncordon_found(db, found).await
}

/// [`uncordon_node`] on a node already read (inside the caller's transaction, if any).
pub(crate) async fn uncordon_found(db: &impl ConnectionTrait, found: node::Model) -> Result<node::Model> {
    if found.cordoned_at.is_none() && !matches!(found.state, NodeState::Cordoned | NodeState::Draining) {
        return Ok(found);
    }
    let state = if found.allocated_gpr_id.is_some() { NodeState::Reserved } else { NodeState::Available };
    let row = node::ActiveModel {
        state: Set(state),
        cordoned_at: Set(None),
        cordon_reason: Set(None),
        cordoned_by: Set(None),
        updated_at: Set(Utc::now()),
        ..Default::default()
    };
    let updated = unless_handed_over(node::Entity::update_many().set(row), &found).exec_with_returning(db).await?;
    updated.into_iter().next().ok_or_else(|| changed_meanwhile(&found))
}
