//! Getting pages from the configured origin reliably: a limit on requests in flight and on request starts per
//! second, the route pool (`routes.rs`: a paced, cooled-down route per proxy), retries inside the caller's
//! deadline, and one upstream fetch per page at a time.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared, WeakShared};
use page_url::{NetworkDomain, PageUrl};
use rand::Rng;
use shared_limits::{LimitStore, MemoryLimits, Pacer};
use tokio::sync::Semaphore;
use tokio::time::Instant;
use url::Url;

use page_parser::{AUTHWALL_PATHS, Block, CompanyRecord, FetchFailure, ScrapeError, parse_page};

use crate::routes::{Met, Route, RoutePool, RouteSettings, RouteStatus, RouteTicket};
use crate::{CoverageRules, FieldCoverage, FilledFields};

/// Where live pages come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// An HTTP(S) server that serves the network's paths: the real site (`https://www.linkedin.com`), or a
    /// test or caching server. The page's path (`/company/google`) is appended to this base.
    Http(Url),
    /// A folder of captured pages laid out as `<dir>/<company|school|showcase>/<slug>.html`, the slug as in the
    /// canonical URL (percent-encoded, lower case). A missing file is a page that does not exist.
    Directory(PathBuf),
}

/// Why a fetcher setting was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OriginError {
    /// An `http(s)://` origin that is not a valid URL with a host.
    #[error(
        "the origin `{0}` is not a valid http(s) URL with a host; write it like `https://www.linkedin.com`"
    )]
    BadUrl(String),
    /// A folder origin that does not exist or is not a folder.
    #[error(
        "the origin folder `{0}` does not exist or is not a folder; give an http(s) URL or a folder of captured pages laid out as <dir>/company/<slug>.html"
    )]
    NotAFolder(PathBuf),
    /// A proxy URL reqwest does not accept; its username and password (or, for text that is not a URL, whatever
    /// stands before an `@`) are written as `****`.
    #[error(
        "the proxy `{0}` is not usable; write it as http://host:port, https://host:port or socks5://host:port"
    )]
    BadProxy(String),
    /// The HTTP client could not be built (TLS set-up).
    #[error("the HTTP client could not be set up: {0}")]
    Client(String),
    /// The proxy file ([`FetcherSettings::proxy_file`]) could not be read, or lists no proxy.
    #[error(
        "the proxy file `{path}` {reason}; list one proxy URL per line (http://host:port, https://host:port or socks5://host:port; `#` starts a comment)"
    )]
    ProxyFile {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

impl Origin {
    /// Reads an origin setting: text starting with `http://` or `https://` is a URL, anything else a folder.
    ///
    /// # Errors
    /// [`OriginError::BadUrl`] or [`OriginError::NotAFolder`].
    pub fn parse(text: &str) -> Result<Self, OriginError> {
        if text.starts_with("http://") || text.starts_with("https://") {
            let url = Url::parse(text).map_err(|_| OriginError::BadUrl(text.to_owned()))?;
            if url.host_str().is_none() {
                return Err(OriginError::BadUrl(text.to_owned()));
            }
            Ok(Origin::Http(url))
        } else {
            let path = PathBuf::from(text);
            if !path.is_dir() {
                return Err(OriginError::NotAFolder(path));
            }
            Ok(Origin::Directory(path))
        }
    }
}

/// How the [`Fetcher`] talks to its origin. Build with [`FetcherSettings::new`] and change fields as needed.
#[derive(Clone, Debug)]
pub struct FetcherSettings {
    /// Where pages come from.
    pub origin: Origin,
    /// The network whose canonical URLs records carry, whatever the origin.
    pub domain: NetworkDomain,
    /// `User-Agent` values: route `n` sends the `n`-th (in turn), always the same one. Never empty.
    pub user_agents: Vec<String>,
    /// Outbound proxies (`http://`, `https://`, `socks5://` URLs), one route each; empty (and no
    /// [`FetcherSettings::proxy_file`]) for one direct route.
    pub proxies: Vec<String>,
    /// A file of more proxies, one URL per line (`#` comments, blank lines ignored), read at start and followed
    /// by [`Fetcher::follow_proxy_file`]: when it changes, the routes become `proxies` and its lines.
    pub proxy_file: Option<PathBuf>,
    /// How each route's pace and cool-down react to the origin's push-back.
    pub routes: RouteSettings,
    /// Time allowed to open a connection.
    pub connect_timeout: Duration,
    /// Largest page read, in bytes of HTML (after decompression); a larger page is a fetch failure.
    pub max_page_bytes: usize,
    /// Requests to the origin in flight at once.
    pub max_concurrency: usize,
    /// Request starts per second, spread evenly; `None` for no pacing. With [`Fetcher::with_limits`] on a shared
    /// store, for every server together.
    pub rate_per_second: Option<f64>,
    /// Attempts per page, the first included. Retries happen only on blocks, the sign-in wall, server errors
    /// and connection failures, and only while the caller's deadline leaves time; after push-back the retry
    /// takes another route (or waits for one).
    pub max_attempts: u32,
    /// First retry delay; doubled each retry up to [`FetcherSettings::backoff_max`], with full jitter.
    pub backoff_base: Duration,
    /// Longest retry delay (a `Retry-After` longer than the deadline allows ends the retries instead).
    pub backoff_max: Duration,
}

impl FetcherSettings {
    /// Settings with the defaults: three desktop browser user agents, no proxy, 5 s to connect, pages up to
    /// 8 MiB, 16 requests in flight, no pacing, 4 attempts with backoff from 250 ms to 5 s.
    pub fn new(origin: Origin, domain: NetworkDomain) -> Self {
        let user_agents = [
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36",
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_6) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Safari/605.1.15",
            "Mozilla/5.0 (X11; Linux x86_64; rv:131.0) Gecko/20100101 Firefox/131.0",
        ];
        Self {
            origin,
            domain,
            user_agents: user_agents.iter().map(|ua| (*ua).to_owned()).collect(),
            proxies: Vec::new(),
            proxy_file: None,
            routes: RouteSettings::default(),
            connect_timeout: Duration::from_secs(5),
            max_page_bytes: 8 * 1024 * 1024,
            max_concurrency: 16,
            rate_per_second: None,
            max_attempts: 4,
            backoff_base: Duration::from_millis(250),
            backoff_max: Duration::from_secs(5),
        }
    }
}

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

