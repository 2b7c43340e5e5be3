//! The snapshot store on both engines, a real SQLite file and a real PostgreSQL database; and what only the
//! SQLite backend has (damaged rows and older record shapes in a file written by hand).

mod search;

use std::sync::Arc;

use test_support::Engine;

use company_model::{CompanyRecord, RecordJson};
use jiff::{SignedDuration, Timestamp};
use page_url::{NetworkDomain, PageUrl};
use snapshot_cache::{PgSnapshotStore, Snapshot, SnapshotStore, SqliteSnapshotStore};

/// A snapshot store on the engine's database; each call is another process's connection to it.
async fn open_store(engine: &Engine) -> Arc<dyn SnapshotStore> {
    open_store_planning(engine, None).await
}

/// [`open_store`], with searches planning words as common from `common_matches` matches when given.
async fn open_store_planning(
    engine: &Engine,
    common_matches: Option<u32>,
) -> Arc<dyn SnapshotStore> {
    match engine {
        Engine::Sqlite(dir) => {
            let store = SqliteSnapshotStore::open(&dir.path().join("s.db"))
                .await
                .expect("opens");
            Arc::new(match common_matches {
                Some(matches) => store.with_common_matches(matches),
                None => store,
            })
        }
        Engine::Postgres(database) => {
            let store = PgSnapshotStore::with_pool(
                pg_pool::PgPool::connect(&database.url)
                    .await
                    .expect("connects"),
            )
            .await
            .expect("migrates");
            Arc::new(match common_matches {
                Some(matches) => store.with_common_matches(matches),
                None => store,
            })
        }
    }
}

fn url(text: &str) -> PageUrl {
    PageUrl::parse_submitted(text, &NetworkDomain::default()).expect("valid URL")
}

fn record(name: &str) -> CompanyRecord {
    CompanyRecord {
        company_name: Some(name.into()),
        ..CompanyRecord::default()
    }
}

fn named(name: &str) -> RecordJson {
    RecordJson::from_record(&record(name))
}

/// A page as the fetcher hands it over: gzip-compressed, here in one member per part (as some servers send).
fn gzip(parts: &[&[u8]]) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::new();
    for part in parts {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(part).expect("compresses");
        out.extend(encoder.finish().expect("compresses"));
    }
    out
}

async fn windows_aliases_and_replacement(engine: &Engine) {
    let store = open_store(engine).await;
    let (by_id, google, other) = (
        url("https://www.linkedin.com/company/1441"),
        url("https://www.linkedin.com/company/google"),
        url("https://www.linkedin.com/company/other"),
    );
    // Stores keep milliseconds; the service stamps fetches at that precision.
    let now = Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .expect("rounds");
    let hour_ago = now - SignedDuration::from_hours(1);
    let old = Snapshot {
        url: google.clone(),
        record: named("Old"),
        fetched_at: hour_ago,
    };
    store
        .put(&old, std::slice::from_ref(&by_id), None)
        .await
        .expect("stored");

    // Inside a two-hour window both keys find it; a 30-minute window finds nothing; unknown URLs are absent.
    let since_two_hours = now - SignedDuration::from_hours(2);
    let found = store
        .fresh_many(
            &[by_id.clone(), google.clone(), other.clone()],
            since_two_hours,
        )
        .await
        .expect("read");
    assert_eq!(found.len(), 2);
    assert_eq!(found[&by_id], old);
    assert_eq!(found[&google], old);
    let recent = store
        .fresh_many(
            std::slice::from_ref(&by_id),
            now - SignedDuration::from_mins(30),
        )
        .await
        .expect("read");
    assert!(recent.is_empty());

    // A newer fetch replaces it for every alias; an older one arriving late does not.
    let new = Snapshot {
        url: google.clone(),
        record: named("New"),
        fetched_at: now,
    };
    store
        .put(&new, &[], Some(&gzip(&[b"<html>new</html>"])))
        .await
        .expect("stored");
    let stale = Snapshot {
        url: google.clone(),
        record: named("Stale"),
        fetched_at: hour_ago,
    };
    store
        .put(&stale, &[], Some(&gzip(&[b"<html>stale</html>"])))
        .await
        .expect("stored");
    let found = store
        .fresh_many(std::slice::from_ref(&by_id), since_two_hours)
        .await
        .expect("read");
    assert_eq!(found[&by_id], new);

    // Survives reopening the database.
    drop(store);
    let reopened = open_store(engine).await;
    let found = reopened
        .fresh_many(std::slice::from_ref(&google), since_two_hours)
        .await
        .expect("read");
    assert_eq!(found[&google], new);
}

