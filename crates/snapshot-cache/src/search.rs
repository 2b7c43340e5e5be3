//! Searching the stored companies ([`crate::SnapshotStore::search`]): what a query asks ([`SearchQuery`]), what
//! each snapshot is indexed as ([`IndexEntry`], written in the transaction that stores it), and the one SQL
//! statement both engines run, built once here with the few places where the engines differ
//! ([`Engine`]).
//!
//! Text is compared folded on both sides ([`company_model::fold_label`] for labels,
//! [`company_model::search_words`] for full text), so SQLite (FTS5) and PostgreSQL (`tsvector`, GIN) index the
//! same words and find the same companies.

use company_model::{CompanyRecord, CompanyRow, fold_label, search_words};
use page_url::PageUrl;

/// The most rows one search answers.
pub const MAX_SEARCH_LIMIT: u32 = 100;
/// The deepest row a relevance-sorted search pages to (offset paging: relevance has no key to page by).
pub const MAX_RELEVANCE_OFFSET: u32 = 1_000;
/// Full-text words of at least this many characters match as prefixes (`secur` finds `security`); shorter
/// words match whole words only, so that one letter cannot ask for half the index.
pub const PREFIX_MIN_CHARS: usize = 3;

/// Whose companies a search looks through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchScope {
    /// The pages this tenant ([`company_model::Tenant::key`]) was answered ([`crate::SnapshotStore::note_seen`]).
    Tenant(i64),
    /// Every stored page (a single-team deployment).
    Everything,
}

/// The order of a search's rows; ties are broken by URL, ascending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchSort {
    /// Best full-text match first (SQLite BM25, PostgreSQL `ts_rank`, the name weighing most); needs words.
    Relevance,
    /// Most followers first; pages without a count last.
    Followers,
    /// Most employees on the network first; pages without a count last.
    Employees,
    /// Most recently fetched first.
    Freshness,
}

/// Where the next page of a search starts: after the last row of the page before.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SearchAfter {
    /// Rows skipped (relevance order).
    Offset(u32),
    /// The last row's sort key and URL (every other order): rows after it in that order.
    Key {
        /// Its sort key: the count (`-1` when absent) or `fetched_at` in Unix milliseconds.
        key: i64,
        /// Its URL.
        url: String,
    },
}

/// An inclusive range of a whole number; `None` leaves that end open. A row without the number matches only a
/// range open at both ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Range<T> {
    /// The least value matched.
    pub min: Option<T>,
    /// The greatest value matched.
    pub max: Option<T>,
}

/// A search over the stored companies: every filter given must match (each list matches any of its values,
/// compared by [`company_model::fold_label`]); the words, if any, must all be found in the name, slogan,
/// description or specialties.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchQuery {
    /// Full-text words ([`company_model::search_words`] of the query text); empty for none.
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
    /// How many rows at most (1 to [`MAX_SEARCH_LIMIT`]).
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

/// What a snapshot is indexed as: its row and the folded values filters compare.
pub(crate) struct IndexEntry {
    /// The [`CompanyRow`] as JSON.
    pub(crate) row: String,
    pub(crate) industry: Option<String>,
    pub(crate) company_size: Option<String>,
    pub(crate) company_type: Option<String>,
    pub(crate) country: Option<String>,
    pub(crate) region: Option<String>,
    pub(crate) locality: Option<String>,
    /// Each specialty folded, each between newlines (`"\nai\ncloud\n"`), so one is found by `"\nai\n"`.
    pub(crate) specialties: String,
    pub(crate) employee_count: Option<i64>,
    pub(crate) follower_count: Option<i64>,
    pub(crate) founded: Option<i64>,
    pub(crate) has_website: bool,
    pub(crate) fetched_at_ms: i64,
    /// The full-text columns, as words joined by spaces: name, slogan, description, specialties.
    pub(crate) text: [String; 4],
}

