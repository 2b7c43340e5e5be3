//! The company request (spec 2.1) and its validation.

use std::fmt;
use std::time::Duration;

use page_url::{NetworkDomain, PageUrl};

use crate::include::{Include, Includes};
use crate::job_request::{JobBody, JobCallback, JobInput};
use crate::validation::{self, Body, ServerChecks};
use crate::{InputMetadata, InvalidRequest, Problem, RecordFields};

/// Most URLs one request may carry (spec 8).
pub const MAX_URLS: usize = 200;
/// Most copies of one page a synchronous request is answered with: the same page sent more often is answered
/// for its first copies and `unresolved` as `duplicate` for the rest, so 200 copies of one URL, charged once,
/// cannot be answered with 200 whole records (a megabyte-sized answer for one credit, or for nothing with a
/// test-mode key).
pub const MAX_COPIES_PER_PAGE: usize = 10;
/// Most URLs one bulk job may carry (`POST /v1/network/company-data/jobs`).
pub const MAX_JOB_URLS: usize = 100_000;
/// Largest body of a bulk job's request, in bytes (16 MiB: 100,000 URLs of up to ~160 bytes each).
pub const MAX_JOB_BODY_BYTES: usize = 16 * 1024 * 1024;
/// Largest `maxAgeHours` (spec 2.1).
pub const MAX_AGE_HOURS: f64 = 24.0;
/// Largest `maxAgeSeconds` (spec 2.1).
pub const MAX_AGE_SECONDS: f64 = 86_400.0;
/// Largest request body, in bytes: 100 KB counted the way HTTP tooling counts a KB (spec 7, 8). Larger is 413.
pub const MAX_BODY_BYTES: usize = 100 * 1024;
/// The body of `POST /v1/network/company-data` as a client writes it (spec 2.1; a bulk job's body is
/// `JobRequest`). The server checks a body against this schema and names every problem.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[derive(schemars::JsonSchema)]
#[schemars(rename = "CompanyRequest")]
pub struct RequestBody {
    /// Company, school or showcase page URLs, as the caller has them.
    #[schemars(
            length(min = 1, max = MAX_URLS),
            inner(length(max = page_url::MAX_URL_LEN)),
            transform = crate::schema::page_url_items,
            extend("examples" = [["https://www.linkedin.com/company/google"]])
        )]
    pub li_urls: Vec<String>,
    /// Freshness window in hours (0 to 24); absent or 0 fetches live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0.0, max = MAX_AGE_HOURS))]
    pub max_age_hours: Option<f64>,
    /// Freshness window in seconds; wins over `maxAgeHours`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0.0, max = MAX_AGE_SECONDS))]
    pub max_age_seconds: Option<f64>,
    /// When a live fetch fails for a reason that may pass (the network refused it or showed its sign-in wall,
    /// it timed out, it could not be reached), answer with the newest stored snapshot of any age instead, as
    /// `source: "stale"` billed at the stored price (after `stale-if-error`, RFC 5861). Default false. The
    /// synchronous endpoint only: a bulk job waits for a route instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub stale_if_error: Option<bool>,
    /// Field selection (an extension of the seed's request, optional): the record members each answer keeps,
    /// named as the record names them (`RecordFields::valid_names`); `original_li_url` and
    /// `final_li_url` are always kept. Absent: whole records. Billing is the same either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "fields_schema")]
    pub fields: Option<Vec<String>>,
    /// Parts of the record fetched only when asked for (an extension, optional), each one more origin request per
    /// company fetched live and no extra credits: `job_count`, the company's open jobs as the network's guest job
    /// search counts them. A stored snapshot answers only when it carries every part asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::include::include_schema")]
    pub include: Option<Vec<Include>>,
}

impl Body for RequestBody {
    const EXAMPLE: &str =
        r#"send a JSON object such as {"liUrls": ["https://www.linkedin.com/company/google"]}"#;
    validation::rules!(RequestBody);

    fn advise(keyword: &str, problem: &mut Problem) {
        if keyword == "maxItems" && problem.pointer == "/liUrls" {
            problem.fix = format!(
                "split the URLs into requests of at most {MAX_URLS}, or send them all as one bulk job \
                 (POST {}, up to {MAX_JOB_URLS})",
                crate::paths::JOBS
            );
        }
    }
}

