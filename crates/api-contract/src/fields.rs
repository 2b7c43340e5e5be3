//! Field selection (`fields` on a request or a bulk job) and the caller's metadata carried beside a job's input.
//!
//! The names a selection may use are the record type's own serialized member names, read from its serde derive
//! ([`CompanyRecord::members`]), so a member added to the record is selectable without a second list.

use std::fmt;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::{InvalidRequest, Problem};
use company_model::Members;
use company_model::{CompanyRecord, RecordJson};

/// Members of every answer, whatever `fields` names: which input it answers (`original_li_url`) and which page
/// it is (`final_li_url`).
pub const IDENTITY_MEMBERS: [&str; 2] = ["original_li_url", "final_li_url"];

/// Members of a result that are not the page's record (where it came from, when): kept with every selection, and
/// accepted in `fields` (naming them changes nothing).
pub const RESULT_MEMBERS: [&str; 3] = ["original_li_url", "source", "fetched_at"];

/// Most names one `fields` list may hold (repeats allowed; more than every member's name twice over). Every list a
/// request may send has a bound, so the work of checking a body is bounded by the contract, not the body's size.
pub const MAX_FIELD_NAMES: usize = 100;

/// Most members an [`InputMetadata`] object may have.
pub const MAX_METADATA_MEMBERS: usize = 8;
/// Longest member name of an [`InputMetadata`], in characters (at least 1).
pub const MAX_METADATA_NAME_CHARS: usize = 32;
/// Longest string value of an [`InputMetadata`], in characters.
pub const MAX_METADATA_TEXT_CHARS: usize = 80;

/// A validated `fields` list: the record members each answer keeps. `final_li_url` is always kept; the result's
/// own members (`original_li_url`, `source`, `fetched_at`) are not the record's and are always written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordFields {
    /// Kept record members, in the record's order, without repeats.
    kept: Vec<&'static str>,
}

impl RecordFields {
    /// Every name `fields` accepts, in order: the result's `original_li_url`, the record's members, then
    /// `source` and `fetched_at`. What an unknown name's error lists and the published schema's `enum`.
    pub fn valid_names() -> &'static [&'static str] {
        static NAMES: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
            let mut names = vec![RESULT_MEMBERS[0]];
            names.extend(CompanyRecord::members());
            names.extend(&RESULT_MEMBERS[1..]);
            names
        });
        &NAMES
    }

    /// The selection of `names` (any order, repeats allowed; the identity members are added).
    ///
    /// # Errors
    /// [`UnknownField`] for the first name that is not in [`RecordFields::valid_names`].
    pub fn new<S: AsRef<str>>(names: &[S]) -> Result<Self, UnknownField> {
        if let Some(unknown) = names
            .iter()
            .map(AsRef::as_ref)
            .find(|name| !Self::valid_names().contains(name))
        {
            return Err(UnknownField(unknown.to_owned()));
        }
        Ok(Self::keeping(|member| {
            names.iter().any(|name| name.as_ref() == member)
        }))
    }

    /// The record members `named` says yes to, their qualifiers ([`CompanyRecord::QUALIFIERS`]) and the identity
    /// members, in the record's order.
    fn keeping(named: impl Fn(&str) -> bool) -> Self {
        let qualifies_named = |member: &str| {
            CompanyRecord::QUALIFIERS
                .iter()
                .any(|(qualifier, of)| *qualifier == member && named(of))
        };
        let kept = CompanyRecord::members()
            .iter()
            .copied()
            .filter(|member| {
                IDENTITY_MEMBERS.contains(member) || named(member) || qualifies_named(member)
            })
            .collect();
        Self { kept }
    }

    /// `record` as an answer with `fields` shows it: only the kept members with a selection
    /// ([`RecordFields::select`]), whole without one. What every answer that carries records calls.
    pub fn apply(fields: Option<&Self>, record: &RecordJson) -> RecordJson {
        fields.map_or_else(|| record.clone(), |fields| fields.select(record))
    }

    /// The kept record members, in the record's order (always with `final_li_url`).
    pub fn kept(&self) -> &[&'static str] {
        &self.kept
    }

    /// Whether the record member `member` is kept.
    pub fn keeps(&self, member: &str) -> bool {
        self.kept.contains(&member)
    }

    /// The record with only the kept members, their values copied as text (not parsed). A text that is not a
    /// record object is answered as it is.
    pub fn select(&self, record: &RecordJson) -> RecordJson {
        let Ok(members) = record.members() else {
            return record.clone();
        };
        let mut text = String::with_capacity(record.as_str().len().min(4096));
        text.push('{');
        for (name, value) in &members.0 {
            if self.keeps(name) {
                if text.len() > 1 {
                    text.push(',');
                }
                // Names of a record's members need no escaping, but writing them through serde keeps that a
                // property of serde_json rather than of this loop.
                text.push_str(&serde_json::to_string(name.as_ref()).unwrap_or_default());
                text.push(':');
                text.push_str(value.get());
            }
        }
        text.push('}');
        // Members of a valid object, copied whole, make a valid object: no need to check the text again.
        RecordJson::from_members_text(text)
    }

    /// The selection as stored with a job: the kept names joined with `,`.
    pub fn to_stored(&self) -> String {
        self.kept.join(",")
    }

    /// A selection written by [`RecordFields::to_stored`]; names that are no longer members are dropped.
    pub fn from_stored(text: &str) -> Self {
        Self::keeping(|member| text.split(',').any(|name| name == member))
    }

    /// The selection a checked body's `fields` names, if it sent one. The body's schema has already refused a
    /// name that is not in [`RecordFields::valid_names`]; one that still is not (a body not checked against
    /// it) is refused here, at its place.
    ///
    /// # Errors
    /// [`InvalidRequest`] with a problem at `/fields/<index>` for the first unknown name.
    pub(crate) fn checked(names: Option<&[String]>) -> Result<Option<Self>, InvalidRequest> {
        let Some(names) = names else {
            return Ok(None);
        };
        Self::new(names).map(Some).map_err(|UnknownField(name)| {
            let index = names.iter().position(|sent| *sent == name);
            InvalidRequest {
                problems: vec![Problem {
                    pointer: format!("/{FIELDS}/{}", index.unwrap_or_default()),
                    index,
                    value: Some(Value::String(name.clone())),
                    reason: format!("`{name}` is not a member of the record"),
                    fix: format!(
                        "name members of the record: {}",
                        Self::valid_names().join(", ")
                    ),
                }],
            }
        })
    }
}

