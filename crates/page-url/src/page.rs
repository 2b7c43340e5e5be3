use std::fmt;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use url::Url;

use crate::NetworkDomain;

/// The longest page URL accepted, in characters (as JSON Schema's `maxLength` counts). Real page URLs are far
/// shorter; the bound stops pathological input early.
pub const MAX_URL_LEN: usize = 2048;

/// Bytes kept as they are in a canonical slug: RFC 3986 unreserved characters. Everything else is
/// percent-encoded (UTF-8), so each slug has exactly one spelling.
const SLUG_ENCODE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The three kinds of page the service reads, named by the first path segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PageKind {
    /// `/company/<slug>`: a company page.
    Company,
    /// `/school/<slug>`: a school (university) page.
    School,
    /// `/showcase/<slug>`: a showcase page (a brand or product line of a company).
    Showcase,
}

impl PageKind {
    /// The path segment: `company`, `school` or `showcase`.
    pub fn as_str(self) -> &'static str {
        match self {
            PageKind::Company => "company",
            PageKind::School => "school",
            PageKind::Showcase => "showcase",
        }
    }

    /// The kind named by a path segment, exactly as written (lower case).
    pub fn from_segment(segment: &str) -> Option<Self> {
        match segment {
            "company" => Some(PageKind::Company),
            "school" => Some(PageKind::School),
            "showcase" => Some(PageKind::Showcase),
            _ => None,
        }
    }
}

/// What the network shows at `path` when it is not a company, school or showcase page, in words for a person:
/// `/in/…` is "a person's profile", `/jobs…` "a jobs page", `/posts…`, `/feed…` and `/pulse…` "a post", anything
/// else "another kind of page".
pub fn other_page_kind(path: &str) -> &'static str {
    if path.starts_with("/in/") {
        "a person's profile"
    } else if path.starts_with("/jobs") {
        "a jobs page"
    } else if ["/posts", "/feed", "/pulse"]
        .iter()
        .any(|prefix| path.starts_with(prefix))
    {
        "a post"
    } else {
        "another kind of page"
    }
}

/// Why a URL is not a supported page URL. The `Display` text says what is wrong; [`UrlError::fix`] says what
/// to send instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum UrlError {
    /// Longer than [`MAX_URL_LEN`] characters.
    #[error("the URL is {len} characters long, over the limit of {MAX_URL_LEN}")]
    TooLong {
        /// Length of the submitted text in characters.
        len: usize,
    },
    /// Does not start with `https://`.
    #[error("the URL does not start with `https://`")]
    NotHttps,
    /// The host is not the network's domain or a one-label subdomain of it (written in lower case).
    #[error("the host `{host}` is not `{domain}` or a one-label subdomain of it in lower case")]
    WrongHost {
        /// The host as submitted.
        host: String,
        /// The configured network domain.
        domain: String,
    },
    /// The first path segment is not `company`, `school` or `showcase`.
    #[error("the path does not start with `/company/`, `/school/` or `/showcase/`")]
    UnsupportedPageKind,
    /// Nothing usable names the page after the kind segment.
    #[error("no page name follows `/{kind}/`")]
    MissingSlug {
        /// The kind segment that was found.
        kind: &'static str,
    },
    /// The page name decodes to text that is not UTF-8 or holds control characters.
    #[error("the page name is not valid text once percent-decoded")]
    BadSlug,
    /// The URL has characters a submitted page URL may not (the pattern of [`crate::submitted_pattern`]): spaces
    /// or control characters, a page name `.` or `..`, `.` or `%` in a sub-page, percent-encoding that is not
    /// UTF-8.
    #[error(
        "the URL has characters a page URL may not: spaces or control characters, a page name `.` or `..`, \
         percent-encoding that is not UTF-8, or `.` or `%` after the page name"
    )]
    BadCharacters,
    /// The text is not a URL at all.
    #[error("the text is not a valid URL ({0})")]
    Malformed(String),
}

