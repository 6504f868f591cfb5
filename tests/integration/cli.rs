//! The one-shot commands and the demo seed, against a running gateway's database.

use egs_api::settings::{Secret, StorageArgs, TokenCreateArgs};
use egs_tests::fixtures;
use egs_tests::{TestApp, wait_for};
use serde_json::json;

fn token_args(app: &TestApp, user: Option<&str>, slice: Option<&str>, role: Option<&str>, ttl: &str) -> TokenCreateArgs {
    let database_url = (app.backend == "postgres").then(|| app.database_url.clone()).flatten();
    TokenCreateArgs {
        storage: StorageArgs {
            data_dir: app.data_dir.clone(),
            database_url: database_url.map(Secret::from),
            signing_key: None,
            sqlite_readers: egs_api::db::SQLITE_READERS,
        },
        admin: user.is_none(),
        user: user.map(str::to_owned),
        slice: slice.map(str::to_owned),
        role: role.map(str::to_owned),
        ttl: ttl.to_owned(),
    }
}

#[tokio::test]
async fn token_create_issues_working_admin_and_slice_scoped_user_tokens() {
    let app = TestApp::spawn().await;
    let two = fixtures::two_slices(&app).await;

    let admin = egs_api::cli::create_token(token_args(&app, None, None, None, "1h")).await.expect("admin token");
    let who = app.ok(&admin, "{ viewer { name role } }", json!({})).await;
    assert_eq!(who["viewer"], json!({ "name": "admin", "role": "ADMIN" }));

    let carl = egs_api::cli::create_token(token_args(&app, Some("carl"), Some("team-b"), Some("viewer"), "30d")).await.expect("user token");
    let seen = app.ok(&carl, "{ viewer { role memberships { role slice { name } } } slices { totalCount } }", json!({})).await;
    assert_eq!(seen["viewer"]["memberships"], json!([{ "role": "VIEWER", "slice": { "name": "team-b" } }]));
    assert_eq!(seen["slices"]["totalCount"], 1);
    let refused = app.gql(&carl, "query($id: ID) { slice(id: $id) { name } }", json!({ "id": two.slice_a })).await;
    assert_eq!(refused["errors"][0]["extensions"]["code"], "NOT_FOUND");

    let bad = egs_api::cli::create_token(token_args(&app, Some("carl"), Some("team-b"), Some("boss"), "1h")).await;
    assert!(bad.expect_err("unknown role").to_string().contains("not a slice role"));
    let bad_ttl = egs_api::cli::create_token(token_args(&app, None, None, None, "forever")).await;
    assert!(bad_ttl.expect_err("bad ttl").to_string().contains("--ttl"));
    app.finish().await;
}

