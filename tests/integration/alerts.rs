//! Alerts through the real gateway: samples raise and clear them with hysteresis, XID errors
//! by severity, the sweeper notices silent agents, slices read only their own (in the list and
//! over a WebSocket, on any replica), admins tune thresholds, and a webhook gets each
//! transition exactly once, retried until it answers.

use chrono::{DateTime, Utc};
use egs_tests::TestApp;
use egs_tests::fixtures::*;
use egs_tests::ws::Socket;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const REPORT: &str = "mutation($input: ReportGpuSamplesInput!) {
    reportGpuSamples(input: $input) { accepted duplicates userErrors { field message code } } }";
const NODES: &str = "query($cluster: ID!) { nodes(filter: { clusterId: $cluster }, first: 100) { nodes { id name gpus { id uuid } } } }";
const ALERTS: &str = "query($slice: ID, $cluster: ID, $open: Boolean, $kind: AlertKind) {
    alerts(sliceId: $slice, clusterId: $cluster, open: $open, kind: $kind, first: 100) { totalCount nodes {
        id kind severity message value threshold open raisedAt clearedAt resolution
        cluster { name } node { name } gpu { uuid } slice { id } gpr { id } } } }";
pub(crate) const SUBSCRIBE_ALERTS: &str = "subscription($slice: ID, $cluster: ID) {
    alerts(sliceId: $slice, clusterId: $cluster) { id kind severity open value threshold message resolution gpr { id } } }";
const THRESHOLDS: &str = "{ alertThresholds { gpuShape temperatureCelsius temperatureClearsBelowCelsius temperatureSource
    powerWatts powerClearsBelowWatts powerSource updatedAt } }";
const SET_THRESHOLD: &str = "mutation($input: SetAlertThresholdInput!) { setAlertThreshold(input: $input) {
    threshold { gpuShape temperatureCelsius temperatureSource powerWatts powerSource } userErrors { field message code } } }";

/// A node as the fixtures create it, with its GPUs' uuids.
pub(crate) struct Node {
    pub id: String,
    pub name: String,
    pub uuids: Vec<String>,
}

pub(crate) async fn nodes(app: &TestApp, cluster: &str) -> Vec<Node> {
    let data = app.ok(&app.admin_token, NODES, json!({ "cluster": cluster })).await;
    data["nodes"]["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| Node {
            id: n["id"].as_str().expect("id").to_owned(),
            name: n["name"].as_str().expect("name").to_owned(),
            uuids: n["gpus"].as_array().expect("gpus").iter().map(|g| g["uuid"].as_str().expect("uuid").to_owned()).collect(),
        })
        .collect()
}

/// Sample times: each call a second later than the last (the rules read new samples only).
struct Clock {
    start: DateTime<Utc>,
    tick: i64,
}

impl Clock {
    fn new() -> Self {
        Self { start: Utc::now() - chrono::Duration::seconds(50), tick: 0 }
    }

    fn next(&mut self) -> DateTime<Utc> {
        self.tick += 1;
        self.start + chrono::Duration::seconds(self.tick)
    }
}

/// Reports samples of a node as an admin (by node id: no heartbeat).
async fn report(app: &TestApp, node_id: &str, samples: Vec<Value>) {
    let payload = app.mutate(&app.admin_token, "reportGpuSamples", REPORT, json!({ "nodeId": node_id, "samples": samples })).await;
    assert!(payload["accepted"].as_i64().unwrap_or_default() > 0, "{payload}");
}

async fn alerts(app: &TestApp, token: &str, variables: Value) -> Vec<Value> {
    app.ok(token, ALERTS, variables).await["alerts"]["nodes"].as_array().expect("alerts").clone()
}

