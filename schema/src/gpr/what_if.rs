//! `whatIf` (admins): the queue after changes an admin is weighing, answered on a copy of the
//! scheduler. The rules are `egs_domain::gpr::what_if`.

use super::{Gpr, WaitTimeInput};
use crate::ids::{self, Kind};
use crate::scalars::Duration;
use crate::{app, session};
use async_graphql::{Context, ID, InputObject, Object, SimpleObject};
use chrono::{DateTime, Utc};
use egs_domain::error::{Error, Result};
use egs_domain::gpr::what_if::{self, Asked, Moved};

/// Nodes of one pool (cluster, instance type, GPU shape) to add or take away.
#[derive(InputObject)]
pub struct WhatIfNodesInput {
    pub cluster_id: ID,
    pub instance_type: String,
    pub gpu_shape: String,
    /// 1 to 1,000.
    pub count: i32,
}

/// A node planned out of service.
#[derive(InputObject)]
pub struct WhatIfWindowInput {
    pub node_id: ID,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
}

/// A waiting GPR at another priority.
#[derive(InputObject)]
pub struct WhatIfPriorityInput {
    pub gpr_id: ID,
    /// 1 to 300.
    pub priority: i32,
}

/// A waiting GPR of another size.
#[derive(InputObject)]
pub struct WhatIfSizeInput {
    pub gpr_id: ID,
    pub node_count: i32,
    pub duration: Duration,
}

/// One change to weigh: give exactly one of the fields.
#[derive(InputObject)]
pub struct WhatIfChangeInput {
    /// More nodes in a pool (as its nodes are: GPUs and memory).
    pub add_nodes: Option<WhatIfNodesInput>,
    /// Fewer: free nodes first, then those whose holders finish soonest (they keep them to the
    /// end of their windows).
    pub remove_nodes: Option<WhatIfNodesInput>,
    /// A node cordoned (its holder keeps it to the end of its window).
    pub cordon_node: Option<ID>,
    /// A maintenance window.
    pub maintenance: Option<WhatIfWindowInput>,
    /// A waiting GPR raised (or lowered).
    pub gpr_priority: Option<WhatIfPriorityInput>,
    /// A waiting GPR resized.
    pub gpr_size: Option<WhatIfSizeInput>,
    /// A GPR not yet asked for, as "Get wait time" takes it.
    pub new_gpr: Option<WaitTimeInput>,
}

#[derive(InputObject)]
pub struct WhatIfInput {
    /// 1 to 20 changes, weighed together.
    pub changes: Vec<WhatIfChangeInput>,
}

/// How one GPR's start would move.
#[derive(SimpleObject)]
pub struct WhatIfMove {
    /// The GPR; `null` for the one not yet asked for.
    pub gpr: Option<Gpr>,
    /// Its promise (`startNoLaterThan`) now and after the changes; `null`: it fits nowhere.
    pub promise_before: Option<DateTime<Utc>>,
    pub promise_after: Option<DateTime<Utc>>,
    /// Its expected start now and after.
    pub expected_before: Option<DateTime<Utc>>,
    pub expected_after: Option<DateTime<Utc>>,
    /// Seconds the promise moves: positive later, negative earlier; `null` when it appears or goes.
    pub promise_shift_seconds: Option<i64>,
}

impl From<Moved> for WhatIfMove {
    fn from(m: Moved) -> Self {
        let promise_shift_seconds = m.promise_before.zip(m.promise_after).map(|(before, after)| (after - before).num_seconds());
        Self {
            gpr: m.gpr.map(Gpr),
            promise_before: m.promise_before,
            promise_after: m.promise_after,
            expected_before: m.expected_before,
            expected_after: m.expected_after,
            promise_shift_seconds,
        }
    }
}

/// A change as decoded: ready, or a GPR not yet asked for, still to resolve against its
/// template.
enum Decoded {
    Ready(Asked),
    NewGpr(Box<egs_domain::gpr::spec::GprAsk>),
}

