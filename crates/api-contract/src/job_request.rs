//! The body of a bulk job (`POST /v1/network/company-data/jobs`): the company request's members, with up to
//! [`MAX_JOB_URLS`] inputs, each a page URL or a page URL with the caller's metadata, without `staleIfError`, and
//! with an optional callback (`callbackUrl`, `callbackHeaders`) the job's end is POSTed to.
//! [`crate::CompanyRequest::from_job_json`] reads it.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde_json::value::RawValue;

use crate::fields::{MAX_METADATA_MEMBERS, MAX_METADATA_NAME_CHARS, MAX_METADATA_TEXT_CHARS};
use crate::validation::{self, Body};
use crate::{InputMetadata, MAX_AGE_HOURS, MAX_AGE_SECONDS, MAX_JOB_URLS, Problem};

/// The body of a bulk job as a client writes it: as `CompanyRequest`, with up to [`MAX_JOB_URLS`] URLs and
/// without `staleIfError`.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schemars(
    rename = "JobRequest",
    extend("description" = format!(
        "The body of a bulk job: as `CompanyRequest`, with up to {MAX_JOB_URLS} URLs and without `staleIfError`; \
         `callbackHeaders` only with `callbackUrl`."
    )),
    // `callbackHeaders` only with `callbackUrl`, said as draft 4 said `dependencies`, so that every reader of the
    // document (test-data generators too) understands it.
    extend("anyOf" = [{"not": {"required": [CALLBACK_HEADERS]}}, {"required": [CALLBACK_URL]}])
)]
pub struct JobBody {
    /// Company, school or showcase page URLs, as the caller has them, each alone or with the caller's metadata.
    #[schemars(length(min = 1, max = MAX_JOB_URLS))]
    pub li_urls: Vec<JobInput>,
    /// Freshness window in hours (0 to 24); absent or 0 fetches live.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0.0, max = MAX_AGE_HOURS))]
    pub max_age_hours: Option<f64>,
    /// Freshness window in seconds; wins over `maxAgeHours`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0.0, max = MAX_AGE_SECONDS))]
    pub max_age_seconds: Option<f64>,
    /// Field selection: the record members each answer keeps, as on `POST /v1/network/company-data`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::request::fields_schema")]
    pub fields: Option<Vec<String>>,
    /// Parts of the record fetched beyond the page, as on `POST /v1/network/company-data` (`job_count`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "crate::include::include_schema")]
    pub include: Option<Vec<crate::Include>>,
    /// Where the job's end (`job.finished`, `job.paused`, `job.cancelled`) is POSTed too, signed like every event
    /// (`Company-Data-Signature`) and retried with backoff: an https URL on a public address, as a webhook
    /// endpoint's `url`. A one-off resume URL (n8n's "wait for webhook", a Zapier callback) works as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(
        with = "String",
        length(max = crate::MAX_WEBHOOK_URL_LEN),
        transform = crate::schema::webhook_url,
        extend("examples" = ["https://example.com/hooks/company-data-job"])
    )]
    pub callback_url: Option<String>,
    /// Headers sent with each callback, e.g. a token the receiver checks: names in lower case (HTTP names are
    /// case-insensitive), ten at most; the job shows their names, never their values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "callback_headers_schema")]
    pub callback_headers: Option<BTreeMap<String, String>>,
}

/// The body's member with the callback URL.
const CALLBACK_URL: &str = "callbackUrl";
/// The body's member with the callback's headers.
const CALLBACK_HEADERS: &str = "callbackHeaders";

/// Most headers a job's callback carries.
pub const MAX_CALLBACK_HEADERS: usize = 10;
/// Longest name of a callback header, in bytes.
pub const MAX_CALLBACK_HEADER_NAME_LEN: usize = 64;
/// Longest value of a callback header, in bytes.
pub const MAX_CALLBACK_HEADER_VALUE_LEN: usize = 1024;

