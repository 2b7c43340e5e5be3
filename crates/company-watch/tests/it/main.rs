//! Watches over real parts: the captured Google page from a folder origin whose copy changes between refreshes,
//! a SQLite file for every store, a webhook receiver on loopback, and a clock moved by hand.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use api_contract::WatchRequest;
use company_lookup::{LookupService, LookupSettings};
use company_model::{AccountId, Tenant};
use company_watch::{ManualClock, WatchSettings, Watches, WorkDone};
use credit_ledger::{Credits, Ledger, SqliteLedger};
use hmac::Mac;
use page_scraper::{Fetcher, FetcherSettings, Origin};
use page_url::NetworkDomain;
use snapshot_cache::SqliteSnapshotStore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use watch_store::SqliteWatchStore;

/// A request the receiver got: its headers (names in lower case) and body.
#[derive(Clone, Debug)]
struct Received {
    headers: Vec<(String, String)>,
    body: String,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A webhook receiver on loopback answering every request with `status`.
struct Receiver {
    port: u16,
    got: Arc<Mutex<Vec<Received>>>,
    status: Arc<Mutex<u16>>,
}

impl Receiver {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("address").port();
        let (got, status) = (
            Arc::new(Mutex::new(Vec::new())),
            Arc::new(Mutex::new(200u16)),
        );
        let (seen, answer) = (Arc::clone(&got), Arc::clone(&status));
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let mut data = Vec::new();
                let mut buffer = [0u8; 8192];
                // Read the head, then the body its Content-Length announces.
                let received = loop {
                    let Ok(n) = stream.read(&mut buffer).await else {
                        break None;
                    };
                    if n == 0 {
                        break None;
                    }
                    data.extend_from_slice(&buffer[..n]);
                    let text = String::from_utf8_lossy(&data).into_owned();
                    let Some((head, body)) = text.split_once("\r\n\r\n") else {
                        continue;
                    };
                    let headers: Vec<(String, String)> = head
                        .lines()
                        .skip(1)
                        .filter_map(|l| l.split_once(':'))
                        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
                        .collect();
                    let length: usize = headers
                        .iter()
                        .find(|(n, _)| n == "content-length")
                        .and_then(|(_, v)| v.parse().ok())
                        .unwrap_or(0);
                    if body.len() >= length {
                        break Some(Received {
                            headers,
                            body: body.to_owned(),
                        });
                    }
                };
                let status = *answer.lock().expect("lock");
                if let Some(received) = received {
                    seen.lock().expect("lock").push(received);
                }
                let reply = format!(
                    "HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
                let _ = stream.write_all(reply.as_bytes()).await;
            }
        });
        Self { port, got, status }
    }

    fn received(&self) -> Vec<Received> {
        self.got.lock().expect("lock").clone()
    }

    fn answer_with(&self, status: u16) {
        *self.status.lock().expect("lock") = status;
    }
}

