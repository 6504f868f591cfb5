//! Opening the database (SQLite file by default, PostgreSQL by URL) and migrating it.

use crate::settings::StorageArgs;
use anyhow::Context;
use egs_migration::{Migrator, MigratorTrait};
use prometheus_client::metrics::counter::Counter;
use sea_orm::{ConnectOptions, Database, DatabaseConnection};
use std::time::Duration;

/// How long a SQLite writer waits for another before giving up.
const SQLITE_BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// One connection: SQLite serialises writers anyway, and with several connections a
/// transaction that reads and then writes fails outright (SQLITE_BUSY_SNAPSHOT, which the
/// busy timeout does not retry) whenever the scheduler loop commits in between.
const SQLITE_MAX_CONNECTIONS: u32 = 1;
/// Read-only connections beside the writer for queries (the default of `--sqlite-readers`): in
/// WAL mode readers neither wait for the writer nor hold it up, so a page of 100 rows no
/// longer queues behind every other request on the one connection.
pub const SQLITE_READERS: u32 = 4;
const POSTGRES_MAX_CONNECTIONS: u32 = 20;
/// How long a request waits for a PostgreSQL connection before it fails with
/// `SERVICE_UNAVAILABLE`: with the server down, sqlx keeps retrying the connect until then.
const POSTGRES_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(2);
/// Connections queries and subscriptions read through on PostgreSQL, beside the writer's
/// pool: thousands of dashboards reconnecting at once queue their setup reads here instead of
/// taking every connection from agents' reports and the scheduler (which then failed after the
/// writer pool's 2 s).
const POSTGRES_READ_CONNECTIONS: u32 = 8;
/// A read waits this long for one of those: a reconnect storm is seconds of setup reads. A
/// server that is down or hung is not waited out: the probe ([`crate::db_watch`]) answers
/// `SERVICE_UNAVAILABLE` within 2 s.
const POSTGRES_READ_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);
/// SQLite's one connection may wait on a long write (the busy timeout is 10 s too).
const SQLITE_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);

/// Counts SQL statements sent, for `/metrics` and for tests that bound statements per request.
#[derive(Clone, Default)]
pub struct StatementCounter(pub Counter);

impl StatementCounter {
    pub fn get(&self) -> u64 {
        self.0.get()
    }
}

pub fn database_url(storage: &StorageArgs) -> String {
    match &storage.database_url {
        Some(url) => url.expose().to_owned(),
        None => format!("sqlite://{}?mode=rwc", storage.data_dir.join("egs.db").display()),
    }
}

/// Connects, creating the SQLite file (and data dir) when needed.
pub async fn connect(storage: &StorageArgs, counter: &StatementCounter) -> anyhow::Result<DatabaseConnection> {
    let url = database_url(storage);
    let sqlite = url.starts_with("sqlite:");
    if sqlite && storage.database_url.is_none() {
        crate::bootstrap::create_private_dir(&storage.data_dir)?;
        // The database and its journals are the owner's only: SQLite gives the WAL and shared
        // memory files the main file's mode, so it is created 0600 before SQLite opens it.
        let file = storage.data_dir.join("egs.db");
        crate::bootstrap::write_private_file_if_missing(&file)?;
        let journals = ["egs.db", "egs.db-wal", "egs.db-shm"].map(|f| storage.data_dir.join(f));
        crate::bootstrap::restrict_files(&journals)?;
    }
    let mut options = ConnectOptions::new(url);
    let (max_connections, acquire_timeout) =
        if sqlite { (SQLITE_MAX_CONNECTIONS, SQLITE_ACQUIRE_TIMEOUT) } else { (POSTGRES_MAX_CONNECTIONS, POSTGRES_ACQUIRE_TIMEOUT) };
    options.sqlx_logging(false).connect_timeout(Duration::from_secs(10)).acquire_timeout(acquire_timeout).max_connections(max_connections);
    if sqlite {
        options.map_sqlx_sqlite_opts(|opts| {
            opts.journal_mode(sea_orm::sqlx::sqlite::SqliteJournalMode::Wal)
                .synchronous(sea_orm::sqlx::sqlite::SqliteSynchronous::Normal)
                .busy_timeout(SQLITE_BUSY_TIMEOUT)
                .foreign_keys(true)
        });
    }
    let mut db = Database::connect(options).await.context("failed to connect to the database")?;
    let counter = counter.0.clone();
    db.set_metric_callback(move |_| {
        counter.inc();
    });
    Ok(db)
}

