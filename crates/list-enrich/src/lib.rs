//! A list file enriched as one bulk job: what `company-data enrich` does, for any program that holds a list.
//!
//! [`List::read`] reads the list people keep (a CRM's CSV, NDJSON, a text file of URLs; [`lists`]); [`enrich`]
//! submits its valid URLs as one job to a [`JobTarget`] — a company-data server through the Rust client
//! ([`Remote`]) or the job runner of a service in this process ([`Embedded`]) — follows it to its end, reads its
//! results and writes one output row per input row, the row's own fields beside its record. The job's id is
//! kept in `OUTPUT.job` until the output is written, so an interrupted run continues the same job
//! (`resume`), paying nothing twice.
//!
//! A list of website domains or company names ([`QueryList`]) is resolved instead ([`enrich_queries`]): each
//! row's page found with its evidence, and its record beside the row's fields.
//!
//! Not here: running jobs (`bulk-jobs`), the HTTP API (`company-data-client` calls it), progress display.
#![deny(missing_docs)]

pub mod lists;
pub mod queries;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use api_contract::{
    Answer, CompanyRequest, Includes, InputRow, InvalidRequest, JobInfo, RecordFields, RequestBody,
};
pub use bulk_jobs::output::CsvCells;
use bulk_jobs::{BulkError, BulkJobs, JobId};
use company_data_client::{Client, ClientError};
use company_lookup::Caller;
pub use lists::{List, ListError, ListFormat, ListRow};
pub use queries::{
    EmbeddedResolver, QueryColumns, QueryList, QueryRow, ResolveTarget, enrich_queries,
};
use sha2::Digest;

/// Why a list could not be enriched.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnrichError {
    /// The server refused or could not be reached.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// The embedded job runner's store failed.
    #[error(transparent)]
    Jobs(#[from] BulkError),
    /// The embedded runner refused the list (the server would answer 400).
    #[error(transparent)]
    Invalid(#[from] InvalidRequest),
    /// The embedded resolver refused the request (e.g. the account cannot pay) or its ledger failed.
    #[error(transparent)]
    Resolve(#[from] company_lookup::LookupError),
    /// The embedded runner has no such job for the account.
    #[error("no job {0} of this account; delete the `.job` file beside the output to start afresh")]
    NoSuchJob(String),
    /// A job was started for this output before and did not finish.
    #[error(
        "job {job} for {out} was started before and did not finish; run again with --resume to continue it \
         without paying again, or delete {saved} to start afresh"
    )]
    Unfinished {
        /// The job's id.
        job: String,
        /// The output file.
        out: String,
        /// The file that keeps the job's id.
        saved: String,
    },
    /// `resume` was asked for a job of another list or another target.
    #[error(
        "{saved} belongs to another list or another server or database; delete it to start afresh"
    )]
    NotThisList {
        /// The file that keeps the job's id.
        saved: String,
    },
    /// `resume` was asked with other `--fields` or `--include` than the job was started with: its answers
    /// were recorded with those.
    #[error(
        "{saved} is a job started with {started}; run again with the same options to resume it, or delete \
         {saved} to start afresh with {asked}"
    )]
    OtherOptions {
        /// The file that keeps the job's id.
        saved: String,
        /// The options the job was started with, as on the command line (`no --fields, --include job_count`).
        started: String,
        /// The options of this run, in the same form.
        asked: String,
    },
    /// A file could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Where a job runs: the three things enrichment asks of it.
#[async_trait::async_trait]
pub trait JobTarget: Send + Sync {
    /// Starts a job of `body`'s URLs; its state.
    async fn submit(&self, body: &RequestBody) -> Result<JobInfo, EnrichError>;
    /// The job's state now.
    async fn job(&self, id: &str) -> Result<JobInfo, EnrichError>;
    /// Every answered input position of the job, by position.
    async fn results(&self, id: &str) -> Result<BTreeMap<u64, InputRow>, EnrichError>;
}

/// A company-data server, through its jobs API.
#[derive(Clone, Debug)]
pub struct Remote(pub Client);

#[async_trait::async_trait]
impl JobTarget for Remote {
    async fn submit(&self, body: &RequestBody) -> Result<JobInfo, EnrichError> {
        Ok(self.0.submit_job(body).await?)
    }

    async fn job(&self, id: &str) -> Result<JobInfo, EnrichError> {
        Ok(self.0.job(id).await?)
    }

    async fn results(&self, id: &str) -> Result<BTreeMap<u64, InputRow>, EnrichError> {
        let mut answers = BTreeMap::new();
        let mut pages = self.0.job_results(id);
        while let Some(rows) = pages.next_page().await? {
            answers.extend(rows.into_iter().map(|row| (row.position, row)));
        }
        Ok(answers)
    }
}

/// The job runner of a service in this process, billing `caller`'s account.
#[derive(Clone, Debug)]
pub struct Embedded {
    /// The runner.
    pub jobs: Arc<BulkJobs>,
    /// Who pays.
    pub caller: Caller,
    /// The network whose page URLs are taken.
    pub domain: page_url::NetworkDomain,
}

