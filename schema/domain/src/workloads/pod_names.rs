//! Names for the pods agents report by UID. On a Kubernetes cluster the gateway asks the
//! cluster which pods are bound to the node, so the agent needs no right to list pods, and
//! neither an agent nor a tenant's process holding its token can put another namespace's
//! name on a GPU: a UID that is not on the node's list is stored without names.
//!
//! Each node's list is kept [`FRESH`] and asked for again sooner (at most every
//! [`MIN_REFRESH`]) when a report brings a UID it lacks: a new pod is named within seconds,
//! and a flood of reports with made-up UIDs costs the cluster one list per node per
//! [`MIN_REFRESH`].

use crate::ports::{NodePod, ProviderError};
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// How long a node's pod list is used without asking again.
pub const FRESH: Duration = Duration::from_secs(30);
/// The soonest a node's pods are asked for again, whatever UIDs a report brings.
pub const MIN_REFRESH: Duration = Duration::from_secs(5);
/// Lists older than this are dropped when another is stored (nodes that left).
const FORGET: Duration = Duration::from_secs(600);

/// A node's pods by UID.
pub type NodePods = Arc<HashMap<String, NodePod>>;

struct Listing {
    asked: Instant,
    pods: NodePods,
}

/// The pods of each Kubernetes node, by (cluster id, node name), as last listed.
#[derive(Default)]
pub struct PodDirectory {
    nodes: Mutex<HashMap<(i64, String), Listing>>,
}

impl PodDirectory {
    /// The pods on node `node` of cluster `cluster_id`, listed with `list` when what is known
    /// is stale or lacks one of `uids`. A failed list keeps what was known (or nothing) and is
    /// not retried before [`MIN_REFRESH`].
    pub async fn pods_on<F>(&self, cluster_id: i64, node: &str, uids: &[&str], list: impl FnOnce() -> F) -> NodePods
    where
        F: Future<Output = Result<Vec<NodePod>, ProviderError>>,
    {
        let key = (cluster_id, node.to_owned());
        let known = {
            let nodes = self.nodes.lock().unwrap_or_else(|p| p.into_inner());
            nodes.get(&key).map(|l| (l.asked.elapsed(), l.pods.clone()))
        };
        if let Some((age, pods)) = &known {
            let complete = uids.iter().all(|uid| pods.contains_key(*uid));
            if *age < MIN_REFRESH || (*age < FRESH && complete) {
                return pods.clone();
            }
        }
        let pods = match list().await {
            Ok(listed) => Arc::new(listed.into_iter().map(|p| (p.uid.clone(), p)).collect()),
            Err(error) => {
                tracing::warn!(cluster = cluster_id, node, error = %error, "cannot list the node's pods: GPU processes keep their pod UIDs only");
                known.map(|(_, pods)| pods).unwrap_or_default()
            }
        };
        let mut nodes = self.nodes.lock().unwrap_or_else(|p| p.into_inner());
        nodes.retain(|_, l| l.asked.elapsed() < FORGET);
        nodes.insert(key, Listing { asked: Instant::now(), pods: pods.clone() });
        pods
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn pod(uid: &str) -> NodePod {
        NodePod { uid: uid.into(), namespace: "team-a".into(), name: format!("pod-{uid}"), containers: HashMap::new() }
    }

    /// A cluster whose node runs `pods`, counting the lists.
    struct Cluster {
        pods: Mutex<Vec<NodePod>>,
        lists: AtomicUsize,
        down: std::sync::atomic::AtomicBool,
    }

    impl Cluster {
        fn running(uids: &[&str]) -> Self {
            Self { pods: Mutex::new(uids.iter().map(|u| pod(u)).collect()), lists: AtomicUsize::new(0), down: Default::default() }
        }
        async fn list(&self) -> Result<Vec<NodePod>, ProviderError> {
            self.lists.fetch_add(1, Ordering::SeqCst);
            if self.down.load(Ordering::SeqCst) {
                return Err(ProviderError::Transient("connection refused".into()));
            }
            Ok(self.pods.lock().expect("pods").clone())
        }
        fn lists(&self) -> usize {
            self.lists.load(Ordering::SeqCst)
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_known_uid_is_named_from_the_cached_list_until_it_is_stale() {
        let cluster = Cluster::running(&["a"]);
        let directory = PodDirectory::default();
        let pods = directory.pods_on(1, "gpu-1", &["a"], || cluster.list()).await;
        assert_eq!(pods.get("a").map(|p| p.name.as_str()), Some("pod-a"));
        tokio::time::advance(FRESH - Duration::from_secs(1)).await;
        directory.pods_on(1, "gpu-1", &["a"], || cluster.list()).await;
        assert_eq!(cluster.lists(), 1, "fresh and complete: not asked again");
        tokio::time::advance(Duration::from_secs(2)).await;
        directory.pods_on(1, "gpu-1", &["a"], || cluster.list()).await;
        assert_eq!(cluster.lists(), 2, "stale: asked again");
        // Another node of the same cluster has a list of its own.
        assert!(directory.pods_on(1, "gpu-2", &[], || cluster.list()).await.contains_key("a"));
        assert_eq!(cluster.lists(), 3);
    }

    #[tokio::test(start_paused = true)]
    async fn an_unknown_uid_asks_again_but_at_most_every_min_refresh() {
        let cluster = Cluster::running(&["a"]);
        let directory = PodDirectory::default();
        directory.pods_on(1, "gpu-1", &["a"], || cluster.list()).await;
        cluster.pods.lock().expect("pods").push(pod("b"));
        // Made-up UIDs in a flood: no list before MIN_REFRESH.
        for _ in 0..100 {
            assert!(!directory.pods_on(1, "gpu-1", &["b"], || cluster.list()).await.contains_key("b"));
        }
        assert_eq!(cluster.lists(), 1);
        tokio::time::advance(MIN_REFRESH).await;
        let pods = directory.pods_on(1, "gpu-1", &["b"], || cluster.list()).await;
        assert_eq!(pods.get("b").map(|p| p.name.as_str()), Some("pod-b"), "the new pod is named");
        assert_eq!(cluster.lists(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_cluster_that_does_not_answer_keeps_the_last_list_and_is_not_hammered() {
        let cluster = Cluster::running(&["a"]);
        let directory = PodDirectory::default();
        directory.pods_on(1, "gpu-1", &[], || cluster.list()).await;
        tokio::time::advance(FRESH).await;
        cluster.down.store(true, Ordering::SeqCst);
        let pods = directory.pods_on(1, "gpu-1", &["a"], || cluster.list()).await;
        assert!(pods.contains_key("a"), "the last list still names the pod");
        directory.pods_on(1, "gpu-1", &["x"], || cluster.list()).await;
        assert_eq!(cluster.lists(), 2, "the failed list is not retried at once");
        // A node never listed, with the cluster down: no names.
        assert!(directory.pods_on(1, "gpu-9", &["a"], || cluster.list()).await.is_empty());
    }
}
