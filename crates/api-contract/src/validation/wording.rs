//! A failing JSON Schema keyword in words: each failure of a body's schema becomes a [`Problem`] whose reason
//! says what is wrong and whose fix says what to send instead, both written from the schema around the failing
//! keyword (its bounds, its values, its `examples`, whether the member may be left out), so a bound changed on
//! a type changes its message too.

use jsonschema::error::ValidationErrorKind;
use serde_json::Value;

use crate::Problem;
use crate::problems::{MAX_PROBLEMS, echo, escape_pointer, type_name};
use crate::schema::{PAGE_URL, WEBHOOK_URL};

/// Turns one failure into problems, each with the keyword that failed. A `oneOf`/`anyOf` failure is explained
/// by the branch that takes the value's type (a job input that is an object is told what its object lacks).
pub(super) fn explain(
    root: &Value,
    error: &jsonschema::ValidationError<'_>,
    out: &mut dyn FnMut(&str, Problem),
) {
    let pointer = error.instance_path().as_str().to_owned();
    let keyword_path = error.schema_path().as_str();
    let (node_path, keyword) = keyword_path.rsplit_once('/').unwrap_or(("", keyword_path));
    let node = root.pointer(node_path).unwrap_or(&Value::Null);
    let sent = error.instance();
    let item = is_list_item(node_path);
    let subject = subject(&pointer, item);
    let fix = || fix_for(root, node_path, &pointer);
    let problem = |reason: String, fix: String| problem_at(&pointer, Some(echo(sent)), reason, fix);
    match error.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let allowed: Vec<&str> = node
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(String::as_str).collect())
                .unwrap_or_default();
            // One problem each, up to the most a 400 lists (a million unknown members make no million problems).
            for name in unexpected.iter().take(MAX_PROBLEMS + 1) {
                let at = format!("{pointer}/{}", escape_pointer(name));
                out(
                    "additionalProperties",
                    problem_at(
                        &at,
                        None,
                        format!("unknown property `{name}`"),
                        suggest(name, &allowed),
                    ),
                );
            }
        }
        ValidationErrorKind::Required { property } => {
            let name = property.as_str().unwrap_or_default();
            // `dependentRequired`: a member sent that needs `name` beside it, reported where it was sent.
            let needs = (keyword == "dependentRequired")
                .then(|| node.get(keyword).and_then(Value::as_object))
                .flatten()
                .and_then(|rules| {
                    rules.iter().find(|(member, needed)| {
                        sent.get(member.as_str()).is_some()
                            && needed
                                .as_array()
                                .is_some_and(|n| n.iter().any(|n| n.as_str() == Some(name)))
                    })
                })
                .map(|(member, _)| member.as_str());
            let (at, reason, fix) = if let Some(sent) = needs {
                (
                    format!("{pointer}/{}", escape_pointer(sent)),
                    format!("`{sent}` is taken only beside `{name}`"),
                    format!("send `{name}` too, or leave `{sent}` out"),
                )
            } else {
                let fix = match node.get("properties").and_then(|p| p.get(name)) {
                    Some(member) => {
                        format!("add \"{name}\": {}{}", noun(member), example(name, member))
                    }
                    None => format!("add `{name}`"),
                };
                let reason = format!("the required property `{name}` is missing");
                (format!("{pointer}/{}", escape_pointer(name)), reason, fix)
            };
            out("required", problem_at(&at, None, reason, fix));
        }
        ValidationErrorKind::AnyOf { context } | ValidationErrorKind::OneOfNotValid { context } => {
            let keyword = if matches!(error.kind(), ValidationErrorKind::AnyOf { .. }) {
                "anyOf"
            } else {
                "oneOf"
            };
            let branches = node.get(keyword).and_then(Value::as_array);
            // The branch that takes the value's type, when one does: its failures say what is wrong.
            let fitting = branches.and_then(|branches| {
                branches
                    .iter()
                    .position(|branch| admits_type(branch, sent))
                    .filter(|_| branches.iter().filter(|b| admits_type(b, sent)).count() == 1)
            });
            match fitting.and_then(|index| context.get(index)) {
                Some(errors) if !errors.is_empty() => {
                    for inner in errors {
                        explain(root, inner, out);
                    }
                }
                _ if branches
                    .is_some_and(|b| !b.iter().any(|branch| admits_type(branch, sent))) =>
                {
                    let mut kinds: Vec<String> = branches
                        .map(|b| b.iter().map(types_noun).filter(|k| !k.is_empty()).collect())
                        .unwrap_or_default();
                    kinds.dedup();
                    let reason =
                        format!("{subject} is {}, not {}", a_type(sent), kinds.join(" or "));
                    out(keyword, problem(reason, fix()));
                }
                _ => {
                    let reason = match (values(node), required_only(branches)) {
                        (Some(_), _) => {
                            let shown = sent
                                .as_str()
                                .map_or_else(|| sent.to_string(), str::to_owned);
                            format!(
                                "`{shown}` is not one of the values {}",
                                subject_of(&pointer)
                            )
                        }
                        (None, Some(names)) if names.len() == 2 => {
                            format!("{subject} has neither `{}` nor `{}`", names[0], names[1])
                        }
                        (None, Some(names)) => {
                            format!("{subject} has none of `{}`", names.join("`, `"))
                        }
                        (None, None) => format!("{subject} is none of: {}", noun(node)),
                    };
                    let fix = match required_only(branches) {
                        Some(names) => format!("send `{}`{}", names.join("` or `"), examples(node)),
                        None => fix(),
                    };
                    let value = (!sent.is_object()).then(|| echo(sent));
                    out(keyword, problem_at(&pointer, value, reason, fix));
                }
            }
        }
        ValidationErrorKind::Type { .. } => {
            let reason = if sent.is_null() {
                format!("{subject} is null, not {}", types_noun(node))
            } else {
                format!("{subject} is {}, not {}", a_type(sent), types_noun(node))
            };
            out(keyword, problem(reason, fix()));
        }
        ValidationErrorKind::Minimum { .. }
        | ValidationErrorKind::Maximum { .. }
        | ValidationErrorKind::ExclusiveMinimum { .. }
        | ValidationErrorKind::ExclusiveMaximum { .. } => {
            let reason = match (node.get("minimum"), node.get("maximum")) {
                (Some(low), Some(high)) => {
                    format!("{subject} is outside {} to {}", number(low), number(high))
                }
                _ => format!("{subject} is out of range"),
            };
            out(keyword, problem(reason, fix()));
        }
        ValidationErrorKind::MultipleOf { .. } => {
            out(
                keyword,
                problem(format!("{subject} is not a whole number"), fix()),
            );
        }
        ValidationErrorKind::MinItems { limit } => {
            let count = sent.as_array().map_or(0, Vec::len);
            let reason = if count == 0 {
                format!("{subject} is empty")
            } else {
                format!("{subject} has {count} items, fewer than {limit}")
            };
            out(keyword, problem_at(&pointer, None, reason, fix()));
        }
        ValidationErrorKind::MaxItems { .. } | ValidationErrorKind::MaxProperties { .. } => {
            let count = sent.as_array().map_or_else(
                || sent.as_object().map_or(0, serde_json::Map::len),
                Vec::len,
            );
            out(keyword, too_many(root, node_path, &pointer, count));
        }
        ValidationErrorKind::UniqueItems => {
            // Name the first repeat, where the caller can see it.
            let items = sent.as_array().map(Vec::as_slice).unwrap_or_default();
            // By each item's text, in one pass: a long list costs no more than reading it.
            let mut seen = std::collections::HashSet::new();
            let repeat = items.iter().position(|item| !seen.insert(item.to_string()));
            let at = repeat.map_or_else(|| pointer.clone(), |i| format!("{pointer}/{i}"));
            let item = repeat.map(|i| &items[i]);
            let reason = item.map_or_else(
                || format!("{subject} lists an item twice"),
                |v| {
                    format!(
                        "`{}` is listed twice",
                        v.as_str().map_or_else(|| v.to_string(), str::to_owned)
                    )
                },
            );
            out(
                keyword,
                problem_at(
                    &at,
                    item.map(echo),
                    reason,
                    "list each item once".to_owned(),
                ),
            );
        }
        ValidationErrorKind::MinLength { limit } => {
            let reason = if sent.as_str().is_some_and(str::is_empty) {
                format!("{subject} is empty")
            } else {
                format!("{subject} is shorter than {limit} characters")
            };
            out(keyword, problem(reason, fix()));
        }
        ValidationErrorKind::MaxLength { limit } => {
            let length = sent.as_str().map_or(0, |s| s.chars().count());
            out(
                keyword,
                problem(
                    format!("{subject} is {length} characters long, over the limit of {limit}"),
                    fix(),
                ),
            );
        }
        ValidationErrorKind::Pattern { pattern } => {
            let reason = if pattern == NOT_BLANK {
                format!("{subject} is blank")
            } else {
                format!("{subject} does not match the pattern {pattern}")
            };
            out(keyword, problem(reason, fix()));
        }
        ValidationErrorKind::Enum { options } => {
            let names: Vec<&str> = options
                .as_array()
                .map(|o| o.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let shown = sent
                .as_str()
                .map_or_else(|| sent.to_string(), str::to_owned);
            let guess = sent
                .as_str()
                .and_then(|s| closest(s, &names))
                .map(|g| format!("did you mean `{g}`? "))
                .unwrap_or_default();
            out(
                keyword,
                problem(
                    format!(
                        "`{shown}` is not one of the values {}",
                        subject_of(&pointer)
                    ),
                    format!("{guess}{}", fix()),
                ),
            );
        }
        ValidationErrorKind::PropertyNames { error: inner } => {
            let name = inner
                .instance()
                .as_str()
                .map(str::to_owned)
                .unwrap_or_default();
            let at = format!("{pointer}/{}", escape_pointer(&name));
            let rules = keyword_path
                .find("/propertyNames")
                .and_then(|at| root.pointer(&keyword_path[..at + "/propertyNames".len()]));
            // A rule that says it in words (a `description`) is worded so; else its schema's noun.
            let rule = rules.map_or_else(
                || "a valid name".to_owned(),
                |rules| {
                    rules
                        .get("description")
                        .and_then(Value::as_str)
                        .map_or_else(|| noun(rules), str::to_owned)
                },
            );
            out(
                keyword,
                problem_at(
                    &at,
                    None,
                    format!("the member name \"{name}\" is not {rule}"),
                    format!("name each member of {subject} with {rule}"),
                ),
            );
        }
        _ => out(keyword, problem(format!("{subject}: {error}"), fix())),
    }
}

