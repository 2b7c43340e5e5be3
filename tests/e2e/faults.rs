//! A hostile origin: resets, truncated and endless bodies, a coding not asked for, a gzip bomb, 429 with
//! Retry-After, 999, the sign-in wall, a flaky server. Each gets its code, nothing unresolved is billed, no request
//! outlives the time-out by more than a second, and the service keeps answering.

use std::time::{Duration, Instant};

use e2e_harness::{Service, ServiceOptions, TestOrigin};
use serde_json::json;

use crate::GOOGLE;

#[tokio::test]
async fn every_fault_gets_its_code_and_the_service_keeps_answering() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        live_timeout: "2",
        ..Default::default()
    });
    let key = service.key("acme", "20");
    let faults = [
        ("reset", "fetch_failed"),
        ("truncated", "fetch_failed"),
        ("endless", "timed_out"),
        ("brotli", "fetch_failed"),
        ("bomb", "fetch_failed"),
        ("walled", "authwall"),
        ("does-not-exist", "not_found"),
    ];
    let mut sent: Vec<String> = faults
        .iter()
        .map(|(path, _)| format!("https://www.linkedin.com/company/{path}"))
        .collect();
    sent.push("https://www.linkedin.com/company/flaky".into());
    sent.push(GOOGLE.into());
    let started = Instant::now();
    let reply = service.post(&key, &json!({ "liUrls": sent })).await;
    let elapsed = started.elapsed();
    assert_eq!(reply.status, 200, "{}", reply.json);
    assert!(
        elapsed < Duration::from_secs(3),
        "the request outlived the 2 s time-out by more than a second: {elapsed:?}"
    );

    let unresolved = reply.json["unresolved"].as_array().expect("unresolved");
    let codes: Vec<(&str, &str)> = unresolved
        .iter()
        .map(|u| {
            let url = u["original_li_url"].as_str().expect("url");
            (
                url.rsplit('/').next().expect("slug"),
                u["error"].as_str().expect("code"),
            )
        })
        .collect();
    assert_eq!(codes, faults, "{}", reply.json["unresolved"]);
    // The flaky server's 503 was retried; both it and Google resolved, and only they are billed.
    let results = reply.json["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    assert_eq!(reply.header("x-credits-charged"), Some("2"));
    assert_eq!(origin.hits("/company/flaky"), 2);
    assert_eq!(origin.hits("/company/does-not-exist"), 1, "a 404 is final");

    // Push-back slows the only route down for every page, so it comes after. Retry-After: 1 was honoured (the
    // route waited it out): one retry fits in the 2 s time-out, not the four backoff would allow.
    let limited = service
        .post(
            &key,
            &json!({ "liUrls": ["https://www.linkedin.com/company/limited"] }),
        )
        .await;
    assert_eq!(
        limited.json["unresolved"][0]["error"], "blocked",
        "{}",
        limited.json
    );
    assert_eq!(origin.hits("/company/limited"), 2);

    // HTTP 999 without Retry-After quarantines the only route: not retried, and the next page waits for the
    // route instead of being sent into the block.
    let blocked = service
        .post(
            &key,
            &json!({ "liUrls": ["https://www.linkedin.com/company/blocked"] }),
        )
        .await;
    assert_eq!(
        blocked.json["unresolved"][0]["error"], "blocked",
        "{}",
        blocked.json
    );
    assert_eq!(
        origin.hits("/company/blocked"),
        1,
        "a block is not retried into"
    );
    let google_hits = origin.hits("/company/google");
    let after = service.post(&key, &json!({ "liUrls": [GOOGLE] })).await;
    assert_eq!(after.status, 200, "the service still answers");
    let message = after.json["unresolved"][0]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        after.json["unresolved"][0]["error"] == "blocked" && message.contains("cooling down"),
        "{}",
        after.json
    );
    // It says when to come back: the header and the URL agree, and the route's cool-down bounds them.
    let retry_after: u64 = after
        .header("retry-after")
        .and_then(|s| s.parse().ok())
        .expect("a Retry-After header");
    assert!((1..=30).contains(&retry_after), "{retry_after}");
    assert_eq!(
        after.json["unresolved"][0]["retry_after_seconds"], retry_after,
        "{}",
        after.json
    );
    // And the message tells the same wait.
    assert!(
        message.contains(&format!("free in {retry_after} s")),
        "{message}"
    );
    // Allowed a stale snapshot, the same request gets Google's from the first request, flagged and billed as
    // stored.
    let stale = service
        .post(&key, &json!({ "liUrls": [GOOGLE], "staleIfError": true }))
        .await;
    assert_eq!(
        stale.json["results"][0]["source"], "stale",
        "{}",
        stale.json
    );
    assert_eq!(stale.header("x-credits-charged"), Some("0.5"));
    assert_eq!(stale.header("retry-after"), None, "nothing left to retry");
    assert_eq!(
        origin.hits("/company/google"),
        google_hits,
        "nothing sent while cooling"
    );
    assert!(
        service
            .cli(&["credits", "show", "--account", "acme"])
            .starts_with("acme: 17.5 credits"),
        "only the two resolved pages and the stale one were billed"
    );
}

