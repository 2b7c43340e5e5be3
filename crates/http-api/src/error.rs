//! The one place where the API's failures become HTTP statuses and error bodies (spec 2.4, 7).
//!
//! Every body is `{error, message, status_code}` (and `details` for an invalid request): `error` a stable
//! snake_case code, `message` what went wrong and the fix. The crates' own errors pass through unchanged
//! ([`ApiError::Lookup`], [`ApiError::Key`], ...) and are read here. Internal failures are logged with their
//! whole source chain and answered with a generic text: no SQL, paths or stack traces reach the client.

use std::time::Duration;

use http_serve::retry_after_seconds;

use api_contract::{
    ErrorBody, InvalidRequest, MAX_BODY_BYTES, MAX_JOB_BODY_BYTES, MAX_JOB_URLS, MAX_URLS, Problem,
};
use api_keys::KeyError;
use company_lookup::LookupError;
use credit_ledger::{HISTORY_PRICE, LIVE_PRICE, LedgerError, STORED_PRICE};
use http::{HeaderValue, StatusCode, header};
use http_serve::{BodyError, Response};

use crate::auth::CredentialsError;

/// Every way an API request can fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// No usable key in the headers (401).
    #[error(transparent)]
    Credentials(#[from] CredentialsError),
    /// The key was refused (401) or the key store failed (503).
    #[error(transparent)]
    Key(#[from] KeyError),
    /// The key sent requests faster than its rate (429).
    #[error("the key is over its request rate")]
    RateLimited {
        /// Until the next request is allowed.
        retry_after: Duration,
    },
    /// The body is not JSON (415).
    #[error("the body is not JSON")]
    UnsupportedMediaType,
    /// The body was too large (413), too slow (408) or broke off (400).
    #[error(transparent)]
    Body(#[from] BodyError),
    /// The body breaks the request's rules (400).
    #[error(transparent)]
    InvalidRequest(#[from] InvalidRequest),
    /// The lookup refused or failed: 402, 429, 504 or 503 (see [`ApiError::status`]).
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// No such path (404).
    #[error("no such endpoint")]
    NotFound,
    /// No job of the caller's account has that id (404).
    #[error("no such job")]
    JobNotFound,
    /// No watch of the caller's account has that id (404).
    #[error("no such watch")]
    WatchNotFound,
    /// No webhook endpoint of the caller's account has that id (404).
    #[error("no such webhook endpoint")]
    EndpointNotFound,
    /// No event of the caller's account has the id `GET /v1/events` was asked to list after (404): never, or no
    /// longer kept.
    #[error("no such event")]
    EventNotFound {
        /// How long the server keeps events, in days.
        kept_days: u64,
    },
    /// The watch service failed (503), or refused watches past the account's quota (409,
    /// `too_many_watches`).
    #[error(transparent)]
    Watches(#[from] company_watch::WatchError),
    /// The accounts' webhooks failed (503), refused an endpoint past the account's quota (409,
    /// `too_many_endpoints`) or a ping too soon (429, `too_many_pings`).
    #[error(transparent)]
    Webhooks(#[from] account_webhooks::WebhookError),
    /// The page of a history request has no stored snapshot (404 `not_found`).
    #[error("no history of this page")]
    NoHistory,
    /// A query parameter is not what the endpoint takes (400); the text names it and the fix.
    #[error("invalid query: {0}")]
    InvalidQuery(String),
    /// The job store failed (503).
    #[error(transparent)]
    Jobs(#[from] bulk_jobs::BulkError),
    /// The path does not take this method (405).
    #[error("method not allowed")]
    MethodNotAllowed {
        /// The methods it takes, for `Allow` (`GET, HEAD, POST`).
        allow: String,
    },
    /// `Idempotency-Key` is not 1 to [`idempotency::MAX_KEY_LEN`] visible ASCII characters, or is sent twice
    /// (400).
    #[error("the Idempotency-Key header is not valid")]
    InvalidIdempotencyKey,
    /// The key's first request is still running (409).
    #[error("a request with this Idempotency-Key is still running")]
    IdempotencyKeyInUse,
    /// The account's answers kept for `Idempotency-Key` retries reached its quota; nothing ran (429).
    #[error(
        "the account's answers kept for Idempotency-Key retries reached its quota of {quota_mb} MB"
    )]
    IdempotencyStorageFull {
        /// The quota, in megabytes.
        quota_mb: u32,
    },
    /// The key was used with another request within [`idempotency::KEEP_FOR`] (422).
    #[error("this Idempotency-Key was used with another request")]
    IdempotencyKeyReused,
    /// The idempotency store failed (503).
    #[error(transparent)]
    Idempotency(#[from] idempotency::IdempotencyError),
    /// Something that should not happen did (500); the text is logged, never sent.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ApiError {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        self.describe().0
    }

    /// The stable `error` code of the body.
    pub fn code(&self) -> &'static str {
        self.describe().1
    }

    /// What went wrong and how to fix it, for the body's `message`.
    pub fn message(&self) -> String {
        self.describe().2
    }

    /// The status, the `error` code and the message of each failure, decided together in one place.
    fn describe(&self) -> (StatusCode, &'static str, String) {
        const SEND_KEY: &str = "Send your API key as `Authorization: Bearer <key>` or in an `x-api-key`, `api-key` \
                                or `x-company-data-api-key` header.";
        const INVALID_KEY: &str = "The API key is not valid: it is unknown, mistyped or revoked. Check the key, or \
                                   create a new one with `company-data keys create`.";
        use StatusCode as S;
        match self {
            Self::Credentials(CredentialsError::Missing) => (
                S::UNAUTHORIZED,
                "missing_api_key",
                format!("No API key was sent. {SEND_KEY}"),
            ),
            Self::Credentials(CredentialsError::MalformedAuthorization) => (
                S::UNAUTHORIZED,
                "malformed_authorization",
                format!("The Authorization header is not of the form `Bearer <key>`. {SEND_KEY}"),
            ),
            Self::Credentials(CredentialsError::Conflicting) => (
                S::UNAUTHORIZED,
                "conflicting_api_keys",
                "Different API keys were sent in different headers. Send one key, in one header.".to_owned(),
            ),
            Self::Credentials(CredentialsError::NotText) | Self::Key(KeyError::Invalid) => {
                (S::UNAUTHORIZED, "invalid_api_key", INVALID_KEY.to_owned())
            }
            Self::RateLimited { retry_after } => (
                S::TOO_MANY_REQUESTS,
                "rate_limited",
                format!(
                    "This API key is sending requests faster than its limit. Retry after {} s (see the Retry-After \
                     header), and send up to {MAX_URLS} URLs per request rather than many small requests.",
                    retry_after_seconds(*retry_after)
                ),
            ),
            Self::Key(KeyError::TooManyFailures { retry_after }) => (
                S::TOO_MANY_REQUESTS,
                "too_many_failed_authentications",
                format!(
                    "Too many requests from this address were sent with keys that are not valid. Retry after {} s \
                     (see the Retry-After header) with a valid key; `company-data keys create` makes one.",
                    retry_after_seconds(*retry_after)
                ),
            ),
            Self::UnsupportedMediaType => (
                S::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "The request body must be JSON. Send it with `Content-Type: application/json`.".to_owned(),
            ),
            Self::Body(BodyError::TooLarge { limit }) if *limit == MAX_JOB_BODY_BYTES => (
                S::PAYLOAD_TOO_LARGE,
                "body_too_large",
                format!(
                    "The request body is larger than {} MiB ({MAX_JOB_BODY_BYTES} bytes). Send at most \
                     {MAX_JOB_URLS} URLs per job, without extra whitespace, and split larger lists into several jobs.",
                    MAX_JOB_BODY_BYTES / (1024 * 1024)
                ),
            ),
            Self::Body(BodyError::TooLarge { .. }) => (
                S::PAYLOAD_TOO_LARGE,
                "body_too_large",
                format!(
                    "The request body is larger than {} KB ({MAX_BODY_BYTES} bytes). Send at most {MAX_URLS} URLs \
                     per request, without extra whitespace, and split larger lists (or send them as one bulk job: \
                     POST /v1/network/company-data/jobs).",
                    MAX_BODY_BYTES / 1024
                ),
            ),
            Self::Body(BodyError::TimedOut) => (
                S::REQUEST_TIMEOUT,
                "body_timeout",
                "The request body did not arrive in time. Send the whole body promptly.".to_owned(),
            ),
            Self::Body(_) => (
                S::BAD_REQUEST,
                "body_unreadable",
                "The request body could not be read (the connection broke off). Send the request again."
                    .to_owned(),
            ),
            Self::InvalidRequest(invalid) => (S::BAD_REQUEST, "invalid_request", invalid.to_string()),
            Self::Lookup(LookupError::Ledger(LedgerError::InsufficientCredits {
                available,
                required,
            })) => (
                S::PAYMENT_REQUIRED,
                "insufficient_credits",
                format!(
                    "Insufficient credits: this request may cost {required} credits ({LIVE_PRICE} per company live, \
                     {STORED_PRICE} with a freshness window, duplicates counted once) and the account has {available} \
                     available. Add credits (`company-data credits grant --account <name> <amount>`), send fewer \
                     URLs, or send a freshness window to pay the stored price."
                ),
            ),
            Self::Lookup(LookupError::TooManyLiveLookups {
                in_flight,
                needed,
                limit,
                retry_after,
            }) => (
                S::TOO_MANY_REQUESTS,
                "too_many_live_lookups",
                format!(
                    "This account has {in_flight} live lookups in flight and this request needs {needed} more; the \
                     cap is {limit} at once. Nothing was fetched or charged. Retry after {} s (see the Retry-After \
                     header), or send a freshness window (maxAgeHours) so that stored snapshots answer without live \
                     lookups.",
                    retry_after_seconds(*retry_after)
                ),
            ),
            Self::Lookup(LookupError::TestModeUnavailable) => (
                S::FORBIDDEN,
                "test_mode_unavailable",
                "This server does not serve test-mode keys (`cdk_test_…`). Nothing was fetched or charged. Use a \
                 live key."
                    .to_owned(),
            ),
            Self::Lookup(LookupError::NotInTestMode { what }) => (
                S::FORBIDDEN,
                "not_in_test_mode",
                format!(
                    "Test-mode keys (`cdk_test_…`) cannot do this: {what} needs the network, which test mode never \
                     reaches. Nothing was fetched or charged. Use a live key, or look up the sandbox's pages by URL."
                ),
            ),
            Self::Lookup(timed_out @ LookupError::TimedOut { .. }) => (
                S::GATEWAY_TIMEOUT,
                "live_lookup_timed_out",
                format!(
                    "No URL resolved: {timed_out}. Retry, split large live jobs into smaller requests, or send a \
                     freshness window (maxAgeHours) to accept stored snapshots."
                ),
            ),
            Self::Lookup(at_cap @ LookupError::TooManySearches { .. }) => (
                S::TOO_MANY_REQUESTS,
                "too_many_searches",
                format!(
                    "This request was not run: {at_cap}. Retry after the Retry-After header's seconds; page through \
                     one search with `next_cursor` rather than running many at once."
                ),
            ),
            // A client error rather than a time-out of the server's (504, which clients retry): the same search
            // would cost as much again; a narrower one is the fix.
            Self::Lookup(timed_out @ LookupError::SearchTimedOut { .. }) => (
                S::BAD_REQUEST,
                "search_timed_out",
                format!("This search was stopped: {timed_out}. Nothing was charged (searches are free)."),
            ),
            Self::NotFound => (
                S::NOT_FOUND,
                "not_found",
                "No such endpoint. The API is `POST /v1/network/company-data`, \
                 `POST /v1/network/company-data/resolve`, the jobs under \
                 `/v1/network/company-data/jobs`, `GET /v1/network/company-data/history`, the watches under \
                 `/v1/network/company-data/watches`, the webhook endpoints under `/v1/webhook-endpoints`, \
                 `GET /v1/events` and `GET /v1/account`; its description is at \
                 `GET /openapi.json`."
                    .to_owned(),
            ),
            Self::JobNotFound => (
                S::NOT_FOUND,
                "job_not_found",
                "This account has no job with that id (ended jobs are kept for the server's job retention; deleted \
                 ones are gone). List the account's jobs with `GET /v1/network/company-data/jobs`."
                    .to_owned(),
            ),
            Self::NoHistory => (
                S::NOT_FOUND,
                "not_found",
                format!(
                    "No snapshot of this page is stored, so it has no history yet; nothing was charged. Look it up \
                     once (POST /v1/network/company-data), or watch it (POST /v1/network/company-data/watches), and \
                     its history starts then. A history with data costs {HISTORY_PRICE} credits."
                ),
            ),
            Self::WatchNotFound => (
                S::NOT_FOUND,
                "watch_not_found",
                "This account has no watch with that id. List the account's watches with \
                 `GET /v1/network/company-data/watches`."
                    .to_owned(),
            ),
            Self::EndpointNotFound => (
                S::NOT_FOUND,
                "endpoint_not_found",
                "This account has no webhook endpoint with that id. List the account's endpoints with \
                 `GET /v1/webhook-endpoints`."
                    .to_owned(),
            ),
            Self::EventNotFound { kept_days } => (
                S::NOT_FOUND,
                "event_not_found",
                format!(
                    "This account has no event with the id `after` names (events are kept {kept_days} days). \
                     Omit `after` to start from the oldest event kept."
                ),
            ),
            Self::Webhooks(account_webhooks::WebhookError::TooManyEndpoints { max }) => (
                S::CONFLICT,
                "too_many_endpoints",
                format!(
                    "This account has {max} webhook endpoints, the most its quota allows. Delete one \
                     (`DELETE /v1/webhook-endpoints/{{id}}`) or add the events you need to an existing one; the \
                     service's operator can raise the quota (`company-data accounts quotas --endpoints N`)."
                ),
            ),
            Self::Watches(company_watch::WatchError::TooManyWatches { adding, quota }) => (
                S::CONFLICT,
                "too_many_watches",
                format!(
                    "This request's {adding} watches would take the account past its quota of {quota} watches; \
                     none was created. Delete watches it no longer needs (`DELETE \
                     /v1/network/company-data/watches/{{id}}`); the service's operator can raise the quota \
                     (`company-data accounts quotas --watches N`)."
                ),
            ),
            Self::Jobs(bulk_jobs::BulkError::TooManyOpenJobs { open, quota }) => (
                S::CONFLICT,
                "too_many_open_jobs",
                format!(
                    "This account has {open} jobs not yet ended (queued, running or paused), the most its quota \
                     of {quota} allows. Wait for one to end, or cancel one (`POST \
                     /v1/network/company-data/jobs/{{id}}/cancel`; a paused job resumes only with credits); the \
                     service's operator can raise the quota (`company-data accounts quotas --open-jobs N`)."
                ),
            ),
            Self::Jobs(bulk_jobs::BulkError::TooManyQueuedUrls {
                queued,
                adding,
                quota,
            }) => (
                S::CONFLICT,
                "too_many_queued_urls",
                format!(
                    "This account's open jobs have {queued} URLs not yet answered; this job's {adding} would take \
                     it past its quota of {quota}. Send at most {} URLs now, or wait for its jobs to progress; the \
                     service's operator can raise the quota (`company-data accounts quotas --queued-urls N`).",
                    quota.saturating_sub(*queued)
                ),
            ),
            Self::Webhooks(account_webhooks::WebhookError::TooManyPings { retry_after }) => (
                S::TOO_MANY_REQUESTS,
                "too_many_pings",
                format!(
                    "This endpoint was pinged {} times in quick succession. Ping it again in {} s, or read \
                     what the last pings did with `GET /v1/webhook-endpoints/{{id}}/deliveries`.",
                    account_webhooks::PING_BURST,
                    retry_after_seconds(*retry_after)
                ),
            ),
            Self::InvalidQuery(text) => (
                S::BAD_REQUEST,
                "invalid_query",
                format!("The query is not valid: {text}."),
            ),
            Self::MethodNotAllowed { allow } => (
                S::METHOD_NOT_ALLOWED,
                "method_not_allowed",
                format!("This endpoint does not take that method. Use {allow}."),
            ),
            Self::InvalidIdempotencyKey => (
                S::BAD_REQUEST,
                "invalid_idempotency_key",
                format!(
                    "The Idempotency-Key header must be one value of 1 to {} visible ASCII characters, e.g. a UUID.",
                    idempotency::MAX_KEY_LEN
                ),
            ),
            Self::IdempotencyKeyInUse => (
                S::CONFLICT,
                "idempotency_key_in_use",
                "The first request with this Idempotency-Key is still running. Retry after the Retry-After \
                 header's seconds to get its answer."
                    .to_owned(),
            ),
            Self::IdempotencyStorageFull { quota_mb } => (
                S::TOO_MANY_REQUESTS,
                "idempotency_storage_full",
                format!(
                    "This account's answers kept for Idempotency-Key retries reached its quota of {quota_mb} MB \
                     (each is kept 24 hours). Nothing ran. Send the request without an Idempotency-Key, or \
                     retry after the Retry-After header's seconds as old answers expire; the service's operator \
                     can raise the quota (`company-data accounts quotas --idempotency-mb N`)."
                ),
            ),
            Self::IdempotencyKeyReused => (
                S::UNPROCESSABLE_ENTITY,
                "idempotency_key_reused",
                format!(
                    "This Idempotency-Key was used with another request (method, path or body) in the last {} \
                     hours. Send a new key for a new request.",
                    idempotency::KEEP_FOR.as_secs() / 3600
                ),
            ),
            Self::Internal(_) => (
                S::INTERNAL_SERVER_ERROR,
                "internal_error",
                "The service failed to answer. Nothing was charged. Retry.".to_owned(),
            ),
            Self::Key(_)
            | Self::Lookup(_)
            | Self::Jobs(_)
            | Self::Watches(_)
            | Self::Webhooks(_)
            | Self::Idempotency(_)
                if self.database_unavailable() =>
            {
                (
                    S::SERVICE_UNAVAILABLE,
                    "database_unavailable",
                    "The database is unavailable (down or restarting). Nothing was charged. Retry after the \
                     Retry-After header's seconds; the service resumes by itself when the database is back."
                        .to_owned(),
                )
            }
            Self::Key(_)
            | Self::Lookup(_)
            | Self::Jobs(_)
            | Self::Watches(_)
            | Self::Webhooks(_)
            | Self::Idempotency(_) => (
                S::SERVICE_UNAVAILABLE,
                "service_unavailable",
                "The service could not complete the request because a store is unavailable. Nothing was \
                 charged. Retry in a moment."
                    .to_owned(),
            ),
        }
    }

    /// Whether a store failed because its database cannot be reached (down, restarting, out of connections),
    /// as opposed to refusing a statement.
    fn database_unavailable(&self) -> bool {
        store_base::is_unavailable(self)
    }

    /// `Retry-After` in whole seconds, where the client should wait, for this error answered with `status`.
    fn retry_after(&self, status: StatusCode) -> Option<u64> {
        match self {
            Self::RateLimited { retry_after }
            | Self::Key(KeyError::TooManyFailures { retry_after })
            | Self::Webhooks(account_webhooks::WebhookError::TooManyPings { retry_after })
            | Self::Lookup(
                LookupError::TooManyLiveLookups { retry_after, .. }
                | LookupError::TooManySearches { retry_after, .. },
            ) => Some(retry_after_seconds(*retry_after)),
            Self::IdempotencyKeyInUse => Some(1),
            // Old answers are forgotten by the hourly sweep.
            Self::IdempotencyStorageFull { .. } => Some(3600),
            _ if status == StatusCode::SERVICE_UNAVAILABLE => Some(5),
            _ => None,
        }
    }

    /// The HTTP response: status, standard headers (`WWW-Authenticate`, `Accept-Post`, `Allow`,
    /// `Retry-After` where they apply), JSON error body.
    pub fn into_response(self) -> Response {
        self.into_response_for(None)
    }

    /// [`ApiError::into_response`] with the request's id in the body (`request_id`), so a client's report of a
    /// failure can be matched with the server's log.
    pub fn into_response_for(self, request_id: Option<&str>) -> Response {
        let (status, code, message) = self.describe();
        if status.is_server_error() {
            tracing::error!(
                error = %ErrorChain(&self),
                "request failed inside the service"
            );
        }
        let retry_after = self.retry_after(status);
        let allow = match &self {
            Self::MethodNotAllowed { allow } => HeaderValue::from_str(allow).ok(),
            _ => None,
        };
        let body = ErrorBody {
            error: code.to_owned(),
            message,
            status_code: status.as_u16(),
            details: match self {
                Self::InvalidRequest(invalid) => invalid.problems,
                _ => Vec::<Problem>::new(),
            },
            request_id: request_id.map(str::to_owned),
        };
        let mut response = crate::respond::json_response(status, &body);
        let headers = response.headers_mut();
        if status == StatusCode::UNAUTHORIZED {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"company-data\""),
            );
        }
        if status == StatusCode::UNSUPPORTED_MEDIA_TYPE {
            headers.insert("accept-post", HeaderValue::from_static("application/json"));
        }
        if let Some(allow) = allow {
            headers.insert(header::ALLOW, allow);
        }
        if let Some(seconds) = retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// An error and every `source()` below it, `: `-separated, for the log.
struct ErrorChain<'a>(&'a dyn std::error::Error);

impl std::fmt::Display for ErrorChain<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)?;
        let mut source = self.0.source();
        while let Some(error) = source {
            write!(f, ": {error}")?;
            source = error.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every price a message states is the ledger's.
    #[test]
    fn the_402_message_states_the_ledgers_prices() {
        let error = ApiError::Lookup(LookupError::Ledger(LedgerError::InsufficientCredits {
            available: STORED_PRICE,
            required: LIVE_PRICE,
        }));
        assert_eq!(error.status(), StatusCode::PAYMENT_REQUIRED);
        let message = error.message();
        for price in [LIVE_PRICE, STORED_PRICE] {
            assert!(message.contains(&format!("{price} ")), "{price}: {message}");
        }
    }

    /// A search stopped at its time limit is a 400 (no client retries it as it would a 504), with the limit and
    /// the fix in its message.
    #[test]
    fn a_search_past_its_time_limit_is_400_with_the_limit_and_the_fix() {
        let error = ApiError::Lookup(LookupError::SearchTimedOut {
            limit: Duration::from_millis(1_500),
        });
        assert_eq!(error.status(), StatusCode::BAD_REQUEST);
        assert_eq!(error.code(), "search_timed_out");
        let message = error.message();
        assert!(message.contains("1500 ms"), "{message}");
        assert!(message.contains("narrow"), "{message}");
        assert!(message.contains("Nothing was charged"), "{message}");
    }

    #[test]
    fn store_failures_are_503_with_retry_after_and_no_detail() {
        let failed = ApiError::Key(KeyError::Backend("disk I/O error at /var/db".into()));
        assert_eq!(failed.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(failed.retry_after(failed.status()), Some(5));
        assert!(!failed.message().contains("/var/db"));
    }
}
