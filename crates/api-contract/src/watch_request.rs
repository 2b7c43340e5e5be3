//! `POST /v1/network/company-data/watches`: the body's rules, with every problem named.

use crate::validation::{self, Body, ServerChecks};
#[cfg(doc)]
use crate::webhook_url_pattern;
use crate::{InvalidRequest, MAX_URLS, MAX_WEBHOOK_URL_LEN, Problem, SubmittedUrl};
use company_model::{CHANGE_FIELDS, WATCH_FIELDS};
use page_url::NetworkDomain;

/// The fewest and the most hours between a watch's refreshes (`everyHours`).
pub const WATCH_EVERY_HOURS: std::ops::RangeInclusive<u32> = 24..=720;
/// A validated watch request.
#[derive(Clone, Debug, PartialEq)]
pub struct WatchRequest {
    /// The pages to watch, in input order; duplicates after normalization are dropped (one watch per page).
    pub urls: Vec<SubmittedUrl>,
    /// Hours between refreshes, within [`WATCH_EVERY_HOURS`].
    pub every_hours: u32,
    /// Where change events are POSTed: an absolute `https` URL (or `http` where allowed).
    pub webhook_url: String,
    /// The record members whose change is an event: as sent, else [`CHANGE_FIELDS`].
    pub fields: Vec<String>,
    /// The parts of the record each refresh fetches beyond the page: `include` as sent, and `job_count` when
    /// `fields` names it (a watch cannot follow a count it does not fetch).
    pub include: crate::Includes,
}

impl WatchRequest {
    /// Checks a body `{"liUrls": [...], "everyHours": 24..720, "webhookUrl": "https://…", "fields": [...]}`
    /// against [`WatchBody`]'s schema: 1 to [`MAX_URLS`] page URLs as the company-data endpoint takes them;
    /// `everyHours` a whole number in [`WATCH_EVERY_HOURS`]; `webhookUrl` an absolute `https` URL with a host
    /// and no user name or password, at most [`MAX_WEBHOOK_URL_LEN`] bytes (`http` too when `allow_http`, for
    /// local receivers); `fields`, when sent, a non-empty list of distinct [`WATCH_FIELDS`]; `include` distinct
    /// `Include` names.
    ///
    /// # Errors
    /// [`InvalidRequest`] naming every problem found.
    pub fn from_json(
        body: &[u8],
        domain: &NetworkDomain,
        allow_http: bool,
    ) -> Result<Self, InvalidRequest> {
        let mut checks = ServerChecks::new(domain, allow_http);
        let sent: WatchBody =
            validation::read(body, &mut |mark, at, text| checks.check(mark, at, text))?;
        let mut seen = std::collections::HashSet::new();
        let urls = sent
            .li_urls
            .into_iter()
            .zip(checks.into_pages())
            .filter(|(_, page)| seen.insert(page.clone()))
            .map(|(original, page)| SubmittedUrl {
                original,
                page,
                metadata: None,
            })
            .collect();
        Ok(Self {
            urls,
            every_hours: sent.every_hours,
            webhook_url: sent
                .webhook_url
                .strip_suffix('\n')
                .unwrap_or(&sent.webhook_url)
                .to_owned(),
            include: crate::Includes::of(
                &sent
                    .include
                    .unwrap_or_default()
                    .into_iter()
                    .chain(
                        sent.fields
                            .iter()
                            .flatten()
                            .filter_map(|field| crate::Include::from_name(field)),
                    )
                    .collect::<Vec<_>>(),
            ),
            fields: sent
                .fields
                .unwrap_or_else(|| CHANGE_FIELDS.iter().map(|f| (*f).to_owned()).collect()),
        })
    }
}

