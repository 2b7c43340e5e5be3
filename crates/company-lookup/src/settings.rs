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
}

impl Default for LookupSettings {
    fn default() -> Self {
        Self {
            live_timeout: Duration::from_secs(25),
            live_lookups_per_account: Some(DEFAULT_LIVE_LOOKUPS_PER_ACCOUNT),
            history_retention: DEFAULT_HISTORY_RETENTION,
            search_scope: SearchScopeName::Account,
        }
    }
}

/// Default of [`LookupSettings::history_retention`]: 730 days.
pub const DEFAULT_HISTORY_RETENTION: Duration = Duration::from_hours(730 * 24);

/// Default of [`LookupSettings::live_lookups_per_account`]: two full 200-URL batches.
pub const DEFAULT_LIVE_LOOKUPS_PER_ACCOUNT: usize = 400;
