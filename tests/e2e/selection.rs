//! Field selection (`fields`) and pass-through metadata on job inputs, over loopback (docs/api.md, "Field
//! selection" and "Metadata").

use std::time::Duration;

use e2e_harness::{Service, ServiceOptions, TestOrigin};
use serde_json::{Value, json};

use crate::jobs::{JOBS, submit, wait_until};

/// 200 distinct pages the test origin serves.
fn two_hundred() -> Vec<String> {
    (0..200)
        .map(|n| format!("https://www.linkedin.com/company/p{n}"))
        .collect()
}

#[tokio::test]
async fn field_selection_shrinks_a_stored_answer_and_bills_the_same() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        args: vec!["--origin-concurrency", "64"],
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "1000");
    let urls = two_hundred();
    let live = service.post(&key, &json!({ "liUrls": urls })).await;
    assert_eq!(live.status, 200, "{}", live.json);

    // The same 200 stored pages, whole and then with five fields.
    let whole_body = json!({ "liUrls": urls, "maxAgeHours": 24 });
    let (whole, whole_text) = service
        .send(
            reqwest::Method::POST,
            "/v1/network/company-data",
            &key,
            Some(&whole_body),
            None,
        )
        .await;
    let fields = [
        "company_name",
        "website",
        "industries",
        "follower_count",
        "headquarters",
    ];
    let selected_body = json!({ "liUrls": urls, "maxAgeHours": 24, "fields": fields });
    let (selected, selected_text) = service
        .send(
            reqwest::Method::POST,
            "/v1/network/company-data",
            &key,
            Some(&selected_body),
            None,
        )
        .await;
    assert_eq!(
        (whole.status, selected.status),
        (200, 200),
        "{}",
        selected.json
    );
    // Billing is the same: 200 stored records at 0.5.
    assert_eq!(whole.header("x-credits-charged"), Some("100"));
    assert_eq!(selected.header("x-credits-charged"), Some("100"));
    assert_eq!(selected.header("x-credits-remaining"), Some("600"));
    assert!(
        selected_text.len() * 3 < whole_text.len(),
        "selected {} bytes, whole {} bytes",
        selected_text.len(),
        whole_text.len()
    );
    let (whole, selected) = (
        whole.json["results"].as_array().expect("results").clone(),
        selected.json["results"]
            .as_array()
            .expect("results")
            .clone(),
    );
    assert_eq!((whole.len(), selected.len()), (200, 200));
    let kept = [
        "original_li_url",
        "final_li_url",
        "source",
        "fetched_at",
        "company_name",
        "website",
        "industries",
        "follower_count",
        "headquarters",
    ];
    for (whole, selected) in whole.iter().zip(&selected) {
        let selected = selected.as_object().expect("object");
        // Exactly the named members (where the page has them) and the identity, with the whole record's values.
        for (name, value) in selected {
            assert!(kept.contains(&name.as_str()), "{name} was not asked for");
            assert_eq!(&whole[name], value, "{name}");
        }
        for name in kept {
            assert_eq!(
                selected.contains_key(name),
                whole.get(name).is_some(),
                "{name}"
            );
        }
        assert!(whole.get("description").is_some() && !selected.contains_key("description"));
    }

    // An unknown name: 400 naming it and listing the valid ones; nothing charged.
    let refused = service
        .post(
            &key,
            &json!({ "liUrls": urls, "maxAgeHours": 24, "fields": ["company_name", "employees"] }),
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.json);
    assert_eq!(refused.json["details"][0]["pointer"], "/fields/1");
    let fix = refused.json["details"][0]["fix"].as_str().expect("fix");
    for name in [
        "company_name",
        "employee_count_on_li",
        "type",
        "similar_pages",
    ] {
        assert!(fix.contains(name), "{fix}");
    }
    assert_eq!(
        service
            .cli(&["credits", "show", "--account", "acme"])
            .lines()
            .next(),
        Some("acme: 600 credits")
    );
}

