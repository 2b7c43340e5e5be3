//! Idempotency records on both engines, a real SQLite file and a real PostgreSQL database: one claim per key,
//! replays, mismatches, lapsed claims and old records.

use std::sync::Arc;
use std::time::Duration;

use company_model::{AccountId, Tenant};
use idempotency::{
    Begin, IdempotencyStore, PgIdempotencyStore, SqliteIdempotencyStore, StoredAnswer, fingerprint,
};
use test_support::Engine;

/// A store on the engine's database; each call is another server's connection to it.
async fn store(engine: &Engine) -> Arc<dyn IdempotencyStore> {
    match engine {
        Engine::Sqlite(dir) => Arc::new(
            SqliteIdempotencyStore::open(&dir.path().join("i.db"))
                .await
                .expect("opens"),
        ),
        Engine::Postgres(database) => Arc::new(
            PgIdempotencyStore::with_pool(
                pg_pool::PgPool::connect(&database.url)
                    .await
                    .expect("connects"),
            )
            .await
            .expect("migrates"),
        ),
    }
}

const LEASE: Duration = Duration::from_secs(30);

async fn a_key_answers_once_and_replays_for_the_same_request_only(engine: &Engine) {
    let (a, b) = (store(engine).await, store(engine).await);
    let now = jiff::Timestamp::now();
    let (account, other) = (AccountId(1), AccountId(2));
    let first = fingerprint("POST", "/v1/network/company-data", b"{\"liUrls\":[]}");
    let second = fingerprint("POST", "/v1/network/company-data", b"{\"liUrls\":[1]}");
    assert_ne!(first, second);

    assert_eq!(
        a.begin(Tenant::live(account), "k1", &first, now, LEASE)
            .await
            .expect("begin"),
        Begin::Started
    );
    assert_eq!(
        b.begin(Tenant::live(account), "k1", &first, now, LEASE)
            .await
            .expect("begin"),
        Begin::Running
    );
    assert_eq!(
        b.begin(Tenant::live(account), "k1", &second, now, LEASE)
            .await
            .expect("begin"),
        Begin::Mismatch
    );
    // Keys are per account.
    assert_eq!(
        b.begin(Tenant::live(other), "k1", &second, now, LEASE)
            .await
            .expect("begin"),
        Begin::Started
    );

    let answer = StoredAnswer {
        status: 200,
        headers: vec![("x-credits-charged".to_owned(), "1".to_owned())],
        body: b"{\"ok\":true}".to_vec(),
    };
    a.finish(Tenant::live(account), "k1", &answer)
        .await
        .expect("finished");
    assert_eq!(
        b.begin(Tenant::live(account), "k1", &first, now, LEASE)
            .await
            .expect("begin"),
        Begin::Done(answer.clone())
    );
    assert_eq!(
        b.begin(Tenant::live(account), "k1", &second, now, LEASE)
            .await
            .expect("begin"),
        Begin::Mismatch
    );
    // Abandoning a finished key changes nothing.
    a.abandon(Tenant::live(account), "k1")
        .await
        .expect("abandon");
    assert_eq!(
        a.begin(Tenant::live(account), "k1", &first, now, LEASE)
            .await
            .expect("begin"),
        Begin::Done(answer)
    );

    // An abandoned claim lets the retry run.
    assert_eq!(
        a.begin(Tenant::live(account), "k2", &first, now, LEASE)
            .await
            .expect("begin"),
        Begin::Started
    );
    a.abandon(Tenant::live(account), "k2")
        .await
        .expect("abandon");
    assert_eq!(
        b.begin(Tenant::live(account), "k2", &first, now, LEASE)
            .await
            .expect("begin"),
        Begin::Started
    );

    // A running claim renewed by its request (issue 40) outlives its first lease: its own retry still waits.
    let renewed_at = now + jiff::SignedDuration::from_secs(25);
    assert!(
        b.renew(Tenant::live(account), "k2", renewed_at, LEASE)
            .await
            .expect("renew")
    );
    let past_first_lease = now + jiff::SignedDuration::from_secs(40);
    assert_eq!(
        a.begin(Tenant::live(account), "k2", &first, past_first_lease, LEASE)
            .await
            .expect("begin"),
        Begin::Running
    );
    assert!(
        !a.renew(Tenant::live(account), "k1", renewed_at, LEASE)
            .await
            .expect("renew"),
        "an answered key has no claim to renew"
    );

    // A claim whose lease lapsed (its server died, renewing no more) is taken over, even by another request.
    let later = renewed_at + jiff::SignedDuration::from_secs(31);
    assert_eq!(
        b.begin(Tenant::live(account), "k2", &second, later, LEASE)
            .await
            .expect("begin"),
        Begin::Started
    );

    // After 24 hours a key is new again, and the sweep deletes what is older.
    let next_day = now + jiff::SignedDuration::from_hours(25);
    assert_eq!(
        b.begin(Tenant::live(account), "k1", &second, next_day, LEASE)
            .await
            .expect("begin"),
        Begin::Started
    );
    let removed = a
        .forget_before(now + jiff::SignedDuration::from_hours(1))
        .await
        .expect("forget");
    assert_eq!(
        removed, 2,
        "k1 of the other account and k2 are old; k1 was renewed"
    );
}

