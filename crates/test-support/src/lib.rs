//! For tests only: what the workspace's tests share.
//!
//! A private PostgreSQL database per test ([`TestDatabase::create`]), dropped when the value is, on the server
//! `COMPANY_DATA_TEST_DATABASE_URL` names (an admin URL, e.g. `postgres://postgres@127.0.0.1:5432/postgres`), by
//! default the local server on port 5432.
//!
//! Hermetic: nothing is installed or started here. When no server is named and none answers on the default
//! address, [`TestDatabase::create`] reports the test as not run (one line on the terminal, past the test
//! harness's capture) and returns `None`, so `cargo test` passes on a machine without PostgreSQL. Under the
//! provisioning command (`tests/ci`, which installs and starts PostgreSQL) [`STRICT_VARIABLE`] is set and a
//! missing server fails the test instead: see [`not_run`], the one rule for every test whose outside dependency
//! (a database, a browser, a fuzzer) may be missing.
//!
//! [`Engine`] and [`engine_tests!`] give a store's shared test suite one named test per engine
//! (`sqlite::holds_are_exclusive`, `postgres::holds_are_exclusive`), so a failure names its engine.
//!
//! [`Receiver`] is a webhook receiver on loopback that keeps what it got.
//!
//! [`companies::generated`] makes companies from captured records, varied in every member a search reads (the
//! search tests and the search benchmark).
//!
//! [`eventually`] and [`stays`] are how tests wait: on a condition, polled within a bound, never for a fixed
//! time that only usually suffices.
#![deny(missing_docs)]
#![allow(clippy::missing_panics_doc)]
// test support: a failed set-up is a failed test
// Tests read the environment here: which server they may use, and whether every test must run.
#![allow(clippy::disallowed_methods)]
#![allow(clippy::print_stderr)] // a database left behind is worth a line in the test output

use std::future::Future;
use std::io::Write;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub mod companies;
mod receiver;

pub use receiver::{Received, Receiver};
pub use tokio_postgres;

use rand::Rng;

/// The variable naming the server tests create their databases on.
pub const SERVER_VARIABLE: &str = "COMPANY_DATA_TEST_DATABASE_URL";

/// Set (to anything but `0`) by the provisioning command: every test whose outside dependency is missing fails
/// instead of reporting itself as not run.
pub const STRICT_VARIABLE: &str = "COMPANY_DATA_TEST_STRICT";

const DEFAULT_SERVER: &str = "postgres://postgres@127.0.0.1:5432/postgres";

/// A database made for one test; dropped (with any connections still open) when this value is.
#[derive(Debug)]
pub struct TestDatabase {
    /// `postgres://…/<name>`: the database's URL.
    pub url: String,
    name: String,
    admin: String,
}

impl TestDatabase {
    /// The database's name, `cd_test_<random>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `sql` as the server's admin, e.g. to take the database away from its clients in a fault test.
    pub async fn admin(&self, sql: &str) {
        let (client, connection) = tokio_postgres::connect(&self.admin, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|e| panic!("the test database server refused: {e}"));
        tokio::spawn(connection);
        client
            .batch_execute(sql)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// A connection to this database, as its owner, for a test to read what the service wrote.
    pub async fn connect(&self) -> tokio_postgres::Client {
        let (client, connection) = tokio_postgres::connect(&self.url, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|e| panic!("the test database refused: {e}"));
        tokio::spawn(connection);
        client
    }

    /// A new empty database, `cd_test_<random>`; `None` (the test reported as not run) when no server is
    /// configured and none answers on the default address, outside strict mode ([`not_run`]).
    pub async fn create() -> Option<Self> {
        let admin = server()?;
        let name = format!("cd_test_{:016x}", rand::thread_rng().r#gen::<u64>());
        let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|e| panic!("the test database server at {admin} refused: {e}"));
        tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap_or_else(|e| panic!("creating {name}: {e}"));
        let url = with_database(&admin, &name);
        Some(Self { url, name, admin })
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        // Drop needs a runtime of its own: the test's may be shutting down.
        let (admin, name) = (self.admin.clone(), self.name.clone());
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
                    .await
                    .ok()?;
                tokio::spawn(connection);
                client
                    .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                    .await
                    .ok()
            })
        })
        .join();
        if !matches!(dropped, Ok(Some(()))) {
            eprintln!("could not drop the test database {}", self.name);
        }
    }
}

