//! `/v1/network/company-data/jobs`: bulk jobs over HTTP (docs/api.md, "Bulk jobs").

use std::sync::Arc;

use api_contract::paths::{self, JOBS};
use api_contract::{CompanyRequest, MAX_JOB_BODY_BYTES, MAX_JOB_URLS};
use bulk_jobs::{BulkJobs, JobId, output};
use bytes::Bytes;
use company_lookup::Caller;
use credit_ledger::{LIVE_PRICE, STORED_PRICE};
use http::{HeaderValue, Method, StatusCode, header};
use http_serve::Response;
use serde_json::{Value, json};

use crate::api::Api;
use crate::doc::{Context, bad_id, error_response, json_content};
use crate::endpoint::{Access, Call, Endpoint, Part, Reads};
use crate::error::ApiError;
use crate::paging::{DEFAULT_JOBS_PER_PAGE, MOST_JOBS_PER_PAGE, MOST_RESULTS_PER_PAGE};
use crate::request::{number, path_id, query, wants_csv};
use crate::respond::{bytes_response, json_response, no_content};

/// `POST …/jobs`.
pub(crate) const CREATE_JOB: Endpoint = Endpoint {
    method: Method::POST,
    path: paths::JOBS,
    operation_id: "createCompanyDataJob",
    part: Part::Jobs,
    access: Access::Key,
    reads: Reads::Json(MAX_JOB_BODY_BYTES),
    idempotent: true,
    doc: Some(create_job_doc),
    run: |api, call| Box::pin(api.submit_job(call)),
};

/// `GET …/jobs`.
pub(crate) const LIST_JOBS: Endpoint = Endpoint {
    method: Method::GET,
    path: paths::JOBS,
    operation_id: "listCompanyDataJobs",
    part: Part::Jobs,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(list_jobs_doc),
    run: |api, call| Box::pin(api.list_jobs(call)),
};

/// `GET …/jobs/{id}`.
pub(crate) const GET_JOB: Endpoint = Endpoint {
    method: Method::GET,
    path: paths::JOB,
    operation_id: "getCompanyDataJob",
    part: Part::Jobs,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(get_job_doc),
    run: |api, call| Box::pin(api.show_job(call)),
};

/// `DELETE …/jobs/{id}`.
pub(crate) const DELETE_JOB: Endpoint = Endpoint {
    method: Method::DELETE,
    path: paths::JOB,
    operation_id: "deleteCompanyDataJob",
    part: Part::Jobs,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(delete_job_doc),
    run: |api, call| Box::pin(api.delete_job(call)),
};

/// `POST …/jobs/{id}/cancel`.
pub(crate) const CANCEL_JOB: Endpoint = Endpoint {
    method: Method::POST,
    path: paths::JOB_CANCEL,
    operation_id: "cancelCompanyDataJob",
    part: Part::Jobs,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(cancel_job_doc),
    run: |api, call| Box::pin(api.cancel_job(call)),
};

/// `GET …/jobs/{id}/results`.
pub(crate) const GET_JOB_RESULTS: Endpoint = Endpoint {
    method: Method::GET,
    path: paths::JOB_RESULTS,
    operation_id: "getCompanyDataJobResults",
    part: Part::Jobs,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(job_results_doc),
    run: |api, call| Box::pin(api.job_results(call)),
};

/// `GET /jobs?before=<id>&limit=<n>`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    before: Option<String>,
    limit: Option<String>,
}

/// `GET /jobs/{id}/results?from=<position>&limit=<n>`.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ResultsQuery {
    from: Option<String>,
    limit: Option<String>,
    /// [`output::CsvCells::QUERY`]: how CSV cells that start like a formula are written.
    csv_cells: Option<String>,
}

impl Api {
    /// The bulk jobs; routes of a part that is not set are 404 before their handler runs.
    fn bulk(&self) -> Result<&Arc<BulkJobs>, ApiError> {
        self.jobs().ok_or(ApiError::NotFound)
    }

