//! Bulk jobs: a list of up to [`api_contract::MAX_JOB_URLS`] page URLs, looked up in the background and read
//! back in input order while it runs and after.
//!
//! [`BulkJobs::submit`] stores the job ([`job_store`]); [`BulkJobs::start`] runs workers that lease a few pages at
//! a time and serve each lease as one synchronous request would be served ([`LookupService::run_bulk`]): the same
//! freshness rules, the same prices, each distinct page charged once when it resolves and never when it does not.
//! What makes a job safe to stop anywhere:
//! - a lease's charge names the lease (`job:<job>:lease:<lease>`, [`credit_ledger::Charge::reference`]) and a lease
//!   whose server stopped is handed out again whole under the same id, so the pages it paid for are never paid
//!   again, whichever server runs it next;
//! - answers and the job's counts are written in one transaction when the lease ends.
//!
//! A job whose account cannot pay for its next page pauses (`insufficient_credits`) and resumes by itself within
//! [`BulkSettings::resume_check`] of a grant; the ledger never lets the balance go below zero. Live fetches of jobs
//! go to the origin after synchronous requests' ([`page_scraper`'s `Priority::Background`], through
//! [`LookupService::run_bulk`]), and leases go to the account served longest ago, so a small job is not held
//! behind a big one.
//!
//! [`output`] writes results as NDJSON lines or CSV rows, for the API, the dashboard and `company-data enrich`.
//!
//! Not here: HTTP, request validation (company-model), how pages are looked up or billed (company-lookup,
//! credit-ledger).
//!
//! [`page_scraper`'s `Priority::Background`]: company_lookup::LookupService::run_bulk
#![deny(missing_docs)]

pub mod output;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use api_contract::{AccountEventType, CompanyDataResponse, CompanyRequest, SubmittedUrl};
use company_lookup::{Caller, LookupError, LookupService};
use credit_ledger::{
    Credits, Ledger, LedgerError, Quotas, STORED_PRICE, price_per_company, quotas_of,
};
pub use job_store::{Answer, InputRow, Job, JobId, JobStatus, JobStore, JobStoreError};
use job_store::{Created, Lease, NewJob, QueueBound};
use page_url::PageUrl;
use tracing::{debug, warn};

/// The most input rows read in one call when a job's results are written out (a page of the results endpoint, a
/// batch of a download): 10,000 rows of full records stay a few tens of MB.
pub const MOST_ROWS_PER_READ: u32 = 10_000;

/// A job's ending as the account event that tells its account ([`BulkJobs::endings`]).
#[derive(Clone, Debug, PartialEq)]
pub struct JobEnding {
    /// The job's tenant (account and mode).
    pub tenant: company_model::Tenant,
    /// The job.
    pub job: JobId,
    /// Which of the job's endings it is: 1 for its first (a job that pauses, resumes and finishes ends twice).
    pub ending: i64,
    /// The event's type: `job.finished`, `job.paused` or `job.cancelled`; `None` when the job has moved on
    /// since (a paused job resumed before it was announced): then there is nothing to tell.
    pub kind: Option<AccountEventType>,
    /// The event's id, `evt_job_<job>_<ending>`: the same whichever server announces it.
    pub event_id: String,
    /// The event's `data`: `{"job": <the job as the API shows it>, "results_url": <the path of its results>}`.
    pub data: serde_json::Value,
    /// The job's own callback, which is sent the event too.
    pub callback: Option<api_contract::JobCallback>,
}

impl JobEnding {
    fn of(view: &JobView, ending: i64) -> Self {
        let job = &view.job;
        let kind = match job.status {
            JobStatus::Done => Some(AccountEventType::JobFinished),
            JobStatus::Paused => Some(AccountEventType::JobPaused),
            JobStatus::Cancelled => Some(AccountEventType::JobCancelled),
            JobStatus::Queued | JobStatus::Running => None,
        };
        Self {
            tenant: job.tenant,
            job: job.id,
            ending,
            kind,
            event_id: format!("evt_job_{}_{ending}", job.id),
            data: serde_json::json!({
                "job": view.info(),
                "results_url": api_contract::job_results_path(&job.id.to_string()),
            }),
            callback: job.callback.clone(),
        }
    }
}

