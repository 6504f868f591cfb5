//! DataLoaders for every relation the schema resolves, so a page of N objects with their
//! relations costs a fixed number of SQL statements, not N. One set per request.
//!
//! Batches are cut by the request's progress, not by a clock: a batch starts only when the
//! request has nothing left to do but wait (a poll ends without the request having woken
//! itself), so every key one level of the query asks for lands in one batch however busy the
//! machine is. The stock 1 ms timer cuts batches apart under load, multiplying statements.

use async_graphql::dataloader::{DataLoader, Loader};
use egs_entities::{cluster, gpr, gpr_node, gpu, node, slice, slice_cluster, slice_member, slice_namespace, user};
use futures_util::future::BoxFuture;
use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

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
    cluster: OnceLock<DataLoader<ClusterById>>,
    node: OnceLock<DataLoader<NodeById>>,
    slice: OnceLock<DataLoader<SliceById>>,
    user: OnceLock<DataLoader<UserById>>,
    gpr: OnceLock<DataLoader<GprById>>,
    gpus_by_node: OnceLock<DataLoader<GpusByNode>>,
    node_links_by_gpr: OnceLock<DataLoader<NodeLinksByGpr>>,
    namespaces_by_slice: OnceLock<DataLoader<NamespacesBySlice>>,
    members_by_slice: OnceLock<DataLoader<MembersBySlice>>,
    clusters_by_slice: OnceLock<DataLoader<ClustersBySlice>>,
}

impl Loaders {
    pub fn new(db: &DatabaseConnection, batches: &BatchQueue) -> Self {
        Self {
            db: db.clone(),
            batches: batches.clone(),
            cluster: OnceLock::new(),
            node: OnceLock::new(),
            slice: OnceLock::new(),
            user: OnceLock::new(),
            gpr: OnceLock::new(),
            gpus_by_node: OnceLock::new(),
            node_links_by_gpr: OnceLock::new(),
            namespaces_by_slice: OnceLock::new(),
            members_by_slice: OnceLock::new(),
            clusters_by_slice: OnceLock::new(),
        }
    }

    fn make<T: Loader<i64>>(&self, loader: T) -> DataLoader<T> {
        let queue = self.batches.clone();
        DataLoader::new(loader, move |task| queue.push(task)).delay(Duration::ZERO)
    }

    pub fn cluster(&self) -> &DataLoader<ClusterById> {
        self.cluster.get_or_init(|| self.make(ClusterById(self.db.clone())))
    }

    pub fn node(&self) -> &DataLoader<NodeById> {
        self.node.get_or_init(|| self.make(NodeById(self.db.clone())))
    }

    pub fn slice(&self) -> &DataLoader<SliceById> {
        self.slice.get_or_init(|| self.make(SliceById(self.db.clone())))
    }

    pub fn user(&self) -> &DataLoader<UserById> {
        self.user.get_or_init(|| self.make(UserById(self.db.clone())))
    }

    pub fn gpr(&self) -> &DataLoader<GprById> {
        self.gpr.get_or_init(|| self.make(GprById(self.db.clone())))
    }

    pub fn gpus_by_node(&self) -> &DataLoader<GpusByNode> {
        self.gpus_by_node.get_or_init(|| self.make(GpusByNode(self.db.clone())))
    }

    pub fn node_links_by_gpr(&self) -> &DataLoader<NodeLinksByGpr> {
        self.node_links_by_gpr.get_or_init(|| self.make(NodeLinksByGpr(self.db.clone())))
    }

    pub fn namespaces_by_slice(&self) -> &DataLoader<NamespacesBySlice> {
        self.namespaces_by_slice.get_or_init(|| self.make(NamespacesBySlice(self.db.clone())))
    }

    pub fn members_by_slice(&self) -> &DataLoader<MembersBySlice> {
        self.members_by_slice.get_or_init(|| self.make(MembersBySlice(self.db.clone())))
    }

    pub fn clusters_by_slice(&self) -> &DataLoader<ClustersBySlice> {
        self.clusters_by_slice.get_or_init(|| self.make(ClustersBySlice(self.db.clone())))
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
