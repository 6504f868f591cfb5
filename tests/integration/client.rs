//! The `egs` command-line client (the real binary) against a live gateway: sign in, create and
//! wait for a GPR, list, extend, release, wait times, events (followed too) and GPUs, with the
//! exit codes scripts rely on.

use egs_tests::TestApp;
use egs_tests::fixtures::*;
use serde_json::Value;
use std::process::Output;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

struct Cli {
    binary: std::path::PathBuf,
    config: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl Cli {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        Cli { binary: egs_tests::cluster::egs_binary(false), config: dir.path().join("egs").join("cli.json"), _dir: dir }
    }

    fn command(&self, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.binary);
        command.args(args).env("EGS_CONFIG", &self.config).env_remove("EGS_SERVER").env_remove("EGS_TOKEN").kill_on_drop(true);
        command
    }

    async fn run(&self, args: &[&str]) -> Output {
        tokio::time::timeout(Duration::from_secs(90), self.command(args).output()).await.expect("egs finishes").expect("egs runs")
    }

    /// Runs a command that must succeed with `--output json`; its JSON.
    async fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        let out = self.run(&all).await;
        assert!(out.status.success(), "egs {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("egs {args:?} printed no JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
    }

    /// Runs a command that must fail with exit `code`; its error output.
    async fn fails(&self, args: &[&str], code: i32) -> String {
        let out = self.run(args).await;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(code), "egs {args:?}: {stderr}");
        stderr
    }
}

