//! Bulk jobs' durable state: each job's inputs in order, its distinct pages, who is working on which pages
//! (leases), and each page's answer.
//!
//! A job is a list of submitted URLs (up to [`api_contract::MAX_JOB_URLS`]). URLs that normalize to the same
//! page share one *job page*, so a page is looked up and paid for once however often the list names it. Work
//! is handed out in *leases*: a few pages of one job, for a while. A lease that ends without its answers being
//! recorded (its server stopped) is handed out again **whole, under the same id**, so whoever runs it again
//! can name the same charge reference and pay nothing twice. Jobs are handed out fairly: the account whose
//! work was leased longest ago goes first, then its job leased longest ago.
//!
//! [`JobStore`] is the backend-neutral interface; `SqliteJobStore` the embedded backend (feature `sqlite`, the
//! default), `PgJobStore` the backend for several servers on one PostgreSQL database (feature `postgres`; leases
//! are taken with `FOR UPDATE SKIP LOCKED`, so servers never take the same pages).
//!
//! Not here: looking pages up, billing, deciding when a job pauses (the bulk-jobs service does; this crate
//! records it).
#![deny(missing_docs)]

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

use std::time::Duration;

/// A job's status, an answer and an input row are the API's wire types (`company-model`), stored as they are.
pub use api_contract::{Answer, InputRow, JobStatus};
use api_contract::{FreshnessWindow, Includes, InputMetadata, JobCallback, RecordFields};
use company_model::{RecordJson, RecordSource, Tenant, UnresolvedCode};
use page_url::PageUrl;

#[cfg(feature = "postgres")]
pub use postgres::PgJobStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteJobStore;

/// A job's id, unique in its database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(pub i64);

impl std::fmt::Display for JobId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A job to create.
#[derive(Clone, Debug)]
pub struct NewJob {
    /// The tenant (account and mode) that pays.
    pub tenant: Tenant,
    /// The API key that created it, kept in the ledger rows of its charges.
    pub key_id: Option<i64>,
    /// The freshness window every page is looked up with.
    pub window: FreshnessWindow,
    /// The submitted URLs in input order, `(as sent, normalized)`; at least one.
    pub urls: Vec<(String, PageUrl)>,
    /// Each input's caller metadata, in input order (a shorter list leaves the inputs past its end without).
    pub metadata: Vec<Option<InputMetadata>>,
    /// `fields`: the record members the job's answers keep; `None` for whole records.
    pub fields: Option<RecordFields>,
    /// `include`: the parts of each record fetched beyond its page.
    pub include: Includes,
    /// Where the job's end is POSTed besides the account's endpoints (`callbackUrl`, `callbackHeaders`).
    pub callback: Option<JobCallback>,
}

/// The most of the job queue one account may hold when it adds a job ([`JobStore::create`]): its jobs not yet
/// ended (queued, running, paused) and their inputs not yet answered, the new job's counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueBound {
    /// Jobs not yet ended, the new one included.
    pub open_jobs: u32,
    /// Inputs of those jobs not yet answered, the new job's all included.
    pub queued_inputs: u64,
}

/// What [`JobStore::create`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Created {
    /// The job, stored.
    Job(Box<Job>),
    /// Nothing stored: the account has [`QueueBound::open_jobs`] jobs not yet ended.
    TooManyOpenJobs {
        /// Its jobs not yet ended.
        open: u32,
    },
    /// Nothing stored: the new job's inputs would take the account past [`QueueBound::queued_inputs`].
    TooManyQueuedInputs {
        /// Inputs of its open jobs not yet answered.
        queued: u64,
    },
}

/// Whether an account holding `open` jobs with `queued` unanswered inputs may add one of `inputs` under
/// `bound`: the one rule both backends apply in the transaction that adds the job.
pub(crate) fn admit(
    bound: QueueBound,
    (open, queued): (i64, i64),
    inputs: usize,
) -> Option<Created> {
    let open = u32::try_from(open).unwrap_or(u32::MAX);
    let queued = u64::try_from(queued).unwrap_or(0);
    if open >= bound.open_jobs {
        Some(Created::TooManyOpenJobs { open })
    } else if queued.saturating_add(inputs as u64) > bound.queued_inputs {
        Some(Created::TooManyQueuedInputs { queued })
    } else {
        None
    }
}

