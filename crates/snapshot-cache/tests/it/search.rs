//! Search over the stored companies, on both engines: a store of records generated from the captured pages
//! (varied in every field a filter reads), each filter and several combinations checked against a brute-force
//! scan of the same records, full text, paging, scope, and the indexing of a store written before search.

use std::collections::HashSet;
use std::sync::Arc;

use company_model::{
    CompanyRecord, CompanyRow, MAX_WORD_BYTES, PREFIX_MIN_CHARS, Range, RecordJson, SearchAfter,
    SearchQuery, SearchScope, SearchSort, fold_label, search_words,
};
use jiff::{SignedDuration, Timestamp};
use page_url::{NetworkDomain, PageUrl};
use snapshot_cache::{SearchError, Snapshot, SnapshotStore};
use test_support::Engine;

use crate::{open_store, open_store_planning, url};

/// The time limit of every search here but those that test it: far more than any takes.
const LIMIT: std::time::Duration = std::time::Duration::from_mins(1);

/// Tenants' keys as the stores keep them.
const A: i64 = 1;
const B: i64 = 2;

/// One generated company as stored.
#[derive(Clone, Debug)]
struct Company {
    url: PageUrl,
    record: CompanyRecord,
    fetched_at: Timestamp,
}

fn captured(file: &str, slug: &str) -> CompanyRecord {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fixtures/pages")
        .join(file);
    let html = std::fs::read_to_string(&path).expect("captured page");
    let domain = NetworkDomain::default();
    let url =
        PageUrl::parse_submitted(&format!("https://www.linkedin.com/company/{slug}"), &domain)
            .expect("URL");
    page_scraper::parse_page(&html, &url, &domain).expect("parses")
}

/// `count` companies generated from the captured Google and Audiense pages.
fn companies(count: usize, now: Timestamp) -> Vec<Company> {
    let bases = [
        captured("company-google-2025.html", "google"),
        captured("company-audiense-2024.html", "audiense"),
    ];
    test_support::companies::generated(&bases, count, now)
        .into_iter()
        .map(|company| Company {
            url: PageUrl::parse_submitted(
                &format!("https://www.linkedin.com/company/{}", company.slug),
                &NetworkDomain::default(),
            )
            .expect("URL"),
            record: company.record,
            fetched_at: company.fetched_at,
        })
        .collect()
}

/// Who was answered which company: A two thirds, B the rest and every tenth of A's.
fn seen_by(tenant: i64, index: usize) -> bool {
    match tenant {
        A => !index.is_multiple_of(3),
        _ => index.is_multiple_of(3) || index % 10 == 1,
    }
}

async fn stored(engine: &Engine, count: usize) -> (Arc<dyn SnapshotStore>, Vec<Company>) {
    let store = open_store(engine).await;
    let now = Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .expect("rounds");
    let companies = companies(count, now);
    for company in &companies {
        let snapshot = Snapshot {
            url: company.url.clone(),
            record: RecordJson::from_record(&company.record),
            fetched_at: company.fetched_at,
        };
        store.put(&snapshot, &[], None).await.expect("stored");
    }
    for tenant in [A, B] {
        let seen: Vec<PageUrl> = companies
            .iter()
            .enumerate()
            .filter(|(i, _)| seen_by(tenant, *i))
            .map(|(_, c)| c.url.clone())
            .collect();
        store.note_seen(tenant, &seen, now).await.expect("noted");
        // Noting again changes nothing.
        store
            .note_seen(tenant, &seen[..3], now)
            .await
            .expect("noted again");
    }
    (store, companies)
}