/// Polls the alert list until `done` holds for it.
async fn wait_for_alerts(app: &TestApp, token: &str, variables: Value, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    loop {
        let found = alerts(app, token, variables.clone()).await;
        if done(&found) {
            return found;
        }
        assert!(tokio::time::Instant::now() < deadline, "alerts never got there: {found:#?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Polls a GPR until it is provisioned; returns its first node's id and GPU uuids.
pub(crate) async fn provisioned_node(app: &TestApp, token: &str, gpr: &str) -> (String, String, Vec<String>) {
    let found = provisioned(app, token, gpr).await;
    let node = &found["nodes"][0];
    let uuids = node["gpus"].as_array().expect("gpus").iter().map(|g| g["uuid"].as_str().unwrap_or_default().to_owned()).collect();
    (node["id"].as_str().expect("id").to_owned(), node["name"].as_str().expect("name").to_owned(), uuids)
}

#[tokio::test]
async fn an_overheating_gpu_raises_one_alert_that_clears_only_below_the_band() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 1, SHAPE_H100, 2).await;
    let node = nodes(&app, &cluster).await.remove(0);
    let (hot, cool) = (&node.uuids[0], &node.uuids[1]);
    let mut clock = Clock::new();
    let open = json!({ "open": true });

    let at = clock.next();
    report(&app, &node.id, vec![gpu_sample_hot(hot, at, 91.0, 300.0), gpu_sample_hot(cool, at, 60.0, 300.0)]).await;
    let raised = alerts(&app, &app.admin_token, open.clone()).await;
    assert_eq!(raised.len(), 1, "{raised:#?}");
    let alert = &raised[0];
    assert_eq!((alert["kind"].as_str(), alert["severity"].as_str()), (Some("OVER_TEMPERATURE"), Some("WARNING")));
    assert_eq!((&alert["value"], &alert["threshold"], &alert["open"]), (&json!(91.0), &json!(87.0), &json!(true)));
    assert_eq!((alert["gpu"]["uuid"].as_str(), alert["node"]["name"].as_str()), (Some(hot.as_str()), Some(node.name.as_str())));
    assert_eq!(alert["cluster"]["name"], "c1");
    let message = alert["message"].as_str().unwrap_or_default();
    assert!(message.contains(&node.name) && message.contains("91 °C") && message.contains("87 °C"), "{message}");
    assert_eq!((&alert["slice"], &alert["gpr"]), (&Value::Null, &Value::Null), "a node no slice holds");

    // Hotter still, then inside the band (82–87 °C): the same single alert stays open.
    for temperature in [95.0, 86.0, 84.0, 82.0] {
        report(&app, &node.id, vec![gpu_sample_hot(hot, clock.next(), temperature, 300.0)]).await;
        let now = alerts(&app, &app.admin_token, json!({})).await;
        assert_eq!(now.len(), 1, "at {temperature} °C: {now:#?}");
        assert_eq!((&now[0]["id"], &now[0]["open"]), (&alert["id"], &json!(true)), "at {temperature} °C");
    }
    // A resend of an old hot sample changes nothing either.
    let stale_resend = gpu_sample_hot(hot, clock.start, 99.0, 300.0);
    app.mutate(&app.admin_token, "reportGpuSamples", REPORT, json!({ "nodeId": node.id, "samples": [stale_resend] })).await;
    // Below the band: cleared, with why.
    report(&app, &node.id, vec![gpu_sample_hot(hot, clock.next(), 80.0, 300.0)]).await;
    assert_eq!(alerts(&app, &app.admin_token, open.clone()).await, Vec::<Value>::new());
    let all = alerts(&app, &app.admin_token, json!({})).await;
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(all[0]["open"], false);
    assert!(all[0]["clearedAt"].is_string());
    assert!(all[0]["resolution"].as_str().unwrap_or_default().contains("80 °C"), "{}", all[0]);

    // Hot again: a new alert, the old one stays in history.
    report(&app, &node.id, vec![gpu_sample_hot(hot, clock.next(), 90.0, 300.0)]).await;
    assert_eq!(alerts(&app, &app.admin_token, json!({ "kind": "OVER_TEMPERATURE" })).await.len(), 2);
    // Power over the model's 700 W limit is its own alert.
    report(&app, &node.id, vec![gpu_sample_hot(cool, clock.next(), 60.0, 720.0)]).await;
    let power = alerts(&app, &app.admin_token, json!({ "kind": "OVER_POWER" })).await;
    assert_eq!((power.len(), &power[0]["threshold"]), (1, &json!(700.0)), "{power:#?}");
    app.finish().await;
}

#[tokio::test]
async fn xid_and_ecc_errors_raise_alerts_by_severity() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 1, SHAPE_H100, 2).await;
    let node = nodes(&app, &cluster).await.remove(0);
    let uuid = &node.uuids[0];
    let mut clock = Clock::new();
    let with = |at, xid: Value, ecc: Value| {
        let mut s = gpu_sample_hot(uuid, at, 60.0, 300.0);
        s["xidErrors"] = xid;
        s["eccUncorrected"] = ecc;
        s
    };
    let xid = json!({ "kind": "XID_ERROR", "open": true });

    report(&app, &node.id, vec![with(clock.next(), json!([13]), json!(0))]).await;
    let warned = alerts(&app, &app.admin_token, xid.clone()).await;
    assert_eq!((warned.len(), warned[0]["severity"].as_str(), &warned[0]["value"]), (1, Some("WARNING"), &json!(13.0)), "{warned:#?}");
    // XID 79: the GPU fell off the bus. Critical; it supersedes the warning.
    report(&app, &node.id, vec![with(clock.next(), json!([79]), json!(0))]).await;
    let critical = alerts(&app, &app.admin_token, xid.clone()).await;
    assert_eq!(critical.len(), 1, "{critical:#?}");
    assert_eq!((critical[0]["severity"].as_str(), &critical[0]["value"]), (Some("CRITICAL"), &json!(79.0)));
    assert!(critical[0]["message"].as_str().unwrap_or_default().contains("fallen off the bus"), "{}", critical[0]);
    // The same XID again is the same alert.
    report(&app, &node.id, vec![with(clock.next(), json!([79]), json!(0))]).await;
    assert_eq!(alerts(&app, &app.admin_token, json!({ "kind": "XID_ERROR" })).await.len(), 2, "the warning (cleared) and the critical one");

    // The uncorrected ECC count going up is critical; staying put is not news.
    report(&app, &node.id, vec![with(clock.next(), json!([]), json!(2))]).await;
    report(&app, &node.id, vec![with(clock.next(), json!([]), json!(2))]).await;
    let ecc = alerts(&app, &app.admin_token, json!({ "kind": "ECC_ERROR" })).await;
    assert_eq!(ecc.len(), 1, "{ecc:#?}");
    assert_eq!((ecc[0]["severity"].as_str(), &ecc[0]["value"], &ecc[0]["threshold"]), (Some("CRITICAL"), &json!(2.0), &json!(0.0)));
    app.finish().await;
}

