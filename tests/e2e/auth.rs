//! Spec 5: every header form, and each way a key is refused.

use std::time::Duration;

use e2e_harness::{Service, client};

use crate::{GOOGLE, urls};

async fn post_with(service: &Service, headers: &[(&str, &str)]) -> e2e_harness::Reply {
    let mut request = client()
        .post(format!("{}/v1/network/company-data", service.base))
        .header("content-type", "application/json")
        .body(urls(&[GOOGLE]).to_string());
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    e2e_harness::Reply::from(request.send().await.expect("sent")).await
}

#[tokio::test]
async fn every_header_form_is_accepted() {
    let service = Service::with_captured_pages();
    let key = service.key("acme", "10");
    let bearer = format!("Bearer {key}");
    let lower = format!("bearer {key}");
    for headers in [
        vec![("authorization", bearer.as_str())],
        vec![("Authorization", lower.as_str())],
        vec![("x-api-key", key.as_str())],
        vec![("api-key", key.as_str())],
        vec![("x-company-data-api-key", key.as_str())],
        vec![
            ("X-API-Key", key.as_str()),
            ("authorization", bearer.as_str()),
        ],
    ] {
        let reply = post_with(&service, &headers).await;
        assert_eq!(reply.status, 200, "{headers:?}: {}", reply.json);
    }
}

#[tokio::test]
async fn missing_invalid_conflicting_and_revoked_keys_get_401() {
    let service = Service::with_captured_pages();
    let key = service.key("acme", "10");
    let other = service.key("other", "10");
    let cases: Vec<(Vec<(&str, &str)>, &str)> = vec![
        (vec![], "missing_api_key"),
        (vec![("x-api-key", "")], "missing_api_key"),
        (vec![("x-api-key", "cdk_nope")], "invalid_api_key"),
        (
            vec![("authorization", "Basic dXNlcjpwYXNz")],
            "malformed_authorization",
        ),
        (
            vec![("x-api-key", key.as_str()), ("api-key", other.as_str())],
            "conflicting_api_keys",
        ),
    ];
    for (headers, code) in cases {
        let reply = post_with(&service, &headers).await;
        assert_eq!(reply.status, 401, "{headers:?}");
        assert_eq!(reply.json["error"], code, "{headers:?}");
        assert_eq!(reply.json["status_code"], 401);
        assert_eq!(
            reply.header("www-authenticate"),
            Some("Bearer realm=\"company-data\"")
        );
    }

    // Revoked from the command line while the server runs: refused within seconds.
    assert_eq!(
        post_with(&service, &[("x-api-key", &key)]).await.status,
        200
    );
    let prefix = &key[..12];
    service.cli(&["keys", "revoke", prefix]);
    e2e_harness::eventually(
        Duration::from_secs(5),
        "a revoked key still worked",
        || async {
            (post_with(&service, &[("x-api-key", &key)]).await.status == 401).then_some(())
        },
    )
    .await;
    assert_eq!(
        post_with(&service, &[("x-api-key", &other)]).await.status,
        200,
        "other keys still work"
    );
}

#[tokio::test]
async fn keys_never_reach_the_logs() {
    let service = Service::start(e2e_harness::ServiceOptions {
        env: vec![("COMPANY_DATA_LOG", "debug")],
        real_process: true,
        ..e2e_harness::ServiceOptions::default()
    });
    let key = service.key("acme", "10");
    assert_eq!(
        post_with(&service, &[("authorization", &format!("Bearer {key}"))])
            .await
            .status,
        200
    );
    assert_eq!(
        post_with(
            &service,
            &[("x-api-key", "cdk_wrongwrongwrongwrongwrongwrongwrongwrong")]
        )
        .await
        .status,
        401
    );
    // Both requests logged: the refused one's line is the second "served" line.
    let log = service
        .log_until("the log has both request lines", |log| {
            log.iter().filter(|line| line.contains("served")).count() >= 2
        })
        .await
        .join("\n");
    assert!(
        !log.contains(&key[12..]),
        "the key's secret part is in the log"
    );
    assert!(
        !log.contains("wrongwrongwrong"),
        "a presented key is in the log"
    );
}

#[tokio::test]
async fn each_key_is_rate_limited_on_its_own() {
    let service = Service::start(e2e_harness::ServiceOptions {
        args: vec!["--key-rate", "0.5", "--key-burst", "2"],
        ..e2e_harness::ServiceOptions::default()
    });
    let (a, b) = (service.key("a", "10"), service.key("b", "10"));
    // An empty list is refused after the rate check, so these requests cost nothing but count.
    let cheap = serde_json::json!({ "liUrls": [] });
    // Every answer after the key is checked says where the key stands (IETF RateLimit header fields).
    for remaining in ["1", "0"] {
        let reply = service.post(&a, &cheap).await;
        assert_eq!(reply.status, 400);
        assert_eq!(reply.header("ratelimit-limit"), Some("2"));
        assert_eq!(reply.header("ratelimit-remaining"), Some(remaining));
        let reset: u64 = reply
            .header("ratelimit-reset")
            .and_then(|v| v.parse().ok())
            .expect("RateLimit-Reset in seconds");
        assert!((1..=4).contains(&reset), "RateLimit-Reset {reset}");
    }
    let limited = service.post(&a, &cheap).await;
    assert_eq!(limited.header("ratelimit-remaining"), Some("0"));
    assert_eq!(
        (limited.status, limited.json["error"].as_str()),
        (429, Some("rate_limited")),
        "{}",
        limited.json
    );
    let wait: u64 = limited
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("Retry-After in seconds");
    assert!((1..=2).contains(&wait), "Retry-After {wait}");
    let other = service.post(&b, &cheap).await;
    assert_eq!(other.status, 400, "another key has its own allowance");
    assert_eq!(other.header("ratelimit-remaining"), Some("1"));
    // A refused key is not told about any rate.
    let refused = service.post("cdk_nope", &cheap).await;
    assert_eq!(refused.status, 401);
    assert_eq!(refused.header("ratelimit-limit"), None);
}
