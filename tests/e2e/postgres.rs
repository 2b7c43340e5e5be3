//! The server on PostgreSQL (`--db postgres://…`): the same service as on SQLite, and several servers on one
//! database sharing accounts, holds, keys and snapshots. Each test makes a private database and drops it.

use std::time::Duration;

use e2e_harness::{Service, ServiceOptions, TestOrigin, client};
use futures::future::join_all;
use serde_json::json;
use test_support::TestDatabase;

use crate::GOOGLE;

fn on(database: &TestDatabase, origin: Option<&TestOrigin>) -> ServiceOptions<'static> {
    let mut options = ServiceOptions {
        database_url: Some(database.url.clone()),
        args: vec!["--key-rate", "0"],
        ..ServiceOptions::default()
    };
    if let Some(origin) = origin {
        options.origin.clone_from(&origin.base);
    }
    options
}

/// Three servers on one database.
fn three_servers(database: &TestDatabase, origin: Option<&TestOrigin>) -> Vec<Service> {
    (0..3)
        .map(|_| Service::start(on(database, origin)))
        .collect()
}

#[tokio::test]
async fn one_server_on_postgres_serves_bills_and_keeps_snapshots() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let service = Service::start(on(&database, None));
    let first = service
        .first_key()
        .expect("a first start makes a key on an empty database");
    let key = service.key("acme", "10");
    let live = service.post(&key, &json!({ "liUrls": [GOOGLE] })).await;
    assert_eq!(live.status, 200, "{}", live.json);
    assert_eq!(live.header("x-credits-remaining"), Some("9"));
    let stored = service
        .post(&key, &json!({ "liUrls": [GOOGLE], "maxAgeHours": 24 }))
        .await;
    assert_eq!(stored.json["results"][0]["source"], "stored");
    assert_eq!(stored.header("x-credits-remaining"), Some("8.5"));
    assert_eq!(
        service
            .post(&first, &json!({ "liUrls": [GOOGLE] }))
            .await
            .status,
        200
    );
    let shown = service.cli(&["credits", "show", "--account", "acme"]);
    assert!(shown.starts_with("acme: 8.5 credits"), "{shown}");
    let listed = service.cli(&["keys", "list"]);
    assert!(
        listed.contains("acme") && listed.contains("default"),
        "{listed}"
    );
}

#[tokio::test]
async fn three_servers_on_one_database_never_overspend_an_account() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let origin = TestOrigin::start().await;
    let servers = three_servers(&database, Some(&origin));
    let key = servers[0].key("acme", "10");
    // 30 requests for 30 different pages, one credit each, spread over the three servers at once: the account
    // can pay for 10.
    let requests = (0..30).map(|n| {
        let server = &servers[n % 3];
        let key = key.clone();
        async move {
            let body = json!({ "liUrls": [format!("https://www.linkedin.com/company/p{n}")] });
            server.post(&key, &body).await
        }
    });
    let replies = join_all(requests).await;
    let paid = replies.iter().filter(|r| r.status == 200).count();
    let refused = replies.iter().filter(|r| r.status == 402).count();
    assert_eq!(
        (paid, refused),
        (10, 20),
        "{:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    let shown = servers[1].cli(&["credits", "show", "--account", "acme"]);
    assert!(shown.starts_with("acme: 0 credits"), "{shown}");
    // One charge row per paid request, and the rows add up to the balance.
    let charges = shown.lines().filter(|l| l.contains("live request")).count();
    assert_eq!(charges, 10, "{shown}");
}

#[tokio::test]
async fn a_key_revoked_on_one_server_is_refused_by_every_server_within_seconds() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let servers = three_servers(&database, None);
    let key = servers[0].key("acme", "10");
    for server in &servers {
        assert_eq!(
            server
                .post(&key, &json!({ "liUrls": [GOOGLE] }))
                .await
                .status,
            200
        );
    }
    servers[2].cli(&["keys", "revoke", &key[..12]]);
    // Every server refuses it within its 2 s interval (and a margin for a loaded machine).
    for server in &servers {
        e2e_harness::eventually(
            Duration::from_secs(4),
            &format!("{} still takes the revoked key", server.base),
            || async {
                (server
                    .post(&key, &json!({ "liUrls": [GOOGLE] }))
                    .await
                    .status
                    == 401)
                    .then_some(())
            },
        )
        .await;
    }
}

