use std::collections::HashMap;
use std::time::SystemTime;
use store_base::time;

use company_model::{CompanyRecord, RECORD_FORMAT};
use page_url::PageUrl;
use pg_pool::PgPool;

use crate::hot::HotSnapshots;
use crate::search::{self, Answer, Engine, IndexEntry, Param, Step};
use crate::stored::{
    change_digest, gunzip, gzip_record, lookup_keys, point_of, state_text, stored_record,
};
use crate::{CacheError, SearchError, Snapshot, SnapshotStore, StoredHistory, StoredPage};
use company_model::{SearchPage, SearchQuery};
use pg_pool::tokio_postgres::types::ToSql;

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/postgres/0001_create_table_snapshots.sql"),
    include_str!("../migrations/postgres/0002_create_table_fetch_claims.sql"),
    include_str!("../migrations/postgres/0003_create_table_history_points.sql"),
    include_str!("../migrations/postgres/0004_alter_table_snapshots.sql"),
    include_str!("../migrations/postgres/0005_create_index_snapshots_unkeyed.sql"),
    include_str!("../migrations/postgres/0006_alter_table_history_points.sql"),
    include_str!("../migrations/postgres/0007_create_table_company_search.sql"),
    include_str!("../migrations/postgres/0008_alter_table_tenant_pages.sql"),
    include_str!("../migrations/postgres/0009_alter_table_company_search.sql"),
    include_str!("../migrations/postgres/0010_alter_table_company_search.sql"),
];

/// The statement that writes a snapshot's search row (unless the row there is of a later fetch): the URL is
/// parameter `$url`, [`index_params`] are numbered from `$first`.
fn index_statement(url: usize, first: usize) -> String {
    let p: Vec<String> = std::iter::once(url)
        .chain(first..first + 16)
        .map(|n| format!("${n}"))
        .collect();
    format!(
        "INSERT INTO company_search (url, row, industry, company_size, company_type, country, region, locality,
                                     specialties, employee_count, follower_count, founded, has_website,
                                     fetched_at_ms, document, name_words, headline_words, employee_growth)
         VALUES ({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, array_to_tsvector({}::TEXT[]), {}, {},
                 (SELECT ({employees} - h.employee_count_on_li) * 100.0 / h.employee_count_on_li
                  FROM history_points h
                  WHERE h.url = {url} AND h.employee_count_on_li > 0
                    AND h.fetched_at <= to_timestamp(({fetched} - {span}) / 1000.0)
                  ORDER BY h.fetched_at DESC LIMIT 1))
         ON CONFLICT (url) DO UPDATE SET row = excluded.row, industry = excluded.industry,
             company_size = excluded.company_size, company_type = excluded.company_type,
             country = excluded.country, region = excluded.region, locality = excluded.locality,
             specialties = excluded.specialties, employee_count = excluded.employee_count,
             follower_count = excluded.follower_count, founded = excluded.founded,
             has_website = excluded.has_website, fetched_at_ms = excluded.fetched_at_ms,
             document = excluded.document, name_words = excluded.name_words,
             headline_words = excluded.headline_words, employee_growth = excluded.employee_growth
         WHERE excluded.fetched_at_ms >= company_search.fetched_at_ms",
        p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9], p[10], p[11], p[12], p[13], p[14], p[15],
        p[16],
        employees = p[9],
        url = p[0],
        fetched = p[13],
        span = search::GROWTH_SPAN_MS
    )
}

/// The parameters of [`index_statement`] after the URL, in its order; `words` are the entry's lexemes and tier
/// words ([`Words`]).
fn index_params<'a>(
    entry: &'a IndexEntry,
    words: &'a Words,
) -> [&'a (dyn pg_pool::tokio_postgres::types::ToSql + Sync); 16] {
    let (lexemes, [name_words, headline_words]) = words;
    [
        &entry.row,
        &entry.industry,
        &entry.company_size,
        &entry.company_type,
        &entry.country,
        &entry.region,
        &entry.locality,
        &entry.specialties,
        &entry.employee_count,
        &entry.follower_count,
        &entry.founded,
        &entry.has_website,
        &entry.fetched_at_ms,
        lexemes,
        name_words,
        headline_words,
    ]
}

