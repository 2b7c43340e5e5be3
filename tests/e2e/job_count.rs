//! `include: ["job_count"]` over loopback (docs/api.md, "Parts fetched on request"): the open-jobs count read from
//! the guest job search of a real origin, fetched only when asked for, stored with the snapshot, in history, in a
//! job's answers, never charged, and when it cannot be read, absent with the reason in the record's provenance.

use std::collections::HashMap;
use std::time::Duration;

use e2e_harness::{Behaviour, Service, ServiceOptions, TestOrigin};
use reqwest::Method;
use serde_json::{Value, json};

use crate::GOOGLE;
use crate::jobs::{JOBS, submit, wait_until};

const JOB_SEARCH: &str = page_url::JOB_SEARCH_PATH;

fn first(reply: &Value) -> &Value {
    &reply["results"][0]
}

#[tokio::test]
async fn job_count_is_fetched_only_when_included_kept_with_the_snapshot_and_never_charged() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10");

    // Without `include` nothing goes to the job search, and the record has neither the count nor provenance.
    let plain = service.post(&key, &json!({ "liUrls": [GOOGLE] })).await;
    assert_eq!(plain.status, 200, "{}", plain.json);
    assert_eq!(origin.hits(JOB_SEARCH), 0, "a request without include");
    assert_eq!(first(&plain.json)["company_id"], 1441);
    for member in ["job_count", "job_count_is_lower_bound", "provenance"] {
        assert!(first(&plain.json).get(member).is_none(), "{member}");
    }

    // With it, inside a window whose snapshot lacks the count: the page is fetched again, with the count (the
    // real capture's "2000+"), at the window's price of one company (0.5), as any answer inside a window.
    let body = json!({ "liUrls": [GOOGLE], "maxAgeHours": 1, "include": ["job_count"] });
    let included = service.post(&key, &body).await;
    assert_eq!(included.status, 200, "{}", included.json);
    let record = first(&included.json);
    assert_eq!(record["source"], "live", "{record}");
    assert_eq!(record["job_count"], 2000);
    assert_eq!(record["job_count_is_lower_bound"], true);
    let entry = &record["provenance"]["job_count"];
    assert!(
        entry["source_url"]
            .as_str()
            .is_some_and(|url| url.ends_with(&page_url::job_search_path(1441))),
        "{entry}"
    );
    let searched_at: jiff::Timestamp = entry["fetched_at"]
        .as_str()
        .and_then(|at| at.parse().ok())
        .expect("the search's own fetched_at");
    let page_at: jiff::Timestamp = record["fetched_at"]
        .as_str()
        .and_then(|at| at.parse().ok())
        .expect("the page's fetched_at");
    assert!(searched_at >= page_at, "{searched_at} before {page_at}");
    assert!(entry.get("error").is_none(), "{entry}");
    assert_eq!(origin.hits(JOB_SEARCH), 1);
    assert_eq!(included.header("x-credits-charged"), Some("0.5"));
    let document = service.get("/openapi.json").await.json;
    crate::openapi::assert_valid(&document, "CompanyResponse", &included.json);

    // The snapshot now carries it: served stored, with or without `include`, and not searched again.
    for body in [
        body.clone(),
        json!({ "liUrls": [GOOGLE], "maxAgeHours": 1 }),
    ] {
        let stored = service.post(&key, &body).await;
        assert_eq!(first(&stored.json)["source"], "stored", "{}", stored.json);
        assert_eq!(first(&stored.json)["job_count"], 2000);
        assert_eq!(stored.header("x-credits-charged"), Some("0.5"));
    }
    assert_eq!(origin.hits(JOB_SEARCH), 1);

    // History keeps it as a time series beside the other counts: none for the first fetch, 2000 for the second.
    let history = service
        .send(
            Method::GET,
            "/v1/network/company-data/history?liUrl=https%3A%2F%2Fwww.linkedin.com%2Fcompany%2Fgoogle",
            &key,
            None,
            None,
        )
        .await
        .0;
    assert_eq!(history.status, 200, "{}", history.json);
    let counts: Vec<Value> = history.json["points"]
        .as_array()
        .expect("points")
        .iter()
        .map(|point| point["job_count"].clone())
        .collect();
    assert_eq!(counts, [Value::Null, json!(2000)], "{}", history.json);

    // A job that includes it answers with it, at the job's price per company.
    let job = submit(
        &service,
        &key,
        &json!({ "liUrls": [GOOGLE, "https://www.linkedin.com/company/audiense"], "include": ["job_count"] }),
    )
    .await;
    assert_eq!(job.status, 202, "{}", job.json);
    let id = job.json["id"].as_str().expect("job id").to_owned();
    let done = wait_until(&service, &key, &id, "done", Duration::from_mins(1)).await;
    assert_eq!(done["resolved"], 2, "{done}");
    let (results, text) = service
        .send(
            Method::GET,
            &format!("{JOBS}/{id}/results"),
            &key,
            None,
            None,
        )
        .await;
    assert_eq!(results.status, 200);
    let counts: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("a JSON line")["job_count"].clone())
        .collect();
    assert_eq!(counts, [json!(2000), json!(2000)], "{text}");
    assert_eq!(origin.hits(JOB_SEARCH), 3);

    // A part the service does not know is a 400 that lists the ones it does.
    let unknown = service
        .post(&key, &json!({ "liUrls": [GOOGLE], "include": ["jobs"] }))
        .await;
    assert_eq!(unknown.status, 400, "{}", unknown.json);
    let problem = &unknown.json["details"][0];
    assert_eq!(problem["pointer"], "/include/0", "{problem}");
    assert!(
        problem["fix"]
            .as_str()
            .is_some_and(|fix| fix.contains("job_count")),
        "{problem}"
    );
}

#[tokio::test]
async fn a_job_search_that_cannot_be_read_leaves_the_count_out_and_says_why() {
    let routes = HashMap::from([
        (
            "/company/google".to_owned(),
            Behaviour::Page {
                file: "origin/company/google.html",
                delay: Duration::ZERO,
                jitter: Duration::ZERO,
            },
        ),
        (
            JOB_SEARCH.to_owned(),
            Behaviour::Status(999, Some("pages/blocked-999-2021.html"), None),
        ),
    ]);
    let origin = TestOrigin::with_routes(routes).await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10");
    let reply = service
        .post(
            &key,
            &json!({ "liUrls": [GOOGLE], "include": ["job_count"] }),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    let record = first(&reply.json);
    assert_eq!(record["company_name"], "Google", "the page is answered");
    assert!(record.get("job_count").is_none(), "never a null: {record}");
    let entry = &record["provenance"]["job_count"];
    assert_eq!(entry["error"], "blocked", "{entry}");
    assert!(
        entry["message"]
            .as_str()
            .is_some_and(|m| m.contains("without `job_count`")),
        "{entry}"
    );
    assert_eq!(origin.hits(JOB_SEARCH), 1, "a ban is not retried into");
    // The company was returned: one company at the live price, nothing more and nothing less.
    assert_eq!(reply.header("x-credits-charged"), Some("1"));
}
