use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use api_contract::{
    CompanyDataResponse, CompanyRequest, CompanyResult, FreshnessWindow, MAX_COPIES_PER_PAGE,
    RecordFields, UnresolvedUrl,
};
use company_model::{AccountId, RecordJson, RecordSource, UnresolvedCode};
use credit_ledger::{
    Charge, Credits, Ledger, LedgerError, Reservation, price_per_company, price_per_record,
};
use page_scraper::{
    Fetcher, LinkResolver, Priority, ScrapeError, is_url_shortener, registrable_domain,
};
use page_url::PageUrl;
use snapshot_cache::{Snapshot, SnapshotStore};
use tracing::{Instrument, debug, warn};

use shared_limits::{Cap, LimitStore, MemoryLimits};

/// Who is asking: the account billed and the key used (kept in the ledger row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The account to bill.
    pub account: AccountId,
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
    pub live_lookups_per_account: Option<usize>,
    /// How long a page's history is kept ([`LookupService::forget_old_history`]). Default 730 days.
    pub history_retention: Duration,
}

impl Default for LookupSettings {
    fn default() -> Self {
        Self {
            live_timeout: Duration::from_secs(25),
            live_lookups_per_account: Some(DEFAULT_LIVE_LOOKUPS_PER_ACCOUNT),
            history_retention: DEFAULT_HISTORY_RETENTION,
        }
    }
}

/// Default of [`LookupSettings::history_retention`]: 730 days.
pub const DEFAULT_HISTORY_RETENTION: Duration = Duration::from_hours(730 * 24);

/// Default of [`LookupSettings::live_lookups_per_account`]: two full 200-URL batches.
pub const DEFAULT_LIVE_LOOKUPS_PER_ACCOUNT: usize = 400;

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
    /// A test-mode key's request reached a service that has no sandbox to answer it from
    /// ([`LookupService::with_test_mode`]); nothing was fetched or charged.
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
struct Served {
    outcome: LookupOutcome,
    resolved: usize,
    timed_out: usize,
}

/// How one distinct page was answered ([`LookupService::pages`]).
#[derive(Clone, Debug)]
pub enum PageOutcome {
    /// The page's newest snapshot: stored inside the window, or fetched now.
    Found {
        /// The snapshot.
        snapshot: Box<Snapshot>,
        /// `stored` or `live` (never `stale` from [`LookupService::pages`]).
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

/// Serves requests over a fetcher, a snapshot store and a ledger. Share it behind an `Arc`.
#[derive(Debug)]
pub struct LookupService {
    fetcher: Fetcher,
    pub(crate) snapshots: Arc<dyn SnapshotStore>,
    pub(crate) ledger: Arc<dyn Ledger>,
    pub(crate) settings: LookupSettings,
    live_cap: Option<Cap>,
    links: Option<LinkResolver>,
    test_mode: TestMode,
}

/// Who serves test twins' requests ([`AccountId::test_twin`]: the accounts test-mode keys act for).
#[derive(Debug)]
enum TestMode {
    /// Nobody: they are refused ([`LookupError::TestModeUnavailable`]), so no test key reaches this origin.
    Off,
    /// This service's twin over the sandbox ([`LookupService::with_test_mode`]).
    Twin(Arc<LookupService>),
    /// This service: it is the twin.
    Sandbox,
}

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

/// Releases a hold that was neither settled nor released, e.g. when the caller disconnected and the request
/// future was dropped mid-way.
struct HoldGuard {
    ledger: Arc<dyn Ledger>,
    hold: Option<Reservation>,
}

impl HoldGuard {
    /// Guards `hold`, counted in `company_data_credit_holds_in_flight` until it is taken or dropped.
    fn new(ledger: Arc<dyn Ledger>, hold: Reservation) -> Self {
        metrics::gauge!("company_data_credit_holds_in_flight").increment(1.0);
        Self {
            ledger,
            hold: Some(hold),
        }
    }

    fn take(&mut self) -> Option<Reservation> {
        let hold = self.hold.take();
        if hold.is_some() {
            metrics::gauge!("company_data_credit_holds_in_flight").decrement(1.0);
        }
        hold
    }
}

impl Drop for HoldGuard {
    fn drop(&mut self) {
        if let Some(hold) = self.take() {
            let ledger = Arc::clone(&self.ledger);
            // Dropping happens in async context (a request future); without a runtime the stale-hold sweep
            // frees it instead.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    if let Err(error) = ledger.release(hold).await {
                        warn!(%error, "could not release an abandoned credit hold");
                    }
                });
            }
        }
    }
}