#[tokio::test]
async fn the_database_going_away_is_a_503_and_the_service_resumes_when_it_returns() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let service = Service::start(on(&database, None));
    let key = service.key("acme", "10");
    assert_eq!(
        service
            .post(&key, &json!({ "liUrls": [GOOGLE] }))
            .await
            .status,
        200
    );
    assert_eq!(service.get("/healthz").await.status, 200);

    // The database goes away: new connections refused, the server's connections ended.
    let name = database.name().to_owned();
    database
        .admin(&format!(
            "ALTER DATABASE {name} ALLOW_CONNECTIONS false;
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
        ))
        .await;
    let down = service.post(&key, &json!({ "liUrls": [GOOGLE] })).await;
    assert_eq!(
        (down.status, &down.json["error"]),
        (503, &json!("database_unavailable")),
        "{}",
        down.json
    );
    assert_eq!(down.header("retry-after"), Some("5"));
    assert!(
        !down.json["message"].to_string().contains("SQL"),
        "{}",
        down.json
    );
    let health = service.get("/healthz").await;
    assert_eq!(
        (health.status, &health.json["status"]),
        (503, &json!("unavailable"))
    );

    // It comes back: the service resumes by itself.
    database
        .admin(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true"))
        .await;
    e2e_harness::eventually(
        Duration::from_secs(10),
        "the service did not resume",
        || async {
            let status = service
                .post(&key, &json!({ "liUrls": [GOOGLE] }))
                .await
                .status;
            (status == 200).then_some(())
        },
    )
    .await;
    assert_eq!(service.get("/healthz").await.status, 200);
    // Nothing was charged for the refused request, and no hold was left.
    let shown = service.cli(&["credits", "show", "--account", "acme"]);
    assert!(shown.starts_with("acme: 8 credits"), "{shown}");
    assert_eq!(service.available_credits(&key).await, "8");
}

#[tokio::test]
async fn the_same_page_asked_of_three_servers_at_once_is_fetched_once() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let origin = TestOrigin::start().await;
    let servers = three_servers(&database, Some(&origin));
    let key = servers[0].key("acme", "10");
    let body = json!({ "liUrls": ["https://www.linkedin.com/company/p77"] });
    let replies = join_all(servers.iter().map(|server| server.post(&key, &body))).await;
    for reply in &replies {
        assert_eq!(reply.status, 200, "{}", reply.json);
        assert_eq!(reply.json["results"][0]["source"], "live");
    }
    assert_eq!(
        origin.hits("/company/p77"),
        1,
        "one server fetched, the others waited for its snapshot"
    );
    let fetched: Vec<&serde_json::Value> = replies
        .iter()
        .map(|r| &r.json["results"][0]["fetched_at"])
        .collect();
    assert!(fetched.iter().all(|f| *f == fetched[0]), "{fetched:?}");
}

/// Three servers on one database with these extra flags.
fn three_servers_with(
    database: &TestDatabase,
    origin: &TestOrigin,
    args: &[&'static str],
) -> Vec<Service> {
    (0..3)
        .map(|_| {
            let mut options = on(database, Some(origin));
            if args.contains(&"--key-rate") {
                options.args.clear(); // the rate these tests set instead of none
            }
            options.args.extend_from_slice(args);
            Service::start(options)
        })
        .collect()
}

fn pages(range: std::ops::Range<usize>) -> serde_json::Value {
    let urls: Vec<String> = range
        .map(|n| format!("https://www.linkedin.com/company/p{n}"))
        .collect();
    json!({ "liUrls": urls })
}

#[tokio::test]
async fn the_origin_rate_is_a_total_for_three_servers() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let origin = TestOrigin::start().await;
    let servers = three_servers_with(&database, &origin, &["--origin-rate", "10"]);
    let key = servers[0].key("acme", "100");
    // Ten different pages to each server at once: 30 starts at 10 a second in all take 2.9 s; had each server
    // its own 10 a second, 0.9 s.
    let batches: Vec<serde_json::Value> = (0..3).map(|n| pages(n * 10..n * 10 + 10)).collect();
    let replies = join_all(
        servers
            .iter()
            .zip(&batches)
            .map(|(server, batch)| server.post(&key, batch)),
    )
    .await;
    for reply in &replies {
        assert_eq!(reply.status, 200, "{}", reply.json);
        assert_eq!(reply.json["results"].as_array().map(Vec::len), Some(10));
    }
    let arrivals = origin.arrivals();
    assert_eq!(arrivals.len(), 30);
    let span = arrivals[29] - arrivals[0];
    assert!(
        span >= Duration::from_millis(2_600),
        "30 starts at 10/s in all took {span:?}"
    );
    // Any 11 starts span 1 s at 10 a second in all (each server's own 10 a second would put them in a third of
    // that). An arrival is its start plus the request's way to the origin, which a busy machine can stretch for
    // one request and not the next, so a window may look shorter by that much: 700 ms still tells the two apart.
    for second in arrivals.windows(11) {
        let took = second[10] - second[0];
        assert!(
            took >= Duration::from_millis(700),
            "11 starts within {took:?}"
        );
    }
}

