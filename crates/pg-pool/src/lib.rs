//! The PostgreSQL database shared by the service's stores when several servers run on one database: opened the
//! same way by each store.
//!
//! - a pool of connections (deadpool), from a `postgres://USER@HOST:PORT/DB` URL; with `?sslmode=require`
//!   (for a database on another machine) TLS through rustls, the server's certificate checked against the
//!   Mozilla roots; otherwise plain (a database on loopback or a private network);
//! - each store migrates its own tables ([`PgPool::migrate`]), tracked per component in `schema_versions`,
//!   under an advisory lock, so servers started at once migrate once; a database whose schema is newer than the
//!   program is refused with a clear message.
//!
//! Not here: any table of a store, any query. The embedded default is `sqlite-pool`.
#![deny(missing_docs)]

use std::sync::Arc;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
pub use deadpool_postgres::{Object, Transaction};
use store_base::{FailureKind, StoreError};
pub use tokio_postgres;
use tokio_postgres::config::SslMode;

/// Connections per pool. Each server holds at most this many connections to the database.
pub const POOL_SIZE: usize = 16;

/// Key of the advisory lock migrations run under (any constant shared by every server).
const MIGRATION_LOCK: i64 = 0x636f_6d70_616e_7964; // "companyd"

/// A failure of the database itself: the URL, connecting, pooling, a statement, or the schema's version.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PgError {
    /// The URL is not a PostgreSQL connection URL.
    #[error(
        "`{0}` is not a PostgreSQL URL; write it as postgres://USER[:PASSWORD]@HOST:PORT/DATABASE[?sslmode=require]"
    )]
    Url(String),
    /// No connection could be had: the server is down or unreachable, the pool is exhausted, or TLS failed.
    #[error("the database is unavailable: {0}")]
    Unavailable(String),
    /// A statement failed; the message is the server's (`duplicate key value violates …`).
    #[error("a database statement failed: {}", statement_detail(.0))]
    Statement(#[from] tokio_postgres::Error),
    /// The database holds a newer schema than this program knows.
    #[error(
        "the database holds {component} schema version {found}, newer than this program's {known}; run the newer \
         program or restore a backup"
    )]
    SchemaNewer {
        /// The store.
        component: &'static str,
        /// The version in the database.
        found: i64,
        /// The version this program knows.
        known: usize,
    },
}

/// The server's own message for a statement it refused, else the driver's.
fn statement_detail(error: &tokio_postgres::Error) -> String {
    error.as_db_error().map_or_else(
        || error.to_string(),
        |db| format!("{} ({})", db.message(), db.code().code()),
    )
}

/// A store's backend error, boxed: a database failure (a driver error, turned into [`PgError::Statement`] so that
/// its message says what the server refused, the driver's own saying only "db error"; or a [`PgError`]) as a
/// [`StoreError`] of its kind ([`PgError::is_unavailable`]), so that callers tell "try again" from "refused"
/// without knowing this driver. Any other error is boxed as it is.
pub fn boxed_error<E>(error: E) -> Box<dyn std::error::Error + Send + Sync>
where
    E: std::error::Error + Send + Sync + 'static,
{
    let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(error);
    let failure = match boxed.downcast::<tokio_postgres::Error>() {
        Ok(driver) => PgError::Statement(*driver),
        Err(other) => match other.downcast::<PgError>() {
            Ok(failure) => *failure,
            Err(other) => return other,
        },
    };
    let kind = if failure.is_unavailable() {
        FailureKind::Unavailable
    } else {
        FailureKind::Refused
    };
    Box::new(StoreError::new(kind, failure))
}

impl PgError {
    /// Whether the failure is the database being unreachable (down, restarting, out of connections), as
    /// opposed to a statement it refused: callers answer the first with "try again".
    pub fn is_unavailable(&self) -> bool {
        match self {
            Self::Unavailable(_) => true,
            Self::Statement(error) => {
                error.is_closed()
                    || error.code().is_none_or(|code| {
                        // Connection exceptions, and the server shutting down, restarting or full.
                        code.code().starts_with("08")
                            || matches!(code.code(), "57P01" | "57P02" | "57P03" | "53300")
                    })
            }
            _ => false,
        }
    }
}

