//! GPR events over a real WebSocket (`graphql-transport-ws`): live delivery, resuming with
//! `after` across a gateway restart, slice isolation, and a subscriber on one replica seeing
//! a change made on another.

use egs_tests::TestApp;
use egs_tests::fixtures::*;
use egs_tests::ws::Socket;

use serde_json::{Value, json};
use std::time::Duration;

const EVENTS: &str = "subscription($gpr: ID, $slice: ID, $after: ID) {
    gprEvents(gprId: $gpr, sliceId: $slice, after: $after) { id sequence kind message gpr { id name } } }";
const SET_PRIORITY: &str =
    "mutation($input: SetGprPriorityInput!) { setGprPriority(input: $input) { gpr { id priority } userErrors { field message code } } }";

async fn bump(app: &TestApp, gpr: &str, priority: i32) {
    app.mutate(&app.admin_token, "setGprPriority", SET_PRIORITY, json!({ "id": gpr, "priority": priority })).await;
}

fn gpr_id(created: &Value) -> String {
    created["id"].as_str().expect("a GPR id").to_owned()
}

#[tokio::test]
async fn events_arrive_live_and_a_resumed_stream_has_no_gap_or_repeat_across_a_restart() {
    // The API alone: the events here come from the mutations, nothing else moves the GPR.
    let mut app = TestApp::spawn_with(egs_tests::api_only).await;
    let setup = two_slices(&app).await;
    let gpr = gpr_id(&create_gpr(&app, &setup.token_a, &setup.slice_a, "watched", json!({})).await);

    let mut socket = Socket::open(&app, &setup.token_a).await;
    socket.subscribe("1", EVENTS, json!({ "gpr": gpr })).await;
    // Subscribed without `after`: only what happens from now on.
    socket.silent_for(Duration::from_millis(300)).await;
    bump(&app, &gpr, 120).await;
    let first = socket.next("1", "gprEvents").await;
    assert_eq!((first["kind"].as_str(), first["gpr"]["id"].as_str()), (Some("PRIORITY_CHANGED"), Some(gpr.as_str())), "{first}");

    // The gateway goes away; while it is down, a replica on the same database takes changes.
    let replica = app.spawn_replica_with(egs_tests::api_only).await;
    app.stop().await;
    drop(socket);
    bump(&replica, &gpr, 130).await;
    bump(&replica, &gpr, 140).await;

    // Reconnect with the last id seen: the two missed events, then live ones, each once.
    let mut socket = Socket::open(&replica, &setup.token_a).await;
    socket.subscribe("2", EVENTS, json!({ "gpr": gpr, "after": first["id"] })).await;
    let missed = [socket.next("2", "gprEvents").await, socket.next("2", "gprEvents").await];
    bump(&replica, &gpr, 150).await;
    let live = socket.next("2", "gprEvents").await;
    let sequences: Vec<i64> = missed.iter().chain([&live]).map(|e| e["sequence"].as_i64().expect("sequence")).collect();
    assert!(sequences.windows(2).all(|w| w[0] < w[1]) && sequences[0] > first["sequence"].as_i64().expect("sequence"), "{sequences:?}");
    for (event, priority) in missed.iter().chain([&live]).zip([130, 140, 150]) {
        assert_eq!(event["kind"], "PRIORITY_CHANGED");
        assert!(event["message"].as_str().unwrap_or_default().contains(&priority.to_string()), "{event}");
    }
    socket.silent_for(Duration::from_millis(700)).await;
    replica.finish().await;
    app.finish().await;
}

