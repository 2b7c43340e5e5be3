//! The lookup over real parts: captured pages as a folder origin, a stalling loopback origin, SQLite stores.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use api_contract::CompanyRequest;
use company_lookup::{Caller, LookupError, LookupService, LookupSettings};
use company_model::{RecordSource, Tenant, UnresolvedCode};
use credit_ledger::{Credits, Ledger, LedgerError, SqliteLedger, TEST_BALANCE, WithTestMode};
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
            tenant: Tenant::live(account.id),
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
        .account(world.caller.tenant.account)
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
            .reserve(world.caller.tenant, Credits::parse("5").expect("a"))
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
        || async { world.ledger.reserve(world.caller.tenant, one).await.ok() },
    )
    .await;
    world.ledger.release(hold).await.expect("released");
    assert_eq!(balance(&world).await, one, "nothing charged");
}

/// A folder origin the test can change: Google's and Audiense's captured pages, copied.
fn changing_origin() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let company = dir.path().join("company");
    std::fs::create_dir(&company).expect("folder");
    let captured = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures");
    for name in ["google", "audiense"] {
        std::fs::copy(
            captured.join(format!("origin/company/{name}.html")),
            company.join(format!("{name}.html")),
        )
        .expect("copy");
    }
    (dir, company)
}

/// A world on a [`changing_origin`]: the origin's folder, its `company` folder, the world.
async fn changing_world() -> (tempfile::TempDir, PathBuf, World) {
    let (origin, company) = changing_origin();
    let world = world(
        Origin::Directory(origin.path().to_path_buf()),
        "10",
        Duration::from_secs(5),
    )
    .await;
    (origin, company, world)
}

/// The network bounces every page to its guest home page from now on (the captured block page).
fn block_everything(company: &std::path::Path) {
    let bounce = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/pages/blocked-guest-homepage-2024.html");
    for name in ["google", "audiense"] {
        std::fs::copy(&bounce, company.join(format!("{name}.html"))).expect("copy");
    }
}