/// `fields`' schema: an array of the record's member names (the names come from the record type).
pub(crate) fn fields_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "maxItems": crate::MAX_FIELD_NAMES,
        "items": {"type": "string", "enum": crate::RecordFields::valid_names()},
    })
}

/// A validated request: every URL is supported, the window is in range.
#[derive(Clone, Debug, PartialEq)]
pub struct CompanyRequest {
    /// The URLs in input order (duplicates kept: each position gets its own result).
    pub urls: Vec<SubmittedUrl>,
    /// The freshness window: `maxAgeSeconds` when sent, else `maxAgeHours`, else 0.
    pub window: FreshnessWindow,
    /// `staleIfError`: a page whose live fetch failed for a reason that may pass is answered from its newest
    /// stored snapshot of any age (`source: "stale"`, the stored price). Always false for a bulk job.
    pub stale_if_error: bool,
    /// `fields`: the record members each answer keeps; `None` for whole records.
    pub fields: Option<RecordFields>,
    /// `include`: the parts of the record fetched beyond the page ([`Includes::NONE`] when none was sent).
    pub include: Includes,
    /// A bulk job's `callbackUrl` and `callbackHeaders`: where its end is POSTed too. Always `None` for the
    /// synchronous endpoint, which answers in its response.
    pub callback: Option<JobCallback>,
}

/// One `liUrls` item: as sent, and normalized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubmittedUrl {
    /// Exactly as sent; echoed as `original_li_url`.
    pub original: String,
    /// The normalized page URL used for lookup, snapshots and billing.
    pub page: PageUrl,
    /// A bulk job's input sent as `{"liUrl": …, "metadata": {…}}`: the caller's object, given back beside the
    /// input's answer. Always `None` on the synchronous endpoint.
    pub metadata: Option<InputMetadata>,
}

/// How old a stored snapshot may be and still be served. Zero means "fetch live" (spec 4.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct FreshnessWindow(Duration);

impl FreshnessWindow {
    /// Live: always fetch.
    pub const LIVE: FreshnessWindow = FreshnessWindow(Duration::ZERO);
    /// The widest window a request may send: 24 hours ([`MAX_AGE_HOURS`], [`MAX_AGE_SECONDS`]).
    pub const MAX: FreshnessWindow = FreshnessWindow(Duration::from_secs(MAX_AGE_SECONDS as u64));

    /// A short list of windows for a form to offer (live, 1 hour, 6 hours and [`FreshnessWindow::MAX`]), each
    /// one the API accepts, narrowest first. Forms offer these rather than a list of their own, so they can
    /// never offer a window the API refuses.
    pub const CHOICES: [FreshnessWindow; 4] = [
        Self::LIVE,
        FreshnessWindow(Duration::from_hours(1)),
        FreshnessWindow(Duration::from_hours(6)),
        Self::MAX,
    ];

    /// A window of `seconds` (fractions allowed), `None` unless `0 <= seconds <= 86400`.
    pub fn from_seconds(seconds: f64) -> Option<Self> {
        (0.0..=MAX_AGE_SECONDS)
            .contains(&seconds)
            .then(|| Self(Duration::from_secs_f64(seconds)))
    }

    /// A window of `hours` (fractions allowed), `None` unless `0 <= hours <= 24`.
    pub fn from_hours(hours: f64) -> Option<Self> {
        (0.0..=MAX_AGE_HOURS)
            .contains(&hours)
            .then(|| Self(Duration::from_secs_f64(hours * 3600.0)))
    }

    /// True for a zero window: every page is fetched live and billed at the live price.
    pub fn is_live(self) -> bool {
        self.0.is_zero()
    }

    /// The window as a duration.
    pub fn duration(self) -> Duration {
        self.0
    }

    /// The window in seconds, as `maxAgeSeconds` carries it.
    pub fn seconds(self) -> f64 {
        self.0.as_secs_f64()
    }
}

impl fmt::Display for FreshnessWindow {
    /// `live`, or how old a stored snapshot may be: `up to 6 hours old`, `up to 90 seconds old`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seconds = self.0.as_secs();
        let (count, unit) = match seconds {
            0 if self.0.is_zero() => return f.write_str("live"),
            s if s % 3600 == 0 => (s / 3600, "hour"),
            s if s % 60 == 0 => (s / 60, "minute"),
            s => (s, "second"),
        };
        let plural = if count == 1 { "" } else { "s" };
        write!(f, "up to {count} {unit}{plural} old")
    }
}

