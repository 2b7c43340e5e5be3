//! The watch store on both engines (a real SQLite file, a real PostgreSQL database): claims hand each due
//! refresh and delivery to one caller, finishing records what happened, and a lapsed claim finishes nothing.

use std::sync::Arc;
use std::time::Duration;

use company_model::{AccountId, CompanyRecord, RecordJson, Tenant};
use jiff::{SignedDuration, Timestamp};
use page_url::{NetworkDomain, PageUrl};
use test_support::Engine;
use watch_store::{
    AccountEvent, ChangeEvent, Delivered, EndpointDelivery, JobCallbackTarget, NewEndpoint,
    NewWatch, PgWatchStore, Refreshed, SqliteWatchStore, WatchStore,
};

async fn open_store(engine: &Engine) -> Arc<dyn WatchStore> {
    match engine {
        Engine::Sqlite(dir) => Arc::new(
            SqliteWatchStore::open(&dir.path().join("w.db"))
                .await
                .expect("opens"),
        ),
        Engine::Postgres(database) => Arc::new(
            PgWatchStore::with_pool(
                pg_pool::PgPool::connect(&database.url)
                    .await
                    .expect("connects"),
            )
            .await
            .expect("migrates"),
        ),
    }
}

fn watch(account: i64, page: &str) -> NewWatch {
    NewWatch {
        tenant: Tenant::live(AccountId(account)),
        url: PageUrl::parse_submitted(page, &NetworkDomain::default()).expect("valid URL"),
        every_hours: 24,
        webhook_url: "https://hooks.example/company".to_owned(),
        fields: vec!["website".to_owned()],
        include: String::new(),
        baseline: None,
    }
}

fn named(name: &str) -> RecordJson {
    RecordJson::from_record(&CompanyRecord {
        company_name: Some(name.into()),
        ..CompanyRecord::default()
    })
}