/// The account's jobs not yet ended and their unanswered inputs, as both backends count them (`?1`/`$1`: the
/// account).
pub(crate) fn open_counts_sql(account: &str) -> String {
    format!(
        "SELECT count(*), CAST(coalesce(sum(total - done), 0) AS BIGINT) FROM jobs
         WHERE account_id = {account} AND status IN ('queued', 'running', 'paused')"
    )
}

/// A job and its counts. Counts of *inputs* (positions) and of distinct *pages* differ when the list names a page
/// more than once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    /// Its id.
    pub id: JobId,
    /// The tenant (account and mode) that pays.
    pub tenant: Tenant,
    /// The API key that created it.
    pub key_id: Option<i64>,
    /// Where it is.
    pub status: JobStatus,
    /// Why it is paused, e.g. `insufficient_credits`; `None` unless paused.
    pub paused_reason: Option<String>,
    /// Its freshness window.
    pub window: FreshnessWindow,
    /// Inputs (submitted URLs).
    pub total: u64,
    /// Inputs answered, resolved or not.
    pub done: u64,
    /// Inputs answered with a record.
    pub resolved: u64,
    /// Inputs answered without one.
    pub unresolved: u64,
    /// Distinct pages.
    pub pages: u64,
    /// Distinct pages answered.
    pub pages_done: u64,
    /// Credits charged so far, in thousandths of a credit.
    pub charged_millis: i64,
    /// When it was created.
    pub created_at: jiff::Timestamp,
    /// When its first pages were leased.
    pub started_at: Option<jiff::Timestamp>,
    /// When it became `done` or `cancelled`.
    pub finished_at: Option<jiff::Timestamp>,
    /// The record members its answers keep; `None` for whole records.
    pub fields: Option<RecordFields>,
    /// The parts of each record fetched beyond its page (`include`).
    pub include: Includes,
    /// The member names of its inputs' metadata, each once, in the order first sent: a CSV of its results has a
    /// `metadata.<name>` column for each.
    pub metadata_columns: Vec<String>,
    /// Where its end is POSTed besides the account's endpoints.
    pub callback: Option<JobCallback>,
}

/// Pages of one job handed to one worker for a while.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// Its id: the same when an abandoned lease is handed out again, so it can name the charge of its pages.
    pub id: i64,
    /// The job.
    pub job: JobId,
    /// The job's tenant (account and mode).
    pub tenant: Tenant,
    /// The job's API key.
    pub key_id: Option<i64>,
    /// The job's freshness window.
    pub window: FreshnessWindow,
    /// The pages, distinct, in the order the job first named them.
    pub pages: Vec<PageUrl>,
    /// The job's field selection, which the answers recorded for the pages keep.
    pub fields: Option<RecordFields>,
    /// The parts of each record the job includes, fetched beyond its page.
    pub include: Includes,
}

/// Why a job store operation failed: the backend's error.
#[derive(Debug, thiserror::Error)]
#[error("the job store failed: {0}")]
pub struct JobStoreError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

