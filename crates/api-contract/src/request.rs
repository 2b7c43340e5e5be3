//! The company request (spec 2.1) and its validation.

use std::fmt;
use std::time::Duration;

use page_url::{NetworkDomain, PageUrl};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::fields::{MAX_METADATA_MEMBERS, MAX_METADATA_NAME_CHARS, MAX_METADATA_TEXT_CHARS};
use crate::problems::{InvalidRequest, echo, escape_pointer, json_object, type_name};
use crate::{InputMetadata, Problem, RecordFields};

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
/// The body of `POST /v1/network/company-data` (and of a bulk job) as a client writes it (spec 2.1): the
/// server checks it ([`CompanyRequest::from_json`]); this type only carries it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "CompanyRequest"))]
pub struct RequestBody {
    /// Company, school or showcase page URLs, as the caller has them (the published schema adds the network's
    /// `page_url::submitted_pattern`; a bulk job takes up to [`MAX_JOB_URLS`]).
    #[cfg_attr(
        feature = "schema",
        schemars(
            length(min = 1, max = MAX_URLS),
            inner(length(max = page_url::MAX_URL_LEN)),
            transform = crate::schema::page_url_items
        )
    )]
    pub li_urls: Vec<String>,
    /// Freshness window in hours (0 to [`MAX_AGE_HOURS`]); absent or 0 fetches live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "f64", range(min = 0.0, max = MAX_AGE_HOURS)))]
    pub max_age_hours: Option<f64>,
    /// Freshness window in seconds; wins over `maxAgeHours`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "f64", range(min = 0.0, max = MAX_AGE_SECONDS)))]
    pub max_age_seconds: Option<f64>,
    /// When a live fetch fails for a reason that may pass (the network refused it or showed its sign-in wall,
    /// it timed out, it could not be reached), answer with the newest stored snapshot of any age instead, as
    /// `source: "stale"` billed at the stored price (after `stale-if-error`, RFC 5861). Default false. The
    /// synchronous endpoint only: a bulk job waits for a route instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(with = "bool"))]
    pub stale_if_error: Option<bool>,
    /// Field selection (an extension of the seed's request, optional): the record members each answer keeps,
    /// named as the record names them ([`crate::RecordFields::valid_names`]); `original_li_url` and
    /// `final_li_url` are always kept. Absent: whole records. Billing is the same either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schema", schemars(schema_with = "fields_schema"))]
    pub fields: Option<Vec<String>>,
}

/// `fields`' schema: an array of the record's member names (the names come from the record type).
#[cfg(feature = "schema")]
pub(crate) fn fields_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "items": {"type": "string", "enum": crate::RecordFields::valid_names()},
    })
}

/// The JSON Schema of a bulk job's input (what `CompanyRequest::from_job_json` takes): the page URL, as `url` (the
/// synchronous request's item schema), or `{"liUrl": url, "metadata": {…}}` with the metadata in
/// [`InputMetadata`]'s bounds.
#[cfg(feature = "schema")]
pub fn job_input_schema(url: &Value) -> Value {
    let [li_url, metadata] = INPUT_MEMBERS;
    let prefix = InputMetadata::COLUMN_PREFIX;
    serde_json::json!({
        "oneOf": [
            url,
            {
                "type": "object",
                "description": format!("A page URL with the caller's metadata, given back unchanged beside its \
                                        answer (NDJSON `{metadata}`, CSV `{prefix}<name>` columns)."),
                "required": [li_url],
                "additionalProperties": false,
                "properties": {
                    li_url: url,
                    metadata: {
                        "type": "object",
                        "maxProperties": MAX_METADATA_MEMBERS,
                        "propertyNames": {"minLength": 1, "maxLength": MAX_METADATA_NAME_CHARS},
                        "additionalProperties": {
                            "anyOf": [
                                {"type": "string", "maxLength": MAX_METADATA_TEXT_CHARS},
                                {"type": ["number", "boolean", "null"]},
                            ]
                        },
                    },
                },
            },
        ]
    })
}

/// The request members the synchronous endpoint takes.
const PROPERTIES: [&str; 5] = [
    "liUrls",
    "maxAgeHours",
    "maxAgeSeconds",
    STALE_IF_ERROR,
    crate::fields::FIELDS,
];
/// The member that asks for a stale snapshot when the live fetch fails.
const STALE_IF_ERROR: &str = "staleIfError";

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

