//! Response and error bodies of `POST /v1/network/company-data` (spec 2.2, 2.4).

use serde::ser::{Error as _, SerializeMap};
use serde::{Deserialize, Serialize};

use company_model::{CompanyRecord, RecordJson, RecordSource, UnresolvedCode};

/// The body of a 200 (spec 2.2) plus `unresolved`, the URLs that could not be turned into a record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "CompanyResponse")]
pub struct CompanyDataResponse {
    /// Always `Success` on a 200.
    pub message: String,
    /// The HTTP status, 200.
    pub status_code: u16,
    /// One record per resolved input position, in input order.
    pub results: Vec<CompanyResult>,
    /// One entry per input position that did not resolve, in input order; empty when all resolved. These are
    /// not billed.
    pub unresolved: Vec<UnresolvedUrl>,
}

impl CompanyDataResponse {
    /// The body as JSON: the same bytes as `serde_json::to_vec(self)`, written without parsing any record (each
    /// record's members are copied as text), which is what a server should send.
    ///
    /// # Errors
    /// Never in practice: only if a string could not be written by serde_json.
    pub fn to_json(&self) -> Result<Vec<u8>, serde_json::Error> {
        let records: usize = self
            .results
            .iter()
            .map(|r| r.record.as_str().len() + r.original_li_url.len() + 96)
            .sum();
        let mut out = Vec::with_capacity(records + 128 + 256 * self.unresolved.len());
        out.extend_from_slice(b"{\"message\":");
        serde_json::to_writer(&mut out, &self.message)?;
        out.extend_from_slice(b",\"status_code\":");
        serde_json::to_writer(&mut out, &self.status_code)?;
        out.extend_from_slice(b",\"results\":[");
        for (i, result) in self.results.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            result.write_json(&mut out)?;
        }
        out.extend_from_slice(b"],\"unresolved\":");
        serde_json::to_writer(&mut out, &self.unresolved)?;
        out.push(b'}');
        Ok(out)
    }
}

/// A record as returned for one input position: the page's [`CompanyRecord`] plus where it came from.
///
/// In JSON the record's members appear at the top level of the object, between `original_li_url` and
/// `source`. Serializing copies the record's members as their stored text (values are not parsed), so it is
/// meant for JSON serializers.
#[derive(Clone, Debug, PartialEq)]
pub struct CompanyResult {
    /// The URL exactly as the caller sent it.
    pub original_li_url: String,
    /// The page's record, as JSON text.
    pub record: RecordJson,
    /// Whether the page was fetched for this request or served from a stored snapshot.
    pub source: RecordSource,
    /// When the page was fetched from the network (RFC 3339, UTC).
    pub fetched_at: jiff::Timestamp,
}

impl CompanyResult {
    /// Appends the result as a JSON object, copying the record's members as text (see [`Serialize`]).
    fn write_json(&self, out: &mut Vec<u8>) -> Result<(), serde_json::Error> {
        out.extend_from_slice(b"{\"original_li_url\":");
        serde_json::to_writer(&mut *out, &self.original_li_url)?;
        let members = self.record.members_text();
        if !members.is_empty() {
            out.push(b',');
            out.extend_from_slice(members.as_bytes());
        }
        out.extend_from_slice(b",\"source\":");
        serde_json::to_writer(&mut *out, &self.source)?;
        out.extend_from_slice(b",\"fetched_at\":");
        serde_json::to_writer(&mut *out, &self.fetched_at)?;
        out.push(b'}');
        Ok(())
    }
}

impl Serialize for CompanyResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let members = self.record.members().map_err(S::Error::custom)?;
        let mut map = serializer.serialize_map(Some(members.0.len() + 3))?;
        map.serialize_entry("original_li_url", &self.original_li_url)?;
        for (name, value) in &members.0 {
            // A record has no members of these names (its top-level members are fixed).
            map.serialize_entry(name, value)?;
        }
        map.serialize_entry("source", &self.source)?;
        map.serialize_entry("fetched_at", &self.fetched_at)?;
        map.end()
    }
}

impl<'de> Deserialize<'de> for CompanyResult {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Parsed {
            original_li_url: String,
            #[serde(flatten)]
            record: CompanyRecord,
            source: RecordSource,
            fetched_at: jiff::Timestamp,
        }
        let parsed = Parsed::deserialize(deserializer)?;
        Ok(Self {
            original_li_url: parsed.original_li_url,
            record: RecordJson::from_record(&parsed.record),
            source: parsed.source,
            fetched_at: parsed.fetched_at,
        })
    }
}

