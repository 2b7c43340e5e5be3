//! A Rust client for a company-data server's HTTP API: the way another Rust service (or the `company-data enrich
//! --server` command) calls one.
//!
//! [`Client`] sends typed requests and reads typed answers, all `company-model` types the server itself writes:
//! - [`Client::company_data`]: `POST /v1/network/company-data`, a [`RequestBody`] of 1 to
//!   [`api_contract::MAX_URLS`] page URLs in, a [`CompanyDataResponse`] and the credits charged out;
//! - bulk jobs: [`Client::submit_job`], [`Client::job`], [`Client::wait_for_job`], [`Client::job_results`] (page
//!   by page, following the server's `Link: rel="next"`), [`Client::cancel_job`], [`Client::delete_job`];
//! - [`Client::account`]: the caller's balance and usage.
//!
//! The key goes in `Authorization: Bearer` (the first of the four headers the server reads). A request that
//! fails in a way a retry can mend — the connection, 429, 502, 503, 504, or 409 while the same key's first
//! request still runs — is sent again after the server's `Retry-After` or an exponential backoff ([`Retry`]).
//! Every POST carries one `Idempotency-Key` across its retries, so a retry is never charged twice. Any other
//! refusal is a [`ClientError::Api`] carrying the server's `error` code, message and request id.
//!
//! Not here: what the server decides (validation, prices, bounds). The client sends what it is given and
//! reports what the server says.
//!
//! ```no_run
//! # async fn run() -> Result<(), company_data_client::ClientError> {
//! use company_data_client::{Client, RequestBody};
//! let client = Client::new("http://127.0.0.1:8080", "cdk_live_…")?;
//! let answer = client
//!     .company_data(&RequestBody {
//!         li_urls: vec!["https://www.linkedin.com/company/google".into()],
//!         max_age_hours: Some(24.0),
//!         ..RequestBody::default()
//!     })
//!     .await?;
//! println!("{} record(s), {:?} credits", answer.response.results.len(), answer.credits_charged);
//! # Ok(())
//! # }
//! ```
#![deny(missing_docs)]

use std::time::Duration;

pub use api_contract::{
    Answer, CompanyDataResponse, CompanyRow, ErrorBody, EventList, Include, InputRow, JobBody,
    JobInfo, JobInput, JobStatus, Range, RequestBody, ResolveBody, ResolveQuery, ResolveResponse,
    SearchBody, SearchResponse, SearchSort, headers, paths,
};
use reqwest::{Method, StatusCode, header};

/// How often, and how long apart, a request that may succeed later is sent again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Retry {
    /// Attempts in all, the first included (1: no retry).
    pub attempts: u32,
    /// The wait before the first retry when the server gives no `Retry-After`; doubled for each later one.
    pub first_wait: Duration,
    /// The longest wait, whether it comes from the backoff or from the server's `Retry-After`.
    pub longest_wait: Duration,
}

impl Default for Retry {
    /// 5 attempts, waiting 0.5, 1, 2 and 4 s (or what `Retry-After` says, up to 30 s).
    fn default() -> Self {
        Self {
            attempts: 5,
            first_wait: Duration::from_millis(500),
            longest_wait: Duration::from_secs(30),
        }
    }
}

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The base URL is not an `http` or `https` URL.
    #[error("`{base}` is not a server address; give one such as `http://127.0.0.1:8080`")]
    BadBase {
        /// The address as given.
        base: String,
    },
    /// The server could not be reached (after the retries).
    #[error("cannot reach {url}: {source}")]
    Unreachable {
        /// The URL called.
        url: String,
        /// What the HTTP client said.
        #[source]
        source: reqwest::Error,
    },
    /// The server refused the request (after the retries, where a retry could mend it).
    #[error("the server answered {status} `{}`: {}", body.error, body.message)]
    Api {
        /// The HTTP status.
        status: u16,
        /// The server's error body: its stable `error` code, the message with the fix, the request id.
        body: ErrorBody,
    },
    /// The server's answer is not what the API documents.
    #[error("the server's answer to {url} could not be read: {reason}")]
    Unreadable {
        /// The URL called.
        url: String,
        /// What was wrong with it.
        reason: String,
    },
}

