//! The body of a bulk job (`POST /v1/network/company-data/jobs`): the company request's members, with up to
//! [`MAX_JOB_URLS`] inputs, each a page URL or a page URL with the caller's metadata, and without `staleIfError`.
//! [`crate::CompanyRequest::from_job_json`] reads it.

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
        "The body of a bulk job: as `CompanyRequest`, with up to {MAX_JOB_URLS} URLs and without `staleIfError`."
    ))
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