async fn of_concurrent_requests_with_one_key_exactly_one_runs(engine: &Engine) {
    let stores = [
        store(engine).await,
        store(engine).await,
        store(engine).await,
    ];
    let print = fingerprint("POST", "/p", b"body");
    let now = jiff::Timestamp::now();
    let tasks: Vec<_> = (0..24)
        .map(|i| {
            let store = Arc::clone(&stores[i % 3]);
            let print = print.clone();
            tokio::spawn(async move {
                store
                    .begin(Tenant::live(AccountId(9)), "same", &print, now, LEASE)
                    .await
            })
        })
        .collect();
    let mut started = 0;
    for task in tasks {
        match task.await.expect("joined").expect("begin") {
            Begin::Started => started += 1,
            Begin::Running => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(started, 1);
}

#[test]
fn keys_are_visible_ascii_of_bounded_length() {
    assert!(idempotency::key_allowed(
        "3f2b9c1e-6a0d-4b7e-9f3c-2d8e1a5b7c90"
    ));
    for bad in ["", "has space", "tab\t", "é", &"x".repeat(256)] {
        assert!(!idempotency::key_allowed(bad), "{bad}");
    }
}

/// Issue 40: the bytes of the answers an account has kept are counted as they are stored, per account, and
/// recounted from what is kept when old records are forgotten.
async fn stored_answers_are_counted_per_account(engine: &Engine) {
    let (a, b) = (store(engine).await, store(engine).await);
    let now = jiff::Timestamp::now();
    let print = fingerprint("POST", "/p", b"body");
    let answer = |size: usize| StoredAnswer {
        status: 200,
        headers: Vec::new(),
        body: vec![b'x'; size],
    };
    assert_eq!(
        a.stored_bytes(Tenant::live(AccountId(7)))
            .await
            .expect("reads"),
        0
    );
    for (store, key, size) in [(&a, "k1", 1000), (&b, "k2", 500)] {
        store
            .begin(Tenant::live(AccountId(7)), key, &print, now, LEASE)
            .await
            .expect("begins");
        store
            .finish(Tenant::live(AccountId(7)), key, &answer(size))
            .await
            .expect("finishes");
    }
    a.begin(Tenant::live(AccountId(8)), "k1", &print, now, LEASE)
        .await
        .expect("begins");
    a.finish(Tenant::live(AccountId(8)), "k1", &answer(10))
        .await
        .expect("finishes");
    assert_eq!(
        b.stored_bytes(Tenant::live(AccountId(7)))
            .await
            .expect("reads"),
        1500
    );
    assert_eq!(
        b.stored_bytes(Tenant::live(AccountId(8)))
            .await
            .expect("reads"),
        10
    );
    // Forgetting nothing recounts the same; forgetting all leaves nothing counted.
    a.forget_before(now - jiff::SignedDuration::from_hours(1))
        .await
        .expect("forgets");
    assert_eq!(
        b.stored_bytes(Tenant::live(AccountId(7)))
            .await
            .expect("reads"),
        1500
    );
    a.forget_before(now + jiff::SignedDuration::from_hours(1))
        .await
        .expect("forgets");
    assert_eq!(
        b.stored_bytes(Tenant::live(AccountId(7)))
            .await
            .expect("reads"),
        0
    );
}

test_support::engine_tests! {
    stored_answers_are_counted_per_account,
    a_key_answers_once_and_replays_for_the_same_request_only,
    of_concurrent_requests_with_one_key_exactly_one_runs,
}