    /// `POST /jobs`: 202 with the job and its `Location`.
    async fn submit_job(&self, call: Call) -> Result<Response, ApiError> {
        let jobs = Arc::clone(self.bulk()?);
        // A callback URL follows the rule of the server's webhooks (`http` only where they may go to private
        // addresses); its events are queued by whoever announces job endings (`server-assembly`).
        let allow_http = self
            .webhooks()
            .is_some_and(|webhooks| webhooks.settings().allow_private);
        let parsed = CompanyRequest::from_job_json(&call.body, self.domain(), allow_http)?;
        let (caller, fingerprint) = (call.caller()?, call.fingerprint());
        self.idempotent(
            caller.tenant,
            call.idempotency_key,
            fingerprint,
            move |_| async move {
                let job = jobs.submit(caller, &parsed).await?;
                let mut response = json_response(StatusCode::ACCEPTED, &job.info());
                if let Ok(location) = HeaderValue::from_str(&format!("{JOBS}/{}", job.job.id)) {
                    response.headers_mut().insert(header::LOCATION, location);
                }
                Ok(response)
            },
        )
        .await
    }

    /// `GET /jobs?before=<id>&limit=<n>`: `{jobs: [...], next}`, newest first.
    async fn list_jobs(&self, call: Call) -> Result<Response, ApiError> {
        let jobs = self.bulk()?;
        let caller = call.caller()?;
        let asked: ListQuery = query(call.query())?;
        let limit = number(
            "limit",
            asked.limit.as_deref(),
            1..=u64::from(MOST_JOBS_PER_PAGE),
        )?
        .map_or(DEFAULT_JOBS_PER_PAGE, |n| n as u32);
        let before = number(
            "before",
            asked.before.as_deref(),
            1..=i64::MAX.unsigned_abs(),
        )?
        .and_then(|n| i64::try_from(n).ok())
        .map(JobId);
        let page = jobs.jobs(caller.tenant, before, limit).await?;
        let next = (page.len() == limit as usize)
            .then(|| page.last())
            .flatten()
            .map(|last| format!("{JOBS}?before={}&limit={limit}", last.job.id));
        let listed = api_contract::JobList {
            jobs: page.iter().map(bulk_jobs::JobView::info).collect(),
            next,
        };
        Ok(json_response(StatusCode::OK, &listed))
    }

    /// The jobs, the caller and the job the path names: what every `/jobs/{id}…` handler starts from.
    fn one_job(&self, call: &Call) -> Result<(&Arc<BulkJobs>, Caller, JobId), ApiError> {
        let jobs = self.bulk()?;
        Ok((
            jobs,
            call.caller()?,
            JobId(path_id(call.id.as_deref(), "job")?),
        ))
    }

    /// `GET /jobs/{id}`: the job.
    async fn show_job(&self, call: Call) -> Result<Response, ApiError> {
        let (jobs, caller, id) = self.one_job(&call)?;
        let job = jobs.job(caller.tenant, id).await?;
        Ok(json_response(
            StatusCode::OK,
            &job.ok_or(ApiError::JobNotFound)?.info(),
        ))
    }

    /// `POST /jobs/{id}/cancel`: the job, `cancelled` unless it had already ended; its results are kept.
    async fn cancel_job(&self, call: Call) -> Result<Response, ApiError> {
        let (jobs, caller, id) = self.one_job(&call)?;
        let job = jobs.cancel(caller.tenant, id).await?;
        Ok(json_response(
            StatusCode::OK,
            &job.ok_or(ApiError::JobNotFound)?.info(),
        ))
    }

    /// `DELETE /jobs/{id}`: 204; the job is cancelled if it still runs, then it and its results are gone.
    async fn delete_job(&self, call: Call) -> Result<Response, ApiError> {
        let (jobs, caller, id) = self.one_job(&call)?;
        if jobs.delete(caller.tenant, id).await? {
            Ok(no_content())
        } else {
            Err(ApiError::JobNotFound)
        }
    }