/// Whether `company` matches `query`, read from the record itself with the folding rules the search states.
fn matches(query: &SearchQuery, index: usize, company: &Company) -> bool {
    let r = &company.record;
    let label = |value: Option<&str>, wanted: &[String]| {
        wanted.is_empty()
            || value.is_some_and(|v| wanted.iter().any(|w| fold_label(w) == fold_label(v)))
    };
    let hq = r.headquarters.as_ref();
    let within = |value: Option<i64>, range: (Option<i64>, Option<i64>)| match range {
        (None, None) => true,
        (min, max) => {
            value.is_some_and(|v| min.is_none_or(|m| v >= m) && max.is_none_or(|m| v <= m))
        }
    };
    let count = |n: Option<u64>| n.map(u64::cast_signed);
    let range = |r: Range<u64>| (count(r.min), count(r.max));
    let folded_specialties: Vec<String> = r.specialties.iter().map(|s| fold_label(s)).collect();
    let has = |s: &String| folded_specialties.contains(&fold_label(s));
    let specialties = query.specialties.is_empty()
        || if query.all_specialties {
            query.specialties.iter().all(has)
        } else {
            query.specialties.iter().any(has)
        };
    let specialties_text = r.specialties.join(" ");
    let words = has_words(
        &query.words,
        &[
            r.company_name.as_deref(),
            r.slogan.as_deref(),
            r.description.as_deref(),
            Some(&specialties_text),
        ],
    );
    let scope = match query.scope {
        SearchScope::Tenant(tenant) => seen_by(tenant, index),
        SearchScope::Everything => true,
    };
    scope
        && words
        && specialties
        && label(r.industries.as_deref(), &query.industries)
        && label(r.company_size.as_deref(), &query.company_sizes)
        && label(r.company_type.as_deref(), &query.company_types)
        && label(hq.and_then(|h| h.country.as_deref()), &query.countries)
        && label(hq.and_then(|h| h.region.as_deref()), &query.regions)
        && label(hq.and_then(|h| h.locality.as_deref()), &query.localities)
        && within(count(r.employee_count_on_li), range(query.employee_count))
        && within(count(r.follower_count), range(query.follower_count))
        && within(
            r.founded.map(i64::from),
            (
                query.founded.min.map(i64::from),
                query.founded.max.map(i64::from),
            ),
        )
        && within(
            Some(company.fetched_at.as_millisecond()),
            (
                query.fetched_at.min.map(Timestamp::as_millisecond),
                query.fetched_at.max.map(Timestamp::as_millisecond),
            ),
        )
        && query
            .has_website
            .is_none_or(|wanted| r.website.is_some() == wanted)
}

/// Whether every word of `words` is found (a long one as a prefix) among the words of `fields`.
fn has_words(words: &[String], fields: &[Option<&str>]) -> bool {
    let text: Vec<String> = fields
        .iter()
        .flat_map(|field| search_words(field.unwrap_or_default()))
        .collect();
    words.iter().all(|word| {
        text.iter().any(|t| {
            if word.chars().count() >= PREFIX_MIN_CHARS {
                t.starts_with(word.as_str())
            } else {
                t == word
            }
        })
    })
}

/// The relevance tier of a match, as the API states it: every word in the name 3, every word in the name,
/// slogan or specialties 2, else 1.
fn tier(words: &[String], r: &CompanyRecord) -> i64 {
    let specialties = r.specialties.join(" ");
    if has_words(words, &[r.company_name.as_deref()]) {
        3
    } else if has_words(
        words,
        &[
            r.company_name.as_deref(),
            r.slogan.as_deref(),
            Some(&specialties),
        ],
    ) {
        2
    } else {
        1
    }
}

/// The URLs a brute-force scan finds for `query`, in its order.
fn brute_force(query: &SearchQuery, companies: &[Company]) -> Vec<String> {
    let mut found: Vec<((i64, i64), String)> = companies
        .iter()
        .enumerate()
        .filter(|(i, c)| matches(query, *i, c))
        .map(|(_, c)| {
            let followers = c.record.follower_count.map_or(-1, u64::cast_signed);
            let key = match query.sort {
                SearchSort::Relevance if !query.words.is_empty() => {
                    (tier(&query.words, &c.record), followers)
                }
                // Relevance without words is the followers' order.
                SearchSort::Followers | SearchSort::Relevance => (0, followers),
                SearchSort::Employees => (
                    0,
                    c.record.employee_count_on_li.map_or(-1, u64::cast_signed),
                ),
                SearchSort::Freshness => (0, c.fetched_at.as_millisecond()),
            };
            (key, c.url.as_str().to_owned())
        })
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    found.into_iter().map(|(_, url)| url).collect()
}

/// Every row of `query`, page by page (`limit` rows a page), asserting that each page but the last is full.
async fn every_row(store: &dyn SnapshotStore, query: &SearchQuery) -> Vec<CompanyRow> {
    let mut query = query.clone();
    let mut rows = Vec::new();
    for _ in 0..1_000 {
        let page = store.search(&query, LIMIT).await.expect("searched");
        assert!(page.rows.len() <= query.limit as usize);
        let full = page.rows.len() == query.limit as usize;
        rows.extend(page.rows);
        match page.next {
            Some(next) => {
                assert!(full, "a page before the last is full");
                query.after = Some(next);
            }
            None => return rows,
        }
    }
    panic!("paging did not end");
}

async fn check(
    store: &dyn SnapshotStore,
    companies: &[Company],
    query: &SearchQuery,
    what: &str,
) -> usize {
    let expected = brute_force(query, companies);
    let rows = every_row(store, query).await;
    let urls: Vec<String> = rows.iter().map(|r| r.final_li_url.clone()).collect();
    let distinct: HashSet<&String> = urls.iter().collect();
    assert_eq!(
        distinct.len(),
        urls.len(),
        "{what}: a row repeats across pages"
    );
    assert_eq!(urls, expected, "{what}");
    // Each row is its record's row.
    for row in &rows {
        let company = companies
            .iter()
            .find(|c| c.url.as_str() == row.final_li_url)
            .expect("a stored company");
        assert_eq!(
            *row,
            CompanyRow::of(company.url.as_str(), &company.record, company.fetched_at),
            "{what}"
        );
    }
    expected.len()
}

