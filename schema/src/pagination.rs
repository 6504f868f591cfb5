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

/// A validated `first`/`after` (or, where a connection pages both ways, `last`/`before`).
#[derive(Copy, Clone, Debug)]
pub struct PageRequest {
    pub limit: u64,
    /// Row id of the last edge the caller saw.
    pub after: Option<i64>,
    /// Row id of the first edge the caller saw, paging back.
    pub before: Option<i64>,
    /// The last `limit` edges (before `before`) rather than the first.
    pub from_end: bool,
}

impl PageRequest {
    pub fn new(first: Option<i32>, after: Option<String>) -> Result<Self> {
        let limit = page_size("first", first)?;
        let after = after.map(|cursor| decode_cursor("after", &cursor)).transpose()?;
        Ok(Self { limit, after, before: None, from_end: false })
    }

    /// Relay's both ways: `first`/`after` forward, or `last`/`before` back (the edges just
    /// before `before`, or the last ones), never both directions at once.
    pub fn both_ways(first: Option<i32>, after: Option<String>, last: Option<i32>, before: Option<String>) -> Result<Self> {
        if last.is_none() && before.is_none() {
            return Self::new(first, after);
        }
        if first.is_some() || after.is_some() {
            return Err(Error::invalid("last", "page forward (`first`, `after`) or back (`last`, `before`), not both"));
        }
        let limit = page_size("last", last)?;
        let before = before.map(|cursor| decode_cursor("before", &cursor)).transpose()?;
        Ok(Self { limit, after: None, before, from_end: true })
    }
}

fn page_size(field: &str, asked: Option<i32>) -> Result<u64> {
    match asked {
        None => Ok(DEFAULT_PAGE_SIZE),
        Some(n) if (0..=MAX_PAGE_SIZE as i32).contains(&n) => Ok(n as u64),
        Some(n) => Err(Error::invalid(field, format!("`{field}` must be between 0 and {MAX_PAGE_SIZE}, got {n}"))),
    }
}

pub fn encode_cursor(id: i64) -> String {
    URL_SAFE_NO_PAD.encode(format!("c:{id}"))
}

fn decode_cursor(field: &str, cursor: &str) -> Result<i64> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| text.strip_prefix("c:").and_then(|n| n.parse().ok()))
        .ok_or_else(|| Error::invalid(field, format!("`{cursor}` is not a cursor from this API")))
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
    // Paging back reads the other way from `before` and turns the rows around.
    let ascending = matches!(order, Order::OldestFirst) != request.from_end;
    let mut select = match request.after.or(request.before) {
        Some(cursor) if ascending => select.filter(id.gt(cursor)),
        Some(cursor) => select.filter(id.lt(cursor)),
        None => select,
    };
    select = if ascending { select.order_by_asc(id) } else { select.order_by_desc(id) };
    let mut rows = select.limit(request.limit + 1).all(db).await?;
    let more = rows.len() as u64 > request.limit;
    rows.truncate(request.limit as usize);
    let (has_previous, has_next) = if request.from_end {
        rows.reverse();
        (more, request.before.is_some())
    } else {
        (request.after.is_some(), more)
    };
    let mut connection = Connection::with_additional_fields(has_previous, has_next, total);
    connection.edges.extend(rows.into_iter().map(|row| Edge::new(encode_cursor(id_of(&row)), into_node(row))));
    Ok(connection)
}
