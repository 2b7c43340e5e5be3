//! Account events over HTTP (docs/api.md, "Webhooks"): an account registers webhook endpoints, its jobs' endings
//! reach them signed, a receiver that fails is retried with the same event id, and another account sees none of
//! it. A real receiver on loopback (allowed by `--webhook-allow-private`), retries 1 s apart at first.

use std::time::Duration;

use e2e_harness::receiver::WebhookReceiver;
use e2e_harness::{Service, ServiceOptions};
use reqwest::Method;
use serde_json::{Value, json};

use crate::GOOGLE;
use crate::jobs::{submit, wait_until};
use crate::openapi::assert_valid;

const ENDPOINTS: &str = api_contract::paths::WEBHOOK_ENDPOINTS;
const EVENTS: &str = api_contract::paths::EVENTS;
const AUDIENSE: &str = "https://www.linkedin.com/company/audiense";

/// A service on the captured pages that delivers to loopback and retries after 1 s, 2 s, 4 s …, without a
/// per-key rate: these tests page and poll as fast as the server answers (a burst of 20 could be refused 429 on
/// a fast run), and the key rate has tests of its own (`limits.rs`).
fn service() -> Service {
    Service::start(ServiceOptions {
        args: vec![
            "--webhook-allow-private",
            "--webhook-first-retry",
            "1",
            "--key-rate",
            "0",
        ],
        ..ServiceOptions::default()
    })
}

/// Registers an endpoint at `url` for `events`; the endpoint as answered.
async fn register(service: &Service, key: &str, url: &str, events: &[&str]) -> Value {
    let body = json!({"url": url, "events": events});
    let (created, _) = service
        .send(Method::POST, ENDPOINTS, key, Some(&body), None)
        .await;
    assert_eq!(created.status, 201, "{}", created.json);
    created.json
}

/// `GET` the endpoint's deliveries (a 200, asserted).
async fn deliveries(service: &Service, key: &str, id: &str) -> Value {
    let (listed, _) = service
        .send(
            Method::GET,
            &format!("{ENDPOINTS}/{id}/deliveries"),
            key,
            None,
            None,
        )
        .await;
    assert_eq!(listed.status, 200, "{}", listed.json);
    listed.json
}

/// The distinct events of `kind` the receiver got, each with how many times it arrived.
fn arrivals(receiver: &WebhookReceiver, kind: &str) -> Vec<(String, usize)> {
    let mut seen: Vec<(String, usize)> = Vec::new();
    for received in receiver.received() {
        let event = received.json();
        if event["type"] != kind {
            continue;
        }
        let id = event["id"].as_str().unwrap_or_default().to_owned();
        match seen.iter_mut().find(|(seen_id, _)| *seen_id == id) {
            Some((_, count)) => *count += 1,
            None => seen.push((id, 1)),
        }
    }
    seen
}

