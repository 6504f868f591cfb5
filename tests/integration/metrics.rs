//! GPU metrics through the real gateway: agents report batches of samples, dashboards read
//! history, latest samples and summaries, isolation holds, and samples drive the scheduler's
//! idle timeout and the node's liveness.

use chrono::{DateTime, Utc};
use egs_tests::TestApp;
use egs_tests::fixtures::*;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::{Value, json};
use std::time::Duration;

const REPORT: &str = "mutation($input: ReportGpuSamplesInput!) {
    reportGpuSamples(input: $input) { accepted duplicates userErrors { field message code } } }";
const NODES: &str = "query($cluster: ID!) { nodes(filter: { clusterId: $cluster }, first: 100) { nodes { id name gpus { id uuid } } } }";
const GPU: &str = "query($id: ID!, $step: Duration, $from: DateTime) { node(id: $id) { ... on Gpu {
    uuid latestSample { time util memUtil memUsedMib temperature power smClockMhz xidErrors eccCorrected eccUncorrected }
    metrics(step: $step, from: $from) { time samples util temperature power max { util temperature power } } } } }";

/// A node as the fixtures create it, with its GPUs' (id, uuid).
struct Node {
    id: String,
    name: String,
    gpus: Vec<(String, String)>,
}

async fn nodes(app: &TestApp, cluster: &str) -> Vec<Node> {
    let data = app.ok(&app.admin_token, NODES, json!({ "cluster": cluster })).await;
    let str_of = |v: &Value| v.as_str().expect("a string").to_owned();
    data["nodes"]["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| Node {
            id: str_of(&n["id"]),
            name: str_of(&n["name"]),
            gpus: n["gpus"].as_array().expect("gpus").iter().map(|g| (str_of(&g["id"]), str_of(&g["uuid"]))).collect(),
        })
        .collect()
}

/// Reports as `token` for node `name` of `cluster` (the agent's way of naming it).
async fn report(app: &TestApp, token: &str, cluster: &str, name: &str, samples: Vec<Value>) -> Value {
    let input = json!({ "clusterId": cluster, "nodeName": name, "samples": samples });
    app.gql(token, REPORT, json!({ "input": input })).await
}

/// Whole seconds, as the gateway stores them.
fn second(at: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp(at.timestamp(), 0).expect("a time")
}

async fn gpu_row(app: &TestApp, uuid: &str) -> egs_entities::gpu::Model {
    egs_entities::gpu::Entity::find().filter(egs_entities::gpu::Column::Uuid.eq(uuid)).one(&app.db).await.expect("query").expect("the GPU")
}

#[tokio::test]
async fn an_agent_reports_a_batch_and_dashboards_read_it_back() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 8).await;
    let node = nodes(&app, &cluster).await.remove(0);
    let agent = agent_token(&app, &cluster, &node.name).await;
    let now = Utc::now();
    // Three GPUs, five seconds each, in one batch and in no particular order.
    let mut samples = Vec::new();
    for s in (0..5).rev() {
        for (g, (_, uuid)) in node.gpus.iter().take(3).enumerate() {
            samples.push(gpu_sample(uuid, now - chrono::Duration::seconds(10 - s), (g * 30 + s as usize) as f64));
        }
    }
    let mut with_errors = gpu_sample(&node.gpus[0].1, now, 95.0);
    with_errors["xidErrors"] = json!([79]);
    with_errors["eccUncorrected"] = json!(2);
    samples.push(with_errors);
    let body = report(&app, &agent, &cluster, &node.name, samples).await;
    assert_eq!(body["data"]["reportGpuSamples"], json!({ "accepted": 16, "duplicates": 0, "userErrors": [] }), "{body}");

    let gpu0 = app.ok(&app.admin_token, GPU, json!({ "id": node.gpus[0].0, "step": "1s" })).await["node"].clone();
    let latest = &gpu0["latestSample"];
    assert_eq!(time(&latest["time"]), second(now));
    assert_eq!((&latest["util"], &latest["xidErrors"], &latest["eccUncorrected"]), (&json!(95.0), &json!([79]), &json!(2)), "{latest}");
    let points = gpu0["metrics"].as_array().expect("points");
    assert_eq!(points.len(), 6, "one point per second: {points:?}");
    assert_eq!(time(&points[0]["time"]), second(now - chrono::Duration::seconds(10)));
    assert_eq!(points.iter().map(|p| p["util"].as_f64().unwrap_or(-1.0)).collect::<Vec<_>>(), vec![0.0, 1.0, 2.0, 3.0, 4.0, 95.0]);
    // The minute ring: averages and maxima of the same samples.
    let minutes = app.ok(&app.admin_token, GPU, json!({ "id": node.gpus[1].0, "step": "1m" })).await["node"]["metrics"].clone();
    let minutes = minutes.as_array().expect("points");
    assert_eq!(minutes.iter().map(|p| p["samples"].as_i64().unwrap_or_default()).sum::<i64>(), 5, "{minutes:?}");
    assert_eq!(minutes.iter().map(|p| p["max"]["util"].as_f64().unwrap_or_default()).fold(0.0, f64::max), 34.0);
    // Not reported: nothing to show, not an error.
    let quiet = app.ok(&app.admin_token, GPU, json!({ "id": node.gpus[7].0 })).await["node"].clone();
    assert_eq!((&quiet["latestSample"], &quiet["metrics"]), (&Value::Null, &json!([])));

    let summary = "query($id: ID!) { node(id: $id) { ... on GpuNode { health lastHeartbeatAt utilization gpuSummary {
        gpuCount reportingGpuCount idleGpuCount averageUtilization hottestGpu { uuid } highestPowerGpu { uuid } } } }
        gpuSummary(nodeId: $id) { gpuCount reportingGpuCount } }";
    let data = app.ok(&app.admin_token, summary, json!({ "id": node.id })).await;
    let n = &data["node"];
    assert_eq!(n["health"], "HEALTHY");
    assert!(n["lastHeartbeatAt"].is_string(), "an agent's report is a heartbeat: {n}");
    let s = &n["gpuSummary"];
    assert_eq!((&s["gpuCount"], &s["reportingGpuCount"], &s["idleGpuCount"]), (&json!(8), &json!(3), &json!(0)), "{s}");
    // Latest utilisations: 95, 34, 64.
    assert!((n["utilization"].as_f64().unwrap_or_default() - 193.0 / 3.0).abs() < 1e-6, "{n}");
    assert_eq!(s["hottestGpu"]["uuid"].as_str(), Some(node.gpus[0].1.as_str()));
    assert_eq!(data["gpuSummary"], json!({ "gpuCount": 8, "reportingGpuCount": 3 }));

    // Hot spots first: GPU 0 (95 %), then 2 (64 %), then 1 (34 %), then the silent ones by id.
    let hot = app.ok(&app.admin_token, "{ gpus(orderBy: HOT_SPOTS_FIRST, first: 4) { totalCount nodes { uuid } } }", json!({})).await;
    let order: Vec<&str> = hot["gpus"]["nodes"].as_array().expect("gpus").iter().map(|g| g["uuid"].as_str().unwrap_or_default()).collect();
    assert_eq!(order, vec![node.gpus[0].1.as_str(), &node.gpus[2].1, &node.gpus[1].1, &node.gpus[3].1]);
    assert_eq!(hot["gpus"]["totalCount"], 16);

    // An admin may report too, naming the node by id; that is no heartbeat.
    let input = json!({ "nodeId": node.id, "samples": [gpu_sample(&node.gpus[7].1, now, 0.0)] });
    let by_admin = app.mutate(&app.admin_token, "reportGpuSamples", REPORT, input).await;
    assert_eq!(by_admin["accepted"], 1);
    app.finish().await;
}

