//! `egs serve --demo`: two simulated clusters with mixed pools, three slices with members and
//! policies, users with tokens, and a few GPRs — through the same services the API uses.

pub mod history;
pub mod telemetry;

use crate::bootstrap::{schema_error, write_private_file};
use egs_domain::App;
use egs_domain::auth::Caller;
use egs_domain::cluster::service as clusters;
use egs_domain::gpr::service as gprs;
use egs_domain::inventory::service::{GpuReport, NodeReport, upsert_nodes};
use egs_domain::patch::MaybeUndefined;
use egs_domain::slice::service as slices;
use egs_domain::template::service as templates;
use egs_domain::token::service::{IssueToken, issue_token};
use egs_domain::user::service::{CreateUser, create_user, find_user_by_name};
use egs_entities::{ClusterProvider, Role, SlicePolicy, SliceRole};
use std::collections::BTreeMap;
use std::path::Path;

/// A pool to create: count × (instance type, shape, GPUs per node, MiB per GPU).
struct PoolSpec {
    prefix: &'static str,
    count: usize,
    instance_type: &'static str,
    shape: &'static str,
    gpus: i32,
    memory_mib: i64,
    power_watts: f64,
}

const H100: PoolSpec = PoolSpec {
    prefix: "h100",
    count: 8,
    instance_type: "p5.48xlarge",
    shape: "NVIDIA-H100-80GB-HBM3",
    gpus: 8,
    memory_mib: 81_559,
    power_watts: 700.0,
};
const A100: PoolSpec = PoolSpec {
    prefix: "a100",
    count: 8,
    instance_type: "a2-ultragpu-8g",
    shape: "NVIDIA-A100-SXM4-80GB",
    gpus: 8,
    memory_mib: 81_920,
    power_watts: 400.0,
};
const L40S: PoolSpec =
    PoolSpec { prefix: "l40s", count: 3, instance_type: "g6e.12xlarge", shape: "NVIDIA-L40S", gpus: 4, memory_mib: 46_068, power_watts: 350.0 };

fn node_reports(cluster: &str, pools: &[&PoolSpec]) -> Vec<NodeReport> {
    let mut reports = Vec::new();
    for pool in pools {
        for n in 0..pool.count {
            let name = format!("{cluster}-{}-{n:02}", pool.prefix);
            reports.push(NodeReport {
                gpus: Some(
                    (0..pool.gpus)
                        .map(|i| GpuReport {
                            uuid: format!("GPU-{name}-{i}"),
                            index: i,
                            model: pool.shape.into(),
                            memory_mib: pool.memory_mib,
                            mig_enabled: false,
                        })
                        .collect(),
                ),
                name,
                instance_type: Some(pool.instance_type.into()),
                gpu_shape: pool.shape.into(),
                gpus_per_node: pool.gpus,
                gpu_memory_mib: pool.memory_mib,
                zone: MaybeUndefined::Undefined,
                driver_version: MaybeUndefined::Value("550.127.05".into()),
                cuda_version: MaybeUndefined::Value("12.4".into()),
                power_threshold_watts: MaybeUndefined::Value(pool.power_watts),
                temperature_threshold_celsius: MaybeUndefined::Value(87.0),
                health: None,
                // The H100 instances come with an RDMA fabric (EFA); the others do not.
                rdma: Some(pool.shape == H100.shape),
            });
        }
    }
    reports
}