/// Knobs of the job runner.
#[derive(Clone, Copy, Debug)]
pub struct BulkSettings {
    /// Leases worked on at once by this server.
    pub workers: usize,
    /// Pages in one lease: one billed request each.
    pub pages_per_lease: usize,
    /// How long finished jobs and their results are kept: 7 days by default.
    pub retention: Duration,
    /// How often an idle worker looks for work that another server's client submitted (work submitted to this
    /// server wakes its workers at once).
    pub idle_poll: Duration,
    /// How often paused jobs are checked for credits granted since.
    pub resume_check: Duration,
    /// How long after a job started its pages that met push-back (`blocked`, `authwall`) are put back to be
    /// fetched again later rather than answered so: the job slows down to what the origin allows instead of
    /// losing pages. Past it, such a page is answered with its code. Default 6 hours.
    pub push_back_patience: Duration,
    /// The deployment's quotas; an account's own replace them ([`credit_ledger::quotas_of`]). A submission
    /// past [`Quotas::open_jobs`] or [`Quotas::queued_urls`] is refused.
    pub quotas: Quotas,
}

impl Default for BulkSettings {
    fn default() -> Self {
        Self {
            workers: 4,
            pages_per_lease: 25,
            retention: Duration::from_hours(7 * 24),
            idle_poll: Duration::from_secs(1),
            resume_check: Duration::from_secs(2),
            push_back_patience: Duration::from_hours(6),
            quotas: Quotas::default(),
        }
    }
}

/// Why a job operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BulkError {
    /// The job store failed.
    #[error(transparent)]
    Store(#[from] JobStoreError),
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The account has as many jobs not yet ended as its quota allows; nothing was stored.
    #[error(
        "the account has {open} jobs not yet ended, the most its quota allows; wait for one to end or cancel one, or ask the operator to raise the quota"
    )]
    TooManyOpenJobs {
        /// Its jobs not yet ended.
        open: u32,
        /// The quota ([`Quotas::open_jobs`]).
        quota: u32,
    },
    /// The job's URLs would take the account's unanswered inputs past its quota; nothing was stored.
    #[error(
        "the account's open jobs have {queued} URLs not yet answered and this job brings {adding}, more than its quota of {quota}; send fewer URLs, wait for its jobs to progress, or ask the operator to raise the quota"
    )]
    TooManyQueuedUrls {
        /// Unanswered inputs of its open jobs.
        queued: u64,
        /// This job's inputs.
        adding: u64,
        /// The quota ([`Quotas::queued_urls`]).
        quota: u64,
    },
}

/// A job as its account sees it: the stored job with its charge in credits and an estimate of when it ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobView {
    /// The job.
    pub job: Job,
    /// Credits charged so far.
    pub credits_charged: Credits,
    /// While running, when the job should end at the pace of its pages so far.
    pub estimated_finish_at: Option<jiff::Timestamp>,
}

impl JobView {
    fn of(job: Job) -> Self {
        let estimated_finish_at = estimate(&job, jiff::Timestamp::now());
        Self {
            credits_charged: Credits::from_millis(job.charged_millis),
            estimated_finish_at,
            job,
        }
    }

    /// The job as the API answers it ([`api_contract::JobInfo`]).
    pub fn info(&self) -> api_contract::JobInfo {
        let job = &self.job;
        api_contract::JobInfo {
            id: job.id.to_string(),
            status: job.status,
            paused_reason: job.paused_reason.clone(),
            total: job.total,
            done: job.done,
            resolved: job.resolved,
            unresolved: job.unresolved,
            credits_charged: self.credits_charged.as_f64(),
            max_age_seconds: job.window.seconds(),
            created_at: job.created_at,
            started_at: job.started_at,
            finished_at: job.finished_at,
            estimated_finish_at: self.estimated_finish_at,
            fields: job
                .fields
                .as_ref()
                .map(|fields| fields.kept().iter().map(|&name| name.to_owned()).collect()),
            include: job.include.parts(),
            callback: job
                .callback
                .as_ref()
                .map(api_contract::JobCallbackInfo::from),
        }
    }
}

/// When a running job should end at its pace so far: pages answered per second since it started.
fn estimate(job: &Job, now: jiff::Timestamp) -> Option<jiff::Timestamp> {
    if job.status != JobStatus::Running || job.pages_done == 0 {
        return None;
    }
    let elapsed = now.duration_since(job.started_at?).as_secs_f64().max(0.001);
    let remaining = job.pages.saturating_sub(job.pages_done) as f64;
    let seconds = remaining * elapsed / job.pages_done as f64;
    now.checked_add(jiff::SignedDuration::try_from_secs_f64(seconds).ok()?)
        .ok()
}

