//! Building and running the gateway: [`Application::build`] wires the state ([`state`]) and
//! binds the listener (port 0 works, so tests get a free port); [`Application::run_until_stopped`]
//! starts the background loops ([`background`]), serves the routes ([`routes`]) until shutdown,
//! then stops the loops.

pub mod background;
mod routes;
mod state;

use anyhow::Context;
use axum::Router;
use background::{Background, Loops};
use egs_domain::clock::SystemClock;
use egs_domain::ports::Clock;
pub use state::AppState;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;

pub struct Application {
    listener: TcpListener,
    router: Router,
    state: AppState,
    /// What runs beside the server, started with it.
    loops: Loops,
    /// The bootstrap admin token, when this start created the admin (first start).
    pub admin_token: Option<String>,
}

impl Application {
    pub async fn build(settings: crate::settings::ServeArgs) -> anyhow::Result<Self> {
        Self::build_with_clock(settings, Arc::new(SystemClock)).await
    }

    /// Like [`Application::build`], with the clock the lifecycle reads (tests move it forward).
    pub async fn build_with_clock(settings: crate::settings::ServeArgs, clock: Arc<dyn Clock>) -> anyhow::Result<Self> {
        let wired = state::wire(settings, clock).await?;
        Ok(Self { listener: wired.listener, router: wired.router, state: wired.state, loops: wired.loops, admin_token: wired.admin_token })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr().unwrap_or_else(|_| SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Where `/metrics` is served without a token, with `--metrics-listen`.
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.loops.metrics_server.as_ref().and_then(|(listener, _)| listener.local_addr().ok())
    }

    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves until `shutdown` completes, then lets in-flight requests finish. The background
    /// loops run alongside (the scheduler leads only while this replica holds the lease, and
    /// hands the lease back on the way out).
    pub async fn run_until_stopped(self, shutdown: impl Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        let background = Background::start(&self.state.app, self.loops)?;
        let served = axum::serve(self.listener, self.router)
            .with_graceful_shutdown(self.state.sockets.shut_down_on(shutdown))
            .await
            .context("the HTTP server failed");
        background.stop().await;
        // Sockets were told to close when shutdown began; let their close frames go out.
        self.state.sockets.closed().await;
        served
    }
}
