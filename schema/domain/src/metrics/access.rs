//! Who reads which GPU's metrics. Reading follows slice isolation: admins read every GPU's
//! metrics; a user reads those of GPUs on nodes held by a GPR of one of their slices, from the
//! node's assignment to that GPR on (never what the node's previous holder ran). Anything else
//! reads as missing.

use super::ingest::time_of;
use super::sample::Sample;
use super::store::{Allocation, Holder};
use crate::auth::{Caller, Visible};
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use egs_entities::{gpr, gpr_node, gpu, node};
use sea_orm::sea_query::Query;
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect};
use std::collections::{HashMap, HashSet};

/// Which of a node's samples a caller may read.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Access {
    /// Admins: everything.
    All,
    /// A member of the slice holding the node: samples from its assignment on, so a slice
    /// never reads what the node's previous holder ran.
    Since(DateTime<Utc>),
    Nothing,
}

impl Access {
    /// How a user's access to a node held by `holder` (with `holder_visible`: the caller may
    /// see its slice) reads; admins get [`Access::All`] before this.
    pub fn of(holder: Option<Holder>, holder_visible: bool) -> Self {
        match holder {
            Some(h) if holder_visible => Self::Since(time_of(h.since)),
            _ => Self::Nothing,
        }
    }

    /// Whether a sample taken at `at` may be read.
    pub fn allows(self, at: Option<DateTime<Utc>>) -> bool {
        match self {
            Self::All => true,
            Self::Since(since) => at.is_some_and(|at| at >= since),
            Self::Nothing => false,
        }
    }
}

/// Clears a GPU's latest sample (for a caller who may not read it): it reads as never reported.
pub fn redact(g: &mut gpu::Model) {
    g.last_sample_at = None;
    g.last_busy_at = None;
    g.latest_util = None;
    g.latest_mem_util = None;
    g.latest_mem_used_mib = None;
    g.latest_temperature_c = None;
    g.latest_power_w = None;
    g.latest_sm_clock_mhz = None;
    g.latest_xid_errors = None;
    g.latest_ecc_corrected = None;
    g.latest_ecc_uncorrected = None;
}

/// Which GPR (and slice) holds each held node, and since when: one statement per table, for
/// all nodes or only `nodes`.
pub async fn allocation(db: &impl ConnectionTrait, nodes: Option<Vec<i64>>) -> Result<Allocation> {
    let mut held = node::Entity::find().select_only().column(node::Column::Id).column(node::Column::AllocatedGprId);
    held = held.filter(node::Column::AllocatedGprId.is_not_null());
    if let Some(nodes) = nodes {
        held = held.filter(node::Column::Id.is_in(nodes));
    }
    let held: Vec<(i64, Option<i64>)> = held.into_tuple().all(db).await?;
    let gpr_ids: Vec<i64> = held.iter().filter_map(|(_, g)| *g).collect::<HashSet<_>>().into_iter().collect();
    if gpr_ids.is_empty() {
        return Ok(Allocation::new());
    }
    let slices: HashMap<i64, i64> = gpr::Entity::find()
        .select_only()
        .column(gpr::Column::Id)
        .column(gpr::Column::SliceId)
        .filter(gpr::Column::Id.is_in(gpr_ids.clone()))
        .into_tuple::<(i64, i64)>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let since: HashMap<(i64, i64), DateTime<Utc>> = gpr_node::Entity::find()
        .filter(gpr_node::Column::GprId.is_in(gpr_ids))
        .all(db)
        .await?
        .into_iter()
        .map(|l| ((l.gpr_id, l.node_id), l.assigned_at))
        .collect();
    Ok(held
        .into_iter()
        .filter_map(|(node_id, gpr_id)| {
            let gpr_id = gpr_id?;
            // No assignment row would be an inconsistency: read nothing rather than too much.
            let since = since.get(&(gpr_id, node_id))?.timestamp();
            Some((node_id, Holder { gpr_id, slice_id: *slices.get(&gpr_id)?, since }))
        })
        .collect())
}

