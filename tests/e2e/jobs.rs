//! Bulk jobs over loopback (docs/api.md, "Bulk jobs"): submit, progress, results in order as NDJSON and CSV,
//! cancel, delete, and a server killed mid-job that resumes without paying twice.

use std::time::Duration;

use e2e_harness::{Reply, Service, ServiceOptions, TestOrigin};
use serde_json::{Value, json};

pub(crate) const JOBS: &str = "/v1/network/company-data/jobs";

/// `count` URLs over `pages` distinct pages `/company/p<N>` (each named in three spellings), then a page the
/// origin does not have.
fn job_urls(count: usize, pages: usize) -> Vec<String> {
    let mut urls: Vec<String> = (0..count - 1)
        .map(|n| {
            let page = n % pages;
            match n / pages % 3 {
                0 => format!("https://www.linkedin.com/company/p{page}"),
                1 => format!("https://linkedin.com/company/p{page}/"),
                _ => format!("https://www.linkedin.com/company/p{page}?trk=list"),
            }
        })
        .collect();
    urls.push("https://www.linkedin.com/company/nobody-here".to_owned());
    urls
}

/// `GET path` with `key`, the body read as JSON.
async fn get(service: &Service, key: &str, path: &str) -> Reply {
    service
        .send(reqwest::Method::GET, path, key, None, None)
        .await
        .0
}

/// `POST <job>/cancel` with `key`: cancels the job at `path`, keeping its results.
async fn cancel(service: &Service, key: &str, path: &str) -> Reply {
    service
        .send(
            reqwest::Method::POST,
            &format!("{path}/cancel"),
            key,
            None,
            None,
        )
        .await
        .0
}

/// `POST` to the jobs collection.
pub(crate) async fn submit(service: &Service, key: &str, body: &Value) -> Reply {
    service
        .send(reqwest::Method::POST, JOBS, key, Some(body), None)
        .await
        .0
}

/// Polls the job until it is `status` (within `limit`), returning it.
pub(crate) async fn wait_until(
    service: &Service,
    key: &str,
    id: &str,
    status: &str,
    limit: Duration,
) -> Value {
    e2e_harness::eventually(limit, &format!("the job never became {status}"), || async {
        let reply = get(service, key, &format!("{JOBS}/{id}")).await;
        assert_eq!(reply.status, 200, "{}", reply.json);
        (reply.json["status"] == status).then_some(reply.json)
    })
    .await
}

