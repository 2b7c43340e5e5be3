//! Watches over HTTP (docs/api.md, "Watches and webhooks"): create, list, read, delete, and every problem of a
//! bad body named. Refreshes and deliveries, which need a day to pass, are tested with a clock moved by hand in
//! `crates/company-watch/tests`.

use e2e_harness::{Service, ServiceOptions};
use reqwest::Method;
use serde_json::{Value, json};

use crate::GOOGLE;
use crate::openapi::assert_valid;

const WATCHES: &str = "/v1/network/company-data/watches";

#[tokio::test]
async fn watches_are_created_listed_read_and_deleted() {
    let service = Service::start(ServiceOptions::default());
    let key = service.key("acme", "5");
    let other = service.key("other", "5");
    let document = service.get("/openapi.json").await.json;
    let post = |key: String, body: Value| {
        let service = &service;
        async move {
            service
                .send(Method::POST, WATCHES, &key, Some(&body), None)
                .await
                .0
        }
    };

    // Without --webhook-allow-private only https is taken; every problem is named at once.
    let bad = post(
        key.clone(),
        json!({"liUrls": [GOOGLE, "https://www.linkedin.com/in/someone"], "everyHours": 12,
               "webhookUrl": "http://127.0.0.1:9/hooks", "fields": ["website", "posts"]}),
    )
    .await;
    assert_eq!(bad.status, 400, "{}", bad.json);
    let pointers: Vec<&str> = bad.json["details"]
        .as_array()
        .expect("details")
        .iter()
        .filter_map(|p| p["pointer"].as_str())
        .collect();
    assert_eq!(
        pointers,
        // In the order the body sent its members (`json!` sends them sorted by name).
        ["/everyHours", "/fields/1", "/liUrls/1", "/webhookUrl"]
    );

    // Two spellings of one page are one watch; nothing is charged to create it.
    let created = post(
        key.clone(),
        json!({"liUrls": [GOOGLE, "https://uk.linkedin.com/company/google/", "https://www.linkedin.com/company/audiense"],
               "everyHours": 24, "webhookUrl": "https://hooks.example/company", "fields": ["website", "follower_count"]}),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.json);
    let watches = created.json["watches"].as_array().expect("watches").clone();
    assert_eq!(watches.len(), 2);
    for watch in &watches {
        assert_valid(&document, "Watch", watch);
        assert_eq!(watch["status"], "active");
        assert_eq!(watch["fields"], json!(["website", "follower_count"]));
        assert_eq!(watch["last_delivery"], Value::Null);
    }
    assert_eq!(watches[0]["li_url"], GOOGLE);
    assert_eq!(service.available_credits(&key).await, "5");

    // Listed in pages, by id.
    let (first, _) = service
        .send(Method::GET, &format!("{WATCHES}?limit=1"), &key, None, None)
        .await;
    assert_eq!(first.json["watches"][0]["id"], watches[0]["id"]);
    let next = first.json["next"].as_str().expect("a next page").to_owned();
    let (second, _) = service.send(Method::GET, &next, &key, None, None).await;
    assert_eq!(second.json["watches"][0]["id"], watches[1]["id"]);

    // One watch: its owner reads and deletes it; another account cannot see it.
    let one = format!("{WATCHES}/{}", watches[0]["id"].as_str().expect("id"));
    let (read, _) = service.send(Method::GET, &one, &key, None, None).await;
    assert_eq!(read.json, watches[0]);
    let (hidden, _) = service.send(Method::GET, &one, &other, None, None).await;
    assert_eq!(
        (hidden.status, hidden.json["error"].as_str()),
        (404, Some("watch_not_found"))
    );
    let (deleted, _) = service.send(Method::DELETE, &one, &key, None, None).await;
    assert_eq!(deleted.status, 204);
    let (gone, _) = service.send(Method::GET, &one, &key, None, None).await;
    assert_eq!(gone.status, 404);
    let (bad_id, _) = service
        .send(Method::GET, &format!("{WATCHES}/x"), &key, None, None)
        .await;
    assert_eq!(
        (bad_id.status, bad_id.json["error"].as_str()),
        (400, Some("invalid_query"))
    );

    // The account's secret exists from its first watch, and rotating it changes it.
    let secret = service.cli(&["webhooks", "secret", "--account", "acme"]);
    assert!(secret.trim().starts_with("whsec_"), "{secret}");
    assert_eq!(
        service.cli(&["webhooks", "secret", "--account", "acme"]),
        secret
    );
    let rotated = service.cli(&["webhooks", "secret", "--account", "acme", "--rotate"]);
    assert_ne!(rotated, secret);
}

#[tokio::test]
async fn local_receivers_need_the_flag() {
    let service = Service::start(ServiceOptions {
        args: vec!["--webhook-allow-private"],
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "1");
    let body =
        json!({"liUrls": [GOOGLE], "everyHours": 720, "webhookUrl": "http://127.0.0.1:9/hooks"});
    let (created, _) = service
        .send(Method::POST, WATCHES, &key, Some(&body), None)
        .await;
    assert_eq!(created.status, 201, "{}", created.json);
}
