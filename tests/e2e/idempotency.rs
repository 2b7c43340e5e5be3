//! `Idempotency-Key`: a retried request gets the first answer and is charged once, also when the client gave
//! up before the answer, or when retries arrive together.

use std::time::Duration;

use e2e_harness::{Service, ServiceOptions, TestOrigin, client};
use serde_json::{Value, json};

use crate::GOOGLE;

const SLOW: &str = "https://www.linkedin.com/company/slow";

async fn post_with_key(
    service: &Service,
    key: &str,
    idempotency_key: &str,
    body: &Value,
    timeout: Option<Duration>,
) -> Result<e2e_harness::Reply, reqwest::Error> {
    let mut request = client()
        .post(format!("{}/v1/network/company-data", service.base))
        .header("x-api-key", key)
        .header("idempotency-key", idempotency_key)
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(timeout) = timeout {
        request = request.timeout(timeout);
    }
    Ok(e2e_harness::Reply::from(request.send().await?).await)
}

/// The account's requests billed this month and its balance, from `GET /v1/account`.
async fn billed(service: &Service, key: &str) -> (i64, String) {
    let (account, _) = service
        .send(reqwest::Method::GET, "/v1/account", key, None, None)
        .await;
    assert_eq!(account.status, 200, "{}", account.json);
    (
        account.json["usage_this_month"]["requests"]
            .as_i64()
            .expect("requests"),
        account.json["balance"].to_string(),
    )
}

#[tokio::test]
async fn a_retry_with_the_same_key_replays_the_answer_and_is_charged_once() {
    let service = Service::with_captured_pages();
    let key = service.key("acme", "10");
    let body = json!({ "liUrls": [GOOGLE] });
    let first = post_with_key(&service, &key, "order-1", &body, None)
        .await
        .expect("sent");
    assert_eq!(first.status, 200, "{}", first.json);
    assert_eq!(first.header("idempotent-replayed"), None);
    let again = post_with_key(&service, &key, "order-1", &body, None)
        .await
        .expect("sent");
    assert_eq!(again.status, 200);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(
        again.json, first.json,
        "the same records, the same fetched_at"
    );
    assert_eq!(
        again.header("x-credits-charged"),
        first.header("x-credits-charged")
    );
    // A retry to the same route written with a trailing `/` is the same request: replayed, not refused.
    let slashed = client()
        .post(format!("{}/v1/network/company-data/", service.base))
        .header("x-api-key", &key)
        .header("idempotency-key", "order-1")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("sent");
    let slashed = e2e_harness::Reply::from(slashed).await;
    assert_eq!(
        (slashed.status, slashed.header("idempotent-replayed")),
        (200, Some("true")),
        "{}",
        slashed.json
    );
    assert_eq!(billed(&service, &key).await, (1, "9".to_owned()));

    // The same key with another body: refused, nothing run.
    let other = json!({ "liUrls": [GOOGLE], "maxAgeHours": 24 });
    let reused = post_with_key(&service, &key, "order-1", &other, None)
        .await
        .expect("sent");
    assert_eq!(
        (reused.status, reused.json["error"].as_str()),
        (422, Some("idempotency_key_reused"))
    );
    // Keys are per account: another account's same key runs.
    let theirs = service.key("other", "10");
    let elsewhere = post_with_key(&service, &theirs, "order-1", &other, None)
        .await
        .expect("sent");
    assert_eq!(
        (elsewhere.status, elsewhere.header("idempotent-replayed")),
        (200, None)
    );
    // A malformed key is refused before anything runs.
    let malformed = post_with_key(&service, &key, "has space", &body, None)
        .await
        .expect("sent");
    assert_eq!(
        (malformed.status, malformed.json["error"].as_str()),
        (400, Some("invalid_idempotency_key"))
    );
    // An answer that is not a success is not kept: after a refusal the same key runs again.
    let empty = json!({ "liUrls": [] });
    assert_eq!(
        post_with_key(&service, &key, "order-2", &empty, None)
            .await
            .expect("sent")
            .status,
        400
    );
    assert_eq!(billed(&service, &key).await, (1, "9".to_owned()));
}

/// A server on a loopback origin whose `/company/slow` takes 3 s, and a key of an account with 10 credits.
async fn slow_origin_service() -> (TestOrigin, Service, String) {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10");
    (origin, service, key)
}

#[tokio::test]
async fn a_client_that_gave_up_gets_the_answer_when_it_retries_and_pays_once() {
    let (origin, service, key) = slow_origin_service().await;
    let body = json!({ "liUrls": [SLOW] });
    // The page takes 3 s; the client hangs up after 300 ms.
    let gave_up = post_with_key(
        &service,
        &key,
        "retry-me",
        &body,
        Some(Duration::from_millis(300)),
    )
    .await;
    assert!(gave_up.is_err(), "the client timed out");
    // Its retry while the first still runs: 409 with Retry-After; a later one: the answer.
    let early = post_with_key(&service, &key, "retry-me", &body, None)
        .await
        .expect("sent");
    assert_eq!(
        (early.status, early.json["error"].as_str()),
        (409, Some("idempotency_key_in_use"))
    );
    assert_eq!(early.header("retry-after"), Some("1"));
    let answer = e2e_harness::eventually(
        Duration::from_secs(10),
        "the retry never got past 409",
        || async {
            let answer = post_with_key(&service, &key, "retry-me", &body, None)
                .await
                .expect("sent");
            (answer.status != 409).then_some(answer)
        },
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.json);
    assert_eq!(answer.header("idempotent-replayed"), Some("true"));
    assert_eq!(answer.json["results"][0]["company_name"], "Google");
    assert_eq!(origin.hits("/company/slow"), 1, "fetched once");
    assert_eq!(billed(&service, &key).await, (1, "9".to_owned()));
}

#[tokio::test]
async fn concurrent_retries_with_one_key_run_once() {
    let (origin, service, key) = slow_origin_service().await;
    let body = json!({ "liUrls": [SLOW] });
    let retries: Vec<_> = (0..8)
        .map(|_| post_with_key(&service, &key, "together", &body, None))
        .collect();
    let replies = futures::future::join_all(retries).await;
    let statuses: Vec<u16> = replies
        .iter()
        .map(|r| r.as_ref().expect("sent").status)
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 200).count(),
        1,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 409).count(),
        7,
        "{statuses:?}"
    );
    assert_eq!(origin.hits("/company/slow"), 1);
    assert_eq!(billed(&service, &key).await, (1, "9".to_owned()));
}