/// A database of either engine for a store's shared test suite: a temporary folder for a SQLite file, or a
/// [`TestDatabase`]. Dropping it removes it.
#[derive(Debug)]
pub enum Engine {
    /// A temporary folder for a SQLite file.
    Sqlite(tempfile::TempDir),
    /// A private PostgreSQL database.
    Postgres(TestDatabase),
}

impl Engine {
    /// A new temporary folder for a SQLite file.
    pub fn sqlite() -> Engine {
        Engine::Sqlite(tempfile::tempdir().expect("temp dir"))
    }

    /// A new private PostgreSQL database; `None` when the test is not run ([`TestDatabase::create`]).
    pub async fn postgres() -> Option<Engine> {
        TestDatabase::create().await.map(Engine::Postgres)
    }
}

/// One store test suite, instantiated for each engine as separately named tests.
///
/// Each name is an `async fn name(engine: &Engine)` in the calling module; the macro adds the modules `sqlite`
/// and `postgres`, each with a `#[tokio::test]` of that name running it on a new database of its engine (the
/// PostgreSQL one reported as not run where no server answers). A name may carry `tokio::test`'s arguments:
///
/// ```ignore
/// test_support::engine_tests! {
///     holds_are_exclusive,
///     charges_under_load(flavor = "multi_thread", worker_threads = 4),
/// }
/// ```
#[macro_export]
macro_rules! engine_tests {
    ($($name:ident $(($($test_args:tt)*))?),* $(,)?) => {
        /// The suite on a SQLite file.
        mod sqlite {
            $(
                #[tokio::test $(($($test_args)*))?]
                async fn $name() {
                    super::$name(&$crate::Engine::sqlite()).await;
                }
            )*
        }
        /// The suite on a PostgreSQL database.
        mod postgres {
            $(
                #[tokio::test $(($($test_args)*))?]
                async fn $name() {
                    if let Some(engine) = $crate::Engine::postgres().await {
                        super::$name(&engine).await;
                    }
                }
            )*
        }
    };
}

/// Whether the provisioning command asked for every test to run ([`STRICT_VARIABLE`]).
pub fn strict() -> bool {
    std::env::var_os(STRICT_VARIABLE).is_some_and(|v| v != "0")
}

/// The rule for a test whose outside dependency is missing: in strict mode it fails with `reason`; otherwise
/// the test is reported as not run, with the reason, on the terminal (written past libtest's output capture, so
/// a plain `cargo test` shows it), and the caller returns early, passing.
pub fn not_run(reason: &str) {
    let test = std::thread::current().name().unwrap_or("a test").to_owned();
    assert!(
        !strict(),
        "{test}: {reason} ({STRICT_VARIABLE} is set: every test must run)"
    );
    // `eprintln!` would be captured and shown only for a failure; the handle itself is not.
    let _ = writeln!(std::io::stderr().lock(), "not run: {test}: {reason}");
}

/// The admin URL of the test server: the one [`SERVER_VARIABLE`] names, else the local default if it answers
/// (checked once per process); `None`, after [`not_run`], when neither, or when the variable is `none` (to run a
/// crate's tests as on a machine without PostgreSQL).
pub fn server() -> Option<String> {
    static SERVER: OnceLock<Result<String, String>> = OnceLock::new();
    let server = SERVER.get_or_init(|| match std::env::var(SERVER_VARIABLE) {
        Ok(url) if url == "none" => Err(format!("{SERVER_VARIABLE} is `none`")),
        Ok(url) => Ok(url),
        Err(_) if answers(DEFAULT_SERVER) => Ok(DEFAULT_SERVER.to_owned()),
        Err(_) => Err(format!(
            "no PostgreSQL answers at {DEFAULT_SERVER}; start one, or set {SERVER_VARIABLE} to a server where \
             the tests may create databases (`tests/ci` installs and starts one)"
        )),
    });
    match server {
        Ok(url) => Some(url.clone()),
        Err(reason) => {
            not_run(reason);
            None
        }
    }
}

