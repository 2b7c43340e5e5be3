//! Search over stored companies as the domain sees it: what a search asks ([`SearchQuery`]: filters, words, whose
//! pages, which order, from where), what it answers ([`SearchPage`] of [`CompanyRow`]s, the compact form of a
//! record), and the one rule for how searched text is compared ([`fold_label`], [`search_words`],
//! [`PREFIX_MIN_CHARS`]), read by the stores that index it, by the API that describes it and by the tests that
//! check it. No I/O: the snapshot cache runs the query, the API contract reads it from a request body.

use serde::{Deserialize, Serialize};
use unicode_normalization::char::is_combining_mark;

use crate::CompanyRecord;

/// Full-text words of at least this many characters match as prefixes (`secur` finds `security`); shorter
/// words match whole words only, so that one letter cannot ask for half the index.
pub const PREFIX_MIN_CHARS: usize = 3;

/// The span employee growth is measured over ([`SearchQuery::employee_growth`]), in days.
pub const GROWTH_DAYS: i64 = 90;

/// Whose companies a search looks through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchScope {
    /// The pages this tenant ([`crate::Tenant::key`]) was answered (the snapshot cache's `note_seen`).
    Tenant(i64),
    /// Every stored page (a single-team deployment).
    Everything,
}

/// The order of a search's rows; ties are broken by URL, ascending. On the wire in lower case (`followers`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum SearchSort {
    /// Best full-text match first: the companies with every word in the name, then those with every word in
    /// the name, slogan or specialties, then the rest (every word somewhere, the description too), each group
    /// by followers, most first; without words, as `followers`.
    Relevance,
    /// Most followers first; pages without a count last.
    Followers,
    /// Most employees on the network first; pages without a count last.
    Employees,
    /// Most recently fetched first.
    Freshness,
}

/// Where the next page of a search starts: after this row (its sort key and URL) in the search's order.
/// Any key and URL name a position (rows that sort after it), so a position a client made up is no error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchAfter {
    /// The row's sort key: the count (`-1` when absent), `fetched_at` in Unix milliseconds, or the relevance
    /// position: the group (3 name, 2 name, slogan or specialties, 1 anywhere) times 2^50, plus the follower
    /// count plus one.
    pub key: i64,
    /// The row's URL.
    pub url: String,
}

/// An inclusive range; an end left out is open. A row without the value matches only a range open at both
/// ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields, bound(deserialize = "T: RangeEnd"))]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "Range_of_{T}"))]
pub struct Range<T> {
    /// The least value matched (inclusive); absent for no lower bound.
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "range_end"
    )]
    #[cfg_attr(feature = "schema", schemars(with = "T"))]
    pub min: Option<T>,
    /// The greatest value matched (inclusive); absent for no upper bound.
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "range_end"
    )]
    #[cfg_attr(feature = "schema", schemars(with = "T"))]
    pub max: Option<T>,
}

/// What an end of a [`Range`] may be, read from the JSON value sent. A whole number is also read from a number
/// written with a point (`24.0`), as JSON Schema's `integer` takes it.
pub trait RangeEnd: Sized {
    /// The end `value` gives, or why it gives none.
    ///
    /// # Errors
    /// A sentence saying what the value is not.
    fn from_json(value: serde_json::Value) -> Result<Self, String>;
}

/// The whole number `value` holds, if it holds one (also written `24.0`).
fn whole(value: &serde_json::Value) -> Option<i128> {
    let number = value.as_number()?;
    if let Some(n) = number.as_i64() {
        return Some(i128::from(n));
    }
    if let Some(n) = number.as_u64() {
        return Some(i128::from(n));
    }
    let float = number.as_f64()?;
    // Whole and within what an f64 holds exactly, so the cast is exact.
    #[allow(clippy::cast_possible_truncation)]
    (float.fract() == 0.0 && float.abs() <= 9_007_199_254_740_992.0).then_some(float as i128)
}

impl RangeEnd for u64 {
    fn from_json(value: serde_json::Value) -> Result<Self, String> {
        whole(&value)
            .and_then(|n| u64::try_from(n).ok())
            .ok_or_else(|| format!("{value} is not a whole number from 0"))
    }
}

impl RangeEnd for i32 {
    fn from_json(value: serde_json::Value) -> Result<Self, String> {
        whole(&value)
            .and_then(|n| i32::try_from(n).ok())
            .ok_or_else(|| format!("{value} is not a whole number a year can be"))
    }
}

