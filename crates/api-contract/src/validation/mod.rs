//! Every request body is checked against the JSON Schema derived from its own type: the schema the OpenAPI
//! document publishes (before the server fills in its two patterns) is the one that decides a 400, so the two
//! cannot disagree. A [`Body`] is read in four steps:
//!
//! 1. the bytes as one JSON object, duplicate member names refused ([`json_object`]);
//! 2. the object against the type's schema (the `jsonschema` crate), each failure turned into a [`Problem`]
//!    whose reason and fix are written from the failing keyword and the schema around it (its bounds, its enum,
//!    its `examples`), so a bound changed on the type changes the message too;
//! 3. each string the schema marks (`x-page-url`, `x-webhook-url`, [`crate::schema`]) through the check only the
//!    server can make (its network's page URLs, the webhook URLs it takes), which gives its own reason and fix;
//! 4. when nothing was found, the object into the type (serde).
//!
//! Every problem of steps 2 and 3 is reported in one [`InvalidRequest`], one per place in the body, ordered by
//! place. A body type adds what only it knows with [`Body::advise`] (where to send more URLs than fit, say).

mod wording;

use std::collections::{HashMap, HashSet};
use std::fmt::Write;

use schemars::JsonSchema;
use serde_json::Value;

use page_url::{NetworkDomain, PageUrl};

use crate::Problem;
use crate::problems::{InvalidRequest, MAX_PROBLEMS, echo, escape_pointer, json_object};
use crate::schema::{PAGE_URL, WEBHOOK_URL};
pub(crate) use wording::NOT_BLANK;
#[cfg(test)]
pub(crate) use wording::closest;
use wording::{admits_type, explain, problem_at, too_many};

/// A request body type: its schema (from `schemars`) and its serde form are the rules.
pub(crate) trait Body: JsonSchema + serde::de::DeserializeOwned {
    /// The fix offered for a body that is not a JSON object: a sentence with a good one.
    const EXAMPLE: &'static str;

    /// The body's compiled rules; implemented as `rules!(TheBody)`, which keeps one copy per type.
    fn rules() -> &'static Rules;

    /// Rewrites a problem the schema found where the body knows better (`keyword` is the JSON Schema keyword
    /// that failed, e.g. `maxItems`); the default keeps the schema's words.
    fn advise(_keyword: &str, _problem: &mut Problem) {}
}

/// Implements [`Body::rules`]: the type's [`Rules`], compiled on first use and kept.
macro_rules! rules {
    ($body:ty) => {
        fn rules() -> &'static $crate::validation::Rules {
            static RULES: std::sync::LazyLock<$crate::validation::Rules> =
                std::sync::LazyLock::new($crate::validation::Rules::of::<$body>);
            &RULES
        }
    };
}
pub(crate) use rules;

/// What a marked string is, for the check the server makes on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mark {
    /// `x-page-url`: a page URL of the server's network.
    PageUrl,
    /// `x-webhook-url`: a URL the server may send webhooks to.
    WebhookUrl,
}

/// Why a marked string is refused: the problem's reason and fix.
pub(crate) type Refusal = (String, String);

/// The checks only the server can make on marked strings: page URLs of its network (each one kept, normalized,
/// in the body's order) and the webhook URLs it takes.
pub(crate) struct ServerChecks<'a> {
    /// The network's domain, for a body that names pages; `None` for one whose schema marks no page URL.
    domain: Option<&'a NetworkDomain>,
    allow_http: bool,
    pages: Vec<PageUrl>,
}

impl<'a> ServerChecks<'a> {
    /// The checks of a server on `domain`'s network that sends webhooks over `http` too when `allow_http`.
    pub(crate) fn new(domain: &'a NetworkDomain, allow_http: bool) -> Self {
        Self {
            domain: Some(domain),
            allow_http,
            pages: Vec::new(),
        }
    }

    /// The checks of a body that names no page (its schema marks no `x-page-url`): webhook URLs only.
    pub(crate) fn without_pages(allow_http: bool) -> Self {
        Self {
            domain: None,
            allow_http,
            pages: Vec::new(),
        }
    }

