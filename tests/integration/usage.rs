//! Usage over time: GPU-hours reserved, used and waited for, waits and measured utilisation,
//! rolled up from what the gateway stored, read over a date range by admins and a slice's
//! owners, and exported as CSV; everyone else is refused and nothing changes.

use chrono::{DateTime, Duration as Days, Utc};
use egs_entities::{GprEventKind, gpr, gpr_event, gpu, usage_daily};
use egs_tests::TestApp;
use egs_tests::fixtures::*;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, Set};
use serde_json::{Value, json};
use std::time::Duration;

const REFRESH: &str = "mutation { refreshUsage { refreshedAt userErrors { field message code } } }";
const REPORT: &str = "query($from: String!, $to: String!, $slice: ID) { usage(from: $from, to: $to, sliceId: $slice) {
    from to refreshedAt
    totals: usage(groupBy: []) { reservedGpuHours usedGpuHours waitingGpuHours gprsStarted }
    byUser: usage(groupBy: [USER, GPU_SHAPE, CLUSTER]) { group { user gpuShape clusterName day } usedGpuHours }
    waits(groupBy: [GPU_SHAPE]) { group { gpuShape priority } started meanWaitSeconds maxWaitSeconds within15mPercent within1hPercent }
    utilisation(groupBy: [CLUSTER]) { group { clusterName } reportingGpuHours utilisationPercent heldGpuHours heldUtilisationPercent }
    csv: usageCsv(groupBy: [USER])
} }";
const SAMPLES: &str = "mutation($input: ReportGpuSamplesInput!) { reportGpuSamples(input: $input) { accepted userErrors { field message code } } }";

fn close(actual: &Value, expected: f64, within: f64) -> bool {
    actual.as_f64().is_some_and(|a| (a - expected).abs() <= within)
}

/// The range around the lifecycle clock's today (the clock may cross a midnight mid-test).
fn range(app: &TestApp) -> Value {
    let today = egs_domain::ports::Clock::now(app.clock.as_ref()).date_naive();
    json!({ "from": (today - Days::days(1)).to_string(), "to": (today + Days::days(1)).to_string() })
}

/// Reports every GPU of `node` at `util` %, stamped `ahead` seconds from now (as an agent
/// would; two reports a moment apart must not share a second), and waits until the batcher
/// stored it as the GPUs' latest sample.
async fn report_all(app: &TestApp, node: &Value, util: f64, ahead: i64) {
    let at = Utc::now() + Days::seconds(ahead);
    let uuids: Vec<&str> = node["gpus"].as_array().expect("gpus").iter().map(|g| g["uuid"].as_str().expect("uuid")).collect();
    let samples: Vec<Value> = uuids.iter().map(|u| gpu_sample(u, at, util)).collect();
    let sent = app.mutate(&app.admin_token, "reportGpuSamples", SAMPLES, json!({ "nodeId": node["id"], "samples": samples })).await;
    assert_eq!(sent["accepted"], uuids.len(), "{sent}");
    egs_tests::wait_for("the samples stored", || async {
        let stored = gpu::Entity::find()
            .filter(gpu::Column::Uuid.is_in(uuids.iter().copied()))
            .filter(gpu::Column::LastSampleAt.gte(at - Days::seconds(1)))
            .count(&app.db)
            .await
            .expect("count");
        stored == uuids.len() as u64
    })
    .await;
}

/// Moves the stored times of GPR `id`'s events of `kinds` (and, with `CREATED`, the GPR's own
/// creation) to `at`: the lifecycle ran for real a moment ago, and this makes it read as hours
/// of history, which no test can wait for.
async fn retime(app: &TestApp, id: &str, kinds: &[GprEventKind], at: DateTime<Utc>) {
    let (_, gpr_id) = egs_domain::ids::decode_any(id).expect("a GPR id");
    let moved = gpr_event::Entity::update_many()
        .col_expr(gpr_event::Column::CreatedAt, Expr::value(at))
        .filter(gpr_event::Column::GprId.eq(gpr_id))
        .filter(gpr_event::Column::Kind.is_in(kinds.iter().copied()))
        .exec(&app.db)
        .await
        .expect("retime events");
    assert!(moved.rows_affected >= 1, "{id} has no {kinds:?} event");
    if kinds.contains(&GprEventKind::Created) {
        gpr::Entity::update_many()
            .col_expr(gpr::Column::CreatedAt, Expr::value(at))
            .filter(gpr::Column::Id.eq(gpr_id))
            .exec(&app.db)
            .await
            .expect("retime");
    }
}

