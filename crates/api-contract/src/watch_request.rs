//! `POST /v1/network/company-data/watches`: the body's rules, with every problem named.

use serde_json::{Map, Value};

use crate::problems::{echo, escape_pointer, json_object, type_name};
use crate::request::validate_urls;
use crate::{InvalidRequest, MAX_URLS, Problem, SubmittedUrl};
use company_model::{CHANGE_FIELDS, WATCH_FIELDS};
use page_url::NetworkDomain;

/// The fewest and the most hours between a watch's refreshes (`everyHours`).
pub const WATCH_EVERY_HOURS: std::ops::RangeInclusive<u32> = 24..=720;
/// The longest `webhookUrl`, in bytes.
pub const MAX_WEBHOOK_URL_LEN: usize = 2048;

/// Whether a webhook may be sent over `scheme`: `https`, or `http` too where `allow_http` (local receivers).
/// Checked when a watch is made and again at each delivery (the server's setting may have changed since).
pub fn webhook_scheme_allowed(scheme: &str, allow_http: bool) -> bool {
    scheme == "https" || (allow_http && scheme == "http")
}

/// The rule a watch's `webhookUrl` follows, one regular expression: the OpenAPI document's `pattern` and what
/// [`WatchRequest::from_json`] accepts (with the length bound, [`MAX_WEBHOOK_URL_LEN`] characters). `https`
/// (and `http` when `allow_http`), a host name of letters, digits and single hyphens whose last label starts
/// with a letter, or a dotted IPv4 address; an optional port up to 65535; then a path of RFC 3986 path
/// characters, a query and a fragment without spaces or control characters. No user name or password.
pub fn webhook_url_pattern(allow_http: bool) -> String {
    let scheme = if allow_http { "https?" } else { "https" };
    let label = "[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*";
    let last = "[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*";
    let octet = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
    let port =
        "(?::(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?";
    format!(
        "^{scheme}://(?:(?:{label}\\.)*{last}|{octet}(?:\\.{octet}){{3}}){port}\
         (?:/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*)?(?:\\?[^#\\x00-\\x20\\x7F]*)?(?:#[^\\x00-\\x20\\x7F]*)?$"
    )
}

/// Whether `text` follows [`webhook_url_pattern`]; the compiled patterns are kept.
fn webhook_url_admitted(text: &str, allow_http: bool) -> bool {
    static PATTERNS: std::sync::LazyLock<[Option<regex::Regex>; 2]> =
        std::sync::LazyLock::new(|| {
            [false, true].map(|allow_http| regex::Regex::new(&webhook_url_pattern(allow_http)).ok())
        });
    PATTERNS[usize::from(allow_http)]
        .as_ref()
        .is_some_and(|pattern| pattern.is_match(text.strip_suffix('\n').unwrap_or(text)))
}

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
}

impl WatchRequest {
    /// Validates a body `{"liUrls": [...], "everyHours": 24..720, "webhookUrl": "https://…", "fields": [...]}`:
    /// 1 to [`MAX_URLS`] page URLs as the company-data endpoint takes them; `everyHours` a whole number in
    /// [`WATCH_EVERY_HOURS`]; `webhookUrl` an absolute `https` URL with a host and no user name or password, at
    /// most [`MAX_WEBHOOK_URL_LEN`] bytes (`http` too when `allow_http`, for local receivers); `fields`, when
    /// sent, a non-empty list of distinct [`WATCH_FIELDS`].
    ///
    /// # Errors
    /// [`InvalidRequest`] naming every problem found.
    pub fn from_json(
        body: &[u8],
        domain: &NetworkDomain,
        allow_http: bool,
    ) -> Result<Self, InvalidRequest> {
        let object = json_object(
            body,
            r#"send a JSON object such as {"liUrls": ["https://www.linkedin.com/company/google"], "everyHours": 24, "webhookUrl": "https://example.com/hooks/company"}"#,
        )?;
        let mut problems = Vec::new();
        for key in object.keys() {
            if !matches!(
                key.as_str(),
                "liUrls" | "everyHours" | "webhookUrl" | "fields"
            ) {
                problems.push(Problem {
                    pointer: format!("/{}", escape_pointer(key)),
                    index: None,
                    value: None,
                    reason: format!("unknown property `{key}`"),
                    fix: "send only `liUrls`, `everyHours`, `webhookUrl` and `fields`".to_owned(),
                });
            }
        }
        let urls = validate_urls(
            &object,
            domain,
            (
                MAX_URLS,
                &format!("split the URLs into requests of at most {MAX_URLS}"),
            ),
            None,
            &mut problems,
        );
        let every_hours = every_hours(&object, &mut problems);
        let webhook_url = webhook_url(
            &object,
            "webhookUrl",
            "the https URL that receives change events",
            allow_http,
            &mut problems,
        );
        let fields = fields(&object, &mut problems);
        if !problems.is_empty() {
            return Err(InvalidRequest { problems });
        }
        let mut seen = std::collections::HashSet::new();
        Ok(Self {
            urls: urls
                .into_iter()
                .filter(|u| seen.insert(u.page.clone()))
                .collect(),
            every_hours: every_hours.unwrap_or(*WATCH_EVERY_HOURS.start()),
            webhook_url: webhook_url.unwrap_or_default(),
            fields,
        })
    }
}

