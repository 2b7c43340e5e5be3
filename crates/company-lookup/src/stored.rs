//! The stored side of a lookup: the snapshots inside a request's window, and `staleIfError`'s fallback to the
//! newest of any age.

use std::collections::HashMap;

use api_contract::{FreshnessWindow, Includes};
use company_model::RecordSource;
use page_url::PageUrl;
use tracing::warn;

use crate::outcome::PageOutcome;
use crate::service::LookupService;

impl LookupService {
    /// The pages of `distinct` that have a stored snapshot inside `window` (none for a live window) carrying
    /// every part of `include`; the snapshots inside it that lack a part go to `lacking` instead (the page is
    /// fetched again with it, and they answer if that fails: [`LookupService::fall_back_to_lacking`]).
    pub(crate) async fn stored_in(
        &self,
        distinct: &[PageUrl],
        window: FreshnessWindow,
        include: Includes,
        lacking: &mut HashMap<PageUrl, PageOutcome>,
    ) -> HashMap<PageUrl, PageOutcome> {
        let mut outcomes = HashMap::with_capacity(distinct.len());
        if window.is_live() {
            return outcomes;
        }
        let window =
            jiff::SignedDuration::try_from(window.duration()).unwrap_or(jiff::SignedDuration::ZERO);
        let since = jiff::Timestamp::now() - window;
        // A broken cache must not fail the request: fetch everything live instead.
        if let Err(error) = self
            .found_since(distinct, since, RecordSource::Stored, &mut outcomes)
            .await
        {
            warn!(%error, "snapshot lookup failed; fetching live");
        }
        // A snapshot without a part the request includes is fetched again, with it.
        if !include.is_empty() {
            let without: Vec<PageUrl> = outcomes
                .iter()
                .filter(|(_, outcome)| match outcome {
                    PageOutcome::Found { snapshot, .. } => {
                        !crate::parts::carries(&snapshot.record, include)
                    }
                    PageOutcome::Failed { .. } => false,
                })
                .map(|(url, _)| url.clone())
                .collect();
            for url in without {
                if let Some(outcome) = outcomes.remove(&url) {
                    lacking.insert(url, outcome);
                }
            }
        }
        outcomes
    }

    /// Answers each page of `urls` that has a snapshot fetched since `since` with the newest, as from `source`.
    async fn found_since(
        &self,
        urls: &[PageUrl],
        since: jiff::Timestamp,
        source: RecordSource,
        outcomes: &mut HashMap<PageUrl, PageOutcome>,
    ) -> Result<(), snapshot_cache::CacheError> {
        for (url, snapshot) in self.snapshots.fresh_many(urls, since).await? {
            outcomes.insert(
                url,
                PageOutcome::Found {
                    snapshot: Box::new(snapshot),
                    source,
                },
            );
        }
        Ok(())
    }

    /// Each page of `lacking` (stored inside the window without a part the request includes) whose fetch with the
    /// part failed for a reason that may pass is answered from that snapshot after all, as it would have been
    /// without `include`, its `provenance` saying why the part is missing: asking for more never turns a record
    /// into an unresolved URL.
    pub(crate) fn fall_back_to_lacking(
        outcomes: &mut HashMap<PageUrl, PageOutcome>,
        lacking: HashMap<PageUrl, PageOutcome>,
    ) {
        for (url, stored) in lacking {
            let PageOutcome::Found { snapshot, source } = stored else {
                continue;
            };
            let failed = match outcomes.get(&url) {
                Some(PageOutcome::Failed { code, .. }) if crate::parts::may_pass(*code) => *code,
                _ => continue,
            };
            let record = crate::parts::not_fetched_again(&snapshot.record, failed);
            outcomes.insert(
                url,
                PageOutcome::Found {
                    snapshot: Box::new(snapshot_cache::Snapshot {
                        record,
                        ..*snapshot
                    }),
                    source,
                },
            );
        }
    }

    /// `staleIfError`: each page whose live fetch failed for a reason that may pass (push-back, time-out, no
    /// connection) and that has a stored snapshot of any age is answered from the newest one, as
    /// [`RecordSource::Stale`]. Pages the network says are gone (`not_found`, another kind of page) or that did
    /// not parse keep their answer: an old snapshot would hide what the network says now.
    pub(crate) async fn fall_back_to_stale(&self, outcomes: &mut HashMap<PageUrl, PageOutcome>) {
        let failed: Vec<PageUrl> = outcomes
            .iter()
            .filter(|(_, outcome)| {
                matches!(outcome, PageOutcome::Failed { code, .. } if crate::parts::may_pass(*code))
            })
            .map(|(url, _)| url.clone())
            .collect();
        if failed.is_empty() {
            return;
        }
        // The live answers stand if the store fails: the caller learns what failed rather than nothing.
        if let Err(error) = self
            .found_since(&failed, jiff::Timestamp::MIN, RecordSource::Stale, outcomes)
            .await
        {
            warn!(%error, "stale snapshot lookup failed; answering the live failures");
        }
    }
}
