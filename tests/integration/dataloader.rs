//! The read path: relations go through batch loaders (list pages read them ahead), so a page
//! costs the same number of SQL statements whatever its size; queries read beside the writer.

use egs_entities::gpr_node;
use egs_tests::TestApp;
use egs_tests::fixtures::{self, SHAPE_H100};
use sea_orm::{ActiveModelTrait, Set};
use serde_json::json;

const PAGE: &str = "query($n: Int) { gprs(first: $n) { edges { node { id name phase slice { id name } requester { name } nodes { id name cluster { name } gpus { id uuid } } } } } }";

/// The fewest statements of six runs of `query` as `token`, each answer checked by `check`:
/// the counter sees the whole pool, so a background poll (the event tailer, every 500 ms) can
/// land inside one request's window on a busy machine, and is not the request's cost.
async fn fewest_statements(app: &TestApp, token: &str, query: &str, variables: serde_json::Value, check: impl Fn(&serde_json::Value)) -> u64 {
    let mut fewest = u64::MAX;
    for _ in 0..6 {
        let before = app.statements.get();
        let data = app.ok(token, query, variables.clone()).await;
        fewest = fewest.min(app.statements.get() - before);
        check(&data);
    }
    fewest
}

async fn statements_for(app: &TestApp, n: usize) -> u64 {
    fewest_statements(app, &app.admin_token, PAGE, json!({ "n": n }), |data| {
        let edges = data["gprs"]["edges"].as_array().expect("edges");
        assert_eq!(edges.len(), n);
        for edge in edges {
            let nodes = edge["node"]["nodes"].as_array().expect("nodes");
            assert_eq!(nodes.len(), 2, "{edge}");
            assert!(nodes.iter().all(|n| n["gpus"].as_array().map(Vec::len) == Some(8)));
        }
    })
    .await
}

#[tokio::test]
async fn a_page_of_gprs_with_relations_costs_a_fixed_number_of_statements() {
    // API only: the scheduler loop's own statements would blur the count (and it would
    // provision these GPRs on top of the hand-made assignments).
    let app = TestApp::spawn_with(|s| s.no_scheduler = true).await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    let nodes = fixtures::add_nodes(&app, &cluster, "h100", 20, SHAPE_H100, 8).await;
    let slice = fixtures::create_slice(&app, "big", &cluster, json!({})).await;
    for i in 0..100 {
        let gpr = fixtures::create_gpr(&app, &app.admin_token, &slice, &format!("gpr-{i}"), json!({})).await;
        let (_, gpr_id) = egs_domain::ids::decode_any(gpr["id"].as_str().expect("id")).expect("gpr id");
        for node in nodes.iter().skip(i % 19).take(2) {
            let (_, node_id) = egs_domain::ids::decode_any(node).expect("node id");
            gpr_node::ActiveModel { gpr_id: Set(gpr_id), node_id: Set(node_id), assigned_at: Set(chrono::Utc::now()) }
                .insert(&app.db)
                .await
                .expect("assign");
        }
    }
    // One statement per relation: the page, slices, requesters, node links, nodes, their
    // clusters, GPUs.
    let small = statements_for(&app, 10).await;
    let large = statements_for(&app, 100).await;
    assert_eq!((small, large), (7, 7), "statements for a page of 10 and of 100 GPRs");
    app.finish().await;
}

const GPU_PAGE: &str =
    "query($n: Int) { gpus(first: $n) { edges { node { id uuid node { id name health cluster { id name } } latestSample { util } } } } }";

/// The fewest statements of the GPU page for `token`; checks what it read.
async fn gpu_page_statements(app: &TestApp, token: &str, n: usize, sampled: usize) -> u64 {
    fewest_statements(app, token, GPU_PAGE, json!({ "n": n }), |data| {
        let edges = data["gpus"]["edges"].as_array().expect("edges");
        assert_eq!(edges.len(), n);
        assert!(edges.iter().all(|e| e["node"]["node"]["cluster"]["name"] == "c1"), "every GPU with its node and cluster");
        let read = edges.iter().filter(|e| e["node"]["latestSample"]["util"].is_number()).count();
        assert_eq!(read, sampled, "samples this caller may read on a page of {n}");
    })
    .await
}

