//! Embedding the resolver: from a website domain or a company name to its page, on the SQLite stores, without
//! HTTP.
//!
//! `cargo run -p company-resolve --example resolve_domains -- ORIGIN [DB]`
//!
//! ORIGIN is where the network's pages come from (`tests/fixtures/origin`, a folder of captured pages, or
//! `https://www.linkedin.com`); DB the SQLite file (a temporary one by default). The example grants an account 10
//! credits, resolves `audiense.com` and a domain nobody has live, then the name `Audiense` in the United Kingdom
//! with a freshness window (answered from the page the first request stored), and prints each answer, its method,
//! confidence and evidence, and what each request cost.
#![allow(clippy::print_stdout, clippy::print_stderr)] // an example reports on stdout

use std::sync::Arc;
use std::time::Duration;

use api_contract::ResolveRequest;
use company_lookup::{Caller, LookupService, LookupSettings};
use company_resolve::{Resolver, ResolverSettings, SiteSettings};
use credit_ledger::{Credits, Ledger, SqliteLedger};
use page_scraper::{Fetcher, FetcherSettings, Origin};
use page_url::NetworkDomain;
use snapshot_cache::SqliteSnapshotStore;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let origin = args.next().ok_or("usage: resolve_domains ORIGIN [DB]")?;
    let temporary = tempfile::tempdir()?;
    let db = args
        .next()
        .map_or_else(|| temporary.path().join("resolve.db"), Into::into);

    // One SQLite file for the stores; the resolver finds stored pages and keeps its answers in the snapshots'.
    let pool = sqlite_pool::SqlitePool::open(&db).await?;
    let ledger = Arc::new(SqliteLedger::with_pool(pool.clone()).await?);
    let snapshots = Arc::new(SqliteSnapshotStore::with_pool(pool).await?);
    let domain = NetworkDomain::default();
    let fetcher = Fetcher::new(FetcherSettings::new(
        Origin::parse(&origin)?,
        domain.clone(),
    ))?;
    let lookup = Arc::new(LookupService::new(
        fetcher,
        snapshots.clone(),
        ledger.clone(),
        LookupSettings::default(),
    ));
    let settings = ResolverSettings {
        site: SiteSettings {
            timeout: Duration::from_secs(3),
            ..SiteSettings::default()
        },
        ..ResolverSettings::default()
    };
    let resolver = Resolver::new(lookup, snapshots, domain, settings)?;

    let account = ledger.ensure_account("embedded").await?;
    ledger
        .grant(account.id, Credits::parse("10")?, "example")
        .await?;
    let caller = Caller {
        tenant: company_lookup::Tenant::live(account.id),
        key_id: None,
    };
    for body in [
        r#"{"queries": [{"domain": "https://www.audiense.com/about"}, {"domain": "nobody-here.test"}], "maxAgeHours": 0}"#,
        r#"{"queries": [{"name": "Audiense", "location": "United Kingdom"}], "maxAgeHours": 1}"#,
    ] {
        // The same validation, with the same messages, as the HTTP API.
        let request = ResolveRequest::from_json(body.as_bytes())?;
        let outcome = resolver.resolve(caller, &request).await?;
        for result in &outcome.response.results {
            let query = result.query.domain.as_ref().or(result.query.name.as_ref());
            println!(
                "{} -> {} ({}, {})",
                query.map_or("?", String::as_str),
                result.li_url,
                result.method.as_str(),
                result.confidence
            );
            for step in &result.evidence {
                println!("    {}: {}", step.step, step.note);
            }
        }
        for unresolved in &outcome.response.unresolved {
            let query = unresolved
                .query
                .domain
                .as_ref()
                .or(unresolved.query.name.as_ref());
            println!(
                "{}: {}",
                query.map_or("?", String::as_str),
                unresolved.error.as_str()
            );
        }
        println!(
            "charged {} credits, {} left",
            outcome.charged, outcome.remaining
        );
    }
    Ok(())
}