impl UrlError {
    /// A concrete fix, phrased for the person who sent the URL.
    pub fn fix(&self) -> String {
        match self {
            UrlError::TooLong { .. } => {
                "send the page URL without query parameters or tracking suffixes".to_owned()
            }
            UrlError::NotHttps => "write the URL as `https://www.<network>/company/<name>`".to_owned(),
            UrlError::WrongHost { domain, .. } => {
                format!("use a page on `www.{domain}` (or a country subdomain such as `uk.{domain}`), host in lower case")
            }
            UrlError::UnsupportedPageKind => {
                "send a company, school or showcase page URL such as `https://www.linkedin.com/company/google`; \
                 people (`/in/`), posts and jobs pages are not supported"
                    .to_owned()
            }
            UrlError::MissingSlug { kind } => {
                format!("add the page name after `/{kind}/`, e.g. `/{kind}/google`")
            }
            UrlError::BadSlug | UrlError::BadCharacters | UrlError::Malformed(_) => {
                "copy the page URL from the browser's address bar, e.g. `https://www.linkedin.com/company/google`"
                    .to_owned()
            }
        }
    }
}

/// A normalized company, school or showcase page URL: `https://www.<domain>/<kind>/<slug>`.
///
/// Built only by [`PageUrl::parse_submitted`], [`PageUrl::normalize`] or [`PageUrl::from_path`], so holding one
/// means the URL is valid and canonical. Two inputs that name the same page give equal values; the service keys
/// lookups, snapshots and billing by it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PageUrl {
    canonical: String,
    /// Byte offset in `canonical` where the path (`/company/...`) starts.
    path_start: usize,
    kind: PageKind,
}

impl PageUrl {
    /// Checks a URL as a caller submitted it against [`crate::submitted_pattern`] (spec 2.1's pattern made
    /// precise), then normalizes it. Every URL the pattern matches is accepted, every other one refused.
    ///
    /// The pattern: `https://`, an optional one-label subdomain of `a-z`, `0-9` and `-` followed by a dot, the
    /// network domain, `/`, one of `company`, `school` or `showcase`, `/`, the page name, then optionally
    /// sub-pages, a query and a fragment (see [`crate::submitted_pattern`] for each part's characters). The page
    /// name is kept as sent (percent-decoded, lower-cased), spaces included.
    ///
    /// # Errors
    /// The first rule the text breaks, as a [`UrlError`].
    pub fn parse_submitted(input: &str, domain: &NetworkDomain) -> Result<Self, UrlError> {
        let len = input.chars().count();
        if len > MAX_URL_LEN {
            return Err(UrlError::TooLong { len });
        }
        // `$` before a final newline, as Python reads the pattern.
        let input = input.strip_suffix('\n').unwrap_or(input);
        let rest = input.strip_prefix("https://").ok_or(UrlError::NotHttps)?;
        let host_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let host = &rest[..host_end];
        if !host_matches_pattern(host, domain) {
            return Err(UrlError::WrongHost {
                host: host.to_owned(),
                domain: domain.to_string(),
            });
        }
        let path = &rest[host_end..];
        let after_kind = ["company", "school", "showcase"]
            .iter()
            .find_map(|kind| {
                path.strip_prefix('/')?
                    .strip_prefix(kind)?
                    .strip_prefix('/')
            })
            .ok_or(UrlError::UnsupportedPageKind)?;
        if after_kind.is_empty() || after_kind.starts_with(['/', '?', '#']) {
            return Err(UrlError::MissingSlug {
                kind: kind_of_path(path),
            });
        }
        if !crate::rule::admits(domain, input) {
            return Err(UrlError::BadCharacters);
        }
        let url = Url::parse(input).map_err(|e| UrlError::Malformed(e.to_string()))?;
        Self::from_path(url.path(), domain)
    }

