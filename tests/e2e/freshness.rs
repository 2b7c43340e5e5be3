//! Spec 1.3, 4.3-4.5: live and stored windows, snapshots shared by redirect, the live time-out.

use std::time::{Duration, Instant};

use e2e_harness::{Service, ServiceOptions, TestOrigin};
use serde_json::json;

use crate::GOOGLE;

#[tokio::test]
async fn a_request_inside_the_window_does_not_reach_the_origin() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10");

    let live = service.post(&key, &json!({"liUrls": [GOOGLE]})).await;
    assert_eq!(live.status, 200, "{}", live.json);
    assert_eq!(origin.hits("/company/google"), 1);

    let stored = service
        .post(&key, &json!({"liUrls": [GOOGLE], "maxAgeHours": 1}))
        .await;
    assert_eq!(stored.status, 200);
    assert_eq!(
        origin.hits("/company/google"),
        1,
        "served from the snapshot"
    );
    assert_eq!(stored.json["results"][0]["source"], "stored");
    assert_eq!(
        stored.json["results"][0]["fetched_at"],
        live.json["results"][0]["fetched_at"]
    );
    assert_eq!(stored.header("x-credits-charged"), Some("0.5"));

    // maxAgeSeconds wins over maxAgeHours: 0 seconds means live.
    let forced = service
        .post(
            &key,
            &json!({"liUrls": [GOOGLE], "maxAgeHours": 24, "maxAgeSeconds": 0}),
        )
        .await;
    assert_eq!(forced.json["results"][0]["source"], "live");
    assert_eq!(origin.hits("/company/google"), 2);
    assert_eq!(forced.header("x-credits-charged"), Some("1"));

    // A one-second window no longer covers the snapshot once it is over a second old (by this machine's clock,
    // which the server reads too, a moment later).
    let fetched_at: jiff::Timestamp = forced.json["results"][0]["fetched_at"]
        .as_str()
        .and_then(|t| t.parse().ok())
        .expect("fetched_at is a timestamp");
    e2e_harness::eventually(Duration::from_secs(5), "the clock stood still", || {
        std::future::ready(
            (jiff::Timestamp::now().duration_since(fetched_at)
                > jiff::SignedDuration::from_secs(1))
            .then_some(()),
        )
    })
    .await;
    let aged = service
        .post(&key, &json!({"liUrls": [GOOGLE], "maxAgeSeconds": 1}))
        .await;
    assert_eq!(aged.json["results"][0]["source"], "live");
    assert_eq!(origin.hits("/company/google"), 3);
}

#[tokio::test]
async fn numeric_ids_redirect_and_share_the_snapshot() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10");
    let by_id = "https://www.linkedin.com/company/1441";
    let reply = service.post(&key, &json!({"liUrls": [by_id]})).await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    assert_eq!(reply.json["results"][0]["original_li_url"], by_id);
    assert_eq!(reply.json["results"][0]["final_li_url"], GOOGLE);
    // Both spellings now find the snapshot stored by that fetch.
    let again = service
        .post(&key, &json!({"liUrls": [GOOGLE, by_id], "maxAgeHours": 24}))
        .await;
    assert_eq!(again.json["results"][0]["source"], "stored");
    assert_eq!(again.json["results"][1]["source"], "stored");
    assert_eq!(
        (origin.hits("/company/1441"), origin.hits("/company/google")),
        (1, 1)
    );
}

#[tokio::test]
async fn a_slow_origin_past_the_live_timeout_gives_504_and_costs_nothing() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        live_timeout: "0.5",
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10");
    let started = Instant::now();
    let reply = service
        .post(
            &key,
            &json!({"liUrls": ["https://www.linkedin.com/company/slow"]}),
        )
        .await;
    assert_eq!(reply.status, 504, "{}", reply.json);
    assert_eq!(reply.json["error"], "live_lookup_timed_out");
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "abandoned at the time-out: {:?}",
        started.elapsed()
    );

    // With another URL that resolves, the slow one is listed as unresolved instead.
    let mixed = service
        .post(
            &key,
            &json!({"liUrls": ["https://www.linkedin.com/company/slow", GOOGLE]}),
        )
        .await;
    assert_eq!(mixed.status, 200);
    assert_eq!(mixed.json["unresolved"][0]["error"], "timed_out");
    assert_eq!(mixed.header("x-credits-charged"), Some("1"));
    assert!(
        service
            .cli(&["credits", "show", "--account", "acme"])
            .starts_with("acme: 9 credits")
    );
}

#[tokio::test]
async fn try_it_past_the_live_timeout_answers_504_as_the_api_does_and_charges_nothing() {
    use crate::dashboard::{Browser, PASSWORD};

    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        live_timeout: "0.5",
        ..ServiceOptions::default()
    });
    service.key("acme", "10");
    service.create_sign_in("ada@example.com", PASSWORD, &["--account", "acme"]);
    let mut browser = Browser::new(&service);
    browser.sign_in("ada@example.com", PASSWORD).await;

    // acme's one key, unnamed: its picker label is the masked key.
    let started = Instant::now();
    let refused = browser
        .try_it(">cdk_", "url", "https://www.linkedin.com/company/slow", "0")
        .await;
    assert_eq!(refused.status, 504, "{}", refused.body);
    // Answered at the time-out (the slow page takes 3 s; the form's page is read first), after one fetch.
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "abandoned at the time-out: {:?}",
        started.elapsed()
    );
    assert_eq!(origin.hits("/company/slow"), 1);
    refused.says(&[
        "live lookup(s) took longer than the 0.5-second live time-out",
        "Try again, or pick a freshness window",
    ]);
    assert!(
        service
            .cli(&["credits", "show", "--account", "acme"])
            .starts_with("acme: 10 credits"),
        "nothing charged"
    );
}