async fn kept_pages_can_be_parsed_again(engine: &Engine) {
    let store: Arc<dyn SnapshotStore> = open_store(engine).await;
    let now = Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .expect("rounds");
    let urls: Vec<PageUrl> = ["a", "b", "c"]
        .iter()
        .map(|s| url(&format!("https://www.linkedin.com/company/{s}")))
        .collect();
    for (i, page) in urls.iter().enumerate() {
        // The third page in two gzip members with a byte that is not UTF-8, as an origin may send it.
        let html = match i {
            0 => Some(gzip(&[b"<html>0</html>"])),
            2 => Some(gzip(&[b"<html>2", b"\xff</html>"])),
            _ => None,
        };
        let snapshot = Snapshot {
            url: page.clone(),
            record: named("Before"),
            fetched_at: now,
        };
        // A page asked for by its own URL lists it as an alias too (a live lookup of the canonical URL does).
        store
            .put(&snapshot, std::slice::from_ref(page), html.as_deref())
            .await
            .expect("stored");
    }
    // Paged in URL order; the snapshot stored without its page is skipped.
    let first = store.stored_pages(None, 1).await.expect("page 1");
    assert_eq!((first.len(), first[0].html.as_str()), (1, "<html>0</html>"));
    let rest = store
        .stored_pages(Some(&first[0].url), 10)
        .await
        .expect("page 2");
    assert_eq!(
        rest.iter()
            .map(|p| (p.url.clone(), p.html.as_str()))
            .collect::<Vec<_>>(),
        [(urls[2].clone(), "<html>2\u{FFFD}</html>")]
    );

    assert!(
        store
            .replace_record(&urls[0], now, &record("After"))
            .await
            .expect("replaced")
    );
    let earlier = now - SignedDuration::from_secs(1);
    assert!(
        !store
            .replace_record(&urls[2], earlier, &record("After"))
            .await
            .expect("not replaced"),
        "a newer fetch wins"
    );
    let found = store.fresh_many(&urls, earlier).await.expect("read");
    assert_eq!(found[&urls[0]].record, named("After"));
    assert_eq!(found[&urls[2]].record, named("Before"));
}

#[tokio::test]
async fn damaged_records_are_refetched_and_older_shapes_converted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("cache.db");
    let store = SqliteSnapshotStore::open(&path).await.expect("opens");
    let now = Timestamp::now();
    let urls = [
        url("https://www.linkedin.com/company/damaged"),
        url("https://www.linkedin.com/company/older"),
        url("https://www.linkedin.com/company/today"),
    ];
    for page in &urls {
        let snapshot = Snapshot {
            url: page.clone(),
            record: named("Kept"),
            fetched_at: now,
        };
        store.put(&snapshot, &[], None).await.expect("stored");
    }
    // Damage one row as a disk or a hand edit could, and mark another as kept in an older shape (format 0).
    let conn = sqlite_pool::rusqlite::Connection::open(&path).expect("open");
    conn.execute(
        "UPDATE snapshots SET record = '{\"company_name\": \"Kep' WHERE url = ?1",
        [urls[0].as_str()],
    )
    .expect("damage");
    conn.execute(
        "UPDATE snapshots SET record = '{ \"company_name\" : \"Older\" }', record_format = 0 WHERE url = ?1",
        [urls[1].as_str()],
    )
    .expect("older shape");
    // Rows stored before snapshots were keyed by name and domain: keyed when the store is opened.
    conn.execute(
        "UPDATE snapshots SET name_key = NULL, domain_key = NULL",
        [],
    )
    .expect("unkeyed");

    // A server started on the file now (the one above keeps what it wrote in memory for a moment).
    let store = SqliteSnapshotStore::open(&path).await.expect("opens");
    let found = store
        .fresh_many(&urls, now - SignedDuration::from_secs(1))
        .await
        .expect("read");
    assert!(
        !found.contains_key(&urls[0]),
        "the damaged record is not served"
    );
    assert_eq!(
        found[&urls[1]].record,
        named("Older"),
        "converted to today's text"
    );
    assert_eq!(found[&urls[2]].record.as_str(), named("Kept").as_str());
    let older = store.pages_named("older", 10).await.expect("read");
    assert_eq!(
        older,
        [urls[1].clone()],
        "an older shape is keyed from its converted record"
    );
    let kept = store.pages_named("kept", 10).await.expect("read");
    assert_eq!(kept, [urls[2].clone()], "a damaged record gets no key");
}

async fn changes_by_another_process_are_served_within_the_reuse_time(engine: &Engine) {
    changes_by_another_process_on(open_store(engine).await, open_store(engine).await).await;
}

