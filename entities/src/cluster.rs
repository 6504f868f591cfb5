//! A Kubernetes cluster (or a simulated one) whose GPU nodes EGS shares.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "clusters")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub project_id: i64,
    pub name: String,
    pub provider: ClusterProvider,
    pub cloud: Option<String>,
    pub region: Option<String>,
    pub registration_status: RegistrationStatus,
    pub health: Health,
    pub last_contact_at: Option<DateTimeUtc>,
    /// The kubeconfig, encrypted (see `egs_schema::cluster::credentials`); `None` for
    /// simulated clusters and in-cluster credentials. Never returned through the API.
    pub credentials: Option<String>,
    pub pod_placement: PodPlacement,
    /// Promises starting within this many seconds are firm against arrivals below the high
    /// band; `None`: none are.
    pub firm_horizon_secs: Option<i64>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
