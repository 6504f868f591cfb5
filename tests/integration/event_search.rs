//! Searching GPR events ("Events can be searched for GPR provisioning and progress", seed 001):
//! by kind, time, GPR, slice and text, paged both ways, only ever within what the caller may see.

use egs_tests::TestApp;
use egs_tests::fixtures::*;
use serde_json::{Value, json};

const SEARCH: &str = "query($gpr: ID, $slice: ID, $kinds: [GprEventKind!], $since: DateTime, $until: DateTime, $text: String,
    $first: Int, $after: String, $last: Int, $before: String) {
  gprEvents(gprId: $gpr, sliceId: $slice, kinds: $kinds, since: $since, until: $until, text: $text,
            first: $first, after: $after, last: $last, before: $before) {
    totalCount pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    nodes { sequence kind message actor createdAt gpr { name } }
  }
}";

async fn search(app: &TestApp, token: &str, vars: Value) -> Value {
    app.ok(token, SEARCH, vars).await["gprEvents"].clone()
}

fn sequences(page: &Value) -> Vec<i64> {
    page["nodes"].as_array().expect("nodes").iter().map(|e| e["sequence"].as_i64().expect("sequence")).collect()
}

fn kinds(page: &Value) -> Vec<&str> {
    page["nodes"].as_array().expect("nodes").iter().map(|e| e["kind"].as_str().expect("kind")).collect()
}

#[tokio::test]
async fn events_are_searched_by_kind_time_gpr_slice_and_text_and_paged_both_ways() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    // Reserved months ahead, so nothing but their CREATED and QUEUED is certain to be there (the
    // scheduler's estimates come when they come): the searches that count look at those two.
    let ahead = (chrono::Utc::now() + chrono::Duration::days(300)).to_rfc3339();
    let mut ids = Vec::new();
    for name in ["alpha-1", "alpha-2", "alpha-3"] {
        ids.push(create_gpr(&app, &setup.token_a, &setup.slice_a, name, json!({ "nodeCount": 4, "earliestStartAt": ahead })).await["id"].clone());
    }
    create_gpr(&app, &setup.token_b, &setup.slice_b, "beta-1", json!({ "nodeCount": 4, "earliestStartAt": ahead })).await;
    let mine = ["CREATED", "QUEUED"];

    // Everything alice may see, oldest first: her slice's events only.
    let all = search(&app, &setup.token_a, json!({ "first": 100, "kinds": mine })).await;
    let everything = sequences(&all);
    assert!(everything.windows(2).all(|w| w[0] < w[1]), "oldest first: {everything:?}");
    assert!(all["nodes"].as_array().expect("nodes").iter().all(|e| e["gpr"]["name"].as_str().is_some_and(|n| n.starts_with("alpha"))), "{all}");
    assert_eq!(all["totalCount"].as_i64(), Some(everything.len() as i64));

    // By kind, by GPR, by slice.
    let created = search(&app, &setup.token_a, json!({ "kinds": ["CREATED"] })).await;
    assert_eq!(kinds(&created), ["CREATED"; 3]);
    let one = search(&app, &setup.token_a, json!({ "gpr": ids[1], "kinds": ["CREATED", "QUEUED"] })).await;
    assert_eq!(kinds(&one), ["CREATED", "QUEUED"]);
    let admin_b = search(&app, &app.admin_token, json!({ "slice": setup.slice_b, "kinds": ["CREATED"] })).await;
    assert_eq!(admin_b["nodes"][0]["gpr"]["name"], "beta-1");
    assert_eq!(sequences(&admin_b).len(), 1);

    // By text, ignoring case, in the message or the actor; `%` and `_` are themselves.
    let by_actor = search(&app, &setup.token_a, json!({ "text": "ALICE", "kinds": ["CREATED"] })).await;
    assert_eq!(sequences(&by_actor).len(), 3);
    let underscore = search(&app, &app.admin_token, json!({ "text": "_", "kinds": ["CREATED"] })).await;
    assert_eq!(sequences(&underscore), Vec::<i64>::new(), "`_` is not a wildcard: {underscore}");
    let percent = search(&app, &app.admin_token, json!({ "text": "%", "kinds": mine })).await;
    assert_eq!(percent["totalCount"], 0);
    // bob's name is in no event alice may see.
    assert_eq!(search(&app, &setup.token_a, json!({ "text": "bob" })).await["totalCount"], 0);
    assert_eq!(search(&app, &setup.token_b, json!({ "text": "alice" })).await["totalCount"], 0);
    assert_eq!(search(&app, &app.admin_token, json!({ "text": "bob", "kinds": mine })).await["totalCount"], 2);

    // By time: from the second CREATED on; before the first, nothing.
    let first_created = created["nodes"][0]["createdAt"].clone();
    let second_created = created["nodes"][1]["createdAt"].clone();
    let later = search(&app, &setup.token_a, json!({ "kinds": ["CREATED"], "since": second_created })).await;
    assert!(sequences(&later).iter().all(|s| *s > sequences(&created)[0]), "{later}");
    let before_all = search(&app, &setup.token_a, json!({ "until": first_created, "kinds": ["CREATED"] })).await;
    assert_eq!(sequences(&before_all), Vec::<i64>::new());

    // Back from the end: the newest two, then the two before them, in the same order.
    assert_eq!(everything.len(), 6);
    let newest = search(&app, &setup.token_a, json!({ "last": 2, "kinds": mine })).await;
    assert_eq!(sequences(&newest), everything[everything.len() - 2..].to_vec());
    assert_eq!(newest["pageInfo"]["hasPreviousPage"], true);
    assert_eq!(newest["pageInfo"]["hasNextPage"], false);
    let older = search(&app, &setup.token_a, json!({ "last": 2, "kinds": mine, "before": newest["pageInfo"]["startCursor"] })).await;
    assert_eq!(sequences(&older), everything[everything.len() - 4..everything.len() - 2].to_vec());
    assert_eq!(older["pageInfo"]["hasNextPage"], true);
    // And forward again from there.
    let again = search(&app, &setup.token_a, json!({ "first": 2, "kinds": mine, "after": older["pageInfo"]["endCursor"] })).await;
    assert_eq!(sequences(&again), sequences(&newest));

    // Refused with the argument named.
    for (vars, field) in [
        (json!({ "first": 2, "last": 2 }), "last"),
        (json!({ "last": 101 }), "last"),
        (json!({ "before": "not-a-cursor" }), "before"),
        (json!({ "text": "x".repeat(201) }), "text"),
        (json!({ "since": "2030-01-02T00:00:00Z", "until": "2030-01-01T00:00:00Z" }), "until"),
    ] {
        let refused = app.gql(&setup.token_a, SEARCH, vars.clone()).await;
        assert_eq!(refused["errors"][0]["extensions"]["code"], "INVALID_INPUT", "{vars}: {refused}");
        assert!(refused.to_string().contains(field), "{vars}: {refused}");
    }
    // Another slice's GPR or slice reads as missing, not as "no events".
    let hidden = app.gql(&setup.token_b, SEARCH, json!({ "gpr": ids[0] })).await;
    assert_eq!(hidden["errors"][0]["extensions"]["code"], "NOT_FOUND", "{hidden}");
    app.finish().await;
}

