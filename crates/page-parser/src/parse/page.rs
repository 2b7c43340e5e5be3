//! A parsed document as every reader sees it ([`Page`]): its `data-test-id` elements, its About rows by label,
//! its sections by heading, its JSON-LD organization, and the small lookups the readers share; the sections the
//! parser knows ([`Section`]); and the [`Trail`] that records which signal gave each field.

use std::collections::HashMap;

use page_url::NetworkDomain;
use scraper::{ElementRef, Html, Selector};
use serde_json::Value;

use crate::labels::{Counted, about_key, count_beside};
use crate::numbers::Count;
use crate::sections;
use crate::text::{clean_block, clean_line, without_stray_controls};

/// Where one field of a record came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldSource {
    /// The record member, e.g. `company_name`.
    pub field: &'static str,
    /// The signal it was read from, e.g. `JSON-LD Organization.name` or `About row "Industry"`; `None` when no
    /// signal on the page had it (the member is absent from the record).
    pub signal: Option<&'static str>,
    /// Every signal looked at, in order of trust.
    pub tried: Vec<&'static str>,
}

/// The record of which signal gave each field.
#[derive(Default)]
pub(super) struct Trail {
    pub(super) fields: Vec<FieldSource>,
}

/// One place a field may be read from: its name, and how to read it.
pub(super) type Signal<'f, T> = (&'static str, &'f dyn Fn() -> Option<T>);

impl Trail {
    /// The first signal, in order, that gives a value; the field and that signal are recorded.
    pub(super) fn pick<T>(&mut self, field: &'static str, signals: &[Signal<'_, T>]) -> Option<T> {
        let found = signals
            .iter()
            .find_map(|(name, read)| read().map(|value| (*name, value)));
        self.fields.push(FieldSource {
            field,
            signal: found.as_ref().map(|(name, _)| *name),
            tried: signals.iter().map(|(name, _)| *name).collect(),
        });
        found.map(|(_, value)| value)
    }

    /// Records a field whose source was decided elsewhere, from the signals in `tried`.
    pub(super) fn note(
        &mut self,
        field: &'static str,
        signal: Option<&'static str>,
        tried: &[&'static str],
    ) {
        self.fields.push(FieldSource {
            field,
            signal,
            tried: tried.to_vec(),
        });
    }
}

/// A section of a logged-out company page: the network's `data-test-id` for it and its heading, and the two
/// signals' names as `scrape --explain` prints them.
pub(super) struct Section {
    pub(super) test_id: &'static str,
    /// The heading's text, or its beginning (`Employees at` is followed by the company's name).
    pub(super) heading: &'static str,
    pub(super) by_id: &'static str,
    pub(super) by_heading: &'static str,
}

/// A [`Section`] from its `data-test-id` and heading.
macro_rules! section {
    ($test_id:literal, $heading:literal) => {
        Section {
            test_id: $test_id,
            heading: $heading,
            by_id: concat!("section data-test-id=", $test_id),
            by_heading: concat!("section headed \"", $heading, "\""),
        }
    };
}

/// The sections the parser reads, found by `data-test-id`, else by their heading.
pub(super) const ABOUT: Section = section!("about-us", "About us");
pub(super) const LOCATIONS: Section = section!("locations", "Locations");
pub(super) const EMPLOYEES: Section = section!("employees-at", "Employees at");
pub(super) const UPDATES: Section = section!("updates", "Updates");
pub(super) const SIMILAR: Section = section!("similar-pages", "Similar pages");
/// The heading the similar pages had before "Similar pages" (the `data-test-id` is the same).
pub(super) const ALSO_VIEWED: Section = section!("similar-pages", "People also viewed");
pub(super) const AFFILIATED: Section = section!("affiliated-pages", "Affiliated pages");
pub(super) const PRODUCTS: Section = section!("products", "Products");
pub(super) const FUNDING: Section = section!("funding", "Funding");
/// Sections every logged-out company page seen so far carries; the others (products, affiliated pages,
/// funding) depend on the company.
pub(super) const SECTIONS: [Section; 4] = [ABOUT, LOCATIONS, EMPLOYEES, UPDATES];

