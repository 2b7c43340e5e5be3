use std::fmt;

/// The registrable domain of the professional network, e.g. `linkedin.com`.
///
/// Configuration, not data: the service accepts page URLs on this domain (and its one-label subdomains) and
/// writes every canonical URL as `https://www.<domain>/...`. Always lower-case, at least two labels, each of
/// `a-z`, `0-9` and `-`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NetworkDomain(String);

/// Why a configured network domain was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "`{given}` is not a usable network domain: give a registrable domain such as `linkedin.com` (labels of a-z, 0-9 and `-`, at least one dot, no scheme or path)"
)]
pub struct DomainError {
    given: String,
}

impl NetworkDomain {
    /// Parses a domain such as `linkedin.com` (upper case is folded, a trailing dot dropped).
    ///
    /// # Errors
    /// [`DomainError`] when the text has a scheme, a path, an empty label, a character outside `a-z0-9-`, or
    /// only one label.
    pub fn parse(text: &str) -> Result<Self, DomainError> {
        let lowered = text.trim().trim_end_matches('.').to_ascii_lowercase();
        let labels: Vec<&str> = lowered.split('.').collect();
        let label_ok = |label: &&str| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        };
        if labels.len() < 2 || !labels.iter().all(label_ok) {
            return Err(DomainError {
                given: text.to_owned(),
            });
        }
        Ok(Self(lowered))
    }

    /// The domain as configured, e.g. `linkedin.com`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The domain of a host this type made with [`NetworkDomain::canonical_host`] (already validated).
    pub(crate) fn from_canonical_host(host: &str) -> Self {
        Self(host.strip_prefix("www.").unwrap_or(host).to_owned())
    }

    /// The host every canonical page URL uses: `www.<domain>`.
    pub fn canonical_host(&self) -> String {
        format!("www.{}", self.0)
    }

    /// The guest job search filtered by one company, whose header counts the company's open jobs (`job_count`):
    /// `https://www.<domain>` and [`job_search_path`].
    pub fn guest_job_search(&self, company_id: u64) -> String {
        format!(
            "https://{}{}",
            self.canonical_host(),
            job_search_path(company_id)
        )
    }
}

/// The path of the network's guest job search ([`JOB_SEARCH_PATH`]).
pub const JOB_SEARCH_PATH: &str = "/jobs/search";

/// The job search's query parameter that filters it by one company's numeric id (the company page's
/// `company_id`).
pub const JOB_SEARCH_COMPANY_FILTER: &str = "f_C";

/// The path and query of the guest job search filtered by one company: `/jobs/search?f_C=<company_id>`.
pub fn job_search_path(company_id: u64) -> String {
    format!("{JOB_SEARCH_PATH}?{JOB_SEARCH_COMPANY_FILTER}={company_id}")
}

impl Default for NetworkDomain {
    /// `linkedin.com`, the network the service is built for.
    fn default() -> Self {
        Self("linkedin.com".to_owned())
    }
}

impl fmt::Display for NetworkDomain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_job_search_of_a_company_is_filtered_by_its_id() {
        assert_eq!(
            NetworkDomain::default().guest_job_search(1441),
            "https://www.linkedin.com/jobs/search?f_C=1441"
        );
    }

    #[test]
    fn domains() {
        for (input, expected) in [
            ("linkedin.com", Some("linkedin.com")),
            ("LinkedIn.COM.", Some("linkedin.com")), // case folded, root dot dropped
            ("example.co.uk", Some("example.co.uk")),
            ("localhost", None),            // one label
            ("https://linkedin.com", None), // scheme
            ("linkedin.com/company", None), // path
            ("linked_in.com", None),        // underscore
            ("-linkedin.com", None),        // leading hyphen
            ("", None),
        ] {
            assert_eq!(
                NetworkDomain::parse(input)
                    .ok()
                    .as_ref()
                    .map(NetworkDomain::as_str),
                expected,
                "{input}"
            );
        }
    }
}
