//! Keys on both engines, a real SQLite file and a real PostgreSQL database: storage holds no secret,
//! verification, revocation across two "servers" on one database, listing and finding, what a flood costs,
//! and keys stored before digests moving over.

use std::net::IpAddr;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use std::time::Duration;
use test_support::Engine;

use api_keys::{
    ApiKey, ApiKeys, FailureLimit, KeyError, KeyMode, KeyStats, KeyStore, PgKeyStore,
    SqliteKeyStore,
};
use company_model::{AccountId, Tenant};

/// What a stored form must not be: the key itself, any run of its random part, or its unkeyed SHA-256 (which
/// a table of digests of guessed keys could match).
fn assert_not_recoverable(stored: &[u8], key: &ApiKey) {
    let secret_part = &key.expose()[12..key.expose().len() - 4];
    let plain_digest = hex::encode(Sha256::digest(key.expose().as_bytes()));
    for needle in [secret_part.as_bytes(), plain_digest.as_bytes()] {
        assert!(
            !stored.windows(needle.len()).any(|w| w == needle),
            "a recoverable form of the key is stored"
        );
    }
}

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
    assert_eq!(record.digest.as_deref().map(str::len), Some(64));
    assert_eq!(record.legacy_hash, None);
    keys.verify(key.expose()).await.expect("verifies");
    drop(keys);
    let bytes = std::fs::read(&path).expect("read file");
    let wal = std::fs::read(dir.path().join("k.db-wal")).unwrap_or_default();
    assert_not_recoverable(&bytes, &key);
    assert_not_recoverable(&wal, &key);
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

async fn verification_and_revocation_reach_another_server_within_the_interval(engine: &Engine) {
    revocation_reaches_another_server(engine).await;
}

