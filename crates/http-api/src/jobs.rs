//! `/v1/network/company-data/jobs`: bulk jobs over HTTP (docs/api.md, "Bulk jobs").

use std::sync::Arc;

use bulk_jobs::{BulkJobs, JobId, output};
use bytes::Bytes;
use company_model::{CompanyRequest, MAX_JOB_BODY_BYTES};
use http::{HeaderValue, Method, Request, StatusCode, header};
use http_serve::Response;

use crate::error::ApiError;
use crate::idempotent::idempotency_key;
use crate::routes::{Api, bytes_response, json_response, require_json};

/// The jobs collection's path; a job is `<JOBS_PATH>/<id>`, its results `<JOBS_PATH>/<id>/results`.
pub(crate) const JOBS_PATH: &str = "/v1/network/company-data/jobs";

/// Most jobs in one page of the list, and the default.
const MOST_JOBS_PER_PAGE: u32 = 100;
const DEFAULT_JOBS_PER_PAGE: u32 = 20;
/// Most result rows in one response, and the default.
pub(crate) const MOST_RESULTS_PER_PAGE: u32 = bulk_jobs::MOST_ROWS_PER_READ;

/// Which jobs resource a path names.
enum Resource {
    Collection,
    Job(JobId),
    Results(JobId),
    /// A job's place with something that cannot be a job id in it (400, not 404: the path's shape is right).
    BadId(String),
}

fn resource(path: &str) -> Option<Resource> {
    let rest = path.strip_prefix(JOBS_PATH)?;
    if !rest.is_empty() && !rest.starts_with('/') {
        return None;
    }
    let mut parts = rest.split('/').skip(1);
    match (parts.next(), parts.next(), parts.next()) {
        (None | Some(""), None, None) => Some(Resource::Collection),
        (Some(id), rest @ (None | Some("results")), None) => {
            let Some(id) = id.parse().ok().filter(|n: &i64| *n > 0).map(JobId) else {
                return Some(Resource::BadId(id.to_owned()));
            };
            match rest {
                None => Some(Resource::Job(id)),
                _ => Some(Resource::Results(id)),
            }
        }
        _ => None,
    }
}

/// Reads `name` from the query as a whole number in `range`; `None` when absent.
pub(crate) fn query_number(
    query: Option<&str>,
    name: &str,
    range: std::ops::RangeInclusive<u64>,
) -> Result<Option<u64>, ApiError> {
    let Some(value) = form_pairs(query)
        .find(|(key, _)| key == name)
        .map(|(_, v)| v)
    else {
        return Ok(None);
    };
    match value.parse::<u64>() {
        Ok(n) if range.contains(&n) => Ok(Some(n)),
        _ => Err(ApiError::InvalidQuery(format!(
            "`{name}` is `{value}`; send a whole number from {} to {}",
            range.start(),
            range.end()
        ))),
    }
}

fn form_pairs(query: Option<&str>) -> impl Iterator<Item = (String, String)> + '_ {
    query.unwrap_or_default().split('&').map(|pair| {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        (key.to_owned(), value.to_owned())
    })
}

impl Api {
    /// Routes a request under [`JOBS_PATH`]; `None` when the path is not a jobs resource.
    pub(crate) async fn jobs_route<B>(
        &self,
        jobs: &Arc<BulkJobs>,
        request: Request<B>,
    ) -> Option<Result<Response, ApiError>>
    where
        B: hyper::body::Body + Unpin,
    {
        let resource = resource(request.uri().path())?;
        let method = request.method().clone();
        Some(match (resource, method) {
            (Resource::BadId(id), _) => Err(ApiError::InvalidQuery(format!(
                "`{id}` in the path is not a job id; send the `id` of a job (a whole number above 0)"
            ))),
            (Resource::Collection, Method::POST) => self.submit_job(jobs, request).await,
            (Resource::Collection, Method::GET | Method::HEAD) => {
                self.list_jobs(jobs, &request).await
            }
            (Resource::Collection, _) => Err(ApiError::MethodNotAllowed {
                allow: "GET, HEAD, POST",
            }),
            (Resource::Job(id), Method::GET | Method::HEAD) => {
                self.show_job(jobs, &request, id, false).await
            }
            (Resource::Job(id), Method::DELETE) => self.show_job(jobs, &request, id, true).await,
            (Resource::Job(_), _) => Err(ApiError::MethodNotAllowed {
                allow: "GET, HEAD, DELETE",
            }),
            (Resource::Results(id), Method::GET | Method::HEAD) => {
                self.job_results(jobs, &request, id).await
            }
            (Resource::Results(_), _) => Err(ApiError::MethodNotAllowed { allow: "GET, HEAD" }),
        })
    }

    /// `POST /jobs`: 202 with the job and its `Location`.
    async fn submit_job<B>(
        &self,
        jobs: &Arc<BulkJobs>,
        request: Request<B>,
    ) -> Result<Response, ApiError>
    where
        B: hyper::body::Body + Unpin,
    {
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        require_json(request.headers())?;
        let key = idempotency_key(request.headers())?;
        let body = http_serve::read_body(request, MAX_JOB_BODY_BYTES, self.body_timeout()).await?;
        let parsed = CompanyRequest::from_job_json(&body, self.domain())?;
        let fingerprint = idempotency::fingerprint("POST", JOBS_PATH, &body);
        let jobs = Arc::clone(jobs);
        self.idempotent(caller.account, key, fingerprint, move |_| async move {
            let job = jobs.submit(caller, &parsed).await?;
            let mut response = json_response(StatusCode::ACCEPTED, &job.to_json());
            if let Ok(location) = HeaderValue::from_str(&format!("{JOBS_PATH}/{}", job.job.id)) {
                response.headers_mut().insert(header::LOCATION, location);
            }
            Ok(response)
        })
        .await
    }