impl FreshnessWindow {
    /// The window a body sends: `maxAgeSeconds`, which wins, else `maxAgeHours`, else `default`. The body's
    /// schema has bounded both; a value out of range (not from a checked body) reads as `default`.
    pub(crate) fn sent(seconds: Option<f64>, hours: Option<f64>, default: Self) -> Self {
        match (seconds, hours) {
            (Some(seconds), _) => Self::from_seconds(seconds),
            (None, Some(hours)) => Self::from_hours(hours),
            (None, None) => Some(default),
        }
        .unwrap_or(default)
    }
}

impl CompanyRequest {
    /// Checks a JSON request body against [`RequestBody`]'s schema (spec 2.1) and normalizes its URLs.
    ///
    /// Rules: a JSON object; only `liUrls`, `maxAgeHours`, `maxAgeSeconds`, `staleIfError`, `fields`, `include`; `liUrls`
    /// an array of 1 to [`MAX_URLS`] strings, each a page URL of `domain`'s network; `maxAgeHours` a number in
    /// 0..=24; `maxAgeSeconds` a number in 0..=86400, which wins over `maxAgeHours` when both are sent;
    /// `staleIfError` a boolean; `fields` record member names; `include` distinct [`Include`] names.
    ///
    /// # Errors
    /// [`InvalidRequest`] naming every problem found, not just the first.
    pub fn from_json(body: &[u8], domain: &NetworkDomain) -> Result<Self, InvalidRequest> {
        let mut checks = ServerChecks::new(domain, false);
        let sent: RequestBody =
            validation::read(body, &mut |mark, at, text| checks.check(mark, at, text))?;
        let urls = sent
            .li_urls
            .into_iter()
            .zip(checks.into_pages())
            .map(|(original, page)| SubmittedUrl {
                original,
                page,
                metadata: None,
            })
            .collect();
        Self::finish(
            urls,
            (sent.max_age_seconds, sent.max_age_hours),
            sent.stale_if_error.unwrap_or(false),
            sent.fields.as_deref(),
            sent.include.as_deref(),
        )
    }

    /// Checks a bulk job's body against `JobBody`'s schema: the rules of [`CompanyRequest::from_json`] with up
    /// to [`MAX_JOB_URLS`] URLs, each a string or `{"liUrl": …, "metadata": {…}}`, and without `staleIfError`
    /// (a job puts a page the network refused back and fetches it later); `callbackUrl` under the rule of a
    /// webhook URL (`http` too when `allow_http`), `callbackHeaders` only with it.
    ///
    /// # Errors
    /// [`InvalidRequest`] naming every problem found, not just the first.
    pub fn from_job_json(
        body: &[u8],
        domain: &NetworkDomain,
        allow_http: bool,
    ) -> Result<Self, InvalidRequest> {
        let mut checks = ServerChecks::new(domain, allow_http);
        let sent: JobBody =
            validation::read(body, &mut |mark, at, text| checks.check(mark, at, text))?;
        let callback = sent.callback();
        let mut urls = Vec::with_capacity(sent.li_urls.len());
        for ((index, input), page) in sent
            .li_urls
            .into_iter()
            .enumerate()
            .zip(checks.into_pages())
        {
            let (original, metadata) = match input {
                JobInput::Url(original) => (original, None),
                JobInput::WithMetadata { li_url, metadata } => {
                    let metadata = metadata
                        .map(|raw| InputMetadata::from_raw(&raw))
                        .transpose()
                        .map_err(|reason| InvalidRequest {
                            problems: vec![Problem {
                                pointer: format!("/liUrls/{index}/metadata"),
                                index: Some(index),
                                value: None,
                                reason,
                                fix: "send a flat JSON object".to_owned(),
                            }],
                        })?;
                    (li_url, metadata)
                }
            };
            urls.push(SubmittedUrl {
                original,
                page,
                metadata,
            });
        }
        Ok(Self {
            callback,
            ..Self::finish(
                urls,
                (sent.max_age_seconds, sent.max_age_hours),
                false,
                sent.fields.as_deref(),
                sent.include.as_deref(),
            )?
        })
    }

