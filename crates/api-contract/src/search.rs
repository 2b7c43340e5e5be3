//! `POST /v1/network/company-data/search`: filters and words over the stored companies in, compact rows out
//! (docs/api.md, "Searching stored companies").
//!
//! [`SearchRequest::from_json`] checks the body against [`SearchBody`]'s schema and reads it into a
//! [`company_model::SearchQuery`]. Every body the schema takes is a search: a range whose `min` is above its
//! `max` finds nothing, `relevance` without `q` is the followers' order, a `q` without a letter or digit finds
//! nothing, and any `cursor` of the published pattern is a position (the rows after it).

use company_model::{Range, SearchAfter, SearchQuery, SearchScope, SearchSort, search_words};

// `GROWTH_DAYS` is 90; the field's description says so in words the schema can carry.
const _: () = assert!(company_model::GROWTH_DAYS == 90);
use serde::{Deserialize, Serialize};

use crate::validation::{self, Body, NOT_BLANK};
use crate::{InvalidRequest, Problem};

/// The most rows one search answers (`limit`).
pub const MAX_SEARCH_ROWS: u32 = 100;
/// Rows a search answers without `limit`.
pub const DEFAULT_SEARCH_ROWS: u32 = 20;
/// The longest `q`, in characters: at most some 25 prefix words (a word repeated counts once), which bounds what
/// one full-text query costs.
pub const MAX_SEARCH_TEXT_LEN: usize = 100;
/// The most values one list filter takes.
pub const MAX_FILTER_VALUES: usize = 20;
/// The longest value of a list filter, in characters.
pub const MAX_FILTER_VALUE_LEN: usize = 200;
/// The longest `cursor`, in characters (a sort key and a page URL).
pub const MAX_CURSOR_LEN: usize = 2_100;
/// What a `cursor` is: the last row's sort key, `~`, its URL, as `next_cursor` writes it.
pub const CURSOR_PATTERN: &str = "^-?[0-9]{1,18}~";