/// By default the database gets a node's latest values at most once per unwatched interval:
/// a report soon after the last write is answered, in history and through the alert rules at
/// once, and in the database's columns when the interval is over, with no report after it.
#[tokio::test]
async fn the_database_gets_a_nodes_latest_values_at_most_once_per_interval() {
    const OPEN_HOT: &str = "{ alerts(kind: OVER_TEMPERATURE, open: true, first: 10) { nodes { value } } }";
    let app = TestApp::spawn_with(|s| {
        egs_tests::api_only(s);
        s.unwatched_report_interval_secs = 1;
    })
    .await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "n", 1, SHAPE_H100, 1).await;
    let node = nodes(&app, &cluster).await.remove(0);
    let agent = agent_token(&app, &cluster, &node.name).await;
    let (gpu_id, uuid) = node.gpus[0].clone();
    let t0 = second(Utc::now()) - chrono::Duration::seconds(10);
    let at = |s: i64| t0 + chrono::Duration::seconds(s);
    let accepted = |body: Value| body["data"]["reportGpuSamples"]["accepted"].clone();

    // Not written lately: written with its own batch.
    let started = std::time::Instant::now();
    assert_eq!(accepted(report(&app, &agent, &cluster, &node.name, vec![gpu_sample(&uuid, at(0), 10.0)]).await), 1);
    let row = gpu_row(&app, &uuid).await;
    assert_eq!((row.last_sample_at, row.latest_util), (Some(at(0)), Some(10.0)));
    // Its heartbeat as if long ago, to see the next one written.
    let aged = Utc::now() - chrono::Duration::seconds(31);
    egs_entities::node::Entity::update_many()
        .col_expr(egs_entities::node::Column::LastHeartbeatAt, sea_orm::sea_query::Expr::value(aged))
        .exec(&app.db)
        .await
        .expect("age the heartbeat");
    let heartbeat = || async { egs_entities::node::Entity::find().one(&app.db).await.expect("query").and_then(|n| n.last_heartbeat_at) };

    // Right after: answered, in history, through the alert rules, not in the database yet.
    assert_eq!(accepted(report(&app, &agent, &cluster, &node.name, vec![gpu_sample_hot(&uuid, at(1), 95.0, 300.0)]).await), 1);
    assert_eq!(app.ok(&app.admin_token, OPEN_HOT, json!({})).await["alerts"]["nodes"], json!([{ "value": 95.0 }]));
    let gpu = app.ok(&app.admin_token, GPU, json!({ "id": gpu_id, "step": "1s", "from": at(0).to_rfc3339() })).await["node"].clone();
    assert_eq!(gpu["metrics"].as_array().map(Vec::len), Some(2), "history has both: {gpu}");
    if started.elapsed() < Duration::from_millis(900) {
        assert_eq!(gpu_row(&app, &uuid).await.last_sample_at, Some(at(0)), "written at most once a second");
        assert_eq!(time(&gpu["latestSample"]["time"]), at(0));
        assert!(heartbeat().await < Some(aged + chrono::Duration::seconds(1)), "the heartbeat waits with the values");
    }

    // The interval over, with no other report: written, heartbeat and all.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while gpu_row(&app, &uuid).await.last_sample_at != Some(at(1)) {
        assert!(std::time::Instant::now() < deadline, "the waiting values were never written");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(started.elapsed() >= Duration::from_secs(1), "not before the interval: {:?}", started.elapsed());
    let row = gpu_row(&app, &uuid).await;
    assert_eq!((row.latest_temperature_c, row.latest_power_w), (Some(95.0), Some(300.0)));
    assert!(heartbeat().await > Some(aged + chrono::Duration::seconds(25)), "the second report's heartbeat is written with it");
    let gpu = app.ok(&app.admin_token, GPU, json!({ "id": gpu_id })).await["node"].clone();
    assert_eq!(time(&gpu["latestSample"]["time"]), at(1));
    app.finish().await;
}

#[tokio::test]
async fn a_resend_after_a_reconnect_is_not_counted_twice() {
    let app = TestApp::spawn_with(|s| {
        egs_tests::api_only(s);
        egs_tests::writes_every_report(s);
    })
    .await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 1, SHAPE_H100, 2).await;
    let node = nodes(&app, &cluster).await.remove(0);
    let agent = agent_token(&app, &cluster, &node.name).await;
    let uuid = node.gpus[0].1.clone();
    let start = Utc::now() - chrono::Duration::seconds(30);
    let at = |s: i64| start + chrono::Duration::seconds(s);
    // The same second twice in one batch: one sample.
    let first: Vec<Value> = (0..10).map(|s| gpu_sample(&uuid, at(s), 50.0)).chain([gpu_sample(&uuid, at(3), 99.0)]).collect();
    let body = report(&app, &agent, &cluster, &node.name, first).await;
    assert_eq!(body["data"]["reportGpuSamples"], json!({ "accepted": 10, "duplicates": 1, "userErrors": [] }), "{body}");
    // The agent lost its connection after sending 5..10 and sends them again with 10..20.
    let again: Vec<Value> = (5..20).map(|s| gpu_sample(&uuid, at(s), 50.0)).collect();
    let body = report(&app, &agent, &cluster, &node.name, again).await;
    assert_eq!(body["data"]["reportGpuSamples"], json!({ "accepted": 10, "duplicates": 5, "userErrors": [] }), "{body}");

    let gpu = app.ok(&app.admin_token, GPU, json!({ "id": node.gpus[0].0, "step": "1m" })).await["node"].clone();
    let points = gpu["metrics"].as_array().expect("points");
    assert_eq!(points.iter().map(|p| p["samples"].as_i64().unwrap_or_default()).sum::<i64>(), 20, "{points:?}");
    assert!(points.iter().all(|p| p["util"] == 50.0 && p["max"]["util"] == 50.0), "the duplicate's 99 % counted nowhere: {points:?}");
    assert_eq!(time(&gpu["latestSample"]["time"]), second(at(19)));
    // A late resend of old samples does not move the latest sample back.
    report(&app, &agent, &cluster, &node.name, vec![gpu_sample(&uuid, at(2), 50.0)]).await;
    assert_eq!(gpu_row(&app, &uuid).await.last_sample_at, Some(second(at(19))));
    app.finish().await;
}