fn asked(i: usize, change: WhatIfChangeInput) -> Result<Decoded> {
    let at = |field: &str| format!("changes.{i}.{field}");
    let nodes = |field: &str, n: WhatIfNodesInput| -> Result<(i64, String, String, u32)> {
        let cluster = ids::decode(&at(&format!("{field}.clusterId")), &n.cluster_id, Kind::Cluster)?;
        Ok((cluster, n.instance_type, n.gpu_shape, n.count.max(0) as u32))
    };
    let WhatIfChangeInput { add_nodes, remove_nodes, cordon_node, maintenance, gpr_priority, gpr_size, new_gpr } = change;
    let given = [
        add_nodes.is_some(),
        remove_nodes.is_some(),
        cordon_node.is_some(),
        maintenance.is_some(),
        gpr_priority.is_some(),
        gpr_size.is_some(),
        new_gpr.is_some(),
    ];
    if given.iter().filter(|g| **g).count() != 1 {
        return Err(Error::invalid(&format!("changes.{i}"), "give exactly one change"));
    }
    Ok(Decoded::Ready(if let Some(n) = add_nodes {
        let (cluster_id, instance_type, gpu_shape, count) = nodes("addNodes", n)?;
        Asked::AddNodes { cluster_id, instance_type, gpu_shape, count }
    } else if let Some(n) = remove_nodes {
        let (cluster_id, instance_type, gpu_shape, count) = nodes("removeNodes", n)?;
        Asked::RemoveNodes { cluster_id, instance_type, gpu_shape, count }
    } else if let Some(id) = cordon_node {
        Asked::Cordon { node_id: ids::decode(&at("cordonNode"), &id, Kind::GpuNode)? }
    } else if let Some(w) = maintenance {
        Asked::Maintenance { node_id: ids::decode(&at("maintenance.nodeId"), &w.node_id, Kind::GpuNode)?, starts_at: w.starts_at, ends_at: w.ends_at }
    } else if let Some(p) = gpr_priority {
        Asked::Priority { gpr_id: ids::decode(&at("gprPriority.gprId"), &p.gpr_id, Kind::Gpr)?, priority: p.priority }
    } else if let Some(s) = gpr_size {
        Asked::Size { gpr_id: ids::decode(&at("gprSize.gprId"), &s.gpr_id, Kind::Gpr)?, node_count: s.node_count, duration_secs: s.duration.secs() }
    } else {
        let ask =
            new_gpr.map(WaitTimeInput::into_ask).transpose()?.ok_or_else(|| Error::invalid(&format!("changes.{i}"), "give exactly one change"))?;
        return Ok(Decoded::NewGpr(Box::new(ask)));
    }))
}

#[derive(Default)]
pub struct WhatIfQuery;

#[Object]
impl WhatIfQuery {
    /// What would move if the changes were made (admins): every waiting GPR whose promise or
    /// expected start would change, soonest first, with both. Answered on a copy of the
    /// scheduler; nothing changes. A planning question: it costs 1,000 of the query budget.
    #[graphql(complexity = "crate::limits::PLANNING_COMPLEXITY + child_complexity")]
    async fn what_if(&self, ctx: &Context<'_>, input: WhatIfInput) -> Result<Vec<WhatIfMove>> {
        let (caller, db) = session(ctx)?;
        caller.require_admin()?;
        let scheduler = app(ctx)?.scheduler.as_ref();
        let now = scheduler.clock.now();
        let mut changes = Vec::with_capacity(input.changes.len().min(what_if::MAX_CHANGES + 1));
        for (i, change) in input.changes.into_iter().take(what_if::MAX_CHANGES + 1).enumerate() {
            changes.push(match asked(i, change)? {
                Decoded::NewGpr(ask) => Asked::NewGpr { spec: Box::new(egs_domain::template::service::resolve_ask(db, caller, *ask).await?) },
                Decoded::Ready(asked) => asked,
            });
        }
        Ok(what_if::what_if(db, caller, scheduler, changes, now).await?.into_iter().map(WhatIfMove::from).collect())
    }
}