#[tokio::test]
async fn usage_is_rolled_up_per_slice_user_and_shape_and_read_by_admins_and_the_slices_owners() {
    use GprEventKind::*;
    let app = TestApp::spawn().await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h", 2, SHAPE_H100, 8).await;
    let slice = create_slice(&app, "team-a", &cluster, json!({})).await;
    let other = create_slice(&app, "team-b", &cluster, json!({})).await;
    let (_, alice) = member(&app, "alice", &slice, "EDITOR").await;
    let (_, owner) = member(&app, "olivia", &slice, "OWNER").await;
    let (_, carol) = member(&app, "carol", &other, "OWNER").await;

    // alice gets one node at once; her second GPR wants both and waits for the first, which
    // she releases early.
    let one = create_gpr(&app, &alice, &slice, "one", json!({ "nodeCount": 1 })).await["id"].as_str().expect("id").to_owned();
    provisioned(&app, &alice, &one).await;
    let two = create_gpr(&app, &alice, &slice, "two", json!({ "nodeCount": 2 })).await["id"].as_str().expect("id").to_owned();
    let release = "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { phase } userErrors { field message code } } }";
    app.mutate(&alice, "earlyReleaseGpr", release, json!({ "id": one })).await;
    let held = provisioned(&app, &alice, &two).await;
    // As history: both asked 3 h ago; one held 8 GPUs for 30 min at once; two waited 90 min for
    // 16 GPUs and has held them since (its 2 h window ends in 30 min).
    let now = Utc::now();
    let ago = |minutes: i64| now - Days::minutes(minutes);
    retime(&app, &one, &[Created, Queued, Provisioned], ago(180)).await;
    retime(&app, &one, &[EarlyReleased, Releasing, Completed], ago(150)).await;
    retime(&app, &two, &[Created, Queued], ago(180)).await;
    retime(&app, &two, &[Provisioned], ago(90)).await;

    // The first round backfills the history and starts the utilisation clock; a minute of both
    // nodes at 50 % is measured between it and the next.
    let first = app.ok(&app.admin_token, REFRESH, json!({})).await;
    assert!(first["refreshUsage"]["refreshedAt"].is_string(), "{first}");
    for node in held["nodes"].as_array().expect("nodes") {
        report_all(&app, node, 50.0, 0).await;
    }
    app.clock.advance(Duration::from_secs(60));
    for node in held["nodes"].as_array().expect("nodes") {
        report_all(&app, node, 50.0, 3).await;
    }
    let refreshed = app.ok(&app.admin_token, REFRESH, json!({})).await;
    assert_eq!(refreshed["refreshUsage"]["userErrors"], json!([]), "{refreshed}");

    let report = app.ok(&app.admin_token, REPORT, range(&app)).await["usage"].clone();
    let totals = &report["totals"][0];
    // one: 8 GPUs × 0.5 h used, its 2 h window booked; two: 16 GPUs × 1.5 h waited, then used
    // (and booked, so far) for 1.5 h. Slack: the seconds the test itself takes.
    let slack = 0.1;
    assert!(close(&totals["usedGpuHours"], 4.0 + 24.0, slack), "{totals}");
    assert!(close(&totals["reservedGpuHours"], 16.0 + 24.0, slack), "{totals}");
    assert!(close(&totals["waitingGpuHours"], 24.0, slack), "{totals}");
    assert_eq!(totals["gprsStarted"], 2, "{totals}");
    let mine: Vec<&Value> = report["byUser"].as_array().expect("rows").iter().collect();
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0]["group"]["user"], "alice");
    assert_eq!(mine[0]["group"]["gpuShape"], SHAPE_H100);
    assert_eq!(mine[0]["group"]["clusterName"], "c1");
    assert_eq!(mine[0]["group"]["day"], Value::Null, "not grouped by day");

    let waits = &report["waits"][0];
    assert_eq!(waits["group"]["gpuShape"], SHAPE_H100);
    assert_eq!(waits["group"]["priority"], Value::Null);
    assert_eq!(waits["started"], 2);
    assert!(close(&waits["maxWaitSeconds"], 5400.0, 5.0), "{waits}");
    assert!(close(&waits["meanWaitSeconds"], 2700.0, 5.0), "{waits}");
    assert_eq!(waits["within15mPercent"], 50.0);
    assert_eq!(waits["within1hPercent"], 50.0);

    let utilisation = &report["utilisation"][0];
    assert_eq!(utilisation["group"]["clusterName"], "c1");
    assert!(close(&utilisation["utilisationPercent"], 50.0, 0.5), "{utilisation}");
    assert!(close(&utilisation["heldUtilisationPercent"], 50.0, 0.5), "{utilisation}");
    assert!(close(&utilisation["reportingGpuHours"], 16.0 / 60.0, 0.05), "{utilisation}");

    let csv = report["csv"].as_str().expect("csv");
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("user,reserved_gpu_hours,used_gpu_hours,waiting_gpu_hours,gprs_started"));
    let row: Vec<&str> = lines.next().expect("a row").split(',').collect();
    assert_eq!((row[0], row[4]), ("alice", "2"), "{csv}");
    assert_eq!(lines.next(), None, "{csv}");

    // The slice's owner reads the same figures for their slice; nobody reads another's.
    let mut scoped = range(&app);
    scoped["slice"] = json!(slice);
    let own = app.ok(&owner, REPORT, scoped.clone()).await["usage"].clone();
    assert_eq!(own["totals"][0]["gprsStarted"], 2);
    assert!(close(&own["totals"][0]["usedGpuHours"], 28.0, slack), "{own}");
    assert!(close(&own["utilisation"][0]["heldUtilisationPercent"], 50.0, 0.5), "{own}");
    let code = |v: &Value| v["errors"][0]["extensions"]["code"].as_str().unwrap_or_default().to_owned();
    assert_eq!(code(&app.gql(&owner, REPORT, range(&app)).await), "FORBIDDEN", "all slices need an admin");
    assert_eq!(code(&app.gql(&alice, REPORT, scoped.clone()).await), "FORBIDDEN", "an editor is not an owner");
    assert_eq!(code(&app.gql(&carol, REPORT, scoped.clone()).await), "NOT_FOUND", "another slice's owner");
    let mut theirs = range(&app);
    theirs["slice"] = json!(other);
    let empty = app.ok(&carol, REPORT, theirs).await["usage"].clone();
    assert_eq!(empty["totals"], json!([{ "reservedGpuHours": 0.0, "usedGpuHours": 0.0, "waitingGpuHours": 0.0, "gprsStarted": 0 }]));
    let refused = app.gql(&owner, REFRESH, json!({})).await;
    assert_eq!(code(&refused), "FORBIDDEN", "{refused}");
    app.finish().await;
}