    /// Checks one marked string, at `pointer` in the body.
    pub(crate) fn check(&mut self, mark: Mark, pointer: &str, text: &str) -> Result<(), Refusal> {
        match mark {
            Mark::PageUrl => {
                let Some(domain) = self.domain else {
                    // Only a schema that marks a page URL in a body read without pages gets here.
                    return Err((
                        "this body takes no page URL".to_owned(),
                        "remove it".to_owned(),
                    ));
                };
                match PageUrl::parse_submitted(text, domain) {
                    Ok(page) => {
                        self.pages.push(page);
                        Ok(())
                    }
                    Err(error) => Err((error.to_string(), error.fix())),
                }
            }
            Mark::WebhookUrl => {
                let member = pointer.rsplit('/').next().unwrap_or_default();
                crate::webhook_url::webhook_refusal(member, text, self.allow_http)
                    .map_or(Ok(()), Err)
            }
        }
    }

    /// The page URLs checked, in the body's order.
    pub(crate) fn into_pages(self) -> Vec<PageUrl> {
        self.pages
    }
}

/// A body type's schema, inline (no `$ref`), and its compiled validator.
pub(crate) struct Rules {
    schema: Value,
    validator: Option<jsonschema::Validator>,
}

impl Rules {
    /// The rules of `B`: its JSON Schema as it deserializes, every subschema inline.
    pub(crate) fn of<B: JsonSchema>() -> Self {
        use schemars::generate::{Contract, SchemaSettings};
        let schema = SchemaSettings::draft2020_12()
            .with(|settings| {
                settings.inline_subschemas = true;
                settings.contract = Contract::Deserialize;
            })
            .into_generator()
            .into_root_schema_for::<B>()
            .to_value();
        // A derived schema that does not compile is a bug of this crate, which the tests of every body catch;
        // a server with one refuses that body (see `read`) rather than stopping.
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema)
            .ok();
        Self { schema, validator }
    }

    /// The schema the rules check, as a JSON value.
    #[cfg(test)]
    pub(crate) fn schema(&self) -> &Value {
        &self.schema
    }
}

/// Reads `body` as a `B`, checking each marked string with `marked` (its mark, its pointer, its text; in the
/// body's order, a list's items in turn).
///
/// # Errors
/// [`InvalidRequest`] naming every problem, one per place in the body.
pub(crate) fn read<B: Body>(
    body: &[u8],
    marked: &mut dyn FnMut(Mark, &str, &str) -> Result<(), Refusal>,
) -> Result<B, InvalidRequest> {
    let object = json_object(body, B::EXAMPLE)?;
    let mut value = Value::Object(object);
    let rules = B::rules();
    let mut problems = Vec::new();
    bound(
        &rules.schema,
        &rules.schema,
        &mut String::new(),
        &mut value,
        &mut String::new(),
        &mut |keyword, mut problem| {
            B::advise(keyword, &mut problem);
            problems.push(problem);
        },
    );
    problems.append(&mut schema_problems::<B>(rules, &value));
    let mut strings = Vec::new();
    marked_strings(&rules.schema, &value, &mut String::new(), &mut strings);
    let mut refused = Vec::new();
    for (pointer, mark, text) in strings {
        if let Err((reason, fix)) = marked(mark, &pointer, text) {
            if refused.len() > MAX_PROBLEMS {
                continue;
            }
            let sent = echo(&Value::String(text.to_owned()));
            refused.push(problem_at(&pointer, Some(sent), reason, fix));
        }
    }
    if !refused.is_empty() {
        // The server's own check says more than the schema's bound on the same string (a URL too long, say).
        // One pass, so 100,000 refused job inputs cost no more than 100,000 problems.
        let places: HashSet<&str> = refused.iter().map(|p| p.pointer.as_str()).collect();
        problems.retain(|p| !places.contains(p.pointer.as_str()));
        problems.append(&mut refused);
    }
    if !problems.is_empty() {
        let sent: HashMap<String, usize> = member_order(body)
            .iter()
            .enumerate()
            .map(|(position, name)| (escape_pointer(name).into_owned(), position))
            .collect();
        problems.sort_by_cached_key(|problem| place(&sent, &problem.pointer));
        problems.dedup_by(|later, first| later.pointer == first.pointer);
        return Err(InvalidRequest {
            problems: at_most_listed(problems),
        });
    }
    // Read from the bytes, not the value: a member kept as sent (`RawValue`) keeps its text.
    serde_json::from_slice::<B>(body).map_err(|error| InvalidRequest {
        // The schema admitted what the type does not: say so rather than fail without a reason.
        problems: vec![problem_at(
            "",
            None,
            format!("the body cannot be read ({error})"),
            B::EXAMPLE.to_owned(),
        )],
    })
}