#[tokio::test]
async fn a_finished_job_reaches_the_endpoint_signed_once_through_failures() {
    let service = service();
    let key = service.key("acme", "10");
    let other = service.key("other", "10");
    let document = service.get("/openapi.json").await.json;
    // Down for three attempts, then up.
    let receiver = WebhookReceiver::start(3).await;
    let endpoint = register(
        &service,
        &key,
        &receiver.url,
        &["job.finished", "job.paused"],
    )
    .await;
    assert_valid(&document, "WebhookEndpoint", &endpoint);
    assert_eq!(endpoint["status"], "enabled");
    let id = endpoint["id"].as_str().expect("id").to_owned();

    let job = submit(&service, &key, &json!({"liUrls": [GOOGLE, AUDIENSE]})).await;
    assert_eq!(job.status, 202, "{}", job.json);
    let job_id = job.json["id"].as_str().expect("job id").to_owned();
    wait_until(&service, &key, &job_id, "done", Duration::from_mins(1)).await;

    // Three 503s, then a 200: four arrivals of one event, the same id each time, and no more after it.
    let delivered = e2e_harness::eventually(
        Duration::from_mins(1),
        "job.finished was never delivered",
        || async {
            let listed = deliveries(&service, &key, &id).await;
            (listed["deliveries"][0]["status"] == "delivered").then_some(listed)
        },
    )
    .await;
    assert_valid(&document, "WebhookDeliveryList", &delivered);
    let delivery = &delivered["deliveries"][0];
    assert_eq!(delivery["type"], "job.finished");
    assert_eq!(
        (
            delivery["attempts"].as_u64(),
            delivery["last_status"].as_u64()
        ),
        (Some(4), Some(200))
    );
    let finished = arrivals(&receiver, "job.finished");
    assert_eq!(finished.len(), 1, "one event: {finished:?}");
    assert_eq!(
        finished[0],
        (delivery["event_id"].as_str().expect("id").to_owned(), 4)
    );

    // What it says, and that it is signed with the account's secret as a receiver checks it.
    let secret = service.cli(&["webhooks", "secret", "--account", "acme"]);
    let last = receiver.received().pop().expect("received");
    assert_eq!(last.answered, 200);
    let event = last.json();
    assert_valid(&document, "AccountEvent", &event);
    assert_eq!(event["data"]["job"]["id"], job_id.as_str());
    assert_eq!(event["data"]["job"]["resolved"], 2);
    assert_eq!(event["data"]["job"]["credits_charged"], 2.0);
    assert_eq!(
        event["data"]["results_url"],
        format!("/v1/network/company-data/jobs/{job_id}/results")
    );
    assert_eq!(last.header("company-data-event-id"), event["id"].as_str());
    let signature = last.header("company-data-signature").expect("signed");
    let now = jiff::Timestamp::now().as_second();
    assert!(account_webhooks::signature::verify(
        secret.trim(),
        signature,
        last.body.as_bytes(),
        now,
        300
    ));

    // A test ping reaches it too; another account can neither see, ping nor delete the endpoint.
    let (ping, _) = service
        .send(
            Method::POST,
            &format!("{ENDPOINTS}/{id}/ping"),
            &key,
            None,
            None,
        )
        .await;
    assert_eq!(ping.status, 202, "{}", ping.json);
    let ping_id = ping.json["event_id"].as_str().expect("event id").to_owned();
    e2e_harness::eventually(
        Duration::from_secs(30),
        "the ping never arrived",
        || async {
            arrivals(&receiver, "ping")
                .iter()
                .any(|(id, _)| *id == ping_id)
                .then_some(())
        },
    )
    .await;
    for (method, path) in [
        (Method::GET, format!("{ENDPOINTS}/{id}/deliveries")),
        (Method::POST, format!("{ENDPOINTS}/{id}/ping")),
        (Method::DELETE, format!("{ENDPOINTS}/{id}")),
    ] {
        let (refused, _) = service.send(method, &path, &other, None, None).await;
        assert_eq!(
            (refused.status, refused.json["error"].as_str()),
            (404, Some("endpoint_not_found")),
            "{path}"
        );
    }
    let (theirs, _) = service
        .send(Method::GET, ENDPOINTS, &other, None, None)
        .await;
    assert_eq!(theirs.json["endpoints"], json!([]));

    // The feed: two more jobs end; paged one at a time through `next`, the account's events come oldest first,
    // each once, each the body its endpoint was sent; the ping is not among them.
    let mut job_ids = vec![job_id.clone()];
    for _ in 0..2 {
        let more = submit(&service, &key, &json!({"liUrls": [GOOGLE]})).await;
        let more_id = more.json["id"].as_str().expect("job id").to_owned();
        wait_until(&service, &key, &more_id, "done", Duration::from_mins(1)).await;
        job_ids.push(more_id);
    }
    let everything = e2e_harness::eventually(
        Duration::from_secs(30),
        "the jobs' endings never reached the feed",
        || async {
            let (listed, _) = service.send(Method::GET, EVENTS, &key, None, None).await;
            (listed.json["events"].as_array().map(Vec::len) == Some(3)).then_some(listed.json)
        },
    )
    .await;
    assert_valid(&document, "AccountEventList", &everything);
    assert_eq!(
        everything["events"][0], event,
        "the body the endpoint was sent"
    );
    let (mut next, mut paged) = (format!("{EVENTS}?limit=1"), Vec::new());
    loop {
        let (page, _) = service.send(Method::GET, &next, &key, None, None).await;
        assert_eq!(page.status, 200, "{}", page.json);
        let events = page.json["events"].as_array().expect("events").clone();
        next = page.json["next"].as_str().expect("next").to_owned();
        if events.is_empty() {
            assert_eq!(page.json["has_more"], false);
            break;
        }
        assert_eq!(page.json["has_more"], paged.len() < 2, "{}", page.json);
        paged.extend(events);
    }
    assert_eq!(
        paged
            .iter()
            .map(|e| (e["type"].as_str(), e["data"]["job"]["id"].as_str()))
            .collect::<Vec<_>>(),
        job_ids
            .iter()
            .map(|id| (Some("job.finished"), Some(id.as_str())))
            .collect::<Vec<_>>()
    );
    assert_eq!(
        paged,
        everything["events"].as_array().expect("events").clone()
    );
    let last_id = paged[2]["id"].as_str().expect("id");
    assert!(next.contains(&format!("after={last_id}")), "{next}");
    // The Rust client reads the same feed.
    let client = company_data_client::Client::new(&service.base, &key).expect("client");
    let from_client = client
        .events(paged[0]["id"].as_str(), Some(5))
        .await
        .expect("the feed");
    let ids: Vec<Value> = from_client
        .events
        .iter()
        .map(|raw| serde_json::from_str::<Value>(raw.get()).expect("JSON")["id"].clone())
        .collect();
    assert_eq!(ids, [paged[1]["id"].clone(), paged[2]["id"].clone()]);
    assert!(!from_client.has_more);

    // Another account sees none of it, and cannot page after the account's events; a type there is none of is
    // refused with the types there are.
    let (theirs, _) = service.send(Method::GET, EVENTS, &other, None, None).await;
    assert_eq!(theirs.json["events"], json!([]));
    let (refused, _) = service
        .send(
            Method::GET,
            &format!("{EVENTS}?after={last_id}"),
            &other,
            None,
            None,
        )
        .await;
    assert_eq!(
        (refused.status, refused.json["error"].as_str()),
        (404, Some("event_not_found"))
    );
    // The query's bounds as the document states them: `limit` up to the page's most, `after` counted in
    // characters (200 two-byte ones are allowed, 201 are not), `type` with the one final newline the pattern
    // admits.
    let after_of = |characters: usize| format!("after={}", "%C3%A9".repeat(characters));
    for (query, status) in [
        (
            format!("limit={}", api_contract::paging::MOST_EVENTS_PER_PAGE + 1),
            400,
        ),
        (after_of(api_contract::MAX_EVENT_ID_LENGTH as usize), 404),
        (
            after_of(api_contract::MAX_EVENT_ID_LENGTH as usize + 1),
            400,
        ),
        ("type=job.finished%0A".to_owned(), 200),
    ] {
        let (answer, _) = service
            .send(Method::GET, &format!("{EVENTS}?{query}"), &key, None, None)
            .await;
        assert_eq!(answer.status, status, "{query}: {}", answer.json);
    }
    let (refused, _) = service
        .send(
            Method::GET,
            &format!("{EVENTS}?type=ping"),
            &key,
            None,
            None,
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.json);
    assert!(
        refused.json["message"]
            .as_str()
            .is_some_and(|m| m.contains("company.changed")),
        "{}",
        refused.json
    );

    // Deleted: gone from the list.
    let (deleted, _) = service
        .send(
            Method::DELETE,
            &format!("{ENDPOINTS}/{id}"),
            &key,
            None,
            None,
        )
        .await;
    assert_eq!(deleted.status, 204);
    let (listed, _) = service.send(Method::GET, ENDPOINTS, &key, None, None).await;
    assert_eq!(listed.status, 200, "{}", listed.json);
    assert_eq!(listed.json["endpoints"], json!([]));
}

