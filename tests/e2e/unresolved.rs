//! URLs that do not resolve: listed with a code, never billed.

use e2e_harness::{Service, ServiceOptions, TestOrigin};
use serde_json::json;

use crate::GOOGLE;

#[tokio::test]
async fn each_failure_has_its_code_and_is_not_billed() {
    let origin = TestOrigin::start().await;
    let start = || {
        Service::start(ServiceOptions {
            origin: origin.base.clone(),
            ..ServiceOptions::default()
        })
    };
    // A page the network says is not there, beside one that resolves: only the resolved one is billed.
    let service = start();
    let key = service.key("acme", "10");
    let missing = "https://www.linkedin.com/company/does-not-exist";
    let reply = service
        .post(&key, &json!({ "liUrls": [missing, GOOGLE] }))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    assert_eq!(reply.json["results"].as_array().map(Vec::len), Some(1));
    assert_unresolved(&reply.json, missing, "not_found");
    assert_eq!(
        reply.header("x-credits-charged"),
        Some("1"),
        "only the resolved company is billed"
    );

    // Push-back cools the only route down for every page after it (tests/e2e/faults.rs), so each is sent to a
    // service of its own: in one batch, which page meets the cool-down first is a race.
    let pushed_back = [
        ("walled", "authwall"),
        ("blocked", "blocked"),
        ("limited", "blocked"),
    ];
    for (slug, code) in pushed_back {
        let service = start();
        let key = service.key("acme", "10");
        let url = format!("https://www.linkedin.com/company/{slug}");
        let reply = service.post(&key, &json!({ "liUrls": [url] })).await;
        assert_eq!(reply.status, 200, "{}", reply.json);
        assert_eq!(reply.json["results"], json!([]));
        assert_unresolved(&reply.json, &url, code);
        assert_eq!(reply.header("x-credits-charged"), Some("0"), "{slug}");
        assert!(origin.hits(&format!("/company/{slug}")) >= 1, "{slug}");
    }
}

/// The answer's one unresolved entry is `url`, with `code` and a message that explains it.
fn assert_unresolved(answer: &serde_json::Value, url: &str, code: &str) {
    let unresolved = answer["unresolved"].as_array().expect("unresolved");
    assert_eq!(unresolved.len(), 1, "{answer}");
    let entry = &unresolved[0];
    assert_eq!(entry["original_li_url"], url);
    assert_eq!(entry["error"], code, "{entry}");
    assert!(
        entry["message"].as_str().is_some_and(|m| m.len() > 20),
        "{entry}"
    );
}

#[tokio::test]
async fn a_batch_where_nothing_resolves_is_a_200_with_reasons() {
    let service = Service::with_captured_pages();
    let key = service.key("acme", "10");
    let reply = service
        .post(
            &key,
            &json!({"liUrls": ["https://www.linkedin.com/company/does-not-exist"]}),
        )
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json["results"], json!([]));
    assert_eq!(reply.json["unresolved"][0]["error"], "not_found");
    assert_eq!(reply.header("x-credits-charged"), Some("0"));
}