fn query(scope: SearchScope, edit: impl FnOnce(&mut SearchQuery)) -> SearchQuery {
    let mut query = SearchQuery::new(scope);
    query.limit = 7;
    edit(&mut query);
    query
}

fn texts(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| (*v).to_owned()).collect()
}

async fn every_filter_matches_a_scan_of_the_records(engine: &Engine) {
    let (store, companies) = stored(engine, 180).await;
    let now = companies[0].fetched_at;
    let mut queries: Vec<(&str, SearchQuery)> = Vec::new();
    for sort in [
        SearchSort::Followers,
        SearchSort::Employees,
        SearchSort::Freshness,
    ] {
        queries.push((
            "everything A saw",
            query(SearchScope::Tenant(A), |q| q.sort = sort),
        ));
        queries.push((
            "everything stored",
            query(SearchScope::Everything, |q| q.sort = sort),
        ));
    }
    let a = SearchScope::Tenant(A);
    queries.extend([
        (
            "industry",
            query(a, |q| q.industries = texts(&["software development"])),
        ),
        (
            "industries",
            query(a, |q| {
                q.industries = texts(&["Retail", "Biotechnology Research"]);
            }),
        ),
        (
            "size band",
            query(a, |q| q.company_sizes = texts(&["51-200 employees"])),
        ),
        (
            "type",
            query(a, |q| q.company_types = texts(&["PRIVATELY HELD"])),
        ),
        ("country", query(a, |q| q.countries = texts(&["de"]))),
        ("region", query(a, |q| q.regions = texts(&["California"]))),
        (
            "city, accents folded",
            query(a, |q| q.localities = texts(&["zurich", "Madrid"])),
        ),
        (
            "any specialty",
            query(a, |q| q.specialties = texts(&["ai", "Security"])),
        ),
        (
            "every specialty",
            query(a, |q| {
                q.specialties = texts(&["Cloud", "search"]);
                q.all_specialties = true;
            }),
        ),
        (
            "employees",
            query(a, |q| {
                q.employee_count = Range {
                    min: Some(500),
                    max: Some(100_000),
                }
            }),
        ),
        (
            "followers at least",
            query(a, |q| {
                q.follower_count = Range {
                    min: Some(5_000),
                    max: None,
                }
            }),
        ),
        (
            "founded",
            query(a, |q| {
                q.founded = Range {
                    min: Some(1990),
                    max: Some(2010),
                }
            }),
        ),
        ("with a website", query(a, |q| q.has_website = Some(true))),
        (
            "without a website",
            query(a, |q| q.has_website = Some(false)),
        ),
        (
            "fetched in the last hour",
            query(a, |q| {
                q.fetched_at = Range {
                    min: Some(now - SignedDuration::from_mins(60)),
                    max: Some(now),
                };
                q.sort = SearchSort::Freshness;
            }),
        ),
        (
            "industry, country and headcount",
            query(a, |q| {
                q.industries = texts(&["Software Development", "IT Services and IT Consulting"]);
                q.countries = texts(&["US", "DE"]);
                q.employee_count = Range {
                    min: Some(100),
                    max: None,
                };
                q.sort = SearchSort::Employees;
            }),
        ),
        (
            "specialties, founding and website",
            query(SearchScope::Everything, |q| {
                q.specialties = texts(&["Marketing", "Audience Intelligence"]);
                q.all_specialties = true;
                q.founded = Range {
                    min: None,
                    max: Some(2000),
                };
                q.has_website = Some(true);
            }),
        ),
        (
            "a word of the names, as a prefix",
            query(a, |q| {
                q.words = search_words("QUANT");
                q.sort = SearchSort::Relevance;
            }),
        ),
        (
            "words of the descriptions and names",
            query(a, |q| {
                q.words = search_words("robotics audience");
                q.sort = SearchSort::Relevance;
            }),
        ),
        (
            "a word and a filter, by followers",
            query(a, |q| {
                q.words = search_words("genomics");
                q.countries = texts(&["ES", "CH"]);
            }),
        ),
        (
            "a short word matches whole words only",
            query(SearchScope::Everything, |q| {
                q.words = search_words("ai");
                q.sort = SearchSort::Relevance;
            }),
        ),
        (
            "a word nobody has",
            query(a, |q| {
                q.words = search_words("zeppelin");
                q.sort = SearchSort::Relevance;
            }),
        ),
        ("B's companies", query(SearchScope::Tenant(B), |_| {})),
        (
            "B's, by a word",
            query(SearchScope::Tenant(B), |q| {
                q.words = search_words("payments");
                q.sort = SearchSort::Relevance;
            }),
        ),
    ]);
    let mut found = Vec::new();
    for (what, query) in &queries {
        found.push((what, check(store.as_ref(), &companies, query, what).await));
    }
    // A tenant with many pages is searched from the other side (the order's index, each row checked against its
    // pages): A noted as answered 5,000 more pages, which were never stored, must find the same.
    let phantoms: Vec<PageUrl> = (0..5_000)
        .map(|n| {
            PageUrl::parse_submitted(
                &format!("https://www.linkedin.com/company/never-stored-{n}"),
                &NetworkDomain::default(),
            )
            .expect("URL")
        })
        .collect();
    store.note_seen(A, &phantoms, now).await.expect("noted");
    for (what, query) in queries.iter().filter(|(_, q)| q.scope == a) {
        check(
            store.as_ref(),
            &companies,
            query,
            &format!("{what}, A large"),
        )
        .await;
    }
    // Words matching many companies are found by walking the order's index (checking each row's words), rarer
    // ones from the words' index: the store here is too small for the first, so a store that plans every word as
    // common walks, and must find the same. From 8 matches, some words are common and some rare, and
    // PostgreSQL's tier tally is read in chunks from 2 rows, deciding tiers part-way through it. From 200, its
    // probes walk 50 entries of the order's index: a word a third of the companies hold fills a page of 7 in
    // them, part-way through the store, after a cursor too.
    for common in [1, 8, 200] {
        let walking = open_store_planning(engine, Some(common)).await;
        for (what, query) in queries
            .iter()
            .filter(|(_, q)| !q.words.is_empty() && q.scope != SearchScope::Tenant(B))
        {
            check(
                walking.as_ref(),
                &companies,
                query,
                &format!("{what}, common from {common} matches"),
            )
            .await;
        }
    }
    // The generated store gives each check something to find, except the miss.
    for (what, count) in found {
        if *what == "a word nobody has" {
            assert_eq!(count, 0);
        } else {
            assert!(
                count > 0,
                "{what}: the generated store has no match; the check proves nothing"
            );
        }
    }
}