/// Cuts every list longer than its schema's `maxItems`, and every object with more members than its
/// `maxProperties`, down to that bound, with one problem each (given to `out` with its keyword), before the
/// schema is checked. The schema's work, and the errors the `jsonschema` crate builds all at once, are then
/// bounded by the schema's own bounds rather than by the body's size (a 16 MiB job body of millions of wrong
/// items, or one input's metadata with millions of members). A value is only cut when its body is refused.
fn bound(
    root: &Value,
    node: &Value,
    schema_path: &mut String,
    value: &mut Value,
    pointer: &mut String,
    out: &mut dyn FnMut(&str, Problem),
) {
    // A value of one of several shapes is bounded by the shape its type fits.
    for keyword in ["oneOf", "anyOf"] {
        let Some(branches) = node.get(keyword).and_then(Value::as_array) else {
            continue;
        };
        let mut fitting = (0..branches.len())
            .filter(|&i| branches[i].get("type").is_some() && admits_type(&branches[i], value));
        if let (Some(only), None) = (fitting.next(), fitting.next()) {
            let length = schema_path.len();
            schema_path.push('/');
            schema_path.push_str(keyword);
            schema_path.push('/');
            let _ = write!(schema_path, "{only}");
            bound(root, &branches[only], schema_path, value, pointer, out);
            schema_path.truncate(length);
        }
    }
    let most = |keyword: &str| {
        node.get(keyword)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    let (path_length, pointer_length) = (schema_path.len(), pointer.len());
    match value {
        Value::Array(items) => {
            if let Some(most) = most("maxItems").filter(|most| items.len() > *most) {
                out(
                    "maxItems",
                    too_many(root, schema_path, pointer, items.len()),
                );
                items.truncate(most);
            }
            let Some(each) = node.get("items").filter(|each| each.is_object()) else {
                return;
            };
            schema_path.push_str("/items");
            for (index, item) in items.iter_mut().enumerate() {
                let _ = write!(pointer, "/{index}");
                bound(root, each, schema_path, item, pointer, out);
                pointer.truncate(pointer_length);
            }
            schema_path.truncate(path_length);
        }
        Value::Object(members) => {
            if let Some(most) = most("maxProperties").filter(|most| members.len() > *most) {
                out(
                    "maxProperties",
                    too_many(root, schema_path, pointer, members.len()),
                );
                let kept: HashSet<String> = members.keys().take(most).cloned().collect();
                members.retain(|name, _| kept.contains(name));
            }
            let properties = node.get("properties").and_then(Value::as_object);
            let others = node
                .get("additionalProperties")
                .filter(|others| others.is_object());
            for (name, member) in members.iter_mut() {
                let escaped = escape_pointer(name);
                let child = if let Some(child) = properties.and_then(|p| p.get(name)) {
                    schema_path.push_str("/properties/");
                    schema_path.push_str(&escaped);
                    child
                } else if let Some(child) = others {
                    schema_path.push_str("/additionalProperties");
                    child
                } else {
                    continue;
                };
                pointer.push('/');
                pointer.push_str(&escaped);
                bound(root, child, schema_path, member, pointer, out);
                schema_path.truncate(path_length);
                pointer.truncate(pointer_length);
            }
        }
        _ => {}
    }
}

/// Every failure of the schema's keywords, as problems (a body type's advice applied).
fn schema_problems<B: Body>(rules: &Rules, value: &Value) -> Vec<Problem> {
    let Some(validator) = &rules.validator else {
        return vec![problem_at(
            "",
            None,
            "this server cannot check this body (its schema does not compile)".to_owned(),
            "report it to the server's operator".to_owned(),
        )];
    };
    // Most bodies are valid, and the check that says only so is the fast one.
    if validator.is_valid(value) {
        return Vec::new();
    }
    let mut problems = Vec::new();
    for error in validator.iter_errors(value) {
        if problems.len() > MAX_PROBLEMS {
            break;
        }
        explain(&rules.schema, &error, &mut |keyword, mut problem| {
            B::advise(keyword, &mut problem);
            problems.push(problem);
        });
    }
    problems
}

/// `problems` cut to [`MAX_PROBLEMS`], with one more problem that says so when there were more.
fn at_most_listed(mut problems: Vec<Problem>) -> Vec<Problem> {
    if problems.len() > MAX_PROBLEMS {
        problems.truncate(MAX_PROBLEMS);
        problems.push(problem_at(
            "",
            None,
            format!("the body has more problems than the {MAX_PROBLEMS} listed"),
            "fix these and send it again to see the rest".to_owned(),
        ));
    }
    problems
}

/// For `#[serde(deserialize_with = …)]` on a count the schema calls an `integer`: JSON Schema's integers include
/// `24.0` (a number with no fractional part), which serde's `u32` refuses.
pub(crate) fn whole_number<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<u32, D::Error> {
    let number = <f64 as serde::Deserialize>::deserialize(deserializer)?;
    if number.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(&number) {
        // Whole and in range, so the cast is exact.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        Ok(number as u32)
    } else {
        Err(serde::de::Error::custom(format!(
            "{number} is not a whole number"
        )))
    }
}

/// [`whole_number`] for a member that may be left out (with `#[serde(default)]`).
pub(crate) fn some_whole_number<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<u32>, D::Error> {
    whole_number(deserializer).map(Some)
}

/// Every string `value` holds where `schema` marks it, with its pointer, in the body's order.
fn marked_strings<'v>(
    schema: &Value,
    value: &'v Value,
    pointer: &mut String,
    out: &mut Vec<(String, Mark, &'v str)>,
) {
    let Some(node) = schema.as_object() else {
        return;
    };
    match value {
        Value::String(text) => {
            let mark = if node.contains_key(PAGE_URL) {
                Some(Mark::PageUrl)
            } else if node.contains_key(WEBHOOK_URL) {
                Some(Mark::WebhookUrl)
            } else {
                None
            };
            if let Some(mark) = mark {
                out.push((pointer.clone(), mark, text));
            }
        }
        Value::Array(items) => {
            if let Some(each) = node.get("items") {
                for (index, item) in items.iter().enumerate() {
                    let length = pointer.len();
                    let _ = write!(pointer, "/{index}");
                    marked_strings(each, item, pointer, out);
                    pointer.truncate(length);
                }
            }
        }
        Value::Object(members) => {
            if let Some(properties) = node.get("properties").and_then(Value::as_object) {
                for (name, member) in members {
                    if let Some(member_schema) = properties.get(name) {
                        let length = pointer.len();
                        pointer.push('/');
                        pointer.push_str(&escape_pointer(name));
                        marked_strings(member_schema, member, pointer, out);
                        pointer.truncate(length);
                    }
                }
            }
        }
        _ => {}
    }
    // A value that is one of several shapes is read by the shape its type fits.
    for keyword in ["oneOf", "anyOf"] {
        if let Some(branch) = node
            .get(keyword)
            .and_then(Value::as_array)
            .and_then(|branches| {
                branches
                    .iter()
                    .find(|b| b.get("type").is_some() && admits_type(b, value))
            })
        {
            marked_strings(branch, value, pointer, out);
        }
    }
}

/// The body's members, in the order sent (read again only when there are problems to order).
fn member_order(body: &[u8]) -> Vec<String> {
    struct Names(Vec<String>);
    impl<'de> serde::Deserialize<'de> for Names {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Keys;
            impl<'de> serde::de::Visitor<'de> for Keys {
                type Value = Names;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("a JSON object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Names, A::Error> {
                    let mut names = Vec::new();
                    while let Some(name) = map.next_key::<String>()? {
                        map.next_value::<serde::de::IgnoredAny>()?;
                        names.push(name);
                    }
                    Ok(Names(names))
                }
            }
            deserializer.deserialize_map(Keys)
        }
    }
    serde_json::from_slice::<Names>(body)
        .map(|names| names.0)
        .unwrap_or_default()
}

