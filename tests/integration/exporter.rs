//! `/metrics` re-exports the GPUs' latest samples under NVIDIA dcgm-exporter's names and labels
//! (plus `cluster`, `slice`, `gpr`), as valid OpenMetrics, for dcgm-exporter's dashboards; and
//! `Gpr.gpuSummary`/`Slice.gpuSummary` read like `gpuSummary(gprId|sliceId)`.

use chrono::Utc;
use egs_tests::TestApp;
use egs_tests::fixtures::*;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

const REPORT: &str = "mutation($input: ReportGpuSamplesInput!) {
    reportGpuSamples(input: $input) { accepted duplicates userErrors { field message code } } }";

/// The families `/metrics` exports for GPUs.
const DCGM_FAMILIES: [&str; 10] = [
    "DCGM_FI_DEV_SM_CLOCK",
    "DCGM_FI_DEV_GPU_TEMP",
    "DCGM_FI_DEV_POWER_USAGE",
    "DCGM_FI_DEV_GPU_UTIL",
    "DCGM_FI_DEV_MEM_COPY_UTIL",
    "DCGM_FI_DEV_XID_ERRORS",
    "DCGM_FI_DEV_FB_FREE",
    "DCGM_FI_DEV_FB_USED",
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL",
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
];

/// The memory the fixtures register per GPU, MiB.
const GPU_MEMORY_MIB: f64 = 81559.0;

// ---- A small OpenMetrics text parser, strict where scrapers are ----

/// One sample line.
#[derive(Clone, Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// A parsed exposition: each family's type, and the samples in order.
struct Exposition {
    types: BTreeMap<String, String>,
    samples: Vec<Sample>,
}

impl Exposition {
    /// Parses OpenMetrics text, failing the test on anything a strict scraper would refuse: a
    /// body not ending in exactly one `# EOF`, a family typed twice, a sample outside the family
    /// declared last or not named as its type allows, a bad label name or escape, a bad value.
    fn parse(text: &str) -> Self {
        assert!(text.ends_with("# EOF\n"), "the body ends with `# EOF`: {text}");
        assert_eq!(text.matches("# EOF").count(), 1, "one `# EOF`: {text}");
        let mut types = BTreeMap::new();
        let mut samples = Vec::new();
        let mut current: Option<(String, String)> = None;
        for line in text.lines().filter(|l| *l != "# EOF") {
            if let Some(rest) = line.strip_prefix("# TYPE ") {
                let (name, kind) = rest.split_once(' ').unwrap_or_else(|| panic!("bad TYPE line: {line}"));
                assert!(types.insert(name.to_owned(), kind.to_owned()).is_none(), "family `{name}` typed twice");
                current = Some((name.to_owned(), kind.to_owned()));
            } else if line.starts_with("# HELP ") || line.starts_with("# UNIT ") {
                continue;
            } else {
                assert!(!line.starts_with('#') && !line.is_empty(), "not an OpenMetrics line: {line:?}");
                let sample = parse_sample(line);
                let (family, kind) = current.as_ref().unwrap_or_else(|| panic!("a sample before any TYPE: {line}"));
                let suffixes: &[&str] = match kind.as_str() {
                    "counter" => &["_total", "_created"],
                    "histogram" => &["_bucket", "_sum", "_count", "_created"],
                    "summary" => &["", "_sum", "_count", "_created"],
                    "info" => &["_info"],
                    _ => &[""],
                };
                assert!(
                    suffixes.iter().any(|s| sample.name == format!("{family}{s}")),
                    "sample `{}` does not belong to the {kind} family `{family}` declared before it",
                    sample.name
                );
                samples.push(sample);
            }
        }
        Self { types, samples }
    }

    /// The samples of family `name`.
    fn family(&self, name: &str) -> Vec<&Sample> {
        self.samples.iter().filter(|s| s.name == name).collect()
    }

