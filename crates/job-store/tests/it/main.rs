//! The job store on both engines, a real SQLite file and a real PostgreSQL database.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use api_contract::{FreshnessWindow, Include, Includes, InputMetadata, JobCallback, RecordFields};
use company_model::{AccountId, RecordJson, RecordSource, Tenant, UnresolvedCode};
use job_store::{
    Answer, Created, Job, JobStatus, JobStore, JobStoreError, NewJob, PgJobStore, QueueBound,
    SqliteJobStore,
};
use page_url::{NetworkDomain, PageUrl};
use test_support::Engine;

/// Room for any job: the tests of the queue itself are not about its bound.
const UNBOUNDED: QueueBound = QueueBound {
    open_jobs: u32::MAX,
    queued_inputs: u64::MAX,
};

/// [`JobStore::create`] with room for any job.
trait CreateUnbounded {
    fn create_unbounded(
        &self,
        job: NewJob,
    ) -> impl std::future::Future<Output = Result<Job, JobStoreError>> + Send;
}

impl<T: JobStore + ?Sized> CreateUnbounded for T {
    async fn create_unbounded(&self, job: NewJob) -> Result<Job, JobStoreError> {
        match self.create(job, UNBOUNDED).await? {
            Created::Job(job) => Ok(*job),
            refused => panic!("refused without a bound: {refused:?}"),
        }
    }
}

/// A job store on the engine's database; each call is another process's connection to it.
async fn open_store(engine: &Engine) -> Arc<dyn JobStore> {
    match engine {
        Engine::Sqlite(dir) => Arc::new(
            SqliteJobStore::open(&dir.path().join("j.db"))
                .await
                .expect("opens"),
        ),
        Engine::Postgres(database) => Arc::new(
            PgJobStore::with_pool(
                pg_pool::PgPool::connect(&database.url)
                    .await
                    .expect("connects"),
            )
            .await
            .expect("migrates"),
        ),
    }
}

fn submitted(text: &str) -> (String, PageUrl) {
    (
        text.to_owned(),
        PageUrl::parse_submitted(text, &NetworkDomain::default()).expect("valid URL"),
    )
}

fn new_job(account: i64, urls: &[&str]) -> NewJob {
    NewJob {
        tenant: Tenant::live(AccountId(account)),
        key_id: Some(7),
        window: FreshnessWindow::from_hours(6.0).expect("window"),
        urls: urls.iter().map(|u| submitted(u)).collect(),
        metadata: Vec::new(),
        fields: None,
        include: Includes::NONE,
        callback: None,
    }
}

