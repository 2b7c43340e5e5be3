//! Spec 2.1, 7, 8: request validation, body limits, routes, normalization and duplicates.

use e2e_harness::{Service, client};
use serde_json::json;

use crate::{AUDIENSE, GOOGLE, urls};

#[tokio::test]
async fn records_of_real_pages_in_input_order() {
    let service = Service::with_captured_pages();
    let key = service.key("acme", "10");
    let sent = ["https://uk.linkedin.com/company/audiense/", GOOGLE];
    let reply = service.post(&key, &urls(&sent)).await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    assert_eq!(reply.json["message"], "Success");
    assert_eq!(reply.json["status_code"], 200);
    let results = reply.json["results"].as_array().expect("results");
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["original_li_url"], sent[0]);
    assert_eq!(results[0]["final_li_url"], AUDIENSE);
    assert_eq!(results[0]["company_name"], "Audiense");
    assert_eq!(results[0]["founded"], 2011);
    assert_eq!(results[1]["company_id"], 1441);
    assert_eq!(
        results[1]["headquarters"]["fullAddress"],
        "1600 Amphitheatre Parkway, Mountain View, CA 94043, US"
    );
    for result in results {
        assert_eq!(result["source"], "live");
        assert!(
            result["fetched_at"]
                .as_str()
                .is_some_and(|t| t.ends_with('Z')),
            "{}",
            result["fetched_at"]
        );
    }
    assert_eq!(reply.json["unresolved"], json!([]));
    assert_eq!(reply.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn normalization_and_duplicates() {
    let service = Service::with_captured_pages();
    let key = service.key("acme", "10");
    let sent = [
        "https://www.linkedin.com/company/google",
        "https://linkedin.com/company/Google/",
        "https://br.linkedin.com/company/google/about/?trk=nav#top",
        "https://www.linkedin.com/company/google/jobs",
    ];
    let reply = service.post(&key, &urls(&sent)).await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    let results = reply.json["results"].as_array().expect("results");
    assert_eq!(results.len(), 4, "every position gets its record");
    for (result, original) in results.iter().zip(sent) {
        assert_eq!(result["original_li_url"], original);
        assert_eq!(result["final_li_url"], GOOGLE);
    }
    assert_eq!(
        reply.header("x-credits-charged"),
        Some("1"),
        "one distinct company, billed once"
    );
    assert_eq!(reply.header("x-credits-remaining"), Some("9"));

    // Issue 40: 200 copies of one page are answered for their first copies only; the rest are unresolved as
    // `duplicate`, in their positions, and the page is still charged once.
    let copies = vec![GOOGLE; api_contract::MAX_URLS];
    let reply = service
        .post(&key, &json!({"liUrls": copies, "maxAgeHours": 24}))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    let answered = reply.json["results"].as_array().expect("results").len();
    let unresolved = reply.json["unresolved"].as_array().expect("unresolved");
    assert_eq!(answered, api_contract::MAX_COPIES_PER_PAGE);
    assert_eq!(
        unresolved.len(),
        api_contract::MAX_URLS - api_contract::MAX_COPIES_PER_PAGE
    );
    assert!(unresolved.iter().all(|u| {
        u["error"] == "duplicate"
            && u["message"]
                .as_str()
                .is_some_and(|m| m.contains("Send each page once"))
    }));
    assert_eq!(reply.header("x-credits-charged"), Some("0.5"));
}

#[tokio::test]
async fn invalid_bodies_get_400_naming_every_problem() {
    let service = Service::with_captured_pages();
    let key = service.key("acme", "10");
    let body = json!({
        "liUrls": [GOOGLE, "https://www.linkedin.com/in/someone", 42, "http://www.linkedin.com/company/x"],
        "maxAgeHours": 25,
        "maxAge": 1
    });
    let reply = service.post(&key, &body).await;
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json["error"], "invalid_request");
    let pointers: Vec<&str> = reply.json["details"]
        .as_array()
        .expect("details")
        .iter()
        .map(|d| d["pointer"].as_str().expect("pointer"))
        .collect();
    assert_eq!(
        pointers,
        // One per place, in the order the body sent its members.
        [
            "/liUrls/1",
            "/liUrls/2",
            "/liUrls/3",
            "/maxAge",
            "/maxAgeHours"
        ]
    );
    assert_eq!(reply.json["details"][0]["index"], 1);
    assert_eq!(
        reply.json["details"][0]["value"],
        "https://www.linkedin.com/in/someone"
    );
    let message = reply.json["message"].as_str().expect("message");
    assert!(message.contains("Fix:"), "{message}");

    for (body, why) in [
        (json!({"liUrls": []}), "empty array"),
        (json!({"liUrls": vec![GOOGLE; 201]}), "201 URLs"),
        (json!([GOOGLE]), "not an object"),
        (json!({"liUrls": GOOGLE}), "not an array"),
        (
            json!({"liUrls": [GOOGLE], "maxAgeSeconds": 86401}),
            "seconds over the bound",
        ),
        (json!({"liUrls": [GOOGLE], "maxAgeHours": null}), "null"),
    ] {
        let reply = service.post(&key, &body).await;
        assert_eq!(
            (reply.status, reply.json["error"].as_str()),
            (400, Some("invalid_request")),
            "{why}"
        );
    }
    let raw = client()
        .post(format!("{}/v1/network/company-data", service.base))
        .header("x-api-key", &key)
        .header("content-type", "application/json")
        .body("{\"liUrls\": [")
        .send()
        .await
        .expect("sent");
    assert_eq!(raw.status(), 400, "broken JSON");
    // Nothing was charged for any of it.
    assert!(
        service
            .cli(&["credits", "show", "--account", "acme"])
            .starts_with("acme: 10 credits")
    );
}