impl CompanyRequest {
    /// Validates a JSON request body against spec 2.1 and normalizes its URLs.
    ///
    /// Rules: a JSON object; only `liUrls`, `maxAgeHours`, `maxAgeSeconds`, `staleIfError`; `liUrls` an array
    /// of 1 to 200 strings, each matching the URL pattern for `domain`; `maxAgeHours` a number in 0..=24;
    /// `maxAgeSeconds` a number in 0..=86400, which wins over `maxAgeHours` when both are sent; `staleIfError`
    /// a boolean.
    ///
    /// # Errors
    /// [`InvalidRequest`] naming every problem found, not just the first.
    pub fn from_json(body: &[u8], domain: &NetworkDomain) -> Result<Self, InvalidRequest> {
        Self::from_json_up_to(
            body,
            domain,
            MAX_URLS,
            &format!(
                "split the URLs into requests of at most {MAX_URLS}, or send them all as one bulk job \
                 (POST /v1/network/company-data/jobs, up to {MAX_JOB_URLS})"
            ),
            true,
        )
    }

    /// Validates a bulk job's body: the rules of [`CompanyRequest::from_json`] with up to [`MAX_JOB_URLS`] URLs
    /// and without `staleIfError` (a job puts a page the network refused back and fetches it later).
    ///
    /// # Errors
    /// [`InvalidRequest`] naming every problem found, not just the first.
    pub fn from_job_json(body: &[u8], domain: &NetworkDomain) -> Result<Self, InvalidRequest> {
        Self::from_json_up_to(
            body,
            domain,
            MAX_JOB_URLS,
            &format!("split the URLs into jobs of at most {MAX_JOB_URLS}"),
            false,
        )
    }

    fn from_json_up_to(
        body: &[u8],
        domain: &NetworkDomain,
        most: usize,
        split: &str,
        stale_allowed: bool,
    ) -> Result<Self, InvalidRequest> {
        let object = json_object(
            body,
            r#"send a JSON object such as {"liUrls": ["https://www.linkedin.com/company/google"]}"#,
        )?;
        let mut problems = Vec::new();
        for key in object.keys() {
            if key == STALE_IF_ERROR && !stale_allowed {
                problems.push(Problem {
                    pointer: format!("/{STALE_IF_ERROR}"),
                    index: None,
                    value: None,
                    reason: format!("a bulk job does not take `{STALE_IF_ERROR}`"),
                    fix: "leave it out: a job puts the pages the network refused back and fetches them when a \
                          route is free; send staleIfError to POST /v1/network/company-data for a fallback"
                        .to_owned(),
                });
            } else if !PROPERTIES.contains(&key.as_str()) {
                problems.push(Problem {
                    pointer: format!("/{}", escape_pointer(key)),
                    index: None,
                    value: None,
                    reason: format!("unknown property `{key}`"),
                    fix: suggest_property(key, stale_allowed),
                });
            }
        }
        // A job's inputs may be objects carrying metadata, read from the body's text to keep it as sent (the body
        // is read a second time only when some input is an object).
        let has_objects = object
            .get("liUrls")
            .and_then(Value::as_array)
            .is_some_and(|items| items.iter().any(Value::is_object));
        let raw_inputs = (!stale_allowed).then(|| {
            if has_objects {
                raw_inputs(body)
            } else {
                RawInputs { li_urls: None }
            }
        });
        let urls = validate_urls(
            &object,
            domain,
            (most, split),
            raw_inputs
                .as_ref()
                .map(|raw| raw.li_urls.as_deref().unwrap_or_default()),
            &mut problems,
        );
        let window = sent_window(&object, FreshnessWindow::LIVE, &mut problems);
        let fields = RecordFields::sent(&object, &mut problems);
        let stale_if_error = match object.get(STALE_IF_ERROR) {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(_) if !stale_allowed => false,
            Some(other) => {
                problems.push(Problem {
                    pointer: format!("/{STALE_IF_ERROR}"),
                    index: None,
                    value: Some(echo(other)),
                    reason: format!(
                        "`{STALE_IF_ERROR}` is a {}, not a boolean",
                        type_name(other)
                    ),
                    fix: format!("send true or false, or leave `{STALE_IF_ERROR}` out"),
                });
                false
            }
        };
        if !problems.is_empty() {
            return Err(InvalidRequest { problems });
        }
        Ok(CompanyRequest {
            urls,
            window,
            stale_if_error,
            fields,
        })
    }
}

/// A job body's `liUrls` items as their JSON text (other members skipped): where an object input's metadata is
/// read from, unchanged.
#[derive(serde::Deserialize)]
struct RawInputs<'a> {
    #[serde(rename = "liUrls", borrow, default)]
    li_urls: Option<Vec<&'a RawValue>>,
}

fn raw_inputs(body: &[u8]) -> RawInputs<'_> {
    serde_json::from_slice(body).unwrap_or(RawInputs { li_urls: None })
}