#[tokio::test]
async fn a_subscriber_never_receives_another_slices_events() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let setup = two_slices(&app).await;
    let theirs = gpr_id(&create_gpr(&app, &setup.token_a, &setup.slice_a, "theirs", json!({})).await);
    let mine = gpr_id(&create_gpr(&app, &setup.token_b, &setup.slice_b, "mine", json!({})).await);

    let mut socket = Socket::open(&app, &setup.token_b).await;
    // Naming another slice's GPR reads as missing, like every other way of asking.
    socket.subscribe("hidden", EVENTS, json!({ "gpr": theirs })).await;
    let refused = socket.recv().await;
    // A resolver error arrives as a result with errors (`next`), or as an `error` message.
    let errors = if refused["type"] == "error" { &refused["payload"] } else { &refused["payload"]["errors"] };
    assert_eq!(errors[0]["extensions"]["code"], "NOT_FOUND", "{refused}");
    if refused["type"] == "next" {
        assert_eq!(socket.recv().await["type"], "complete");
    }

    // Everything the caller may see, from the start of history: only slice B's events.
    socket.subscribe("all", EVENTS, json!({ "after": "0" })).await;
    let history = [socket.next("all", "gprEvents").await, socket.next("all", "gprEvents").await];
    assert!(history.iter().all(|e| e["gpr"]["id"] == mine.as_str()), "{history:?}");
    bump(&app, &theirs, 150).await;
    bump(&app, &mine, 150).await;
    let live = socket.next("all", "gprEvents").await;
    assert_eq!((live["gpr"]["id"].as_str(), live["kind"].as_str()), (Some(mine.as_str()), Some("PRIORITY_CHANGED")), "{live}");
    socket.silent_for(Duration::from_millis(700)).await;
    app.finish().await;
}

#[tokio::test]
async fn a_subscriber_on_one_replica_sees_a_change_made_on_another() {
    // Two gateways on one database (and one Redis when the tests have it).
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    let replica = app.spawn_replica().await;
    let gpr = gpr_id(&create_gpr(&app, &setup.token_a, &setup.slice_a, "shared", json!({ "nodeCount": 2 })).await);

    let mut socket = Socket::open(&replica, &setup.token_a).await;
    socket.subscribe("1", EVENTS, json!({ "gpr": gpr, "after": "0" })).await;
    // History first (created, queued, and whatever the scheduler did meanwhile), then live.
    let mut kinds = Vec::new();
    while !kinds.contains(&"PROVISIONED".to_owned()) {
        kinds.push(socket.next("1", "gprEvents").await["kind"].as_str().expect("kind").to_owned());
    }
    let started = std::time::Instant::now();
    app.mutate(
        &setup.token_a,
        "earlyReleaseGpr",
        "mutation($input: GprActionInput!) { earlyReleaseGpr(input: $input) { gpr { phase } userErrors { field message code } } }",
        json!({ "id": gpr }),
    )
    .await;
    let released = socket.next("1", "gprEvents").await;
    assert_eq!(released["kind"], "EARLY_RELEASED", "{released}");
    // Over Redis this is milliseconds; without it the replica's tailer polls every 500 ms.
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
    assert_eq!(kinds[..2], ["CREATED", "QUEUED"], "{kinds:?}");
    replica.finish().await;
    app.finish().await;
}

