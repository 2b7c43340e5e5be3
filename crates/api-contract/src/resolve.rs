//! `POST /v1/network/company-data/resolve`: website domains and company names in, company pages out, each with
//! the evidence that decided it (docs/api.md, "Resolving domains and names").
//!
//! [`ResolveRequest::from_json`] checks the body's shape and reports every problem (400); whether a domain is
//! one ([`UnresolvedQuery`] `invalid_domain`) is the resolver's answer for that query, not a 400 for the request.

use serde::{Deserialize, Serialize};

use crate::validation::{self, Body, NOT_BLANK};
use crate::{CompanyResult, FreshnessWindow, InvalidRequest, Problem, RecordFields};

/// The most queries one resolve request takes.
pub const MAX_QUERIES: usize = 200;
/// The longest `domain` taken, in characters (a URL such as `https://www.stripe.com/about` is accepted too).
pub const MAX_DOMAIN_LEN: usize = 2048;
/// The longest `name` or `location` taken, in characters.
pub const MAX_NAME_LEN: usize = 300;
/// The freshness window of a resolve request that sends none: 24 hours, so that a page stored in the last day
/// resolves with no fetch at all (a live resolution is asked for with `maxAgeHours: 0`).
pub const DEFAULT_RESOLVE_WINDOW: FreshnessWindow = FreshnessWindow::MAX;

/// The body of a resolve request: domains and names to resolve to pages. The server checks a body against this
/// schema (`ResolveRequest::from_json`) and names every problem.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[derive(schemars::JsonSchema)]
#[schemars(rename = "ResolveRequest")]
pub struct ResolveBody {
    /// 1 to 200 queries, each a website `domain` or a company `name`.
    #[schemars(length(min = 1, max = MAX_QUERIES))]
    pub queries: Vec<ResolveQuery>,
    /// Also return each resolved page's record, as `POST /v1/network/company-data` would with the same
    /// freshness window (no extra charge: the page that verified the resolution is the record).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub enrich: Option<bool>,
    /// Accept stored pages fetched up to this many hours ago (0 to 24; default 24 for a resolve request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0.0, max = crate::MAX_AGE_HOURS))]
    pub max_age_hours: Option<f64>,
    /// The same window in seconds (0 to 86400); wins over `maxAgeHours`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0.0, max = crate::MAX_AGE_SECONDS))]
    pub max_age_seconds: Option<f64>,
    /// With `enrich`: the record members each returned record keeps, as `fields` on
    /// `POST /v1/network/company-data` (same names, same rule; the price is the same).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::request::fields_schema")]
    pub fields: Option<Vec<String>>,
    /// With `enrich`: parts of the record fetched beyond the page, as on `POST /v1/network/company-data`
    /// (`job_count`; no extra charge).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::include::include_schema")]
    pub include: Option<Vec<crate::Include>>,
}

/// One query: a website `domain`, or a company `name` with optional `location` and `domain` hints. Echoed back
/// as sent in its result or unresolved entry.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[derive(schemars::JsonSchema)]
#[schemars(extend(
        "anyOf" = [{"required": ["domain"]}, {"required": ["name"]}],
        "dependentRequired" = {"location": ["name"]}
    ))]
pub struct ResolveQuery {
    /// A website domain (`stripe.com`) or URL (`https://www.stripe.com/about`): its registrable domain is
    /// resolved. With `name`, a hint: the page's website must be on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1, max = MAX_DOMAIN_LEN), pattern(NOT_BLANK))]
    pub domain: Option<String>,
    /// A company name (`Stripe`, `Stripe, Inc.`): compared without case, accents, punctuation and legal-form
    /// suffixes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1, max = MAX_NAME_LEN), pattern(NOT_BLANK))]
    pub name: Option<String>,
    /// With `name`: where the company is (a country such as `US` or `Germany`, a city, a region), compared
    /// with the page's headquarters and locations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1, max = MAX_NAME_LEN), pattern(NOT_BLANK))]
    pub location: Option<String>,
}

/// A valid resolve request.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolveRequest {
    /// The queries, in order.
    pub queries: Vec<ResolveQuery>,
    /// Whether each resolved page's record is returned too.
    pub enrich: bool,
    /// The freshness window pages are verified with ([`DEFAULT_RESOLVE_WINDOW`] when none was sent).
    pub window: FreshnessWindow,
    /// `fields`: the record members each returned record keeps; `None` for whole records.
    pub fields: Option<RecordFields>,
    /// `include`: the parts of each returned record fetched beyond the page (with `enrich`).
    pub include: crate::Includes,
}

impl Body for ResolveBody {
    const EXAMPLE: &str = r#"send a JSON object such as {"queries": [{"domain": "stripe.com"}, {"name": "Stripe", "location": "US"}]}"#;
    validation::rules!(ResolveBody);