    /// The request of a body read: its window from `maxAgeSeconds` and `maxAgeHours` (live when neither is
    /// sent) and its field selection checked, as both bodies that carry them read them.
    fn finish(
        urls: Vec<SubmittedUrl>,
        (max_age_seconds, max_age_hours): (Option<f64>, Option<f64>),
        stale_if_error: bool,
        fields: Option<&[String]>,
        include: Option<&[Include]>,
    ) -> Result<Self, InvalidRequest> {
        Ok(CompanyRequest {
            urls,
            window: FreshnessWindow::sent(max_age_seconds, max_age_hours, FreshnessWindow::LIVE),
            stale_if_error,
            fields: RecordFields::checked(fields)?,
            include: Includes::of(include.unwrap_or_default()),
            callback: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn parse(body: &str) -> Result<CompanyRequest, InvalidRequest> {
        CompanyRequest::from_json(body.as_bytes(), &NetworkDomain::default())
    }

    /// Every window a form offers is one a request may send, in both units (the Try it page once offered 7 and
    /// 30 days, which the API refuses).
    #[test]
    fn offered_windows_are_accepted() {
        for window in FreshnessWindow::CHOICES {
            let by_seconds = format!(
                r#"{{"liUrls": ["https://www.linkedin.com/company/x"], "maxAgeSeconds": {}}}"#,
                window.seconds()
            );
            assert_eq!(parse(&by_seconds).map(|r| r.window), Ok(window), "{window}");
            let hours = window.seconds() / 3600.0;
            assert_eq!(FreshnessWindow::from_hours(hours), Some(window), "{window}");
        }
        assert_eq!(
            FreshnessWindow::from_seconds(MAX_AGE_SECONDS),
            Some(FreshnessWindow::MAX)
        );
        assert_eq!(FreshnessWindow::from_seconds(MAX_AGE_SECONDS + 1.0), None);
        assert!(FreshnessWindow::CHOICES.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn windows_read_as_people_say_them() {
        for (seconds, text) in [
            (0.0, "live"),
            (3600.0, "up to 1 hour old"),
            (86_400.0, "up to 24 hours old"),
            (90.0, "up to 90 seconds old"),
            (120.0, "up to 2 minutes old"),
        ] {
            let window = FreshnessWindow::from_seconds(seconds).expect("in range");
            assert_eq!(window.to_string(), text);
        }
    }

    fn pointers(body: &str) -> Vec<String> {
        parse(body)
            .expect_err("invalid")
            .problems
            .into_iter()
            .map(|p| p.pointer)
            .collect()
    }

    const URL: &str = "https://www.linkedin.com/company/google";

    #[test]
    fn windows() {
        for (body, seconds) in [
            (format!(r#"{{"liUrls":["{URL}"]}}"#), 0),
            (
                format!(r#"{{"liUrls":["{URL}"],"maxAgeHours":24}}"#),
                86_400_000,
            ),
            (
                format!(r#"{{"liUrls":["{URL}"],"maxAgeHours":0.5}}"#),
                1_800_000,
            ),
            (
                format!(r#"{{"liUrls":["{URL}"],"maxAgeSeconds":90,"maxAgeHours":24}}"#),
                90_000,
            ),
            (
                format!(r#"{{"liUrls":["{URL}"],"maxAgeSeconds":0,"maxAgeHours":24}}"#),
                0,
            ),
        ] {
            let request = parse(&body).expect("valid");
            assert_eq!(request.window.duration().as_millis(), seconds, "{body}");
        }
    }

    #[test]
    fn every_problem_is_named() {
        let body = format!(
            r#"{{"liUrls":["{URL}", "http://x", 7, "https://www.linkedin.com/in/a"],"maxAgeHours":25,"maxAgeSeconds":-1,"extra":1}}"#
        );
        assert_eq!(
            pointers(&body),
            [
                "/liUrls/1",
                "/liUrls/2",
                "/liUrls/3",
                "/maxAgeHours",
                "/maxAgeSeconds",
                "/extra"
            ]
        );
        let error = parse(&body).expect_err("invalid");
        assert_eq!(error.problems[0].index, Some(1));
        assert_eq!(
            error.problems[0].value,
            Some(Value::String("http://x".into()))
        );
        let message = error.to_string();
        assert!(
            message.starts_with("The request body has 6 problems:"),
            "{message}"
        );
        assert!(message.contains("Fix:"), "{message}");
    }

    #[test]
    fn bounds() {
        let urls = |n: usize| format!("[{}]", vec![format!("\"{URL}\""); n].join(","));
        assert!(parse(&format!(r#"{{"liUrls":{}}}"#, urls(200))).is_ok());
        assert_eq!(
            pointers(&format!(r#"{{"liUrls":{}}}"#, urls(201))),
            ["/liUrls"]
        );
        assert_eq!(pointers(r#"{"liUrls":[]}"#), ["/liUrls"]);
        assert_eq!(pointers(r#"{"maxAgeHours":1}"#), ["/liUrls"]);
        assert_eq!(
            pointers(&format!(r#"{{"liUrls":["{URL}"],"maxAgeHours":24.0001}}"#)),
            ["/maxAgeHours"]
        );
        assert_eq!(
            pointers(&format!(r#"{{"liUrls":["{URL}"],"maxAgeSeconds":86401}}"#)),
            ["/maxAgeSeconds"]
        );
        assert_eq!(
            pointers(&format!(r#"{{"liUrls":["{URL}"],"maxAgeHours":null}}"#)),
            ["/maxAgeHours"]
        );
        assert_eq!(
            pointers(&format!(r#"{{"liUrls":["{URL}"],"maxAgeHours":"1"}}"#)),
            ["/maxAgeHours"]
        );
        assert!(parse(&format!(r#"{{"liUrls":["{URL}"],"maxAgeSeconds":86400}}"#)).is_ok());
    }

    #[test]
    fn whole_body_problems() {
        for body in ["", "  ", "[1]", "null", "{", "\"x\""] {
            assert_eq!(pointers(body), [""], "{body:?}");
        }
        let invalid_utf8 =
            CompanyRequest::from_json(b"{\"liUrls\":[\"\xff\"]}", &NetworkDomain::default());
        assert!(invalid_utf8.is_err());
    }

    #[test]
    fn duplicate_members_are_refused_at_any_depth() {
        for body in [
            format!(r#"{{"liUrls":["{URL}"],"liUrls":["{URL}"]}}"#),
            format!(r#"{{"liUrls":["{URL}"],"maxAgeHours":1,"maxAgeHours":24}}"#),
        ] {
            let error = parse(&body).expect_err("duplicate");
            assert!(error.to_string().contains("appears twice"), "{error}");
        }
        // Deep nesting is refused by the JSON parser's recursion limit, not by a stack overflow.
        let deep = format!(
            r#"{{"liUrls":{}{}}}"#,
            "[".repeat(10_000),
            "]".repeat(10_000)
        );
        assert!(parse(&deep).is_err());
    }

    #[test]
    fn suggestions_for_near_misses() {
        let error =
            parse(&format!(r#"{{"liUrls":["{URL}"],"maxagehours":1}}"#)).expect_err("unknown");
        assert!(
            error.problems[0].fix.contains("`maxAgeHours`"),
            "{:?}",
            error.problems[0]
        );
        let error = parse(&format!(r#"{{"liUrl":["{URL}"]}}"#)).expect_err("unknown");
        assert!(
            error.problems[0].fix.contains("`liUrls`"),
            "{:?}",
            error.problems[0]
        );
    }

    #[test]
    fn stale_if_error_is_a_boolean_of_the_synchronous_endpoint() {
        let body = |value: &str| format!(r#"{{"liUrls":["{URL}"],"staleIfError":{value}}}"#);
        assert!(parse(&body("true")).expect("valid").stale_if_error);
        assert!(!parse(&body("false")).expect("valid").stale_if_error);
        assert!(
            !parse(&format!(r#"{{"liUrls":["{URL}"]}}"#))
                .expect("valid")
                .stale_if_error
        );
        let error = parse(&body("\"yes\"")).expect_err("a string");
        assert_eq!(error.problems[0].pointer, "/staleIfError");
        assert!(error.problems[0].fix.contains("true or false"), "{error}");
        assert!(
            parse(&format!(r#"{{"liUrls":["{URL}"],"staleiferror":true}}"#))
                .expect_err("case-sensitive")
                .problems[0]
                .fix
                .contains("`staleIfError`")
        );

        // The allowed names offered for an unknown member are the endpoint's own.
        let unknown = format!(r#"{{"liUrls":["{URL}"],"extra":1}}"#);
        assert!(
            parse(&unknown).expect_err("unknown").problems[0]
                .fix
                .contains("staleIfError")
        );
        let job =
            CompanyRequest::from_job_json(unknown.as_bytes(), &NetworkDomain::default(), false)
                .expect_err("unknown");
        assert!(!job.problems[0].fix.contains("staleIfError"), "{job}");

        // A job puts refused pages back instead, so it refuses the member whatever its value.
        for value in ["true", "false", "1"] {
            let error = CompanyRequest::from_job_json(
                body(value).as_bytes(),
                &NetworkDomain::default(),
                false,
            )
            .expect_err("not for jobs");
            assert_eq!(error.problems.len(), 1, "{error}");
            assert_eq!(error.problems[0].pointer, "/staleIfError");
            assert!(error.problems[0].reason.contains("bulk job"), "{error}");
        }
    }

    #[test]
    fn duplicates_keep_their_positions() {
        let body = format!(r#"{{"liUrls":["{URL}","https://uk.linkedin.com/company/Google/"]}}"#);
        let request = parse(&body).expect("valid");
        assert_eq!(request.urls.len(), 2);
        assert_eq!(request.urls[0].page, request.urls[1].page);
        assert_eq!(
            request.urls[1].original,
            "https://uk.linkedin.com/company/Google/"
        );
    }

    #[test]
    fn fields_name_record_members_and_an_unknown_one_lists_them() {
        let request = parse(&format!(
            r#"{{"liUrls": ["{URL}"], "fields": ["website", "company_name", "source"]}}"#
        ))
        .expect("valid");
        let fields = request.fields.expect("selection");
        assert_eq!(fields.kept(), ["company_name", "final_li_url", "website"]);
        assert_eq!(
            parse(&format!(r#"{{"liUrls": ["{URL}"]}}"#))
                .expect("valid")
                .fields,
            None
        );
        let refused = parse(&format!(
            r#"{{"liUrls": ["{URL}"], "fields": ["website", "employees", 3]}}"#
        ))
        .expect_err("unknown");
        let at: Vec<&str> = refused
            .problems
            .iter()
            .map(|p| p.pointer.as_str())
            .collect();
        assert_eq!(at, ["/fields/1", "/fields/2"]);
        assert!(
            refused.problems[0].reason.contains("`employees`"),
            "{refused}"
        );
        assert!(
            refused.problems[0].fix.contains("follower_count"),
            "{refused}"
        );
        assert_eq!(
            pointers(&format!(r#"{{"liUrls": ["{URL}"], "fields": "website"}}"#)),
            ["/fields"]
        );
    }

    #[test]
    fn a_job_input_may_carry_metadata_and_the_synchronous_endpoint_takes_strings_only() {
        let job = |body: &str| {
            CompanyRequest::from_job_json(body.as_bytes(), &NetworkDomain::default(), false)
        };
        let body = format!(
            r#"{{"liUrls": ["{URL}", {{"liUrl": "{URL}/", "metadata": {{"crmId": "0012", "rank": 3}}}}, {{"liUrl": "{URL}"}}]}}"#
        );
        let request = job(&body).expect("valid");
        let metadata: Vec<Option<&str>> = request
            .urls
            .iter()
            .map(|u| u.metadata.as_ref().map(InputMetadata::as_str))
            .collect();
        assert_eq!(metadata, [None, Some(r#"{"crmId":"0012","rank":3}"#), None]);
        assert_eq!(request.urls[1].original, format!("{URL}/"));

        let refused = job(&format!(
            r#"{{"liUrls": [{{"url": "{URL}"}}, {{"liUrl": "{URL}", "metadata": {{"a": {{"b": 1}}}}}}, {{"liUrl": "https://example.com/x"}}, {{"liUrl": "{URL}", "metadata": null}}]}}"#
        ))
        .expect_err("wrong inputs");
        let at: Vec<&str> = refused
            .problems
            .iter()
            .map(|p| p.pointer.as_str())
            .collect();
        assert_eq!(
            at,
            [
                "/liUrls/0/liUrl",
                "/liUrls/0/url",
                "/liUrls/1/metadata/a",
                "/liUrls/2/liUrl",
                "/liUrls/3/metadata"
            ]
        );
        assert_eq!(pointers(&body), ["/liUrls/1", "/liUrls/2"]);
    }
}