/// The problem of a list longer than its schema's `maxItems`, or an object with more members than its
/// `maxProperties`, at `pointer`.
pub(super) fn too_many(root: &Value, node_path: &str, pointer: &str, count: usize) -> Problem {
    let node = root.pointer(node_path).unwrap_or(&Value::Null);
    let subject = subject(pointer, is_list_item(node_path));
    let (limit, what) = match node.get("maxItems") {
        Some(limit) => (Some(limit), "items"),
        None => (node.get("maxProperties"), "members"),
    };
    let limit = limit.map_or_else(|| "its bound".to_owned(), Value::to_string);
    let reason = format!("{subject} has {count} {what}, over the limit of {limit}");
    problem_at(pointer, None, reason, fix_for(root, node_path, pointer))
}

/// The pattern of a string that must not be blank.
///
/// Some character that is not white space as Rust's `str::trim` counts it (Unicode `White_Space`): JSON Schema's
/// `\s` is ECMA-262's, which lacks U+0085, so it is named too. A string that matches is never empty once trimmed.
pub(crate) const NOT_BLANK: &str = r"[^\s\u0085]";

/// A problem at `pointer`; `index` is the list item it is in (`/liUrls/3/liUrl` is in item 3).
pub(super) fn problem_at(
    pointer: &str,
    value: Option<Value>,
    reason: String,
    fix: String,
) -> Problem {
    let index = pointer
        .split('/')
        .nth(2)
        .and_then(|segment| segment.parse().ok());
    Problem {
        pointer: pointer.to_owned(),
        index,
        value,
        reason,
        fix,
    }
}