#[async_trait::async_trait]
impl JobTarget for Embedded {
    async fn submit(&self, body: &RequestBody) -> Result<JobInfo, EnrichError> {
        // The body goes through the server's own validation, as it would over HTTP (a `RequestBody` always
        // serializes; were it not to, the empty text would be refused as not JSON).
        let text = serde_json::to_vec(body).unwrap_or_default();
        let request = CompanyRequest::from_job_json(&text, &self.domain, false)?;
        Ok(self.jobs.submit(self.caller, &request).await?.info())
    }

    async fn job(&self, id: &str) -> Result<JobInfo, EnrichError> {
        self.jobs
            .job(self.caller.tenant, job_id(id)?)
            .await?
            .map(|job| job.info())
            .ok_or_else(|| EnrichError::NoSuchJob(id.to_owned()))
    }

    async fn results(&self, id: &str) -> Result<BTreeMap<u64, InputRow>, EnrichError> {
        let mut answers = BTreeMap::new();
        let page = bulk_jobs::MOST_ROWS_PER_READ;
        let mut from = 0_u64;
        loop {
            let rows = self
                .jobs
                .inputs(self.caller.tenant, job_id(id)?, from, page)
                .await?
                .unwrap_or_default();
            let full = rows.len() == page as usize;
            answers.extend(
                rows.into_iter()
                    .filter(|row| row.answer.is_some())
                    .map(|row| (row.position, row)),
            );
            if !full {
                return Ok(answers);
            }
            from += u64::from(page);
        }
    }
}

/// A job's id as the embedded runner knows it.
fn job_id(text: &str) -> Result<JobId, EnrichError> {
    text.parse()
        .map(JobId)
        .map_err(|_| EnrichError::NoSuchJob(text.to_owned()))
}

/// What to enrich and how.
#[derive(Clone, Debug)]
pub struct Enrichment<'a> {
    /// The list.
    pub list: &'a List,
    /// Where the output goes; `OUTPUT.job` keeps the job's id meanwhile.
    pub out: &'a Path,
    /// The output's format.
    pub format: ListFormat,
    /// The freshness window in hours (0: live).
    pub max_age_hours: f64,
    /// The server or database the job runs on, as the user named it: a saved job is resumed only there.
    pub target_name: String,
    /// Continue the job an interrupted run started (else such a job is an error).
    pub resume: bool,
    /// How often the job's progress is read.
    pub poll: Duration,
    /// The record members to keep (`fields` of the job); `None` for whole records.
    pub fields: Option<RecordFields>,
    /// The parts of each record fetched beyond its page (`include` of the job).
    pub include: Includes,
    /// How the CSV output's answer cells are written (spreadsheet-safe by default); the list's own columns are
    /// written back as they were read.
    pub csv_cells: CsvCells,
}

/// What became of a list: the counts the summary line states.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// The job's id (none when no row held a valid URL).
    pub job: Option<String>,
    /// Rows answered with a record.
    pub resolved: usize,
    /// Rows without one, by reason (`invalid_url` for rows never sent, `not_looked_up` for rows of a job that
    /// ended early).
    pub unresolved: BTreeMap<String, usize>,
    /// Credits the job charged.
    pub credits: f64,
}

impl std::fmt::Display for Summary {
    /// `N resolved, M unresolved (reason count, …), C credits`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let unresolved: usize = self.unresolved.values().sum();
        write!(f, "{} resolved, {unresolved} unresolved", self.resolved)?;
        if !self.unresolved.is_empty() {
            let by_reason: Vec<String> = self
                .unresolved
                .iter()
                .map(|(reason, count)| format!("{reason} {count}"))
                .collect();
            write!(f, " ({})", by_reason.join(", "))?;
        }
        write!(f, ", {} credits", self.credits)
    }
}

/// What `OUTPUT.job` keeps between runs.
#[derive(serde::Serialize, serde::Deserialize)]
struct Saved {
    job: String,
    target: String,
    urls_sha256: String,
    /// The job's `--fields` and `--include` ([`Enrichment::options`]); absent in files written before they were
    /// kept, which were started with neither.
    #[serde(default = "no_options")]
    options: String,
}

fn no_options() -> String {
    Enrichment::describe_options(None, Includes::NONE)
}

impl Enrichment<'_> {
    /// The options a job's answers depend on, as the command line names them: `--fields a,b` or `no --fields`,
    /// then `--include job_count` or `no --include`.
    fn options(&self) -> String {
        Self::describe_options(self.fields.as_ref(), self.include)
    }

    fn describe_options(fields: Option<&RecordFields>, include: Includes) -> String {
        let fields = fields.map_or_else(
            || "no --fields".to_owned(),
            |fields| format!("--fields {}", fields.to_stored()),
        );
        let include = if include.is_empty() {
            "no --include".to_owned()
        } else {
            format!("--include {}", include.to_names())
        };
        format!("{fields}, {include}")
    }
}

