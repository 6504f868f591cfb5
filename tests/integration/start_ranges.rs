//! Start ranges through the live gateway: a waiting GPR's range starts wide (nothing learned),
//! narrows as the gateway learns how its own estimates turned out, and a new leader ranges the
//! same GPR the same way (the history it learns from is stored, not kept in memory).

use egs_domain::ports::Clock;
use egs_tests::fixtures::*;
use egs_tests::{TestApp, wait_for};
use serde_json::{Value, json};
use std::time::Duration;

const GPR: &str = "query($id: ID!) { gpr(id: $id) { phase reason estimatedStartAt startNoLaterThan startRange { p10 p50 p90 } } }";
/// Nodes in the pool: each round of waiting GPRs teaches the calibration this many waits.
const NODES: usize = 4;

async fn gpr(app: &TestApp, id: &str) -> Value {
    app.ok(&app.admin_token, GPR, json!({ "id": id })).await["gpr"].clone()
}

/// The GPR once it has a start range, and the range's width in seconds.
async fn ranged(app: &TestApp, id: &str) -> (Value, i64) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let found = gpr(app, id).await;
        if found["startRange"]["p90"].is_string() {
            let range = &found["startRange"];
            let width = (time(&range["p90"]) - time(&range["p10"])).num_seconds();
            return (found, width);
        }
        assert!(tokio::time::Instant::now() < deadline, "no range: {found}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn phase_is(app: &TestApp, id: &str, phase: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let found = gpr(app, id).await;
        if found["phase"] == phase {
            return;
        }
        assert!(tokio::time::Instant::now() < deadline, "not {phase} at {}: {found}", app.clock.now());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_range_narrows_as_history_grows_and_a_new_leader_ranges_the_same() {
    let app = TestApp::spawn().await;
    let cluster = register_cluster(&app, "c1").await;
    add_nodes(&app, &cluster, "h100", NODES, SHAPE_H100, 8).await;
    // A slice runs one GPR at a time: a slice per node.
    let mut teams = Vec::new();
    for i in 0..NODES {
        let slice = create_slice(&app, &format!("team-{i}"), &cluster, json!({})).await;
        let (_, token) = member(&app, &format!("user-{i}"), &slice, "EDITOR").await;
        teams.push((slice, token));
    }
    let submit = |team: usize, name: String| {
        let (app, (slice, token)) = (&app, teams[team].clone());
        async move { id_of(&create_gpr(app, &token, &slice, &name, json!({ "duration": "1h", "preemptible": false })).await) }
    };
    let mut running = Vec::new();
    for i in 0..NODES {
        running.push(submit(i, format!("run-{i}")).await);
    }
    for id in &running {
        phase_is(&app, id, "PROVISIONED").await;
    }

    // Rounds: NODES GPRs wait behind the running ones, which end; the waiting ones start, and
    // each start teaches the gateway how its first estimate turned out.
    let mut first_width = None;
    for round in 0..6 {
        let mut waiting = Vec::new();
        for i in 0..NODES {
            let id = submit(i, format!("wait-{round}-{i}")).await;
            let (found, width) = ranged(&app, &id).await;
            assert_eq!(found["phase"], "QUEUED", "{found}");
            let range = &found["startRange"];
            assert!(time(&range["p10"]) <= time(&range["p50"]) && time(&range["p50"]) <= time(&range["p90"]), "{found}");
            assert_eq!(range["p50"], found["estimatedStartAt"], "the middle is the estimate: {found}");
            first_width.get_or_insert(width);
            waiting.push(id);
        }
        app.clock.advance(Duration::from_secs(60 * 60 + 60));
        for id in &running {
            phase_is(&app, id, "COMPLETED").await;
        }
        for id in &waiting {
            phase_is(&app, id, "PROVISIONED").await;
        }
        running = waiting;
    }

    // 24 waits learned, each close to what was foreseen: the range of a GPR waiting an hour is
    // a fraction of the prior's (30 % of the wait up to the promise), around the estimate.
    let learned = submit(0, "learned".into()).await;
    let (found, width) = ranged(&app, &learned).await;
    let first_width = first_width.expect("a first range");
    assert!(first_width >= 30 * 60, "the prior is wide: {first_width} s");
    assert!(width * 4 < first_width, "narrower once learned: {width} s vs {first_width} s: {found}");
    // A new leader learns the same history from the database and ranges the GPR the same.
    use sea_orm::EntityTrait;
    let lease = || async { egs_entities::leader_lease::Entity::find().one(&app.db).await.expect("read").map_or(0, |l| l.epoch) };
    let before = lease().await;
    let next = app.spawn_replica().await;
    let db = app.db.clone();
    let mut app = app;
    app.stop().await;
    wait_for("the replica to take the lease", || async {
        egs_entities::leader_lease::Entity::find().one(&db).await.expect("read").is_some_and(|l| l.epoch > before)
    })
    .await;
    // A GPR submitted to the new leader waits like the last one did: its range is as narrow,
    // where a leader that learned nothing would give it the prior's.
    let (slice, token) = &teams[1];
    let after = id_of(&create_gpr(&next, token, slice, "after", json!({ "duration": "1h", "preemptible": false })).await);
    let (again, width_again) = ranged(&next, &after).await;
    // (To the few seconds that the replica's usage, learned from stored windows rather than
    // watched, may round differently.)
    let apart = (time(&again["estimatedStartAt"]) - time(&found["estimatedStartAt"])).num_seconds().abs();
    assert!(apart <= 5, "the same expected start, {apart} s apart: {again} vs {found}");
    assert!(width_again * 4 < first_width, "the new leader learned too: {width_again} s: {again}");
    next.finish().await;
}
