//! The SQLite database shared by the service's stores (snapshots, credits, keys): one file, opened the same way
//! by each store.
//!
//! - a small pool of connections (deadpool), each in WAL mode with a busy timeout, so readers never wait for the
//!   writer and writers queue instead of failing;
//! - every statement runs on tokio's blocking pool ([`SqlitePool::run`]), never on an async worker thread;
//! - each store migrates its own tables ([`SqlitePool::migrate`]), tracked per component in `schema_versions`.
//!
//! Not here: any table of a store, any query. A PostgreSQL backend would be another crate at this level.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let dir = tempfile::tempdir()?;
//! let pool = sqlite_pool::SqlitePool::open(&dir.path().join("example.db")).await?;
//! pool.migrate("example", &["CREATE TABLE notes (text TEXT NOT NULL)"]).await?;
//! pool.run(|conn| conn.execute("INSERT INTO notes VALUES ('hi')", [])).await?;
//! let count: i64 = pool.run(|conn| conn.query_row("SELECT count(*) FROM notes", [], |r| r.get(0))).await?;
//! assert_eq!(count, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```
#![deny(missing_docs)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use deadpool_sqlite::{Config, Hook, HookError, Pool, Runtime};
pub use rusqlite;

/// How long a statement waits for another connection's write lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Applied to every new connection. `synchronous = NORMAL` is durable across application crashes in WAL mode
/// (only a power loss may drop the last commits). Automatic checkpoints are off: the checkpoint (and its fsync)
/// would run inside whichever commit crossed the WAL size limit and stall every writer queued behind it;
/// [`CHECKPOINT_EVERY`] runs them beside the writers instead. WAL itself is set once per file by
/// [`switch_to_wal`], not here.
const CONNECTION_PRAGMAS: &str =
    "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 0;";

/// How often a background task copies the WAL into the database file (a passive checkpoint: it never waits
/// for or blocks readers and writers).
pub const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// An exclusive claim on a SQLite file by one serving process ([`ServerLock::acquire`]).
///
/// A server that keeps state of its requests in memory (credit holds) must be the only one serving its file:
/// holding this proves it, and so proves that anything such state left in the file belongs to no running
/// request. The lock is an OS file lock on `<db>.lock`, dropped by the operating system when the process ends,
/// even by SIGKILL. Several servers share one database through a server database engine, not through SQLite.
#[derive(Debug)]
pub struct ServerLock {
    _file: std::fs::File,
}

/// Why [`ServerLock::acquire`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LockError {
    /// Another process holds the lock.
    #[error(
        "another company-data server is serving {0}; stop it first, or give this one its own database"
    )]
    Held(PathBuf),
    /// The lock file could not be created or locked.
    #[error("cannot lock {path}: {source}")]
    Io {
        /// The lock file.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
}