#[tokio::test]
async fn a_page_of_gpus_with_node_cluster_and_sample_costs_a_fixed_number_of_statements_for_admins_and_users() {
    let app = TestApp::spawn_with(|s| s.no_scheduler = true).await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    let nodes = fixtures::add_nodes(&app, &cluster, "h100", 20, SHAPE_H100, 8).await;
    let slice = fixtures::create_slice(&app, "team", &cluster, json!({})).await;
    let (_, alice) = fixtures::member(&app, "alice", &slice, "EDITOR").await;
    // Alice's GPR holds the first two nodes (their 16 GPUs are the first on the page).
    let gpr = fixtures::create_gpr(&app, &alice, &slice, "held", json!({})).await;
    let (_, gpr_id) = egs_domain::ids::decode_any(gpr["id"].as_str().expect("id")).expect("gpr id");
    let assigned = chrono::Utc::now() - chrono::Duration::minutes(1);
    for node in nodes.iter().take(2) {
        let (_, node_id) = egs_domain::ids::decode_any(node).expect("node id");
        gpr_node::ActiveModel { gpr_id: Set(gpr_id), node_id: Set(node_id), assigned_at: Set(assigned) }.insert(&app.db).await.expect("assign");
        egs_entities::node::ActiveModel { id: Set(node_id), allocated_gpr_id: Set(Some(gpr_id)), ..Default::default() }
            .update(&app.db)
            .await
            .expect("allocate");
    }
    // Every GPU of the first four nodes reports: admins read 32 samples, Alice her 16.
    let page = app.ok(&app.admin_token, "{ gpus(first: 32) { nodes { uuid node { name } } } }", json!({})).await;
    let mut by_node: std::collections::BTreeMap<String, Vec<serde_json::Value>> = Default::default();
    for gpu in page["gpus"]["nodes"].as_array().expect("gpus") {
        let sample = fixtures::gpu_sample(gpu["uuid"].as_str().expect("uuid"), chrono::Utc::now(), 50.0);
        by_node.entry(gpu["node"]["name"].as_str().expect("name").to_owned()).or_default().push(sample);
    }
    let report = "mutation($input: ReportGpuSamplesInput!) { reportGpuSamples(input: $input) { accepted } }";
    for (node, samples) in by_node {
        let input = json!({ "clusterId": cluster, "nodeName": node, "samples": samples });
        assert_eq!(app.ok(&app.admin_token, report, json!({ "input": input })).await["reportGpuSamples"]["accepted"], 8);
    }
    // The catalog's version (the page is described from memory), the page's latest samples,
    // the nodes, their clusters; for a user also the holders' GPRs and assignments.
    let admin = (gpu_page_statements(&app, &app.admin_token, 10, 10).await, gpu_page_statements(&app, &app.admin_token, 100, 32).await);
    let user = (gpu_page_statements(&app, &alice, 10, 10).await, gpu_page_statements(&app, &alice, 100, 16).await);
    assert_eq!(admin.0, admin.1, "an admin's page of 10 and of 100 GPUs");
    assert_eq!(user.0, user.1, "a user's page of 10 and of 100 GPUs");
    assert!(admin.1 <= 4 && user.1 <= 7, "statements (admin, user): {admin:?}, {user:?}");
    app.finish().await;
}

