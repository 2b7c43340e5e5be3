//! For tests only: a private PostgreSQL database per test ([`TestDatabase::create`]), dropped when the value
//! is, on the server `COMPANY_DATA_TEST_DATABASE_URL` names (an admin URL, e.g.
//! `postgres://postgres@127.0.0.1:5432/postgres`), by default the local server on port 5432.
//!
//! When no server answers on the default address, the local cluster is started (`pg_ctlcluster`), and on a
//! machine without PostgreSQL, Debian's `postgresql` package is installed first (as root, as CI runs) with
//! trust authentication on loopback, so that the README's one test command passes on a fresh machine.
//!
//! [`Engine`] gives a store's tests one database of each engine, for checks that run on both.
#![deny(missing_docs)]
#![allow(clippy::missing_panics_doc)]
// test support: a failed set-up is a failed test
// The one place outside the binary that reads the environment: which server tests may use.
#![allow(clippy::disallowed_methods)]
#![allow(clippy::print_stderr)] // a database left behind is worth a line in the test output

use std::process::Command;
use std::sync::OnceLock;
pub use tokio_postgres;

use rand::Rng;

/// The variable naming the server tests create their databases on.
pub const SERVER_VARIABLE: &str = "COMPANY_DATA_TEST_DATABASE_URL";

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

    /// A new empty database, `cd_test_<random>`.
    pub async fn create() -> Self {
        let admin = server();
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
        Self { url, name, admin }
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

/// A database of either engine for a store's tests that run on both: a temporary folder for a SQLite file, or
/// a [`TestDatabase`]. Dropping it removes it.
#[derive(Debug)]
pub enum Engine {
    /// A temporary folder for a SQLite file.
    Sqlite(tempfile::TempDir),
    /// A private PostgreSQL database.
    Postgres(TestDatabase),
}

impl Engine {
    /// One database of each engine, SQLite first.
    pub async fn both() -> [Engine; 2] {
        [
            Engine::Sqlite(tempfile::tempdir().expect("temp dir")),
            Engine::Postgres(TestDatabase::create().await),
        ]
    }
}

/// The admin URL of the test server, making sure one answers (once per process).
pub fn server() -> String {
    static SERVER: OnceLock<String> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            if let Ok(url) = std::env::var(SERVER_VARIABLE) {
                return url;
            }
            if !answers(DEFAULT_SERVER) {
                start_local_server();
            }
            assert!(
                answers(DEFAULT_SERVER),
                "no PostgreSQL answers at {DEFAULT_SERVER}: start one, or set {SERVER_VARIABLE} to a server where \
                 the tests may create databases"
            );
            DEFAULT_SERVER.to_owned()
        })
        .clone()
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

/// Starts the local cluster; installs Debian's `postgresql` first when the machine has none.
fn start_local_server() {
    let has_clusters = || {
        Command::new("pg_lsclusters")
            .arg("-h")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
    };
    let installed_here = has_clusters().is_none();
    if installed_here {
        let install = || {
            Command::new("apt-get")
                .args(["install", "-y", "--no-install-recommends", "postgresql"])
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()
                .is_ok_and(|s| s.success())
        };
        // Package lists may be stale on a fresh machine: refresh them once if the first try fails.
        if !install() {
            let _ = Command::new("apt-get").arg("update").status();
            assert!(
                install(),
                "installing Debian's postgresql failed (run `apt-get install postgresql` as root, or set \
                 {SERVER_VARIABLE})"
            );
        }
    }
    let clusters = has_clusters().unwrap_or_default();
    for line in clusters.lines() {
        // `15 main 5432 down postgres /var/lib/... /var/log/...`
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [version, cluster, ..] = fields.as_slice() else {
            continue;
        };
        if installed_here {
            trust_loopback(version, cluster);
        }
        let _ = Command::new("pg_ctlcluster")
            .args(["--skip-systemctl-redirect", version, cluster, "start"])
            .status();
        if installed_here {
            let _ = Command::new("pg_ctlcluster")
                .args(["--skip-systemctl-redirect", version, cluster, "reload"])
                .status();
        }
    }
}

/// On a cluster this process installed for tests: the `postgres` role may connect over loopback without a
/// password, as on the project's machines.
fn trust_loopback(version: &str, cluster: &str) {
    let hba = format!("/etc/postgresql/{version}/{cluster}/pg_hba.conf");
    let Ok(current) = std::fs::read_to_string(&hba) else {
        return;
    };
    let rules = "host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n";
    if !current.starts_with(rules) {
        let _ = std::fs::write(&hba, format!("{rules}{current}"));
    }
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
        let database = TestDatabase::create().await;
        let (client, connection) = tokio_postgres::connect(&database.url, tokio_postgres::NoTls)
            .await
            .expect("connects");
        tokio::spawn(connection);
        client
            .batch_execute("CREATE TABLE t (x INT)")
            .await
            .expect("usable");
        drop(client);
        let name = database.name.clone();
        drop(database);
        let (admin, connection) = tokio_postgres::connect(&server(), tokio_postgres::NoTls)
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