/// Where jobs live. Every method is atomic and safe to call from several tasks; on a backend for several
/// servers, from several servers.
#[async_trait::async_trait]
pub trait JobStore: Send + Sync + std::fmt::Debug {
    /// Stores a new `queued` job with its inputs and distinct pages, unless its account would then hold more of
    /// the queue than `bound` allows (checked and added in one step: concurrent submissions cannot pass it
    /// together).
    async fn create(&self, job: NewJob, bound: QueueBound) -> Result<Created, JobStoreError>;
    /// The job `id` if it belongs to `tenant`.
    async fn job(&self, tenant: Tenant, id: JobId) -> Result<Option<Job>, JobStoreError>;
    /// Up to `limit` jobs of `tenant`, newest first; with `before`, only older than that job (the next page).
    async fn jobs(
        &self,
        tenant: Tenant,
        before: Option<JobId>,
        limit: u32,
    ) -> Result<Vec<Job>, JobStoreError>;
    /// Cancels the job unless it is already `done` or `cancelled`; returns it as it now is (`None` if it is not
    /// the account's). Leases in flight may still record their answers; no page is leased again.
    async fn cancel(&self, tenant: Tenant, id: JobId) -> Result<Option<Job>, JobStoreError>;
    /// Deletes the job with its inputs, answers and leases if it belongs to `tenant`; false when it does not.
    /// A lease in flight finds its lease gone and records nothing (as after a cancel, what it fetched may
    /// have been charged).
    async fn delete(&self, tenant: Tenant, id: JobId) -> Result<bool, JobStoreError>;
    /// Hands out up to `most` pages for `lasting`, to `server`: an abandoned lease (whole, same id) if a
    /// `queued` or `running` job has one, else pages not yet leased of the job whose account was served longest
    /// ago. The job becomes `running`. `None` when there is no work.
    async fn lease(
        &self,
        server: &str,
        most: usize,
        lasting: Duration,
    ) -> Result<Option<Lease>, JobStoreError>;
    /// Returns a lease's pages unanswered, for a lease whose work did not start or charged nothing: the lease ends
    /// and its pages can be leased again under a new id.
    async fn give_back(&self, lease: i64) -> Result<(), JobStoreError>;
    /// Records the answers of a lease's pages and what was charged for them, and ends the lease; a job whose
    /// every page is answered becomes `done`. Returns false, recording nothing, when the lease has already
    /// ended (another worker recorded the same pages first). Pages of the lease without an answer go back
    /// unleased.
    async fn finish(
        &self,
        lease: i64,
        answers: Vec<(PageUrl, Answer)>,
        charged_millis: i64,
    ) -> Result<bool, JobStoreError>;
    /// Pauses a `queued` or `running` job with a reason (e.g. `insufficient_credits`).
    async fn pause(&self, id: JobId, reason: &str) -> Result<(), JobStoreError>;
    /// Paused jobs, `(job, account)`, oldest first.
    async fn paused(&self) -> Result<Vec<(JobId, Tenant)>, JobStoreError>;
    /// Puts a `paused` job back to `running`.
    async fn resume(&self, id: JobId) -> Result<(), JobStoreError>;
    /// Ends the leases `server` holds, so their pages are handed out again at once (same lease ids): call it when
    /// the server starts, since a server that stopped left its leases unfinished. Returns how many.
    async fn release_own(&self, server: &str) -> Result<u64, JobStoreError>;
    /// Up to `limit` input positions of the job from `from` on, in order, with their answers so far.
    async fn inputs(
        &self,
        id: JobId,
        from: u64,
        limit: u32,
    ) -> Result<Vec<InputRow>, JobStoreError>;
    /// Deletes jobs that finished before `finished_before`, with their inputs and answers; returns how many.
    async fn purge(&self, finished_before: jiff::Timestamp) -> Result<u64, JobStoreError>;
    /// Up to `limit` jobs whose latest ending (becoming `done`, `paused` or `cancelled`) is not yet announced,
    /// oldest job first, each with that ending's number (a job that pauses, resumes and finishes ends three
    /// times). A job may have moved on since (a paused job resumed): it is listed as it is now.
    async fn unannounced(&self, limit: u32) -> Result<Vec<(Job, i64)>, JobStoreError>;
    /// Records that ending `ending` of job `id` is announced (or needs no announcement); an earlier ending
    /// recorded late never undoes a later one.
    async fn announced(&self, id: JobId, ending: i64) -> Result<(), JobStoreError>;
}

/// The distinct pages of a job's inputs in first-seen order, with how many inputs name each, and each input's
/// page number (its index in the first list).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn distinct_pages(urls: &[(String, PageUrl)]) -> (Vec<(&PageUrl, i64)>, Vec<i64>) {
    let mut numbers: std::collections::HashMap<&PageUrl, usize> =
        std::collections::HashMap::with_capacity(urls.len());
    let mut pages: Vec<(&PageUrl, i64)> = Vec::new();
    let mut page_of = Vec::with_capacity(urls.len());
    for (_, page) in urls {
        let number = *numbers.entry(page).or_insert_with(|| {
            pages.push((page, 0));
            pages.len() - 1
        });
        pages[number].1 += 1;
        page_of.push(crate::int(number));
    }
    (pages, page_of)
}

/// An answer as the columns both backends store: `(found, record, source, fetched_at_ms, code, message)`.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) type AnswerColumns = (
    bool,
    Option<String>,
    Option<&'static str>,
    Option<i64>,
    Option<&'static str>,
    Option<String>,
);