impl IndexEntry {
    /// The entry of the snapshot of `url` fetched at `fetched_at`; `record` is `None` when its text did not parse
    /// (the page is still indexed, by URL and time alone, so that it is indexed once).
    pub(crate) fn of(
        url: &PageUrl,
        record: Option<&CompanyRecord>,
        fetched_at: jiff::Timestamp,
    ) -> Self {
        let empty = CompanyRecord::default();
        let record = record.unwrap_or(&empty);
        let row = CompanyRow::of(url.as_str(), record, fetched_at);
        let label = |text: &Option<String>| {
            text.as_deref()
                .map(fold_label)
                .filter(|label| !label.is_empty())
        };
        let hq = record.headquarters.as_ref();
        let count = |n: Option<u64>| n.and_then(|n| i64::try_from(n).ok());
        let words = |text: Option<&str>| search_words(text.unwrap_or_default()).join(" ");
        let specialties: Vec<String> = record
            .specialties
            .iter()
            .map(|s| fold_label(s))
            .filter(|s| !s.is_empty())
            .collect();
        Self {
            // A row is plain data: serializing it cannot fail.
            row: serde_json::to_string(&row).unwrap_or_default(),
            industry: label(&record.industries),
            company_size: label(&record.company_size),
            company_type: label(&record.company_type),
            country: hq.and_then(|hq| label(&hq.country)),
            region: hq.and_then(|hq| label(&hq.region)),
            locality: hq.and_then(|hq| label(&hq.locality)),
            specialties: if specialties.is_empty() {
                String::new()
            } else {
                format!("\n{}\n", specialties.join("\n"))
            },
            employee_count: count(record.employee_count_on_li),
            follower_count: count(record.follower_count),
            founded: record.founded.map(i64::from),
            has_website: record
                .website
                .as_deref()
                .is_some_and(|w| !w.trim().is_empty()),
            fetched_at_ms: fetched_at.as_millisecond(),
            text: [
                words(record.company_name.as_deref()),
                words(record.slogan.as_deref()),
                words(record.description.as_deref()),
                words(Some(&record.specialties.join(" "))),
            ],
        }
    }
}

/// A value bound to the search statement.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Param {
    Int(i64),
    Text(String),
}

/// Where the engines' SQL differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    Sqlite,
    Postgres,
}

impl Engine {
    fn placeholder(self, n: usize) -> String {
        match self {
            Self::Sqlite => format!("?{n}"),
            Self::Postgres => format!("${n}"),
        }
    }
}

/// The full-text query of `words` in the engine's syntax: every word required, words of [`PREFIX_MIN_CHARS`] or
/// more as prefixes. Words are letters and digits only ([`company_model::search_words`]), so nothing in them is
/// query syntax; FTS5 words are quoted all the same.
fn text_query(engine: Engine, words: &[String]) -> String {
    let prefix = |word: &String| word.chars().count() >= PREFIX_MIN_CHARS;
    match engine {
        Engine::Sqlite => words
            .iter()
            .map(|w| format!("\"{w}\"{}", if prefix(w) { "*" } else { "" }))
            .collect::<Vec<_>>()
            .join(" "),
        Engine::Postgres => words
            .iter()
            .map(|w| format!("{w}{}", if prefix(w) { ":*" } else { "" }))
            .collect::<Vec<_>>()
            .join(" & "),
    }
}