#[tokio::test]
async fn a_job_out_of_credits_sends_job_paused_once() {
    let service = service();
    // One credit pays for one of the two live pages.
    let key = service.key("acme", "1");
    let receiver = WebhookReceiver::start(0).await;
    let endpoint = register(
        &service,
        &key,
        &receiver.url,
        &["job.paused", "job.finished"],
    )
    .await;
    let id = endpoint["id"].as_str().expect("id").to_owned();
    let job = submit(&service, &key, &json!({"liUrls": [GOOGLE, AUDIENSE]})).await;
    let job_id = job.json["id"].as_str().expect("job id").to_owned();
    wait_until(&service, &key, &job_id, "paused", Duration::from_mins(1)).await;
    let paused = e2e_harness::eventually(
        Duration::from_secs(30),
        "job.paused was never delivered",
        || async {
            let listed = deliveries(&service, &key, &id).await;
            let listed = listed["deliveries"].as_array().cloned().unwrap_or_default();
            listed
                .iter()
                .any(|d| d["type"] == "job.paused" && d["status"] == "delivered")
                .then_some(listed)
        },
    )
    .await;
    assert_eq!(paused.len(), 1, "{paused:?}");
    let events = arrivals(&receiver, "job.paused");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].1, 1, "delivered at the first attempt, once");
    let event = receiver.received().pop().expect("received").json();
    assert_eq!(
        event["data"]["job"]["paused_reason"],
        "insufficient_credits"
    );
    assert!(arrivals(&receiver, "job.finished").is_empty());
}