#[tokio::test]
async fn the_key_rate_is_a_total_for_three_servers() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let origin = TestOrigin::start().await;
    let servers = three_servers_with(
        &database,
        &origin,
        &["--key-rate", "20", "--key-burst", "10"],
    );
    let key = servers[0].key("acme", "1000");
    let stored = json!({ "liUrls": [GOOGLE], "maxAgeHours": 24 });
    // The snapshot is stored with another key, so that this key's burst is whole when the clients start.
    let warm = servers[0].key("warm", "10");
    assert_eq!(servers[0].post(&warm, &stored).await.status, 200);

    let run_for = Duration::from_secs(2);
    let started = std::time::Instant::now();
    let clients = servers.iter().map(|server| {
        let (key, stored) = (key.clone(), stored.clone());
        async move {
            let (mut served, mut limited) = (0u32, 0u32);
            while started.elapsed() < run_for {
                let reply = server.post(&key, &stored).await;
                match reply.status {
                    200 => served += 1,
                    429 => {
                        assert_eq!(reply.json["error"], "rate_limited", "{}", reply.json);
                        assert!(reply.header("retry-after").is_some());
                        limited += 1;
                        // A client's pause after a refusal, so that three do not spin on the servers.
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                    other => panic!("{other}: {}", reply.json),
                }
            }
            (served, limited)
        }
    });
    let counts = join_all(clients).await;
    let served: u32 = counts.iter().map(|(s, _)| s).sum();
    assert!(
        counts.iter().all(|(_, limited)| *limited > 0),
        "every server refused some: {counts:?}"
    );
    // 10 at once and 20 a second for 2 s, for the three servers together (each alone would allow 3 times that).
    let allowed = 10.0 + 20.0 * run_for.as_secs_f64();
    let ratio = f64::from(served) / allowed;
    assert!(
        (0.9..=1.1).contains(&ratio),
        "{served} served, {allowed} allowed: {counts:?}"
    );
}

#[tokio::test]
async fn the_live_lookup_cap_counts_an_accounts_lookups_on_every_server() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let origin = TestOrigin::start().await;
    let servers = three_servers_with(&database, &origin, &["--account-live-lookups", "3"]);
    let key = servers[0].key("acme", "100");
    // Three live lookups in flight on the first server (the origin holds their pages) ...
    origin.hold();
    let three = pages(0..3);
    let busy = servers[0].post(&key, &three);
    let refused = async {
        origin.reached(3).await;
        let refused = servers[1].post(&key, &pages(3..4)).await;
        origin.release();
        refused
    };
    let (busy, refused) = tokio::join!(busy, refused);
    assert_eq!(busy.status, 200, "{}", busy.json);
    // ... so the second refuses a fourth.
    assert_eq!(
        (refused.status, &refused.json["error"]),
        (429, &json!("too_many_live_lookups")),
        "{}",
        refused.json
    );
    assert!(refused.header("retry-after").is_some());
    // Once they ended, another server admits it.
    let admitted = servers[2].post(&key, &pages(3..4)).await;
    assert_eq!(admitted.status, 200, "{}", admitted.json);
}