#[tokio::test]
async fn queue_views_update_live_as_gprs_join_the_queue() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await; // four nodes
    create_gpr(&app, &setup.token_b, &setup.slice_b, "all-four", json!({ "nodeCount": 4, "duration": "4h" })).await;
    let mut socket = Socket::open(&app, &setup.token_a).await;
    let query = "subscription($slice: ID) { queueChanged(sliceId: $slice) { id name queuePosition startNoLaterThan } }";
    socket.send(json!({ "id": "q", "type": "subscribe", "payload": { "query": query, "variables": { "slice": setup.slice_a } } })).await;
    let first = socket.recv().await;
    assert_eq!(first["type"], "next", "{first}");
    assert_eq!(first["payload"]["data"]["queueChanged"], json!([]), "slice A has nothing waiting yet");

    // Slice B holds every node: slice A's GPR waits, and the view shows it with its promise.
    let waiting = create_gpr(&app, &setup.token_a, &setup.slice_a, "waits", json!({ "nodeCount": 2 })).await;
    loop {
        let message = socket.recv().await;
        assert_eq!(message["type"], "next", "{message}");
        let view = &message["payload"]["data"]["queueChanged"];
        if view[0]["id"] == waiting["id"] && !view[0]["startNoLaterThan"].is_null() {
            assert_eq!(view[0]["queuePosition"], 1, "{view}");
            break;
        }
    }
    // Another slice's member cannot watch slice A's queue.
    let mut outsider = Socket::open(&app, &setup.token_b).await;
    outsider.send(json!({ "id": "q", "type": "subscribe", "payload": { "query": query, "variables": { "slice": setup.slice_a } } })).await;
    let refused = outsider.recv().await;
    let errors = if refused["type"] == "error" { &refused["payload"] } else { &refused["payload"]["errors"] };
    assert!(errors[0]["extensions"]["code"].as_str().is_some_and(|c| c == "NOT_FOUND" || c == "FORBIDDEN"), "{refused}");
    app.finish().await;
}

#[tokio::test]
async fn subscriptions_take_turns_to_set_up() {
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let setup = two_slices(&app).await;
    // Every turn taken, as by a crowd of dashboards opening at once.
    let setups = app.subscription_setups.clone();
    let held = setups.acquire_many(egs_schema::SUBSCRIPTION_SETUPS as u32).await.expect("permits");
    let mut socket = Socket::open(&app, &setup.token_a).await;
    let query = "subscription($slice: ID) { queueChanged(sliceId: $slice) { id } }";
    socket.subscribe("waits", query, json!({ "slice": setup.slice_a })).await;
    // An agent's token is refused at once, without waiting for (or taking) a turn.
    let agent = agent_token(&app, &setup.cluster, "h100-0").await;
    let mut as_agent = Socket::open(&app, &agent).await;
    as_agent
        .subscribe("m", "subscription($slice: ID) { gpuMetrics(sliceId: $slice) { samples { gpuId } } }", json!({ "slice": setup.slice_a }))
        .await;
    let refused = tokio::time::timeout(Duration::from_secs(2), as_agent.recv()).await.expect("refused at once");
    let errors = if refused["type"] == "error" { &refused["payload"] } else { &refused["payload"]["errors"] };
    assert_eq!(errors[0]["extensions"]["code"], "FORBIDDEN", "{refused}");
    // It waits for a turn before it reads anything: no first view yet, and after 10 s it gives
    // up as a read waiting for the database would.
    socket.silent_for(Duration::from_millis(500)).await;
    let refused = tokio::time::timeout(Duration::from_secs(15), socket.recv()).await.expect("an answer within the setup wait");
    let errors = if refused["type"] == "error" { &refused["payload"] } else { &refused["payload"]["errors"] };
    assert_eq!(errors[0]["extensions"]["code"], "SERVICE_UNAVAILABLE", "{refused}");
    // With turns free it sets up at once, and gives its turn back.
    drop(held);
    socket.subscribe("q", query, json!({ "slice": setup.slice_a })).await;
    let mut first = socket.recv().await;
    if first == json!({ "id": "waits", "type": "complete" }) {
        first = socket.recv().await;
    }
    assert_eq!((first["type"].as_str(), first["id"].as_str()), (Some("next"), Some("q")), "{first}");
    assert_eq!(setups.available_permits(), egs_schema::SUBSCRIPTION_SETUPS);
    app.finish().await;
}

/// SQL statements the gateway sends in the 2 s after a change that wakes the queue views.
async fn statements_after_a_change(app: &TestApp, gpr: &str, priority: i32) -> u64 {
    tokio::time::sleep(Duration::from_millis(600)).await;
    let before = app.statements.get();
    bump(app, gpr, priority).await;
    tokio::time::sleep(Duration::from_millis(2000)).await;
    app.statements.get() - before
}