/// The request member that selects fields.
pub(crate) const FIELDS: &str = "fields";

/// A name in `fields` that is not a member of the record.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a member of the record; the names are {names}", names = RecordFields::valid_names().join(", "))]
pub struct UnknownField(pub String);

/// The caller's JSON object carried beside one input of a bulk job (`{"liUrl": …, "metadata": {…}}`) and given
/// back unchanged beside that input's answer, in NDJSON as the object and in CSV as a `metadata.<name>` column per
/// member. Flat, so each member is a column: at most [`MAX_METADATA_MEMBERS`] members, names of 1 to
/// [`MAX_METADATA_NAME_CHARS`] characters, each value a string of up to [`MAX_METADATA_TEXT_CHARS`] characters, a
/// number, a boolean or null — under 1 KB of JSON for text that needs no escapes. Kept as compact JSON text,
/// members in the order sent.
#[derive(Clone, PartialEq, Eq)]
pub struct InputMetadata(Box<str>);

impl InputMetadata {
    /// The prefix of a metadata member's column in a job's CSV: `metadata.<name>`.
    pub const COLUMN_PREFIX: &str = "metadata.";

    /// The metadata of a raw JSON value as sent, compacted.
    ///
    /// # Errors
    /// A reason (for a [`Problem`]) when the value is not an object within the bounds above.
    pub fn from_raw(raw: &RawValue) -> Result<Self, String> {
        let text = raw.get();
        let members =
            Members::of(text).map_err(|_| "`metadata` is not a JSON object".to_owned())?;
        if members.0.len() > MAX_METADATA_MEMBERS {
            return Err(format!(
                "`metadata` has {} members, over the limit of {MAX_METADATA_MEMBERS}",
                members.0.len()
            ));
        }
        for (name, value) in &members.0 {
            let chars = name.chars().count();
            if chars == 0 || chars > MAX_METADATA_NAME_CHARS {
                return Err(format!(
                    "the `metadata` member name \"{name}\" has {chars} characters, not 1 to {MAX_METADATA_NAME_CHARS}"
                ));
            }
            match serde_json::from_str::<Value>(value.get()) {
                Ok(Value::String(text)) if text.chars().count() > MAX_METADATA_TEXT_CHARS => {
                    return Err(format!(
                        "`metadata.{name}` has {} characters, over the limit of {MAX_METADATA_TEXT_CHARS}",
                        text.chars().count()
                    ));
                }
                Ok(Value::Array(_) | Value::Object(_)) => {
                    return Err(format!(
                        "`metadata.{name}` is nested; each value must be a string, number, boolean or null"
                    ));
                }
                Ok(_) => {}
                Err(e) => return Err(format!("`metadata.{name}` is not valid JSON ({e})")),
            }
        }
        let mut compact = Vec::with_capacity(text.len());
        serde_transcode::transcode(
            &mut serde_json::Deserializer::from_str(text),
            &mut serde_json::Serializer::new(&mut compact),
        )
        .map_err(|e| format!("`metadata` is not valid JSON ({e})"))?;
        // serde_json writes UTF-8; the object was read as one above.
        String::from_utf8(compact)
            .map(|text| Self(text.into_boxed_str()))
            .map_err(|e| e.to_string())
    }