/// Where a pointer is in the body, for ordering problems: the whole body first, then member by member in the
/// order sent (a missing member after them), list items by number, members within an item by name.
/// `sent` maps each member's pointer segment to its position in the body.
fn place(sent: &HashMap<String, usize>, pointer: &str) -> Vec<(usize, String)> {
    pointer
        .split('/')
        .skip(1)
        .enumerate()
        .map(|(depth, segment)| match (depth, sent.get(segment)) {
            (0, Some(position)) => (*position, segment.to_owned()),
            (0, None) => (sent.len(), segment.to_owned()),
            _ => match segment.parse::<usize>() {
                Ok(index) => (index, String::new()),
                Err(_) => (usize::MAX, segment.to_owned()),
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use page_url::NetworkDomain;

    use super::*;
    use crate::{AccountUpdate, CompanyRequest, EndpointBody, JobBody, ResolveBody, WatchBody};

    /// Every body's derived schema compiles: a server never answers "cannot check this body".
    #[test]
    fn every_body_has_rules() {
        for rules in [
            crate::RequestBody::rules(),
            JobBody::rules(),
            WatchBody::rules(),
            ResolveBody::rules(),
            EndpointBody::rules(),
            AccountUpdate::rules(),
        ] {
            assert!(rules.validator.is_some(), "{}", rules.schema());
        }
    }

    fn problems(body: &str) -> Vec<(String, String, String)> {
        CompanyRequest::from_json(body.as_bytes(), &NetworkDomain::default())
            .expect_err("invalid")
            .problems
            .into_iter()
            .map(|p| (p.pointer, p.reason, p.fix))
            .collect()
    }

    /// Reasons and fixes are written from the failing keyword and the schema around it: its bounds, its
    /// values, its examples, and whether the member may be left out.
    #[test]
    fn each_problem_says_what_to_send_in_the_schemas_words() {
        let found = problems(
            r#"{"liUrls": "x", "maxAgeHours": 25, "staleIfError": "yes", "fields": ["compny_name"], "maxagehours": 1}"#,
        );
        let expected = [
            (
                "/liUrls",
                "`liUrls` is a string, not an array",
                r#"send an array of 1 to 200 items, each a page URL (company, school or showcase), e.g. "liUrls": ["https://www.linkedin.com/company/google"]"#,
            ),
            (
                "/maxAgeHours",
                "`maxAgeHours` is outside 0 to 24",
                "send a number from 0 to 24, or leave `maxAgeHours` out",
            ),
            (
                "/staleIfError",
                "`staleIfError` is a string, not a boolean",
                "send true or false, or leave `staleIfError` out",
            ),
            (
                "/fields/0",
                "`compny_name` is not one of the values `fields` takes",
                "",
            ),
            (
                "/maxagehours",
                "unknown property `maxagehours`",
                "did you mean `maxAgeHours`? Property names are case-sensitive",
            ),
        ];
        assert_eq!(found.len(), expected.len(), "{found:#?}");
        for ((pointer, reason, fix), (want_pointer, want_reason, want_fix)) in
            found.iter().zip(expected)
        {
            assert_eq!(
                (pointer.as_str(), reason.as_str()),
                (want_pointer, want_reason)
            );
            assert!(fix.starts_with(want_fix), "{fix}");
        }
        assert!(found[3].2.starts_with(
            "did you mean `company_name`? send each item as one of: original_li_url,"
        ));
    }

    /// A string the schema marks is checked by the server, whose reason replaces the schema's bound on it.
    #[test]
    fn marked_strings_get_the_servers_reason() {
        let long = format!(
            "https://www.linkedin.com/company/{}",
            "x".repeat(page_url::MAX_URL_LEN)
        );
        let found = problems(&format!(
            r#"{{"liUrls": ["https://example.com/x", "{long}"]}}"#
        ));
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(found[0].1.contains("example.com"), "{found:#?}");
        let too_long = page_url::UrlError::TooLong {
            len: long.chars().count(),
        };
        assert_eq!(
            (found[1].1.clone(), found[1].2.clone()),
            (too_long.to_string(), too_long.fix())
        );
    }

    /// A value of several shapes is told what its own shape lacks; one of no shape, which shapes there are.
    #[test]
    fn one_of_several_shapes_is_explained_by_its_own() {
        let refused = CompanyRequest::from_job_json(
            br#"{"liUrls": [7, {"liUrl": "https://www.linkedin.com/company/x", "metadata": {"": 1}}]}"#,
            &NetworkDomain::default(), false,
        )
        .expect_err("invalid");
        let found: Vec<(&str, &str)> = refused
            .problems
            .iter()
            .map(|p| (p.pointer.as_str(), p.reason.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    "/liUrls/0",
                    "the item is a number, not a string or an object"
                ),
                (
                    "/liUrls/1/metadata/",
                    r#"the member name "" is not a string of 1 to 32 characters"#
                ),
            ]
        );
        let query = ResolveBody::rules();
        assert!(query.validator.is_some());
        let refused = crate::ResolveRequest::from_json(br#"{"queries": [{"location": "US"}]}"#)
            .expect_err("no name");
        let reasons: Vec<&str> = refused.problems.iter().map(|p| p.reason.as_str()).collect();
        assert_eq!(
            reasons,
            [
                "the item has neither `domain` nor `name`",
                "`location` is taken only beside `name`"
            ]
        );
        assert!(
            refused.problems[0]
                .fix
                .contains(r#"{"domain": "stripe.com"}"#),
            "{refused}"
        );
    }

    /// However many problems a body has, a 400 lists at most `MAX_PROBLEMS` of them and says there are more.
    #[test]
    fn a_body_of_many_problems_lists_a_bounded_number() {
        let inputs = vec!["\"https://example.com/x\""; MAX_PROBLEMS + 500].join(",");
        let body = format!(r#"{{"liUrls": [{inputs}]}}"#);
        let refused =
            CompanyRequest::from_job_json(body.as_bytes(), &NetworkDomain::default(), false)
                .expect_err("every input is refused");
        assert_eq!(refused.problems.len(), MAX_PROBLEMS + 1);
        assert_eq!(
            refused.problems[MAX_PROBLEMS - 1].pointer,
            format!("/liUrls/{}", MAX_PROBLEMS - 1)
        );
        let last = refused.problems.last().expect("a last problem");
        assert_eq!(last.pointer, "");
        assert!(last.reason.contains("more problems"), "{last:?}");
        let few = format!(r#"{{"liUrls": [{}]}}"#, ["7"; 3].join(","));
        let refused =
            CompanyRequest::from_job_json(few.as_bytes(), &NetworkDomain::default(), false)
                .expect_err("numbers");
        assert_eq!(refused.problems.len(), 3);
    }

    /// A list over its bound, or an object over its members' bound, is one problem and is cut before the schema
    /// is checked: what a body costs to check is bounded by the contract, not by the body's size.
    #[test]
    fn bounds_come_first_and_cut_the_work() {
        let inputs = vec!["7"; crate::MAX_JOB_URLS + 5].join(",");
        let refused = CompanyRequest::from_job_json(
            format!(r#"{{"liUrls": [{inputs}]}}"#).as_bytes(),
            &NetworkDomain::default(),
            false,
        )
        .expect_err("too many");
        assert_eq!(refused.problems[0].pointer, "/liUrls");
        assert!(
            refused.problems[0].reason.contains("100005 items"),
            "{:?}",
            refused.problems[0]
        );
        assert!(
            refused.problems[0].fix.contains("jobs of at most"),
            "{:?}",
            refused.problems[0]
        );
        assert_eq!(refused.problems.len(), MAX_PROBLEMS + 1);

        let members: Vec<String> = (0..20).map(|i| format!(r#""{i}": []"#)).collect();
        let body = format!(
            r#"{{"liUrls": [{{"liUrl": "https://www.linkedin.com/company/x", "metadata": {{{}}}}}]}}"#,
            members.join(",")
        );
        let refused =
            CompanyRequest::from_job_json(body.as_bytes(), &NetworkDomain::default(), false)
                .expect_err("too many members");
        let first = &refused.problems[0];
        assert_eq!(first.pointer, "/liUrls/0/metadata");
        assert_eq!(
            first.reason,
            "`metadata` has 20 members, over the limit of 8"
        );
        assert!(
            first
                .fix
                .contains("at most 8 members, each name a string of 1 to 32 characters"),
            "{first:?}"
        );
        // The members kept are checked too, each named as a member (`0`), not as a list item.
        assert!(
            refused.problems[1].reason.starts_with("`0` is an array"),
            "{refused}"
        );
    }

    /// A name of white space only is blank, whatever counts as white space: the schema's pattern and the trim
    /// the resolver applies agree (JSON Schema's `\s` lacks U+0085).
    #[test]
    fn blank_is_blank_for_the_schema_and_the_trim_alike() {
        for blank in [" ", r"\u0085", r"\u00a0\u3000"] {
            let body = format!(r#"{{"queries": [{{"name": "{blank}"}}]}}"#);
            let refused = crate::ResolveRequest::from_json(body.as_bytes()).expect_err(&body);
            assert_eq!(refused.problems[0].reason, "`name` is blank", "{body}");
        }
        let named =
            crate::ResolveRequest::from_json(br#"{"queries": [{"name": " Stripe\u0085"}]}"#)
                .expect("a name");
        assert_eq!(named.queries[0].name.as_deref(), Some("Stripe"));
    }

    #[test]
    fn places_follow_the_body() {
        let sent: HashMap<String, usize> = member_order(br#"{"b": 1, "a": [1, 2]}"#)
            .into_iter()
            .enumerate()
            .map(|(position, name)| (name, position))
            .collect();
        let mut pointers = ["/a/10", "/a/2", "", "/missing", "/b"];
        pointers.sort_by_cached_key(|p| place(&sent, p));
        assert_eq!(pointers, ["", "/b", "/a/2", "/a/10", "/missing"]);
    }
}
