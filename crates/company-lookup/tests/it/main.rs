//! The lookup over real parts: captured pages as a folder origin, a stalling loopback origin, SQLite stores.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use company_lookup::{Caller, LookupError, LookupService, LookupSettings};
use company_model::{CompanyRequest, RecordSource, UnresolvedCode};
use credit_ledger::{Credits, Ledger, LedgerError, SqliteLedger};
use page_scraper::{Fetcher, FetcherSettings, Origin};
use page_url::NetworkDomain;
use snapshot_cache::SqliteSnapshotStore;

struct World {
    _dir: tempfile::TempDir,
    ledger: Arc<SqliteLedger>,
    service: LookupService,
    caller: Caller,
}

async fn world(origin: Origin, credits: &str, live_timeout: Duration) -> World {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("c.db");
    let ledger = Arc::new(SqliteLedger::open(&db).await.expect("ledger"));
    let snapshots = Arc::new(SqliteSnapshotStore::open(&db).await.expect("snapshots"));
    let account = ledger.ensure_account("test").await.expect("account");
    ledger
        .grant(account.id, Credits::parse(credits).expect("amount"), "test")
        .await
        .expect("grant");
    let fetcher =
        Fetcher::new(FetcherSettings::new(origin, NetworkDomain::default())).expect("fetcher");
    let service = LookupService::new(
        fetcher,
        snapshots,
        ledger.clone(),
        LookupSettings {
            live_timeout,
            ..LookupSettings::default()
        },
    );
    World {
        _dir: dir,
        ledger,
        service,
        caller: Caller {
            account: account.id,
            key_id: None,
        },
    }
}

fn captured_pages() -> Origin {
    Origin::Directory(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/origin"))
}

fn request(urls: &[&str], window: &str) -> CompanyRequest {
    let urls = urls
        .iter()
        .map(|u| format!("\"{u}\""))
        .collect::<Vec<_>>()
        .join(",");
    let body = format!(r#"{{"liUrls":[{urls}]{window}}}"#);
    CompanyRequest::from_json(body.as_bytes(), &NetworkDomain::default()).expect("valid request")
}

async fn balance(world: &World) -> Credits {
    world
        .ledger
        .account(world.caller.account)
        .await
        .expect("read")
        .expect("exists")
        .balance
}

#[tokio::test]
async fn duplicates_unresolved_and_billing() {
    let world = world(captured_pages(), "10", Duration::from_secs(5)).await;
    let request = request(
        &[
            "https://www.linkedin.com/company/google",
            "https://uk.linkedin.com/company/Google/about/",
            "https://www.linkedin.com/company/no-such-company",
            "https://www.linkedin.com/company/audiense",
        ],
        "",
    );
    let outcome = world
        .service
        .run(world.caller, &request)
        .await
        .expect("served");
    let results = &outcome.response.results;
    assert_eq!(results.len(), 3, "both Google positions and Audiense");
    assert_eq!(
        results[1].original_li_url,
        "https://uk.linkedin.com/company/Google/about/"
    );
    assert_eq!(results[0].record, results[1].record);
    let audiense = results[2].record.to_record().expect("a record");
    assert_eq!(audiense.company_name.as_deref(), Some("Audiense"));
    assert!(results.iter().all(|r| r.source == RecordSource::Live));
    let unresolved = &outcome.response.unresolved;
    assert_eq!(unresolved.len(), 1);
    assert_eq!(unresolved[0].error, UnresolvedCode::NotFound);
    // Two distinct companies returned, live price 1 each.
    assert_eq!(outcome.charged, Credits::parse("2").expect("amount"));
    assert_eq!(outcome.remaining, Credits::parse("8").expect("amount"));
    assert_eq!(balance(&world).await, outcome.remaining);
}

#[tokio::test]
async fn a_window_serves_snapshots_at_the_stored_price() {
    let world = world(captured_pages(), "10", Duration::from_secs(5)).await;
    let google = ["https://www.linkedin.com/company/google"];
    let live = world
        .service
        .run(world.caller, &request(&google, ""))
        .await
        .expect("live");
    let stored = world
        .service
        .run(world.caller, &request(&google, r#","maxAgeHours":1"#))
        .await
        .expect("stored");
    assert_eq!(stored.response.results[0].source, RecordSource::Stored);
    assert_eq!(
        stored.response.results[0].fetched_at,
        live.response.results[0].fetched_at
    );
    assert_eq!(
        stored.response.results[0].record,
        live.response.results[0].record
    );
    assert_eq!(stored.charged, Credits::parse("0.5").expect("amount"));
    // Window 0 always fetches again.
    let again = world
        .service
        .run(world.caller, &request(&google, r#","maxAgeSeconds":0"#))
        .await
        .expect("live");
    assert_eq!(again.response.results[0].source, RecordSource::Live);
    assert!(again.response.results[0].fetched_at > live.response.results[0].fetched_at);
}

#[tokio::test]
async fn insufficient_credits_are_refused_before_any_fetch() {
    let world = world(captured_pages(), "1.5", Duration::from_secs(5)).await;
    let two = [
        "https://www.linkedin.com/company/google",
        "https://www.linkedin.com/company/audiense",
    ];
    let error = world
        .service
        .run(world.caller, &request(&two, ""))
        .await
        .expect_err("402");
    assert!(
        matches!(error, LookupError::Ledger(LedgerError::InsufficientCredits { available, required })
        if available == Credits::parse("1.5").expect("a") && required == Credits::parse("2").expect("r"))
    );
    // The same two at the stored price fit.
    assert!(
        world
            .service
            .run(world.caller, &request(&two, r#","maxAgeHours":24"#))
            .await
            .is_ok()
    );
    assert_eq!(
        balance(&world).await,
        Credits::parse("0.5").expect("amount")
    );
}

/// A loopback origin that accepts connections and never answers.
async fn stalling_origin() -> Origin {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let address = listener.local_addr().expect("address");
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = listener.accept().await {
            held.push(socket);
        }
    });
    Origin::parse(&format!("http://{address}")).expect("origin")
}

#[tokio::test]
async fn timeouts_give_504_and_charge_nothing() {
    let world = world(stalling_origin().await, "5", Duration::from_millis(300)).await;
    let started = std::time::Instant::now();
    let error = world
        .service
        .run(
            world.caller,
            &request(&["https://www.linkedin.com/company/google"], ""),
        )
        .await
        .expect_err("timed out");
    assert!(
        matches!(error, LookupError::TimedOut { timed_out: 1, .. }),
        "{error}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "abandoned at the time-out"
    );
    assert_eq!(balance(&world).await, Credits::parse("5").expect("amount"));
    // Nothing is left held: the full balance can be reserved again.
    assert!(
        world
            .ledger
            .reserve(world.caller.account, Credits::parse("5").expect("a"))
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_dropped_request_releases_its_hold() {
    let world = world(stalling_origin().await, "1", Duration::from_secs(30)).await;
    let request = request(&["https://www.linkedin.com/company/google"], "");
    // The caller gives up after 100 ms, as a disconnecting client does.
    let gave_up = tokio::time::timeout(
        Duration::from_millis(100),
        world.service.run(world.caller, &request),
    )
    .await;
    assert!(gave_up.is_err());
    let one = Credits::parse("1").expect("amount");
    let hold = test_support::eventually(
        Duration::from_secs(1),
        "the hold was not released after the request was dropped",
        || async { world.ledger.reserve(world.caller.account, one).await.ok() },
    )
    .await;
    world.ledger.release(hold).await.expect("released");
    assert_eq!(balance(&world).await, one, "nothing charged");
}
