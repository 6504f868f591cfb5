//! What-if for admins: the changes they weigh (nodes added or removed in a pool, a node
//! cordoned or planned out, a waiting GPR raised or resized, a GPR not yet asked for), checked,
//! then answered by the scheduler on a copy of the queue (see `egs_scheduler::Scheduler::
//! what_if`): which promises and expected starts would move, and by how much. Nothing changes.

use super::reads::unstored_request;
use super::spec::GprSpec;
use crate::auth::{Caller, Principal};
use crate::error::{Error, Result, UserError};
use crate::inventory::service::{NodeQuery, nodes_select, summarize_pools};
use crate::ports::Planner;
use chrono::{DateTime, Utc};
use egs_entities::{GprPhase, gpr, node};
use egs_scheduler::{MaintenanceWindow, PoolKey, WhatIfChange};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use std::collections::BTreeMap;

/// Changes one question may weigh.
pub const MAX_CHANGES: usize = 20;
/// Nodes one change may add or remove.
pub const MAX_NODES: u32 = 1_000;
/// The id the GPR not yet asked for goes by in the answer.
pub const NEW_GPR: i64 = i64::MAX - 1;

/// A change an admin weighs.
#[derive(Clone, Debug)]
pub enum Asked {
    AddNodes { cluster_id: i64, instance_type: String, gpu_shape: String, count: u32 },
    RemoveNodes { cluster_id: i64, instance_type: String, gpu_shape: String, count: u32 },
    Cordon { node_id: i64 },
    Maintenance { node_id: i64, starts_at: DateTime<Utc>, ends_at: DateTime<Utc> },
    Priority { gpr_id: i64, priority: i32 },
    Size { gpr_id: i64, node_count: i32, duration_secs: i64 },
    NewGpr { spec: Box<GprSpec> },
}

/// How one GPR's start would move; `gpr` is `None` for the GPR not yet asked for.
#[derive(Clone, Debug)]
pub struct Moved {
    pub gpr: Option<gpr::Model>,
    pub promise_before: Option<DateTime<Utc>>,
    pub promise_after: Option<DateTime<Utc>>,
    pub expected_before: Option<DateTime<Utc>>,
    pub expected_after: Option<DateTime<Utc>>,
}

