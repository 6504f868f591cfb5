//! The GPUs' descriptions (node, cluster, UUID, index, model, memory, MIG mode) in memory, for
//! GPU pages that read nothing else. Descriptions change when nodes register or go; samples,
//! which change every second, are not part of them. A trigger counts every change to them in
//! `gpu_catalog_versions` (migration `m20261202`), on every replica's writes alike, so a page
//! reads that one number and, while it is the number the catalog was read at, answers from
//! memory: one tiny statement instead of a page of rows. When it is not, the page reads rows
//! as before and one refresh starts in the background.

use super::service::GpuQuery;
use crate::error::Result;
use crate::pagination::LazyCount;
use sea_orm::{ConnectionTrait, DatabaseConnection, FromQueryResult, Statement};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::Notify;

/// One GPU as the catalog describes it.
#[derive(Clone, Debug, PartialEq, FromQueryResult)]
pub struct DescribedGpu {
    pub id: i64,
    pub node_id: i64,
    pub cluster_id: i64,
    pub uuid: String,
    pub gpu_index: i32,
    pub model: String,
    pub memory_mib: i64,
    pub mig_enabled: bool,
}

/// Every GPU, by id, as of `version`.
struct Snapshot {
    version: i64,
    gpus: Vec<Arc<DescribedGpu>>,
}

/// One page of a snapshot.
pub struct CatalogPage {
    pub gpus: Vec<Arc<DescribedGpu>>,
    pub has_next: bool,
    /// Every GPU the query matches, counted over the same snapshot when asked for.
    pub total: LazyCount,
}

/// One per process, in `App`.
#[derive(Default)]
pub struct GpuCatalog {
    snapshot: RwLock<Option<Arc<Snapshot>>>,
    refreshing: AtomicBool,
    versions: VersionReads,
}

/// Reads of the catalog's version, shared by the pages that wait for them. A page needs a read
/// that began after the page arrived, so that it sees every change committed before; every
/// page that arrives while a read is in flight shares the next one. Under load that is one
/// read per round trip instead of one per page (32 pages at a time asked PostgreSQL 32 times),
/// with the same guarantee.
#[derive(Default)]
struct VersionReads {
    state: Mutex<ReadState>,
    finished: Notify,
}

#[derive(Default)]
struct ReadState {
    /// Reads begun so far; the one in flight, if any, is number `begun`.
    begun: u64,
    in_flight: bool,
    /// The newest read that succeeded: its number and the version it read.
    newest: Option<(u64, i64)>,
}

impl VersionReads {
    async fn current(&self, db: &DatabaseConnection) -> Result<i64> {
        // The first read that begins from now on.
        let needed = self.lock().begun + 1;
        loop {
            let finished = self.finished.notified();
            tokio::pin!(finished);
            // Registered before the state is looked at: a read ending in between still wakes it.
            finished.as_mut().enable();
            let lead = {
                let mut state = self.lock();
                match state.newest {
                    Some((number, version)) if number >= needed => return Ok(version),
                    _ if state.in_flight => None,
                    _ => {
                        state.in_flight = true;
                        state.begun += 1;
                        Some(state.begun)
                    }
                }
            };
            let Some(number) = lead else {
                finished.await;
                continue;
            };
            // Whatever happens to this page (an error, a dropped request), the waiters go on.
            let _done = ReadDone(self);
            let version = version(db).await?;
            let mut state = self.lock();
            if state.newest.is_none_or(|(newest, _)| newest < number) {
                state.newest = Some((number, version));
            }
            return Ok(version);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ReadState> {
        // The state is a few numbers, consistent between statements: a panic elsewhere leaves it usable.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Ends the read in flight: the next waiting page leads the next one, or takes this one's.
struct ReadDone<'a>(&'a VersionReads);

impl Drop for ReadDone<'_> {
    fn drop(&mut self) {
        self.0.lock().in_flight = false;
        self.0.finished.notify_waiters();
    }
}

impl GpuCatalog {
    /// Page `query` after GPU `after`, by id, from memory, if the catalog is current; `None`
    /// (and a refresh starts) when the descriptions changed since it was read.
    pub async fn page(self: &Arc<Self>, db: &DatabaseConnection, query: &GpuQuery, after: Option<i64>, limit: usize) -> Result<Option<CatalogPage>> {
        let version = self.versions.current(db).await?;
        let current = self.snapshot.read().expect("catalog").clone().filter(|s| s.version == version);
        let Some(snapshot) = current else {
            self.refresh_in_background(db);
            return Ok(None);
        };
        let start = after.map_or(0, |after| snapshot.gpus.partition_point(|g| g.id <= after));
        let mut gpus: Vec<Arc<DescribedGpu>> = snapshot.gpus[start..].iter().filter(|g| matches(query, g)).take(limit + 1).cloned().collect();
        let has_next = gpus.len() > limit;
        gpus.truncate(limit);
        let query = query.clone();
        let total = LazyCount::in_memory(move || snapshot.gpus.iter().filter(|g| matches(&query, g)).count() as u64);
        Ok(Some(CatalogPage { gpus, has_next, total }))
    }

    fn refresh_in_background(self: &Arc<Self>, db: &DatabaseConnection) {
        if self.refreshing.swap(true, Ordering::AcqRel) {
            return;
        }
        let (catalog, db) = (self.clone(), db.clone());
        tokio::spawn(async move {
            if let Err(error) = catalog.refresh(&db).await {
                tracing::warn!(?error, "reading the GPU catalog failed; GPU pages read rows until it is read");
            }
            catalog.refreshing.store(false, Ordering::Release);
        });
    }

    /// Reads every description, labelled with the version read first: a change in between
    /// labels newer descriptions with an older version, which only makes the next page read
    /// them again.
    pub async fn refresh(&self, db: &DatabaseConnection) -> Result<()> {
        let version = version(db).await?;
        let gpus = DescribedGpu::find_by_statement(Statement::from_string(
            db.get_database_backend(),
            "SELECT gpus.id, gpus.node_id, nodes.cluster_id, gpus.uuid, gpus.gpu_index, gpus.model, gpus.memory_mib, gpus.mig_enabled \
             FROM gpus JOIN nodes ON nodes.id = gpus.node_id ORDER BY gpus.id",
        ))
        .all(db)
        .await?;
        let snapshot = Arc::new(Snapshot { version, gpus: gpus.into_iter().map(Arc::new).collect() });
        let mut kept = self.snapshot.write().expect("catalog");
        if kept.as_ref().is_none_or(|k| k.version <= version) {
            *kept = Some(snapshot);
        }
        Ok(())
    }
}

fn matches(query: &GpuQuery, gpu: &DescribedGpu) -> bool {
    query.node_id.is_none_or(|n| gpu.node_id == n)
        && query.cluster_id.is_none_or(|c| gpu.cluster_id == c)
        && query.model.as_deref().is_none_or(|m| gpu.model == m)
}

/// How many times the descriptions have changed.
pub async fn version(db: &DatabaseConnection) -> Result<i64> {
    let row = db.query_one_raw(Statement::from_string(db.get_database_backend(), "SELECT version FROM gpu_catalog_versions WHERE id = 1")).await?;
    Ok(match row {
        Some(row) => row.try_get_by_index(0)?,
        None => 0,
    })
}