#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn answer_columns(answer: &Answer) -> AnswerColumns {
    match answer {
        Answer::Found {
            record,
            source,
            fetched_at,
        } => (
            true,
            Some(record.as_str().to_owned()),
            Some(source.as_str()),
            Some(fetched_at.as_millisecond()),
            None,
            None,
        ),
        Answer::Unresolved { code, message } => (
            false,
            None,
            None,
            None,
            Some(code.as_str()),
            Some(message.clone()),
        ),
    }
}

/// The answer stored as [`answer_columns`] wrote it; `None` for a page not done (or a row that cannot be read,
/// which is then reported as not done rather than as a wrong answer).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn answer_from_columns(
    done: bool,
    found: Option<bool>,
    record: Option<String>,
    source: Option<&str>,
    fetched_at_ms: Option<i64>,
    code: Option<&str>,
    message: Option<String>,
) -> Option<Answer> {
    if !done {
        return None;
    }
    if found? {
        Some(Answer::Found {
            record: RecordJson::from_stored(record?).ok()?,
            source: RecordSource::from_name(source?),
            fetched_at: jiff::Timestamp::from_millisecond(fetched_at_ms?).ok()?,
        })
    } else {
        let code = code?;
        Some(Answer::Unresolved {
            code: UnresolvedCode::ALL
                .into_iter()
                .find(|c| c.as_str() == code)
                .unwrap_or(UnresolvedCode::FetchFailed),
            message: message.unwrap_or_default(),
        })
    }
}

/// The window as stored: whole milliseconds.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn window_millis(window: FreshnessWindow) -> i64 {
    i64::try_from(window.duration().as_millis()).unwrap_or(i64::MAX)
}

/// The window stored by [`window_millis`].
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn window_from_millis(millis: i64) -> FreshnessWindow {
    FreshnessWindow::from_seconds(millis.max(0) as f64 / 1000.0).unwrap_or(FreshnessWindow::LIVE)
}

/// The second migration of both backends (the same SQL on each): field selection (the kept member names joined
/// with `,`; NULL: whole records), the metadata's member names (a JSON array, the CSV's metadata columns) and each
/// input's metadata (compact JSON text).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) const FIELDS_AND_METADATA: &str =
    include_str!("../migrations/both/0002_alter_table_jobs_fields_and_metadata.sql");

/// A job's endings for the account events they make (both engines): `endings` counts the times it became
/// `done`, `paused` or `cancelled`, `announced` the last of them announced; the index finds the rest.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) const ENDINGS: &str =
    include_str!("../migrations/both/0003_alter_table_jobs_endings.sql");

/// A job's `include` (both engines): the parts' names as [`Includes::to_names`] writes them.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) const INCLUDE_PARTS: &str =
    include_str!("../migrations/both/0004_alter_table_jobs_include_parts.sql");
/// The migration that adds `callback`, the job's `callbackUrl` and `callbackHeaders` ([`api_contract::JobCallback`]
/// as JSON; NULL for none), the same SQL on both engines.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) const CALLBACK: &str =
    include_str!("../migrations/both/0005_alter_table_jobs_callback.sql");

/// A job's callback as its column stores it.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn callback_column(callback: Option<&JobCallback>) -> Option<String> {
    callback.and_then(|callback| serde_json::to_string(callback).ok())
}

/// A job's callback read back from its column (`None` for none, or for text this store did not write).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn callback_from(stored: Option<&str>) -> Option<JobCallback> {
    stored.and_then(|text| serde_json::from_str(text).ok())
}

/// The member names of `metadata`, each once, in the order first sent; as stored, a JSON array (`None` when there
/// are none).
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn metadata_columns(metadata: &[Option<InputMetadata>]) -> Option<String> {
    let mut names: Vec<String> = Vec::new();
    for name in metadata.iter().flatten().flat_map(InputMetadata::names) {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    (!names.is_empty()).then(|| serde_json::to_string(&names).unwrap_or_default())
}

/// The columns stored by [`metadata_columns`].
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn metadata_columns_from(stored: Option<&str>) -> Vec<String> {
    stored
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_default()
}

/// A count or index as the stores' integer columns hold it.
pub(crate) fn int(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
