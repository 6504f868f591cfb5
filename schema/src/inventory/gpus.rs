//! A GPU as the API shows it: from its row, or (on a page that reads no samples) from its
//! description in the catalog; and the batched reads a page of GPUs prefetches.

use super::GpuNode;
use crate::ids::{self, Kind};
use crate::{loaded, loaders};
use async_graphql::{Context, ID, Object};
use chrono::{DateTime, Utc};
use egs_domain::error::Result;
use egs_domain::inventory::catalog;
use egs_entities::gpu;
use std::sync::Arc;

/// One GPU of a node: its row, or (on a page that reads no samples) its description from the
/// [`catalog`], whose row a field that needs it reads, batched with the page's others.
pub struct Gpu(GpuRow);

// Unboxed: a row is what most GPUs carry, and boxing it would allocate once per GPU on a page.
#[allow(clippy::large_enum_variant)]
enum GpuRow {
    Row(gpu::Model),
    Described(Arc<catalog::DescribedGpu>),
}

/// A described field of a GPU, from its row or its description alike.
macro_rules! described {
    ($gpu:expr, $field:ident) => {
        match &$gpu.0 {
            GpuRow::Row(g) => &g.$field,
            GpuRow::Described(g) => &g.$field,
        }
    };
}

impl From<gpu::Model> for Gpu {
    fn from(row: gpu::Model) -> Self {
        Gpu(GpuRow::Row(row))
    }
}

impl Gpu {
    /// A GPU of a page served from the catalog.
    pub(super) fn described(description: Arc<catalog::DescribedGpu>) -> Self {
        Gpu(GpuRow::Described(description))
    }

    pub fn row_id(&self) -> i64 {
        *described!(self, id)
    }

    fn node_id(&self) -> i64 {
        *described!(self, node_id)
    }