#[tokio::test]
async fn malformed_or_foreign_samples_are_refused_and_nothing_is_stored() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let two = two_slices(&app).await;
    let all = nodes(&app, &two.cluster).await;
    let (mine, other) = (&all[0], &all[1]);
    let agent = agent_token(&app, &two.cluster, &mine.name).await;
    let now = Utc::now();
    let good = gpu_sample(&mine.gpus[0].1, now, 10.0);
    let refused = |body: &Value| body["data"]["reportGpuSamples"].clone();
    let fields = |payload: &Value| -> Vec<(String, String)> {
        payload["userErrors"]
            .as_array()
            .expect("userErrors")
            .iter()
            .map(|e| {
                let path: Vec<&str> = e["field"].as_array().expect("a path").iter().map(|p| p.as_str().unwrap_or_default()).collect();
                (path.join("."), e["code"].as_str().unwrap_or_default().to_owned())
            })
            .collect()
    };

    let mut bad = good.clone();
    bad["util"] = json!(150.0);
    bad["temperature"] = json!(-80.0);
    let mut ahead = gpu_sample(&mine.gpus[1].1, now + chrono::Duration::minutes(5), 10.0);
    ahead["memUsedMib"] = json!(1e9);
    let stale = gpu_sample(&mine.gpus[2].1, now - chrono::Duration::hours(25), 10.0);
    let body = report(&app, &agent, &two.cluster, &mine.name, vec![good.clone(), bad, ahead, stale]).await;
    let payload = refused(&body);
    assert_eq!(payload["accepted"], 0, "{body}");
    let invalid = |f: &str| (f.to_owned(), "INVALID_INPUT".to_owned());
    assert_eq!(
        fields(&payload),
        vec![
            invalid("input.samples.1.util"),
            invalid("input.samples.1.temperature"),
            invalid("input.samples.2.timestamp"),
            invalid("input.samples.2.memUsedMib"),
            invalid("input.samples.3.timestamp"),
        ]
    );

    // A GPU of another node, reported as this node's: refused, the good sample with it.
    let foreign = gpu_sample(&other.gpus[0].1, now, 10.0);
    let payload = refused(&report(&app, &agent, &two.cluster, &mine.name, vec![good.clone(), foreign.clone()]).await);
    assert_eq!(fields(&payload), vec![invalid("input.samples.1.uuid")]);
    // Reporting as the other node, by name or by id: forbidden outright.
    let body = report(&app, &agent, &two.cluster, &other.name, vec![foreign.clone()]).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "FORBIDDEN", "{body}");
    let body = app.gql(&agent, REPORT, json!({ "input": { "nodeId": other.id, "samples": [foreign] } })).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "FORBIDDEN", "{body}");
    // Users report nothing.
    let body = report(&app, &two.token_a, &two.cluster, &mine.name, vec![good.clone()]).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "FORBIDDEN", "{body}");
    // Node named both ways, or neither.
    let body =
        app.gql(&agent, REPORT, json!({ "input": { "nodeId": mine.id, "clusterId": two.cluster, "nodeName": mine.name, "samples": [] } })).await;
    assert_eq!(fields(&refused(&body)), vec![invalid("input.nodeId")]);

    for node in [mine, other] {
        for (_, uuid) in &node.gpus {
            let row = gpu_row(&app, uuid).await;
            assert_eq!((row.last_sample_at, row.latest_util, row.last_busy_at), (None, None, None), "{uuid} stored something");
        }
    }
    let gpu = app.ok(&app.admin_token, GPU, json!({ "id": mine.gpus[0].0 })).await["node"].clone();
    assert_eq!((&gpu["latestSample"], &gpu["metrics"]), (&Value::Null, &json!([])), "nothing in history either");
    // And the agent can still report properly afterwards.
    let body = report(&app, &agent, &two.cluster, &mine.name, vec![good]).await;
    assert_eq!(refused(&body)["accepted"], 1, "{body}");
    app.finish().await;
}

#[tokio::test]
async fn history_queries_refuse_ranges_history_does_not_hold() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 1, SHAPE_H100, 1).await;
    let node = nodes(&app, &cluster).await.remove(0);
    let hour_ago = (Utc::now() - chrono::Duration::hours(1)).to_rfc3339();
    for (step, from, field) in [("1s", Some(hour_ago.as_str()), "input.from"), ("90s", None, "input.step"), ("0s", None, "input.step")] {
        let body = app.gql(&app.admin_token, GPU, json!({ "id": node.gpus[0].0, "step": step, "from": from })).await;
        let error = &body["errors"][0];
        assert_eq!(
            (error["extensions"]["code"].as_str(), error["extensions"]["field"].as_str()),
            (Some("INVALID_INPUT"), Some(field)),
            "{step}: {body}"
        );
    }
    let body = app.gql(&app.admin_token, GPU, json!({ "id": node.gpus[0].0, "step": "5m", "from": hour_ago })).await;
    assert!(body["errors"].is_null(), "older data at minute steps: {body}");
    app.finish().await;
}

fn gpus_of(gpr: &Value) -> (String, String, Vec<(String, String)>) {
    let node = &gpr["nodes"][0];
    let gpus = node["gpus"]
        .as_array()
        .expect("gpus")
        .iter()
        .map(|g| (g["id"].as_str().unwrap_or_default().to_owned(), g["uuid"].as_str().unwrap_or_default().to_owned()))
        .collect();
    (node["id"].as_str().unwrap_or_default().to_owned(), node["name"].as_str().unwrap_or_default().to_owned(), gpus)
}

#[tokio::test]
async fn only_the_slice_holding_a_node_reads_its_metrics() {
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await;
    let created = create_gpr(&app, &two.token_a, &two.slice_a, "train", json!({ "nodeCount": 1 })).await;
    let gpr_a = created["id"].as_str().expect("id").to_owned();
    let (node_id, node_name, gpus) = gpus_of(&provisioned(&app, &two.token_a, &gpr_a).await);
    let agent = agent_token(&app, &two.cluster, &node_name).await;
    let now = Utc::now();
    let samples = gpus.iter().enumerate().map(|(i, (_, uuid))| gpu_sample(uuid, now, 10.0 * i as f64)).collect();
    let body = report(&app, &agent, &two.cluster, &node_name, samples).await;
    assert_eq!(body["data"]["reportGpuSamples"]["accepted"], 8, "{body}");

    // Alice's slice holds the node: she reads it all.
    let read = app.ok(&two.token_a, GPU, json!({ "id": gpus[7].0 })).await["node"].clone();
    assert_eq!(read["latestSample"]["util"], 70.0);
    assert_eq!(read["metrics"].as_array().map(Vec::len), Some(1));
    let summaries =
        "query($node: ID, $gpr: ID, $slice: ID) { gpuSummary(nodeId: $node, gprId: $gpr, sliceId: $slice) { gpuCount hottestGpu { uuid } } }";
    for vars in [json!({ "node": node_id }), json!({ "gpr": gpr_a }), json!({ "slice": two.slice_a })] {
        let s = app.ok(&two.token_a, summaries, vars.clone()).await["gpuSummary"].clone();
        assert_eq!((&s["gpuCount"], s["hottestGpu"]["uuid"].as_str()), (&json!(8), Some(gpus[7].1.as_str())), "{vars}: {s}");
    }
    let hot = app.ok(&two.token_a, "{ gpus(orderBy: HOT_SPOTS_FIRST, first: 1) { nodes { uuid } } }", json!({})).await;
    assert_eq!(hot["gpus"]["nodes"][0]["uuid"].as_str(), Some(gpus[7].1.as_str()));

    // Bob's slice does not: the metrics read exactly like those of a GPU that does not exist.
    use base64::Engine;
    let missing = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("Gpu:999999");
    let hidden = app.gql(&two.token_b, GPU, json!({ "id": gpus[7].0 })).await;
    let absent = app.gql(&two.token_b, GPU, json!({ "id": missing })).await;
    let error = |body: &Value| (body["errors"][0]["extensions"]["code"].clone(), body["errors"][0]["message"].clone());
    assert_eq!(error(&hidden), (json!("NOT_FOUND"), json!("GPU not found")), "{hidden}");
    assert_eq!(error(&hidden), error(&absent));
    assert_eq!(hidden["data"]["node"]["latestSample"], Value::Null, "{hidden}");
    let fields = "query($id: ID!) { node(id: $id) { ... on GpuNode { utilization gpuSummary { gpuCount } gpus { latestSample { util } } } } }";
    let node = app.ok(&two.token_b, fields, json!({ "id": node_id })).await["node"].clone();
    assert_eq!((&node["utilization"], &node["gpuSummary"]), (&Value::Null, &Value::Null), "{node}");
    assert!(node["gpus"].as_array().expect("gpus").iter().all(|g| g["latestSample"].is_null()), "{node}");
    for vars in [json!({ "node": node_id }), json!({ "gpr": gpr_a }), json!({ "slice": two.slice_a })] {
        let body = app.gql(&two.token_b, summaries, vars.clone()).await;
        assert_eq!(body["errors"][0]["extensions"]["code"], "NOT_FOUND", "{vars}: {body}");
    }
    // Bob's ranking knows nothing of Alice's GPUs: they sort like GPUs without samples.
    let hot = app.ok(&two.token_b, "{ gpus(orderBy: HOT_SPOTS_FIRST) { nodes { id } } }", json!({})).await;
    let ids: Vec<&str> = hot["gpus"]["nodes"].as_array().expect("gpus").iter().map(|g| g["id"].as_str().unwrap_or_default()).collect();
    let by_id = app.ok(&two.token_b, "{ gpus { nodes { id } } }", json!({})).await;
    let plain: Vec<&str> = by_id["gpus"]["nodes"].as_array().expect("gpus").iter().map(|g| g["id"].as_str().unwrap_or_default()).collect();
    assert_eq!(ids, plain);
    app.finish().await;
}