/// Answers `asked` (admins), soonest start first. Each change is checked first; a problem
/// names its change (`changes.N.…`) and nothing is asked.
pub async fn what_if(db: &DatabaseConnection, caller: &Caller, planner: &dyn Planner, asked: Vec<Asked>, now: DateTime<Utc>) -> Result<Vec<Moved>> {
    caller.require_admin()?;
    if asked.is_empty() || asked.len() > MAX_CHANGES {
        return Err(Error::invalid("changes", format!("weigh 1 to {MAX_CHANGES} changes")));
    }
    if asked.iter().filter(|a| matches!(a, Asked::NewGpr { .. })).count() > 1 {
        return Err(Error::invalid("changes", "weigh at most one GPR not yet asked for"));
    }
    // Only added nodes need their pool's shape: the node list is read for those alone.
    let pools = if asked.iter().any(|a| matches!(a, Asked::AddNodes { .. })) {
        summarize_pools(&nodes_select(&NodeQuery::default()).all(db).await?)
    } else {
        Vec::new()
    };
    let mut changes = Vec::with_capacity(asked.len());
    for (i, change) in asked.into_iter().enumerate() {
        let at = |field: &str| format!("changes.{i}.{field}");
        let wrong = |field: &str, message: String| Error::User(vec![UserError::invalid(&at(field), message)]);
        changes.push(match change {
            Asked::AddNodes { count, .. } | Asked::RemoveNodes { count, .. } if !(1..=MAX_NODES).contains(&count) => {
                return Err(wrong("count", format!("from 1 to {MAX_NODES} nodes")));
            }
            Asked::AddNodes { cluster_id, instance_type, gpu_shape, count } => {
                let Some(pool) = pools.iter().find(|p| p.cluster_id == cluster_id && p.instance_type == instance_type && p.gpu_shape == gpu_shape)
                else {
                    return Err(wrong("pool", "no such pool (cluster, instance type and GPU shape of nodes EGS has)".into()));
                };
                WhatIfChange::AddNodes {
                    pool: PoolKey { cluster: cluster_id, instance_type, gpu_shape },
                    count,
                    gpus: pool.gpus_per_node.max(0) as u32,
                    gpu_memory_mib: pool.gpu_memory_mib,
                }
            }
            Asked::RemoveNodes { cluster_id, instance_type, gpu_shape, count } => {
                WhatIfChange::RemoveNodes { pool: PoolKey { cluster: cluster_id, instance_type, gpu_shape }, count }
            }
            Asked::Cordon { node_id } => {
                node::Entity::find_by_id(node_id).one(db).await?.ok_or_else(|| wrong("nodeId", "no such node".into()))?;
                WhatIfChange::Cordon { node: node_id }
            }
            Asked::Maintenance { node_id, starts_at, ends_at } => {
                node::Entity::find_by_id(node_id).one(db).await?.ok_or_else(|| wrong("nodeId", "no such node".into()))?;
                if ends_at <= starts_at.max(now) {
                    return Err(wrong("endsAt", "must be after startsAt and now".into()));
                }
                WhatIfChange::Window { window: MaintenanceWindow { node: node_id, start: starts_at.timestamp(), end: ends_at.timestamp(), id: 0 } }
            }
            Asked::Priority { gpr_id, priority } => {
                waiting(db, gpr_id, &at("gprId")).await?;
                if !(1..=300).contains(&priority) {
                    return Err(wrong("priority", "from 1 to 300".into()));
                }
                WhatIfChange::Priority { gpr: gpr_id, priority }
            }
            Asked::Size { gpr_id, node_count, duration_secs } => {
                waiting(db, gpr_id, &at("gprId")).await?;
                if !(1..=MAX_NODES as i32).contains(&node_count) {
                    return Err(wrong("nodeCount", format!("from 1 to {MAX_NODES}")));
                }
                if !(60..=super::spec::MAX_DURATION_SECS).contains(&duration_secs) {
                    return Err(wrong("duration", "from a minute to the longest window a GPR may have".into()));
                }
                WhatIfChange::Resize { gpr: gpr_id, nodes: node_count as u32, duration: duration_secs }
            }
            Asked::NewGpr { mut spec } => WhatIfChange::Submit { request: unstored_request(db, &mut spec, NEW_GPR, now).await? },
        });
    }
    let moves = planner.what_if(Principal::of(Some(caller)), db, changes, now).await?;
    let ids: Vec<i64> = moves.iter().map(|m| m.gpr).filter(|id| *id != NEW_GPR).collect();
    let rows: BTreeMap<i64, gpr::Model> =
        gpr::Entity::find().filter(gpr::Column::Id.is_in(ids)).all(db).await?.into_iter().map(|g| (g.id, g)).collect();
    let at = |t: Option<i64>| t.and_then(|t| DateTime::from_timestamp(t, 0));
    Ok(moves
        .into_iter()
        .filter_map(|m| {
            let gpr = if m.gpr == NEW_GPR { None } else { Some(rows.get(&m.gpr)?.clone()) };
            Some(Moved {
                gpr,
                promise_before: at(m.promise_before),
                promise_after: at(m.promise_after),
                expected_before: at(m.expected_before),
                expected_after: at(m.expected_after),
            })
        })
        .collect())
}

/// GPR `id`, which must be waiting (queued) for a what-if to move it.
async fn waiting(db: &DatabaseConnection, id: i64, field: &str) -> Result<gpr::Model> {
    let found = gpr::Entity::find_by_id(id).one(db).await?.ok_or_else(|| Error::invalid(field, "no such GPR"))?;
    if found.phase != GprPhase::Queued {
        return Err(Error::invalid(field, format!("only a waiting (QUEUED) GPR can be weighed; this one is {}", found.phase.as_str())));
    }
    Ok(found)
}
