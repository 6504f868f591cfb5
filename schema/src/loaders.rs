//! Batch loaders for every relation the schema resolves, so a page of N objects with their
//! relations costs a fixed number of SQL statements, not N. One set per request.
//!
//! Batches are cut by the request's progress, not by a clock: a batch starts only when the
//! request has nothing left to do but wait (a poll ends without the request having woken
//! itself), so every key one level of the query asks for lands in one batch however busy the
//! machine is. The stock 1 ms timer cuts batches apart under load, multiplying statements.
//!
//! A query keeps what its loaders read for the rest of the request ([`Batched`]): the GPUs of
//! a page that all name one node read it once, and a field asking again (a GPU's sample
//! checks its node's holder after `node` loaded it) gets it at once, without a batch or a
//! clone of the async-graphql DataLoader's per-call bookkeeping. Mutations and subscriptions
//! keep nothing: what one mutation changed, the next field must read anew.

use async_graphql::dataloader::Loader;
use egs_domain::metrics::sample::StoredSample;
use egs_entities::{cluster, gpr, gpr_node, gpu, node, slice, slice_cluster, slice_member, slice_namespace, user};
use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared};
use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::task::{Context, Poll, Wake, Waker};

type LoadResult<V> = Result<HashMap<i64, V>, Arc<DbErr>>;

/// Loads rows by primary key.
macro_rules! by_id_loader {
    ($name:ident, $entity:path, $model:path) => {
        pub struct $name(pub DatabaseConnection);

        impl Loader<i64> for $name {
            type Value = $model;
            type Error = Arc<DbErr>;

            async fn load(&self, keys: &[i64]) -> LoadResult<$model> {
                use $entity as e;
                let rows = e::Entity::find().filter(e::Column::Id.is_in(keys.iter().copied())).all(&self.0).await?;
                Ok(rows.into_iter().map(|row| (row.id, row)).collect())
            }
        }
    };
}

by_id_loader!(ClusterById, egs_entities::cluster, cluster::Model);
by_id_loader!(NodeById, egs_entities::node, node::Model);
by_id_loader!(SliceById, egs_entities::slice, slice::Model);
by_id_loader!(UserById, egs_entities::user, user::Model);
by_id_loader!(GprById, egs_entities::gpr, gpr::Model);
by_id_loader!(GpuById, egs_entities::gpu, gpu::Model);

/// GPUs' latest samples alone (see [`StoredSample`]), by GPU id.
pub struct GpuSampleById(pub DatabaseConnection);

impl Loader<i64> for GpuSampleById {
    type Value = StoredSample;
    type Error = Arc<DbErr>;

    async fn load(&self, keys: &[i64]) -> LoadResult<StoredSample> {
        let rows = gpu::Entity::find()
            .select_only()
            .columns(StoredSample::COLUMNS)
            .filter(gpu::Column::Id.is_in(keys.iter().copied()))
            .into_model::<StoredSample>()
            .all(&self.0)
            .await?;
        Ok(rows.into_iter().map(|row| (row.id, row)).collect())
    }
}