/// Header names a callback may not set: those the server writes itself (the body's type and length, the
/// signature, the event's id, who sends it), those that frame the connection or the message, and those that would
/// make the delivery pass for another client's request or another method (forwarding, method overrides).
pub const RESERVED_CALLBACK_HEADERS: [&str; 22] = [
    "company-data-event-id",
    "company-data-signature",
    "connection",
    "content-encoding",
    "content-length",
    "content-type",
    "expect",
    "forwarded",
    "host",
    "keep-alive",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "user-agent",
    "via",
    "x-forwarded-for",
    "x-forwarded-host",
    "x-forwarded-proto",
    "x-http-method-override",
    "x-real-ip",
];

/// `callbackHeaders`' schema: an object of up to [`MAX_CALLBACK_HEADERS`] lower-case header names (RFC 9110
/// tokens of letters, digits and hyphens, none of [`RESERVED_CALLBACK_HEADERS`]) to values of printable ASCII.
fn callback_headers_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "maxProperties": MAX_CALLBACK_HEADERS,
        "propertyNames": {
            "description": format!(
                "a header name in lower case (letters, digits and hyphens, up to {MAX_CALLBACK_HEADER_NAME_LEN}) \
                 that the server does not write itself (not {})",
                RESERVED_CALLBACK_HEADERS.join(", ")
            ),
            "pattern": "^[a-z0-9][a-z0-9-]*$",
            "maxLength": MAX_CALLBACK_HEADER_NAME_LEN,
            "not": {"enum": RESERVED_CALLBACK_HEADERS},
        },
        "additionalProperties": {
            "type": "string",
            "maxLength": MAX_CALLBACK_HEADER_VALUE_LEN,
            "pattern": "^[\\x20-\\x7E]*$",
            "description": "printable ASCII: letters, digits, spaces and punctuation, no line breaks",
        },
        "examples": [{"authorization": "Bearer receiver-token"}],
    })
}

/// Where a job's end is POSTed besides the account's endpoints: its body's `callbackUrl` and `callbackHeaders`.
/// Stored with the job as this JSON.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct JobCallback {
    /// The URL, checked as a webhook URL when the job was submitted (and again at each delivery).
    pub url: String,
    /// Headers sent with it, names in lower case.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

impl JobBody {
    /// The callback the body asks for, if any (a webhook URL's final `\n`, which its pattern lets through, cut).
    pub(crate) fn callback(&self) -> Option<JobCallback> {
        let url = self.callback_url.as_deref()?;
        Some(JobCallback {
            url: url.strip_suffix('\n').unwrap_or(url).to_owned(),
            headers: self.callback_headers.clone().unwrap_or_default(),
        })
    }
}

impl Body for JobBody {
    const EXAMPLE: &str =
        r#"send a JSON object such as {"liUrls": ["https://www.linkedin.com/company/google"]}"#;
    validation::rules!(JobBody);

    fn advise(keyword: &str, problem: &mut Problem) {
        match keyword {
            "maxItems" if problem.pointer == "/liUrls" => {
                problem.fix = format!("split the URLs into jobs of at most {MAX_JOB_URLS}");
            }
            "anyOf" if problem.pointer.is_empty() => {
                format!("`{CALLBACK_HEADERS}` was sent without `{CALLBACK_URL}`")
                    .clone_into(&mut problem.reason);
                problem.fix =
                    format!("send `{CALLBACK_URL}` too, or leave `{CALLBACK_HEADERS}` out");
            }
            "additionalProperties" if problem.pointer == "/staleIfError" => {
                "a bulk job does not take `staleIfError`".clone_into(&mut problem.reason);
                problem.fix = format!(
                    "leave it out: a job puts the pages the network refused back and fetches them when a route \
                     is free; send staleIfError to POST {} for a fallback",
                    crate::paths::COMPANY_DATA
                );
            }
            // The members a job takes, without the synchronous endpoint's `staleIfError`.
            _ => {}
        }
    }
}

