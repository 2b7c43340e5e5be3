//! Jobs run over real parts: the captured pages as a folder origin, SQLite stores in one file.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use api_contract::{AccountEventType, CompanyRequest};
use bulk_jobs::{BulkJobs, BulkSettings, JobStatus, JobStore, Worked, output};
use company_lookup::{Caller, LookupService, LookupSettings};
use company_model::{RecordSource, Tenant};
use credit_ledger::{Credits, EntryKind, Ledger, SqliteLedger};
use job_store::SqliteJobStore;
use page_scraper::{Fetcher, FetcherSettings, Origin};
use page_url::NetworkDomain;
use snapshot_cache::SqliteSnapshotStore;

struct World {
    dir: tempfile::TempDir,
    ledger: Arc<SqliteLedger>,
    store: Arc<SqliteJobStore>,
    jobs: Arc<BulkJobs>,
    caller: Caller,
}

async fn world(credits: &str) -> World {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("c.db");
    let ledger = Arc::new(SqliteLedger::open(&db).await.expect("ledger"));
    let snapshots = Arc::new(SqliteSnapshotStore::open(&db).await.expect("snapshots"));
    let store = Arc::new(SqliteJobStore::open(&db).await.expect("jobs"));
    let account = ledger.ensure_account("test").await.expect("account");
    ledger
        .grant(account.id, Credits::parse(credits).expect("amount"), "test")
        .await
        .expect("grant");
    let origin = Origin::Directory(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/origin"),
    );
    let fetcher =
        Fetcher::new(FetcherSettings::new(origin, NetworkDomain::default())).expect("fetcher");
    let lookup = Arc::new(LookupService::new(
        fetcher,
        snapshots,
        ledger.clone(),
        LookupSettings::default(),
    ));
    let settings = BulkSettings {
        pages_per_lease: 2,
        resume_check: Duration::from_millis(50),
        idle_poll: Duration::from_millis(50),
        ..BulkSettings::default()
    };
    let jobs = BulkJobs::new(store.clone(), lookup, ledger.clone(), "test", settings);
    World {
        dir,
        ledger,
        store,
        jobs,
        caller: Caller {
            tenant: Tenant::live(account.id),
            key_id: Some(3),
        },
    }
}

/// Google three times (one page), Audiense, and a page the origin does not have.
fn request(window: &str) -> CompanyRequest {
    let body = format!(
        r#"{{"liUrls": ["https://www.linkedin.com/company/google", "https://www.linkedin.com/company/audiense",
            "https://www.linkedin.com/company/google/", "https://www.linkedin.com/company/nobody-here",
            "https://linkedin.com/company/google?trk=x"]{window}}}"#
    );
    CompanyRequest::from_job_json(body.as_bytes(), &NetworkDomain::default(), false)
        .expect("valid job")
}

async fn balance(world: &World) -> Credits {
    world
        .ledger
        .account(world.caller.tenant.account)
        .await
        .expect("ledger")
        .expect("account")
        .balance
}

async fn wait_for(world: &World, id: bulk_jobs::JobId, status: JobStatus) -> bulk_jobs::JobView {
    test_support::eventually(
        Duration::from_secs(10),
        &format!("the job never became {status:?}"),
        || async {
            let view = world
                .jobs
                .job(world.caller.tenant, id)
                .await
                .expect("job")
                .expect("exists");
            (view.job.status == status).then_some(view)
        },
    )
    .await
}

