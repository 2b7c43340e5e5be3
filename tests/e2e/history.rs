//! A page's history over loopback (docs/api.md, "History"): the captured Google page served by a folder origin
//! whose copy changes between live lookups, as the network's page changes over time.

use e2e_harness::{Service, ServiceOptions, fixtures};
use reqwest::Method;
use serde_json::Value;

use crate::{GOOGLE, urls};

const HISTORY: &str = "/v1/network/company-data/history";

/// The captured Google page with `edits` (text → replacement) applied, as the origin's `company/google.html`.
fn serve_google(origin: &std::path::Path, edits: &[(&str, &str)]) {
    let mut html = std::fs::read_to_string(fixtures().join("origin/company/google.html"))
        .expect("captured page");
    for (from, to) in edits {
        assert!(html.contains(from), "the captured page shows {from}");
        html = html.replace(from, to);
    }
    std::fs::write(origin.join("company/google.html"), html).expect("written");
}

fn history_path(query: &str) -> String {
    format!("{HISTORY}?liUrl=https%3A%2F%2Fwww.linkedin.com%2Fcompany%2Fgoogle{query}")
}

#[tokio::test]
async fn history_gives_a_point_per_fetch_and_each_change_once() {
    let origin = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(origin.path().join("company")).expect("folder");
    let service = Service::start(ServiceOptions {
        origin: origin.path().display().to_string(),
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10");
    let history = |query: String| {
        let (service, key) = (&service, key.clone());
        async move { service.send(Method::GET, &query, &key, None, None).await.0 }
    };

    // Before any lookup there is nothing to give, and nothing is charged.
    let none = history(history_path("")).await;
    assert_eq!(none.status, 404, "{}", none.json);
    assert_eq!(none.json["error"], "not_found");

    let followers = ("37,814,363 followers", "37,900,000 followers");
    let website = ("goo%2Egle%2F3DLEokh", "about%2Egoogle%2F");
    let size = ("10,001+ employees", "5,001-10,000 employees");
    let mut fetched_at = Vec::new();
    for edits in [
        vec![],
        vec![followers],
        vec![followers, website],
        vec![followers, website, size],
    ] {
        serve_google(origin.path(), &edits);
        let reply = service.post(&key, &urls(&[GOOGLE])).await;
        assert_eq!(reply.status, 200, "{}", reply.json);
        fetched_at.push(reply.json["results"][0]["fetched_at"].clone());
    }
    // Four live lookups at 1 credit: 6 left.

    let all = history(history_path("")).await;
    assert_eq!(all.status, 200, "{}", all.json);
    assert_eq!(all.header("x-credits-charged"), Some("0.5"));
    assert_eq!(all.header("x-credits-remaining"), Some("5.5"));
    assert_eq!(all.json["final_li_url"], GOOGLE);
    let document = service.get("/openapi.json").await.json;
    crate::openapi::assert_valid(&document, "CompanyHistory", &all.json);
    let points = all.json["points"].as_array().expect("points");
    let counts: Vec<(&Value, &Value, &Value)> = points
        .iter()
        .map(|p| (&p["fetched_at"], &p["follower_count"], &p["company_size"]))
        .collect();
    assert_eq!(
        counts,
        [
            (
                &fetched_at[0],
                &Value::from(37_814_363),
                &Value::from("10,001+ employees")
            ),
            (
                &fetched_at[1],
                &Value::from(37_900_000),
                &Value::from("10,001+ employees")
            ),
            (
                &fetched_at[2],
                &Value::from(37_900_000),
                &Value::from("10,001+ employees")
            ),
            (
                &fetched_at[3],
                &Value::from(37_900_000),
                &Value::from("5,001-10,000 employees")
            ),
        ]
    );
    let changes: Vec<(&Value, &str, &Value, &Value)> = all.json["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            (
                &c["fetched_at"],
                c["field"].as_str().unwrap_or_default(),
                &c["before"],
                &c["after"],
            )
        })
        .collect();
    let (before_site, after_site) = (
        Value::from("https://goo.gle/3DLEokh"),
        Value::from("https://about.google/"),
    );
    assert_eq!(changes.len(), 3, "{changes:?}");
    assert_eq!(
        changes[0],
        (
            &fetched_at[2],
            "domain",
            &Value::from("goo.gle"),
            &Value::from("about.google")
        )
    );
    assert_eq!(
        changes[1],
        (&fetched_at[2], "website", &before_site, &after_site)
    );
    assert_eq!(
        changes[2],
        (
            &fetched_at[3],
            "company_size",
            &Value::from("10,001+ employees"),
            &Value::from("5,001-10,000 employees")
        )
    );

    // A range: from the third fetch on, its points and the changes the third and fourth fetches made.
    let from = fetched_at[2].as_str().expect("a time");
    let later = history(history_path(&format!("&from={}", from.replace('+', "%2B")))).await;
    assert_eq!(later.status, 200, "{}", later.json);
    assert_eq!(later.json["points"].as_array().map(Vec::len), Some(2));
    assert_eq!(later.json["changes"].as_array().map(Vec::len), Some(3));
    // A range with no fetch in it is free.
    let empty = history(history_path("&to=2000-01-01T00:00:00Z")).await;
    assert_eq!(empty.status, 200, "{}", empty.json);
    assert_eq!(empty.json["points"], Value::Array(vec![]));
    assert_eq!(empty.header("x-credits-charged"), Some("0"));
    assert_eq!(empty.header("x-credits-remaining"), None);

    // Bad queries say what to send; neither they nor the 404 were charged.
    let bad = history(format!(
        "{HISTORY}?liUrl=https://www.linkedin.com/in/someone"
    ))
    .await;
    assert_eq!(bad.status, 400, "{}", bad.json);
    assert_eq!(bad.json["error"], "invalid_query");
    assert_eq!(service.available_credits(&key).await, "5");
}