/// The search statement and its parameters. It selects `row` and the sort key `k` (then the URL), one row more
/// than the limit so the caller knows whether another page follows.
pub(crate) fn statement(engine: Engine, query: &SearchQuery) -> (String, Vec<Param>) {
    let mut params: Vec<Param> = Vec::new();
    let mut bind = |param: Param| {
        params.push(param);
        engine.placeholder(params.len())
    };
    let mut joins: Vec<String> = Vec::new();
    let mut conditions: Vec<String> = Vec::new();
    if let SearchScope::Tenant(tenant) = query.scope {
        let tenant = bind(Param::Int(tenant));
        joins.push(format!(
            "JOIN tenant_pages t ON t.tenant = {tenant} AND t.url = s.url"
        ));
    }
    let relevance = query.sort == SearchSort::Relevance && !query.words.is_empty();
    let mut rank = None;
    if !query.words.is_empty() {
        let text = bind(Param::Text(text_query(engine, &query.words)));
        match engine {
            Engine::Sqlite => {
                // BM25: lower is better; the name weighs most, then slogan and specialties.
                joins.push(format!(
                    "JOIN (SELECT rowid AS id, bm25(company_text, 10.0, 4.0, 1.0, 4.0) AS rank FROM company_text \
                     WHERE company_text MATCH {text}) m ON m.id = s.id"
                ));
                rank = Some("m.rank".to_owned());
            }
            Engine::Postgres => {
                conditions.push(format!("s.document @@ to_tsquery('simple', {text})"));
                rank = Some(format!(
                    "-ts_rank(s.document, to_tsquery('simple', {text}))"
                ));
            }
        }
    }
    let mut any_of = |column: &str, values: &[String]| {
        if values.is_empty() {
            return;
        }
        let list: Vec<String> = values
            .iter()
            .map(|v| bind(Param::Text(fold_label(v))))
            .collect();
        conditions.push(format!("s.{column} IN ({})", list.join(", ")));
    };
    any_of("industry", &query.industries);
    any_of("company_size", &query.company_sizes);
    any_of("company_type", &query.company_types);
    any_of("country", &query.countries);
    any_of("region", &query.regions);
    any_of("locality", &query.localities);
    if !query.specialties.is_empty() {
        let position = |p: &str| match engine {
            Engine::Sqlite => format!("instr(s.specialties, {p}) > 0"),
            Engine::Postgres => format!("strpos(s.specialties, {p}) > 0"),
        };
        let each: Vec<String> = query
            .specialties
            .iter()
            .map(|s| position(&bind(Param::Text(format!("\n{}\n", fold_label(s))))))
            .collect();
        let joiner = if query.all_specialties {
            " AND "
        } else {
            " OR "
        };
        conditions.push(format!("({})", each.join(joiner)));
    }
    let mut range = |column: &str, min: Option<i64>, max: Option<i64>| {
        if let Some(min) = min {
            conditions.push(format!("s.{column} >= {}", bind(Param::Int(min))));
        }
        if let Some(max) = max {
            conditions.push(format!("s.{column} <= {}", bind(Param::Int(max))));
        }
    };
    let count = |n: Option<u64>| n.map(|n| i64::try_from(n).unwrap_or(i64::MAX));
    range(
        "employee_count",
        count(query.employee_count.min),
        count(query.employee_count.max),
    );
    range(
        "follower_count",
        count(query.follower_count.min),
        count(query.follower_count.max),
    );
    range(
        "founded",
        query.founded.min.map(i64::from),
        query.founded.max.map(i64::from),
    );
    range(
        "fetched_at_ms",
        query.fetched_at.min.map(jiff::Timestamp::as_millisecond),
        query.fetched_at.max.map(jiff::Timestamp::as_millisecond),
    );
    if let Some(has_website) = query.has_website {
        let value = match engine {
            Engine::Sqlite => i64::from(has_website).to_string(),
            Engine::Postgres => has_website.to_string(),
        };
        conditions.push(format!("s.has_website = {value}"));
    }
    let key = match query.sort {
        SearchSort::Followers => "coalesce(s.follower_count, -1)",
        SearchSort::Employees => "coalesce(s.employee_count, -1)",
        SearchSort::Freshness => "s.fetched_at_ms",
        SearchSort::Relevance => "CAST(0 AS BIGINT)",
    };
    let mut offset = 0;
    match &query.after {
        Some(SearchAfter::Key { key: last, url }) if !relevance => {
            let (last, last_again, url) = (
                bind(Param::Int(*last)),
                bind(Param::Int(*last)),
                bind(Param::Text(url.clone())),
            );
            conditions.push(format!(
                "({key} < {last} OR ({key} = {last_again} AND s.url > {url}))"
            ));
        }
        Some(SearchAfter::Offset(skip)) => offset = *skip,
        _ => {}
    }
    let order = if let (true, Some(rank)) = (relevance, rank) {
        format!("{rank}, s.url")
    } else {
        format!("{key} DESC, s.url")
    };
    let limit = bind(Param::Int(i64::from(query.limit.min(MAX_SEARCH_LIMIT)) + 1));
    let offset = bind(Param::Int(i64::from(offset)));
    let filter = if conditions.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conditions.join(" AND "))
    };
    (
        format!(
            "SELECT s.row, {key} AS k, s.url FROM company_search s {joins}{filter} ORDER BY {order} LIMIT {limit} \
             OFFSET {offset}",
            joins = joins.join(" ")
        ),
        params,
    )
}

/// The page of a search from the rows its statement returned (row JSON, sort key, URL): at most `limit` rows,
/// and where the next page starts when the statement found one more.
pub(crate) fn page_of(
    query: &SearchQuery,
    mut found: Vec<(String, i64, String)>,
) -> Result<SearchPage, serde_json::Error> {
    let limit = query.limit.min(MAX_SEARCH_LIMIT) as usize;
    let more = found.len() > limit;
    found.truncate(limit);
    let next = match (more, found.last()) {
        (true, Some((_, key, url))) => Some(
            if query.sort == SearchSort::Relevance && !query.words.is_empty() {
                let before = match query.after {
                    Some(SearchAfter::Offset(skip)) => skip,
                    _ => 0,
                };
                SearchAfter::Offset(before + limit as u32)
            } else {
                SearchAfter::Key {
                    key: *key,
                    url: url.clone(),
                }
            },
        ),
        _ => None,
    };
    let rows = found
        .iter()
        .map(|(row, _, _)| serde_json::from_str(row))
        .collect::<Result<_, _>>()?;
    Ok(SearchPage { rows, next })
}
