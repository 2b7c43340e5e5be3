//! Reading the API key from a request (spec 5.1).

use http::HeaderMap;

use crate::api_error::ApiError;

/// The headers that may carry the key, besides `Authorization: Bearer`.
pub(crate) const KEY_HEADERS: [&str; 3] = ["x-api-key", "api-key", "x-company-data-api-key"];

/// The presented key: from `Authorization: Bearer <key>` or one of [`KEY_HEADERS`]. Several headers may be
/// sent if they carry the same key; different keys are refused rather than guessed between.
pub(crate) fn presented_key(headers: &HeaderMap) -> Result<String, ApiError> {
    let mut found: Vec<String> = Vec::new();
    for value in headers.get_all(http::header::AUTHORIZATION) {
        let text = value
            .to_str()
            .map_err(|_| ApiError::MalformedAuthorization)?
            .trim();
        let (scheme, credentials) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(ApiError::MalformedAuthorization);
        }
        found.push(credentials.trim().to_owned());
    }
    for name in KEY_HEADERS {
        for value in headers.get_all(name) {
            found.push(
                value
                    .to_str()
                    .map_err(|_| ApiError::InvalidApiKey)?
                    .trim()
                    .to_owned(),
            );
        }
    }
    found.retain(|key| !key.is_empty());
    match found.split_first() {
        None => Err(ApiError::MissingApiKey),
        Some((first, rest)) if rest.iter().all(|other| other == first) => Ok(first.clone()),
        Some(_) => Err(ApiError::ConflictingApiKeys),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, value.parse().expect("header value"));
        }
        map
    }

    #[test]
    fn header_forms() {
        for pairs in [
            &[("authorization", "Bearer k1")][..],
            &[("authorization", "bearer   k1 ")],
            &[("x-api-key", "k1")],
            &[("api-key", " k1")],
            &[("x-company-data-api-key", "k1")],
            &[("x-api-key", "k1"), ("authorization", "Bearer k1")], // agreeing headers
            &[("x-api-key", ""), ("api-key", "k1")],                // an empty one is ignored
        ] {
            assert_eq!(
                presented_key(&headers(pairs)).ok().as_deref(),
                Some("k1"),
                "{pairs:?}"
            );
        }
    }

    #[test]
    fn refusals() {
        assert!(matches!(
            presented_key(&headers(&[])),
            Err(ApiError::MissingApiKey)
        ));
        assert!(matches!(
            presented_key(&headers(&[("x-api-key", " ")])),
            Err(ApiError::MissingApiKey)
        ));
        assert!(matches!(
            presented_key(&headers(&[("authorization", "Basic abc")])),
            Err(ApiError::MalformedAuthorization)
        ));
        assert!(matches!(
            presented_key(&headers(&[("x-api-key", "k1"), ("api-key", "k2")])),
            Err(ApiError::ConflictingApiKeys)
        ));
    }
}
