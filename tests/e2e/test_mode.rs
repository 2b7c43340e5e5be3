//! Test-mode keys (`cdk_test_…`, docs/api.md "Test mode"): answered from the sandbox's pages through the same
//! parser, validation and headers, never from the origin, never charged; their jobs, endpoints and snapshots
//! apart from the live key's. The origin is a real server on loopback that counts every request it gets.

use std::time::Duration;

use e2e_harness::receiver::WebhookReceiver;
use e2e_harness::{Service, ServiceOptions, TestOrigin};
use reqwest::Method;
use serde_json::{Value, json};

use crate::dashboard::{Browser, PASSWORD};
use crate::jobs::{submit, wait_until};
use crate::openapi::assert_valid;
use crate::{AUDIENSE, GOOGLE, urls};

const JOBS: &str = "/v1/network/company-data/jobs";
const ACME_SANDBOX: &str = "https://www.linkedin.com/company/acme-sandbox";

/// A service on a counting origin, without a per-key rate (200 requests go at once); a live key and a test key
/// of the account `acme`.
fn service(origin: &TestOrigin) -> (Service, String, String) {
    service_with(origin, vec!["--key-rate", "0"])
}

/// [`service`] started with `args`.
fn service_with(origin: &TestOrigin, args: Vec<&'static str>) -> (Service, String, String) {
    let service = Service::start(ServiceOptions {
        origin: origin.base.clone(),
        args,
        ..ServiceOptions::default()
    });
    let live = service.key("acme", "5");
    let test = service.test_key("acme");
    (service, live, test)
}

async fn account(service: &Service, key: &str) -> Value {
    let (reply, _) = service
        .send(Method::GET, "/v1/account", key, None, None)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.json);
    reply.json
}

#[tokio::test]
async fn a_test_keys_200_requests_never_reach_the_origin_and_charge_nothing() {
    let origin = TestOrigin::start().await;
    let (service, live, test) = service(&origin);
    let document = service.get("/openapi.json").await.json;
    let listed = service.cli(&["keys", "list"]);
    assert!(
        listed
            .lines()
            .any(|line| line.contains("cdk_test_") && line.contains(" test ")),
        "{listed}"
    );

    // 200 live-window requests of a test key, 20 at a time, over the sandbox's pages and one it does not have.
    let pages = [
        GOOGLE,
        AUDIENSE,
        ACME_SANDBOX,
        "https://www.linkedin.com/company/nobody-here",
    ];
    let mut answers = Vec::new();
    for round in 0..10 {
        let batch = (0..20).map(|n| {
            let page = pages[(round * 20 + n) % pages.len()];
            let (service, test) = (&service, &test);
            async move { (page, service.post(test, &urls(&[page])).await) }
        });
        answers.extend(futures::future::join_all(batch).await);
    }
    assert_eq!(answers.len(), 200);
    assert_eq!(origin.hits_total(), 0, "a test key reached the origin");
    for (page, reply) in &answers {
        assert_eq!(reply.status, 200, "{page}: {}", reply.json);
        assert_valid(&document, "CompanyResponse", &reply.json);
        // A live key's headers, telling what was spent: nothing, from the test balance, which never moves.
        assert_eq!(reply.header("x-credits-charged"), Some("0"));
        assert_eq!(reply.header("x-credits-remaining"), Some("1000000"));
    }
    let (_, google) = answers.iter().find(|(p, _)| *p == GOOGLE).expect("google");
    let (_, acme) = answers
        .iter()
        .find(|(p, _)| *p == ACME_SANDBOX)
        .expect("acme");
    let (_, nobody) = answers
        .iter()
        .find(|(p, _)| p.ends_with("nobody-here"))
        .expect("nobody");
    assert_eq!(google.json["results"][0]["company_name"], "Google");
    assert_eq!(acme.json["results"][0]["company_name"], "Acme Sandbox");
    assert_eq!(acme.json["results"][0]["domain"], "acme-sandbox.example");
    assert_eq!(nobody.json["unresolved"][0]["error"], "not_found");

    // `include` is answered from the sandbox too: its job search, not the origin's.
    let included = service
        .post(
            &test,
            &json!({ "liUrls": [GOOGLE, ACME_SANDBOX], "include": ["job_count"] }),
        )
        .await;
    assert_eq!(included.status, 200, "{}", included.json);
    for result in included.json["results"].as_array().expect("results") {
        assert_eq!(result["job_count"], 2000, "{result}");
        assert_eq!(result["provenance"]["job_count"]["error"], Value::Null);
    }
    assert_eq!(
        origin.hits_total(),
        0,
        "a test key's job search reached the origin"
    );

    // Nothing spent: the live account's balance and usage are as they were; its test mode shows the test balance.
    let live_account = account(&service, &live).await;
    assert_eq!(live_account["balance"], 5);
    assert_eq!(live_account["usage_this_month"]["requests"], 0);
    let test_account = account(&service, &test).await;
    assert_eq!(test_account["name"], "acme (test)");
    assert_eq!(
        test_account["account_id"], live_account["account_id"],
        "one account, seen in test mode"
    );
    assert_eq!(test_account["balance"], 1_000_000);

    // The same page through a live key: fetched from the origin, charged, and the same record as test mode's.
    let live_google = service.post(&live, &urls(&[GOOGLE])).await;
    assert_eq!(live_google.status, 200);
    assert_eq!(origin.hits_total(), 1);
    assert_eq!(live_google.header("x-credits-charged"), Some("1"));
    for field in ["company_name", "follower_count", "website", "industry"] {
        assert_eq!(
            live_google.json["results"][0][field], google.json["results"][0][field],
            "{field}"
        );
    }
}

