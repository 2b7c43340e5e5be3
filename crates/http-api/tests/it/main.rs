//! The API library on real parts (SQLite stores in a temporary file, the captured pages as the origin), called
//! as a host calls it: `Api::handle` with a request, no server in between.

mod document;

use std::sync::Arc;

use api_contract::{MAX_AGE_HOURS, MAX_URLS};
use api_keys::{ApiKeys, KeyError, SqliteKeyStore, VerifiedKey};
use bytes::Bytes;
use company_lookup::{LookupService, LookupSettings};
use credit_ledger::{Credits, LIVE_PRICE, Ledger, STORED_PRICE, SqliteLedger};
use http_api::{Api, ApiSettings, Authenticator};
use http_body_util::{BodyExt, Full};
use page_scraper::{Fetcher, FetcherSettings, Origin};
use page_url::NetworkDomain;
use serde_json::Value;
use snapshot_cache::SqliteSnapshotStore;

struct World {
    _dir: tempfile::TempDir,
    lookup: Arc<LookupService>,
    keys: Arc<ApiKeys>,
    ledger: Arc<SqliteLedger>,
}

async fn world() -> World {
    let dir = tempfile::tempdir().expect("temp dir");
    let pool = sqlite_pool::SqlitePool::open(&dir.path().join("api.db"))
        .await
        .expect("opens");
    let origin = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/origin");
    let ledger = Arc::new(SqliteLedger::with_pool(pool.clone()).await.expect("ledger"));
    let lookup = Arc::new(LookupService::new(
        Fetcher::new(FetcherSettings::new(
            Origin::parse(origin).expect("a folder"),
            NetworkDomain::default(),
        ))
        .expect("fetcher"),
        Arc::new(
            SqliteSnapshotStore::with_pool(pool.clone())
                .await
                .expect("snapshots"),
        ),
        ledger.clone(),
        LookupSettings::default(),
    ));
    let keys = Arc::new(ApiKeys::new(Arc::new(
        SqliteKeyStore::with_pool(pool).await.expect("keys"),
    )));
    World {
        _dir: dir,
        lookup,
        keys,
        ledger,
    }
}

impl World {
    /// The API over this world's lookup, checking keys with `authenticator`.
    fn api(&self, authenticator: Arc<dyn Authenticator>) -> Api {
        Api::new(
            Arc::clone(&self.lookup),
            authenticator,
            NetworkDomain::default(),
            ApiSettings::default(),
        )
    }
}

/// Sends a request; returns the status, the headers and the body as JSON.
async fn send(api: &Api, request: http::Request<Full<Bytes>>) -> (u16, http::HeaderMap, Value) {
    let response = api.handle(request).await;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    (
        status,
        headers,
        serde_json::from_slice(&body).unwrap_or(Value::Null),
    )
}

fn post(key: Option<&str>, body: &str) -> http::Request<Full<Bytes>> {
    let mut request =
        http::Request::post("/v1/network/company-data").header("content-type", "application/json");
    if let Some(key) = key {
        request = request.header("authorization", format!("Bearer {key}"));
    }
    request
        .body(Full::new(Bytes::from(body.to_owned())))
        .expect("a request")
}

const GOOGLE: &str = r#"{"liUrls": ["https://www.linkedin.com/company/google"]}"#;