/// The answer of [`Client::company_data`]: the body and the billing headers.
#[derive(Clone, Debug, PartialEq)]
pub struct CompanyData {
    /// The records and the unresolved URLs.
    pub response: CompanyDataResponse,
    /// `X-Credits-Charged`: credits this request cost.
    pub credits_charged: Option<f64>,
    /// `X-Credits-Remaining`: the account's balance after it.
    pub credits_remaining: Option<f64>,
    /// `Idempotent-Replayed: true`: the stored answer of an earlier try of the same request.
    pub replayed: bool,
}

/// The answer to [`Client::call`], as the server sent it.
#[derive(Clone, Debug)]
pub struct RawAnswer {
    /// The status (a 2xx).
    pub status: StatusCode,
    /// The headers (`X-Credits-*` among them).
    pub headers: header::HeaderMap,
    /// The body.
    pub body: Vec<u8>,
}

/// The answer to [`Client::resolve`].
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The pages found and the queries left unresolved.
    pub response: ResolveResponse,
    /// `X-Credits-Charged`: credits this request cost.
    pub credits_charged: Option<f64>,
    /// `X-Credits-Remaining`: the account's balance after it.
    pub credits_remaining: Option<f64>,
}

/// A client of one server with one API key: cheap to clone (the connection pool is shared).
#[derive(Clone, Debug)]
pub struct Client {
    base: String,
    key: String,
    http: reqwest::Client,
    retry: Retry,
}

