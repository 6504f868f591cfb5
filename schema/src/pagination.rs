//! Relay connections over keyset pages: cursors are row ids, pages are bounded.

use crate::error::{Error, Result};
use async_graphql::connection::{Connection, Edge, EmptyFields};
use async_graphql::{Context, Object, OutputType};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::future::BoxFuture;
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

#[Object]
impl TotalCount {
    /// How many items match the filters, across all pages.
    async fn total_count(&self, _ctx: &Context<'_>) -> async_graphql::Result<u64> {
        Ok((self.0)().await.map_err(Error::from)?)
    }
}

pub type Page<T> = Connection<String, T, TotalCount, EmptyFields>;

/// Builds a page from `limit + 1` rows fetched in cursor order.
pub fn page<M, T: OutputType>(
    request: PageRequest,
    mut rows: Vec<M>,
    id_of: impl Fn(&M) -> i64,
    into_node: impl Fn(M) -> T,
    total: TotalCount,
) -> Page<T> {
    let has_next = rows.len() as u64 > request.limit;
    rows.truncate(request.limit as usize);
    let mut connection = Connection::with_additional_fields(request.after.is_some(), has_next, total);
    connection.edges.extend(rows.into_iter().map(|row| Edge::new(encode_cursor(id_of(&row)), into_node(row))));
    connection
}
