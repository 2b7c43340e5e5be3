//! Layout changes the parser must survive, applied to every captured guest page by the helpers below (each a
//! transformation of the real page's tree, never a hand-edited copy), with the record compared field by field
//! against the unchanged page's. Where a field truly cannot survive a change (the page carries it in one place
//! only), the exception is named in `EXCEPTIONS`, with the reason, and docs/record.md lists it.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use html5ever::tendril::StrTendril;
use page_parser::parse_page_explained;
use page_url::{NetworkDomain, PageUrl};
use scraper::{Html, Selector};
use serde_json::Value;

/// One change of the network's layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Drift {
    /// Sections and About rows in another order.
    Reordered,
    /// A build that renames the generated (utility) classes and appends generated ones; the component classes
    /// (`block__element` names and their blocks) stay.
    GeneratedClasses,
    /// Every `data-test-id` attribute gone.
    WithoutTestIds,
    /// The JSON-LD gone.
    WithoutJsonLd,
    /// Whitespace between tags changed and attributes quoted otherwise (single quotes, or none).
    Reformatted,
    /// Every image lazy, as the server sends them (`data-delayed-url`, no `src`).
    ImagesLazy,
    /// Every image loaded, as a browser saves the page (`src`, no `data-delayed-url`).
    ImagesLoaded,
    /// An unknown About row and an unknown section added.
    UnknownAdditions,
}

const DRIFTS: [Drift; 8] = [
    Drift::Reordered,
    Drift::GeneratedClasses,
    Drift::WithoutTestIds,
    Drift::WithoutJsonLd,
    Drift::Reformatted,
    Drift::ImagesLazy,
    Drift::ImagesLoaded,
    Drift::UnknownAdditions,
];

/// The fields a drift may change, and why: each has a single signal on the page for that part of its value.
const EXCEPTIONS: [(Drift, &str, &str); 1] = [(
    Drift::WithoutJsonLd,
    "description",
    "the visible About text is the same text trimmed: JSON-LD's may end with a line break (Audiense's does)",
)];

/// The captured guest pages, with the URL each was fetched as.
pub(super) const PAGES: [(&str, &str); 2] = [
    (
        "origin/company/google.html",
        "https://www.linkedin.com/company/google",
    ),
    (
        "origin/company/audiense.html",
        "https://uk.linkedin.com/company/audiense",
    ),
];

pub(super) fn selector(css: &str) -> Selector {
    Selector::parse(css).expect("a valid selector")
}

fn short_hash(text: &str) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    format!("{:x}", hasher.finish() & 0xff_ffff)
}