selectors! {
    // Read by more than one reader: the page kind and the top card.
    pub(super) CANONICAL = r#"link[rel="canonical"]"#;
    pub(super) TOP_TITLE = "h1.top-card-layout__title";
    JSON_LD = r#"script[type="application/ld+json"]"#;
    LABELLED = "[data-test-id]";
    // About rows: a definition list's `<div><dt>…</dt><dd>…</dd></div>`, or (earlier layouts) a
    // `.basic-info-item` whose first child is the label and the next its value.
    DL_ROWS = "dl > div, .basic-info-item";
    DT = "dt";
    HEADING = "h2";
}

/// One parsed document, indexed once for every reader.
pub(super) struct Page<'a> {
    pub(super) document: &'a Html,
    labelled: HashMap<&'a str, ElementRef<'a>>,
    /// The About section's rows by their label (`dt` text, lower case), e.g. `company size` → the row.
    about_rows: HashMap<String, ElementRef<'a>>,
    /// Sections by their heading (`h2` text on one line).
    headed: Vec<(String, ElementRef<'a>)>,
    pub(super) domain: &'a NetworkDomain,
    /// The page's JSON-LD organization, when it has one.
    pub(super) organization: Option<serde_json::Map<String, Value>>,
}

impl<'a> Page<'a> {
    /// `document`, indexed: one pass collects every element the network labels with `data-test-id` (sections,
    /// About rows), so the readers search inside those subtrees instead of walking the whole page per field.
    pub(super) fn new(document: &'a Html, domain: &'a NetworkDomain) -> Self {
        let mut labelled = HashMap::new();
        for element in document.select(&LABELLED) {
            if let Some(id) = element.value().attr("data-test-id") {
                labelled.entry(id).or_insert(element);
            }
        }
        Self {
            about_rows: about_rows_by_label(document),
            headed: sections_by_heading(document),
            document,
            labelled,
            domain,
            organization: json_ld_organization(document),
        }
    }
}

/// The About rows of the page (`<div><dt>Label</dt><dd>value</dd></div>` in a `dl`, or a `.basic-info-item`) by
/// their label's key (`labels::about_key`: lower case, any language's label as its English key).
fn about_rows_by_label(document: &Html) -> HashMap<String, ElementRef<'_>> {
    let mut rows = HashMap::new();
    for row in document.select(&DL_ROWS) {
        let label = row
            .select(&DT)
            .next()
            .or_else(|| row.children().find_map(ElementRef::wrap))
            .and_then(|label| clean_line(&label.text().collect::<String>()));
        if let Some(label) = label {
            rows.entry(about_key(&label)).or_insert(row);
        }
    }
    rows
}