/// A pool of connections to one PostgreSQL database. Cheap to clone; every clone shares the connections.
#[derive(Clone)]
pub struct PgPool {
    pool: Pool,
}

impl std::fmt::Debug for PgPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the URL: it may hold a password.
        f.debug_struct("PgPool")
            .field("size", &self.pool.status().max_size)
            .finish()
    }
}

/// Whether `text` names a PostgreSQL database (`postgres://` or `postgresql://`) rather than a file.
pub fn is_postgres_url(text: &str) -> bool {
    text.starts_with("postgres://") || text.starts_with("postgresql://")
}

/// The options each session starts with: the URL's own `options`, then `jit=off` unless they set `jit`.
///
/// Every statement of the service is short. PostgreSQL compiles a statement with LLVM when the planner expects
/// it to be costly (`jit_above_cost`), and a search over a large store is planned that way: compiling took 100
/// to 300 ms where the statement ran in under 50 (docs/benchmarks.md, section 14), and nothing repays it.
fn session_options(from_url: Option<&str>) -> String {
    match from_url {
        Some(options) if options.contains("jit") => options.to_owned(),
        Some(options) => format!("{options} -c jit=off"),
        None => "-c jit=off".to_owned(),
    }
}

impl PgPool {
    /// Opens a pool on the database `url` names and checks that one connection can be had.
    ///
    /// # Errors
    /// [`PgError::Url`] for a URL that is not PostgreSQL's, [`PgError::Unavailable`] when the server cannot be
    /// reached.
    pub async fn connect(url: &str) -> Result<Self, PgError> {
        if !is_postgres_url(url) {
            return Err(PgError::Url(redacted(url)));
        }
        let mut config: tokio_postgres::Config =
            url.parse().map_err(|_| PgError::Url(redacted(url)))?;
        let options = session_options(config.get_options());
        config.options(&options);
        let manager_config = ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        };
        let manager = if config.get_ssl_mode() == SslMode::Require {
            Manager::from_config(config, tls()?, manager_config)
        } else {
            Manager::from_config(config, tokio_postgres::NoTls, manager_config)
        };
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .build()
            .map_err(|e| PgError::Unavailable(e.to_string()))?;
        let opened = Self { pool };
        drop(opened.client().await?);
        Ok(opened)
    }

    /// A connection from the pool.
    ///
    /// # Errors
    /// [`PgError::Unavailable`].
    pub async fn client(&self) -> Result<Object, PgError> {
        let client = self
            .pool
            .get()
            .await
            .map_err(|e| PgError::Unavailable(e.to_string()))?;
        // `company_data_db_pool_connections{engine, state}`, sampled each time a connection is handed out.
        let status = self.pool.status();
        for (state, count) in [
            ("in_use", status.size.saturating_sub(status.available)),
            ("idle", status.available),
            ("waiting", status.waiting),
        ] {
            metrics::gauge!("company_data_db_pool_connections", "engine" => "postgres", "state" => state)
                .set(count as f64);
        }
        Ok(client)
    }

    /// Runs one statement on a pooled connection and returns its row, if any. The statement is prepared once per
    /// connection and kept (`prepare_cached`), so every later call on that connection is one round trip; an
    /// unprepared statement would cost two (parse, then execute).
    ///
    /// # Errors
    /// [`PgError::Unavailable`], or [`PgError::Statement`] when the database refuses or fails the statement.
    pub async fn query_opt(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Option<tokio_postgres::Row>, PgError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql).await?;
        Ok(client.query_opt(&statement, params).await?)
    }

    /// [`PgPool::query_opt`] for a statement that returns exactly one row.
    ///
    /// # Errors
    /// As [`PgError::Statement`] when it returns none or several.
    pub async fn query_one(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<tokio_postgres::Row, PgError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql).await?;
        Ok(client.query_one(&statement, params).await?)
    }

    /// [`PgPool::query_opt`] for a statement that returns any number of rows.
    ///
    /// # Errors
    /// As [`PgPool::query_opt`].
    pub async fn query(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<tokio_postgres::Row>, PgError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql).await?;
        Ok(client.query(&statement, params).await?)
    }

    /// [`PgPool::query_opt`] for a statement whose rows are not read: how many it changed.
    ///
    /// # Errors
    /// As [`PgPool::query_opt`].
    pub async fn execute(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<u64, PgError> {
        let client = self.client().await?;
        let statement = client.prepare_cached(sql).await?;
        Ok(client.execute(&statement, params).await?)
    }

    /// Brings `component`'s tables to the last of `migrations`, applying the steps not yet applied, in one
    /// transaction under an advisory lock (servers starting at once wait for each other and apply each step once).
    ///
    /// # Errors
    /// [`PgError::SchemaNewer`] when the database has more steps than `migrations`; [`PgError::Statement`] when a
    /// step fails (nothing of the migration is kept); [`PgError::Unavailable`].
    pub async fn migrate(
        &self,
        component: &'static str,
        migrations: &'static [&'static str],
    ) -> Result<(), PgError> {
        let mut client = self.client().await?;
        let transaction = client.transaction().await?;
        transaction
            .execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
            .await?;
        transaction
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS schema_versions (component TEXT PRIMARY KEY, version BIGINT NOT NULL)",
            )
            .await?;
        let applied: i64 = transaction
            .query_opt(
                "SELECT version FROM schema_versions WHERE component = $1",
                &[&component],
            )
            .await?
            .map_or(0, |row| row.get(0));
        let known = migrations.len();
        let applied_steps = usize::try_from(applied).unwrap_or(usize::MAX);
        if applied_steps > known {
            return Err(PgError::SchemaNewer {
                component,
                found: applied,
                known,
            });
        }
        for step in &migrations[applied_steps..] {
            transaction.batch_execute(step).await?;
        }
        let version = i64::try_from(known).unwrap_or(i64::MAX);
        transaction
            .execute(
                "INSERT INTO schema_versions (component, version) VALUES ($1, $2)
                 ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                &[&component, &version],
            )
            .await?;
        transaction.commit().await?;
        if applied_steps < known {
            tracing::info!(component, from = applied, to = known, "migrated");
        }
        Ok(())
    }
}

