//! (being written) Auto-GPR: a GPR from the slice's default template for Pending GPU pods.

use super::controllers::ControllerContext;
use egs_entities::cluster;
use std::sync::Arc;

/// Watches the cluster's Pending GPU pods until aborted.
pub async fn run(_ctx: Arc<ControllerContext>, _cluster: cluster::Model, _client: kube::Client) {
    std::future::pending::<()>().await
}
