//! Getting pages from the configured origin reliably: a limit on requests in flight and on request starts per
//! second, the route pool (`routes.rs`: a paced, cooled-down route per proxy), retries inside the caller's
//! deadline, and one upstream fetch per page at a time. What one request does is `exchange.rs`'s, what a failed
//! one tells `failure.rs`'s, what its headers say `browser.rs`'s, and turning the bytes into a record on the
//! parser threads `parsers.rs`'s; the settings are `settings.rs`'s.

mod browser;
mod exchange;
mod failure;
mod parsers;
mod settings;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared, WeakShared};
use page_parser::{CompanyRecord, FetchFailure, JobCount, ScrapeError};
use page_url::PageUrl;
use rand::Rng;
use shared_limits::{LimitStore, MemoryLimits, Pacer};
use tokio::sync::Semaphore;
use tokio::time::Instant;

pub use browser::Arrival;
pub(crate) use exchange::build_routes;
use exchange::{Landed, Target, fetch_once};
use failure::{Failure, outcome_label, record_fetch};
use parsers::{Body, Parsers, parse_body, read_job_search};
pub use settings::{FetcherSettings, Origin, OriginError};

use crate::routes::{Met, RoutePool, RouteStatus, RouteTicket};
use crate::{CoverageRules, FieldCoverage, FilledFields};

/// A page fetched and parsed.
#[derive(Clone, Debug, PartialEq)]
pub struct ScrapedPage {
    /// The page's record.
    pub record: CompanyRecord,
    /// The page the request ended on after redirects, normalized (e.g. `/company/1441` → `/company/google`).
    /// Snapshots are stored under it as well as under the requested URL.
    pub final_url: PageUrl,
    /// The page's HTML, gzip-compressed (RFC 1952), kept so that stored records can be parsed again later: the
    /// origin's own bytes when it sent `Content-Encoding: gzip` (the network does), otherwise compressed here
    /// after the parse. Its HTML itself is dropped once parsed, so a page waiting to be stored costs tens of KB,
    /// not the half a megabyte of its markup.
    pub page_gzip: Arc<[u8]>,
}

type ScrapeFuture = BoxFuture<'static, Result<ScrapedPage, ScrapeError>>;
type SharedScrape = Shared<ScrapeFuture>;

/// Who a fetch is for, which decides who goes first when the origin's limits are reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Priority {
    /// A caller is waiting for the answer (a synchronous request): first to the origin.
    #[default]
    Interactive,
    /// Bulk work that can wait: it uses what interactive fetches leave. It holds at most three quarters of
    /// [`FetcherSettings::max_concurrency`] (all of it when that is 1), and books one start at a time with the
    /// pace, so an interactive fetch waits behind at most one background start.
    Background,
}

/// Fetches pages from one origin. Cheap to clone; clones share connections, limits and fetches in flight.
#[derive(Clone, Debug)]
pub struct Fetcher {
    inner: Arc<Inner>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    settings: FetcherSettings,
    /// One route per proxy, or one direct: each its own connection pool, cookie jar, user agent and pace.
    routes: Arc<RoutePool>,
    /// Where routes book their slots when several servers share them (`None`: this server alone).
    shared_routes: std::sync::RwLock<Option<Arc<dyn LimitStore>>>,
    permits: Semaphore,
    /// What background fetches may hold of `permits`: all but a quarter, so interactive fetches always find some.
    background_permits: Semaphore,
    /// Held by a background fetch while it books its start with the pacer and a route, so at most one background
    /// start is ever booked ahead of an interactive one.
    background_booking: tokio::sync::Mutex<()>,
    parsers: Parsers,
    /// Paces request starts ([`FetcherSettings::rate_per_second`]); replaced by [`Fetcher::with_limits`].
    pacer: std::sync::RwLock<Option<Arc<Pacer>>>,
    in_flight: Mutex<HashMap<PageUrl, WeakShared<ScrapeFuture>>>,
    /// Which fields live parses of company pages filled: the layout-change alarm.
    coverage: FieldCoverage,
}

