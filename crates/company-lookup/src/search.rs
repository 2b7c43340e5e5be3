//! Searching the stored companies ([`LookupService::search`]) and remembering which pages each tenant was
//! answered ([`LookupService::note_answered`]), which is what its searches look through.

use api_contract::{SearchRequest, SearchResponse, SearchScopeName, search_cursor};
use company_model::{SearchScope, Tenant};
use page_url::PageUrl;
use snapshot_cache::SearchError;
use tracing::warn;

use crate::outcome::LookupError;
use crate::service::LookupService;
use crate::settings::Caller;

impl LookupService {
    /// One page of the stored companies that match `request`, as compact rows, free of charge. By default a
    /// tenant searches the pages it was answered (looked up, in jobs, resolved, watched: [`Self::note_answered`]),
    /// so no account learns what another looked up; with [`crate::LookupSettings::search_scope`]
    /// [`SearchScopeName::Deployment`], every stored page. A test-mode tenant searches the sandbox's pages.
    ///
    /// # Errors
    /// [`LookupError::SearchTimedOut`] when the search runs past the store's time limit;
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
        let page = this
            .snapshots
            .search(&query)
            .await
            .map_err(|error| match error {
                SearchError::TimedOut { limit } => LookupError::SearchTimedOut { limit },
                SearchError::Store(error) => LookupError::Snapshots(error),
            })?;
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
