//! Parsing every stored page again, so that a parser fix reaches stored records without fetching.

use page_scraper::{ScrapeError, is_url_shortener, parse_page};
use page_url::PageUrl;
use snapshot_cache::{CacheError, SnapshotStore};

/// Pages read from the store per round trip.
const PAGE_BATCH: u32 = 100;

/// What [`reparse_stored`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReparseSummary {
    /// Stored pages parsed into a record.
    pub reparsed: u64,
    /// Of those, records that were replaced (the rest were newer by then, fetched meanwhile).
    pub replaced: u64,
    /// Stored pages the parser refused; their stored records are kept.
    pub failed: u64,
}

/// Parses every page kept in `store` again with the current parser ([`parse_page`], on tokio's blocking
/// pool) and replaces each snapshot's record unless a newer fetch replaced it meanwhile. Each page is parsed on
/// the network its URL names ([`PageUrl::domain`]). A `domain` found by following a shortened website link
/// (see [`crate::LookupService::with_link_resolver`]) is kept while the website is the same link, and so are the
/// parts fetched apart from the page (`job_count`, with its `provenance`): nothing is fetched. `on_failure` hears of each page the parser refused.
///
/// # Errors
/// [`CacheError`] when the store fails; what was replaced before stays replaced.
pub async fn reparse_stored(
    store: &dyn SnapshotStore,
    mut on_failure: impl FnMut(&PageUrl, &ScrapeError),
) -> Result<ReparseSummary, CacheError> {
    let mut summary = ReparseSummary::default();
    let mut after: Option<PageUrl> = None;
    loop {
        let pages = store.stored_pages(after.as_ref(), PAGE_BATCH).await?;
        let Some(last) = pages.last() else {
            return Ok(summary);
        };
        after = Some(last.url.clone());
        for page in pages {
            let parsed = tokio::task::spawn_blocking(move || {
                let record = parse_page(&page.html, &page.url, &page.url.domain());
                (page, record)
            })
            .await
            .map_err(|error| CacheError(Box::new(error)))?;
            match parsed {
                (page, Ok(mut record)) => {
                    keep_what_parsing_cannot_give(store, &page.url, page.fetched_at, &mut record)
                        .await?;
                    summary.reparsed += 1;
                    if store
                        .replace_record(&page.url, page.fetched_at, &record)
                        .await?
                    {
                        summary.replaced += 1;
                    }
                }
                (page, Err(error)) => {
                    summary.failed += 1;
                    on_failure(&page.url, &error);
                }
            }
        }
    }
}

/// Keeps what the stored record has from elsewhere than its page, which parsing the page cannot give: the parts
/// fetched apart from it (`job_count`, `job_count_is_lower_bound`, `provenance`) when it is the record of the
/// same fetch as the page (`fetched_at`), and its `domain` when the website is the same shortened link (that
/// domain came from following it).
async fn keep_what_parsing_cannot_give(
    store: &dyn SnapshotStore,
    url: &PageUrl,
    fetched_at: jiff::Timestamp,
    record: &mut company_model::CompanyRecord,
) -> Result<(), CacheError> {
    let Some(snapshot) = store
        .fresh_many(std::slice::from_ref(url), jiff::Timestamp::MIN)
        .await?
        .remove(url)
    else {
        return Ok(());
    };
    let same_fetch = snapshot.fetched_at == fetched_at;
    let Ok(stored) = snapshot.record.to_record() else {
        return Ok(());
    };
    if same_fetch {
        record.job_count = stored.job_count;
        record.job_count_is_lower_bound = stored.job_count_is_lower_bound;
        record.provenance = stored.provenance;
    }
    if let Some(website) = record.website.as_deref().filter(|w| is_url_shortener(w))
        && stored.website.as_deref() == Some(website)
    {
        record.domain = stored.domain;
    }
    Ok(())
}