async fn refreshes_and_deliveries_are_each_one_callers(engine: &Engine) {
    let (first, second) = (open_store(engine).await, open_store(engine).await);
    let now = Timestamp::from_second(1_800_000_000).expect("a time");
    let mut created = first
        .create(
            &[
                watch(1, "https://www.linkedin.com/company/google"),
                watch(1, "https://www.linkedin.com/company/audiense"),
            ],
            10,
            now,
        )
        .await
        .expect("created")
        .expect("under the bound");
    // What a watch includes is kept as written, and read back by another server.
    let including = NewWatch {
        include: "job_count".to_owned(),
        ..watch(2, "https://www.linkedin.com/company/google")
    };
    created.extend(
        first
            .create(&[including], 10, now)
            .await
            .expect("created")
            .expect("under the bound"),
    );
    assert_eq!(created.len(), 3);
    let kept: Vec<&str> = created.iter().map(|w| w.include.as_str()).collect();
    assert_eq!(kept, ["", "", "job_count"]);
    let read = second
        .get(created[2].tenant, created[2].id)
        .await
        .expect("read");
    assert_eq!(read.map(|w| w.include), Some("job_count".to_owned()));
    // An account's watches are bounded where they are added: account 1 has two, so three more pass a bound of
    // four, and nothing of the request is created.
    let over: Vec<NewWatch> = (0..3)
        .map(|n| watch(1, &format!("https://www.linkedin.com/company/more-{n}")))
        .collect();
    assert_eq!(second.create(&over, 4, now).await.expect("answers"), None);
    assert_eq!(
        second
            .list(Tenant::live(AccountId(1)), None, 10)
            .await
            .expect("listed")
            .len(),
        2
    );
    assert_eq!(
        created[0].next_check_at,
        now + SignedDuration::from_hours(24)
    );
    assert_eq!(
        first
            .list(Tenant::live(AccountId(1)), None, 10)
            .await
            .expect("listed")
            .len(),
        2
    );
    assert_eq!(
        first
            .list(Tenant::live(AccountId(1)), Some(created[0].id), 10)
            .await
            .expect("listed")
            .len(),
        1
    );
    assert!(
        first
            .get(Tenant::live(AccountId(2)), created[0].id)
            .await
            .expect("read")
            .is_none(),
        "another account's"
    );

    // Nothing is due before its time; at it, two servers claiming at once share the three without overlap.
    let lease = Duration::from_mins(1);
    assert!(
        first
            .claim_due(now, lease, 10)
            .await
            .expect("claims")
            .is_empty()
    );
    let due = now + SignedDuration::from_hours(24);
    let (a, b) = futures::join!(
        first.claim_due(due, lease, 2),
        second.claim_due(due, lease, 2)
    );
    let (a, b) = (a.expect("claims"), b.expect("claims"));
    let mut ids: Vec<i64> = a.iter().chain(&b).map(|d| d.watch.id.0).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 3, "each once: {a:?} {b:?}");
    assert_eq!(a.len() + b.len(), 3);

    // A claim that lapsed goes to the next caller; the first one finishing then changes nothing twice.
    let later = due + SignedDuration::from_mins(2);
    let again = second.claim_due(later, lease, 10).await.expect("claims");
    assert_eq!(again.len(), 3, "lapsed claims are handed out again");
    let refresh = &again[0];
    let next = later + SignedDuration::from_hours(24);
    let change = ChangeEvent {
        body: r#"{"id":"evt_1"}"#.to_owned(),
        account: event("evt_1", refresh.watch.tenant.key(), "company.changed"),
    };
    let fetched = Refreshed::Fetched {
        record: named("New"),
        event: Some(change),
    };
    assert!(
        first
            .finish_refresh(
                refresh.watch.id,
                refresh.claim,
                later,
                next,
                fetched.clone()
            )
            .await
            .expect("finishes")
    );
    assert!(
        !second
            .finish_refresh(refresh.watch.id, refresh.claim, later, next, fetched)
            .await
            .expect("finishes"),
        "the same refresh is recorded once"
    );
    let moved = first
        .get(refresh.watch.tenant, refresh.watch.id)
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(moved.next_check_at, next);
    assert_eq!(moved.last_change_at, Some(later));
    // The change is also the account's event, in its feed once.
    let feed = second
        .account_events(refresh.watch.tenant, None, &[], 10)
        .await
        .expect("reads")
        .expect("from the oldest");
    assert_eq!(
        feed.iter()
            .map(|e| (e.id.as_str(), e.kind.as_str()))
            .collect::<Vec<_>>(),
        [("evt_1", "company.changed")]
    );
    for other in &again[1..] {
        let failed = Refreshed::Failed {
            error: "insufficient_credits".to_owned(),
        };
        assert!(
            first
                .finish_refresh(other.watch.id, other.claim, later, next, failed)
                .await
                .expect("finishes")
        );
    }
    let next_due = first.claim_due(next, lease, 10).await.expect("claims");
    let baseline = next_due
        .iter()
        .find(|d| d.watch.id == refresh.watch.id)
        .and_then(|d| d.baseline.clone());
    assert_eq!(
        baseline,
        Some(named("New")),
        "the fetched record is the next baseline"
    );

    // The event: claimed by one, retried, then given up, which disables the watch.
    let (a, b) = futures::join!(
        first.claim_deliveries(later, lease, 10, 10),
        second.claim_deliveries(later, lease, 10, 10)
    );
    let claimed: Vec<_> = a
        .expect("claims")
        .into_iter()
        .chain(b.expect("claims"))
        .collect();
    assert_eq!(claimed.len(), 1, "one event, one claimer");
    let delivery = &claimed[0];
    assert_eq!(
        (delivery.event_id.as_str(), delivery.attempts),
        ("evt_1", 0)
    );
    assert_eq!(delivery.webhook_url, "https://hooks.example/company");
    let retry_at = later + SignedDuration::from_secs(30);
    let retry = Delivered::Retry {
        status: Some(500),
        error: "HTTP 500".to_owned(),
        retry_at,
    };
    assert!(
        first
            .finish_delivery(&delivery.event_id, delivery.claim, later, retry.clone())
            .await
            .expect("records")
    );
    assert!(
        !first
            .finish_delivery(&delivery.event_id, delivery.claim, later, retry)
            .await
            .expect("records"),
        "once"
    );
    assert!(
        first
            .claim_deliveries(later, lease, 10, 10)
            .await
            .expect("claims")
            .is_empty(),
        "not before its retry"
    );
    let second_try = first
        .claim_deliveries(retry_at, lease, 10, 10)
        .await
        .expect("claims");
    assert_eq!(second_try[0].attempts, 1);
    let gave_up = Delivered::GaveUp {
        status: None,
        error: "timed out".to_owned(),
    };
    assert!(
        first
            .finish_delivery("evt_1", second_try[0].claim, retry_at, gave_up)
            .await
            .expect("records")
    );
    let disabled = first
        .get(refresh.watch.tenant, refresh.watch.id)
        .await
        .expect("read")
        .expect("exists");
    assert_eq!(disabled.disabled_at, Some(retry_at));
    assert!(
        disabled
            .disabled_reason
            .as_deref()
            .is_some_and(|r| r.contains("timed out"))
    );
    assert_eq!(
        disabled
            .last_delivery
            .as_ref()
            .and_then(|d| d.error.as_deref()),
        Some("timed out")
    );
    let far = retry_at + SignedDuration::from_hours(24 * 30);
    assert!(
        first
            .claim_due(far, lease, 10)
            .await
            .expect("claims")
            .iter()
            .all(|d| d.watch.id != refresh.watch.id),
        "a disabled watch is not refreshed"
    );
    assert!(
        first
            .claim_deliveries(far, lease, 10, 10)
            .await
            .expect("claims")
            .is_empty()
    );

    // Deleting takes the watch away; the secret is kept until rotated.
    assert!(
        first
            .delete(refresh.watch.tenant, refresh.watch.id)
            .await
            .expect("deletes")
    );
    assert!(
        !first
            .delete(refresh.watch.tenant, refresh.watch.id)
            .await
            .expect("deletes")
    );
    assert_eq!(
        first
            .secret(Tenant::live(AccountId(1)))
            .await
            .expect("reads"),
        None
    );
    assert_eq!(
        first
            .set_secret(Tenant::live(AccountId(1)), "whsec_a", false)
            .await
            .expect("sets"),
        "whsec_a"
    );
    assert_eq!(
        second
            .set_secret(Tenant::live(AccountId(1)), "whsec_b", false)
            .await
            .expect("sets"),
        "whsec_a"
    );
    assert_eq!(
        second
            .set_secret(Tenant::live(AccountId(1)), "whsec_c", true)
            .await
            .expect("sets"),
        "whsec_c"
    );
    assert_eq!(
        first
            .secret(Tenant::live(AccountId(1)))
            .await
            .expect("reads")
            .as_deref(),
        Some("whsec_c")
    );
}