#[tokio::test]
async fn the_next_holder_of_a_node_does_not_read_what_the_previous_one_ran() {
    let app = TestApp::spawn_with(egs_tests::writes_every_report).await;
    let two = two_slices(&app).await; // four nodes
    let release = "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { phase } userErrors { field message code } } }";
    let phase = "query($id: ID!) { gpr(id: $id) { phase } }";
    let first = create_gpr(&app, &two.token_a, &two.slice_a, "first", json!({ "nodeCount": 4 })).await["id"].as_str().expect("id").to_owned();
    let (_, node_name, gpus) = gpus_of(&provisioned(&app, &two.token_a, &first).await);
    let gpu = gpus[0].clone();
    let agent = agent_token(&app, &two.cluster, &node_name).await;
    let body = report(&app, &agent, &two.cluster, &node_name, vec![gpu_sample(&gpu.1, Utc::now(), 77.0)]).await;
    assert_eq!(body["data"]["reportGpuSamples"]["accepted"], 1, "{body}");
    assert_eq!(app.ok(&two.token_a, GPU, json!({ "id": gpu.0 })).await["node"]["latestSample"]["util"], 77.0);
    // Its next holder is assigned in a later second than that sample.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    app.mutate(&two.token_a, "earlyReleaseGpr", release, json!({ "id": first })).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while app.ok(&two.token_a, phase, json!({ "id": first })).await["gpr"]["phase"] != "COMPLETED" {
        assert!(tokio::time::Instant::now() < deadline, "not released");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let gone = app.gql(&two.token_a, GPU, json!({ "id": gpu.0 })).await;
    assert_eq!(gone["errors"][0]["extensions"]["code"], "NOT_FOUND", "no longer held: {gone}");

    let second_gpr = create_gpr(&app, &two.token_b, &two.slice_b, "second", json!({ "nodeCount": 4 })).await["id"].as_str().expect("id").to_owned();
    provisioned(&app, &two.token_b, &second_gpr).await;
    let read = app.ok(&two.token_b, GPU, json!({ "id": gpu.0, "step": "1m" })).await["node"].clone();
    assert_eq!((&read["latestSample"], &read["metrics"]), (&Value::Null, &json!([])), "slice A's sample is not slice B's: {read}");
    let summary = "query($id: ID!) { gpuSummary(gprId: $id) { gpuCount reportingGpuCount averageUtilization } }";
    let s = app.ok(&two.token_b, summary, json!({ "id": second_gpr })).await["gpuSummary"].clone();
    assert_eq!(s, json!({ "gpuCount": 32, "reportingGpuCount": 0, "averageUtilization": null }));
    // Its own samples, it reads.
    report(&app, &agent, &two.cluster, &node_name, vec![gpu_sample(&gpu.1, Utc::now() + chrono::Duration::seconds(1), 12.0)]).await;
    let read = app.ok(&two.token_b, GPU, json!({ "id": gpu.0 })).await["node"].clone();
    assert_eq!(read["latestSample"]["util"], 12.0, "{read}");
    assert_eq!(read["metrics"].as_array().map(Vec::len), Some(1), "only its own second: {read}");
    // Admins read it all.
    let all = app.ok(&app.admin_token, GPU, json!({ "id": gpu.0 })).await["node"]["metrics"].clone();
    assert_eq!(all.as_array().map(Vec::len), Some(2));
    app.finish().await;
}

#[tokio::test]
async fn samples_move_last_busy_at_and_idle_gpus_end_the_gpr() {
    let app = TestApp::spawn_with(egs_tests::writes_every_report).await;
    let two = two_slices(&app).await;
    let created = create_gpr(&app, &two.token_a, &two.slice_a, "idle", json!({ "nodeCount": 1, "idleTimeout": "30m" })).await;
    let id = created["id"].as_str().expect("id").to_owned();
    let (_, node_name, gpus) = gpus_of(&provisioned(&app, &two.token_a, &id).await);
    let agent = agent_token(&app, &two.cluster, &node_name).await;
    // Whole seconds after the window began (samples count at second resolution).
    let t = Utc::now() + chrono::Duration::seconds(2);
    let at = |s: i64| t + chrono::Duration::seconds(s);
    let all = |s: i64, util: f64| gpus.iter().map(|(_, uuid)| gpu_sample(uuid, at(s), util)).collect::<Vec<_>>();
    let uuid = &gpus[0].1;

    let body = report(&app, &agent, &two.cluster, &node_name, all(0, 0.0)).await;
    assert_eq!(body["data"]["reportGpuSamples"]["accepted"], 8, "{body}");
    let row = gpu_row(&app, uuid).await;
    assert_eq!((row.last_sample_at, row.last_busy_at), (Some(second(at(0))), None), "idle: not busy");
    report(&app, &agent, &two.cluster, &node_name, all(1, 35.0)).await;
    let row = gpu_row(&app, uuid).await;
    assert_eq!((row.last_sample_at, row.last_busy_at), (Some(second(at(1))), Some(second(at(1)))), "busy");
    report(&app, &agent, &two.cluster, &node_name, all(2, 0.5)).await;
    let row = gpu_row(&app, uuid).await;
    assert_eq!((row.last_sample_at, row.last_busy_at), (Some(second(at(2))), Some(second(at(1)))), "below 1 % is idle");
    // A busy sample that arrives late still counts, without moving the latest sample back.
    report(&app, &agent, &two.cluster, &node_name, vec![gpu_sample(uuid, at(-1), 80.0)]).await;
    let row = gpu_row(&app, uuid).await;
    assert_eq!((row.last_sample_at, row.last_busy_at, row.latest_util), (Some(second(at(2))), Some(second(at(1))), Some(0.5)));

    tokio::time::sleep(Duration::from_millis(1200)).await;
    let phase = "query($id: ID!) { gpr(id: $id) { phase releaseReason } }";
    assert_eq!(app.ok(&two.token_a, phase, json!({ "id": id })).await["gpr"]["phase"], "PROVISIONED", "not idle for long yet");
    app.clock.advance(Duration::from_secs(31 * 60));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let gpr = app.ok(&two.token_a, phase, json!({ "id": id })).await["gpr"].clone();
        if gpr["phase"] == "COMPLETED" {
            assert_eq!(gpr["releaseReason"], "IDLE_TIMEOUT");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "not released for idleness: {gpr}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    app.finish().await;
}

#[tokio::test]
async fn a_node_whose_agent_falls_silent_reads_as_stale() {
    use sea_orm::sea_query::Expr;
    let app = TestApp::spawn_with(|s| {
        egs_tests::api_only(s);
        egs_tests::writes_every_report(s);
    })
    .await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 1).await;
    let all = nodes(&app, &cluster).await;
    let node = &all[0];
    let agent = agent_token(&app, &cluster, &node.name).await;
    report(&app, &agent, &cluster, &node.name, vec![gpu_sample(&node.gpus[0].1, Utc::now(), 5.0)]).await;
    let health = "query($id: ID!) { node(id: $id) { ... on GpuNode { health } } }";
    let filtered = "query($h: Health!) { nodes(filter: { health: $h }) { nodes { name } } }";
    let names = |data: Value| -> Vec<String> {
        data["nodes"]["nodes"].as_array().expect("nodes").iter().map(|n| n["name"].as_str().unwrap_or_default().to_owned()).collect()
    };
    assert_eq!(app.ok(&app.admin_token, health, json!({ "id": node.id })).await["node"]["health"], "HEALTHY");

    // The agent's last word was 31 s ago.
    egs_entities::node::Entity::update_many()
        .col_expr(egs_entities::node::Column::LastHeartbeatAt, Expr::value(Utc::now() - chrono::Duration::seconds(31)))
        .filter(egs_entities::node::Column::Name.eq(node.name.as_str()))
        .exec(&app.db)
        .await
        .expect("age the heartbeat");
    assert_eq!(app.ok(&app.admin_token, health, json!({ "id": node.id })).await["node"]["health"], "STALE");
    assert_eq!(names(app.ok(&app.admin_token, filtered, json!({ "h": "STALE" })).await), vec![node.name.clone()]);
    assert_eq!(names(app.ok(&app.admin_token, filtered, json!({ "h": "HEALTHY" })).await), vec![all[1].name.clone()], "no agent yet: as registered");

    // It reports again: healthy again.
    report(&app, &agent, &cluster, &node.name, vec![gpu_sample(&node.gpus[0].1, Utc::now(), 5.0)]).await;
    assert_eq!(app.ok(&app.admin_token, health, json!({ "id": node.id })).await["node"]["health"], "HEALTHY");
    app.finish().await;
}

