//! SIGKILL in the middle of live and stored requests: the database opens cleanly, the ledger agrees with the
//! balance, no snapshot is half-written, and no hold is left keeping credits.

use e2e_harness::{Service, ServiceOptions, TestOrigin, cli_fails, client, format_credits};
use serde_json::json;

use crate::GOOGLE;

fn query_i64(db: &std::path::Path, sql: &str) -> i64 {
    let conn = rusqlite::Connection::open(db).expect("open the database");
    conn.query_row(sql, [], |row| row.get(0)).expect(sql)
}

#[tokio::test]
async fn a_server_killed_mid_load_restarts_clean_and_loses_nothing() {
    let origin = TestOrigin::start().await;
    let options = || ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--origin-concurrency", "20"],
        real_process: true,
        ..ServiceOptions::default()
    };
    let mut service = Service::start(options());
    let key = service.key("acme", "1000");
    assert_eq!(
        service
            .post(&key, &json!({ "liUrls": [GOOGLE] }))
            .await
            .status,
        200
    );

    // Eight live requests of 20 slow pages each, and stored ones, all in flight.
    let mut load = tokio::task::JoinSet::new();
    for batch in 0..8 {
        let urls: Vec<String> = (0..20)
            .map(|i| format!("https://www.linkedin.com/company/p{}", batch * 100 + i))
            .collect();
        for body in [
            json!({ "liUrls": urls }),
            json!({ "liUrls": [GOOGLE], "maxAgeHours": 24 }),
        ] {
            let request = client()
                .post(format!("{}/v1/network/company-data", service.base))
                .header("x-api-key", &key)
                .header("content-type", "application/json")
                .body(body.to_string());
            load.spawn(async move { request.send().await.map(|r| r.status().as_u16()) });
        }
    }
    let db = service.db.clone();
    // Live lookups reach the origin only once their request holds its credits.
    origin.reached(20).await;
    service.kill();
    let answered = load.join_all().await;
    assert!(
        answered.iter().any(Result::is_err),
        "some requests were cut off by the kill"
    );

    let restarted = Service::start(ServiceOptions {
        dir: Some(service.dir()),
        ..options()
    });

    // A second server on the same file is refused while this one runs.
    let refused = cli_fails(&["serve", "--listen", "127.0.0.1:0", "--db", &db]);
    assert!(refused.contains("another company-data server"), "{refused}");

    let conn = rusqlite::Connection::open(&db).expect("open");
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("check");
    assert_eq!(integrity, "ok");
    let balance = query_i64(
        std::path::Path::new(&db),
        "SELECT balance_millis FROM accounts WHERE name = 'acme'",
    );
    let ledger = query_i64(
        std::path::Path::new(&db),
        "SELECT sum(delta_millis) FROM ledger_entries WHERE account_id = (SELECT id FROM accounts WHERE name = 'acme')",
    );
    assert_eq!(balance, ledger, "the ledger sums to the balance");
    let mut snapshots = conn
        .prepare("SELECT record FROM snapshots")
        .expect("prepare");
    let records: Vec<String> = snapshots
        .query_map([], |r| r.get(0))
        .expect("query")
        .map(|r| r.expect("row"))
        .collect();
    assert!(!records.is_empty());
    for record in records {
        let value: serde_json::Value =
            serde_json::from_str(&record).expect("every stored record is whole JSON");
        assert!(value["company_name"].is_string());
    }
    // Every remaining credit can be spent: nothing is held.
    let reply = restarted.post(&key, &json!({ "liUrls": [GOOGLE] })).await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    let remaining_millis = balance - 1000;
    assert_eq!(
        reply.header("x-credits-remaining").map(str::to_owned),
        Some(format_credits(remaining_millis))
    );
}