#[tokio::test]
async fn concurrent_requests_for_one_page_share_one_fetch() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        ..Default::default()
    });
    let key = service.key("acme", "10");
    let page = "https://www.linkedin.com/company/p7";
    let body = json!({ "liUrls": [page] });
    let (a, b, c) = tokio::join!(
        service.post(&key, &body),
        service.post(&key, &body),
        service.post(&key, &body)
    );
    for reply in [&a, &b, &c] {
        assert_eq!(reply.status, 200, "{}", reply.json);
        assert_eq!(reply.json["results"][0]["source"], "live");
    }
    assert_eq!(
        origin.hits("/company/p7"),
        1,
        "one upstream fetch for three requests"
    );
    // Each request was billed for the record it returned.
    assert!(
        service
            .cli(&["credits", "show", "--account", "acme"])
            .starts_with("acme: 7 credits")
    );
}

#[tokio::test]
async fn a_200_url_batch_is_fetched_concurrently() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--origin-concurrency", "200"],
        ..Default::default()
    });
    let key = service.key("acme", "200");
    let sent: Vec<String> = (0..200)
        .map(|i| format!("https://www.linkedin.com/company/p{i}"))
        .collect();
    let reply = service.post(&key, &json!({ "liUrls": sent })).await;
    assert_eq!(reply.status, 200, "{}", reply.json["unresolved"]);
    assert_eq!(
        reply.json["results"].as_array().map(Vec::len),
        Some(200),
        "{}",
        reply.json["unresolved"]
    );
    assert!(
        (0..200).all(|i| origin.hits(&format!("/company/p{i}")) == 1),
        "each page fetched once"
    );
    assert_eq!(reply.header("x-credits-charged"), Some("200"));
}

/// Google arrives gzip-compressed and is kept as it came; Audiense arrives uncompressed and is compressed before it
/// is kept: both are read back.
#[tokio::test]
async fn stored_pages_are_parsed_again_by_reparse() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        ..Default::default()
    });
    let key = service.key("acme", "10");
    assert_eq!(
        service
            .post(
                &key,
                &json!({ "liUrls": [GOOGLE, "https://www.linkedin.com/company/audiense"] })
            )
            .await
            .status,
        200
    );
    let out = service.cli(&["reparse"]);
    assert!(
        out.contains("Reparsed 2 stored pages (2 records replaced, 0 failed)"),
        "{out}"
    );
    let stored = service
        .post(&key, &json!({ "liUrls": [GOOGLE], "maxAgeHours": 1 }))
        .await;
    assert_eq!(stored.json["results"][0]["source"], "stored");
    assert_eq!(stored.json["results"][0]["company_id"], 1441);
    assert_eq!(origin.hits("/company/google"), 1, "reparse fetched nothing");
}