async fn a_tenant_finds_only_what_it_was_answered(engine: &Engine) {
    let (store, companies) = stored(engine, 60).await;
    for tenant in [A, B] {
        let rows = every_row(store.as_ref(), &query(SearchScope::Tenant(tenant), |_| {})).await;
        let seen: HashSet<&str> = companies
            .iter()
            .enumerate()
            .filter(|(i, _)| seen_by(tenant, *i))
            .map(|(_, c)| c.url.as_str())
            .collect();
        let found: HashSet<&str> = rows.iter().map(|r| r.final_li_url.as_str()).collect();
        assert_eq!(found, seen, "tenant {tenant}");
    }
    // A tenant that was answered nothing finds nothing, with or without words.
    let nobody = query(SearchScope::Tenant(99), |q| {
        q.words = search_words("google");
    });
    assert!(
        store
            .search(&nobody, LIMIT)
            .await
            .expect("searched")
            .rows
            .is_empty()
    );
    let everyone = every_row(store.as_ref(), &query(SearchScope::Everything, |_| {})).await;
    assert_eq!(everyone.len(), companies.len());
}

async fn relevance_puts_the_name_first_and_pages_by_score(engine: &Engine) {
    let (store, companies) = stored(engine, 60).await;
    // "Quantum" is in some names and some descriptions: the names come first.
    let mut by_relevance = query(SearchScope::Everything, |q| {
        q.words = search_words("quantum");
        q.sort = SearchSort::Relevance;
        q.limit = 100;
    });
    let rows = store
        .search(&by_relevance, LIMIT)
        .await
        .expect("searched")
        .rows;
    let in_name = |row: &CompanyRow| {
        row.company_name
            .as_deref()
            .is_some_and(|n| n.contains("Quantum"))
    };
    let first_without = rows.iter().position(|r| !in_name(r)).unwrap_or(rows.len());
    assert!(first_without > 0, "some names have the word");
    assert!(
        rows[first_without..].iter().all(|r| !in_name(r)),
        "every name match ranks above every other match"
    );
    assert_eq!(rows.len(), brute_force(&by_relevance, &companies).len());
    // Paged by score and URL, the pages are the whole list cut in order.
    by_relevance.limit = 4;
    let paged = every_row(store.as_ref(), &by_relevance).await;
    assert_eq!(paged, rows);
    // A position a client made up is a position: the rows after it.
    by_relevance.after = Some(SearchAfter {
        key: i64::MAX,
        url: String::new(),
    });
    let from_the_top = store.search(&by_relevance, LIMIT).await.expect("searched");
    assert_eq!(from_the_top.rows, rows[..4]);
    // Counts no page has (past 2^50, from a bad parse) page by relevance like the others: none skipped.
    let at = companies[0].fetched_at;
    for (n, followers) in [1_u64 << 60, (1 << 60) + 1, u64::MAX >> 2]
        .into_iter()
        .enumerate()
    {
        let mut giant = crate::record(&format!("Quantum Giant {n}"));
        giant.follower_count = Some(followers);
        let page = url(&format!("https://www.linkedin.com/company/giant-{n}"));
        put_record(store.as_ref(), &page, &giant, at).await;
    }
    let giants = query(SearchScope::Everything, |q| {
        q.words = search_words("quantum giant");
        q.sort = SearchSort::Relevance;
        q.limit = 1;
    });
    assert_eq!(every_row(store.as_ref(), &giants).await.len(), 3);
    // Relevance without words is the followers' order.
    let followers = query(SearchScope::Everything, |q| q.sort = SearchSort::Followers);
    let no_words = query(SearchScope::Everything, |q| q.sort = SearchSort::Relevance);
    assert_eq!(
        every_row(store.as_ref(), &no_words).await,
        every_row(store.as_ref(), &followers).await
    );
}

