//! Who is asking ([`Caller`]) and the lookup's knobs ([`LookupSettings`]).

use std::time::Duration;

use api_contract::SearchScopeName;
use company_model::Tenant;

/// Who is asking: whose data it is (the account, live or in test mode) and the key used (kept in the ledger
/// row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The account and mode served and billed: a test tenant is served by the sandbox and spends nothing.
    pub tenant: Tenant,
    /// The API key's id, if the request came with one.
    pub key_id: Option<i64>,
}

/// Knobs of the lookup.
#[derive(Clone, Copy, Debug)]
pub struct LookupSettings {
    /// How long one live lookup (fetch and parse) may take before it is abandoned. Spec 8: 25 s.
    pub live_timeout: Duration,
    /// The most live lookups one account may have in flight at once, over all its requests (in this process, or
    /// on every server sharing [`LookupService::with_limits`]'s store); `None` for no cap. A request that would
    /// go over it gets [`LookupError::TooManyLiveLookups`], unless the account has nothing else in flight (so a
    /// request larger than the cap still runs on its own).
    ///
    /// [`LookupService::with_limits`]: crate::LookupService::with_limits
    /// [`LookupError::TooManyLiveLookups`]: crate::LookupError::TooManyLiveLookups
    pub live_lookups_per_account: Option<usize>,
    /// How long a page's history is kept ([`LookupService::forget_old_history`]). Default 730 days.
    ///
    /// [`LookupService::forget_old_history`]: crate::LookupService::forget_old_history
    pub history_retention: Duration,
    /// Whose companies a search looks through ([`LookupService::search`]): each account the pages it was
    /// answered (the default), or every stored page (a single-team deployment).
    ///
    /// [`LookupService::search`]: crate::LookupService::search
    pub search_scope: SearchScopeName,
    /// How long one search may run, from when it has its database connection, before the store stops it
    /// ([`LookupError::SearchTimedOut`]). Searches are free: this and [`Self::searches_per_account`] bound what
    /// one account's searches take of the database. Default [`DEFAULT_SEARCH_TIME_LIMIT`].
    ///
    /// [`LookupError::SearchTimedOut`]: crate::LookupError::SearchTimedOut
    pub search_time_limit: Duration,
    /// The most searches one account may have in flight at once (on this server, or on every server sharing
    /// [`LookupService::with_limits`]'s store; at least one): one more gets [`LookupError::TooManySearches`].
    /// With [`Self::search_time_limit`], what bounds the share of the database one account's searches take.
    /// Default [`DEFAULT_SEARCHES_PER_ACCOUNT`].
    ///
    /// [`LookupService::with_limits`]: crate::LookupService::with_limits
    /// [`LookupError::TooManySearches`]: crate::LookupError::TooManySearches
    pub searches_per_account: u32,
}

impl Default for LookupSettings {
    fn default() -> Self {
        Self {
            live_timeout: Duration::from_secs(25),
            live_lookups_per_account: Some(DEFAULT_LIVE_LOOKUPS_PER_ACCOUNT),
            history_retention: DEFAULT_HISTORY_RETENTION,
            search_scope: SearchScopeName::Account,
            search_time_limit: DEFAULT_SEARCH_TIME_LIMIT,
            searches_per_account: DEFAULT_SEARCHES_PER_ACCOUNT,
        }
    }
}

/// Default of [`LookupSettings::history_retention`]: 730 days.
pub const DEFAULT_HISTORY_RETENTION: Duration = Duration::from_hours(730 * 24);

/// Default of [`LookupSettings::search_time_limit`]: 1 s. A search walks an order's index until its page is full,
/// which for a filter few companies match is a pass over the whole index: tens of milliseconds on 100,000
/// companies (docs/benchmarks.md, section 14), about ten times that on a million.
pub const DEFAULT_SEARCH_TIME_LIMIT: Duration = Duration::from_secs(1);

/// Default of [`LookupSettings::searches_per_account`]: 4, for a person, a script paging and a download at once;
/// a searcher pages one search after another.
pub const DEFAULT_SEARCHES_PER_ACCOUNT: u32 = 4;

/// Default of [`LookupSettings::live_lookups_per_account`]: two full 200-URL batches.
pub const DEFAULT_LIVE_LOOKUPS_PER_ACCOUNT: usize = 400;
