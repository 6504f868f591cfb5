//! Kubernetes provisioning end to end against the fake API server (issue 6), through the real
//! `kube` client: how long discovery takes to fill the inventory, how long a GPR takes from
//! `createGpr` to PROVISIONED (every step: precheck, labels and taints, namespace placement,
//! Events) and from early release to COMPLETED (cordon, evictions, clean-up, post-check), and
//! how many API writes each costs.
//!
//! `cargo bench -p egs-tests --bench kube_provisioning`
//!
//! Seed: `NODES` H100 nodes in the fake cluster; `SLICES` slices, each with a namespace holding
//! one running pod per node it will get, submit one GPR of `NODES / SLICES` nodes at once. The
//! fake API server, the gateway and the clients share this machine's cores. Numbers are
//! printed, nothing is asserted.

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use egs_tests::fake_kube::FakeKube;
use egs_tests::fixtures::{self, SHAPE_H100};
use egs_tests::{TestApp, wait_for};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const NODES: usize = 64;
const SLICES: usize = 16;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn summary(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{name:<28} n={:<3} p50 {:>7.1} ms  p99 {:>7.1} ms  max {:>7.1} ms",
        samples.len(),
        ms(percentile(&samples, 0.5)),
        ms(percentile(&samples, 0.99)),
        ms(percentile(&samples, 1.0))
    );
}

async fn phase(app: &TestApp, id: &str) -> String {
    let found = app.ok(&app.admin_token, "query($id: ID!) { gpr(id: $id) { phase } }", json!({ "id": id })).await;
    found["gpr"]["phase"].as_str().unwrap_or_default().to_owned()
}

/// Waits for each GPR to reach `target`; returns how long each took from `since`.
async fn times_to(app: &TestApp, ids: &[String], target: &str, since: Instant) -> Vec<Duration> {
    let mut done: Vec<Option<Duration>> = vec![None; ids.len()];
    let deadline = since + Duration::from_secs(120);
    while done.iter().any(Option::is_none) {
        for (i, id) in ids.iter().enumerate() {
            if done[i].is_none() && phase(app, id).await == target {
                done[i] = Some(since.elapsed());
            }
        }
        assert!(Instant::now() < deadline, "not all GPRs reached {target}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    done.into_iter().flatten().collect()
}

#[tokio::main]
async fn main() {
    let app = TestApp::spawn().await;
    let fake = FakeKube::start().await;
    for n in 0..NODES {
        fake.add_gpu_node(&format!("gpu-{n:03}"), SHAPE_H100, 8, "p5.48xlarge", "us-east-1a", true);
    }
    let started = Instant::now();
    let cluster = fixtures::register_kube_cluster(&app, "k8s", &fake.kubeconfig(), "ADMISSION_PLUGINS").await;
    let count_query = "query($id: ID!) { cluster(id: $id) { pools { freeNodes } } }";
    wait_for("discovery", || async {
        let pools = app.ok(&app.admin_token, count_query, json!({ "id": cluster })).await;
        pools["cluster"]["pools"].as_array().map_or(0, |p| p.iter().map(|p| p["freeNodes"].as_u64().unwrap_or(0)).sum::<u64>()) == NODES as u64
    })
    .await;
    let discovery = started.elapsed();

    let per_gpr = NODES / SLICES;
    let mut tenants = Vec::new();
    for s in 0..SLICES {
        let name = format!("team-{s:02}");
        fake.add_namespace(&name);
        let slice = fixtures::create_slice(&app, &name, &cluster, json!({})).await;
        let (_, token) = fixtures::member(&app, &format!("user-{s:02}"), &slice, "EDITOR").await;
        tenants.push((name, slice, token));
    }
    let writes_before = fake.audit().len();
    let submitted = Instant::now();
    let mut ids = Vec::new();
    for (name, slice, token) in &tenants {
        let created = fixtures::create_gpr(&app, token, slice, name, json!({ "nodeCount": per_gpr })).await;
        ids.push(created["id"].as_str().expect("a GPR id").to_owned());
    }
    let provisioned = times_to(&app, &ids, "PROVISIONED", submitted).await;
    let provision_writes = fake.audit().len() - writes_before;

    // One running pod of the slice on each node, so release evicts for real.
    for (i, id) in ids.iter().enumerate() {
        let nodes = app.ok(&app.admin_token, "query($id: ID!) { gpr(id: $id) { nodes { name } } }", json!({ "id": id })).await;
        for node in nodes["gpr"]["nodes"].as_array().cloned().unwrap_or_default() {
            let node: &Value = &node;
            let node = node["name"].as_str().unwrap_or_default();
            fake.add_pod(&tenants[i].0, &format!("worker-{node}"), Some(node), &[("app", "worker")], 8, "Running");
        }
    }
    let writes_before = fake.audit().len();
    let evictions_before = fake.writes("POST", "/eviction");
    let released = Instant::now();
    for (i, id) in ids.iter().enumerate() {
        app.mutate(
            &tenants[i].2,
            "earlyReleaseGpr",
            "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { phase } userErrors { field message code } } }",
            json!({ "id": id }),
        )
        .await;
    }
    let completed = times_to(&app, &ids, "COMPLETED", released).await;
    let release_writes = fake.audit().len() - writes_before;
    // Counted off the API server's own log: each pod the release evicted is one Eviction POST.
    let evicted = fake.writes("POST", "/eviction") - evictions_before;

    println!("kube_provisioning: {NODES} nodes, {SLICES} GPRs of {per_gpr} nodes, backend {}", app.backend);
    println!("discovery of {NODES} nodes          {:>7.1} ms", discovery.as_secs_f64() * 1000.0);
    summary("createGpr → PROVISIONED", provisioned);
    summary("earlyRelease → COMPLETED", completed);
    println!(
        "API writes per GPR: provisioning {:.1}, release {:.1} ({} pods evicted)",
        provision_writes as f64 / SLICES as f64,
        release_writes as f64 / SLICES as f64,
        evicted
    );
}