/// The metadata member of an input object, as its JSON text.
#[derive(serde::Deserialize)]
struct RawInput<'a> {
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
}

/// The members an input object of a bulk job may have.
const INPUT_MEMBERS: [&str; 2] = ["liUrl", "metadata"];

/// The URLs of `liUrls`; `(most, split)` is the most it may hold and the advice when it holds more. With
/// `raw_items` (a bulk job's items as their JSON text), an item may also be an object `{"liUrl": …, "metadata":
/// {…}}`.
pub(crate) fn validate_urls(
    object: &Map<String, Value>,
    domain: &NetworkDomain,
    (most, split): (usize, &str),
    raw_items: Option<&[&RawValue]>,
    problems: &mut Vec<Problem>,
) -> Vec<SubmittedUrl> {
    let mut problem = |pointer: String, index, value, reason: String, fix: String| {
        problems.push(Problem {
            pointer,
            index,
            value,
            reason,
            fix,
        });
    };
    let Some(value) = object.get("liUrls") else {
        problem(
            "/liUrls".into(),
            None,
            None,
            "the required property `liUrls` is missing".into(),
            format!(r#"add "liUrls": an array of 1 to {most} page URLs"#),
        );
        return Vec::new();
    };
    let Value::Array(items) = value else {
        problem(
            "/liUrls".into(),
            None,
            Some(echo(value)),
            format!("`liUrls` is a {}, not an array", type_name(value)),
            r#"send an array of strings, e.g. "liUrls": ["https://www.linkedin.com/company/google"]"#.into(),
        );
        return Vec::new();
    };
    if items.is_empty() {
        problem(
            "/liUrls".into(),
            None,
            None,
            "`liUrls` is empty".into(),
            "send at least one page URL".into(),
        );
    }
    if items.len() > most {
        problem(
            "/liUrls".into(),
            None,
            None,
            format!(
                "`liUrls` has {} items, over the limit of {most}",
                items.len()
            ),
            split.to_owned(),
        );
    }
    let mut urls = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let mut pointer = format!("/liUrls/{index}");
        let (text, metadata) = match (item, raw_items) {
            (Value::String(text), _) => (text, None),
            (Value::Object(input), Some(raw_items)) => {
                let mut wrong = |place: &str, value, reason: String, fix: &str| {
                    problem(
                        format!("{pointer}{place}"),
                        Some(index),
                        value,
                        reason,
                        fix.to_owned(),
                    );
                };
                for name in input
                    .keys()
                    .filter(|name| !INPUT_MEMBERS.contains(&name.as_str()))
                {
                    wrong(
                        &format!("/{}", escape_pointer(name)),
                        None,
                        format!("unknown member `{name}` of an input"),
                        r#"an input object has `liUrl` and, optionally, `metadata`: {"liUrl": "https://www.linkedin.com/company/google", "metadata": {"crmId": "0012"}}"#,
                    );
                }
                let raw_metadata = raw_items
                    .get(index)
                    .and_then(|raw| serde_json::from_str::<RawInput<'_>>(raw.get()).ok())
                    .and_then(|raw| raw.metadata);
                // A member sent as `null` reads as no raw value: refused like any other non-object.
                let metadata = match (input.get("metadata"), raw_metadata) {
                    (None, _) => Ok(None),
                    (Some(_), Some(raw)) => InputMetadata::from_raw(raw).map(Some),
                    (Some(_), None) => Err("`metadata` is null, not a JSON object".to_owned()),
                };
                let metadata = metadata.unwrap_or_else(|reason| {
                    let fix = format!(
                        "send a flat JSON object of at most {MAX_METADATA_MEMBERS} members (names of 1 to \
                         {MAX_METADATA_NAME_CHARS} characters; each value a string of up to \
                         {MAX_METADATA_TEXT_CHARS} characters, a number, a boolean or null), or leave `metadata` out"
                    );
                    wrong("/metadata", input.get("metadata").map(echo), reason, &fix);
                    None
                });
                match input.get("liUrl") {
                    Some(Value::String(text)) => {
                        pointer.push_str("/liUrl");
                        (text, metadata)
                    }
                    other => {
                        wrong(
                            "/liUrl",
                            other.map(echo),
                            match other {
                                None => "the input has no `liUrl`".to_owned(),
                                Some(v) => format!("`liUrl` is a {}, not a string", type_name(v)),
                            },
                            "send the page URL as a string in `liUrl`",
                        );
                        continue;
                    }
                }
            }
            _ => {
                problem(
                    pointer,
                    Some(index),
                    Some(echo(item)),
                    format!("the item is a {}, not a string", type_name(item)),
                    if raw_items.is_some() {
                        r#"send each page URL as a JSON string, or as an object {"liUrl": "…", "metadata": {…}}"#.into()
                    } else {
                        "send each page URL as a JSON string".into()
                    },
                );
                continue;
            }
        };
        match PageUrl::parse_submitted(text, domain) {
            Ok(page) => urls.push(SubmittedUrl {
                original: text.clone(),
                page,
                metadata,
            }),
            Err(error) => problem(
                pointer,
                Some(index),
                Some(echo(item)),
                error.to_string(),
                error.fix(),
            ),
        }
    }
    urls
}

/// The freshness window a body sends: `maxAgeSeconds` (0 to [`MAX_AGE_SECONDS`]), which wins, else
/// `maxAgeHours` (0 to [`MAX_AGE_HOURS`]), else `default`; a member out of range or not a number is reported in
/// `problems` (the request is then refused, whatever this returns).
pub(crate) fn sent_window(
    object: &Map<String, Value>,
    default: FreshnessWindow,
    problems: &mut Vec<Problem>,
) -> FreshnessWindow {
    let hours = validate_number(object, "maxAgeHours", MAX_AGE_HOURS, problems);
    let seconds = validate_number(object, "maxAgeSeconds", MAX_AGE_SECONDS, problems);
    let window = match (seconds, hours) {
        (Some(seconds), _) => FreshnessWindow::from_seconds(seconds),
        (None, Some(hours)) => FreshnessWindow::from_hours(hours),
        (None, None) => Some(default),
    };
    window.unwrap_or(default)
}

/// Reads an optional number property in `0..=max`; reports a problem and returns `None` when it is wrong.
fn validate_number(
    object: &Map<String, Value>,
    name: &str,
    max: f64,
    problems: &mut Vec<Problem>,
) -> Option<f64> {
    let value = object.get(name)?;
    let reason = match value.as_f64() {
        Some(number) if (0.0..=max).contains(&number) => return Some(number),
        Some(_) => format!("`{name}` is outside 0 to {max}"),
        None if value.is_null() => format!("`{name}` is null"),
        None => format!("`{name}` is a {}, not a number", type_name(value)),
    };
    let unit = if name == "maxAgeHours" {
        "hours"
    } else {
        "seconds"
    };
    problems.push(Problem {
        pointer: format!("/{name}"),
        index: None,
        value: Some(echo(value)),
        reason,
        fix: format!("send a number of {unit} from 0 to {max}, or leave `{name}` out"),
    });
    None
}

/// The fix for an unknown member `key`: the allowed name it resembles, or the allowed names (a job's without
/// `staleIfError`).
fn suggest_property(key: &str, stale_allowed: bool) -> String {
    let allowed: Vec<&str> = PROPERTIES
        .into_iter()
        .filter(|known| stale_allowed || *known != STALE_IF_ERROR)
        .collect();
    let lowered = key.to_ascii_lowercase().replace(['_', '-'], "");
    let guess = allowed.iter().find(|known| {
        let known = known.to_ascii_lowercase();
        known == lowered || known.trim_end_matches('s') == lowered.trim_end_matches('s')
    });
    match guess {
        Some(known) => format!("did you mean `{known}`? Property names are case-sensitive"),
        None => format!(
            "remove it; the allowed properties are {}",
            allowed.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                "/extra",
                "/liUrls/1",
                "/liUrls/2",
                "/liUrls/3",
                "/maxAgeHours",
                "/maxAgeSeconds"
            ]
        );
        let error = parse(&body).expect_err("invalid");
        assert_eq!(error.problems[1].index, Some(1));
        assert_eq!(
            error.problems[1].value,
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
        let job = CompanyRequest::from_job_json(unknown.as_bytes(), &NetworkDomain::default())
            .expect_err("unknown");
        assert!(!job.problems[0].fix.contains("staleIfError"), "{job}");

        // A job puts refused pages back instead, so it refuses the member whatever its value.
        for value in ["true", "false", "1"] {
            let error =
                CompanyRequest::from_job_json(body(value).as_bytes(), &NetworkDomain::default())
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
        let job =
            |body: &str| CompanyRequest::from_job_json(body.as_bytes(), &NetworkDomain::default());
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
                "/liUrls/0/url",
                "/liUrls/0/liUrl",
                "/liUrls/1/metadata",
                "/liUrls/2/liUrl",
                "/liUrls/3/metadata"
            ]
        );
        assert_eq!(pointers(&body), ["/liUrls/1", "/liUrls/2"]);
    }
}