fn balance(service: &Service, account: &str) -> String {
    let shown = service.cli(&["credits", "show", "--account", account]);
    shown.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_job_runs_and_its_results_read_back_in_input_order() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--origin-concurrency", "64"],
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "1000");
    let other = service.key("other", "1");
    // 1,000 positions over 100 distinct pages and one that does not exist.
    let urls = job_urls(1000, 100);
    let created = submit(&service, &key, &json!({ "liUrls": urls })).await;
    assert_eq!(created.status, 202, "{}", created.json);
    let id = created.json["id"].as_str().expect("id").to_owned();
    assert_eq!(
        created.header("location"),
        Some(format!("{JOBS}/{id}").as_str())
    );
    assert_eq!(created.json["total"], 1000);

    let done = wait_until(&service, &key, &id, "done", Duration::from_mins(2)).await;
    assert_eq!(
        (
            done["done"].as_u64(),
            done["resolved"].as_u64(),
            done["unresolved"].as_u64()
        ),
        (Some(1000), Some(999), Some(1))
    );
    // Each distinct page that resolved once, live: 100 credits; repeats and the missing page nothing.
    assert_eq!(done["credits_charged"], 100.0);
    assert_eq!(balance(&service, "acme"), "acme: 900 credits");
    for page in [0, 57, 99] {
        assert_eq!(
            origin.hits(&format!("/company/p{page}")),
            1,
            "p{page} fetched once"
        );
    }

    let (results, text) = service
        .send(
            reqwest::Method::GET,
            &format!("{JOBS}/{id}/results"),
            &key,
            None,
            None,
        )
        .await;
    assert_eq!(results.status, 200);
    assert_eq!(results.header("content-type"), Some("application/x-ndjson"));
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 1000);
    for (position, (line, url)) in lines.iter().zip(&urls).enumerate() {
        assert_eq!(line["position"], position);
        assert_eq!(line["original_li_url"], url.as_str());
    }
    assert_eq!(lines[101]["company_name"], "Google");
    assert_eq!(lines[999]["error"], "not_found");

    let (page, text) = service
        .send(
            reqwest::Method::GET,
            &format!("{JOBS}/{id}/results?from=10&limit=5"),
            &key,
            None,
            Some("text/csv"),
        )
        .await;
    assert_eq!(page.header("content-type"), Some("text/csv; charset=utf-8"));
    assert_eq!(
        page.header("link"),
        Some(format!("<{JOBS}/{id}/results?from=15&limit=5>; rel=\"next\"").as_str())
    );
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().expect("header").clone();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    assert_eq!(rows.len(), 5);
    let column = |name: &str| header.iter().position(|h| h == name).expect(name);
    assert_eq!(&rows[0][column("position")], "10");
    assert_eq!(&rows[0][column("company_name")], "Google");
    assert_eq!(&rows[0][column("status")], "resolved");

    let listed = get(&service, &key, JOBS).await;
    assert_eq!(listed.json["jobs"][0]["id"], id.as_str());
    assert_eq!(listed.json["next"], Value::Null);
    // Another account sees no such job; a cancel of an ended job changes nothing.
    for (method, path) in [
        (reqwest::Method::GET, format!("{JOBS}/{id}")),
        (reqwest::Method::DELETE, format!("{JOBS}/{id}")),
        (reqwest::Method::POST, format!("{JOBS}/{id}/cancel")),
    ] {
        let (hidden, _) = service.send(method, &path, &other, None, None).await;
        assert_eq!(
            (hidden.status, hidden.json["error"].as_str()),
            (404, Some("job_not_found")),
            "{path}"
        );
    }
    let ended = cancel(&service, &key, &format!("{JOBS}/{id}")).await;
    assert_eq!(ended.json["status"], "done");
    let results_before = get(&service, &key, &format!("{JOBS}/{id}/results")).await;
    assert_eq!(results_before.status, 200, "a cancel keeps the results");
    // A delete leaves nothing to read: the job and its results are 404, and a second delete too.
    let (deleted, _) = service
        .send(
            reqwest::Method::DELETE,
            &format!("{JOBS}/{id}"),
            &key,
            None,
            None,
        )
        .await;
    assert_eq!(deleted.status, 204);
    for (method, path) in [
        (reqwest::Method::GET, format!("{JOBS}/{id}")),
        (reqwest::Method::GET, format!("{JOBS}/{id}/results")),
        (reqwest::Method::DELETE, format!("{JOBS}/{id}")),
    ] {
        let (gone, _) = service.send(method, &path, &key, None, None).await;
        assert_eq!(
            (gone.status, gone.json["error"].as_str()),
            (404, Some("job_not_found")),
            "{path}"
        );
    }
    assert_eq!(get(&service, &key, JOBS).await.json["jobs"], json!([]));

    // Every problem of a list is reported at once, nothing is stored.
    let invalid = submit(
        &service,
        &key,
        &json!({"liUrls": ["https://example.com/x", "https://www.linkedin.com/company/a", 7]}),
    )
    .await;
    assert_eq!(invalid.status, 400);
    assert_eq!(invalid.json["details"].as_array().map(Vec::len), Some(2));
}