impl Fetcher {
    /// Builds a fetcher, its connection pools and its parser threads (one per core, named `page-parser-<n>`;
    /// they end when the fetcher and its clones are dropped). The routes are [`FetcherSettings::proxies`] and
    /// the proxy file's, read now. The pace of request starts ([`FetcherSettings::rate_per_second`]) is counted
    /// in this process until [`Fetcher::with_limits`] says where.
    ///
    /// # Errors
    /// [`OriginError::BadProxy`], [`OriginError::ProxyFile`] or [`OriginError::Client`].
    pub fn new(mut settings: FetcherSettings) -> Result<Self, OriginError> {
        let limits: Arc<dyn LimitStore> = Arc::new(MemoryLimits::new());
        if settings.user_agents.is_empty() {
            settings.user_agents =
                FetcherSettings::new(settings.origin.clone(), settings.domain.clone()).user_agents;
        }
        settings.max_concurrency = settings.max_concurrency.max(1);
        settings.max_attempts = settings.max_attempts.max(1);
        let proxies = match &settings.proxy_file {
            Some(path) => crate::proxy_file::read(&settings.proxies, path).map_err(|reason| {
                OriginError::ProxyFile {
                    path: path.clone(),
                    reason,
                }
            })?,
            None => settings.proxies.clone(),
        };
        let routes = build_routes(&settings, &proxies)?;
        let pacer = Self::pacer(&settings, limits);
        let reserved = settings.max_concurrency / 4;
        Ok(Self {
            inner: Arc::new(Inner {
                permits: Semaphore::new(settings.max_concurrency),
                background_permits: Semaphore::new((settings.max_concurrency - reserved).max(1)),
                background_booking: tokio::sync::Mutex::new(()),
                parsers: Parsers::start(
                    std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
                ),
                routes: Arc::new(RoutePool::new(settings.routes, routes)),
                shared_routes: std::sync::RwLock::new(None),
                settings,
                pacer: std::sync::RwLock::new(pacer),
                in_flight: Mutex::new(HashMap::new()),
                coverage: FieldCoverage::new(CoverageRules::default()),
            }),
        })
    }

