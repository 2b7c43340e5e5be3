//! The routes: which path and method does what.

use std::sync::Arc;
use std::time::Duration;

use api_keys::ApiKey;
use bulk_jobs::BulkJobs;
use bytes::Bytes;
use company_lookup::{Caller, LookupService};
use company_model::{CompanyRequest, MAX_BODY_BYTES};
use company_watch::Watches;
use http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use http_body_util::Full;
use http_serve::Response;
use idempotency::IdempotencyStore;
use page_url::NetworkDomain;

use shared_limits::{LimitStore, MemoryLimits, RateGate, RateStatus};

use crate::KeyRate;
use crate::account::ACCOUNT_PATH;
use crate::auth::{Authenticator, presented_key};
use crate::error::ApiError;
use crate::history::HISTORY_PATH;
use crate::idempotent::idempotency_key;
use crate::jobs::JOBS_PATH;
use crate::openapi::openapi_document;
use crate::watches::WATCHES_PATH;

/// What the API needs to know besides its parts.
#[derive(Clone, Debug)]
pub struct ApiSettings {
    /// The rate each API key may send requests at (counted per key id, in the store given to
    /// [`Api::with_limits`]); `None` for no limit. Default: 10 per second, 20 at once.
    pub key_rate: Option<KeyRate>,
    /// Time for a request's body to arrive (408 after it). Default 30 s.
    pub body_timeout: Duration,
    /// The header a trusted reverse proxy puts the client's address in (e.g. `X-Forwarded-For`, whose last
    /// entry is the one the proxy added, or `X-Real-IP`). `None` (the default): the connection's peer address,
    /// which is right when clients connect directly. Failed authentications are limited per this address.
    /// Set it only behind a proxy that sets the header: otherwise clients could choose their address.
    pub client_address_header: Option<http::HeaderName>,
}

impl Default for ApiSettings {
    fn default() -> Self {
        Self {
            key_rate: Some(KeyRate {
                per_second: 10.0,
                burst: 20,
            }),
            body_timeout: Duration::from_secs(30),
            client_address_header: None,
        }
    }
}

/// The API: a cheap handle (an `Arc` inside) to clone into each connection.
#[derive(Clone, Debug)]
pub struct Api(Arc<Inner>);

#[derive(Debug)]
struct Inner {
    lookup: Arc<LookupService>,
    authenticator: Arc<dyn Authenticator>,
    domain: NetworkDomain,
    settings: ApiSettings,
    key_rate: Option<RateGate>,
    /// `/openapi.json`, serialized once.
    openapi: Bytes,
    /// What `/healthz` asks, once set.
    health: std::sync::OnceLock<Arc<dyn HealthCheck>>,
    /// The bulk jobs behind `/v1/network/company-data/jobs`, once set.
    jobs: std::sync::OnceLock<Arc<BulkJobs>>,
    /// The watches behind `/v1/network/company-data/watches`, once set.
    watches: std::sync::OnceLock<Arc<Watches>>,
    /// Where `Idempotency-Key` answers are kept, once set.
    idempotency: std::sync::OnceLock<Arc<dyn IdempotencyStore>>,
}

/// What `GET /healthz` asks besides "the process answers": typically whether the database answers.
#[async_trait::async_trait]
pub trait HealthCheck: Send + Sync + std::fmt::Debug {
    /// `Err` with a short reason when the service cannot serve requests (`/healthz` then answers 503).
    async fn check(&self) -> Result<(), String>;
}

impl Api {
    /// The API over a lookup service, checking keys with `authenticator`, accepting page URLs on `domain`; the
    /// per-key rate counted in this process.
    pub fn new(
        lookup: Arc<LookupService>,
        authenticator: Arc<dyn Authenticator>,
        domain: NetworkDomain,
        settings: ApiSettings,
    ) -> Self {
        Self::with_limits(
            lookup,
            authenticator,
            domain,
            settings,
            Arc::new(MemoryLimits::new()),
        )
    }

    /// [`Api::new`] with the per-key rate counted in `limits` (bucket `key:<key id>`): on a store several
    /// servers share, each key's rate is a total for the deployment.
    pub fn with_limits(
        lookup: Arc<LookupService>,
        authenticator: Arc<dyn Authenticator>,
        domain: NetworkDomain,
        settings: ApiSettings,
        limits: Arc<dyn LimitStore>,
    ) -> Self {
        let document = openapi_document(
            &domain,
            lookup.settings().live_timeout,
            settings.body_timeout,
        );
        // A `Value` always serializes; the fallback only keeps this infallible.
        let openapi = serde_json::to_vec_pretty(&document)
            .map(Bytes::from)
            .unwrap_or_default();
        Self(Arc::new(Inner {
            lookup,
            authenticator,
            domain,
            key_rate: settings
                .key_rate
                .and_then(|rate| RateGate::new(limits, rate)),
            settings,
            openapi,
            health: std::sync::OnceLock::new(),
            jobs: std::sync::OnceLock::new(),
            watches: std::sync::OnceLock::new(),
            idempotency: std::sync::OnceLock::new(),
        }))
    }