/// Stores `record` as the snapshot of `url` fetched at `at`.
async fn put_record(
    store: &dyn SnapshotStore,
    url: &PageUrl,
    record: &CompanyRecord,
    at: Timestamp,
) {
    let snapshot = Snapshot {
        url: url.clone(),
        record: RecordJson::from_record(record),
        fetched_at: at,
    };
    store.put(&snapshot, &[], None).await.expect("stored");
}

async fn a_newer_fetch_replaces_the_row_and_reparsing_updates_it(engine: &Engine) {
    let (store, companies) = stored(engine, 6).await;
    let store = store.as_ref();
    let first = &companies[1];
    let mut renamed = first.record.clone();
    renamed.company_name = Some("Zeppelin Airships".to_owned());
    renamed.follower_count = Some(42);
    let newer = first.fetched_at + SignedDuration::from_secs(5);
    put_record(store, &first.url, &renamed, newer).await;
    // An older fetch arriving late changes neither the snapshot nor its row.
    let mut older = first.record.clone();
    older.company_name = Some("Late Arrival".to_owned());
    put_record(store, &first.url, &older, first.fetched_at).await;
    let found = |text: &str| {
        let query = query(SearchScope::Everything, |q| {
            q.words = search_words(text);
            q.sort = SearchSort::Relevance;
        });
        async move { store.search(&query, LIMIT).await.expect("searched").rows }
    };
    assert_eq!(
        found("zeppelin").await,
        [CompanyRow::of(first.url.as_str(), &renamed, newer)]
    );
    assert!(found("late arrival").await.is_empty());
    // The words of the name before are gone.
    let old_name = first.record.company_name.clone().expect("a name");
    assert!(
        found(&old_name)
            .await
            .iter()
            .all(|r| r.final_li_url != first.url.as_str())
    );
    // Reparsing replaces the record of that fetch, and its row with it.
    let mut reparsed = renamed.clone();
    reparsed.industries = Some("Airlines and Aviation".to_owned());
    assert!(
        store
            .replace_record(&first.url, newer, &reparsed)
            .await
            .expect("replaced")
    );
    let aviation = query(SearchScope::Everything, |q| {
        q.industries = texts(&["airlines and aviation"]);
    });
    let rows = store.search(&aviation, LIMIT).await.expect("searched").rows;
    assert_eq!(rows, [CompanyRow::of(first.url.as_str(), &reparsed, newer)]);
    // Words a search has already found are replaced by a later fetch's (on SQLite: the earlier words are in
    // FTS5, the later ones wait to be taken in).
    let mut moved = reparsed.clone();
    moved.company_name = Some("Quokka Logistics".to_owned());
    let newest = newer + SignedDuration::from_secs(5);
    put_record(store, &first.url, &moved, newest).await;
    assert_eq!(
        found("quokka").await,
        [CompanyRow::of(first.url.as_str(), &moved, newest)]
    );
    assert!(found("zeppelin").await.is_empty());
}

async fn a_store_written_before_search_is_indexed_when_opened(engine: &Engine) {
    let (store, companies) = stored(engine, 30).await;
    drop(store);
    // What a store written before search holds: snapshots and no search rows.
    match engine {
        Engine::Sqlite(dir) => {
            let connection =
                sqlite_pool::rusqlite::Connection::open(dir.path().join("s.db")).expect("opens");
            connection
                .execute_batch("DELETE FROM company_search; DELETE FROM company_text;")
                .expect("emptied");
        }
        Engine::Postgres(database) => {
            pg_pool::PgPool::connect(&database.url)
                .await
                .expect("connects")
                .execute("DELETE FROM company_search", &[])
                .await
                .expect("emptied");
        }
    }
    let reopened = open_store(engine).await;
    check(
        reopened.as_ref(),
        &companies,
        &query(SearchScope::Tenant(A), |q| q.sort = SearchSort::Freshness),
        "after indexing at open",
    )
    .await;
    check(
        reopened.as_ref(),
        &companies,
        &query(SearchScope::Everything, |q| {
            q.words = search_words("google");
            q.sort = SearchSort::Relevance;
        }),
        "words after indexing at open",
    )
    .await;
}