async fn changes_by_another_process_on(
    server: Arc<dyn SnapshotStore>,
    reparse: Arc<dyn SnapshotStore>,
) {
    let page = url("https://www.linkedin.com/company/google");
    let now = Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .expect("rounds");
    let snapshot = Snapshot {
        url: page.clone(),
        record: named("Before"),
        fetched_at: now,
    };
    server.put(&snapshot, &[], None).await.expect("stored");
    let since = now - SignedDuration::from_secs(1);
    let read = |store: &Arc<dyn SnapshotStore>| {
        let store = Arc::clone(store);
        let page = page.clone();
        async move {
            store
                .fresh_many(std::slice::from_ref(&page), since)
                .await
                .expect("read")[&page]
                .record
                .clone()
        }
    };
    assert_eq!(read(&server).await, named("Before"));
    assert!(
        reparse
            .replace_record(&page, now, &record("After"))
            .await
            .expect("replaced")
    );
    // The other process's change is not seen at once (that is the point of reusing), but it is after HOT_REUSE.
    assert_eq!(read(&server).await, named("Before"));
    // Within HOT_REUSE, and as much again for a loaded machine.
    test_support::eventually(
        snapshot_cache::HOT_REUSE * 2,
        "the other process's change was not seen after HOT_REUSE",
        || async { (read(&server).await == named("After")).then_some(()) },
    )
    .await;
}

/// Claims to fetch a page: on PostgreSQL one server claims and another is told to wait, until the claim is
/// released or lapses; on SQLite (one process per file) every claim is granted, the fetcher's own single-flight
/// covering it.
async fn one_server_at_a_time_claims_a_page_on_a_shared_database(engine: &Engine) {
    let page = url("https://www.linkedin.com/company/google");
    let later = Timestamp::now() + SignedDuration::from_secs(30);
    let earlier = Timestamp::now() - SignedDuration::from_secs(1);
    let (a, b) = (open_store(engine).await, open_store(engine).await);
    assert!(a.claim_fetch(&page, later).await.expect("claims"));
    if let Engine::Sqlite(_) = engine {
        assert!(a.claim_fetch(&page, later).await.expect("claims"));
        return;
    }
    assert!(!b.claim_fetch(&page, later).await.expect("asks"));
    a.release_fetch(&page).await.expect("releases");
    assert!(b.claim_fetch(&page, earlier).await.expect("claims"));
    // b's claim lapsed already (it ran until a moment ago): a may take it over.
    assert!(a.claim_fetch(&page, later).await.expect("claims"));
}

async fn history_keeps_every_fetch_as_a_point_and_each_change_once(engine: &Engine) {
    let store = open_store(engine).await;
    let (by_id, google) = (
        url("https://www.linkedin.com/company/1441"),
        url("https://www.linkedin.com/company/google"),
    );
    let start = Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .expect("rounds")
        - SignedDuration::from_hours(24 * 30);
    let day = |n: i64| start + SignedDuration::from_hours(24 * n);
    let versions = [
        (None, 10, "Google"),
        (None, 12, "Google"),
        (Some("https://google.com"), 15, "Google"),
        (Some("https://google.com"), 15, "Alphabet"),
    ];
    for (n, (website, followers, name)) in (0..).zip(versions) {
        let record = CompanyRecord {
            website: website.map(str::to_owned),
            follower_count: Some(followers),
            ..record(name)
        };
        let snapshot = Snapshot {
            url: google.clone(),
            record: RecordJson::from_record(&record),
            fetched_at: day(n),
        };
        store
            .put(&snapshot, std::slice::from_ref(&by_id), None)
            .await
            .expect("stored");
    }
    let everything = |history: snapshot_cache::StoredHistory, from, to| {
        company_model::CompanyHistory::new(
            history.url.as_str().to_owned(),
            history.points,
            &history.states,
            from,
            to,
        )
    };

    let all = store
        .history(&by_id, Timestamp::MIN, Timestamp::MAX)
        .await
        .expect("read")
        .expect("known page");
    assert_eq!(all.url, google);
    assert_eq!(all.states.len(), 3, "the second fetch changed only a count");
    let history = everything(all, Timestamp::MIN, Timestamp::MAX);
    let followers: Vec<Option<u64>> = history.points.iter().map(|p| p.follower_count).collect();
    assert_eq!(followers, [Some(10), Some(12), Some(15), Some(15)]);
    let changes: Vec<(&str, jiff::Timestamp)> = history
        .changes
        .iter()
        .map(|c| (c.field.as_str(), c.fetched_at))
        .collect();
    assert_eq!(changes, [("website", day(2)), ("company_name", day(3))]);
    assert_eq!(history.changes[1].before, "Google");
    assert_eq!(history.changes[1].after, "Alphabet");

    // A range starting at the last fetch still knows what that fetch changed from.
    let last = store
        .history(&google, day(3), Timestamp::MAX)
        .await
        .expect("read")
        .expect("known page");
    let history = everything(last, day(3), Timestamp::MAX);
    assert_eq!(history.points.len(), 1);
    assert_eq!(history.changes.len(), 1);
    assert_eq!(history.changes[0].field, "company_name");

    // Unknown pages have no history.
    let unknown = url("https://www.linkedin.com/company/never-seen");
    assert!(
        store
            .history(&unknown, Timestamp::MIN, Timestamp::MAX)
            .await
            .expect("read")
            .is_none()
    );

    // Retention: points before the cutoff go, and every record but the one a later change is measured against.
    assert_eq!(
        store.forget_history_before(day(3)).await.expect("forgets"),
        3 + 1,
        "three points and the first record"
    );
    let kept = store
        .history(&google, Timestamp::MIN, Timestamp::MAX)
        .await
        .expect("read")
        .expect("known page");
    assert_eq!(kept.points.len(), 1);
    let history = everything(kept, Timestamp::MIN, Timestamp::MAX);
    assert_eq!(
        history.changes.len(),
        1,
        "the last change still has its before"
    );
    assert_eq!(history.changes[0].before, "Google");
}