#[tokio::test]
async fn reports_arriving_together_are_stored_as_one_batch_each_answered_on_its_own() {
    const REPORTERS: usize = 20;
    let app = TestApp::spawn_with(|s| {
        egs_tests::api_only(s);
        egs_tests::writes_every_report(s);
    })
    .await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", REPORTERS + 1, SHAPE_H100, 8).await;
    let all = nodes(&app, &cluster).await;
    let mut agents = Vec::new();
    let t0 = second(Utc::now()) - chrono::Duration::seconds(60);
    // One report each first, one at a time: the tokens' records are cached from here on.
    for node in &all {
        let token = agent_token(&app, &cluster, &node.name).await;
        let body = report(&app, &token, &cluster, &node.name, vec![gpu_sample(&node.gpus[0].1, t0, 1.0)]).await;
        assert_eq!(body["data"]["reportGpuSamples"]["accepted"], 1, "{body}");
        agents.push(token);
    }
    let before = app.statements.get();
    // Then every agent at once, all eight GPUs; the last one's third sample is impossible.
    let at = t0 + chrono::Duration::seconds(1);
    let sends = all.iter().zip(&agents).enumerate().map(|(n, (node, token))| {
        let mut samples: Vec<Value> = node.gpus.iter().map(|(_, uuid)| gpu_sample(uuid, at, 10.0 + n as f64)).collect();
        if n == REPORTERS {
            samples[2]["temperature"] = json!(400.0);
        }
        report(&app, token, &cluster, &node.name, samples)
    });
    let answers = futures_util::future::join_all(sends).await;
    let statements = app.statements.get() - before;
    for (n, body) in answers.iter().enumerate() {
        let payload = &body["data"]["reportGpuSamples"];
        if n == REPORTERS {
            assert_eq!(payload["accepted"], 0, "the bad report is refused whole: {body}");
            assert_eq!(payload["userErrors"][0]["field"], json!(["input", "samples", "2", "temperature"]), "{body}");
        } else {
            assert_eq!((payload["accepted"].clone(), payload["userErrors"].clone()), (json!(8), json!([])), "report {n}: {body}");
        }
    }
    for (n, node) in all.iter().enumerate() {
        if n == REPORTERS {
            let row = gpu_row(&app, &node.gpus[0].1).await;
            assert_eq!((row.last_sample_at, row.latest_util), (Some(t0), Some(1.0)), "nothing of the refused report is stored");
            assert_eq!(gpu_row(&app, &node.gpus[7].1).await.last_sample_at, None);
            continue;
        }
        let row = gpu_row(&app, &node.gpus[7].1).await;
        {
            assert_eq!((row.last_sample_at, row.latest_util), (Some(at), Some(10.0 + n as f64)), "node {n}");
        }
    }
    // Alone, a report costs 8 statements (2 reads, a 4-statement transaction, 2 for the alert
    // rules); one batch costs the same whatever it holds. 21 reports sent together fall into a
    // few batches (the first alone, the rest gathered behind it), not 21.
    assert!(statements <= 8 * 5, "{statements} SQL statements for {} reports sent together", REPORTERS + 1);
    app.finish().await;
}

/// A fleet arriving at once (a gateway restarted): every agent's token and node is a cache miss
/// in the same moment. Misses share their reads, so the burst costs a few statements in all
/// rather than three per agent (its token record, its node, the node's GPUs), which at fleet
/// size had the reports queue for the pool until they failed.
#[tokio::test]
async fn a_fleet_arriving_at_once_reads_its_tokens_and_nodes_together() {
    const AGENTS: usize = 100;
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", AGENTS, SHAPE_H100, 8).await;
    let all = nodes(&app, &cluster).await;
    let mut agents = Vec::new();
    for node in &all {
        agents.push(agent_token(&app, &cluster, &node.name).await);
    }
    let before = app.statements.get();
    let at = second(Utc::now()) - chrono::Duration::seconds(5);
    let sends = all.iter().zip(&agents).map(|(node, token)| {
        let samples: Vec<Value> = node.gpus.iter().map(|(_, uuid)| gpu_sample(uuid, at, 50.0)).collect();
        report(&app, token, &cluster, &node.name, samples)
    });
    let answers = futures_util::future::join_all(sends).await;
    let statements = app.statements.get() - before;
    for body in &answers {
        assert_eq!(body["data"]["reportGpuSamples"]["accepted"], 8, "{body}");
    }
    assert_eq!(gpu_row(&app, &all[AGENTS - 1].gpus[7].1).await.last_sample_at, Some(at), "the last node's report is written");
    // Read one by one, the tokens and nodes alone were 300 statements; together about 20 in all.
    assert!(statements <= AGENTS as u64 / 2, "{statements} SQL statements for the first reports of {AGENTS} agents sent together");
    app.finish().await;
}