#[tokio::test]
async fn subscribers_of_one_queue_view_share_one_read_per_change() {
    // No scheduler: the only statements are the change's own and the views' reads.
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    let setup = two_slices(&app).await;
    let gpr = gpr_id(&create_gpr(&app, &setup.token_a, &setup.slice_a, "renamed", json!({})).await);
    let alone = statements_after_a_change(&app, &gpr, 20).await;

    // 80 subscriptions to slice A's view and 20 to slice B's, on three sockets.
    let query = "subscription($slice: ID) { queueChanged(sliceId: $slice) { id } }";
    let mut sockets = [Socket::open(&app, &setup.token_a).await, Socket::open(&app, &setup.token_a).await, Socket::open(&app, &setup.token_b).await];
    for (socket, slice, count) in [(0, &setup.slice_a, 40), (1, &setup.slice_a, 40), (2, &setup.slice_b, 20)] {
        for n in 0..count {
            sockets[socket]
                .send(json!({ "id": n.to_string(), "type": "subscribe", "payload": { "query": query, "variables": { "slice": slice } } }))
                .await;
        }
        for _ in 0..count {
            assert_eq!(sockets[socket].recv().await["type"], "next", "a first view");
        }
    }
    let watched = statements_after_a_change(&app, &gpr, 21).await;
    // One read per view (two views), not one per subscriber (100, and as many access checks).
    // The three open sockets' own token checks (every 2 s, through a 5 s cache) add a few more.
    assert!(watched <= alone + 20, "{watched} statements with 100 subscribers, {alone} with none");
    app.finish().await;
}

#[tokio::test]
async fn an_event_committed_after_a_higher_one_still_arrives_first() {
    use sea_orm::{ActiveModelTrait, ActiveValue::Set, TransactionTrait};
    let app = TestApp::spawn_with(egs_tests::api_only).await;
    if app.backend != "postgres" {
        // SQLite has one writer: ids commit in order there.
        app.finish().await;
        return;
    }
    let setup = two_slices(&app).await;
    let gpr = gpr_id(&create_gpr(&app, &setup.token_a, &setup.slice_a, "watched", json!({})).await);
    let other = gpr_id(&create_gpr(&app, &setup.token_b, &setup.slice_b, "other", json!({})).await);
    let (_, gpr_row) = egs_domain::ids::decode_any(&gpr).expect("a GPR id");
    let (_, slice_row) = egs_domain::ids::decode_any(&setup.slice_a).expect("a slice id");
    let event = |message: &str| egs_entities::gpr_event::ActiveModel {
        gpr_id: Set(gpr_row),
        slice_id: Set(slice_row),
        kind: Set(egs_entities::enums::GprEventKind::PriorityChanged),
        message: Set(message.into()),
        actor: Set("test".into()),
        created_at: Set(chrono::Utc::now()),
        ..Default::default()
    };
    let mut socket = Socket::open(&app, &setup.token_a).await;
    socket.subscribe("1", EVENTS, json!({ "gpr": gpr })).await;
    socket.silent_for(Duration::from_millis(300)).await;

    // A transaction takes an id and has not committed when a later one commits.
    let slow = app.db.begin().await.expect("a transaction");
    let first = event("first").insert(&slow).await.expect("insert");
    let second = event("second").insert(&app.db).await.expect("insert");
    assert!(second.id > first.id);
    // A change through the API makes the gateway look now; the later row waits for the gap
    // below it rather than going out ahead of it.
    bump(&app, &other, 150).await;
    socket.silent_for(Duration::from_millis(300)).await;
    slow.commit().await.expect("commit");
    let (a, b) = (socket.next("1", "gprEvents").await, socket.next("1", "gprEvents").await);
    assert_eq!((a["message"].as_str(), b["message"].as_str()), (Some("first"), Some("second")), "{a} {b}");
    app.finish().await;
}