/// Bulk jobs over a job store, a lookup service and its ledger. Share it behind an `Arc`.
#[derive(Debug)]
pub struct BulkJobs {
    store: Arc<dyn JobStore>,
    lookup: Arc<LookupService>,
    ledger: Arc<dyn Ledger>,
    server: String,
    settings: BulkSettings,
    work_arrived: tokio::sync::Notify,
}

impl BulkJobs {
    /// Jobs in `store`, looked up with `lookup` and checked for credits in `ledger` (the one `lookup` bills).
    /// `server` names this server's leases (as the ledger's holds; unique per server on a shared database).
    pub fn new(
        store: Arc<dyn JobStore>,
        lookup: Arc<LookupService>,
        ledger: Arc<dyn Ledger>,
        server: &str,
        settings: BulkSettings,
    ) -> Arc<Self> {
        Arc::new(Self {
            store,
            lookup,
            ledger,
            server: server.to_owned(),
            settings,
            work_arrived: tokio::sync::Notify::new(),
        })
    }

    /// How long finished jobs and their results are kept ([`BulkSettings::retention`]).
    pub fn retention(&self) -> Duration {
        self.settings.retention
    }

    /// Stores a job for a validated request ([`CompanyRequest::from_job_json`]); workers start on it at once.
    /// The account's quotas are checked in the store's step that adds the job.
    ///
    /// # Errors
    /// [`BulkError::TooManyOpenJobs`], [`BulkError::TooManyQueuedUrls`] (nothing stored);
    /// [`BulkError::Store`], [`BulkError::Ledger`].
    pub async fn submit(
        &self,
        caller: Caller,
        request: &CompanyRequest,
    ) -> Result<JobView, BulkError> {
        let quotas = quotas_of(
            self.ledger.as_ref(),
            caller.tenant.account,
            &self.settings.quotas,
        )
        .await?;
        let bound = QueueBound {
            open_jobs: quotas.open_jobs,
            queued_inputs: quotas.queued_urls,
        };
        let created = self
            .store
            .create(
                NewJob {
                    tenant: caller.tenant,
                    key_id: caller.key_id,
                    window: request.window,
                    urls: request
                        .urls
                        .iter()
                        .map(|u| (u.original.clone(), u.page.clone()))
                        .collect(),
                    metadata: request.urls.iter().map(|u| u.metadata.clone()).collect(),
                    fields: request.fields.clone(),
                    include: request.include,
                    callback: request.callback.clone(),
                },
                bound,
            )
            .await?;
        let job = match created {
            Created::Job(job) => *job,
            Created::TooManyOpenJobs { open } => {
                return Err(BulkError::TooManyOpenJobs {
                    open,
                    quota: quotas.open_jobs,
                });
            }
            Created::TooManyQueuedInputs { queued } => {
                return Err(BulkError::TooManyQueuedUrls {
                    queued,
                    adding: request.urls.len() as u64,
                    quota: quotas.queued_urls,
                });
            }
        };
        self.work_arrived.notify_waiters();
        Ok(JobView::of(job))
    }

    /// The job `id` of `tenant`.
    ///
    /// # Errors
    /// [`BulkError::Store`].
    pub async fn job(
        &self,
        tenant: company_model::Tenant,
        id: JobId,
    ) -> Result<Option<JobView>, BulkError> {
        Ok(self.store.job(tenant, id).await?.map(JobView::of))
    }

    /// Up to `limit` jobs of `tenant`, newest first, older than `before` when given.
    ///
    /// # Errors
    /// [`BulkError::Store`].
    pub async fn jobs(
        &self,
        tenant: company_model::Tenant,
        before: Option<JobId>,
        limit: u32,
    ) -> Result<Vec<JobView>, BulkError> {
        Ok(self
            .store
            .jobs(tenant, before, limit)
            .await?
            .into_iter()
            .map(JobView::of)
            .collect())
    }

    /// Cancels the job: nothing more of it is fetched or charged (a lease already running ends and records
    /// what it paid for). Returns the job as it now is; `None` when `tenant` has no such job.
    ///
    /// # Errors
    /// [`BulkError::Store`].
    pub async fn cancel(
        &self,
        tenant: company_model::Tenant,
        id: JobId,
    ) -> Result<Option<JobView>, BulkError> {
        Ok(self.store.cancel(tenant, id).await?.map(JobView::of))
    }