impl LookupService {
    /// A service over these parts.
    pub fn new(
        fetcher: Fetcher,
        snapshots: Arc<dyn SnapshotStore>,
        ledger: Arc<dyn Ledger>,
        settings: LookupSettings,
    ) -> Self {
        Self {
            fetcher,
            snapshots,
            ledger,
            settings,
            live_cap: live_cap(settings, Arc::new(MemoryLimits::new())),
            links: None,
            test_mode: TestMode::Off,
        }
    }

    /// Serves test twins' requests with `sandbox`, a service over pages that are not the network's (the
    /// sandbox origin, its own snapshot store) on the same ledger, which charges test twins nothing
    /// ([`credit_ledger::WithTestTwins`]). Every entry point that takes an account (run, run_bulk, pages,
    /// history, snapshots_for) hands a test twin to it, so jobs, watches and the API need not ask. Without it, a
    /// test twin is refused.
    #[must_use]
    pub fn with_test_mode(mut self, mut sandbox: LookupService) -> Self {
        sandbox.test_mode = TestMode::Sandbox;
        self.test_mode = TestMode::Twin(Arc::new(sandbox));
        self
    }

    /// The service that serves `account`: this one, or for a test twin the sandbox.
    ///
    /// # Errors
    /// [`LookupError::TestModeUnavailable`] for a test twin when this service has no sandbox.
    pub(crate) fn serving(&self, account: AccountId) -> Result<&LookupService, LookupError> {
        match &self.test_mode {
            _ if !account.is_test() => Ok(self),
            TestMode::Sandbox => Ok(self),
            TestMode::Twin(sandbox) => Ok(sandbox),
            TestMode::Off => Err(LookupError::TestModeUnavailable),
        }
    }

    /// The snapshot store `account`'s lookups read and write: the sandbox's for a test twin, so that a test key
    /// never reads a live snapshot and the reverse.
    ///
    /// # Errors
    /// [`LookupError::TestModeUnavailable`] for a test twin when this service has no sandbox.
    pub fn snapshots_for(
        &self,
        account: AccountId,
    ) -> Result<&Arc<dyn SnapshotStore>, LookupError> {
        Ok(&self.serving(account)?.snapshots)
    }

    /// Counts the per-account cap on live lookups in `limits` (cap `live:<account id>`): on a store several
    /// servers share, the cap is a total for the deployment. Without it the cap is counted in this process.
    #[must_use]
    pub fn with_limits(mut self, limits: Arc<dyn LimitStore>) -> Self {
        self.live_cap = live_cap(self.settings, limits);
        self
    }

    /// Follows shortened website links with `resolver`: a page fetched live whose website is on a URL shortener
    /// (`goo.gle`, `bit.ly`, ...) gets the registrable domain of where the link lands as its `domain`, so a CRM
    /// can match it; `website` stays as the page shows it. The result is stored with the snapshot, so a stored
    /// answer never follows the link again. When the link cannot be followed, `domain` stays the shortener's.
    #[must_use]
    pub fn with_link_resolver(mut self, resolver: LinkResolver) -> Self {
        self.links = Some(resolver);
        self
    }

    /// Which record fields live parses of company pages filled, and the layout-change alarms.
    pub fn field_coverage(&self) -> &page_scraper::FieldCoverage {
        self.fetcher.coverage()
    }

    /// The fetcher's routes (direct, or one per proxy) as they stand: state, pace, requests and push-back.
    pub fn routes(&self) -> Vec<page_scraper::RouteStatus> {
        self.fetcher.routes()
    }

    /// Follows the fetcher's proxy file, changing the routes when it changes
    /// ([`page_scraper::Fetcher::follow_proxy_file`]); `None` without one. Needs a Tokio runtime.
    pub fn follow_proxy_file(&self) -> Option<tokio::task::JoinHandle<()>> {
        self.fetcher.follow_proxy_file()
    }

    /// Until the fetcher's soonest route takes a page again (zero when one is ready now).
    pub fn routes_ready_in(&self) -> Duration {
        self.fetcher.routes_ready_in()
    }

