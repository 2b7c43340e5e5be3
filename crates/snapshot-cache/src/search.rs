//! Searching the stored companies ([`crate::SnapshotStore::search`]): what each snapshot is indexed as
//! ([`IndexEntry`], written in the transaction that stores it), and the statements both engines run, one after
//! another as [`Search`] decides, built once here with the few places where the engines differ ([`Engine`]).
//!
//! Text is compared folded on both sides ([`company_model::fold_label`] for labels,
//! [`company_model::search_words`] for full text), so SQLite (FTS5) and PostgreSQL (`tsvector`, GIN) index the
//! same words and find the same companies.

use company_model::{
    CompanyRecord, CompanyRow, PREFIX_MIN_CHARS, SearchAfter, SearchPage, SearchQuery, SearchScope,
    SearchSort, fold_label, search_text,
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
        let words = |text: Option<&str>| search_text(text.unwrap_or_default());
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
            // Capped where relevance keys stop telling counts apart, so the column every search orders by
            // and the keys its cursors carry agree (no page claims a quadrillion followers).
            follower_count: count(record.follower_count).map(|n| n.min(TIER_SPAN - 2)),
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

    /// PostgreSQL's `document` lexemes: every word of the four full-text columns once, sorted, as
    /// `array_to_tsvector` keeps them (no positions: relevance reads none, and `to_tsvector` parsing the text
    /// again was most of what the index added to a snapshot's write).
    #[cfg(feature = "postgres")]
    pub(crate) fn lexemes(&self) -> Vec<String> {
        let lexemes: std::collections::BTreeSet<&str> = self
            .text
            .iter()
            .flat_map(|field| field.split_whitespace())
            .collect();
        lexemes.into_iter().map(str::to_owned).collect()
    }

    /// PostgreSQL's relevance tiers ([`tier_conditions`]): the name's words, each between spaces
    /// (`" google quantum 42 "`), and the same of the name, slogan and specialties.
    #[cfg(feature = "postgres")]
    pub(crate) fn tier_words(&self) -> [String; 2] {
        let [name, slogan, _, specialties] = &self.text;
        let spaced = |fields: &[&String]| {
            let words: Vec<&str> = fields.iter().flat_map(|f| f.split_whitespace()).collect();
            format!(" {} ", words.join(" "))
        };
        [spaced(&[name]), spaced(&[name, slogan, specialties])]
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
/// more as prefixes, but those in `whole` ([`Search::with_whole_words`]); on SQLite each found in any of
/// `fields` (PostgreSQL's tiers are placed by [`tier_conditions`]). Words are letters and digits only
/// ([`company_model::search_words`]), so nothing in them is query syntax; they are quoted all the same (a
/// PostgreSQL `tsquery` literal, `::tsquery`, takes quoted lexemes as they are, with no parser or dictionary
/// between them and the `document` [`IndexEntry::lexemes`] wrote).
fn words_in(engine: Engine, words: &[String], whole: &[String], fields: Fields) -> String {
    let prefix = |word: &String| word.chars().count() >= PREFIX_MIN_CHARS && !whole.contains(word);
    match engine {
        Engine::Sqlite => {
            let phrases = words
                .iter()
                .map(|w| format!("\"{w}\"{}", if prefix(w) { "*" } else { "" }))
                .collect::<Vec<_>>()
                .join(" ");
            match fields {
                Fields::Any => format!("({phrases})"),
                Fields::Name => format!("({{name}} : ({phrases}))"),
                Fields::Headline => format!("({{name slogan specialties}} : ({phrases}))"),
            }
        }
        Engine::Postgres => words
            .iter()
            .map(|w| format!("'{w}'{}", if prefix(w) { ":*" } else { "" }))
            .collect::<Vec<_>>()
            .join(" & "),
    }
}

/// Where a full-text query looks for its words.
#[derive(Clone, Copy)]
enum Fields {
    /// The name, slogan, description and specialties.
    Any,
    Name,
    /// The name, slogan and specialties: the fields a company says itself in.
    Headline,
}

/// The condition that every one of `words` is in `column` of PostgreSQL's `company_search` (`name_words` or
/// `headline_words`, each word between spaces): a word of [`PREFIX_MIN_CHARS`] or more as a prefix.
fn all_in(words: &[String], column: &str, bind: &mut dyn FnMut(Param) -> String) -> String {
    let each: Vec<String> = words
        .iter()
        .map(|w| {
            let pattern = if w.chars().count() >= PREFIX_MIN_CHARS {
                format!(" {w}")
            } else {
                format!(" {w} ")
            };
            format!("strpos(s.{column}, {}) > 0", bind(Param::Text(pattern)))
        })
        .collect();
    format!("({})", each.join(" AND "))
}

/// The conditions that place a PostgreSQL row in relevance `tier` (its words are matched by the `tsvector`):
/// every word in `name_words` (3); every word in `headline_words` but not all in the name (2); not every word
/// in `headline_words` (1). A row's own short columns, where a weighted `tsquery` would read every candidate's
/// `tsvector` again (GIN keeps no weights).
fn tier_conditions(
    words: &[String],
    tier: i64,
    bind: &mut dyn FnMut(Param) -> String,
) -> Vec<String> {
    match tier {
        3 => vec![all_in(words, "name_words", bind)],
        2 => vec![
            all_in(words, "headline_words", bind),
            format!("NOT {}", all_in(words, "name_words", bind)),
        ],
        1 => vec![format!("NOT {}", all_in(words, "headline_words", bind))],
        _ => Vec::new(),
    }
}

/// PostgreSQL's tally of a search's relevance tiers: the statement answering, for every row its words match,
/// the row's tier (3, 2 or 1, as [`tier_conditions`] place it), read [`Search`]'s chunk at a time. One pass over
/// the words' candidates tells all three tiers apart, where a count per tier read them once per tier (two words
/// that no name holds together read every candidate three times, a fresh bitmap of the words' index each time).
fn tier_tally(words: &[String]) -> (String, Vec<Param>) {
    let mut params: Vec<Param> = Vec::new();
    let mut bind = |param: Param| {
        params.push(param);
        Engine::Postgres.placeholder(params.len())
    };
    let text = bind(Param::Text(words_in(
        Engine::Postgres,
        words,
        &[],
        Fields::Any,
    )));
    let name = all_in(words, "name_words", &mut bind);
    let headline = all_in(words, "headline_words", &mut bind);
    (
        format!(
            "SELECT (CASE WHEN {name} THEN 3 WHEN {headline} THEN 2 ELSE 1 END)::BIGINT \
             FROM company_search s WHERE s.document @@ {text}::text::tsquery"
        ),
        params,
    )
}

/// Relevance keys (a search cursor's `key` by relevance with words): a tier (3, 2 or 1) times this, plus the
/// follower count plus one. Counts are indexed at most two below it, so a key tells every indexed count apart.
pub const TIER_SPAN: i64 = 1 << 50;

/// A tenant with at least this many pages is searched from the index of the order (each row checked against
/// the tenant's pages, the first rows found end it); a smaller one from its pages (all of them found and sorted).
/// Each plan is the fast one on its side of this size; counting up to it costs a few hundred microseconds.
pub const LARGE_TENANT: u32 = 5_000;

/// The most entries of the order's index a PostgreSQL search walks before it counts a branch's words (a probe:
/// common words fill a page there), and the most matches each read of its relevance tally takes. A store that
/// calls fewer matches common ([`COMMON_MATCHES`]) uses a quarter of its bound.
pub const SEARCH_BATCH: u32 = 500;

/// The statement counting a tenant's pages up to [`LARGE_TENANT`], and its parameters.
fn large_tenant_count(engine: Engine, tenant: i64) -> (String, Vec<Param>) {
    let (p1, p2) = (engine.placeholder(1), engine.placeholder(2));
    (
        format!(
            "SELECT count(*) FROM (SELECT 1 FROM tenant_pages WHERE tenant = {p1} LIMIT {p2}) pages"
        ),
        vec![Param::Int(tenant), Param::Int(i64::from(LARGE_TENANT))],
    )
}

/// A full-text query matching at least this many stored companies is *common*: its rows are found by walking the
/// order's index and checking each row's words, which ends once the page is full (a few rows in for a word a
/// third of the store holds); a rarer one's rows are all gathered from the words' index and sorted (a few
/// hundred at most take a millisecond or two, where walking would pass the whole index). Both plans give the
/// same rows. A store may set another bound (`SqliteSnapshotStore::with_common_matches`,
/// `PgSnapshotStore::with_common_matches`).
pub const COMMON_MATCHES: u32 = 2_000;

/// The statement counting the rows `branch`'s words match, up to `bound`, and its parameters: what
/// [`Plan::CountFirst`] decides by.
fn match_count(engine: Engine, branch: &Branch, bound: u32) -> (String, Vec<Param>) {
    let (p1, p2) = (engine.placeholder(1), engine.placeholder(2));
    // PostgreSQL counts a relevance tier by the tier tally instead ([`tier_tally`]): here every match counts.
    let matches = match engine {
        Engine::Sqlite => format!("SELECT 1 FROM company_text WHERE company_text MATCH {p1}"),
        Engine::Postgres => {
            format!("SELECT 1 FROM company_search s WHERE s.document @@ {p1}::text::tsquery")
        }
    };
    (
        format!("SELECT count(*) FROM ({matches} LIMIT {p2}) m"),
        vec![
            Param::Text(branch.text.clone().unwrap_or_default()),
            Param::Int(i64::from(bound)),
        ],
    )
}

/// One statement of a search. A search by relevance with words runs one per tier, best first, until its page
/// is full: the companies with every word in the name (tier 3), then with every word in the name, slogan or
/// specialties (2), then the rest (1), each tier by followers. Other searches run one.
struct Branch {
    /// The relevance tier, 0 when the search is not by relevance with words.
    tier: i64,
    /// The full-text query of the rows, in the engine's syntax; `None` without words.
    text: Option<String>,
    /// Where the rows start in this branch's order (the order's value and the URL that rows must follow);
    /// `None` from the top.
    after: Option<(i64, String)>,
}

impl Branch {
    /// The search's sort key of a row of this branch whose order value is `value`.
    fn key(&self, value: i64) -> i64 {
        if self.tier == 0 {
            value
        } else {
            self.tier * TIER_SPAN + value.clamp(-1, TIER_SPAN - 2) + 1
        }
    }
}

/// The statements of `query`, in the order their rows come: those a cursor has passed are left out. `whole`: the
/// words asked as they are rather than as prefixes ([`Search::with_whole_words`]).
fn branches(engine: Engine, query: &SearchQuery, whole: &[String]) -> Vec<Branch> {
    let after = query.after.as_ref().map(|a| (a.key, a.url.clone()));
    if query.words.is_empty() {
        return vec![Branch {
            tier: 0,
            text: None,
            after,
        }];
    }
    let any = words_in(engine, &query.words, whole, Fields::Any);
    if query.sort != SearchSort::Relevance {
        return vec![Branch {
            tier: 0,
            text: Some(any),
            after,
        }];
    }
    let tiers = match engine {
        Engine::Sqlite => {
            let name = words_in(engine, &query.words, whole, Fields::Name);
            let headline = words_in(engine, &query.words, whole, Fields::Headline);
            [
                (3, name.clone()),
                (2, format!("{headline} NOT {name}")),
                (1, format!("{any} NOT {headline}")),
            ]
        }
        // Every tier matches every word; tier_conditions place the rows.
        Engine::Postgres => [(3, any.clone()), (2, any.clone()), (1, any)],
    };
    tiers
        .into_iter()
        .filter_map(|(tier, text)| {
            let after = match &after {
                None => None,
                Some((key, url)) => {
                    let (at, value) = (key.div_euclid(TIER_SPAN), key.rem_euclid(TIER_SPAN) - 1);
                    match tier.cmp(&at) {
                        // The cursor is past this whole tier.
                        std::cmp::Ordering::Greater => return None,
                        std::cmp::Ordering::Equal => Some((value, url.clone())),
                        std::cmp::Ordering::Less => None,
                    }
                }
            };
            Some(Branch {
                tier,
                text: Some(text),
                after,
            })
        })
        .collect()
}

/// How a [`Branch`] finds its rows.
enum Plan {
    /// Walk the order's index, checking each row, until the page is full: without words, over the whole store or
    /// a tenant with [`LARGE_TENANT`] pages or more.
    Walk,
    /// Gather every row (a small tenant's pages) and sort them.
    Gather,
    /// Walk when the branch's words match [`COMMON_MATCHES`] (or the store's bound) rows or more ([`match_count`]
    /// tells, or on PostgreSQL for a relevance tier the tally of every tier, [`tier_tally`]), run nothing when
    /// they match none, else gather their matches from the words' index.
    CountFirst,
}

impl Branch {
    /// How this branch of `query` finds its rows; `large_tenant` as for [`statement`].
    fn plan(&self, query: &SearchQuery, large_tenant: bool) -> Plan {
        let walkable = match query.scope {
            SearchScope::Everything => true,
            SearchScope::Tenant(_) => large_tenant,
        };
        match (&self.text, walkable) {
            (_, false) => Plan::Gather,
            (None, true) => Plan::Walk,
            (Some(_), true) => Plan::CountFirst,
        }
    }
}

/// A filter's `column` written so that SQLite searches by no index of it (numbers get `+ 0` for the same
/// reason): SQLite, without statistics, would start from any index a filter names and read and sort every row it
/// matches, where walking the order's index stops once the page is full. PostgreSQL weighs both with its
/// statistics, which see through no expression, so there the column is bare. The store keeps no index of a
/// filter's column either way (docs/benchmarks.md, section 14).
fn unindexed(engine: Engine, column: &str, number: bool) -> String {
    match (engine, number) {
        (Engine::Postgres, _) => column.to_owned(),
        (Engine::Sqlite, false) => format!("({column} || '')"),
        (Engine::Sqlite, true) => format!("{column} + 0"),
    }
}

/// How a branch's statement reads its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    /// Walk the order's index, checking each row, until the page is full.
    Walk,
    /// PostgreSQL: walk at most this many entries of the order's index ([`SEARCH_BATCH`] by default). A
    /// page filled within them is the branch's first rows (every later row comes after them in the order);
    /// fewer rows, and they are set aside and the branch is planned from its matches' count. Words a
    /// twenty-fifth of the companies hold fill a page of 20 within 500 entries, in about half a millisecond on
    /// 100,000 companies, where counting their matches up to [`COMMON_MATCHES`] reads thousands of rows
    /// (15-35 ms); a rarer word's probe finds too few and costs 2-3 ms.
    Probe(usize),
    /// Gather the rows (the words' matches, or a small tenant's pages) and sort them.
    Gather,
}

/// The statement of one branch of a search and its parameters: it selects `row`, the order's value `k` and the
/// URL, at most `limit` rows. `large_tenant`: whether the tenant of a tenant's scope has [`LARGE_TENANT`] pages
/// or more ([`large_tenant_count`] tells); `read`: whether it walks the order's index (all of it, or a probe's
/// first entries) rather than gather its rows and sort them ([`Branch::plan`]).
fn statement(
    engine: Engine,
    query: &SearchQuery,
    branch: &Branch,
    large_tenant: bool,
    read: Read,
    limit: usize,
) -> (String, Vec<Param>) {
    let walk = read != Read::Gather;
    let mut params: Vec<Param> = Vec::new();
    let mut bind = |param: Param| {
        params.push(param);
        engine.placeholder(params.len())
    };
    let mut joins: Vec<String> = Vec::new();
    let mut conditions: Vec<String> = Vec::new();
    if let SearchScope::Tenant(tenant) = query.scope {
        let tenant = bind(Param::Int(tenant));
        if large_tenant && walk {
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
    if let Some(text) = &branch.text {
        let text = bind(Param::Text(text.clone()));
        match (engine, walk) {
            // The matches gathered once (an ephemeral set), each row of the walk looked up in it.
            (Engine::Sqlite, true) => conditions.push(format!(
                "s.id + 0 IN (SELECT rowid FROM company_text WHERE company_text MATCH {text})"
            )),
            (Engine::Sqlite, false) => joins.push(format!(
                "JOIN (SELECT rowid AS id FROM company_text WHERE company_text MATCH {text}) m ON m.id = s.id"
            )),
            (Engine::Postgres, _) => {
                conditions.push(format!("s.document @@ {text}::text::tsquery"));
                conditions.extend(tier_conditions(&query.words, branch.tier, &mut bind));
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
            unindexed(engine, &format!("s.{column}"), false),
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
        let column = unindexed(engine, &format!("s.{column}"), true);
        if let Some(min) = min {
            conditions.push(format!("{column} >= {}", bind(Param::Int(min))));
        }
        if let Some(max) = max {
            conditions.push(format!("{column} <= {}", bind(Param::Int(max))));
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
    // The order: the expression its index is built on, so that a walk reads it in order.
    let order = match query.sort {
        SearchSort::Employees => "coalesce(s.employee_count, -1)",
        SearchSort::Freshness => "s.fetched_at_ms",
        SearchSort::Followers | SearchSort::Relevance => "coalesce(s.follower_count, -1)",
    };
    let after = branch.after.as_ref().map(|(value, url)| {
        // Up to a NUL, which no stored URL holds and PostgreSQL refuses in text: every stored URL is after the
        // cursor's URL exactly when it is after that part of it (NUL is the least character).
        let url = url.split('\0').next().unwrap_or_default().to_owned();
        let (value, url) = (bind(Param::Int(*value)), bind(Param::Text(url)));
        if walk {
            // `order <= value` on its own, so that a walk starts at the cursor in the order's index rather than
            // read every row before it (neither planner takes an index bound out of an OR).
            format!("{order} <= {value} AND ({order} < {value} OR s.url > {url})")
        } else {
            // Rows gathered from the words' index: nothing here for a planner to start from instead of them.
            format!("({order} < {value} OR ({order} = {value} AND s.url > {url}))")
        }
    });
    conditions.extend(after.clone());
    let limit = bind(Param::Int(i64::try_from(limit).unwrap_or(i64::MAX)));
    let filter = if conditions.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", conditions.join(" AND "))
    };
    // Rows gathered from the words' index are sorted: the order's expression is hidden from the planners so
    // that neither walks its index instead, testing every row's words.
    let sorted_by = if branch.text.is_some() && !walk {
        format!("{order} + 0")
    } else {
        order.to_owned()
    };
    let sql = match read {
        // The first entries of the order's index (after the cursor) in a subquery, their order's value as `k`,
        // by which the rows are ordered again, so that the walk stops at the page's last row.
        Read::Probe(entries) => {
            let start = after.map(|a| format!(" WHERE {a}")).unwrap_or_default();
            format!(
                "SELECT s.row, s.k, s.url FROM (SELECT *, {order} AS k FROM company_search s{start} \
                 ORDER BY {order} DESC, s.url LIMIT {entries}) s {joins}{filter} \
                 ORDER BY s.k DESC, s.url LIMIT {limit}",
                joins = joins.join(" ")
            )
        }
        Read::Walk | Read::Gather => format!(
            "SELECT s.row, {order} AS k, s.url FROM company_search s {joins}{filter} \
             ORDER BY {sorted_by} DESC, s.url LIMIT {limit}",
            joins = joins.join(" ")
        ),
    };
    (sql, params)
}

/// A row a search statement returned: the row's JSON, its sort key (the order's value, or the relevance key once
/// [`Search`] has it) and its URL.
pub(crate) type Found = (String, i64, String);

/// One search, run a statement at a time: [`Search::step`] says which statement to run next and takes what it
/// answered, so the plan (the tenant's size, each branch's plan, when a branch is skipped and when the page is
/// full) is decided here once, and each engine only runs statements (SQLite in its blocking transaction,
/// PostgreSQL in its asynchronous one).
pub(crate) struct Search<'q> {
    engine: Engine,
    query: &'q SearchQuery,
    common_matches: u32,
    /// Whether the tenant has [`LARGE_TENANT`] pages or more; `None` until counted.
    large_tenant: Option<bool>,
    branches: std::vec::IntoIter<Branch>,
    waiting: Waiting,
    /// PostgreSQL's tally of the relevance tiers' matches so far ([`tier_tally`]); `None` until it starts.
    tally: Option<Tally>,
    found: Vec<Found>,
}

/// The matches of each relevance tier counted so far (index 1 to 3), whether every match was counted, and how
/// many rows the last chunk asked for (each chunk asks twice the one before, up to [`TALLY_CHUNKS_MOST`] batches:
/// a few round trips read even the matches of a word every company holds).
struct Tally {
    matches: [i64; 4],
    complete: bool,
    asked: usize,
}

/// The largest chunk of PostgreSQL's tier tally, in batches of a search's reads ([`SEARCH_BATCH`] rows by
/// default): the tally reads one batch of matches, then twice as many each time after, up to this many batches
/// a round trip.
pub const TALLY_CHUNKS_MOST: usize = 16;

/// What the statement [`Search::step`] asked last was for.
enum Waiting {
    Nothing,
    TenantPages,
    Matches(Branch),
    /// A probe of the branch's first rows ([`Read::Probe`]).
    Probe(Branch),
    /// A chunk of the tier tally, to decide `Branch` by.
    Tiers(Branch),
    Rows(Branch),
}

/// What to run next.
pub(crate) enum Step {
    /// A statement answering one count, in its first column.
    Count(String, Vec<Param>),
    /// PostgreSQL only: a statement answering one relevance tier per row (a `BIGINT`, 3, 2 or 1), of which the
    /// first `chunk` rows are wanted now ([`Answer::Tiers`]); the statement is kept open (a portal) for
    /// [`Step::MoreTiers`] until the search ends.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Tiers(String, Vec<Param>, usize),
    /// The next `chunk` rows of the last [`Step::Tiers`] statement.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    MoreTiers(usize),
    /// A statement answering rows of three columns: the row's JSON, the order's value and the URL.
    Rows(String, Vec<Param>),
    /// The search is over: the rows found in order, at most one more than its limit ([`page_of`]).
    Done(Vec<Found>),
}

/// What the statement of the last [`Step`] answered.
pub(crate) enum Answer {
    /// Nothing yet: the first step.
    Start,
    Count(i64),
    /// The tiers of a [`Step::Tiers`] statement's next rows: fewer than the chunk asked for when they are its last.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Tiers(Vec<i64>),
    Rows(Vec<Found>),
}

impl<'q> Search<'q> {
    /// A search of `query` on `engine`, words matching `common_matches` rows or more being common
    /// ([`COMMON_MATCHES`]).
    pub(crate) fn new(engine: Engine, query: &'q SearchQuery, common_matches: u32) -> Self {
        Self {
            engine,
            query,
            common_matches,
            large_tenant: match query.scope {
                SearchScope::Everything => Some(false),
                SearchScope::Tenant(_) => None,
            },
            branches: branches(engine, query, &[]).into_iter(),
            waiting: Waiting::Nothing,
            tally: None,
            found: Vec::new(),
        }
    }

    /// The same search with the words of `whole` asked as they are rather than as prefixes: words of
    /// [`PREFIX_MIN_CHARS`] or more that no longer word in the store's index begins with, so that either way finds
    /// the same companies. SQLite's store says which (`sqlite.rs`, `whole_words`): FTS5 merges a prefix's matches
    /// from every segment of its index before it answers the first, where a word's are read as they are needed,
    /// so a count up to [`COMMON_MATCHES`] stops there (counting a word a third of 100,000 companies hold to
    /// 2,000: 2.4 ms as a prefix, 0.3 as a word; docs/performance.md, section 14).
    #[cfg(feature = "sqlite")]
    pub(crate) fn with_whole_words(mut self, whole: &[String]) -> Self {
        self.branches = branches(self.engine, self.query, whole).into_iter();
        self
    }

    /// How many rows a PostgreSQL probe walks ([`Read::Probe`]) and each chunk of the tier tally reads
    /// ([`Step::Tiers`]): a quarter of the bound common words start at, at most [`SEARCH_BATCH`]. So a tier is
    /// known common at most that many rows past its bound, and a store that calls fewer matches common (a
    /// test's) probes less.
    fn batch(&self) -> usize {
        (self.common_matches as usize / 4).clamp(1, SEARCH_BATCH as usize)
    }

    /// Takes what the last step's statement answered ([`Answer::Start`] at first) and says what to run next.
    pub(crate) fn step(&mut self, answer: Answer) -> Step {
        match (
            std::mem::replace(&mut self.waiting, Waiting::Nothing),
            answer,
        ) {
            (Waiting::TenantPages, Answer::Count(pages)) => {
                self.large_tenant = Some(pages >= i64::from(LARGE_TENANT));
            }
            // No match: the statement would read the same candidates again to find nothing.
            (Waiting::Matches(branch), Answer::Count(matches)) if matches > 0 => {
                return self.read(
                    branch,
                    if matches >= i64::from(self.common_matches) {
                        Read::Walk
                    } else {
                        Read::Gather
                    },
                );
            }
            (Waiting::Tiers(branch), Answer::Tiers(tiers)) => {
                if let Some(tally) = &mut self.tally {
                    tally.complete = tiers.len() < tally.asked;
                    for tier in tiers {
                        tally.matches[tier.clamp(0, 3) as usize] += 1;
                    }
                }
                if let Some(step) = self.by_tally(branch) {
                    return step;
                }
            }
            (Waiting::Probe(branch), Answer::Rows(rows)) if rows.len() < self.wanted() => {
                if let Some(step) = self.count_first(branch) {
                    return step;
                }
            }
            (Waiting::Rows(branch) | Waiting::Probe(branch), Answer::Rows(rows)) => {
                self.found.extend(
                    rows.into_iter()
                        .map(|(row, value, url)| (row, branch.key(value), url)),
                );
            }
            _ => {}
        }
        let large_tenant = match (self.large_tenant, self.query.scope) {
            (Some(large), _) => large,
            (None, SearchScope::Tenant(tenant)) => {
                self.waiting = Waiting::TenantPages;
                let (sql, params) = large_tenant_count(self.engine, tenant);
                return Step::Count(sql, params);
            }
            // `new` knows the whole store is no tenant.
            (None, SearchScope::Everything) => false,
        };
        while self.found.len() <= self.query.limit as usize
            && let Some(branch) = self.branches.next()
        {
            match branch.plan(self.query, large_tenant) {
                Plan::Walk => return self.read(branch, Read::Walk),
                Plan::Gather => return self.read(branch, Read::Gather),
                // PostgreSQL first walks the order's index a little way: common words fill the page there,
                // before anything is counted (unless the tally already tells this tier, or the page wants more
                // rows than the probe reads).
                Plan::CountFirst
                    if self.engine == Engine::Postgres
                        && !self.tallied(&branch)
                        && self.wanted() <= self.batch() =>
                {
                    return self.read(branch, Read::Probe(self.batch()));
                }
                Plan::CountFirst => {
                    if let Some(step) = self.count_first(branch) {
                        return step;
                    }
                }
            }
        }
        Step::Done(std::mem::take(&mut self.found))
    }

    /// How many more rows the page wants: its limit and one more, to tell whether a next page exists.
    fn wanted(&self) -> usize {
        (self.query.limit as usize + 1).saturating_sub(self.found.len())
    }

    /// Whether the tier tally already decides `branch` (its tier is common, or every match was counted).
    fn tallied(&self, branch: &Branch) -> bool {
        branch.tier > 0
            && self.tally.as_ref().is_some_and(|tally| {
                tally.complete
                    || tally.matches[branch.tier.clamp(0, 3) as usize]
                        >= i64::from(self.common_matches)
            })
    }

    /// The step that counts `branch`'s matches to plan it ([`Plan::CountFirst`]): on PostgreSQL, for a relevance
    /// tier, the tier tally (which places a row in its tier by the row's own columns, so one tells every tier);
    /// otherwise a count of the branch's matches. `None` when the tally shows the tier has no match.
    fn count_first(&mut self, branch: Branch) -> Option<Step> {
        if self.engine == Engine::Postgres && branch.tier > 0 {
            return self.by_tally(branch);
        }
        let (sql, params) = match_count(self.engine, &branch, self.common_matches);
        self.waiting = Waiting::Matches(branch);
        Some(Step::Count(sql, params))
    }

    /// The step that decides or runs `branch` by the tier tally: the tally's start or its next chunk while the
    /// branch's tier is neither known common nor fully counted, then its rows (walked when common, gathered when
    /// rare); `None` when the tier has no match (the branch is skipped).
    fn by_tally(&mut self, branch: Branch) -> Option<Step> {
        let (batch, common) = (self.batch(), i64::from(self.common_matches));
        let Some(tally) = &mut self.tally else {
            let (sql, params) = tier_tally(&self.query.words);
            self.tally = Some(Tally {
                matches: [0; 4],
                complete: false,
                asked: batch,
            });
            self.waiting = Waiting::Tiers(branch);
            return Some(Step::Tiers(sql, params, batch));
        };
        let matches = tally.matches[branch.tier.clamp(0, 3) as usize];
        if matches >= common {
            Some(self.read(branch, Read::Walk))
        } else if !tally.complete {
            tally.asked = (tally.asked * 2).min(batch * TALLY_CHUNKS_MOST);
            let chunk = tally.asked;
            self.waiting = Waiting::Tiers(branch);
            Some(Step::MoreTiers(chunk))
        } else if matches == 0 {
            None
        } else {
            Some(self.read(branch, Read::Gather))
        }
    }

    /// The step reading `branch`'s rows as `read` says, up to the page's one more row.
    fn read(&mut self, branch: Branch, read: Read) -> Step {
        let (sql, params) = statement(
            self.engine,
            self.query,
            &branch,
            self.large_tenant == Some(true),
            read,
            self.wanted(),
        );
        self.waiting = match read {
            Read::Probe(_) => Waiting::Probe(branch),
            Read::Walk | Read::Gather => Waiting::Rows(branch),
        };
        Step::Rows(sql, params)
    }
}

/// The page of a search from the rows it found ([`Step::Done`]): at most `limit` rows, and where the next page
/// starts when the search found one more.
pub(crate) fn page_of(
    query: &SearchQuery,
    mut found: Vec<Found>,
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

#[cfg(test)]
mod tests {
    //! The plan [`Search`] steps through, with the answers a store would give: which statement comes next is
    //! decided here alone (the stores' tests check the rows, on both engines).

    use super::*;
    use company_model::search_words;

    /// Steps `search` with `answers` in turn, returning each step's kind: `count`, `rows` or `done`.
    fn kinds(search: &mut Search<'_>, answers: Vec<Answer>) -> Vec<&'static str> {
        answers
            .into_iter()
            .map(|answer| match search.step(answer) {
                Step::Count(..) => "count",
                Step::Tiers(..) => "tiers",
                Step::MoreTiers(_) => "more",
                Step::Rows(..) => "rows",
                Step::Done(_) => "done",
            })
            .collect()
    }

    fn row(n: i64) -> Found {
        (
            format!("{{\"n\": {n}}}"),
            n,
            format!("https://www.linkedin.com/company/c{n}"),
        )
    }

    fn by_relevance(words: &str, scope: SearchScope, limit: u32) -> SearchQuery {
        let mut query = SearchQuery::new(scope);
        query.words = search_words(words);
        query.sort = SearchSort::Relevance;
        query.limit = limit;
        query
    }

    #[test]
    fn a_tier_without_a_match_is_skipped_and_a_full_page_ends_the_search() {
        let query = by_relevance("quantum analytics", SearchScope::Everything, 1);
        let mut search = Search::new(Engine::Sqlite, &query, 10);
        let steps = kinds(
            &mut search,
            vec![
                Answer::Start,
                // Tier 3 matches nothing: tier 2 is counted next, without reading tier 3.
                Answer::Count(0),
                // Tier 2 is rare: gathered.
                Answer::Count(3),
                // One row and one more: the page is full, tier 1 is never counted.
                Answer::Rows(vec![row(7), row(5)]),
            ],
        );
        assert_eq!(steps, ["count", "count", "rows", "done"]);
    }

    #[test]
    fn postgres_probes_the_order_first_and_a_page_found_there_ends_the_search() {
        // A bound of 10: probes of 2 entries, so a page of 1 (and one more row) can be found in one.
        for sort in [SearchSort::Relevance, SearchSort::Followers] {
            let mut query = by_relevance("robotics", SearchScope::Everything, 1);
            query.sort = sort;
            let mut search = Search::new(Engine::Postgres, &query, 10);
            let Step::Rows(sql, _) = search.step(Answer::Start) else {
                panic!("a probe comes first");
            };
            assert!(
                sql.contains("LIMIT 2)"),
                "a probe of a quarter of the bound: {sql}"
            );
            assert!(sql.contains("ORDER BY s.k DESC, s.url"), "{sql}");
            // The page and one more: nothing is counted.
            let rows = vec![row(2), row(1)];
            assert!(
                matches!(search.step(Answer::Rows(rows)), Step::Done(_)),
                "{sort:?}"
            );
        }
        // Too few rows within the probe: the words' matches are counted.
        let mut query = by_relevance("robotics", SearchScope::Everything, 1);
        query.sort = SearchSort::Followers;
        let mut search = Search::new(Engine::Postgres, &query, 10);
        let steps = kinds(&mut search, vec![Answer::Start, Answer::Rows(vec![row(3)])]);
        assert_eq!(steps, ["rows", "count"]);
        // A page of 5 wants 6 rows, more than a probe of 2 entries can hold: counted at once.
        query.limit = 5;
        let mut search = Search::new(Engine::Postgres, &query, 10);
        assert!(matches!(search.step(Answer::Start), Step::Count(..)));
    }

    #[test]
    fn postgres_tallies_every_tier_in_one_pass_read_until_the_tier_is_decided() {
        // A bound of 10: chunks of 2 rows.
        let query = by_relevance("quantum analytics", SearchScope::Everything, 1);
        let mut search = Search::new(Engine::Postgres, &query, 10);
        assert!(matches!(search.step(Answer::Start), Step::Rows(..)));
        // The probe of tier 3 finds nothing: the tally starts.
        let Step::Tiers(sql, params, chunk) = search.step(Answer::Rows(Vec::new())) else {
            panic!("the tally comes after the probe");
        };
        assert_eq!(chunk, 2);
        assert!(sql.contains("THEN 3") && sql.contains("THEN 2"), "{sql}");
        assert_eq!(
            params.len(),
            5,
            "the words, then each word for the name and the headline"
        );
        let steps = kinds(
            &mut search,
            vec![
                // A full chunk of tier-1 rows: tier 3 may still have matches further on.
                Answer::Tiers(vec![1, 1]),
                // The last rows (fewer than a chunk): tier 3 has none and is skipped; tier 2 has one, gathered
                // without a probe (the tally tells it).
                Answer::Tiers(vec![2]),
                // One row and one more: the page is full.
                Answer::Rows(vec![row(7), row(5)]),
            ],
        );
        assert_eq!(steps, ["more", "rows", "done"]);
    }

    #[test]
    fn postgres_walks_a_tier_once_the_tally_shows_it_common_and_reads_on_for_the_next() {
        // A bound of 4: a batch of 1 row, too few for a probe of a page of 5. The tally's chunks double: 1, 2, 4.
        let query = by_relevance("robotics", SearchScope::Everything, 5);
        let mut search = Search::new(Engine::Postgres, &query, 4);
        let Step::Tiers(_, _, 1) = search.step(Answer::Start) else {
            panic!("the tally, a batch at first");
        };
        let Step::MoreTiers(2) = search.step(Answer::Tiers(vec![3])) else {
            panic!("then twice as many");
        };
        let Step::MoreTiers(4) = search.step(Answer::Tiers(vec![3, 3])) else {
            panic!("then twice as many again");
        };
        // Tier 3's fourth match and more: common, walked.
        let steps = kinds(&mut search, vec![Answer::Tiers(vec![3, 3, 1, 1])]);
        assert_eq!(steps, ["rows"]);
        // Three rows, the page not full: tier 2 is decided by the same tally, read on (no second tally). It ends
        // there: tier 2 has no match and is skipped; tier 1 has two, gathered.
        let steps = kinds(
            &mut search,
            vec![
                Answer::Rows(vec![row(9), row(8), row(7)]),
                Answer::Tiers(vec![]),
                Answer::Rows(vec![row(2)]),
            ],
        );
        assert_eq!(steps, ["more", "rows", "done"]);
    }

    #[test]
    fn the_rows_of_a_tier_carry_its_relevance_key() {
        let query = by_relevance("quantum", SearchScope::Everything, 5);
        let mut search = Search::new(Engine::Sqlite, &query, 10);
        let answers = [
            Answer::Start,
            // Tier 3: one match, gathered.
            Answer::Count(1),
            Answer::Rows(vec![row(40)]),
            // Tier 2: none. Tier 1: common, walked.
            Answer::Count(0),
            Answer::Count(20),
            Answer::Rows(vec![row(900)]),
        ];
        let mut found = None;
        for answer in answers {
            if let Step::Done(rows) = search.step(answer) {
                found = Some(rows);
            }
        }
        let keys: Vec<i64> = found
            .expect("done")
            .iter()
            .map(|(_, key, _)| *key)
            .collect();
        assert_eq!(keys, [3 * TIER_SPAN + 41, TIER_SPAN + 901]);
    }

    #[test]
    fn a_tenant_is_sized_first_and_a_small_one_gathers_without_counting() {
        let query = by_relevance("quantum", SearchScope::Tenant(7), 5);
        let mut search = Search::new(Engine::Postgres, &query, 10);
        let Step::Count(sql, params) = search.step(Answer::Start) else {
            panic!("the tenant's pages are counted first");
        };
        assert!(sql.contains("tenant_pages"), "{sql}");
        assert_eq!(params, [Param::Int(7), Param::Int(i64::from(LARGE_TENANT))]);
        let Step::Rows(sql, _) = search.step(Answer::Count(i64::from(LARGE_TENANT) - 1)) else {
            panic!("a small tenant's pages are gathered without a count of the words' matches");
        };
        assert!(sql.contains("JOIN tenant_pages"), "{sql}");
        // A large tenant walks the order's index once the words are counted common, each row checked (a page of
        // 5 wants more rows than a probe of 2 entries holds: no probe).
        let mut search = Search::new(Engine::Postgres, &query, 10);
        search.step(Answer::Start);
        assert!(matches!(
            search.step(Answer::Count(i64::from(LARGE_TENANT))),
            Step::Tiers(..)
        ));
        // The tally's chunks: 2, 4, then 8; tier 3 common at its tenth match.
        assert!(matches!(
            search.step(Answer::Tiers(vec![3; 2])),
            Step::MoreTiers(4)
        ));
        assert!(matches!(
            search.step(Answer::Tiers(vec![3; 4])),
            Step::MoreTiers(8)
        ));
        let Step::Rows(sql, _) = search.step(Answer::Tiers(vec![3; 8])) else {
            panic!("common words are walked");
        };
        assert!(sql.contains("SELECT 1 FROM tenant_pages t"), "{sql}");
        assert!(sql.contains("coalesce(s.follower_count, -1) DESC"), "{sql}");
    }
}