#[tokio::test]
async fn a_server_killed_mid_batch_charges_nothing_and_frees_its_holds_when_it_restarts() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let origin = TestOrigin::start().await;
    let mut options = on(&database, Some(&origin));
    options.real_process = true;
    options
        .args
        .extend_from_slice(&["--origin-rate", "10", "--server-name", "web-1"]);
    let mut killed = Service::start(options.clone());
    let other = Service::start(on(&database, Some(&origin)));
    let key = other.key("acme", "100");

    // A 40-page batch takes 4 s at 10 a second; the server is killed once 5 pages reached the origin.
    let batch = e2e_harness::client()
        .post(format!("{}/v1/network/company-data", killed.base))
        .header("x-api-key", &key)
        .header("content-type", "application/json")
        .body(pages(0..40).to_string())
        .send();
    let kill = async {
        origin.reached(5).await;
        let pid = killed.pid();
        std::process::Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status()
            .expect("kill runs");
    };
    let (reply, ()) = tokio::join!(batch, kill);
    assert!(reply.is_err(), "the batch had no answer: {reply:?}");
    // Its hold of 40 credits is still counted; the other server keeps serving.
    assert_eq!(other.available_credits(&key).await, "60");
    assert_eq!(
        other.post(&key, &pages(100..101)).await.status,
        200,
        "the other server serves on"
    );

    // Restarted under the same name, it frees its holds at once.
    killed.kill();
    let restarted = Service::start(options);
    assert_eq!(restarted.available_credits(&key).await, "99");
    let ledger = database.connect().await;
    let charged: Vec<i64> = ledger
        .query(
            "SELECT urls_returned FROM ledger_entries WHERE kind = 'charge' ORDER BY id",
            &[],
        )
        .await
        .expect("ledger rows")
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(
        charged,
        vec![1],
        "only the other server's request was charged"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_database_stopping_under_load_loses_nothing_and_leaves_no_hold() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let origin = TestOrigin::start().await;
    let servers: Vec<Service> = (0..2)
        .map(|_| Service::start(on(&database, Some(&origin))))
        .collect();
    // Enough credits for any pace the clients reach: the test is about the outage, not the balance.
    let key = servers[0].key("acme", "1000000");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    // Every client's answers so far, in the order they came: (client, status).
    let seen = &std::sync::Mutex::new(Vec::<(usize, u16)>::new());
    let next_page = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    // Four clients per server, half asking for new pages live, half for a stored one.
    let clients = (0..8).map(|n| {
        let (server, key) = (&servers[n % 2], key.clone());
        let (stop, next_page) = (
            std::sync::Arc::clone(&stop),
            std::sync::Arc::clone(&next_page),
        );
        async move {
            let mut statuses = Vec::new();
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                let body = if n % 4 < 2 {
                    let page = next_page.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    pages(page..page + 1)
                } else {
                    json!({ "liUrls": [GOOGLE], "maxAgeHours": 24 })
                };
                let reply = server.post(&key, &body).await;
                if reply.status == 503 {
                    assert_eq!(
                        reply.json["error"], "database_unavailable",
                        "{}",
                        reply.json
                    );
                    assert!(reply.header("retry-after").is_some());
                    // A client's pause after a refusal, so that eight do not spin on the servers.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                seen.lock().expect("seen lock").push((n, reply.status));
                statuses.push(reply.status);
            }
            statuses
        }
    });
    let name = database.name().to_owned();
    // Waits until the answers so far hold `count` of `status` in all, or with `each`, until every client's last
    // `count` answers are `status`.
    let answered = |status: u16, count: usize, each: bool, what: &'static str| {
        e2e_harness::eventually(Duration::from_secs(30), what, move || {
            let seen = seen.lock().expect("seen lock");
            let met = if each {
                (0..8).all(|client| {
                    let run = seen
                        .iter()
                        .rev()
                        .filter(|(c, _)| *c == client)
                        .take_while(|(_, s)| *s == status)
                        .count();
                    run >= count
                })
            } else {
                seen.iter().filter(|(_, s)| *s == status).count() >= count
            };
            std::future::ready(met.then_some(()))
        })
    };
    let outage = async {
        answered(200, 20, false, "the clients were never served").await;
        database
            .admin(&format!(
                "ALTER DATABASE {name} ALLOW_CONNECTIONS false;
                 SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
            ))
            .await;
        answered(503, 8, false, "the outage was never seen").await;
        database
            .admin(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true"))
            .await;
        answered(200, 8, true, "the service did not resume on every client").await;
        stop.store(true, std::sync::atomic::Ordering::SeqCst);
    };
    let (statuses, ()) = tokio::join!(join_all(clients), outage);
    let statuses: Vec<u16> = statuses.into_iter().flatten().collect();
    let served = statuses.iter().filter(|s| **s == 200).count();
    let unavailable = statuses.iter().filter(|s| **s == 503).count();
    assert_eq!(
        served + unavailable,
        statuses.len(),
        "only 200 and 503: {statuses:?}"
    );
    assert!(unavailable > 0, "the outage was seen");
    assert!(
        statuses.iter().rev().take(8).all(|s| *s == 200),
        "service resumed: {statuses:?}"
    );

    // Every 200 is one charge row, the rows add up to the balance, and no hold is left once the holds of requests
    // cut off by the outage are released (within a second of the database returning).
    let ledger = database.connect().await;
    e2e_harness::eventually(
        Duration::from_secs(10),
        "holds were left behind",
        || async {
            let holds: i64 = ledger
                .query_one("SELECT count(*) FROM credit_holds", &[])
                .await
                .expect("the holds")
                .get(0);
            (holds == 0).then_some(())
        },
    )
    .await;
    let row = ledger
        .query_one(
            "SELECT (SELECT count(*) FROM ledger_entries e WHERE e.account_id = a.id AND kind = 'charge'),
                    (SELECT sum(delta_millis) FROM ledger_entries e WHERE e.account_id = a.id)::BIGINT,
                    balance_millis, held_millis, (SELECT count(*) FROM credit_holds)
             FROM accounts a WHERE name = 'acme'",
            &[],
        )
        .await
        .expect("the ledger");
    let (charges, sum, balance, held, holds): (i64, i64, i64, i64, i64) =
        (row.get(0), row.get(1), row.get(2), row.get(3), row.get(4));
    assert_eq!(
        usize::try_from(charges).ok(),
        Some(served),
        "one charge per served request"
    );
    assert_eq!(sum, balance, "the ledger sums to the balance");
    assert_eq!((held, holds), (0, 0), "no hold left behind");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_servers_share_one_job_and_do_each_page_once() {
    let Some(database) = TestDatabase::create().await else {
        return;
    };
    let origin = TestOrigin::start().await;
    let servers = three_servers(&database, Some(&origin));
    let key = servers[0].key("acme", "1000");
    // 600 positions over 300 pages, submitted to one server; every server's runner takes parts of it.
    let urls: Vec<String> = (0..600)
        .map(|n| format!("https://www.linkedin.com/company/p{}", n % 300))
        .collect();
    let created = client()
        .post(format!("{}/v1/network/company-data/jobs", servers[0].base))
        .header("x-api-key", &key)
        .json(&json!({ "liUrls": urls }))
        .send()
        .await
        .expect("sent");
    assert_eq!(created.status(), 202);
    let id = created.json::<serde_json::Value>().await.expect("json")["id"]
        .as_str()
        .expect("id")
        .to_owned();
    let job = e2e_harness::eventually(Duration::from_mins(2), "the job never finished", || async {
        // Any server shows the job.
        let job: serde_json::Value = client()
            .get(format!(
                "{}/v1/network/company-data/jobs/{id}",
                servers[2].base
            ))
            .header("x-api-key", &key)
            .send()
            .await
            .expect("sent")
            .json()
            .await
            .expect("json");
        (job["status"] == "done").then_some(job)
    })
    .await;
    assert_eq!(
        (job["resolved"].as_u64(), job["credits_charged"].as_f64()),
        (Some(600), Some(300.0))
    );
    for page in [0, 150, 299] {
        assert_eq!(
            origin.hits(&format!("/company/p{page}")),
            1,
            "p{page} fetched once"
        );
    }
    // The work was shared: more than one server held leases (each lease's charge row names its part).
    let ledger = database.connect().await;
    let row = ledger
        .query_one(
            "SELECT count(*), count(DISTINCT reference), sum(-delta_millis)::BIGINT FROM ledger_entries
             WHERE kind = 'charge' AND reference LIKE 'job:%'",
            &[],
        )
        .await
        .expect("ledger");
    let (rows, references, millis): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
    assert_eq!(rows, references, "each part charged once");
    assert_eq!(millis, 300_000);
    let row = ledger
        .query_one(
            "SELECT (SELECT count(*) FROM job_leases), count(DISTINCT answered_by) FROM job_pages",
            &[],
        )
        .await
        .expect("job pages");
    let (leases, servers_used): (i64, i64) = (row.get(0), row.get(1));
    assert_eq!(leases, 0, "every lease ended");
    assert!(
        servers_used >= 2,
        "the parts were shared: {servers_used} server(s) answered pages"
    );
}