    /// Normalizes any http(s) URL of a page on the network, as pages and redirects write them.
    ///
    /// Rules, in order (example input in brackets):
    /// 1. the host is compared in lower case and must be the domain or a one-label subdomain of it
    ///    (`https://UK.LinkedIn.com/...`); the canonical host is always `www.<domain>`;
    /// 2. query and fragment are dropped (`/company/google?trk=x#about`);
    /// 3. only `/<kind>/<slug>` is kept: sub-pages and trailing slashes go (`/company/google/jobs/`);
    /// 4. the slug is percent-decoded, lower-cased and re-encoded with only RFC 3986 unreserved characters left
    ///    bare (`/company/Caf%C3%A9` and `/company/café` both become `/company/caf%C3%A9`).
    ///
    /// # Errors
    /// [`UrlError`] when the URL is not on the network, not a supported kind, or has no usable slug.
    pub fn normalize(input: &str, domain: &NetworkDomain) -> Result<Self, UrlError> {
        let len = input.chars().count();
        if len > MAX_URL_LEN {
            return Err(UrlError::TooLong { len });
        }
        let url = Url::parse(input.trim()).map_err(|e| UrlError::Malformed(e.to_string()))?;
        if !matches!(url.scheme(), "https" | "http") {
            return Err(UrlError::NotHttps);
        }
        let host = url.host_str().unwrap_or_default();
        if !host_is_on_network(host, domain) {
            return Err(UrlError::WrongHost {
                host: host.to_owned(),
                domain: domain.to_string(),
            });
        }
        Self::from_path(url.path(), domain)
    }

    /// Builds the page URL from a path such as `/company/google/about/` (e.g. a redirect's `Location` or the
    /// path a test origin serves), on the given network.
    ///
    /// # Errors
    /// [`UrlError::UnsupportedPageKind`], [`UrlError::MissingSlug`] or [`UrlError::BadSlug`].
    pub fn from_path(path: &str, domain: &NetworkDomain) -> Result<Self, UrlError> {
        Self::from_segments(path, domain, true)
    }

    /// [`PageUrl::from_path`]. With `trim`, whitespace at the page name's ends (`/company/acme%20`, a link written
    /// carelessly) is dropped, so that one page has one canonical URL and that URL normalizes to itself; a name
    /// that is only whitespace is kept as it is (the submitted-URL pattern admits it, and the page then does not
    /// exist). Without it (reading back stored text) the name is kept as written, rows written before included.
    fn from_segments(path: &str, domain: &NetworkDomain, trim: bool) -> Result<Self, UrlError> {
        let mut segments = path.trim_start_matches('/').split('/');
        let kind_segment = segments.next().unwrap_or_default();
        let kind = PageKind::from_segment(kind_segment).ok_or(UrlError::UnsupportedPageKind)?;
        let raw_slug = segments.next().unwrap_or_default();
        let slug = percent_decode_str(raw_slug)
            .decode_utf8()
            .map_err(|_| UrlError::BadSlug)?;
        if slug.chars().any(char::is_control) {
            return Err(UrlError::BadSlug);
        }
        // `.` and `..` are dot-segments: every URL parser resolves them away (`/company/.` is `/company/`), so a
        // name trimmed to one is kept whole (`/company/%20.`, which the submitted-URL pattern admits), and a new
        // name that is one names no page. Stored text is read back as written: rows written before this rule
        // (`…/company/.`) stay readable.
        let is_dot_segment = |name: &str| name == "." || name == "..";
        let trimmed = slug.trim();
        let slug = if trim && !trimmed.is_empty() && !is_dot_segment(trimmed) {
            trimmed
        } else {
            &slug
        }
        .to_lowercase();
        if slug.is_empty() || (trim && is_dot_segment(&slug)) {
            return Err(UrlError::MissingSlug {
                kind: kind.as_str(),
            });
        }
        let host = domain.canonical_host();
        let canonical = format!(
            "https://{host}/{}/{}",
            kind.as_str(),
            utf8_percent_encode(&slug, SLUG_ENCODE)
        );
        Ok(Self {
            path_start: "https://".len() + host.len(),
            canonical,
            kind,
        })
    }

    /// Reads back a URL this type wrote ([`PageUrl::as_str`]), e.g. from storage; the network domain is the
    /// host without its `www.`.
    ///
    /// # Errors
    /// [`UrlError`] when the text is not a canonical page URL.
    pub fn from_canonical(text: &str) -> Result<Self, UrlError> {
        let rest = text
            .strip_prefix("https://www.")
            .ok_or(UrlError::NotHttps)?;
        let host_end = rest.find('/').ok_or(UrlError::UnsupportedPageKind)?;
        let domain = NetworkDomain::parse(&rest[..host_end])
            .map_err(|e| UrlError::Malformed(e.to_string()))?;
        let url = Self::from_segments(&rest[host_end..], &domain, false)?;
        if url.canonical != text {
            return Err(UrlError::Malformed(format!(
                "`{text}` is not in canonical form"
            )));
        }
        Ok(url)
    }