/// Per node, what a user may read of its samples; `None` means everything (admins).
pub async fn readable(db: &DatabaseConnection, caller: &Caller, nodes: Option<Vec<i64>>) -> Result<Option<HashMap<i64, DateTime<Utc>>>> {
    caller.require_person()?;
    let slices = match caller.visible_slices(db).await? {
        Visible::All => return Ok(None),
        Visible::Only(slices) => slices,
    };
    if slices.is_empty() {
        return Ok(Some(HashMap::new()));
    }
    let held = allocation(db, nodes).await?;
    Ok(Some(held.into_iter().filter(|(_, h)| slices.binary_search(&h.slice_id).is_ok()).map(|(node, h)| (node, time_of(h.since))).collect()))
}

/// What a metrics query or subscription is about.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    Gpu(i64),
    Node(i64),
    /// The nodes a GPR holds now.
    Gpr(i64),
    /// The nodes the slice's GPRs hold now.
    Slice(i64),
}

/// The GPUs of `scope`, when the caller may read their metrics, with samples the caller may
/// not read (a previous holder's) cleared. A GPU or node the caller may not read, and a GPR or
/// slice they may not see, is `NOT_FOUND`, exactly like a missing one.
pub async fn scope_gpus(db: &DatabaseConnection, caller: &Caller, scope: Scope) -> Result<Vec<gpu::Model>> {
    caller.require_person()?;
    let held_by = |condition: Condition| {
        let nodes = Query::select().column(node::Column::Id).from(node::Entity).cond_where(condition).to_owned();
        gpu::Entity::find().filter(gpu::Column::NodeId.in_subquery(nodes))
    };
    let (select, node, missing) = match scope {
        Scope::Gpu(id) => {
            let gpu = gpu::Entity::find_by_id(id).one(db).await?.ok_or(Error::NotFound("GPU"))?;
            (gpu::Entity::find_by_id(id), Some(gpu.node_id), "GPU")
        }
        Scope::Node(id) => (gpu::Entity::find().filter(gpu::Column::NodeId.eq(id)), Some(id), "node"),
        Scope::Gpr(id) => {
            let gpr = crate::gpr::reads::find_gpr(db, caller, id).await?;
            (held_by(Condition::all().add(node::Column::AllocatedGprId.eq(gpr.id))), None, "GPR")
        }
        Scope::Slice(id) => {
            let slice = crate::slice::service::find_slice(db, caller, id).await?;
            let gprs = Query::select().column(gpr::Column::Id).from(gpr::Entity).and_where(gpr::Column::SliceId.eq(slice.id)).to_owned();
            (held_by(Condition::all().add(node::Column::AllocatedGprId.in_subquery(gprs))), None, "slice")
        }
    };
    if let Some(node) = node
        && node::Entity::find_by_id(node).one(db).await?.is_none()
    {
        return Err(Error::NotFound(missing));
    }
    let mut gpus = select.all(db).await?;
    let Some(readable) = readable(db, caller, node.map(|n| vec![n])).await? else { return Ok(gpus) };
    if node.is_some_and(|n| !readable.contains_key(&n)) {
        return Err(Error::NotFound(missing));
    }
    for g in &mut gpus {
        let access = readable.get(&g.node_id).map_or(Access::Nothing, |since| Access::Since(*since));
        if !access.allows(g.last_sample_at) {
            redact(g);
        }
    }
    Ok(gpus)
}

/// Whether a live subscriber of `scope` who sees `visible` slices receives `sample`, given who
/// holds which node now.
pub fn live_wanted(scope: Scope, visible: &Visible, allocation: &Allocation, sample: &Sample) -> bool {
    let holder = allocation.get(&sample.node_id);
    let readable = match visible {
        Visible::All => true,
        Visible::Only(slices) => holder.is_some_and(|h| slices.binary_search(&h.slice_id).is_ok() && sample.at >= h.since),
    };
    readable
        && match scope {
            Scope::Gpu(gpu) => sample.gpu_id == gpu,
            Scope::Node(node) => sample.node_id == node,
            Scope::Gpr(gpr) => holder.is_some_and(|h| h.gpr_id == gpr),
            Scope::Slice(slice) => holder.is_some_and(|h| h.slice_id == slice),
        }
}