/// Loads, for each key, all rows whose `$fk` column points at it, ordered by `$order`.
macro_rules! by_parent_loader {
    ($(#[$doc:meta])* $name:ident, $entity:ident, $fk:ident / $fk_field:ident, $order:ident) => {
        $(#[$doc])*
        pub struct $name(pub DatabaseConnection);

        impl Loader<i64> for $name {
            type Value = Vec<$entity::Model>;
            type Error = Arc<DbErr>;

            async fn load(&self, keys: &[i64]) -> LoadResult<Vec<$entity::Model>> {
                let rows = $entity::Entity::find()
                    .filter($entity::Column::$fk.is_in(keys.iter().copied()))
                    .order_by_asc($entity::Column::$order)
                    .all(&self.0)
                    .await?;
                Ok(group(rows, |row| row.$fk_field))
            }
        }
    };
}

by_parent_loader!(
    /// GPUs of each node, by index.
    GpusByNode, gpu, NodeId / node_id, GpuIndex
);
by_parent_loader!(
    /// Node assignments of each GPR (the nodes themselves come from [`NodeById`], so a node
    /// shared by many GPRs on a page is read once).
    NodeLinksByGpr, gpr_node, GprId / gpr_id, NodeId
);
by_parent_loader!(
    /// Namespaces of each slice.
    NamespacesBySlice, slice_namespace, SliceId / slice_id, Name
);
by_parent_loader!(
    /// Members of each slice.
    MembersBySlice, slice_member, SliceId / slice_id, UserId
);
by_parent_loader!(
    /// Clusters each slice may use.
    ClustersBySlice, slice_cluster, SliceId / slice_id, ClusterId
);

fn group<M>(rows: Vec<M>, key: impl Fn(&M) -> i64) -> HashMap<i64, Vec<M>> {
    let mut grouped: HashMap<i64, Vec<M>> = HashMap::new();
    for row in rows {
        grouped.entry(key(&row)).or_default().push(row);
    }
    grouped
}

/// The per-request set of loaders, attached to each request by the gateway. Each is built on
/// first use, so a request pays only for the relations it resolves.
pub struct Loaders {
    db: DatabaseConnection,
    batches: BatchQueue,
    keep: bool,
    cluster: OnceLock<Batched<ClusterById>>,
    node: OnceLock<Batched<NodeById>>,
    slice: OnceLock<Batched<SliceById>>,
    user: OnceLock<Batched<UserById>>,
    gpr: OnceLock<Batched<GprById>>,
    gpu: OnceLock<Batched<GpuById>>,
    gpu_sample: OnceLock<Batched<GpuSampleById>>,
    gpus_by_node: OnceLock<Batched<GpusByNode>>,
    node_links_by_gpr: OnceLock<Batched<NodeLinksByGpr>>,
    namespaces_by_slice: OnceLock<Batched<NamespacesBySlice>>,
    members_by_slice: OnceLock<Batched<MembersBySlice>>,
    clusters_by_slice: OnceLock<Batched<ClustersBySlice>>,
}

impl Loaders {
    /// The database this request's operation uses (see [`crate::execute`]).
    pub fn db(&self) -> &DatabaseConnection {
        &self.db
    }

    /// `keep`: values read stay for the rest of the request (queries; see the module's note).
    pub fn new(db: &DatabaseConnection, batches: &BatchQueue, keep: bool) -> Self {
        Self {
            db: db.clone(),
            batches: batches.clone(),
            keep,
            cluster: OnceLock::new(),
            node: OnceLock::new(),
            slice: OnceLock::new(),
            user: OnceLock::new(),
            gpr: OnceLock::new(),
            gpu: OnceLock::new(),
            gpu_sample: OnceLock::new(),
            gpus_by_node: OnceLock::new(),
            node_links_by_gpr: OnceLock::new(),
            namespaces_by_slice: OnceLock::new(),
            members_by_slice: OnceLock::new(),
            clusters_by_slice: OnceLock::new(),
        }
    }

    fn make<T: Loader<i64, Error = Arc<DbErr>>>(&self, loader: T) -> Batched<T> {
        Batched::new(loader, self.batches.clone(), self.keep)
    }

    pub fn cluster(&self) -> &Batched<ClusterById> {
        self.cluster.get_or_init(|| self.make(ClusterById(self.db.clone())))
    }

    pub fn node(&self) -> &Batched<NodeById> {
        self.node.get_or_init(|| self.make(NodeById(self.db.clone())))
    }

    pub fn slice(&self) -> &Batched<SliceById> {
        self.slice.get_or_init(|| self.make(SliceById(self.db.clone())))
    }

    pub fn user(&self) -> &Batched<UserById> {
        self.user.get_or_init(|| self.make(UserById(self.db.clone())))
    }

    pub fn gpr(&self) -> &Batched<GprById> {
        self.gpr.get_or_init(|| self.make(GprById(self.db.clone())))
    }

    pub fn gpu(&self) -> &Batched<GpuById> {
        self.gpu.get_or_init(|| self.make(GpuById(self.db.clone())))
    }

    pub fn gpu_sample(&self) -> &Batched<GpuSampleById> {
        self.gpu_sample.get_or_init(|| self.make(GpuSampleById(self.db.clone())))
    }

    pub fn gpus_by_node(&self) -> &Batched<GpusByNode> {
        self.gpus_by_node.get_or_init(|| self.make(GpusByNode(self.db.clone())))
    }

    pub fn node_links_by_gpr(&self) -> &Batched<NodeLinksByGpr> {
        self.node_links_by_gpr.get_or_init(|| self.make(NodeLinksByGpr(self.db.clone())))
    }

    pub fn namespaces_by_slice(&self) -> &Batched<NamespacesBySlice> {
        self.namespaces_by_slice.get_or_init(|| self.make(NamespacesBySlice(self.db.clone())))
    }

    pub fn members_by_slice(&self) -> &Batched<MembersBySlice> {
        self.members_by_slice.get_or_init(|| self.make(MembersBySlice(self.db.clone())))
    }

    pub fn clusters_by_slice(&self) -> &Batched<ClustersBySlice> {
        self.clusters_by_slice.get_or_init(|| self.make(ClustersBySlice(self.db.clone())))
    }
}

/// One loader of a request: the keys its fields ask for while the request is busy are read in
/// one batch once it goes idle; with `keep`, what was read answers later asks at once.
pub struct Batched<T: Loader<i64>> {
    inner: Arc<BatchedInner<T>>,
}

struct BatchedInner<T: Loader<i64>> {
    loader: T,
    queue: BatchQueue,
    keep: bool,
    state: Mutex<BatchState<T::Value>>,
}

struct BatchState<V> {
    /// Read earlier in this request (when keeping); `None` for a key without a row.
    known: HashMap<i64, Option<V>>,
    /// The batch gathering keys until the request goes idle, and its keys.
    gathering: Option<Arc<Gathering<V>>>,
    pending: Vec<i64>,
}

/// One batch: its answer, and a signal its waiters share.
struct Gathering<V> {
    read: OnceLock<LoadResult<V>>,
    done: Shared<tokio::sync::oneshot::Receiver<()>>,
}

impl<T: Loader<i64, Error = Arc<DbErr>>> Batched<T> {
    fn new(loader: T, queue: BatchQueue, keep: bool) -> Self {
        let state = Mutex::new(BatchState { known: HashMap::new(), gathering: None, pending: Vec::new() });
        Self { inner: Arc::new(BatchedInner { loader, queue, keep, state }) }
    }

    pub async fn load_one(&self, key: i64) -> Result<Option<T::Value>, Arc<DbErr>> {
        // Read already (a page's prefetch, for each of its items): no batch and no map.
        if let Some(known) = self.inner.state.lock().unwrap_or_else(|p| p.into_inner()).known.get(&key) {
            return Ok(known.clone());
        }
        Ok(self.load_many(std::iter::once(key)).await?.remove(&key))
    }

    /// Reads in one batch those of `keys` not read yet, so the fields that ask for them later
    /// in this request are answered at once, without waiting for a batch each. Does nothing
    /// in a request that keeps nothing (mutations, subscriptions).
    pub async fn prefetch(&self, keys: impl IntoIterator<Item = i64>) -> Result<(), Arc<DbErr>> {
        if !self.inner.keep {
            return Ok(());
        }
        let missing: Vec<i64> = {
            let state = self.inner.state.lock().unwrap_or_else(|p| p.into_inner());
            keys.into_iter().filter(|key| !state.known.contains_key(key)).collect()
        };
        if missing.is_empty() {
            return Ok(());
        }
        self.load_many(missing).await.map(drop)
    }

    /// [`Batched::prefetch`] when `wanted` (a field selected on the list); nothing otherwise.
    pub async fn prefetch_when(&self, wanted: bool, keys: impl IntoIterator<Item = i64>) -> Result<(), Arc<DbErr>> {
        if wanted { self.prefetch(keys).await } else { Ok(()) }
    }

    /// The values of `keys` that have one.
    pub async fn load_many(&self, keys: impl IntoIterator<Item = i64>) -> Result<HashMap<i64, T::Value>, Arc<DbErr>> {
        let mut found = HashMap::new();
        let mut missing = Vec::new();
        let batch = {
            let mut state = self.inner.state.lock().unwrap_or_else(|p| p.into_inner());
            for key in keys {
                match state.known.get(&key) {
                    Some(Some(value)) => {
                        found.insert(key, value.clone());
                    }
                    Some(None) => {}
                    None => missing.push(key),
                }
            }
            if missing.is_empty() {
                return Ok(found);
            }
            state.pending.extend_from_slice(&missing);
            match &state.gathering {
                Some(batch) => batch.clone(),
                None => {
                    let (done, signal) = tokio::sync::oneshot::channel();
                    let batch = Arc::new(Gathering { read: OnceLock::new(), done: signal.shared() });
                    state.gathering = Some(batch.clone());
                    let inner = self.inner.clone();
                    self.inner.queue.push(Box::pin(async move {
                        inner.run_batch().await;
                        let _ = done.send(());
                    }));
                    batch
                }
            }
        };
        // Sent once the batch is read; a batch dropped unread (its request went away) ends too.
        let _ = batch.done.clone().await;
        match batch.read.get() {
            Some(Ok(read)) => {
                found.extend(missing.into_iter().filter_map(|key| Some((key, read.get(&key)?.clone()))));
                Ok(found)
            }
            Some(Err(e)) => Err(e.clone()),
            None => Err(Arc::new(DbErr::Custom("a batch load ended before it read anything".into()))),
        }
    }
}

impl<T: Loader<i64, Error = Arc<DbErr>>> BatchedInner<T> {
    /// Reads the gathered keys; later asks start the next batch.
    async fn run_batch(&self) {
        let (batch, mut keys) = {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            (state.gathering.take(), std::mem::take(&mut state.pending))
        };
        let Some(batch) = batch else { return };
        keys.sort_unstable();
        keys.dedup();
        let read = self.loader.load(&keys).await;
        if self.keep
            && let Ok(read) = &read
        {
            let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
            state.known.extend(keys.iter().map(|key| (*key, read.get(key).cloned())));
        }
        let _ = batch.read.set(read);
    }
}

/// Batch loads waiting for the current poll of their request to end.
#[derive(Clone, Default)]
pub struct BatchQueue(Arc<Mutex<Vec<BoxFuture<'static, ()>>>>);

impl BatchQueue {
    fn push(&self, task: BoxFuture<'static, ()>) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(task);
    }

    fn start_all(&self) {
        let tasks = std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()));
        for task in tasks {
            tokio::spawn(task);
        }
    }
}

/// Polls a request and starts the batches it asked for once it is idle.
pub struct WithBatches<F> {
    inner: Pin<Box<F>>,
    batches: BatchQueue,
}

impl<F> WithBatches<F> {
    pub fn new(inner: F, batches: BatchQueue) -> Self {
        Self { inner: Box::pin(inner), batches }
    }
}

impl<F: Future> Future for WithBatches<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let watch = Arc::new(WakeWatch { woken: AtomicBool::new(false), waker: cx.waker().clone() });
        let waker = Waker::from(watch.clone());
        let result = self.inner.as_mut().poll(&mut Context::from_waker(&waker));
        // Woken during its own poll (a yield, a budget): it runs again at once and may ask for
        // more keys of the same level, so its batches wait until it is really idle.
        if result.is_ready() || !watch.woken.load(Ordering::Acquire) {
            self.batches.start_all();
        }
        result
    }
}

/// The same for a subscription's stream: each event's fields load in batches too.
impl<S: futures_util::Stream> futures_util::Stream for WithBatches<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let watch = Arc::new(WakeWatch { woken: AtomicBool::new(false), waker: cx.waker().clone() });
        let waker = Waker::from(watch.clone());
        let result = self.inner.as_mut().poll_next(&mut Context::from_waker(&waker));
        if result.is_ready() || !watch.woken.load(Ordering::Acquire) {
            self.batches.start_all();
        }
        result
    }
}

/// Forwards wake-ups to the task and remembers that one happened.
struct WakeWatch {
    woken: AtomicBool,
    waker: Waker,
}

impl Wake for WakeWatch {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.waker.wake_by_ref();
    }
}