/// One input of a bulk job: a page URL, or an object carrying the page URL and the caller's metadata (given
/// back unchanged beside its answer).
#[derive(Clone, Debug)]
pub enum JobInput {
    /// `"https://www.linkedin.com/company/google"`.
    Url(String),
    /// `{"liUrl": "https://…", "metadata": {"crmId": "0012"}}`: the metadata kept as sent.
    WithMetadata {
        /// The page URL.
        li_url: String,
        /// The caller's object, as its JSON text.
        metadata: Option<Box<RawValue>>,
    },
}

/// The members of an input object.
const LI_URL: &str = "liUrl";
const METADATA: &str = "metadata";

impl serde::Serialize for JobInput {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Url(url) => serializer.serialize_str(url),
            Self::WithMetadata { li_url, metadata } => {
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry(LI_URL, li_url)?;
                if let Some(metadata) = metadata {
                    map.serialize_entry(METADATA, metadata)?;
                }
                map.end()
            }
        }
    }
}

impl<'de> serde::Deserialize<'de> for JobInput {
    /// A string, or an object read member by member so that `metadata` keeps its text (an untagged enum would
    /// buffer it and lose it).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InputVisitor;
        impl<'de> Visitor<'de> for InputVisitor {
            type Value = JobInput;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(r#"a page URL, or {"liUrl": "…", "metadata": {…}}"#)
            }
            fn visit_str<E: de::Error>(self, url: &str) -> Result<JobInput, E> {
                Ok(JobInput::Url(url.to_owned()))
            }
            fn visit_string<E: de::Error>(self, url: String) -> Result<JobInput, E> {
                Ok(JobInput::Url(url))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<JobInput, A::Error> {
                let (mut li_url, mut metadata) = (None, None);
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        LI_URL => li_url = Some(map.next_value::<String>()?),
                        METADATA => metadata = Some(map.next_value::<Box<RawValue>>()?),
                        other => return Err(de::Error::unknown_field(other, &[LI_URL, METADATA])),
                    }
                }
                let li_url = li_url.ok_or_else(|| de::Error::missing_field(LI_URL))?;
                Ok(JobInput::WithMetadata { li_url, metadata })
            }
        }
        deserializer.deserialize_any(InputVisitor)
    }
}

