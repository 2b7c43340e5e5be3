//! Responses and cookies: the HTTP details every page shares. Imports nothing of the crate but its settings.

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, StatusCode, header};
use http_serve::Response;

use crate::Parts;

pub(crate) const CSS: &str = include_str!("assets/app.css");
pub(crate) const JS: &str = include_str!("assets/app.js");

/// The session cookie's name.
pub(crate) const SESSION_COOKIE: &str = "cd_session";
/// The sign-in form's double-submit cookie (protects the sign-in form itself from cross-site posts).
pub(crate) const SIGN_IN_COOKIE: &str = "cd_sign_in";

/// Whether cookies get `Secure`: when configured, or when a TLS-terminating proxy says the browser used https.
pub(crate) fn is_secure(parts: &Parts, headers: &HeaderMap) -> bool {
    parts.settings.secure_cookies
        || headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"))
}

pub(crate) fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find_map(|(n, v)| (n == name).then_some(v))
}

/// A `Set-Cookie` value: `HttpOnly; SameSite=Strict; Path=/dashboard`, `Secure` when served over TLS; `max_age`
/// 0 deletes it.
pub(crate) fn set_cookie(name: &str, value: &str, max_age_secs: u64, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{name}={value}; Path={}; Max-Age={max_age_secs}; HttpOnly; SameSite=Strict{secure}",
        crate::PATH_PREFIX
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("invalid=; Max-Age=0"))
}

/// The query parameter `name` (percent-decoded, the first when repeated); `None` when absent or when the query
/// is not `application/x-www-form-urlencoded`.
pub(crate) fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    serde_urlencoded::from_str::<Vec<(String, String)>>(query.unwrap_or_default())
        .ok()?
        .into_iter()
        .find_map(|(key, value)| (key == name).then_some(value))
}

pub(crate) fn html(status: StatusCode, markup: maud::Markup) -> Response {
    let mut response = Response::new(http_serve::full(Bytes::from(markup.into_string())));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    security_headers(headers);
    response
}

/// Sets `Retry-After` to `wait`, in http-serve's whole seconds: every dashboard response that asks the client to
/// wait (429, 503) says how long here.
pub(crate) fn retry_after(response: &mut Response, wait: std::time::Duration) {
    response.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from(http_serve::retry_after_seconds(wait)),
    );
}

/// Pages are never cached (they show balances and, once, secrets), never framed, and run only this
/// dashboard's own script and style.
pub(crate) fn security_headers(headers: &mut HeaderMap) {
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // Invitation links carry their token in the path.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}

pub(crate) fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut response = Response::new(http_serve::full(Bytes::from_static(body.as_bytes())));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// 303 See Other: after a POST, the browser GETs the next page.
pub(crate) fn redirect(to: &str) -> Response {
    let mut response = Response::new(http_serve::full(Bytes::new()));
    *response.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(location) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    security_headers(response.headers_mut());
    response
}