/// Where queries and subscriptions read. SQLite file: a pool of `--sqlite-readers` read-only
/// connections beside the writer ([`connect`] must have created and migrated the file).
/// PostgreSQL: a pool of its own ([`POSTGRES_READ_CONNECTIONS`]). An in-memory SQLite database
/// that other connections could not see, or `--sqlite-readers 0`: the writer's own pool.
pub async fn connect_reads(storage: &StorageArgs, counter: &StatementCounter, db: &DatabaseConnection) -> anyhow::Result<DatabaseConnection> {
    let url = database_url(storage);
    let sqlite = url.starts_with("sqlite:");
    if sqlite && (storage.sqlite_readers == 0 || url.contains(":memory:") || url.contains("mode=memory")) {
        return Ok(db.clone());
    }
    let mut options = ConnectOptions::new(url);
    options.sqlx_logging(false).connect_timeout(Duration::from_secs(10));
    if sqlite {
        options
            .acquire_timeout(SQLITE_ACQUIRE_TIMEOUT)
            .max_connections(storage.sqlite_readers)
            .map_sqlx_sqlite_opts(|opts| opts.read_only(true).create_if_missing(false).busy_timeout(SQLITE_BUSY_TIMEOUT));
    } else {
        options.acquire_timeout(POSTGRES_READ_ACQUIRE_TIMEOUT).max_connections(POSTGRES_READ_CONNECTIONS);
    }
    let mut reads = Database::connect(options).await.context("failed to open the database for reading")?;
    let counter = counter.0.clone();
    reads.set_metric_callback(move |_| {
        counter.inc();
    });
    Ok(reads)
}

/// Connections of the scheduler leader's own pool on PostgreSQL: the loop reads and writes on
/// one at a time; the second is a spare for a reconnect.
const POSTGRES_LEADER_CONNECTIONS: u32 = 2;

/// The scheduler leader's own pool on PostgreSQL (see [`egs_domain::lifecycle::LeaderPool`]),
/// opened lazily on the scheduler's thread; `None` on SQLite, whose one writer it shares.
pub fn leader_pool(storage: &StorageArgs, counter: &StatementCounter) -> Option<egs_domain::lifecycle::LeaderPool> {
    let url = database_url(storage);
    if url.starts_with("sqlite:") {
        return None;
    }
    let mut options = ConnectOptions::new(url);
    options
        .sqlx_logging(false)
        .connect_timeout(Duration::from_secs(10))
        .acquire_timeout(POSTGRES_ACQUIRE_TIMEOUT)
        .max_connections(POSTGRES_LEADER_CONNECTIONS)
        .connect_lazy(true);
    Some(egs_domain::lifecycle::LeaderPool { options, statements: counter.0.clone() })
}

/// The advisory lock replicas take around migrations on PostgreSQL ("EGS" + "MIGR").
const MIGRATION_LOCK: i64 = 0x4547_5300_4d49_4752;

/// Applies pending migrations; returns how many there were. On PostgreSQL, replicas starting
/// together take turns through an advisory lock: the first applies them, the others wait and
/// then find nothing left to do (sea-orm's migrator takes no lock of its own).
pub async fn migrate(db: &DatabaseConnection) -> anyhow::Result<usize> {
    let lock = match db.get_database_backend() {
        sea_orm::DatabaseBackend::Postgres => {
            // A session lock on one connection held aside; the migrations run on the others.
            let mut held = db.get_postgres_connection_pool().acquire().await.context("failed to reserve a connection for the migration lock")?;
            sea_orm::sqlx::query("SELECT pg_advisory_lock($1)")
                .bind(MIGRATION_LOCK)
                .execute(&mut *held)
                .await
                .context("failed to take the migration lock")?;
            Some(held)
        }
        _ => None,
    };
    let result = async {
        let pending = Migrator::get_pending_migrations(db).await.context("failed to read applied migrations")?.len();
        Migrator::up(db, None).await.context("failed to apply migrations")?;
        Ok(pending)
    }
    .await;
    if let Some(mut held) = lock {
        // Closing the connection would release it too; unlocking keeps the connection usable.
        let _ = sea_orm::sqlx::query("SELECT pg_advisory_unlock($1)").bind(MIGRATION_LOCK).execute(&mut *held).await;
    }
    result
}

/// Whether every known migration has been applied (for `/readyz`).
pub async fn migrations_applied(db: &DatabaseConnection) -> Result<bool, sea_orm::DbErr> {
    Ok(Migrator::get_pending_migrations(db).await?.is_empty())
}