    /// Keeps the answers of requests sent with an `Idempotency-Key` in `store` (once; later calls change
    /// nothing), so that a retry with the same key gets the first answer and is charged once. Without it the
    /// header is checked for its form and otherwise ignored.
    pub fn set_idempotency(&self, store: Arc<dyn IdempotencyStore>) {
        let _ = self.0.idempotency.set(store);
    }

    pub(crate) fn idempotency(&self) -> Option<Arc<dyn IdempotencyStore>> {
        self.0.idempotency.get().cloned()
    }

    /// Serves bulk jobs from `jobs` under `/v1/network/company-data/jobs` (once; later calls change nothing).
    /// Without it those paths are 404.
    pub fn set_jobs(&self, jobs: Arc<BulkJobs>) {
        let _ = self.0.jobs.set(jobs);
    }

    /// Serves watches from `watches` under `/v1/network/company-data/watches` (once; later calls change
    /// nothing). Without it those paths are 404.
    pub fn set_watches(&self, watches: Arc<Watches>) {
        let _ = self.0.watches.set(watches);
    }

    pub(crate) fn body_timeout(&self) -> Duration {
        self.0.settings.body_timeout
    }

    pub(crate) fn lookup(&self) -> &LookupService {
        &self.0.lookup
    }

    pub(crate) fn domain(&self) -> &NetworkDomain {
        &self.0.domain
    }

    /// Makes `/healthz` ask `check` (once; later calls change nothing). Without one, `/healthz` says only that
    /// the process answers.
    pub fn set_health_check(&self, check: Arc<dyn HealthCheck>) {
        let _ = self.0.health.set(check);
    }

    /// The OpenAPI 3.1 document this API serves at `/openapi.json`, as JSON text.
    pub fn openapi(&self) -> Bytes {
        self.0.openapi.clone()
    }

    /// Answers one request; paths outside the API are 404 `not_found`. To mount the API under a prefix, strip
    /// it first ([`strip_path_prefix`]).
    pub async fn handle<B>(&self, mut request: Request<B>) -> Response
    where
        B: hyper::body::Body + Unpin,
    {
        let started = std::time::Instant::now();
        let rate = RateCell::default();
        request.extensions_mut().insert(rate.clone());
        let route = crate::metrics::route_label(request.uri().path());
        let method = request.method().clone();
        let request_id = request
            .extensions()
            .get::<http_serve::RequestId>()
            .map(|id| id.0.clone());
        let mut response = self
            .route(request)
            .await
            .unwrap_or_else(|error| error.into_response_for(request_id.as_deref()));
        if let Some(status) = rate.0.get() {
            rate_limit_headers(response.headers_mut(), status);
        }
        crate::metrics::record_request(
            route,
            &method,
            response.status().as_u16(),
            started.elapsed(),
        );
        response
    }

    async fn route<B>(&self, request: Request<B>) -> Result<Response, ApiError>
    where
        B: hyper::body::Body + Unpin,
    {
        let read_only = matches!(*request.method(), Method::GET | Method::HEAD);
        match request.uri().path() {
            "/v1/network/company-data" if request.method() == Method::POST => {
                self.company_data(request).await
            }
            "/v1/network/company-data" => Err(ApiError::MethodNotAllowed { allow: "POST" }),
            "/openapi.json" if read_only => Ok(bytes_response(
                StatusCode::OK,
                self.openapi(),
                "application/json",
            )),
            "/healthz" if read_only => Ok(self.health().await),
            HISTORY_PATH if read_only => self.history(&request).await,
            ACCOUNT_PATH if read_only => self.account(&request).await,
            "/openapi.json" | "/healthz" | HISTORY_PATH | ACCOUNT_PATH => {
                Err(ApiError::MethodNotAllowed { allow: "GET, HEAD" })
            }
            path if path.starts_with(JOBS_PATH) => match self.0.jobs.get() {
                Some(jobs) => {
                    let jobs = Arc::clone(jobs);
                    self.jobs_route(&jobs, request)
                        .await
                        .unwrap_or(Err(ApiError::NotFound))
                }
                None => Err(ApiError::NotFound),
            },
            path if path.starts_with(WATCHES_PATH) => match self.0.watches.get() {
                Some(watches) => {
                    let watches = Arc::clone(watches);
                    self.watches_route(&watches, request)
                        .await
                        .unwrap_or(Err(ApiError::NotFound))
                }
                None => Err(ApiError::NotFound),
            },
            _ => Err(ApiError::NotFound),
        }
    }