#[tokio::test]
async fn a_job_gives_each_input_s_metadata_back_unchanged_in_ndjson_and_csv() {
    let origin = TestOrigin::start().await;
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "100");
    // Members in an order that is not sorted, a leading zero kept as text, a number, a boolean, null, non-ASCII.
    let metadata = [
        r#"{"crmId":"0012","rank":3,"owner":"Zoë Ångström","active":true}"#,
        r#"{"zeta":null,"crmId":"0099"}"#,
    ];
    // Sent as text, so the members keep the order above (serde_json's maps would sort them).
    let body = format!(
        r#"{{"liUrls": [
            {{"liUrl": "https://www.linkedin.com/company/p1", "metadata": {}}},
            "https://www.linkedin.com/company/p2",
            {{"liUrl": "https://www.linkedin.com/company/nobody-here", "metadata": {}}},
            {{"liUrl": "https://linkedin.com/company/p1/"}}
        ], "fields": ["company_name", "headquarters"]}}"#,
        metadata[0].replace(',', ", "),
        metadata[1]
    );
    let created = e2e_harness::Reply::from(
        e2e_harness::client()
            .post(format!("{}{JOBS}", service.base))
            .header("x-api-key", &key)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("sent"),
    )
    .await;
    assert_eq!(created.status, 202, "{}", created.json);
    assert_eq!(
        created.json["fields"],
        json!(["company_name", "final_li_url", "headquarters"])
    );
    let id = created.json["id"].as_str().expect("id").to_owned();
    let done = wait_until(&service, &key, &id, "done", Duration::from_mins(1)).await;
    // Two distinct pages resolved, live: 2 credits, as without `fields` or metadata.
    assert_eq!(done["credits_charged"], 2.0);

    let (_, ndjson) = service
        .send(
            reqwest::Method::GET,
            &format!("{JOBS}/{id}/results"),
            &key,
            None,
            None,
        )
        .await;
    let lines: Vec<&str> = ndjson.lines().collect();
    assert_eq!(lines.len(), 4);
    // Byte for byte as sent (compact), members in the order sent, right after `position`.
    assert!(
        lines[0].starts_with(&format!(r#"{{"position":0,"metadata":{},"#, metadata[0])),
        "{}",
        lines[0]
    );
    assert!(
        lines[2].starts_with(&format!(r#"{{"position":2,"metadata":{},"#, metadata[1])),
        "{}",
        lines[2]
    );
    let parsed: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).expect("line"))
        .collect();
    assert_eq!(parsed[1].get("metadata"), None);
    assert_eq!(parsed[3].get("metadata"), None);
    assert_eq!(parsed[0]["company_name"], "Google");
    assert_eq!(parsed[0].get("description"), None, "not selected");
    assert_eq!(parsed[2]["error"], "not_found");

    let (_, csv_text) = service
        .send(
            reqwest::Method::GET,
            &format!("{JOBS}/{id}/results"),
            &key,
            None,
            Some("text/csv"),
        )
        .await;
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .expect("header")
        .iter()
        .map(str::to_owned)
        .collect();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("row")).collect();
    assert_eq!(
        header[..7],
        [
            "position",
            "original_li_url",
            "metadata.crmId",
            "metadata.rank",
            "metadata.owner",
            "metadata.active",
            "metadata.zeta"
        ]
    );
    // The record's columns are those of the selected members only.
    assert!(
        header.contains(&"headquarters_locality".to_owned()),
        "{header:?}"
    );
    assert!(!header.contains(&"description".to_owned()), "{header:?}");
    let cell = |row: usize, name: &str| {
        let column = header.iter().position(|h| h == name).expect(name);
        rows[row][column].to_owned()
    };
    assert_eq!(
        [
            cell(0, "metadata.crmId"),
            cell(0, "metadata.rank"),
            cell(0, "metadata.owner"),
            cell(0, "metadata.active")
        ],
        ["0012", "3", "Zoë Ångström", "true"]
    );
    assert_eq!(
        [cell(2, "metadata.crmId"), cell(2, "metadata.zeta")],
        ["0099", ""]
    );
    assert_eq!(cell(1, "metadata.crmId"), "");
    assert_eq!(cell(0, "company_name"), "Google");

    // Metadata nested or too long is refused with where and why, and no job is made.
    let refused = submit(
        &service,
        &key,
        &json!({ "liUrls": [
            { "liUrl": "https://www.linkedin.com/company/p1", "metadata": { "a": { "b": 1 } } },
            { "liUrl": "https://www.linkedin.com/company/p1", "metadata": { "a": "x".repeat(81) } },
        ] }),
    )
    .await;
    assert_eq!(refused.status, 400, "{}", refused.json);
    let pointers: Vec<&str> = refused.json["details"]
        .as_array()
        .expect("details")
        .iter()
        .filter_map(|d| d["pointer"].as_str())
        .collect();
    // Each at the member of `metadata` that breaks its bounds.
    assert_eq!(pointers, ["/liUrls/0/metadata/a", "/liUrls/1/metadata/a"]);
}