    /// Family `name`'s sample for the GPU with `uuid`, if any (at most one).
    fn gpu(&self, name: &str, uuid: &str) -> Option<&Sample> {
        let found: Vec<&Sample> = self.family(name).into_iter().filter(|s| s.labels.get("UUID").map(String::as_str) == Some(uuid)).collect();
        assert!(found.len() <= 1, "{name}: one series per GPU: {found:?}");
        found.first().copied()
    }
}

fn is_name(name: &str, first: impl Fn(char) -> bool) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(first) && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn parse_sample(line: &str) -> Sample {
    let end = line.find(['{', ' ']).unwrap_or_else(|| panic!("no value: {line}"));
    let name = &line[..end];
    assert!(is_name(name, |c| c.is_ascii_alphabetic() || c == '_' || c == ':'), "bad metric name in {line}");
    let mut labels = BTreeMap::new();
    let mut rest = &line[end..];
    if let Some(mut inner) = rest.strip_prefix('{') {
        loop {
            if let Some(after) = inner.strip_prefix('}') {
                rest = after;
                break;
            }
            let (key, quoted) = inner.split_once("=\"").unwrap_or_else(|| panic!("a label without `=\"`: {line}"));
            assert!(is_name(key, |c| c.is_ascii_alphabetic() || c == '_'), "bad label name `{key}` in {line}");
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let close = loop {
                match chars.next() {
                    Some((i, '"')) => break i,
                    Some((_, '\\')) => match chars.next() {
                        Some((_, '\\')) => value.push('\\'),
                        Some((_, '"')) => value.push('"'),
                        Some((_, 'n')) => value.push('\n'),
                        other => panic!("bad escape {other:?} in {line}"),
                    },
                    Some((_, c)) => value.push(c),
                    None => panic!("unterminated label value in {line}"),
                }
            };
            assert!(labels.insert(key.to_owned(), value).is_none(), "label `{key}` twice in {line}");
            inner = &quoted[close + 1..];
            match inner.strip_prefix(',') {
                Some(after) => inner = after,
                None => assert!(inner.starts_with('}'), "bad label separator in {line}"),
            }
        }
    }
    let mut fields = rest.strip_prefix(' ').unwrap_or_else(|| panic!("no space before the value: {line}")).split(' ');
    let value = fields.next().and_then(|v| v.parse::<f64>().ok()).unwrap_or_else(|| panic!("bad value in {line}"));
    assert!(fields.next().is_none_or(|t| t.parse::<f64>().is_ok()), "bad timestamp in {line}");
    assert!(fields.next().is_none(), "trailing fields in {line}");
    Sample { name: name.to_owned(), labels, value }
}

// ---- Fixtures ----

/// A node's name and its GPUs' UUIDs by index.
struct Held {
    name: String,
    uuids: Vec<String>,
}

/// Reports as the node's agent (naming the node as agents do); every sample must be accepted.
async fn report(app: &TestApp, token: &str, cluster: &str, node: &str, samples: Vec<Value>) {
    let count = samples.len();
    let input = json!({ "clusterId": cluster, "nodeName": node, "samples": samples });
    let body = app.gql(token, REPORT, json!({ "input": input })).await;
    assert_eq!(body["data"]["reportGpuSamples"]["accepted"], count, "{body}");
}

/// Reports as an admin, naming the node by id (no heartbeat).
async fn report_as_admin(app: &TestApp, node_id: &str, uuids: Vec<String>) {
    let samples: Vec<Value> = uuids.iter().map(|u| gpu_sample(u, Utc::now(), 50.0)).collect();
    app.mutate(&app.admin_token, "reportGpuSamples", REPORT, json!({ "nodeId": node_id, "samples": samples })).await;
}

/// Polls a GPR until it is provisioned; returns its first node.
async fn provisioned(app: &TestApp, token: &str, id: &str) -> Held {
    let gpr = egs_tests::fixtures::provisioned(app, token, id).await;
    let node = &gpr["nodes"][0];
    let mut gpus: Vec<(i64, String)> = node["gpus"]
        .as_array()
        .expect("gpus")
        .iter()
        .map(|g| (g["index"].as_i64().unwrap_or_default(), g["uuid"].as_str().unwrap_or_default().to_owned()))
        .collect();
    gpus.sort();
    Held { name: node["name"].as_str().unwrap_or_default().to_owned(), uuids: gpus.into_iter().map(|(_, u)| u).collect() }
}