#[tokio::test]
async fn a_blocked_page_says_when_to_retry_and_stale_if_error_serves_the_newest_snapshot() {
    let (_origin, company, world) = changing_world().await;
    let google = "https://www.linkedin.com/company/google";
    let audiense = "https://www.linkedin.com/company/audiense";
    let first = world
        .service
        .run(world.caller, &request(&[google], ""))
        .await
        .expect("live");
    assert_eq!(first.response.results[0].source, RecordSource::Live);
    block_everything(&company);

    // Without the flag: both unresolved as blocked, each saying when a route is free, nothing charged.
    let refused = world
        .service
        .run(world.caller, &request(&[google, audiense], ""))
        .await
        .expect("answered");
    assert!(refused.response.results.is_empty());
    assert_eq!(refused.charged, Credits::ZERO);
    for unresolved in &refused.response.unresolved {
        assert_eq!(unresolved.error, UnresolvedCode::Blocked);
        assert!(
            unresolved.retry_after_seconds.is_some_and(|s| s >= 1),
            "{unresolved:?}"
        );
    }

    // With it: Google from its snapshot of the first request, flagged stale, at the stored price; Audiense was
    // never stored and stays blocked.
    let fallback = world
        .service
        .run(
            world.caller,
            &request(&[google, audiense], r#","staleIfError":true"#),
        )
        .await
        .expect("answered");
    assert_eq!(fallback.response.results.len(), 1);
    let stale = &fallback.response.results[0];
    assert_eq!(stale.source, RecordSource::Stale);
    assert_eq!(stale.fetched_at, first.response.results[0].fetched_at);
    assert_eq!(stale.record, first.response.results[0].record);
    assert_eq!(fallback.response.unresolved[0].original_li_url, audiense);
    assert_eq!(
        fallback.response.unresolved[0].error,
        UnresolvedCode::Blocked
    );
    assert_eq!(fallback.charged, Credits::parse("0.5").expect("amount"));
    assert_eq!(
        balance(&world).await,
        Credits::parse("8.5").expect("amount"),
        "1 live, then 0.5 for the stale record, nothing for the blocked ones"
    );
}

/// A snapshot inside the window without the job count is fetched again with it; when the network refuses that,
/// the snapshot answers after all (asking for more never turns a record into an unresolved URL), its
/// `provenance` saying why the count is missing, at the window's price.
#[tokio::test]
async fn a_snapshot_without_the_count_answers_when_fetching_it_again_is_refused() {
    let (_origin, company, world) = changing_world().await;
    let google = "https://www.linkedin.com/company/google";
    world
        .service
        .run(world.caller, &request(&[google], ""))
        .await
        .expect("live");
    block_everything(&company);
    let answered = world
        .service
        .run(
            world.caller,
            &request(&[google], r#","maxAgeHours":1,"include":["job_count"]"#),
        )
        .await
        .expect("answered");
    assert!(
        answered.response.unresolved.is_empty(),
        "{:?}",
        answered.response.unresolved
    );
    let result = &answered.response.results[0];
    assert_eq!(result.source, RecordSource::Stored);
    let record = result.record.to_record().expect("a record");
    assert_eq!(record.company_name.as_deref(), Some("Google"));
    assert_eq!(record.job_count, None);
    let entry = record
        .provenance
        .and_then(|provenance| provenance.job_count)
        .expect("the reason");
    assert_eq!(entry.error, Some(UnresolvedCode::Blocked));
    assert_eq!(answered.charged, Credits::parse("0.5").expect("amount"));
}

#[tokio::test]
async fn stale_if_error_does_not_hide_a_page_the_network_says_is_gone() {
    let (_origin, company, world) = changing_world().await;
    let google = ["https://www.linkedin.com/company/google"];
    world
        .service
        .run(world.caller, &request(&google, ""))
        .await
        .expect("live");
    std::fs::remove_file(company.join("google.html")).expect("removed");
    let gone = world
        .service
        .run(world.caller, &request(&google, r#","staleIfError":true"#))
        .await
        .expect("answered");
    assert!(gone.response.results.is_empty());
    assert_eq!(gone.response.unresolved[0].error, UnresolvedCode::NotFound);
    assert_eq!(gone.response.unresolved[0].retry_after_seconds, None);
    assert_eq!(gone.charged, Credits::ZERO);
}

/// A test-mode tenant's request is served by the sandbox service (its own origin and snapshots) and charges nothing;
/// without a sandbox it is refused before anything is fetched.
#[tokio::test]
async fn a_test_tenant_is_served_by_the_sandbox_and_refused_without_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(empty.join("company")).expect("folder");
    let live_ledger = Arc::new(
        SqliteLedger::open(&dir.path().join("c.db"))
            .await
            .expect("ledger"),
    );
    let ledger: Arc<dyn Ledger> = Arc::new(WithTestMode::new(live_ledger));
    let account = ledger.ensure_account("acme").await.expect("account").id;
    ledger
        .grant(account, Credits::parse("1").expect("amount"), "test")
        .await
        .expect("grant");
    let service_on = |origin: Origin, file: &str| {
        let (ledger, path) = (Arc::clone(&ledger), dir.path().join(file));
        async move {
            LookupService::new(
                Fetcher::new(FetcherSettings::new(origin, NetworkDomain::default()))
                    .expect("fetcher"),
                Arc::new(SqliteSnapshotStore::open(&path).await.expect("snapshots")),
                ledger,
                LookupSettings::default(),
            )
        }
    };
    let google = request(&["https://www.linkedin.com/company/google"], "");
    let (live, test) = (
        Caller {
            tenant: Tenant::live(account),
            key_id: None,
        },
        Caller {
            tenant: Tenant::test(account),
            key_id: None,
        },
    );

    let live_only = service_on(Origin::Directory(empty.clone()), "live.db").await;
    assert!(matches!(
        live_only.run(test, &google).await,
        Err(LookupError::TestModeUnavailable)
    ));

    // The live side's origin has no pages at all; the sandbox's has the captured ones.
    let service = service_on(Origin::Directory(empty), "live.db")
        .await
        .with_test_mode(service_on(captured_pages(), "sandbox.db").await);
    let served = service.run(test, &google).await.expect("served");
    assert_eq!(served.response.results.len(), 1);
    assert_eq!(
        (served.charged, served.remaining),
        (Credits::ZERO, TEST_BALANCE),
        "a test tenant spends nothing, and is told so"
    );
    let unserved = service.run(live, &google).await.expect("answered");
    assert!(
        unserved.response.results.is_empty(),
        "the live side has no such page"
    );

    // Each side's snapshots are its own; the live account spent nothing on the test request.
    let page = google.urls[0].page.clone();
    let stored = |caller: Caller| {
        let store = Arc::clone(service.snapshots_for(caller.tenant).expect("a store"));
        let page = page.clone();
        async move {
            store
                .fresh_many(std::slice::from_ref(&page), jiff::Timestamp::MIN)
                .await
                .expect("read")
                .len()
        }
    };
    assert_eq!((stored(test).await, stored(live).await), (1, 0));
    let live_balance = ledger
        .account(account)
        .await
        .expect("read")
        .expect("exists")
        .balance;
    assert_eq!(live_balance, Credits::parse("1").expect("amount"));
}

/// A search at the account's cap is refused at once; an export's search (`search_in_turn`) waits its turn and
/// answers once a place is free, and gives up only after every wait. On tokio's paused clock: the waits take no
/// time, and the place is freed between the second wait and the third.
#[tokio::test(start_paused = true)]
async fn a_search_in_turn_waits_for_a_place_under_the_accounts_cap() {
    let mut world = world(captured_pages(), "10", Duration::from_secs(5)).await;
    let limits = Arc::new(shared_limits::MemoryLimits::new());
    world.service = LookupService::new(
        Fetcher::new(FetcherSettings::new(
            captured_pages(),
            NetworkDomain::default(),
        ))
        .expect("fetcher"),
        world
            .service
            .snapshots_for(world.caller.tenant)
            .expect("live")
            .clone(),
        world.ledger.clone(),
        LookupSettings {
            searches_per_account: 1,
            ..LookupSettings::default()
        },
    )
    .with_limits(limits.clone());
    let search = api_contract::SearchRequest::from_json(b"{}").expect("a search");
    // The account's one place, taken (as another server on the same limits store takes it).
    let name = company_lookup::search_cap_key(world.caller.tenant);
    let cap = shared_limits::Cap::new(limits, 1);
    let held = cap
        .admit(&name, 1, Duration::from_hours(1))
        .await
        .expect("the place");
    match world.service.search(world.caller, &search).await {
        Err(LookupError::TooManySearches { limit, retry_after }) => {
            assert_eq!(
                (limit, retry_after),
                (1, company_lookup::SEARCH_RETRY_AFTER)
            );
        }
        other => panic!("expected a refusal at the cap, got {other:?}"),
    }
    // Every wait (SEARCH_TURNS of SEARCH_RETRY_AFTER) passes with the place still taken.
    let started = tokio::time::Instant::now();
    assert!(matches!(
        world.service.search_in_turn(world.caller, &search).await,
        Err(LookupError::TooManySearches { .. })
    ));
    assert_eq!(
        started.elapsed(),
        company_lookup::SEARCH_RETRY_AFTER * company_lookup::SEARCH_TURNS
    );
    // The place is freed two and a half waits in: the search after the third wait answers.
    let started = tokio::time::Instant::now();
    let freeing = async {
        tokio::time::sleep(company_lookup::SEARCH_RETRY_AFTER * 5 / 2).await;
        held.leave().await;
    };
    let (answer, ()) = tokio::join!(world.service.search_in_turn(world.caller, &search), freeing);
    assert!(
        answer
            .expect("answered once the place was free")
            .results
            .is_empty()
    );
    assert_eq!(started.elapsed(), company_lookup::SEARCH_RETRY_AFTER * 3);
}