#[tokio::test]
async fn the_sweeper_raises_node_stale_for_a_silent_agent_and_a_report_clears_it() {
    use sea_orm::sea_query::Expr;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let app = TestApp::spawn_with(|s| {
        egs_tests::api_only(s);
        s.alerts.sweep_interval_ms = 100;
    })
    .await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 1).await;
    let all = nodes(&app, &cluster).await;
    let node = &all[0];
    let agent = agent_token(&app, &cluster, &node.name).await;
    let agent_report = |at: DateTime<Utc>| {
        let input = json!({ "clusterId": cluster, "nodeName": node.name, "samples": [gpu_sample_hot(&node.uuids[0], at, 50.0, 300.0)] });
        app.mutate(&agent, "reportGpuSamples", REPORT, input)
    };
    agent_report(Utc::now()).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stale = json!({ "kind": "NODE_STALE" });
    assert_eq!(alerts(&app, &app.admin_token, stale.clone()).await, Vec::<Value>::new(), "a reporting agent is not stale");

    // The agent's last word was 31 s ago; the other node never had an agent.
    egs_entities::node::Entity::update_many()
        .col_expr(egs_entities::node::Column::LastHeartbeatAt, Expr::value(Utc::now() - chrono::Duration::seconds(31)))
        .filter(egs_entities::node::Column::Name.eq(node.name.as_str()))
        .exec(&app.db)
        .await
        .expect("age the heartbeat");
    let raised = wait_for_alerts(&app, &app.admin_token, stale.clone(), |a| !a.is_empty()).await;
    assert_eq!(raised.len(), 1, "{raised:#?}");
    assert_eq!((raised[0]["severity"].as_str(), raised[0]["node"]["name"].as_str()), (Some("WARNING"), Some(node.name.as_str())));
    assert!(raised[0]["value"].as_f64().unwrap_or_default() >= 30.0, "{}", raised[0]);
    // Sweeps keep running: still one.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(alerts(&app, &app.admin_token, stale.clone()).await.len(), 1);

    // The agent reports again: cleared by that very report.
    agent_report(Utc::now()).await;
    let cleared = alerts(&app, &app.admin_token, stale).await;
    assert_eq!((cleared.len(), &cleared[0]["open"]), (1, &json!(false)), "{cleared:#?}");
    assert_eq!(cleared[0]["resolution"], "its agent reported again");
    app.finish().await;
}

