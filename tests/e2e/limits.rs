//! The per-account cap on live lookups in flight (issue 4): over it, 429 with Retry-After, nothing fetched or
//! charged; other accounts and stored answers are not affected.

use e2e_harness::{Service, ServiceOptions, TestOrigin};
use serde_json::json;

use crate::dashboard::{Browser, PASSWORD};

fn slow_pages(range: std::ops::Range<u32>) -> serde_json::Value {
    let urls: Vec<String> = range
        .map(|n| format!("https://www.linkedin.com/company/p{n}"))
        .collect();
    json!({ "liUrls": urls })
}

#[tokio::test]
async fn an_account_over_its_live_cap_gets_429_and_pays_nothing() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--account-live-lookups", "3"],
        ..Default::default()
    });
    let (key, other) = (service.key("acme", "20"), service.key("other", "20"));

    // Three live lookups fill acme's cap while they run: the origin holds their pages until released.
    origin.hold();
    let (first_body, elsewhere_body) = (slow_pages(0..3), slow_pages(20..23));
    let first = service.post(&key, &first_body);
    let second = async {
        origin.reached(3).await;
        let refused = service.post(&key, &slow_pages(10..11)).await;
        // Another account's lookups are admitted meanwhile: they reach the origin too.
        let elsewhere = service.post(&other, &elsewhere_body);
        let release = async {
            origin.reached(6).await;
            origin.release();
        };
        let (elsewhere, ()) = tokio::join!(elsewhere, release);
        (refused, elsewhere)
    };
    let (first, (refused, elsewhere)) = tokio::join!(first, second);
    assert_eq!(first.status, 200, "{}", first.json);
    assert_eq!(first.header("x-credits-charged"), Some("3"));
    assert_eq!(
        (refused.status, refused.json["error"].as_str()),
        (429, Some("too_many_live_lookups")),
        "{}",
        refused.json
    );
    let wait: u64 = refused
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("Retry-After in seconds");
    assert!((1..=25).contains(&wait), "Retry-After {wait}");
    assert_eq!(
        origin.hits("/company/p10"),
        0,
        "a refused lookup is not fetched"
    );
    assert_eq!(elsewhere.status, 200, "another account has its own cap");

    // The refusal cost nothing and held nothing: 20 - 3 left, and the retry goes through.
    assert!(
        service
            .cli(&["credits", "show", "--account", "acme"])
            .starts_with("acme: 17 credits")
    );
    let retried = service.post(&key, &slow_pages(10..11)).await;
    assert_eq!(retried.status, 200, "{}", retried.json);
    // Stored answers need no live lookup, and a request above the cap runs when it is the account's only one.
    let stored = json!({ "liUrls": ["https://www.linkedin.com/company/p0"], "maxAgeHours": 24 });
    assert_eq!(service.post(&key, &stored).await.status, 200);
    let big = service.post(&key, &slow_pages(30..35)).await;
    assert_eq!(big.status, 200, "{}", big.json);
    assert_eq!(big.json["results"].as_array().map(Vec::len), Some(5));
}

#[tokio::test]
async fn try_it_over_the_live_cap_answers_as_the_api_does() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--account-live-lookups", "1"],
        ..Default::default()
    });
    let key = service.key("acme", "20");
    service.create_sign_in("ada@example.com", PASSWORD, &["--account", "acme"]);
    let mut browser = Browser::new(&service);
    browser.sign_in("ada@example.com", PASSWORD).await;

    // One live lookup over the API fills acme's cap while the origin holds its page; Try it then asks for one
    // more, live, as acme's key.
    origin.hold();
    let first_body = slow_pages(0..1);
    let held = service.post(&key, &first_body);
    let refused = async {
        origin.reached(1).await;
        // acme's one key, unnamed: its picker label is the masked key.
        let refused = browser
            .try_it(">cdk_", "url", "https://www.linkedin.com/company/p10", "0")
            .await;
        origin.release();
        refused
    };
    let (held, refused) = tokio::join!(held, refused);
    assert_eq!(held.status, 200, "{}", held.json);
    assert_eq!(refused.status, 429, "{}", refused.body);
    let wait: u64 = refused
        .headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok()?.parse().ok())
        .expect("Retry-After in seconds");
    assert!((1..=25).contains(&wait), "Retry-After {wait}");
    // The page says the same wait as the header, and what else would do.
    refused.says(&[
        "the cap is 1",
        &format!("try again in {wait} s"),
        "pick a freshness window",
    ]);
    assert_eq!(
        origin.hits("/company/p10"),
        0,
        "a refused lookup is not fetched"
    );
}