/// Queries and subscriptions read through their own connections: a page answers, and a
/// subscription starts, while a long write holds the writer (on SQLite its only connection),
/// and on SQLite those connections cannot write.
#[tokio::test]
async fn queries_answer_while_a_write_holds_the_writer_and_cannot_write() {
    use sea_orm::{ConnectionTrait, TransactionTrait};
    let app = TestApp::spawn_with(|s| s.no_scheduler = true).await;
    let cluster = fixtures::register_cluster(&app, "c1").await;
    fixtures::add_nodes(&app, &cluster, "h100", 2, SHAPE_H100, 8).await;
    let page = "{ gpus(first: 5) { nodes { uuid node { name cluster { name } } } } }";
    let slice = fixtures::create_slice(&app, "team", &cluster, json!({})).await;
    // The token is known before the writer is taken (its first check may read the database).
    app.ok(&app.admin_token, page, json!({})).await;
    let mut socket = egs_tests::ws::Socket::open(&app, &app.admin_token).await;

    let writer = app.db.begin().await.expect("hold the writer");
    writer.execute_unprepared("UPDATE clusters SET name = name").await.expect("a write in the held transaction");
    let answered = tokio::time::timeout(std::time::Duration::from_secs(5), app.ok(&app.admin_token, page, json!({})))
        .await
        .expect("a query must not queue behind a write");
    let gpus = answered["gpus"]["nodes"].as_array().expect("gpus");
    assert_eq!(gpus.len(), 5);
    assert!(gpus.iter().all(|g| g["node"]["cluster"]["name"] == "c1"), "{answered}");
    // A subscription's setup reads (scope, the queue view) do not queue behind it either.
    socket.subscribe("queue", "subscription($slice: ID) { queueChanged(sliceId: $slice) { id } }", json!({ "slice": slice })).await;
    let first = tokio::time::timeout(std::time::Duration::from_secs(5), socket.next("queue", "queueChanged"))
        .await
        .expect("a subscription must not queue behind a write");
    assert_eq!(first, json!([]), "the slice's queue is empty");
    writer.rollback().await.expect("rollback");

    if app.backend == "sqlite" {
        let refused = app.reads.execute_unprepared("DELETE FROM gpus").await;
        assert!(refused.is_err(), "the query connections are read-only");
        let left = app.ok(&app.admin_token, "{ gpus(first: 100) { nodes { id } } }", json!({})).await;
        assert_eq!(left["gpus"]["nodes"].as_array().map(Vec::len), Some(16), "nothing was deleted");
    }
    app.finish().await;
}

/// A GPU page's described fields, with and without a field that makes it read rows.
const DESCRIBED: &str = "query($first: Int, $after: String, $filter: GpuFilter) {
    gpus(first: $first, after: $after, filter: $filter) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id uuid index model memoryMib migEnabled node { name } } } } }";
const ROWS: &str = "query($first: Int, $after: String, $filter: GpuFilter) {
    gpus(first: $first, after: $after, filter: $filter) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id uuid index model memoryMib migEnabled node { name } latestSample { util } } } } }";

/// The page without its samples: what the catalog's answer must equal.
fn described(mut page: serde_json::Value) -> serde_json::Value {
    for edge in page["gpus"]["edges"].as_array_mut().expect("edges") {
        edge["node"].as_object_mut().expect("gpu").remove("latestSample");
    }
    page
}

