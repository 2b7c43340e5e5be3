//! Measures what history costs on disk: `COMPANIES` pages (the captured Google record under other names), each
//! fetched once a day for a year as a daily watch would, its follower count moving every day and one change
//! field (the tagline) changing once a month (never with `--no-changes`). Prints the SQLite file's growth per
//! company per year beyond the one snapshot a page costs without history.
//!
//! `cargo run --release -p snapshot-cache --example history_growth [-- --no-changes]`
#![allow(clippy::print_stdout)] // an example reports on stdout

use company_model::{CompanyRecord, RecordJson};
use page_url::{NetworkDomain, PageUrl};
use snapshot_cache::{Snapshot, SnapshotStore, SqliteSnapshotStore};

const COMPANIES: u64 = 100;
const DAYS: i64 = 365;

/// The database file and its write-ahead log, in bytes.
fn size(path: &std::path::Path) -> u64 {
    let wal = path.with_extension("db-wal");
    [path, wal.as_path()]
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The captured Google page as the parser reads it: a large record (48 locations, 48 affiliated pages).
    let google = PageUrl::parse_submitted(
        "https://www.linkedin.com/company/google",
        &NetworkDomain::default(),
    )?;
    let html = include_str!("../../../tests/fixtures/origin/company/google.html");
    let record: CompanyRecord = page_scraper::parse_page(html, &google, &NetworkDomain::default())?;
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("history.db");
    let store = SqliteSnapshotStore::open(&path).await?;
    let changes = !std::env::args().any(|a| a == "--no-changes");
    let start = jiff::Timestamp::from_second(1_767_225_600)?; // 2026-01-01
    for day in 0..DAYS {
        for company in 0..COMPANIES {
            let url = PageUrl::parse_submitted(
                &format!("https://www.linkedin.com/company/company-{company}"),
                &NetworkDomain::default(),
            )?;
            let mut fetched = record.clone();
            fetched.company_name = Some(format!("Company {company}"));
            fetched.follower_count = record.follower_count.map(|n| n + day as u64 * 17 + company);
            if changes {
                fetched.slogan = Some(format!("Tagline of month {}", day / 30));
            }
            let snapshot = Snapshot {
                url,
                record: RecordJson::from_record(&fetched),
                fetched_at: start + jiff::SignedDuration::from_hours(24 * day),
            };
            store.put(&snapshot, &[], None).await?;
        }
    }
    drop(store);
    // Fold the write-ahead log into the file and drop free pages, as a long-running file settles; then the same
    // without the history tables' rows: the difference is what history costs.
    let conn = sqlite_pool::rusqlite::Connection::open(&path)?;
    conn.execute_batch(
        "PRAGMA wal_checkpoint(TRUNCATE); VACUUM; PRAGMA wal_checkpoint(TRUNCATE);",
    )?;
    let with_history = size(&path);
    let states: i64 = conn.query_row("SELECT count(*) FROM history_states", [], |r| r.get(0))?;
    conn.execute_batch(
        "DELETE FROM history_points; DELETE FROM history_states; VACUUM; PRAGMA wal_checkpoint(TRUNCATE);",
    )?;
    let without = size(&path);
    let per_company = with_history.saturating_sub(without) / COMPANIES;
    println!(
        "{COMPANIES} companies x {DAYS} daily fetches ({states} records kept in history): file {with_history} bytes, \
         {without} without history; history = {per_company} bytes ({:.1} KiB) per company per year",
        per_company as f64 / 1024.0
    );
    Ok(())
}