pub(crate) fn problem(
    pointer: &str,
    value: Option<&Value>,
    reason: String,
    fix: String,
) -> Problem {
    Problem {
        pointer: pointer.to_owned(),
        index: None,
        value: value.map(echo),
        reason,
        fix,
    }
}

fn every_hours(object: &Map<String, Value>, problems: &mut Vec<Problem>) -> Option<u32> {
    let (low, high) = (*WATCH_EVERY_HOURS.start(), *WATCH_EVERY_HOURS.end());
    let fix = format!("send `everyHours`: a whole number of hours from {low} to {high}");
    let Some(value) = object.get("everyHours") else {
        problems.push(problem(
            "/everyHours",
            None,
            "the required property `everyHours` is missing".into(),
            fix,
        ));
        return None;
    };
    // JSON Schema's integers include `24.0`: a number with no fractional part.
    let whole = value
        .as_f64()
        .filter(|n| n.fract() == 0.0 && *n >= 0.0 && *n <= f64::from(u32::MAX))
        .map(|n| n as u32);
    match whole {
        Some(hours) if WATCH_EVERY_HOURS.contains(&hours) => Some(hours),
        _ => {
            let reason = if value.is_number() {
                format!("`everyHours` is not a whole number from {low} to {high}")
            } else {
                format!("`everyHours` is a {}, not a number", type_name(value))
            };
            problems.push(problem("/everyHours", Some(value), reason, fix));
            None
        }
    }
}

/// The webhook URL in `object`'s member `member` (`webhookUrl` of a watch, `url` of an endpoint), which
/// receives `what`; a problem for each way it breaks [`webhook_url_pattern`]'s rule.
pub(crate) fn webhook_url(
    object: &Map<String, Value>,
    member: &str,
    what: &str,
    allow_http: bool,
    problems: &mut Vec<Problem>,
) -> Option<String> {
    let fix = format!("send `{member}`: {what}, e.g. \"https://example.com/hooks/company\"");
    let pointer = format!("/{member}");
    let Some(value) = object.get(member) else {
        problems.push(problem(
            &pointer,
            None,
            format!("the required property `{member}` is missing"),
            fix,
        ));
        return None;
    };
    let Value::String(text) = value else {
        problems.push(problem(
            &pointer,
            Some(value),
            format!("`{member}` is a {}, not a string", type_name(value)),
            fix,
        ));
        return None;
    };
    let length = text.chars().count();
    let reason = match url::Url::parse(text) {
        _ if length > MAX_WEBHOOK_URL_LEN => format!(
            "`{member}` is {length} characters long, over the limit of {MAX_WEBHOOK_URL_LEN}"
        ),
        Err(error) => format!("`{member}` is not an absolute URL ({error})"),
        Ok(url) if !webhook_scheme_allowed(url.scheme(), allow_http) => {
            format!(
                "`{member}` uses `{}`; webhooks are sent over https only",
                url.scheme()
            )
        }
        Ok(url) if url.host_str().is_none_or(str::is_empty) => format!("`{member}` has no host"),
        Ok(url) if !url.username().is_empty() || url.password().is_some() => format!(
            "`{member}` carries a user name or password; put credentials in the path or verify the \
             signature instead"
        ),
        Ok(_) if !webhook_url_admitted(text, allow_http) => format!(
            "`{member}` has characters a webhook URL may not (spaces or control characters, a host that is \
             not a name or an IPv4 address, a port above 65535)"
        ),
        Ok(_) => return Some(text.strip_suffix('\n').unwrap_or(text).to_owned()),
    };
    problems.push(problem(&pointer, Some(value), reason, fix));
    None
}

fn fields(object: &Map<String, Value>, problems: &mut Vec<Problem>) -> Vec<String> {
    let default = || CHANGE_FIELDS.iter().map(|f| (*f).to_owned()).collect();
    let Some(value) = object.get("fields") else {
        return default();
    };
    let fix = format!(
        "send `fields` as a list of record members, some of: {}; or leave it out for all but the counts",
        WATCH_FIELDS.join(", ")
    );
    let Value::Array(items) = value else {
        problems.push(problem(
            "/fields",
            Some(value),
            format!("`fields` is a {}, not an array", type_name(value)),
            fix,
        ));
        return Vec::new();
    };
    if items.is_empty() {
        problems.push(problem(
            "/fields",
            None,
            "`fields` is empty".into(),
            fix.clone(),
        ));
    }
    let mut fields: Vec<String> = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let reason = match item.as_str() {
            Some(name) if fields.iter().any(|f| f == name) => format!("`{name}` is listed twice"),
            Some(name) if WATCH_FIELDS.contains(&name) => {
                fields.push(name.to_owned());
                continue;
            }
            Some(name) => format!("`{name}` is not a record member a watch can follow"),
            None => format!("the item is a {}, not a string", type_name(item)),
        };
        problems.push(Problem {
            pointer: format!("/fields/{index}"),
            index: Some(index),
            value: Some(echo(item)),
            reason,
            fix: fix.clone(),
        });
    }
    fields
}