/// For `#[schemars(transform = …)]` on a watch's `fields`: each item one of [`WATCH_FIELDS`], each once.
fn watch_fields_schema(schema: &mut schemars::Schema) {
    schema.insert("uniqueItems".to_owned(), serde_json::Value::Bool(true));
    schema.insert(
        "items".to_owned(),
        serde_json::json!({"enum": WATCH_FIELDS}),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(body: &str, allow_http: bool) -> Result<WatchRequest, InvalidRequest> {
        WatchRequest::from_json(body.as_bytes(), &NetworkDomain::default(), allow_http)
    }

    #[test]
    fn a_watch_names_pages_a_period_and_an_https_receiver() {
        let request = parse(
            r#"{"liUrls": ["https://www.linkedin.com/company/google", "https://uk.linkedin.com/company/google/"],
                "everyHours": 24, "webhookUrl": "https://example.com/hooks"}"#,
            false,
        )
        .expect("valid");
        assert_eq!(request.urls.len(), 1, "one watch per page");
        assert_eq!(request.fields.len(), CHANGE_FIELDS.len());
        let with_fields = parse(
            r#"{"liUrls": ["https://www.linkedin.com/company/google"],
                "webhookUrl": "http://127.0.0.1:9/h", "fields": ["website", "follower_count"], "everyHours": 720.0}"#,
            true,
        )
        .expect("valid where http is allowed");
        assert_eq!(with_fields.fields, ["website", "follower_count"]);
    }

    #[test]
    fn a_watch_fetches_the_parts_it_includes_or_follows() {
        let body = |extra: &str| {
            format!(
                r#"{{"liUrls": ["https://www.linkedin.com/company/google"], "everyHours": 24,
                    "webhookUrl": "https://example.com/h"{extra}}}"#
            )
        };
        let jobs = crate::Includes::of(&[crate::Include::JobCount]);
        assert!(parse(&body(""), false).expect("valid").include.is_empty());
        for extra in [
            r#", "include": ["job_count"]"#,
            r#", "fields": ["job_count", "website"]"#,
            r#", "fields": ["job_count"], "include": ["job_count"]"#,
        ] {
            assert_eq!(
                parse(&body(extra), false).expect("valid").include,
                jobs,
                "{extra}"
            );
        }
        let refused = parse(&body(r#", "include": ["jobs"]"#), false).expect_err("unknown");
        assert_eq!(refused.problems[0].pointer, "/include/0");
    }

    #[test]
    fn every_problem_is_named_with_its_fix() {
        let invalid = parse(
            r#"{"liUrls": ["https://www.linkedin.com/in/someone"], "everyHours": 1,
                "webhookUrl": "http://example.com/h", "fields": ["website", "website", "posts"], "x": 1}"#,
            false,
        )
        .expect_err("invalid");
        let pointers: Vec<&str> = invalid
            .problems
            .iter()
            .map(|p| p.pointer.as_str())
            .collect();
        assert_eq!(
            pointers,
            [
                "/liUrls/0",
                "/everyHours",
                "/webhookUrl",
                "/fields/1",
                "/fields/2",
                "/x"
            ]
        );
        assert!(invalid.problems[2].reason.contains("https only"));
        for body in [
            r#"{"liUrls": ["https://www.linkedin.com/company/a"], "everyHours": 24, "webhookUrl": "https://u:p@example.com/"}"#,
            r#"{"liUrls": ["https://www.linkedin.com/company/a"], "everyHours": 24.5, "webhookUrl": "https://example.com/"}"#,
            r#"{"liUrls": ["https://www.linkedin.com/company/a"], "everyHours": "24", "webhookUrl": "https://example.com/"}"#,
            r#"{"liUrls": ["https://www.linkedin.com/company/a"], "everyHours": 24, "webhookUrl": "/relative"}"#,
            r#"{"liUrls": ["https://www.linkedin.com/company/a"], "everyHours": 24, "webhookUrl": "https://example.com/", "fields": []}"#,
            r#"{"liUrls": ["https://www.linkedin.com/company/a"], "webhookUrl": "https://example.com/"}"#,
        ] {
            assert!(parse(body, true).is_err(), "{body}");
        }
    }
}

/// The body of `POST /v1/network/company-data/watches` as a client writes it: the pages to watch, how often and
/// where change events go. The server checks a body against this schema (`WatchRequest::from_json`) and names
/// every problem.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[derive(schemars::JsonSchema)]
#[schemars(rename = "WatchRequest")]
pub struct WatchBody {
    /// The pages to watch: company, school or showcase page URLs.
    #[schemars(
            length(min = 1, max = MAX_URLS),
            inner(length(max = page_url::MAX_URL_LEN)),
            transform = crate::schema::page_url_items,
            extend("examples" = [["https://www.linkedin.com/company/google"]])
        )]
    pub li_urls: Vec<String>,
    /// Hours between refreshes, a whole number (`WATCH_EVERY_HOURS`: 24 to 720).
    #[serde(deserialize_with = "crate::validation::whole_number")]
    #[schemars(range(min = *WATCH_EVERY_HOURS.start(), max = *WATCH_EVERY_HOURS.end()))]
    pub every_hours: u32,
    /// Where change events are POSTed: an https URL on a public address, without user name or password.
    #[schemars(
        length(max = MAX_WEBHOOK_URL_LEN),
        transform = crate::schema::webhook_url,
        extend("examples" = ["https://example.com/hooks/company"])
    )]
    pub webhook_url: String,
    /// The record members whose change is an event; default: all but the counts (`CHANGE_FIELDS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        with = "Vec<String>",
        length(min = 1, max = WATCH_FIELDS.len()),
        transform = watch_fields_schema
    )]
    pub fields: Option<Vec<String>>,
    /// Parts of the record each refresh fetches beyond the page, as on `POST /v1/network/company-data`
    /// (`job_count`: its history as a time series; implied when `fields` names `job_count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::include::include_schema")]
    pub include: Option<Vec<crate::Include>>,
}

