//! What a lookup answers: a served request ([`LookupOutcome`]), how each page was answered ([`PageOutcome`]), or
//! why the request was not served ([`LookupError`]).

use std::time::Duration;

use api_contract::CompanyDataResponse;
use company_model::{RecordSource, UnresolvedCode};
use credit_ledger::{Credits, LedgerError};
use snapshot_cache::Snapshot;

/// A served request.
#[derive(Clone, Debug)]
pub struct LookupOutcome {
    /// The 200 body.
    pub response: CompanyDataResponse,
    /// What was charged.
    pub charged: Credits,
    /// The account's balance after the charge.
    pub remaining: Credits,
}

/// Why a request was not served.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LookupError {
    /// No URL resolved and at least one live lookup timed out (HTTP 504). Nothing was charged.
    #[error("{timed_out} live lookup(s) took longer than the {}-second live time-out and no URL resolved", timeout.as_secs_f64())]
    TimedOut {
        /// Lookups that timed out.
        timed_out: usize,
        /// The time-out that was passed.
        timeout: Duration,
    },
    /// The account already has as many live lookups in flight as it may (HTTP 429). Nothing was fetched or
    /// charged.
    #[error(
        "the account has {in_flight} live lookups in flight and this request needs {needed} more; the cap is {limit}"
    )]
    TooManyLiveLookups {
        /// Live lookups of the account's other requests, in flight now.
        in_flight: usize,
        /// Live lookups this request needs.
        needed: usize,
        /// The cap ([`LookupSettings::live_lookups_per_account`]).
        ///
        /// [`LookupSettings::live_lookups_per_account`]: crate::LookupSettings::live_lookups_per_account
        limit: usize,
        /// When the earliest of the account's requests in flight reaches its live time-out (an upper bound on the
        /// wait for capacity).
        retry_after: Duration,
    },
    /// Billing refused or failed, as the ledger said: [`LedgerError::InsufficientCredits`] when the account
    /// cannot pay for every requested company (HTTP 402; nothing was fetched or charged), otherwise the store
    /// failed (nothing was charged).
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The snapshot store failed where its answer is the whole answer (a history). Nothing was charged.
    #[error(transparent)]
    Snapshots(#[from] snapshot_cache::CacheError),
    /// The account already has as many searches in flight as it may (HTTP 429,
    /// [`crate::LookupSettings::searches_per_account`]). Nothing was searched.
    #[error(
        "the account has {limit} searches in flight, the most it may have at once; send the next when one has \
         answered"
    )]
    TooManySearches {
        /// The cap.
        limit: u32,
        /// How long to wait before asking again: a second (searches answer in milliseconds).
        retry_after: Duration,
    },
    /// A search ran past the search time limit ([`crate::LookupSettings::search_time_limit`]) and was stopped
    /// (HTTP 400, `search_timed_out`: the same search would cost as much again). Searches are free: nothing was
    /// charged.
    #[error(
        "the search ran longer than its limit of {} ms; add filters or words that narrow it, and search again",
        limit.as_millis()
    )]
    SearchTimedOut {
        /// The limit it ran past.
        limit: Duration,
    },
    /// A test-mode key's request reached a service that has no sandbox to answer it from
    /// ([`LookupService::with_test_mode`]); nothing was fetched or charged.
    ///
    /// [`LookupService::with_test_mode`]: crate::LookupService::with_test_mode
    #[error("this server does not serve test-mode keys; use a live key")]
    TestModeUnavailable,
    /// A test-mode key asked for what test mode does not do: `what` needs the network beyond the sandbox.
    /// Nothing was fetched or charged.
    #[error("{what} is not available to test-mode keys")]
    NotInTestMode {
        /// What was asked, e.g. `resolving domains and names`.
        what: &'static str,
    },
}

/// A request served, with what [`LookupService::run`] needs to tell a time-out from an answer.
pub(crate) struct Served {
    pub(crate) outcome: LookupOutcome,
    pub(crate) resolved: usize,
    pub(crate) timed_out: usize,
}

/// How one distinct page was answered ([`LookupService::pages`]).
///
/// [`LookupService::pages`]: crate::LookupService::pages
#[derive(Clone, Debug)]
pub enum PageOutcome {
    /// The page's newest snapshot: stored inside the window, or fetched now.
    Found {
        /// The snapshot.
        snapshot: Box<Snapshot>,
        /// `stored` or `live` (never `stale` from [`LookupService::pages`]).
        ///
        /// [`LookupService::pages`]: crate::LookupService::pages
        source: RecordSource,
    },
    /// No record: the code and message an `unresolved` entry carries.
    Failed {
        /// Why.
        code: UnresolvedCode,
        /// What happened and what to do.
        message: String,
        /// For push-back (`blocked`, `authwall`): until a route to the network is free again.
        retry_after: Option<Duration>,
    },
}