impl Client {
    /// A client of the server at `base` (e.g. `http://127.0.0.1:8080`, or the prefix it is mounted under) with
    /// the API key `key`, retrying as [`Retry::default`] says.
    ///
    /// # Errors
    /// [`ClientError::BadBase`] when `base` is not an http(s) URL.
    pub fn new(base: &str, key: &str) -> Result<Self, ClientError> {
        let parsed = url::Url::parse(base).map_err(|_| ClientError::BadBase {
            base: base.to_owned(),
        })?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(ClientError::BadBase {
                base: base.to_owned(),
            });
        }
        Ok(Self {
            base: base.trim_end_matches('/').to_owned(),
            key: key.to_owned(),
            http: reqwest::Client::new(),
            retry: Retry::default(),
        })
    }

    /// The same client, retrying as `retry` says.
    #[must_use]
    pub fn with_retry(mut self, retry: Retry) -> Self {
        self.retry = retry;
        self
    }

    /// The same client over `http` (e.g. one with time-outs or a proxy of the caller's choosing).
    #[must_use]
    pub fn with_http_client(mut self, http: reqwest::Client) -> Self {
        self.http = http;
        self
    }

    /// `POST /v1/network/company-data`: one record per resolved URL, the unresolved ones listed, the charge.
    ///
    /// # Errors
    /// [`ClientError`]; e.g. [`ClientError::Api`] with `invalid_request` (400) or `insufficient_credits` (402).
    pub async fn company_data(&self, body: &RequestBody) -> Result<CompanyData, ClientError> {
        let reply = self
            .send(Method::POST, paths::COMPANY_DATA, Some(body))
            .await?;
        Ok(CompanyData {
            credits_charged: reply.credits(headers::X_CREDITS_CHARGED),
            credits_remaining: reply.credits(headers::X_CREDITS_REMAINING),
            replayed: reply.headers.contains_key(headers::IDEMPOTENT_REPLAYED),
            response: reply.json()?,
        })
    }

    /// `POST /v1/network/company-data/resolve`: website domains and company names to pages, with evidence.
    ///
    /// # Errors
    /// [`ClientError`]; e.g. [`ClientError::Api`] with `invalid_request` (400) or `insufficient_credits` (402).
    pub async fn resolve(&self, body: &ResolveBody) -> Result<Resolved, ClientError> {
        let reply = self.send(Method::POST, paths::RESOLVE, Some(body)).await?;
        Ok(Resolved {
            credits_charged: reply.credits(headers::X_CREDITS_CHARGED),
            credits_remaining: reply.credits(headers::X_CREDITS_REMAINING),
            response: reply.json()?,
        })
    }

    /// `POST /v1/network/company-data/search`: a page of the stored companies that match `body` (by default those
    /// this account was answered), as compact rows, with `next_cursor` for the next page (send it as `cursor`
    /// with the same filters). Free.
    ///
    /// # Errors
    /// [`ClientError`]; e.g. [`ClientError::Api`] with `invalid_request` (400).
    pub async fn search(&self, body: &SearchBody) -> Result<SearchResponse, ClientError> {
        self.send(Method::POST, paths::SEARCH, Some(body))
            .await?
            .json()
    }

    /// `GET /v1/account`: the account's balance, credits held, what is available, and usage this month, as the
    /// server's JSON (`Account` in its OpenAPI document). Free.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn account(&self) -> Result<serde_json::Value, ClientError> {
        self.send(Method::GET, paths::ACCOUNT, None::<&()>)
            .await?
            .json()
    }

    /// `GET /v1/events`: up to `limit` of the account's events (1 to 100; the server's default of 20 when
    /// `None`), oldest first, those recorded after the event `after` (from the oldest kept when `None`). Each is
    /// the JSON body the account's webhook endpoints are sent, with the same id. Call again with the last id (or
    /// read the answer's `next`) for the events recorded since. Free.
    ///
    /// # Errors
    /// [`ClientError`]; [`ClientError::Api`] with `event_not_found` when the account has no event `after` (events
    /// are kept 7 days).
    pub async fn events(
        &self,
        after: Option<&str>,
        limit: Option<u32>,
    ) -> Result<EventList, ClientError> {
        let mut path = url::form_urlencoded::Serializer::new(String::new());
        if let Some(after) = after {
            path.append_pair("after", after);
        }
        if let Some(limit) = limit {
            path.append_pair("limit", &limit.to_string());
        }
        let query = path.finish();
        let path = if query.is_empty() {
            paths::EVENTS.to_owned()
        } else {
            format!("{}?{query}", paths::EVENTS)
        };
        self.send(Method::GET, &path, None::<&()>).await?.json()
    }

    /// `POST …/jobs`: starts a bulk job of up to [`api_contract::MAX_JOB_URLS`] URLs.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn submit_job(&self, body: &RequestBody) -> Result<JobInfo, ClientError> {
        self.send(Method::POST, paths::JOBS, Some(body))
            .await?
            .json()
    }

    /// `POST …/jobs` with a job's own body ([`JobBody`]): inputs with the caller's metadata, and a
    /// `callbackUrl` (with `callbackHeaders`) the job's end is POSTed to, signed, besides the account's endpoints.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn submit_job_body(&self, body: &JobBody) -> Result<JobInfo, ClientError> {
        self.send(Method::POST, paths::JOBS, Some(body))
            .await?
            .json()
    }

    /// `GET …/jobs/{id}`: the job's progress.
    ///
    /// # Errors
    /// [`ClientError`]; [`ClientError::Api`] with `job_not_found` when the account has no such job.
    pub async fn job(&self, id: &str) -> Result<JobInfo, ClientError> {
        self.send(Method::GET, &paths::with_id(paths::JOB, id), None::<&()>)
            .await?
            .json()
    }

    /// `POST …/jobs/{id}/cancel`: nothing more of the job is fetched or charged; its results stay.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn cancel_job(&self, id: &str) -> Result<JobInfo, ClientError> {
        self.send(
            Method::POST,
            &paths::with_id(paths::JOB_CANCEL, id),
            None::<&()>,
        )
        .await?
        .json()
    }

    /// `DELETE …/jobs/{id}`: the job (cancelled first if it runs) and its results are gone.
    ///
    /// # Errors
    /// [`ClientError`].
    pub async fn delete_job(&self, id: &str) -> Result<(), ClientError> {
        self.send(Method::DELETE, &paths::with_id(paths::JOB, id), None::<&()>)
            .await
            .map(drop)
    }

    /// Polls the job every `every` until it is `done` or `cancelled`, calling `progress` with each state read;
    /// returns the last.
    ///
    /// # Errors
    /// [`ClientError`] of a poll (each poll is retried as any request).
    pub async fn wait_for_job(
        &self,
        id: &str,
        every: Duration,
        mut progress: impl FnMut(&JobInfo),
    ) -> Result<JobInfo, ClientError> {
        loop {
            let job = self.job(id).await?;
            progress(&job);
            if job.status.is_final() {
                return Ok(job);
            }
            tokio::time::sleep(every).await;
        }
    }

    /// The job's results, read a page (up to 10,000 input positions) at a time: see [`JobResults::next_page`].
    pub fn job_results(&self, id: &str) -> JobResults {
        JobResults {
            client: self.clone(),
            next: Some(api_contract::job_results_path(id)),
        }
    }

    /// Any route of the API with an optional JSON body, sent and retried as every call here (a `POST` under one
    /// `Idempotency-Key` for all its tries: `idempotency_key` when given, so a caller's own retries are one
    /// request too, else a new one): the answer's status, headers and body when it is a 2xx. For hosts
    /// that pass the API through whole, such as the MCP relay (`company-data mcp --server`).
    ///
    /// # Errors
    /// [`ClientError`]; [`ClientError::Api`] carries a refusal's status and error body.
    pub async fn call(
        &self,
        method: Method,
        path_and_query: &str,
        body: Option<&serde_json::Value>,
        idempotency_key: Option<&str>,
    ) -> Result<RawAnswer, ClientError> {
        let reply = self
            .send_keyed(method, path_and_query, body, idempotency_key)
            .await?;
        Ok(RawAnswer {
            status: reply.status,
            headers: reply.headers,
            body: reply.body,
        })
    }

    /// Sends one request, retrying what a retry can mend; the answer when it is a 2xx.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&impl serde::Serialize>,
    ) -> Result<Reply, ClientError> {
        self.send_keyed(method, path, body, None).await
    }

    /// [`Client::send`], a `POST` under `idempotency_key` when given.
    async fn send_keyed(
        &self,
        method: Method,
        path: &str,
        body: Option<&impl serde::Serialize>,
        idempotency_key: Option<&str>,
    ) -> Result<Reply, ClientError> {
        let url = format!("{}{path}", self.base);
        let body =
            body.map(serde_json::to_vec)
                .transpose()
                .map_err(|error| ClientError::Unreadable {
                    url: url.clone(),
                    reason: format!("the request could not be written: {error}"),
                })?;
        // One key for every try of a POST, so the server runs and charges it once.
        let idempotency_key = (method == Method::POST)
            .then(|| idempotency_key.map_or_else(new_idempotency_key, str::to_owned));
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut request = self
                .http
                .request(method.clone(), &url)
                .bearer_auth(&self.key);
            if let Some(key) = &idempotency_key {
                request = request.header(headers::IDEMPOTENCY_KEY, key);
            }
            if let Some(body) = &body {
                request = request
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(body.clone());
            }
            let last = attempt >= self.retry.attempts;
            let failed = match request.send().await {
                Err(source) if last || !(source.is_connect() || source.is_timeout()) => {
                    return Err(ClientError::Unreachable { url, source });
                }
                Err(_) => None,
                Ok(response) => {
                    let reply = Reply::read(&url, response).await?;
                    if reply.status.is_success() {
                        return Ok(reply);
                    }
                    if last || !retried(reply.status) {
                        return Err(reply.error());
                    }
                    Some(reply)
                }
            };
            let backoff = self
                .retry
                .first_wait
                .saturating_mul(1 << (attempt - 1).min(16));
            let wait = failed
                .as_ref()
                .and_then(Reply::retry_after)
                .unwrap_or(backoff)
                .min(self.retry.longest_wait);
            tokio::time::sleep(wait).await;
        }
    }
}