    fn advise(keyword: &str, problem: &mut Problem) {
        // Not the schema's `examples`: a conformance tool sends those for real, and a live resolution of a real
        // domain is no test of the contract.
        if keyword == "anyOf" && problem.pointer.starts_with("/queries/") {
            r#"send {"domain": "stripe.com"} or {"name": "Stripe"}"#.clone_into(&mut problem.fix);
        }
        if matches!(keyword, "minItems" | "maxItems") && problem.pointer == "/queries" {
            problem.fix = format!(
                "send 1 to {MAX_QUERIES} queries per request; for longer lists use `company-data enrich \
                 --domain-column` or `--name-column`"
            );
        }
    }
}

impl ResolveRequest {
    /// Checks a resolve body against [`ResolveBody`]'s schema: a JSON object with `queries` (1 to
    /// [`MAX_QUERIES`] objects, each with a non-blank `domain` or `name` string, `location` only beside `name`,
    /// no other member), and optionally `enrich` (boolean), `maxAgeHours` (0 to 24), `maxAgeSeconds` (0 to
    /// 86400, winning over `maxAgeHours`), `fields` (record member names, as on the company-data request) and
    /// `include` (distinct `Include` names).
    /// Each query's strings are trimmed.
    ///
    /// # Errors
    /// [`InvalidRequest`] naming every problem found.
    pub fn from_json(body: &[u8]) -> Result<Self, InvalidRequest> {
        let sent: ResolveBody = validation::read(body, &mut |_, _, _| Ok(()))?;
        let trim = |text: Option<String>| text.map(|text| text.trim().to_owned());
        Ok(Self {
            queries: sent
                .queries
                .into_iter()
                .map(|query| ResolveQuery {
                    domain: trim(query.domain),
                    name: trim(query.name),
                    location: trim(query.location),
                })
                .collect(),
            enrich: sent.enrich.unwrap_or(false),
            window: FreshnessWindow::sent(
                sent.max_age_seconds,
                sent.max_age_hours,
                DEFAULT_RESOLVE_WINDOW,
            ),
            fields: RecordFields::checked(sent.fields.as_deref())?,
            include: crate::Includes::of(sent.include.as_deref().unwrap_or_default()),
        })
    }
}

/// The answer to a resolve request: one result per resolved query and one entry per query that was not, both
/// in query order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ResolveResponse {
    /// The queries resolved to a page at or above the confidence threshold.
    pub results: Vec<Resolution>,
    /// The queries that were not, each with why.
    pub unresolved: Vec<UnresolvedQuery>,
}

/// A query resolved to a page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Resolution {
    /// The query as sent.
    pub query: ResolveQuery,
    /// The page, normalized as every page URL the service returns (`https://www.linkedin.com/company/stripe`).
    pub li_url: String,
    /// How sure the resolver is, 0 to 1 (docs/api.md lists what each method and check is worth).
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// How the page was found.
    pub method: ResolveMethod,
    /// Each step that found, checked or rejected a page, in the order taken.
    pub evidence: Vec<Evidence>,
    /// Other pages that fit too (a company's showcase pages, say), best first.
    #[serde(default)]
    pub candidates: Vec<Candidate>,
    /// Whether the page was verified against a live fetch or a stored snapshot (what the resolution cost).
    pub source: company_model::RecordSource,
    /// The page's record, with `"enrich": true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub record: Option<CompanyResult>,
}

/// Another page that fits a query.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Candidate {
    /// The page.
    pub li_url: String,
    /// How sure the resolver is that it is the query's page, 0 to 1.
    #[schemars(range(min = 0.0, max = 1.0))]
    pub confidence: f64,
    /// How it was found.
    pub method: ResolveMethod,
}

/// How a page was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(schemars::JsonSchema)]
pub enum ResolveMethod {
    /// A stored page whose record's `domain` is the queried one (no fetch).
    StoredDomain,
    /// A link to the page in the markup of the company's own site (`<a href>`).
    SiteLink,
    /// The page among the JSON-LD `sameAs` of the company's own site.
    SiteSameAs,
    /// A `rel="me"` link to the page on the company's own site.
    SiteRelMe,
    /// A page name guessed from the domain's label (`stripe.com` → `/company/stripe`).
    DomainSlug,
    /// A stored page whose name is the queried one.
    StoredName,
    /// A page name guessed from the queried name (`Acme Widgets GmbH` → `/company/acme-widgets`).
    NameSlug,
}

impl ResolveMethod {
    /// The method as serialized, e.g. `site_link`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::StoredDomain => "stored_domain",
            Self::SiteLink => "site_link",
            Self::SiteSameAs => "site_same_as",
            Self::SiteRelMe => "site_rel_me",
            Self::DomainSlug => "domain_slug",
            Self::StoredName => "stored_name",
            Self::NameSlug => "name_slug",
        }
    }
}