    /// The ledger requests are billed on (for readers of balances and usage).
    pub fn ledger(&self) -> &Arc<dyn Ledger> {
        &self.ledger
    }

    /// The settings in force.
    pub fn settings(&self) -> LookupSettings {
        self.settings
    }

    /// The longest one request can hold credits: the live time-out (every live fetch, and any wait for another
    /// server's fetch of the same page, ends by then) and 15 s for storing and settling. A hold older than this
    /// belongs to no running request: with the sweep every 10 s, the holds of a server that died are freed within
    /// 50 s at the default 25 s time-out.
    pub fn longest_request(&self) -> Duration {
        self.settings.live_timeout + Duration::from_secs(15)
    }

    /// Frees credit holds older than [`LookupService::longest_request`] (a safety net while serving; run it
    /// now and then). Returns how many.
    ///
    /// # Errors
    /// [`LookupError::Ledger`] when the ledger fails.
    pub async fn release_stale_holds(&self) -> Result<u64, LookupError> {
        let longest = jiff::SignedDuration::try_from(self.longest_request())
            .unwrap_or(jiff::SignedDuration::MAX);
        let cutoff = jiff::Timestamp::now()
            .checked_sub(longest)
            .unwrap_or(jiff::Timestamp::MIN);
        Ok(self.ledger.release_stale(cutoff).await?)
    }

    /// Frees the credit holds this server left when it stopped mid-request ([`Ledger::release_own`]: on SQLite
    /// every hold, on a shared database those tagged with this server's name). Run it at start, before serving.
    /// Returns how many.
    ///
    /// # Errors
    /// [`LookupError::Ledger`] when the ledger fails.
    pub async fn release_own_holds(&self) -> Result<u64, LookupError> {
        Ok(self.ledger.release_own().await?)
    }

    /// Serves one request; see the crate docs for the steps.
    ///
    /// # Errors
    /// [`LookupError::Ledger`] with [`LedgerError::InsufficientCredits`] and [`LookupError::TooManyLiveLookups`]
    /// (nothing fetched or charged), [`LookupError::TimedOut`] (nothing charged), [`LookupError::Ledger`] when
    /// the billing store fails.
    pub async fn run(
        &self,
        caller: Caller,
        request: &CompanyRequest,
    ) -> Result<LookupOutcome, LookupError> {
        let this = self.serving(caller.account)?;
        let served = this
            .serve(caller, request, Priority::Interactive, None)
            .await?;
        if served.resolved == 0 && served.timed_out > 0 {
            return Err(LookupError::TimedOut {
                timed_out: served.timed_out,
                timeout: self.settings.live_timeout,
            });
        }
        Ok(served.outcome)
    }

    /// Serves one part of a bulk job as [`LookupService::run`] serves a request, with three differences: live
    /// fetches go to the origin after interactive ones ([`Priority::Background`]); the charge names `reference`
    /// ([`Charge::reference`]), so running the same part again after a crash charges nothing more; and a part
    /// where nothing resolved because lookups timed out is an answer (each URL unresolved with `timed_out`), not
    /// an error.
    ///
    /// # Errors
    /// [`LookupError::Ledger`] with [`LedgerError::InsufficientCredits`] and [`LookupError::TooManyLiveLookups`]
    /// (nothing fetched or charged), [`LookupError::Ledger`] when the billing store fails.
    pub async fn run_bulk(
        &self,
        caller: Caller,
        request: &CompanyRequest,
        reference: String,
    ) -> Result<LookupOutcome, LookupError> {
        Ok(self
            .serving(caller.account)?
            .serve(caller, request, Priority::Background, Some(reference))
            .await?
            .outcome)
    }