#[tokio::test]
async fn a_cancelled_job_stops_fetching() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--origin-concurrency", "4", "--job-workers", "1"],
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "1000");
    let urls = job_urls(400, 399);
    let created = submit(&service, &key, &json!({ "liUrls": urls })).await;
    let id = created.json["id"].as_str().expect("id").to_owned();
    origin.reached(5).await;
    let cancelled = cancel(&service, &key, &format!("{JOBS}/{id}")).await;
    assert_eq!(cancelled.json["status"], "cancelled");
    // The part in flight ends (one worker: at most 25 pages) ...
    let settled = origin.settled(Duration::from_millis(300)).await;
    // ... then nothing more reaches the origin.
    e2e_harness::stays(
        Duration::from_secs(2),
        "fetching went on after the cancel",
        || std::future::ready(origin.hits_total() == settled),
    )
    .await;
    assert!(settled <= 30, "{settled} pages fetched");
    let job = wait_until(&service, &key, &id, "cancelled", Duration::from_secs(5)).await;
    assert!(job["done"].as_u64() < Some(400));
    assert_eq!(
        balance(&service, "acme"),
        format!(
            "acme: {} credits",
            1000 - job["resolved"].as_u64().expect("count")
        ),
        "charged for what was fetched and nothing else"
    );
}

#[tokio::test]
async fn a_server_killed_mid_job_resumes_it_and_charges_nothing_twice() {
    let origin = TestOrigin::start().await;
    let options = || ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--origin-concurrency", "16", "--server-name", "web-1"],
        real_process: true,
        ..ServiceOptions::default()
    };
    let mut service = Service::start(options());
    let key = service.key("acme", "1000");
    let urls = job_urls(600, 200);
    let created = submit(&service, &key, &json!({ "liUrls": urls, "maxAgeHours": 1 })).await;
    let id = created.json["id"].as_str().expect("id").to_owned();
    // Killed while parts are in flight, some already paid and recorded.
    e2e_harness::eventually(
        Duration::from_mins(1),
        "the job never passed 50 pages",
        || async {
            let job = get(&service, &key, &format!("{JOBS}/{id}")).await;
            (job.json["done"].as_u64() > Some(50)).then_some(())
        },
    )
    .await;
    service.kill();
    let restarted = Service::start(ServiceOptions {
        dir: Some(service.dir()),
        ..options()
    });
    let done = wait_until(&restarted, &key, &id, "done", Duration::from_mins(2)).await;
    assert_eq!(
        (done["resolved"].as_u64(), done["unresolved"].as_u64()),
        (Some(599), Some(1))
    );
    // 200 distinct pages at the stored price, each paid once, whatever the kill interrupted.
    assert_eq!(balance(&restarted, "acme"), "acme: 900 credits");
    let (_, text) = restarted
        .send(
            reqwest::Method::GET,
            &format!("{JOBS}/{id}/results"),
            &key,
            None,
            None,
        )
        .await;
    assert_eq!(text.lines().count(), 600);
}