impl RangeEnd for f64 {
    fn from_json(value: serde_json::Value) -> Result<Self, String> {
        value
            .as_f64()
            .ok_or_else(|| format!("{value} is not a number"))
    }
}

impl RangeEnd for jiff::Timestamp {
    fn from_json(value: serde_json::Value) -> Result<Self, String> {
        value
            .as_str()
            .and_then(|text| text.parse().ok())
            .ok_or_else(|| format!("{value} is not an RFC 3339 time"))
    }
}

fn range_end<'de, D: serde::Deserializer<'de>, T: RangeEnd>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    match Option::<serde_json::Value>::deserialize(deserializer)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(value) => T::from_json(value)
            .map(Some)
            .map_err(serde::de::Error::custom),
    }
}

impl<T> Default for Range<T> {
    /// Open at both ends.
    fn default() -> Self {
        Self {
            min: None,
            max: None,
        }
    }
}

/// A search over the stored companies: every filter given must match (each list matches any of its values,
/// compared by [`fold_label`]); the words, if any, must all be found in the name, slogan,
/// description or specialties.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchQuery {
    /// Full-text words ([`search_words`] of the query text); empty for none.
    pub words: Vec<String>,
    /// Industries (the record's `industries`).
    pub industries: Vec<String>,
    /// Size bands (`company_size`).
    pub company_sizes: Vec<String>,
    /// Organization types (`type`).
    pub company_types: Vec<String>,
    /// Headquarters countries (`headquarters.country`).
    pub countries: Vec<String>,
    /// Headquarters regions (`headquarters.region`).
    pub regions: Vec<String>,
    /// Headquarters cities (`headquarters.locality`).
    pub localities: Vec<String>,
    /// Specialties: any of them, or with `all_specialties` all of them.
    pub specialties: Vec<String>,
    /// Whether every one of `specialties` must be listed.
    pub all_specialties: bool,
    /// `employee_count_on_li`.
    pub employee_count: Range<u64>,
    /// The change of `employee_count_on_li`, in percent, from the page's newest fetch at least [`GROWTH_DAYS`]
    /// before its last one (its history) to its last one; a page without a fetch that old has none.
    pub employee_growth: Range<f64>,
    /// `follower_count`.
    pub follower_count: Range<u64>,
    /// `founded`.
    pub founded: Range<i32>,
    /// Whether the record has a `website`.
    pub has_website: Option<bool>,
    /// When the page was fetched, inclusive.
    pub fetched_at: Range<jiff::Timestamp>,
    /// Whose pages.
    pub scope: SearchScope,
    /// In which order.
    pub sort: SearchSort,
    /// From where (the start when `None`).
    pub after: Option<SearchAfter>,
    /// How many rows at most (the store reads one more, to tell whether another page follows).
    pub limit: u32,
}

impl SearchQuery {
    /// A query with no filter over `scope`, most followers first, 20 rows a page.
    pub fn new(scope: SearchScope) -> Self {
        Self {
            words: Vec::new(),
            industries: Vec::new(),
            company_sizes: Vec::new(),
            company_types: Vec::new(),
            countries: Vec::new(),
            regions: Vec::new(),
            localities: Vec::new(),
            specialties: Vec::new(),
            all_specialties: false,
            employee_count: Range::default(),
            employee_growth: Range::default(),
            follower_count: Range::default(),
            founded: Range::default(),
            has_website: None,
            fetched_at: Range::default(),
            scope,
            sort: SearchSort::Followers,
            after: None,
            limit: 20,
        }
    }
}

/// One page of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchPage {
    /// The rows, in the query's order.
    pub rows: Vec<CompanyRow>,
    /// Where the next page starts, or `None` when this is the last one.
    pub next: Option<SearchAfter>,
}

/// A company as a search lists it: who it is, what it does, how big, where, and when its page was fetched. Every
/// member is the record's own, under the record's name, so a client that reads records reads rows; the whole
/// record is one stored lookup of `final_li_url` away.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct CompanyRow {
    /// The page's canonical URL: the snapshot's URL (the page the fetch resolved to).
    pub final_li_url: String,
    /// Display name (the record's `company_name`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_name: Option<String>,
    /// The network's organization id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_id: Option<u64>,
    /// Registrable domain of the website, e.g. `audiense.com`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    /// The company's website as the page links it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website: Option<String>,
    /// Logo image URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logo: Option<String>,
    /// Primary industry as the network labels it, e.g. `Software Development`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub industries: Option<String>,
    /// Organization type as shown, e.g. `Privately Held`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub company_type: Option<String>,
    /// Founding year.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub founded: Option<i32>,
    /// The network's size band as shown, e.g. `51-200 employees`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_size: Option<String>,
    /// Members on the network who list the company as employer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub employee_count_on_li: Option<u64>,
    /// Followers of the page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub follower_count: Option<u64>,
    /// Where the headquarters are: the record's `headquarters` with its `country`, `region` and `locality` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headquarters: Option<RowPlace>,
    /// When the page was fetched from the network (RFC 3339).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched_at: Option<jiff::Timestamp>,
}

