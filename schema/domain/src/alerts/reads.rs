//! Which alerts a caller may read: the `alerts` list, one alert, and live transitions.

use crate::auth::{Caller, Visible};
use crate::error::{Error, Result};
use egs_entities::{AlertKind, alert};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, Select};

/// Filters of the `alerts` list.
#[derive(Clone, Debug, Default)]
pub struct AlertQuery {
    pub slice_id: Option<i64>,
    pub cluster_id: Option<i64>,
    pub kind: Option<AlertKind>,
    /// `Some(true)`: open only; `Some(false)`: cleared only.
    pub open: Option<bool>,
}

/// The alerts `caller` may read, filtered. Users read the alerts of their slices' GPRs and of
/// the nodes those held; alerts about nodes no slice held are for admins. A slice the caller
/// may not see is `NOT_FOUND`.
pub async fn alerts_select(db: &DatabaseConnection, caller: &Caller, query: &AlertQuery) -> Result<Select<alert::Entity>> {
    caller.require_person()?;
    if let Some(slice) = query.slice_id {
        crate::slice::service::find_slice(db, caller, slice).await?;
    }
    let mut select = alert::Entity::find();
    if let Visible::Only(slices) = caller.visible_slices(db).await? {
        select = select.filter(alert::Column::SliceId.is_in(slices));
    }
    if let Some(slice) = query.slice_id {
        select = select.filter(alert::Column::SliceId.eq(slice));
    }
    if let Some(cluster) = query.cluster_id {
        select = select.filter(alert::Column::ClusterId.eq(cluster));
    }
    if let Some(kind) = query.kind {
        select = select.filter(alert::Column::Kind.eq(kind));
    }
    select = match query.open {
        Some(true) => select.filter(alert::Column::ClearedAt.is_null()),
        Some(false) => select.filter(alert::Column::ClearedAt.is_not_null()),
        None => select,
    };
    Ok(select)
}

/// One alert, under the rule of [`alerts_select`]: one the caller may not read is `NOT_FOUND`,
/// like a missing one.
pub async fn find_alert(db: &DatabaseConnection, caller: &Caller, id: i64) -> Result<alert::Model> {
    let query = AlertQuery { slice_id: None, cluster_id: None, kind: None, open: None };
    alerts_select(db, caller, &query).await?.filter(alert::Column::Id.eq(id)).one(db).await?.ok_or(Error::NotFound("alert"))
}

/// Whether a subscriber who sees `visible` slices, filtered by slice and cluster, receives an
/// alert's transitions: the same rule as [`alerts_select`].
pub fn wanted(visible: &Visible, slice_id: Option<i64>, cluster_id: Option<i64>, alert: &alert::Model) -> bool {
    let readable = match visible {
        Visible::All => true,
        Visible::Only(slices) => alert.slice_id.is_some_and(|s| slices.binary_search(&s).is_ok()),
    };
    readable && slice_id.is_none_or(|s| alert.slice_id == Some(s)) && cluster_id.is_none_or(|c| alert.cluster_id == Some(c))
}