/// The body of a search: filters on the records' own members (every one given must match; a list matches any
/// of its values, compared without case or accents), words to find, an order and a page. The server checks a body
/// against this schema (`SearchRequest::from_json`) and names every problem.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[derive(schemars::JsonSchema)]
#[schemars(rename = "SearchRequest")]
pub struct SearchBody {
    /// Words to find in the name, slogan, description or specialties (all of them, each as a whole word, or as
    /// the start of one when it has 3 characters or more; case and accents ignored).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1, max = MAX_SEARCH_TEXT_LEN), pattern(NOT_BLANK))]
    pub q: Option<String>,
    /// Industries as the network labels them (the record's `industries`), e.g. `Software Development`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_FILTER_VALUES), inner(length(min = 1, max = MAX_FILTER_VALUE_LEN)))]
    pub industries: Vec<String>,
    /// Size bands as shown (`company_size`), e.g. `51-200 employees`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_FILTER_VALUES), inner(length(min = 1, max = MAX_FILTER_VALUE_LEN)))]
    pub company_sizes: Vec<String>,
    /// Organization types as shown (`type`), e.g. `Privately Held`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_FILTER_VALUES), inner(length(min = 1, max = MAX_FILTER_VALUE_LEN)))]
    pub company_types: Vec<String>,
    /// Headquarters countries, two-letter codes (`headquarters.country`), e.g. `DE`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_FILTER_VALUES), inner(length(min = 1, max = MAX_FILTER_VALUE_LEN)))]
    pub countries: Vec<String>,
    /// Headquarters states or regions as shown (`headquarters.region`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_FILTER_VALUES), inner(length(min = 1, max = MAX_FILTER_VALUE_LEN)))]
    pub regions: Vec<String>,
    /// Headquarters cities as shown (`headquarters.locality`), e.g. `Berlin`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_FILTER_VALUES), inner(length(min = 1, max = MAX_FILTER_VALUE_LEN)))]
    pub localities: Vec<String>,
    /// Specialties as listed (`specialties`): a company listing any of them, or all with
    /// `"specialtiesMatch": "all"`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = MAX_FILTER_VALUES), inner(length(min = 1, max = MAX_FILTER_VALUE_LEN)))]
    pub specialties: Vec<String>,
    /// Whether a company must list `any` (the default) or `all` of `specialties`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "SpecialtiesMatch")]
    pub specialties_match: Option<SpecialtiesMatch>,
    /// Employees on the network (`employee_count_on_li`), inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Range<u64>")]
    pub employee_count: Option<Range<u64>>,
    /// Employee growth in percent (`{"min": 10}`: at least 10% more employees): the change of
    /// `employee_count_on_li` from the page's newest fetch at least 90 days before its last one to its last one,
    /// from the page's history; a company without a fetch that old does not match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Range<f64>")]
    pub employee_growth: Option<Range<f64>>,
    /// Followers (`follower_count`), inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Range<u64>")]
    pub follower_count: Option<Range<u64>>,
    /// Founding year (`founded`), inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Range<i32>")]
    pub founded: Option<Range<i32>>,
    /// Whether the company links a website (`website`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool")]
    pub has_website: Option<bool>,
    /// When the page was last fetched (`fetched_at`, RFC 3339), inclusive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Range<jiff::Timestamp>")]
    pub fetched_at: Option<Range<jiff::Timestamp>>,
    /// The order: `relevance` (the default with `q`), `followers` (the default without), `employees` or
    /// `freshness`; ties by page URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "SearchSort")]
    pub sort: Option<SearchSort>,
    /// Rows per page (1 to 100; default 20).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::validation::some_whole_number"
    )]
    #[schemars(with = "u32", range(min = 1, max = MAX_SEARCH_ROWS))]
    pub limit: Option<u32>,
    /// The row members each result keeps (`final_li_url` always), as `fields` selects a record's elsewhere;
    /// every member without it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "row_fields_schema")]
    pub fields: Option<Vec<String>>,
    /// The previous page's `next_cursor`, for the page after it (with the same filters and order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 3, max = MAX_CURSOR_LEN), pattern(CURSOR_PATTERN))]
    pub cursor: Option<String>,
}

/// `fields`' schema on a search: an array of the row's member names (the names come from the row type).
fn row_fields_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "array",
        "maxItems": crate::MAX_FIELD_NAMES,
        "items": {"type": "string", "enum": company_model::CompanyRow::members()},
    })
}

/// Whether a company must list any or all of a search's `specialties`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum SpecialtiesMatch {
    /// At least one of them.
    #[default]
    Any,
    /// Every one of them.
    All,
}

/// A valid search request: the query (over [`SearchScope::Everything`] until the service sets whose pages it
/// looks through) and whether it can find anything at all.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchRequest {
    /// The store's query.
    pub query: SearchQuery,
    /// `false` when `q` holds no letter or digit: such a search finds nothing, and is not run.
    pub can_match: bool,
    /// `fields`: the row members each result keeps; `None` for whole rows.
    pub fields: Option<Vec<&'static str>>,
}

impl Body for SearchBody {
    const EXAMPLE: &str = r#"send a JSON object such as {"q": "audience analytics", "countries": ["ES"], "limit": 20}"#;
    validation::rules!(SearchBody);

    fn advise(keyword: &str, problem: &mut Problem) {
        if keyword == "pattern" && problem.pointer == "/cursor" {
            "send the `next_cursor` of the previous page as it came".clone_into(&mut problem.fix);
        }
    }
}

