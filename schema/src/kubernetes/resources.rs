//! (being written) The `GPUProvisioningRequest` custom resource and its controller.

use super::controllers::ControllerContext;
use egs_entities::cluster;
use std::sync::Arc;

/// Serves the cluster's `GPUProvisioningRequest` resources until aborted.
pub async fn run(_ctx: Arc<ControllerContext>, _cluster: cluster::Model, _client: kube::Client) {
    std::future::pending::<()>().await
}