    /// The same fetcher (and its clones) with [`FetcherSettings::rate_per_second`] counted in `limits` (pace
    /// `origin`): on a store several servers share, the rate is their total, and each route's slots and
    /// quarantines are booked there too (pace `route:<name>`), so a route blocked for one server waits on all.
    #[must_use]
    pub fn with_limits(self, limits: Arc<dyn LimitStore>) -> Self {
        *self
            .inner
            .shared_routes
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) =
            limits.is_shared().then(|| Arc::clone(&limits));
        let pacer = Self::pacer(&self.inner.settings, limits);
        *self
            .inner
            .pacer
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = pacer;
        self
    }

    fn pacer(settings: &FetcherSettings, limits: Arc<dyn LimitStore>) -> Option<Arc<Pacer>> {
        settings
            .rate_per_second
            .and_then(|rate| Pacer::new(limits, "origin", rate))
            .map(Arc::new)
    }

    /// The share of live parses of company pages that filled each record field, and the layout-change alarms
    /// ([`FieldCoverage`]).
    pub fn coverage(&self) -> &FieldCoverage {
        &self.inner.coverage
    }

    /// Every route (direct, or one per proxy) as it stands: state, pace, requests and push-back.
    pub fn routes(&self) -> Vec<RouteStatus> {
        self.inner.routes.statuses()
    }

    /// Until the soonest route takes a page again (zero when one is ready now): how long work that can wait
    /// should hold off after its pages met push-back.
    pub fn routes_ready_in(&self) -> Duration {
        self.inner.routes.ready_in()
    }

    /// The settings this fetcher was built with.
    pub fn settings(&self) -> &FetcherSettings {
        &self.inner.settings
    }

    pub(crate) fn route_pool(&self) -> &RoutePool {
        &self.inner.routes
    }

    pub(crate) fn inner_arc(&self) -> &Arc<Inner> {
        &self.inner
    }

    pub(crate) fn from_inner(inner: Arc<Inner>) -> Self {
        Self { inner }
    }

    /// Fetches and parses a page, retrying transient failures while `deadline` leaves time. Concurrent calls for
    /// the same page (from any request) share one upstream fetch. Dropping the future abandons the fetch once no
    /// other caller waits for it.
    ///
    /// # Errors
    /// The [`ScrapeError`] of the last attempt.
    pub async fn scrape(
        &self,
        url: &PageUrl,
        deadline: Instant,
    ) -> Result<ScrapedPage, ScrapeError> {
        self.scrape_as(url, deadline, Priority::Interactive).await
    }

    /// [`Fetcher::scrape`] at a [`Priority`]. A page already being fetched is shared whatever the priority of
    /// its first caller.
    ///
    /// # Errors
    /// The [`ScrapeError`] of the last attempt.
    pub async fn scrape_as(
        &self,
        url: &PageUrl,
        deadline: Instant,
        priority: Priority,
    ) -> Result<ScrapedPage, ScrapeError> {
        let shared = {
            let mut in_flight = self
                .inner
                .in_flight
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(running) = in_flight.get(url).and_then(WeakShared::upgrade) {
                running
            } else {
                let inner = Arc::clone(&self.inner);
                let page = url.clone();
                let fetch: SharedScrape = async move {
                    let result = inner.scrape_with_retries(&page, deadline, priority).await;
                    inner
                        .in_flight
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .remove(&page);
                    result
                }
                .boxed()
                .shared();
                in_flight.retain(|_, weak| weak.upgrade().is_some());
                if let Some(weak) = fetch.downgrade() {
                    in_flight.insert(url.clone(), weak);
                }
                fetch
            }
        };
        shared.await
    }
}

impl Fetcher {
    /// How many open jobs the network's guest job search counts for the company whose numeric id (the company
    /// page's `company_id`) is `company_id`: one request to `/jobs/search?f_C=<company_id>` on the origin (a
    /// folder origin's `jobs/<company_id>.html`) through the same routes, pace and retries as pages, read by
    /// [`page_parser::parse_job_search`]. Not shared with other callers, not cached: the caller stores it.
    ///
    /// # Errors
    /// The [`ScrapeError`] of the last attempt: [`ScrapeError::Authwall`] or [`ScrapeError::Blocked`] when the
    /// search was walled or refused, [`ScrapeError::NotFound`], [`ScrapeError::WrongPageKind`] or
    /// [`ScrapeError::Unparseable`] when it did not show a count, [`ScrapeError::Fetch`] when it failed.
    pub async fn job_count(
        &self,
        company_id: u64,
        deadline: Instant,
        priority: Priority,
    ) -> Result<JobCount, ScrapeError> {
        let what = self.inner.settings.domain.guest_job_search(company_id);
        self.inner
            .with_retries(&what, deadline, || {
                self.inner.job_count_attempt(company_id, deadline, priority)
            })
            .await
    }
}

impl Inner {
    async fn scrape_with_retries(
        &self,
        url: &PageUrl,
        deadline: Instant,
        priority: Priority,
    ) -> Result<ScrapedPage, ScrapeError> {
        self.with_retries(url.as_str(), deadline, || {
            self.attempt(url, deadline, priority)
        })
        .await
    }

