//! Watches over real parts: the captured Google page from a folder origin whose copy changes between refreshes,
//! a SQLite file for every store, a webhook receiver on loopback, and a clock moved by hand.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use account_webhooks::{ManualClock, WebhookSettings, Webhooks};
use api_contract::WatchRequest;
use company_lookup::{LookupService, LookupSettings};
use company_model::Tenant;
use company_watch::{WatchSettings, Watches, WorkDone};
use credit_ledger::{Credits, Ledger, SqliteLedger};
use hmac::Mac;
use page_scraper::{Fetcher, FetcherSettings, Origin};
use page_url::NetworkDomain;
use snapshot_cache::SqliteSnapshotStore;
use test_support::Receiver;
use watch_store::SqliteWatchStore;

struct World {
    _dir: tempfile::TempDir,
    origin: PathBuf,
    ledger: Arc<SqliteLedger>,
    tenant: Tenant,
    clock: Arc<ManualClock>,
    webhooks: Arc<Webhooks>,
    watches: Watches,
}

async fn world(allow_private: bool) -> World {
    let dir = tempfile::tempdir().expect("temp dir");
    let origin = dir.path().join("origin");
    std::fs::create_dir_all(origin.join("company")).expect("origin folder");
    serve_google(&origin, &[]);
    let db = dir.path().join("c.db");
    let ledger = Arc::new(SqliteLedger::open(&db).await.expect("ledger"));
    let account = ledger.ensure_account("acme").await.expect("account").id;
    ledger
        .grant(account, Credits::parse("10").expect("amount"), "test")
        .await
        .expect("granted");
    let snapshots = Arc::new(SqliteSnapshotStore::open(&db).await.expect("snapshots"));
    let fetcher = Fetcher::new(FetcherSettings::new(
        Origin::Directory(origin.clone()),
        NetworkDomain::default(),
    ))
    .expect("fetcher");
    let lookup = Arc::new(LookupService::new(
        fetcher,
        snapshots,
        ledger.clone(),
        LookupSettings::default(),
    ));
    let clock = Arc::new(ManualClock::new(
        jiff::Timestamp::now()
            .round(jiff::Unit::Millisecond)
            .expect("rounds"),
    ));
    let store = Arc::new(SqliteWatchStore::open(&db).await.expect("watch store"));
    let webhooks = Arc::new(
        Webhooks::new(
            store.clone(),
            ledger.clone(),
            WebhookSettings {
                allow_private,
                ..WebhookSettings::default()
            },
            clock.clone(),
        )
        .expect("webhooks"),
    );
    let watches = Watches::new(
        store,
        lookup,
        WatchSettings::default(),
        Arc::clone(&webhooks),
    );
    World {
        _dir: dir,
        origin,
        ledger,
        tenant: Tenant::live(account),
        clock,
        webhooks,
        watches,
    }
}

/// The captured Google page with `edits` applied, as the origin's copy.
fn serve_google(origin: &Path, edits: &[(&str, &str)]) {
    let captured = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/origin/company/google.html");
    let mut html = std::fs::read_to_string(captured).expect("captured page");
    for (from, to) in edits {
        assert!(html.contains(from), "the page shows {from}");
        html = html.replace(from, to);
    }
    std::fs::write(origin.join("company/google.html"), html).expect("written");
}