/// The page with the drift applied.
pub(super) fn apply(drift: Drift, html: &str) -> String {
    match drift {
        Drift::Reformatted => requote(&retree(html, reindent)),
        Drift::UnknownAdditions => add_unknowns(html),
        Drift::Reordered => retree(html, reorder),
        Drift::GeneratedClasses => retree(html, regenerate_classes),
        Drift::WithoutTestIds => retree(html, |document| {
            edit_attributes(document, "[data-test-id]", |attributes| {
                attributes.retain(|(name, _)| &*name.local != "data-test-id");
            });
        }),
        Drift::WithoutJsonLd => retree(html, |document| {
            let scripts = ids(document, r#"script[type="application/ld+json"]"#);
            for id in scripts {
                if let Some(mut node) = document.tree.get_mut(id) {
                    node.detach();
                }
            }
        }),
        Drift::ImagesLazy => retree(html, |document| {
            edit_attributes(document, "img[src]", |attributes| {
                for (name, _) in attributes.iter_mut() {
                    if &*name.local == "src" {
                        name.local = "data-delayed-url".into();
                    }
                }
            });
        }),
        Drift::ImagesLoaded => retree(html, |document| {
            edit_attributes(document, "img[data-delayed-url]", |attributes| {
                attributes.retain(|(name, _)| &*name.local != "src");
                for (name, _) in attributes.iter_mut() {
                    if &*name.local == "data-delayed-url" {
                        name.local = "src".into();
                    }
                }
            });
        }),
    }
}

/// Parses, edits the tree, serializes.
pub(super) fn retree(html: &str, edit: impl FnOnce(&mut Html)) -> String {
    let mut document = Html::parse_document(html);
    edit(&mut document);
    document.html()
}

pub(super) fn ids(document: &Html, css: &str) -> Vec<ego_tree::NodeId> {
    document.select(&selector(css)).map(|e| e.id()).collect()
}

/// Runs `edit` on the attributes of every element matching `css`.
fn edit_attributes(
    document: &mut Html,
    css: &str,
    mut edit: impl FnMut(&mut Vec<(html5ever::QualName, StrTendril)>),
) {
    for id in ids(document, css) {
        if let Some(mut node) = document.tree.get_mut(id)
            && let scraper::Node::Element(element) = node.value()
        {
            edit(&mut element.attrs);
        }
    }
}

/// Every group of sibling `section`s, and every `dl`'s rows, in reverse order.
fn reorder(document: &mut Html) {
    let mut parents = Vec::new();
    for css in ["section", "dl > div"] {
        for element in document.select(&selector(css)) {
            if let Some(parent) = element.parent()
                && !parents.contains(&(parent.id(), css))
            {
                parents.push((parent.id(), css));
            }
        }
    }
    for (parent, css) in parents {
        let name = if css == "section" { "section" } else { "div" };
        let children: Vec<ego_tree::NodeId> = document
            .tree
            .get(parent)
            .map(|p| {
                p.children()
                    .filter(|c| c.value().as_element().is_some_and(|e| e.name() == name))
                    .map(|c| c.id())
                    .collect()
            })
            .unwrap_or_default();
        if children.len() < 2 {
            continue;
        }
        for child in children.into_iter().rev() {
            if let Some(mut node) = document.tree.get_mut(child) {
                node.detach();
            }
            if let Some(mut parent) = document.tree.get_mut(parent) {
                parent.append_id(child);
            }
        }
    }
}

/// Utility classes renamed to generated names, one generated class appended to every element; component
/// classes (`block__element`, `block--modifier` and their `block`) kept.
fn regenerate_classes(document: &mut Html) {
    let class = selector("[class]");
    let mut components = HashSet::new();
    for element in document.select(&class) {
        for token in element.value().classes() {
            if let Some((block, _)) = token.split_once("__").or_else(|| token.split_once("--")) {
                components.insert(token.to_owned());
                components.insert(block.to_owned());
            }
        }
    }
    edit_attributes(document, "[class]", |attributes| {
        for (name, value) in attributes.iter_mut() {
            if &*name.local != "class" {
                continue;
            }
            let mut tokens: Vec<String> = value
                .split_whitespace()
                .map(|token| {
                    if components.contains(token) {
                        token.to_owned()
                    } else {
                        format!("x{}", short_hash(token))
                    }
                })
                .collect();
            tokens.push(format!("css-{}", short_hash(value)));
            *value = StrTendril::from(tokens.join(" "));
        }
    });
}

/// Whitespace-only text between block elements becomes one newline and a tab (whitespace among inline text,
/// where it is content, stays).
fn reindent(document: &mut Html) {
    let blank: Vec<ego_tree::NodeId> = document
        .tree
        .nodes()
        .filter(|node| {
            let blank = node
                .value()
                .as_text()
                .is_some_and(|text| text.trim().is_empty() && !text.is_empty());
            let among_text = node.parent().is_some_and(|parent| {
                parent.value().as_element().is_some_and(|e| {
                    ["p", "a", "span", "time", "dd", "dt", "h1", "h2", "h3", "h4"]
                        .contains(&e.name())
                }) || parent
                    .children()
                    .any(|c| c.value().as_text().is_some_and(|t| !t.trim().is_empty()))
            });
            blank && !among_text
        })
        .map(|node| node.id())
        .collect();
    for id in blank {
        if let Some(mut node) = document.tree.get_mut(id)
            && let scraper::Node::Text(text) = node.value()
        {
            text.text = StrTendril::from("\n\t");
        }
    }
}

/// Attribute values in single quotes, or unquoted where HTML allows; script and style text untouched.
fn requote(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let Some(end) = tag_end(rest) else { break };
        let tag = &rest[..=end];
        out.push_str(&requote_tag(tag));
        rest = &rest[end + 1..];
        for raw in ["script", "style"] {
            if tag.starts_with(&format!("<{raw}")) {
                let close = format!("</{raw}>");
                let body_end = rest.find(&close).unwrap_or(rest.len());
                out.push_str(&rest[..body_end]);
                rest = &rest[body_end..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The index of the `>` that closes the tag `tag` starts with, outside quoted values.
fn tag_end(tag: &str) -> Option<usize> {
    let mut quote = None;
    for (i, c) in tag.char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(i),
            _ => {}
        }
    }
    None
}

fn requote_tag(tag: &str) -> String {
    let mut out = String::with_capacity(tag.len());
    let mut rest = tag;
    while let Some(start) = rest.find("=\"") {
        out.push_str(&rest[..=start]);
        let value_start = start + 2;
        let Some(length) = rest[value_start..].find('"') else {
            out.push_str(&rest[start + 1..]);
            return out;
        };
        let value = &rest[value_start..value_start + length];
        let bare = !value.is_empty()
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b));
        if bare {
            out.push_str(value);
        } else if value.contains('\'') {
            out.push('"');
            out.push_str(value);
            out.push('"');
        } else {
            out.push('\'');
            out.push_str(value);
            out.push('\'');
        }
        rest = &rest[value_start + length + 1..];
    }
    out.push_str(rest);
    out
}

/// An unknown About row at the top of every `dl`, and an unknown section before the first one.
fn add_unknowns(html: &str) -> String {
    let row = "<div><dt>Phone</dt><dd>+1 555 0100</dd></div>";
    let mut out = String::with_capacity(html.len() + 200);
    let mut rest = html;
    while let Some(start) = rest.find("<dl") {
        let end = start + rest[start..].find('>').unwrap_or(0) + 1;
        out.push_str(&rest[..end]);
        out.push_str(row);
        rest = &rest[end..];
    }
    out.push_str(rest);
    let section = "<section class=\"core-section-container\"><h2>Events</h2><div><p>No events planned.</p>\
                   <dl><div><dt>Next</dt><dd>2027</dd></div></dl></div></section>";
    match out.find("<section") {
        Some(first) => format!("{}{section}{}", &out[..first], &out[first..]),
        None => out,
    }
}

pub(super) fn record(html: &str, url: &str) -> (Value, Vec<page_parser::FieldSource>) {
    let domain = NetworkDomain::default();
    let url = PageUrl::parse_submitted(url, &domain).expect("a valid URL");
    let parsed = parse_page_explained(html, &url, &domain).expect("still a company page");
    (
        serde_json::to_value(&parsed.record).expect("serializes"),
        parsed.fields,
    )
}

/// A value in at most 120 characters.
fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Where two values first differ: `path: was X, is Y`.
pub(super) fn difference(path: &str, before: &Value, after: &Value) -> String {
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for (key, value) in b {
                let other = a.get(key).unwrap_or(&Value::Null);
                if other != value {
                    return difference(&format!("{path}.{key}"), value, other);
                }
            }
            let extra: Vec<&String> = a.keys().filter(|k| !b.contains_key(*k)).collect();
            format!("{path}: gained {extra:?}")
        }
        (Value::Array(b), Value::Array(a)) if b.len() == a.len() => b
            .iter()
            .zip(a)
            .enumerate()
            .find(|(_, (b, a))| b != a)
            .map_or_else(String::new, |(i, (b, a))| {
                difference(&format!("{path}[{i}]"), b, a)
            }),
        _ => format!("{path}: was {}, is {}", short(before), short(after)),
    }
}