#[tokio::test]
async fn bodies_over_100_kb_get_413_even_when_chunked() {
    let service = Service::with_captured_pages();
    let key = service.key("acme", "10");
    let padding = " ".repeat(100 * 1024);
    let too_big = format!("{{\"liUrls\": [\"{GOOGLE}\"]{padding}}}");
    let post = |body: reqwest::Body| {
        client()
            .post(format!("{}/v1/network/company-data", service.base))
            .header("x-api-key", &key)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    let reply = e2e_harness::Reply::from(post(too_big.clone().into()).await.expect("sent")).await;
    assert_eq!(
        (reply.status, reply.json["error"].as_str()),
        (413, Some("body_too_large"))
    );
    // Chunked: no Content-Length, so the limit is enforced while reading.
    let chunks: Vec<Result<String, std::io::Error>> = too_big
        .as_bytes()
        .chunks(8192)
        .map(|c| Ok(String::from_utf8_lossy(c).into_owned()))
        .collect();
    let stream = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
    let reply = e2e_harness::Reply::from(post(stream).await.expect("sent")).await;
    assert_eq!(reply.status, 413);
    // Just under the limit is fine.
    let fits = format!(
        "{{\"liUrls\": [\"{GOOGLE}\"]{}}}",
        " ".repeat(100 * 1024 - 100)
    );
    let reply = e2e_harness::Reply::from(post(fits.into()).await.expect("sent")).await;
    assert_eq!(reply.status, 200, "{}", reply.json);
}

#[tokio::test]
async fn content_type_routes_and_methods() {
    let service = Service::with_captured_pages();
    let key = service.key("acme", "10");
    let reply = e2e_harness::Reply::from(
        client()
            .post(format!("{}/v1/network/company-data", service.base))
            .header("x-api-key", &key)
            .header("content-type", "text/plain")
            .body(urls(&[GOOGLE]).to_string())
            .send()
            .await
            .expect("sent"),
    )
    .await;
    assert_eq!(
        (reply.status, reply.json["error"].as_str()),
        (415, Some("unsupported_media_type"))
    );
    let get = service.get("/v1/network/company-data").await;
    assert_eq!((get.status, get.header("allow")), (405, Some("POST")));
    let missing = service.get("/nope").await;
    assert_eq!(
        (missing.status, missing.json["error"].as_str()),
        (404, Some("not_found"))
    );
    let health = service.get("/healthz").await;
    assert_eq!(
        (health.status, health.json["status"].as_str()),
        (200, Some("ok"))
    );
}