/// The real guest job search as the origin's answer to Google's (`jobs/1441.html`), its count `count` as printed.
fn serve_job_search(origin: &Path, count: &str) {
    let captured = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/pages/jobs-guest-search-2026.html");
    let html = std::fs::read_to_string(captured).expect("captured page");
    let printed = r#"results-context-header__job-count">2000+<"#;
    assert!(html.contains(printed), "the search prints 2000+");
    let html = html.replace(
        printed,
        &format!(r#"results-context-header__job-count">{count}<"#),
    );
    std::fs::create_dir_all(origin.join("jobs")).expect("jobs folder");
    std::fs::write(origin.join("jobs/1441.html"), html).expect("written");
}

const WEBSITE: (&str, &str) = ("goo%2Egle%2F3DLEokh", "about%2Egoogle%2F");
const SIZE: (&str, &str) = ("10,001+ employees", "5,001-10,000 employees");

impl World {
    async fn watch(&self, webhook: &str) -> watch_store::WatchId {
        self.watch_with(webhook, "").await
    }

    /// A daily watch of Google with `extra` members in its body (`, "fields": [...]`).
    async fn watch_with(&self, webhook: &str, extra: &str) -> watch_store::WatchId {
        let body = format!(
            r#"{{"liUrls": ["https://www.linkedin.com/company/google"], "everyHours": 24, "webhookUrl": "{webhook}"{extra}}}"#
        );
        let request = WatchRequest::from_json(body.as_bytes(), &NetworkDomain::default(), true)
            .expect("valid");
        let created = self
            .watches
            .create(self.tenant, &request)
            .await
            .expect("created");
        created[0].id
    }

    async fn balance(&self) -> String {
        self.ledger
            .account(self.tenant.account)
            .await
            .expect("read")
            .expect("exists")
            .balance
            .to_string()
    }

    async fn after(&self, wait: Duration) -> WorkDone {
        self.clock.advance(wait);
        self.watches.work_once().await.expect("works")
    }
}

const DAY: Duration = Duration::from_hours(24);

#[tokio::test]
async fn a_change_delivers_one_signed_event_and_no_change_delivers_nothing() {
    let world = world(true).await;
    let receiver = Receiver::start().await;
    let id = world
        .watch(&format!("http://127.0.0.1:{}/hooks/company", receiver.port))
        .await;
    let secret = world.webhooks.secret(world.tenant).await.expect("secret");

    // Nothing is due before the period; the first refresh has no earlier record to compare with.
    assert_eq!(world.after(Duration::ZERO).await, WorkDone::default());
    assert_eq!(
        world.after(DAY).await,
        WorkDone {
            refreshed: 1,
            ..WorkDone::default()
        }
    );
    assert_eq!(world.balance().await, "9", "one live price per refresh");
    // The same page again: no event.
    assert_eq!(
        world.after(DAY).await,
        WorkDone {
            refreshed: 1,
            ..WorkDone::default()
        }
    );
    assert_eq!(world.balance().await, "8");
    assert!(receiver.received().is_empty());

    // The page changes its website: one event, signed, delivered.
    serve_google(&world.origin, &[WEBSITE]);
    assert_eq!(
        world.after(DAY).await,
        WorkDone {
            refreshed: 1,
            events: 1,
            delivered: 1,
            failed: 0
        }
    );
    assert_eq!(world.balance().await, "7");
    let received = receiver.received();
    assert_eq!(received.len(), 1);
    let event: serde_json::Value = serde_json::from_str(&received[0].body).expect("JSON body");
    assert_eq!(event["type"], "company.changed");
    assert_eq!(event["watch_id"], id.to_string());
    assert_eq!(
        event["final_li_url"],
        "https://www.linkedin.com/company/google"
    );
    let fields: Vec<&str> = event["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .filter_map(|c| c["field"].as_str())
        .collect();
    assert_eq!(fields, ["domain", "website"]);
    assert_eq!(event["record"]["website"], "https://about.google/");
    assert_eq!(
        received[0].header("company-data-event-id"),
        event["id"].as_str()
    );

    // The signature, checked as a receiver would, with nothing of the service's code.
    let header = received[0]
        .header("company-data-signature")
        .expect("signed");
    let (t, v1) = header.split_once(',').expect("t and v1");
    let t = t.strip_prefix("t=").expect("t");
    assert_eq!(
        t,
        world.clock_seconds().to_string(),
        "signed at the service's time"
    );
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).expect("key");
    mac.update(format!("{t}.{}", received[0].body).as_bytes());
    let sent: Vec<u8> = v1
        .strip_prefix("v1=")
        .expect("v1")
        .as_bytes()
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).expect("hex"), 16).expect("hex"))
        .collect();
    assert_eq!(sent, mac.finalize().into_bytes().to_vec());

    // Listed as delivered.
    let watch = world
        .watches
        .get(world.tenant, id)
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(
        watch.last_delivery.as_ref().and_then(|d| d.status),
        Some(200)
    );
    assert!(watch.last_change_at.is_some());
}

