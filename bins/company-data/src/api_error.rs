//! The one place where failures become HTTP statuses and error bodies (spec 2.4, 7).
//!
//! Every body is `{error, message, status_code}`: `error` a stable snake_case code, `message` what went wrong
//! and the fix. Internal failures are logged with their whole source chain and answered with a generic text:
//! no SQL, paths or stack traces reach the client.

use bytes::Bytes;
use company_model::{ErrorBody, InvalidRequest, Problem};
use credit_ledger::Credits;
use http::{HeaderValue, Response, StatusCode, header};
use http_body_util::Full;

use crate::server::MAX_BODY_BYTES;

/// Every way a request can fail.
#[derive(Debug)]
pub(crate) enum ApiError {
    MissingApiKey,
    MalformedAuthorization,
    ConflictingApiKeys,
    InvalidApiKey,
    UnsupportedMediaType,
    BodyTooLarge,
    BodyTimeout,
    BodyUnreadable,
    InvalidRequest(InvalidRequest),
    InsufficientCredits {
        available: Credits,
        required: Credits,
    },
    RateLimited {
        retry_after: std::time::Duration,
    },
    TooManyLiveLookups {
        in_flight: usize,
        needed: usize,
        limit: usize,
        retry_after: std::time::Duration,
    },
    LiveTimeout(String),
    NotFound,
    MethodNotAllowed {
        allow: &'static str,
    },
    /// A store or other internal failure; the error is logged, not shown.
    Unavailable(anyhow::Error),
}

