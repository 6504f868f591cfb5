//! Which Kubernetes pod a GPU process belongs to, so the gateway (and `/metrics`) can show
//! workload → pods → GPUs. NVML gives the PIDs (in the host's PID namespace); a PID's cgroup
//! path (`/proc/<pid>/cgroup`) carries its pod's UID and its container's id under every
//! cgroup driver and runtime the kubelet uses. The gateway names the pod and container from
//! its cluster's own list of the node's pods (the agent may not list pods), and tells the
//! agent those names for its `/metrics`; with `--kubelet` the agent names them itself from
//! the kubelet's list of the node's pods.
//!
//! [`pod_from_cgroup`] is pure and knows these layouts (cgroup v1 and v2):
//!
//! | driver | path |
//! | --- | --- |
//! | cgroupfs | `/kubepods/burstable/pod<uid>/<container-id>` (`/kubepods/pod<uid>/…` when Guaranteed) |
//! | systemd | `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_with_underscores>.slice/cri-containerd-<id>.scope` (also `crio-<id>.scope`, `docker-<id>.scope`) |
//! | containerd under systemd, nested | `/system.slice/containerd.service/kubepods-burstable-pod<uid>.slice:cri-containerd:<id>` |
//! | kind and other nested nodes | any prefix before the kubepods part (`/kubelet.slice/…`, `/docker/<id>/kubepods/…`) |
//!
//! Static (mirror) pods have a 32-hex-digit hash for a UID; that is recognised too.

use crate::kube::{KubeClient, PodMeta};
use crate::source::PodRef;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;
use tokio::time::Instant;

/// The pod list is fetched again at most this often, when an unknown pod UID shows up.
const MIN_REFRESH: Duration = Duration::from_secs(10);

/// What a process's cgroup says about its pod.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CgroupPod {
    /// With dashes, as the API server writes it.
    pub pod_uid: String,
    /// The container's runtime id (64 hex digits), when the path names it.
    pub container_id: Option<String>,
}

/// Reads the pod UID and container id off the contents of `/proc/<pid>/cgroup`; `None` for a
/// process outside any pod.
pub fn pod_from_cgroup(contents: &str) -> Option<CgroupPod> {
    contents.lines().find_map(|line| {
        // `hierarchy-id:controllers:path`; the path may itself hold colons (nested containerd).
        let path = line.splitn(3, ':').nth(2)?;
        pod_from_path(path)
    })
}

fn pod_from_path(path: &str) -> Option<CgroupPod> {
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let (at, pod_uid) = segments.iter().enumerate().find_map(|(i, s)| uid_in_segment(s).map(|uid| (i, uid)))?;
    // The container is the segment after the pod's (or, nested under systemd, in the same one
    // after `:cri-containerd:`).
    let container_id = segments[at].split(':').skip(1).find_map(container_id).or_else(|| segments.get(at + 1).and_then(|s| container_id(s)));
    Some(CgroupPod { pod_uid, container_id })
}

/// The pod UID in a segment such as `pod0b5a…`, `kubepods-burstable-pod0b5a_…slice`.
fn uid_in_segment(segment: &str) -> Option<String> {
    let segment = segment.split(':').next().unwrap_or(segment);
    let segment = segment.strip_suffix(".slice").unwrap_or(segment);
    let mut search = segment;
    while let Some(found) = search.find("pod") {
        let candidate = &search[found + 3..];
        if let Some(uid) = parse_uid(candidate) {
            // Only when the UID ends the segment: `pod<uid>` is the whole tail.
            return Some(uid);
        }
        search = &search[found + 3..];
    }
    None
}

/// `0b5a1c2e-5f0b-4a6e-9c1e-123456789abc` (dashes or underscores), or a 32-digit hash, as
/// the whole of `text`.
fn parse_uid(text: &str) -> Option<String> {
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    if hex(text, 32) {
        return Some(text.to_ascii_lowercase());
    }
    let normalized = text.replace('_', "-");
    let parts: Vec<&str> = normalized.split('-').collect();
    let lengths = [8, 4, 4, 4, 12];
    (parts.len() == 5 && parts.iter().zip(lengths).all(|(p, n)| hex(p, n))).then(|| normalized.to_ascii_lowercase())
}

/// The container id in a segment such as `cri-containerd-<id>.scope`, `crio-<id>.scope`,
/// `docker-<id>.scope` or a bare `<id>`.
fn container_id(segment: &str) -> Option<String> {
    let segment = segment.strip_suffix(".scope").unwrap_or(segment);
    if segment.starts_with("crio-conmon-") {
        return None;
    }
    let id = segment.rsplit(['-', ':']).next().unwrap_or(segment);
    (id.len() == 64 && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_ascii_lowercase())
}