/// Seeds once: does nothing when the demo slices exist already.
pub async fn seed(services: &App, data_dir: &Path) -> anyhow::Result<()> {
    let db = &services.db;
    let system = Caller::system();
    if slices::find_slice_by_name(db, &system, "nlp-research").await.is_ok() {
        tracing::info!("demo data already present");
        return Ok(());
    }
    let east = clusters::register_cluster(
        db,
        &system,
        services.sealer(),
        clusters::RegisterCluster {
            name: "gpu-east".into(),
            provider: ClusterProvider::Simulated,
            cloud: Some("aws".into()),
            region: Some("us-east-1".into()),
            credentials: clusters::Credentials::None,
            pod_placement: None,
        },
    )
    .await
    .map_err(schema_error)?;
    let west = clusters::register_cluster(
        db,
        &system,
        services.sealer(),
        clusters::RegisterCluster {
            name: "gpu-west".into(),
            provider: ClusterProvider::Simulated,
            cloud: Some("gcp".into()),
            region: Some("us-west1".into()),
            credentials: clusters::Credentials::None,
            pod_placement: None,
        },
    )
    .await
    .map_err(schema_error)?;
    upsert_nodes(db, &system, east.id, node_reports("east", &[&H100, &L40S])).await.map_err(schema_error)?;
    upsert_nodes(db, &system, west.id, node_reports("west", &[&A100, &L40S])).await.map_err(schema_error)?;

    let mut users = BTreeMap::new();
    for name in ["alice", "bob", "carol", "dave"] {
        let user = match find_user_by_name(db, name).await.map_err(schema_error)? {
            Some(user) => user,
            None => {
                let made = create_user(db, &system, CreateUser { name: name.into(), email: Some(format!("{name}@example.com")), role: Role::User })
                    .await
                    .map_err(schema_error)?;
                egs_domain::slice::personal::welcome(db, &made).await;
                made
            }
        };
        users.insert(name, user.id);
    }
    let member = |name: &str, role| slices::MemberSpec { user_id: users[name], role };
    let ns = |cluster_id, name: &str| slices::NamespaceSpec { cluster_id, name: name.into() };

    let nlp = slices::create_slice(
        db,
        &system,
        slices::CreateSlice {
            name: "nlp-research".into(),
            description: Some("LLM pre-training and fine-tuning".into()),
            cluster_ids: vec![],
            namespaces: vec![ns(east.id, "nlp"), ns(west.id, "nlp")],
            members: vec![member("alice", SliceRole::Owner), member("bob", SliceRole::Editor)],
            policy: SlicePolicy {
                allowed_shapes: vec![H100.shape.into(), A100.shape.into()],
                max_nodes_per_gpr: Some(4),
                max_duration_secs: Some(24 * 3600),
                default_idle_timeout_secs: Some(2 * 3600),
                ..SlicePolicy::default()
            },
        },
    )
    .await
    .map_err(schema_error)?;
    let vision = slices::create_slice(
        db,
        &system,
        slices::CreateSlice {
            name: "vision".into(),
            description: Some("Image models".into()),
            cluster_ids: vec![],
            namespaces: vec![ns(west.id, "vision")],
            members: vec![member("carol", SliceRole::Owner), member("bob", SliceRole::Viewer)],
            policy: SlicePolicy {
                allowed_shapes: vec![A100.shape.into(), L40S.shape.into()],
                priority_max: 150,
                max_nodes_per_gpr: Some(2),
                ..SlicePolicy::default()
            },
        },
    )
    .await
    .map_err(schema_error)?;
    slices::create_slice(
        db,
        &system,
        slices::CreateSlice {
            name: "inference".into(),
            description: Some("Production inference; never preempted".into()),
            cluster_ids: vec![],
            namespaces: vec![ns(east.id, "serving"), ns(west.id, "serving")],
            members: vec![member("dave", SliceRole::Owner)],
            policy: SlicePolicy { allowed_shapes: vec![L40S.shape.into()], auto_eviction: false, ..SlicePolicy::default() },
        },
    )
    .await
    .map_err(schema_error)?;

    // Two weeks of finished GPRs first, so the usage reports have history (and the scheduler's
    // fair share and early-release predictor something to learn from).
    let past = |slice_id, name: &'static str, cluster_id, pool: &'static PoolSpec, priority| history::Past {
        slice_id,
        requester_id: users[name],
        requester: name,
        cluster_id,
        shape: pool.shape,
        instance_type: pool.instance_type,
        priority,
    };
    let who = [past(nlp.id, "alice", east.id, &H100, 150), past(nlp.id, "bob", west.id, &A100, 101), past(vision.id, "carol", west.id, &A100, 120)];
    history::seed(db, &who, chrono::Utc::now()).await?;

    let alice = member_caller(services, data_dir, users["alice"], "alice").await?;
    let carol = member_caller(services, data_dir, users["carol"], "carol").await?;
    for name in ["bob", "dave"] {
        member_caller(services, data_dir, users[name], name).await?;
    }
    for (caller, slice_id, name, nodes, shape, priority, hours) in [
        (&alice, nlp.id, "llama-70b-finetune", 4, H100.shape, 150, 12),
        (&alice, nlp.id, "eval-sweep", 1, A100.shape, 101, 3),
        (&carol, vision.id, "vit-pretrain", 2, A100.shape, 120, 8),
        // Over the slice's 2-node limit: waits for an admin's approval.
        (&carol, vision.id, "detector-large", 3, A100.shape, 110, 6),
    ] {
        let spec = egs_domain::gpr::spec::GprSpec {
            slice_id,
            name: name.into(),
            node_count: nodes,
            gpus_per_node: None,
            min_gpu_memory_mib: None,
            gpu_shape: Some(shape.into()),
            instance_type: None,
            preferred_cluster_ids: vec![],
            priority,
            duration_secs: hours * 3600,
            idle_timeout_secs: None,
            preemptible: true,
            requeue_on_failure: None,
            earliest_start_at: None,
            labels: BTreeMap::from([("team".to_owned(), "demo".to_owned())]),
            source: None,
            template_id: None,
            workload: None,
        };
        gprs::create_gpr(db, caller, spec).await.map_err(schema_error)?;
    }

    // The catalogue of profiles New GPR starts from: one for the LLM team, one for the slices
    // that may use A100s.
    let profiles = [
        ("llm-finetune", "One H100 node for half a day: LoRA or full fine-tuning of models up to 70B", H100.shape, 120, 12, 2 * 3600, vec![nlp.id]),
        (
            "a100-notebook",
            "One A100 node for an afternoon of interactive work; released after 30 idle minutes",
            A100.shape,
            101,
            4,
            1800,
            vec![nlp.id, vision.id],
        ),
    ];
    for (name, description, shape, priority, hours, idle, slices) in profiles {
        let spec = templates::TemplateSpec {
            name: name.into(),
            description: Some(description.into()),
            node_count: 1,
            gpus_per_node: None,
            gpu_shape: Some(shape.into()),
            instance_type: None,
            priority,
            duration_secs: hours * 3600,
            idle_timeout_secs: Some(idle),
        };
        let template = templates::create_template(db, &system, spec).await.map_err(schema_error)?;
        templates::publish_template(db, &system, template.id, slices, false).await.map_err(schema_error)?;
    }
    tracing::info!(data_dir = %data_dir.display(), "demo data seeded; user tokens are in demo-tokens/");
    Ok(())
}

/// Issues a token for a demo user, writes it to `<data-dir>/demo-tokens/<name>.token`, and
/// returns that user as a caller.
async fn member_caller(services: &App, data_dir: &Path, user_id: i64, name: &str) -> anyhow::Result<Caller> {
    let issued = issue_token(
        &services.db,
        &services.keys,
        IssueToken {
            name: format!("demo token for {name}"),
            role: Role::User,
            user_id: Some(user_id),
            slice_scopes: None,
            cluster_id: None,
            node_name: None,
            ttl_secs: egs_domain::token::service::DEFAULT_TOKEN_TTL_SECS,
            created_by: None,
        },
    )
    .await
    .map_err(schema_error)?;
    write_private_file(&data_dir.join("demo-tokens").join(format!("{name}.token")), &format!("{}\n", issued.secret))?;
    egs_domain::auth::authenticate(&services.db, &services.keys, &services.token_cache, &issued.secret).await.map_err(schema_error)
}
