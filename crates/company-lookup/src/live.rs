//! The live side of a lookup: pages fetched concurrently under the account's cap on live lookups, one fetch per
//! page among the servers on one database (a fetch claim, or the snapshot another server stored), each stored
//! as a snapshot under the requested and the resolved URL.

use std::time::Duration;

use api_contract::Includes;
use company_model::{Mode, RecordJson, RecordSource, Tenant, UnresolvedCode};
use page_scraper::{Block, Priority, ScrapeError, is_url_shortener, registrable_domain};
use page_url::PageUrl;
use snapshot_cache::Snapshot;
use tracing::{Instrument, debug, warn};

use crate::answer::advice;
use crate::outcome::{LookupError, PageOutcome};
use crate::service::LookupService;

/// How often a lookup waiting for another server's fetch of the same page looks for its snapshot.
const CLAIM_POLL: Duration = Duration::from_millis(100);

/// Who fetches a page that several servers were asked for at once.
enum Claim {
    /// This server: it holds the claim.
    Fetch,
    /// This server, without a claim (the store could not be asked, or waiting would pass the deadline).
    Unshared,
    /// Another server did: its snapshot, fetched after this lookup started.
    Fetched(Box<Snapshot>),
}

/// The name `tenant`'s live-lookup cap is counted under: `live:<account id>`, or `live:<account id>:test` for
/// its sandbox, whose lookups cost the network nothing and so never take the live account's places.
fn live_cap_key(tenant: Tenant) -> String {
    match tenant.mode {
        Mode::Live => format!("live:{}", tenant.account),
        Mode::Test => format!("live:{}:test", tenant.account),
    }
}

impl LookupService {
    /// Looks up `missing` live with the parts of `include`, concurrently, once the account's live-lookup cap
    /// admits them.
    pub(crate) async fn live(
        &self,
        tenant: Tenant,
        missing: Vec<&PageUrl>,
        priority: Priority,
        include: Includes,
    ) -> Result<Vec<(PageUrl, PageOutcome)>, LookupError> {
        let needed = missing.len();
        // Every live lookup of this request ends by the live time-out: the admission lasts no longer.
        let permit = match &self.live_cap {
            Some(cap) => Some(
                cap.admit(
                    &live_cap_key(tenant),
                    u32::try_from(needed).unwrap_or(u32::MAX),
                    self.settings.live_timeout,
                )
                .await
                .map_err(|refused| LookupError::TooManyLiveLookups {
                    in_flight: refused.in_flight as usize,
                    needed,
                    limit: refused.most as usize,
                    retry_after: refused.retry_after,
                })?,
            ),
            None => None,
        };
        let outcomes = futures::future::join_all(missing.into_iter().map(|url| {
            let span = tracing::debug_span!("live_lookup", url = %url);
            async move { (url.clone(), self.fetch_live(url, priority, include).await) }
                .instrument(span)
        }))
        .await;
        if let Some(permit) = permit {
            permit.leave().await;
        }
        Ok(outcomes)
    }

    async fn fetch_live(
        &self,
        url: &PageUrl,
        priority: Priority,
        include: Includes,
    ) -> PageOutcome {
        let timeout = self.settings.live_timeout;
        let deadline = tokio::time::Instant::now() + timeout;
        let started = jiff::Timestamp::now();
        // Another server on the same database may be fetching this page: then its snapshot is the answer.
        let claimed = match self.claim_or_wait(url, started, deadline).await {
            Claim::Fetch => true,
            Claim::Fetched(snapshot) if crate::parts::carries(&snapshot.record, include) => {
                return PageOutcome::Found {
                    snapshot,
                    source: RecordSource::Live,
                };
            }
            // No claim; or fetched by another server without a part this request includes: fetched again, with it.
            Claim::Unshared | Claim::Fetched(_) => false,
        };
        let outcome = self.fetch_and_store(url, deadline, priority, include).await;
        if claimed && let Err(error) = self.snapshots.release_fetch(url).await {
            // The claim lapses by itself at the live time-out.
            warn!(%error, "could not release a fetch claim");
        }
        outcome
    }