/// One step of a resolution: what was looked at and what it showed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evidence {
    /// What kind of step: `stored` (the stored pages), `site` (the company's home page and its redirects),
    /// `link` (a page found on the site or guessed), `page` (a page that could not be checked: no such page, or
    /// its fetch failed), `website` (a page's website compared with the domain), `name` (a page's name, and its
    /// addresses with a `location` hint, compared with the query's), `remembered` (an earlier resolution).
    pub step: String,
    /// The URL the step looked at, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The value it found (a link's `href`, a page's website, a name), when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// What it showed, in English.
    pub note: String,
}

/// A query that was not resolved.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UnresolvedQuery {
    /// The query as sent.
    pub query: ResolveQuery,
    /// Why.
    pub error: UnresolvedReason,
    /// What happened and what to do, in English.
    pub message: String,
    /// The pages that fit but not well enough, or too many of them (`ambiguous`), best first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Candidate>,
    /// Each step taken, as in a result.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    /// For `blocked`: seconds until the network may be asked again (also the answer's `Retry-After`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1))]
    pub retry_after_seconds: Option<u64>,
}

/// Why a query was not resolved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(schemars::JsonSchema)]
pub enum UnresolvedReason {
    /// The `domain` is not a website domain (an IP address, a bare suffix such as `co.uk`, no dot).
    InvalidDomain,
    /// No page was found, or none whose website or name matches.
    NoPageFound,
    /// Several pages fit equally well; they are listed as `candidates`.
    Ambiguous,
    /// The company's site could not be fetched and no other step found its page.
    SiteUnreachable,
    /// The network refused the candidate pages' fetches; retry after `retry_after_seconds`.
    Blocked,
    /// The candidate pages could not be fetched within the live time-out.
    TimedOut,
}

impl UnresolvedReason {
    /// Every code, for documentation.
    pub const ALL: [UnresolvedReason; 6] = [
        Self::InvalidDomain,
        Self::NoPageFound,
        Self::Ambiguous,
        Self::SiteUnreachable,
        Self::Blocked,
        Self::TimedOut,
    ];

    /// The code as serialized, e.g. `no_page_found`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidDomain => "invalid_domain",
            Self::NoPageFound => "no_page_found",
            Self::Ambiguous => "ambiguous",
            Self::SiteUnreachable => "site_unreachable",
            Self::Blocked => "blocked",
            Self::TimedOut => "timed_out",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_valid_body_reads_with_the_day_long_default_window() {
        let request = ResolveRequest::from_json(
            br#"{"queries": [{"domain": "https://www.stripe.com/about"}, {"name": " Stripe ", "location": "US"}]}"#,
        )
        .expect("valid");
        assert_eq!(request.queries.len(), 2);
        assert_eq!(request.queries[1].name.as_deref(), Some("Stripe"));
        assert_eq!(request.window, DEFAULT_RESOLVE_WINDOW);
        assert!(!request.enrich);
        assert_eq!(request.fields, None);
        let selected = ResolveRequest::from_json(
            br#"{"queries": [{"domain": "stripe.com"}], "enrich": true, "fields": ["website"]}"#,
        )
        .expect("valid");
        assert_eq!(
            selected.fields.as_ref().map(RecordFields::kept),
            Some(&["final_li_url", "website"][..])
        );
        let unknown = ResolveRequest::from_json(
            br#"{"queries": [{"domain": "stripe.com"}], "fields": ["websites"]}"#,
        )
        .expect_err("unknown member");
        assert_eq!(unknown.problems[0].pointer, "/fields/0");
        let live = ResolveRequest::from_json(
            br#"{"queries": [{"domain": "a.com"}], "maxAgeHours": 0, "enrich": true}"#,
        )
        .expect("valid");
        assert!(live.window.is_live() && live.enrich);
    }

    #[test]
    fn every_problem_is_named_with_its_pointer() {
        let error = ResolveRequest::from_json(
            br#"{"queries": [{}, {"domain": 3}, {"domain": "a.com", "location": "US"}, {"name": "x", "city": "y"}, 7], "enrich": "yes", "extra": 1}"#,
        )
        .expect_err("invalid");
        let pointers: Vec<&str> = error.problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/queries/0",
                "/queries/1/domain",
                "/queries/2/location",
                "/queries/3/city",
                "/queries/4",
                "/enrich",
                "/extra"
            ]
        );
        let too_many = format!(
            r#"{{"queries": [{}]}}"#,
            vec![r#"{"domain": "a.com"}"#; MAX_QUERIES + 1].join(",")
        );
        let error = ResolveRequest::from_json(too_many.as_bytes()).expect_err("too many");
        assert!(error.problems[0].reason.contains("201 items"));
        assert!(ResolveRequest::from_json(br#"{"queries": []}"#).is_err());
    }
}
