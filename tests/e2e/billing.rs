//! Spec 4.3, 4.4, 8: prices, 402, and the ledger.

use e2e_harness::{Service, credits_millis};
use serde_json::json;

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

/// Spec 4.4 under load: many parallel requests on one account whose balance covers only some of them, with the
/// origin failing half the lookups. The balance never goes below zero, every 200 is charged exactly its resolved
/// records, every 402 nothing, and the ledger sums to the balance.
#[tokio::test]
async fn concurrent_requests_with_a_half_failing_origin_never_overspend() {
    let origin = e2e_harness::TestOrigin::start().await;
    let service = Service::start(e2e_harness::ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--key-rate", "0"],
        ..e2e_harness::ServiceOptions::default()
    });
    let key = service.key("acme", "10");
    // Each request: one page that resolves (300 ms), one the origin does not have (404), and for every third a
    // stored window, so live (1 credit) and stored (0.5) prices mix. Each holds 2 prices and spends 1.
    let bodies: Vec<serde_json::Value> = (0..40)
        .map(|i| {
            let urls = [
                format!("https://www.linkedin.com/company/p{i}"),
                format!("https://www.linkedin.com/company/gone-{i}"),
            ];
            if i % 3 == 0 {
                json!({ "liUrls": urls, "maxAgeHours": 24 })
            } else {
                json!({ "liUrls": urls })
            }
        })
        .collect();
    let replies =
        futures::future::join_all(bodies.iter().map(|body| service.post(&key, body))).await;

    let mut spent_millis = 0;
    let mut paid: i64 = 0;
    for (body, reply) in bodies.iter().zip(&replies) {
        let price_millis = if body.get("maxAgeHours").is_some() {
            500
        } else {
            1000
        };
        match reply.status {
            200 => {
                let results = reply.json["results"].as_array().map_or(0, Vec::len);
                let unresolved = reply.json["unresolved"].as_array().map_or(0, Vec::len);
                assert_eq!((results, unresolved), (1, 1), "{}", reply.json);
                let charged =
                    credits_millis(reply.header("x-credits-charged").expect("a charged header"));
                assert_eq!(charged, price_millis, "a 200 pays exactly its one record");
                spent_millis += charged;
                paid += 1;
            }
            402 => {
                assert_eq!(reply.json["error"], "insufficient_credits");
                assert_eq!(reply.header("x-credits-charged"), None);
            }
            other => panic!("unexpected {other}: {}", reply.json),
        }
    }
    assert!(paid > 0 && paid < 40, "{paid} of 40 paid");

    let conn = rusqlite::Connection::open(&service.db).expect("open the database");
    let balance: i64 = conn
        .query_row(
            "SELECT balance_millis FROM accounts WHERE name = 'acme'",
            [],
            |r| r.get(0),
        )
        .expect("balance");
    let (charges, charged_sum): (i64, i64) = conn
        .query_row(
            "SELECT count(*), -sum(delta_millis) FROM ledger_entries WHERE account_id = \
             (SELECT id FROM accounts WHERE name = 'acme') AND delta_millis < 0",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("charges");
    let ledger_sum: i64 = conn
        .query_row(
            "SELECT sum(delta_millis) FROM ledger_entries WHERE account_id = \
             (SELECT id FROM accounts WHERE name = 'acme')",
            [],
            |r| r.get(0),
        )
        .expect("ledger");
    assert!(balance >= 0, "balance {balance}");
    assert_eq!(charges, paid, "one ledger row per paid request");
    assert_eq!(
        charged_sum, spent_millis,
        "the ledger holds what the replies said"
    );
    assert_eq!(
        10_000 - balance,
        spent_millis,
        "the balance moved by what was charged"
    );
    assert_eq!(ledger_sum, balance, "the ledger sums to the balance");
    assert_eq!(
        credits_millis(&service.available_credits(&key).await),
        balance,
        "no hold outlives its request: the whole balance is available"
    );
}

/// The dashboard's Try it refuses a lookup the account cannot pay for as the API does: 402, the reason, where
/// credits come from and the cheaper window; nothing fetched or charged.
#[tokio::test]
async fn try_it_without_credits_answers_402_as_the_api_does() {
    use crate::dashboard::{Browser, PASSWORD};

    let service = Service::with_captured_pages();
    service.create_sign_in("ada@example.com", PASSWORD, &["--account", "acme"]);
    service.cli(&["keys", "create", "--account", "acme", "--name", "try"]);
    let mut browser = Browser::new(&service);
    browser.sign_in("ada@example.com", PASSWORD).await;
    let refused = browser.try_it(">try (", "url", GOOGLE, "0").await;
    assert_eq!(refused.status, 402, "{}", refused.body);
    refused.says(&[
        "Insufficient credits: 0 available, 1 required.",
        "Ask an admin to grant credits",
        "pick a freshness window",
    ]);
    assert!(
        service
            .cli(&["credits", "show", "--account", "acme"])
            .starts_with("acme: 0 credits"),
        "nothing charged"
    );
}
