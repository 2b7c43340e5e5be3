//! Response builders: every answer of the API is made here (JSON, bytes of a media type), never cached by
//! intermediaries. Imports nothing else of the crate.

use api_contract::headers::{X_CREDITS_CHARGED, X_CREDITS_REMAINING};
use bytes::Bytes;
use credit_ledger::Credits;
use http::{HeaderValue, StatusCode, header};
use http_serve::Response;

/// A JSON response of `body`, or a 500 if it could not be written.
pub(crate) fn json_response(status: StatusCode, body: &impl serde::Serialize) -> Response {
    json_bytes_response(status, serde_json::to_vec(body))
}

/// A JSON response from serialized bytes, or a 500 if they could not be written.
pub(crate) fn json_bytes_response(
    status: StatusCode,
    body: Result<Vec<u8>, serde_json::Error>,
) -> Response {
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

/// A response of `body` as `content_type`, with `Cache-Control: no-store`.
pub(crate) fn bytes_response(
    status: StatusCode,
    body: Bytes,
    content_type: &'static str,
) -> Response {
    let mut response = Response::new(http_serve::full(body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// 204 No Content.
pub(crate) fn no_content() -> Response {
    let mut response = Response::new(http_serve::full(Bytes::new()));
    *response.status_mut() = StatusCode::NO_CONTENT;
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A billed answer: its records and charge on the request's span, `X-Credits-*`, and `Retry-After` with the
/// largest of `retry_after_seconds` (the entries the network pushed back on: when to send them again).
pub(crate) fn billed(
    mut response: Response,
    records: usize,
    charged: Credits,
    remaining: Credits,
    retry_after_seconds: impl Iterator<Item = u64>,
) -> Response {
    let span = tracing::Span::current();
    span.record("records", records);
    span.record("credits", tracing::field::display(charged));
    credits_headers(&mut response, Some(charged), Some(remaining));
    if let Some(seconds) = retry_after_seconds.max() {
        response
            .headers_mut()
            .insert(http::header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}

/// Sets `X-Credits-Charged` and `X-Credits-Remaining` (decimal credits) where a value is known.
pub(crate) fn credits_headers(
    response: &mut Response,
    charged: Option<impl std::fmt::Display>,
    remaining: Option<impl std::fmt::Display>,
) {
    let headers = [
        (X_CREDITS_CHARGED, charged.map(|c| c.to_string())),
        (X_CREDITS_REMAINING, remaining.map(|r| r.to_string())),
    ];
    for (name, value) in headers {
        if let Some(value) = value.and_then(|v| HeaderValue::from_str(&v).ok()) {
            response.headers_mut().insert(name, value);
        }
    }
}