#[tokio::test]
async fn bad_endpoints_are_refused_with_every_problem_named() {
    let service = Service::start(ServiceOptions::default());
    let key = service.key("acme", "1");
    let (bad, _) = service
        .send(
            Method::POST,
            ENDPOINTS,
            &key,
            Some(&json!({"url": "http://127.0.0.1:9/hooks", "events": ["job.finished", "job.exploded"]})),
            None,
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.json);
    let pointers: Vec<&str> = bad.json["details"]
        .as_array()
        .expect("details")
        .iter()
        .filter_map(|p| p["pointer"].as_str())
        .collect();
    // In the order the body sent its members (`json!` sends them sorted by name).
    assert_eq!(pointers, ["/events/1", "/url"]);
    let (bad_id, _) = service
        .send(Method::DELETE, &format!("{ENDPOINTS}/x"), &key, None, None)
        .await;
    assert_eq!(
        (bad_id.status, bad_id.json["error"].as_str()),
        (400, Some("invalid_query"))
    );
}

/// The events of `kind` the receiver got, each once, in the order they first arrived.
fn distinct_events(receiver: &WebhookReceiver, kind: &str) -> Vec<Value> {
    let mut events: Vec<Value> = Vec::new();
    for received in receiver.received() {
        let event = received.json();
        if event["type"] == kind && !events.iter().any(|seen| seen["id"] == event["id"]) {
            events.push(event);
        }
    }
    events
}

/// Sends `count` live requests for Google at once; how many were answered 200 and 402.
async fn concurrent_lookups(service: &Service, key: &str, count: usize) -> (usize, usize) {
    let body = crate::urls(&[GOOGLE]);
    let statuses = futures::future::join_all((0..count).map(|_| service.post(key, &body))).await;
    let answered = |status: u16| statuses.iter().filter(|r| r.status == status).count();
    (answered(200), answered(402))
}