/// Whether the schema at `node_path` is a list's item schema (`…/items`, or one branch of it), so the value is
/// a list item, not a member that happens to be named `0`.
fn is_list_item(node_path: &str) -> bool {
    let mut path = node_path;
    while let Some((rest, index)) = path.rsplit_once('/') {
        match rest.rsplit_once('/') {
            Some((parent, "oneOf" | "anyOf" | "allOf")) if index.parse::<usize>().is_ok() => {
                path = parent;
            }
            _ => break,
        }
    }
    path.ends_with("/items")
}

/// How a problem's text names the value at `pointer`: `` `maxAgeHours` ``, or `the item` in a list.
pub(super) fn subject(pointer: &str, item: bool) -> String {
    match pointer.rsplit('/').next() {
        Some(_) if item => "the item".to_owned(),
        Some(last) if !last.is_empty() => {
            format!("`{}`", last.replace("~1", "/").replace("~0", "~"))
        }
        _ => "the body".to_owned(),
    }
}

/// Whose values an enum lists: `` `fields` takes `` for an item of `fields`.
fn subject_of(pointer: &str) -> String {
    let named = pointer
        .split('/')
        .rfind(|s| !s.is_empty() && s.parse::<usize>().is_err());
    named.map_or_else(|| "taken here".to_owned(), |name| format!("`{name}` takes"))
}

