//! A raised (and maybe cleared) alert about a GPU, node or GPR.

use crate::*;
use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "alerts")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub kind: AlertKind,
    pub severity: AlertSeverity,
    /// What the alert is about (`gpu:12`, `node:3`, `gpr:7`). At most one alert of a kind is
    /// open per subject: a partial unique index enforces it across replicas.
    pub subject: String,
    pub cluster_id: Option<i64>,
    pub node_id: Option<i64>,
    pub gpu_id: Option<i64>,
    /// The slice holding the node or GPR when the alert was raised; `None` for alerts only
    /// admins read (nodes no slice held).
    pub slice_id: Option<i64>,
    pub gpr_id: Option<i64>,
    pub message: String,
    pub value: Option<f64>,
    pub threshold: Option<f64>,
    pub raised_at: DateTimeUtc,
    pub cleared_at: Option<DateTimeUtc>,
    /// When the condition was last seen again (an XID or ECC error recurring): the quiet
    /// period that clears it counts from here.
    pub last_seen_at: Option<DateTimeUtc>,
    /// Why it cleared.
    pub resolution: Option<String>,
}

impl Model {
    pub fn is_open(&self) -> bool {
        self.cleared_at.is_none()
    }
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