/// A change is also the account's event: `company.changed` reaches the account's endpoint that wants it (with the
/// watch event's id, in the account event's envelope, signed the same way) and the account's feed.
#[tokio::test]
async fn a_change_reaches_the_account_s_endpoints_and_feed_with_the_watch_event_s_id() {
    let world = world(true).await;
    let receiver = Receiver::start().await;
    let hooks = format!("http://127.0.0.1:{}/hooks", receiver.port);
    world.watch(&format!("{hooks}/company")).await;
    // One endpoint that wants the change, one that does not.
    for (path, kind) in [("account", "company.changed"), ("jobs", "job.finished")] {
        let endpoint = api_contract::EndpointRequest::from_json(
            format!(r#"{{"url": "{hooks}/{path}", "events": ["{kind}"]}}"#).as_bytes(),
            true,
        )
        .expect("valid");
        world
            .webhooks
            .create_endpoint(world.tenant, &endpoint)
            .await
            .expect("registered");
    }

    world.after(DAY).await;
    serve_google(&world.origin, &[WEBSITE]);
    let done = world.after(DAY).await;
    assert_eq!((done.events, done.delivered), (1, 2), "{done:?}");
    let received = receiver.received();
    assert_eq!(
        received.len(),
        2,
        "the watch's URL and the one endpoint that wants it"
    );
    let bodies: Vec<serde_json::Value> = received
        .iter()
        .map(|r| serde_json::from_str(&r.body).expect("JSON body"))
        .collect();
    let watch_event = bodies
        .iter()
        .find(|b| b.get("watch_id").is_some())
        .expect("the watch's");
    let account_event = bodies
        .iter()
        .find(|b| b.get("data").is_some())
        .expect("the account's");
    assert_eq!(account_event["id"], watch_event["id"]);
    assert_eq!(account_event["type"], "company.changed");
    assert_eq!(account_event["created_at"], watch_event["created_at"]);
    for member in ["watch_id", "final_li_url", "changes", "record"] {
        assert_eq!(
            account_event["data"][member], watch_event[member],
            "{member}"
        );
    }
    assert!(
        received
            .iter()
            .all(|r| r.header("company-data-signature").is_some())
    );

    let feed = world
        .webhooks
        .events(world.tenant, None, &[], 10)
        .await
        .expect("reads")
        .expect("from the oldest");
    assert_eq!(feed.len(), 1);
    let kept: serde_json::Value = serde_json::from_str(&feed[0].body).expect("JSON");
    assert_eq!(
        &kept, account_event,
        "the feed keeps the body the endpoint was sent"
    );
}

/// A watch that follows `job_count` fetches the job search with each refresh (at the page's price) and announces
/// the count's change like any other.
#[tokio::test]
async fn a_watch_that_follows_the_job_count_fetches_it_and_announces_its_change() {
    let world = world(true).await;
    let receiver = Receiver::start().await;
    serve_job_search(&world.origin, "1,213");
    let id = world
        .watch_with(
            &format!("http://127.0.0.1:{}/hooks/company", receiver.port),
            r#", "fields": ["job_count"]"#,
        )
        .await;
    let watch = world
        .watches
        .get(world.tenant, id)
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(
        company_watch::watch_info(&watch).include,
        [api_contract::Include::JobCount],
        "following a count fetches it"
    );
    world.after(DAY).await;
    world.after(DAY).await;
    assert!(receiver.received().is_empty(), "the same count: no event");
    assert_eq!(world.balance().await, "8", "one company per refresh");

    serve_job_search(&world.origin, "1,250");
    let done = world.after(DAY).await;
    assert_eq!((done.events, done.delivered), (1, 1), "{done:?}");
    let event: serde_json::Value =
        serde_json::from_str(&receiver.received()[0].body).expect("JSON body");
    assert_eq!(event["changes"][0]["field"], "job_count", "{event}");
    assert_eq!(
        (
            &event["changes"][0]["before"],
            &event["changes"][0]["after"]
        ),
        (&serde_json::json!(1213), &serde_json::json!(1250))
    );
}

#[tokio::test]
async fn a_failing_receiver_gets_retries_with_backoff_then_the_watch_is_disabled() {
    let world = world(true).await;
    let receiver = Receiver::start().await;
    receiver.answer_with(500);
    let id = world
        .watch(&format!("http://127.0.0.1:{}/hooks/company", receiver.port))
        .await;
    world.after(DAY).await;
    serve_google(&world.origin, &[SIZE]);
    let first = world.after(DAY).await;
    assert_eq!((first.events, first.failed), (1, 1));
    // Move on 30 s at a time for 25 h: every attempt the schedule allows, and nothing after the window.
    for _ in 0..(25 * 120) {
        world.after(Duration::from_secs(30)).await;
    }
    let times: Vec<i64> = receiver
        .received()
        .iter()
        .filter_map(|r| {
            r.header("company-data-signature")?
                .split(',')
                .next()?
                .strip_prefix("t=")?
                .parse()
                .ok()
        })
        .collect();
    let gaps: Vec<i64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(
        &gaps[..7],
        [30, 60, 120, 240, 480, 960, 1920],
        "doubling from 30 s"
    );
    assert!(
        gaps[7..].iter().all(|g| *g == 3600),
        "then hourly: {gaps:?}"
    );
    let span = times.last().expect("attempts") - times[0];
    assert!(
        (23 * 3600..=24 * 3600).contains(&span),
        "retried for the 24 h window: {span} s"
    );
    let watch = world
        .watches
        .get(world.tenant, id)
        .await
        .expect("read")
        .expect("exists");
    assert!(watch.disabled_at.is_some(), "disabled after the window");
    assert!(
        watch
            .disabled_reason
            .as_deref()
            .is_some_and(|r| r.contains("HTTP 500")),
        "{watch:?}"
    );
    // A disabled watch is not refreshed, so it costs nothing more.
    let balance = world.balance().await;
    world.after(DAY * 3).await;
    assert_eq!(world.balance().await, balance);
}

#[tokio::test]
async fn private_addresses_are_refused_without_the_flag() {
    let world = world(false).await;
    let receiver = Receiver::start().await;
    let by_address = world
        .watch(&format!("https://127.0.0.1:{}/hooks", receiver.port))
        .await;
    let by_name = world
        .watch(&format!("https://localhost:{}/hooks", receiver.port))
        .await;
    world.after(DAY).await;
    serve_google(&world.origin, &[WEBSITE]);
    let done = world.after(DAY).await;
    assert_eq!((done.events, done.delivered, done.failed), (2, 0, 2));
    assert!(
        receiver.received().is_empty(),
        "nothing reached the private address"
    );
    for id in [by_address, by_name] {
        let watch = world
            .watches
            .get(world.tenant, id)
            .await
            .expect("read")
            .expect("exists");
        let error = watch
            .last_delivery
            .and_then(|d| d.error)
            .unwrap_or_default();
        assert!(error.contains("not public"), "{error}");
    }
}

impl World {
    fn clock_seconds(&self) -> i64 {
        use account_webhooks::Clock;
        self.clock.now().as_second()
    }
}