/// The fix for a value at `pointer` that breaks the schema at `node_path`: what to send instead, and that a
/// member the body may leave out can be left out.
fn fix_for(root: &Value, node_path: &str, pointer: &str) -> String {
    let node = root.pointer(node_path).unwrap_or(&Value::Null);
    let last = pointer.rsplit('/').next().unwrap_or_default();
    if is_list_item(node_path) {
        return format!("send each item as {}", noun(node));
    }
    // A member's schema is `<object>/properties/<name>`: the object says whether it is required.
    let optional = node_path
        .strip_suffix(&format!("/properties/{last}"))
        .and_then(|object| root.pointer(object))
        .and_then(|object| object.get("required"))
        .and_then(Value::as_array)
        .is_some_and(|required| !required.iter().any(|r| r.as_str() == Some(last)));
    let fix = format!("send {}{}", noun(node), example(last, node));
    if optional {
        format!("{fix}, or leave `{last}` out")
    } else {
        fix
    }
}

/// `, e.g. "name": <first example>` when the schema gives one.
fn example(name: &str, schema: &Value) -> String {
    schema
        .get("examples")
        .and_then(|examples| examples.get(0))
        .map_or_else(String::new, |example| {
            format!(", e.g. \"{name}\": {example}")
        })
}

/// What a schema takes, in words: `a number from 0 to 24`, `an array of 1 to 200 items, each a page URL`.
pub(crate) fn noun(schema: &Value) -> String {
    let Some(object) = schema.as_object() else {
        return "a value".to_owned();
    };
    if let Some(names) = values(schema) {
        return format!("one of: {}", names.join(", "));
    }
    if let Some(branches) = object
        .get("oneOf")
        .or_else(|| object.get("anyOf"))
        .and_then(Value::as_array)
        && branches.iter().all(|b| b.get("type").is_some())
    {
        let options: Vec<String> = branches.iter().map(noun).collect();
        return options.join(", or ");
    }
    let types = types_of(schema);
    let mut words = Vec::new();
    for kind in types.iter().filter(|t| **t != "null") {
        words.push(match *kind {
            "array" => {
                let each = object
                    .get("items")
                    .map(|items| format!(", each {}", noun(items)))
                    .unwrap_or_default();
                let once = if object.get("uniqueItems") == Some(&Value::Bool(true)) {
                    ", each once"
                } else {
                    ""
                };
                format!(
                    "an array of {}items{each}{once}",
                    bounds(object.get("minItems"), object.get("maxItems"), "")
                )
            }
            "string" if object.contains_key(PAGE_URL) => {
                "a page URL (company, school or showcase)".to_owned()
            }
            "string" if object.contains_key(WEBHOOK_URL) => "an https URL".to_owned(),
            "string" => {
                let length = bounds(
                    object.get("minLength"),
                    object.get("maxLength"),
                    "characters",
                );
                let length = if length.is_empty() {
                    String::new()
                } else {
                    format!(" of {}", length.trim_end())
                };
                let blank = if object.get("pattern").and_then(Value::as_str) == Some(NOT_BLANK) {
                    " that is not blank"
                } else {
                    ""
                };
                format!("a string{length}{blank}")
            }
            "number" | "integer" => {
                let whole = if *kind == "integer" {
                    "a whole number"
                } else {
                    "a number"
                };
                match (
                    object.get("minimum").map(number),
                    object.get("maximum").map(number),
                ) {
                    (Some(low), Some(high)) => format!("{whole} from {low} to {high}"),
                    (Some(low), None) => format!("{whole} of at least {low}"),
                    (None, Some(high)) => format!("{whole} up to {high}"),
                    (None, None) => whole.to_owned(),
                }
            }
            "boolean" => "true or false".to_owned(),
            "object" => match object.get("properties").and_then(Value::as_object) {
                Some(members) if !members.is_empty() => {
                    let names: Vec<String> = members.keys().map(|k| format!("`{k}`")).collect();
                    format!("an object with {}", names.join(", "))
                }
                _ => {
                    let mut words = "a JSON object".to_owned();
                    if let Some(most) = object.get("maxProperties") {
                        words = format!("{words} of at most {most} members");
                    }
                    if let Some(names) = object.get("propertyNames") {
                        words = format!("{words}, each name {}", noun(names));
                    }
                    if let Some(values) =
                        object.get("additionalProperties").filter(|v| v.is_object())
                    {
                        words = format!("{words}, each value {}", noun(values));
                    }
                    words
                }
            },
            other => format!("a {other}"),
        });
    }
    if types.contains(&"null") {
        words.push("null".to_owned());
    }
    if words.is_empty() {
        "a value".to_owned()
    } else {
        words.join(", or ")
    }
}