    /// `GET /healthz`: 200 `{"status": "ok"}`, or 503 `{"status": "unavailable", "message": …}` with
    /// `Retry-After` when the health check fails.
    async fn health(&self) -> Response {
        let checked = match self.0.health.get() {
            Some(check) => check.check().await,
            None => Ok(()),
        };
        match checked {
            Ok(()) => json_response(StatusCode::OK, &serde_json::json!({"status": "ok"})),
            Err(reason) => {
                let mut response = json_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &serde_json::json!({"status": "unavailable", "message": reason}),
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(5u64));
                response
            }
        }
    }

    /// `POST /v1/network/company-data`: auth, body, validation, lookup, billing headers.
    async fn company_data<B>(&self, request: Request<B>) -> Result<Response, ApiError>
    where
        B: hyper::body::Body + Unpin,
    {
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        require_json(request.headers())?;
        let key = idempotency_key(request.headers())?;
        let path = request.uri().path().to_owned();
        let body =
            http_serve::read_body(request, MAX_BODY_BYTES, self.0.settings.body_timeout).await?;
        let parsed = CompanyRequest::from_json(&body, &self.0.domain)?;
        let fingerprint = idempotency::fingerprint("POST", &path, &body);
        self.idempotent(caller.account, key, fingerprint, move |api| async move {
            api.look_up(caller, &parsed).await
        })
        .await
    }

    /// The company-data answer to a valid request: the lookup, and the billing headers.
    async fn look_up(&self, caller: Caller, parsed: &CompanyRequest) -> Result<Response, ApiError> {
        let outcome = self.0.lookup.run(caller, parsed).await?;
        let span = tracing::Span::current();
        span.record("records", outcome.response.results.len());
        span.record("credits", tracing::field::display(outcome.charged));
        // Written by copying each record's stored text, not through serde (see `CompanyDataResponse::to_json`).
        let mut response = json_bytes_response(StatusCode::OK, outcome.response.to_json());
        for (name, value) in [
            ("x-credits-charged", outcome.charged),
            ("x-credits-remaining", outcome.remaining),
        ] {
            if let Ok(value) = HeaderValue::from_str(&value.to_string()) {
                response.headers_mut().insert(name, value);
            }
        }
        Ok(response)
    }

    /// The caller of a key-bearing request: the key verified (failures limited per client address), then its
    /// request rate checked.
    pub(crate) async fn authenticate(
        &self,
        headers: &HeaderMap,
        extensions: &http::Extensions,
    ) -> Result<Caller, ApiError> {
        let key = presented_key(headers)?;
        let client = self.client_address(headers, extensions);
        let verified = self.0.authenticator.authenticate(&key, client).await?;
        // Logged with the request: the account, and the key's prefix (never the key).
        let span = tracing::Span::current();
        span.record("account", verified.account.0);
        if let Some(key) = ApiKey::parse(&key) {
            span.record("key", key.prefix());
        }
        if let Some(gate) = &self.0.key_rate {
            let checked = gate.check(&format!("key:{}", verified.key_id.0)).await;
            if let Some(cell) = extensions.get::<RateCell>() {
                let _ = cell
                    .0
                    .set(*checked.as_ref().unwrap_or_else(|refused| &refused.status));
            }
            checked.map_err(|refused| ApiError::RateLimited {
                retry_after: refused.retry_after,
            })?;
        }
        Ok(Caller {
            account: verified.account,
            key_id: Some(verified.key_id.0),
        })
    }
}

impl Api {
    /// The client's address: from the trusted proxy's header when one is configured and the request carries
    /// it (its last entry), else the connection's peer as the server recorded it ([`http_serve::ClientAddr`]).
    fn client_address(
        &self,
        headers: &HeaderMap,
        extensions: &http::Extensions,
    ) -> Option<std::net::IpAddr> {
        let from_proxy = self
            .0
            .settings
            .client_address_header
            .as_ref()
            .and_then(|name| headers.get_all(name).iter().next_back())
            .and_then(|value| value.to_str().ok())
            .and_then(|text| text.rsplit(',').next())
            .and_then(|last| last.trim().parse().ok());
        from_proxy.or_else(|| {
            extensions
                .get::<http_serve::ClientAddr>()
                .map(|peer| peer.0.ip())
        })
    }
}