/// The signal a field was read from, by the parser's account of the page.
pub(super) fn signal_of<'a>(
    sources: &'a [page_parser::FieldSource],
    field: &str,
) -> Option<&'a str> {
    sources
        .iter()
        .find(|s| s.field == field)
        .and_then(|s| s.signal)
}

/// A changed page's record against the original's, field by field: a line (prefixed with `label`) for each field
/// that differs, unless `excepted` names it, and for each that appeared; and how many fields are exact.
pub(super) fn field_differences(
    label: &str,
    before: &Value,
    after: &Value,
    sources: &[page_parser::FieldSource],
    excepted: impl Fn(&str) -> bool,
) -> (Vec<String>, usize) {
    let mut lines = Vec::new();
    let mut exact = 0;
    let fields = before.as_object().expect("an object");
    for (field, value) in fields {
        if after.get(field) == Some(value) {
            exact += 1;
        } else if !excepted(field) {
            lines.push(format!(
                "{label}: {field} (read from {:?}): {}",
                signal_of(sources, field),
                difference(field, value, after.get(field).unwrap_or(&Value::Null))
            ));
        }
    }
    for field in after.as_object().expect("an object").keys() {
        if !fields.contains_key(field) {
            lines.push(format!("{label}: {field} appeared"));
        }
    }
    (lines, exact)
}