/// The values a schema takes when it lists them: its `enum`, or a `oneOf` of `const`s (an enum whose values
/// have descriptions).
fn values(schema: &Value) -> Option<Vec<String>> {
    let shown = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.iter().map(shown).collect());
    }
    let branches = schema.get("oneOf").and_then(Value::as_array)?;
    branches
        .iter()
        .map(|branch| branch.get("const").map(shown))
        .collect()
}

/// The members named by branches that each only require one (`anyOf: [{required: [domain]}, {required:
/// [name]}]`: one of them must be sent).
fn required_only(branches: Option<&Vec<Value>>) -> Option<Vec<String>> {
    branches?
        .iter()
        .map(|branch| {
            match (
                branch.as_object(),
                branch.get("required").and_then(Value::as_array),
            ) {
                (Some(object), Some(required)) if object.len() == 1 && required.len() == 1 => {
                    required[0].as_str().map(str::to_owned)
                }
                _ => None,
            }
        })
        .collect()
}

/// `, e.g. <example>` from a schema's `examples`, each one.
fn examples(schema: &Value) -> String {
    let Some(examples) = schema.get("examples").and_then(Value::as_array) else {
        return String::new();
    };
    let shown: Vec<String> = examples.iter().map(Value::to_string).collect();
    format!(", e.g. {}", shown.join(" or "))
}