#[tokio::test]
async fn keys_billing_and_errors_over_the_real_parts() {
    let world = world().await;
    let api = world.api(world.keys.clone());
    let (status, headers, body) = send(&api, post(None, GOOGLE)).await;
    assert_eq!(
        (status, &body["error"]),
        (401, &Value::from("missing_api_key"))
    );
    assert!(headers.contains_key("www-authenticate"));

    let account = world.ledger.ensure_account("acme").await.expect("account");
    world
        .ledger
        .grant(account.id, Credits::parse("1.5").expect("amount"), "test")
        .await
        .expect("granted");
    let (key, _) = world.keys.create(account.id, None).await.expect("a key");
    let (status, headers, body) = send(&api, post(Some(key.expose()), GOOGLE)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"][0]["company_name"], "Google");
    assert_eq!(
        headers["x-credits-charged"],
        LIVE_PRICE.to_string().as_str()
    );
    assert_eq!(headers["x-credits-remaining"], "0.5");

    // The ledger's refusal passes through the lookup to the one mapping: 402 with both amounts.
    let (status, _, body) = send(&api, post(Some(key.expose()), GOOGLE)).await;
    assert_eq!(
        (status, &body["error"]),
        (402, &Value::from("insufficient_credits"))
    );
    let message = body["message"].as_str().expect("a message");
    assert!(
        message.contains("the account has 0.5 available"),
        "{message}"
    );
}

/// Refuses every key: the host decides who may call.
#[derive(Debug)]
struct NobodyMayCall;

#[async_trait::async_trait]
impl Authenticator for NobodyMayCall {
    async fn authenticate(
        &self,
        _presented: &str,
        _client: Option<std::net::IpAddr>,
    ) -> Result<VerifiedKey, KeyError> {
        Err(KeyError::Invalid)
    }
}

#[tokio::test]
async fn the_authenticator_passed_in_decides_and_a_missing_key_never_reaches_it() {
    let world = world().await;
    let api = world.api(Arc::new(NobodyMayCall));
    let (status, _, body) = send(&api, post(Some("cdk_anything"), GOOGLE)).await;
    assert_eq!(
        (status, &body["error"]),
        (401, &Value::from("invalid_api_key"))
    );
    let (status, _, body) = send(&api, post(None, GOOGLE)).await;
    assert_eq!(
        (status, &body["error"]),
        (401, &Value::from("missing_api_key"))
    );
}

#[tokio::test]
async fn the_openapi_document_states_the_owners_bounds_and_prices() {
    let world = world().await;
    let api = world.api(world.keys.clone());
    let request = http::Request::get("/openapi.json")
        .body(Full::new(Bytes::new()))
        .expect("a request");
    let (status, _, document) = send(&api, request).await;
    assert_eq!(status, 200);
    let request_schema = &document["components"]["schemas"]["CompanyRequest"]["properties"];
    assert_eq!(request_schema["liUrls"]["maxItems"], MAX_URLS);
    assert_eq!(request_schema["maxAgeHours"]["maximum"], MAX_AGE_HOURS);
    let description = document["info"]["description"].as_str().expect("text");
    for price in [LIVE_PRICE, STORED_PRICE] {
        assert!(
            description.contains(&format!("({price} credit")),
            "{price}: {description}"
        );
    }
    assert!(description.contains("25 s on this server"), "{description}");
}

/// The document's `paths` and the dispatch come from one table: every path answers a method the document does
/// not list for it with 405 and exactly the document's methods in `Allow` (`HEAD` beside `GET`); the jobs',
/// the watches' (and webhook endpoints' and the event feed's) and the resolver's paths are 404 on an API
/// without them.
#[tokio::test]
async fn every_documented_path_refuses_other_methods_with_the_documents_allow() {
    let world = world().await;
    let api = world.api(world.keys.clone());
    let document: Value = serde_json::from_slice(&api.openapi()).expect("JSON");
    let paths = document["paths"].as_object().expect("paths");
    assert!(paths.len() >= 10, "{paths:?}");
    for (path, item) in paths {
        let mut methods: Vec<String> = item
            .as_object()
            .expect("path item")
            .keys()
            .filter(|key| *key != "parameters")
            .map(|method| method.to_ascii_uppercase())
            .collect();
        if methods.iter().any(|m| m == "GET") {
            methods.push("HEAD".to_owned());
        }
        let concrete = path.replace("{id}", "7");
        let request = http::Request::put(concrete.as_str())
            .body(Full::new(Bytes::new()))
            .expect("a request");
        let (status, headers, body) = send(&api, request).await;
        if path.contains("/jobs")
            || path.contains("/watches")
            || path.contains("/webhook-endpoints")
            || path.ends_with("/events")
            || path.ends_with("/resolve")
        {
            assert_eq!(
                (status, &body["error"]),
                (404, &Value::from("not_found")),
                "{path}"
            );
            continue;
        }
        assert_eq!(status, 405, "{path}: {body}");
        let mut allowed: Vec<String> = headers
            .get("allow")
            .and_then(|v| v.to_str().ok())
            .expect("Allow")
            .split(", ")
            .map(str::to_owned)
            .collect();
        allowed.sort();
        methods.sort();
        assert_eq!(allowed, methods, "{path}");
    }
}

/// Every record the parser makes of a captured page — the repository's origin pages and, when `../shared` is
/// beside it, every captured page there that is a company page — validates against the published
/// `CompanyResult` schema, derived from the record's Rust type.
#[tokio::test]
async fn every_parsed_record_validates_against_the_published_schema() {
    let world = world().await;
    let api = world.api(world.keys.clone());
    let document: Value = serde_json::from_slice(&api.openapi()).expect("JSON");
    let root = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$ref": "#/components/schemas/CompanyResult",
        "components": document["components"],
    });
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&root)
        .expect("a valid schema");
    let root_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut pages: Vec<std::path::PathBuf> = Vec::new();
    for dir in ["tests/fixtures/origin/company", "../shared/fixtures/pages"] {
        if let Ok(entries) = std::fs::read_dir(root_dir.join(dir)) {
            pages.extend(
                entries
                    .filter_map(Result::ok)
                    .map(|entry| entry.path())
                    .filter(|path| path.extension().is_some_and(|e| e == "html")),
            );
        }
    }
    let domain = NetworkDomain::default();
    let mut validated = 0;
    for path in &pages {
        let html = std::fs::read_to_string(path).expect("a page");
        // The slug does not change what is parsed; the name says which company it is.
        let page = page_url::PageUrl::from_path("/company/captured", &domain).expect("a page URL");
        let Ok(record) = page_scraper::parse_page(&html, &page, &domain) else {
            continue; // a sign-in wall, a block, a page of another kind
        };
        let mut result = serde_json::to_value(&record).expect("JSON");
        let members = result.as_object_mut().expect("an object");
        members.insert("original_li_url".into(), Value::from(page.as_str()));
        members.insert("source".into(), Value::from("live"));
        members.insert("fetched_at".into(), Value::from("2026-11-25T00:00:00Z"));
        let errors: Vec<String> = validator
            .iter_errors(&result)
            .map(|error| format!("{error} at {}", error.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
        validated += 1;
    }
    assert!(
        validated >= 2,
        "only {validated} of {} captured pages parsed",
        pages.len()
    );
}