/// The gateway keeps the nodes reports name between batches: a GPU added since, a removed
/// node and a node registered again under its old name are each seen by the next report.
#[tokio::test]
async fn reports_follow_the_inventory_the_gateway_kept_of_their_node() {
    let app = TestApp::spawn_with(|s| {
        egs_tests::api_only(s);
        egs_tests::writes_every_report(s);
    })
    .await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "n", 1, SHAPE_H100, 1).await;
    let agent = agent_token(&app, &cluster, "n-0").await;
    let uuid = |i: usize| format!("GPU-{cluster}-n-0-{i}");
    let t0 = second(Utc::now()) - chrono::Duration::seconds(30);
    let accepted = |body: &Value| (body["data"]["reportGpuSamples"]["accepted"].clone(), body["data"]["reportGpuSamples"]["userErrors"].clone());
    let body = report(&app, &agent, &cluster, "n-0", vec![gpu_sample(&uuid(0), t0, 5.0)]).await;
    assert_eq!(accepted(&body), (json!(1), json!([])), "{body}");

    // A second GPU registered after the node was kept: its sample is accepted and stored.
    add_nodes(&app, &cluster, "n", 1, SHAPE_H100, 2).await;
    let at = t0 + chrono::Duration::seconds(1);
    let body = report(&app, &agent, &cluster, "n-0", vec![gpu_sample(&uuid(0), at, 6.0), gpu_sample(&uuid(1), at, 7.0)]).await;
    assert_eq!(accepted(&body), (json!(2), json!([])), "{body}");
    assert_eq!(gpu_row(&app, &uuid(1)).await.latest_util, Some(7.0));

    // Removed: refused, whether the gateway still kept it or not.
    let id = nodes(&app, &cluster).await.remove(0).id;
    remove_node(&app, &id).await;
    for n in 2..4 {
        let body = report(&app, &agent, &cluster, "n-0", vec![gpu_sample(&uuid(0), t0 + chrono::Duration::seconds(n), 8.0)]).await;
        assert_eq!((&body["data"], &body["errors"][0]["extensions"]["code"]), (&Value::Null, &json!("NOT_FOUND")), "report {n}: {body}");
    }

    // Registered again under its name (a new node): the agent's reports reach the new one.
    add_nodes(&app, &cluster, "n", 1, SHAPE_H100, 1).await;
    let again = t0 + chrono::Duration::seconds(5);
    let body = report(&app, &agent, &cluster, "n-0", vec![gpu_sample(&uuid(0), again, 9.0)]).await;
    assert_eq!(accepted(&body), (json!(1), json!([])), "{body}");
    let row = gpu_row(&app, &uuid(0)).await;
    assert_eq!((row.last_sample_at, row.latest_util), (Some(again), Some(9.0)));
    app.finish().await;
}

mod live {
    use super::*;
    use egs_tests::ws::Socket;

    /// `egs_gpu_histories` on a replica's `/metrics`.
    async fn histories(app: &TestApp) -> u64 {
        let text = app.metrics_text().await;
        let line = text.lines().find(|l| l.starts_with("egs_gpu_histories ")).unwrap_or_else(|| panic!("no egs_gpu_histories in:\n{text}"));
        line.split_whitespace().nth(1).and_then(|v| v.parse().ok()).expect("a count")
    }

