//! [`RecordJson`]: a record kept as the JSON text it is stored and answered as.

use std::borrow::Cow;
use std::sync::Arc;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use crate::CompanyRecord;

/// The version of [`CompanyRecord`]'s JSON shape. Bump it when a member is renamed or changes type, so that
/// stores convert records kept in the older shape (through [`CompanyRecord`]) instead of answering them as kept.
pub const RECORD_FORMAT: u32 = 1;

/// A [`CompanyRecord`] serialized as a JSON object, kept as text.
///
/// A stored record is answered without being parsed into a [`CompanyRecord`] and written again: the members
/// pass through as the text they were stored as, which is what makes a stored answer cheap. Cloning shares the
/// text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordJson(Arc<str>);

/// Text that is not a JSON object cannot be a record.
#[derive(Debug, thiserror::Error)]
#[error("a stored record is not a JSON object: {0}")]
pub struct NotARecord(#[source] serde_json::Error);

impl RecordJson {
    /// The record as JSON (the same text its `Serialize` gives).
    pub fn from_record(record: &CompanyRecord) -> Self {
        // A `CompanyRecord` always serializes: its maps have string keys and it holds no non-finite floats
        // (serde_json writes those as null).
        Self(
            serde_json::to_string(record)
                .unwrap_or_else(|_| "{}".to_owned())
                .into(),
        )
    }

    /// Text kept by [`RecordJson::as_str`] earlier (e.g. read back from a store), checked to be one JSON object.
    ///
    /// # Errors
    /// [`NotARecord`] when the text is not a single JSON object.
    pub fn from_stored(text: String) -> Result<Self, NotARecord> {
        // Validates the whole text (values are skipped, not built), so a damaged row cannot corrupt an answer.
        Members::of(&text).map_err(NotARecord)?;
        Ok(Self(text.into()))
    }

    /// Text made of a valid record's members (e.g. a selection of them, as field selection makes it), taken
    /// without checking it again: the caller vouches that it is one JSON object.
    pub fn from_members_text(text: String) -> Self {
        Self(text.into())
    }

    /// The record, parsed.
    ///
    /// # Errors
    /// When the text does not match the record's shape (never for text made by [`RecordJson::from_record`]).
    pub fn to_record(&self) -> Result<CompanyRecord, serde_json::Error> {
        serde_json::from_str(&self.0)
    }

    /// The JSON text: one object.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text of the object's members: what lies between its braces, without surrounding whitespace.
    pub fn members_text(&self) -> &str {
        let text = self.0.trim();
        text.strip_prefix('{')
            .and_then(|t| t.strip_suffix('}'))
            .unwrap_or_default()
            .trim()
    }

    /// The object's members in order, each value as its raw JSON text.
    ///
    /// # Errors
    /// When the text is not one JSON object (never for a `RecordJson` made here).
    pub fn members(&self) -> Result<Members<'_>, serde_json::Error> {
        Members::of(&self.0)
    }
}

/// The top-level members of a JSON object, in order: each name, and its value as raw JSON text (unparsed).
pub struct Members<'a>(pub Vec<(Cow<'a, str>, &'a RawValue)>);

impl<'a> Members<'a> {
    /// The members of the object `text`.
    ///
    /// # Errors
    /// When `text` is not one JSON object.
    pub fn of(text: &'a str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct InOrder;
        impl<'de> Visitor<'de> for InOrder {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::with_capacity(map.size_hint().unwrap_or(32));
                // Names arrive owned (serde's `Cow<str>` does not borrow); values borrow the text.
                while let Some(member) = map.next_entry::<Cow<'de, str>, &'de RawValue>()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(InOrder)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Address;

    fn audiense() -> CompanyRecord {
        CompanyRecord {
            company_name: Some("Audiense \"quoted\" \u{e9}".into()),
            headquarters: Some(Address {
                locality: Some("London".into()),
                ..Address::default()
            }),
            ..CompanyRecord::default()
        }
    }

    #[test]
    fn stored_text_must_be_one_object() {
        let kept = RecordJson::from_record(&audiense());
        let again = RecordJson::from_stored(kept.as_str().to_owned()).expect("valid");
        assert_eq!(again, kept);
        for damaged in ["", "[]", "{\"a\":1", "{\"a\":1} {}", "null", "{\"a\":tru}"] {
            assert!(
                RecordJson::from_stored(damaged.to_owned()).is_err(),
                "{damaged:?} was accepted"
            );
        }
    }
}