impl ServerLock {
    /// Takes the lock on `<db>.lock` for as long as the value lives.
    ///
    /// # Errors
    /// [`LockError::Held`] when another process holds it, [`LockError::Io`] when the lock file cannot be
    /// created.
    pub fn acquire(db: &Path) -> Result<Self, LockError> {
        let mut path = db.as_os_str().to_owned();
        path.push(".lock");
        let path = PathBuf::from(path);
        let io = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => Ok(Self { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(LockError::Held(db.to_owned())),
            Err(std::fs::TryLockError::Error(error)) => Err(io(error)),
        }
    }
}

/// A failure of the database itself: opening, pooling, or a statement.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqliteError {
    /// The database file could not be opened or set up.
    #[error("could not open the SQLite database {path}: {reason}")]
    Open {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// No connection could be had from the pool, the blocking task failed, or the schema is newer than the
    /// program.
    #[error("no SQLite connection available: {0}")]
    Pool(String),
    /// A statement failed.
    #[error("SQLite statement failed: {0}")]
    Statement(#[from] rusqlite::Error),
}

/// A pool of connections to one SQLite file. Cheap to clone; clones share the pool.
#[derive(Clone, Debug)]
pub struct SqlitePool {
    pool: Pool,
    /// Stops the checkpoint task when the last clone is dropped.
    _checkpoints: std::sync::Arc<AbortOnDrop>,
    /// Writers of this process queue here, so they wait in order instead of in SQLite's busy handler, which
    /// sleeps in growing steps (up to 100 ms) and turns a burst of concurrent writes into long stalls.
    writer: std::sync::Arc<tokio::sync::Mutex<()>>,
}

impl SqlitePool {
    /// Opens (creating if needed) the database file and checks that a connection works.
    ///
    /// # Errors
    /// [`SqliteError::Open`] when the file cannot be opened or is not a SQLite database.
    pub async fn open(path: &Path) -> Result<Self, SqliteError> {
        let open_error = |reason: String| SqliteError::Open {
            path: path.to_owned(),
            reason,
        };
        let file = path.to_owned();
        tokio::task::spawn_blocking(move || switch_to_wal(&file))
            .await
            .map_err(|e| open_error(e.to_string()))?
            .map_err(|e| open_error(e.to_string()))?;
        let pool = Config::new(path)
            .builder(Runtime::Tokio1)
            .map_err(|e| open_error(e.to_string()))?
            .post_create(Hook::async_fn(|conn, _| {
                Box::pin(async move {
                    conn.interact(|conn| {
                        conn.busy_timeout(BUSY_TIMEOUT)?;
                        conn.execute_batch(CONNECTION_PRAGMAS)
                    })
                    .await
                    .map_err(|e| HookError::message(e.to_string()))?
                    .map_err(HookError::Backend)
                })
            }))
            .build()
            .map_err(|e| open_error(e.to_string()))?;
        let checkpoints = tokio::spawn(checkpoint_regularly(pool.clone()));
        let pool = Self {
            pool,
            _checkpoints: std::sync::Arc::new(AbortOnDrop(checkpoints.abort_handle())),
            writer: std::sync::Arc::default(),
        };
        pool.run(|conn| conn.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(())))
            .await
            .map_err(|e| open_error(e.to_string()))?;
        Ok(pool)
    }

    /// Runs `work`, which writes, like [`SqlitePool::run`] but one at a time within this process. Other
    /// processes on the same file are still serialized by SQLite's lock and busy timeout.
    ///
    /// # Errors
    /// As [`SqlitePool::run`].
    pub async fn write<F, R>(&self, work: F) -> Result<R, SqliteError>
    where
        F: FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<R> + Send + 'static,
        R: Send + 'static,
    {
        let _turn = self.writer.lock().await;
        self.run(work).await
    }

    /// Runs `work` with a connection on the blocking pool and returns its result.
    ///
    /// # Errors
    /// [`SqliteError::Pool`] when no connection can be had, [`SqliteError::Statement`] when `work` fails.
    pub async fn run<F, R>(&self, work: F) -> Result<R, SqliteError>
    where
        F: FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<R> + Send + 'static,
        R: Send + 'static,
    {
        let conn = self
            .pool
            .get()
            .await
            .map_err(|e| SqliteError::Pool(e.to_string()))?;
        record_pool_use("sqlite", self.pool.status());
        conn.interact(work)
            .await
            .map_err(|e| SqliteError::Pool(e.to_string()))?
            .map_err(Into::into)
    }

    /// Brings `component`'s tables up to date: runs the steps of `migrations` not yet applied, each in its own
    /// transaction, and records the count in `schema_versions`. Steps are append-only: never edit a shipped one.
    ///
    /// # Errors
    /// [`SqliteError`] when a step fails (that step is rolled back) or the database is newer than this code.
    pub async fn migrate(
        &self,
        component: &'static str,
        migrations: &'static [&'static str],
    ) -> Result<(), SqliteError> {
        let outcome = self.write(move |conn| {
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version INTEGER NOT NULL)",
                [],
            )?;
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let applied: usize = tx
                .query_row("SELECT version FROM schema_versions WHERE component = ?1", [component], |r| {
                    r.get::<_, i64>(0)
                })
                .map_or(Ok(0), |v| usize::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(0, v)))?;
            if applied > migrations.len() {
                return Ok(Err(applied));
            }
            for step in &migrations[applied..] {
                tx.execute_batch(step)?;
            }
            tx.execute(
                "INSERT INTO schema_versions (component, version) VALUES (?1, ?2)
                 ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                rusqlite::params![component, i64::try_from(migrations.len()).unwrap_or(i64::MAX)],
            )?;
            tx.commit().map(Ok)
        })
        .await?;
        outcome.map_err(|applied| {
            SqliteError::Pool(format!(
                "the database holds {component} schema version {applied}, newer than this program's {}; \
                 run the newer program or restore a backup",
                migrations.len()
            ))
        })
    }
}