    /// Runs `attempt` until it succeeds, fails for good, or `deadline` leaves no time for another (`what` names
    /// the request in the log).
    async fn with_retries<T, Attempt>(
        &self,
        what: &str,
        deadline: Instant,
        mut attempt_once: impl FnMut() -> Attempt,
    ) -> Result<T, ScrapeError>
    where
        Attempt: Future<Output = Result<T, Failure>>,
    {
        let attempts = match self.settings.origin {
            Origin::Http(_) => self.settings.max_attempts,
            Origin::Directory(_) => 1,
        };
        let mut attempt = 0;
        // Proxies that failed the request on the way (down, or a connection they had closed): a retry that costs
        // the page no attempt, at most as many as there are routes.
        let mut proxy_failures = 0;
        let mut previous: Option<ScrapeError> = None;
        loop {
            attempt += 1;
            let failure = match attempt_once().await {
                Ok(done) => return Ok(done),
                Err(failure) => failure,
            };
            if failure.final_ {
                // No route before the deadline: what the page last met says more than that (nothing, when only
                // proxies that were down were tried: then it is "no route", which work that can wait puts back).
                return Err(previous.unwrap_or(failure.error));
            }
            if failure.proxy_failed && proxy_failures < self.routes.len() {
                proxy_failures += 1;
                attempt -= 1;
                continue;
            }
            if !failure.error.is_transient() || attempt >= attempts {
                return Err(failure.error);
            }
            // After push-back the pool has cooled that route down: the retry takes the route free soonest, at
            // its pace, with no wait of its own.
            let pushed_back = matches!(
                failure.error,
                ScrapeError::Blocked { .. } | ScrapeError::Authwall
            );
            let wait = if pushed_back {
                Duration::ZERO
            } else {
                failure.retry_after.unwrap_or_else(|| self.backoff(attempt))
            };
            if Instant::now() + wait >= deadline {
                return Err(failure.error);
            }
            tracing::debug!(url = %what, attempt, wait_ms = wait.as_millis() as u64, error = %failure.error, "retrying");
            tokio::time::sleep(wait).await;
            previous = Some(failure.error);
        }
    }