/// Faulty pages of the test origin and what each becomes in a job's results. (Push-back, `blocked` and
/// `authwall`, is not among them: a job puts such pages back and fetches them later, `hostile.rs`.)
const FAULTS: [(&str, &str); 4] = [
    ("/company/reset", "fetch_failed"),
    ("/company/truncated", "fetch_failed"),
    ("/company/bomb", "fetch_failed"),
    ("/company/missing-page", "not_found"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_job_answers_every_position_and_a_small_one_of_another_account_passes_it() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--origin-concurrency", "32"],
        ..ServiceOptions::default()
    });
    let big_key = service.key("big", "10000");
    let small_key = service.key("small", "1000");
    // A's list: 10,000 positions over 1,000 pages in several spellings, faulty pages among them.
    let mut urls = job_urls(10_000, 1_000);
    for (n, (path, _)) in FAULTS.iter().enumerate() {
        urls[n * 1_000 + 500] = format!("https://www.linkedin.com{path}");
    }
    let big = submit(&service, &big_key, &json!({ "liUrls": urls })).await;
    assert_eq!(big.status, 202, "{}", big.json);
    let big_id = big.json["id"].as_str().expect("id").to_owned();
    origin.reached(50).await;
    // B's 500 positions over 50 pages of its own, submitted while A's job runs.
    let small_urls: Vec<String> = (0..500)
        .map(|n| format!("https://www.linkedin.com/company/p{}", 5_000 + n % 50))
        .collect();
    let small = submit(&service, &small_key, &json!({ "liUrls": small_urls })).await;
    let small_id = small.json["id"].as_str().expect("id").to_owned();
    // A synchronous stored request meanwhile is served as usual (its time is measured by `just bench`, section 9,
    // not judged here).
    let stored = service
        .post(
            &small_key,
            &json!({"liUrls": ["https://www.linkedin.com/company/google"], "maxAgeHours": 24}),
        )
        .await;
    assert_eq!(stored.status, 200, "{}", stored.json);

    wait_until(
        &service,
        &small_key,
        &small_id,
        "done",
        Duration::from_mins(1),
    )
    .await;
    let big_then = get(&service, &big_key, &format!("{JOBS}/{big_id}")).await;
    assert_eq!(
        big_then.json["status"], "running",
        "B finished before A: {}",
        big_then.json
    );
    assert!(big_then.json["done"].as_u64() < Some(10_000));

    let done = wait_until(&service, &big_key, &big_id, "done", Duration::from_mins(3)).await;
    let unresolved_positions = FAULTS.len() as u64 + 1;
    assert_eq!(done["done"].as_u64(), Some(10_000));
    assert_eq!(
        done["unresolved"].as_u64(),
        Some(unresolved_positions),
        "{done}"
    );
    let (_, text) = service
        .send(
            reqwest::Method::GET,
            &format!("{JOBS}/{big_id}/results"),
            &big_key,
            None,
            None,
        )
        .await;
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 10_000, "every position answered");
    assert!(
        lines
            .iter()
            .enumerate()
            .all(|(n, line)| line["position"] == n)
    );
    for (n, (_, reason)) in FAULTS.iter().enumerate() {
        assert_eq!(
            lines[n * 1_000 + 500]["error"],
            *reason,
            "{}",
            lines[n * 1_000 + 500]
        );
    }
    // Each resolved distinct page paid once, live: the 1,000 pages (every one is still named by a position the
    // faults did not replace); the faulty and missing pages nothing.
    let paid: u32 = 1_000;
    assert_eq!(done["credits_charged"], f64::from(paid));
    assert_eq!(
        balance(&service, "big"),
        format!("big: {} credits", 10_000 - paid)
    );
}

#[tokio::test]
async fn a_job_out_of_credits_pauses_and_a_grant_resumes_it() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--origin-concurrency", "32"],
        ..ServiceOptions::default()
    });
    // 5 credits pay for 5 of the job's 40 live pages.
    let key = service.key("acme", "5");
    let urls: Vec<String> = (0..40)
        .map(|n| format!("https://www.linkedin.com/company/p{n}"))
        .collect();
    let created = submit(&service, &key, &json!({ "liUrls": urls })).await;
    let id = created.json["id"].as_str().expect("id").to_owned();
    let paused = wait_until(&service, &key, &id, "paused", Duration::from_secs(30)).await;
    assert_eq!(paused["paused_reason"], "insufficient_credits");
    assert_eq!(
        (
            paused["resolved"].as_u64(),
            paused["credits_charged"].as_f64()
        ),
        (Some(5), Some(5.0))
    );
    assert_eq!(
        balance(&service, "acme"),
        "acme: 0 credits",
        "spent to the last credit, never below"
    );

    service.cli(&["credits", "grant", "--account", "acme", "50"]);
    let done = wait_until(&service, &key, &id, "done", Duration::from_secs(30)).await;
    assert_eq!(
        (done["resolved"].as_u64(), done["credits_charged"].as_f64()),
        (Some(40), Some(40.0))
    );
    assert_eq!(done["paused_reason"], Value::Null);
    assert_eq!(balance(&service, "acme"), "acme: 15 credits");
}