fn found(name: &str) -> Answer {
    Answer::Found {
        record: RecordJson::from_stored(format!(r#"{{"company_name":"{name}"}}"#)).expect("json"),
        source: RecordSource::Live,
        fetched_at: jiff::Timestamp::from_millisecond(1_700_000_000_123).expect("time"),
    }
}

const MINUTE: Duration = Duration::from_mins(1);

async fn a_job_is_leased_answered_and_read_back_in_input_order(engine: &Engine) {
    let store = open_store(engine).await;
    // Three inputs name Google: one page, answered once, counted three times.
    let job = store
        .create_unbounded(new_job(
            1,
            &[
                "https://www.linkedin.com/company/google",
                "https://www.linkedin.com/company/missing",
                "https://linkedin.com/company/google/",
                "https://www.linkedin.com/company/google?trk=x",
            ],
        ))
        .await
        .expect("created");
    assert_eq!(job.status, JobStatus::Queued);
    assert_eq!((job.total, job.pages, job.done), (4, 2, 0));
    assert_eq!(job.window.duration(), Duration::from_hours(6));
    assert!(
        store
            .job(Tenant::live(AccountId(2)), job.id)
            .await
            .expect("read")
            .is_none(),
        "another account's job"
    );

    let lease = store
        .lease("web-1", 10, MINUTE)
        .await
        .expect("lease")
        .expect("work");
    assert_eq!(
        (lease.job, lease.tenant, lease.key_id),
        (job.id, Tenant::live(AccountId(1)), Some(7))
    );
    assert_eq!(lease.pages.len(), 2);
    assert!(
        store
            .lease("web-1", 10, MINUTE)
            .await
            .expect("lease")
            .is_none(),
        "all pages leased"
    );
    let running = store
        .job(Tenant::live(AccountId(1)), job.id)
        .await
        .expect("read")
        .expect("job");
    assert_eq!(running.status, JobStatus::Running);
    assert!(running.started_at.is_some());

    let answers = vec![
        (lease.pages[0].clone(), found("Google")),
        (
            lease.pages[1].clone(),
            Answer::Unresolved {
                code: UnresolvedCode::NotFound,
                message: "The page was not found.".into(),
            },
        ),
    ];
    assert!(
        store
            .finish(lease.id, answers.clone(), 1500)
            .await
            .expect("finish")
    );
    assert!(
        !store.finish(lease.id, answers, 1500).await.expect("finish"),
        "recorded once"
    );
    let done = store
        .job(Tenant::live(AccountId(1)), job.id)
        .await
        .expect("read")
        .expect("job");
    assert_eq!(done.status, JobStatus::Done);
    assert_eq!((done.done, done.resolved, done.unresolved), (4, 3, 1));
    assert_eq!((done.pages_done, done.charged_millis), (2, 1500));
    assert!(done.finished_at.is_some());

    let rows = store.inputs(job.id, 0, 100).await.expect("inputs");
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[2].original, "https://linkedin.com/company/google/");
    assert_eq!(rows[2].answer, Some(found("Google")));
    assert!(matches!(
        rows[1].answer,
        Some(Answer::Unresolved {
            code: UnresolvedCode::NotFound,
            ..
        })
    ));
    let tail = store.inputs(job.id, 3, 100).await.expect("inputs");
    assert_eq!(tail.iter().map(|r| r.position).collect::<Vec<_>>(), vec![3]);
}

async fn accounts_take_turns_and_pages_are_leased_once_across_servers(engine: &Engine) {
    let (one, two) = (open_store(engine).await, open_store(engine).await);
    let big: Vec<String> = (0..60)
        .map(|n| format!("https://www.linkedin.com/company/a{n}"))
        .collect();
    let big: Vec<&str> = big.iter().map(String::as_str).collect();
    let a = one
        .create_unbounded(new_job(1, &big))
        .await
        .expect("created");
    let b = one
        .create_unbounded(new_job(
            2,
            &[
                "https://www.linkedin.com/company/b0",
                "https://www.linkedin.com/company/b1",
            ],
        ))
        .await
        .expect("created");
    // Account 1 is served first (older job); account 2's job comes next even though account 1 has more.
    let first = one
        .lease("web-1", 5, MINUTE)
        .await
        .expect("lease")
        .expect("work");
    let second = two
        .lease("web-2", 5, MINUTE)
        .await
        .expect("lease")
        .expect("work");
    assert_eq!((first.job, second.job), (a.id, b.id));

    // Two servers leasing at once never get the same page.
    let leases = futures::future::join_all((0..8).map(|n| {
        let store = Arc::clone(if n % 2 == 0 { &one } else { &two });
        async move {
            store
                .lease(&format!("web-{n}"), 5, MINUTE)
                .await
                .expect("lease")
        }
    }))
    .await;
    let mut seen: HashSet<PageUrl> = first.pages.iter().cloned().collect();
    for lease in leases.into_iter().flatten().chain([second]) {
        for page in lease.pages {
            assert!(seen.insert(page.clone()), "{page} leased twice");
        }
    }
    assert_eq!(seen.len(), 5 + 2 + 8 * 5, "every lease got pages");
}

async fn an_abandoned_lease_is_handed_out_again_whole_under_its_id(engine: &Engine) {
    let store = open_store(engine).await;
    let job = store
        .create_unbounded(new_job(
            1,
            &[
                "https://www.linkedin.com/company/a",
                "https://www.linkedin.com/company/b",
                "https://www.linkedin.com/company/c",
            ],
        ))
        .await
        .expect("created");
    let lease = store
        .lease("web-1", 2, MINUTE)
        .await
        .expect("lease")
        .expect("work");
    // On a shared database another server's restart does not touch web-1's lease (one process serves a
    // SQLite file, so there every lease is the restarted server's).
    if matches!(engine, Engine::Postgres(_)) {
        assert_eq!(store.release_own("web-2").await.expect("released"), 0);
    }
    let rest = store
        .lease("web-2", 2, MINUTE)
        .await
        .expect("lease")
        .expect("work");
    assert_eq!(rest.pages.len(), 1);
    assert!(
        store
            .lease("web-2", 2, MINUTE)
            .await
            .expect("lease")
            .is_none()
    );
    // web-1 restarts: its lease comes back as it was.
    let own = if matches!(engine, Engine::Postgres(_)) {
        1
    } else {
        2
    };
    assert_eq!(store.release_own("web-1").await.expect("released"), own);
    let again = store
        .lease("web-1", 2, MINUTE)
        .await
        .expect("lease")
        .expect("work");
    assert_eq!((again.id, &again.pages), (lease.id, &lease.pages));

    // A lease that ran out of time comes back too.
    store.give_back(rest.id).await.expect("given back");
    let short = store
        .lease("web-3", 2, Duration::from_millis(1))
        .await
        .expect("lease")
        .expect("work");
    assert_ne!(short.id, rest.id, "given back pages get a new lease");
    assert_eq!(short.pages, rest.pages);
    // Once its millisecond has run out, another server takes it.
    let retaken = test_support::eventually(
        Duration::from_secs(5),
        "the lapsed lease never came back",
        || async { store.lease("web-4", 2, MINUTE).await.expect("lease") },
    )
    .await;
    assert_eq!(retaken.id, short.id);
    assert_eq!(
        store
            .job(Tenant::live(AccountId(1)), job.id)
            .await
            .expect("read")
            .expect("job")
            .status,
        JobStatus::Running
    );
}

async fn paused_and_cancelled_jobs_are_not_leased_and_old_jobs_are_purged(engine: &Engine) {
    let store = open_store(engine).await;
    let urls = [
        "https://www.linkedin.com/company/a",
        "https://www.linkedin.com/company/b",
    ];
    let paused = store
        .create_unbounded(new_job(1, &urls))
        .await
        .expect("created");
    let cancelled = store
        .create_unbounded(new_job(2, &urls))
        .await
        .expect("created");
    store
        .pause(paused.id, "insufficient_credits")
        .await
        .expect("paused");
    let job = store
        .job(Tenant::live(AccountId(1)), paused.id)
        .await
        .expect("read")
        .expect("job");
    assert_eq!(
        (job.status, job.paused_reason.as_deref()),
        (JobStatus::Paused, Some("insufficient_credits"))
    );
    assert_eq!(
        store.paused().await.expect("paused"),
        vec![(paused.id, Tenant::live(AccountId(1)))]
    );
    let lease = store
        .lease("web-1", 1, MINUTE)
        .await
        .expect("lease")
        .expect("work");
    assert_eq!(lease.job, cancelled.id);
    let job = store
        .cancel(Tenant::live(AccountId(2)), cancelled.id)
        .await
        .expect("cancel")
        .expect("job");
    assert_eq!(job.status, JobStatus::Cancelled);
    assert!(
        store
            .cancel(Tenant::live(AccountId(1)), cancelled.id)
            .await
            .expect("cancel")
            .is_none(),
        "not its job"
    );
    assert!(
        store
            .lease("web-1", 1, MINUTE)
            .await
            .expect("lease")
            .is_none()
    );
    // The lease in flight still records what it paid for.
    assert!(
        store
            .finish(lease.id, vec![(lease.pages[0].clone(), found("A"))], 500)
            .await
            .expect("finish")
    );
    let job = store
        .job(Tenant::live(AccountId(2)), cancelled.id)
        .await
        .expect("read")
        .expect("job");
    assert_eq!(
        (job.status, job.done, job.charged_millis),
        (JobStatus::Cancelled, 1, 500)
    );

    store.resume(paused.id).await.expect("resumed");
    assert!(store.paused().await.expect("paused").is_empty());
    assert!(
        store
            .lease("web-1", 5, MINUTE)
            .await
            .expect("lease")
            .is_some()
    );

    let listed = store
        .jobs(Tenant::live(AccountId(2)), None, 10)
        .await
        .expect("list");
    assert_eq!(
        listed.iter().map(|j| j.id).collect::<Vec<_>>(),
        vec![cancelled.id]
    );
    assert_eq!(
        store
            .purge(jiff::Timestamp::now() - jiff::SignedDuration::from_hours(1))
            .await
            .expect("purge"),
        0
    );
    assert_eq!(
        store
            .purge(jiff::Timestamp::now() + jiff::SignedDuration::from_secs(1))
            .await
            .expect("purge"),
        1
    );
    assert!(
        store
            .job(Tenant::live(AccountId(2)), cancelled.id)
            .await
            .expect("read")
            .is_none()
    );
    assert!(
        store
            .inputs(cancelled.id, 0, 10)
            .await
            .expect("inputs")
            .is_empty()
    );
    assert!(
        store
            .job(Tenant::live(AccountId(1)), paused.id)
            .await
            .expect("read")
            .is_some(),
        "unfinished jobs stay"
    );
}

async fn a_deleted_job_leaves_nothing_and_its_lease_in_flight_records_nothing(engine: &Engine) {
    let store = open_store(engine).await;
    let running = store
        .create_unbounded(new_job(
            1,
            &[
                "https://www.linkedin.com/company/a",
                "https://www.linkedin.com/company/b",
            ],
        ))
        .await
        .expect("created");
    let kept = store
        .create_unbounded(new_job(1, &["https://www.linkedin.com/company/d"]))
        .await
        .expect("created");
    let lease = store
        .lease("web-1", 1, MINUTE)
        .await
        .expect("lease")
        .expect("work");
    assert_eq!(lease.job, running.id);
    assert!(
        !store
            .delete(Tenant::live(AccountId(2)), running.id)
            .await
            .expect("delete"),
        "not its job"
    );
    assert!(
        store
            .delete(Tenant::live(AccountId(1)), running.id)
            .await
            .expect("delete")
    );
    assert!(
        !store
            .delete(Tenant::live(AccountId(1)), running.id)
            .await
            .expect("delete"),
        "already gone"
    );
    assert!(
        store
            .job(Tenant::live(AccountId(1)), running.id)
            .await
            .expect("read")
            .is_none()
    );
    assert!(
        store
            .inputs(running.id, 0, 10)
            .await
            .expect("inputs")
            .is_empty()
    );
    assert!(
        !store
            .finish(lease.id, vec![(lease.pages[0].clone(), found("A"))], 1000)
            .await
            .expect("finish"),
        "the lease went with its job"
    );
    // The other job is untouched and is the only work left.
    let next = store
        .lease("web-1", 5, MINUTE)
        .await
        .expect("lease")
        .expect("work");
    assert_eq!(next.job, kept.id);
    assert_eq!(
        store
            .jobs(Tenant::live(AccountId(1)), None, 10)
            .await
            .expect("list")
            .iter()
            .map(|j| j.id)
            .collect::<Vec<_>>(),
        vec![kept.id]
    );
}

/// A job's field selection, `include` and callback are kept with it (the callback read back by every read, the
/// list's too); its field selection and `include` reach its leases, and each input's metadata comes back with its row; the CSV's
/// metadata columns are the names sent, each once, in the order first sent.
async fn fields_and_metadata_are_kept_with_the_job(engine: &Engine) {
    let store = open_store(engine).await;
    let mut job = new_job(
        1,
        &[
            "https://www.linkedin.com/company/google",
            "https://www.linkedin.com/company/missing",
            "https://linkedin.com/company/google/",
        ],
    );
    let metadata = |text: &str| InputMetadata::from_stored(text.to_owned());
    job.metadata = vec![
        metadata(r#"{"crmId":"0012","owner":{"name":"Ann"}}"#),
        None,
        metadata(r#"{"rank":3,"crmId":"0099"}"#),
    ];
    job.fields = Some(RecordFields::new(&["website", "company_name"]).expect("fields"));
    job.include = Includes::of(&[Include::JobCount]);
    job.callback = Some(JobCallback {
        url: "https://hooks.example.com/resume/é?x=1".to_owned(),
        headers: [("authorization".to_owned(), "Bearer t0ken".to_owned())].into(),
    });
    let created = store.create_unbounded(job.clone()).await.expect("created");
    assert_eq!(created.fields, job.fields);
    assert_eq!(created.include, job.include);
    assert_eq!(created.callback, job.callback);
    let listed = store.jobs(job.tenant, None, 10).await.expect("jobs");
    assert_eq!(listed[0].callback, job.callback);
    assert_eq!(created.metadata_columns, ["crmId", "owner", "rank"]);
    let lease = store
        .lease("web-1", 10, MINUTE)
        .await
        .expect("lease")
        .expect("work");
    assert_eq!(lease.fields, job.fields);
    assert!(lease.include.contains(Include::JobCount));
    let rows = store.inputs(created.id, 0, 10).await.expect("rows");
    let sent: Vec<Option<&str>> = rows
        .iter()
        .map(|row| row.metadata.as_ref().map(InputMetadata::as_str))
        .collect();
    assert_eq!(
        sent,
        [
            Some(r#"{"crmId":"0012","owner":{"name":"Ann"}}"#),
            None,
            Some(r#"{"rank":3,"crmId":"0099"}"#)
        ]
    );
    // A job without either keeps neither.
    let plain = store
        .create_unbounded(new_job(1, &["https://www.linkedin.com/company/x"]))
        .await
        .expect("created");
    assert_eq!((plain.fields, plain.metadata_columns.len()), (None, 0));
    assert!(plain.include.is_empty());
    assert_eq!(plain.callback, None);
}

async fn each_ending_is_listed_until_it_is_announced(engine: &Engine) {
    let store = open_store(engine).await;
    let listed = |store: Arc<dyn JobStore>| async move {
        store
            .unannounced(10)
            .await
            .expect("listed")
            .into_iter()
            .map(|(job, ending)| (job.id, job.status, ending))
            .collect::<Vec<_>>()
    };
    let one = store
        .create_unbounded(new_job(1, &["https://www.linkedin.com/company/a"]))
        .await
        .expect("created");
    assert_eq!(listed(store.clone()).await, [], "a new job has not ended");

    // Paused: its first ending, listed until announced.
    store
        .pause(one.id, "insufficient_credits")
        .await
        .expect("paused");
    assert_eq!(
        listed(store.clone()).await,
        [(one.id, JobStatus::Paused, 1)]
    );
    store.announced(one.id, 1).await.expect("recorded");
    assert_eq!(listed(store.clone()).await, []);

    // Resumed and finished: its second ending.
    store.resume(one.id).await.expect("resumed");
    let lease = store
        .lease("web-1", 5, MINUTE)
        .await
        .expect("lease")
        .expect("work");
    let answers = lease
        .pages
        .iter()
        .map(|page| (page.clone(), found("A")))
        .collect();
    assert!(
        store
            .finish(lease.id, answers, 1000)
            .await
            .expect("finished")
    );
    let two = store
        .create_unbounded(new_job(2, &["https://www.linkedin.com/company/b"]))
        .await
        .expect("created");
    store
        .cancel(Tenant::live(AccountId(2)), two.id)
        .await
        .expect("cancelled")
        .expect("the account's");
    assert_eq!(
        listed(store.clone()).await,
        [
            (one.id, JobStatus::Done, 2),
            (two.id, JobStatus::Cancelled, 1)
        ]
    );
    // A late record of an earlier ending does not hide the later one; a finished job does not pause again.
    store.announced(one.id, 1).await.expect("recorded");
    store
        .pause(one.id, "insufficient_credits")
        .await
        .expect("answers");
    assert_eq!(listed(store.clone()).await.len(), 2);
    store.announced(one.id, 2).await.expect("recorded");
    store.announced(two.id, 1).await.expect("recorded");
    assert_eq!(listed(store.clone()).await, []);
}

/// Issue 40: an account's share of the queue (jobs not yet ended, their unanswered inputs) is checked in the
/// step that adds a job, so concurrent submissions cannot pass it together; ended jobs free it.
async fn the_queue_bound_is_checked_where_the_job_is_added(engine: &Engine) {
    let (one, two) = (open_store(engine).await, open_store(engine).await);
    let bound = QueueBound {
        open_jobs: 2,
        queued_inputs: 5,
    };
    let urls = |n: usize| -> Vec<String> {
        (0..n)
            .map(|i| format!("https://www.linkedin.com/company/q{i}"))
            .collect()
    };
    let job = |account: i64, n: usize| {
        let urls = urls(n);
        let urls: Vec<&str> = urls.iter().map(String::as_str).collect();
        new_job(account, &urls)
    };
    let Created::Job(first) = one.create(job(1, 3), bound).await.expect("creates") else {
        panic!("under the bound");
    };
    assert!(matches!(
        two.create(job(1, 2), bound).await.expect("creates"),
        Created::Job(_)
    ));
    // At the edge: two open jobs, five inputs queued.
    assert_eq!(
        one.create(job(1, 1), bound).await.expect("answers"),
        Created::TooManyOpenJobs { open: 2 }
    );
    assert!(
        matches!(
            one.create(job(2, 5), bound).await.expect("creates"),
            Created::Job(_)
        ),
        "another account's share is its own"
    );
    // An ended job frees its place and its inputs; the next may bring up to what is left.
    one.cancel(Tenant::live(AccountId(1)), first.id)
        .await
        .expect("cancels");
    assert_eq!(
        one.create(job(1, 4), bound).await.expect("answers"),
        Created::TooManyQueuedInputs { queued: 2 }
    );
    assert!(matches!(
        one.create(job(1, 3), bound).await.expect("creates"),
        Created::Job(_)
    ));

    // Twelve submissions at once from two servers under a bound of three open jobs: three are added.
    let at_once = QueueBound {
        open_jobs: 3,
        queued_inputs: 1_000,
    };
    let tries: Vec<_> = (0..12)
        .map(|n| {
            let store = if n % 2 == 0 {
                Arc::clone(&one)
            } else {
                Arc::clone(&two)
            };
            let job = job(3, 2);
            tokio::spawn(async move { store.create(job, at_once).await })
        })
        .collect();
    let mut added = 0;
    for attempt in tries {
        match attempt.await.expect("joins").expect("answers") {
            Created::Job(_) => added += 1,
            Created::TooManyOpenJobs { open } => assert_eq!(open, 3),
            other @ Created::TooManyQueuedInputs { .. } => panic!("{other:?}"),
        }
    }
    assert_eq!(added, 3);
}

test_support::engine_tests! {
    the_queue_bound_is_checked_where_the_job_is_added,
    each_ending_is_listed_until_it_is_announced,
    fields_and_metadata_are_kept_with_the_job,
    a_job_is_leased_answered_and_read_back_in_input_order,
    accounts_take_turns_and_pages_are_leased_once_across_servers,
    an_abandoned_lease_is_handed_out_again_whole_under_its_id,
    paused_and_cancelled_jobs_are_not_leased_and_old_jobs_are_purged,
    a_deleted_job_leaves_nothing_and_its_lease_in_flight_records_nothing,
}
