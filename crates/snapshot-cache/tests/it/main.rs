//! The SQLite snapshot store on a real file.

use company_model::CompanyRecord;
use jiff::{SignedDuration, Timestamp};
use page_url::{NetworkDomain, PageUrl};
use snapshot_cache::{Snapshot, SnapshotStore, SqliteSnapshotStore};

fn url(text: &str) -> PageUrl {
    PageUrl::parse_submitted(text, &NetworkDomain::default()).expect("valid URL")
}

fn named(name: &str) -> CompanyRecord {
    CompanyRecord {
        company_name: Some(name.into()),
        ..CompanyRecord::default()
    }
}

#[tokio::test]
async fn windows_aliases_and_replacement() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = SqliteSnapshotStore::open(&dir.path().join("s.db"))
        .await
        .expect("opens");
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
        .put(&old, std::slice::from_ref(&by_id))
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
    store.put(&new, &[]).await.expect("stored");
    let stale = Snapshot {
        url: google.clone(),
        record: named("Stale"),
        fetched_at: hour_ago,
    };
    store.put(&stale, &[]).await.expect("stored");
    let found = store
        .fresh_many(std::slice::from_ref(&by_id), since_two_hours)
        .await
        .expect("read");
    assert_eq!(found[&by_id], new);

    // Survives reopening the file.
    drop(store);
    let reopened = SqliteSnapshotStore::open(&dir.path().join("s.db"))
        .await
        .expect("reopens");
    let found = reopened
        .fresh_many(std::slice::from_ref(&google), since_two_hours)
        .await
        .expect("read");
    assert_eq!(found[&google], new);
}
