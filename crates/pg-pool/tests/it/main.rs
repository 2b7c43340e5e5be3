//! Pools and migrations on a real PostgreSQL database.

use pg_pool::{PgError, PgPool};
use test_support::TestDatabase;

const STEPS: &[&str] = &[
    "CREATE TABLE notes (id BIGSERIAL PRIMARY KEY, text TEXT NOT NULL)",
    "ALTER TABLE notes ADD COLUMN at TIMESTAMPTZ NOT NULL DEFAULT now()",
];

#[tokio::test]
async fn servers_starting_at_once_migrate_once() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let pools = futures::future::join_all((0..3).map(|_| PgPool::connect(&database.url))).await;
    let pools: Vec<PgPool> = pools.into_iter().map(|p| p.expect("connects")).collect();
    let migrated = futures::future::join_all(pools.iter().map(|p| p.migrate("notes", STEPS))).await;
    assert!(migrated.iter().all(Result::is_ok), "{migrated:?}");
    let client = pools[0].client().await.expect("a connection");
    let version: i64 = client
        .query_one(
            "SELECT version FROM schema_versions WHERE component = 'notes'",
            &[],
        )
        .await
        .expect("recorded")
        .get(0);
    assert_eq!(version, 2);
    // Again: nothing to do.
    pools[1].migrate("notes", STEPS).await.expect("idempotent");
}

#[tokio::test]
async fn a_schema_newer_than_the_program_is_refused() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let pool = PgPool::connect(&database.url).await.expect("connects");
    pool.migrate("notes", STEPS).await.expect("migrates");
    let refused = pool.migrate("notes", &STEPS[..1]).await.expect_err("newer");
    assert!(
        matches!(
            refused,
            PgError::SchemaNewer {
                found: 2,
                known: 1,
                ..
            }
        ),
        "{refused}"
    );
    assert!(
        refused.to_string().contains("run the newer program"),
        "{refused}"
    );
}

#[tokio::test]
async fn a_refused_statement_says_what_the_server_said() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let pool = PgPool::connect(&database.url).await.expect("connects");
    let client = pool.client().await.expect("a connection");
    let driver = client
        .batch_execute("SELECT * FROM no_such_table")
        .await
        .expect_err("refused");
    let boxed = pg_pool::boxed_error(driver);
    let message = boxed.to_string();
    assert!(
        message.contains("relation \"no_such_table\" does not exist"),
        "{message}"
    );
    // Refused, not unavailable: retrying the same statement will not help.
    assert!(!store_base::is_unavailable(boxed.as_ref()));
}

#[tokio::test]
async fn an_unreachable_server_is_unavailable() {
    let refused = PgPool::connect("postgres://postgres@127.0.0.1:1/none")
        .await
        .expect_err("nothing listens on port 1");
    assert!(refused.is_unavailable(), "{refused}");
    // A store's error carrying it is unavailable to a caller that knows no driver (http-api's 503).
    let boxed = pg_pool::boxed_error(refused);
    assert!(store_base::is_unavailable(boxed.as_ref()), "{boxed}");
}

#[tokio::test]
async fn sessions_run_without_jit_unless_the_url_asks_for_it() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let jit = |url: String| async move {
        let pool = PgPool::connect(&url).await.expect("connects");
        let client = pool.client().await.expect("a connection");
        let row = client.query_one("SHOW jit", &[]).await.expect("shown");
        row.get::<_, String>(0)
    };
    assert_eq!(jit(database.url.clone()).await, "off");
    let separator = if database.url.contains('?') { '&' } else { '?' };
    assert_eq!(
        jit(format!("{}{separator}options=-c%20jit%3Don", database.url)).await,
        "on"
    );
    assert_eq!(
        jit(format!(
            "{}{separator}options=-c%20work_mem%3D8MB",
            database.url
        ))
        .await,
        "off"
    );
}