/// Every `section` with its own heading: the first `h2` whose nearest enclosing section it is (a section that
/// holds other sections is not named by their headings).
fn sections_by_heading(document: &Html) -> Vec<(String, ElementRef<'_>)> {
    let mut sections: Vec<(String, ElementRef<'_>)> = Vec::new();
    for heading in document.select(&HEADING) {
        let Some(section) = heading
            .ancestors()
            .filter_map(ElementRef::wrap)
            .find(|a| a.value().name() == "section")
        else {
            continue;
        };
        if sections.iter().any(|(_, s)| s.id() == section.id()) {
            continue;
        }
        if let Some(text) = clean_line(&heading.text().collect::<String>()) {
            sections.push((text, section));
        }
    }
    sections
}

/// The page's JSON-LD organization: a top-level object or an `@graph` item whose `@type` is a schema.org
/// `Organization` (or a subtype used for schools and companies).
fn json_ld_organization(document: &Html) -> Option<serde_json::Map<String, Value>> {
    const TYPES: [&str; 5] = [
        "Organization",
        "Corporation",
        "EducationalOrganization",
        "CollegeOrUniversity",
        "School",
    ];
    document.select(&JSON_LD).find_map(|script| {
        let mut value: Value = serde_json::from_str(&script.text().collect::<String>()).ok()?;
        without_control_characters(&mut value);
        let candidates = match value.get("@graph") {
            Some(Value::Array(items)) => items.clone(),
            _ => vec![value],
        };
        candidates.into_iter().find_map(|item| match item {
            Value::Object(object)
                if object
                    .get("@type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| TYPES.contains(&t)) =>
            {
                Some(object)
            }
            _ => None,
        })
    })
}

/// Every string in `value` with its control characters other than whitespace (`\u0000`, `\u0007`, …, escapes
/// JSON allows and HTML text cannot carry) read as spaces: no record member holds one, and PostgreSQL refuses
/// NUL in text.
fn without_control_characters(value: &mut Value) {
    match value {
        Value::String(text) => {
            if let std::borrow::Cow::Owned(cleaned) = without_stray_controls(text) {
                *text = cleaned;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(without_control_characters),
        Value::Object(members) => members.values_mut().for_each(without_control_characters),
        _ => {}
    }
}

impl Page<'_> {
    /// A member of the JSON-LD organization (schema.org `Organization`).
    pub(super) fn ld(&self, key: &str) -> Option<&Value> {
        self.organization.as_ref().and_then(|o| o.get(key))
    }

    /// A text member of the JSON-LD organization, whitespace tidied, `None` when blank.
    pub(super) fn ld_text(&self, key: &str) -> Option<String> {
        self.ld(key).and_then(Value::as_str).and_then(clean_block)
    }

    /// A section by its `data-test-id`, else by its heading.
    pub(super) fn section(&self, section: &Section) -> Option<ElementRef<'_>> {
        self.section_by_id(section.test_id)
            .or_else(|| self.section_by_heading(section.heading))
    }

    /// The element the page labels `data-test-id="<id>"` (a section or an About row).
    pub(super) fn section_by_id(&self, id: &str) -> Option<ElementRef<'_>> {
        self.labelled.get(id).copied()
    }

    /// The section whose heading is `heading`, or starts with it and a space (`Employees at Google`).
    pub(super) fn section_by_heading(&self, heading: &str) -> Option<ElementRef<'_>> {
        self.headed
            .iter()
            .find(|(text, _)| {
                text.eq_ignore_ascii_case(heading)
                    || (text.len() > heading.len()
                        && text.is_char_boundary(heading.len())
                        && text[..heading.len()].eq_ignore_ascii_case(heading)
                        && text[heading.len()..].starts_with(' '))
            })
            .map(|(_, section)| *section)
    }

    /// The About row whose label is `label` (lower case).
    pub(super) fn labelled_row(&self, label: &str) -> Option<ElementRef<'_>> {
        self.about_rows.get(label).copied()
    }

    pub(super) fn first(&self, selector: &Selector) -> Option<ElementRef<'_>> {
        self.document.select(selector).next()
    }

    pub(super) fn attr(&self, selector: &Selector, name: &str) -> Option<String> {
        self.document
            .select(selector)
            .find_map(|e| e.value().attr(name))
            .and_then(clean_line)
    }

    /// The first match's text on one line (whitespace collapsed), or `None` when blank.
    pub(super) fn text(&self, selector: &Selector) -> Option<String> {
        self.document
            .select(selector)
            .find_map(|e| clean_line(&e.text().collect::<String>()))
    }

    /// An image URL from `src`, or from `data-delayed-url` where the lazy loader has not run.
    pub(super) fn image(&self, selector: &Selector) -> Option<String> {
        self.first(selector).and_then(sections::image_url)
    }

    /// The count beside a word of `counted` in the first element of `selector` that has one
    /// (`labels::count_beside`: `See all 1,234 employees on LinkedIn`, `Acme · 1,234 employees`).
    pub(super) fn count_in(&self, selector: &Selector, counted: Counted) -> Option<u64> {
        self.count_beside_in(selector, counted).map(|c| c.value)
    }

    /// [`Page::count_in`], saying whether the page rounded the count.
    pub(super) fn count_beside_in(&self, selector: &Selector, counted: Counted) -> Option<Count> {
        self.document
            .select(selector)
            .find_map(|element| count_beside(&element.text().collect::<String>(), counted))
    }
}