impl SearchRequest {
    /// Checks a search body against [`SearchBody`]'s schema: a JSON object with, all optional, `q` (1 to
    /// [`MAX_SEARCH_TEXT_LEN`] characters, not blank), list filters (`industries`, `companySizes`,
    /// `companyTypes`, `countries`, `regions`, `localities`, `specialties`: up to [`MAX_FILTER_VALUES`] strings
    /// of 1 to [`MAX_FILTER_VALUE_LEN`] characters each), `specialtiesMatch` (`any`, `all`), ranges
    /// (`employeeCount`, `followerCount`, `founded`: `{min, max}` whole numbers; `employeeGrowth`: percents;
    /// `fetchedAt`: RFC 3339 times),
    /// `hasWebsite` (boolean), `sort`, `limit` (1 to [`MAX_SEARCH_ROWS`]), `fields` (the row's member names)
    /// and `cursor` (as `next_cursor` gave it); no other member.
    ///
    /// # Errors
    /// [`InvalidRequest`] naming every problem found.
    pub fn from_json(body: &[u8]) -> Result<Self, InvalidRequest> {
        let sent: SearchBody = validation::read(body, &mut |_, _, _| Ok(()))?;
        let mut words = sent.q.as_deref().map(search_words).unwrap_or_default();
        // A word asked twice is asked once: each is a phrase of the full-text query (and on SQLite a look in its
        // vocabulary), and one character can fold to a word, so 100 of them were 100 phrases of one word.
        let mut seen = std::collections::HashSet::new();
        words.retain(|word| seen.insert(word.clone()));
        let can_match = sent.q.is_none() || !words.is_empty();
        let sort = sent.sort.unwrap_or(if words.is_empty() {
            SearchSort::Followers
        } else {
            SearchSort::Relevance
        });
        Ok(Self {
            query: SearchQuery {
                words,
                industries: sent.industries,
                company_sizes: sent.company_sizes,
                company_types: sent.company_types,
                countries: sent.countries,
                regions: sent.regions,
                localities: sent.localities,
                specialties: sent.specialties,
                all_specialties: sent.specialties_match == Some(SpecialtiesMatch::All),
                employee_count: sent.employee_count.unwrap_or_default(),
                employee_growth: sent.employee_growth.unwrap_or_default(),
                follower_count: sent.follower_count.unwrap_or_default(),
                founded: sent.founded.unwrap_or_default(),
                has_website: sent.has_website,
                fetched_at: sent.fetched_at.unwrap_or_default(),
                scope: SearchScope::Everything,
                sort,
                after: sent.cursor.as_deref().and_then(cursor_position),
                limit: sent.limit.unwrap_or(DEFAULT_SEARCH_ROWS),
            },
            can_match,
            // The schema's enum has refused any other name.
            fields: sent.fields.map(|names| {
                company_model::CompanyRow::members()
                    .iter()
                    .copied()
                    .filter(|member| names.iter().any(|name| name == member))
                    .collect()
            }),
        })
    }

    /// `row` as this search answers it: with only the members `fields` keeps (and `final_li_url`), whole
    /// without `fields`.
    pub fn shape(&self, row: company_model::CompanyRow) -> company_model::CompanyRow {
        match &self.fields {
            Some(kept) => row.only(|member| kept.contains(&member)),
            None => row,
        }
    }
}

/// The `next_cursor` of a page whose next page starts after `after`: its key, `~`, its URL.
pub fn search_cursor(after: &SearchAfter) -> String {
    format!("{}~{}", after.key, after.url)
}

/// The position a cursor of [`CURSOR_PATTERN`] names; `None` for text the pattern refuses (the schema has
/// refused it already).
fn cursor_position(cursor: &str) -> Option<SearchAfter> {
    let (key, url) = cursor.split_once('~')?;
    Some(SearchAfter {
        key: key.parse().ok()?,
        url: url.to_owned(),
    })
}

/// The answer to a search: a page of rows and where the next one starts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SearchResponse {
    /// The companies, in the search's order: each the compact row of its stored record (the whole record is a
    /// stored lookup of `final_li_url` away).
    #[schemars(length(max = MAX_SEARCH_ROWS))]
    pub results: Vec<company_model::CompanyRow>,
    /// Send it as `cursor`, with the same filters and order, for the next page; absent on the last page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String")]
    pub next_cursor: Option<String>,
    /// Whose companies were searched: `account` (the companies this account was answered: looked up, resolved,
    /// enriched or watched) or `deployment` (every company stored on this server).
    pub scope: SearchScopeName,
}

