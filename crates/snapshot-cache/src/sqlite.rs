use std::collections::HashMap;
use std::path::Path;

use page_url::PageUrl;
use sqlite_pool::{SqlitePool, rusqlite};

use company_model::{CompanyRecord, RECORD_FORMAT};

use crate::hot::HotSnapshots;
use crate::search::{self, Answer, Engine, IndexEntry, Param, Step};
use crate::stored::{
    change_digest, gunzip, gzip_record, lookup_keys, point_of, state_text, stored_record,
};
use crate::{CacheError, SearchError, Snapshot, SnapshotStore, StoredHistory, StoredPage};
use company_model::{SearchPage, SearchQuery};

/// A history point as read: milliseconds, follower count, employee count, size band.
type PointRow = (
    i64,
    Option<i64>,
    Option<i64>,
    Option<String>,
    Option<i64>,
    Option<bool>,
);
/// A page's history as read: its URL, its points, its states (milliseconds, record, record format).
type HistoryRows = (
    String,
    Vec<PointRow>,
    Vec<(i64, Result<String, String>, u32)>,
);

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/sqlite/0001_create_table_snapshots.sql"),
    include_str!("../migrations/sqlite/0002_alter_table_snapshots.sql"),
    include_str!("../migrations/sqlite/0003_alter_table_snapshots.sql"),
    include_str!("../migrations/sqlite/0004_create_table_history_points.sql"),
    include_str!("../migrations/sqlite/0005_alter_table_snapshots.sql"),
    include_str!("../migrations/sqlite/0006_create_index_snapshots_unkeyed.sql"),
    include_str!("../migrations/sqlite/0007_alter_table_history_points.sql"),
    include_str!("../migrations/sqlite/0008_create_table_company_search.sql"),
    include_str!("../migrations/sqlite/0009_create_table_company_text_pending.sql"),
    include_str!("../migrations/sqlite/0010_recreate_table_company_text.sql"),
    include_str!("../migrations/sqlite/0011_create_table_company_text_terms.sql"),
];

/// Writes the search row and words of the snapshot of `url` in `tx`, unless the row there is of a later fetch.
fn index(
    tx: &rusqlite::Transaction<'_>,
    url: &str,
    entry: &IndexEntry,
    pending: &PendingWords,
) -> rusqlite::Result<()> {
    use rusqlite::OptionalExtension;
    let id: Option<i64> = tx
        .prepare_cached(
            "INSERT INTO company_search (url, row, industry, company_size, company_type, country, region, locality,
                                         specialties, employee_count, follower_count, founded, has_website,
                                         fetched_at_ms, employee_growth)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,
                     (SELECT (?10 - h.employee_count_on_li) * 100.0 / h.employee_count_on_li FROM history_points h
                      WHERE h.url = ?1 AND h.fetched_at_ms <= ?14 - ?15 AND h.employee_count_on_li > 0
                      ORDER BY h.fetched_at_ms DESC LIMIT 1))
             ON CONFLICT (url) DO UPDATE SET row = excluded.row, industry = excluded.industry,
                 company_size = excluded.company_size, company_type = excluded.company_type,
                 country = excluded.country, region = excluded.region, locality = excluded.locality,
                 specialties = excluded.specialties, employee_count = excluded.employee_count,
                 employee_growth = excluded.employee_growth,
                 follower_count = excluded.follower_count, founded = excluded.founded,
                 has_website = excluded.has_website, fetched_at_ms = excluded.fetched_at_ms
             WHERE excluded.fetched_at_ms >= company_search.fetched_at_ms
             RETURNING id",
        )?
        .query_row(
            rusqlite::params![
                url,
                entry.row,
                entry.industry,
                entry.company_size,
                entry.company_type,
                entry.country,
                entry.region,
                entry.locality,
                entry.specialties,
                entry.employee_count,
                entry.follower_count,
                entry.founded,
                entry.has_website,
                entry.fetched_at_ms,
                search::GROWTH_SPAN_MS
            ],
            |row| row.get(0),
        )
        .optional()?;
    if let Some(id) = id {
        let [name, slogan, description, specialties] = &entry.text;
        tx.prepare_cached(
            "INSERT OR REPLACE INTO company_text_pending (id, name, slogan, description, specialties)
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(rusqlite::params![id, name, slogan, description, specialties])?;
        pending.staged(tx)?;
    }
    Ok(())
}