/// A search row's `document` lexemes and its `name_words` and `headline_words` ([`IndexEntry::lexemes`],
/// [`IndexEntry::tier_words`]), computed on PostgreSQL's write path alone.
type Words = (Vec<String>, [String; 2]);

/// A search statement's parameters as tokio-postgres takes them ([`refs_of`] borrows them).
fn values_of(params: Vec<Param>) -> Vec<Box<dyn ToSql + Sync + Send>> {
    params
        .into_iter()
        .map(|param| match param {
            Param::Int(n) => Box::new(n) as Box<dyn ToSql + Sync + Send>,
            Param::Float(x) => Box::new(x),
            Param::Text(text) => Box::new(text),
        })
        .collect()
}

/// The rows `sql` answers with `params`, its statement prepared once per connection.
async fn rows_of(
    tx: &pg_pool::Transaction<'_>,
    sql: &str,
    params: Vec<Param>,
) -> Result<Vec<pg_pool::tokio_postgres::Row>, CacheError> {
    let values = values_of(params);
    let statement = tx.prepare_cached(sql).await.map_err(backend)?;
    tx.query(&statement, &refs_of(&values))
        .await
        .map_err(backend)
}

/// The next `chunk` tiers of the tier tally's `portal` ([`search::Step::Tiers`]).
async fn tiers_of(
    tx: &pg_pool::Transaction<'_>,
    portal: &pg_pool::tokio_postgres::Portal,
    chunk: usize,
) -> Result<Vec<i64>, CacheError> {
    tx.query_portal(portal, i32::try_from(chunk).unwrap_or(i32::MAX))
        .await
        .map_err(backend)?
        .iter()
        .map(|row| row.try_get(0))
        .collect::<Result<_, _>>()
        .map_err(backend)
}