#[tokio::test]
async fn a_slice_reads_only_its_own_alerts_in_the_list_and_live() {
    let app = TestApp::spawn().await;
    let two = two_slices(&app).await;
    let gpr = create_gpr(&app, &two.token_a, &two.slice_a, "train", json!({ "nodeCount": 1 })).await["id"].as_str().expect("id").to_owned();
    let (held_id, _, held_gpus) = provisioned_node(&app, &two.token_a, &gpr).await;
    let free = nodes(&app, &two.cluster).await.into_iter().find(|n| n.id != held_id).expect("a free node");

    let mut alice = Socket::open(&app, &two.token_a).await;
    alice.subscribe("a", SUBSCRIBE_ALERTS, json!({})).await;
    let mut bob = Socket::open(&app, &two.token_b).await;
    bob.subscribe("b", SUBSCRIBE_ALERTS, json!({})).await;
    let mut bob_a = Socket::open(&app, &two.token_b).await;
    bob_a.subscribe("x", SUBSCRIBE_ALERTS, json!({ "slice": two.slice_a })).await;
    let refused = bob_a.refused().await;
    assert_eq!(refused[0]["extensions"]["code"], "NOT_FOUND", "{refused}");
    tokio::time::sleep(Duration::from_millis(300)).await;

    let mut clock = Clock::new();
    report(&app, &held_id, vec![gpu_sample_hot(&held_gpus[0], clock.next(), 92.0, 300.0)]).await;
    report(&app, &free.id, vec![gpu_sample_hot(&free.uuids[0], clock.next(), 93.0, 300.0)]).await;

    // Alice: the alert of her GPR's node, live and in the list; not the free node's.
    let live = alice.next("a", "alerts").await;
    assert_eq!(
        (live["kind"].as_str(), &live["open"], live["gpr"]["id"].as_str()),
        (Some("OVER_TEMPERATURE"), &json!(true), Some(gpr.as_str())),
        "{live}"
    );
    let hers = alerts(&app, &two.token_a, json!({})).await;
    assert_eq!(hers.len(), 1, "{hers:#?}");
    assert_eq!((hers[0]["slice"]["id"].as_str(), hers[0]["id"].as_str()), (Some(two.slice_a.as_str()), live["id"].as_str()));
    assert_eq!(alerts(&app, &two.token_a, json!({ "slice": two.slice_a, "cluster": two.cluster })).await.len(), 1);
    // Bob: nothing of Alice's, and nothing about nodes no slice holds.
    assert_eq!(alerts(&app, &two.token_b, json!({})).await, Vec::<Value>::new());
    let body = app.gql(&two.token_b, ALERTS, json!({ "slice": two.slice_a })).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "NOT_FOUND", "{body}");
    let count = app.ok(&two.token_b, "{ alerts { totalCount } }", json!({})).await;
    assert_eq!(count["alerts"]["totalCount"], 0);
    // Admins read both.
    assert_eq!(alerts(&app, &app.admin_token, json!({ "open": true })).await.len(), 2);
    // By global id, under the same rule: Alice reads hers, Bob finds nothing there.
    let by_id = "query($id: ID!) { node(id: $id) { id ... on Alert { kind } } }";
    let found = app.ok(&two.token_a, by_id, json!({ "id": live["id"] })).await;
    assert_eq!((&found["node"]["id"], found["node"]["kind"].as_str()), (&live["id"], Some("OVER_TEMPERATURE")), "{found}");
    let hidden = app.gql(&two.token_b, by_id, json!({ "id": live["id"] })).await;
    assert_eq!(hidden["errors"][0]["extensions"]["code"], "NOT_FOUND", "{hidden}");

    // It cools down: Alice hears the clear.
    report(&app, &held_id, vec![gpu_sample_hot(&held_gpus[0], clock.next(), 70.0, 300.0)]).await;
    let cleared = alice.next("a", "alerts").await;
    assert_eq!((&cleared["id"], &cleared["open"]), (&live["id"], &json!(false)), "{cleared}");
    alice.quiet_for(Duration::from_millis(800)).await;
    bob.quiet_for(Duration::from_millis(300)).await;
    app.finish().await;
}