#[test]
fn every_drift_leaves_the_record_of_every_guest_page_as_it_was() {
    let mut failures = Vec::new();
    for (page, url) in PAGES {
        let html = super::read(page);
        let (before, _) = record(&html, url);
        for drift in DRIFTS {
            let drifted = apply(drift, &html);
            assert_ne!(drifted, html, "{drift:?} changed nothing in {page}");
            let (after, sources) = record(&drifted, url);
            let (lines, _) = field_differences(
                &format!("{page}, {drift:?}"),
                &before,
                &after,
                &sources,
                |field| {
                    EXCEPTIONS
                        .iter()
                        .any(|(d, f, _)| *d == drift && *f == field)
                },
            );
            failures.extend(lines);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The exceptions are real: without them the comparison would fail, so each names a field that changes.
#[test]
fn each_named_exception_is_a_field_that_really_changes() {
    for (drift, field, why) in EXCEPTIONS {
        let changes = PAGES.iter().any(|(page, url)| {
            let html = super::read(page);
            let (before, _) = record(&html, url);
            let (after, _) = record(&apply(drift, &html), url);
            before.get(field) != after.get(field)
        });
        assert!(
            changes,
            "{drift:?} leaves {field} unchanged; drop the exception ({why})"
        );
    }
}

#[test]
fn the_drift_helpers_change_what_they_say() {
    let (page, _) = PAGES[0];
    let html = super::read(page);
    let count = |html: &str, css: &str| Html::parse_document(html).select(&selector(css)).count();
    assert_eq!(
        count(&apply(Drift::WithoutTestIds, &html), "[data-test-id]"),
        0
    );
    assert_eq!(
        count(
            &apply(Drift::WithoutJsonLd, &html),
            r#"script[type="application/ld+json"]"#
        ),
        0
    );
    assert_eq!(count(&apply(Drift::ImagesLazy, &html), "img[src]"), 0);
    assert_eq!(
        count(&apply(Drift::ImagesLoaded, &html), "img[data-delayed-url]"),
        0
    );
    assert_eq!(
        count(&apply(Drift::GeneratedClasses, &html), ".font-sans"),
        0
    );
    assert!(
        count(
            &apply(Drift::GeneratedClasses, &html),
            ".top-card-layout__title"
        ) > 0
    );
    let reformatted = apply(Drift::Reformatted, &html);
    assert!(reformatted.contains("class='") && !reformatted.contains("class=\"top-card"));
    let first_section = |html: &str| {
        Html::parse_document(html)
            .select(&selector("section[data-test-id]"))
            .next()
            .and_then(|s| s.value().attr("data-test-id").map(str::to_owned))
    };
    assert_ne!(
        first_section(&apply(Drift::Reordered, &html)),
        first_section(&html)
    );
    assert!(apply(Drift::UnknownAdditions, &html).contains("<dt>Phone</dt>"));
}

#[test]
fn the_parser_says_where_each_field_came_from_and_which_sections_are_missing() {
    let domain = NetworkDomain::default();
    for (page, url) in PAGES {
        let html = super::read(page);
        let url = PageUrl::parse_submitted(url, &domain).expect("a valid URL");
        let parsed = parse_page_explained(&html, &url, &domain).expect("a company page");
        assert!(
            parsed.missing_sections.is_empty(),
            "{page}: {:?}",
            parsed.missing_sections
        );
        let record = serde_json::to_value(&parsed.record).expect("serializes");
        for member in record.as_object().expect("an object").keys() {
            let source = parsed.fields.iter().find(|s| s.field == member.as_str());
            assert!(
                source.is_some_and(|s| s.signal.is_some()),
                "{page}: {member} has no source: {source:?}"
            );
        }
        for source in &parsed.fields {
            assert_eq!(
                source.signal.is_some(),
                record.get(source.field).is_some(),
                "{page}: {source:?}"
            );
            if let Some(signal) = source.signal {
                assert!(source.tried.contains(&signal), "{page}: {source:?}");
            }
        }
    }
    // The About section removed: the parser says so, and the industry comes from the next signal, the top card.
    let html = retree(&super::read(PAGES[0].0), |document| {
        for id in ids(document, r#"[data-test-id="about-us"]"#) {
            if let Some(mut node) = document.tree.get_mut(id) {
                node.detach();
            }
        }
    });
    let url = PageUrl::parse_submitted(PAGES[0].1, &domain).expect("a valid URL");
    let parsed = parse_page_explained(&html, &url, &domain).expect("a company page");
    assert_eq!(parsed.missing_sections, ["About us"]);
    let industries = parsed.fields.iter().find(|s| s.field == "industries");
    assert_eq!(
        industries.and_then(|s| s.signal),
        Some("top card headline (h2.top-card-layout__headline)")
    );
    assert_eq!(
        parsed.record.industries.as_deref(),
        Some("Software Development")
    );
    let size = parsed.fields.iter().find(|s| s.field == "company_size");
    assert_eq!(size.map(|s| (s.signal, s.tried.len())), Some((None, 2)));
}