/// Where the caller's key stands against its rate, set once the key is checked: `handle` turns it into the
/// `RateLimit-*` headers of the response, whatever the answer.
#[derive(Clone, Debug, Default)]
struct RateCell(Arc<std::sync::OnceLock<RateStatus>>);

/// `RateLimit-Limit` (the burst), `RateLimit-Remaining` (requests that may go now) and `RateLimit-Reset`
/// (whole seconds until the burst is whole again), as the IETF RateLimit header fields draft names them.
fn rate_limit_headers(headers: &mut HeaderMap, status: &RateStatus) {
    let reset = status.reset.as_secs() + u64::from(status.reset.subsec_nanos() > 0);
    for (name, value) in [
        ("ratelimit-limit", u64::from(status.limit)),
        ("ratelimit-remaining", u64::from(status.remaining)),
        ("ratelimit-reset", reset),
    ] {
        headers.insert(name, HeaderValue::from(value));
    }
}

/// Takes `prefix` off the front of the request's path (`/company-data/v1/...` → `/v1/...` for the prefix
/// `/company-data`), for a host that mounts the API under a path of its own. Returns false, leaving the request
/// as it was, when the path is not under the prefix (the prefix followed by `/`).
pub fn strip_path_prefix<B>(request: &mut Request<B>, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    let Some(path_and_query) = request
        .uri()
        .path_and_query()
        .map(http::uri::PathAndQuery::as_str)
        .and_then(|p| p.strip_prefix(prefix))
        .filter(|rest| rest.starts_with('/'))
        .and_then(|rest| rest.parse::<http::uri::PathAndQuery>().ok())
    else {
        return false;
    };
    let mut uri = request.uri().clone().into_parts();
    uri.path_and_query = Some(path_and_query);
    match http::Uri::from_parts(uri) {
        Ok(uri) => {
            *request.uri_mut() = uri;
            true
        }
        Err(_) => false,
    }
}

/// `application/json`, with or without parameters, or any `application/*+json`.
pub(crate) fn require_json(headers: &HeaderMap) -> Result<(), ApiError> {
    let media_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    let is_json = media_type == "application/json"
        || (media_type.starts_with("application/") && media_type.ends_with("+json"));
    if is_json {
        Ok(())
    } else {
        Err(ApiError::UnsupportedMediaType)
    }
}

/// A JSON response; API answers are never cached by intermediaries.
pub(crate) fn json_response(status: StatusCode, body: &impl serde::Serialize) -> Response {
    json_bytes_response(status, serde_json::to_vec(body))
}

/// A JSON response from serialized bytes, or a 500 if they could not be written.
fn json_bytes_response(status: StatusCode, body: Result<Vec<u8>, serde_json::Error>) -> Response {
    match body {
        Ok(bytes) => bytes_response(status, bytes.into(), "application/json"),
        Err(error) => {
            tracing::error!(%error, "could not serialize a response");
            bytes_response(StatusCode::INTERNAL_SERVER_ERROR, Bytes::from_static(
                br#"{"error":"internal_error","message":"The response could not be written. Retry.","status_code":500}"#,
            ), "application/json")
        }
    }
}

pub(crate) fn bytes_response(
    status: StatusCode,
    body: Bytes,
    content_type: &'static str,
) -> Response {
    let mut response = Response::new(Full::new(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_after(uri: &str, prefix: &str) -> Option<String> {
        let mut request = Request::get(uri).body(()).expect("request");
        let before = request.uri().clone();
        if strip_path_prefix(&mut request, prefix) {
            Some(request.uri().to_string())
        } else {
            assert_eq!(request.uri(), &before, "left as it was");
            None
        }
    }

    #[test]
    fn prefixes_come_off_whole_segments_only() {
        assert_eq!(
            path_after(
                "http://h/company-data/v1/network/company-data?x=1",
                "/company-data/"
            ),
            Some("http://h/v1/network/company-data?x=1".to_owned())
        );
        assert_eq!(
            path_after("/company-data/healthz", "/company-data").as_deref(),
            Some("/healthz")
        );
        assert_eq!(path_after("/company-datax/healthz", "/company-data"), None);
        assert_eq!(path_after("/company-data", "/company-data"), None);
        assert_eq!(path_after("/other/healthz", "/company-data"), None);
    }
}
