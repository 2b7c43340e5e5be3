//! Section 14, searching stored companies: a store of 100,000 companies generated from the captured Google and
//! Audiense pages (`--quick`: 1,000, which proves the harness and times nothing), every one answered to the
//! searching account, on SQLite and on PostgreSQL;
//! the common searches timed through the store (p50 and p99 of each), then again once a tenth of the companies has
//! been fetched again, and what indexing adds to a snapshot's write (the same snapshots written through a store
//! that indexes and one that does not).

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use company_model::{
    CompanyRecord, Range, RecordJson, SearchQuery, SearchScope, SearchSort, search_words,
};
use page_url::{NetworkDomain, PageUrl};
use serde_json::{Value, json};
use snapshot_cache::{PgSnapshotStore, Snapshot, SnapshotStore, SqliteSnapshotStore};
use test_support::TestDatabase;
use test_support::companies::{Generated, generated};

use crate::{Error, Plan, quantile};

/// The searching account's tenant key.
const TENANT: i64 = 1;

/// The searches timed: what a sales or data team asks most, each over the account's companies.
fn searches() -> Vec<(&'static str, SearchQuery)> {
    let base = || {
        let mut query = SearchQuery::new(SearchScope::Tenant(TENANT));
        query.limit = 20;
        query
    };
    let with = |edit: &dyn Fn(&mut SearchQuery)| {
        let mut query = base();
        edit(&mut query);
        query
    };
    let labels = |values: &[&str]| values.iter().map(|v| (*v).to_owned()).collect::<Vec<_>>();
    vec![
        ("everything, most followers first", base()),
        (
            "one industry",
            with(&|q| q.industries = labels(&["Software Development"])),
        ),
        (
            "country and headcount, by employees",
            with(&|q| {
                q.countries = labels(&["DE"]);
                q.employee_count = Range {
                    min: Some(1_000),
                    max: None,
                };
                q.sort = SearchSort::Employees;
            }),
        ),
        (
            "city, size band and founding",
            with(&|q| {
                q.localities = labels(&["Berlin"]);
                q.company_sizes = labels(&["51-200 employees"]);
                q.founded = Range {
                    min: Some(2000),
                    max: None,
                };
            }),
        ),
        (
            "specialties, all of two",
            with(&|q| {
                q.specialties = labels(&["AI", "Cloud"]);
                q.all_specialties = true;
            }),
        ),
        (
            "a word, by relevance",
            with(&|q| {
                q.words = search_words("robotics");
                q.sort = SearchSort::Relevance;
            }),
        ),
        (
            "a prefix and a country, by followers",
            with(&|q| {
                q.words = search_words("genom");
                q.countries = labels(&["US"]);
            }),
        ),
        (
            "a rare word (one name's number), by relevance",
            with(&|q| {
                q.words = search_words("4242");
                q.sort = SearchSort::Relevance;
            }),
        ),
        (
            "two words, by relevance",
            with(&|q| {
                q.words = search_words("quantum analytics");
                q.sort = SearchSort::Relevance;
            }),
        ),
    ]
}

fn url(slug: &str) -> Result<PageUrl, Error> {
    Ok(PageUrl::parse_submitted(
        &format!("https://www.linkedin.com/company/{slug}"),
        &NetworkDomain::default(),
    )?)
}

fn bases() -> Result<Vec<CompanyRecord>, Error> {
    let pages = e2e_harness::workspace().join("../shared/fixtures/pages");
    [
        ("company-google-2025.html", "google"),
        ("company-audiense-2024.html", "audiense"),
    ]
    .into_iter()
    .map(|(file, slug)| {
        let html = std::fs::read_to_string(pages.join(file))?;
        Ok(page_scraper::parse_page(
            &html,
            &url(slug)?,
            &NetworkDomain::default(),
        )?)
    })
    .collect()
}

/// The captured Google page gzip-compressed: what a live fetch keeps beside each snapshot it writes.
fn kept_page() -> Result<Vec<u8>, Error> {
    use std::io::Write as _;
    let html = std::fs::read(
        e2e_harness::workspace().join("../shared/fixtures/pages/company-google-2025.html"),
    )?;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(&html)?;
    Ok(encoder.finish()?)
}