#[tokio::test]
async fn a_low_balance_is_told_once_per_crossing_under_concurrent_requests() {
    // No per-key rate (`service`): every request is paid or refused for credits.
    let service = service();
    let key = service.key("acme", "15");
    let document = service.get("/openapi.json").await.json;
    let receiver = WebhookReceiver::start(0).await;
    register(&service, &key, &receiver.url, &["account.balance_low"]).await;

    // The threshold, set over the API and shown by it.
    let (set, _) = service
        .send(
            Method::PATCH,
            "/v1/account",
            &key,
            Some(&json!({"low_balance_threshold": 10})),
            None,
        )
        .await;
    assert_eq!(set.status, 200, "{}", set.json);
    assert_valid(&document, "Account", &set.json);
    assert_eq!(set.json["low_balance_threshold"], 10);
    let (bad, _) = service
        .send(
            Method::PATCH,
            "/v1/account",
            &key,
            Some(&json!({"low_balance_threshold": -1, "balance": 100})),
            None,
        )
        .await;
    assert_eq!(bad.status, 400, "{}", bad.json);
    assert_eq!(bad.json["details"].as_array().map(Vec::len), Some(2));

    // 20 requests at once on 15 credits: 15 paid, 5 refused, the balance from 15 to 0 across 10 — one alert.
    assert_eq!(concurrent_lookups(&service, &key, 20).await, (15, 5));
    let first = e2e_harness::eventually(
        Duration::from_secs(30),
        "account.balance_low never arrived",
        || async {
            let events = distinct_events(&receiver, "account.balance_low");
            (!events.is_empty()).then_some(events)
        },
    )
    .await;
    assert_valid(&document, "AccountEvent", &first[0]);
    let data = &first[0]["data"];
    assert_eq!(data["threshold"], 10);
    assert_eq!(
        data["balance"], 9,
        "the balance of the charge that crossed: {data}"
    );

    // A grant lifts it back above; the next fall is another crossing, and the only other event.
    service.cli(&["credits", "grant", "--account", "acme", "20"]);
    assert_eq!(concurrent_lookups(&service, &key, 12).await, (12, 0));
    let both = e2e_harness::eventually(
        Duration::from_secs(30),
        "the second crossing was never told",
        || async {
            let events = distinct_events(&receiver, "account.balance_low");
            (events.len() >= 2).then_some(events)
        },
    )
    .await;
    let ids: Vec<&str> = both.iter().filter_map(|e| e["id"].as_str()).collect();
    assert_eq!(ids.len(), 2, "once per crossing: {ids:?}");
    assert!(ids[0].ends_with("_1") && ids[1].ends_with("_2"), "{ids:?}");
    assert_eq!(both[1]["data"]["balance"], 9);
    assert_eq!(
        receiver
            .received()
            .iter()
            .filter(|r| r.json()["type"] == "account.balance_low")
            .count(),
        2,
        "each delivered at its first attempt"
    );
}