    /// `GET /jobs/{id}/results?from=<position>&limit=<n>`: the answered inputs in order, NDJSON or (with
    /// `Accept: text/csv`) CSV; `Link: <…>; rel="next"` while positions remain after this page.
    async fn job_results(&self, call: Call) -> Result<Response, ApiError> {
        let (jobs, caller, id) = self.one_job(&call)?;
        let asked: ResultsQuery = query(call.query())?;
        let from = number("from", asked.from.as_deref(), 0..=u64::MAX >> 1)?.unwrap_or(0);
        let limit = number(
            "limit",
            asked.limit.as_deref(),
            1..=u64::from(MOST_RESULTS_PER_PAGE),
        )?
        .map_or(MOST_RESULTS_PER_PAGE, |n| n as u32);
        let csv = wants_csv(&call.head.headers);
        let cells = match asked.csv_cells.as_deref() {
            None => output::CsvCells::default(),
            Some(value) => output::CsvCells::from_query(value).ok_or_else(|| {
                ApiError::InvalidQuery(format!(
                    "`{}` is `{value}`; send `{}` (the default: cells that start like a formula open as text) or `{}`",
                    output::CsvCells::QUERY,
                    output::CsvCells::SpreadsheetSafe.as_str(),
                    output::CsvCells::Raw.as_str()
                ))
            })?,
        };
        let job = jobs
            .job(caller.tenant, id)
            .await?
            .ok_or(ApiError::JobNotFound)?
            .job;
        let total = job.total;
        let until = from.saturating_add(u64::from(limit));
        let format = if csv {
            output::ResultFormat::Csv(cells)
        } else {
            output::ResultFormat::Ndjson
        };
        // Streamed a chunk of rows at a time: a page of 10,000 full records is never held whole.
        let chunks = output::results(Arc::clone(jobs), &job, (from, until), format);
        let content_type = if csv {
            "text/csv; charset=utf-8"
        } else {
            "application/x-ndjson"
        };
        let mut response = bytes_response(StatusCode::OK, Bytes::new(), content_type);
        *response.body_mut() = http_serve::streamed(futures::TryStreamExt::map_err(
            chunks,
            std::io::Error::other,
        ));
        if until < total {
            let raw = if cells == output::CsvCells::default() {
                String::new()
            } else {
                format!("&{}={}", output::CsvCells::QUERY, cells.as_str())
            };
            let next = format!(
                "<{JOBS}/{}/results?from={until}&limit={limit}{raw}>; rel=\"next\"",
                id.0
            );
            if let Ok(next) = HeaderValue::from_str(&next) {
                response.headers_mut().insert(header::LINK, next);
            }
        }
        Ok(response)
    }
}

/// 404 of a job the account does not have.
fn job_not_found() -> Value {
    error_response("`job_not_found`: the account has no job with this id.")
}

/// The OpenAPI operation of `POST …/jobs`.
fn create_job_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "Start a bulk job",
        "description": format!("Looks up 1 to {MAX_JOB_URLS} page URLs in the background, priced as the synchronous endpoint: each distinct page that resolves is charged once ({LIVE_PRICE} live, {STORED_PRICE} with a freshness window), unresolved ones never. A job whose account runs out of credits pauses (`insufficient_credits`) and resumes by itself when credits are added."),
        "tags": ["Company Data"],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/JobRequest"}}}},
        "responses": {
            "202": {"description": "Accepted; the job runs in the background.",
                    "headers": {"Location": {"description": "The job's URL.", "schema": {"type": "string"}}},
                    "content": json_content("Job")},
            "400": error_response("Invalid body or unsupported URL; `details` lists every problem."),
            "408": error_response("The request body did not arrive within the body time-out."),
            "413": error_response(&format!("Request body larger than {MAX_JOB_BODY_BYTES} bytes.")),
            "409": error_response("`too_many_open_jobs` or `too_many_queued_urls`: the account holds as much of the job queue as its quotas allow (jobs not yet ended; their URLs not yet answered); the message says the quota and what to do."),
            "415": error_response("The body is not sent as `application/json`."),
        }
    })
}

