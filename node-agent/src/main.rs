//! `egs-node-agent`: parse the config, set up logging, run the agent until SIGTERM or Ctrl-C.
//! Everything else is in the library.

use anyhow::Context;
use clap::Parser;
use egs_node_agent::Config;
use std::process::ExitCode;

fn main() -> ExitCode {
    let config = Config::parse();
    init_logging(config.log_json);
    match run(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            tracing::error!(error = format!("{error:#}"), "the agent stopped");
            eprintln!("egs-node-agent: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(config: Config) -> anyhow::Result<()> {
    // One thread: the agent's work is a few milliseconds a second, and a multi-threaded runtime
    // would start a worker per core on 200-core GPU nodes. NVML calls go to the blocking pool.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("failed to start the async runtime")?;
    runtime.block_on(egs_node_agent::run(config, shutdown_signal()))?;
    Ok(())
}

/// Logs go to stderr (stdout carries `--print`'s batches): text, or JSON lines with `--log-json`.
fn init_logging(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("EGS_AGENT_LOG").unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json {
        builder.json().init();
    } else {
        builder.init();
    }
}

/// SIGTERM (Kubernetes stopping the pod) or Ctrl-C.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!(error = %error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
