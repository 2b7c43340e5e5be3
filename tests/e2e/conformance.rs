//! One request per spec rule (issue 4): each bound of each field, each body shape, content types, the body-size
//! limit, each auth header form, and both sides of every character class of the URL pattern (spec 2.1, 5, 7, 8).
//! Every case is checked; the failure lists every case that went wrong.

use e2e_harness::{Reply, Service, ServiceOptions, client};
use serde_json::{Value, json};

use crate::GOOGLE;

/// What a case expects: the status and, for errors, the `error` code.
type Expect = (u16, Option<&'static str>);
const OK: Expect = (200, None);
const INVALID: Expect = (400, Some("invalid_request"));

struct Conformance {
    service: Service,
    key: String,
    failures: Vec<String>,
    cases: usize,
}

impl Conformance {
    async fn send(
        &self,
        headers: &[(&str, &str)],
        content_type: Option<&str>,
        body: reqwest::Body,
    ) -> Reply {
        let mut request = client().post(format!("{}/v1/network/company-data", self.service.base));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        Reply::from(request.body(body).send().await.expect("sent")).await
    }

    fn record(&mut self, rule: &str, reply: &Reply, (status, code): Expect) {
        self.cases += 1;
        let got_code = reply.json["error"].as_str();
        if reply.status != status || (code.is_some() && got_code != code) {
            self.failures.push(format!(
                "{rule}: expected {status} {code:?}, got {} {got_code:?}: {}",
                reply.status, reply.json
            ));
        }
    }

    /// A body sent as JSON with a valid key.
    async fn body(&mut self, rule: &str, body: impl Into<reqwest::Body>, expect: Expect) {
        let key = self.key.clone();
        let reply = self
            .send(
                &[("x-api-key", &key)],
                Some("application/json"),
                body.into(),
            )
            .await;
        self.record(rule, &reply, expect);
    }

    async fn json(&mut self, rule: &str, body: &Value, expect: Expect) {
        self.body(rule, body.to_string(), expect).await;
    }
}

fn with_window(name: &str, value: &Value) -> Value {
    json!({ "liUrls": [GOOGLE], name: value })
}

#[tokio::test]
async fn every_spec_rule_from_outside() {
    let service = Service::start(ServiceOptions {
        args: vec!["--key-rate", "0"],
        ..ServiceOptions::default()
    });
    let key = service.key("acme", "10000");
    let mut c = Conformance {
        service,
        key: key.clone(),
        failures: Vec::new(),
        cases: 0,
    };

    // Freshness windows (spec 2.1, 8): both ends of each range, just past them, and wrong types.
    for (name, value, expect) in [
        ("maxAgeHours", json!(0), OK),
        ("maxAgeHours", json!(24), OK),
        ("maxAgeHours", json!(24.0), OK),
        ("maxAgeHours", json!(0.5), OK),
        ("maxAgeHours", json!(24.0001), INVALID),
        ("maxAgeHours", json!(-0.0001), INVALID),
        ("maxAgeHours", json!(25), INVALID),
        ("maxAgeHours", json!("24"), INVALID),
        ("maxAgeHours", json!(null), INVALID),
        ("maxAgeHours", json!(true), INVALID),
        ("maxAgeHours", json!([24]), INVALID),
        ("maxAgeSeconds", json!(0), OK),
        ("maxAgeSeconds", json!(86400), OK),
        ("maxAgeSeconds", json!(86400.0), OK),
        ("maxAgeSeconds", json!(86400.5), INVALID),
        ("maxAgeSeconds", json!(86401), INVALID),
        ("maxAgeSeconds", json!(-1), INVALID),
        ("maxAgeSeconds", json!("60"), INVALID),
        ("maxAgeSeconds", json!(null), INVALID),
    ] {
        c.json(
            &format!("{name} = {value}"),
            &with_window(name, &value),
            expect,
        )
        .await;
    }
    c.json(
        "maxAgeSeconds wins over maxAgeHours",
        &json!({"liUrls": [GOOGLE], "maxAgeSeconds": 60, "maxAgeHours": 0}),
        OK,
    )
    .await;
    c.json(
        "an ignored maxAgeHours must still be in range",
        &json!({"liUrls": [GOOGLE], "maxAgeSeconds": 60, "maxAgeHours": 25}),
        INVALID,
    )
    .await;

    // liUrls (spec 2.1, 8): 1 to 200 strings.
    let many = |n: usize| -> Vec<String> {
        (0..n)
            .map(|i| format!("https://www.linkedin.com/company/n{i}"))
            .collect()
    };
    for (rule, body, expect) in [
        ("1 URL", json!({"liUrls": [GOOGLE]}), OK),
        ("200 URLs", json!({"liUrls": many(200)}), OK),
        ("201 URLs", json!({"liUrls": many(201)}), INVALID),
        ("empty liUrls", json!({"liUrls": []}), INVALID),
        ("liUrls missing", json!({"maxAgeHours": 1}), INVALID),
        ("liUrls a string", json!({"liUrls": GOOGLE}), INVALID),
        ("liUrls null", json!({"liUrls": null}), INVALID),
        ("an item a number", json!({"liUrls": [42]}), INVALID),
        ("an item null", json!({"liUrls": [null]}), INVALID),
        (
            "an item an object",
            json!({"liUrls": [{"url": GOOGLE}]}),
            INVALID,
        ),
        (
            "unknown property",
            json!({"liUrls": [GOOGLE], "maxAge": 1}),
            INVALID,
        ),
        ("body an array", json!([GOOGLE]), INVALID),
        ("body a string", json!(GOOGLE), INVALID),
        ("body a number", json!(1), INVALID),
        ("body null", json!(null), INVALID),
    ] {
        c.json(rule, &body, expect).await;
    }

    // Bytes that are not one JSON object.
    let nested = format!(
        "{{\"liUrls\": {}{}}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    for (rule, body, expect) in [
        ("empty body", b"".to_vec(), INVALID),
        ("broken JSON", b"{\"liUrls\": [".to_vec(), INVALID),
        (
            "invalid UTF-8",
            b"{\"liUrls\": [\"https://www.linkedin.com/company/\xff\"]}".to_vec(),
            INVALID,
        ),
        (
            "trailing data",
            format!("{{\"liUrls\": [\"{GOOGLE}\"]}} {{}}").into_bytes(),
            INVALID,
        ),
        (
            "duplicate liUrls",
            format!("{{\"liUrls\": [\"{GOOGLE}\"], \"liUrls\": [\"{GOOGLE}\"]}}").into_bytes(),
            INVALID,
        ),
        (
            "duplicate maxAgeHours",
            format!("{{\"liUrls\": [\"{GOOGLE}\"], \"maxAgeHours\": 1, \"maxAgeHours\": 0}}")
                .into_bytes(),
            INVALID,
        ),
        ("10,000 levels of nesting", nested.into_bytes(), INVALID),
    ] {
        c.body(rule, body, expect).await;
    }

    // Content types (RFC 9110: the media type is case-insensitive, parameters allowed).
    let valid = json!({"liUrls": [GOOGLE], "maxAgeHours": 24}).to_string();
    for (rule, content_type, expect) in [
        (
            "no content type",
            None,
            (415, Some("unsupported_media_type")),
        ),
        (
            "text/plain",
            Some("text/plain"),
            (415, Some("unsupported_media_type")),
        ),
        (
            "a form",
            Some("application/x-www-form-urlencoded"),
            (415, Some("unsupported_media_type")),
        ),
        (
            "JSON with a charset",
            Some("application/json; charset=utf-8"),
            OK,
        ),
        ("JSON in capitals", Some("Application/JSON"), OK),
        ("a +json type", Some("application/vnd.api+json"), OK),
    ] {
        let reply = c
            .send(&[("x-api-key", &key)], content_type, valid.clone().into())
            .await;
        c.record(rule, &reply, expect);
    }

    // Body size (spec 8): 102,400 bytes is the limit, with a Content-Length or chunked.
    let padded = |total: usize| {
        let mut body = valid.clone();
        body.insert_str(1, &" ".repeat(total - valid.len()));
        body
    };
    let chunked = |body: String| {
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> = body
            .into_bytes()
            .chunks(8192)
            .map(|chunk| Ok(chunk.to_vec()))
            .collect();
        reqwest::Body::wrap_stream(futures::stream::iter(chunks))
    };
    let too_large = (413, Some("body_too_large"));
    c.body("a body of exactly 102,400 bytes", padded(102_400), OK)
        .await;
    c.body("a body of 102,401 bytes", padded(102_401), too_large)
        .await;
    c.body("chunked, 102,400 bytes", chunked(padded(102_400)), OK)
        .await;
    c.body(
        "chunked, 102,401 bytes",
        chunked(padded(102_401)),
        too_large,
    )
    .await;

    // Auth header forms (spec 5).
    let bearer = format!("Bearer {key}");
    let lower = format!("bearer {key}");
    let upper = format!("BEARER {key}");
    let spaced = format!("Bearer    {key}   ");
    let padded_key = format!("  {key}  ");
    let mut wrong = key.clone();
    wrong.pop();
    wrong.push(if key.ends_with('A') { 'B' } else { 'A' });
    let unauthorized = |code| (401, Some(code));
    for (rule, headers, expect) in [
        (
            "Authorization: Bearer",
            vec![("authorization", bearer.as_str())],
            OK,
        ),
        (
            "scheme in lower case",
            vec![("authorization", lower.as_str())],
            OK,
        ),
        (
            "scheme in capitals",
            vec![("authorization", upper.as_str())],
            OK,
        ),
        (
            "extra whitespace",
            vec![("authorization", spaced.as_str())],
            OK,
        ),
        ("x-api-key", vec![("x-api-key", key.as_str())], OK),
        ("X-API-Key", vec![("X-API-Key", key.as_str())], OK),
        ("api-key", vec![("api-key", key.as_str())], OK),
        (
            "x-company-data-api-key",
            vec![("x-company-data-api-key", key.as_str())],
            OK,
        ),
        (
            "a key padded with spaces",
            vec![("x-api-key", padded_key.as_str())],
            OK,
        ),
        (
            "two headers that agree",
            vec![
                ("x-api-key", key.as_str()),
                ("authorization", bearer.as_str()),
            ],
            OK,
        ),
        ("no key", vec![], unauthorized("missing_api_key")),
        (
            "an empty x-api-key",
            vec![("x-api-key", "")],
            unauthorized("missing_api_key"),
        ),
        (
            "Bearer without a key",
            vec![("authorization", "Bearer")],
            unauthorized("missing_api_key"),
        ),
        (
            "Basic scheme",
            vec![("authorization", "Basic dXNlcjpwYXNz")],
            unauthorized("malformed_authorization"),
        ),
        (
            "a key without a scheme",
            vec![("authorization", key.as_str())],
            unauthorized("malformed_authorization"),
        ),
        (
            "a wrong key",
            vec![("x-api-key", wrong.as_str())],
            unauthorized("invalid_api_key"),
        ),
        (
            "not a key at all",
            vec![("x-api-key", "hello")],
            unauthorized("invalid_api_key"),
        ),
        (
            "two headers that disagree",
            vec![("x-api-key", key.as_str()), ("api-key", wrong.as_str())],
            unauthorized("conflicting_api_keys"),
        ),
    ] {
        let reply = c
            .send(&headers, Some("application/json"), valid.clone().into())
            .await;
        c.record(rule, &reply, expect);
    }

    // The URL pattern (spec 2.1), both sides of each part: `https://`, an optional one-label subdomain of
    // [a-z0-9-], the network domain, `/`, company|school|showcase, `/`, at least one more character.
    for (url, expect) in [
        ("https://linkedin.com/company/google", OK),
        ("https://www.linkedin.com/company/google", OK),
        ("https://uk.linkedin.com/company/google", OK),
        ("https://a-1.linkedin.com/company/google", OK),
        ("https://0.linkedin.com/company/google", OK),
        ("https://www.linkedin.com/school/stanford-university", OK),
        ("https://www.linkedin.com/showcase/google-cloud", OK),
        ("https://www.linkedin.com/company/g", OK),
        ("https://www.linkedin.com/company/google/", OK),
        ("https://www.linkedin.com/company/google/about/", OK),
        (
            "https://www.linkedin.com/company/google?trk=public_profile",
            OK,
        ),
        ("http://www.linkedin.com/company/google", INVALID),
        ("ftp://www.linkedin.com/company/google", INVALID),
        ("www.linkedin.com/company/google", INVALID),
        ("https://WWW.linkedin.com/company/google", INVALID),
        ("https://w_w.linkedin.com/company/google", INVALID),
        ("https://a.b.linkedin.com/company/google", INVALID),
        ("https://.linkedin.com/company/google", INVALID),
        ("https://www.linkedin.co/company/google", INVALID),
        ("https://evil-linkedin.com/company/google", INVALID),
        ("https://www.linkedin.com.evil.com/company/google", INVALID),
        ("https://www.linkedin.com:443/company/google", INVALID),
        ("https://user@www.linkedin.com/company/google", INVALID),
        ("https://www.linkedin.com/in/someone", INVALID),
        ("https://www.linkedin.com/Company/google", INVALID),
        ("https://www.linkedin.com/companies/google", INVALID),
        ("https://www.linkedin.com/company/", INVALID),
        ("https://www.linkedin.com/company", INVALID),
        ("", INVALID),
    ] {
        c.json(
            &format!("URL {url:?}"),
            &json!({ "liUrls": [url], "maxAgeHours": 24 }),
            expect,
        )
        .await;
    }

    assert!(
        c.failures.is_empty(),
        "{} of {} cases failed:\n{}",
        c.failures.len(),
        c.cases,
        c.failures.join("\n")
    );
    assert_eq!(c.cases, 100, "a case was skipped");
}