    /// The canonical URL, e.g. `https://www.linkedin.com/company/google`.
    pub fn as_str(&self) -> &str {
        &self.canonical
    }

    /// The path, e.g. `/company/google` (percent-encoded as in [`PageUrl::as_str`]).
    pub fn path(&self) -> &str {
        &self.canonical[self.path_start..]
    }

    /// The network the page is on, e.g. `linkedin.com` for `https://www.linkedin.com/company/google` (the
    /// canonical host without its `www.`).
    pub fn domain(&self) -> NetworkDomain {
        let host = &self.canonical["https://".len()..self.path_start];
        NetworkDomain::from_canonical_host(host)
    }

    /// The page's kind.
    pub fn kind(&self) -> PageKind {
        self.kind
    }

    /// The slug, percent-encoded as in the canonical URL, e.g. `google` or `caf%C3%A9`.
    pub fn slug(&self) -> &str {
        let path = self.path();
        &path[self.kind().as_str().len() + 2..]
    }
}

impl fmt::Display for PageUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical)
    }
}

/// The host part of spec 2.1's pattern: `([a-z0-9-]+\.)?<domain>`, exactly (no port, no user info).
fn host_matches_pattern(host: &str, domain: &NetworkDomain) -> bool {
    let Some(prefix) = host.strip_suffix(domain.as_str()) else {
        return false;
    };
    prefix.is_empty()
        || prefix.strip_suffix('.').is_some_and(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
}

/// Host check for links found on pages: case-insensitive, the domain itself or one label below it.
fn host_is_on_network(host: &str, domain: &NetworkDomain) -> bool {
    host_matches_pattern(&host.to_ascii_lowercase(), domain)
}

fn kind_of_path(path: &str) -> &'static str {
    let segment = path
        .trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or_default();
    PageKind::from_segment(segment).map_or("company", PageKind::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn submitted(input: &str) -> Result<String, UrlError> {
        PageUrl::parse_submitted(input, &NetworkDomain::default()).map(|u| u.as_str().to_owned())
    }

    #[test]
    fn a_page_says_its_network() {
        for domain in ["linkedin.com", "example.co.uk", "www-test.example"] {
            let domain = NetworkDomain::parse(domain).expect("valid");
            let url = PageUrl::from_path("/school/mit/", &domain).expect("valid");
            assert_eq!(url.domain(), domain);
            assert_eq!(
                PageUrl::from_canonical(url.as_str()).map(|u| u.domain()),
                Ok(domain)
            );
        }
    }

    #[test]
    fn normalization_table() {
        let www = "https://www.linkedin.com";
        for (input, expected, why) in [
            (
                "https://www.linkedin.com/company/google",
                "/company/google",
                "already canonical",
            ),
            (
                "https://linkedin.com/company/google",
                "/company/google",
                "bare domain maps to www",
            ),
            (
                "https://uk.linkedin.com/company/audiense",
                "/company/audiense",
                "country subdomain maps to www",
            ),
            (
                "https://www.linkedin.com/company/google/",
                "/company/google",
                "trailing slash dropped",
            ),
            (
                "https://www.linkedin.com/company/google/about/",
                "/company/google",
                "sub-page dropped",
            ),
            (
                "https://www.linkedin.com/company/google/jobs?x=1",
                "/company/google",
                "sub-page and query dropped",
            ),
            (
                "https://www.linkedin.com/company/google?trk=public#x",
                "/company/google",
                "query and fragment dropped",
            ),
            (
                "https://www.linkedin.com/company/Google",
                "/company/google",
                "slug is case-insensitive",
            ),
            (
                "https://www.linkedin.com/company/caf%C3%A9",
                "/company/caf%C3%A9",
                "encoded stays encoded",
            ),
            (
                "https://www.linkedin.com/company/café",
                "/company/caf%C3%A9",
                "raw UTF-8 is encoded the same way",
            ),
            (
                "https://www.linkedin.com/company/CAF%C3%89",
                "/company/caf%C3%A9",
                "decoded before lower-casing",
            ),
            (
                "https://www.linkedin.com/company/a%2Db",
                "/company/a-b",
                "unreserved bytes are decoded",
            ),
            (
                "https://www.linkedin.com/company/1441",
                "/company/1441",
                "numeric ids are kept as slugs",
            ),
            (
                "https://www.linkedin.com/school/stanford-university",
                "/school/stanford-university",
                "schools",
            ),
            (
                "https://www.linkedin.com/showcase/google-cloud/",
                "/showcase/google-cloud",
                "showcases",
            ),
        ] {
            assert_eq!(
                submitted(input).as_deref(),
                Ok(format!("{www}{expected}").as_str()),
                "{why}: {input}"
            );
        }
    }

    #[test]
    fn rejections_follow_the_spec_pattern() {
        for (input, why) in [
            ("http://www.linkedin.com/company/google", "not https"),
            ("www.linkedin.com/company/google", "no scheme"),
            (
                "https://WWW.linkedin.com/company/google",
                "pattern allows only lower-case subdomains",
            ),
            (
                "https://a.b.linkedin.com/company/google",
                "two-label subdomain",
            ),
            (
                "https://www.linkedin.com:443/company/google",
                "port is outside the pattern",
            ),
            (
                "https://user@linkedin.com/company/google",
                "user info is outside the pattern",
            ),
            ("https://www.linkedin.co/company/google", "other domain"),
            (
                "https://evil-linkedin.com/company/google",
                "look-alike domain",
            ),
            (
                "https://www.linkedin.com/in/someone",
                "people pages are not supported",
            ),
            (
                "https://www.linkedin.com/Company/google",
                "kind segment is lower case in the pattern",
            ),
            (
                "https://www.linkedin.com/company/",
                "nothing after the kind",
            ),
            (
                "https://www.linkedin.com/company",
                "no slash after the kind",
            ),
            ("https://www.linkedin.com/company//google", "empty slug"),
            (
                "https://www.linkedin.com/company/?x=1",
                "slug missing, only a query",
            ),
            ("https://www.linkedin.com/company/.", "a dot segment"),
            (
                "https://www.linkedin.com/company/../in/x",
                "a dot segment going up",
            ),
            (
                "https://www.linkedin.com/company/google/../..",
                "dots in sub-pages",
            ),
            ("https://www.linkedin.com/company/google x", "a raw space"),
            (
                "https://www.linkedin.com/company/%2E%2E",
                "an encoded dot segment",
            ),
            (
                "https://www.linkedin.com/company/%C2%85",
                "a C1 control character",
            ),
            ("https://www.linkedin.com/company/%FF", "not UTF-8"),
            (
                "https://www.linkedin.com/company/a%0Ab",
                "control character",
            ),
        ] {
            assert!(
                submitted(input).is_err(),
                "{why}: {input} gave {:?}",
                submitted(input)
            );
        }
        let long = format!(
            "https://www.linkedin.com/company/{}",
            "a".repeat(MAX_URL_LEN)
        );
        assert!(matches!(submitted(&long), Err(UrlError::TooLong { .. })));
    }

    #[test]
    fn normalize_is_lenient_on_links_found_in_pages() {
        let domain = NetworkDomain::default();
        let url = PageUrl::normalize("https://BR.LinkedIn.com/company/Martins?trk=x", &domain);
        assert_eq!(
            url.map(|u| u.as_str().to_owned()),
            Ok("https://www.linkedin.com/company/martins".into())
        );
        assert!(PageUrl::normalize("https://example.com/company/x", &domain).is_err());
    }

    #[test]
    fn parts_and_other_domains() {
        let domain = NetworkDomain::parse("example.org").expect("valid domain");
        let url = PageUrl::parse_submitted("https://fr.example.org/school/X/", &domain)
            .expect("valid url");
        assert_eq!(url.as_str(), "https://www.example.org/school/x");
        assert_eq!(url.path(), "/school/x");
        assert_eq!(url.slug(), "x");
        assert_eq!(url.kind(), PageKind::School);
        assert!(PageUrl::parse_submitted("https://www.linkedin.com/company/x", &domain).is_err());
    }

    #[test]
    fn whitespace_at_a_names_ends_goes_so_the_canonical_url_normalizes_to_itself() {
        // Found by the fuzz target `page_url`: a submitted name ending in a no-break space was kept, and its
        // canonical URL then normalized to the name without it.
        let domain = NetworkDomain::default();
        for (input, canonical) in [
            (
                "https://linkedin.com/school/sta\u{a0}",
                "https://www.linkedin.com/school/sta",
            ),
            (
                "https://www.linkedin.com/company/sta%20",
                "https://www.linkedin.com/company/sta",
            ),
            (
                "https://www.linkedin.com/company/%E2%80%83sta",
                "https://www.linkedin.com/company/sta",
            ),
            (
                "https://www.linkedin.com/company/%20",
                "https://www.linkedin.com/company/%20",
            ),
        ] {
            let url = PageUrl::parse_submitted(input, &domain).expect(input);
            assert_eq!(url.as_str(), canonical, "{input}");
            let again = PageUrl::normalize(url.as_str(), &domain).expect(canonical);
            assert_eq!(again, url, "{canonical} normalizes to itself");
        }
    }

    #[test]
    fn a_name_trimmed_to_a_dot_segment_is_kept_whole() {
        // Found by the fuzz target `page_url`: `/company/   .` was trimmed to `/company/.`, which every URL parser
        // reads as `/company/`, so the canonical URL did not normalize to itself.
        let domain = NetworkDomain::default();
        for (input, canonical) in [
            (
                "https://www.linkedin.com/company/   .",
                "https://www.linkedin.com/company/%20%20%20.",
            ),
            (
                "https://uk.linkedin.com/company/..%20",
                "https://www.linkedin.com/company/..%20",
            ),
            (
                "https://www.linkedin.com/school/%20.",
                "https://www.linkedin.com/school/%20.",
            ),
            (
                "https://www.linkedin.com/company/.net",
                "https://www.linkedin.com/company/.net",
            ),
        ] {
            let url = PageUrl::normalize(input, &domain).expect(input);
            assert_eq!(url.as_str(), canonical, "{input}");
            let again = PageUrl::normalize(url.as_str(), &domain).expect(canonical);
            assert_eq!(again, url, "{canonical} normalizes to itself");
            assert_eq!(PageUrl::from_canonical(canonical), Ok(url));
        }
        // A submitted name the pattern admits is accepted, as the contract says.
        // (Found by Schemathesis: a no-break space after the dots.)
        let submitted =
            PageUrl::parse_submitted("https://uk.linkedin.com/company/..\u{a0}", &domain)
                .expect("admitted by the pattern");
        assert_eq!(
            submitted.as_str(),
            "https://www.linkedin.com/company/..%C2%A0"
        );
        assert_eq!(
            PageUrl::normalize(submitted.as_str(), &domain),
            Ok(submitted)
        );
        // Stored before the rule, a dot-segment name still reads back, so its rows stay readable.
        let stored = "https://www.linkedin.com/company/.";
        assert_eq!(
            PageUrl::from_canonical(stored).map(|url| url.as_str().to_owned()),
            Ok(stored.to_owned())
        );
        // A name that is a dot-segment however written names no page.
        for input in [
            "https://www.linkedin.com/company/%2E",
            "https://www.linkedin.com/company/%2e%2E/",
        ] {
            assert!(PageUrl::normalize(input, &domain).is_err(), "{input}");
        }
    }

    #[test]
    fn canonical_text_round_trips() {
        let domain = NetworkDomain::parse("example.org").expect("valid domain");
        let url = PageUrl::parse_submitted("https://example.org/company/Caf%C3%A9/", &domain)
            .expect("valid");
        assert_eq!(PageUrl::from_canonical(url.as_str()), Ok(url));
        assert!(
            PageUrl::from_canonical("https://www.example.org/company/Cafe").is_err(),
            "not canonical"
        );
        assert!(
            PageUrl::from_canonical("https://uk.example.org/company/x").is_err(),
            "not www"
        );
    }

    #[test]
    fn every_error_has_a_fix() {
        for input in [
            "ftp://x",
            "https://x.com/company/a",
            "https://www.linkedin.com/in/a",
            "https://www.linkedin.com/company/%FF",
        ] {
            let error = submitted(input).expect_err("invalid");
            assert!(
                !error.to_string().is_empty() && !error.fix().is_empty(),
                "{input}"
            );
        }
    }
}