#[tokio::test]
async fn a_subscriber_on_one_replica_hears_alerts_raised_through_another() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let cluster = register_cluster(&app, "c1").await;
    let other = register_cluster(&app, "c2").await;
    add_nodes(&app, &cluster, "h100", 1, SHAPE_H100, 1).await;
    add_nodes(&app, &other, "far", 1, SHAPE_H100, 1).await;
    let node = nodes(&app, &cluster).await.remove(0);
    let far = nodes(&app, &other).await.remove(0);
    let replica = app.spawn_replica_with(egs_tests::api_only).await;

    let mut socket = Socket::open(&replica, &replica.admin_token).await;
    socket.subscribe("c1", SUBSCRIBE_ALERTS, json!({ "cluster": cluster })).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut clock = Clock::new();
    report(&app, &far.id, vec![gpu_sample_hot(&far.uuids[0], clock.next(), 95.0, 300.0)]).await;
    let mut xid = gpu_sample_hot(&node.uuids[0], clock.next(), 60.0, 300.0);
    xid["xidErrors"] = json!([48]);
    report(&app, &node.id, vec![xid]).await;
    let raised = socket.next("c1", "alerts").await;
    assert_eq!(
        (raised["kind"].as_str(), raised["severity"].as_str(), &raised["open"]),
        (Some("XID_ERROR"), Some("CRITICAL"), &json!(true)),
        "{raised}"
    );
    socket.quiet_for(Duration::from_millis(600)).await;
    replica.finish().await;
    app.finish().await;
}

#[tokio::test]
async fn an_idle_gpr_is_warned_before_its_idle_release_and_the_warning_ends_with_it() {
    let app = TestApp::spawn_with(|s| s.alerts.sweep_interval_ms = 100).await;
    let two = two_slices(&app).await;
    let created = create_gpr(&app, &two.token_a, &two.slice_a, "idle", json!({ "nodeCount": 1, "idleTimeout": "30m" })).await;
    let gpr = created["id"].as_str().expect("id").to_owned();
    let (node_id, _, uuids) = provisioned_node(&app, &two.token_a, &gpr).await;
    let at = Utc::now() + chrono::Duration::seconds(2);
    let idle: Vec<Value> = uuids
        .iter()
        .map(|uuid| {
            let mut s = gpu_sample_hot(uuid, at, 40.0, 80.0);
            s["util"] = json!(0.0);
            s
        })
        .collect();
    report(&app, &node_id, idle).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let kind = json!({ "kind": "GPR_IDLE" });
    assert_eq!(alerts(&app, &app.admin_token, kind.clone()).await, Vec::<Value>::new(), "not idle for long yet");

    // 25 of its 30 minutes idle: warned, in its slice.
    app.clock.advance(Duration::from_secs(25 * 60));
    let warned = wait_for_alerts(&app, &two.token_a, kind.clone(), |a| !a.is_empty()).await;
    assert_eq!(
        (warned.len(), warned[0]["severity"].as_str(), warned[0]["gpr"]["id"].as_str()),
        (1, Some("WARNING"), Some(gpr.as_str())),
        "{warned:#?}"
    );
    assert_eq!(warned[0]["threshold"], 1800.0);
    assert!(warned[0]["value"].as_f64().unwrap_or_default() >= 1500.0, "{}", warned[0]);
    assert!(warned[0]["message"].as_str().unwrap_or_default().contains("`idle`"), "{}", warned[0]);
    assert_eq!(alerts(&app, &two.token_b, kind.clone()).await, Vec::<Value>::new(), "not another slice's business");

    // Released: the warning ends with it.
    let release = "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { phase } userErrors { field message code } } }";
    app.mutate(&two.token_a, "earlyReleaseGpr", release, json!({ "id": gpr })).await;
    let ended = wait_for_alerts(&app, &two.token_a, kind, |a| a.first().is_some_and(|a| a["open"] == false)).await;
    assert!(ended[0]["resolution"].as_str().unwrap_or_default().contains("no longer provisioned"), "{}", ended[0]);
    app.finish().await;
}