/// A value's JSON type with its article: `a string`, `an array`.
fn a_type(value: &Value) -> String {
    match type_name(value) {
        kind @ ("array" | "object") => format!("an {kind}"),
        kind => format!("a {kind}"),
    }
}

/// A bound as people write it: `24`, not `24.0`.
fn number(bound: &Value) -> String {
    match bound.as_f64() {
        Some(whole) if whole.fract() == 0.0 && whole.abs() < 1e15 => format!("{}", whole as i64),
        _ => bound.to_string(),
    }
}

/// `1 to 200 `, `at least 1 `, `up to 200 ` (with `unit` after the number), or nothing.
fn bounds(low: Option<&Value>, high: Option<&Value>, unit: &str) -> String {
    let unit = if unit.is_empty() {
        String::new()
    } else {
        format!(" {unit}")
    };
    match (low, high) {
        (Some(low), Some(high)) => format!("{low} to {high}{unit} "),
        (Some(low), None) if low.as_u64() == Some(1) && unit.is_empty() => {
            "one or more ".to_owned()
        }
        (Some(low), None) => format!("at least {low}{unit} "),
        (None, Some(high)) => format!("up to {high}{unit} "),
        (None, None) => String::new(),
    }
}

/// The schema's `type`, as a list.
fn types_of(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(kind)) => vec![kind.as_str()],
        Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).collect(),
        // Rules only a string has (a `propertyNames` schema): what they describe is a string.
        _ if ["minLength", "maxLength", "pattern"]
            .iter()
            .any(|k| schema.get(k).is_some()) =>
        {
            vec!["string"]
        }
        _ => Vec::new(),
    }
}

/// The types a schema takes, in words: `a number`, `an array`, `a number or null`.
fn types_noun(schema: &Value) -> String {
    let words: Vec<&str> = types_of(schema)
        .into_iter()
        .map(|kind| match kind {
            "array" => "an array",
            "object" => "an object",
            "integer" => "a whole number",
            "null" => "null",
            "boolean" => "a boolean",
            "number" => "a number",
            _ => "a string",
        })
        .collect();
    words.join(" or ")
}

/// Whether `branch` takes values of `value`'s JSON type (a branch that names no type takes any).
pub(super) fn admits_type(branch: &Value, value: &Value) -> bool {
    let types = types_of(branch);
    types.is_empty()
        || types.iter().any(|kind| match *kind {
            "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
            kind => kind == type_name(value),
        })
}

/// The fix for an unknown member `name`: the allowed name it resembles, or the allowed names.
fn suggest(name: &str, allowed: &[&str]) -> String {
    match closest(name, allowed) {
        Some(known) => format!("did you mean `{known}`? Property names are case-sensitive"),
        None => format!(
            "remove it; the allowed properties are {}",
            allowed.join(", ")
        ),
    }
}

/// The name of `names` that `sent` was probably meant to be: the same letters in another case or with other
/// separators (`companyName` for `company_name`, `liUrl` for `liUrls`), or within two edits of one.
pub(crate) fn closest<'a>(sent: &str, names: &[&'a str]) -> Option<&'a str> {
    let plain = |text: &str| -> String {
        text.chars()
            .filter(|c| !matches!(c, '_' | '-' | ' '))
            .flat_map(char::to_lowercase)
            .collect()
    };
    let sent = plain(sent);
    names
        .iter()
        .copied()
        .map(|name| {
            let known = plain(name);
            let plural = known.trim_end_matches('s') == sent.trim_end_matches('s');
            (
                if plural {
                    0
                } else {
                    strsim::levenshtein(&sent, &known)
                },
                name,
            )
        })
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}