    /// Up to `limit` job endings not yet announced (a job became `done`, `paused` or `cancelled`), oldest job
    /// first, each as the account event that tells its account. Hand each to whoever sends account events, then
    /// record it with [`BulkJobs::announced`]; until then it is listed again (on every server: the event's id is
    /// the same, so it is sent once).
    ///
    /// # Errors
    /// [`BulkError::Store`].
    pub async fn endings(&self, limit: u32) -> Result<Vec<JobEnding>, BulkError> {
        let found = self.store.unannounced(limit).await?;
        Ok(found
            .into_iter()
            .map(|(job, ending)| JobEnding::of(&JobView::of(job), ending))
            .collect())
    }

    /// Records that `ending` was announced, so [`BulkJobs::endings`] lists it no more.
    ///
    /// # Errors
    /// [`BulkError::Store`].
    pub async fn announced(&self, ending: &JobEnding) -> Result<(), BulkError> {
        Ok(self.store.announced(ending.job, ending.ending).await?)
    }

    /// Deletes the job with its results (cancelling it first if it still runs: a lease already running records
    /// nothing, though what it fetched may have been charged). False when `tenant` has no such job.
    ///
    /// # Errors
    /// [`BulkError::Store`].
    pub async fn delete(
        &self,
        tenant: company_model::Tenant,
        id: JobId,
    ) -> Result<bool, BulkError> {
        Ok(self.store.delete(tenant, id).await?)
    }

    /// Up to `limit` input positions of the job from `from` on, with their answers so far; `None` when `tenant`
    /// has no such job.
    ///
    /// # Errors
    /// [`BulkError::Store`].
    pub async fn inputs(
        &self,
        tenant: company_model::Tenant,
        id: JobId,
        from: u64,
        limit: u32,
    ) -> Result<Option<Vec<InputRow>>, BulkError> {
        if self.store.job(tenant, id).await?.is_none() {
            return Ok(None);
        }
        Ok(Some(self.store.inputs(id, from, limit).await?))
    }

    /// Starts the runner: frees this server's leases left from before a restart, then runs
    /// [`BulkSettings::workers`] workers, the paused-job check and the purge of old jobs until
    /// [`Runner::stop`]. Needs a Tokio runtime.
    pub fn start(self: &Arc<Self>) -> Runner {
        let stopping = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::new();
        let this = Arc::clone(self);
        let ready = Arc::new(tokio::sync::OnceCell::new());
        for _ in 0..self.settings.workers.max(1) {
            let (this, stopping, ready) =
                (Arc::clone(&this), Arc::clone(&stopping), Arc::clone(&ready));
            tasks.push(tokio::spawn(async move {
                ready.get_or_init(|| this.release_own_leases()).await;
                this.work_until(&stopping).await;
            }));
        }
        let (this, flag) = (Arc::clone(self), Arc::clone(&stopping));
        tasks.push(tokio::spawn(async move { this.look_after(&flag).await }));
        Runner {
            stopping,
            jobs: Arc::clone(self),
            tasks,
        }
    }