/// A page's fetches, oldest first: how many days ago, and the employees it showed.
type Fetches<'a> = &'a [(i64, Option<u64>)];

async fn employee_growth_is_measured_from_the_fetch_90_days_before(engine: &Engine) {
    let store = open_store(engine).await;
    let now = Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .expect("rounds");
    let days = |n: i64| now - SignedDuration::from_hours(24 * n);
    let pages: [(&str, Fetches); 5] = [
        (
            "growing",
            &[
                (200, Some(80)),
                (100, Some(100)),
                (30, Some(500)),
                (0, Some(150)),
            ],
        ),
        ("shrinking", &[(95, Some(200)), (0, Some(180))]),
        ("new", &[(60, Some(10)), (0, Some(500))]),
        ("uncounted-then", &[(120, None), (0, Some(40))]),
        ("uncounted-now", &[(120, Some(40)), (0, None)]),
    ];
    for (slug, fetches) in pages {
        let page = url(&format!("https://www.linkedin.com/company/{slug}"));
        for (ago, employees) in fetches {
            let mut record = crate::record(slug);
            record.employee_count_on_li = *employees;
            let snapshot = Snapshot {
                url: page.clone(),
                record: RecordJson::from_record(&record),
                fetched_at: days(*ago),
            };
            store.put(&snapshot, &[], None).await.expect("stored");
        }
    }
    let grown = |min: Option<f64>, max: Option<f64>| {
        let store = Arc::clone(&store);
        async move {
            let query = query(SearchScope::Everything, |q| {
                q.employee_growth = Range { min, max };
            });
            let mut names: Vec<String> = every_row(store.as_ref(), &query)
                .await
                .into_iter()
                .filter_map(|row| row.company_name)
                .collect();
            names.sort();
            names
        }
    };
    // Growing: 100 (the newest fetch at least 90 days before) to 150 is +50%; the fetch 30 days ago is too
    // recent to count. Shrinking: 200 to 180 is -10%. The others have no fetch that old with a count.
    assert_eq!(grown(Some(20.0), None).await, ["growing"]);
    assert_eq!(grown(None, Some(0.0)).await, ["shrinking"]);
    assert_eq!(
        grown(Some(-10.0), Some(50.0)).await,
        ["growing", "shrinking"]
    );
    assert_eq!(grown(Some(50.5), None).await, Vec::<String>::new());
    // Without a growth filter every page is found, growth or not.
    assert_eq!(grown(None, None).await.len(), 5);
}

/// A description may hold a "word" no language has (a run of letters a page's author pasted): it is left out
/// of the index on both engines (PostgreSQL refuses a lexeme of more than 2,047 bytes), and the page is stored
/// and found by its other words.
async fn a_word_too_long_to_index_is_left_out(engine: &Engine) {
    let (store, companies) = stored(engine, 6).await;
    let long = "x".repeat(MAX_WORD_BYTES + 1);
    let mut record = crate::record("Verbose Zanzibar Works");
    record.description = Some(format!("{long} y{long} zanzibar"));
    let page = url("https://www.linkedin.com/company/verbose");
    put_record(store.as_ref(), &page, &record, companies[0].fetched_at).await;
    assert!(search_words(&long).is_empty());
    let kept = "x".repeat(MAX_WORD_BYTES);
    assert_eq!(search_words(&kept), std::slice::from_ref(&kept));
    for (text, found) in [("zanzibar", 1), ("works", 1), (&kept[..], 0)] {
        let query = query(SearchScope::Everything, |q| {
            q.words = search_words(text);
            q.sort = SearchSort::Relevance;
        });
        let rows = store.search(&query, LIMIT).await.expect("searched").rows;
        assert_eq!(rows.len(), found, "{text:.20}");
    }
}