    const SUBSCRIBE: &str = "subscription($node: ID, $gpu: ID, $interval: Duration) {
        gpuMetrics(nodeId: $node, gpuId: $gpu, interval: $interval) { samples { gpuId uuid time util temperature } } }";

    #[tokio::test]
    async fn samples_reported_to_one_replica_reach_the_others_subscribers_and_history() {
        let app = TestApp::spawn_with(egs_tests::api_only).await;
        let cluster = register_cluster(&app, "c1").await;
        add_nodes(&app, &cluster, "h100", 1, SHAPE_H100, 8).await;
        let node = nodes(&app, &cluster).await.remove(0);
        let agent = agent_token(&app, &cluster, &node.name).await;
        let replica = app.spawn_replica_with(egs_tests::api_only).await;
        let redis = std::env::var("EGS_TEST_REDIS_URL").is_ok_and(|u| !u.is_empty());

        let mut watcher = Socket::open(&replica, &app.admin_token).await;
        let variables = json!({ "gpu": node.gpus[3].0 });
        watcher.send(json!({ "id": "m", "type": "subscribe", "payload": { "query": SUBSCRIBE, "variables": variables } })).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = Utc::now();
        let body = report(&app, &agent, &cluster, &node.name, vec![gpu_sample(&node.gpus[3].1, now, 42.0)]).await;
        assert_eq!(body["data"]["reportGpuSamples"]["accepted"], 1, "{body}");

        // The latest sample is in the database: every replica reads it.
        let gpu = replica.ok(&app.admin_token, GPU, json!({ "id": node.gpus[3].0, "step": "1s" })).await["node"].clone();
        assert_eq!(gpu["latestSample"]["util"], 42.0, "{gpu}");
        if redis {
            // Over Redis the batch reaches the other replica's live subscribers and history.
            let update = watcher.recv().await;
            assert_eq!(update["payload"]["data"]["gpuMetrics"]["samples"][0]["util"], 42.0, "{update}");
            let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
            loop {
                let gpu = replica.ok(&app.admin_token, GPU, json!({ "id": node.gpus[3].0, "step": "1s" })).await["node"].clone();
                if gpu["metrics"].as_array().is_some_and(|points| points.len() == 1) {
                    assert_eq!(gpu["metrics"][0]["util"], 42.0, "{gpu}");
                    break;
                }
                assert!(tokio::time::Instant::now() < deadline, "history never reached the replica: {gpu}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            // The history stays with the replica the agent reported to; the other asks for it.
            assert_eq!((histories(&app).await, histories(&replica).await), (1, 0), "each replica holds only what was reported to it");
            // The agent's next report lands on the other replica (as a load balancer may send it):
            // each holds its part, and either one answers with both.
            let body =
                report(&replica, &agent, &cluster, &node.name, vec![gpu_sample(&node.gpus[3].1, now + chrono::Duration::seconds(1), 43.0)]).await;
            assert_eq!(body["data"]["reportGpuSamples"]["accepted"], 1, "{body}");
            for side in [&app, &replica] {
                let gpu = side.ok(&app.admin_token, GPU, json!({ "id": node.gpus[3].0, "step": "1s" })).await["node"].clone();
                let utils: Vec<f64> = gpu["metrics"].as_array().expect("points").iter().map(|p| p["util"].as_f64().expect("util")).collect();
                assert_eq!(utils, vec![42.0, 43.0], "{gpu}");
            }
            assert_eq!((histories(&app).await, histories(&replica).await), (1, 1));
        } else {
            // Without Redis, history and the live feed belong to the replica the agent reports to.
            assert_eq!(gpu["metrics"], json!([]), "{gpu}");
            // No sample crosses replicas without Redis.
            watcher.silent_for(Duration::from_millis(1500)).await;
        }
        replica.finish().await;
        app.finish().await;
    }

    /// Reports one new sample of `gpu` (a second after the last) to `to`; returns the interval
    /// the gateway asks the agent to gather for next.
    async fn report_interval(to: &TestApp, agent: &str, cluster: &str, node: &Node, second: &mut i64) -> i64 {
        const PACED: &str = "mutation($input: ReportGpuSamplesInput!) {
            reportGpuSamples(input: $input) { accepted reportIntervalSeconds userErrors { message } } }";
        *second += 1;
        let at = DateTime::from_timestamp(*second, 0).expect("a time");
        let input = json!({ "clusterId": cluster, "nodeName": node.name, "samples": [gpu_sample(&node.gpus[0].1, at, 5.0)] });
        let payload = to.mutate(agent, "reportGpuSamples", PACED, input).await;
        assert_eq!(payload["accepted"], 1, "{payload}");
        payload["reportIntervalSeconds"].as_i64().expect("an interval")
    }

    /// Reports until the answer is `wanted` (the watch state follows a subscription within a
    /// moment, and another replica's through the next hand-over over Redis).
    async fn until_interval(to: &TestApp, agent: &str, cluster: &str, node: &Node, second: &mut i64, wanted: i64, why: &str) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let got = report_interval(to, agent, cluster, node, second).await;
            if got == wanted {
                return;
            }
            assert!(tokio::time::Instant::now() < deadline, "{why}: the gateway still asks for {got} s, not {wanted} s");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    #[tokio::test]
    async fn agents_report_every_sample_while_someone_watches_their_node_and_every_few_seconds_otherwise() {
        let app = TestApp::spawn_with(egs_tests::api_only).await;
        let cluster = register_cluster(&app, "c1").await;
        add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 8).await;
        let mut all = nodes(&app, &cluster).await;
        let (node, other) = (all.remove(0), all.remove(0));
        let agent = agent_token(&app, &cluster, &node.name).await;
        let first = Utc::now().timestamp() - 300;
        let mut second = first;
        let unwatched = egs_api::settings::ServeArgs::DEFAULT_UNWATCHED_REPORT_INTERVAL_SECS as i64;
        assert_eq!(report_interval(&app, &agent, &cluster, &node, &mut second).await, unwatched, "nobody watches: gather");

        // A subscriber to another node changes nothing; one to this node's GPU does.
        let mut watcher = Socket::open(&app, &app.admin_token).await;
        watcher.subscribe("other", SUBSCRIBE, json!({ "node": other.id })).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert_eq!(report_interval(&app, &agent, &cluster, &node, &mut second).await, unwatched, "another node's subscriber");
        watcher.subscribe("mine", SUBSCRIBE, json!({ "gpu": node.gpus[0].0 })).await;
        until_interval(&app, &agent, &cluster, &node, &mut second, 0, "a subscriber to one of its GPUs").await;
        // (The sample of the report that found it watched may have gone out just before.)
        assert_eq!(report_interval(&app, &agent, &cluster, &node, &mut second).await, 0);
        let update = watcher.next("mine", "gpuMetrics").await;
        assert!(update["samples"].is_array(), "the watcher gets the samples: {update}");
        watcher.send(json!({ "id": "mine", "type": "complete" })).await;
        until_interval(&app, &agent, &cluster, &node, &mut second, unwatched, "its subscriber left").await;
        drop(watcher);

        if std::env::var("EGS_TEST_REDIS_URL").is_ok_and(|u| !u.is_empty()) {
            // A subscriber on another replica counts as much: Redis says it heard the batch.
            let replica = app.spawn_replica_with(egs_tests::api_only).await;
            let mut remote = Socket::open(&replica, &app.admin_token).await;
            remote.subscribe("far", SUBSCRIBE, json!({ "node": node.id })).await;
            until_interval(&app, &agent, &cluster, &node, &mut second, 0, "a subscriber on another replica").await;
            drop(remote);
            until_interval(&app, &agent, &cluster, &node, &mut second, unwatched, "the other replica's subscriber left").await;
            replica.finish().await;
        }

        // Every sample gathered meanwhile is in the history, whatever the pace.
        let from = DateTime::from_timestamp(first, 0);
        let points = app.ok(&app.admin_token, GPU, json!({ "id": node.gpus[0].0, "step": "1s", "from": from })).await;
        let reported = points["node"]["metrics"].as_array().map_or(0, Vec::len) as i64;
        assert_eq!(reported, second - first, "one point per report: {points}");
        app.finish().await;
    }

    #[tokio::test]
    async fn a_gpr_or_slice_subscriber_makes_the_nodes_it_holds_watched_and_no_others() {
        const SCOPED: &str = "subscription($gpr: ID, $slice: ID) { gpuMetrics(gprId: $gpr, sliceId: $slice) { samples { gpuId } } }";
        let app = TestApp::spawn().await;
        let two = two_slices(&app).await;
        let created = create_gpr(&app, &two.token_a, &two.slice_a, "watched", json!({ "nodeCount": 1 })).await;
        let gpr = created["id"].as_str().expect("id").to_owned();
        let (id, name, gpus) = gpus_of(&provisioned(&app, &two.token_a, &gpr).await);
        let held = Node { id, name, gpus };
        let idle = nodes(&app, &two.cluster).await.into_iter().find(|n| n.id != held.id).expect("an idle node");
        let (held_agent, idle_agent) = (agent_token(&app, &two.cluster, &held.name).await, agent_token(&app, &two.cluster, &idle.name).await);
        let first = Utc::now().timestamp() - 300;
        let (mut held_second, mut idle_second) = (first, first);
        let unwatched = egs_api::settings::ServeArgs::DEFAULT_UNWATCHED_REPORT_INTERVAL_SECS as i64;
        assert_eq!(report_interval(&app, &held_agent, &two.cluster, &held, &mut held_second).await, unwatched);

        let mut alice = Socket::open(&app, &two.token_a).await;
        for (scope, variables) in [("its GPR", json!({ "gpr": gpr })), ("its slice", json!({ "slice": two.slice_a }))] {
            alice.subscribe("scoped", SCOPED, variables).await;
            until_interval(&app, &held_agent, &two.cluster, &held, &mut held_second, 0, scope).await;
            let idle_pace = report_interval(&app, &idle_agent, &two.cluster, &idle, &mut idle_second).await;
            assert_eq!(idle_pace, unwatched, "{scope}'s subscriber does not watch a node it does not hold");
            alice.send(json!({ "id": "scoped", "type": "complete" })).await;
            until_interval(&app, &held_agent, &two.cluster, &held, &mut held_second, unwatched, "the subscriber left").await;
        }
        drop(alice);

        if std::env::var("EGS_TEST_REDIS_URL").is_ok_and(|u| !u.is_empty()) {
            // On another replica: it tells through the GPR's presence channel, not by hearing
            // every batch (which a scoped subscriber's replica does).
            let replica = app.spawn_replica().await;
            let mut remote = Socket::open(&replica, &two.token_a).await;
            for (scope, variables) in [("its GPR", json!({ "gpr": gpr })), ("its slice", json!({ "slice": two.slice_a }))] {
                remote.subscribe("far", SCOPED, variables).await;
                until_interval(&app, &held_agent, &two.cluster, &held, &mut held_second, 0, scope).await;
                for _ in 0..2 {
                    let idle_pace = report_interval(&app, &idle_agent, &two.cluster, &idle, &mut idle_second).await;
                    assert_eq!(idle_pace, unwatched, "{scope}'s subscriber on another replica does not watch a node it does not hold");
                }
                remote.send(json!({ "id": "far", "type": "complete" })).await;
                until_interval(&app, &held_agent, &two.cluster, &held, &mut held_second, unwatched, "the other replica's subscriber left").await;
            }
            drop(remote);
            replica.finish().await;
        }
        app.finish().await;
    }

    #[tokio::test]
    async fn live_samples_arrive_coalesced_and_only_for_the_holding_slice() {
        let app = TestApp::spawn().await;
        let two = two_slices(&app).await;
        let created = create_gpr(&app, &two.token_a, &two.slice_a, "watch", json!({ "nodeCount": 1 })).await;
        let gpr = created["id"].as_str().expect("id").to_owned();
        let (node_id, node_name, gpus) = gpus_of(&provisioned(&app, &two.token_a, &gpr).await);
        let agent = agent_token(&app, &two.cluster, &node_name).await;

        let mut bob = Socket::open(&app, &two.token_b).await;
        bob.send(json!({ "id": "m", "type": "subscribe", "payload": { "query": SUBSCRIBE, "variables": { "node": node_id } } })).await;
        let refused = bob.recv().await;
        // A resolver error arrives as a result with errors (`next`), or as an `error` message.
        let errors = if refused["type"] == "error" { &refused["payload"] } else { &refused["payload"]["errors"] };
        assert_eq!(errors[0]["extensions"]["code"], "NOT_FOUND", "{refused}");

        let mut alice = Socket::open(&app, &two.token_a).await;
        alice.subscribe("m", SUBSCRIBE, json!({ "node": node_id, "interval": "2s" })).await;
        // Let the subscription start before reporting.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let now = Utc::now();
        for s in 0..3 {
            let batch = gpus.iter().take(2).map(|(_, uuid)| gpu_sample(uuid, now + chrono::Duration::seconds(s), 10.0 * (s + 1) as f64)).collect();
            report(&app, &agent, &two.cluster, &node_name, batch).await;
        }
        // Three reports in quick succession.
        // (On a loaded machine the reports may spread over more than one interval; what holds
        // is at most one update per interval.)
        let mut seen: Vec<Value> = Vec::new();
        let mut arrivals = Vec::new();
        while seen.last().is_none_or(|u: &Value| u["samples"][0]["util"] != 30.0) {
            let message = alice.recv().await;
            arrivals.push(std::time::Instant::now());
            assert_eq!(message["type"], "next", "{message}");
            seen.push(message["payload"]["data"]["gpuMetrics"].clone());
        }
        // Paced by a bucket of two tokens, one per 1.6 s (0.8 of the interval): the first two
        // reports go out as they come, the third waits for the next token (about 1.5 s after
        // the first, measured).
        assert!(seen.len() <= 3, "coalesced: {seen:?}");
        if let [first, _, third] = arrivals[..] {
            assert!(third - first >= Duration::from_millis(1200), "the third waited for a token ({:?} after the first): {seen:?}", third - first);
        }
        let last = &seen[seen.len() - 1]["samples"];
        assert_eq!(last.as_array().map(Vec::len), Some(2), "the newest of each GPU: {last}");
        assert_eq!(time(&last[0]["time"]), second(now + chrono::Duration::seconds(2)));

        // The GPR ends: the node's samples stop reaching the slice at once.
        let release = "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { phase } userErrors { field message code } } }";
        app.mutate(&two.token_a, "earlyReleaseGpr", release, json!({ "id": gpr })).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        while app.ok(&two.token_a, "query($id: ID!) { gpr(id: $id) { phase } }", json!({ "id": gpr })).await["gpr"]["phase"] != "COMPLETED" {
            assert!(tokio::time::Instant::now() < deadline, "not released");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await; // the allocation view follows the event
        let later = gpus.iter().map(|(_, uuid)| gpu_sample(uuid, Utc::now() + chrono::Duration::seconds(5), 50.0)).collect();
        report(&app, &agent, &two.cluster, &node_name, later).await;
        // Nothing after the release.
        alice.silent_for(Duration::from_millis(2500)).await;
        app.finish().await;
    }
}

