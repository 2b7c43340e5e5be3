//! Spec 4.3, 4.4, 8: prices, 402, and the ledger.

use serde_json::json;
use tests::Service;

use crate::{AUDIENSE, GOOGLE, urls};

#[tokio::test]
async fn live_and_stored_prices_and_the_ledger() {
    let service = Service::with_captured_pages();
    let key = service.key("acme", "5");
    let live = service.post(&key, &urls(&[GOOGLE, AUDIENSE])).await;
    assert_eq!(
        (
            live.header("x-credits-charged"),
            live.header("x-credits-remaining")
        ),
        (Some("2"), Some("3"))
    );
    let stored = service
        .post(
            &key,
            &json!({"liUrls": [GOOGLE, AUDIENSE], "maxAgeHours": 24}),
        )
        .await;
    assert_eq!(
        (
            stored.header("x-credits-charged"),
            stored.header("x-credits-remaining")
        ),
        (Some("1"), Some("2"))
    );

    let shown = service.cli(&["credits", "show", "--account", "acme"]);
    let mut lines = shown.lines();
    assert_eq!(lines.next(), Some("acme: 2 credits"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 3, "{shown}");
    assert!(
        rows[0].contains("-1") && rows[0].contains("stored request, 2 URLs, 2 returned"),
        "{shown}"
    );
    assert!(
        rows[1].contains("-2") && rows[1].contains("live request, 2 URLs, 2 returned"),
        "{shown}"
    );
    assert!(rows[2].contains("grant"), "{shown}");
}

#[tokio::test]
async fn insufficient_credits_get_402_before_any_fetch() {
    let service = Service::with_captured_pages();
    let key = service.key("acme", "1.5");
    let reply = service.post(&key, &urls(&[GOOGLE, AUDIENSE])).await;
    assert_eq!(reply.status, 402);
    assert_eq!(reply.json["error"], "insufficient_credits");
    let message = reply.json["message"].as_str().expect("message");
    assert!(
        message.contains("cost 2 credits") && message.contains("1.5 available"),
        "{message}"
    );
    assert!(
        service
            .cli(&["credits", "show", "--account", "acme"])
            .starts_with("acme: 1.5 credits")
    );
    // The stored price of the same two fits the balance.
    let stored = service
        .post(
            &key,
            &json!({"liUrls": [GOOGLE, AUDIENSE], "maxAgeHours": 24}),
        )
        .await;
    assert_eq!(
        (stored.status, stored.header("x-credits-remaining")),
        (200, Some("0.5"))
    );
    // Granting more from the command line lets the live request through.
    service.cli(&["credits", "grant", "--account", "acme", "2"]);
    assert_eq!(
        service.post(&key, &urls(&[GOOGLE, AUDIENSE])).await.status,
        200
    );
}