    /// Its row with the latest sample: at hand, or read (`None` when it is gone since).
    async fn row(&self, ctx: &Context<'_>) -> Result<Option<std::borrow::Cow<'_, gpu::Model>>> {
        Ok(match &self.0 {
            GpuRow::Row(g) => Some(std::borrow::Cow::Borrowed(g)),
            GpuRow::Described(g) => loaded(loaders(ctx)?.gpu().load_one(g.id).await)?.map(std::borrow::Cow::Owned),
        })
    }
}

#[Object]
impl Gpu {
    pub async fn id(&self) -> ID {
        ids::encode(Kind::Gpu, self.row_id())
    }
    async fn uuid(&self) -> &str {
        described!(self, uuid)
    }
    /// Index on its node, as NVML numbers it.
    async fn index(&self) -> i32 {
        *described!(self, gpu_index)
    }
    async fn model(&self) -> &str {
        described!(self, model)
    }
    async fn memory_mib(&self) -> i64 {
        *described!(self, memory_mib)
    }
    async fn mig_enabled(&self) -> bool {
        *described!(self, mig_enabled)
    }
    async fn node(&self, ctx: &Context<'_>) -> Result<Option<GpuNode>> {
        Ok(loaded(loaders(ctx)?.node().load_one(self.node_id()).await)?.map(GpuNode))
    }
    /// The newest sample its agent reported; null when none, or when you may not read it
    /// (admins read all; users read GPUs of nodes their slices' GPRs hold, from the node's
    /// assignment on).
    async fn latest_sample(&self, ctx: &Context<'_>) -> Result<Option<crate::metrics::GpuSample>> {
        crate::boxed(async move {
            match &self.0 {
                GpuRow::Row(g) => crate::metrics::latest_sample(ctx, &g.uuid, g.node_id, &g.into()).await,
                // Described: its sample columns alone, batched with the page's others.
                GpuRow::Described(g) => match loaded(loaders(ctx)?.gpu_sample().load_one(g.id).await)? {
                    Some(stored) => crate::metrics::latest_sample(ctx, &g.uuid, g.node_id, &stored).await,
                    None => Ok(None),
                },
            }
        })
        .await
    }
    /// The processes running on it, with their pods, as its agent last reported them; empty
    /// when none, or when you may not read this GPU's metrics.
    async fn processes(&self, ctx: &Context<'_>) -> Result<Vec<crate::workloads::GpuProcess>> {
        crate::boxed(async move {
            match self.row(ctx).await? {
                Some(row) => crate::workloads::gpu_processes(ctx, &row).await,
                None => Ok(Vec::new()),
            }
        })
        .await
    }
    /// The pods whose processes use it, each with every GPU of the node it uses; empty when
    /// none, or when you may not read this GPU's metrics.
    async fn pods(&self, ctx: &Context<'_>) -> Result<Vec<crate::workloads::GpuPod>> {
        crate::boxed(async move {
            match self.row(ctx).await? {
                Some(row) => crate::workloads::gpu_pods(ctx, &row).await,
                None => Ok(Vec::new()),
            }
        })
        .await
    }
    /// History between `from` and `to` (default: the last 10 minutes) in steps of `step`:
    /// 1 s resolution for the last 10 minutes, 1 min (steps of whole minutes) for 24 hours.
    /// Steps without samples are left out; users see samples from their GPR's assignment of
    /// the node on. `NOT_FOUND` when you may not read this GPU's metrics.
    async fn metrics(
        &self,
        ctx: &Context<'_>,
        from: Option<DateTime<Utc>>,
        to: Option<DateTime<Utc>>,
        step: Option<crate::scalars::Duration>,
    ) -> Result<Vec<crate::metrics::GpuMetricPoint>> {
        crate::boxed(async move {
            match self.row(ctx).await? {
                Some(row) => crate::metrics::history(ctx, &row, from, to, step).await,
                None => Err(egs_domain::error::Error::NotFound("GPU")),
            }
        })
        .await
    }
}

/// Whether the fields selected on a list of GPUs read their samples.
fn reads_samples(selected: &crate::pagination::Selection<'_>) -> bool {
    selected.field("latestSample").exists() || reads_rows(selected)
}

/// Whether they read the GPUs' whole rows (`latestSample` alone reads the sample columns).
pub(super) fn reads_rows(selected: &crate::pagination::Selection<'_>) -> bool {
    ["processes", "pods", "metrics"].iter().any(|f| selected.field(f).exists())
}

/// Reads, one batch per relation, what the fields selected on a list of GPUs will ask for (the
/// described GPUs' latest samples, their nodes, the nodes' clusters, and what a user's sample
/// check reads), so each GPU's fields answer at once instead of every GPU waiting on a batch
/// per level.
pub(crate) async fn prefetch_for_gpus<'a>(
    ctx: &Context<'_>,
    gpus: impl Iterator<Item = &'a Gpu>,
    selected: crate::pagination::Selection<'_>,
) -> Result<()> {
    let caller = crate::caller(ctx)?;
    let loaders = loaders(ctx)?;
    let node = selected.field("node");
    // Admins read every sample; a user's check reads the node's GPR and its assignments.
    let checks_samples = !caller.is_admin() && reads_samples(&selected);
    let samples = selected.field("latestSample").exists();
    if !node.exists() && !checks_samples && !samples {
        return Ok(());
    }
    let gpus: Vec<&Gpu> = gpus.collect();
    if samples {
        let described = gpus.iter().filter_map(|g| match &g.0 {
            GpuRow::Described(d) => Some(d.id),
            GpuRow::Row(_) => None,
        });
        loaded(loaders.gpu_sample().prefetch(described).await)?;
    }
    if !node.exists() && !checks_samples {
        return Ok(());
    }
    let node_ids: std::collections::BTreeSet<i64> = gpus.iter().map(|g| g.node_id()).collect();
    let nodes = loaded(loaders.node().load_many(node_ids).await)?;
    let gprs: std::collections::BTreeSet<i64> = nodes.values().filter_map(|n| n.allocated_gpr_id).collect();
    let holders = checks_samples || node.field("allocatedGpr").exists();
    loaded(
        futures_util::future::try_join3(
            loaders.cluster().prefetch_when(node.field("cluster").exists(), nodes.values().map(|n| n.cluster_id)),
            loaders.gpr().prefetch_when(holders, gprs.iter().copied()),
            loaders.node_links_by_gpr().prefetch_when(holders, gprs.iter().copied()),
        )
        .await,
    )
    .map(drop)
}
