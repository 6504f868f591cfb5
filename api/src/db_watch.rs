//! Whether PostgreSQL answers. A server that is down refuses connections and requests fail at
//! once; one that accepts connections and never answers (a hung server, a black-holed network)
//! would hold every request until TCP gives up. A probe on its own connection, outside the
//! pool (so a busy pool is not mistaken for a hung server), asks `SELECT 1` several times a
//! second with a deadline; while it gets no answer, requests in flight and new ones are
//! answered `SERVICE_UNAVAILABLE` (503, `Retry-After`) instead of waiting.

use sea_orm::DatabaseConnection;
use sea_orm::sqlx::postgres::{PgConnectOptions, PgConnection};
use sea_orm::sqlx::{Connection, Executor};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// How often the probe asks.
const EVERY: Duration = Duration::from_millis(250);
/// How long an answer may take before the server counts as not answering. With [`EVERY`], a
/// hung server is noticed within about 1.5 s, so requests fail inside the 2 s the README
/// promises.
const DEADLINE: Duration = Duration::from_millis(1200);
/// The first probe's deadline: it opens its connection while the replica (and often the machine)
/// is busy starting, and a slow first answer is not a hung server. Until it answers, requests
/// are let through (the gateway has just run its migrations on that server).
const FIRST_DEADLINE: Duration = Duration::from_secs(5);

pub struct DbWatch {
    answering: watch::Sender<bool>,
}

impl DbWatch {
    /// A watch of `db` and the probe that keeps it (PostgreSQL only; `None` for SQLite, which
    /// cannot hang this way). The probe runs until the watch is dropped.
    pub fn new(db: &DatabaseConnection) -> Option<(Arc<Self>, impl Future<Output = ()> + Send + 'static)> {
        if db.get_database_backend() != sea_orm::DbBackend::Postgres {
            return None;
        }
        let options = db.get_postgres_connection_pool().connect_options().as_ref().clone();
        let watch = Arc::new(Self { answering: watch::Sender::new(true) });
        let probing = probe(options, Arc::downgrade(&watch));
        Some((watch, probing))
    }

    /// Whether the last probe got its answer in time.
    pub fn answering(&self) -> bool {
        *self.answering.borrow()
    }

    /// Resolves once the database stops answering (at once if it is not answering now).
    pub async fn silent(&self) {
        let mut answering = self.answering.subscribe();
        if answering.wait_for(|answering| !answering).await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

async fn probe(options: PgConnectOptions, watch: std::sync::Weak<DbWatch>) {
    let mut connection: Option<PgConnection> = None;
    let mut deadline = FIRST_DEADLINE;
    let mut ticks = tokio::time::interval(EVERY);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(watch) = watch.upgrade() else { return };
        let answered = tokio::time::timeout(deadline, async {
            if connection.is_none() {
                connection = Some(PgConnection::connect_with(&options).await?);
            }
            match connection.as_mut() {
                Some(live) => live.execute("SELECT 1").await.map(|_| ()),
                None => Ok(()),
            }
        })
        .await;
        let ok = matches!(answered, Ok(Ok(())));
        if ok {
            deadline = DEADLINE;
        } else {
            // A connection that timed out mid-query is in an unknown state: start afresh.
            connection = None;
        }
        watch.answering.send_if_modified(|answering| {
            let changed = *answering != ok;
            if changed {
                if ok {
                    tracing::info!("the database answers again");
                } else {
                    tracing::warn!(deadline_ms = DEADLINE.as_millis() as u64, "the database does not answer; requests get 503 until it does");
                }
            }
            *answering = ok;
            changed
        });
    }
}
