//! `/v1/network/company-data/jobs`: bulk jobs over HTTP (docs/api.md, "Bulk jobs").

use std::sync::Arc;

use bulk_jobs::{BulkJobs, JobId, output};
use bytes::Bytes;
use company_lookup::Caller;
use company_model::paths::JOBS;
use company_model::{CompanyRequest, MAX_JOB_BODY_BYTES};
use http::{HeaderValue, Request, StatusCode, header};
use http_serve::Response;

use crate::api::Api;
use crate::error::ApiError;
use crate::paging::{DEFAULT_JOBS_PER_PAGE, MOST_JOBS_PER_PAGE, MOST_RESULTS_PER_PAGE};
use crate::request::{number, path_id, query, wants_csv};
use crate::respond::{bytes_response, json_response, no_content};

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
    pub(crate) async fn submit_job<B>(&self, request: Request<B>) -> Result<Response, ApiError>
    where
        B: hyper::body::Body + Unpin,
    {
        let jobs = Arc::clone(self.bulk()?);
        let post = self.charged_post(request, MAX_JOB_BODY_BYTES).await?;
        let parsed = CompanyRequest::from_job_json(&post.body, self.domain())?;
        let (caller, fingerprint) = (post.caller, post.fingerprint());
        self.idempotent(caller.account, post.key, fingerprint, move |_| async move {
            let job = jobs.submit(caller, &parsed).await?;
            let mut response = json_response(StatusCode::ACCEPTED, &job.info());
            if let Ok(location) = HeaderValue::from_str(&format!("{JOBS}/{}", job.job.id)) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            Ok(response)
        })
        .await
    }

    /// `GET /jobs?before=<id>&limit=<n>`: `{jobs: [...], next}`, newest first.
    pub(crate) async fn list_jobs<B>(&self, request: &Request<B>) -> Result<Response, ApiError> {
        let jobs = self.bulk()?;
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        let asked: ListQuery = query(request.uri().query())?;
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
        let page = jobs.jobs(caller.account, before, limit).await?;
        let next = (page.len() == limit as usize)
            .then(|| page.last())
            .flatten()
            .map(|last| format!("{JOBS}?before={}&limit={limit}", last.job.id));
        let listed = company_model::JobList {
            jobs: page.iter().map(bulk_jobs::JobView::info).collect(),
            next,
        };
        Ok(json_response(StatusCode::OK, &listed))
    }

    /// The jobs, the caller (key checked first) and the job the path names: what every `/jobs/{id}…` handler
    /// starts from.
    async fn one_job<B>(
        &self,
        request: &Request<B>,
        id: Option<&str>,
    ) -> Result<(&Arc<BulkJobs>, Caller, JobId), ApiError> {
        let jobs = self.bulk()?;
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        Ok((jobs, caller, JobId(path_id(id, "job")?)))
    }

    /// `GET /jobs/{id}`: the job.
    pub(crate) async fn show_job<B>(
        &self,
        request: &Request<B>,
        id: Option<&str>,
    ) -> Result<Response, ApiError> {
        let (jobs, caller, id) = self.one_job(request, id).await?;
        let job = jobs.job(caller.account, id).await?;
        Ok(json_response(
            StatusCode::OK,
            &job.ok_or(ApiError::JobNotFound)?.info(),
        ))
    }

    /// `POST /jobs/{id}/cancel`: the job, `cancelled` unless it had already ended; its results are kept.
    pub(crate) async fn cancel_job<B>(
        &self,
        request: &Request<B>,
        id: Option<&str>,
    ) -> Result<Response, ApiError> {
        let (jobs, caller, id) = self.one_job(request, id).await?;
        let job = jobs.cancel(caller.account, id).await?;
        Ok(json_response(
            StatusCode::OK,
            &job.ok_or(ApiError::JobNotFound)?.info(),
        ))
    }

    /// `DELETE /jobs/{id}`: 204; the job is cancelled if it still runs, then it and its results are gone.
    pub(crate) async fn delete_job<B>(
        &self,
        request: &Request<B>,
        id: Option<&str>,
    ) -> Result<Response, ApiError> {
        let (jobs, caller, id) = self.one_job(request, id).await?;
        if jobs.delete(caller.account, id).await? {
            Ok(no_content())
        } else {
            Err(ApiError::JobNotFound)
        }
    }

    /// `GET /jobs/{id}/results?from=<position>&limit=<n>`: the answered inputs in order, NDJSON or (with
    /// `Accept: text/csv`) CSV; `Link: <…>; rel="next"` while positions remain after this page.
    pub(crate) async fn job_results<B>(
        &self,
        request: &Request<B>,
        id: Option<&str>,
    ) -> Result<Response, ApiError> {
        let (jobs, caller, id) = self.one_job(request, id).await?;
        let asked: ResultsQuery = query(request.uri().query())?;
        let from = number("from", asked.from.as_deref(), 0..=u64::MAX >> 1)?.unwrap_or(0);
        let limit = number(
            "limit",
            asked.limit.as_deref(),
            1..=u64::from(MOST_RESULTS_PER_PAGE),
        )?
        .map_or(MOST_RESULTS_PER_PAGE, |n| n as u32);
        let csv = wants_csv(request.headers());
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
            .job(caller.account, id)
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
