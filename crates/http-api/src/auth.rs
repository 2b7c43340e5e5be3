//! Who is calling: the API key from the request's headers (spec 5.1), its verification, and the per-key rate.

use std::net::IpAddr;

use api_keys::{ApiKeys, KeyError, VerifiedKey};
use http::HeaderMap;

use api_contract::headers::KEY_HEADERS;

/// Why no key could be read from a request's headers (HTTP 401).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CredentialsError {
    /// No header carried a key.
    #[error("no API key was sent")]
    Missing,
    /// `Authorization` is present but not `Bearer <key>`.
    #[error("the Authorization header is not of the form `Bearer <key>`")]
    MalformedAuthorization,
    /// Two headers carried different keys.
    #[error("different API keys were sent in different headers")]
    Conflicting,
    /// A key header's value is not text.
    #[error("an API key header is not text")]
    NotText,
}

/// The presented key: from `Authorization: Bearer <key>`, `x-api-key`, `api-key` or `x-company-data-api-key`.
/// Several headers may be sent if they carry the same key; different keys are refused rather than guessed
/// between. Empty values are ignored.
///
/// # Errors
/// [`CredentialsError`].
pub fn presented_key(headers: &HeaderMap) -> Result<String, CredentialsError> {
    let mut found: Vec<String> = Vec::new();
    for value in headers.get_all(http::header::AUTHORIZATION) {
        let text = value
            .to_str()
            .map_err(|_| CredentialsError::MalformedAuthorization)?
            .trim();
        let (scheme, credentials) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(CredentialsError::MalformedAuthorization);
        }
        found.push(credentials.trim().to_owned());
    }
    for name in KEY_HEADERS {
        for value in headers.get_all(name) {
            found.push(
                value
                    .to_str()
                    .map_err(|_| CredentialsError::NotText)?
                    .trim()
                    .to_owned(),
            );
        }
    }
    found.retain(|key| !key.is_empty());
    match found.split_first() {
        None => Err(CredentialsError::Missing),
        Some((first, rest)) if rest.iter().all(|other| other == first) => Ok(first.clone()),
        Some(_) => Err(CredentialsError::Conflicting),
    }
}

/// Checks a presented API key. [`ApiKeys`] is the implementation the service uses; the trait lets an embedder
/// (or a benchmark measuring what verification costs) pass another. There is no switch that turns the check
/// off: a request without a key is refused before any authenticator is asked.
#[async_trait::async_trait]
pub trait Authenticator: Send + Sync + std::fmt::Debug {
    /// The key's id and account. `client` is the caller's address when known, for limits on failures.
    ///
    /// # Errors
    /// [`KeyError::Invalid`] for anything but an active key (HTTP 401), [`KeyError::TooManyFailures`] when
    /// the address is refused for its failures (HTTP 429); any other [`KeyError`] is a store failure (HTTP 503).
    async fn authenticate(
        &self,
        presented: &str,
        client: Option<IpAddr>,
    ) -> Result<VerifiedKey, KeyError>;
}

#[async_trait::async_trait]
impl Authenticator for ApiKeys {
    async fn authenticate(
        &self,
        presented: &str,
        client: Option<IpAddr>,
    ) -> Result<VerifiedKey, KeyError> {
        match client {
            Some(client) => self.verify_from(client, presented).await,
            None => self.verify(presented).await,
        }
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
        for (pairs, expected) in [
            (&[][..], CredentialsError::Missing),
            (&[("x-api-key", " ")], CredentialsError::Missing),
            (
                &[("authorization", "Basic abc")],
                CredentialsError::MalformedAuthorization,
            ),
            (
                &[("x-api-key", "k1"), ("api-key", "k2")],
                CredentialsError::Conflicting,
            ),
        ] {
            assert_eq!(presented_key(&headers(pairs)), Err(expected), "{pairs:?}");
        }
    }
}