/// Maps PIDs to pods, caching cgroup reads per PID and the node's pod list.
pub struct PodMapper {
    proc_root: PathBuf,
    /// The kubelet, with `--kubelet`.
    kubelet: Option<KubeClient>,
    /// By pod UID.
    pods: HashMap<String, PodMeta>,
    listed_at: Option<Instant>,
    /// PID → its cgroup's pod, for the PIDs seen on the last call (a PID may be reused later).
    cgroups: HashMap<u32, Option<CgroupPod>>,
    /// Whether a failed listing was already logged (logged again after a success).
    list_failed: bool,
}

impl PodMapper {
    pub fn new(proc_root: PathBuf, kubelet: Option<KubeClient>) -> Self {
        Self { proc_root, kubelet, pods: HashMap::new(), listed_at: None, cgroups: HashMap::new(), list_failed: false }
    }

    /// The pod of each PID that runs in one; PIDs outside pods (or gone) are left out. Pods
    /// the kubelet does not name take the names the gateway gave (`named`).
    pub async fn resolve(&mut self, pids: &[u32], named: &HashMap<String, PodMeta>) -> HashMap<u32, PodRef> {
        let mut cgroups = HashMap::with_capacity(pids.len());
        for &pid in pids {
            let known = self.cgroups.remove(&pid);
            let pod = match known {
                Some(pod) => pod,
                None => std::fs::read_to_string(self.proc_root.join(pid.to_string()).join("cgroup")).ok().and_then(|c| pod_from_cgroup(&c)),
            };
            cgroups.insert(pid, pod);
        }
        self.cgroups = cgroups;
        if self.kubelet.is_some() && self.cgroups.values().flatten().any(|c| !self.pods.contains_key(&c.pod_uid)) {
            self.refresh().await;
        }
        self.cgroups
            .iter()
            .filter_map(|(pid, pod)| {
                let pod = pod.as_ref()?;
                let meta = self.pods.get(&pod.pod_uid).or_else(|| named.get(&pod.pod_uid));
                let container = pod.container_id.as_ref().and_then(|id| meta?.containers.get(id).cloned());
                Some((
                    *pid,
                    PodRef {
                        uid: pod.pod_uid.clone(),
                        namespace: meta.map(|m| m.namespace.clone()),
                        name: meta.map(|m| m.name.clone()),
                        container,
                        container_id: pod.container_id.clone(),
                    },
                ))
            })
            .collect()
    }

