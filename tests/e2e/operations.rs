//! What an operator and a client rely on: request ids, JSON logs without keys, the account endpoint, and the
//! refusal of a failed-authentication flood.

use e2e_harness::{Service, ServiceOptions, client, credits_millis};
use serde_json::Value;

use crate::{GOOGLE, urls};

async fn post_as(service: &Service, key: &str, request_id: Option<&str>) -> e2e_harness::Reply {
    let mut request = client()
        .post(format!("{}/v1/network/company-data", service.base))
        .header("x-api-key", key)
        .header("content-type", "application/json")
        .body(urls(&[GOOGLE]).to_string());
    if let Some(id) = request_id {
        request = request.header("x-request-id", id);
    }
    e2e_harness::Reply::from(request.send().await.expect("sent")).await
}

#[tokio::test]
async fn json_logs_parse_line_by_line_carry_the_request_and_never_a_key() {
    let service = Service::start(ServiceOptions {
        args: vec!["--log-format", "json"],
        real_process: true,
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10");

    let ok = post_as(&service, &key, Some("trace-abc-1")).await;
    assert_eq!(ok.status, 200, "{}", ok.json);
    assert_eq!(ok.header("x-request-id"), Some("trace-abc-1"));
    // Not well-formed: replaced by one of the server's.
    let replaced = post_as(&service, &key, Some("has spaces")).await;
    let id = replaced.header("x-request-id").expect("an id").to_owned();
    assert!(
        id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );
    // Error bodies carry the id too.
    let refused = post_as(
        &service,
        "cdk_wrongwrongwrongwrongwrongwrongwrongwrong",
        None,
    )
    .await;
    assert_eq!(refused.status, 401);
    assert_eq!(
        refused.json["request_id"].as_str(),
        refused.header("x-request-id")
    );

    // The refused request's line is the last of the three "served" lines.
    let lines = service
        .log_until("three served lines", |log| {
            log.iter()
                .filter(|line| line.contains(r#""message":"served""#))
                .count()
                >= 3
        })
        .await;
    let events: Vec<Value> = lines
        .iter()
        .filter(|line| !line.starts_with("company-data listening on "))
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let served = events
        .iter()
        .find(|e| e["message"] == "served" && e["span"]["request_id"] == "trace-abc-1")
        .unwrap_or_else(|| panic!("no served line for the request:\n{}", lines.join("\n")));
    assert_eq!(served["status"], 200);
    assert!(served["duration_ms"].as_f64().is_some(), "{served}");
    assert_eq!(served["span"]["key"], &key[..12]);
    assert!(served["span"]["account"].as_i64().is_some(), "{served}");
    assert_eq!(served["span"]["mode"], "live", "{served}");
    assert_eq!(served["span"]["records"], 1);
    assert_eq!(
        served["span"]["credits"].as_str(),
        ok.header("x-credits-charged")
    );
    let all = lines.join("\n");
    assert!(
        !all.contains(&key[12..]),
        "the key's secret part is in the log"
    );
    assert!(
        !all.contains("wrongwrongwrong"),
        "a presented key is in the log"
    );
}

#[tokio::test]
async fn the_account_endpoint_matches_the_ledger_and_is_free() {
    let service = Service::with_captured_pages();
    let key = service.key("acme", "10");
    let (fresh, _) = service
        .send(reqwest::Method::GET, "/v1/account", &key, None, None)
        .await;
    assert_eq!(fresh.status, 200, "{}", fresh.json);
    assert_eq!(fresh.json["name"], "acme");
    assert_eq!(fresh.json["balance"], 10);
    assert_eq!(fresh.json["usage_this_month"]["requests"], 0);

    let mut charged = 0;
    let mut remaining = String::new();
    for body in [
        urls(&[GOOGLE]),
        urls(&[GOOGLE, "https://www.linkedin.com/company/no-such-page-here"]),
    ] {
        let reply = service.post(&key, &body).await;
        assert_eq!(reply.status, 200, "{}", reply.json);
        charged += credits_millis(reply.header("x-credits-charged").expect("charged"));
        remaining = reply
            .header("x-credits-remaining")
            .expect("remaining")
            .to_owned();
    }
    for _ in 0..2 {
        let (account, _) = service
            .send(reqwest::Method::GET, "/v1/account", &key, None, None)
            .await;
        assert_eq!(account.status, 200);
        assert!(account.header("x-credits-charged").is_none(), "free");
        let json = &account.json;
        assert_eq!(
            credits_millis(&json["balance"].to_string()),
            credits_millis(&remaining)
        );
        assert_eq!(json["held"], 0);
        assert_eq!(json["available"], json["balance"]);
        let usage = &json["usage_this_month"];
        assert_eq!(usage["requests"], 2);
        assert_eq!(usage["records"], 2);
        assert_eq!(usage["unresolved"], 1);
        assert_eq!(credits_millis(&usage["credits"].to_string()), charged);
        assert!(
            usage["since"]
                .as_str()
                .is_some_and(|s| s.ends_with("-01T00:00:00Z")),
            "{usage}"
        );
    }
    let (anonymous, _) = service
        .send(reqwest::Method::GET, "/v1/account", "", None, None)
        .await;
    assert_eq!(anonymous.status, 401);
}

#[tokio::test]
async fn a_failed_authentication_flood_from_one_address_is_refused_with_429() {
    let service = Service::start(ServiceOptions {
        args: vec![
            "--failed-auth-limit",
            "5",
            "--client-address-header",
            "x-forwarded-for",
        ],
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10");
    let send = |presented: String, from: &'static str| {
        let request = client()
            .get(format!("{}/v1/account", service.base))
            .header("x-api-key", presented)
            .header("x-forwarded-for", format!("10.0.0.1, {from}"));
        async move { e2e_harness::Reply::from(request.send().await.expect("sent")).await }
    };
    for i in 0..5 {
        let made_up = format!("cdk_{}", format!("{i}").repeat(40));
        assert_eq!(send(made_up, "203.0.113.9").await.status, 401);
    }
    let refused = send("cdk_nope".to_owned(), "203.0.113.9").await;
    assert_eq!(
        (refused.status, refused.json["error"].as_str()),
        (429, Some("too_many_failed_authentications")),
        "{}",
        refused.json
    );
    let wait: u64 = refused
        .header("retry-after")
        .and_then(|v| v.parse().ok())
        .expect("Retry-After in seconds");
    assert!((1..=60).contains(&wait), "Retry-After {wait}");
    // Even a valid key waits: nothing is checked for that address until it earns a try back (every 12 s here).
    assert_eq!(send(key.clone(), "203.0.113.9").await.status, 429);
    // Another client behind the same proxy is not affected.
    assert_eq!(send(key, "198.51.100.4").await.status, 200);
}

/// The value of the series `name{labels…}` in a Prometheus text exposition, summed over the series that match
/// and rounded to a whole number (these are counts); 0 when absent. Every label given must match, others may be
/// present.
fn series(text: &str, name: &str, labels: &[(&str, &str)]) -> i64 {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (key, value) = line.rsplit_once(' ')?;
            let (metric, rest) = key.split_once('{').unwrap_or((key, "}"));
            (metric == name
                && labels
                    .iter()
                    .all(|(label, value)| rest.contains(&format!("{label}=\"{value}\""))))
            .then(|| value.parse::<f64>().ok())?
        })
        .sum::<f64>()
        .round() as i64
}

async fn scrape(url: &str) -> String {
    let response = client().get(url).send().await.expect("scraped");
    assert_eq!(response.status(), 200);
    assert!(
        response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/plain; version=0.0.4")),
        "Prometheus text format"
    );
    response.text().await.expect("text")
}

#[tokio::test]
async fn metrics_move_with_real_requests_on_their_own_listener() {
    let service = Service::start(ServiceOptions {
        args: vec!["--metrics-listen", "127.0.0.1:0"],
        real_process: true,
        ..ServiceOptions::default()
    });
    let metrics_url = {
        let log = service.log.lock().expect("log").clone();
        log.iter()
            .find_map(|line| line.strip_prefix("company-data metrics on "))
            .map_or_else(
                || panic!("no metrics address in the log:\n{}", log.join("\n")),
                str::to_owned,
            )
    };
    let key = service.key("acme", "10");
    let before = scrape(&metrics_url).await;

    let live = service.post(&key, &urls(&[GOOGLE])).await;
    assert_eq!(live.status, 200, "{}", live.json);
    let stored = service
        .post(&key, &serde_json::json!({"liUrls": [GOOGLE, "https://www.linkedin.com/company/no-such-page-here"], "maxAgeHours": 24}))
        .await;
    assert_eq!(stored.status, 200, "{}", stored.json);
    let refused = service
        .post(
            "cdk_wrongwrongwrongwrongwrongwrongwrongwrong",
            &urls(&[GOOGLE]),
        )
        .await;
    assert_eq!(refused.status, 401);
    let after = scrape(&metrics_url).await;

    let moved = |name: &str, labels: &[(&str, &str)]| {
        series(&after, name, labels) - series(&before, name, labels)
    };
    let route = ("route", "/v1/network/company-data");
    assert_eq!(
        moved(
            "company_data_http_requests_total",
            &[route, ("status", "200")]
        ),
        2
    );
    assert_eq!(
        moved(
            "company_data_http_requests_total",
            &[route, ("status", "401")]
        ),
        1
    );
    assert_eq!(
        moved("company_data_http_request_duration_seconds_count", &[route]),
        3
    );
    assert_eq!(
        moved("company_data_records_total", &[("source", "live")]),
        1
    );
    assert_eq!(
        moved("company_data_records_total", &[("source", "stored")]),
        1
    );
    assert_eq!(
        moved("company_data_unresolved_total", &[("reason", "not_found")]),
        1
    );
    assert_eq!(
        moved("company_data_origin_fetches_total", &[("outcome", "ok")]),
        1
    );
    assert_eq!(
        moved(
            "company_data_origin_fetches_total",
            &[("outcome", "not_found")]
        ),
        1
    );
    assert_eq!(
        moved("company_data_origin_fetch_duration_seconds_count", &[]),
        2
    );
    assert_eq!(
        moved("company_data_auth_refusals_total", &[("reason", "invalid")]),
        1
    );
    let charged = credits_millis(live.header("x-credits-charged").expect("charged"))
        + credits_millis(stored.header("x-credits-charged").expect("charged"));
    assert_eq!(
        moved("company_data_credits_charged_millis_total", &[]),
        charged
    );
    assert_eq!(
        series(&after, "company_data_credit_holds_in_flight", &[]),
        0
    );
    assert_eq!(series(&after, "company_data_parser_queue", &[]), 0);
    assert!(after.contains("company_data_db_pool_connections{engine=\"sqlite\",state=\"in_use\"}"));
    // Not on the API's listener.
    assert_eq!(service.get("/metrics").await.status, 404);
}