/// Statuses a retry can mend: the key's rate (429), a gateway or a store that is down for now (502, 503, 504),
/// and the same `Idempotency-Key`'s first request still running (409).
fn retried(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::TOO_MANY_REQUESTS
            | StatusCode::BAD_GATEWAY
            | StatusCode::SERVICE_UNAVAILABLE
            | StatusCode::GATEWAY_TIMEOUT
            | StatusCode::CONFLICT
    )
}

/// 128 random bits in hex: unique per logical request.
fn new_idempotency_key() -> String {
    let bits: u128 = rand::random();
    format!("{bits:032x}")
}

/// A job's results, a page at a time ([`Client::job_results`]).
#[derive(Debug)]
pub struct JobResults {
    client: Client,
    /// The next page's path, from the server's `Link: <…>; rel="next"`; `None` after the last.
    next: Option<String>,
}

impl JobResults {
    /// The next page of answered input positions, in input order; `None` after the last page. Positions not
    /// answered yet are left out (read a finished job to have them all).
    ///
    /// # Errors
    /// [`ClientError`]; a line that is not a results line is [`ClientError::Unreadable`].
    pub async fn next_page(&mut self) -> Result<Option<Vec<InputRow>>, ClientError> {
        let Some(path) = self.next.take() else {
            return Ok(None);
        };
        let reply = self.client.send(Method::GET, &path, None::<&()>).await?;
        self.next = reply
            .headers
            .get_all(header::LINK)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .find_map(next_link);
        let text = String::from_utf8(reply.body).map_err(|_| ClientError::Unreadable {
            url: reply.url.clone(),
            reason: "the results are not UTF-8".into(),
        })?;
        text.lines()
            .map(|line| {
                InputRow::from_ndjson_line(line).ok_or_else(|| ClientError::Unreadable {
                    url: reply.url.clone(),
                    reason: format!("`{line}` is not a results line"),
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }
}

/// The target of a `Link` value's `rel="next"` (RFC 8288), e.g. `</v1/…/results?from=10000&limit=10000>;
/// rel="next"`.
fn next_link(value: &str) -> Option<String> {
    value.split(',').find_map(|link| {
        let (target, params) = link.trim().split_once(';')?;
        let is_next = params
            .split(';')
            .any(|p| p.trim().replace(' ', "") == "rel=\"next\"" || p.trim() == "rel=next");
        is_next.then(|| {
            target
                .trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_owned()
        })
    })
}

/// An answer, read whole.
struct Reply {
    url: String,
    status: StatusCode,
    headers: header::HeaderMap,
    body: Vec<u8>,
}

impl Reply {
    /// A credits header (`X-Credits-Charged`, `X-Credits-Remaining`) as a number, when sent.
    fn credits(&self, name: &str) -> Option<f64> {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
    }

    async fn read(url: &str, response: reqwest::Response) -> Result<Self, ClientError> {
        let status = response.status();
        let headers = response.headers().clone();
        let body = response
            .bytes()
            .await
            .map_err(|source| ClientError::Unreachable {
                url: url.to_owned(),
                source,
            })?
            .to_vec();
        Ok(Self {
            url: url.to_owned(),
            status,
            headers,
            body,
        })
    }

    fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, ClientError> {
        serde_json::from_slice(&self.body).map_err(|error| ClientError::Unreadable {
            url: self.url.clone(),
            reason: error.to_string(),
        })
    }

    /// `Retry-After` in seconds, when the server sent one.
    fn retry_after(&self) -> Option<Duration> {
        self.headers
            .get(header::RETRY_AFTER)?
            .to_str()
            .ok()?
            .trim()
            .parse()
            .ok()
            .map(Duration::from_secs)
    }

    /// The refusal, with the server's error body (or one made from the status when the body is not one).
    fn error(&self) -> ClientError {
        let body = self.json::<ErrorBody>().unwrap_or_else(|_| ErrorBody {
            error: "unexpected_answer".into(),
            message: String::from_utf8_lossy(&self.body)
                .chars()
                .take(200)
                .collect(),
            status_code: self.status.as_u16(),
            details: Vec::new(),
            request_id: None,
        });
        ClientError::Api {
            status: self.status.as_u16(),
            body,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_links_are_read_as_rfc_8288_writes_them() {
        assert_eq!(
            next_link("</v1/network/company-data/jobs/7/results?from=10&limit=10>; rel=\"next\"")
                .as_deref(),
            Some("/v1/network/company-data/jobs/7/results?from=10&limit=10")
        );
        assert_eq!(
            next_link("</a>; rel=\"prev\", </b>; rel=next").as_deref(),
            Some("/b")
        );
        assert_eq!(next_link("</a>; rel=\"prev\""), None);
    }

    #[test]
    fn bases_must_be_http_urls() {
        for bad in ["localhost:8080", "ftp://h", "", "http://"] {
            assert!(
                matches!(Client::new(bad, "k"), Err(ClientError::BadBase { .. })),
                "{bad}"
            );
        }
        assert!(Client::new("http://127.0.0.1:8080/", "k").is_ok());
    }

    #[test]
    fn idempotency_keys_are_new_each_time_and_of_the_allowed_form() {
        let (a, b) = (new_idempotency_key(), new_idempotency_key());
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
    }
}