    /// Lists the node's pods from the kubelet again, at most every [`MIN_REFRESH`].
    async fn refresh(&mut self) {
        let Some(kubelet) = &self.kubelet else { return };
        if self.listed_at.is_some_and(|at| at.elapsed() < MIN_REFRESH) {
            return;
        }
        self.listed_at = Some(Instant::now());
        let result = kubelet.kubelet_pods().await;
        match result {
            Ok(pods) => {
                self.pods = pods.into_iter().map(|p| (p.uid.clone(), p)).collect();
                self.list_failed = false;
            }
            Err(error) => {
                if !self.list_failed {
                    tracing::warn!(error = %error, "cannot list this node's pods from the kubelet: pods are named by the gateway only");
                }
                self.list_failed = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UID: &str = "0b5a1c2e-5f0b-4a6e-9c1e-123456789abc";
    const CID: &str = "4f1e0c7d2b9a8e6f5d4c3b2a1908f7e6d5c4b3a29180f7e6d5c4b3a291807f6e";

    fn expect(contents: &str, container: bool) {
        let pod = pod_from_cgroup(contents).unwrap_or_else(|| panic!("no pod in {contents}"));
        assert_eq!(pod.pod_uid, UID, "{contents}");
        assert_eq!(pod.container_id.as_deref(), container.then_some(CID), "{contents}");
    }

    #[test]
    fn cgroup_v2_systemd_driver_with_containerd() {
        expect(
            &format!(
                "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice/cri-containerd-{CID}.scope\n",
                UID.replace('-', "_")
            ),
            true,
        );
    }

    #[test]
    fn cgroup_v2_systemd_driver_guaranteed_pod_with_cri_o() {
        expect(&format!("0::/kubepods.slice/kubepods-pod{}.slice/crio-{CID}.scope\n", UID.replace('-', "_")), true);
    }

    #[test]
    fn cgroup_v2_best_effort_with_docker_shim() {
        expect(
            &format!("0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod{}.slice/docker-{CID}.scope", UID.replace('-', "_")),
            true,
        );
    }

    #[test]
    fn cgroup_v1_cgroupfs_driver() {
        let contents = format!(
            "12:pids:/kubepods/burstable/pod{UID}/{CID}\n11:memory:/kubepods/burstable/pod{UID}/{CID}\n1:name=systemd:/kubepods/burstable/pod{UID}/{CID}\n0::/\n"
        );
        expect(&contents, true);
        expect(&format!("4:devices:/kubepods/pod{UID}/{CID}\n"), true);
    }

    #[test]
    fn cgroup_v1_systemd_driver() {
        let contents = format!(
            "10:cpuset:/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{}.slice/cri-containerd-{CID}.scope\n",
            UID.replace('-', "_")
        );
        expect(&contents, true);
    }

    #[test]
    fn containerd_nested_under_its_systemd_service() {
        expect(&format!("0::/system.slice/containerd.service/kubepods-burstable-pod{}.slice:cri-containerd:{CID}\n", UID.replace('-', "_")), true);
    }

    #[test]
    fn kind_and_other_nested_nodes() {
        expect(
            &format!(
                "0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod{}.slice/cri-containerd-{CID}.scope",
                UID.replace('-', "_")
            ),
            true,
        );
        expect(&format!("0::/docker/3f2e1d/kubepods/besteffort/pod{UID}/{CID}"), true);
    }

    #[test]
    fn the_pod_sandbox_or_a_pod_level_process_has_no_container() {
        expect(&format!("0::/kubepods/burstable/pod{UID}\n"), false);
    }

    #[test]
    fn crio_conmon_is_not_the_container() {
        expect(&format!("0::/kubepods.slice/kubepods-pod{}.slice/crio-conmon-{CID}.scope", UID.replace('-', "_")), false);
    }

    #[test]
    fn static_pods_have_hash_uids() {
        let pod = pod_from_cgroup("0::/kubepods/burstable/pod6c9a5b3b2a1f4e8d9c7b6a5f4e3d2c1b/abc").expect("a static pod");
        assert_eq!(pod.pod_uid, "6c9a5b3b2a1f4e8d9c7b6a5f4e3d2c1b");
    }

    #[test]
    fn processes_outside_pods_have_none() {
        for contents in [
            "0::/system.slice/nvidia-persistenced.service\n",
            "0::/user.slice/user-1000.slice/session-3.scope\n",
            "12:pids:/\n0::/init.scope\n",
            "0::/kubepods.slice/kubepods-burstable.slice\n",
            "",
        ] {
            assert_eq!(pod_from_cgroup(contents), None, "{contents}");
        }
    }

    #[tokio::test]
    async fn pids_map_to_pod_uids_through_proc() {
        let proc_root = tempfile::tempdir().expect("a temp dir");
        let write = |pid: u32, contents: &str| {
            let dir = proc_root.path().join(pid.to_string());
            std::fs::create_dir_all(&dir).expect("mkdir");
            std::fs::write(dir.join("cgroup"), contents).expect("write");
        };
        write(100, &format!("0::/kubepods.slice/kubepods-pod{}.slice/cri-containerd-{CID}.scope\n", UID.replace('-', "_")));
        write(200, "0::/system.slice/sshd.service\n");
        let mut mapper = PodMapper::new(proc_root.path().to_owned(), None);
        let pods = mapper.resolve(&[100, 200, 300], &HashMap::new()).await;
        assert_eq!(pods.len(), 1, "{pods:?}");
        let pod = &pods[&100];
        assert_eq!((pod.uid.as_str(), &pod.namespace, &pod.name), (UID, &None, &None), "nobody named it: the UID only");
        assert_eq!(pod.container_id.as_deref(), Some(CID), "the container id goes to the gateway");
        // The gateway's names, once it gave them.
        let named = HashMap::from([(
            UID.to_owned(),
            PodMeta {
                uid: UID.into(),
                namespace: "team-a".into(),
                name: "llama-0".into(),
                containers: HashMap::from([(CID.into(), "trainer".into())]),
            },
        )]);
        let pods = mapper.resolve(&[100], &named).await;
        let pod = &pods[&100];
        assert_eq!((pod.namespace.as_deref(), pod.name.as_deref(), pod.container.as_deref()), (Some("team-a"), Some("llama-0"), Some("trainer")));
    }
}
