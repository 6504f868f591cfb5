//! The Relay `Node` interface and `node(id:)`, with the same visibility rules as every other
//! way to reach an object: a hidden object reads as missing.

use crate::alerts::Alert;
use crate::cluster::Cluster;
use crate::gpr::{Gpr, GprEvent};
use crate::ids::{self, Kind};
use crate::inventory::{Gpu, GpuNode};
use crate::session;
use crate::slice::Slice;
use crate::token::AccessToken;
use crate::user::User;
use async_graphql::{Context, ID, Interface, Object};
use egs_domain::error::{Error, Result};
use egs_entities::gpr_event;
use sea_orm::EntityTrait;

/// An object with a global id.
// One value per `node(id:)` call: boxing the large variants would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Interface)]
#[graphql(field(name = "id", ty = "ID"))]
pub enum Node {
    Cluster(Cluster),
    GpuNode(GpuNode),
    Gpu(Gpu),
    Slice(Slice),
    User(User),
    AccessToken(AccessToken),
    Gpr(Gpr),
    GprEvent(GprEvent),
    Alert(Alert),
}

#[derive(Default)]
pub struct RelayQuery;

#[Object]
impl RelayQuery {
    /// Any object by its global id.
    async fn node(&self, ctx: &Context<'_>, id: ID) -> Result<Node> {
        let (caller, db) = session(ctx)?;
        let (kind, row) = ids::decode_any(&id).ok_or_else(|| Error::invalid("id", format!("`{}` is not an EGS id", id.as_str())))?;
        Ok(match kind {
            Kind::Cluster => Node::Cluster(Cluster(egs_domain::cluster::service::find_cluster(db, caller, row).await?)),
            Kind::GpuNode => Node::GpuNode(GpuNode(egs_domain::inventory::service::find_node(db, caller, row).await?)),
            Kind::Gpu => Node::Gpu(Gpu::from(egs_domain::inventory::service::find_gpu(db, caller, row).await?)),
            Kind::Slice => Node::Slice(Slice(egs_domain::slice::service::find_slice(db, caller, row).await?)),
            Kind::User => Node::User(User(egs_domain::user::service::find_user(db, caller, row).await?)),
            Kind::AccessToken => Node::AccessToken(AccessToken(egs_domain::token::service::find_token(db, caller, row).await?)),
            Kind::Gpr => Node::Gpr(Gpr(egs_domain::gpr::reads::find_gpr(db, caller, row).await?)),
            Kind::GprEvent => {
                let event = gpr_event::Entity::find_by_id(row).one(db).await?.ok_or(Error::NotFound("event"))?;
                caller.require_slice_role(db, event.slice_id, egs_entities::SliceRole::Viewer, "event").await?;
                Node::GprEvent(GprEvent(event))
            }
            Kind::Alert => Node::Alert(Alert(egs_domain::alerts::reads::find_alert(db, caller, row).await?)),
            Kind::Project
            | Kind::SliceNamespace
            | Kind::GprTemplate
            | Kind::NotificationChannel
            | Kind::NotificationDelivery
            | Kind::WorkspaceRequest
            | Kind::SsoGroupRule
            | Kind::MaintenanceWindow => {
                return Err(Error::NotFound("object"));
            }
        })
    }
}