/// The rows of a search (row JSON, sort key, URL), in order, at most one more than its limit: its statements
/// run in `tx` as [`search::Search`] steps them.
fn search_in(
    tx: &rusqlite::Transaction<'_>,
    query: &SearchQuery,
    common_matches: u32,
) -> rusqlite::Result<Vec<search::Found>> {
    let whole = whole_words(tx, &query.words)?;
    let mut search =
        search::Search::new(Engine::Sqlite, query, common_matches).with_whole_words(&whole);
    let mut answer = Answer::Start;
    loop {
        answer = match search.step(answer) {
            Step::Count(sql, params) => Answer::Count(
                tx.prepare_cached(&sql)?
                    .query_row(rusqlite::params_from_iter(values_of(params)), |row| {
                        row.get(0)
                    })?,
            ),
            Step::Rows(sql, params) => Answer::Rows(
                tx.prepare_cached(&sql)?
                    .query_map(rusqlite::params_from_iter(values_of(params)), |row| {
                        Ok((row.get(0)?, row.get(1)?, row.get(2)?))
                    })?
                    .collect::<rusqlite::Result<_>>()?,
            ),
            // Never asked of SQLite, whose tiers are FTS5 column filters counted one by one (`Step::Count`).
            Step::Tiers(..) | Step::MoreTiers(_) => return Err(rusqlite::Error::InvalidQuery),
            Step::Done(found) => return Ok(found),
        };
    }
}

/// The words of `words` that a search would ask as prefixes (of [`company_model::PREFIX_MIN_CHARS`] characters
/// or more) but that no longer word in `company_text` begins with: asked as they are, they find the same
/// companies, faster ([`search::Search::with_whole_words`]). Read from FTS5's vocabulary (`company_text_terms`)
/// in the search's own transaction, so from the same index its statements then read (the vocabulary skips the
/// words of deleted pages, as their matches do; it may read past them).
///
/// The vocabulary is asked for its first word in the range of the longer ones: from the word and the least
/// character (U+0001; no word holds a control character) to the word with its last character one higher, a seek
/// in each segment of the index (0.02 ms on 100,000 companies, at best: the words of deleted pages in the range
/// are read past). The word itself lies before that range: its every place in the index would be read past
/// before the range began.
fn whole_words(tx: &rusqlite::Transaction<'_>, words: &[String]) -> rusqlite::Result<Vec<String>> {
    use rusqlite::OptionalExtension;
    let mut whole = Vec::new();
    for word in words {
        if word.chars().count() < company_model::PREFIX_MIN_CHARS {
            continue;
        }
        let Some(past) = past_longer_words(word) else {
            continue;
        };
        let longer: Option<String> = tx
            .prepare_cached(
                "SELECT term FROM company_text_terms WHERE term >= ?1 AND term < ?2 LIMIT 1",
            )?
            .query_row(rusqlite::params![format!("{word}\u{1}"), past], |row| {
                row.get(0)
            })
            .optional()?;
        if !longer.is_some_and(|term| term.starts_with(word.as_str())) {
            whole.push(word.clone());
        }
    }
    Ok(whole)
}

/// The least text after every word that begins with `word`: `word` with its last character one higher (in
/// UTF-8, as SQLite compares text, bytes keep the order of characters). `None` for a word whose last character
/// has none above it.
fn past_longer_words(word: &str) -> Option<String> {
    let mut chars = word.chars();
    let last = u32::from(chars.next_back()?);
    let next = (last + 1..=u32::from(char::MAX)).find_map(char::from_u32)?;
    Some(format!("{}{next}", chars.as_str()))
}

/// The values SQLite binds for a search statement's parameters.
fn values_of(params: Vec<Param>) -> Vec<rusqlite::types::Value> {
    params
        .into_iter()
        .map(|param| match param {
            Param::Int(n) => rusqlite::types::Value::Integer(n),
            Param::Float(x) => rusqlite::types::Value::Real(x),
            Param::Text(text) => rusqlite::types::Value::Text(text),
        })
        .collect()
}

/// How many snapshots' words wait in `company_text_pending` before `company_text` takes them, in one write.
/// FTS5 writes a segment per commit: taking each snapshot's words in its own commit, the index added 23% to a
/// snapshot's write; 64 at a time, about half that (docs/benchmarks.md, section 14). A search with words takes in
/// what waits first: about this many at most (`PendingWords` says when more).
pub const PENDING_WORDS: u32 = 64;

/// How many snapshots' words wait in `company_text_pending`, as this store counts them: read from the table when
/// the store opens, then counted here, where the table's `count(*)` read every page of it on each write (a tenth
/// of the time in the index's own code). It only paces the batches: `company_text_pending` stays the truth
/// searches read, and every batch taken in empties it. A write rolled back after staging its words leaves the
/// count one too high (the next batch comes a write early); one rolled back after taking a batch in leaves it at
/// zero with that batch still staged (the next is up to twice [`PENDING_WORDS`]); and two stores on one file
/// (another process) each count only their own writes.
#[derive(Clone, Debug, Default)]
struct PendingWords(std::sync::Arc<std::sync::atomic::AtomicI64>);