/// Pages are found by their record's domain and name (as `name_key` folds it), newest first, and follow a
/// reparse that changes them; remembered texts expire.
async fn pages_by_domain_and_name_and_remembered_answers(engine: &Engine) {
    let store = open_store(engine).await;
    let now = Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .expect("rounds");
    let company = |name: &str, domain: &str| CompanyRecord {
        company_name: Some(name.into()),
        domain: Some(domain.into()),
        ..CompanyRecord::default()
    };
    for (page, name, domain, age) in [
        ("acme", "Acme, Inc.", "acme.test", 2),
        ("acme-labs", "Acme Labs", "Acme.test", 1),
        ("other", "Other GmbH", "other.test", 0),
    ] {
        let snapshot = Snapshot {
            url: url(&format!("https://www.linkedin.com/company/{page}")),
            record: RecordJson::from_record(&company(name, domain)),
            fetched_at: now - SignedDuration::from_hours(age),
        };
        store.put(&snapshot, &[], None).await.expect("stores");
    }
    let by_domain = store
        .pages_with_domain("ACME.test", 10)
        .await
        .expect("reads");
    let pages: Vec<&str> = by_domain.iter().map(PageUrl::slug).collect();
    assert_eq!(pages, ["acme-labs", "acme"], "newest first, case folded");
    assert_eq!(
        store
            .pages_with_domain("acme.test", 1)
            .await
            .expect("reads")
            .len(),
        1
    );
    let named = store.pages_named("acme", 10).await.expect("reads");
    assert_eq!(named.len(), 1);
    assert_eq!(named[0].slug(), "acme");
    assert!(store.pages_named("", 10).await.expect("reads").is_empty());
    // A reparse that changes the name moves the page to its new key.
    let acme = url("https://www.linkedin.com/company/acme");
    let replaced = store
        .replace_record(
            &acme,
            now - SignedDuration::from_hours(2),
            &company("Acme Rockets", "rockets.test"),
        )
        .await
        .expect("replaces");
    assert!(replaced);
    assert!(
        store
            .pages_named("acme", 10)
            .await
            .expect("reads")
            .is_empty()
    );
    assert_eq!(
        store
            .pages_with_domain("rockets.test", 10)
            .await
            .expect("reads")
            .len(),
        1
    );

    store
        .remember(
            "domain:acme.test",
            "kept",
            now + SignedDuration::from_secs(60),
        )
        .await
        .expect("remembers");
    assert_eq!(
        store
            .remembered("domain:acme.test", now)
            .await
            .expect("reads")
            .as_deref(),
        Some("kept")
    );
    store
        .remember(
            "domain:acme.test",
            "again",
            now + SignedDuration::from_secs(60),
        )
        .await
        .expect("replaces");
    assert_eq!(
        store
            .remembered("domain:acme.test", now)
            .await
            .expect("reads")
            .as_deref(),
        Some("again")
    );
    let later = now + SignedDuration::from_secs(61);
    assert_eq!(
        store
            .remembered("domain:acme.test", later)
            .await
            .expect("reads"),
        None
    );
    assert_eq!(
        store
            .remembered("domain:none.test", now)
            .await
            .expect("reads"),
        None
    );
}

test_support::engine_tests! {
    pages_by_domain_and_name_and_remembered_answers,
    one_server_at_a_time_claims_a_page_on_a_shared_database,
    windows_aliases_and_replacement,
    kept_pages_can_be_parsed_again,
    changes_by_another_process_are_served_within_the_reuse_time,
    history_keeps_every_fetch_as_a_point_and_each_change_once,
}
