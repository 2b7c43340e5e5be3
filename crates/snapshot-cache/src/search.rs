//! Searching the stored companies ([`crate::SnapshotStore::search`]): what each snapshot is indexed as ([`IndexEntry`], written in the transaction that stores it), and the one SQL
//! statement both engines run, built once here with the few places where the engines differ
//! ([`Engine`]).
//!
//! Text is compared folded on both sides ([`company_model::fold_label`] for labels,
//! [`company_model::search_words`] for full text), so SQLite (FTS5) and PostgreSQL (`tsvector`, GIN) index the
//! same words and find the same companies.

use company_model::{
    CompanyRecord, CompanyRow, PREFIX_MIN_CHARS, SearchAfter, SearchPage, SearchQuery, SearchScope,
    SearchSort, fold_label, search_words,
};
use page_url::PageUrl;

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

/// [`company_model::GROWTH_DAYS`] in milliseconds: how far back a snapshot's employee growth is measured from.
pub(crate) const GROWTH_SPAN_MS: i64 = company_model::GROWTH_DAYS * 86_400_000;

/// A value bound to the search statement.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Param {
    Int(i64),
    Float(f64),
    Text(String),
}

/// Where the engines' SQL differs. A build with one backend names one engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(all(feature = "sqlite", feature = "postgres")), allow(dead_code))]
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

/// A tenant with at least this many pages is searched from the index of the order (each row checked against
/// the tenant's pages, the first rows found end it); a smaller one from its pages (all of them found and sorted).
/// Each plan is the fast one on its side of this size; counting up to it costs a few hundred microseconds.
pub(crate) const LARGE_TENANT: u32 = 5_000;

/// Counts a tenant's pages up to [`LARGE_TENANT`]: the tenant is `?1`/`$1`, the bound `?2`/`$2`.
pub(crate) fn large_tenant_count(engine: Engine) -> String {
    let (tenant, most) = (engine.placeholder(1), engine.placeholder(2));
    format!(
        "SELECT count(*) FROM (SELECT 1 FROM tenant_pages WHERE tenant = {tenant} LIMIT {most}) pages"
    )
}

/// `column` (text) written so that neither engine searches by an index of it (numbers get `+ 0` for the same
/// reason): a filter is checked on the rows the order's index gives, a walk that stops once the page is full.
/// Starting from a filter instead reads and sorts every row it matches (a fifth of the store for one industry),
/// which made the common searches slow (docs/benchmarks.md, section 14); what this costs is a rare value, whose
/// rows the walk reaches late: at worst one pass over the order's index. So the store keeps no index of a
/// filter's column.
fn unindexed(column: &str) -> String {
    format!("({column} || '')")
}

/// The search statement and its parameters. It selects `row` and the sort key `k` (then the URL), one row more
/// than the limit so the caller knows whether another page follows. `large_tenant`: whether the tenant of a
/// tenant's scope has [`LARGE_TENANT`] pages or more ([`large_tenant_count`] tells), which decides the side
/// the statement starts from (neither planner knows one tenant's pages from another's).
pub(crate) fn statement(
    engine: Engine,
    query: &SearchQuery,
    large_tenant: bool,
) -> (String, Vec<Param>) {
    let mut params: Vec<Param> = Vec::new();
    let mut bind = |param: Param| {
        params.push(param);
        engine.placeholder(params.len())
    };
    let mut joins: Vec<String> = Vec::new();
    let mut conditions: Vec<String> = Vec::new();
    let relevance = query.sort == SearchSort::Relevance && !query.words.is_empty();
    if let SearchScope::Tenant(tenant) = query.scope {
        let tenant = bind(Param::Int(tenant));
        // With words, the matches come from the words' index (FTS5, GIN), not in the order's: they are all
        // found and sorted whatever the plan (relevance scores every one), so the tenant's pages are joined,
        // which both engines do at once, rather than looked up one row at a time (PostgreSQL would otherwise
        // walk the order's index testing each row's words: seconds, where the join takes milliseconds).
        if large_tenant && query.words.is_empty() {
            // A scalar subquery, not EXISTS, which a planner may turn into a join of all the tenant's pages:
            // this is checked row by row (one probe of tenant_pages' key) as the order's index is walked,
            // until the page is full.
            conditions.push(format!(
                "(SELECT 1 FROM tenant_pages t WHERE t.tenant = {tenant} AND t.url = s.url) IS NOT NULL"
            ));
        } else {
            joins.push(format!(
                "JOIN tenant_pages t ON t.tenant = {tenant} AND t.url = s.url"
            ));
        }
    }
    // The relevance key: higher is better, in millionths, so that it pages by key as the counts do.
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
                rank = Some("CAST(-m.rank * 1000000 AS BIGINT)".to_owned());
            }
            Engine::Postgres => {
                conditions.push(format!("s.document @@ to_tsquery('simple', {text})"));
                rank = Some(format!(
                    "CAST(ts_rank(s.document, to_tsquery('simple', {text})) * 1000000 AS BIGINT)"
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
        conditions.push(format!(
            "{} IN ({})",
            unindexed(&format!("s.{column}")),
            list.join(", ")
        ));
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
            conditions.push(format!("s.{column} + 0 >= {}", bind(Param::Int(min))));
        }
        if let Some(max) = max {
            conditions.push(format!("s.{column} + 0 <= {}", bind(Param::Int(max))));
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
    for (bound, operator) in [
        (query.employee_growth.min, ">="),
        (query.employee_growth.max, "<="),
    ] {
        if let Some(bound) = bound {
            conditions.push(format!(
                "s.employee_growth {operator} {}",
                bind(Param::Float(bound))
            ));
        }
    }
    if let Some(has_website) = query.has_website {
        let value = match engine {
            Engine::Sqlite => i64::from(has_website).to_string(),
            Engine::Postgres => has_website.to_string(),
        };
        conditions.push(format!("s.has_website = {value}"));
    }
    let key = match (query.sort, rank) {
        (SearchSort::Relevance, Some(rank)) if relevance => rank,
        (SearchSort::Employees, _) => "coalesce(s.employee_count, -1)".to_owned(),
        (SearchSort::Freshness, _) => "s.fetched_at_ms".to_owned(),
        (SearchSort::Followers | SearchSort::Relevance, _) => {
            "coalesce(s.follower_count, -1)".to_owned()
        }
    };
    if let Some(SearchAfter { key: last, url }) = &query.after {
        let (last, url) = (bind(Param::Int(*last)), bind(Param::Text(url.clone())));
        conditions.push(format!(
            "({key} < {last} OR ({key} = {last} AND s.url > {url}))"
        ));
    }
    let limit = bind(Param::Int(i64::from(query.limit) + 1));
    let filter = if conditions.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conditions.join(" AND "))
    };
    (
        format!(
            "SELECT s.row, {key} AS k, s.url FROM company_search s {joins}{filter} ORDER BY k DESC, s.url \
             LIMIT {limit}",
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
    let limit = query.limit as usize;
    let more = found.len() > limit;
    found.truncate(limit);
    let next = found
        .last()
        .filter(|_| more)
        .map(|(_, key, url)| SearchAfter {
            key: *key,
            url: url.clone(),
        });
    let rows = found
        .iter()
        .map(|(row, _, _)| serde_json::from_str(row))
        .collect::<Result<_, _>>()?;
    Ok(SearchPage { rows, next })
}
