//! The server on PostgreSQL (`--db postgres://…`): the same service as on SQLite, and several servers on one
//! database sharing accounts, holds, keys and snapshots. Each test makes a private database and drops it.

use std::time::Duration;

use futures::future::join_all;
use pg_test::TestDatabase;
use serde_json::json;
use tests::{Service, ServiceOptions, TestOrigin};

use crate::GOOGLE;

fn on(database: &TestDatabase, origin: Option<&TestOrigin>) -> ServiceOptions<'static> {
    let mut options = ServiceOptions {
        database_url: Some(database.url.clone()),
        args: vec!["--key-rate", "0"],
        ..ServiceOptions::default()
    };
    if let Some(origin) = origin {
        options.origin.clone_from(&origin.base);
    }
    options
}

/// Three servers on one database.
fn three_servers(database: &TestDatabase, origin: Option<&TestOrigin>) -> Vec<Service> {
    (0..3)
        .map(|_| Service::start(on(database, origin)))
        .collect()
}

#[tokio::test]
async fn one_server_on_postgres_serves_bills_and_keeps_snapshots() {
    let database = TestDatabase::create().await;
    let service = Service::start(on(&database, None));
    let first = service
        .first_key()
        .expect("a first start makes a key on an empty database");
    let key = service.key("acme", "10");
    let live = service.post(&key, &json!({ "liUrls": [GOOGLE] })).await;
    assert_eq!(live.status, 200, "{}", live.json);
    assert_eq!(live.header("x-credits-remaining"), Some("9"));
    let stored = service
        .post(&key, &json!({ "liUrls": [GOOGLE], "maxAgeHours": 24 }))
        .await;
    assert_eq!(stored.json["results"][0]["source"], "stored");
    assert_eq!(stored.header("x-credits-remaining"), Some("8.5"));
    assert_eq!(
        service
            .post(&first, &json!({ "liUrls": [GOOGLE] }))
            .await
            .status,
        200
    );
    let shown = service.cli(&["credits", "show", "--account", "acme"]);
    assert!(shown.starts_with("acme: 8.5 credits"), "{shown}");
    let listed = service.cli(&["keys", "list"]);
    assert!(
        listed.contains("acme") && listed.contains("default"),
        "{listed}"
    );
}

#[tokio::test]
async fn three_servers_on_one_database_never_overspend_an_account() {
    let database = TestDatabase::create().await;
    let origin = TestOrigin::start().await;
    let servers = three_servers(&database, Some(&origin));
    let key = servers[0].key("acme", "10");
    // 30 requests for 30 different pages, one credit each, spread over the three servers at once: the account
    // can pay for 10.
    let requests = (0..30).map(|n| {
        let server = &servers[n % 3];
        let key = key.clone();
        async move {
            let body = json!({ "liUrls": [format!("https://www.linkedin.com/company/p{n}")] });
            server.post(&key, &body).await
        }
    });
    let replies = join_all(requests).await;
    let paid = replies.iter().filter(|r| r.status == 200).count();
    let refused = replies.iter().filter(|r| r.status == 402).count();
    assert_eq!(
        (paid, refused),
        (10, 20),
        "{:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    let shown = servers[1].cli(&["credits", "show", "--account", "acme"]);
    assert!(shown.starts_with("acme: 0 credits"), "{shown}");
    // One charge row per paid request, and the rows add up to the balance.
    let charges = shown.lines().filter(|l| l.contains("live request")).count();
    assert_eq!(charges, 10, "{shown}");
}

#[tokio::test]
async fn a_key_revoked_on_one_server_is_refused_by_every_server_within_seconds() {
    let database = TestDatabase::create().await;
    let servers = three_servers(&database, None);
    let key = servers[0].key("acme", "10");
    for server in &servers {
        assert_eq!(
            server
                .post(&key, &json!({ "liUrls": [GOOGLE] }))
                .await
                .status,
            200
        );
    }
    servers[2].cli(&["keys", "revoke", &key[..12]]);
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    for server in &servers {
        assert_eq!(
            server
                .post(&key, &json!({ "liUrls": [GOOGLE] }))
                .await
                .status,
            401
        );
    }
}

#[tokio::test]
async fn the_database_going_away_is_a_503_and_the_service_resumes_when_it_returns() {
    let database = TestDatabase::create().await;
    let service = Service::start(on(&database, None));
    let key = service.key("acme", "10");
    assert_eq!(
        service
            .post(&key, &json!({ "liUrls": [GOOGLE] }))
            .await
            .status,
        200
    );
    assert_eq!(service.get("/healthz").await.status, 200);

    // The database goes away: new connections refused, the server's connections ended.
    let name = database.name().to_owned();
    database
        .admin(&format!(
            "ALTER DATABASE {name} ALLOW_CONNECTIONS false;
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
        ))
        .await;
    let down = service.post(&key, &json!({ "liUrls": [GOOGLE] })).await;
    assert_eq!(
        (down.status, &down.json["error"]),
        (503, &json!("database_unavailable")),
        "{}",
        down.json
    );
    assert_eq!(down.header("retry-after"), Some("5"));
    assert!(
        !down.json["message"].to_string().contains("SQL"),
        "{}",
        down.json
    );
    let health = service.get("/healthz").await;
    assert_eq!(
        (health.status, &health.json["status"]),
        (503, &json!("unavailable"))
    );

    // It comes back: the service resumes by itself.
    database
        .admin(&format!("ALTER DATABASE {name} ALLOW_CONNECTIONS true"))
        .await;
    let mut status = 0;
    for _ in 0..50 {
        status = service
            .post(&key, &json!({ "liUrls": [GOOGLE] }))
            .await
            .status;
        if status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(status, 200, "the service did not resume");
    assert_eq!(service.get("/healthz").await.status, 200);
    // Nothing was charged for the refused request, and no hold was left.
    let shown = service.cli(&["credits", "show", "--account", "acme"]);
    assert!(shown.starts_with("acme: 8 credits"), "{shown}");
    assert_eq!(service.available_credits(&key).await, "8");
}

#[tokio::test]
async fn the_same_page_asked_of_three_servers_at_once_is_fetched_once() {
    let database = TestDatabase::create().await;
    let origin = TestOrigin::start().await;
    let servers = three_servers(&database, Some(&origin));
    let key = servers[0].key("acme", "10");
    let body = json!({ "liUrls": ["https://www.linkedin.com/company/p77"] });
    let replies = join_all(servers.iter().map(|server| server.post(&key, &body))).await;
    for reply in &replies {
        assert_eq!(reply.status, 200, "{}", reply.json);
        assert_eq!(reply.json["results"][0]["source"], "live");
    }
    assert_eq!(
        origin.hits("/company/p77"),
        1,
        "one server fetched, the others waited for its snapshot"
    );
    let fetched: Vec<&serde_json::Value> = replies
        .iter()
        .map(|r| &r.json["results"][0]["fetched_at"])
        .collect();
    assert!(fetched.iter().all(|f| *f == fetched[0]), "{fetched:?}");
}