/// The fixtures' UUID of GPU `index` of node `name`.
fn uuid_of(cluster: &str, name: &str, index: i32) -> String {
    format!("GPU-{cluster}-{name}-{index}")
}

async fn scrape(app: &TestApp) -> Exposition {
    let response = app.client.get(app.url("/metrics")).bearer_auth(&app.admin_token).send().await.expect("the gateway answers");
    assert_eq!(response.status().as_u16(), 200);
    let content_type = response.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    assert!(content_type.starts_with("application/openmetrics-text"), "{content_type}");
    Exposition::parse(&response.text().await.expect("a body"))
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

/// UUIDs of the GPUs `family` has a series for.
fn exported(metrics: &Exposition, family: &str) -> HashSet<String> {
    metrics.family(family).iter().filter_map(|s| s.labels.get("UUID").cloned()).collect()
}

#[tokio::test]
async fn gpu_samples_are_exported_under_dcgm_exporter_names_and_labels() {
    let app = TestApp::spawn_with(egs_tests::writes_every_report).await;
    let two = two_slices(&app).await; // cluster c1: h100-0..3, 8 GPUs each
    let names: Vec<String> = (0..4).map(|n| format!("h100-{n}")).collect();
    let mut agents = Vec::new();
    for name in &names {
        agents.push(agent_token(&app, &two.cluster, name).await);
    }
    // GPUs 0 and 3 of every node report before any GPR holds the node.
    let before = Utc::now();
    for (name, agent) in names.iter().zip(&agents) {
        let samples = [0, 3].iter().map(|&i| gpu_sample(&uuid_of(&two.cluster, name, i), before, 5.0)).collect();
        report(&app, agent, &two.cluster, name, samples).await;
    }
    // A second cluster whose node reports its driver; only its GPU 1 reports.
    let c2 = register_cluster(&app, "c2").await;
    let upsert = "mutation($input: UpsertNodesInput!) { upsertNodes(input: $input) { nodes { id } userErrors { field message code } } }";
    let gpus: Vec<Value> =
        (0..2).map(|i| json!({ "uuid": format!("GPU-dgx-{i}"), "index": i, "model": "NVIDIA H100 80GB HBM3", "memoryMib": 81559 })).collect();
    let node = json!({ "name": "dgx-0", "instanceType": "dgx", "gpuShape": SHAPE_H100, "gpusPerNode": 2, "gpuMemoryMib": 81559,
        "driverVersion": "550.54.15", "gpus": gpus });
    app.mutate(&app.admin_token, "upsertNodes", upsert, json!({ "clusterId": c2, "nodes": [node] })).await;
    let dgx_agent = agent_token(&app, &c2, "dgx-0").await;
    report(&app, &dgx_agent, &c2, "dgx-0", vec![gpu_sample("GPU-dgx-1", Utc::now(), 64.0)]).await;

    // Team A's GPR takes one node, in a later second than those samples.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let gpr = create_gpr(&app, &two.token_a, &two.slice_a, "train", json!({ "nodeCount": 1 })).await["id"].as_str().expect("id").to_owned();
    let held = provisioned(&app, &two.token_a, &gpr).await;
    let held_agent = &agents[names.iter().position(|n| *n == held.name).expect("one of the fixtures' nodes")];
    let now = Utc::now() + chrono::Duration::seconds(1);
    let mut faulty = gpu_sample(&held.uuids[0], now, 80.0);
    faulty["xidErrors"] = json!([13, 79]);
    faulty["eccCorrected"] = json!(3);
    faulty["eccUncorrected"] = json!(1);
    let fresh = vec![faulty, gpu_sample(&held.uuids[1], now, 10.0), gpu_sample(&held.uuids[2], now, 0.0)];
    report(&app, held_agent, &two.cluster, &held.name, fresh).await;

    let metrics = scrape(&app).await;
    // Every DCGM family is typed once, a gauge, spelled as dcgm-exporter spells it, unprefixed.
    for family in DCGM_FAMILIES {
        assert_eq!(metrics.types.get(family).map(String::as_str), Some("gauge"), "{family}");
    }
    assert!(metrics.types.keys().all(|name| !name.starts_with("egs_DCGM")), "{:?}", metrics.types.keys());
    assert_eq!(metrics.types.get("egs_gprs").map(String::as_str), Some("gauge"), "the gateway's own metrics are still there");

    // GPU 0 of the held node: all values, the last XID, ECC counts, and its holder.
    let gpu0 = metrics.gpu("DCGM_FI_DEV_GPU_UTIL", &held.uuids[0]).expect("GPU 0 of the held node");
    let held_labels = |index: &str, uuid: &str, holder: bool| {
        let device = format!("nvidia{index}");
        let mut pairs =
            vec![("gpu", index), ("UUID", uuid), ("device", device.as_str()), ("modelName", SHAPE_H100), ("Hostname", held.name.as_str())];
        pairs.push(("cluster", "c1"));
        if holder {
            pairs.extend([("slice", "team-a"), ("gpr", "train")]);
        }
        labels(&pairs)
    };
    assert_eq!(gpu0.labels, held_labels("0", &held.uuids[0], true));
    let value = |family: &str, uuid: &str| metrics.gpu(family, uuid).map(|s| s.value);
    let expected = [
        ("DCGM_FI_DEV_SM_CLOCK", 1980.0),
        ("DCGM_FI_DEV_GPU_TEMP", 60.0),
        ("DCGM_FI_DEV_POWER_USAGE", 500.0),
        ("DCGM_FI_DEV_GPU_UTIL", 80.0),
        ("DCGM_FI_DEV_MEM_COPY_UTIL", 40.0),
        ("DCGM_FI_DEV_XID_ERRORS", 79.0),
        ("DCGM_FI_DEV_FB_USED", 1080.0),
        ("DCGM_FI_DEV_FB_FREE", GPU_MEMORY_MIB - 1080.0),
        ("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", 3.0),
        ("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", 1.0),
    ];
    for (family, want) in expected {
        assert_eq!(value(family, &held.uuids[0]), Some(want), "{family}");
        let series = metrics.gpu(family, &held.uuids[0]).expect("a series");
        assert_eq!(series.labels, gpu0.labels, "{family}: the same labels in every family");
    }
    // GPU 1: no XID with its latest sample reads 0; no ECC counts reported, no ECC series.
    assert_eq!(value("DCGM_FI_DEV_XID_ERRORS", &held.uuids[1]), Some(0.0));
    assert_eq!(value("DCGM_FI_DEV_GPU_UTIL", &held.uuids[1]), Some(10.0));
    assert_eq!(value("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", &held.uuids[1]), None);
    assert_eq!(value("DCGM_FI_DEV_GPU_UTIL", &held.uuids[2]), Some(0.0), "an idle GPU is still exported");
    // GPU 3's latest sample predates the GPR: exported, but not credited to team A.
    let gpu3 = metrics.gpu("DCGM_FI_DEV_GPU_UTIL", &held.uuids[3]).expect("GPU 3 of the held node");
    assert_eq!(gpu3.labels, held_labels("3", &held.uuids[3], false));
    // GPUs of free nodes: no holder labels.
    let free = names.iter().find(|n| **n != held.name).expect("a free node");
    let free0 = metrics.gpu("DCGM_FI_DEV_GPU_UTIL", &uuid_of(&two.cluster, free, 0)).expect("GPU 0 of a free node");
    assert!(!free0.labels.contains_key("slice") && !free0.labels.contains_key("gpr"), "{:?}", free0.labels);
    assert_eq!((free0.labels["Hostname"].as_str(), free0.value), (free.as_str(), 5.0));
    // The second cluster's node reported its driver, as dcgm-exporter labels it.
    let dgx = metrics.gpu("DCGM_FI_DEV_GPU_UTIL", "GPU-dgx-1").expect("the dgx GPU");
    let want = labels(&[
        ("gpu", "1"),
        ("UUID", "GPU-dgx-1"),
        ("device", "nvidia1"),
        ("modelName", "NVIDIA H100 80GB HBM3"),
        ("Hostname", "dgx-0"),
        ("DCGM_FI_DRIVER_VERSION", "550.54.15"),
        ("cluster", "c2"),
    ]);
    assert_eq!((&dgx.labels, dgx.value), (&want, 64.0));

    // Exactly the GPUs that reported: 2 per node of c1 (plus GPUs 1 and 2 of the held one),
    // and one of c2; never a GPU without samples.
    let reported: HashSet<String> = names
        .iter()
        .flat_map(|n| [uuid_of(&two.cluster, n, 0), uuid_of(&two.cluster, n, 3)])
        .chain([held.uuids[1].clone(), held.uuids[2].clone(), "GPU-dgx-1".to_owned()])
        .collect();
    for family in &DCGM_FAMILIES[..8] {
        assert_eq!(exported(&metrics, family), reported, "{family}");
    }
    assert!(metrics.gpu("DCGM_FI_DEV_GPU_UTIL", &held.uuids[7]).is_none() && metrics.gpu("DCGM_FI_DEV_GPU_UTIL", "GPU-dgx-0").is_none());
    app.finish().await;
}

#[tokio::test]
async fn gpus_of_a_silent_agent_are_left_out_until_it_reports_again() {
    use sea_orm::sea_query::Expr;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let app = TestApp::spawn_with(|s| {
        egs_tests::api_only(s);
        egs_tests::writes_every_report(s);
    })
    .await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 2).await;
    let mut agents = Vec::new();
    for n in 0..2 {
        let name = format!("h100-{n}");
        let agent = agent_token(&app, &cluster, &name).await;
        let samples = (0..2).map(|i| gpu_sample(&uuid_of(&cluster, &name, i), Utc::now(), 20.0)).collect();
        report(&app, &agent, &cluster, &name, samples).await;
        agents.push(agent);
    }
    let all: HashSet<String> = (0..2).flat_map(|n| (0..2).map(move |i| (n, i))).map(|(n, i)| uuid_of(&cluster, &format!("h100-{n}"), i)).collect();
    assert_eq!(exported(&scrape(&app).await, "DCGM_FI_DEV_GPU_UTIL"), all);

    // The first node's agent last spoke 31 s ago: the node is STALE, its values are not live.
    egs_entities::node::Entity::update_many()
        .col_expr(egs_entities::node::Column::LastHeartbeatAt, Expr::value(Utc::now() - chrono::Duration::seconds(31)))
        .filter(egs_entities::node::Column::Name.eq("h100-0"))
        .exec(&app.db)
        .await
        .expect("age the heartbeat");
    let metrics = scrape(&app).await;
    let live: HashSet<String> = (0..2).map(|i| uuid_of(&cluster, "h100-1", i)).collect();
    for family in &DCGM_FAMILIES[..8] {
        assert_eq!(exported(&metrics, family), live, "{family}");
    }
    // It reports again (a later second): back.
    let later = Utc::now() + chrono::Duration::seconds(1);
    report(&app, &agents[0], &cluster, "h100-0", vec![gpu_sample(&uuid_of(&cluster, "h100-0", 0), later, 30.0)]).await;
    let metrics = scrape(&app).await;
    assert_eq!(metrics.gpu("DCGM_FI_DEV_GPU_UTIL", &uuid_of(&cluster, "h100-0", 0)).map(|s| s.value), Some(30.0));
    assert_eq!(exported(&metrics, "DCGM_FI_DEV_GPU_UTIL"), all);
    app.finish().await;
}