/// Whose companies a search looked through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SearchScopeName {
    /// The companies the calling account was answered.
    Account,
    /// Every company stored on this deployment.
    Deployment,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_names_the_position_it_was_made_from() {
        let after = SearchAfter {
            key: -1,
            url: "https://www.linkedin.com/company/a~b".to_owned(),
        };
        assert_eq!(cursor_position(&search_cursor(&after)), Some(after));
        let body = br#"{"cursor": "12~x", "q": "!!", "limit": 5}"#;
        let request = SearchRequest::from_json(body).expect("valid");
        assert!(!request.can_match, "no letter or digit: nothing to find");
        assert_eq!(request.query.after.map(|a| a.key), Some(12));
        assert_eq!(request.query.sort, SearchSort::Followers);
    }

    #[test]
    fn a_word_repeated_is_asked_once() {
        // U+32CF (SQUARE LTD) folds to the word `ltd`.
        let body = format!(r#"{{"q": "{}Ltd ltd cloud"}}"#, "\u{32CF} ".repeat(40));
        let request = SearchRequest::from_json(body.as_bytes()).expect("valid");
        assert_eq!(request.query.words, ["ltd", "cloud"]);
    }

    #[test]
    fn whole_numbers_may_be_written_with_a_point_as_json_schema_allows() {
        let body =
            br#"{"limit": 44.0, "employeeCount": {"min": 973.0}, "founded": {"max": -37237.0},
                        "employeeGrowth": {"max": 0.5}}"#;
        let request = SearchRequest::from_json(body).expect("valid");
        assert_eq!(request.query.limit, 44);
        assert_eq!(request.query.employee_count.min, Some(973));
        assert_eq!(request.query.founded.max, Some(-37_237));
        assert!(SearchRequest::from_json(br#"{"limit": 4.5}"#).is_err());
        assert!(SearchRequest::from_json(br#"{"employeeCount": {"min": -1}}"#).is_err());
    }

    #[test]
    fn fields_keep_the_members_named_and_the_page_url() {
        let request = SearchRequest::from_json(
            br#"{"fields": ["follower_count", "type", "follower_count"]}"#,
        )
        .expect("valid");
        assert_eq!(
            request.fields.as_deref(),
            Some(&["type", "follower_count"][..])
        );
        let row = company_model::CompanyRow {
            final_li_url: "https://www.linkedin.com/company/audiense/".to_owned(),
            company_name: Some("Audiense".to_owned()),
            company_type: Some("Privately Held".to_owned()),
            follower_count: Some(12),
            employee_count_on_li: Some(40),
            ..company_model::CompanyRow::default()
        };
        assert_eq!(
            serde_json::to_value(request.shape(row.clone())).expect("JSON"),
            serde_json::json!({"final_li_url": row.final_li_url, "type": "Privately Held", "follower_count": 12})
        );
        let whole = SearchRequest::from_json(b"{}").expect("valid");
        assert_eq!(whole.shape(row.clone()), row);
        let error = SearchRequest::from_json(br#"{"fields": ["company_name", "description"]}"#)
            .expect_err("not a row member");
        assert_eq!(error.problems[0].pointer, "/fields/1");
        assert!(
            error.problems[0].fix.contains("follower_count"),
            "{}",
            error.problems[0].fix
        );
    }

    #[test]
    fn problems_are_named_with_their_fix() {
        let error = SearchRequest::from_json(br#"{"cursor": "next", "limit": 0, "sort": "size"}"#)
            .expect_err("three problems");
        let pointers: Vec<&str> = error.problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(pointers, ["/cursor", "/limit", "/sort"]);
        assert!(error.problems[0].fix.contains("next_cursor"));
    }
}