/// A record as returned for one input position: the page's record members at the top level, between
/// `original_li_url` and `source` (the JSON shape of `CompanyResult`, for its schema).
#[derive(schemars::JsonSchema)]
#[allow(dead_code)] // read by the schema derive only
struct CompanyResultShape {
    /// The URL exactly as the caller sent it.
    original_li_url: String,
    #[serde(flatten)]
    record: CompanyRecord,
    /// `live`: fetched for this request; `stored`: a snapshot fetched inside the request's freshness window.
    source: RecordSource,
    /// When the page was fetched from the network (RFC 3339, UTC).
    fetched_at: jiff::Timestamp,
}

impl schemars::JsonSchema for CompanyResult {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "CompanyResult".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        CompanyResultShape::json_schema(generator)
    }
}

/// An input position that did not resolve to a record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UnresolvedUrl {
    /// The URL exactly as the caller sent it.
    pub original_li_url: String,
    /// Why, as a stable code.
    pub error: UnresolvedCode,
    /// What happened and what the caller can do.
    pub message: String,
    /// For `blocked` and `authwall`: whole seconds until the service has a route to the network free again
    /// (the response's `Retry-After` header carries the largest of them). Absent for other codes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1))]
    pub retry_after_seconds: Option<u64>,
}

/// Every error body (spec 2.4): `{error, message, status_code}`, plus `details` on a 400 that lists each
/// offending part of the request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Error")]
pub struct ErrorBody {
    /// Stable snake_case code, e.g. `invalid_request`, `insufficient_credits`.
    pub error: String,
    /// What went wrong and the concrete fix, in English.
    pub message: String,
    /// The HTTP status of the response.
    pub status_code: u16,
    /// One entry per problem found in the request (400 only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<Problem>,
    /// The request's id, as in its `X-Request-Id` response header and the server's log: quote it when
    /// reporting a problem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// One problem with a request body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Problem {
    /// Where, as a JSON Pointer (RFC 6901): `/liUrls/3`, `/maxAgeHours`, or `` for the whole body.
    pub pointer: String,
    /// For `liUrls` items, the item's zero-based index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// The offending value as sent (long strings are cut to 200 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    /// What is wrong.
    pub reason: String,
    /// How to fix it.
    pub fix: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn audiense() -> CompanyRecord {
        CompanyRecord {
            company_name: Some("Audiense \"quoted\" \u{e9}".into()),
            headquarters: Some(company_model::Address {
                locality: Some("London".into()),
                ..company_model::Address::default()
            }),
            ..CompanyRecord::default()
        }
    }

    #[test]
    fn a_result_splices_the_record_members_between_its_own() {
        let result = CompanyResult {
            original_li_url: "https://uk.linkedin.com/company/audiense/".into(),
            record: RecordJson::from_record(&audiense()),
            source: RecordSource::Stored,
            fetched_at: "2026-11-22T10:00:00Z".parse().expect("timestamp"),
        };
        let json = serde_json::to_string(&result).expect("serializes");
        let response = CompanyDataResponse {
            message: "Success".into(),
            status_code: 200,
            results: vec![result.clone(), result.clone()],
            unresolved: vec![UnresolvedUrl {
                original_li_url: "x".into(),
                error: UnresolvedCode::FetchFailed,
                message: "m".into(),
                retry_after_seconds: None,
            }],
        };
        assert_eq!(
            response.to_json().expect("writes"),
            serde_json::to_vec(&response).expect("serializes"),
            "the copying writer and serde agree byte for byte"
        );
        let spaced =
            RecordJson::from_stored(" { \"company_name\" : \"A\" } ".into()).expect("valid");
        let spaced_result = CompanyResult {
            record: spaced,
            ..result.clone()
        };
        let one = CompanyDataResponse {
            results: vec![spaced_result],
            ..response.clone()
        };
        let written: serde_json::Value =
            serde_json::from_slice(&one.to_json().expect("writes")).expect("valid JSON");
        assert_eq!(written["results"][0]["company_name"], "A");
        assert_eq!(
            json,
            r#"{"original_li_url":"https://uk.linkedin.com/company/audiense/","company_name":"Audiense \"quoted\" é","headquarters":{"locality":"London"},"source":"stored","fetched_at":"2026-11-22T10:00:00Z"}"#
        );
        let back: CompanyResult = serde_json::from_str(&json).expect("parses");
        assert_eq!(back, result);
        assert_eq!(back.record.to_record().expect("record"), audiense());
    }
}
