//! Pages of lists: bounded sizes, opaque cursors (row ids), and counts made only when asked for.

use crate::error::{Error, Result};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use futures_util::future::BoxFuture;
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

/// How many items a list's filters match, across all pages, counted only when asked for, with
/// the same filters (and so the same isolation) as the page.
#[derive(Clone)]
pub struct LazyCount(Arc<CountFn>);

impl LazyCount {
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

    /// A count made in memory (a page served from memory), only when asked for.
    pub fn in_memory(count: impl Fn() -> u64 + Send + Sync + 'static) -> Self {
        Self(Arc::new(move || {
            let count = count();
            Box::pin(async move { Ok(count) })
        }))
    }

    /// Counts now.
    pub async fn count(&self) -> Result<u64> {
        Ok((self.0)().await?)
    }
}
