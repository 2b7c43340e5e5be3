//! The lookup service: its parts, whom it serves (test-mode tenants to its sandbox), and a request served start to
//! finish (`serve`): stored pages (`stored.rs`), live ones (`live.rs`), the hold (`holds.rs`) and the answer
//! (`answer.rs`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use api_contract::{CompanyRequest, FreshnessWindow, Includes};
use company_model::{Mode, Tenant, UnresolvedCode};
use credit_ledger::{Ledger, LedgerError, Reservation, price_per_company};
use page_scraper::{Fetcher, LinkResolver, Priority};
use page_url::PageUrl;
use snapshot_cache::SnapshotStore;
use tracing::warn;

use shared_limits::{Cap, LimitStore, MemoryLimits};

use crate::answer::{answer, record_served};
use crate::holds::HoldGuard;
use crate::outcome::{LookupError, LookupOutcome, PageOutcome, Served};
use crate::settings::{Caller, LookupSettings};

/// Serves requests over a fetcher, a snapshot store and a ledger. Share it behind an `Arc`.
#[derive(Debug)]
pub struct LookupService {
    pub(crate) fetcher: Fetcher,
    pub(crate) snapshots: Arc<dyn SnapshotStore>,
    pub(crate) ledger: Arc<dyn Ledger>,
    pub(crate) settings: LookupSettings,
    pub(crate) live_cap: Option<Cap>,
    /// The per-account cap on searches in flight ([`LookupSettings::searches_per_account`]).
    pub(crate) search_cap: Cap,
    pub(crate) links: Option<LinkResolver>,
    /// The pages noted lately as answered to each tenant ([`LookupService::note_answered`]).
    pub(crate) noted: crate::noted::NotedPages,
    test_mode: TestMode,
}