impl ApiError {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            ApiError::MissingApiKey
            | ApiError::MalformedAuthorization
            | ApiError::ConflictingApiKeys
            | ApiError::InvalidApiKey => StatusCode::UNAUTHORIZED,
            ApiError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::BodyTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::BodyTimeout => StatusCode::REQUEST_TIMEOUT,
            ApiError::BodyUnreadable | ApiError::InvalidRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::InsufficientCredits { .. } => StatusCode::PAYMENT_REQUIRED,
            ApiError::RateLimited { .. } | ApiError::TooManyLiveLookups { .. } => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiError::LiveTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            ApiError::NotFound => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The stable `error` code.
    pub(crate) fn code(&self) -> &'static str {
        match self {
            ApiError::MissingApiKey => "missing_api_key",
            ApiError::MalformedAuthorization => "malformed_authorization",
            ApiError::ConflictingApiKeys => "conflicting_api_keys",
            ApiError::InvalidApiKey => "invalid_api_key",
            ApiError::UnsupportedMediaType => "unsupported_media_type",
            ApiError::BodyTooLarge => "body_too_large",
            ApiError::BodyTimeout => "body_timeout",
            ApiError::BodyUnreadable => "body_unreadable",
            ApiError::InvalidRequest(_) => "invalid_request",
            ApiError::InsufficientCredits { .. } => "insufficient_credits",
            ApiError::RateLimited { .. } => "rate_limited",
            ApiError::TooManyLiveLookups { .. } => "too_many_live_lookups",
            ApiError::LiveTimeout(_) => "live_lookup_timed_out",
            ApiError::NotFound => "not_found",
            ApiError::MethodNotAllowed { .. } => "method_not_allowed",
            ApiError::Unavailable(_) => "service_unavailable",
        }
    }

    fn message(&self) -> String {
        const SEND_KEY: &str = "Send your API key as `Authorization: Bearer <key>` or in an `x-api-key`, `api-key` \
                                or `x-company-data-api-key` header.";
        match self {
            ApiError::MissingApiKey => format!("No API key was sent. {SEND_KEY}"),
            ApiError::MalformedAuthorization => {
                format!("The Authorization header is not of the form `Bearer <key>`. {SEND_KEY}")
            }
            ApiError::ConflictingApiKeys => {
                "Different API keys were sent in different headers. Send one key, in one header."
                    .to_owned()
            }
            ApiError::InvalidApiKey => {
                "The API key is not valid: it is unknown, mistyped or revoked. Check the \
                                        key, or create a new one with `company-data keys create`."
                    .to_owned()
            }
            ApiError::UnsupportedMediaType => {
                "The request body must be JSON. Send it with `Content-Type: application/json`."
                    .to_owned()
            }
            ApiError::BodyTooLarge => format!(
                "The request body is larger than {} KB ({MAX_BODY_BYTES} bytes). Send at most 200 URLs per \
                 request, without extra whitespace, and split larger lists.",
                MAX_BODY_BYTES / 1024
            ),
            ApiError::BodyTimeout => {
                "The request body did not arrive in time. Send the whole body promptly.".to_owned()
            }
            ApiError::BodyUnreadable => {
                "The request body could not be read (the connection broke off). Send the \
                                         request again."
                    .to_owned()
            }
            ApiError::InvalidRequest(invalid) => invalid.to_string(),
            ApiError::InsufficientCredits {
                available,
                required,
            } => format!(
                "Insufficient credits: this request may cost {required} credits (1 per company live, 0.5 with a \
                 freshness window, duplicates counted once) and the account has {available} available. Add \
                 credits (`company-data credits grant --account <name> <amount>`), send fewer URLs, or send a \
                 freshness window to pay the stored price."
            ),
            ApiError::RateLimited { retry_after } => format!(
                "This API key is sending requests faster than its limit. Retry after {} s (see the Retry-After \
                 header), and send up to 200 URLs per request rather than many small requests.",
                retry_after_seconds(*retry_after)
            ),
            ApiError::TooManyLiveLookups {
                in_flight,
                needed,
                limit,
                retry_after,
            } => format!(
                "This account has {in_flight} live lookups in flight and this request needs {needed} more; the cap \
                 is {limit} at once. Nothing was fetched or charged. Retry after {} s (see the Retry-After header), \
                 or send a freshness window (maxAgeHours) so that stored snapshots answer without live lookups.",
                retry_after_seconds(*retry_after)
            ),
            ApiError::LiveTimeout(detail) => format!(
                "No URL resolved: {detail}. Retry, split large live jobs into smaller requests, or send a \
                 freshness window (maxAgeHours) to accept stored snapshots."
            ),
            ApiError::NotFound => {
                "No such endpoint. The API is `POST /v1/network/company-data`; its description \
                                   is at `GET /openapi.json`."
                    .to_owned()
            }
            ApiError::MethodNotAllowed { allow } => {
                format!("This endpoint does not take that method. Use {allow}.")
            }
            ApiError::Unavailable(_) => {
                "The service could not complete the request because a store is \
                                         unavailable. Nothing was charged. Retry in a moment."
                    .to_owned()
            }
        }
    }

    fn details(self) -> Vec<Problem> {
        match self {
            ApiError::InvalidRequest(invalid) => invalid.problems,
            _ => Vec::new(),
        }
    }

    /// The HTTP response: status, standard headers, JSON error body.
    pub(crate) fn into_response(self) -> Response<Full<Bytes>> {
        if let ApiError::Unavailable(error) = &self {
            tracing::error!(
                error = format!("{error:#}"),
                "request failed inside the service"
            );
        }
        let status = self.status();
        let allow = match &self {
            ApiError::MethodNotAllowed { allow } => Some(*allow),
            _ => None,
        };
        let retry_after = match &self {
            ApiError::RateLimited { retry_after }
            | ApiError::TooManyLiveLookups { retry_after, .. } => {
                Some(retry_after_seconds(*retry_after))
            }
            ApiError::Unavailable(_) => Some(5),
            _ => None,
        };
        let body = ErrorBody {
            error: self.code().to_owned(),
            message: self.message(),
            status_code: status.as_u16(),
            details: self.details(),
        };
        let mut response = crate::server::json_response(status, &body);
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
            headers.insert(header::ALLOW, HeaderValue::from_static(allow));
        }
        if let Some(seconds) = retry_after {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// Whole seconds for `Retry-After`, rounded up and at least 1.
fn retry_after_seconds(wait: std::time::Duration) -> u64 {
    (wait.as_secs_f64().ceil() as u64).max(1)
}
