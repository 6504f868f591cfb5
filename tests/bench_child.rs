//! Benches that run gateways in child processes (this binary again), so a gateway's CPU and
//! memory are measured alone: the child serves and tells the driver how to reach it in one
//! JSON line on stdout, then serves until the driver closes its stdin.

use crate::TestApp;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::io::{BufRead, Read, Write};
use std::process::{Child, Command, Stdio};

/// Set in a child: run the gateway, not the driver.
const ROLE: &str = "EGS_BENCH_ROLE";

/// A bench's `main`: `child` in a child process, `driver` otherwise.
pub fn main<C, D>(child: impl FnOnce() -> C, driver: impl FnOnce() -> D)
where
    C: std::future::Future<Output = ()>,
    D: std::future::Future<Output = ()>,
{
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a tokio runtime");
    if is_child() {
        runtime.block_on(child());
    } else {
        runtime.block_on(driver());
    }
}

/// Whether this process is a bench's gateway child.
pub fn is_child() -> bool {
    std::env::var(ROLE).as_deref() == Ok("gateway")
}

/// In the child: tells the driver `hello` (one JSON line), serves until stdin closes, then
/// stops `app`.
pub async fn announce_and_serve<T: Serialize>(app: TestApp, hello: &T) {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", serde_json::to_string(hello).expect("JSON")).expect("stdout");
    out.flush().expect("stdout");
    drop(out);
    let _ = tokio::task::spawn_blocking(|| std::io::stdin().read_to_end(&mut Vec::new())).await;
    app.finish().await;
}

/// In the driver: starts a child with `env` set and returns it with its hello. Dropping the
/// child's stdin (`child.stdin.take()`) stops it.
pub fn start<T: DeserializeOwned>(env: &[(&str, String)]) -> (Child, T) {
    let mut command = Command::new(std::env::current_exe().expect("this binary's path"));
    command.env(ROLE, "gateway").envs(env.iter().map(|(k, v)| (*k, v))).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
    let mut child = command.spawn().expect("a gateway child starts");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("child stdout")).read_line(&mut line).expect("the child's line");
    let hello: T = serde_json::from_str(&line).unwrap_or_else(|e| panic!("a gateway child did not start ({e}): {line}"));
    (child, hello)
}