/// Where a row's company has its headquarters (members of the record's `headquarters`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RowPlace {
    /// Two-letter country code, e.g. `US`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    /// State or region as shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// City as shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locality: Option<String>,
}

impl CompanyRow {
    /// The columns of a row as CSV writes it ([`CompanyRow::csv_cells`]): its members, `headquarters` as three.
    pub const CSV_COLUMNS: [&'static str; 16] = [
        "final_li_url",
        "company_name",
        "company_id",
        "domain",
        "website",
        "logo",
        "industries",
        "type",
        "founded",
        "company_size",
        "employee_count_on_li",
        "follower_count",
        "headquarters_country",
        "headquarters_region",
        "headquarters_locality",
        "fetched_at",
    ];

    /// The row's cells in [`CompanyRow::CSV_COLUMNS`] order, as written (an absent member is an empty cell;
    /// `fetched_at` in RFC 3339). Not made spreadsheet-safe: that is the writer's choice.
    pub fn csv_cells(&self) -> [String; 16] {
        let text = |value: &Option<String>| value.clone().unwrap_or_default();
        let number = |value: Option<u64>| value.map(|n| n.to_string()).unwrap_or_default();
        let place = self.headquarters.clone().unwrap_or_default();
        [
            self.final_li_url.clone(),
            text(&self.company_name),
            number(self.company_id),
            text(&self.domain),
            text(&self.website),
            text(&self.logo),
            text(&self.industries),
            text(&self.company_type),
            self.founded
                .map(|year| year.to_string())
                .unwrap_or_default(),
            text(&self.company_size),
            number(self.employee_count_on_li),
            number(self.follower_count),
            text(&place.country),
            text(&place.region),
            text(&place.locality),
            self.fetched_at.map(|at| at.to_string()).unwrap_or_default(),
        ]
    }

    /// The row's member names as it serializes them (`final_li_url`, `company_name`, …, `type`, …,
    /// `fetched_at`): read from the type's serde derive, so this is never a second list to keep in step. What a
    /// search's `fields` may name.
    pub fn members() -> &'static [&'static str] {
        serde_aux::serde_introspection::serde_introspect::<CompanyRow>()
    }

    /// The row with only the members `keep` says yes to, and `final_li_url`, which says which page it is (the
    /// others are left out, as an absent member is).
    #[must_use]
    pub fn only(&self, keep: impl Fn(&str) -> bool) -> Self {
        let Ok(serde_json::Value::Object(mut members)) = serde_json::to_value(self) else {
            return self.clone();
        };
        members.retain(|name, _| name == "final_li_url" || keep(name));
        // The members of a row, fewer of them, are a row.
        serde_json::from_value(serde_json::Value::Object(members)).unwrap_or_else(|_| self.clone())
    }

    /// The row of `record`, the snapshot of page `final_li_url` fetched at `fetched_at`.
    pub fn of(final_li_url: &str, record: &CompanyRecord, fetched_at: jiff::Timestamp) -> Self {
        let headquarters = record.headquarters.as_ref().map(|hq| RowPlace {
            country: hq.country.clone(),
            region: hq.region.clone(),
            locality: hq.locality.clone(),
        });
        Self {
            final_li_url: final_li_url.to_owned(),
            company_name: record.company_name.clone(),
            company_id: record.company_id,
            domain: record.domain.clone(),
            website: record.website.clone(),
            logo: record.logo.clone(),
            industries: record.industries.clone(),
            company_type: record.company_type.clone(),
            founded: record.founded,
            company_size: record.company_size.clone(),
            employee_count_on_li: record.employee_count_on_li,
            follower_count: record.follower_count,
            headquarters: headquarters.filter(|place| *place != RowPlace::default()),
            fetched_at: Some(fetched_at),
        }
    }
}

