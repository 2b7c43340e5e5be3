//! End-to-end: the real binary over HTTP on loopback, real SQLite files, captured pages from real origins.

mod abuse;
mod account_events;
mod auth;
mod billing;
mod cli;
mod conformance;
mod crash;
mod dashboard;
mod docs;
mod enrich;
mod faults;
mod freshness;
mod history;
mod hostile;
mod idempotency;
mod job_count;
mod jobs;
mod limits;
mod links;
mod mcp;
mod openapi;
mod operations;
mod postgres;
mod requests;
mod resolve;
mod search;
mod selection;
mod strangers;
mod test_mode;
mod unresolved;
mod watches;

use serde_json::json;

/// A request body for these URLs.
pub(crate) fn urls(urls: &[&str]) -> serde_json::Value {
    json!({ "liUrls": urls })
}

pub(crate) const GOOGLE: &str = "https://www.linkedin.com/company/google";
pub(crate) const AUDIENSE: &str = "https://www.linkedin.com/company/audiense";

/// The harness runs the binary Cargo built for these tests, not one of its own making.
#[test]
fn the_harness_runs_the_binary_cargo_built() {
    assert_eq!(
        e2e_harness::binary(),
        std::path::Path::new(env!("CARGO_BIN_EXE_company-data"))
    );
}