#[tokio::test]
async fn test_and_live_data_never_mix() {
    let origin = TestOrigin::start().await;
    let (service, live, test) = service(&origin);

    // A test job: done from the sandbox; the live key cannot see it, nor the test key the live key's job.
    let job = submit(&service, &test, &json!({"liUrls": [GOOGLE, ACME_SANDBOX]})).await;
    assert_eq!(job.status, 202, "{}", job.json);
    let test_job = job.json["id"].as_str().expect("id").to_owned();
    let done = wait_until(&service, &test, &test_job, "done", Duration::from_mins(1)).await;
    assert_eq!(
        (done["resolved"].as_u64(), done["credits_charged"].as_f64()),
        (Some(2), Some(0.0))
    );
    let live_job = submit(&service, &live, &json!({"liUrls": [AUDIENSE]})).await;
    let live_job = live_job.json["id"].as_str().expect("id").to_owned();
    for (key, other) in [(&live, &test_job), (&test, &live_job)] {
        let (seen, _) = service
            .send(Method::GET, &format!("{JOBS}/{other}"), key, None, None)
            .await;
        assert_eq!(
            (seen.status, seen.json["error"].as_str()),
            (404, Some("job_not_found")),
            "{other}"
        );
    }
    let (listed, _) = service.send(Method::GET, JOBS, &live, None, None).await;
    let ids: Vec<&str> = listed.json["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .filter_map(|j| j["id"].as_str())
        .collect();
    assert_eq!(ids, [live_job.as_str()]);
    wait_until(&service, &live, &live_job, "done", Duration::from_mins(1)).await;
    assert_eq!(
        origin.hits_total(),
        1,
        "only the live job's page was fetched"
    );

    // Webhook endpoints: the live key's are not the test key's.
    let (created, _) = service
        .send(
            Method::POST,
            "/v1/webhook-endpoints",
            &live,
            Some(&json!({"url": "https://hooks.example/cd", "events": ["job.finished"]})),
            None,
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.json);
    let (theirs, _) = service
        .send(Method::GET, "/v1/webhook-endpoints", &test, None, None)
        .await;
    assert_eq!(theirs.json["endpoints"], json!([]));

    // Snapshots: the live key looked Audiense up; the test key has no history of it, and its history of Google
    // is its own lookups'.
    let history = |page: &str| format!("/v1/network/company-data/history?liUrl={page}");
    let (none, _) = service
        .send(Method::GET, &history(AUDIENSE), &test, None, None)
        .await;
    assert_eq!(none.status, 404, "{}", none.json);
    let (own, _) = service
        .send(Method::GET, &history(GOOGLE), &test, None, None)
        .await;
    assert_eq!(own.status, 200, "{}", own.json);

    // Resolving reads the network beyond the sandbox: refused, nothing charged.
    let (resolve, _) = service
        .send(
            Method::POST,
            "/v1/network/company-data/resolve",
            &test,
            Some(&json!({"queries": [{"domain": "google.com"}]})),
            None,
        )
        .await;
    assert_eq!(
        (resolve.status, resolve.json["error"].as_str()),
        (403, Some("not_in_test_mode")),
        "{}",
        resolve.json
    );
    assert_eq!(origin.hits_total(), 1);
}

/// The dashboard's Try it refuses a test key what the API refuses it, with the API's status: resolving a domain
/// reads the network beyond the sandbox (403), and nothing is fetched.
#[tokio::test]
async fn try_it_refuses_a_test_key_a_domain_as_the_api_does() {
    let origin = TestOrigin::start().await;
    let (service, _live, _test) = service(&origin);
    service.create_sign_in("ada@example.com", PASSWORD, &["--account", "acme"]);
    let mut browser = Browser::new(&service);
    browser.sign_in("ada@example.com", PASSWORD).await;
    // The test key, labelled in the picker by its name and masked `cdk_test_` key.
    let refused = browser
        .try_it("(cdk_test_", "domain", "google.com", "0")
        .await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    refused.says(&["not available to test-mode keys", "Pick a live key"]);
    assert_eq!(origin.hits_total(), 0, "nothing fetched");
}

/// A test key's events are signed with its test mode's own secret (`webhooks secret --test`), so a receiver of
/// test events can verify them and never holds the live secret.
#[tokio::test]
async fn a_test_keys_events_are_signed_with_test_modes_own_secret() {
    let origin = TestOrigin::start().await;
    let (service, _live, test) =
        service_with(&origin, vec!["--key-rate", "0", "--webhook-allow-private"]);
    let receiver = WebhookReceiver::start(0).await;
    let (created, _) = service
        .send(
            Method::POST,
            "/v1/webhook-endpoints",
            &test,
            Some(&json!({"url": receiver.url, "events": ["job.finished"]})),
            None,
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.json);
    let id = created.json["id"].as_str().expect("id");
    let (pinged, _) = service
        .send(
            Method::POST,
            &format!("/v1/webhook-endpoints/{id}/ping"),
            &test,
            None,
            None,
        )
        .await;
    assert_eq!(pinged.status, 202, "{}", pinged.json);
    let got = e2e_harness::eventually(
        Duration::from_secs(30),
        "the ping never arrived",
        || async { receiver.received().pop() },
    )
    .await;

    let signature = got.header("company-data-signature").expect("signed");
    let now = jiff::Timestamp::now().as_second();
    let verifies = |secret: &str| {
        account_webhooks::signature::verify(secret.trim(), signature, got.body.as_bytes(), now, 300)
    };
    let test_secret = service.cli(&["webhooks", "secret", "--account", "acme", "--test"]);
    let live_secret = service.cli(&["webhooks", "secret", "--account", "acme"]);
    assert_ne!(test_secret, live_secret);
    assert!(verifies(&test_secret), "signed with test mode's secret");
    assert!(!verifies(&live_secret), "not with the live one");
}