    /// Claims the fetch of `url` for this server, or waits for the server that holds the claim to store its
    /// snapshot; fetches anyway when that server's fetch ends without one or the claim cannot be asked for.
    async fn claim_or_wait(
        &self,
        url: &PageUrl,
        started: jiff::Timestamp,
        deadline: tokio::time::Instant,
    ) -> Claim {
        let until = started
            + jiff::SignedDuration::try_from(self.settings.live_timeout)
                .unwrap_or(jiff::SignedDuration::from_secs(25));
        loop {
            match self.snapshots.claim_fetch(url, until).await {
                Ok(true) => return Claim::Fetch,
                Ok(false) => {}
                Err(error) => {
                    warn!(%error, "could not claim a fetch; fetching anyway");
                    return Claim::Unshared;
                }
            }
            if tokio::time::Instant::now() + CLAIM_POLL >= deadline {
                return Claim::Unshared;
            }
            tokio::time::sleep(CLAIM_POLL).await;
            if let Ok(mut found) = self
                .snapshots
                .fresh_many(std::slice::from_ref(url), started)
                .await
                && let Some(snapshot) = found.remove(url)
            {
                return Claim::Fetched(Box::new(snapshot));
            }
        }
    }

    async fn fetch_and_store(
        &self,
        url: &PageUrl,
        deadline: tokio::time::Instant,
        priority: Priority,
        include: Includes,
    ) -> PageOutcome {
        let timeout = self.settings.live_timeout;
        let scraped = match tokio::time::timeout_at(
            deadline,
            self.fetcher.scrape_as(url, deadline, priority),
        )
        .await
        {
            Ok(Ok(scraped)) => scraped,
            Ok(Err(error)) => {
                debug!(%error, "live lookup failed");
                let pushed_back =
                    matches!(error, ScrapeError::Blocked { .. } | ScrapeError::Authwall);
                return PageOutcome::Failed {
                    code: error.code(),
                    message: advice(&error),
                    // When a client that retries finds a route free: for no route, the wait its message
                    // tells; else the routes' soonest, at least a second.
                    retry_after: pushed_back.then(|| match &error {
                        ScrapeError::Blocked {
                            by: Block::NoRoute { ready_in_seconds },
                        } => Duration::from_secs(*ready_in_seconds),
                        _ => self.fetcher.routes_ready_in().max(Duration::from_secs(1)),
                    }),
                };
            }
            Err(_) => {
                return PageOutcome::Failed {
                    retry_after: None,
                    code: UnresolvedCode::TimedOut,
                    message: format!(
                        "The live lookup took longer than the {}-second live time-out and was abandoned. Retry, \
                         or send a freshness window (maxAgeHours) to accept a stored snapshot.",
                        timeout.as_secs_f64()
                    ),
                };
            }
        };
        let fetched_at = crate::parts::now_to_the_millisecond();
        let page_gzip = scraped.page_gzip;
        let mut record = scraped.record;
        if let Some(domain) = self
            .landing_domain(record.website.as_deref(), deadline)
            .await
        {
            record.domain = Some(domain);
        }
        self.fetch_parts(&mut record, include, deadline, priority)
            .await;
        let snapshot = Snapshot {
            url: scraped.final_url,
            record: RecordJson::from_record(&record),
            fetched_at,
        };
        if let Err(error) = self
            .snapshots
            .put(&snapshot, std::slice::from_ref(url), Some(&page_gzip))
            .await
        {
            // The record is good; only later reuse is lost.
            warn!(%error, "could not store the snapshot");
        }
        PageOutcome::Found {
            snapshot: Box::new(snapshot),
            source: RecordSource::Live,
        }
    }
}

impl LookupService {
    /// The registrable domain of where a shortened website link lands, within the live deadline; `None` when
    /// the website is not on a shortener, no resolver is set, or the link cannot be followed.
    async fn landing_domain(
        &self,
        website: Option<&str>,
        deadline: tokio::time::Instant,
    ) -> Option<String> {
        let (resolver, website) = (self.links.as_ref()?, website?);
        if !is_url_shortener(website) {
            return None;
        }
        match tokio::time::timeout_at(deadline, resolver.landing(website)).await {
            Ok(Ok(landing)) => registrable_domain(landing.as_str()),
            Ok(Err(error)) => {
                debug!(%error, website, "the website's shortened link was not followed");
                None
            }
            Err(_) => None,
        }
    }
}