impl schemars::JsonSchema for JobInput {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "JobInput".into()
    }

    fn inline_schema() -> bool {
        true
    }

    /// The page URL (the synchronous request's item), or `{"liUrl": url, "metadata": {…}}` with the metadata in
    /// [`InputMetadata`]'s bounds.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let mut url =
            schemars::json_schema!({"type": "string", "maxLength": page_url::MAX_URL_LEN});
        crate::schema::page_url(&mut url);
        let prefix = InputMetadata::COLUMN_PREFIX;
        schemars::json_schema!({
            "oneOf": [
                url,
                {
                    "type": "object",
                    "description": format!("A page URL with the caller's metadata, given back unchanged beside its \
                                            answer (NDJSON `{METADATA}`, CSV `{prefix}<name>` columns)."),
                    "required": [LI_URL],
                    "additionalProperties": false,
                    "properties": {
                        LI_URL: url,
                        METADATA: {
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
}

#[cfg(test)]
mod tests {
    use page_url::NetworkDomain;

    use crate::{CompanyRequest, InvalidRequest, JobCallback};

    const URL: &str = "https://www.linkedin.com/company/google";

    fn job(members: &str, allow_http: bool) -> Result<CompanyRequest, InvalidRequest> {
        let body = format!(r#"{{"liUrls": ["{URL}"]{members}}}"#);
        CompanyRequest::from_job_json(body.as_bytes(), &NetworkDomain::default(), allow_http)
    }

    fn problems(error: &InvalidRequest) -> Vec<(&str, &str, &str)> {
        error
            .problems
            .iter()
            .map(|p| (p.pointer.as_str(), p.reason.as_str(), p.fix.as_str()))
            .collect()
    }

    #[test]
    fn a_callback_is_read_with_its_headers() {
        let request = job(
            r#", "callbackUrl": "https://hooks.example.com/resume/7?sig=a%2Fb",
                 "callbackHeaders": {"authorization": "Bearer t0k en", "x-n8n-token": ""}"#,
            false,
        )
        .expect("valid");
        assert_eq!(
            request.callback,
            Some(JobCallback {
                url: "https://hooks.example.com/resume/7?sig=a%2Fb".to_owned(),
                headers: [
                    ("authorization".to_owned(), "Bearer t0k en".to_owned()),
                    ("x-n8n-token".to_owned(), String::new()),
                ]
                .into(),
            })
        );
        // A URL alone; none at all.
        let alone = job(r#", "callbackUrl": "https://hooks.example.com/x""#, false).expect("valid");
        assert!(alone.callback.expect("callback").headers.is_empty());
        assert_eq!(job("", false).expect("valid").callback, None);
    }

    #[test]
    fn a_callback_follows_the_webhook_rule() {
        let refused = job(r#", "callbackUrl": "http://127.0.0.1:9/h""#, false).expect_err("http");
        let found = problems(&refused);
        assert_eq!(found.len(), 1, "{refused}");
        assert_eq!(found[0].0, "/callbackUrl");
        assert!(found[0].1.contains("https"), "{refused}");
        // A server whose webhooks may go to local receivers takes `http`.
        assert!(job(r#", "callbackUrl": "http://127.0.0.1:9/h""#, true).is_ok());
        let refused =
            job(r#", "callbackUrl": "https://u:p@example.com/h""#, false).expect_err("userinfo");
        assert!(problems(&refused)[0].1.contains("password"), "{refused}");
    }

    #[test]
    fn headers_need_the_url_lower_case_names_and_none_the_server_writes() {
        let refused = job(r#", "callbackHeaders": {"authorization": "x"}"#, false)
            .expect_err("headers alone");
        let found = problems(&refused);
        assert_eq!(found.len(), 1, "{refused}");
        assert!(found[0].1.contains("without `callbackUrl`"), "{refused}");
        assert!(found[0].2.contains("send `callbackUrl` too"), "{refused}");

        let with_url = |headers: &str| {
            job(
                &format!(
                    r#", "callbackUrl": "https://example.com/h", "callbackHeaders": {headers}"#
                ),
                false,
            )
        };
        for refused in [
            r#"{"Authorization": "x"}"#,
            r#"{"host": "evil.example"}"#,
            r#"{"company-data-signature": "t=1,v1=00"}"#,
            r#"{"user-agent": "twice"}"#,
            r#"{"x-forwarded-for": "10.0.0.1"}"#,
        ] {
            let error = with_url(refused).expect_err(refused);
            assert!(
                error.problems[0]
                    .reason
                    .contains("a header name in lower case"),
                "{error}"
            );
            assert!(
                error.problems[0].fix.contains("not company-data-event-id"),
                "{error}"
            );
        }
        for refused in [r#"{"x-token": "a\nb"}"#, r#"{"x-token": 7}"#] {
            let error = with_url(refused).expect_err(refused);
            assert!(
                error
                    .problems
                    .iter()
                    .all(|p| p.pointer.starts_with("/callbackHeaders")),
                "{refused}: {error}"
            );
        }
        let eleven: Vec<String> = (0..11).map(|n| format!(r#""x-{n}": "v""#)).collect();
        let error = with_url(&format!("{{{}}}", eleven.join(","))).expect_err("too many");
        assert_eq!(error.problems[0].pointer, "/callbackHeaders", "{error}");
        assert!(with_url(&format!("{{{}}}", eleven[..10].join(","))).is_ok());
    }
}