/// `account` as a store keeps it ([`Tenant::key`]): negative for the account's test mode.
fn endpoint(account: i64, host: &str, events: &[&str]) -> NewEndpoint {
    NewEndpoint {
        tenant: Tenant::from_key(account),
        url: format!("https://{host}/events"),
        events: events.iter().map(|e| (*e).to_owned()).collect(),
    }
}

/// `account` as a store keeps it ([`Tenant::key`]): negative for the account's test mode.
fn event(id: &str, account: i64, kind: &str) -> AccountEvent {
    AccountEvent {
        id: id.to_owned(),
        tenant: Tenant::from_key(account),
        kind: kind.to_owned(),
        body: format!(r#"{{"id":"{id}","type":"{kind}"}}"#),
    }
}

async fn endpoints_get_each_event_they_want_once(engine: &Engine) {
    let (first, second) = (open_store(engine).await, open_store(engine).await);
    let now = Timestamp::from_second(1_800_000_000).expect("a time");
    let jobs = first
        .create_endpoint(&endpoint(1, "jobs.example", &["job.finished"]), 2, now)
        .await
        .expect("registers")
        .expect("under the bound");
    let all = first
        .create_endpoint(
            &endpoint(1, "all.example", &["job.finished", "account.balance_low"]),
            2,
            now,
        )
        .await
        .expect("registers")
        .expect("under the bound");
    assert_eq!(
        second
            .create_endpoint(&endpoint(1, "third.example", &["job.paused"]), 2, now)
            .await
            .expect("answers"),
        None,
        "a third endpoint is over a bound of two"
    );
    let other = first
        .create_endpoint(&endpoint(2, "other.example", &["job.finished"]), 2, now)
        .await
        .expect("registers")
        .expect("another account's bound");
    assert_eq!(jobs.url, "https://jobs.example/events");
    assert_eq!(all.events, ["job.finished", "account.balance_low"]);
    assert_eq!(
        second
            .endpoints(Tenant::live(AccountId(1)))
            .await
            .expect("lists")
            .iter()
            .map(|e| e.id)
            .collect::<Vec<_>>(),
        [jobs.id, all.id],
        "an account sees its own endpoints, by id"
    );

    // One copy per endpoint that wants the type, once however often it is queued, never another account's.
    let finished = event("evt_job_7_done", 1, "job.finished");
    assert_eq!(
        first
            .queue_event(&finished, None, now)
            .await
            .expect("queues"),
        2
    );
    assert_eq!(
        second
            .queue_event(&finished, None, now)
            .await
            .expect("queues"),
        0
    );
    let low = event("evt_balance_1_1", 1, "account.balance_low");
    assert_eq!(first.queue_event(&low, None, now).await.expect("queues"), 1);
    // A ping goes to the one endpoint named, whatever it wants.
    let ping = event("evt_ping_1", 1, "ping");
    assert_eq!(
        first
            .queue_event(&ping, Some(jobs.id), now)
            .await
            .expect("queues"),
        1
    );
    assert_eq!(
        first
            .queue_event(&ping, Some(other.id), now)
            .await
            .expect("queues"),
        0,
        "another account's endpoint gets nothing"
    );

    // Each copy is claimed by one caller while its claim lasts, and an endpoint has one copy in flight at a
    // time: its oldest (by due time, then id), so each endpoint's first now, the others after.
    let lease = Duration::from_secs(30);
    let claimed = first
        .claim_endpoint_deliveries(now, lease, 10, 10)
        .await
        .expect("claims");
    assert_eq!(claimed.len(), 2, "one per endpoint: {claimed:?}");
    assert!(
        second
            .claim_endpoint_deliveries(now, lease, 10, 10)
            .await
            .expect("claims")
            .is_empty(),
        "each endpoint has a copy in flight"
    );
    let copy = |event_id: &str, to| {
        claimed
            .iter()
            .find(|d| d.event_id == event_id && d.endpoint == to)
            .expect("claimed")
            .clone()
    };
    let to_jobs = copy("evt_job_7_done", jobs.id);
    assert_eq!(to_jobs.url, jobs.url);
    assert_eq!(to_jobs.body, finished.body);
    assert_eq!(to_jobs.attempts, 0);

    // Delivered, retried later, given up (which disables the endpoint); a stale claim finishes nothing.
    assert!(
        !first
            .finish_endpoint_delivery(
                &to_jobs.event_id,
                to_jobs.endpoint,
                to_jobs.claim + 1,
                now,
                Delivered::Yes { status: 200 }
            )
            .await
            .expect("records")
    );
    assert!(
        first
            .finish_endpoint_delivery(
                &to_jobs.event_id,
                to_jobs.endpoint,
                to_jobs.claim,
                now,
                Delivered::Yes { status: 204 }
            )
            .await
            .expect("records")
    );
    // The jobs endpoint's next copy, once its first is done.
    let next = first
        .claim_endpoint_deliveries(now, lease, 10, 10)
        .await
        .expect("claims");
    let retry_at = now + SignedDuration::from_secs(60);
    let ping_copy = next
        .iter()
        .find(|d| d.event_id == "evt_ping_1" && d.endpoint == jobs.id)
        .expect("the ping is next")
        .clone();
    assert!(
        first
            .finish_endpoint_delivery(
                &ping_copy.event_id,
                ping_copy.endpoint,
                ping_copy.claim,
                now,
                Delivered::Retry {
                    status: Some(503),
                    error: "HTTP 503".into(),
                    retry_at,
                }
            )
            .await
            .expect("records")
    );
    let low_copy = copy("evt_balance_1_1", all.id);
    assert!(
        first
            .finish_endpoint_delivery(
                &low_copy.event_id,
                low_copy.endpoint,
                low_copy.claim,
                now,
                Delivered::GaveUp {
                    status: None,
                    error: "the receiver could not be reached".into(),
                }
            )
            .await
            .expect("records")
    );
    let listed = second
        .endpoints(Tenant::live(AccountId(1)))
        .await
        .expect("lists");
    let disabled = listed.iter().find(|e| e.id == all.id).expect("listed");
    assert_eq!(disabled.disabled_at, Some(now));
    assert!(
        disabled
            .disabled_reason
            .as_deref()
            .is_some_and(|r| r.contains("could not be reached")),
        "{disabled:?}"
    );
    let enabled = listed.iter().find(|e| e.id == jobs.id).expect("listed");
    assert_eq!(enabled.disabled_at, None);
    assert_eq!(
        enabled.last_delivery.as_ref().and_then(|d| d.status),
        Some(503)
    );
    assert_eq!(
        first
            .queue_event(&event("evt_job_8_done", 1, "job.finished"), None, now)
            .await
            .expect("queues"),
        1,
        "a disabled endpoint is sent nothing"
    );

    // The retry comes due at its time, not before, with the same id and its attempts counted; the endpoint's
    // copies go one at a time, oldest due first (the job event queued since was due before the retry).
    let later = retry_at + SignedDuration::from_secs(1);
    let first_due = second
        .claim_endpoint_deliveries(later, lease, 10, 10)
        .await
        .expect("claims");
    let job_8 = first_due
        .iter()
        .find(|d| d.endpoint == jobs.id)
        .expect("the jobs endpoint's next copy");
    assert_eq!(job_8.event_id, "evt_job_8_done");
    assert!(
        second
            .finish_endpoint_delivery(
                &job_8.event_id,
                job_8.endpoint,
                job_8.claim,
                later,
                Delivered::Yes { status: 200 }
            )
            .await
            .expect("records")
    );
    let again: Vec<_> = second
        .claim_endpoint_deliveries(later, lease, 10, 10)
        .await
        .expect("claims")
        .into_iter()
        .filter(|d| d.event_id == "evt_ping_1")
        .collect();
    assert_eq!(again.len(), 1);
    assert_eq!(again[0].attempts, 1);

    // The account's copies, newest first, each with its status; one endpoint's alone.
    let copies = first
        .endpoint_events(Tenant::live(AccountId(1)), None, 10)
        .await
        .expect("lists");
    assert_eq!(copies.len(), 5, "{copies:?}");
    let delivered = copies
        .iter()
        .find(|c| c.event_id == "evt_job_7_done" && c.endpoint == jobs.id)
        .expect("listed");
    assert_eq!(
        (delivered.delivered_at, delivered.last_status),
        (Some(now), Some(204))
    );
    assert_eq!(delivered.next_attempt_at, None);
    let of_all = first
        .endpoint_events(Tenant::live(AccountId(1)), Some(all.id), 10)
        .await
        .expect("lists");
    assert!(of_all.iter().all(|c| c.endpoint == all.id));
    assert_eq!(of_all.len(), 2);
    assert!(
        first
            .endpoint_events(Tenant::live(AccountId(2)), None, 10)
            .await
            .expect("lists")
            .is_empty()
    );

    // Another tenant naming an endpoint deletes nothing of it, not even its copies: not the account's own test
    // mode, not another account.
    for stranger in [Tenant::test(AccountId(1)), Tenant::live(AccountId(2))] {
        assert!(
            !first
                .delete_endpoint(stranger, all.id)
                .await
                .expect("answers")
        );
    }
    assert_eq!(
        first
            .endpoint_events(Tenant::live(AccountId(1)), Some(all.id), 10)
            .await
            .expect("lists")
            .len(),
        2,
        "the copies are the owner's to delete"
    );

    // Deleting takes the endpoint and its copies; another account's endpoint is not its to delete.
    assert!(
        !first
            .delete_endpoint(Tenant::live(AccountId(1)), other.id)
            .await
            .expect("deletes")
    );
    assert!(
        first
            .delete_endpoint(Tenant::live(AccountId(1)), jobs.id)
            .await
            .expect("deletes")
    );
    assert!(
        first
            .endpoint_events(Tenant::live(AccountId(1)), Some(jobs.id), 10)
            .await
            .expect("lists")
            .is_empty()
    );
    assert_eq!(
        second
            .endpoints(Tenant::live(AccountId(1)))
            .await
            .expect("lists")
            .len(),
        1
    );
}

/// Issue 40: one account's queue cannot hold another's back. Account 1 has five endpoints with 40 pings queued
/// before account 2's one; account 2's is in the first claim, each endpoint has one copy in flight, and account
/// 1 never more than its share however many endpoints it has.
async fn deliveries_and_refreshes_are_shared_fairly_between_accounts(engine: &Engine) {
    let store = open_store(engine).await;
    let start = Timestamp::from_second(1_800_000_000).expect("a time");
    let mut flooder = Vec::new();
    for n in 0..5 {
        let host = format!("flood-{n}.example");
        flooder.push(
            store
                .create_endpoint(&endpoint(1, &host, &["job.finished"]), 10, start)
                .await
                .expect("registers")
                .expect("under the bound"),
        );
    }
    let patient = store
        .create_endpoint(
            &endpoint(2, "patient.example", &["job.finished"]),
            10,
            start,
        )
        .await
        .expect("registers")
        .expect("under the bound");
    for n in 0..40 {
        let to = flooder[n % flooder.len()].id;
        let at = start + SignedDuration::from_secs(i64::try_from(n).expect("small"));
        let queued = store
            .queue_event(
                &event(&format!("evt_ping_flood_{n:02}"), 1, "ping"),
                Some(to),
                at,
            )
            .await
            .expect("queues");
        assert_eq!(queued, 1);
    }
    let now = start + SignedDuration::from_mins(5);
    store
        .queue_event(&event("evt_ping_patient", 2, "ping"), Some(patient.id), now)
        .await
        .expect("queues");

    let lease = Duration::from_mins(1);
    let first = store
        .claim_endpoint_deliveries(now, lease, 2, 3)
        .await
        .expect("claims");
    let mut ids: Vec<&str> = first.iter().map(|d| d.event_id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(
        ids,
        ["evt_ping_flood_00", "evt_ping_patient"],
        "each account's oldest first, the newcomer before the flooder's second"
    );
    // The rest: one per endpoint of account 1 in flight, and never more than 3 of its endpoints at once.
    let rest = store
        .claim_endpoint_deliveries(now, lease, 100, 3)
        .await
        .expect("claims");
    assert_eq!(rest.len(), 2, "{rest:?}");
    let mut endpoints: Vec<_> = first
        .iter()
        .chain(&rest)
        .filter(|d| d.tenant == Tenant::live(AccountId(1)))
        .map(|d| d.endpoint.0)
        .collect();
    endpoints.sort_unstable();
    endpoints.dedup();
    assert_eq!(endpoints.len(), 3, "three endpoints, one copy each");
    assert!(
        store
            .claim_endpoint_deliveries(now, lease, 100, 3)
            .await
            .expect("claims")
            .is_empty(),
        "account 1 has its share in flight, account 2 its one"
    );
    // Account 1's test mode (its test-mode keys' tenant, kept as -1) shares account 1's share.
    let twin = store
        .create_endpoint(&endpoint(-1, "twin.example", &["job.finished"]), 10, start)
        .await
        .expect("registers")
        .expect("under the bound");
    store
        .queue_event(&event("evt_ping_twin", -1, "ping"), Some(twin.id), now)
        .await
        .expect("queues");
    assert!(
        store
            .claim_endpoint_deliveries(now, lease, 100, 3)
            .await
            .expect("claims")
            .is_empty(),
        "the test mode's ping waits for account 1's share"
    );
    // Events done (delivered or given up) and older than a cut-off are forgotten; the rest stay.
    let before_forget = store
        .endpoint_events(Tenant::live(AccountId(1)), None, 100)
        .await
        .expect("lists")
        .len();
    // A finished delivery frees its endpoint's place for that endpoint's next copy.
    let done = first
        .iter()
        .find(|d| d.tenant == Tenant::live(AccountId(1)))
        .expect("account 1's first");
    assert!(
        store
            .finish_endpoint_delivery(
                &done.event_id,
                done.endpoint,
                done.claim,
                now,
                Delivered::Yes { status: 204 }
            )
            .await
            .expect("records")
    );
    let next = store
        .claim_endpoint_deliveries(now, lease, 100, 3)
        .await
        .expect("claims");
    assert_eq!(next.len(), 1, "{next:?}");
    assert_eq!(next[0].tenant, Tenant::live(AccountId(1)));
    assert_eq!(
        store.forget_done_before(start).await.expect("forgets"),
        0,
        "nothing done was made before the start"
    );
    assert_eq!(
        store
            .forget_done_before(now + SignedDuration::from_hours(1))
            .await
            .expect("forgets"),
        1,
        "the one delivered copy; those in flight or due stay"
    );
    assert_eq!(
        store
            .endpoint_events(Tenant::live(AccountId(1)), None, 100)
            .await
            .expect("lists")
            .len(),
        before_forget - 1
    );

    // Refreshes: account 1's 10,000 due watches, then account 2's one, due last: account 2's is in the first
    // claim, so it waits for one round of refreshes at most, not for account 1's queue.
    let pages: Vec<String> = (0..10_000)
        .map(|n| format!("https://www.linkedin.com/company/flood-{n}"))
        .collect();
    let many: Vec<NewWatch> = pages.iter().map(|page| watch(1, page)).collect();
    store
        .create(&many, 10_000, start)
        .await
        .expect("created")
        .expect("at the bound");
    store
        .create(
            &[watch(2, "https://www.linkedin.com/company/patient")],
            1,
            start + SignedDuration::from_mins(1),
        )
        .await
        .expect("created")
        .expect("at the bound");
    let due_at = start + SignedDuration::from_hours(25);
    let claimed = store.claim_due(due_at, lease, 4).await.expect("claims");
    assert_eq!(claimed.len(), 4);
    assert!(
        claimed
            .iter()
            .any(|d| d.watch.tenant == Tenant::live(AccountId(2))),
        "account 2's refresh waits for no other account's queue: {:?}",
        claimed
            .iter()
            .map(|d| d.watch.tenant.account)
            .collect::<Vec<_>>()
    );
}

/// The ids of the account's feed, read a page of `limit` at a time from after `after` until a page comes back
/// short; the last id read.
async fn read_feed(
    store: &dyn WatchStore,
    tenant: Tenant,
    after: Option<String>,
    limit: u32,
    into: &mut Vec<String>,
) -> Option<String> {
    let mut after = after;
    loop {
        let page = store
            .account_events(tenant, after.as_deref(), &[], limit)
            .await
            .expect("reads")
            .expect("the last id read is the account's");
        into.extend(page.iter().map(|e| e.id.clone()));
        if let Some(last) = page.last() {
            after = Some(last.id.clone());
        }
        if page.len() < limit as usize {
            return after;
        }
    }
}

/// Writers of the feed test, and the events each writes.
const WRITERS: usize = 4;
const EACH: usize = 250;

async fn the_feed_lists_every_event_once_in_commit_order(engine: &Engine) {
    let (first, second) = (open_store(engine).await, open_store(engine).await);
    let now = Timestamp::from_second(1_800_000_000).expect("a time");
    let account = Tenant::from_key(1);
    let endpoint = first
        .create_endpoint(&endpoint(1, "hooks.example", &["job.finished"]), 10, now)
        .await
        .expect("registers")
        .expect("under the bound");

    // 1,000 events of the account from four writers on two stores (connections), while a reader pages through
    // the feed; another account's and the account's test mode's events in between.
    let reader = {
        let store = Arc::clone(&second);
        tokio::spawn(async move {
            let (mut seen, mut after) = (Vec::new(), None);
            while seen.len() < WRITERS * EACH {
                after = read_feed(store.as_ref(), account, after, 37, &mut seen).await;
                tokio::task::yield_now().await;
            }
            seen
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let store = Arc::clone(if writer % 2 == 0 { &first } else { &second });
            tokio::spawn(async move {
                for n in 0..EACH {
                    let kind = if n % 2 == 0 {
                        "job.finished"
                    } else {
                        "company.changed"
                    };
                    let id = format!("evt_{writer}_{n}");
                    store
                        .queue_event(&event(&id, 1, kind), None, now)
                        .await
                        .expect("queues");
                    if n % 50 == 0 {
                        for other in [2, -1] {
                            store
                                .queue_event(
                                    &event(&format!("{id}_of_{other}"), other, kind),
                                    None,
                                    now,
                                )
                                .await
                                .expect("queues");
                        }
                    }
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.expect("writes");
    }
    let seen = tokio::time::timeout(Duration::from_mins(2), reader)
        .await
        .expect("the reader sees every event")
        .expect("reads");
    assert_eq!(seen.len(), WRITERS * EACH, "each event once");
    let mut distinct = seen.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), WRITERS * EACH, "no event twice");
    for writer in 0..WRITERS {
        let order: Vec<usize> = seen
            .iter()
            .filter_map(|id| id.strip_prefix(&format!("evt_{writer}_")))
            .map(|n| n.parse().expect("a number"))
            .collect();
        assert_eq!(
            order,
            (0..EACH).collect::<Vec<_>>(),
            "writer {writer}'s events in its order"
        );
    }

    // The same event queued again is in the feed once; a ping is in none.
    first
        .queue_event(&event("evt_0_0", 1, "job.finished"), None, now)
        .await
        .expect("queues");
    first
        .queue_event(&event("evt_ping", 1, "ping"), Some(endpoint.id), now)
        .await
        .expect("queues");
    let mut again = Vec::new();
    read_feed(first.as_ref(), account, None, 100, &mut again).await;
    assert_eq!(again, seen, "nothing added: a repeat and a ping");

    // Types, and other tenants.
    let changed = first
        .account_events(account, None, &["company.changed".to_owned()], 1000)
        .await
        .expect("reads")
        .expect("from the oldest");
    assert_eq!(changed.len(), WRITERS * EACH / 2);
    assert!(changed.iter().all(|e| e.kind == "company.changed"));
    // Two types, read each on its own and merged: the same page as without a filter.
    let both = ["job.finished".to_owned(), "company.changed".to_owned()];
    let merged = first
        .account_events(account, Some(&seen[3]), &both, 10)
        .await
        .expect("reads")
        .expect("after one of the account's");
    assert_eq!(
        merged.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        seen[4..14].iter().map(String::as_str).collect::<Vec<_>>()
    );
    let mut others = Vec::new();
    read_feed(first.as_ref(), Tenant::from_key(2), None, 100, &mut others).await;
    assert_eq!(others.len(), WRITERS * EACH / 50, "{others:?}");
    assert!(others.iter().all(|id| id.ends_with("_of_2")));
    let mut test_mode = Vec::new();
    read_feed(
        first.as_ref(),
        Tenant::from_key(-1),
        None,
        100,
        &mut test_mode,
    )
    .await;
    assert!(test_mode.iter().all(|id| id.ends_with("_of_-1")));
    assert_eq!(test_mode.len(), WRITERS * EACH / 50);
    for (tenant, after) in [
        (account, "evt_nothing"),
        (account, others[0].as_str()),
        (Tenant::from_key(2), "evt_0_0"),
    ] {
        assert_eq!(
            first
                .account_events(tenant, Some(after), &[], 10)
                .await
                .expect("reads"),
            None,
            "{after} is not the tenant's event"
        );
    }

    // Forgotten with the done deliveries: only the older ones.
    let later = now + SignedDuration::from_hours(1);
    first
        .queue_event(&event("evt_later", 1, "job.finished"), None, later)
        .await
        .expect("queues");
    first.forget_done_before(later).await.expect("forgets");
    let kept = first
        .account_events(account, None, &[], 10)
        .await
        .expect("reads")
        .expect("from the oldest");
    assert_eq!(
        kept.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        ["evt_later"]
    );
    assert_eq!(kept[0].created_at, later);
}

/// Records each claimed copy as delivered (each claim still the caller's).
async fn delivered_all(store: &dyn WatchStore, claimed: &[EndpointDelivery], now: Timestamp) {
    for delivery in claimed {
        assert!(
            store
                .finish_endpoint_delivery(
                    &delivery.event_id,
                    delivery.endpoint,
                    delivery.claim,
                    now,
                    Delivered::Yes { status: 204 },
                )
                .await
                .expect("records")
        );
    }
}

/// A job's callback gets the job's events (with its headers) beside the account's endpoints and feed, once
/// however often they are queued; it is the account's own but never listed, counted against its endpoints or
/// deleted through them; a second event of the job goes to the same callback; another account's job of the same
/// id has its own; and it is forgotten with its last event.
async fn a_jobs_callback_gets_its_events_and_is_kept_apart(engine: &Engine) {
    let (first, second) = (open_store(engine).await, open_store(engine).await);
    let now = Timestamp::from_second(1_800_000_000).expect("a time");
    let lease = Duration::from_secs(30);
    let account = Tenant::from_key(1);
    let registered = first
        .create_endpoint(&endpoint(1, "all.example", &["job.finished"]), 2, now)
        .await
        .expect("registers")
        .expect("under the bound");
    let callback = |job: &str| JobCallbackTarget {
        job: job.to_owned(),
        url: format!("https://hooks.example/resume/{job}"),
        headers: vec![("authorization".to_owned(), "Bearer r3ceiver".to_owned())],
    };
    let finished = event("evt_job_5_1", 1, "job.finished");
    assert_eq!(
        first
            .queue_job_event(&finished, &callback("5"), now)
            .await
            .expect("queues"),
        2,
        "the registered endpoint's copy and the callback's"
    );
    assert_eq!(
        second
            .queue_job_event(&finished, &callback("5"), now)
            .await
            .expect("queues"),
        0,
        "queued once"
    );
    let feed = first
        .account_events(account, None, &[], 10)
        .await
        .expect("reads")
        .expect("from the oldest");
    assert_eq!(feed.len(), 1);
    assert_eq!(feed[0].body, finished.body);

    // Not listed, not counted: a second endpoint fits a bound of two.
    let listed = first.endpoints(account).await.expect("lists");
    assert_eq!(
        listed.iter().map(|e| e.id).collect::<Vec<_>>(),
        [registered.id]
    );
    assert!(
        second
            .create_endpoint(&endpoint(1, "more.example", &["job.paused"]), 2, now)
            .await
            .expect("registers")
            .is_some()
    );

    let claimed = first
        .claim_endpoint_deliveries(now, lease, 10, 10)
        .await
        .expect("claims");
    assert_eq!(claimed.len(), 2, "{claimed:?}");
    let to_callback = claimed
        .iter()
        .find(|d| d.url == "https://hooks.example/resume/5")
        .expect("the callback's copy");
    assert_eq!(to_callback.body, finished.body);
    assert_eq!(
        to_callback.headers,
        [("authorization".to_owned(), "Bearer r3ceiver".to_owned())]
    );
    let to_registered = claimed
        .iter()
        .find(|d| d.endpoint == registered.id)
        .expect("the endpoint's copy");
    assert!(to_registered.headers.is_empty());
    assert!(
        !first
            .delete_endpoint(account, to_callback.endpoint)
            .await
            .expect("answers"),
        "a callback is not deleted as an endpoint"
    );
    delivered_all(first.as_ref(), &claimed, now).await;

    // The job's next event goes to the same callback; another account's job 5 has its own.
    first
        .queue_job_event(
            &event("evt_job_5_2", 1, "job.finished"),
            &callback("5"),
            now,
        )
        .await
        .expect("queues");
    first
        .queue_job_event(
            &event("evt_job_5_1", 2, "job.finished"),
            &callback("5"),
            now,
        )
        .await
        .expect("queues");
    let claimed = second
        .claim_endpoint_deliveries(now, lease, 10, 10)
        .await
        .expect("claims");
    let callbacks: Vec<(i64, watch_store::EndpointId)> = claimed
        .iter()
        .filter(|d| d.url.starts_with("https://hooks.example/"))
        .map(|d| (d.tenant.key(), d.endpoint))
        .collect();
    assert_eq!(callbacks.len(), 2, "{claimed:?}");
    assert!(
        callbacks.contains(&(1, to_callback.endpoint)),
        "{callbacks:?}"
    );
    assert!(
        callbacks
            .iter()
            .any(|&(key, id)| key == 2 && id != to_callback.endpoint),
        "{callbacks:?}"
    );
    delivered_all(first.as_ref(), &claimed, now).await;

    // Forgotten with its last event: the job's next event makes it again, under a new id.
    first
        .forget_done_before(now + SignedDuration::from_hours(1))
        .await
        .expect("forgets");
    first
        .queue_job_event(
            &event("evt_job_5_3", 1, "job.cancelled"),
            &callback("5"),
            now,
        )
        .await
        .expect("queues");
    let again = first
        .claim_endpoint_deliveries(now, lease, 10, 10)
        .await
        .expect("claims");
    assert_eq!(again.len(), 1, "{again:?}");
    assert_ne!(again[0].endpoint, to_callback.endpoint);
    assert_eq!(again[0].event_id, "evt_job_5_3");
}

test_support::engine_tests! {
    a_jobs_callback_gets_its_events_and_is_kept_apart,
    refreshes_and_deliveries_are_each_one_callers,
    endpoints_get_each_event_they_want_once,
    deliveries_and_refreshes_are_shared_fairly_between_accounts,
    the_feed_lists_every_event_once_in_commit_order,
}