/// The fewest statements one scrape costs over three: the event tailer's background poll can
/// land inside a scrape and is not its cost.
async fn statements_per_scrape(app: &TestApp, gpus: usize) -> u64 {
    let mut fewest = u64::MAX;
    for _ in 0..3 {
        let before = app.statements.get();
        let metrics = scrape(app).await;
        fewest = fewest.min(app.statements.get() - before);
        assert_eq!(metrics.family("DCGM_FI_DEV_GPU_UTIL").len(), gpus);
    }
    fewest
}

#[tokio::test]
async fn a_scrape_costs_the_same_statements_for_one_gpu_or_eighty_one() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    let first = add_nodes(&app, &cluster, "one", 1, SHAPE_H100, 1).await;
    report_as_admin(&app, &first[0], vec![uuid_of(&cluster, "one-0", 0)]).await;
    let one = statements_per_scrape(&app, 1).await;

    let more = add_nodes(&app, &cluster, "many", 10, SHAPE_H100, 8).await;
    for (n, id) in more.into_iter().enumerate() {
        report_as_admin(&app, &id, (0..8).map(|i| uuid_of(&cluster, &format!("many-{n}"), i)).collect()).await;
    }
    let many = statements_per_scrape(&app, 81).await;
    // GPRs by phase, and the GPUs with their nodes, clusters and holders.
    assert_eq!((one, many), (2, 2), "statements per scrape with 1 and with 81 GPUs");
    app.finish().await;
}

