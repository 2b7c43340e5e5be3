//! Searching the stored companies over loopback (docs/api.md, "Searching stored companies"): what an account
//! finds is what it was answered, a deployment-wide scope opens the store, paging follows `next_cursor`, a test
//! key searches the sandbox, bad bodies get their problems named, and nothing is charged.

use e2e_harness::{Service, ServiceOptions};
use reqwest::Method;
use serde_json::{Value, json};

use crate::{AUDIENSE, GOOGLE, urls};

const SEARCH: &str = api_contract::paths::SEARCH;

pub(crate) async fn search(service: &Service, key: &str, body: &Value) -> e2e_harness::Reply {
    service
        .send(Method::POST, SEARCH, key, Some(body), None)
        .await
        .0
}

/// The `final_li_url`s of a 200 search answer.
pub(crate) fn found(reply: &e2e_harness::Reply) -> Vec<&str> {
    assert_eq!(reply.status, 200, "{}", reply.json);
    reply.json["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|row| row["final_li_url"].as_str().expect("a URL"))
        .collect()
}

async fn balance(service: &Service, key: &str) -> Value {
    let (reply, _) = service
        .send(Method::GET, "/v1/account", key, None, None)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    reply.json["balance"].clone()
}

#[tokio::test]
async fn an_account_finds_what_it_was_answered_and_nothing_another_looked_up() {
    let service = Service::start(ServiceOptions::default());
    let (acme, globex) = (service.key("acme", "10"), service.key("globex", "10"));
    // Nothing answered yet: nothing to find.
    let empty = search(&service, &acme, &json!({})).await;
    assert_eq!(found(&empty), Vec::<&str>::new());
    assert_eq!(empty.json["scope"], "account");

    assert_eq!(service.post(&acme, &urls(&[GOOGLE])).await.status, 200);
    assert_eq!(service.post(&globex, &urls(&[AUDIENSE])).await.status, 200);
    let before = balance(&service, &acme).await;

    let acme_all = search(&service, &acme, &json!({})).await;
    assert_eq!(found(&acme_all), [GOOGLE]);
    let row = &acme_all.json["results"][0];
    assert_eq!(row["company_name"], "Google");
    assert_eq!(row["headquarters"]["country"], "US");
    assert!(
        row["follower_count"]
            .as_u64()
            .is_some_and(|n| n > 1_000_000),
        "{row}"
    );
    assert!(row.get("description").is_none(), "a row is compact: {row}");
    assert_eq!(
        found(&search(&service, &globex, &json!({})).await),
        [AUDIENSE]
    );
    // Globex's words do not find Acme's company, and Acme's filters do not find Globex's.
    assert_eq!(
        found(&search(&service, &globex, &json!({"q": "google"})).await),
        Vec::<&str>::new()
    );
    assert_eq!(
        found(&search(&service, &acme, &json!({"q": "goog"})).await),
        [GOOGLE]
    );
    assert_eq!(
        found(&search(&service, &acme, &json!({"q": "audience"})).await),
        Vec::<&str>::new()
    );
    // `fields` keeps the members named, and the page's URL.
    let trimmed = search(
        &service,
        &acme,
        &json!({"q": "goog", "fields": ["company_name", "follower_count"]}),
    )
    .await;
    let row = &trimmed.json["results"][0];
    let mut members: Vec<&str> = row
        .as_object()
        .expect("a row")
        .keys()
        .map(String::as_str)
        .collect();
    members.sort_unstable();
    assert_eq!(
        members,
        ["company_name", "final_li_url", "follower_count"],
        "{row}"
    );
    // Growth needs a fetch 90 days old: one lookup today gives none, so nothing matches.
    assert_eq!(
        found(&search(&service, &acme, &json!({"employeeGrowth": {"min": -100}})).await),
        Vec::<&str>::new()
    );
    // Searching is free: no credit header, the balance unchanged.
    let reply = search(
        &service,
        &acme,
        &json!({"industries": ["software development"]}),
    )
    .await;
    assert!(
        !reply.headers.contains_key("x-credits-charged"),
        "{:?}",
        reply.headers
    );
    assert_eq!(balance(&service, &acme).await, before);
}

#[tokio::test]
async fn a_deployment_wide_scope_pages_through_every_stored_company() {
    let service = Service::start(ServiceOptions {
        args: vec!["--search-scope", "deployment"],
        ..ServiceOptions::default()
    });
    let (acme, globex) = (service.key("acme", "10"), service.key("globex", "10"));
    assert_eq!(service.post(&acme, &urls(&[GOOGLE])).await.status, 200);
    assert_eq!(service.post(&acme, &urls(&[AUDIENSE])).await.status, 200);
    // Globex looked nothing up and finds both, most followers first, one a page.
    let first = search(&service, &globex, &json!({"limit": 1})).await;
    assert_eq!(found(&first), [GOOGLE]);
    assert_eq!(first.json["scope"], "deployment");
    let cursor = first.json["next_cursor"].as_str().expect("a next page");
    let second = search(&service, &globex, &json!({"limit": 1, "cursor": cursor})).await;
    assert_eq!(found(&second), [AUDIENSE]);
    assert!(second.json.get("next_cursor").is_none(), "{}", second.json);
    // Filters narrow it: the country of Audiense's headquarters, as its row gives it, in lower case.
    let country = second.json["results"][0]["headquarters"]["country"]
        .as_str()
        .expect("Audiense's country")
        .to_owned();
    let by_country = search(
        &service,
        &globex,
        &json!({"countries": [country.to_lowercase()]}),
    )
    .await;
    assert_eq!(found(&by_country), [AUDIENSE]);
    let big = search(
        &service,
        &globex,
        &json!({"followerCount": {"min": 1_000_000}, "sort": "freshness"}),
    )
    .await;
    assert_eq!(found(&big), [GOOGLE]);
}

#[tokio::test]
async fn a_bad_body_gets_every_problem_named_and_a_test_key_searches_the_sandbox() {
    let service = Service::start(ServiceOptions::default());
    let key = service.key("acme", "10");
    let bad = search(
        &service,
        &key,
        &json!({"limit": 500, "sort": "size", "industries": "Retail", "colour": "red"}),
    )
    .await;
    assert_eq!(bad.status, 400, "{}", bad.json);
    assert_eq!(bad.json["error"], "invalid_request");
    let pointers: Vec<&str> = bad.json["details"]
        .as_array()
        .expect("details")
        .iter()
        .map(|p| p["pointer"].as_str().expect("a pointer"))
        .collect();
    for pointer in ["/colour", "/industries", "/limit", "/sort"] {
        assert!(pointers.contains(&pointer), "{pointer} in {}", bad.json);
    }
    // Without a key, nothing is searched.
    let stranger = e2e_harness::client()
        .post(format!("{}{SEARCH}", service.base))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .expect("answered");
    assert_eq!(stranger.status(), 401);

    let test = service.test_key("acme");
    assert_eq!(service.post(&test, &urls(&[GOOGLE])).await.status, 200);
    // The test key finds its sandbox lookup; the live key, which looked nothing up, finds nothing.
    assert_eq!(
        found(&search(&service, &test, &json!({"q": "google"})).await),
        [GOOGLE]
    );
    assert_eq!(
        found(&search(&service, &key, &json!({})).await),
        Vec::<&str>::new()
    );
}

#[tokio::test]
async fn the_command_line_searches_a_server_or_the_database_here() {
    // A process of its own, so that stopping it frees the database at once for the command that runs here.
    let service = Service::start(ServiceOptions {
        real_process: true,
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10");
    assert_eq!(
        service.post(&key, &urls(&[GOOGLE, AUDIENSE])).await.status,
        200
    );
    let (base, dir, db) = (service.base.clone(), service.dir(), service.db.clone());

    // On the server, through the client: CSV, a header then the rows, most followers first, page by page.
    let csv_text = tokio::task::spawn_blocking(move || {
        e2e_harness::cli(&[
            "search", "--server", &base, "--key", &key, "--format", "csv", "--limit", "1",
        ])
    })
    .await
    .expect("the command ran");
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .expect("a header")
        .iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(header, company_model::CompanyRow::CSV_COLUMNS);
    let firsts: Vec<String> = reader
        .records()
        .map(|record| record.expect("a row")[0].to_owned())
        .collect();
    assert_eq!(firsts, [GOOGLE, AUDIENSE]);

    // Here, on the database, once the server has stopped: NDJSON, with a filter.
    drop(service);
    let ndjson = e2e_harness::cli(&[
        "search",
        "--db",
        &db,
        "--account",
        "acme",
        "--q",
        "audiense",
    ]);
    let rows: Vec<Value> = ndjson
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON row"))
        .collect();
    assert_eq!(rows.len(), 1, "{ndjson}");
    assert_eq!(rows[0]["final_li_url"], AUDIENSE);
    // A bad flag is named before anything runs.
    let refused =
        e2e_harness::cli_fails(&["search", "--db", &db, "--account", "acme", "--limit", "0"]);
    assert!(refused.contains("/limit"), "{refused}");
    drop(dir);
}

/// Searches are bounded in number per account and in time, behind a real wait: another connection holds a lock on
/// the search index, so each search's statement waits in PostgreSQL. An account's searches up to its cap
/// (`--account-searches`) wait and one more is refused at once (429), while another account's waits beside them;
/// on a server with a short `--search-time-limit` a search is stopped (400 `search_timed_out`); once the lock is
/// gone every waiting search answers, and nothing is charged.
#[tokio::test]
async fn searches_are_bounded_in_number_per_account_and_in_time() {
    let Some(database) = test_support::TestDatabase::create().await else {
        return;
    };
    let on_the_database = |args: Vec<&'static str>| ServiceOptions {
        database_url: Some(database.url.clone()),
        args,
        ..ServiceOptions::default()
    };
    let patient = Service::start(on_the_database(vec![
        "--account-searches",
        "2",
        "--search-time-limit",
        "60",
        "--key-rate",
        "0",
    ]));
    let hasty = Service::start(on_the_database(vec!["--search-time-limit", "0.3"]));
    let (acme, globex) = (patient.key("acme", "10"), patient.key("globex", "10"));
    for key in [&acme, &globex] {
        assert_eq!(patient.post(key, &urls(&[GOOGLE])).await.status, 200);
    }
    let before = (
        balance(&patient, &acme).await,
        balance(&patient, &globex).await,
    );
    // Someone signed in to acme's dashboard, whose searches count against acme's cap as its keys' do.
    patient.create_sign_in(
        "ada@example.com",
        crate::dashboard::PASSWORD,
        &["--account", "acme"],
    );
    let mut browser = crate::dashboard::Browser::new(&patient);
    assert_eq!(
        browser
            .sign_in("ada@example.com", crate::dashboard::PASSWORD)
            .await
            .status,
        303
    );
    let (mut holder, watcher) = (database.connect().await, database.connect().await);
    let lock = holder.transaction().await.expect("begins");
    lock.batch_execute("LOCK TABLE company_search IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("locks");
    let words = json!({"q": "google"});
    // Until `count` statements wait for the lock on the index (not the servers' own background waits).
    let waiters = |count: i64| {
        let watcher = &watcher;
        test_support::eventually(
            std::time::Duration::from_secs(30),
            "the searches wait for the lock",
            move || async move {
                let waiting: i64 = watcher
                    .query_one(
                        "SELECT count(*) FROM pg_locks
                         WHERE NOT granted AND locktype = 'relation'
                           AND relation = 'company_search'::regclass",
                        &[],
                    )
                    .await
                    .expect("counted")
                    .get(0);
                (waiting >= count).then_some(())
            },
        )
    };
    let waiting = futures::future::join_all([
        search(&patient, &acme, &words),
        search(&patient, &acme, &words),
        search(&patient, &globex, &words),
    ]);
    let meanwhile = async {
        waiters(3).await;
        let refused = search(&patient, &acme, &words).await;
        let refused_page = browser.get("/dashboard/search?q=google").await;
        let stopped = search(&hasty, &globex, &words).await;
        lock.rollback().await.expect("unlocks");
        (refused, refused_page, stopped)
    };
    // Bounded here, so that a search that is never stopped fails the test rather than hangs it.
    let (answers, (refused, refused_page, stopped)) =
        tokio::time::timeout(std::time::Duration::from_mins(1), async {
            tokio::join!(waiting, meanwhile)
        })
        .await
        .expect("every search answered");
    assert_eq!(refused.status, 429, "{}", refused.json);
    assert_eq!(refused.json["error"], "too_many_searches");
    assert!(
        refused.header("retry-after").is_some(),
        "{:?}",
        refused.headers
    );
    // The dashboard's search page says so, and when to come back, as the API does.
    assert_eq!(refused_page.status, 429, "{}", refused_page.body);
    assert!(
        refused_page.body.contains("at once"),
        "{}",
        refused_page.body
    );
    assert_eq!(
        refused_page
            .headers
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        refused.header("retry-after"),
        "{:?}",
        refused_page.headers
    );
    assert_eq!(stopped.status, 400, "{}", stopped.json);
    assert_eq!(stopped.json["error"], "search_timed_out");
    let message = stopped.json["message"].as_str().expect("a message");
    assert!(
        message.contains("300 ms") && message.contains("narrow"),
        "{message}"
    );
    for answer in &answers {
        assert_eq!(found(answer), [GOOGLE]);
    }
    assert_eq!(
        (
            balance(&patient, &acme).await,
            balance(&patient, &globex).await
        ),
        before
    );
    // A caller that hangs up leaves its search to end in the store, in its place under the cap: an account does
    // not run more searches than its cap by hanging up and asking again. Over HTTP/2, where a request dropped
    // resets its stream and the server drops its handler at once.
    let lock = holder.transaction().await.expect("begins");
    lock.batch_execute("LOCK TABLE company_search IN ACCESS EXCLUSIVE MODE")
        .await
        .expect("locks");
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .expect("a client");
    let ask = || {
        h2.post(format!("{}{SEARCH}", patient.base))
            .header("x-api-key", acme.as_str())
            .json(&words)
            .send()
    };
    tokio::select! {
        _ = futures::future::join_all([ask(), ask()]) => panic!("the searches answered behind the lock"),
        () = waiters(2) => {}
    }
    test_support::stays(
        std::time::Duration::from_secs(2),
        "an account whose searches hung up stays at its cap",
        || async {
            // A search let in waits behind the lock (60 s); a refusal takes milliseconds.
            let asked = tokio::time::timeout(
                std::time::Duration::from_secs(5),
                search(&patient, &acme, &words),
            )
            .await;
            let reply = asked.expect("a search past the cap was let in (it waited for the lock)");
            assert_eq!(reply.status, 429, "a search past the cap: {}", reply.json);
            true
        },
    )
    .await;
    lock.rollback().await.expect("unlocks");
}
