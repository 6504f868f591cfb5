//! The documented example scripts in `examples/` run against a real `egs serve --demo`: the
//! shell one (curl and jq) provisions a GPR, the Python one (the `gql` client, installed into a
//! virtual environment kept in the target directory) reports a slice's GPRs and events.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("the workspace root").to_path_buf()
}

/// `egs serve --demo` on a free loopback port, stopped on drop.
struct Demo {
    child: tokio::process::Child,
    url: String,
    dir: tempfile::TempDir,
}

impl Demo {
    async fn start() -> Demo {
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("its address").port();
        let dir = tempfile::tempdir().expect("temp dir");
        let child = tokio::process::Command::new(egs_tests::cluster::egs_binary(false))
            .args(["serve", "--demo", "--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
            .arg(dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("egs serve starts");
        let url = format!("http://127.0.0.1:{port}");
        let client = reqwest::Client::new();
        let token = dir.path().join("demo-tokens").join("dave.token");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while !(token.exists() && client.get(format!("{url}/readyz")).send().await.is_ok_and(|r| r.status().is_success())) {
            assert!(tokio::time::Instant::now() < deadline, "egs serve --demo did not come up");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        Demo { child, url, dir }
    }

    fn token(&self, user: &str) -> String {
        std::fs::read_to_string(self.dir.path().join("demo-tokens").join(format!("{user}.token"))).expect("a demo token").trim().to_owned()
    }

    async fn run(&self, program: &Path, args: &[&str], user: &str) -> Output {
        let run = tokio::process::Command::new(program)
            .args(args)
            .env("EGS_SERVER", &self.url)
            .env("EGS_TOKEN", self.token(user))
            .current_dir(root().join("examples"))
            .kill_on_drop(true)
            .output();
        tokio::time::timeout(Duration::from_secs(120), run).await.expect("the example finishes").expect("the example runs")
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[tokio::test]
async fn the_example_scripts_work_against_the_demo() {
    assert!(
        std::process::Command::new("jq").arg("--version").output().is_ok_and(|o| o.status.success()),
        "the shell example needs jq (apt-get install jq)"
    );
    let python =
        tokio::task::spawn_blocking(|| egs_tests::python_venv("examples-venv", "gql", &["gql[requests]>=3.5,<4"])).await.expect("the venv is made");
    let demo = Demo::start().await;
    let bash = PathBuf::from("bash");

    // The shell script: wait times, a GPR in dave's idle slice, provisioned.
    let out = demo.run(&bash, &["create-gpr.sh", "inference", "example-run", "1", "1h"], "dave").await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "create-gpr.sh failed: {stdout}{stderr}");
    assert!(stdout.contains("Wait times for 1 node(s) for 1h in inference") && stdout.contains("NVIDIA-L40S"), "{stdout}");
    assert!(stdout.contains("Provisioned on "), "{stdout}");
    // Refused clearly: a slice that is not dave's, and an impossible ask.
    let out = demo.run(&bash, &["create-gpr.sh", "nlp-research", "not-mine"], "dave").await;
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).1.contains("no slice named nlp-research"), "{:?}", text(&out));
    let out = demo.run(&bash, &["create-gpr.sh", "inference", "Bad Name", "1", "1h"], "dave").await;
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out).1.contains("refused: input.name"), "{:?}", text(&out));

    // The Python report, with the gql client.
    let out = demo.run(&python, &["gpr_report.py", "nlp-research"], "alice").await;
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "gpr_report.py failed: {stdout}{stderr}");
    assert!(stdout.contains("GPR(s) in nlp-research") && stdout.contains("llama-70b-finetune") && stdout.contains("PROVISIONED"), "{stdout}");
    assert!(stdout.contains("Latest events:") && stdout.contains("CREATED"), "{stdout}");
    let out = demo.run(&python, &["gpr_report.py", "vision"], "alice").await;
    assert_eq!(out.status.code(), Some(1), "alice is not in vision: {:?}", text(&out));
}