    /// `GET /jobs?before=<id>&limit=<n>`: `{jobs: [...], next}`, newest first.
    async fn list_jobs<B>(
        &self,
        jobs: &Arc<BulkJobs>,
        request: &Request<B>,
    ) -> Result<Response, ApiError> {
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        let query = request.uri().query();
        let limit = query_number(query, "limit", 1..=u64::from(MOST_JOBS_PER_PAGE))?
            .map_or(DEFAULT_JOBS_PER_PAGE, |n| n as u32);
        let before = query_number(query, "before", 1..=i64::MAX.unsigned_abs())?
            .and_then(|n| i64::try_from(n).ok())
            .map(JobId);
        let page = jobs.jobs(caller.account, before, limit).await?;
        let next = (page.len() == limit as usize)
            .then(|| page.last())
            .flatten()
            .map(|last| format!("{JOBS_PATH}?before={}&limit={limit}", last.job.id));
        let listed: Vec<serde_json::Value> = page.iter().map(bulk_jobs::JobView::to_json).collect();
        Ok(json_response(
            StatusCode::OK,
            &serde_json::json!({"jobs": listed, "next": next}),
        ))
    }

    /// `GET /jobs/{id}`, or `DELETE /jobs/{id}` (cancel): the job.
    async fn show_job<B>(
        &self,
        jobs: &Arc<BulkJobs>,
        request: &Request<B>,
        id: JobId,
        cancel: bool,
    ) -> Result<Response, ApiError> {
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        let job = if cancel {
            jobs.cancel(caller.account, id).await?
        } else {
            jobs.job(caller.account, id).await?
        };
        let job = job.ok_or(ApiError::JobNotFound)?;
        Ok(json_response(StatusCode::OK, &job.to_json()))
    }

    /// `GET /jobs/{id}/results?from=<position>&limit=<n>`: the answered inputs in order, NDJSON or (with
    /// `Accept: text/csv`) CSV; `Link: <…>; rel="next"` while positions remain after this page.
    async fn job_results<B>(
        &self,
        jobs: &Arc<BulkJobs>,
        request: &Request<B>,
        id: JobId,
    ) -> Result<Response, ApiError> {
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        let query = request.uri().query();
        let from = query_number(query, "from", 0..=u64::MAX >> 1)?.unwrap_or(0);
        let limit = query_number(query, "limit", 1..=u64::from(MOST_RESULTS_PER_PAGE))?
            .map_or(MOST_RESULTS_PER_PAGE, |n| n as u32);
        let csv = wants_csv(request.headers());
        let rows = jobs
            .inputs(caller.account, id, from, limit)
            .await?
            .ok_or(ApiError::JobNotFound)?;
        let body = if csv {
            output::csv_bytes(&rows, true).map_err(|error| {
                tracing::error!(%error, "could not write CSV");
                ApiError::InvalidQuery("the results could not be written as CSV".into())
            })?
        } else {
            rows.iter()
                .filter_map(output::ndjson_line)
                .flatten()
                .collect()
        };
        let content_type = if csv {
            "text/csv; charset=utf-8"
        } else {
            "application/x-ndjson"
        };
        let mut response = bytes_response(StatusCode::OK, Bytes::from(body), content_type);
        if rows.len() == limit as usize {
            let next = format!(
                "<{JOBS_PATH}/{id}/results?from={}&limit={limit}>; rel=\"next\"",
                from + u64::from(limit)
            );
            if let Ok(next) = HeaderValue::from_str(&next) {
                response.headers_mut().insert(header::LINK, next);
            }
        }
        Ok(response)
    }
}

/// True when `Accept` prefers `text/csv` to NDJSON (the first of the two it names, ignoring weights).
fn wants_csv(headers: &http::HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|item| {
            item.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .find(|media| media == "text/csv" || media == "application/x-ndjson")
        .is_some_and(|media| media == "text/csv")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_jobs_by_positive_ids() {
        assert!(matches!(resource(JOBS_PATH), Some(Resource::Collection)));
        assert!(matches!(
            resource(&format!("{JOBS_PATH}/")),
            Some(Resource::Collection)
        ));
        assert!(matches!(
            resource(&format!("{JOBS_PATH}/12")),
            Some(Resource::Job(JobId(12)))
        ));
        assert!(matches!(
            resource(&format!("{JOBS_PATH}/12/results")),
            Some(Resource::Results(JobId(12)))
        ));
        for bad in ["/0", "/-1", "/x", "/x/results"] {
            assert!(
                matches!(
                    resource(&format!("{JOBS_PATH}{bad}")),
                    Some(Resource::BadId(_))
                ),
                "{bad}"
            );
        }
        for unknown in ["/12/other", "/12/results/more"] {
            assert!(
                resource(&format!("{JOBS_PATH}{unknown}")).is_none(),
                "{unknown}"
            );
        }
        assert!(resource("/v1/network/company-data/jobsx").is_none());
    }

    #[test]
    fn csv_is_chosen_only_when_asked_for_first() {
        let accept = |value: &str| {
            let mut headers = http::HeaderMap::new();
            headers.insert(
                header::ACCEPT,
                HeaderValue::from_str(value).expect("header"),
            );
            wants_csv(&headers)
        };
        assert!(accept("text/csv"));
        assert!(accept("text/csv;q=0.9, application/x-ndjson;q=0.1"));
        assert!(!accept("application/x-ndjson, text/csv"));
        assert!(!accept("*/*"));
        assert!(!wants_csv(&http::HeaderMap::new()));
    }
}
