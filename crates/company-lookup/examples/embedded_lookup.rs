//! Embedding the core in your own tokio service: the SQLite stores, a fetcher, and lookups run directly on an
//! account, without HTTP.
//!
//! `cargo run -p company-lookup --example embedded_lookup -- ORIGIN [DB]`
//!
//! ORIGIN is where pages come from: `https://www.linkedin.com`, a local HTTP server, or a folder of captured
//! pages (`tests/fixtures/origin`). DB is the SQLite file (a temporary one by default). The example grants an
//! account 10 credits, looks up one page live, then again with a freshness window (served from the snapshot the
//! first lookup stored), and prints what each returned and cost.
#![allow(clippy::print_stdout, clippy::print_stderr)] // an example reports on stdout

use std::sync::Arc;

use company_lookup::{Caller, CompanyRequest, LookupService, LookupSettings};
use credit_ledger::{Credits, Ledger, SqliteLedger};
use page_scraper::{Fetcher, FetcherSettings, Origin};
use page_url::NetworkDomain;
use snapshot_cache::SqliteSnapshotStore;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let origin = args.next().ok_or("usage: embedded_lookup ORIGIN [DB]")?;
    let temporary = tempfile::tempdir()?;
    let db = args
        .next()
        .map_or_else(|| temporary.path().join("lookup.db"), Into::into);

    // One SQLite file for both stores; each migrates its own tables.
    let pool = sqlite_pool::SqlitePool::open(&db).await?;
    let ledger = Arc::new(SqliteLedger::with_pool(pool.clone()).await?);
    let snapshots = Arc::new(SqliteSnapshotStore::with_pool(pool).await?);
    let domain = NetworkDomain::default();
    let fetcher = Fetcher::new(FetcherSettings::new(
        Origin::parse(&origin)?,
        domain.clone(),
    ))?;
    let lookup = LookupService::new(
        fetcher,
        snapshots,
        ledger.clone(),
        LookupSettings::default(),
    );

    let account = ledger.ensure_account("embedded").await?;
    ledger
        .grant(account.id, Credits::parse("10")?, "example")
        .await?;
    let caller = Caller {
        tenant: company_lookup::Tenant::live(account.id),
        key_id: None,
    };
    for body in [
        r#"{"liUrls": ["https://www.linkedin.com/company/google"]}"#,
        r#"{"liUrls": ["https://uk.linkedin.com/company/Google/about/"], "maxAgeHours": 1}"#,
    ] {
        // The same validation, with the same messages, as the HTTP API.
        let request = CompanyRequest::from_json(body.as_bytes(), &domain)?;
        let outcome = lookup.run(caller, &request).await?;
        for result in &outcome.response.results {
            let record = result.record.to_record()?;
            println!(
                "{} -> {} ({:?}, fetched {})",
                result.original_li_url,
                record.company_name.as_deref().unwrap_or("?"),
                result.source,
                result.fetched_at
            );
        }
        for unresolved in &outcome.response.unresolved {
            println!(
                "{} unresolved: {}",
                unresolved.original_li_url, unresolved.message
            );
        }
        println!(
            "charged {} credits, {} left",
            outcome.charged, outcome.remaining
        );
    }
    Ok(())
}
