//! Relay connections over keyset pages: cursors are row ids, pages are bounded.

use crate::error::{Error, Result};
use async_graphql::connection::{Connection, Edge, EmptyFields};
use async_graphql::{Context, Object, OutputType};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::future::BoxFuture;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Select};
use std::sync::Arc;

/// Page size when the caller gives no `first`.
pub const DEFAULT_PAGE_SIZE: u64 = 50;
/// Largest page one request may ask for: bounds the work and the response size of one field.
pub const MAX_PAGE_SIZE: u64 = 100;

/// A validated `first`/`after` pair.
#[derive(Copy, Clone, Debug)]
pub struct PageRequest {
    pub limit: u64,
    /// Row id of the last edge the caller saw.
    pub after: Option<i64>,
}

impl PageRequest {
    pub fn new(first: Option<i32>, after: Option<String>) -> Result<Self> {
        let limit = match first {
            None => DEFAULT_PAGE_SIZE,
            Some(n) if (0..=MAX_PAGE_SIZE as i32).contains(&n) => n as u64,
            Some(n) => {
                return Err(Error::invalid("first", format!("`first` must be between 0 and {MAX_PAGE_SIZE}, got {n}")));
            }
        };
        let after = after.map(|cursor| decode_cursor(&cursor)).transpose()?;
        Ok(Self { limit, after })
    }
}

pub fn encode_cursor(id: i64) -> String {
    URL_SAFE_NO_PAD.encode(format!("c:{id}"))
}

fn decode_cursor(cursor: &str) -> Result<i64> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| text.strip_prefix("c:").and_then(|n| n.parse().ok()))
        .ok_or_else(|| Error::invalid("after", format!("`{cursor}` is not a cursor from this API")))
}

type CountFn = dyn Fn() -> BoxFuture<'static, Result<u64, sea_orm::DbErr>> + Send + Sync;

/// `totalCount` on a connection, counted only when asked for, with the same filters (and so
/// the same isolation) as the page.
pub struct TotalCount(Arc<CountFn>);

impl TotalCount {
    pub fn of<E>(db: sea_orm::DatabaseConnection, select: sea_orm::Select<E>) -> Self
    where
        E: sea_orm::EntityTrait,
        E::Model: Sync,
    {
        use sea_orm::PaginatorTrait;
        Self(Arc::new(move || {
            let (db, select) = (db.clone(), select.clone());
            Box::pin(async move { select.count(&db).await })
        }))
    }
}

impl TotalCount {
    /// A count made in memory (a page served from memory), only when asked for.
    pub fn in_memory(count: impl Fn() -> u64 + Send + Sync + 'static) -> Self {
        Self(Arc::new(move || {
            let count = count();
            Box::pin(async move { Ok(count) })
        }))
    }
}

#[Object]
impl TotalCount {
    /// How many items match the filters, across all pages.
    async fn total_count(&self, _ctx: &Context<'_>) -> async_graphql::Result<u64> {
        Ok((self.0)().await.map_err(Error::from)?)
    }
}

pub type Page<T> = Connection<String, T, TotalCount, EmptyFields>;

/// What a request selects on the items of a list field: through `edges { node }` and the
/// `nodes` shortcut alike when the field is a connection. Prefetching reads it.
pub struct Selection<'a>(Vec<async_graphql::Lookahead<'a>>);

impl<'a> Selection<'a> {
    /// The items of the connection `ctx` resolves.
    pub fn of_page(ctx: &'a Context<'_>) -> Self {
        let page = ctx.look_ahead();
        Self(vec![page.field("edges").field("node"), page.field("nodes")])
    }

    /// The items of the plain list `ctx` resolves.
    pub fn of_list(ctx: &'a Context<'_>) -> Self {
        Self(vec![ctx.look_ahead()])
    }

    pub fn exists(&self) -> bool {
        self.0.iter().any(async_graphql::Lookahead::exists)
    }

    pub fn field(&self, name: &str) -> Self {
        Self(self.0.iter().map(|l| l.field(name)).collect())
    }
}

/// Which way a connection runs; cursors are row ids either way.
#[derive(Copy, Clone, Debug)]
pub enum Order {
    OldestFirst,
    NewestFirst,
}

/// Fetches one keyset page of `select` (already filtered for the caller) ordered by `id`,
/// with a `totalCount` under the same filters.
pub async fn keyset_page<E, T>(
    db: &DatabaseConnection,
    request: PageRequest,
    select: Select<E>,
    id: E::Column,
    order: Order,
    id_of: impl Fn(&E::Model) -> i64,
    into_node: impl Fn(E::Model) -> T,
) -> Result<Page<T>>
where
    E: EntityTrait,
    E::Model: Sync,
    T: OutputType,
{
    let total = TotalCount::of(db.clone(), select.clone());
    let select = match (order, request.after) {
        (Order::OldestFirst, Some(after)) => select.filter(id.gt(after)).order_by_asc(id),
        (Order::OldestFirst, None) => select.order_by_asc(id),
        (Order::NewestFirst, Some(after)) => select.filter(id.lt(after)).order_by_desc(id),
        (Order::NewestFirst, None) => select.order_by_desc(id),
    };
    let mut rows = select.limit(request.limit + 1).all(db).await?;
    let has_next = rows.len() as u64 > request.limit;
    rows.truncate(request.limit as usize);
    let mut connection = Connection::with_additional_fields(request.after.is_some(), has_next, total);
    connection.edges.extend(rows.into_iter().map(|row| Edge::new(encode_cursor(id_of(&row)), into_node(row))));
    Ok(connection)
}
