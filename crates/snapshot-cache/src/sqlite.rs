use std::collections::HashMap;
use std::path::Path;

use page_url::PageUrl;
use sqlite_pool::{SqlitePool, rusqlite};

use company_model::{CompanyRecord, RECORD_FORMAT};

use crate::hot::HotSnapshots;
use crate::stored::{gunzip, stored_record};
use crate::{CacheError, Snapshot, SnapshotStore, StoredPage};

const MIGRATIONS: &[&str] = &["
    CREATE TABLE snapshots (
        url TEXT PRIMARY KEY,           -- canonical URL the page resolved to
        record TEXT NOT NULL,           -- the CompanyRecord as JSON
        fetched_at_ms INTEGER NOT NULL  -- Unix time in milliseconds
    );
    CREATE TABLE snapshot_aliases (
        alias TEXT PRIMARY KEY,         -- a normalized URL that led to the snapshot (its own URL included)
        url TEXT NOT NULL REFERENCES snapshots (url) ON DELETE CASCADE
    );
    CREATE INDEX snapshot_aliases_url ON snapshot_aliases (url);
", "
    ALTER TABLE snapshots ADD COLUMN page_gzip BLOB;  -- the fetched HTML, gzip-compressed, for reparsing
", "
    -- company_model::RECORD_FORMAT of `record`: rows in an older shape are converted when read.
    ALTER TABLE snapshots ADD COLUMN record_format INTEGER NOT NULL DEFAULT 1;
"];

/// Snapshots in the service's SQLite file (tables `snapshots` and `snapshot_aliases`).
///
/// Snapshots read or written through this value are reused from memory for [`crate::HOT_REUSE`] (up to 16 MB of
/// records), so a page asked for many times a second costs one database read every two seconds. Clones share
/// them.
#[derive(Clone, Debug)]
pub struct SqliteSnapshotStore {
    pool: SqlitePool,
    hot: std::sync::Arc<HotSnapshots>,
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
        Ok(Self {
            pool,
            hot: std::sync::Arc::default(),
        })
    }
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
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                // Keep the newer snapshot when two fetches of one page finish out of order.
                tx.execute(
                    "INSERT INTO snapshots (url, record, fetched_at_ms, page_gzip, record_format)
                     VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT (url) DO UPDATE SET record = excluded.record, fetched_at_ms = excluded.fetched_at_ms,
                                                     page_gzip = excluded.page_gzip,
                                                     record_format = excluded.record_format
                     WHERE excluded.fetched_at_ms >= snapshots.fetched_at_ms",
                    rusqlite::params![url, record, fetched_at_ms, page, RECORD_FORMAT],
                )?;
                for alias in &alias_texts {
                    tx.execute(
                        "INSERT INTO snapshot_aliases (alias, url) VALUES (?1, ?2)
                         ON CONFLICT (alias) DO UPDATE SET url = excluded.url",
                        rusqlite::params![alias, url],
                    )?;
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

    async fn replace_record(
        &self,
        url: &PageUrl,
        fetched_at: jiff::Timestamp,
        record: &CompanyRecord,
    ) -> Result<bool, CacheError> {
        let url = url.as_str().to_owned();
        let record = serde_json::to_string(record).map_err(backend)?;
        let fetched_at_ms = fetched_at.as_millisecond();
        let changed = self
            .pool
            .write(move |conn| {
                conn.execute(
                    "UPDATE snapshots SET record = ?1, record_format = ?4 WHERE url = ?2 AND fetched_at_ms = ?3",
                    rusqlite::params![record, url, fetched_at_ms, RECORD_FORMAT],
                )
            })
            .await
            .map_err(backend)?;
        // Rare (a reparse), so forgetting every kept snapshot is simpler than finding the ones of this page.
        self.hot.clear();
        Ok(changed > 0)
    }
}
