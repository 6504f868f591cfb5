//! EGS's cordons on the Kubernetes nodes themselves. A node an admin cordons or drains in EGS,
//! or that a maintenance window takes out, is cordoned in its cluster too (`spec.unschedulable`),
//! so pods from outside EGS stay off it as well; when EGS lets it go, the cordon is lifted — if
//! EGS set it. The leader reconciles each Kubernetes cluster every few seconds: the nodes EGS
//! has cordoned against the nodes labelled [`MAINTENANCE_LABEL`] there, so a missed change, a
//! restart or a new leader converge on the next round.
//!
//! [`MAINTENANCE_ANNOTATION`] says whose the cordon is: `cordoned` when EGS set
//! `unschedulable`, `kept` when the node was unschedulable already (someone else's cordon,
//! which EGS leaves in place). A release's own cordon (`egs.io/cordoned`) on a node EGS then
//! holds for maintenance passes to the maintenance (see `provision::take_node_back`).

use super::{CORDONED_ANNOTATION, classify, is_conflict, is_not_found};
use egs_domain::ports::ProviderError;
use egs_entities::node;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, ListParams, Patch, PatchParams};
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect};
use serde_json::json;
use std::collections::BTreeSet;
use std::time::Duration;

/// On nodes EGS keeps cordoned for maintenance (what a round lists).
pub const MAINTENANCE_LABEL: &str = "egs.io/maintenance";
/// Whose the cordon is: `cordoned` (EGS set it) or `kept` (it was there already).
pub const MAINTENANCE_ANNOTATION: &str = "egs.io/maintenance-cordon";
/// Between rounds.
pub const ROUND_EVERY: Duration = Duration::from_secs(3);
const CONFLICT_RETRIES: usize = 8;

/// Reconciles one cluster until the task is stopped.
pub async fn run(db: DatabaseConnection, cluster_id: i64, client: kube::Client) {
    let nodes: Api<Node> = Api::all(client);
    loop {
        if let Err(error) = round(&db, cluster_id, &nodes).await {
            tracing::warn!(cluster = cluster_id, error = %error, "could not bring the cluster's node cordons in step; retrying");
        }
        tokio::time::sleep(ROUND_EVERY).await;
    }
}

/// One round: cordons what EGS cordoned and the cluster does not show, lifts what EGS let go.
pub async fn round(db: &DatabaseConnection, cluster_id: i64, nodes: &Api<Node>) -> Result<(usize, usize), ProviderError> {
    let wanted: BTreeSet<String> = node::Entity::find()
        .select_only()
        .column(node::Column::Name)
        .filter(node::Column::ClusterId.eq(cluster_id))
        .filter(node::Column::CordonedAt.is_not_null())
        .into_tuple::<String>()
        .all(db)
        .await
        .map_err(|e| ProviderError::Transient(format!("cannot read the cordoned nodes: {e}")))?
        .into_iter()
        .collect();
    let marked: BTreeSet<String> = nodes
        .list_metadata(&ListParams::default().labels(MAINTENANCE_LABEL))
        .await
        .map_err(|e| classify("cannot list the nodes EGS cordoned", e))?
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    let (mut cordoned, mut lifted) = (0, 0);
    for name in wanted.difference(&marked) {
        cordoned += usize::from(cordon(nodes, name).await?);
    }
    for name in marked.difference(&wanted) {
        lifted += usize::from(lift(nodes, name).await?);
    }
    Ok((cordoned, lifted))
}

/// Marks and cordons a node; `false` when the cluster has no such node.
async fn cordon(nodes: &Api<Node>, name: &str) -> Result<bool, ProviderError> {
    for _ in 0..CONFLICT_RETRIES {
        let node = match nodes.get(name).await {
            Ok(node) => node,
            Err(e) if is_not_found(&e) => return Ok(false),
            Err(e) => return Err(classify(&format!("cannot read node `{name}`"), e)),
        };
        let already = node.spec.as_ref().and_then(|s| s.unschedulable).unwrap_or(false);
        // A release's cordon in progress becomes the maintenance's: the release then leaves it.
        let releasing = node.metadata.annotations.as_ref().is_some_and(|a| a.contains_key(CORDONED_ANNOTATION));
        let whose = if already && !releasing { "kept" } else { "cordoned" };
        // Conditional on what was read: someone else's cordon since must not become ours.
        let patch = json!({
            "metadata": {
                "resourceVersion": node.metadata.resource_version,
                "labels": { MAINTENANCE_LABEL: "true" },
                "annotations": { MAINTENANCE_ANNOTATION: whose },
            },
            "spec": { "unschedulable": true },
        });
        match nodes.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(_) => return Ok(true),
            Err(e) if is_conflict(&e) => continue,
            Err(e) => return Err(classify(&format!("cannot cordon node `{name}`"), e)),
        }
    }
    Err(ProviderError::Transient(format!("node `{name}` kept changing while cordoning; retrying")))
}

/// Unmarks a node, lifting the cordon if EGS set it and no release of EGS still needs it.
async fn lift(nodes: &Api<Node>, name: &str) -> Result<bool, ProviderError> {
    for _ in 0..CONFLICT_RETRIES {
        let node = match nodes.get(name).await {
            Ok(node) => node,
            Err(e) if is_not_found(&e) => return Ok(false),
            Err(e) => return Err(classify(&format!("cannot read node `{name}`"), e)),
        };
        let annotations = node.metadata.annotations.as_ref();
        let ours = annotations.and_then(|a| a.get(MAINTENANCE_ANNOTATION)).is_some_and(|w| w == "cordoned");
        let releasing = annotations.is_some_and(|a| a.contains_key(CORDONED_ANNOTATION));
        let mut patch = json!({
            "metadata": {
                "resourceVersion": node.metadata.resource_version,
                "labels": { MAINTENANCE_LABEL: null },
                "annotations": { MAINTENANCE_ANNOTATION: null },
            },
        });
        if ours && !releasing {
            patch["spec"] = json!({ "unschedulable": null });
        }
        match nodes.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Ok(_) => return Ok(true),
            Err(e) if is_conflict(&e) => continue,
            Err(e) => return Err(classify(&format!("cannot uncordon node `{name}`"), e)),
        }
    }
    Err(ProviderError::Transient(format!("node `{name}` kept changing while uncordoning; retrying")))
}