/// A word is one token on both engines, whatever its letters: a symbol Rust counts as alphabetic (the
/// negative squared 🅱) and a letter newer than SQLite's Unicode 6.1 tables (Hanifi Rohingya, Unicode 11) are
/// inside words, where FTS5's `unicode61` split at both, and refused the phrase that made without positions.
async fn a_word_is_one_token_whatever_its_letters(engine: &Engine) {
    let (store, companies) = stored(engine, 6).await;
    let mut record = crate::record("Su\u{1F171}way Kitchens");
    record.slogan = Some("\u{10D00}\u{10D01}\u{10D02} bakery".to_owned());
    let page = url("https://www.linkedin.com/company/subway-kitchens");
    put_record(store.as_ref(), &page, &record, companies[0].fetched_at).await;
    for (text, found) in [
        ("su\u{1F171}way", true),
        ("su\u{1F171}w", true),
        ("\u{10D00}\u{10D01}\u{10D02}", true),
        // Parts of a word are no words of their own.
        ("way", false),
        ("\u{10D02}", false),
    ] {
        let query = query(SearchScope::Everything, |q| {
            q.words = search_words(text);
            q.sort = SearchSort::Relevance;
            q.limit = 100;
        });
        let rows = store.search(&query, LIMIT).await.expect("searched").rows;
        let urls: Vec<&str> = rows.iter().map(|r| r.final_li_url.as_str()).collect();
        assert_eq!(urls.contains(&page.as_str()), found, "{text}: {urls:?}");
    }
}

/// A word of three characters or more finds the longer words it begins, whether or not it is a word of the store
/// itself, and a longer word only itself, in a name or only in a description: SQLite asks a word that no longer
/// one begins as the word (faster), so the same companies must come either way, also once a longer word's page
/// is fetched again without it.
async fn a_word_finds_the_longer_words_it_begins(engine: &Engine) {
    let (store, companies) = stored(engine, 6).await;
    let at = companies[0].fetched_at;
    let pages: Vec<(PageUrl, &str)> = [
        ("zorb-works", "Zorb Works"),
        ("zorbex-lab", "Zorbex Lab"),
        ("zor-ltd", "Zor Ltd"),
        ("zorbexity-made", "Zorbexity Made"),
        // Just past every word that begins with "zorb".
        ("zorc-ltd", "Zorc Ltd"),
    ]
    .into_iter()
    .map(|(slug, name)| {
        let page = url(&format!("https://www.linkedin.com/company/{slug}"));
        (page, name)
    })
    .collect();
    for (page, name) in &pages {
        put_record(store.as_ref(), page, &crate::record(name), at).await;
    }
    // A whole word in a description only: the last relevance group, whose query holds a NOT.
    let mut quiet = crate::record("Quiet Holdings");
    quiet.description = Some("We make zorbexity gear.".to_owned());
    let quiet_page = url("https://www.linkedin.com/company/quiet-holdings");
    put_record(store.as_ref(), &quiet_page, &quiet, at).await;
    let found = |text: &'static str| {
        let query = query(SearchScope::Everything, |q| {
            q.words = search_words(text);
            q.sort = SearchSort::Relevance;
            q.limit = 100;
        });
        let store = Arc::clone(&store);
        async move {
            let mut names: Vec<String> = store
                .search(&query, LIMIT)
                .await
                .expect("searched")
                .rows
                .into_iter()
                .filter_map(|row| row.company_name)
                .collect();
            names.sort();
            names
        }
    };
    assert_eq!(
        found("zor").await,
        [
            "Quiet Holdings",
            "Zor Ltd",
            "Zorb Works",
            "Zorbex Lab",
            "Zorbexity Made",
            "Zorc Ltd"
        ]
    );
    assert_eq!(
        found("zorb").await,
        [
            "Quiet Holdings",
            "Zorb Works",
            "Zorbex Lab",
            "Zorbexity Made"
        ]
    );
    // No word of the store, only the start of some.
    assert_eq!(
        found("zorbe").await,
        ["Quiet Holdings", "Zorbex Lab", "Zorbexity Made"]
    );
    assert_eq!(
        found("zorbex").await,
        ["Quiet Holdings", "Zorbex Lab", "Zorbexity Made"]
    );
    assert_eq!(
        found("zorbexity").await,
        ["Quiet Holdings", "Zorbexity Made"]
    );
    assert_eq!(found("zorbexity made").await, ["Zorbexity Made"]);
    // "Zorbexity" fetched again as another name: "zorbex" no longer begins a word of that page.
    let (page, _) = &pages[3];
    put_record(
        store.as_ref(),
        page,
        &crate::record("Handmade Goods"),
        at + SignedDuration::from_secs(60),
    )
    .await;
    assert_eq!(found("zorbex").await, ["Quiet Holdings", "Zorbex Lab"]);
    assert_eq!(found("zorbexity").await, ["Quiet Holdings"]);
}