/// A job's `callbackUrl` (a one-off resume URL, as n8n and Zapier hand out) gets the job's end with the headers
/// the job named, signed like every event, retried after a failure, with the same id and body as the account's
/// endpoint and feed; the job shows the callback's URL and header names, never their values; the callback is not
/// one of the account's endpoints; a job without one sends it nothing.
#[tokio::test]
async fn a_jobs_callback_gets_its_end_signed_with_its_headers() {
    let service = service();
    let key = service.key("acme", "10");
    let document = service.get("/openapi.json").await.json;
    let endpoint_receiver = WebhookReceiver::start(0).await;
    register(&service, &key, &endpoint_receiver.url, &["job.finished"]).await;
    // Down once, then up.
    let callback = WebhookReceiver::start(1).await;
    let resume_url = format!("{}?resume=exec-41", callback.url);

    let job = submit(
        &service,
        &key,
        &json!({
            "liUrls": [GOOGLE],
            "callbackUrl": resume_url,
            "callbackHeaders": {"authorization": "Bearer n8n-s3cret"},
        }),
    )
    .await;
    assert_eq!(job.status, 202, "{}", job.json);
    assert_valid(&document, "Job", &job.json);
    assert_eq!(
        job.json["callback"],
        json!({"url": resume_url, "header_names": ["authorization"]})
    );
    assert!(!job.json.to_string().contains("n8n-s3cret"));
    let job_id = job.json["id"].as_str().expect("job id").to_owned();
    wait_until(&service, &key, &job_id, "done", Duration::from_mins(1)).await;

    let delivered = e2e_harness::eventually(
        Duration::from_mins(1),
        "the callback never got job.finished",
        || async {
            callback
                .received()
                .into_iter()
                .find(|got| got.answered == 200)
        },
    )
    .await;
    assert_eq!(callback.received().len(), 2, "one failure, one delivery");
    assert_eq!(delivered.header("authorization"), Some("Bearer n8n-s3cret"));
    let event = delivered.json();
    assert_valid(&document, "AccountEvent", &event);
    assert_eq!(event["type"], "job.finished");
    assert_eq!(event["data"]["job"]["id"], job_id.as_str());
    let secret = service.cli(&["webhooks", "secret", "--account", "acme"]);
    assert!(account_webhooks::signature::verify(
        secret.trim(),
        delivered.header("company-data-signature").expect("signed"),
        delivered.body.as_bytes(),
        jiff::Timestamp::now().as_second(),
        300
    ));
    // The same event the account's endpoint and feed have, byte for byte.
    let at_endpoint = e2e_harness::eventually(
        Duration::from_secs(30),
        "the endpoint never got job.finished",
        || async { endpoint_receiver.received().pop() },
    )
    .await;
    assert_eq!(at_endpoint.body, delivered.body);
    assert_eq!(at_endpoint.header("authorization"), None);
    let (feed, _) = service.send(Method::GET, EVENTS, &key, None, None).await;
    assert_eq!(feed.json["events"], json!([event]));

    // Not one of the account's endpoints; a job without a callback sends it nothing.
    let (listed, _) = service.send(Method::GET, ENDPOINTS, &key, None, None).await;
    assert_eq!(listed.json["endpoints"].as_array().map(Vec::len), Some(1));
    let plain = submit(&service, &key, &json!({"liUrls": [AUDIENSE]})).await;
    let plain_id = plain.json["id"].as_str().expect("job id").to_owned();
    assert!(plain.json.get("callback").is_none(), "{}", plain.json);
    wait_until(&service, &key, &plain_id, "done", Duration::from_mins(1)).await;
    e2e_harness::eventually(
        Duration::from_secs(30),
        "the second job's end never reached the endpoint",
        || async { (endpoint_receiver.received().len() == 2).then_some(()) },
    )
    .await;
    assert_eq!(callback.received().len(), 2);

    // Headers need the URL, and the server's own headers are not the caller's to set.
    for (body, pointer) in [
        (
            json!({"liUrls": [GOOGLE], "callbackHeaders": {"authorization": "x"}}),
            "",
        ),
        (
            json!({"liUrls": [GOOGLE], "callbackUrl": resume_url, "callbackHeaders": {"host": "x"}}),
            "/callbackHeaders/host",
        ),
    ] {
        let refused = submit(&service, &key, &body).await;
        assert_eq!(refused.status, 400, "{}", refused.json);
        assert_eq!(
            refused.json["details"][0]["pointer"], pointer,
            "{}",
            refused.json
        );
    }

    // The Rust client sends the same members.
    let client = company_data_client::Client::new(&service.base, &key).expect("client");
    let body = company_data_client::JobBody {
        li_urls: vec![company_data_client::JobInput::Url(GOOGLE.to_owned())],
        max_age_hours: Some(24.0),
        callback_url: Some(resume_url.clone()),
        callback_headers: Some([("authorization".to_owned(), "Bearer x".to_owned())].into()),
        ..Default::default()
    };
    let shown = client
        .submit_job_body(&body)
        .await
        .expect("submitted")
        .callback
        .expect("the callback");
    assert_eq!(shown.url, resume_url);
    assert_eq!(shown.header_names, ["authorization"]);
}

/// The ids of every event the feed lists from `first` on, following `next` until a page is empty.
async fn feed_ids(service: &Service, key: &str, first: &str) -> Vec<String> {
    let (mut next, mut ids) = (first.to_owned(), Vec::new());
    loop {
        let (page, _) = service.send(Method::GET, &next, key, None, None).await;
        assert_eq!(page.status, 200, "{}", page.json);
        let events = page.json["events"].as_array().expect("events");
        if events.is_empty() {
            return ids;
        }
        ids.extend(
            events
                .iter()
                .map(|e| e["id"].as_str().expect("id").to_owned()),
        );
        page.json["next"]
            .as_str()
            .expect("next")
            .clone_into(&mut next);
    }
}