/// GPU pages that read no samples answer from the catalog in memory (one statement, the
/// catalog's version), exactly as the rows would, and see every change to the GPUs'
/// descriptions at once: through the API, and written to the database by anyone else (another
/// replica), which the trigger counts.
#[tokio::test]
async fn gpu_pages_served_from_the_catalog_equal_the_rows_and_follow_every_change() {
    let app = TestApp::spawn_with(|s| s.no_scheduler = true).await;
    let c1 = fixtures::register_cluster(&app, "c1").await;
    let c2 = fixtures::register_cluster(&app, "c2").await;
    fixtures::add_nodes(&app, &c1, "a", 3, SHAPE_H100, 4).await;
    let b = fixtures::add_nodes(&app, &c2, "b", 2, "NVIDIA-A100-SXM4-80GB", 2).await;
    let page = |query: &'static str, variables: serde_json::Value| {
        let app = &app;
        async move { app.ok(&app.admin_token, query, variables).await }
    };
    // Served from memory once the catalog is read: a page with its count costs one statement
    // (the catalog's version); from rows it costs two.
    const WARM: &str = "query($first: Int) { gpus(first: $first) { totalCount nodes { id uuid } } }";
    let warm = json!({ "first": 5 });
    egs_tests::wait_for("GPU pages served from the catalog", || async {
        fewest_statements(&app, &app.admin_token, WARM, warm.clone(), |_| {}).await == 1
    })
    .await;
    // The same pages either way: filters, cursors, counts.
    let filters = [
        json!(null),
        json!({ "clusterId": c2 }),
        json!({ "nodeId": b[1] }),
        json!({ "model": SHAPE_H100 }),
        json!({ "clusterId": c1, "model": "NVIDIA-A100-SXM4-80GB" }),
    ];
    for filter in filters {
        let mut after = serde_json::Value::Null;
        loop {
            let variables = json!({ "first": 3, "after": after, "filter": filter });
            let (from_catalog, from_rows) = (page(DESCRIBED, variables.clone()).await, described(page(ROWS, variables).await));
            assert_eq!(from_catalog, from_rows, "filter {filter}, after {after}");
            if from_catalog["gpus"]["pageInfo"]["hasNextPage"] != true {
                break;
            }
            after = from_catalog["gpus"]["pageInfo"]["endCursor"].clone();
        }
    }
    let models = |data: serde_json::Value| -> Vec<String> {
        data["gpus"]["edges"].as_array().expect("edges").iter().map(|e| e["node"]["model"].as_str().expect("model").to_owned()).collect()
    };
    let everything = json!({ "first": 100 });
    assert_eq!(page(DESCRIBED, everything.clone()).await["gpus"]["totalCount"], 16);
    // Through the API: a node added, a node removed.
    fixtures::add_nodes(&app, &c2, "c", 1, SHAPE_H100, 8).await;
    assert_eq!(page(DESCRIBED, everything.clone()).await["gpus"]["totalCount"], 24, "the new node's GPUs at once");
    fixtures::remove_node(&app, &b[0]).await;
    assert_eq!(page(DESCRIBED, everything.clone()).await["gpus"]["totalCount"], 22, "the removed node's GPUs gone at once");
    // Behind the gateway's back, as another replica writes: a GPU's model changes.
    use sea_orm::ConnectionTrait;
    app.db.execute_unprepared("UPDATE gpus SET model = 'NVIDIA-H200' WHERE id = (SELECT MIN(id) FROM gpus)").await.expect("update");
    assert_eq!(models(page(DESCRIBED, everything.clone()).await)[0], "NVIDIA-H200", "a change written elsewhere, at once");
    // Samples are not descriptions: reports leave the catalog as it is.
    egs_tests::wait_for("the catalog read again", || async { fewest_statements(&app, &app.admin_token, WARM, warm.clone(), |_| {}).await == 1 })
        .await;
    let uuid = page(DESCRIBED, everything.clone()).await["gpus"]["edges"][0]["node"]["uuid"].as_str().expect("uuid").to_owned();
    let report = "mutation($input: ReportGpuSamplesInput!) { reportGpuSamples(input: $input) { accepted } }";
    let input = json!({ "clusterId": c1, "nodeName": "a-0", "samples": [fixtures::gpu_sample(&uuid, chrono::Utc::now(), 50.0)] });
    assert_eq!(app.ok(&app.admin_token, report, json!({ "input": input })).await["reportGpuSamples"]["accepted"], 1);
    assert_eq!(fewest_statements(&app, &app.admin_token, WARM, warm.clone(), |_| {}).await, 1, "still served from memory");
    app.finish().await;
}

/// Pages that arrive together share one read of the catalog's version (each still needs a read
/// that began after it arrived, so none misses a change committed before it): twenty at once
/// cost a few statements, not twenty, and each answers in full.
#[tokio::test]
async fn gpu_pages_arriving_together_share_the_catalogs_version_reads() {
    let app = TestApp::spawn_with(|s| s.no_scheduler = true).await;
    let c1 = fixtures::register_cluster(&app, "c1").await;
    fixtures::add_nodes(&app, &c1, "a", 3, SHAPE_H100, 4).await;
    const WARM: &str = "query($first: Int) { gpus(first: $first) { totalCount nodes { id uuid } } }";
    let warm = json!({ "first": 5 });
    egs_tests::wait_for("GPU pages served from the catalog", || async {
        fewest_statements(&app, &app.admin_token, WARM, warm.clone(), |_| {}).await == 1
    })
    .await;
    const PAGES: u64 = 20;
    let mut fewest = u64::MAX;
    for _ in 0..3 {
        let before = app.statements.get();
        let pages = futures_util::future::join_all((0..PAGES).map(|_| app.ok(&app.admin_token, WARM, warm.clone()))).await;
        fewest = fewest.min(app.statements.get() - before);
        for page in pages {
            assert_eq!(page["gpus"]["totalCount"], 12, "{page}");
            assert_eq!(page["gpus"]["nodes"].as_array().map(Vec::len), Some(5), "{page}");
        }
    }
    assert!(fewest <= PAGES / 2, "{PAGES} pages at once read the version {fewest} times");
    // And a change written before a page arrives is in it.
    fixtures::add_nodes(&app, &c1, "b", 1, SHAPE_H100, 8).await;
    let pages = futures_util::future::join_all((0..PAGES).map(|_| app.ok(&app.admin_token, WARM, warm.clone()))).await;
    assert!(pages.iter().all(|p| p["gpus"]["totalCount"] == 20), "every page after the change sees it");
    app.finish().await;
}