#[tokio::test]
async fn a_bad_range_or_too_many_rows_is_refused_with_the_field_it_is_about() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let query = "query($from: String!, $to: String!) { usage(from: $from, to: $to) { from } }";
    let today = Utc::now().date_naive();
    for (from, to, field) in [
        ("yesterday".to_owned(), today.to_string(), "from"),
        (today.to_string(), "2026-02-30".to_owned(), "to"),
        (today.to_string(), (today - Days::days(1)).to_string(), "to"),
        ((today - Days::days(366)).to_string(), today.to_string(), "to"),
    ] {
        let refused = app.gql(&app.admin_token, query, json!({ "from": from, "to": to })).await;
        assert_eq!(refused["errors"][0]["extensions"]["code"], "INVALID_INPUT", "{from}..{to}: {refused}");
        assert!(refused.to_string().contains(field), "{from}..{to}: {refused}");
    }
    // A report bigger than a page of rows is refused, not built: 10,001 users' rows of one day.
    let day = today - Days::days(2);
    let rows: Vec<usage_daily::ActiveModel> = (1..=egs_domain::usage::MAX_ROWS as i64 + 1)
        .map(|user| usage_daily::ActiveModel {
            day: Set(day),
            slice_id: Set(1),
            user_id: Set(user),
            gpu_shape: Set(SHAPE_H100.into()),
            cluster_id: Set(0),
            reserved_gpu_secs: Set(3600),
            used_gpu_secs: Set(3600),
            waiting_gpu_secs: Set(0),
            gprs_started: Set(1),
            ..Default::default()
        })
        .collect();
    for chunk in rows.chunks(500) {
        usage_daily::Entity::insert_many(chunk.to_vec()).exec_without_returning(&app.db).await.expect("rows");
    }
    let grouped =
        "query($from: String!, $to: String!, $by: [UsageDimension!]!) { usage(from: $from, to: $to) { usage(groupBy: $by) { usedGpuHours } } }";
    let range = json!({ "from": day.to_string(), "to": day.to_string() });
    let mut by_user = range.clone();
    by_user["by"] = json!(["USER"]);
    let refused = app.gql(&app.admin_token, grouped, by_user).await;
    assert_eq!(refused["errors"][0]["extensions"]["code"], "INVALID_INPUT", "{refused}");
    assert!(refused["errors"][0]["message"].as_str().unwrap_or_default().contains("narrow the range"), "{refused}");
    let mut totals = range;
    totals["by"] = json!([]);
    let total = app.ok(&app.admin_token, grouped, totals).await;
    assert_eq!(total["usage"]["usage"], json!([{ "usedGpuHours": 10_001.0 }]));

    let year = app.ok(&app.admin_token, query, json!({ "from": (today - Days::days(365)).to_string(), "to": today.to_string() })).await;
    assert_eq!(year["usage"]["from"], (today - Days::days(365)).to_string());
    app.finish().await;
}