/// `GET /v1/events` pages through 1,000 of an account's events, recorded by four writers at once while it pages,
/// without a gap or a repeat, each writer's in its order; a type filter lists exactly that type's; another
/// account's events, recorded among them, never show. The events are recorded through the server's own store on
/// its SQLite file (what the announcer does, a thousand times faster than ending a thousand jobs).
#[tokio::test]
async fn the_feed_pages_through_a_thousand_events_without_gap_or_repeat() {
    const WRITERS: usize = 4;
    const EACH: usize = 250;
    let service = service();
    let (key, other) = (service.key("acme", "10"), service.key("other", "10"));
    let account_of = |key: String| {
        let service = &service;
        async move {
            let (account, _) = service
                .send(Method::GET, api_contract::paths::ACCOUNT, &key, None, None)
                .await;
            company_model::Tenant::live(company_model::AccountId(
                account.json["account_id"].as_i64().expect("account id"),
            ))
        }
    };
    let (ours, theirs) = (
        account_of(key.clone()).await,
        account_of(other.clone()).await,
    );
    let store = std::sync::Arc::new(
        watch_store::SqliteWatchStore::open(std::path::Path::new(&service.db))
            .await
            .expect("the server's store"),
    );
    let kind = |n: usize| {
        if n.is_multiple_of(2) {
            "job.finished"
        } else {
            "account.balance_low"
        }
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|writer| {
            let store = std::sync::Arc::clone(&store);
            tokio::spawn(async move {
                for n in 0..EACH {
                    for (tenant, id) in [
                        (ours, format!("evt_{writer}_{n}")),
                        (theirs, format!("evt_theirs_{writer}_{n}")),
                    ] {
                        if tenant == theirs && n % 3 != 0 {
                            continue;
                        }
                        let now = jiff::Timestamp::now();
                        let body =
                            json!({"id": id, "type": kind(n), "created_at": now, "data": {"n": n}});
                        let event = watch_store::AccountEvent {
                            id,
                            tenant,
                            kind: kind(n).to_owned(),
                            body: body.to_string(),
                        };
                        watch_store::WatchStore::queue_event(store.as_ref(), &event, None, now)
                            .await
                            .expect("recorded");
                    }
                }
            })
        })
        .collect();

    // Paged while they write: 100 at a time through `next`, until all 1,000 are read.
    let (mut next, mut seen) = (format!("{EVENTS}?limit=100"), Vec::<String>::new());
    let deadline = std::time::Instant::now() + Duration::from_mins(2);
    while seen.len() < WRITERS * EACH {
        assert!(
            std::time::Instant::now() < deadline,
            "the feed listed {} events in 2 min",
            seen.len()
        );
        let (page, _) = service.send(Method::GET, &next, &key, None, None).await;
        assert_eq!(page.status, 200, "{}", page.json);
        let events = page.json["events"].as_array().expect("events");
        seen.extend(
            events
                .iter()
                .map(|e| e["id"].as_str().expect("id").to_owned()),
        );
        next = page.json["next"].as_str().expect("next").to_owned();
        if events.is_empty() {
            // Caught up with the writers: poll `next` again shortly.
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    for writer in writers {
        writer.await.expect("the writer");
    }
    let (rest, _) = service.send(Method::GET, &next, &key, None, None).await;
    assert_eq!(rest.json["events"], json!([]), "nothing after the last");
    assert_eq!(seen.len(), WRITERS * EACH, "no repeat");
    let distinct: std::collections::HashSet<&String> = seen.iter().collect();
    assert_eq!(distinct.len(), WRITERS * EACH, "no repeat");
    for writer in 0..WRITERS {
        let own: Vec<&String> = seen
            .iter()
            .filter(|id| id.starts_with(&format!("evt_{writer}_")))
            .collect();
        let expected: Vec<String> = (0..EACH).map(|n| format!("evt_{writer}_{n}")).collect();
        assert_eq!(
            own,
            expected.iter().collect::<Vec<_>>(),
            "writer {writer}: no gap, in order"
        );
    }

    // One type: exactly its events, in the same order.
    let low = feed_ids(
        &service,
        &key,
        &format!("{EVENTS}?limit=100&type=account.balance_low"),
    )
    .await;
    let expected: Vec<&String> = seen
        .iter()
        .filter(|id| {
            id.rsplit('_')
                .next()
                .and_then(|n| n.parse::<usize>().ok())
                .is_some_and(|n| n % 2 == 1)
        })
        .collect();
    assert_eq!(low.iter().collect::<Vec<_>>(), expected);

    // The other account: its own 336, none of ours; ours never among them.
    let their_ids = feed_ids(&service, &other, &format!("{EVENTS}?limit=100")).await;
    assert_eq!(their_ids.len(), WRITERS * EACH.div_ceil(3));
    assert!(their_ids.iter().all(|id| id.starts_with("evt_theirs_")));
    assert!(seen.iter().all(|id| !id.starts_with("evt_theirs_")));
}