fn snapshot(company: &Generated) -> Result<Snapshot, Error> {
    Ok(Snapshot {
        url: url(&company.slug)?,
        record: RecordJson::from_record(&company.record),
        fetched_at: company.fetched_at,
    })
}

/// Writes `companies` through `store`, `at_once` at a time, and notes them all as the tenant's.
async fn fill(
    store: &Arc<dyn SnapshotStore>,
    companies: &[Generated],
    at_once: usize,
) -> Result<(), Error> {
    for chunk in companies.chunks(at_once.max(1)) {
        let writes = chunk.iter().map(|company| {
            let store = Arc::clone(store);
            async move {
                store
                    .put(&snapshot(company)?, &[], None)
                    .await
                    .map_err(Error::from)
            }
        });
        futures::future::try_join_all(writes).await?;
    }
    let now = jiff::Timestamp::now();
    for chunk in companies.chunks(1_000) {
        let urls = chunk
            .iter()
            .map(|c| url(&c.slug))
            .collect::<Result<Vec<_>, _>>()?;
        store.note_seen(TENANT, &urls, now).await?;
    }
    Ok(())
}

/// Mean milliseconds per snapshot written through `indexed` and through `bare`: each snapshot, with its page as a
/// live fetch writes it, to one store right after the other.
async fn write_ms(
    indexed: &dyn SnapshotStore,
    bare: &dyn SnapshotStore,
    companies: &[Generated],
) -> Result<(f64, f64), Error> {
    let snapshots = companies
        .iter()
        .map(snapshot)
        .collect::<Result<Vec<_>, _>>()?;
    let page = kept_page()?;
    let (mut with, mut without) = (Duration::ZERO, Duration::ZERO);
    for (n, snapshot) in snapshots.iter().enumerate() {
        // Each snapshot to one store right after the other, so that a slow moment of the machine lands on either
        // alike; which goes first alternates.
        let mut order = [(indexed, &mut with), (bare, &mut without)];
        if n % 2 == 1 {
            order.reverse();
        }
        for (store, spent) in order {
            let started = Instant::now();
            store.put(snapshot, &[], Some(&page)).await?;
            *spent += started.elapsed();
        }
    }
    let per_write = |spent: Duration| spent.as_secs_f64() * 1000.0 / snapshots.len() as f64;
    Ok((per_write(with), per_write(without)))
}

/// How many WAL pages (frames) a snapshot's write appends on SQLite, and their size in bytes, through a store on a
/// new file in `folder` that indexes (`index`) or not: `companies` written one by one, each with its page as a live
/// fetch keeps it. The count no disk moves: a write's time is mostly its pages, so this is the write cost without
/// the machine in it.
///
/// The log is emptied first (a `TRUNCATE` checkpoint), so that the file's growth is the writes' frames. A reader
/// then holds a snapshot from after a first write, so no checkpoint (the pool runs one a second) starts the log
/// over under the count; should a checkpoint have copied every frame before the reader began, the reader reads
/// past the log and does not hold it, and the writes start it over: its header says so (the checkpoint sequence
/// and salts change) and the count is taken again, on another new file.
async fn sqlite_pages_per_write(
    folder: &Path,
    index: bool,
    companies: &[Generated],
) -> Result<(f64, i64), Error> {
    use sqlite_pool::rusqlite;
    let page = kept_page()?;
    let (first, rest) = companies.split_first().ok_or("no snapshots to write")?;
    for attempt in 0..3 {
        let path = folder.join(format!("pages-{index}-{attempt}.db"));
        let store = SqliteSnapshotStore::open(&path).await?;
        let store = if index {
            store
        } else {
            store.without_search_index()
        };
        let wal = path.with_extension("db-wal");
        // The log header's checkpoint sequence and salts (bytes 12 to 24): new each time the log starts over.
        let header = || -> Result<[u8; 12], Error> {
            use std::io::Read as _;
            let mut bytes = [0; 24];
            std::fs::File::open(&wal)?.read_exact(&mut bytes)?;
            let mut salts = [0; 12];
            salts.copy_from_slice(&bytes[12..]);
            Ok(salts)
        };
        let reader = rusqlite::Connection::open(&path)?;
        reader.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        // One write first, so that the log holds frames the reader's snapshot marks.
        store.put(&snapshot(first)?, &[], Some(&page)).await?;
        reader.execute_batch("BEGIN")?;
        reader.query_row("SELECT count(*) FROM snapshots", [], |_| Ok(()))?;
        let page_size: i64 = reader.query_row("PRAGMA page_size", [], |row| row.get(0))?;
        let (started, before) = (header()?, std::fs::metadata(&wal)?.len());
        for company in rest {
            store.put(&snapshot(company)?, &[], Some(&page)).await?;
        }
        let after = std::fs::metadata(&wal)?.len();
        if header()? == started {
            let pages =
                after.saturating_sub(before) as f64 / (page_size as f64 + 24.0) / rest.len() as f64;
            return Ok((pages, page_size));
        }
    }
    Err("the SQLite log started over under each of three page counts".into())
}