/// For `#[schemars(transform = …)]` on a watch's `fields`: each item one of [`WATCH_FIELDS`], each once.
#[cfg(feature = "schema")]
fn watch_fields_schema(schema: &mut schemars::Schema) {
    schema.insert("uniqueItems".to_owned(), serde_json::Value::Bool(true));
    schema.insert(
        "items".to_owned(),
        serde_json::json!({"enum": company_model::WATCH_FIELDS}),
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
                "/x",
                "/liUrls/0",
                "/everyHours",
                "/webhookUrl",
                "/fields/1",
                "/fields/2"
            ]
        );
        assert!(invalid.problems[3].reason.contains("https only"));
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

/// The body of `POST /v1/network/company-data/watches` as a client writes it: the server checks it
/// ([`WatchRequest::from_json`]); this type only carries it (the published schema adds the network's page-URL
/// pattern, [`webhook_url_pattern`] and the names [`WATCH_FIELDS`] allows).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "WatchRequest"))]
pub struct WatchBody {
    /// The pages to watch: company, school or showcase page URLs.
    #[cfg_attr(
        feature = "schema",
        schemars(
            length(min = 1, max = MAX_URLS),
            inner(length(max = page_url::MAX_URL_LEN)),
            transform = crate::schema::page_url_items
        )
    )]
    pub li_urls: Vec<String>,
    /// Hours between refreshes ([`WATCH_EVERY_HOURS`]).
    #[cfg_attr(
        feature = "schema",
        schemars(range(min = *WATCH_EVERY_HOURS.start(), max = *WATCH_EVERY_HOURS.end()))
    )]
    pub every_hours: u32,
    /// Where change events are POSTed: an https URL on a public address, without user name or password.
    #[cfg_attr(
        feature = "schema",
        schemars(length(max = MAX_WEBHOOK_URL_LEN), transform = crate::schema::webhook_url)
    )]
    pub webhook_url: String,
    /// The record members whose change is an event; default: [`CHANGE_FIELDS`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "Vec<String>", length(min = 1), transform = watch_fields_schema)
    )]
    pub fields: Option<Vec<String>>,
}

/// Whether a watch still runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum WatchStatus {
    /// Refreshed on its schedule.
    Active,
    /// Stopped after its deliveries failed for the retry window (see `disabled_reason`).
    Disabled,
}

/// A watch as the API shows it (`GET /v1/network/company-data/watches/{id}`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "Watch"))]
pub struct WatchInfo {
    /// The watch's id (a whole number above 0, as a string).
    pub id: String,
    /// The page, normalized.
    pub li_url: String,
    /// Hours between refreshes.
    #[cfg_attr(
        feature = "schema",
        schemars(range(min = *WATCH_EVERY_HOURS.start(), max = *WATCH_EVERY_HOURS.end()))
    )]
    pub every_hours: u32,
    /// Where change events go.
    pub webhook_url: String,
    /// The record members whose change is an event.
    pub fields: Vec<String>,
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
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct WatchList {
    /// Up to the page's `limit` watches, oldest first.
    #[cfg_attr(feature = "schema", schemars(length(max = crate::paging::MOST_WATCHES_PER_PAGE)))]
    pub watches: Vec<WatchInfo>,
    /// The next page's path (with its `after` and `limit`), or null on the last page.
    pub next: Option<String>,
}

/// The watches `POST /v1/network/company-data/watches` made: one per distinct page of the request, in its order.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CreatedWatches {
    /// One watch per distinct page.
    #[cfg_attr(feature = "schema", schemars(length(max = MAX_URLS)))]
    pub watches: Vec<WatchInfo>,
}

/// One delivery attempt of a webhook event.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct DeliveryInfo {
    /// When.
    pub at: jiff::Timestamp,
    /// The receiver's HTTP status, if it answered.
    pub status: Option<u16>,
    /// Null when delivered (2xx).
    pub error: Option<String>,
}

/// The kind of a webhook event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum WebhookEventType {
    /// A watched page changed.
    #[serde(rename = "company.changed")]
    CompanyChanged,
}

/// The body POSTed to a watch's `webhookUrl` when its page changed. The `id` is the same on every delivery
/// attempt: drop duplicates by it.
#[derive(Clone, Debug, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    #[cfg_attr(feature = "schema", schemars(length(min = 1)))]
    pub changes: Vec<company_model::FieldChange>,
    /// The record fetched, as in `CompanyResult` without its per-request members (`original_li_url`, `source`,
    /// `fetched_at`), copied as stored.
    #[cfg_attr(feature = "schema", schemars(with = "company_model::CompanyRecord"))]
    pub record: Box<serde_json::value::RawValue>,
}