/// `Gpr.gpuSummary` and `Slice.gpuSummary`.
mod summaries {
    use super::*;
    use egs_entities::{gpr_node, node};
    use sea_orm::sea_query::Expr;
    use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};

    const SUMMARY: &str = "gpuCount reportingGpuCount idleGpuCount averageUtilization averageTemperature memoryUsedMib powerWatts
        hottestGpu { uuid } highestPowerGpu { uuid } newestSampleAt oldestSampleAt";

    /// The fields and the query, side by side.
    async fn both_ways(app: &TestApp, token: &str, gpr: &str, slice: &str) -> Value {
        let query = format!(
            "query($gpr: ID!, $slice: ID!) {{ gpr(id: $gpr) {{ gpuSummary {{ {SUMMARY} }} }} slice(id: $slice) {{ gpuSummary {{ {SUMMARY} }} }}
            byGpr: gpuSummary(gprId: $gpr) {{ {SUMMARY} }} bySlice: gpuSummary(sliceId: $slice) {{ {SUMMARY} }} }}"
        );
        app.ok(token, &query, json!({ "gpr": gpr, "slice": slice })).await
    }

    async fn wait_for_phase(app: &TestApp, token: &str, id: &str, phase: &str) {
        let query = "query($id: ID!) { gpr(id: $id) { phase } }";
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        while app.ok(token, query, json!({ "id": id })).await["gpr"]["phase"] != phase {
            assert!(tokio::time::Instant::now() < deadline, "not {phase}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    #[tokio::test]
    async fn gpr_and_slice_summaries_read_like_the_query() {
        let app = TestApp::spawn().await;
        let two = two_slices(&app).await;
        let gpr = create_gpr(&app, &two.token_a, &two.slice_a, "train", json!({ "nodeCount": 1 })).await["id"].as_str().expect("id").to_owned();
        let held = provisioned(&app, &two.token_a, &gpr).await;
        let agent = agent_token(&app, &two.cluster, &held.name).await;
        let now = Utc::now() + chrono::Duration::seconds(1);
        // Seven of the eight GPUs report, at 0, 10, … 60 %.
        let samples = held.uuids.iter().take(7).enumerate().map(|(i, uuid)| gpu_sample(uuid, now, 10.0 * i as f64)).collect();
        report(&app, &agent, &two.cluster, &held.name, samples).await;

        for token in [&two.token_a, &app.admin_token] {
            let data = both_ways(&app, token, &gpr, &two.slice_a).await;
            assert_eq!(data["gpr"]["gpuSummary"], data["byGpr"], "{data:#}");
            assert_eq!(data["slice"]["gpuSummary"], data["bySlice"], "{data:#}");
            let s = &data["gpr"]["gpuSummary"];
            assert_eq!((&s["gpuCount"], &s["reportingGpuCount"], &s["idleGpuCount"]), (&json!(8), &json!(7), &json!(1)), "{s}");
            assert_eq!((&s["averageUtilization"], s["hottestGpu"]["uuid"].as_str()), (&json!(30.0), Some(held.uuids[6].as_str())), "{s}");
        }

        // Its next GPR waits (a slice runs one at a time): it holds nothing.
        let next = create_gpr(&app, &two.token_a, &two.slice_a, "next", json!({ "nodeCount": 1 })).await["id"].as_str().expect("id").to_owned();
        let query = format!("query($id: ID!) {{ gpr(id: $id) {{ phase gpuSummary {{ {SUMMARY} }} }} }}");
        let waiting = app.ok(&two.token_a, &query, json!({ "id": next })).await["gpr"].clone();
        assert_eq!((&waiting["phase"], &waiting["gpuSummary"]), (&json!("QUEUED"), &Value::Null), "{waiting}");
        // In a list, each GPR with its own.
        let list = app
            .ok(&two.token_a, "query($id: ID!) { slice(id: $id) { gprs { nodes { name gpuSummary { gpuCount } } } } }", json!({ "id": two.slice_a }))
            .await;
        let by_name: BTreeMap<String, Value> = list["slice"]["gprs"]["nodes"]
            .as_array()
            .expect("gprs")
            .iter()
            .map(|g| (g["name"].as_str().unwrap_or_default().to_owned(), g["gpuSummary"].clone()))
            .collect();
        assert_eq!(by_name, BTreeMap::from([("next".to_owned(), Value::Null), ("train".to_owned(), json!({ "gpuCount": 8 }))]));
        // Team B holds no node: its slice has no summary; and it cannot see team A's slice at all.
        let b = app.ok(&two.token_b, "query($id: ID!) { slice(id: $id) { gpuSummary { gpuCount } } }", json!({ "id": two.slice_b })).await;
        assert_eq!(b["slice"]["gpuSummary"], Value::Null, "{b}");
        let body = app.gql(&two.token_b, "query($id: ID!) { slice(id: $id) { gpuSummary { gpuCount } } }", json!({ "id": two.slice_a })).await;
        assert_eq!(body["errors"][0]["extensions"]["code"], "NOT_FOUND", "{body}");
        app.finish().await;
    }

    #[tokio::test]
    async fn the_next_holder_s_summaries_do_not_read_what_the_previous_one_ran() {
        let app = TestApp::spawn_with(egs_tests::writes_every_report).await;
        let two = two_slices(&app).await; // four nodes
        let first = create_gpr(&app, &two.token_a, &two.slice_a, "first", json!({ "nodeCount": 4 })).await["id"].as_str().expect("id").to_owned();
        let held = provisioned(&app, &two.token_a, &first).await;
        let agent = agent_token(&app, &two.cluster, &held.name).await;
        report(&app, &agent, &two.cluster, &held.name, vec![gpu_sample(&held.uuids[0], Utc::now(), 77.0)]).await;
        let data = both_ways(&app, &two.token_a, &first, &two.slice_a).await;
        assert_eq!(data["gpr"]["gpuSummary"]["reportingGpuCount"], 1, "{data:#}");
        // The next holder is assigned in a later second than that sample.
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let release = "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { phase } userErrors { field message code } } }";
        app.mutate(&two.token_a, "earlyReleaseGpr", release, json!({ "id": first })).await;
        wait_for_phase(&app, &two.token_a, &first, "COMPLETED").await;
        let done = app.ok(&two.token_a, "query($id: ID!) { gpr(id: $id) { gpuSummary { gpuCount } } }", json!({ "id": first })).await;
        assert_eq!(done["gpr"]["gpuSummary"], Value::Null, "a finished GPR holds nothing: {done}");

        let second = create_gpr(&app, &two.token_b, &two.slice_b, "second", json!({ "nodeCount": 4 })).await["id"].as_str().expect("id").to_owned();
        provisioned(&app, &two.token_b, &second).await;
        let data = both_ways(&app, &two.token_b, &second, &two.slice_b).await;
        assert_eq!(data["gpr"]["gpuSummary"], data["byGpr"], "{data:#}");
        assert_eq!(data["slice"]["gpuSummary"], data["bySlice"], "{data:#}");
        for field in ["gpr", "slice"] {
            let s = &data[field]["gpuSummary"];
            assert_eq!((&s["gpuCount"], &s["reportingGpuCount"], &s["averageUtilization"]), (&json!(32), &json!(0), &Value::Null), "{field}: {s}");
        }
        // Admins read it all.
        let admin = both_ways(&app, &app.admin_token, &second, &two.slice_b).await;
        assert_eq!(admin["gpr"]["gpuSummary"], admin["byGpr"]);
        assert_eq!((&admin["gpr"]["gpuSummary"]["reportingGpuCount"], &admin["slice"]["gpuSummary"]["reportingGpuCount"]), (&json!(1), &json!(1)));
        // Its own samples, it reads.
        report(&app, &agent, &two.cluster, &held.name, vec![gpu_sample(&held.uuids[0], Utc::now() + chrono::Duration::seconds(1), 12.0)]).await;
        let data = both_ways(&app, &two.token_b, &second, &two.slice_b).await;
        assert_eq!(data["gpr"]["gpuSummary"]["averageUtilization"], 12.0, "{data:#}");
        assert_eq!(data["slice"]["gpuSummary"], data["bySlice"]);
        app.finish().await;
    }

    /// The fewest statements a page of `n` GPRs with their summaries costs, over three reads.
    async fn page_statements(app: &TestApp, n: usize) -> u64 {
        let page = "query($n: Int) { gprs(first: $n) { edges { node { gpuSummary { gpuCount reportingGpuCount averageUtilization } } } } }";
        let mut fewest = u64::MAX;
        for _ in 0..3 {
            let before = app.statements.get();
            let data = app.ok(&app.admin_token, page, json!({ "n": n })).await;
            fewest = fewest.min(app.statements.get() - before);
            let edges = data["gprs"]["edges"].as_array().expect("edges");
            assert_eq!(edges.len(), n);
            for edge in edges {
                let s = &edge["node"]["gpuSummary"];
                assert_eq!(s, &json!({ "gpuCount": 2, "reportingGpuCount": 1, "averageUtilization": 40.0 }), "{edge}");
            }
        }
        fewest
    }

    #[tokio::test]
    async fn a_page_of_gprs_with_gpu_summaries_costs_a_fixed_number_of_statements() {
        // API only, with hand-made assignments: the scheduler would provision these GPRs itself.
        let app = TestApp::spawn_with(egs_tests::api_only).await;
        let cluster = register_cluster(&app, "c1").await;
        let nodes = add_nodes(&app, &cluster, "h100", 8, SHAPE_H100, 2).await;
        let slice = create_slice(&app, "big", &cluster, json!({})).await;
        for (i, node) in nodes.iter().enumerate() {
            let created = create_gpr(&app, &app.admin_token, &slice, &format!("gpr-{i}"), json!({})).await;
            let (_, gpr_id) = egs_domain::ids::decode_any(created["id"].as_str().expect("id")).expect("gpr id");
            let (_, node_id) = egs_domain::ids::decode_any(node).expect("node id");
            gpr_node::ActiveModel { gpr_id: Set(gpr_id), node_id: Set(node_id), assigned_at: Set(Utc::now() - chrono::Duration::minutes(1)) }
                .insert(&app.db)
                .await
                .expect("assign");
            node::Entity::update_many()
                .col_expr(node::Column::AllocatedGprId, Expr::value(gpr_id))
                .filter(node::Column::Id.eq(node_id))
                .exec(&app.db)
                .await
                .expect("allocate");
            let samples = vec![gpu_sample(&uuid_of(&cluster, &format!("h100-{i}"), 0), Utc::now(), 40.0)];
            app.mutate(&app.admin_token, "reportGpuSamples", REPORT, json!({ "nodeId": node, "samples": samples })).await;
        }
        let small = page_statements(&app, 2).await;
        let large = page_statements(&app, 8).await;
        assert_eq!(small, large, "statements for a page of 2 and of 8 GPRs with their summaries");
        app.finish().await;
    }
}