/// Each search of [`searches`] through `store`, `runs` times: its p50, p99 and slowest run in milliseconds and
/// the rows of its first page.
async fn timings(
    store: &dyn SnapshotStore,
    runs: usize,
) -> Result<serde_json::Map<String, Value>, Error> {
    let mut timed = serde_json::Map::new();
    for (what, query) in searches() {
        let mut times = Vec::with_capacity(runs);
        let mut rows = 0;
        for _ in 0..runs {
            let started = Instant::now();
            let page = store
                .search(&query, company_lookup::DEFAULT_SEARCH_TIME_LIMIT)
                .await?;
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            rows = page.rows.len();
        }
        timed.insert(
            what.to_owned(),
            json!({
                "p50_ms": quantile(&times, 0.5),
                "p99_ms": quantile(&times, 0.99),
                "max_ms": quantile(&times, 1.0),
                "rows": rows
            }),
        );
    }
    Ok(timed)
}

/// Every how many of the stored companies one is fetched again before the searches are timed once more.
const REFETCH_EVERY: usize = 10;

/// How many new snapshots the SQLite page count ([`sqlite_pages_per_write`]) writes to each store.
const PAGE_COUNT_WRITES: usize = 500;

/// A store on a new database of the engine, indexing for search or not.
type Open<'a> =
    &'a dyn Fn(bool) -> futures::future::BoxFuture<'static, Result<Arc<dyn SnapshotStore>, Error>>;

/// How many rounds (each snapshot to a store indexing and to one not, on new databases) the write cost is the
/// median of.
const WRITE_ROUNDS: usize = 20;

/// How many new snapshots the write cost is measured on: each round writes a twentieth of them twice. A round of
/// 500 spans the SQLite pool's checkpoints (one a second) in both stores alike.
const WRITES: usize = 10_000;