/// Puts the file in WAL mode (which then persists in the file), once, on one connection, before the pool opens
/// any. Two connections switching a new file at once deadlock: each holds a read lock and wants the exclusive
/// one, so SQLite fails one at once with "database is locked" instead of calling its busy handler. Another
/// process switching the same file can cause the same, so that case is retried until [`BUSY_TIMEOUT`].
fn switch_to_wal(path: &Path) -> rusqlite::Result<()> {
    let conn = rusqlite::Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
    loop {
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            outcome => return outcome.map(drop),
        }
    }
}

/// Aborts a background task when dropped.
#[derive(Debug)]
struct AbortOnDrop(tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Passive checkpoints every [`CHECKPOINT_EVERY`] on a connection of the pool, outside the writer's turn.
async fn checkpoint_regularly(pool: Pool) {
    let mut every = tokio::time::interval(CHECKPOINT_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        let Ok(conn) = pool.get().await else { continue };
        let outcome = conn
            .interact(|conn| conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(())))
            .await;
        if let Ok(Err(error)) = outcome {
            tracing::warn!(%error, "WAL checkpoint failed; it is retried");
        }
    }
}

/// Sets `company_data_db_pool_connections{engine, state}` (`in_use`, `idle`, `waiting`) from a pool's status,
/// sampled each time a connection is handed out.
fn record_pool_use(engine: &'static str, status: deadpool_sqlite::Status) {
    let in_use = status.size.saturating_sub(status.available);
    for (state, count) in [
        ("in_use", in_use),
        ("idle", status.available),
        ("waiting", status.waiting),
    ] {
        metrics::gauge!("company_data_db_pool_connections", "engine" => engine, "state" => state)
            .set(count as f64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_server_lock_per_file_until_it_is_dropped() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("served.db");
        let first = ServerLock::acquire(&db).expect("free");
        let refused = ServerLock::acquire(&db).expect_err("held");
        assert!(
            matches!(refused, LockError::Held(ref path) if path == &db),
            "{refused}"
        );
        assert!(refused.to_string().contains("served.db"), "{refused}");
        ServerLock::acquire(&dir.path().join("other.db")).expect("another file is free");
        drop(first);
        ServerLock::acquire(&db).expect("free again");
    }

    #[tokio::test]
    async fn wal_mode_and_idempotent_migrations() {
        const STEPS: &[&str] = &["CREATE TABLE a (x INTEGER)", "CREATE TABLE b (y INTEGER)"];
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.db");
        let pool = SqlitePool::open(&path).await.expect("opens");
        let mode: String = pool
            .run(|c| c.query_row("PRAGMA journal_mode", [], |r| r.get(0)))
            .await
            .expect("pragma");
        assert_eq!(mode, "wal");
        pool.migrate("test", &STEPS[..1]).await.expect("first step");
        pool.migrate("test", STEPS).await.expect("second step only");
        pool.migrate("test", STEPS)
            .await
            .expect("nothing left to do");
        let err = pool
            .migrate("test", &STEPS[..1])
            .await
            .expect_err("database is newer");
        assert!(err.to_string().contains("newer"), "{err}");
    }

    /// The start-up race that failed CI: several pools (like a server's stores and a CLI beside it) opening one
    /// new file at the same moment all get WAL, none "database is locked".
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn many_pools_opening_one_new_file_at_once_all_succeed() {
        for round in 0..20 {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join(format!("race-{round}.db"));
            let opens: Vec<_> = (0..8)
                .map(|_| {
                    let path = path.clone();
                    tokio::spawn(async move { SqlitePool::open(&path).await })
                })
                .collect();
            for open in opens {
                let pool = open
                    .await
                    .expect("task")
                    .expect("opens without a lock error");
                pool.migrate("race", &["CREATE TABLE t (x INTEGER)"])
                    .await
                    .expect("migrates");
            }
        }
    }

    #[tokio::test]
    async fn a_file_that_is_not_a_database_is_refused() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("not.db");
        std::fs::write(
            &path,
            "this is not sqlite, just text that is long enough to have a header......",
        )
        .expect("write");
        let err = SqlitePool::open(&path).await.expect_err("refused");
        assert!(matches!(err, SqliteError::Open { .. }), "{err}");
    }
}
