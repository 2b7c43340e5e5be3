//! Keys on both engines, a real SQLite file and a real PostgreSQL database: storage holds no secret,
//! verification, revocation across two "servers" on one database, listing and finding.

use std::sync::Arc;

use pg_test::Engine;
use std::time::Duration;

use api_keys::{ApiKey, ApiKeys, KeyError, KeyStore, PgKeyStore, SqliteKeyStore};
use company_model::AccountId;

#[tokio::test]
async fn the_database_never_holds_the_full_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("k.db");
    let keys = ApiKeys::new(Arc::new(SqliteKeyStore::open(&path).await.expect("opens")));
    let (key, record) = keys
        .create(AccountId(3), Some("ci"))
        .await
        .expect("created");
    assert!(key.expose().starts_with(&record.prefix) && key.expose().ends_with(&record.suffix));
    assert!(record.hash.starts_with("$argon2id$"), "{}", record.hash);
    drop(keys);
    let bytes = std::fs::read(&path).expect("read file");
    let wal = std::fs::read(dir.path().join("k.db-wal")).unwrap_or_default();
    let secret_part = &key.expose()[12..];
    for file in [&bytes, &wal] {
        assert!(
            !file
                .windows(secret_part.len())
                .any(|w| w == secret_part.as_bytes()),
            "secret found on disk"
        );
    }
}

/// A key store on the engine's database; each call is another server's connection to it.
async fn store(engine: &Engine) -> Arc<dyn KeyStore> {
    match engine {
        Engine::Sqlite(dir) => Arc::new(
            SqliteKeyStore::open(&dir.path().join("k.db"))
                .await
                .expect("opens"),
        ),
        Engine::Postgres(database) => Arc::new(
            PgKeyStore::with_pool(
                pg_pool::PgPool::connect(&database.url)
                    .await
                    .expect("connects"),
            )
            .await
            .expect("migrates"),
        ),
    }
}

#[tokio::test]
async fn verification_and_revocation_reach_another_server_within_the_interval() {
    for engine in Engine::both().await {
        revocation_reaches_another_server(&engine).await;
    }
}

async fn revocation_reaches_another_server(engine: &Engine) {
    let interval = Duration::from_millis(300);
    let server_a = ApiKeys::new(store(engine).await).with_revalidate_after(interval);
    let server_b = ApiKeys::new(store(engine).await).with_revalidate_after(interval);
    let (key, record) = server_a.create(AccountId(1), None).await.expect("created");

    let verified = server_b.verify(key.expose()).await.expect("valid on b");
    assert_eq!(
        (verified.key_id, verified.account),
        (record.id, AccountId(1))
    );
    assert!(matches!(
        server_b.verify("cdk_wrong").await,
        Err(KeyError::Invalid)
    ));
    assert!(matches!(
        server_b.verify(ApiKey::generate().expose()).await,
        Err(KeyError::Invalid)
    ));
    let same_prefix_wrong_secret = format!(
        "{}{}",
        &key.expose()[..12],
        "x".repeat(key.expose().len() - 12)
    );
    assert!(matches!(
        server_b.verify(&same_prefix_wrong_secret).await,
        Err(KeyError::Invalid)
    ));

    assert!(server_a.revoke(record.id).await.expect("revoked"));
    assert!(
        server_a.verify(key.expose()).await.is_err(),
        "the revoking server forgets at once"
    );
    tokio::time::sleep(interval + Duration::from_millis(50)).await;
    assert!(
        server_b.verify(key.expose()).await.is_err(),
        "the other server stops within the interval"
    );
    assert!(
        !server_a.revoke(record.id).await.expect("no-op"),
        "revoking twice changes nothing"
    );

    // Last use was recorded when the key was first verified.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let stored = server_a.find(&record.id.to_string()).await.expect("exists");
    assert!(stored.last_used_at.is_some() && stored.revoked_at.is_some());
}

#[tokio::test]
async fn keys_are_found_by_id_prefix_or_masked_form_and_listed_per_account() {
    for engine in Engine::both().await {
        finding_and_listing(&engine).await;
    }
}

async fn finding_and_listing(engine: &Engine) {
    let keys = ApiKeys::new(store(engine).await);
    let (_, mine) = keys
        .create(AccountId(1), Some("mine"))
        .await
        .expect("created");
    let (_, theirs) = keys.create(AccountId(2), None).await.expect("created");
    for name in [mine.id.to_string(), mine.prefix.clone(), mine.masked()] {
        assert_eq!(keys.find(&name).await.expect("found").id, mine.id, "{name}");
    }
    assert!(matches!(
        keys.find("cdk_00000000").await,
        Err(KeyError::NoSuchKey(_))
    ));
    assert!(matches!(
        keys.find("999").await,
        Err(KeyError::NoSuchKey(_))
    ));
    let listed: Vec<_> = keys.of_account(AccountId(1)).await.expect("listed");
    assert_eq!(listed, vec![mine.clone()]);
    // Another account's key is as absent as no key.
    assert_eq!(
        keys.of_account_by_id(AccountId(1), theirs.id)
            .await
            .expect("read"),
        None
    );
    assert_eq!(
        keys.of_account_by_id(AccountId(1), mine.id)
            .await
            .expect("read"),
        Some(mine)
    );
}

#[tokio::test]
async fn postgres_holds_no_key_in_any_recoverable_form() {
    // Kept to the end: dropping it drops the database.
    let engine = Engine::Postgres(pg_test::TestDatabase::create().await);
    let keys = ApiKeys::new(store(&engine).await);
    let (key, _) = keys
        .create(AccountId(3), Some("ci"))
        .await
        .expect("created");
    let secret_part = &key.expose()[12..key.expose().len() - 4];
    for record in keys.list().await.expect("listed") {
        let stored = format!(
            "{} {} {} {:?}",
            record.prefix, record.suffix, record.hash, record.name
        );
        assert!(!stored.contains(secret_part), "{stored}");
        assert!(record.hash.starts_with("$argon2id$"));
    }
}