    async fn release_own_leases(&self) {
        match self.store.release_own(&self.server).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                leases = n,
                "resuming job leases left by this server's last run"
            ),
            Err(error) => {
                warn!(%error, "could not free this server's old job leases; they lapse by themselves");
            }
        }
    }

    /// How long a lease is given: the longest one request can take, and time to record its answers.
    fn lease_time(&self) -> Duration {
        self.lookup.longest_request() + Duration::from_secs(30)
    }

    async fn work_until(&self, stopping: &AtomicBool) {
        let mut most = self.settings.pages_per_lease.max(1);
        while !stopping.load(Ordering::Relaxed) {
            let idle = match self.work_once(most).await {
                Ok(Worked::Done) => {
                    most = self.settings.pages_per_lease.max(1);
                    false
                }
                Ok(Worked::Smaller(affordable)) => {
                    most = affordable;
                    false
                }
                Ok(Worked::Nothing) => true,
                Ok(Worked::Wait(wait)) => {
                    tokio::time::sleep(wait).await;
                    false
                }
                Err(error) => {
                    warn!(%error, "a bulk job worker failed; retrying");
                    true
                }
            };
            if idle {
                let arrived = self.work_arrived.notified();
                let _ = tokio::time::timeout(self.settings.idle_poll, arrived).await;
            }
        }
    }

    /// Takes one lease and serves it. Public for embedders that drive the work themselves (e.g. a command that
    /// runs one job to its end without a server); [`BulkJobs::start`] calls it in a loop.
    ///
    /// # Errors
    /// [`BulkError`] when a store fails; the lease then lapses and is run again under its id, paying nothing twice.
    pub async fn work_once(&self, most: usize) -> Result<Worked, BulkError> {
        let Some(lease) = self
            .store
            .lease(&self.server, most, self.lease_time())
            .await?
        else {
            return Ok(Worked::Nothing);
        };
        self.serve(lease).await
    }

    async fn serve(&self, lease: Lease) -> Result<Worked, BulkError> {
        let caller = Caller {
            tenant: lease.tenant,
            key_id: lease.key_id,
        };
        let request = CompanyRequest {
            urls: lease
                .pages
                .iter()
                .map(|page| SubmittedUrl {
                    original: page.as_str().to_owned(),
                    page: page.clone(),
                    metadata: None,
                })
                .collect(),
            window: lease.window,
            stale_if_error: false,
            // The answers are recorded as the job's selection keeps them (billing is the same).
            fields: lease.fields.clone(),
            include: lease.include,
            // The job's end is announced by the sweep (`endings`), not by a lookup.
            callback: None,
        };
        let reference = format!("job:{}:lease:{}", lease.job, lease.id);
        match self.lookup.run_bulk(caller, &request, reference).await {
            Ok(outcome) => {
                let mut answers = answers(&lease.pages, outcome.response);
                let pushed_back = answers.iter().filter(|(_, a)| is_push_back(a)).count();
                if pushed_back > 0 && self.patient(&lease).await? {
                    // Unanswered, they go back to the job (nothing was charged for them).
                    answers.retain(|(_, answer)| !is_push_back(answer));
                }
                let recorded = self
                    .store
                    .finish(lease.id, answers, outcome.charged.millis())
                    .await?;
                if !recorded {
                    debug!(lease = lease.id, "another worker recorded this lease first");
                }
                if pushed_back > 0 {
                    // Hold off until the fetcher has a route again, rather than spend attempts on cooling ones.
                    let ready_in = self.lookup.routes_ready_in();
                    debug!(
                        pushed_back,
                        ready_in_ms = ready_in.as_millis() as u64,
                        "pages met push-back"
                    );
                    return Ok(Worked::Wait(
                        ready_in.clamp(Duration::from_millis(100), Duration::from_secs(5)),
                    ));
                }
                Ok(Worked::Done)
            }
            Err(LookupError::Ledger(LedgerError::InsufficientCredits { available, .. })) => {
                // Nothing was fetched or charged: the pages go back, and a lease the account can pay for is next.
                self.store.give_back(lease.id).await?;
                let price = price_per_company(lease.window);
                let affordable =
                    usize::try_from(available.millis() / price.millis().max(1)).unwrap_or(0);
                let balance = credit_ledger::account_of(self.ledger.as_ref(), lease.tenant)
                    .await?
                    .map_or(Credits::ZERO, |a| a.balance);
                if affordable >= lease.pages.len() || (affordable == 0 && balance >= price) {
                    // The credits are held by requests in flight, which may not spend them: wait for them to end.
                    return Ok(Worked::Wait(Duration::from_millis(200)));
                }
                if affordable == 0 {
                    self.store.pause(lease.job, "insufficient_credits").await?;
                    return Ok(Worked::Done);
                }
                Ok(Worked::Smaller(affordable))
            }
            Err(LookupError::TooManyLiveLookups { retry_after, .. }) => {
                self.store.give_back(lease.id).await?;
                Ok(Worked::Wait(retry_after.min(Duration::from_secs(1))))
            }
            Err(LookupError::Ledger(error)) => Err(error.into()),
            Err(other) => {
                // run_bulk reports time-outs per URL; any other refusal charged nothing.
                warn!(error = %other, "a job lease was refused");
                self.store.give_back(lease.id).await?;
                Ok(Worked::Wait(Duration::from_secs(1)))
            }
        }
    }

    /// Whether the lease's job is young enough for its pushed-back pages to be tried again
    /// ([`BulkSettings::push_back_patience`]).
    async fn patient(&self, lease: &Lease) -> Result<bool, BulkError> {
        let started = self
            .store
            .job(lease.tenant, lease.job)
            .await?
            .and_then(|job| job.started_at);
        let patience = jiff::SignedDuration::try_from(self.settings.push_back_patience)
            .unwrap_or(jiff::SignedDuration::MAX);
        Ok(started.is_none_or(|at| jiff::Timestamp::now().duration_since(at) < patience))
    }

    /// Resumes paused jobs whose account can pay again and purges old jobs, until stopped.
    async fn look_after(&self, stopping: &AtomicBool) {
        let mut last_purge: Option<tokio::time::Instant> = None;
        while !stopping.load(Ordering::Relaxed) {
            if let Err(error) = self.resume_paid().await {
                warn!(%error, "could not check paused jobs");
            }
            if last_purge.is_none_or(|at| at.elapsed() > Duration::from_hours(1)) {
                let retention = jiff::SignedDuration::try_from(self.settings.retention)
                    .unwrap_or(jiff::SignedDuration::MAX);
                let cutoff = jiff::Timestamp::now()
                    .checked_sub(retention)
                    .unwrap_or(jiff::Timestamp::MIN);
                match self.store.purge(cutoff).await {
                    Ok(0) => {}
                    Ok(n) => tracing::info!(jobs = n, "purged finished jobs past their retention"),
                    Err(error) => warn!(%error, "could not purge old jobs"),
                }
                last_purge = Some(tokio::time::Instant::now());
            }
            tokio::time::sleep(self.settings.resume_check).await;
        }
    }

    /// Puts back to running the paused jobs whose account holds at least the smallest price again.
    async fn resume_paid(&self) -> Result<(), BulkError> {
        let mut resumed = false;
        for (job, tenant) in self.store.paused().await? {
            let balance = credit_ledger::account_of(self.ledger.as_ref(), tenant)
                .await?
                .map_or(Credits::ZERO, |a| a.balance);
            if balance >= STORED_PRICE {
                self.store.resume(job).await?;
                resumed = true;
            }
        }
        if resumed {
            self.work_arrived.notify_waiters();
        }
        Ok(())
    }
}