fn refs_of(values: &[Box<dyn ToSql + Sync + Send>]) -> Vec<&(dyn ToSql + Sync)> {
    values
        .iter()
        .map(|v| v.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

/// Snapshots in a PostgreSQL database (tables `snapshots` and `snapshot_aliases`), shared by every server on
/// it: a page one server fetched answers stored requests on all.
///
/// As with SQLite, snapshots read or written through this value are reused from memory for
/// [`crate::HOT_REUSE`]; a snapshot another server writes is seen within that.
#[derive(Clone, Debug)]
pub struct PgSnapshotStore {
    pool: PgPool,
    hot: std::sync::Arc<HotSnapshots>,
    /// Whether snapshots written are indexed for search ([`Self::without_search_index`]).
    search_index: bool,
    /// From how many matches a search's words are walked rather than gathered ([`Self::with_common_matches`]).
    common_matches: u32,
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> CacheError {
    CacheError(pg_pool::boxed_error(error))
}

/// `RECORD_FORMAT` as the column holds it.
fn format_column() -> i32 {
    i32::try_from(RECORD_FORMAT).unwrap_or(i32::MAX)
}

impl PgSnapshotStore {
    /// Uses a pool on the database (the service opens one and shares it between its stores) and migrates the
    /// tables.
    ///
    /// # Errors
    /// [`CacheError`] when the tables cannot be migrated.
    pub async fn with_pool(pool: PgPool) -> Result<Self, CacheError> {
        pool.migrate("snapshot-cache", MIGRATIONS)
            .await
            .map_err(backend)?;
        let store = Self {
            pool,
            hot: std::sync::Arc::default(),
            search_index: true,
            common_matches: search::COMMON_MATCHES,
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

/// Whether `error` is PostgreSQL's cancelling of a statement (`query_canceled`: its `statement_timeout`).
fn cancelled(error: &CacheError) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error.0.as_ref());
    while let Some(error) = source {
        if let Some(driver) = error.downcast_ref::<pg_pool::tokio_postgres::Error>() {
            return driver.code()
                == Some(&pg_pool::tokio_postgres::error::SqlState::QUERY_CANCELED);
        }
        source = error.source();
    }
    false
}

#[async_trait::async_trait]
impl SnapshotStore for PgSnapshotStore {
    async fn fresh_many(
        &self,
        urls: &[PageUrl],
        fetched_since: jiff::Timestamp,
    ) -> Result<HashMap<PageUrl, Snapshot>, CacheError> {
        let (mut found, cold) = self.hot.split(urls, fetched_since);
        if cold.is_empty() {
            return Ok(found);
        }
        let aliases: Vec<&str> = cold.iter().map(|u| u.as_str()).collect();
        let since = SystemTime::from(fetched_since);
        let client = self.pool.client().await.map_err(backend)?;
        let statement = client
            .prepare_cached(
                "SELECT a.alias, s.url, s.record, s.fetched_at, s.record_format
                 FROM snapshot_aliases a JOIN snapshots s ON s.url = a.url
                 WHERE a.alias = ANY($1) AND s.fetched_at >= $2",
            )
            .await
            .map_err(backend)?;
        let rows = client
            .query(&statement, &[&aliases, &since])
            .await
            .map_err(backend)?;
        let by_text: HashMap<&str, &PageUrl> = cold.iter().map(|u| (u.as_str(), *u)).collect();
        for row in rows {
            let alias: &str = row.get(0);
            let Some(&key) = by_text.get(alias) else {
                continue;
            };
            let url: &str = row.get(1);
            let format = u32::try_from(row.get::<_, i32>(4)).unwrap_or(0);
            let record = match stored_record(row.get(2), format) {
                Ok(record) => record,
                Err(error) => {
                    tracing::warn!(%url, %error, "a stored record is damaged; the page will be fetched again");
                    continue;
                }
            };
            let snapshot = Snapshot {
                url: PageUrl::from_canonical(url).map_err(backend)?,
                record,
                fetched_at: time::from_system(row.get(3)),
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
        let url = snapshot.url.as_str();
        let fetched_at = SystemTime::from(snapshot.fetched_at);
        // One row per alias: a page asked for by its own URL is its own alias once.
        let mut alias_texts: Vec<&str> = aliases.iter().map(PageUrl::as_str).collect();
        alias_texts.push(url);
        alias_texts.sort_unstable();
        alias_texts.dedup();
        // Parsed once, for the history point and the lookup keys.
        let parsed = snapshot.record.to_record().ok();
        let point = point_of(parsed.as_ref(), snapshot.fetched_at);
        let count = |n: Option<u64>| n.and_then(|n| i64::try_from(n).ok());
        let (domain_key, name_key) = lookup_keys(parsed.as_ref());
        let entry = IndexEntry::of(&snapshot.url, parsed.as_ref(), snapshot.fetched_at);
        let words = (entry.lexemes(), entry.tier_words());
        let search = if self.search_index {
            format!(", search AS ({})", index_statement(1, 16))
        } else {
            String::new()
        };
        // One statement (one round trip): the snapshot, keeping the newer one when two fetches of one page finish
        // out of order (on any server); its aliases; its history point; its record as a history state when
        // its change fields differ from the state before it; and its search row.
        let sql = format!(
                "WITH snapshot AS (
                     INSERT INTO snapshots (url, record, record_format, fetched_at, page_gzip, domain_key,
                                            name_key)
                     VALUES ($1, $2, $3, $4, $5, $12, $13)
                     ON CONFLICT (url) DO UPDATE SET record = excluded.record,
                         record_format = excluded.record_format, fetched_at = excluded.fetched_at,
                         page_gzip = excluded.page_gzip, domain_key = excluded.domain_key,
                         name_key = excluded.name_key
                     WHERE excluded.fetched_at >= snapshots.fetched_at
                 ), point AS (
                     INSERT INTO history_points (url, fetched_at, follower_count, employee_count_on_li,
                                                 company_size, job_count, job_count_is_lower_bound)
                     VALUES ($1, $4, $7, $8, $9, $14, $15) ON CONFLICT DO NOTHING
                 ), state AS (
                     INSERT INTO history_states (url, fetched_at, digest, record_gzip, record_format)
                     SELECT $1, $4, $10, $11, $3
                     WHERE coalesce((SELECT digest FROM history_states WHERE url = $1 AND fetched_at <= $4
                                     ORDER BY fetched_at DESC LIMIT 1), '') <> $10
                     ON CONFLICT DO NOTHING
                 ){search}
                 INSERT INTO snapshot_aliases (alias, url) SELECT unnest($6::TEXT[]), $1
                 ON CONFLICT (alias) DO UPDATE SET url = excluded.url"
        );
        let (digest, record_gzip) = (
            change_digest(&snapshot.record),
            gzip_record(&snapshot.record),
        );
        let (followers, employees, jobs) = (
            count(point.follower_count),
            count(point.employee_count_on_li),
            count(point.job_count),
        );
        let (format, record) = (format_column(), snapshot.record.as_str());
        let mut params: Vec<&(dyn pg_pool::tokio_postgres::types::ToSql + Sync)> = vec![
            &url,
            &record,
            &format,
            &fetched_at,
            &page_gzip,
            &alias_texts,
            &followers,
            &employees,
            &point.company_size,
            &digest,
            &record_gzip,
            &domain_key,
            &name_key,
            &jobs,
            &point.job_count_is_lower_bound,
        ];
        if self.search_index {
            params.extend(index_params(&entry, &words));
        }
        self.pool.execute(&sql, &params).await.map_err(backend)?;
        self.hot.stored(aliases, snapshot);
        Ok(())
    }

    async fn stored_pages(
        &self,
        after: Option<&PageUrl>,
        limit: u32,
    ) -> Result<Vec<StoredPage>, CacheError> {
        let after = after.map_or("", PageUrl::as_str);
        let client = self.pool.client().await.map_err(backend)?;
        let rows = client
            .query(
                "SELECT url, page_gzip, fetched_at FROM snapshots
                 WHERE url > $1 AND page_gzip IS NOT NULL ORDER BY url LIMIT $2",
                &[&after, &i64::from(limit)],
            )
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|row| {
                Ok(StoredPage {
                    url: PageUrl::from_canonical(row.get(0)).map_err(backend)?,
                    html: gunzip(row.get(1)).map_err(backend)?,
                    fetched_at: time::from_system(row.get(2)),
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
        let Some(row) = self
            .pool
            .query_opt(
                "SELECT url FROM snapshot_aliases WHERE alias = $1",
                &[&url.as_str()],
            )
            .await
            .map_err(backend)?
        else {
            return Ok(None);
        };
        let page: String = row.get(0);
        // PostgreSQL's range starts in 4713 BC, jiff's in 9999 BC; nothing here was fetched before 1970.
        let from = SystemTime::from(from.max(jiff::Timestamp::UNIX_EPOCH));
        let to = SystemTime::from(to.max(jiff::Timestamp::UNIX_EPOCH));
        let points = self
            .pool
            .query(
                "SELECT fetched_at, follower_count, employee_count_on_li, company_size, job_count,
                        job_count_is_lower_bound FROM history_points
                 WHERE url = $1 AND fetched_at BETWEEN $2 AND $3 ORDER BY fetched_at",
                &[&page, &from, &to],
            )
            .await
            .map_err(backend)?;
        let states = self
            .pool
            .query(
                "SELECT fetched_at, record, record_gzip, record_format FROM history_states
                 WHERE url = $1 AND fetched_at <= $3
                   AND fetched_at >= coalesce((SELECT max(fetched_at) FROM history_states
                                               WHERE url = $1 AND fetched_at < $2), $2)
                 ORDER BY fetched_at",
                &[&page, &from, &to],
            )
            .await
            .map_err(backend)?;
        let count = |n: Option<i64>| n.and_then(|n| u64::try_from(n).ok());
        Ok(Some(StoredHistory {
            url: PageUrl::from_canonical(&page).map_err(backend)?,
            points: points
                .iter()
                .map(|row| company_model::HistoryPoint {
                    fetched_at: time::from_system(row.get(0)),
                    follower_count: count(row.get(1)),
                    employee_count_on_li: count(row.get(2)),
                    company_size: row.get(3),
                    job_count: count(row.get(4)),
                    job_count_is_lower_bound: row.get(5),
                })
                .collect(),
            states: states
                .iter()
                .filter_map(|row| {
                    let format = u32::try_from(row.get::<_, i32>(3)).unwrap_or(0);
                    let text = state_text(row.get(1), row.get::<_, Option<&[u8]>>(2));
                    match text.and_then(|text| stored_record(text, format)) {
                        Ok(record) => Some((time::from_system(row.get(0)), record)),
                        Err(error) => {
                            tracing::warn!(url = %page, %error, "a stored history record is damaged; it is left out");
                            None
                        }
                    }
                })
                .collect(),
        }))
    }

    async fn forget_history_before(&self, cutoff: jiff::Timestamp) -> Result<u64, CacheError> {
        let cutoff = SystemTime::from(cutoff.max(jiff::Timestamp::UNIX_EPOCH));
        let points = self
            .pool
            .execute(
                "DELETE FROM history_points WHERE fetched_at < $1",
                &[&cutoff],
            )
            .await
            .map_err(backend)?;
        let states = self
            .pool
            .execute(
                "DELETE FROM history_states AS old WHERE fetched_at < $1 AND EXISTS (
                     SELECT 1 FROM history_states AS newer WHERE newer.url = old.url
                       AND newer.fetched_at > old.fetched_at AND newer.fetched_at < $1)",
                &[&cutoff],
            )
            .await
            .map_err(backend)?;
        Ok(points + states)
    }

    async fn replace_record(
        &self,
        url: &PageUrl,
        fetched_at: jiff::Timestamp,
        record: &CompanyRecord,
    ) -> Result<bool, CacheError> {
        let (domain_key, name_key) = lookup_keys(Some(record));
        let entry = IndexEntry::of(url, Some(record), fetched_at);
        let words = (entry.lexemes(), entry.tier_words());
        let record = serde_json::to_string(record).map_err(backend)?;
        let fetched_at = SystemTime::from(fetched_at);
        let (url, format) = (url.as_str(), format_column());
        let mut params: Vec<&(dyn pg_pool::tokio_postgres::types::ToSql + Sync)> =
            vec![&url, &record, &fetched_at, &format, &domain_key, &name_key];
        // In one transaction: the search row is written with the record it is read from, or not at all.
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client.transaction().await.map_err(backend)?;
        let changed = tx
            .execute(
                "UPDATE snapshots SET record = $2, record_format = $4, domain_key = $5, name_key = $6
                 WHERE url = $1 AND fetched_at = $3",
                &params,
            )
            .await
            .map_err(backend)?;
        if changed > 0 && self.search_index {
            params.truncate(1);
            params.extend(index_params(&entry, &words));
            tx.execute(&index_statement(1, 2), &params)
                .await
                .map_err(backend)?;
        }
        tx.commit().await.map_err(backend)?;
        // Rare (a reparse), so forgetting every kept snapshot is simpler than finding the ones of this page.
        self.hot.clear();
        Ok(changed > 0)
    }

    async fn pages_with_domain(
        &self,
        domain: &str,
        limit: u32,
    ) -> Result<Vec<PageUrl>, CacheError> {
        self.pages_keyed("domain_key", &domain.trim().to_ascii_lowercase(), limit)
            .await
    }

    async fn pages_named(&self, name_key: &str, limit: u32) -> Result<Vec<PageUrl>, CacheError> {
        self.pages_keyed("name_key", name_key, limit).await
    }

    async fn search(
        &self,
        query: &SearchQuery,
        limit: std::time::Duration,
    ) -> Result<SearchPage, SearchError> {
        let timed_out = |error: CacheError| {
            if cancelled(&error) {
                SearchError::TimedOut { limit }
            } else {
                SearchError::Store(error)
            }
        };
        // Its statements in one snapshot of the store, so that a row a write moves between tiers in between is
        // neither shown twice nor missed.
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client
            .build_transaction()
            .isolation_level(pg_pool::tokio_postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .await
            .map_err(backend)?;
        // Counted from here: a wait for a connection is the service's, not the search's. None: a limit too far
        // off to be an instant (no statement is then refused for time).
        let deadline = std::time::Instant::now().checked_add(limit);
        // Set once rather than before each statement (a round trip each): a statement started just before the
        // deadline may run up to the limit more. Milliseconds, at least one (0 turns the server's timeout off),
        // at most what the setting takes.
        let limit_ms = limit
            .as_millis()
            .clamp(1, u128::from(i32::MAX.unsigned_abs()));
        tx.batch_execute(&format!("SET LOCAL statement_timeout = {limit_ms}"))
            .await
            .map_err(backend)?;
        let mut search = search::Search::new(Engine::Postgres, query, self.common_matches);
        let mut answer = Answer::Start;
        // The tier tally's statement, bound and read a chunk at a time (a portal).
        let mut tally = None;
        let found = loop {
            let step = search.step(answer);
            if !matches!(step, Step::Done(_))
                && deadline.is_some_and(|deadline| std::time::Instant::now() >= deadline)
            {
                return Err(SearchError::TimedOut { limit });
            }
            answer = match step {
                Step::Count(sql, params) => {
                    let rows = rows_of(&tx, &sql, params).await.map_err(timed_out)?;
                    let count = rows.first().map(|row| row.try_get(0)).transpose();
                    Answer::Count(count.map_err(backend)?.unwrap_or(0))
                }
                Step::Tiers(sql, params, chunk) => {
                    let values = values_of(params);
                    let statement = tx
                        .prepare_cached(&sql)
                        .await
                        .map_err(|error| timed_out(backend(error)))?;
                    let portal = tx
                        .bind(&statement, &refs_of(&values))
                        .await
                        .map_err(|error| timed_out(backend(error)))?;
                    let tiers = tiers_of(&tx, &portal, chunk).await.map_err(timed_out)?;
                    tally = Some(portal);
                    Answer::Tiers(tiers)
                }
                Step::MoreTiers(chunk) => {
                    let portal = tally
                        .as_ref()
                        .ok_or_else(|| CacheError("no tier tally to read on".into()))?;
                    Answer::Tiers(tiers_of(&tx, portal, chunk).await.map_err(timed_out)?)
                }
                Step::Rows(sql, params) => {
                    let rows = rows_of(&tx, &sql, params).await.map_err(timed_out)?;
                    Answer::Rows(
                        rows.iter()
                            .map(|row| Ok((row.try_get(0)?, row.try_get(1)?, row.try_get(2)?)))
                            .collect::<Result<_, pg_pool::tokio_postgres::Error>>()
                            .map_err(backend)?,
                    )
                }
                Step::Done(found) => break found,
            };
        };
        drop(tally);
        tx.commit().await.map_err(backend)?;
        Ok(search::page_of(query, found).map_err(backend)?)
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
        let urls: Vec<&str> = urls.iter().map(PageUrl::as_str).collect();
        self.pool
            .execute(
                "INSERT INTO tenant_pages (tenant, url, first_at) SELECT $1, unnest($2::TEXT[]), $3
                 ON CONFLICT DO NOTHING",
                &[&tenant, &urls, &SystemTime::from(at)],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn remembered(
        &self,
        key: &str,
        now: jiff::Timestamp,
    ) -> Result<Option<String>, CacheError> {
        let row = self
            .pool
            .query_opt(
                "SELECT text FROM remembered WHERE key = $1 AND expires_at > $2",
                &[&key, &SystemTime::from(now)],
            )
            .await
            .map_err(backend)?;
        Ok(row.map(|row| row.get(0)))
    }

    async fn remember(
        &self,
        key: &str,
        text: &str,
        expires_at: jiff::Timestamp,
    ) -> Result<(), CacheError> {
        self.pool
            .execute(
                "WITH expired AS (DELETE FROM remembered WHERE expires_at <= now())
                 INSERT INTO remembered (key, text, expires_at) VALUES ($1, $2, $3)
                 ON CONFLICT (key) DO UPDATE SET text = excluded.text, expires_at = excluded.expires_at",
                &[&key, &text, &SystemTime::from(expires_at)],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn claim_fetch(&self, url: &PageUrl, until: jiff::Timestamp) -> Result<bool, CacheError> {
        let until = SystemTime::from(until);
        // A row comes back when the claim is new, or replaces one that lapsed.
        let claimed = self
            .pool
            .query_opt(
                "INSERT INTO fetch_claims (url, until) VALUES ($1, $2)
                 ON CONFLICT (url) DO UPDATE SET until = excluded.until WHERE fetch_claims.until < now()
                 RETURNING url",
                &[&url.as_str(), &until],
            )
            .await
            .map_err(backend)?;
        Ok(claimed.is_some())
    }

    async fn release_fetch(&self, url: &PageUrl) -> Result<(), CacheError> {
        self.pool
            .execute("DELETE FROM fetch_claims WHERE url = $1", &[&url.as_str()])
            .await
            .map_err(backend)?;
        Ok(())
    }
}

impl PgSnapshotStore {
    /// The pages whose `column` (`domain_key` or `name_key`) is `key`, newest first.
    async fn pages_keyed(
        &self,
        column: &'static str,
        key: &str,
        limit: u32,
    ) -> Result<Vec<PageUrl>, CacheError> {
        if key.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.pool.client().await.map_err(backend)?;
        let statement = client
            .prepare_cached(&format!(
                "SELECT url FROM snapshots WHERE {column} = $1 ORDER BY fetched_at DESC LIMIT $2"
            ))
            .await
            .map_err(backend)?;
        let rows = client
            .query(&statement, &[&key, &i64::from(limit)])
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|row| PageUrl::from_canonical(row.get(0)).map_err(backend))
            .collect()
    }

    /// Indexes for search the snapshots stored before search was (or whose row is missing), a thousand at a
    /// time. Servers starting together may index a page twice; the second write changes nothing.
    async fn index_unindexed_rows(&self) -> Result<(), CacheError> {
        let statement = index_statement(1, 2);
        loop {
            let client = self.pool.client().await.map_err(backend)?;
            let rows = client
                .query(
                    "SELECT s.url, s.record, s.fetched_at FROM snapshots s
                     WHERE NOT EXISTS (SELECT 1 FROM company_search c WHERE c.url = s.url) LIMIT 1000",
                    &[],
                )
                .await
                .map_err(backend)?;
            if rows.is_empty() {
                return Ok(());
            }
            for row in rows {
                let url: &str = row.get(0);
                let page = PageUrl::from_canonical(url).map_err(backend)?;
                // Records of every format read into the record type (older ones are converted so).
                let record: Option<CompanyRecord> =
                    serde_json::from_str(row.get::<_, &str>(1)).ok();
                let entry = IndexEntry::of(&page, record.as_ref(), time::from_system(row.get(2)));
                let words = (entry.lexemes(), entry.tier_words());
                let mut params: Vec<&(dyn pg_pool::tokio_postgres::types::ToSql + Sync)> =
                    vec![&url];
                params.extend(index_params(&entry, &words));
                client.execute(&statement, &params).await.map_err(backend)?;
            }
        }
    }

    /// Keys the rows stored before snapshots were keyed by domain and name, a thousand at a time.
    async fn key_unkeyed_rows(&self) -> Result<(), CacheError> {
        loop {
            let client = self.pool.client().await.map_err(backend)?;
            let rows = client
                .query(
                    "SELECT url, record FROM snapshots WHERE name_key IS NULL LIMIT 1000",
                    &[],
                )
                .await
                .map_err(backend)?;
            if rows.is_empty() {
                return Ok(());
            }
            for row in rows {
                // Records of every format read into the record type (older ones are converted so).
                let (domain, name) =
                    lookup_keys(serde_json::from_str(row.get::<_, &str>(1)).ok().as_ref());
                let url: &str = row.get(0);
                client
                    .execute(
                        "UPDATE snapshots SET domain_key = $2, name_key = $3 WHERE url = $1",
                        &[&url, &domain, &name],
                    )
                    .await
                    .map_err(backend)?;
            }
        }
    }
}