#[tokio::test]
async fn a_user_scripts_gprs_with_the_egs_client_and_its_exit_codes() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    let server = app.url("");
    let cli = Cli::new();

    // Not signed in yet: exit 5; a bad token is refused at login and nothing is saved.
    assert!(cli.fails(&["gpr", "list"], 5).await.contains("egs login"));
    let on_command_line = cli.fails(&["login", "--server", &server, "--token", "not-a-token"], 5).await;
    assert!(on_command_line.contains("visible to every user"), "a token on the command line is warned about: {on_command_line}");
    assert!(!cli.config.exists());
    let token_file = cli.config.with_file_name("token");
    std::fs::create_dir_all(token_file.parent().expect("a folder")).expect("a folder");
    std::fs::write(&token_file, &setup.token_a).expect("the token file");
    let token_file = token_file.to_str().expect("a path").to_owned();
    // Plain http:// to another machine would show the token to the network: refused before
    // anything is sent (nothing listens there, and nothing is connected to).
    let plain = cli.fails(&["login", "--server", "http://gateway.example:8080", "--token-file", &token_file], 2).await;
    assert!(plain.contains("plain http://"), "{plain}");
    assert!(!cli.config.exists());
    let login = cli.run(&["login", "--server", &server, "--token-file", &token_file]).await;
    assert!(login.status.success(), "{}", String::from_utf8_lossy(&login.stderr));
    assert!(!String::from_utf8_lossy(&login.stderr).contains("visible"), "no warning for a token file");
    assert!(String::from_utf8_lossy(&login.stdout).contains("as alice"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&cli.config).expect("saved").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the saved token is the owner's only");
    }

    // Wait times, then create and wait until provisioned (slice by name).
    let waits = cli.json(&["gpr", "wait-time", "--slice", "team-a", "--nodes", "2", "--duration", "1h"]).await;
    assert!(waits.as_array().is_some_and(|rows| !rows.is_empty()), "{waits}");
    let created = cli
        .json(&[
            "gpr",
            "create",
            "--slice",
            "team-a",
            "--name",
            "cli-one",
            "--nodes",
            "2",
            "--duration",
            "1h",
            "--label",
            "team=a",
            "--wait",
            "--wait-timeout",
            "60s",
        ])
        .await;
    assert_eq!(created["phase"], "PROVISIONED", "{created}");
    let id = created["id"].as_str().expect("id").to_owned();
    let listed = cli.json(&["gpr", "list", "--phase", "provisioned"]).await;
    assert_eq!(listed.as_array().map(|l| l.iter().filter(|g| g["name"] == "cli-one").count()), Some(1), "{listed}");
    let table = cli.run(&["gpr", "list"]).await;
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.starts_with("ID ") && text.contains("cli-one") && text.contains("PROVISIONED"), "{text}");

    // Refusals exit 3 with the field named; hidden or unknown things exit 4; no role exits 5.
    assert!(cli.fails(&["gpr", "create", "--slice", "team-a", "--name", "no-window", "--nodes", "1"], 3).await.contains("duration"));
    cli.fails(&["gpr", "create", "--slice", "team-b", "--name", "not-mine", "--nodes", "1", "--duration", "1h"], 4).await;
    let theirs = create_gpr(&app, &setup.token_b, &setup.slice_b, "theirs", serde_json::json!({ "nodeCount": 1 })).await;
    cli.fails(&["gpr", "show", theirs["id"].as_str().expect("id")], 4).await;
    cli.fails(&["gpr", "list", "--token", "garbage"], 5).await;
    cli.fails(&["gpr", "list", "--phase", "SOMETIMES"], 2).await;

    // Extend and follow the events it makes, live.
    let mut follow = cli
        .command(&["events", "--gpr", &id, "--last", "0", "--follow", "-o", "json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("follow starts");
    let mut lines = BufReader::new(follow.stdout.take().expect("stdout")).lines();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let extended = cli.json(&["gpr", "extend", &id, "--by", "10m"]).await;
    assert_eq!(extended["extendedBy"], "PT10M", "{extended}");
    let line = tokio::time::timeout(Duration::from_secs(15), lines.next_line()).await.expect("an event arrives").expect("reads").expect("a line");
    let event: Value = serde_json::from_str(&line).expect("one JSON event per line");
    assert_eq!(event["kind"], "EXTENDED", "{event}");
    follow.kill().await.expect("stops");

    let history = cli.run(&["events", "--gpr", &id, "--kind", "provisioned", "-o", "json"]).await;
    let kinds: Vec<Value> =
        String::from_utf8_lossy(&history.stdout).lines().map(|l| serde_json::from_str::<Value>(l).expect("json")["kind"].clone()).collect();
    assert_eq!(kinds, ["PROVISIONED"]);
    let gpus = cli.json(&["gpus", "--hot"]).await;
    assert!(gpus.as_array().is_some_and(|g| !g.is_empty()), "{gpus}");

    // A second GPR of the slice waits behind the first (one at a time per slice): cancelled.
    let queued = cli.json(&["gpr", "create", "--slice", "team-a", "--name", "cli-two", "--nodes", "1", "--duration", "2h"]).await;
    assert_eq!(queued["phase"], "QUEUED", "{queued}");
    let cancelled = cli.json(&["gpr", "cancel", queued["id"].as_str().expect("id")]).await;
    assert_eq!(cancelled["phase"], "CANCELLED");
    let released = cli.json(&["gpr", "release", &id]).await;
    assert!(["RELEASING", "COMPLETED"].contains(&released["phase"].as_str().unwrap_or_default()), "{released}");
    app.finish().await;
}

#[tokio::test]
async fn an_admin_asks_what_if_from_the_command_line() {
    let app = TestApp::spawn().await;
    let setup = two_slices(&app).await;
    // Four nodes, all held; one GPR waits.
    let held =
        create_gpr(&app, &setup.token_a, &setup.slice_a, "held", serde_json::json!({ "nodeCount": 4, "duration": "2h", "preemptible": false })).await;
    let held = held["id"].as_str().expect("id").to_owned();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let gpr = "query($id: ID!) { gpr(id: $id) { phase startNoLaterThan } }";
    while app.ok(&app.admin_token, gpr, serde_json::json!({ "id": held })).await["gpr"]["phase"] != "PROVISIONED" {
        assert!(tokio::time::Instant::now() < deadline, "not provisioned");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let waiting = create_gpr(&app, &setup.token_b, &setup.slice_b, "waiting", serde_json::json!({ "nodeCount": 1, "duration": "1h" })).await;
    let waiting = waiting["id"].as_str().expect("id").to_owned();
    while app.ok(&app.admin_token, gpr, serde_json::json!({ "id": waiting })).await["gpr"]["startNoLaterThan"].is_null() {
        assert!(tokio::time::Instant::now() < deadline, "no promise");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let cli = Cli::new();
    let token_file = cli.config.with_file_name("token");
    std::fs::create_dir_all(token_file.parent().expect("a folder")).expect("a folder");
    std::fs::write(&token_file, &app.admin_token).expect("the token file");
    let login = cli.run(&["login", "--server", &app.url(""), "--token-file", token_file.to_str().expect("a path")]).await;
    assert!(login.status.success(), "{}", String::from_utf8_lossy(&login.stderr));
    let pool = format!("c1/p5.48xlarge/{SHAPE_H100}=1");
    let moves = cli.json(&["what-if", "--add-nodes", &pool]).await;
    let moved = moves.as_array().and_then(|m| m.iter().find(|m| m["gpr"]["id"] == waiting.as_str())).cloned();
    assert!(moved.is_some_and(|m| m["promiseShiftSeconds"].as_i64().is_some_and(|s| s < 0)), "one more node starts it sooner: {moves}");
    let table = cli.run(&["what-if", "--add-nodes", &pool]).await;
    assert!(String::from_utf8_lossy(&table.stdout).contains("waiting"), "{}", String::from_utf8_lossy(&table.stdout));
    // A malformed change is a usage error (2); no change at all too.
    cli.fails(&["what-if", "--add-nodes", "c1=2"], 2).await;
    cli.fails(&["what-if"], 2).await;
    app.finish().await;
}