/// A NUL (or another control character) in a filter or in a cursor's URL is no error on either engine
/// (PostgreSQL refuses NUL in text): a label reads it as a space, and a cursor's URL holds no more of its own
/// than comes before it (no stored URL has one, so the same rows come after it).
async fn a_nul_in_a_filter_or_a_cursor_is_no_error(engine: &Engine) {
    let (store, _) = stored(engine, 30).await;
    let industry = |value: &str| {
        query(SearchScope::Everything, |q| {
            q.industries = texts(&[value]);
            q.limit = 100;
        })
    };
    let spaced = every_row(store.as_ref(), &industry("Software Development")).await;
    assert!(!spaced.is_empty(), "the generated store has the industry");
    let nul = store
        .search(&industry("Software\0Development"), LIMIT)
        .await
        .expect("searched with a NUL in a filter");
    assert_eq!(nul.rows, spaced);
    let first = store
        .search(&query(SearchScope::Everything, |_| {}), LIMIT)
        .await
        .expect("searched");
    let next = first.next.expect("a second page");
    let after = |url: String| {
        query(SearchScope::Everything, |q| {
            q.after = Some(SearchAfter { key: next.key, url });
        })
    };
    let page = store
        .search(&after(next.url.clone()), LIMIT)
        .await
        .expect("searched");
    let with_nul = store
        .search(&after(format!("{}\0zzz", next.url)), LIMIT)
        .await
        .expect("searched after a cursor with a NUL");
    assert_eq!(with_nul.rows, page.rows);
}

/// A search that runs past its time limit is stopped with [`SearchError::TimedOut`] on both engines, and the
/// store's connections go on answering: SQLite's progress handler is gone from them, PostgreSQL's
/// `statement_timeout` was the search's transaction's own.
async fn a_search_past_its_time_limit_is_stopped_and_the_store_goes_on(engine: &Engine) {
    use std::time::Duration;
    let (store, _) = stored(engine, 600).await;
    // A filter no company matches: the search walks the whole of its order's index (some 6 SQLite instructions
    // a row, so several times the thousand after which the progress handler first looks at the clock).
    let nothing = query(SearchScope::Everything, |q| {
        q.founded = Range {
            min: Some(3000),
            max: None,
        };
    });
    let within_limit = store
        .search(&nothing, LIMIT)
        .await
        .expect("searched within the limit");
    assert!(within_limit.rows.is_empty());
    // A limit already reached when the search starts: SQLite interrupts the walk's statement a thousand
    // instructions in, PostgreSQL starts no statement.
    let words = query(SearchScope::Tenant(A), |q| q.words = search_words("google"));
    for search in [&nothing, &words] {
        match store.search(search, Duration::ZERO).await {
            Err(SearchError::TimedOut { limit }) => assert_eq!(limit, Duration::ZERO),
            other => panic!("expected a time-out, got {other:?}"),
        }
    }
    match engine {
        Engine::Sqlite(_) => {
            // Every pooled connection again (deadpool keeps up to 4 per core): a handler left behind would
            // interrupt this scan of every snapshot.
            for _ in 0..16 {
                store
                    .stored_pages(None, 1_000)
                    .await
                    .expect("read after a stopped search");
            }
        }
        Engine::Postgres(database) => {
            // A statement of the search waits for a lock another connection holds: the server cancels it at
            // the limit.
            let limit = Duration::from_millis(300);
            let pool = pg_pool::PgPool::connect(&database.url)
                .await
                .expect("connects");
            let mut holder = pool.client().await.expect("a connection");
            let lock = holder.transaction().await.expect("begins");
            lock.batch_execute("LOCK TABLE company_search IN ACCESS EXCLUSIVE MODE")
                .await
                .expect("locks");
            // Bounded here, so that a search the server never cancels fails the test rather than hangs it.
            match tokio::time::timeout(Duration::from_secs(30), store.search(&nothing, limit)).await
            {
                Ok(Err(SearchError::TimedOut { limit: reported })) => assert_eq!(reported, limit),
                other => panic!("expected a time-out behind the lock, got {other:?}"),
            }
            lock.rollback().await.expect("unlocks");
        }
    }
    // The same searches within the limit answer as before.
    assert_eq!(
        store.search(&nothing, LIMIT).await.expect("searched").rows,
        within_limit.rows
    );
    assert!(
        !store
            .search(&words, LIMIT)
            .await
            .expect("searched")
            .rows
            .is_empty()
    );
}

test_support::engine_tests! {
    a_search_past_its_time_limit_is_stopped_and_the_store_goes_on,
    a_nul_in_a_filter_or_a_cursor_is_no_error,
    a_word_is_one_token_whatever_its_letters,
    a_word_finds_the_longer_words_it_begins,
    a_word_too_long_to_index_is_left_out,
    employee_growth_is_measured_from_the_fetch_90_days_before,
    every_filter_matches_a_scan_of_the_records,
    a_tenant_finds_only_what_it_was_answered,
    relevance_puts_the_name_first_and_pages_by_score,
    a_newer_fetch_replaces_the_row_and_reparsing_updates_it,
    a_store_written_before_search_is_indexed_when_opened,
}
