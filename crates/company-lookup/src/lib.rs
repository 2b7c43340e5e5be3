//! One company-data request, start to finish, without HTTP: the core an embedding service calls.
//!
//! For a validated [`CompanyRequest`] on an account, [`LookupService::run`]:
//! 1. collapses duplicate pages (after normalization) so each is fetched and billed once;
//! 2. with a window above zero, reads the snapshots fetched inside it. When every page has one, the request is
//!    billed in one step (`Ledger::charge`: the most it could cost must be covered, what it returned is charged)
//!    and answered: one snapshot read and one ledger write, nothing held;
//! 3. otherwise holds the most the request can cost (each distinct page at [`price_per_company`]), or refuses
//!    with [`LookupError::Ledger`] (`LedgerError::InsufficientCredits`) before any fetch, and fetches every other
//!    page live (if the account's cap on live lookups in flight admits them, else
//!    [`LookupError::TooManyLiveLookups`]), concurrently, each bounded by the live time-out, storing each as a new
//!    snapshot under the requested and the resolved URL; a page another server is fetching already is awaited
//!    instead of fetched twice. The parts the request includes (`include`: the job count) are fetched after
//!    their page, under its deadline, and stored with it; a stored snapshot answers a request that includes a
//!    part only when it carries that part;
//! 4. answers every input position in order: a record (`source` `live` or `stored`, `fetched_at`) or an
//!    `unresolved` entry with a code;
//! 5. charges only the distinct pages that resolved, in one ledger step. If the caller goes away first, the
//!    hold is released and nothing is charged.
//!
//! When no page resolved and at least one timed out, the outcome is [`LookupError::TimedOut`] (HTTP 504).
//! [`LookupService::run_bulk`] serves a part of a bulk job the same way, its live fetches behind synchronous
//! requests' and its charge named so that it is paid once however often the part runs.
//! [`LookupService::history`] answers a page's points and changes over time, billed like one stored record.
//! [`reparse_stored`] parses every stored page again after a parser upgrade.
//! A test-mode tenant's requests ([`Caller::tenant`], a test key's) are handed to the sandbox service set
//! with [`LookupService::with_test_mode`] (other pages, other snapshots, never charged), so that no test key reaches
//! the origin; without one they are refused with [`LookupError::TestModeUnavailable`].
//! Not here: parsing HTTP, authentication, the error-to-status mapping.
#![deny(missing_docs)]

mod answer;
mod history;
mod holds;
mod live;
mod noted;
mod outcome;
mod parts;
mod reparse;
mod search;
mod service;
mod settings;
mod stored;

pub use api_contract::CompanyRequest;
/// Whose data a [`Caller`] works on, re-exported so that an embedder names it without depending on
/// `company-model`.
pub use company_model::{Mode, Tenant};
pub use credit_ledger::price_per_company;
pub use history::HistoryOutcome;
pub use outcome::{LookupError, LookupOutcome, PageOutcome};
pub use reparse::{ReparseSummary, reparse_stored};
pub use search::{SEARCH_RETRY_AFTER, SEARCH_TURNS, search_cap_key};
pub use service::LookupService;
pub use settings::{
    Caller, DEFAULT_HISTORY_RETENTION, DEFAULT_LIVE_LOOKUPS_PER_ACCOUNT, DEFAULT_SEARCH_TIME_LIMIT,
    DEFAULT_SEARCHES_PER_ACCOUNT, LookupSettings,
};
