//! Reading a request: its media type, its `Idempotency-Key`, its query (one typed parser, `serde_urlencoded`),
//! an id in its path, what it accepts, and a host's path prefix.

use api_contract::headers::IDEMPOTENCY_KEY;
use http::{HeaderMap, Request, header};
use serde::de::DeserializeOwned;

use crate::error::ApiError;

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

/// The request's `Idempotency-Key`, if it sent one.
///
/// # Errors
/// [`ApiError::InvalidIdempotencyKey`] when the header is not [`idempotency::key_allowed`], or is repeated.
pub(crate) fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let mut values = headers.get_all(IDEMPOTENCY_KEY).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    let key = value
        .to_str()
        .ok()
        .map(str::trim)
        .filter(|key| idempotency::key_allowed(key) && values.next().is_none())
        .ok_or(ApiError::InvalidIdempotencyKey)?;
    Ok(Some(key.to_owned()))
}

/// The query string as `T` (a struct of `Option<String>` members with `deny_unknown_fields`), percent-decoded.
///
/// # Errors
/// [`ApiError::InvalidQuery`] naming an unknown or repeated parameter and the ones the endpoint takes.
pub(crate) fn query<T: DeserializeOwned>(query: Option<&str>) -> Result<T, ApiError> {
    serde_urlencoded::from_str(query.unwrap_or_default()).map_err(|error| {
        ApiError::InvalidQuery(format!("{error}; send each parameter at most once"))
    })
}

/// `value` of the parameter `name` as a whole number in `range`; `None` when absent.
///
/// # Errors
/// [`ApiError::InvalidQuery`] saying the range.
pub(crate) fn number(
    name: &str,
    value: Option<&str>,
    range: std::ops::RangeInclusive<u64>,
) -> Result<Option<u64>, ApiError> {
    let Some(value) = value else {
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

/// The `{id}` of a job's or watch's path as a positive id.
///
/// # Errors
/// [`ApiError::InvalidQuery`] (400, not 404: the path's shape is right) when it is not a whole number above 0.
pub(crate) fn path_id(id: Option<&str>, of: &str) -> Result<i64, ApiError> {
    let id = id.unwrap_or_default();
    id.parse().ok().filter(|n: &i64| *n > 0).ok_or_else(|| {
        ApiError::InvalidQuery(format!(
            "`{id}` in the path is not a {of} id; send the `id` of a {of} (a whole number above 0)"
        ))
    })
}

/// True when `Accept` prefers `text/csv` to NDJSON (the first of the two it names, ignoring weights).
pub(crate) fn wants_csv(headers: &HeaderMap) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

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

    #[test]
    fn csv_is_chosen_only_when_asked_for_first() {
        let accept = |value: &str| {
            let mut headers = HeaderMap::new();
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
        assert!(!wants_csv(&HeaderMap::new()));
    }

    #[test]
    fn ids_are_positive_whole_numbers() {
        assert_eq!(path_id(Some("12"), "job").ok(), Some(12));
        for bad in ["0", "-1", "x", ""] {
            let error = path_id(Some(bad), "job").expect_err(bad).to_string();
            assert!(error.contains("not a job id"), "{bad}: {error}");
        }
    }

    #[derive(serde::Deserialize, Debug)]
    #[serde(deny_unknown_fields)]
    struct Page {
        limit: Option<String>,
    }

    #[test]
    fn queries_refuse_unknown_and_repeated_parameters() {
        let page: Page = query(Some("limit=5")).expect("valid");
        assert_eq!(
            number("limit", page.limit.as_deref(), 1..=10).ok(),
            Some(Some(5))
        );
        for (bad, says) in [
            ("limt=5", "unknown field `limt`"),
            ("limit=1&limit=2", "duplicate"),
        ] {
            let error = query::<Page>(Some(bad)).expect_err(bad).to_string();
            assert!(error.contains(says), "{bad}: {error}");
        }
        let error = number("limit", Some("11"), 1..=10)
            .expect_err("range")
            .to_string();
        assert!(error.contains("from 1 to 10"), "{error}");
    }
}
