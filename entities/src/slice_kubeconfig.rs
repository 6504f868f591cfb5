//! A slice kubeconfig issued and not yet revoked: one per slice and cluster, with who asked
//! for it (EGS keeps no copy of the kubeconfig itself).

use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, DeriveEntityModel)]
#[sea_orm(table_name = "slice_kubeconfigs")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub slice_id: i64,
    pub cluster_id: i64,
    /// `<namespace>/<name>` of the ServiceAccount its token speaks for.
    pub service_account: String,
    /// The user who asked for it; `None` when they are gone.
    pub issued_by: Option<i64>,
    pub issued_at: DateTimeUtc,
    pub expires_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