/// A label as a filter compares it (industry, size band, type, country, region, city, specialty): NFKD with
/// accents dropped, lower case, control characters as spaces (no label holds one, and PostgreSQL refuses NUL in
/// text, so a filter sent with one must match nothing rather than fail), whitespace runs as one space, trimmed.
/// `Zürich` and ` zurich ` are one label; `Software Development` and `Software` are not.
///
/// ```
/// assert_eq!(company_model::fold_label("  Zürich "), "zurich");
/// assert_eq!(company_model::fold_label("Software  Development"), "software development");
/// assert_eq!(company_model::fold_label("Soft\0ware\u{7}"), "soft ware");
/// ```
pub fn fold_label(label: &str) -> String {
    // One pass, each character decomposed on its own: NFKD differs from that only in reordering runs of
    // combining characters, and every such character is a mark, which the fold drops. ASCII, most of a page's
    // text, decomposes to itself. (Indexing a snapshot folds its whole description: with the iterator `nfkd()`,
    // this was a third of the time in the search index's own code.)
    let mut folded = String::with_capacity(label.len());
    let mut space = false;
    let mut keep = |c: char| {
        if c.is_whitespace() || c.is_control() {
            space = !folded.is_empty();
        } else {
            if space {
                folded.push(' ');
                space = false;
            }
            folded.push(c);
        }
    };
    for c in label.chars() {
        if c.is_ascii() {
            keep(c.to_ascii_lowercase());
        } else {
            unicode_normalization::char::decompose_compatible(c, |d| {
                if !is_combining_mark(d) {
                    d.to_lowercase().for_each(&mut keep);
                }
            });
        }
    }
    folded
}

/// The words of a text as full-text search indexes and matches them: [`fold_label`]'s folding, then split at
/// every character that is not a letter or digit; a word longer than [`MAX_WORD_BYTES`] is left out. Both
/// engines index these words and nothing else, so SQLite and PostgreSQL find the same companies for the same
/// query.
///
/// ```
/// assert_eq!(company_model::search_words("Cloud-native Security, Inc."), ["cloud", "native", "security", "inc"]);
/// ```
pub fn search_words(text: &str) -> Vec<String> {
    search_text(text)
        .split(' ')
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect()
}

/// [`search_words`] joined by single spaces: a text's words as the search index stores them, in one string
/// (indexing a snapshot takes the words of its whole description, where one allocation per word was a sixth of
/// the time in the index's own code).
///
/// ```
/// assert_eq!(company_model::search_text("Cloud-native Security, Inc."), "cloud native security inc");
/// ```
pub fn search_text(text: &str) -> String {
    let folded = fold_label(text);
    let mut words = String::with_capacity(folded.len());
    for word in folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty() && word.len() <= MAX_WORD_BYTES)
    {
        if !words.is_empty() {
            words.push(' ');
        }
        words.push_str(word);
    }
    words
}

/// The longest word [`search_words`] keeps, in UTF-8 bytes: no language's word comes near it, and PostgreSQL
/// indexes no word of more than 2,047 (it would refuse the page's row).
pub const MAX_WORD_BYTES: usize = 1_000;

#[cfg(test)]
mod tests {
    use unicode_normalization::UnicodeNormalization;
    use unicode_normalization::char::is_combining_mark;

    use super::fold_label;

    /// The fold as its doc comment states it, step by step over the whole text.
    fn fold_label_as_stated(label: &str) -> String {
        let folded: String = label
            .nfkd()
            .filter(|c| !is_combining_mark(*c))
            .flat_map(char::to_lowercase)
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        folded.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Every Unicode scalar value, 64 to a text (so that marks meet marks and bases of other blocks), and texts
    /// where marks in non-canonical order, whitespace runs and control characters meet letters.
    #[test]
    fn the_one_pass_fold_is_the_stated_fold_for_every_character() {
        let scalars: Vec<char> = (0..=0x10_FFFF_u32).filter_map(char::from_u32).collect();
        for chunk in scalars.chunks(64) {
            let text: String = chunk.iter().collect();
            assert_eq!(
                fold_label(&text),
                fold_label_as_stated(&text),
                "{:X?}",
                chunk[0]
            );
        }
        for text in [
            "Ame\u{301}\u{327}lie\u{327}\u{301} \u{130}stanbul",
            "  \t Zu\u{308}rich\u{3000}\u{A0}GmbH\r\n",
            "\0\u{7}Soft\u{1b}ware\u{85}\u{2028}",
            "\u{FB01}nance \u{2460} \u{FF21}\u{FF22} \u{1D400} \u{3392} \u{1E9E}",
            "",
            " \u{301} ",
        ] {
            assert_eq!(fold_label(text), fold_label_as_stated(text), "{text:?}");
        }
    }
}