#[tokio::test]
async fn a_text_search_looks_only_through_the_newest_events_it_may_scan() {
    use egs_entities::{GprEventKind, gpr_event};
    use sea_orm::{EntityTrait, Set};
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    let ahead = (chrono::Utc::now() + chrono::Duration::days(300)).to_rfc3339();
    let gpr = create_gpr(&app, &setup.token_a, &setup.slice_a, "chatty", json!({ "nodeCount": 4, "earliestStartAt": ahead })).await;
    let id = |v: &Value| egs_domain::ids::decode_any(v.as_str().expect("an id")).expect("a node id").1;
    let (gpr_id, slice_id) = (id(&gpr["id"]), id(&json!(setup.slice_a)));
    let event = |message: String| gpr_event::ActiveModel {
        gpr_id: Set(gpr_id),
        slice_id: Set(slice_id),
        kind: Set(GprEventKind::PriorityChanged),
        message: Set(message),
        actor: Set("alice".into()),
        created_at: Set(chrono::Utc::now()),
        ..Default::default()
    };
    // An old event that says "needle", then as many newer ones as a text search may scan.
    gpr_event::Entity::insert(event("needle in an old event".into())).exec(&app.db).await.expect("insert");
    let scan = egs_domain::gpr::reads::MAX_TEXT_SCAN as usize;
    for chunk in (0..scan).collect::<Vec<_>>().chunks(1_000) {
        gpr_event::Entity::insert_many(chunk.iter().map(|i| event(format!("filler {i}")))).exec(&app.db).await.expect("insert");
    }
    // The old one is past what the search looks through: refused work, not a full scan.
    let old = search(&app, &setup.token_a, json!({ "text": "needle" })).await;
    assert_eq!(old["totalCount"], 0, "{old}");
    // Filters other than text narrow first: by kind, it is among the newest again.
    let created = search(&app, &setup.token_a, json!({ "text": "alice", "kinds": ["CREATED"] })).await;
    assert_eq!(created["totalCount"], 1, "{created}");
    // A new one is found.
    gpr_event::Entity::insert(event("needle in a new event".into())).exec(&app.db).await.expect("insert");
    let new = search(&app, &setup.token_a, json!({ "text": "NEEDLE" })).await;
    assert_eq!((new["totalCount"].as_i64(), new["nodes"][0]["message"].as_str()), (Some(1), Some("needle in a new event")), "{new}");
    app.finish().await;
}