/// One engine's figures: each search's p50 and p99 over `runs`, rows found on its first page, and the write cost.
/// `settle` runs once the store is written (PostgreSQL: `VACUUM ANALYZE`, as autovacuum would have by the time a
/// store holds that many companies: statistics, and the GIN index's pending list merged, which a manual `ANALYZE`
/// leaves to be read through by every search with words, some 20 ms each).
async fn engine(
    name: &str,
    open: Open<'_>,
    settle: &dyn Fn() -> futures::future::BoxFuture<'static, Result<(), Error>>,
    companies: &[Generated],
    writes: &[Generated],
    runs: usize,
) -> Result<Value, Error> {
    eprintln!("14: {name}: writing {} companies", companies.len());
    let store = open(true).await?;
    let started = Instant::now();
    fill(&store, companies, 8).await?;
    let fill_seconds = started.elapsed().as_secs_f64();
    settle().await?;
    let timed = timings(store.as_ref(), runs).await?;
    // Then a tenth of them fetched again a day later, as refreshes and watches write over a store, and the
    // searches timed once more on the store as those writes left it (no `settle`: 10,000 updates are under
    // autovacuum's default vacuum threshold, 20% of the rows, and at its analyze threshold, 10% and 50 rows, so
    // an automatic `ANALYZE` may or may not run meanwhile). On SQLite the words of a page fetched again go to a
    // new FTS5 segment, so a word's matches are read from segments whose rowids interleave.
    let refetched: Vec<Generated> = companies
        .iter()
        .step_by(REFETCH_EVERY)
        .map(|company| Generated {
            fetched_at: company.fetched_at + jiff::SignedDuration::from_hours(24),
            ..company.clone()
        })
        .collect();
    eprintln!("14: {name}: fetching {} of them again", refetched.len());
    let started = Instant::now();
    fill(&store, &refetched, 8).await?;
    let refetch_seconds = started.elapsed().as_secs_f64();
    let after_refetch = timings(store.as_ref(), runs).await?;
    // The write cost: the same new snapshots through a store that indexes and one that does not, on fresh
    // databases of the same engine, each snapshot to one store right after the other (`write_ms`). A commit's
    // time moves with the disk by more than the index adds, so the rounds interleave writes, and the cost is the
    // median of the rounds' own shares, over WRITE_ROUNDS of them, beside the share of all the writes together.
    let (mut indexed, mut bare, mut shares) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..WRITE_ROUNDS {
        let slice =
            &writes[round * writes.len() / WRITE_ROUNDS..(round + 1) * writes.len() / WRITE_ROUNDS];
        let (with, without) = write_ms(
            open(true).await?.as_ref(),
            open(false).await?.as_ref(),
            slice,
        )
        .await?;
        indexed.push(with);
        bare.push(without);
        shares.push((with - without) / without);
    }
    let overall = indexed.iter().sum::<f64>() / bare.iter().sum::<f64>() - 1.0;
    let (indexed, bare) = (quantile(&indexed, 0.5), quantile(&bare, 0.5));
    Ok(json!({
        "companies": companies.len(),
        "fill_seconds": fill_seconds,
        "searches": timed,
        "refetched": refetched.len(),
        "refetch_seconds": refetch_seconds,
        "searches_after_refetch": after_refetch,
        "write_ms_indexed": indexed,
        "write_ms_without_index": bare,
        "write_cost_share": quantile(&shares, 0.5),
        "write_cost_shares": shares,
        "write_cost_share_overall": overall,
        "round_writes": writes.len() / WRITE_ROUNDS,
    }))
}

