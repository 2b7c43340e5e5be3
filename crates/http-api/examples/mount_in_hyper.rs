//! Mounting the company-data API inside an existing hyper server, under `/company-data`, beside the host's own
//! routes.
//!
//! `cargo run -p http-api --example mount_in_hyper -- ORIGIN`
//!
//! ORIGIN is where pages come from (e.g. the folder `tests/fixtures/origin`). The example starts the host on a
//! loopback port, calls its own route and the mounted API with a key it creates, prints what came back, and
//! stops. In a real host, the `handler` below is the part to copy.
#![allow(clippy::print_stdout, clippy::print_stderr)] // an example reports on stdout

use std::sync::Arc;

use api_keys::{ApiKeys, SqliteKeyStore};
use company_lookup::{LookupService, LookupSettings};
use credit_ledger::{Credits, Ledger, SqliteLedger};
use http_api::{Api, ApiSettings, strip_path_prefix};
use page_scraper::{Fetcher, FetcherSettings, Origin};
use page_url::NetworkDomain;
use snapshot_cache::SqliteSnapshotStore;

/// Where the host mounts the API.
const PREFIX: &str = "/company-data";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let origin = std::env::args()
        .nth(1)
        .ok_or("usage: mount_in_hyper ORIGIN")?;
    let dir = tempfile::tempdir()?;
    let pool = sqlite_pool::SqlitePool::open(&dir.path().join("host.db")).await?;
    let ledger = Arc::new(SqliteLedger::with_pool(pool.clone()).await?);
    let keys = Arc::new(ApiKeys::new(Arc::new(
        SqliteKeyStore::with_pool(pool.clone()).await?,
    )));
    let domain = NetworkDomain::default();
    let lookup = Arc::new(LookupService::new(
        Fetcher::new(FetcherSettings::new(
            Origin::parse(&origin)?,
            domain.clone(),
        ))?,
        Arc::new(SqliteSnapshotStore::with_pool(pool).await?),
        ledger.clone(),
        LookupSettings::default(),
    ));
    let api = Api::new(lookup, keys.clone(), domain, ApiSettings::default());

    // The host's own router: its routes first, the API under the prefix, 404 for the rest.
    let handler = move |mut request: http::Request<hyper::body::Incoming>| {
        let api = api.clone();
        async move {
            if request.uri().path() == "/" {
                return http::Response::new(http_serve::full("the host's own page\n"));
            }
            if strip_path_prefix(&mut request, PREFIX) {
                return api.handle(request).await;
            }
            let mut missing = http::Response::new(http_serve::full(Vec::new()));
            *missing.status_mut() = http::StatusCode::NOT_FOUND;
            missing
        }
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(http_serve::serve(
        listener,
        http_serve::ConnectionLimits::default(),
        handler,
        async move {
            let _ = stopped.await;
        },
    ));

    // A customer with credits and a key, as the host's own sign-up would make them.
    let account = ledger.ensure_account("host-customer").await?;
    ledger
        .grant(account.id, Credits::parse("5")?, "example")
        .await?;
    let (key, _) = keys.create(account.id, Some("example")).await?;

    let client = reqwest::Client::new();
    let own = client.get(format!("{base}/")).send().await?.text().await?;
    print!("GET /: {own}");
    let health = client.get(format!("{base}{PREFIX}/healthz")).send().await?;
    println!("GET {PREFIX}/healthz: {}", health.status());
    let answer = client
        .post(format!("{base}{PREFIX}/v1/network/company-data"))
        .bearer_auth(key.expose())
        .json(&serde_json::json!({"liUrls": ["https://www.linkedin.com/company/google"]}))
        .send()
        .await?;
    let status = answer.status();
    let charged = answer
        .headers()
        .get("x-credits-charged")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("?")
        .to_owned();
    let body: serde_json::Value = answer.json().await?;
    println!(
        "POST {PREFIX}/v1/network/company-data: {status}, {} record(s), {} credit(s) charged, company_name {}",
        body["results"].as_array().map_or(0, Vec::len),
        charged,
        body["results"][0]["company_name"]
    );
    let unmounted = client
        .get(format!("{base}/v1/network/company-data"))
        .send()
        .await?;
    println!(
        "GET /v1/network/company-data (outside the prefix): {}",
        unmounted.status()
    );
    drop(stop);
    server.await??;
    Ok(())
}