impl Body for WatchBody {
    const EXAMPLE: &str = r#"send a JSON object such as {"liUrls": ["https://www.linkedin.com/company/google"], "everyHours": 24, "webhookUrl": "https://example.com/hooks/company"}"#;
    validation::rules!(WatchBody);

    fn advise(keyword: &str, problem: &mut Problem) {
        if keyword == "maxItems" && problem.pointer == "/liUrls" {
            problem.fix = format!("split the URLs into requests of at most {MAX_URLS}");
        }
    }
}

/// Whether a watch still runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(schemars::JsonSchema)]
pub enum WatchStatus {
    /// Refreshed on its schedule.
    Active,
    /// Stopped after its deliveries failed for the retry window (see `disabled_reason`).
    Disabled,
}

/// A watch as the API shows it (`GET /v1/network/company-data/watches/{id}`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Watch")]
pub struct WatchInfo {
    /// The watch's id (a whole number above 0, as a string).
    pub id: String,
    /// The page, normalized.
    pub li_url: String,
    /// Hours between refreshes.
    #[serde(deserialize_with = "crate::validation::whole_number")]
    #[schemars(range(min = *WATCH_EVERY_HOURS.start(), max = *WATCH_EVERY_HOURS.end()))]
    pub every_hours: u32,
    /// Where change events go.
    pub webhook_url: String,
    /// The record members whose change is an event.
    pub fields: Vec<String>,
    /// The parts of the record each refresh fetches beyond the page; absent for none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<crate::Include>,
    /// Whether it still runs.
    pub status: WatchStatus,
    /// When it was created.
    pub created_at: jiff::Timestamp,
    /// When its page is refreshed next.
    pub next_check_at: jiff::Timestamp,
    /// When its page was last refreshed.
    pub last_checked_at: Option<jiff::Timestamp>,
    /// Why the last refresh got no record, e.g. `insufficient_credits`, `not_found`, `blocked`.
    pub last_check_error: Option<String>,
    /// When the page last changed.
    pub last_change_at: Option<jiff::Timestamp>,
    /// The last delivery attempt of an event.
    pub last_delivery: Option<DeliveryInfo>,
    /// Why it was disabled.
    pub disabled_reason: Option<String>,
}

/// A page of the account's watches, as `GET /v1/network/company-data/watches` answers it: oldest first.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct WatchList {
    /// Up to the page's `limit` watches, oldest first.
    #[schemars(length(max = crate::paging::MOST_WATCHES_PER_PAGE))]
    pub watches: Vec<WatchInfo>,
    /// The next page's path (with its `after` and `limit`), or null on the last page.
    pub next: Option<String>,
}

/// The watches `POST /v1/network/company-data/watches` made: one per distinct page of the request, in its order.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct CreatedWatches {
    /// One watch per distinct page.
    #[schemars(length(max = MAX_URLS))]
    pub watches: Vec<WatchInfo>,
}

/// One delivery attempt of a webhook event.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct DeliveryInfo {
    /// When.
    pub at: jiff::Timestamp,
    /// The receiver's HTTP status, if it answered.
    pub status: Option<u16>,
    /// Null when delivered (2xx).
    pub error: Option<String>,
}

/// The kind of a webhook event.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub enum WebhookEventType {
    /// A watched page changed.
    #[serde(rename = "company.changed")]
    CompanyChanged,
}

/// The body POSTed to a watch's `webhookUrl` when its page changed. The `id` is the same on every delivery
/// attempt: drop duplicates by it.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
pub struct WebhookEvent {
    /// The event's id, `evt_<watch>_<claim>`.
    pub id: String,
    /// `company.changed`.
    #[serde(rename = "type")]
    pub kind: WebhookEventType,
    /// When the change was seen.
    pub created_at: jiff::Timestamp,
    /// The watch's id.
    pub watch_id: String,
    /// The page the record belongs to (where the URL resolved).
    pub final_li_url: String,
    /// What changed, one entry per member.
    #[schemars(length(min = 1))]
    pub changes: Vec<company_model::FieldChange>,
    /// The record fetched, as in `CompanyResult` without its per-request members (`original_li_url`, `source`,
    /// `fetched_at`), copied as stored.
    #[schemars(with = "company_model::CompanyRecord")]
    pub record: Box<serde_json::value::RawValue>,
}