    /// Metadata kept by [`InputMetadata::as_str`] earlier; `None` unless it is one JSON object.
    pub fn from_stored(text: String) -> Option<Self> {
        let trimmed = text.trim();
        (trimmed.starts_with('{') && serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok())
            .then(|| Self(text.into_boxed_str()))
    }

    /// The compact JSON text of the object.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The object's top-level member names, in the order sent.
    pub fn names(&self) -> Vec<String> {
        Members::of(&self.0)
            .map(|members| {
                members
                    .0
                    .into_iter()
                    .map(|(name, _)| name.into_owned())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The members `names` as CSV cells, in that order (the object read once): a string as it is, `null` or
    /// absent as empty, anything else as its compact JSON text.
    pub fn cells(&self, names: &[String]) -> Vec<String> {
        let members = Members::of(&self.0).map(|m| m.0).unwrap_or_default();
        names
            .iter()
            .map(
                |name| match members.iter().find(|(member, _)| member == name) {
                    None => String::new(),
                    Some((_, value)) if value.get() == "null" => String::new(),
                    Some((_, value)) => serde_json::from_str::<String>(value.get())
                        .unwrap_or_else(|_| value.get().to_owned()),
                },
            )
            .collect()
    }
}

impl fmt::Debug for InputMetadata {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_are_the_record_s_serialized_names() {
        let members = CompanyRecord::members();
        assert_eq!(members.first(), Some(&"company_name"));
        assert!(members.contains(&"type"), "{members:?}");
        assert!(!members.contains(&"company_type"), "{members:?}");
        // Every member a full record writes is one of them.
        let record = CompanyRecord {
            company_name: Some("a".into()),
            company_type: Some("b".into()),
            specialties: vec!["c".into()],
            ..CompanyRecord::default()
        };
        let value = serde_json::to_value(&record).expect("json");
        for name in value.as_object().expect("object").keys() {
            assert!(members.contains(&name.as_str()), "{name}");
        }
    }

    #[test]
    fn a_selection_keeps_the_named_members_and_the_identity() {
        let record = RecordJson::from_stored(
            r#"{"company_name":"Acme","final_li_url":"https://www.linkedin.com/company/acme","website":"https://acme.test","follower_count":5}"#
                .into(),
        )
        .expect("record");
        let fields =
            RecordFields::new(&["follower_count", "company_name", "source"]).expect("valid");
        assert_eq!(
            fields.kept(),
            ["company_name", "final_li_url", "follower_count"]
        );
        assert_eq!(
            fields.select(&record).as_str(),
            r#"{"company_name":"Acme","final_li_url":"https://www.linkedin.com/company/acme","follower_count":5}"#
        );
        assert_eq!(RecordFields::from_stored(&fields.to_stored()), fields);
        let empty: [&str; 0] = [];
        assert_eq!(
            RecordFields::new(&empty).expect("valid").kept(),
            ["final_li_url"]
        );
        for (sent, meant) in [
            ("companyName", Some("company_name")),
            ("compny_name", Some("company_name")),
            ("Followers_Count", Some("follower_count")),
            ("employees", None),
        ] {
            let names = RecordFields::valid_names();
            assert_eq!(crate::validation::closest(sent, names), meant, "{sent}");
        }
        let unknown = RecordFields::new(&["company_name", "employees"]).expect_err("unknown");
        assert_eq!(unknown.0, "employees");
        assert!(unknown.to_string().contains("follower_count"), "{unknown}");
    }

    #[test]
    fn a_count_comes_with_whether_it_is_a_floor_and_where_it_was_read() {
        let record = RecordJson::from_stored(
            r#"{"company_name":"Google","final_li_url":"https://www.linkedin.com/company/google","job_count":2000,"job_count_is_lower_bound":true,"provenance":{"job_count":{"source_url":"https://www.linkedin.com/jobs/search?f_C=1441","fetched_at":"2026-11-28T10:00:00.000Z"}}}"#
                .into(),
        )
        .expect("record");
        let fields = RecordFields::new(&["job_count"]).expect("valid");
        assert_eq!(
            fields.kept(),
            [
                "final_li_url",
                "job_count",
                "job_count_is_lower_bound",
                "provenance"
            ]
        );
        let selected = fields.select(&record);
        assert!(
            selected
                .as_str()
                .contains(r#""job_count_is_lower_bound":true"#)
                && selected.as_str().contains(r#""provenance":{"job_count""#),
            "{}",
            selected.as_str()
        );
        assert_eq!(RecordFields::from_stored(&fields.to_stored()), fields);
        // A qualifier named alone keeps only itself.
        assert_eq!(
            RecordFields::new(&["job_count_is_lower_bound"])
                .expect("valid")
                .kept(),
            ["final_li_url", "job_count_is_lower_bound"]
        );
    }

    #[test]
    fn metadata_is_compacted_in_order_and_bounded() {
        let raw = |text: &str| -> Box<RawValue> { serde_json::from_str(text).expect("raw") };
        let metadata = InputMetadata::from_raw(&raw(
            "{ \"z\": 1.50,\n \"a\": null, \"id\": \"00123\", \"ok\": true }",
        ))
        .expect("object");
        assert_eq!(
            metadata.as_str(),
            r#"{"z":1.5,"a":null,"id":"00123","ok":true}"#
        );
        assert_eq!(metadata.names(), ["z", "a", "id", "ok"]);
        let asked = ["id", "z", "a", "missing", "ok"].map(str::to_owned);
        assert_eq!(metadata.cells(&asked), ["00123", "1.5", "", "", "true"]);
        for (wrong, says) in [
            ("[1]".to_owned(), "not a JSON object"),
            (r#"{"a":{"b":1}}"#.to_owned(), "nested"),
            (r#"{"a":[1]}"#.to_owned(), "nested"),
            (r#"{"":1}"#.to_owned(), "not 1 to 32"),
            (format!(r#"{{"{}":1}}"#, "n".repeat(33)), "not 1 to 32"),
            (format!(r#"{{"a":"{}"}}"#, "é".repeat(81)), "81 characters"),
            (
                format!(
                    "{{{}}}",
                    (0..9)
                        .map(|i| format!(r#""m{i}":{i}"#))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                "9 members",
            ),
        ] {
            let error = InputMetadata::from_raw(&raw(&wrong)).expect_err(&wrong);
            assert!(error.contains(says), "{wrong}: {error}");
        }
        // The largest metadata the bounds allow, in text without escapes, stays under 1 KB.
        let largest = format!(
            "{{{}}}",
            (0..MAX_METADATA_MEMBERS)
                .map(|i| format!(
                    r#""{}":"{}""#,
                    i.to_string().repeat(MAX_METADATA_NAME_CHARS),
                    "v".repeat(MAX_METADATA_TEXT_CHARS)
                ))
                .collect::<Vec<_>>()
                .join(",")
        );
        let largest = InputMetadata::from_raw(&raw(&largest)).expect("within bounds");
        assert!(largest.as_str().len() < 1024, "{}", largest.as_str().len());
    }
}
