//! URLs that do not resolve: listed with a code, never billed.

use serde_json::json;
use tests::{Service, ServiceOptions, TestOrigin};

use crate::GOOGLE;

#[tokio::test]
async fn each_failure_has_its_code_and_is_not_billed() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10");
    let failing = [
        (
            "https://www.linkedin.com/company/does-not-exist",
            "not_found",
        ),
        ("https://www.linkedin.com/company/walled", "authwall"),
        ("https://www.linkedin.com/company/blocked", "blocked"),
        ("https://www.linkedin.com/company/limited", "blocked"),
    ];
    let mut sent: Vec<&str> = failing.iter().map(|(url, _)| *url).collect();
    sent.push(GOOGLE);
    let reply = service.post(&key, &json!({ "liUrls": sent })).await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    assert_eq!(reply.json["results"].as_array().map(Vec::len), Some(1));
    let unresolved = reply.json["unresolved"].as_array().expect("unresolved");
    assert_eq!(unresolved.len(), failing.len());
    for (entry, (url, code)) in unresolved.iter().zip(failing) {
        assert_eq!(entry["original_li_url"], url);
        assert_eq!(entry["error"], code, "{entry}");
        assert!(
            entry["message"].as_str().is_some_and(|m| m.len() > 20),
            "{entry}"
        );
    }
    assert_eq!(
        reply.header("x-credits-charged"),
        Some("1"),
        "only the resolved company is billed"
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