#[tokio::test]
async fn a_job_runs_to_the_end_charging_each_resolved_page_once() {
    let world = world("10").await;
    let submitted = world
        .jobs
        .submit(world.caller, &request(""))
        .await
        .expect("submitted");
    assert_eq!(submitted.job.status, JobStatus::Queued);
    let runner = world.jobs.start();
    let done = wait_for(&world, submitted.job.id, JobStatus::Done).await;
    runner.stop().await;
    assert_eq!(
        (done.job.total, done.job.resolved, done.job.unresolved),
        (5, 4, 1)
    );
    // Two distinct pages resolved, live: 2 credits; the unresolved page and the repeats cost nothing.
    assert_eq!(done.credits_charged, Credits::parse("2").expect("amount"));
    assert_eq!(balance(&world).await, Credits::parse("8").expect("amount"));
    let json = serde_json::to_value(done.info()).expect("json");
    assert_eq!(json["status"], "done");
    assert_eq!(json["credits_charged"], 2.0);

    let rows = world
        .jobs
        .inputs(world.caller.tenant, done.job.id, 0, 100)
        .await
        .expect("inputs")
        .expect("the account's job");
    let lines: Vec<serde_json::Value> = rows
        .iter()
        .map(|row| serde_json::from_slice(&row.ndjson_line().expect("done")).expect("json"))
        .collect();
    assert_eq!(lines.len(), 5);
    assert_eq!(lines[2]["position"], 2);
    assert_eq!(
        lines[2]["original_li_url"],
        "https://www.linkedin.com/company/google/"
    );
    assert_eq!(lines[2]["company_name"], "Google");
    assert_eq!(lines[2]["source"], "live");
    assert_eq!(lines[3]["error"], "not_found");
    assert!(lines[3].get("company_name").is_none());
    let csv = String::from_utf8(
        output::CsvLayout::whole()
            .csv_bytes(&rows, true)
            .expect("csv"),
    )
    .expect("utf-8");
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let header = reader.headers().expect("header").clone();
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    assert_eq!(records.len(), 5);
    let column = |name: &str| header.iter().position(|h| h == name).expect(name);
    assert_eq!(&records[1][column("company_name")], "Audiense");
    assert_eq!(&records[3][column("status")], "unresolved");
    assert_eq!(&records[3][column("error")], "not_found");

    // Another account sees nothing of it.
    let other = world.ledger.ensure_account("other").await.expect("account");
    assert!(
        world
            .jobs
            .job(Tenant::live(other.id), done.job.id)
            .await
            .expect("job")
            .is_none()
    );
    assert!(
        world
            .jobs
            .inputs(Tenant::live(other.id), done.job.id, 0, 10)
            .await
            .expect("inputs")
            .is_none()
    );
}

#[tokio::test]
async fn a_lease_run_again_after_a_crash_pays_nothing_more() {
    let world = world("10").await;
    let job = world
        .jobs
        .submit(world.caller, &request(", \"maxAgeHours\": 1"))
        .await
        .expect("submitted");
    // A worker takes a lease and its server dies after paying, before recording the answers: the lookup ran
    // (and charged under the lease's reference) but finish never happened.
    let lease = world
        .store
        .lease("test", 2, Duration::from_mins(1))
        .await
        .expect("lease")
        .expect("work");
    let request = CompanyRequest {
        urls: lease
            .pages
            .iter()
            .map(|page| api_contract::SubmittedUrl {
                original: page.as_str().into(),
                page: page.clone(),
                metadata: None,
            })
            .collect(),
        window: lease.window,
        stale_if_error: false,
        fields: None,
        include: lease.include,
        callback: None,
    };
    let lookup = LookupService::new(
        Fetcher::new(FetcherSettings::new(
            Origin::Directory(
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/origin"),
            ),
            NetworkDomain::default(),
        ))
        .expect("fetcher"),
        Arc::new(
            SqliteSnapshotStore::open(&world.dir.path().join("c.db"))
                .await
                .expect("snapshots"),
        ),
        world.ledger.clone(),
        LookupSettings::default(),
    );
    let paid = lookup
        .run_bulk(
            world.caller,
            &request,
            format!("job:{}:lease:{}", lease.job, lease.id),
        )
        .await
        .expect("served");
    assert_eq!(
        paid.charged,
        Credits::parse("1").expect("amount"),
        "Google and Audiense at 0.5"
    );
    // The server restarts: its lease comes back under the same id and the job finishes.
    let runner = world.jobs.start();
    let done = wait_for(&world, job.job.id, JobStatus::Done).await;
    runner.stop().await;
    assert_eq!(
        balance(&world).await,
        Credits::parse("9").expect("amount"),
        "paid once"
    );
    let charges = world
        .ledger
        .entries(world.caller.tenant, None, 100)
        .await
        .expect("rows")
        .into_iter()
        .filter(|row| row.kind == EntryKind::Charge)
        .count();
    assert_eq!(
        charges, 2,
        "one charge per lease: the crashed one, and the not-found page's (zero)"
    );
    assert_eq!(done.job.resolved, 4);
    let rows = world
        .jobs
        .inputs(world.caller.tenant, job.job.id, 0, 10)
        .await
        .expect("inputs")
        .expect("job");
    assert!(rows.iter().all(|row| row.answer.is_some()));
    assert!(matches!(
        rows[0].answer,
        Some(bulk_jobs::Answer::Found {
            source: RecordSource::Live | RecordSource::Stored,
            ..
        })
    ));
}