/// The OpenAPI operation of `GET …/jobs`.
fn list_jobs_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "List the account's jobs, newest first",
        "tags": ["Company Data"],
        "parameters": [
            {"name": "before", "in": "query", "description": "Only jobs older than this job id (the next page).",
             "schema": {"type": "integer", "minimum": 1, "maximum": i64::MAX}},
            {"name": "limit", "in": "query", "description": "Jobs per page.",
             "schema": {"type": "integer", "minimum": 1, "maximum": MOST_JOBS_PER_PAGE, "default": DEFAULT_JOBS_PER_PAGE}}
        ],
        "responses": {
            "200": {"description": "A page of jobs.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/JobList"}}}},
            "400": error_response("`invalid_query`: `before` or `limit` is not a number in range."),
        }
    })
}

/// The OpenAPI operation of `GET …/jobs/{id}`.
fn get_job_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "A job's progress",
        "tags": ["Company Data"],
        "responses": {
            "200": {"description": "The job.", "content": json_content("Job")},
            "400": error_response("`invalid_query`: the id is not a whole number above 0."),
            "404": error_response("`job_not_found`: the account has no job with this id."),
        }
    })
}

/// The OpenAPI operation of `POST …/jobs/{id}/cancel`.
fn cancel_job_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "Cancel a job: nothing more is fetched or charged; its results are kept",
        "description": "Pages already being fetched when the cancel arrives are still recorded and charged; no other page is fetched. Cancelling a job that has ended changes nothing. Safe to repeat.",
        "tags": ["Company Data"],
        "responses": {
            "200": {"description": "The job, `cancelled` (or as it was if it had already ended).", "content": json_content("Job")},
            "400": bad_id(),
            "404": job_not_found(),
        }
    })
}

/// The OpenAPI operation of `DELETE …/jobs/{id}`.
fn delete_job_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "Delete a job and its results",
        "description": "A job that has not ended is cancelled first (pages already being fetched may still be charged). Afterwards the job and its results are gone: its URLs answer 404 `job_not_found`.",
        "tags": ["Company Data"],
        "responses": {
            "204": {"description": "Deleted."},
            "400": bad_id(),
            "404": job_not_found(),
        }
    })
}

/// The OpenAPI operation of `GET …/jobs/{id}/results`.
fn job_results_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "A job's results so far, in input order",
        "description": "One NDJSON line (or CSV row with `Accept: text/csv`) per answered input position: the record or the unresolved entry the synchronous endpoint gives for that URL, with its 0-based `position`. Positions not answered yet are left out. Kept after the job ends for the server's job retention (`serve --job-retention-days`).",
        "tags": ["Company Data"],
        "parameters": [
            {"name": "from", "in": "query", "description": "First input position (0-based).",
             "schema": {"type": "integer", "minimum": 0, "maximum": i64::MAX, "default": 0}},
            {"name": "limit", "in": "query", "description": "Input positions per page.",
             "schema": {"type": "integer", "minimum": 1, "maximum": MOST_RESULTS_PER_PAGE,
                        "default": MOST_RESULTS_PER_PAGE}},
            {"name": output::CsvCells::QUERY, "in": "query", "description": "How CSV cells are written: `safe` gives a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return (and is not a number) a leading `'`, so a spreadsheet opens it as text (OWASP's rule against CSV injection: page text is someone else's); `raw` writes every cell as the data has it. NDJSON is not affected.",
             "schema": {"type": "string", "enum": output::CsvCells::ALL.map(output::CsvCells::as_str),
                        "default": output::CsvCells::default().as_str()}}
        ],
        "responses": {
            "200": {
                "description": "Results of the positions in the page that are answered.",
                "headers": {"Link": {"description": "`<…?from=N&limit=M>; rel=\"next\"` while positions remain after this page.", "schema": {"type": "string"}}},
                "content": {
                    "application/x-ndjson": {"schema": {"type": "string"}},
                    "text/csv": {"schema": {"type": "string"}}
                }
            },
            "400": error_response("`invalid_query`: the id, `from` or `limit` is not a number in range."),
            "404": error_response("`job_not_found`: the account has no job with this id."),
        }
    })
}