    async fn serve(
        &self,
        caller: Caller,
        request: &CompanyRequest,
        priority: Priority,
        reference: Option<String>,
    ) -> Result<Served, LookupError> {
        let mut seen = std::collections::HashSet::with_capacity(request.urls.len());
        let distinct: Vec<PageUrl> = request
            .urls
            .iter()
            .filter(|u| seen.insert(&u.page))
            .map(|u| u.page.clone())
            .collect();
        let price = price_per_company(request.window);
        let required = price.times(distinct.len() as u32);
        let mut outcomes = self.stored_in(&distinct, request.window).await;
        if outcomes.len() == distinct.len() {
            // Every answer is known before billing: check and charge in one step, no hold.
            let (response, charge) = answer(caller, request, &outcomes, reference);
            let remaining = self
                .ledger
                .charge(caller.account, required, charge.clone())
                .await?;
            record_served(&response, &charge);
            return Ok(Served {
                resolved: outcomes.len(),
                timed_out: 0,
                outcome: LookupOutcome {
                    response,
                    charged: charge.amount,
                    remaining,
                },
            });
        }

        let hold = self.ledger.reserve(caller.account, required).await?;
        let mut guard = HoldGuard::new(Arc::clone(&self.ledger), hold);
        let missing: Vec<&PageUrl> = distinct
            .iter()
            .filter(|u| !outcomes.contains_key(*u))
            .collect();
        match self.live(caller.account, missing, priority).await {
            Ok(live) => outcomes.extend(live),
            Err(refused) => {
                // Free the hold now rather than from the guard's background task, so that a retry sees the credits.
                if let Some(hold) = guard.take()
                    && let Err(error) = self.ledger.release(hold).await
                {
                    warn!(%error, "could not release the credit hold of a refused request");
                }
                return Err(refused);
            }
        }
        if request.stale_if_error {
            self.fall_back_to_stale(&mut outcomes).await;
        }
        let (response, charge) = answer(caller, request, &outcomes, reference);
        let resolved = outcomes
            .values()
            .filter(|o| matches!(o, PageOutcome::Found { .. }))
            .count();
        let timed_out = outcomes
            .values()
            .filter(|o| {
                matches!(
                    o,
                    PageOutcome::Failed {
                        code: UnresolvedCode::TimedOut,
                        ..
                    }
                )
            })
            .count();
        // The guard was made with the hold and nothing took it since; the error arm cannot happen.
        let hold = guard.take().ok_or(LedgerError::ReservationGone(0))?;
        let (id, account, amount) = (hold.id, hold.account, hold.amount);
        let remaining = match self.ledger.settle(hold, charge.clone()).await {
            Ok(remaining) => remaining,
            Err(error) => {
                // Nothing was charged (or, if the store committed before it failed to answer, the hold is gone
                // and releasing it finds nothing): free the hold as soon as the store answers again.
                self.release_when_possible(Reservation {
                    id,
                    account,
                    amount,
                });
                return Err(error.into());
            }
        };
        record_served(&response, &charge);
        Ok(Served {
            resolved,
            timed_out,
            outcome: LookupOutcome {
                response,
                charged: charge.amount,
                remaining,
            },
        })
    }

    /// Each of `urls` (distinct) as a request with `window` would find it: its snapshot stored inside the window,
    /// else fetched live (under the account's cap on live lookups, stored as any live fetch is), without billing:
    /// for a caller that bills by a rule of its own, such as the resolver, which pays for the page it returns and
    /// not for the candidates it rejected.
    ///
    /// # Errors
    /// [`LookupError::TooManyLiveLookups`] when the account's cap does not admit the live fetches (nothing
    /// fetched).
    pub async fn pages(
        &self,
        account: AccountId,
        urls: &[PageUrl],
        window: FreshnessWindow,
    ) -> Result<HashMap<PageUrl, PageOutcome>, LookupError> {
        let this = self.serving(account)?;
        let mut outcomes = this.stored_in(urls, window).await;
        let missing: Vec<&PageUrl> = urls.iter().filter(|u| !outcomes.contains_key(*u)).collect();
        if !missing.is_empty() {
            outcomes.extend(this.live(account, missing, Priority::Interactive).await?);
        }
        Ok(outcomes)
    }