#[tokio::test]
async fn the_demo_seeds_clusters_slices_users_and_gprs_once() {
    let app = TestApp::spawn_with(|settings| settings.demo = true).await;
    let data = app
        .ok(
            &app.admin_token,
            "{ clusters { name } slices { totalCount } pools { totalNodes } gprs { totalCount edges { node { name phase } } } }",
            json!({}),
        )
        .await;
    assert_eq!(data["clusters"], json!([{ "name": "gpu-east" }, { "name": "gpu-west" }]));
    assert_eq!(data["slices"]["totalCount"], 3);
    let nodes: i64 = data["pools"].as_array().expect("pools").iter().map(|p| p["totalNodes"].as_i64().unwrap_or(0)).sum();
    assert_eq!(nodes, 22);
    // Four live GPRs, and two weeks of finished ones from three requesters for the usage reports.
    let history = 3 * egs_api::demo::history::DAYS;
    assert_eq!(data["gprs"]["totalCount"], 4 + history);
    let edges = data["gprs"]["edges"].as_array().expect("edges");
    assert!(edges.iter().any(|e| e["node"]["phase"] == "PENDING_APPROVAL"));
    app.ok(&app.admin_token, "mutation { refreshUsage { refreshedAt } }", json!({})).await;
    let today = chrono::Utc::now().date_naive();
    let range = json!({ "from": (today - chrono::Duration::days(20)).to_string(), "to": today.to_string() });
    let usage = app
        .ok(&app.admin_token, "query($from: String!, $to: String!) { usage(from: $from, to: $to) { days: usage(groupBy: [DAY]) { usedGpuHours } totals: usage(groupBy: []) { gprsStarted } } }", range)
        .await;
    let days = usage["usage"]["days"].as_array().expect("days");
    let used_days = days.iter().filter(|d| d["usedGpuHours"].as_f64().unwrap_or(0.0) > 0.0).count();
    assert!(used_days >= egs_api::demo::history::DAYS as usize, "{usage}");
    assert!(usage["usage"]["totals"][0]["gprsStarted"].as_i64().unwrap_or(0) >= history, "{usage}");

    // The simulated agents report: samples for every GPU (busy where a GPR holds the node) and
    // one pod per held node in the slice's namespace, so the portal's charts and workloads move.
    let nlp = app.ok(&app.admin_token, r#"{ slice(name: "nlp-research") { id } }"#, json!({})).await["slice"]["id"].clone();
    wait_for("demo samples and pods", || async {
        let data = app
            .ok(
                &app.admin_token,
                "query($slice: ID!) { nodes(first: 100) { nodes { allocatedGpr { name } gpus { latestSample { util } } } } workloads(sliceId: $slice) { name namespace } }",
                json!({ "slice": nlp }),
            )
            .await;
        let nodes = data["nodes"]["nodes"].as_array().cloned().unwrap_or_default();
        let gpus = |held: bool| {
            nodes.iter().filter(move |n| n["allocatedGpr"].is_null() != held).flat_map(|n| n["gpus"].as_array().cloned().unwrap_or_default())
        };
        let sampled = nodes.len() == 22 && gpus(true).chain(gpus(false)).all(|g| g["latestSample"]["util"].is_number());
        let busy = gpus(true).all(|g| g["latestSample"]["util"].as_f64().unwrap_or(0.0) > 20.0)
            && gpus(false).all(|g| g["latestSample"]["util"].as_f64().unwrap_or(100.0) < 5.0);
        let pods = data["workloads"].as_array().cloned().unwrap_or_default();
        sampled
            && busy
            && pods.len() == 4
            && pods.iter().all(|p| p["namespace"] == "nlp" && p["name"].as_str().unwrap_or_default().starts_with("llama-70b-finetune-worker-"))
    })
    .await;

    let bob = std::fs::read_to_string(app.data_dir.join("demo-tokens/bob.token")).expect("bob's token");
    let bobs = app.ok(bob.trim(), "{ slices { edges { node { name viewerRole } } } }", json!({})).await;
    assert_eq!(
        bobs["slices"]["edges"],
        json!([{ "node": { "name": "nlp-research", "viewerRole": "EDITOR" } }, { "node": { "name": "vision", "viewerRole": "VIEWER" } }])
    );
    app.finish().await;
}

#[tokio::test]
async fn replicas_starting_together_apply_the_migrations_once() {
    use egs_migration::MigratorTrait;
    let all = egs_migration::Migrator::migrations().len();
    let dir = tempfile::tempdir().expect("temp dir");
    let postgres = egs_tests::fresh_postgres().await;
    let storage = StorageArgs {
        data_dir: dir.path().to_path_buf(),
        database_url: postgres.as_ref().map(|(url, _)| Secret::from(url.clone())),
        signing_key: None,
        sqlite_readers: egs_api::db::SQLITE_READERS,
    };
    let counter = egs_api::db::StatementCounter::default();
    let applied: Vec<usize> = match &postgres {
        // Three replicas on one fresh database at once: one applies everything, the others wait
        // for it (without the lock they collide on the same CREATE TABLEs) and find nothing left.
        Some(_) => {
            let mut dbs = Vec::new();
            for _ in 0..3 {
                dbs.push(egs_api::db::connect(&storage, &counter).await.expect("connect"));
            }
            let runs = futures_util::future::join_all(dbs.iter().map(egs_api::db::migrate)).await;
            runs.into_iter().map(|r| r.expect("every replica starts")).collect()
        }
        // SQLite is one process: a second run finds nothing to apply.
        None => {
            let db = egs_api::db::connect(&storage, &counter).await.expect("connect");
            vec![egs_api::db::migrate(&db).await.expect("first"), egs_api::db::migrate(&db).await.expect("second")]
        }
    };
    let mut sorted = applied.clone();
    sorted.sort_unstable();
    assert_eq!(sorted.last(), Some(&all), "{applied:?}");
    assert!(sorted[..sorted.len() - 1].iter().all(|&n| n == 0), "the others found nothing to apply: {applied:?}");
    if let Some((_, name)) = postgres {
        egs_tests::drop_postgres_database(&name).await;
    }
}

#[cfg(unix)]
#[tokio::test]
async fn the_data_dir_database_and_tokens_are_the_owners_only() {
    use std::os::unix::fs::PermissionsExt;
    let app = TestApp::spawn_with(|s| s.demo = true).await;
    let mode = |path: &std::path::Path| std::fs::metadata(path).map(|m| m.permissions().mode() & 0o777).ok();
    assert_eq!(mode(&app.data_dir), Some(0o700), "the data dir");
    assert_eq!(mode(&app.data_dir.join("demo-tokens")), Some(0o700), "the demo tokens' dir");
    assert_eq!(mode(&app.data_dir.join("signing.key")), Some(0o600));
    if app.backend == "sqlite" {
        for file in ["egs.db", "egs.db-wal", "egs.db-shm"] {
            assert_eq!(mode(&app.data_dir.join(file)), Some(0o600), "{file}");
        }
    }
    app.finish().await;
}