async fn revocation_reaches_another_server(engine: &Engine) {
    let interval = Duration::from_millis(300);
    let server_a = ApiKeys::new(store(engine).await).with_revalidate_after(interval);
    let server_b = ApiKeys::new(store(engine).await).with_revalidate_after(interval);
    let (key, record) = server_a.create(AccountId(1), None).await.expect("created");

    let verified = server_b.verify(key.expose()).await.expect("valid on b");
    assert_eq!(
        (verified.key_id, verified.tenant),
        (record.id, Tenant::live(AccountId(1)))
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
    // The other server stops within the interval (and a margin for a loaded machine).
    test_support::eventually(
        interval * 3,
        "the other server still takes the key after its interval",
        || async { server_b.verify(key.expose()).await.is_err().then_some(()) },
    )
    .await;
    assert!(
        !server_a.revoke(record.id).await.expect("no-op"),
        "revoking twice changes nothing"
    );

    // Last use was recorded (in the background) when the key was first verified.
    test_support::eventually(
        Duration::from_secs(5),
        "the key's last use was never recorded",
        || async {
            let stored = server_a.find(&record.id.to_string()).await.expect("exists");
            (stored.last_used_at.is_some() && stored.revoked_at.is_some()).then_some(())
        },
    )
    .await;
}

async fn keys_are_found_by_id_prefix_or_masked_form_and_listed_per_account(engine: &Engine) {
    finding_and_listing(engine).await;
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
    let Some(engine) = Engine::postgres().await else {
        return;
    };
    let keys = ApiKeys::new(store(&engine).await);
    let (key, _) = keys
        .create(AccountId(3), Some("ci"))
        .await
        .expect("created");
    keys.verify(key.expose()).await.expect("verifies");
    for record in keys.list().await.expect("listed") {
        let stored = format!(
            "{} {} {:?} {:?} {:?}",
            record.prefix, record.suffix, record.digest, record.legacy_hash, record.name
        );
        assert_not_recoverable(stored.as_bytes(), &key);
        assert_eq!(record.digest.as_deref().map(str::len), Some(64));
    }
}

async fn concurrent_first_requests_of_a_key_share_one_lookup(engine: &Engine) {
    let keys = ApiKeys::new(store(engine).await);
    let (key, record) = keys.create(AccountId(5), None).await.expect("created");
    // Another server, which has never seen the key.
    let fresh = Arc::new(ApiKeys::new(store(engine).await));
    let tasks: Vec<_> = (0..32)
        .map(|_| {
            let fresh = Arc::clone(&fresh);
            let key = key.expose().to_owned();
            tokio::spawn(async move { fresh.verify(&key).await })
        })
        .collect();
    for task in tasks {
        assert_eq!(
            task.await.expect("joined").expect("valid").key_id,
            record.id
        );
    }
    let stats = fresh.stats();
    assert_eq!((stats.digests, stats.lookups), (32, 1), "{stats:?}");
}

#[tokio::test]
async fn a_failed_authentication_flood_from_one_address_is_refused_before_any_digest() {
    let dir = tempfile::tempdir().expect("temp dir");
    let keys = ApiKeys::new(Arc::new(
        SqliteKeyStore::open(&dir.path().join("k.db"))
            .await
            .expect("opens"),
    ));
    keys.set_failure_limit(FailureLimit {
        max_failures: 5,
        window: Duration::from_mins(1),
        delay: Duration::from_millis(50),
    });
    let (key, _) = keys.create(AccountId(1), None).await.expect("created");
    let flooder: IpAddr = "203.0.113.9".parse().expect("address");
    let client: IpAddr = "198.51.100.4".parse().expect("address");

    // Wrong shape: refused without a digest.
    assert!(matches!(
        keys.verify_from(flooder, "not-a-key").await,
        Err(KeyError::Invalid)
    ));
    assert_eq!(
        keys.stats(),
        KeyStats {
            refused_shape: 1,
            ..KeyStats::default()
        }
    );
    // Made-up keys of the right shape: one digest and one lookup each, never argon2.
    for _ in 0..4 {
        assert!(matches!(
            keys.verify_from(flooder, ApiKey::generate().expose()).await,
            Err(KeyError::Invalid)
        ));
    }
    let before = keys.stats();
    assert_eq!((before.digests, before.argon2_checks), (4, 0));
    // A failure is answered after the delay, a success at once.
    let started = std::time::Instant::now();
    assert!(keys.verify_from(client, key.expose()).await.is_ok());
    assert!(started.elapsed() < Duration::from_millis(50));
    let before = keys.stats();
    // The limit is reached: from now on nothing is computed for this address, whatever it sends, and each
    // refusal still waits its delay.
    for presented in [ApiKey::generate().expose(), key.expose(), "junk"] {
        let started = std::time::Instant::now();
        let answer = keys.verify_from(flooder, presented).await;
        assert!(
            started.elapsed() >= Duration::from_millis(50),
            "refused after the delay"
        );
        match answer {
            Err(KeyError::TooManyFailures { retry_after }) => {
                assert!(retry_after > Duration::ZERO && retry_after <= Duration::from_mins(1));
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
    let after = keys.stats();
    assert_eq!(
        (after.digests, after.lookups, after.refused_client),
        (before.digests, before.lookups, 3)
    );
    // Another address is not affected.
    assert!(keys.verify_from(client, key.expose()).await.is_ok());
}

#[tokio::test]
async fn a_key_stored_before_digests_moves_to_its_digest_at_first_use() {
    use argon2::PasswordHasher;
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("k.db");
    let store = SqliteKeyStore::open(&path).await.expect("opens");
    // A row as the previous version wrote it: an argon2id hash and no digest.
    let key = ApiKey::generate();
    let salt =
        argon2::password_hash::SaltString::generate(&mut argon2::password_hash::rand_core::OsRng);
    let phc = argon2::Argon2::default()
        .hash_password(key.expose().as_bytes(), &salt)
        .expect("hashes")
        .to_string();
    let (prefix, suffix) = (
        key.expose()[..12].to_owned(),
        key.expose()[key.expose().len() - 4..].to_owned(),
    );
    let pool = sqlite_pool::SqlitePool::open(&path).await.expect("opens");
    pool.write(move |conn| {
        conn.execute(
            "INSERT INTO api_keys (account_id, prefix, suffix, hash, created_at_ms) VALUES (7, ?1, ?2, ?3, 0)",
            [prefix, suffix, phc],
        )
    })
    .await
    .expect("inserted");

    let keys = ApiKeys::new(Arc::new(store.clone()));
    assert_eq!(
        keys.verify(key.expose()).await.expect("valid").tenant,
        Tenant::live(AccountId(7))
    );
    assert_eq!(keys.stats().argon2_checks, 1);
    let record = keys.list().await.expect("listed").remove(0);
    assert_eq!(record.legacy_hash, None, "the argon2 hash is gone");
    assert_eq!(record.digest.as_deref().map(str::len), Some(64));
    // Another server finds it by its digest: no argon2 again.
    let other = ApiKeys::new(Arc::new(store));
    other.verify(key.expose()).await.expect("valid");
    assert_eq!(other.stats().argon2_checks, 0);
    // A made-up key with the same prefix no longer reaches argon2 either.
    let same_prefix = format!("{}{}", &key.expose()[..12], "x".repeat(32));
    assert!(other.verify(&same_prefix).await.is_err());
    assert_eq!(other.stats().argon2_checks, 0);
}

/// Issue 40: an account's keys are bounded where a key is added (live and test together, revoked ones not
/// counted), and concurrent creations on two servers cannot pass the bound.
async fn keys_are_bounded_per_account_where_they_are_added(engine: &Engine) {
    let (one, two) = (
        Arc::new(ApiKeys::new(store(engine).await)),
        Arc::new(ApiKeys::new(store(engine).await)),
    );
    let (_, first) = one
        .create_for(AccountId(5), Some("a"), KeyMode::Live, 2)
        .await
        .expect("under the bound");
    two.create_for(AccountId(5), Some("b"), KeyMode::Test, 2)
        .await
        .expect("at the bound");
    assert!(matches!(
        one.create_for(AccountId(5), Some("c"), KeyMode::Live, 2)
            .await,
        Err(KeyError::TooManyKeys { quota: 2 })
    ));
    // Another account's keys are its own; a revoked key frees its place.
    one.create_for(AccountId(6), None, KeyMode::Live, 2)
        .await
        .expect("another account");
    assert!(one.revoke(first.id).await.expect("revokes"));
    one.create_for(AccountId(5), Some("c"), KeyMode::Live, 2)
        .await
        .expect("a place freed");

    // Ten at once from two servers under a bound of three: three are made.
    let tries: Vec<_> = (0..10)
        .map(|n| {
            let keys = Arc::clone(if n % 2 == 0 { &one } else { &two });
            tokio::spawn(async move { keys.create_for(AccountId(7), None, KeyMode::Live, 3).await })
        })
        .collect();
    let mut made = 0;
    for attempt in tries {
        match attempt.await.expect("joins") {
            Ok(_) => made += 1,
            Err(KeyError::TooManyKeys { quota: 3 }) => {}
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(made, 3);
}

test_support::engine_tests! {
    keys_are_bounded_per_account_where_they_are_added,
    verification_and_revocation_reach_another_server_within_the_interval,
    keys_are_found_by_id_prefix_or_masked_form_and_listed_per_account,
    concurrent_first_requests_of_a_key_share_one_lookup,
}