    /// The pages of `distinct` that have a stored snapshot inside `window` (none for a live window).
    async fn stored_in(
        &self,
        distinct: &[PageUrl],
        window: FreshnessWindow,
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

    /// `staleIfError`: each page whose live fetch failed for a reason that may pass (push-back, time-out, no
    /// connection) and that has a stored snapshot of any age is answered from the newest one, as
    /// [`RecordSource::Stale`]. Pages the network says are gone (`not_found`, another kind of page) or that did
    /// not parse keep their answer: an old snapshot would hide what the network says now.
    async fn fall_back_to_stale(&self, outcomes: &mut HashMap<PageUrl, PageOutcome>) {
        let failed: Vec<PageUrl> = outcomes
            .iter()
            .filter(|(_, outcome)| {
                matches!(
                    outcome,
                    PageOutcome::Failed {
                        code: UnresolvedCode::Blocked
                            | UnresolvedCode::Authwall
                            | UnresolvedCode::TimedOut
                            | UnresolvedCode::FetchFailed,
                        ..
                    }
                )
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

    /// Releases `hold` in the background, retrying every second while the store fails, until the hold could
    /// belong to no running request any more (then the stale sweep frees it).
    fn release_when_possible(&self, hold: Reservation) {
        let ledger = Arc::clone(&self.ledger);
        let give_up = tokio::time::Instant::now() + self.longest_request();
        tokio::spawn(async move {
            let mut hold = hold;
            loop {
                let (id, account, amount) = (hold.id, hold.account, hold.amount);
                match ledger.release(hold).await {
                    Ok(()) | Err(LedgerError::ReservationGone(_)) => return,
                    Err(error) if tokio::time::Instant::now() >= give_up => {
                        warn!(%error, "could not release a credit hold; the stale sweep will");
                        return;
                    }
                    Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
                }
                hold = Reservation {
                    id,
                    account,
                    amount,
                };
            }
        });
    }

    /// Looks up `missing` live, concurrently, once the account's live-lookup cap admits them.
    async fn live(
        &self,
        account: AccountId,
        missing: Vec<&PageUrl>,
        priority: Priority,
    ) -> Result<Vec<(PageUrl, PageOutcome)>, LookupError> {
        let needed = missing.len();
        // Every live lookup of this request ends by the live time-out: the admission lasts no longer.
        let permit = match &self.live_cap {
            Some(cap) => Some(
                cap.admit(
                    &format!("live:{}", account.0),
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
            async move { (url.clone(), self.fetch_live(url, priority).await) }.instrument(span)
        }))
        .await;
        if let Some(permit) = permit {
            permit.leave().await;
        }
        Ok(outcomes)
    }

    async fn fetch_live(&self, url: &PageUrl, priority: Priority) -> PageOutcome {
        let timeout = self.settings.live_timeout;
        let deadline = tokio::time::Instant::now() + timeout;
        let started = jiff::Timestamp::now();
        // Another server on the same database may be fetching this page: then its snapshot is the answer.
        let claimed = match self.claim_or_wait(url, started, deadline).await {
            Claim::Fetch => true,
            Claim::Unshared => false,
            Claim::Fetched(snapshot) => {
                return PageOutcome::Found {
                    snapshot,
                    source: RecordSource::Live,
                };
            }
        };
        let outcome = self.fetch_and_store(url, deadline, priority).await;
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
                    // Whole seconds, at least one: when a client that retries finds a route free.
                    retry_after: pushed_back
                        .then(|| self.fetcher.routes_ready_in().max(Duration::from_secs(1))),
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
        let fetched_at = jiff::Timestamp::now()
            .round(jiff::Unit::Millisecond)
            .unwrap_or_else(|_| jiff::Timestamp::now());
        let page_gzip = scraped.page_gzip;
        let mut record = scraped.record;
        if let Some(domain) = self
            .landing_domain(record.website.as_deref(), deadline)
            .await
        {
            record.domain = Some(domain);
        }
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

/// The per-account cap of `settings`, counted in `limits`.
fn live_cap(settings: LookupSettings, limits: Arc<dyn LimitStore>) -> Option<Cap> {
    settings
        .live_lookups_per_account
        .map(|most| Cap::new(limits, u32::try_from(most).unwrap_or(u32::MAX)))
}

/// The 200 body, every requested URL in order with its page's outcome, and what it costs: each page found at its
/// source's price ([`price_per_record`]; a URL repeated in the request is one page, charged once, and answered
/// for its first [`MAX_COPIES_PER_PAGE`] copies only, the rest `duplicate`).
fn answer(
    caller: Caller,
    request: &CompanyRequest,
    outcomes: &HashMap<PageUrl, PageOutcome>,
    reference: Option<String>,
) -> (CompanyDataResponse, Charge) {
    let missing = PageOutcome::Failed {
        code: UnresolvedCode::FetchFailed,
        message: "The page was not looked up. Retry.".to_owned(),
        retry_after: None,
    };
    let mut results = Vec::new();
    let mut unresolved = Vec::new();
    let mut copies: HashMap<&PageUrl, usize> = HashMap::new();
    for url in &request.urls {
        let copy = copies.entry(&url.page).or_insert(0);
        *copy += 1;
        if *copy > MAX_COPIES_PER_PAGE {
            unresolved.push(UnresolvedUrl {
                original_li_url: url.original.clone(),
                error: UnresolvedCode::Duplicate,
                message: format!(
                    "This page is in the request more than {MAX_COPIES_PER_PAGE} times; its first \
                     {MAX_COPIES_PER_PAGE} copies are answered (and it is charged once). Send each page once: \
                     its record is the same."
                ),
                retry_after_seconds: None,
            });
            continue;
        }
        // Every distinct page has an outcome; `missing` only guards against a future change breaking that.
        match outcomes.get(&url.page).unwrap_or(&missing) {
            PageOutcome::Found { snapshot, source } => results.push(CompanyResult {
                original_li_url: url.original.clone(),
                // `fields` shapes the answer only: the page is looked up, stored and billed whole.
                record: RecordFields::apply(request.fields.as_ref(), &snapshot.record),
                source: *source,
                fetched_at: snapshot.fetched_at,
            }),
            PageOutcome::Failed {
                code,
                message,
                retry_after,
            } => unresolved.push(UnresolvedUrl {
                original_li_url: url.original.clone(),
                error: *code,
                message: message.clone(),
                retry_after_seconds: retry_after.map(|wait| wait.as_secs_f64().ceil() as u64),
            }),
        }
    }
    // Each distinct page once, at its source's price (nothing for a test twin).
    let priced = outcomes
        .values()
        .filter_map(|outcome| match outcome {
            PageOutcome::Found { source, .. } => Some(price_per_record(request.window, *source)),
            PageOutcome::Failed { .. } => None,
        })
        .fold(Credits::ZERO, Credits::saturating_add);
    let charge = Charge {
        amount: credit_ledger::billed(caller.account, priced),
        key_id: caller.key_id,
        urls_requested: request.urls.len() as u32,
        urls_returned: results.len() as u32,
        live: request.window.is_live(),
        reference,
    };
    let response = CompanyDataResponse {
        message: "Success".to_owned(),
        status_code: 200,
        results,
        unresolved,
    };
    (response, charge)
}

/// Counts a billed answer: `company_data_records_total{source}`, `company_data_unresolved_total{reason}` and
/// `company_data_credits_charged_millis_total` (thousandths of a credit, so the counter stays whole).
fn record_served(response: &CompanyDataResponse, charge: &Charge) {
    // One increment per label, not per record: a 200-URL answer touches the registry a few times.
    for source in [
        RecordSource::Live,
        RecordSource::Stored,
        RecordSource::Stale,
    ] {
        let count = response
            .results
            .iter()
            .filter(|r| r.source == source)
            .count();
        if count > 0 {
            metrics::counter!("company_data_records_total", "source" => source.as_str())
                .increment(count as u64);
        }
    }
    for code in UnresolvedCode::ALL {
        let count = response
            .unresolved
            .iter()
            .filter(|u| u.error == code)
            .count();
        if count > 0 {
            metrics::counter!("company_data_unresolved_total", "reason" => code.as_str())
                .increment(count as u64);
        }
    }
    metrics::counter!("company_data_credits_charged_millis_total")
        .increment(u64::try_from(charge.amount.millis()).unwrap_or(0));
}

/// The `unresolved` message: what happened and what the caller can do.
fn advice(error: &ScrapeError) -> String {
    let what_to_do = match error {
        ScrapeError::NotFound => "Check the URL: the page may have been renamed or removed.",
        ScrapeError::WrongPageKind { .. } => "Send the URL of a company, school or showcase page.",
        ScrapeError::Authwall | ScrapeError::Blocked { .. } => {
            "The network is limiting access; retry later, or send a freshness window to accept a stored snapshot."
        }
        ScrapeError::Unparseable => {
            "The page layout was not recognised; report the URL so the parser can learn it."
        }
        _ => "Retry later.",
    };
    let mut sentence = error.to_string();
    if let Some(first) = sentence.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    format!("{sentence}. {what_to_do}")
}