/// Who serves test-mode tenants' requests ([`company_model::Mode::Test`]).
#[derive(Debug)]
enum TestMode {
    /// Nobody: they are refused ([`LookupError::TestModeUnavailable`]), so no test key reaches this origin.
    Off,
    /// This service's counterpart over the sandbox ([`LookupService::with_test_mode`]).
    Sandboxed(Arc<LookupService>),
    /// This service: it is the sandbox's.
    Sandbox,
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
            search_cap: search_cap(settings, Arc::new(MemoryLimits::new())),
            links: None,
            noted: crate::noted::NotedPages::default(),
            test_mode: TestMode::Off,
        }
    }

    /// Serves test-mode tenants' requests with `sandbox`, a service over pages that are not the network's (the
    /// sandbox origin, its own snapshot store) on the same ledger, which charges test tenants nothing
    /// ([`credit_ledger::WithTestMode`]). Every entry point that takes a tenant (run, run_bulk, pages, history,
    /// snapshots_for) hands a test tenant to it, so jobs, watches and the API need not ask. Without it, a test
    /// tenant is refused.
    #[must_use]
    pub fn with_test_mode(mut self, mut sandbox: LookupService) -> Self {
        sandbox.test_mode = TestMode::Sandbox;
        self.test_mode = TestMode::Sandboxed(Arc::new(sandbox));
        self
    }

    /// The service that serves `tenant`: this one, or in test mode the sandbox.
    ///
    /// # Errors
    /// [`LookupError::TestModeUnavailable`] for a test tenant when this service has no sandbox.
    pub(crate) fn serving(&self, tenant: Tenant) -> Result<&LookupService, LookupError> {
        match &self.test_mode {
            _ if tenant.mode == Mode::Live => Ok(self),
            TestMode::Sandbox => Ok(self),
            TestMode::Sandboxed(sandbox) => Ok(sandbox),
            TestMode::Off => Err(LookupError::TestModeUnavailable),
        }
    }

    /// The snapshot store `tenant`'s lookups read and write: the sandbox's in test mode, so that a test key
    /// never reads a live snapshot and the reverse.
    ///
    /// # Errors
    /// [`LookupError::TestModeUnavailable`] for a test tenant when this service has no sandbox.
    pub fn snapshots_for(&self, tenant: Tenant) -> Result<&Arc<dyn SnapshotStore>, LookupError> {
        Ok(&self.serving(tenant)?.snapshots)
    }

    /// Counts the per-tenant caps on live lookups and on searches in `limits` (caps `live:<account id>`,
    /// `live:<account id>:test`, and the searches' [`crate::search_cap_key`]): on a store several servers share,
    /// each cap is a total for the deployment. Without it the caps are counted in this process.
    #[must_use]
    pub fn with_limits(mut self, limits: Arc<dyn LimitStore>) -> Self {
        self.live_cap = live_cap(self.settings, Arc::clone(&limits));
        self.search_cap = search_cap(self.settings, limits);
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
        let this = self.serving(caller.tenant)?;
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
    ///
    /// [`Charge::reference`]: credit_ledger::Charge::reference
    pub async fn run_bulk(
        &self,
        caller: Caller,
        request: &CompanyRequest,
        reference: String,
    ) -> Result<LookupOutcome, LookupError> {
        Ok(self
            .serving(caller.tenant)?
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
        let mut lacking = HashMap::new();
        let mut outcomes = self
            .stored_in(&distinct, request.window, request.include, &mut lacking)
            .await;
        if outcomes.len() == distinct.len() {
            // Every answer is known before billing: check and charge in one step, no hold.
            let (response, charge) = answer(caller, request, &outcomes, reference);
            let remaining = self
                .ledger
                .charge(caller.tenant, required, charge.clone())
                .await?;
            record_served(&response, &charge);
            self.note_found(caller.tenant, &outcomes).await;
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

        let hold = self.ledger.reserve(caller.tenant, required).await?;
        let mut guard = HoldGuard::new(Arc::clone(&self.ledger), hold);
        let missing: Vec<&PageUrl> = distinct
            .iter()
            .filter(|u| !outcomes.contains_key(*u))
            .collect();
        match self
            .live(caller.tenant, missing, priority, request.include)
            .await
        {
            Ok(live) => {
                outcomes.extend(live);
                Self::fall_back_to_lacking(&mut outcomes, lacking);
            }
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
        let (id, tenant, amount) = (hold.id, hold.tenant, hold.amount);
        let remaining = match self.ledger.settle(hold, charge.clone()).await {
            Ok(remaining) => remaining,
            Err(error) => {
                // Nothing was charged (or, if the store committed before it failed to answer, the hold is gone
                // and releasing it finds nothing): free the hold as soon as the store answers again.
                self.release_when_possible(Reservation { id, tenant, amount });
                return Err(error.into());
            }
        };
        record_served(&response, &charge);
        self.note_found(caller.tenant, &outcomes).await;
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

    /// Each of `urls` (distinct) as a request with `window` and `include` would find it: its snapshot stored
    /// inside the window (carrying the parts of `include`), else fetched live (under the account's cap on live
    /// lookups, stored as any live fetch is), without billing: for a caller that bills by a rule of its own, such
    /// as the resolver, which pays for the page it returns and not for the candidates it rejected.
    ///
    /// # Errors
    /// [`LookupError::TooManyLiveLookups`] when the account's cap does not admit the live fetches (nothing
    /// fetched).
    pub async fn pages(
        &self,
        tenant: Tenant,
        urls: &[PageUrl],
        window: FreshnessWindow,
        include: Includes,
    ) -> Result<HashMap<PageUrl, PageOutcome>, LookupError> {
        let this = self.serving(tenant)?;
        let mut lacking = HashMap::new();
        let mut outcomes = this.stored_in(urls, window, include, &mut lacking).await;
        let missing: Vec<&PageUrl> = urls.iter().filter(|u| !outcomes.contains_key(*u)).collect();
        if !missing.is_empty() {
            outcomes.extend(
                this.live(tenant, missing, Priority::Interactive, include)
                    .await?,
            );
            Self::fall_back_to_lacking(&mut outcomes, lacking);
        }
        Ok(outcomes)
    }

    /// Notes the pages of `outcomes` that were answered with a record as `tenant`'s ([`Self::note_answered`]).
    async fn note_found(&self, tenant: Tenant, outcomes: &HashMap<PageUrl, PageOutcome>) {
        let found: Vec<PageUrl> = outcomes
            .values()
            .filter_map(|outcome| match outcome {
                PageOutcome::Found { snapshot, .. } => Some(snapshot.url.clone()),
                PageOutcome::Failed { .. } => None,
            })
            .collect();
        self.note_answered(tenant, &found).await;
    }

    /// Releases `hold` in the background, retrying every second while the store fails, until the hold could
    /// belong to no running request any more (then the stale sweep frees it).
    fn release_when_possible(&self, hold: Reservation) {
        let ledger = Arc::clone(&self.ledger);
        let give_up = tokio::time::Instant::now() + self.longest_request();
        tokio::spawn(async move {
            let mut hold = hold;
            loop {
                let (id, tenant, amount) = (hold.id, hold.tenant, hold.amount);
                match ledger.release(hold).await {
                    Ok(()) | Err(LedgerError::ReservationGone(_)) => return,
                    Err(error) if tokio::time::Instant::now() >= give_up => {
                        warn!(%error, "could not release a credit hold; the stale sweep will");
                        return;
                    }
                    Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
                }
                hold = Reservation { id, tenant, amount };
            }
        });
    }
}

/// The per-account cap on searches in flight of `settings`, counted in `limits`.
fn search_cap(settings: LookupSettings, limits: Arc<dyn LimitStore>) -> Cap {
    Cap::new(limits, settings.searches_per_account.max(1))
}

/// The per-account cap on live lookups in flight of `settings`, counted in `limits`; `None` without one.
fn live_cap(settings: LookupSettings, limits: Arc<dyn LimitStore>) -> Option<Cap> {
    settings
        .live_lookups_per_account
        .map(|most| Cap::new(limits, u32::try_from(most).unwrap_or(u32::MAX)))
}