impl PendingWords {
    /// Counts one more snapshot's words staged in `tx`, and has `company_text` take them all in once there are
    /// [`PENDING_WORDS`].
    fn staged(&self, tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
        use std::sync::atomic::Ordering;
        if self.0.fetch_add(1, Ordering::Relaxed) + 1 >= i64::from(PENDING_WORDS) {
            self.take_in(tx)?;
        }
        Ok(())
    }

    /// Has `company_text` take in every snapshot's words staged, in `tx`: moves the words waiting in
    /// `company_text_pending` into `company_text`, replacing what each row had there.
    fn take_in(&self, tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<()> {
        tx.prepare_cached(
            "DELETE FROM company_text WHERE rowid IN (SELECT id FROM company_text_pending)",
        )?
        .execute([])?;
        tx.prepare_cached(
            "INSERT INTO company_text (rowid, name, slogan, description, specialties)
             SELECT id, name, slogan, description, specialties FROM company_text_pending",
        )?
        .execute([])?;
        tx.prepare_cached("DELETE FROM company_text_pending")?
            .execute([])?;
        self.0.store(0, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}

/// Snapshots in the service's SQLite file (tables `snapshots` and `snapshot_aliases`).
///
/// Snapshots read or written through this value are reused from memory for [`crate::HOT_REUSE`] (up to 16 MB of
/// records), so a page asked for many times a second costs one database read every two seconds. Clones share
/// them.
#[derive(Clone, Debug)]
pub struct SqliteSnapshotStore {
    pool: SqlitePool,
    hot: std::sync::Arc<HotSnapshots>,
    /// Whether snapshots written are indexed for search ([`Self::without_search_index`]).
    search_index: bool,
    /// From how many matches a search's words are walked rather than gathered ([`Self::with_common_matches`]).
    common_matches: u32,
    /// The snapshots whose words wait in `company_text_pending`.
    pending: PendingWords,
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> CacheError {
    CacheError(Box::new(error))
}

impl SqliteSnapshotStore {
    /// Opens the store in the SQLite file at `path` (created if missing) and migrates its tables.
    ///
    /// # Errors
    /// [`CacheError`] when the file cannot be opened or migrated.
    pub async fn open(path: &Path) -> Result<Self, CacheError> {
        Self::with_pool(SqlitePool::open(path).await.map_err(backend)?).await
    }

    /// Uses an already open pool (the service opens one per file and shares it).
    ///
    /// # Errors
    /// [`CacheError`] when the tables cannot be migrated.
    pub async fn with_pool(pool: SqlitePool) -> Result<Self, CacheError> {
        pool.migrate("snapshot-cache", MIGRATIONS)
            .await
            .map_err(backend)?;
        let pending: i64 = pool
            .run(|conn| {
                conn.query_row("SELECT count(*) FROM company_text_pending", [], |row| {
                    row.get(0)
                })
            })
            .await
            .map_err(backend)?;
        let store = Self {
            pool,
            hot: std::sync::Arc::default(),
            search_index: true,
            common_matches: search::COMMON_MATCHES,
            pending: PendingWords(std::sync::Arc::new(pending.into())),
        };
        store.key_unkeyed_rows().await?;
        store.index_unindexed_rows().await?;
        Ok(store)
    }

    /// This store without the search index: snapshots written through it are not indexed, so their writes skip
    /// that cost (for an embedder that never searches, and for measuring what the index costs). Searches then miss
    /// them, or find what was indexed of them before.
    #[must_use]
    pub fn without_search_index(mut self) -> Self {
        self.search_index = false;
        self
    }

    /// This store with searches planning words as common from `matches` stored matches (default
    /// [`COMMON_MATCHES`](crate::COMMON_MATCHES)): a
    /// search whose words match that many walks its order's index checking each row's words, a rarer one gathers
    /// their matches and sorts them. Both give the same rows, so this tunes time only (and lets a test run both
    /// plans on a small store).
    #[must_use]
    pub fn with_common_matches(mut self, matches: u32) -> Self {
        self.common_matches = matches.max(1);
        self
    }
}

/// How many SQLite virtual-machine instructions run between two looks at a search's deadline: a few microseconds'
/// work, so a search stops within that of its limit, and the look (reading the clock) costs nothing measurable.
const INSTRUCTIONS_PER_LOOK: std::ffi::c_int = 1_000;

/// Whether `error` is SQLite's interruption of a statement (by the progress handler a search sets).
fn interrupted(error: &sqlite_pool::SqliteError) -> bool {
    matches!(
        error,
        sqlite_pool::SqliteError::Statement(rusqlite::Error::SqliteFailure(failure, _))
            if failure.code == rusqlite::ErrorCode::OperationInterrupted
    )
}

#[async_trait::async_trait]
impl SnapshotStore for SqliteSnapshotStore {
    async fn fresh_many(
        &self,
        urls: &[PageUrl],
        fetched_since: jiff::Timestamp,
    ) -> Result<HashMap<PageUrl, Snapshot>, CacheError> {
        let (mut found, cold) = self.hot.split(urls, fetched_since);
        if cold.is_empty() {
            return Ok(found);
        }
        let aliases: Vec<String> = cold.iter().map(|u| u.as_str().to_owned()).collect();
        let since_ms = fetched_since.as_millisecond();
        let rows = self
            .pool
            .run(move |conn| {
                let placeholders = vec!["?"; aliases.len()].join(",");
                let sql = format!(
                    "SELECT a.alias, s.url, s.record, s.fetched_at_ms, s.record_format
                     FROM snapshot_aliases a JOIN snapshots s ON s.url = a.url
                     WHERE a.alias IN ({placeholders}) AND s.fetched_at_ms >= ?"
                );
                let mut statement = conn.prepare_cached(&sql)?;
                let mut params: Vec<&dyn rusqlite::ToSql> =
                    aliases.iter().map(|a| a as &dyn rusqlite::ToSql).collect();
                params.push(&since_ms);
                statement
                    .query_map(params.as_slice(), |row| {
                        Ok((
                            row.get::<_, String>(0)?,
                            row.get::<_, String>(1)?,
                            row.get::<_, String>(2)?,
                            row.get::<_, i64>(3)?,
                            row.get::<_, u32>(4)?,
                        ))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .await
            .map_err(backend)?;
        let by_text: HashMap<&str, &PageUrl> = cold.iter().map(|u| (u.as_str(), *u)).collect();
        for (alias, url, record, fetched_at_ms, format) in rows {
            let Some(&key) = by_text.get(alias.as_str()) else {
                continue;
            };
            let record = match stored_record(record, format) {
                Ok(record) => record,
                Err(error) => {
                    tracing::warn!(%url, %error, "a stored record is damaged; the page will be fetched again");
                    continue;
                }
            };
            let snapshot = Snapshot {
                url: PageUrl::from_canonical(&url).map_err(backend)?,
                record,
                fetched_at: jiff::Timestamp::from_millisecond(fetched_at_ms).map_err(backend)?,
            };
            self.hot.keep(key, &snapshot);
            found.insert(key.clone(), snapshot);
        }
        Ok(found)
    }

    async fn put(
        &self,
        snapshot: &Snapshot,
        aliases: &[PageUrl],
        page_gzip: Option<&[u8]>,
    ) -> Result<(), CacheError> {
        let url = snapshot.url.as_str().to_owned();
        let page = page_gzip.map(<[u8]>::to_vec);
        let record = snapshot.record.as_str().to_owned();
        let fetched_at_ms = snapshot.fetched_at.as_millisecond();
        let mut alias_texts: Vec<String> = aliases.iter().map(|a| a.as_str().to_owned()).collect();
        alias_texts.push(url.clone());
        // Parsed once, for the history point and the lookup keys.
        let parsed = snapshot.record.to_record().ok();
        let point = point_of(parsed.as_ref(), snapshot.fetched_at);
        let digest = change_digest(&snapshot.record);
        let record_gzip = gzip_record(&snapshot.record);
        let (domain_key, name_key) = lookup_keys(parsed.as_ref());
        let entry = self
            .search_index
            .then(|| IndexEntry::of(&snapshot.url, parsed.as_ref(), snapshot.fetched_at));
        let pending = self.pending.clone();
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                // Keep the newer snapshot when two fetches of one page finish out of order.
                tx.execute(
                    "INSERT INTO snapshots (url, record, fetched_at_ms, page_gzip, record_format, domain_key,
                                            name_key)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                     ON CONFLICT (url) DO UPDATE SET record = excluded.record, fetched_at_ms = excluded.fetched_at_ms,
                                                     page_gzip = excluded.page_gzip,
                                                     record_format = excluded.record_format,
                                                     domain_key = excluded.domain_key,
                                                     name_key = excluded.name_key
                     WHERE excluded.fetched_at_ms >= snapshots.fetched_at_ms",
                    rusqlite::params![url, record, fetched_at_ms, page, RECORD_FORMAT, domain_key, name_key],
                )?;
                for alias in &alias_texts {
                    tx.execute(
                        "INSERT INTO snapshot_aliases (alias, url) VALUES (?1, ?2)
                         ON CONFLICT (alias) DO UPDATE SET url = excluded.url",
                        rusqlite::params![alias, url],
                    )?;
                }
                tx.execute(
                    "INSERT INTO history_points (url, fetched_at_ms, follower_count, employee_count_on_li,
                                                 company_size, job_count, job_count_is_lower_bound)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING",
                    rusqlite::params![
                        url,
                        fetched_at_ms,
                        point.follower_count.and_then(|n| i64::try_from(n).ok()),
                        point.employee_count_on_li.and_then(|n| i64::try_from(n).ok()),
                        point.company_size,
                        point.job_count.and_then(|n| i64::try_from(n).ok()),
                        point.job_count_is_lower_bound
                    ],
                )?;
                // The record only when its change fields differ from the one fetched before it.
                tx.execute(
                    "INSERT INTO history_states (url, fetched_at_ms, digest, record_gzip, record_format)
                     SELECT ?1, ?2, ?3, ?4, ?5
                     WHERE coalesce((SELECT digest FROM history_states WHERE url = ?1 AND fetched_at_ms <= ?2
                                     ORDER BY fetched_at_ms DESC LIMIT 1), '') <> ?3
                     ON CONFLICT DO NOTHING",
                    rusqlite::params![url, fetched_at_ms, digest, record_gzip, RECORD_FORMAT],
                )?;
                if let Some(entry) = &entry {
                    index(&tx, &url, entry, &pending)?;
                }
                tx.commit()
            })
            .await
            .map_err(backend)?;
        self.hot.stored(aliases, snapshot);
        Ok(())
    }

    async fn stored_pages(
        &self,
        after: Option<&PageUrl>,
        limit: u32,
    ) -> Result<Vec<StoredPage>, CacheError> {
        let after = after.map(|u| u.as_str().to_owned()).unwrap_or_default();
        let rows = self
            .pool
            .run(move |conn| {
                conn.prepare(
                    "SELECT url, page_gzip, fetched_at_ms FROM snapshots
                     WHERE url > ?1 AND page_gzip IS NOT NULL ORDER BY url LIMIT ?2",
                )?
                .query_map(rusqlite::params![after, limit], |row| {
                    let page: Vec<u8> = row.get(1)?;
                    let html = gunzip(&page).map_err(|e| {
                        rusqlite::Error::FromSqlConversionFailure(
                            1,
                            rusqlite::types::Type::Blob,
                            Box::new(e),
                        )
                    })?;
                    Ok((row.get::<_, String>(0)?, html, row.get::<_, i64>(2)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .await
            .map_err(backend)?;
        rows.into_iter()
            .map(|(url, html, fetched_at_ms)| {
                Ok(StoredPage {
                    url: PageUrl::from_canonical(&url).map_err(backend)?,
                    html,
                    fetched_at: jiff::Timestamp::from_millisecond(fetched_at_ms)
                        .map_err(backend)?,
                })
            })
            .collect()
    }

    async fn history(
        &self,
        url: &PageUrl,
        from: jiff::Timestamp,
        to: jiff::Timestamp,
    ) -> Result<Option<StoredHistory>, CacheError> {
        let alias = url.as_str().to_owned();
        let (from_ms, to_ms) = (from.as_millisecond(), to.as_millisecond());
        let found: Option<HistoryRows> = self
            .pool
            .run(move |conn| {
                let url: Option<String> = conn
                    .prepare_cached("SELECT url FROM snapshot_aliases WHERE alias = ?1")?
                    .query_row([&alias], |row| row.get(0))
                    .map(Some)
                    .or_else(|e| match e {
                        rusqlite::Error::QueryReturnedNoRows => Ok(None),
                        e => Err(e),
                    })?;
                let Some(url) = url else { return Ok(None) };
                let points = conn
                    .prepare_cached(
                        "SELECT fetched_at_ms, follower_count, employee_count_on_li, company_size, job_count,
                                job_count_is_lower_bound
                         FROM history_points WHERE url = ?1 AND fetched_at_ms BETWEEN ?2 AND ?3
                         ORDER BY fetched_at_ms",
                    )?
                    .query_map(rusqlite::params![url, from_ms, to_ms], |row| {
                        Ok((
                            row.get(0)?,
                            row.get(1)?,
                            row.get(2)?,
                            row.get(3)?,
                            row.get(4)?,
                            row.get(5)?,
                        ))
                    })?
                    .collect::<rusqlite::Result<Vec<PointRow>>>()?;
                let states = conn
                    .prepare_cached(
                        "SELECT fetched_at_ms, record, record_gzip, record_format FROM history_states
                         WHERE url = ?1 AND fetched_at_ms <= ?3
                           AND fetched_at_ms >= coalesce((SELECT max(fetched_at_ms) FROM history_states
                                                          WHERE url = ?1 AND fetched_at_ms < ?2), ?2)
                         ORDER BY fetched_at_ms",
                    )?
                    .query_map(rusqlite::params![url, from_ms, to_ms], |row| {
                        let gzip: Option<Vec<u8>> = row.get(2)?;
                        let text = state_text(row.get(1)?, gzip.as_deref());
                        Ok((row.get(0)?, text, row.get(3)?))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                Ok(Some((url, points, states)))
            })
            .await
            .map_err(backend)?;
        let Some((url, points, states)) = found else {
            return Ok(None);
        };
        let at = |ms: i64| jiff::Timestamp::from_millisecond(ms).map_err(backend);
        Ok(Some(StoredHistory {
            url: PageUrl::from_canonical(&url).map_err(backend)?,
            points: points
                .into_iter()
                .map(
                    |(ms, follower_count, employee_count_on_li, company_size, jobs, lower_bound)| {
                        Ok(company_model::HistoryPoint {
                            fetched_at: at(ms)?,
                            follower_count: follower_count.and_then(|n| u64::try_from(n).ok()),
                            employee_count_on_li: employee_count_on_li.and_then(|n| u64::try_from(n).ok()),
                            company_size,
                            job_count: jobs.and_then(|n| u64::try_from(n).ok()),
                            job_count_is_lower_bound: lower_bound,
                        })
                    },
                )
                .collect::<Result<_, CacheError>>()?,
            states: states
                .into_iter()
                .filter_map(|(ms, record, format)| match record.and_then(|r| stored_record(r, format)) {
                    Ok(record) => Some(at(ms).map(|at| (at, record))),
                    Err(error) => {
                        tracing::warn!(%url, %error, "a stored history record is damaged; it is left out");
                        None
                    }
                })
                .collect::<Result<_, CacheError>>()?,
        }))
    }

    async fn forget_history_before(&self, cutoff: jiff::Timestamp) -> Result<u64, CacheError> {
        let cutoff_ms = cutoff.as_millisecond();
        let removed = self
            .pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let points = tx.execute(
                    "DELETE FROM history_points WHERE fetched_at_ms < ?1",
                    [cutoff_ms],
                )?;
                let states = tx.execute(
                    "DELETE FROM history_states AS old WHERE fetched_at_ms < ?1 AND EXISTS (
                         SELECT 1 FROM history_states AS newer WHERE newer.url = old.url
                           AND newer.fetched_at_ms > old.fetched_at_ms AND newer.fetched_at_ms < ?1)",
                    [cutoff_ms],
                )?;
                tx.commit()?;
                Ok(points + states)
            })
            .await
            .map_err(backend)?;
        Ok(removed as u64)
    }

    async fn replace_record(
        &self,
        url: &PageUrl,
        fetched_at: jiff::Timestamp,
        record: &CompanyRecord,
    ) -> Result<bool, CacheError> {
        let entry = self
            .search_index
            .then(|| IndexEntry::of(url, Some(record), fetched_at));
        let url = url.as_str().to_owned();
        let (domain_key, name_key) = lookup_keys(Some(record));
        let record = serde_json::to_string(record).map_err(backend)?;
        let fetched_at_ms = fetched_at.as_millisecond();
        let pending = self.pending.clone();
        let changed = self
            .pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let changed = tx.execute(
                    "UPDATE snapshots SET record = ?1, record_format = ?4, domain_key = ?5, name_key = ?6
                     WHERE url = ?2 AND fetched_at_ms = ?3",
                    rusqlite::params![record, url, fetched_at_ms, RECORD_FORMAT, domain_key, name_key],
                )?;
                if let (true, Some(entry)) = (changed > 0, &entry) {
                    index(&tx, &url, entry, &pending)?;
                }
                tx.commit()?;
                Ok(changed)
            })
            .await
            .map_err(backend)?;
        // Rare (a reparse), so forgetting every kept snapshot is simpler than finding the ones of this page.
        self.hot.clear();
        Ok(changed > 0)
    }

    async fn pages_with_domain(
        &self,
        domain: &str,
        limit: u32,
    ) -> Result<Vec<PageUrl>, CacheError> {
        self.pages_keyed("domain_key", domain.trim().to_ascii_lowercase(), limit)
            .await
    }

    async fn pages_named(&self, name_key: &str, limit: u32) -> Result<Vec<PageUrl>, CacheError> {
        self.pages_keyed("name_key", name_key.to_owned(), limit)
            .await
    }

    async fn search(
        &self,
        query: &SearchQuery,
        time_limit: std::time::Duration,
    ) -> Result<SearchPage, SearchError> {
        // Words are matched in company_text, so the words still pending are taken in first, and the search runs
        // in the read transaction that saw none left. A write in between (words pending again) has the search
        // take them in once more; under a stream of writes, the last try answers without the newest pages' words
        // rather than wait.
        const TRIES: usize = 3;
        if !query.words.is_empty() {
            for _ in 1..TRIES {
                if let Some(found) = self.search_unless_pending(query, true, time_limit).await? {
                    return Ok(search::page_of(query, found).map_err(backend)?);
                }
                let pending = self.pending.clone();
                self.pool
                    .write(move |conn| {
                        let tx = conn
                            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                        pending.take_in(&tx)?;
                        tx.commit()
                    })
                    .await
                    .map_err(backend)?;
            }
        }
        let found = self.search_unless_pending(query, false, time_limit).await?;
        Ok(search::page_of(query, found.unwrap_or_default()).map_err(backend)?)
    }

    async fn note_seen(
        &self,
        tenant: i64,
        urls: &[PageUrl],
        at: jiff::Timestamp,
    ) -> Result<(), CacheError> {
        if urls.is_empty() {
            return Ok(());
        }
        let urls: Vec<String> = urls.iter().map(|u| u.as_str().to_owned()).collect();
        let at_ms = at.as_millisecond();
        self.pool
            .write(move |conn| {
                let tx = conn.transaction()?;
                for url in &urls {
                    tx.prepare_cached(
                        "INSERT INTO tenant_pages (tenant, url, first_at_ms) VALUES (?1, ?2, ?3)
                         ON CONFLICT DO NOTHING",
                    )?
                    .execute(rusqlite::params![tenant, url, at_ms])?;
                }
                tx.commit()
            })
            .await
            .map_err(backend)
    }

    async fn remembered(
        &self,
        key: &str,
        now: jiff::Timestamp,
    ) -> Result<Option<String>, CacheError> {
        let key = key.to_owned();
        let now_ms = now.as_millisecond();
        self.pool
            .run(move |conn| {
                use rusqlite::OptionalExtension;
                conn.prepare_cached(
                    "SELECT text FROM remembered WHERE key = ?1 AND expires_at_ms > ?2",
                )?
                .query_row(rusqlite::params![key, now_ms], |row| row.get(0))
                .optional()
            })
            .await
            .map_err(backend)
    }

    async fn remember(
        &self,
        key: &str,
        text: &str,
        expires_at: jiff::Timestamp,
    ) -> Result<(), CacheError> {
        let (key, text) = (key.to_owned(), text.to_owned());
        let expires_ms = expires_at.as_millisecond();
        let now_ms = jiff::Timestamp::now().as_millisecond();
        self.pool
            .write(move |conn| {
                conn.execute(
                    "DELETE FROM remembered WHERE expires_at_ms <= ?1",
                    [now_ms],
                )?;
                conn.execute(
                    "INSERT INTO remembered (key, text, expires_at_ms) VALUES (?1, ?2, ?3)
                     ON CONFLICT (key) DO UPDATE SET text = excluded.text, expires_at_ms = excluded.expires_at_ms",
                    rusqlite::params![key, text, expires_ms],
                )
            })
            .await
            .map_err(backend)?;
        Ok(())
    }
}

impl SqliteSnapshotStore {
    /// The pages whose `column` (`domain_key` or `name_key`) is `key`, newest first.
    async fn pages_keyed(
        &self,
        column: &'static str,
        key: String,
        limit: u32,
    ) -> Result<Vec<PageUrl>, CacheError> {
        if key.is_empty() {
            return Ok(Vec::new());
        }
        let urls = self
            .pool
            .run(move |conn| {
                conn.prepare_cached(&format!(
                    "SELECT url FROM snapshots WHERE {column} = ?1 ORDER BY fetched_at_ms DESC LIMIT ?2"
                ))?
                .query_map(rusqlite::params![key, limit], |row| row.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .await
            .map_err(backend)?;
        urls.iter()
            .map(|url| PageUrl::from_canonical(url).map_err(backend))
            .collect()
    }

    /// The rows of `query`'s statement, or `None` when `check_pending` and words wait in
    /// `company_text_pending` (the search would miss them). Its statements are interrupted once `time_limit` has
    /// passed since it had its connection ([`SearchError::TimedOut`]): a wait for one is the service's, not the
    /// search's, and so is the taking in of pending words, which runs before this on the writer.
    async fn search_unless_pending(
        &self,
        query: &SearchQuery,
        check_pending: bool,
        time_limit: std::time::Duration,
    ) -> Result<Option<Vec<search::Found>>, SearchError> {
        let (query, common_matches) = (query.clone(), self.common_matches);
        let found = self
            .pool
            .run(move |conn| {
                let tx = conn.transaction()?;
                // None: a limit too far off to be an instant, so no deadline.
                if let Some(deadline) = std::time::Instant::now().checked_add(time_limit) {
                    tx.progress_handler(
                        INSTRUCTIONS_PER_LOOK,
                        Some(move || std::time::Instant::now() >= deadline),
                    )?;
                }
                let found = (|| {
                    if check_pending
                        && tx
                            .prepare_cached("SELECT EXISTS (SELECT 1 FROM company_text_pending)")?
                            .query_row([], |row| row.get::<_, bool>(0))?
                    {
                        return Ok(None);
                    }
                    search_in(&tx, &query, common_matches).map(Some)
                })();
                // Removed before the transaction ends (its rollback must not be interrupted), and so the
                // connection goes back to the pool without it whatever the search answered.
                tx.progress_handler(0, None::<fn() -> bool>)?;
                found
            })
            .await;
        match found {
            Ok(found) => Ok(found),
            Err(error) if interrupted(&error) => Err(SearchError::TimedOut { limit: time_limit }),
            Err(error) => Err(backend(error).into()),
        }
    }

    /// Indexes for search the snapshots stored before search was (or whose row is missing), a thousand at a
    /// time.
    async fn index_unindexed_rows(&self) -> Result<(), CacheError> {
        loop {
            let rows: Vec<(String, String, i64)> = self
                .pool
                .run(|conn| {
                    conn.prepare_cached(
                        "SELECT s.url, s.record, s.fetched_at_ms FROM snapshots s
                         WHERE NOT EXISTS (SELECT 1 FROM company_search c WHERE c.url = s.url) LIMIT 1000",
                    )?
                    .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))?
                    .collect::<rusqlite::Result<Vec<_>>>()
                })
                .await
                .map_err(backend)?;
            if rows.is_empty() {
                return Ok(());
            }
            let entries = rows
                .into_iter()
                .map(|(url, record, fetched_at_ms)| {
                    let page = PageUrl::from_canonical(&url).map_err(backend)?;
                    let at = jiff::Timestamp::from_millisecond(fetched_at_ms).map_err(backend)?;
                    // Records of every format read into the record type (older ones are converted so).
                    let record: Option<CompanyRecord> = serde_json::from_str(&record).ok();
                    Ok((url, IndexEntry::of(&page, record.as_ref(), at)))
                })
                .collect::<Result<Vec<_>, CacheError>>()?;
            let pending = self.pending.clone();
            self.pool
                .write(move |conn| {
                    let tx =
                        conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                    for (url, entry) in &entries {
                        index(&tx, url, entry, &pending)?;
                    }
                    tx.commit()
                })
                .await
                .map_err(backend)?;
        }
    }

    /// Keys the rows stored before snapshots were keyed by domain and name, a thousand at a time.
    async fn key_unkeyed_rows(&self) -> Result<(), CacheError> {
        loop {
            let rows: Vec<(String, String)> = self
                .pool
                .run(|conn| {
                    conn.prepare_cached(
                        "SELECT url, record FROM snapshots WHERE name_key IS NULL LIMIT 1000",
                    )?
                    .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
                    .collect::<rusqlite::Result<Vec<_>>>()
                })
                .await
                .map_err(backend)?;
            if rows.is_empty() {
                return Ok(());
            }
            let keyed: Vec<(String, String, String)> = rows
                .into_iter()
                .map(|(url, record)| {
                    // Records of every format read into the record type (older ones are converted so).
                    let (domain, name) = lookup_keys(serde_json::from_str(&record).ok().as_ref());
                    (url, domain, name)
                })
                .collect();
            self.pool
                .write(move |conn| {
                    let tx = conn.transaction()?;
                    for (url, domain, name) in &keyed {
                        tx.execute(
                            "UPDATE snapshots SET domain_key = ?2, name_key = ?3 WHERE url = ?1",
                            rusqlite::params![url, domain, name],
                        )?;
                    }
                    tx.commit()
                })
                .await
                .map_err(backend)?;
        }
    }
}