/// TLS for `sslmode=prefer|require`: rustls with the Mozilla roots (webpki-roots).
fn tls() -> Result<tokio_postgres_rustls::MakeRustlsConnect, PgError> {
    let roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| PgError::Unavailable(format!("TLS: {e}")))?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(tokio_postgres_rustls::MakeRustlsConnect::new(config))
}

/// The URL with any password replaced by `***`, for messages and logs.
pub fn redacted(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme_end), Some(at)) if at > scheme_end => {
            let userinfo = &url[scheme_end + 3..at];
            match userinfo.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme_end + 3], &url[at..]),
                None => url.to_owned(),
            }
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_apart_and_passwords_never_shown() {
        assert!(is_postgres_url("postgres://u@h:5432/db"));
        assert!(is_postgres_url("postgresql://u@h/db"));
        assert!(!is_postgres_url("company-data.db"));
        assert_eq!(
            redacted("postgres://ada:secret@db.example:5432/cd"),
            "postgres://ada:***@db.example:5432/cd"
        );
        assert_eq!(redacted("postgres://ada@db/cd"), "postgres://ada@db/cd");
    }

    #[tokio::test]
    async fn a_file_path_is_not_a_database_url() {
        let refused = PgPool::connect("company-data.db")
            .await
            .expect_err("not a URL");
        assert!(matches!(refused, PgError::Url(_)), "{refused}");
    }
}