/// A page body as it arrived, before decoding.
struct Body {
    bytes: Vec<u8>,
    /// `Content-Encoding: gzip`: `bytes` are compressed.
    gzip: bool,
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

/// The parser threads: one per core, each parsing one page at a time. Pages that arrive together wait in the queue
/// as the bytes they came as (compressed, from the network) instead of all becoming DOMs at once, and only these
/// threads ever hold a DOM, so the allocator's per-thread arenas that keep a DOM's freed memory are one per core
/// rather than one per blocking-pool thread (the peak memory of a 200-page batch halves).
#[derive(Debug)]
struct Parsers {
    jobs: std::sync::mpsc::Sender<ParseJob>,
}

type ParseJob = Box<dyn FnOnce() + Send>;

impl Parsers {
    fn start(threads: usize) -> Self {
        let (jobs, queue) = std::sync::mpsc::channel::<ParseJob>();
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..threads.max(1) {
            let queue = Arc::clone(&queue);
            let spawned = std::thread::Builder::new()
                .name(format!("page-parser-{n}"))
                .spawn(move || {
                    loop {
                        // The lock is held only to take a job; the threads end with the fetcher.
                        let job = queue
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .recv();
                        let Ok(job) = job else { return };
                        // A page that makes the parser panic fails alone; its caller sees the result dropped.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                });
            if let Err(error) = spawned {
                tracing::error!(%error, "could not start a page parser thread");
            }
        }
        Self { jobs }
    }

    /// Runs `work` on a parser thread when one is free. A job whose caller has gone by then is skipped.
    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, ScrapeError> {
        let (done, result) = tokio::sync::oneshot::channel();
        metrics::gauge!("company_data_parser_queue").increment(1.0);
        let job: ParseJob = Box::new(move || {
            metrics::gauge!("company_data_parser_queue").decrement(1.0);
            if !done.is_closed() {
                let _ = done.send(work());
            }
        });
        self.jobs.send(job).map_err(|_| {
            ScrapeError::Fetch(FetchFailure::Internal(
                "the page parsers are not running".into(),
            ))
        })?;
        result.await.map_err(|_| {
            ScrapeError::Fetch(FetchFailure::Internal(
                "the parser stopped on this page".into(),
            ))
        })
    }
}

/// One failed attempt, with the wait the origin asked for.
struct Failure {
    error: ScrapeError,
    retry_after: Option<Duration>,
    /// The connection could not be opened (through a proxy: the proxy is down).
    unreachable: bool,
    /// It went through a proxy, and the proxy failed it: it could not be connected to, or the request could not
    /// be sent to it (a kept-alive connection it had closed). An origin that fails behind a proxy is the
    /// proxy's 5xx instead.
    proxy_failed: bool,
    /// No route is free before the deadline: another attempt cannot do better.
    final_: bool,
}

impl From<ScrapeError> for Failure {
    fn from(error: ScrapeError) -> Self {
        Self {
            error,
            retry_after: None,
            unreachable: false,
            proxy_failed: false,
            final_: false,
        }
    }
}

impl Failure {
    /// No route (or no connection to send on) before the deadline; the soonest route is free in `ready_in`.
    fn no_route(ready_in: Duration) -> Self {
        Self {
            error: ScrapeError::Blocked {
                by: Block::NoRoute {
                    ready_in_seconds: ready_in.as_secs().max(1),
                },
            },
            retry_after: Some(ready_in),
            unreachable: false,
            proxy_failed: false,
            final_: true,
        }
    }

    /// What the route met, for the pool to learn from.
    fn met(&self) -> Met {
        match (&self.error, self.retry_after) {
            // A refusal that says when to come back (429's `Retry-After`) is waited out, not quarantined.
            (ScrapeError::Blocked { .. }, Some(wait)) => Met::RateLimited(wait),
            (ScrapeError::Blocked { .. }, _) => Met::Blocked,
            (ScrapeError::Authwall, _) => Met::Authwall,
            (ScrapeError::NotFound | ScrapeError::WrongPageKind { .. }, _) => Met::Answer,
            _ if self.unreachable => Met::Unreachable,
            _ => Met::Failed,
        }
    }
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

impl Inner {
    async fn scrape_with_retries(
        &self,
        url: &PageUrl,
        deadline: Instant,
        priority: Priority,
    ) -> Result<ScrapedPage, ScrapeError> {
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
            let failure = match self.attempt(url, deadline, priority).await {
                Ok(page) => return Ok(page),
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
            tracing::debug!(%url, attempt, wait_ms = wait.as_millis() as u64, error = %failure.error, "retrying");
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

    /// One fetch and parse (the parse on a parser thread: a page is a few hundred KB of HTML). Bodies wait for a
    /// parser as they arrived (compressed, when the origin compressed them).
    async fn attempt(
        &self,
        url: &PageUrl,
        deadline: Instant,
        priority: Priority,
    ) -> Result<ScrapedPage, Failure> {
        let shut_down =
            |_| ScrapeError::Fetch(FetchFailure::Internal("the fetcher is shut down".into()));
        let (fetched_url, body) = {
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
            let (_background, _permit) = match tokio::time::timeout_at(latest_start, permits).await
            {
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
            let fetched = self
                .fetch_once(url, route.as_ref().map(|(ticket, _)| ticket.route()))
                .await;
            record_fetch(fetched.as_ref().err().map(|f| &f.error), started.elapsed());
            if let Some((ticket, shared)) = route {
                let met = fetched.as_ref().map_or_else(Failure::met, |_| Met::Answer);
                ticket.report(met, shared.as_ref()).await;
            }
            fetched?
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

    async fn fetch_once(
        &self,
        url: &PageUrl,
        route: Option<&Route>,
    ) -> Result<(PageUrl, Body), Failure> {
        match (&self.settings.origin, route) {
            (Origin::Http(base), Some(route)) => self.fetch_http(base, url, route).await,
            (Origin::Http(_), None) => Err(ScrapeError::Fetch(FetchFailure::Internal(
                "no route to the origin was taken".into(),
            ))
            .into()),
            (Origin::Directory(dir), _) => {
                let path = dir
                    .join(url.kind().as_str())
                    .join(format!("{}.html", url.slug()));
                match tokio::fs::read(&path).await {
                    Ok(bytes) => Ok((url.clone(), Body { bytes, gzip: false })),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        Err(ScrapeError::NotFound.into())
                    }
                    Err(e) => Err(ScrapeError::Fetch(FetchFailure::Internal(format!(
                        "reading the captured page failed: {e}"
                    )))
                    .into()),
                }
            }
        }
    }

    async fn fetch_http(
        &self,
        base: &Url,
        url: &PageUrl,
        route: &Route,
    ) -> Result<(PageUrl, Body), Failure> {
        let target = format!("{}{}", base.as_str().trim_end_matches('/'), url.path());
        let mut response = route
            .client
            .get(&target)
            .header("user-agent", &route.user_agent)
            .send()
            .await
            .map_err(|e| {
                let through_proxy = route.via_proxy;
                // Only a connection that could not be opened says the proxy is down: a kept-alive one the proxy
                // closed fails a request too, and the next opens a new one.
                let unreachable = e.is_connect();
                let failure = if unreachable && through_proxy {
                    FetchFailure::ProxyUnreachable {
                        proxy: route.name.clone(),
                    }
                } else if unreachable {
                    FetchFailure::Unreachable
                } else if e.is_timeout() {
                    FetchFailure::TimedOut
                } else {
                    FetchFailure::Request(e.to_string())
                };
                Failure {
                    unreachable,
                    proxy_failed: through_proxy
                        && (unreachable || (e.is_request() && !e.is_timeout())),
                    ..ScrapeError::Fetch(failure).into()
                }
            })?;
        let final_path = response.url().path().to_owned();
        if AUTHWALL_PATHS.iter().any(|p| final_path.starts_with(p)) {
            return Err(ScrapeError::Authwall.into());
        }
        let status = response.status().as_u16();
        let retry_after = retry_after(response.headers());
        let refused = |error: ScrapeError| Failure {
            retry_after,
            ..error.into()
        };
        match status {
            200 => {}
            999 => {
                return Err(refused(ScrapeError::Blocked { by: Block::Http999 }));
            }
            429 => {
                return Err(refused(ScrapeError::Blocked { by: Block::Http429 }));
            }
            404 | 410 => return Err(ScrapeError::NotFound.into()),
            300..=399 => {
                return Err(ScrapeError::Fetch(FetchFailure::RedirectedOff {
                    to: redirect_target(&response),
                })
                .into());
            }
            code => {
                return Err(refused(ScrapeError::Fetch(FetchFailure::Status(code))));
            }
        }
        let final_url = match PageUrl::from_path(&final_path, &self.settings.domain) {
            Ok(final_url) => final_url,
            Err(_) if final_path == "/" => {
                return Err(ScrapeError::Blocked {
                    by: Block::RedirectedHome,
                }
                .into());
            }
            Err(_) => return Err(ScrapeError::WrongPageKind { found: final_path }.into()),
        };
        let gzip = match response
            .headers()
            .get(reqwest::header::CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase())
            .as_deref()
        {
            None | Some("" | "identity") => false,
            Some("gzip" | "x-gzip") => true,
            Some(other) => {
                return Err(ScrapeError::Fetch(FetchFailure::Body(format!(
                    "the origin sent the page with Content-Encoding `{other}`, which was not asked for (only gzip is)"
                )))
                .into());
            }
        };
        let limit = self.settings.max_page_bytes;
        let expected = response.content_length().unwrap_or(0);
        let mut body = Vec::with_capacity(usize::try_from(expected).unwrap_or(limit).min(limit));
        while let Some(chunk) = response.chunk().await.map_err(|e| {
            ScrapeError::Fetch(FetchFailure::Body(format!("the page body broke off: {e}")))
        })? {
            if body.len() + chunk.len() > limit {
                return Err(ScrapeError::Fetch(FetchFailure::Body(format!(
                    "the page is larger than {limit} bytes"
                )))
                .into());
            }
            body.extend_from_slice(&chunk);
        }
        Ok((final_url, Body { bytes: body, gzip }))
    }
}

/// One route per proxy in `proxies`, or one direct route when there is none: each its own client (connection
/// pool, cookie jar) and user agent (the `n`-th of the settings' for the `n`-th proxy).
pub(crate) fn build_routes(
    settings: &FetcherSettings,
    proxies: &[String],
) -> Result<Vec<Route>, OriginError> {
    let mut headers = reqwest::header::HeaderMap::new();
    for (name, value) in [
        (
            "accept",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        ),
        ("accept-language", "en-US,en;q=0.9"),
        // Asked for and decoded here (not by reqwest), so a page waits for a parser compressed and its
        // compressed bytes are what the snapshot store keeps.
        ("accept-encoding", "gzip"),
    ] {
        headers.insert(name, reqwest::header::HeaderValue::from_static(value));
    }
    let builder = || {
        reqwest::Client::builder()
            .default_headers(headers.clone())
            // The workspace builds reqwest without its decoders; these keep the client from decoding even
            // when another crate in an embedder's build turns them on (Cargo unifies features).
            .no_gzip()
            .no_brotli()
            .no_zstd()
            .no_deflate()
            .connect_timeout(settings.connect_timeout)
            .pool_max_idle_per_host(settings.max_concurrency)
            .redirect(redirect_policy(settings))
            // A route keeps the cookies the site sets, as one browser would.
            .cookie_store(true)
    };
    let user_agent = |n: usize| settings.user_agents[n % settings.user_agents.len()].clone();
    if proxies.is_empty() {
        Ok(vec![Route {
            name: "direct".to_owned(),
            via_proxy: false,
            identity: 0,
            client: builder()
                .no_proxy()
                .build()
                .map_err(|e| OriginError::Client(e.to_string()))?,
            user_agent: user_agent(0),
        }])
    } else {
        proxies
            .iter()
            .enumerate()
            .map(|(n, proxy_url)| {
                use std::hash::{Hash, Hasher};
                let name = route_name(proxy_url)
                    .ok_or_else(|| OriginError::BadProxy(masked_proxy(proxy_url)))?;
                let proxy = reqwest::Proxy::all(proxy_url)
                    .map_err(|_| OriginError::BadProxy(masked_proxy(proxy_url)))?;
                let mut digest = std::collections::hash_map::DefaultHasher::new();
                proxy_url.hash(&mut digest);
                Ok(Route {
                    name,
                    via_proxy: true,
                    identity: digest.finish(),
                    client: builder()
                        .proxy(proxy)
                        .build()
                        .map_err(|e| OriginError::Client(e.to_string()))?,
                    user_agent: user_agent(n),
                })
            })
            .collect()
    }
}

/// Redirects the fetcher follows: at most [`MAX_REDIRECTS`], each to the origin's own host and port or, over
/// https, to the network's domain or one of its subdomains (`uk.linkedin.com` → `www.linkedin.com`). A page of
/// the origin cannot send a route (its cookies, its proxy's address) to any other host; such a redirect ends
/// the request and is answered as a failure that names where it pointed.
fn redirect_policy(settings: &FetcherSettings) -> reqwest::redirect::Policy {
    let origin = match &settings.origin {
        Origin::Http(base) => base
            .host_str()
            .map(|host| (host.to_ascii_lowercase(), base.port_or_known_default())),
        Origin::Directory(_) => None,
    };
    let domain = settings.domain.as_str().to_owned();
    reqwest::redirect::Policy::custom(move |attempt| {
        if attempt.previous().len() >= MAX_REDIRECTS {
            return attempt.error(format!("more than {MAX_REDIRECTS} redirects"));
        }
        let url = attempt.url();
        let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
        let same_origin = origin.as_ref().is_some_and(|(origin_host, port)| {
            *origin_host == host && url.port_or_known_default() == *port
        });
        if same_origin || (url.scheme() == "https" && on_network(&host, &domain)) {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// Redirects followed for one page.
const MAX_REDIRECTS: usize = 5;

/// Whether `host` is the network's `domain` or one of its subdomains.
fn on_network(host: &str, domain: &str) -> bool {
    host.strip_suffix(domain)
        .is_some_and(|rest| rest.is_empty() || rest.ends_with('.'))
}

/// Where a redirect the fetcher did not follow pointed, for its failure: scheme and host only, so that no
/// query string (a token of someone else's) reaches a log.
fn redirect_target(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|location| response.url().join(location.to_str().ok()?).ok())
        .map_or_else(
            || "nowhere".to_owned(),
            |url| format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default()),
        )
}

/// A route's name: `direct`, or the proxy's URL without its credentials; `None` for text that is not a URL.
fn route_name(proxy: &str) -> Option<String> {
    let mut url = Url::parse(proxy).ok()?;
    url.set_username("").ok()?;
    url.set_password(None).ok()?;
    Some(url.as_str().trim_end_matches('/').to_owned())
}

/// A proxy setting as it may be shown (errors, logs): its username and password replaced by `****`; in text that does not
/// parse as a URL, everything between `//` (or the start) and the last `@`, which is where credentials would be.
pub(crate) fn masked_proxy(proxy: &str) -> String {
    if let Ok(mut url) = Url::parse(proxy)
        && url.has_host()
    {
        // A username alone is the secret with many proxy providers (`http://TOKEN@proxy`): both are masked.
        if !url.username().is_empty() {
            let _ = url.set_username("****");
        }
        if url.password().is_some() {
            let _ = url.set_password(Some("****"));
        }
        return url.as_str().trim_end_matches('/').to_owned();
    }
    match proxy.rsplit_once('@') {
        Some((before, after)) => {
            let scheme = before.find("//").map_or("", |at| &before[..at + 2]);
            format!("{scheme}****@{after}")
        }
        None => proxy.to_owned(),
    }
}

/// A body's HTML (at most `max_bytes` once decompressed, invalid UTF-8 replaced by U+FFFD) and, when it came
/// gzip-compressed, the compressed bytes.
fn decode_body(body: Body, max_bytes: usize) -> Result<(String, Option<Vec<u8>>), ScrapeError> {
    use std::io::Read;
    let (html, compressed) = if body.gzip {
        let mut html = Vec::with_capacity(body.bytes.len().saturating_mul(8).min(max_bytes));
        // One byte over the limit is enough to know; a gzip bomb never expands further than that.
        flate2::read::MultiGzDecoder::new(body.bytes.as_slice())
            .take(
                u64::try_from(max_bytes)
                    .unwrap_or(u64::MAX)
                    .saturating_add(1),
            )
            .read_to_end(&mut html)
            .map_err(|e| {
                ScrapeError::Fetch(FetchFailure::Body(format!(
                    "the compressed page could not be read: {e}"
                )))
            })?;
        (html, Some(body.bytes))
    } else {
        (body.bytes, None)
    };
    if html.len() > max_bytes {
        return Err(ScrapeError::Fetch(FetchFailure::Body(format!(
            "the page is larger than {max_bytes} bytes"
        ))));
    }
    let html = String::from_utf8(html)
        .unwrap_or_else(|invalid| String::from_utf8_lossy(invalid.as_bytes()).into_owned());
    Ok((html, compressed))
}

/// Decodes and parses a body; returns the record and the page gzip-compressed (the body itself when it came
/// compressed, so the common case costs no compression).
fn parse_body(
    body: Body,
    url: &PageUrl,
    domain: &NetworkDomain,
    max_bytes: usize,
) -> Result<(CompanyRecord, Arc<[u8]>), ScrapeError> {
    use std::io::Write;
    let (html, compressed) = decode_body(body, max_bytes)?;
    let record = parse_page(&html, url, domain)?;
    let page_gzip = if let Some(bytes) = compressed {
        bytes
    } else {
        let mut encoder = flate2::write::GzEncoder::new(
            Vec::with_capacity(html.len() / 6),
            flate2::Compression::fast(),
        );
        encoder
            .write_all(html.as_bytes())
            .and_then(|()| encoder.finish())
            .map_err(|e| {
                ScrapeError::Fetch(FetchFailure::Internal(format!(
                    "compressing the page failed: {e}"
                )))
            })?
    };
    Ok((record, page_gzip.into()))
}

/// `Retry-After` (RFC 9110 10.2.3) as a delay: delay-seconds, or an HTTP date.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let value = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = jiff::fmt::rfc2822::parse(value).ok()?;
    let wait = date.timestamp().duration_since(jiff::Timestamp::now());
    Some(Duration::try_from(wait).unwrap_or(Duration::ZERO))
}

/// The `outcome` label of an origin fetch or a parse: `ok`, or what failed. Blocks are told apart by the answer
/// that showed them (`blocked_999`, `blocked_429`, `blocked` for the guest home page), and a fetch that ran out
/// of time is `timed_out`, so that an operator sees which defence the network raised.
pub(crate) fn outcome_label(error: &ScrapeError) -> &'static str {
    match error {
        ScrapeError::Blocked {
            by: Block::Http999 | Block::ChallengePage,
        } => "blocked_999",
        ScrapeError::Blocked { by: Block::Http429 } => "blocked_429",
        ScrapeError::Fetch(FetchFailure::TimedOut) => "timed_out",
        other => other.code().as_str(),
    }
}

/// Counts one request to the origin in `company_data_origin_fetches_total{outcome}` and its time in
/// `company_data_origin_fetch_duration_seconds{outcome}`.
fn record_fetch(error: Option<&ScrapeError>, took: Duration) {
    let outcome = error.map_or("ok", outcome_label);
    metrics::counter!("company_data_origin_fetches_total", "outcome" => outcome).increment(1);
    metrics::histogram!("company_data_origin_fetch_duration_seconds", "outcome" => outcome)
        .record(took.as_secs_f64());
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The metric's outcome is read from the failure's kind, not from its words: a route free in 999 s is not a
    /// 999, and the texts of the answers stay as they were.
    #[test]
    fn outcomes_come_from_the_kind_of_failure() {
        let blocked = |by| ScrapeError::Blocked { by };
        assert_eq!(outcome_label(&blocked(Block::Http999)), "blocked_999");
        assert_eq!(outcome_label(&blocked(Block::ChallengePage)), "blocked_999");
        assert_eq!(outcome_label(&blocked(Block::Http429)), "blocked_429");
        let no_route = blocked(Block::NoRoute {
            ready_in_seconds: 999,
        });
        assert_eq!(outcome_label(&no_route), "blocked");
        assert_eq!(
            outcome_label(&ScrapeError::Fetch(FetchFailure::TimedOut)),
            "timed_out"
        );
        assert_eq!(
            outcome_label(&ScrapeError::Fetch(FetchFailure::Status(502))),
            "fetch_failed"
        );
        assert_eq!(
            blocked(Block::Http429).to_string(),
            "the network refused the request (HTTP 429, rate limited)"
        );
        assert_eq!(
            ScrapeError::Fetch(FetchFailure::Status(502)).to_string(),
            "the page could not be fetched: the origin answered HTTP 502"
        );
    }

    #[test]
    fn proxies_are_shown_without_their_password() {
        assert_eq!(
            masked_proxy("socks5://scraper:hunter2@proxy.example:1080"),
            "socks5://****:****@proxy.example:1080"
        );
        assert_eq!(
            masked_proxy("http://customer-token-123@proxy.example:8080"),
            "http://****@proxy.example:8080"
        );
        assert_eq!(
            masked_proxy("http://proxy.example:3128"),
            "http://proxy.example:3128"
        );
        assert_eq!(
            masked_proxy("http://a:b@c@proxy.example:99999"),
            "http://****@proxy.example:99999"
        );
        assert!(on_network("www.linkedin.com", "linkedin.com"));
        assert!(on_network("linkedin.com", "linkedin.com"));
        assert!(!on_network("evil-linkedin.com", "linkedin.com"));
        assert!(!on_network("linkedin.com.evil.example", "linkedin.com"));
    }

    #[test]
    fn retry_after_forms() {
        let mut headers = reqwest::header::HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", "3".parse().expect("header"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(3)));
        headers.insert(
            "retry-after",
            "Wed, 21 Oct 2015 07:28:00 GMT".parse().expect("header"),
        );
        assert_eq!(
            retry_after(&headers),
            Some(Duration::ZERO),
            "a date in the past means now"
        );
        headers.insert("retry-after", "soon".parse().expect("header"));
        assert_eq!(retry_after(&headers), None);
    }

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