/// What [`BulkJobs::work_once`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Worked {
    /// Served a lease (or paused its job).
    Done,
    /// Gave a lease back because the account can pay for only this many pages: lease no more next time.
    Smaller(usize),
    /// Wait this long before the next lease: the lease was given back (the account's live lookups are at their
    /// cap), or some of its pages met push-back and went back to the job.
    Wait(Duration),
    /// No work.
    Nothing,
}

/// The runner started by [`BulkJobs::start`].
#[derive(Debug)]
pub struct Runner {
    stopping: Arc<AtomicBool>,
    jobs: Arc<BulkJobs>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Runner {
    /// Stops taking work and waits for the leases in flight to end (each within the live time-out).
    pub async fn stop(self) {
        self.stopping.store(true, Ordering::Relaxed);
        self.jobs.work_arrived.notify_waiters();
        for task in self.tasks {
            let _ = tokio::time::timeout(self.jobs.lease_time(), task).await;
        }
    }
}

/// An answer that is the origin pushing back rather than the page's own: worth asking again later.
fn is_push_back(answer: &Answer) -> bool {
    matches!(
        answer,
        Answer::Unresolved {
            code: company_model::UnresolvedCode::Blocked | company_model::UnresolvedCode::Authwall,
            ..
        }
    )
}

/// Each leased page's answer from the response of its request, whose URLs were the pages themselves.
fn answers(pages: &[PageUrl], response: CompanyDataResponse) -> Vec<(PageUrl, Answer)> {
    let mut by_url: std::collections::HashMap<String, Answer> = response
        .results
        .into_iter()
        .map(|r| {
            (
                r.original_li_url,
                Answer::Found {
                    record: r.record,
                    source: r.source,
                    fetched_at: r.fetched_at,
                },
            )
        })
        .collect();
    by_url.extend(response.unresolved.into_iter().map(|u| {
        (
            u.original_li_url,
            Answer::Unresolved {
                code: u.error,
                message: u.message,
            },
        )
    }));
    pages
        .iter()
        .filter_map(|page| Some((page.clone(), by_url.remove(page.as_str())?)))
        .collect()
}
