//! Searching the stored companies ([`LookupService::search`]) and remembering which pages each tenant was
//! answered ([`LookupService::note_answered`]), which is what its searches look through.

use std::sync::Arc;

use api_contract::{SearchRequest, SearchResponse, SearchScopeName, search_cursor};
use company_model::{Mode, SearchScope, Tenant};
use page_url::PageUrl;
use snapshot_cache::{CacheError, SearchError};
use tracing::{Instrument, info, warn};

use crate::outcome::LookupError;
use crate::service::LookupService;
use crate::settings::Caller;

/// How long past twice the search time limit a search's admission to the account's cap lasts at most: room for
/// the waits the limit does not count (a pooled connection, the words a search takes in first). The admission
/// is left when the search ends; this bounds only one whose leaving was lost (a crash).
const SEARCH_CAP_SLACK: std::time::Duration = std::time::Duration::from_mins(1);

/// How long a search refused at the account's cap is asked to wait (`Retry-After`): searches answer in
/// milliseconds, and one of the account's usually has by then.
pub const SEARCH_RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// How many times [`LookupService::search_in_turn`] waits for a place under the account's cap before it gives up,
/// each wait the refusal's `retry_after` ([`SEARCH_RETRY_AFTER`]).
pub const SEARCH_TURNS: u32 = 10;

/// The name `tenant`'s searches in flight are counted under against
/// [`crate::LookupSettings::searches_per_account`], in this process or on the limits store of
/// [`LookupService::with_limits`] that several servers share: `search:<account id>`, with `:test` for the
/// account's test mode (counted apart from its live searches).
pub fn search_cap_key(tenant: Tenant) -> String {
    match tenant.mode {
        Mode::Live => format!("search:{}", tenant.account),
        Mode::Test => format!("search:{}:test", tenant.account),
    }
}

impl LookupService {
    /// One page of the stored companies that match `request`, as compact rows, free of charge. By default a
    /// tenant searches the pages it was answered (looked up, in jobs, resolved, watched: [`Self::note_answered`]),
    /// so no account learns what another looked up; with [`crate::LookupSettings::search_scope`]
    /// [`SearchScopeName::Deployment`], every stored page. A test-mode tenant searches the sandbox's pages.
    ///
    /// # Errors
    /// [`LookupError::TooManySearches`] when the account has [`crate::LookupSettings::searches_per_account`] in
    /// flight; [`LookupError::SearchTimedOut`] when the search runs past
    /// [`crate::LookupSettings::search_time_limit`];
    /// [`LookupError::Snapshots`] when the store fails; [`LookupError::TestModeUnavailable`] as for lookups.
    pub async fn search(
        &self,
        caller: Caller,
        request: &SearchRequest,
    ) -> Result<SearchResponse, LookupError> {
        let this = self.serving(caller.tenant)?;
        let name = self.settings.search_scope;
        let scope = match name {
            SearchScopeName::Account => SearchScope::Tenant(caller.tenant.key()),
            SearchScopeName::Deployment => SearchScope::Everything,
        };
        if !request.can_match {
            return Ok(SearchResponse {
                results: Vec::new(),
                next_cursor: None,
                scope: name,
            });
        }
        let mut query = request.query.clone();
        query.scope = scope;
        let limit = self.settings.search_time_limit;
        let (cap, snapshots) = (self.search_cap.clone(), Arc::clone(&this.snapshots));
        let account = caller.tenant.account;
        // Admitted, searched and left in a task of its own: a caller that hangs up drops this future, not the
        // search, which runs on in the store until it ends, holding its place under the cap until then (else
        // hanging up and asking again would run searches past the cap).
        let searched = tokio::spawn(async move {
            // For at most what a search can last (PostgreSQL's last statement may start just before the limit
            // and run the limit again), with room for the waits the limit does not count.
            let permit = cap
                .admit(
                    &search_cap_key(caller.tenant),
                    1,
                    limit.saturating_mul(2).saturating_add(SEARCH_CAP_SLACK),
                )
                .await
                .map_err(|refused| LookupError::TooManySearches {
                    limit: refused.most,
                    retry_after: SEARCH_RETRY_AFTER.min(refused.retry_after),
                })?;
            let page = snapshots
                .search(&query, limit)
                .await
                .map_err(|error| match error {
                    SearchError::TimedOut { limit } => {
                        info!(%account, limit_ms = limit.as_millis(), "a search was stopped at its time limit");
                        LookupError::SearchTimedOut { limit }
                    }
                    SearchError::Store(error) => LookupError::Snapshots(error),
                });
            permit.leave().await;
            page
        }
        // The request's span, so that what the search logs carries its request id.
        .instrument(tracing::Span::current()));
        let page = match searched.await {
            Ok(page) => page?,
            // A panic is this call's, as it was before the search had a task of its own.
            Err(failed) if failed.is_panic() => std::panic::resume_unwind(failed.into_panic()),
            // Cancelled: the runtime is shutting down.
            Err(cancelled) => return Err(LookupError::Snapshots(CacheError(Box::new(cancelled)))),
        };
        Ok(SearchResponse {
            results: page
                .rows
                .into_iter()
                .map(|row| request.shape(row))
                .collect(),
            next_cursor: page.next.as_ref().map(search_cursor),
            scope: name,
        })
    }

    /// [`Self::search`] for a caller that runs one search after another and would lose what it gathered to a
    /// refusal (an export: the dashboard's CSV download, `company-data search --db`): refused at the account's cap
    /// ([`LookupError::TooManySearches`]), it waits the refusal's `retry_after` and asks again, up to
    /// [`SEARCH_TURNS`] times.
    ///
    /// # Errors
    /// As [`Self::search`]; [`LookupError::TooManySearches`] once the account has stayed at its cap through every
    /// wait.
    pub async fn search_in_turn(
        &self,
        caller: Caller,
        request: &SearchRequest,
    ) -> Result<SearchResponse, LookupError> {
        let mut waits = 0;
        loop {
            match self.search(caller, request).await {
                Err(LookupError::TooManySearches { retry_after, .. }) if waits < SEARCH_TURNS => {
                    waits += 1;
                    tokio::time::sleep(retry_after).await;
                }
                answer => return answer,
            }
        }
    }

    /// Remembers that `tenant` was answered the pages `urls` (snapshot URLs), so that its searches find them.
    /// Pages noted lately are not written again; a store that fails is logged, not an error: the answer was
    /// given, and the next one notes the page again.
    pub async fn note_answered(&self, tenant: Tenant, urls: &[PageUrl]) {
        let Ok(this) = self.serving(tenant) else {
            return;
        };
        let key = tenant.key();
        let new = this.noted.new_of(key, urls.iter().cloned());
        if new.is_empty() {
            return;
        }
        if let Err(error) = this
            .snapshots
            .note_seen(key, &new, jiff::Timestamp::now())
            .await
        {
            warn!(%error, "could not note the pages a tenant was answered; its searches miss them until the next answer");
            this.noted.forget(key, &new);
        }
    }
}

#[cfg(test)]
mod tests {
    use company_model::{AccountId, Tenant};

    /// The names other servers on the same limits store count under: changing them splits a deployment's caps
    /// between servers of two versions.
    #[test]
    fn an_accounts_searches_are_counted_under_its_id_live_and_test_apart() {
        assert_eq!(
            super::search_cap_key(Tenant::live(AccountId(7))),
            "search:7"
        );
        assert_eq!(
            super::search_cap_key(Tenant::test(AccountId(7))),
            "search:7:test"
        );
    }
}