struct World {
    _dir: tempfile::TempDir,
    origin: PathBuf,
    ledger: Arc<SqliteLedger>,
    tenant: Tenant,
    clock: Arc<ManualClock>,
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
    let watches = Watches::new(
        Arc::new(SqliteWatchStore::open(&db).await.expect("watch store")),
        lookup,
        WatchSettings {
            allow_private,
            ..WatchSettings::default()
        },
        clock.clone(),
    )
    .expect("watches");
    World {
        _dir: dir,
        origin,
        ledger,
        tenant: Tenant::live(account),
        clock,
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

const WEBSITE: (&str, &str) = ("goo%2Egle%2F3DLEokh", "about%2Egoogle%2F");
const SIZE: (&str, &str) = ("10,001+ employees", "5,001-10,000 employees");

impl World {
    async fn watch(&self, webhook: &str) -> watch_store::WatchId {
        let body = format!(
            r#"{{"liUrls": ["https://www.linkedin.com/company/google"], "everyHours": 24, "webhookUrl": "{webhook}"}}"#
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
    let secret = world.watches.secret(world.tenant).await.expect("secret");

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
        use company_watch::Clock;
        self.clock.now().as_second()
    }
}

/// An endpoint request for `events` at the receiver on `port`.
fn endpoint_request(port: u16, events: &[&str]) -> api_contract::EndpointRequest {
    let body = serde_json::json!({
        "url": format!("http://127.0.0.1:{port}/hooks/account"),
        "events": events,
    });
    api_contract::EndpointRequest::from_json(body.to_string().as_bytes(), true).expect("valid")
}

#[tokio::test]
async fn account_events_reach_the_endpoints_that_want_them_signed_and_once() {
    let world = world(true).await;
    let (jobs, everything) = (Receiver::start().await, Receiver::start().await);
    let for_jobs = world
        .watches
        .create_endpoint(
            world.tenant,
            &endpoint_request(jobs.port, &["job.finished"]),
        )
        .await
        .expect("registered");
    world
        .watches
        .create_endpoint(
            world.tenant,
            &endpoint_request(everything.port, &["job.finished", "account.balance_low"]),
        )
        .await
        .expect("registered");
    let secret = world.watches.secret(world.tenant).await.expect("secret");

    // job.finished goes to both; the same job finishing announced again (another server) goes nowhere again.
    let data = serde_json::json!({ "job_id": "job_1", "status": "done" });
    let announce = |kind, id: &str| {
        world
            .watches
            .announce(world.tenant, kind, id.to_owned(), data.clone())
    };
    assert_eq!(
        announce(
            api_contract::AccountEventType::JobFinished,
            "evt_job_1_done"
        )
        .await
        .expect("queued"),
        2
    );
    assert_eq!(
        announce(
            api_contract::AccountEventType::JobFinished,
            "evt_job_1_done"
        )
        .await
        .expect("queued"),
        0
    );
    assert_eq!(
        announce(
            api_contract::AccountEventType::JobPaused,
            "evt_job_1_paused"
        )
        .await
        .expect("queued"),
        0,
        "no endpoint wants job.paused"
    );
    let done = world.after(Duration::ZERO).await;
    assert_eq!((done.delivered, done.failed), (2, 0));
    for receiver in [&jobs, &everything] {
        let received = receiver.received();
        assert_eq!(received.len(), 1);
        let event: serde_json::Value = serde_json::from_str(&received[0].body).expect("JSON body");
        assert_eq!(event["id"], "evt_job_1_done");
        assert_eq!(event["type"], "job.finished");
        assert_eq!(event["data"], data);
        assert_eq!(
            received[0].header("company-data-event-id"),
            Some("evt_job_1_done")
        );
        let signature = received[0]
            .header("company-data-signature")
            .expect("signed");
        assert!(company_watch::signature::verify(
            &secret,
            signature,
            received[0].body.as_bytes(),
            world.clock_seconds(),
            300
        ));
    }

    // A receiver that fails three times, then answers: the event arrives again with the same id each time,
    // and is delivered once (not again after its 2xx).
    jobs.answer_with(503);
    let ping = world
        .watches
        .ping(world.tenant, for_jobs.id)
        .await
        .expect("queued")
        .expect("the endpoint is the account's");
    assert_eq!(world.after(Duration::ZERO).await.failed, 1);
    assert_eq!(world.after(Duration::from_secs(30)).await.failed, 1);
    assert_eq!(world.after(Duration::from_mins(1)).await.failed, 1);
    jobs.answer_with(200);
    assert_eq!(world.after(Duration::from_mins(2)).await.delivered, 1);
    assert_eq!(
        world.after(Duration::from_hours(2)).await,
        WorkDone::default()
    );
    let pings: Vec<_> = jobs
        .received()
        .into_iter()
        .filter(|r| r.body.contains(r#""type":"ping""#))
        .collect();
    assert_eq!(pings.len(), 4, "three failures and the success");
    assert!(
        pings
            .iter()
            .all(|r| r.header("company-data-event-id") == Some(ping.as_str()))
    );
    assert!(
        everything.received().len() == 1,
        "a ping goes to the endpoint named only"
    );

    // Its deliveries, newest first, with their status.
    let deliveries = world
        .watches
        .endpoint_events(world.tenant, Some(for_jobs.id), 10)
        .await
        .expect("listed");
    assert_eq!(deliveries.len(), 2);
    assert_eq!(deliveries[0].event_id, ping);
    assert_eq!(
        (deliveries[0].attempts, deliveries[0].last_status),
        (4, Some(200))
    );
    assert!(deliveries[0].delivered_at.is_some());

    // Another account cannot ping or delete it, nor can the same account's test mode; the bound on endpoints
    // holds.
    let sandbox = Tenant::test(world.tenant.account);
    assert_eq!(
        world
            .watches
            .ping(sandbox, for_jobs.id)
            .await
            .expect("answers"),
        None
    );
    assert!(
        world
            .watches
            .endpoints(sandbox)
            .await
            .expect("answers")
            .is_empty()
    );
    let other = Tenant::live(AccountId(world.tenant.account.0 + 1));
    assert_eq!(
        world
            .watches
            .ping(other, for_jobs.id)
            .await
            .expect("answers"),
        None
    );
    assert!(
        !world
            .watches
            .delete_endpoint(other, for_jobs.id)
            .await
            .expect("answers")
    );
    for _ in 2..api_contract::MAX_ENDPOINTS {
        world
            .watches
            .create_endpoint(world.tenant, &endpoint_request(jobs.port, &["job.paused"]))
            .await
            .expect("under the bound");
    }
    let over = world
        .watches
        .create_endpoint(world.tenant, &endpoint_request(jobs.port, &["job.paused"]))
        .await;
    assert!(
        matches!(
            over,
            Err(company_watch::WatchError::TooManyEndpoints { .. })
        ),
        "{over:?}"
    );
}
