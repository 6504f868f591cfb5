//! Relay connections over keyset pages: cursors are row ids, pages are bounded (see
//! `egs_domain::pagination`).

use async_graphql::connection::{Connection, Edge, EmptyFields};
use async_graphql::{Context, Object, OutputType};
use egs_domain::error::Result;
pub use egs_domain::pagination::{DEFAULT_PAGE_SIZE, LazyCount, MAX_PAGE_SIZE, PageRequest, encode_cursor};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Select};

/// `totalCount` on a connection, counted only when asked for.
pub struct TotalCount(pub LazyCount);

impl TotalCount {
    pub fn of<E>(db: sea_orm::DatabaseConnection, select: sea_orm::Select<E>) -> Self
    where
        E: sea_orm::EntityTrait,
        E::Model: Sync,
    {
        Self(LazyCount::of(db, select))
    }
}

#[Object]
impl TotalCount {
    /// How many items match the filters, across all pages.
    async fn total_count(&self, _ctx: &Context<'_>) -> async_graphql::Result<u64> {
        Ok(self.0.count().await?)
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
