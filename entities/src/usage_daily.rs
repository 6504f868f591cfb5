//! One day's GPU-hours of one slice, requester, shape and cluster: rolled up from the GPRs'
//! stored lifecycle events, recomputed while the day can still change.

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "usage_daily")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    /// The UTC day.
    pub day: Date,
    pub slice_id: i64,
    /// The requester; 0 when none is known (a GPR from a Kubernetes resource, a deleted user).
    pub user_id: i64,
    /// The shape the GPR got (or asked for); `any` when it named none and was not placed yet.
    pub gpu_shape: String,
    /// The cluster it got (or the one it asked for); 0 while nothing says which.
    pub cluster_id: i64,
    /// GPU-seconds of the windows as booked, to the window's planned end.
    pub reserved_gpu_secs: i64,
    /// GPU-seconds held from provisioning until the release began.
    pub used_gpu_secs: i64,
    /// GPU-seconds asked for while waiting in the queue or for approval (demand).
    pub waiting_gpu_secs: i64,
    /// Windows that began this day.
    pub gprs_started: i32,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