#[tokio::test]
async fn a_job_pauses_without_credits_and_resumes_after_a_grant() {
    // 1 credit pays for one live page of the two.
    let world = world("1").await;
    let job = world
        .jobs
        .submit(world.caller, &request(""))
        .await
        .expect("submitted");
    let runner = world.jobs.start();
    let paused = wait_for(&world, job.job.id, JobStatus::Paused).await;
    assert_eq!(
        paused.job.paused_reason.as_deref(),
        Some("insufficient_credits")
    );
    assert_eq!(
        balance(&world).await,
        Credits::ZERO,
        "spent to the last credit, never below"
    );
    assert_eq!(
        paused.info().paused_reason.as_deref(),
        Some("insufficient_credits")
    );
    // The pause is an ending to announce, once: job.paused with the job as the API shows it.
    let endings = world.jobs.endings(10).await.expect("listed");
    assert_eq!(endings.len(), 1, "{endings:?}");
    let pause = &endings[0];
    assert_eq!(pause.kind, Some(AccountEventType::JobPaused));
    assert_eq!(pause.tenant, world.caller.tenant);
    assert_eq!(pause.event_id, format!("evt_job_{}_1", job.job.id));
    assert_eq!(pause.data["job"]["paused_reason"], "insufficient_credits");
    world.jobs.announced(pause).await.expect("recorded");
    assert!(world.jobs.endings(10).await.expect("listed").is_empty());
    world
        .ledger
        .grant(
            world.caller.tenant.account,
            Credits::parse("5").expect("amount"),
            "top-up",
        )
        .await
        .expect("grant");
    let done = wait_for(&world, job.job.id, JobStatus::Done).await;
    runner.stop().await;
    assert_eq!(done.job.resolved, 4);
    assert_eq!(balance(&world).await, Credits::parse("4").expect("amount"));
    // Finishing is the second ending: job.finished, with the counts, the credits and where the results are.
    let endings = world.jobs.endings(10).await.expect("listed");
    assert_eq!(endings.len(), 1, "{endings:?}");
    let finish = &endings[0];
    assert_eq!(finish.kind, Some(AccountEventType::JobFinished));
    assert_eq!(finish.event_id, format!("evt_job_{}_2", job.job.id));
    assert_eq!(finish.data["job"]["status"], "done");
    assert_eq!(finish.data["job"]["resolved"], 4);
    assert_eq!(finish.data["job"]["credits_charged"], 2.0);
    assert_eq!(
        finish.data["results_url"],
        format!("/v1/network/company-data/jobs/{}/results", job.job.id)
    );
}

#[tokio::test]
async fn a_cancelled_job_is_not_worked_on() {
    let world = world("10").await;
    let job = world
        .jobs
        .submit(world.caller, &request(""))
        .await
        .expect("submitted");
    let cancelled = world
        .jobs
        .cancel(world.caller.tenant, job.job.id)
        .await
        .expect("cancel")
        .expect("job");
    assert_eq!(cancelled.job.status, JobStatus::Cancelled);
    assert_eq!(
        world.jobs.work_once(10).await.expect("worked"),
        Worked::Nothing
    );
    assert_eq!(balance(&world).await, Credits::parse("10").expect("amount"));
}