#[tokio::test]
async fn a_gpr_that_holds_gpus_it_barely_uses_is_warned_by_its_slice_policy() {
    // The sweep reads busy times from the database against the lifecycle's test clock, which
    // jumps an hour: each report must be there before the jump.
    let app = TestApp::spawn_with(|s| {
        s.alerts.sweep_interval_ms = 100;
        egs_tests::writes_every_report(s);
    })
    .await;
    let two = two_slices(&app).await;
    let policy = "mutation($input: SetSlicePolicyInput!) { setSlicePolicy(input: $input) { slice { policy { underuseBelowPercent underusePeriod } } userErrors { field code } } }";
    for (bad, field) in [(json!({ "underuseBelowPercent": 0 }), "underuseBelowPercent"), (json!({ "underusePeriod": "1m" }), "underusePeriod")] {
        let refused = app.ok(&app.admin_token, policy, json!({ "input": { "sliceId": two.slice_a, "policy": bad } })).await["setSlicePolicy"].clone();
        assert_eq!(refused["userErrors"][0]["field"], json!(["input", "policy", field]), "{refused}");
    }
    let set = app
        .mutate(
            &app.admin_token,
            "setSlicePolicy",
            policy,
            json!({ "sliceId": two.slice_a, "policy": { "underuseBelowPercent": 20, "underusePeriod": "1h" } }),
        )
        .await;
    assert_eq!(set["slice"]["policy"], json!({ "underuseBelowPercent": 20, "underusePeriod": "PT1H" }));
    let created = create_gpr(&app, &two.token_a, &two.slice_a, "lazy", json!({ "nodeCount": 1, "duration": "8h" })).await;
    let gpr = created["id"].as_str().expect("id").to_owned();
    let (node_id, _, uuids) = provisioned_node(&app, &two.token_a, &gpr).await;
    // A little ahead, as in the idle test: after the lifecycle clock's provisioning time.
    // Samples are told apart by their timestamp: the second report's are seconds after the first's.
    let first_at = Utc::now() + chrono::Duration::seconds(2);
    let busy = |util: f64, after: i64| -> Vec<Value> {
        uuids.iter().map(|uuid| gpu_sample(uuid, first_at + chrono::Duration::seconds(after), util)).collect()
    };
    report(&app, &node_id, busy(5.0, 0)).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let kind = json!({ "kind": "GPR_UNDERUSED" });
    assert_eq!(alerts(&app, &app.admin_token, kind.clone()).await, Vec::<Value>::new(), "not a whole period yet");

    // An hour at 5 %: warned, in its slice only.
    app.clock.advance(Duration::from_secs(61 * 60));
    let warned = wait_for_alerts(&app, &two.token_a, kind.clone(), |a| !a.is_empty()).await;
    assert_eq!((warned.len(), warned[0]["severity"].as_str(), warned[0]["threshold"].as_f64()), (1, Some("WARNING"), Some(20.0)), "{warned:#?}");
    assert_eq!(warned[0]["value"], 5.0);
    assert!(warned[0]["message"].as_str().unwrap_or_default().contains("averaged 5.0 % busy over the last 1h"), "{}", warned[0]);
    assert_eq!(alerts(&app, &two.token_b, kind.clone()).await, Vec::<Value>::new(), "not another slice's business");

    // Busy for the next hour: it clears.
    report(&app, &node_id, busy(90.0, 5)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    app.clock.advance(Duration::from_secs(61 * 60));
    let cleared = wait_for_alerts(&app, &two.token_a, kind, |a| a.first().is_some_and(|a| a["open"] == false)).await;
    assert!(cleared[0]["resolution"].as_str().unwrap_or_default().contains("averaged 90.0 %"), "{}", cleared[0]);
    app.finish().await;
}

#[tokio::test]
async fn the_database_keeps_one_open_alert_per_kind_and_subject() {
    use egs_domain::alerts::service::{NewAlert, clear, gpu_subject, raise};
    use egs_entities::{AlertKind, AlertSeverity};
    // What two replicas evaluating the same sample at once would each try.
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let new = NewAlert {
        kind: AlertKind::OverTemperature,
        severity: AlertSeverity::Warning,
        subject: gpu_subject(7),
        cluster_id: None,
        node_id: Some(3),
        gpu_id: Some(7),
        slice_id: None,
        gpr_id: None,
        message: "GPU 0 is hot".into(),
        value: Some(90.0),
        threshold: Some(87.0),
        at: Utc::now(),
    };
    let (first, second) = tokio::join!(raise(&app.db, new.clone()), raise(&app.db, new.clone()));
    let (first, second) = (first.expect("stored"), second.expect("stored"));
    assert!(first.is_some() != second.is_some(), "exactly one raise is stored: {first:?} {second:?}");
    let id = first.or(second).map(|a| a.id).expect("one alert");
    let other_kind = NewAlert { kind: AlertKind::OverPower, ..new.clone() };
    assert!(raise(&app.db, other_kind).await.expect("stored").is_some(), "another kind of the same GPU is its own alert");
    let (a, b) = tokio::join!(clear(&app.db, id, "cooled", Utc::now()), clear(&app.db, id, "cooled", Utc::now()));
    assert!(a.expect("stored") != b.expect("stored"), "exactly one clear is stored");
    assert!(raise(&app.db, new).await.expect("stored").is_some(), "once cleared, it may be raised again");
    app.finish().await;
}

/// A webhook receiver that answers 500 to its first `failures` POSTs, and records them all.
async fn webhook_receiver(failures: usize) -> (String, Arc<Mutex<Vec<(u16, Value)>>>) {
    use axum::extract::State;
    use axum::http::StatusCode;
    type Seen = Arc<Mutex<Vec<(u16, Value)>>>;
    async fn hook(State(seen): State<Seen>, axum::Json(body): axum::Json<Value>) -> StatusCode {
        let mut seen = seen.lock().expect("not poisoned");
        let failures = seen.first().map_or(0, |(_, first)| first["failures"].as_u64().unwrap_or_default() as usize);
        let status = if seen.len() <= failures { StatusCode::INTERNAL_SERVER_ERROR } else { StatusCode::OK };
        seen.push((status.as_u16(), body));
        status
    }
    // The first entry says how many to fail; it is not a POST.
    let seen: Seen = Arc::new(Mutex::new(vec![(0, json!({ "failures": failures }))]));
    let router = axum::Router::new().route("/services/T0/B0/secret", axum::routing::post(hook)).with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/services/T0/B0/secret", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (url, seen)
}

fn posts(seen: &Arc<Mutex<Vec<(u16, Value)>>>) -> Vec<(u16, Value)> {
    seen.lock().expect("not poisoned").iter().skip(1).cloned().collect()
}

#[tokio::test]
async fn the_webhook_gets_each_transition_once_slack_shaped_after_retries() {
    let (url, seen) = webhook_receiver(2).await;
    let with_webhook = |s: &mut egs_api::settings::ServeArgs| {
        egs_tests::api_only(s);
        s.alerts.webhook_url = Some(url.clone().into());
    };
    let app = TestApp::spawn_with(with_webhook).await;
    // A second replica with the same webhook: still one POST per transition.
    let replica = app.spawn_replica_with(with_webhook).await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", 1, SHAPE_H100, 1).await;
    let node = nodes(&app, &cluster).await.remove(0);
    let mut clock = Clock::new();
    report(&app, &node.id, vec![gpu_sample_hot(&node.uuids[0], clock.next(), 94.0, 300.0)]).await;
    report(&app, &node.id, vec![gpu_sample_hot(&node.uuids[0], clock.next(), 75.0, 300.0)]).await;

    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while posts(&seen).iter().filter(|(status, _)| *status == 200).count() < 2 {
        assert!(tokio::time::Instant::now() < deadline, "not delivered: {:#?}", posts(&seen));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let posted = posts(&seen);
    let statuses: Vec<u16> = posted.iter().map(|(status, _)| *status).collect();
    assert_eq!(statuses, vec![500, 500, 200, 200], "two failures retried, then each transition once: {posted:#?}");
    // Each replica posts in order; which replica posts which transition is not fixed.
    let delivered: Vec<&Value> = posted[2..].iter().map(|(_, body)| body).collect();
    assert!(posted[..2].iter().all(|(_, body)| delivered.contains(&body)), "a retry sends the same payload: {posted:#?}");
    let text_of = |body: &Value| body["text"].as_str().unwrap_or_default().to_owned();
    let raised = delivered.iter().find(|b| text_of(b).contains("raised")).copied().expect("the raise was posted");
    let cleared = delivered.iter().find(|b| text_of(b).contains("cleared")).copied().expect("the clear was posted");
    let text = raised["text"].as_str().unwrap_or_default();
    assert!(text.contains("OVER_TEMPERATURE raised") && text.contains(&node.name), "{text}");
    let attachment = &raised["attachments"][0];
    assert!(attachment["color"].is_string() && attachment["ts"].is_i64(), "{attachment}");
    let fields: Vec<&str> = attachment["fields"].as_array().expect("fields").iter().map(|f| f["title"].as_str().unwrap_or_default()).collect();
    assert!(fields.contains(&"Severity") && fields.contains(&"Value") && fields.contains(&"Threshold"), "{fields:?}");
    assert!(cleared["text"].as_str().unwrap_or_default().contains("OVER_TEMPERATURE cleared"), "{cleared}");
    replica.finish().await;
    app.finish().await;
}

#[tokio::test]
async fn admins_set_thresholds_per_shape_and_bad_values_change_nothing() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let two = two_slices(&app).await;
    let thresholds = app.ok(&app.admin_token, THRESHOLDS, json!({})).await["alertThresholds"].clone();
    let built_in = json!([{
        "gpuShape": SHAPE_H100, "temperatureCelsius": 87.0, "temperatureClearsBelowCelsius": 82.0, "temperatureSource": "BUILT_IN",
        "powerWatts": 700.0, "powerClearsBelowWatts": 665.0, "powerSource": "BUILT_IN", "updatedAt": null,
    }]);
    assert_eq!(thresholds, built_in);

    // Out of range, not a number a GPU has, no shape: refused, field by field, and nothing stored.
    let refused = app
        .ok(&app.admin_token, SET_THRESHOLD, json!({ "input": { "gpuShape": " ", "temperatureCelsius": 500.0, "powerWatts": -3.0 } }))
        .await["setAlertThreshold"]
        .clone();
    assert_eq!(refused["threshold"], Value::Null);
    let errors: Vec<(String, String)> = refused["userErrors"]
        .as_array()
        .expect("userErrors")
        .iter()
        .map(|e| {
            (
                e["field"].as_array().expect("path").iter().map(|p| p.as_str().unwrap_or_default()).collect::<Vec<_>>().join("."),
                e["code"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let invalid = |f: &str| (f.to_owned(), "INVALID_INPUT".to_owned());
    assert_eq!(errors, vec![invalid("input.gpuShape"), invalid("input.temperatureCelsius"), invalid("input.powerWatts")]);
    assert_eq!(app.ok(&app.admin_token, THRESHOLDS, json!({})).await["alertThresholds"], built_in);
    // Users may not.
    let body = app.gql(&two.token_a, SET_THRESHOLD, json!({ "input": { "gpuShape": SHAPE_H100, "temperatureCelsius": 70.0 } })).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "FORBIDDEN", "{body}");
    let body = app.gql(&two.token_a, THRESHOLDS, json!({})).await;
    assert_eq!(body["errors"][0]["extensions"]["code"], "FORBIDDEN", "{body}");

    let set = app.mutate(&app.admin_token, "setAlertThreshold", SET_THRESHOLD, json!({ "gpuShape": SHAPE_H100, "temperatureCelsius": 80.0 })).await;
    assert_eq!(
        set["threshold"],
        json!({ "gpuShape": SHAPE_H100, "temperatureCelsius": 80.0, "temperatureSource": "CONFIGURED", "powerWatts": 700.0, "powerSource": "BUILT_IN" })
    );
    // An 82 °C GPU is now over its threshold.
    let node = nodes(&app, &two.cluster).await.remove(0);
    report(&app, &node.id, vec![gpu_sample_hot(&node.uuids[0], Utc::now(), 82.0, 300.0)]).await;
    let raised = alerts(&app, &app.admin_token, json!({ "open": true })).await;
    assert_eq!((raised.len(), &raised[0]["threshold"]), (1, &json!(80.0)), "{raised:#?}");
    // Both null: back to the built-in values.
    let reset = app.mutate(&app.admin_token, "setAlertThreshold", SET_THRESHOLD, json!({ "gpuShape": SHAPE_H100 })).await;
    assert_eq!((&reset["threshold"]["temperatureCelsius"], &reset["threshold"]["temperatureSource"]), (&json!(87.0), &json!("BUILT_IN")));
    assert_eq!(app.ok(&app.admin_token, THRESHOLDS, json!({})).await["alertThresholds"], built_in);
    app.finish().await;
}