/// Enriches the list on `target`: submits (or with `resume` continues) the job, calls `progress` with each
/// state read until it ends, writes the output (whole, renamed into place) and says what became of each row.
///
/// # Errors
/// [`EnrichError`]; the `.job` file stays when the job did not end, so a later run can resume it.
pub async fn enrich(
    target: &dyn JobTarget,
    what: &Enrichment<'_>,
    mut progress: impl FnMut(&JobInfo),
) -> Result<Summary, EnrichError> {
    let (urls, _) = what.list.to_send();
    let saved_path = PathBuf::from(format!("{}.job", what.out.display()));
    let mut summary = Summary::default();
    let mut answers = BTreeMap::new();
    if !urls.is_empty() {
        let job = start(target, what, &urls, &saved_path).await?;
        let ended = loop {
            let state = target.job(&job).await?;
            progress(&state);
            if state.status.is_final() {
                break state;
            }
            tokio::time::sleep(what.poll).await;
        };
        answers = target.results(&job).await?;
        summary.job = Some(job);
        summary.credits = ended.credits_charged;
    }
    write_output(what, &answers)?;
    if summary.job.is_some() {
        let _ = std::fs::remove_file(&saved_path);
    }
    count(what.list, &answers, &mut summary);
    Ok(summary)
}

/// The job: the saved one when resuming, else a new one whose id is saved beside the output.
async fn start(
    target: &dyn JobTarget,
    what: &Enrichment<'_>,
    urls: &[String],
    saved_path: &Path,
) -> Result<String, EnrichError> {
    let digest = hex::encode(sha2::Sha256::digest(urls.join("\n").as_bytes()));
    let saved: Option<Saved> = std::fs::read(saved_path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let saved_name = saved_path.display().to_string();
    match saved {
        Some(saved) if what.resume => {
            if saved.urls_sha256 != digest || saved.target != what.target_name {
                return Err(EnrichError::NotThisList { saved: saved_name });
            }
            let asked = what.options();
            if saved.options != asked {
                return Err(EnrichError::OtherOptions {
                    saved: saved_name,
                    started: saved.options,
                    asked,
                });
            }
            Ok(saved.job)
        }
        Some(saved) => Err(EnrichError::Unfinished {
            job: saved.job,
            out: what.out.display().to_string(),
            saved: saved_name,
        }),
        None => {
            let body = RequestBody {
                li_urls: urls.to_vec(),
                max_age_hours: Some(what.max_age_hours),
                max_age_seconds: None,
                stale_if_error: None,
                fields: what
                    .fields
                    .as_ref()
                    .map(|fields| fields.kept().iter().map(|&name| name.to_owned()).collect()),
                include: (!what.include.is_empty()).then(|| what.include.parts()),
            };
            let job = target.submit(&body).await?.id;
            let saved = Saved {
                job: job.clone(),
                target: what.target_name.clone(),
                urls_sha256: digest,
                options: what.options(),
            };
            let written = serde_json::to_vec(&saved)
                .map_err(std::io::Error::other)
                .and_then(|bytes| std::fs::write(saved_path, bytes));
            written.map_err(|source| EnrichError::Write {
                path: saved_name,
                source,
            })?;
            Ok(job)
        }
    }
}

/// Writes the results next to OUTPUT and renames them into place, so an interrupted write leaves no half file.
fn write_output(
    what: &Enrichment<'_>,
    answers: &BTreeMap<u64, InputRow>,
) -> Result<(), EnrichError> {
    let partial = PathBuf::from(format!("{}.partial", what.out.display()));
    let failed = |path: &Path| {
        let path = path.display().to_string();
        move |source| EnrichError::Write { path, source }
    };
    let file = std::fs::File::create(&partial).map_err(failed(&partial))?;
    let mut file = std::io::BufWriter::new(file);
    what.list
        .write_results(
            answers,
            (what.format, what.csv_cells),
            what.fields.as_ref(),
            &mut file,
        )
        .map_err(|error| EnrichError::Write {
            path: partial.display().to_string(),
            source: std::io::Error::other(error),
        })?;
    std::io::Write::flush(&mut file).map_err(failed(&partial))?;
    drop(file);
    std::fs::rename(&partial, what.out).map_err(failed(what.out))
}

/// Counts each row's outcome into `summary`.
fn count(list: &List, answers: &BTreeMap<u64, InputRow>, summary: &mut Summary) {
    let (_, rows_of) = list.to_send();
    for position in 0..rows_of.len() as u64 {
        let reason = match answers.get(&position).and_then(|row| row.answer.as_ref()) {
            Some(Answer::Found { .. }) => {
                summary.resolved += 1;
                continue;
            }
            Some(Answer::Unresolved { code, .. }) => code.as_str(),
            None => "not_looked_up",
        };
        *summary.unresolved.entry(reason.to_owned()).or_default() += 1;
    }
    let invalid = list.rows.len() - rows_of.len();
    if invalid > 0 {
        summary.unresolved.insert("invalid_url".to_owned(), invalid);
    }
}