    /// Exponential backoff with full jitter: a random wait in `[0, min(max, base * 2^(attempt-1))]`.
    fn backoff(&self, attempt: u32) -> Duration {
        let ceiling = self
            .settings
            .backoff_base
            .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1)))
            .min(self.settings.backoff_max);
        ceiling.mul_f64(rand::thread_rng().gen_range(0.0..=1.0))
    }

    /// One request for `target`: a connection permit, the pace, a route's slot, the request, and what it met
    /// reported to the route.
    async fn exchange(
        &self,
        target: Target<'_>,
        deadline: Instant,
        priority: Priority,
    ) -> Result<(Landed, Body), Failure> {
        let shut_down =
            |_| ScrapeError::Fetch(FetchFailure::Internal("the fetcher is shut down".into()));
        // A start in the last quarter of the time left would leave the fetch too little of it: the waits for
        // a connection permit and for a route's slot end there.
        let latest_start = {
            let now = Instant::now();
            now + deadline.saturating_duration_since(now).mul_f64(0.75)
        };
        let permits = async {
            let background = match priority {
                Priority::Interactive => None,
                Priority::Background => Some(self.background_permits.acquire().await),
            };
            (background, self.permits.acquire().await)
        };
        let (_background, _permit) = match tokio::time::timeout_at(latest_start, permits).await {
            Ok((Some(Err(closed)), _) | (_, Err(closed))) => {
                return Err(shut_down(closed).into());
            }
            Ok((background, Ok(permit))) => (background, permit),
            Err(_) => return Err(Failure::no_route(self.routes.ready_in())),
        };
        let pacer = self
            .pacer
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        // A background fetch books its start (the pace, then a route's slot) holding the booking lock: at most
        // one background start is ever booked ahead of an interactive one, on the pace or on a route.
        let booking = match priority {
            Priority::Interactive => None,
            Priority::Background => Some(
                tokio::time::timeout_at(latest_start, self.background_booking.lock())
                    .await
                    .map_err(|_| Failure::no_route(self.routes.ready_in()))?,
            ),
        };
        if let Some(pacer) = pacer {
            pacer.wait().await;
        }
        let route = match &self.settings.origin {
            Origin::Http(_) => Some(self.take_route(latest_start).await?),
            Origin::Directory(_) => None,
        };
        drop(booking);
        let started = Instant::now();
        let fetched = fetch_once(
            &self.settings,
            target,
            route.as_ref().map(|(ticket, _)| ticket.route()),
        )
        .await;
        record_fetch(fetched.as_ref().err().map(|f| &f.error), started.elapsed());
        if let Some((ticket, shared)) = route {
            let met = fetched.as_ref().map_or_else(Failure::met, |_| Met::Answer);
            ticket.report(met, shared.as_ref()).await;
        }
        fetched
    }

    /// One fetch and parse of a page (the parse on a parser thread: a page is a few hundred KB of HTML). Bodies
    /// wait for a parser as they arrived (compressed, when the origin compressed them).
    async fn attempt(
        &self,
        url: &PageUrl,
        deadline: Instant,
        priority: Priority,
    ) -> Result<ScrapedPage, Failure> {
        let (landed, body) = self.exchange(Target::Page(url), deadline, priority).await?;
        let fetched_url = match landed {
            Landed::Page(fetched_url) => fetched_url,
            Landed::JobSearch => url.clone(),
        };
        let domain = self.settings.domain.clone();
        let max_bytes = self.settings.max_page_bytes;
        let parse_url = fetched_url.clone();
        // The fields the record filled are read on the parser thread too: it means serializing the record.
        let (record, page_gzip, filled) = self
            .parsers
            .run(move || {
                parse_body(body, &parse_url, &domain, max_bytes).map(|(record, gzip)| {
                    let filled = FilledFields::of(&record);
                    (record, gzip, filled)
                })
            })
            .await?
            .inspect_err(|error| {
                metrics::counter!("company_data_parses_total", "outcome" => outcome_label(error))
                    .increment(1);
            })?;
        metrics::counter!("company_data_parses_total", "outcome" => "ok").increment(1);
        self.coverage.observe(&fetched_url, filled);
        // The page's own canonical link is the best final URL; fall back to where the fetch ended.
        let final_url = record
            .final_li_url
            .as_deref()
            .and_then(|u| PageUrl::normalize(u, &self.settings.domain).ok())
            .unwrap_or(fetched_url);
        Ok(ScrapedPage {
            record,
            final_url,
            page_gzip,
        })
    }

    /// One request for a company's guest job search and the read of its count (on a parser thread).
    async fn job_count_attempt(
        &self,
        company_id: u64,
        deadline: Instant,
        priority: Priority,
    ) -> Result<JobCount, Failure> {
        let (_, body) = self
            .exchange(Target::JobSearch { company_id }, deadline, priority)
            .await?;
        let max_bytes = self.settings.max_page_bytes;
        let count = self
            .parsers
            .run(move || read_job_search(body, max_bytes))
            .await??;
        Ok(count)
    }

    /// The route free soonest, once its slot comes, with the shared store it books in.
    async fn take_route(
        &self,
        deadline: Instant,
    ) -> Result<(RouteTicket, Option<Arc<dyn LimitStore>>), Failure> {
        let shared = self
            .shared_routes
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        match self.routes.take(deadline, shared.as_ref()).await {
            Ok(ticket) => Ok((ticket, shared)),
            Err(ready_in) => Err(Failure::no_route(ready_in)),
        }
    }
}

#[cfg(test)]
mod tests {
    use page_url::NetworkDomain;
    use url::Url;

    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let fetcher = Fetcher::new(FetcherSettings::new(
            Origin::Http(Url::parse("http://127.0.0.1:9").expect("url")),
            NetworkDomain::default(),
        ))
        .expect("fetcher");
        for attempt in 1..10 {
            let wait = fetcher.inner.backoff(attempt);
            let ceiling = Duration::from_millis(250)
                .saturating_mul(1 << (attempt - 1))
                .min(Duration::from_secs(5));
            assert!(wait <= ceiling, "attempt {attempt}: {wait:?} > {ceiling:?}");
        }
    }
}
