//! `egs`: telemetry → settings → command.

use clap::Parser;
use egs_api::settings::{Cli, Command, TokenCommand};
use egs_api::{Application, bootstrap, cli};
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(EnvFilter::try_from_env("EGS_LOG").unwrap_or_else(|_| EnvFilter::new("info")))
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Serve(settings) => serve(settings).await,
        Command::Migrate(storage) => cli::migrate(storage).await,
        Command::PrintSchema => {
            cli::print_schema();
            Ok(())
        }
        Command::Token { command: TokenCommand::Create(args) } => {
            println!("{}", cli::create_token(args).await?);
            Ok(())
        }
    }
}

async fn serve(settings: egs_api::settings::ServeArgs) -> anyhow::Result<()> {
    let data_dir = settings.storage.data_dir.clone();
    let app = Application::build(settings).await?;
    let addr = app.local_addr();
    if let Some(token) = &app.admin_token {
        // Printed once, on the start that created it; kept (0600) in the data dir.
        println!("\nBootstrap admin token (also in {}):\n\n{token}\n", bootstrap::admin_token_path(&data_dir).display());
    }
    tracing::info!(listen = %addr, "EGS is serving: playground at http://{addr}/graphql");
    app.run_until_stopped(shutdown_signal()).await?;
    tracing::info!("stopped");
    Ok(())
}

/// Completes on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let interrupt = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::error!(error = %e, "failed to listen for SIGINT");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::error!(error = %e, "failed to listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => tracing::info!("SIGINT received; shutting down"),
        () = terminate => tracing::info!("SIGTERM received; shutting down"),
    }
}