/// Whether a connection to `url` succeeds (on a runtime of its own: this runs inside tests' runtimes).
fn answers(url: &str) -> bool {
    let url = url.to_owned();
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .is_ok_and(|runtime| {
                runtime.block_on(async {
                    tokio_postgres::connect(&url, tokio_postgres::NoTls)
                        .await
                        .is_ok()
                })
            })
    })
    .join()
    .unwrap_or(false)
}

/// How often [`stays`] asks, and how long [`eventually`] waits at most between two checks.
const POLL: Duration = Duration::from_millis(20);
const LONGEST_PAUSE: Duration = Duration::from_millis(200);

/// Waits until `check` gives `Some`, and returns what it gave; panics with `what` when `limit` passes first. It
/// asks again after 10 ms, then twice as long each time up to 200 ms: quick for a condition that is nearly met,
/// and at most five asks a second for one that takes a while (an HTTP poll stays under a key's rate limit). The
/// limit is a bound for a broken run, not a guess at how long the work takes: it can be generous, because a
/// passing run waits only as long as the condition takes.
pub async fn eventually<T, F, Fut>(limit: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let started = Instant::now();
    let mut pause = Duration::from_millis(10);
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(started.elapsed() < limit, "{what} (after {limit:?})");
        tokio::time::sleep(pause).await;
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

/// Checks that `holds` stays true for all of `window`, asking every 20 ms; panics with `what` the first time it
/// is false. For what must not happen (fetching after a cancel): an absence can only be watched for a while.
pub async fn stays<F, Fut>(window: Duration, what: &str, mut holds: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let started = Instant::now();
    while started.elapsed() < window {
        assert!(holds().await, "{what}");
        tokio::time::sleep(POLL).await;
    }
    assert!(holds().await, "{what}");
}

/// `url` with its database replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = url
        .split_once('?')
        .map_or((url, None), |(b, q)| (b, Some(q)));
    let after_scheme = base.find("://").map_or(0, |i| i + 3);
    let base = match base[after_scheme..].find('/') {
        Some(slash) => &base[..after_scheme + slash],
        None => base,
    };
    match query {
        Some(query) => format!("{base}/{name}?{query}"),
        None => format!("{base}/{name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_urls() {
        assert_eq!(
            with_database("postgres://postgres@127.0.0.1:5432/postgres", "t1"),
            "postgres://postgres@127.0.0.1:5432/t1"
        );
        assert_eq!(
            with_database("postgres://u:p@db:5432/admin?sslmode=require", "t2"),
            "postgres://u:p@db:5432/t2?sslmode=require"
        );
        assert_eq!(with_database("postgres://u@db", "t3"), "postgres://u@db/t3");
    }

    #[tokio::test]
    async fn a_test_database_exists_until_it_is_dropped() {
        let Some(database) = TestDatabase::create().await else {
            return;
        };
        let (client, connection) = tokio_postgres::connect(&database.url, tokio_postgres::NoTls)
            .await
            .expect("connects");
        tokio::spawn(connection);
        client
            .batch_execute("CREATE TABLE t (x INT)")
            .await
            .expect("usable");
        drop(client);
        let (name, admin_url) = (database.name.clone(), database.admin.clone());
        drop(database);
        let (admin, connection) = tokio_postgres::connect(&admin_url, tokio_postgres::NoTls)
            .await
            .expect("connects");
        tokio::spawn(connection);
        let left = admin
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&name])
            .await
            .expect("query");
        assert!(left.is_none(), "{name} was dropped");
    }
}