/// Walks `gpus(orderBy: order)` as `token` in pages of 7; returns the uuids in order.
async fn ranked_uuids(app: &TestApp, token: &str, order: &str) -> Vec<String> {
    let query = format!(
        "query($after: String) {{ gpus(orderBy: {order}, first: 7, after: $after) {{ totalCount pageInfo {{ hasNextPage endCursor }} nodes {{ uuid }} }} }}"
    );
    let mut uuids = Vec::new();
    let mut after = Value::Null;
    loop {
        let page = app.ok(token, &query, json!({ "after": after })).await["gpus"].clone();
        uuids.extend(page["nodes"].as_array().expect("nodes").iter().map(|g| g["uuid"].as_str().expect("uuid").to_owned()));
        if page["pageInfo"]["hasNextPage"] != json!(true) {
            assert_eq!(page["totalCount"], json!(uuids.len()), "every GPU once");
            return uuids;
        }
        after = page["pageInfo"]["endCursor"].clone();
    }
}

/// The database ranks and pages (so a fleet is never read whole to show a page); the order is
/// exactly the in-memory reference's, ties and all, for admins and for a member who reads only
/// their GPR's node, on either backend.
#[tokio::test]
async fn the_database_ranks_gpus_exactly_as_the_reference_does() {
    use egs_domain::metrics::summary::{Rank, rank};
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await;
    add_nodes(&app, &two.cluster, "more", 2, SHAPE_H100, 8).await;
    let created = create_gpr(&app, &two.token_a, &two.slice_a, "train", json!({ "nodeCount": 1 })).await;
    let held = provisioned(&app, &two.token_a, created["id"].as_str().expect("id")).await;
    let held_node = held["nodes"][0]["name"].as_str().expect("name").to_owned();
    // Few distinct values, so ties on the first and second keys are common; some GPUs never report.
    let now = Utc::now();
    let mut seed = 7u64;
    let mut next = |n: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    for node in nodes(&app, &two.cluster).await {
        let mut samples = Vec::new();
        for (_, uuid) in &node.gpus {
            if next(5) == 0 {
                continue;
            }
            let mut sample = gpu_sample(uuid, now, [0.0, 50.0, 100.0][next(3) as usize]);
            sample["temperature"] = json!([40.0, 60.0, 80.0][next(3) as usize]);
            sample["power"] = json!([100.0, 300.0][next(2) as usize]);
            sample["memUtil"] = json!([10.0, 20.0][next(2) as usize]);
            samples.push(sample);
        }
        let body = report(&app, &app.admin_token, &two.cluster, &node.name, samples).await;
        assert!(body["data"]["reportGpuSamples"]["userErrors"] == json!([]), "{body}");
    }
    let rows = egs_entities::gpu::Entity::find().all(&app.db).await.expect("gpus");
    let held_id = egs_entities::node::Entity::find()
        .filter(egs_entities::node::Column::Name.eq(held_node.as_str()))
        .one(&app.db)
        .await
        .expect("query")
        .expect("the held node")
        .id;
    let since = egs_entities::gpr_node::Entity::find()
        .filter(egs_entities::gpr_node::Column::NodeId.eq(held_id))
        .one(&app.db)
        .await
        .expect("query")
        .expect("the assignment")
        .assigned_at;
    let expected = |order: Rank, readable: &dyn Fn(&egs_entities::gpu::Model) -> bool| {
        let mut gpus = rows.clone();
        rank(&mut gpus, order, readable);
        gpus.into_iter().map(|g| g.uuid).collect::<Vec<_>>()
    };
    for (name, order) in
        [("HOT_SPOTS_FIRST", Rank::HotSpots), ("HIGHEST_POWER_FIRST", Rank::Power), ("BUSIEST_FIRST", Rank::Busiest), ("IDLEST_FIRST", Rank::Idlest)]
    {
        assert_eq!(ranked_uuids(&app, &app.admin_token, name).await, expected(order, &|_| true), "{name} for an admin");
        // Whole seconds, as samples are stored.
        let member = expected(order, &|g| g.node_id == held_id && g.last_sample_at.is_some_and(|at| at.timestamp() >= since.timestamp()));
        assert_eq!(ranked_uuids(&app, &two.token_a, name).await, member, "{name} for the holder's member");
    }
    // Someone whose slice holds nothing: every GPU by id, as if none had reported.
    let mut by_id = rows.clone();
    by_id.sort_by_key(|g| g.id);
    assert_eq!(ranked_uuids(&app, &two.token_b, "HOT_SPOTS_FIRST").await, by_id.into_iter().map(|g| g.uuid).collect::<Vec<_>>());
    app.finish().await;
}
