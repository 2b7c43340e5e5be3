//! One company-data request, start to finish, without HTTP: the core an embedding service calls.
//!
//! For a validated [`CompanyRequest`] on an account, [`LookupService::run`]:
//! 1. collapses duplicate pages (after normalization) so each is fetched and billed once;
//! 2. holds the most the request can cost (each distinct page at [`price_per_company`]), or refuses with
//!    [`LookupError::Ledger`] (`LedgerError::InsufficientCredits`) before any fetch;
//! 3. with a window above zero, serves snapshots fetched inside it; every other page is fetched live (if the
//!    account's cap on live lookups in flight admits them, else [`LookupError::TooManyLiveLookups`]),
//!    concurrently, each bounded by the live time-out, and stored as a new snapshot under the requested and the
//!    resolved URL;
//! 4. answers every input position in order: a record (`source` `live` or `stored`, `fetched_at`) or an
//!    `unresolved` entry with a code;
//! 5. charges only the distinct pages that resolved, in one ledger transaction. If the caller goes away first,
//!    the hold is released and nothing is charged.
//!
//! When no page resolved and at least one timed out, the outcome is [`LookupError::TimedOut`] (HTTP 504).
//! [`reparse_stored`] parses every stored page again after a parser upgrade.
//! Not here: parsing HTTP, authentication, the error-to-status mapping.
#![deny(missing_docs)]

mod live_limit;
mod reparse;
mod service;

pub use company_model::CompanyRequest;
pub use credit_ledger::price_per_company;
pub use reparse::{ReparseSummary, reparse_stored};
pub use service::{
    Caller, DEFAULT_LIVE_LOOKUPS_PER_ACCOUNT, LookupError, LookupOutcome, LookupService,
    LookupSettings,
};
