//! Reading a request body as one JSON object and reporting what is wrong with it: [`InvalidRequest`] (every
//! problem, each a [`Problem`] at a JSON Pointer) and the helpers every body's rules share to describe a value.

use std::fmt;

use serde_json::{Map, Value};

use crate::Problem;

/// The most problems one 400 lists; past it, a last problem says there are more. A 16 MiB job body of 100,000
/// wrong URLs (or a million unknown members) would otherwise be answered with hundreds of megabytes, for any
/// caller with a key, free test keys included.
pub const MAX_PROBLEMS: usize = 1000;

/// Longest string echoed back in a [`Problem::value`].
const ECHO_CHARS: usize = 200;

/// A request body that cannot be served, with every problem found in it.
#[derive(Clone, Debug, PartialEq)]
pub struct InvalidRequest {
    /// The problems, one per place, in the order the body sent its members (whole-body problems first); at most
    /// [`MAX_PROBLEMS`], then one that says there are more.
    pub problems: Vec<Problem>,
}

impl fmt::Display for InvalidRequest {
    /// One sentence per problem: `/liUrls/2 ("http://x"): <reason>. Fix: <fix>.`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let count = self.problems.len();
        write!(
            f,
            "The request body has {count} problem{}:",
            if count == 1 { "" } else { "s" }
        )?;
        for problem in &self.problems {
            let place = if problem.pointer.is_empty() {
                "body"
            } else {
                &problem.pointer
            };
            write!(f, " {place}")?;
            if let Some(value) = &problem.value {
                write!(f, " ({value})")?;
            }
            write!(f, ": {}. Fix: {}.", problem.reason, problem.fix)?;
        }
        Ok(())
    }
}

impl std::error::Error for InvalidRequest {}

/// The body as one JSON object (duplicate member names refused), or the one problem that it is not; `example`
/// is the fix offered. Every request body of the API is read through it, including those whose rules live in
/// other crates (an account's settings in credit-ledger).
///
/// # Errors
/// [`InvalidRequest`] with one problem at the pointer `` (the whole body): empty, not JSON, or not an object.
pub fn json_object(body: &[u8], example: &str) -> Result<Map<String, Value>, InvalidRequest> {
    let one = |reason: String| InvalidRequest {
        problems: vec![Problem {
            pointer: String::new(),
            index: None,
            value: None,
            reason,
            fix: example.to_owned(),
        }],
    };
    if body.iter().all(u8::is_ascii_whitespace) {
        return Err(one("the body is empty".into()));
    }
    let value: Value = serde_json::from_slice::<StrictValue>(body)
        .map_err(|e| one(format!("the body is not valid JSON ({e})")))?
        .0;
    match value {
        Value::Object(object) => Ok(object),
        other => Err(one(format!(
            "the body is a JSON {}, not an object",
            type_name(&other)
        ))),
    }
}

/// A JSON value that refuses duplicate member names at any depth (RFC 8259 leaves their meaning open; taking
/// the last one silently could bill a request the caller did not mean).
struct StrictValue(Value);

impl<'de> serde::Deserialize<'de> for StrictValue {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let StrictValue(value) = map.next_value()?;
            if members.insert(key.clone(), value).is_some() {
                return Err(serde::de::Error::custom(format!(
                    "the member `{key}` appears twice in one object"
                )));
            }
        }
        Ok(Value::Object(members))
    }
}

pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The value to echo in a problem: long strings cut, containers summarized.
pub(crate) fn echo(value: &Value) -> Value {
    match value {
        Value::String(text) if text.chars().count() > ECHO_CHARS => Value::String(format!(
            "{}…",
            text.chars().take(ECHO_CHARS).collect::<String>()
        )),
        Value::Array(items) => Value::String(format!("[array of {} items]", items.len())),
        Value::Object(_) => Value::String("{object}".into()),
        other => other.clone(),
    }
}

/// `key` as a JSON Pointer segment (RFC 6901: `~` as `~0`, `/` as `~1`), copied only when it has either.
pub(crate) fn escape_pointer(key: &str) -> std::borrow::Cow<'_, str> {
    if key.contains(['~', '/']) {
        key.replace('~', "~0").replace('/', "~1").into()
    } else {
        key.into()
    }
}