/// Section 14's figures.
pub(crate) async fn search(plan: Plan, _release: &Path) -> Result<Value, Error> {
    let count = if plan.quick { 1_000 } else { 100_000 };
    // 200: a p99 of 30 runs was their slowest (`quantile` rounds to the nearest), so one stall decided it; of
    // 200 it is the third slowest, and the slowest is kept beside it (`max_ms`).
    let runs = if plan.quick { 10 } else { 200 };
    let now = jiff::Timestamp::now();
    let all = generated(&bases()?, count + WRITES, now);
    let (companies, writes) = all.split_at(count);
    let writes = if plan.quick { &writes[..300] } else { writes };

    let folder = tempfile::tempdir()?;
    let dir = folder.path().to_path_buf();
    let counter = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let sqlite_open = move |index: bool| {
        let path = dir.join(format!(
            "s{}.db",
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        Box::pin(async move {
            let store = SqliteSnapshotStore::open(&path).await?;
            let store = if index {
                store
            } else {
                store.without_search_index()
            };
            Ok(Arc::new(store) as Arc<dyn SnapshotStore>)
        }) as futures::future::BoxFuture<'static, Result<Arc<dyn SnapshotStore>, Error>>
    };
    let nothing =
        || Box::pin(async { Ok(()) }) as futures::future::BoxFuture<'static, Result<(), Error>>;
    let mut sqlite = engine("SQLite", &sqlite_open, &nothing, companies, writes, runs).await?;
    let counted = &writes[..writes.len().min(PAGE_COUNT_WRITES)];
    let (indexed, page_bytes) = sqlite_pages_per_write(folder.path(), true, counted).await?;
    let (bare, _) = sqlite_pages_per_write(folder.path(), false, counted).await?;
    sqlite["pages_per_write_indexed"] = json!(indexed);
    sqlite["pages_per_write_without_index"] = json!(bare);
    sqlite["page_bytes"] = json!(page_bytes);
    // The first of them is written before the count starts.
    sqlite["page_count_writes"] = json!(counted.len() - 1);

    // Each PostgreSQL store on a database of its own, kept until the section ends.
    let databases = Arc::new(std::sync::Mutex::new(Vec::<TestDatabase>::new()));
    let kept = Arc::clone(&databases);
    let postgres_open = move |index: bool| {
        let kept = Arc::clone(&kept);
        Box::pin(async move {
            let database = TestDatabase::create()
                .await
                .ok_or("the search section needs PostgreSQL (`tests/ci bench` starts one)")?;
            let store =
                PgSnapshotStore::with_pool(pg_pool::PgPool::connect(&database.url).await?).await?;
            let store = if index {
                store
            } else {
                store.without_search_index()
            };
            kept.lock().map_err(|_| "a lock")?.push(database);
            Ok(Arc::new(store) as Arc<dyn SnapshotStore>)
        }) as futures::future::BoxFuture<'static, Result<Arc<dyn SnapshotStore>, Error>>
    };
    let analyzed = Arc::clone(&databases);
    let analyze = move || {
        let url = analyzed
            .lock()
            .ok()
            .and_then(|kept| kept.last().map(|database| database.url.clone()));
        Box::pin(async move {
            let url = url.ok_or("no database to analyze")?;
            pg_pool::PgPool::connect(&url)
                .await?
                .execute("VACUUM ANALYZE", &[])
                .await?;
            Ok(())
        }) as futures::future::BoxFuture<'static, Result<(), Error>>
    };
    let postgres = engine(
        "PostgreSQL",
        &postgres_open,
        &analyze,
        companies,
        writes,
        runs,
    )
    .await?;
    drop(databases);
    Ok(json!({"runs": runs, "sqlite": sqlite, "postgres": postgres}))
}

/// The least or most (`pick`) of a list of numbers; NaN for none.
fn extreme(values: &Value, pick: fn(f64, f64) -> f64) -> f64 {
    values
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_f64)
        .reduce(pick)
        .unwrap_or(f64::NAN)
}

/// Which of `runs` timings [`quantile`] gives as the p99, counted from the slowest (asked of `quantile` itself,
/// over the ranks).
fn p99_rank(runs: u64) -> String {
    let ranks: Vec<f64> = (0..runs).map(|rank| rank as f64).collect();
    match runs - quantile(&ranks, 0.99) as u64 {
        1 => "slowest".to_owned(),
        2 => "second slowest".to_owned(),
        3 => "third slowest".to_owned(),
        n => format!("{n}th slowest"),
    }
}

/// Section 14 of the report.
pub(crate) fn markdown(figures: &Value) -> String {
    let ms = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let (sqlite, postgres) = (&figures["sqlite"], &figures["postgres"]);
    let mut out = format!(
        "\n## 14. Searching stored companies\n\n{} companies generated from the captured Google and Audiense \
         pages (every searched member varied), all answered to the searching account (its default scope); each \
         search its first page of 20 rows through the store, {} times (milliseconds; PostgreSQL after `VACUUM ANALYZE`, as \
         autovacuum does; the p99 is the {} of them, and the slowest is shown beside it: the first run of a search \
         after the writes reads pages no search has read yet, and on SQLite the first with words takes in the words \
         still waiting for FTS5). Target: p99 under 50 ms. The generated names and descriptions draw their words from six, so \
         a word such as `robotics` is in a third of the companies: words are shown at that worst case and for a \
         rare word.\n\n\
         | search | SQLite p50 | SQLite p99 | SQLite slowest | PostgreSQL p50 | PostgreSQL p99 | PostgreSQL slowest | rows |\n|---|---|---|---|---|---|---|---|\n",
        sqlite["companies"],
        figures["runs"],
        p99_rank(figures["runs"].as_u64().unwrap_or(0))
    );
    let table = |out: &mut String, searched: &str| {
        for (what, _) in searches() {
            let (s, p) = (&sqlite[searched][what], &postgres[searched][what]);
            let _ = writeln!(
                out,
                "| {what} | {:.2} | {:.2} | {:.1} | {:.2} | {:.2} | {:.1} | {} |",
                ms(&s["p50_ms"]),
                ms(&s["p99_ms"]),
                ms(&s["max_ms"]),
                ms(&p["p50_ms"]),
                ms(&p["p99_ms"]),
                ms(&p["max_ms"]),
                s["rows"]
            );
        }
    };
    table(&mut out, "searches");
    let _ = write!(
        out,
        "\nThe same searches after every {REFETCH_EVERY}th company ({} of them, all made from the Google page's \
         record, the larger text) was fetched again a day later, as refreshes and watches write over a store \
         (SQLite {:.0} s, PostgreSQL {:.0} s; PostgreSQL as those writes left it, with no `VACUUM`: they are under \
         autovacuum's vacuum threshold and at its analyze threshold):\n\n\
         | search | SQLite p50 | SQLite p99 | SQLite slowest | PostgreSQL p50 | PostgreSQL p99 | PostgreSQL slowest | rows |\n|---|---|---|---|---|---|---|---|\n",
        sqlite["refetched"],
        ms(&sqlite["refetch_seconds"]),
        ms(&postgres["refetch_seconds"]),
    );
    table(&mut out, "searches_after_refetch");
    let _ = write!(
        out,
        "\nWhat the index adds to a snapshot's write (the same new snapshots, each with its page as a live fetch \
         keeps it, each to a store that indexes and right after to one that does not, on new databases, in \
         {WRITE_ROUNDS} rounds of {} snapshots; the medians of the rounds, the median of the rounds' own shares, and \
         the share of all the writes together; target under 10%): SQLite {:.3} ms against {:.3} ms (the rounds' \
         median share {:+.1}%, from {:+.0}% to {:+.0}%; all together {:+.1}%), PostgreSQL {:.3} ms against {:.3} ms \
         (the rounds' median share {:+.1}%, from {:+.0}% to {:+.0}%; all together {:+.1}%). Writing the store took {:.0} s on SQLite and {:.0} s \
         on PostgreSQL.\n\n\
         The same on SQLite counted in pages rather than time, which no disk moves: each new snapshot written with \
         its page appends {:.2} pages ({} bytes each) to the write-ahead log through a store that indexes, against \
         {:.2} through one that does not ({:+.1}%; {} snapshots counted after a first, to each, on new files).\n",
        sqlite["round_writes"],
        ms(&sqlite["write_ms_indexed"]),
        ms(&sqlite["write_ms_without_index"]),
        ms(&sqlite["write_cost_share"]) * 100.0,
        extreme(&sqlite["write_cost_shares"], f64::min) * 100.0,
        extreme(&sqlite["write_cost_shares"], f64::max) * 100.0,
        ms(&sqlite["write_cost_share_overall"]) * 100.0,
        ms(&postgres["write_ms_indexed"]),
        ms(&postgres["write_ms_without_index"]),
        ms(&postgres["write_cost_share"]) * 100.0,
        extreme(&postgres["write_cost_shares"], f64::min) * 100.0,
        extreme(&postgres["write_cost_shares"], f64::max) * 100.0,
        ms(&postgres["write_cost_share_overall"]) * 100.0,
        ms(&sqlite["fill_seconds"]),
        ms(&postgres["fill_seconds"]),
        ms(&sqlite["pages_per_write_indexed"]),
        sqlite["page_bytes"],
        ms(&sqlite["pages_per_write_without_index"]),
        (ms(&sqlite["pages_per_write_indexed"]) / ms(&sqlite["pages_per_write_without_index"])
            - 1.0)
            * 100.0,
        sqlite["page_count_writes"],
    );
    out
}
