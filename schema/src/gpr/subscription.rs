//! GPR events and the queue, live: a resumable event stream (stored events, then the hub's
//! live feed, with no gap or repeat) and shared queue views.

use super::query::{event_scope, queue_query};
use super::queue_views;
use super::reads;
use super::types::{Gpr, GprEvent};
use crate::ids::{self, Kind};
use crate::session;
use async_graphql::{Context, ID};
use egs_domain::error::{Error, Result};
use egs_entities::gpr_event;
use sea_orm::{ColumnTrait, QueryFilter, QueryOrder, QuerySelect};

#[derive(Default)]
pub struct GprSubscription;

/// Events a live `gprEvents` subscriber reads from the database per page while catching up.
const CATCH_UP_PAGE: u64 = 500;

#[async_graphql::Subscription]
impl GprSubscription {
    /// GPR events the caller may see, live, narrowed by GPR or slice. With `after` (the id of
    /// the last event you saw, or its `sequence`), every stored event after it comes first,
    /// then live ones, with no gap or repeat between the two: reconnect with the last id you
    /// received and nothing is lost.
    async fn gpr_events(
        &self,
        ctx: &Context<'_>,
        gpr_id: Option<ID>,
        slice_id: Option<ID>,
        after: Option<ID>,
    ) -> Result<impl futures_util::Stream<Item = async_graphql::Result<GprEvent>> + use<>> {
        let (caller, db) = session(ctx)?;
        caller.require_person()?;
        let setup = crate::setting_up(ctx).await?;
        let (gpr_id, slice_id) = event_scope(db, caller, gpr_id.as_ref(), slice_id.as_ref()).await?;
        let after = after.as_ref().map(event_cursor).transpose()?;
        let visible = caller.visible_slices(db).await?;
        let hub = crate::app(ctx)?.events.clone();
        let (mut live, settled) = hub.subscribe();
        // Without `after`, "from now on" means after every event already stored, including
        // those the hub has not published yet (its tailer may lag a busy database).
        let stored = match after {
            Some(_) => 0,
            None => <gpr_event::Entity as sea_orm::EntityTrait>::find()
                .select_only()
                .column_as(gpr_event::Column::Id.max(), "newest")
                .into_tuple::<Option<i64>>()
                .one(db)
                .await?
                .flatten()
                .unwrap_or(0),
        };
        drop(setup);
        let db = db.clone();
        let select = {
            let visible = visible.clone();
            move |after: i64| {
                reads::events_select(&visible, gpr_id, slice_id).filter(gpr_event::Column::Id.gt(after)).order_by_asc(gpr_event::Column::Id)
            }
        };
        let wanted = move |e: &gpr_event::Model| {
            gpr_id.is_none_or(|g| g == e.gpr_id)
                && slice_id.is_none_or(|s| s == e.slice_id)
                && match &visible {
                    egs_domain::auth::Visible::All => true,
                    egs_domain::auth::Visible::Only(ids) => ids.binary_search(&e.slice_id).is_ok(),
                }
        };
        Ok(async_stream::stream! {
            // Without `after`: only what happens from now on.
            let floor = after.unwrap_or(settled.max(stored));
            let mut last = floor;
            // Ids read from the database that the live feed may still bring (not yet settled).
            let mut read = std::collections::HashSet::new();
            let mut catching_up = true;
            loop {
                if catching_up {
                    // Only what the hub has published: above it a gap may still be filling,
                    // and the live feed brings those rows in order.
                    match select(last).filter(gpr_event::Column::Id.lte(hub.published())).limit(CATCH_UP_PAGE).all(&db).await {
                        Ok(rows) => {
                            catching_up = rows.len() as u64 == CATCH_UP_PAGE;
                            for row in rows {
                                last = last.max(row.id);
                                if row.id > settled {
                                    read.insert(row.id);
                                }
                                yield Ok(GprEvent(row));
                            }
                        }
                        Err(error) => {
                            yield Err(Error::from(error).into());
                            return;
                        }
                    }
                    continue;
                }
                match live.recv().await {
                    // Late commits (an id below `last`) are new to this subscriber too.
                    Ok(row) if row.id > floor && wanted(&row) && !read.remove(&row.id) => {
                        last = last.max(row.id);
                        yield Ok(GprEvent((*row).clone()));
                    }
                    Ok(_) => {}
                    // Fell behind the feed: read what was missed from the database again.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => catching_up = true,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                }
            }
        })
    }
}

#[async_graphql::Subscription]
impl QueueSubscription {
    /// The queue as `queue(...)` shows it (one slice for its members; any view for admins):
    /// now, then again whenever a position, promise or estimate in it changes. Subscribers of
    /// the same view share one read per burst of changes (at most two a second).
    async fn queue_changed(
        &self,
        ctx: &Context<'_>,
        slice_id: Option<ID>,
        cluster_id: Option<ID>,
        gpu_shape: Option<String>,
        instance_type: Option<String>,
        #[graphql(default = 100)] first: i32,
    ) -> Result<impl futures_util::Stream<Item = async_graphql::Result<Vec<Gpr>>> + use<>> {
        let (caller, db) = session(ctx)?;
        let query = queue_query(slice_id.as_ref(), cluster_id.as_ref(), gpu_shape, instance_type, first)?;
        // Checks access now, so a refused view is an error instead of an empty stream.
        let setup = crate::setting_up(ctx).await?;
        let first_view = reads::queue(db, caller, query.clone()).await?;
        drop(setup);
        let views = crate::app(ctx)?.queue_views.clone();
        let (mut view, watching) = views.watch(query, &first_view);
        Ok(async_stream::stream! {
            let _watching = watching;
            let mut last = queue_views::fingerprint(&first_view);
            yield Ok(first_view.into_iter().map(Gpr).collect());
            while view.changed().await.is_ok() {
                tokio::time::sleep(views.spread()).await;
                let read = view.borrow_and_update().clone();
                match &*read {
                    Ok(rows) => {
                        let now = queue_views::fingerprint(rows);
                        if now != last {
                            last = now;
                            yield Ok(rows.iter().cloned().map(Gpr).collect());
                        }
                    }
                    Err(error) => {
                        yield Err(error.clone().into());
                        return;
                    }
                }
            }
        })
    }
}

#[derive(Default)]
pub struct QueueSubscription;

/// An event id or a bare sequence number, as `gprEvents(after:)` takes it.
fn event_cursor(id: &ID) -> Result<i64> {
    match id.parse::<i64>() {
        Ok(sequence) if sequence >= 0 => Ok(sequence),
        _ => ids::decode("after", id, Kind::GprEvent),
    }
}
