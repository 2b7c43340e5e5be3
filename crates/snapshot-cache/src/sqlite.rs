use std::collections::HashMap;
use std::path::Path;

use page_url::PageUrl;
use sqlite_pool::{SqlitePool, rusqlite};

use crate::{CacheError, Snapshot, SnapshotStore};

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
"];

/// Snapshots in the service's SQLite file (tables `snapshots` and `snapshot_aliases`).
#[derive(Clone, Debug)]
pub struct SqliteSnapshotStore {
    pool: SqlitePool,
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
        Ok(Self { pool })
    }
}

#[async_trait::async_trait]
impl SnapshotStore for SqliteSnapshotStore {
    async fn fresh_many(
        &self,
        urls: &[PageUrl],
        fetched_since: jiff::Timestamp,
    ) -> Result<HashMap<PageUrl, Snapshot>, CacheError> {
        if urls.is_empty() {
            return Ok(HashMap::new());
        }
        let aliases: Vec<String> = urls.iter().map(|u| u.as_str().to_owned()).collect();
        let since_ms = fetched_since.as_millisecond();
        let rows = self
            .pool
            .run(move |conn| {
                let placeholders = vec!["?"; aliases.len()].join(",");
                let sql = format!(
                    "SELECT a.alias, s.url, s.record, s.fetched_at_ms
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
                        ))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .await
            .map_err(backend)?;
        let by_text: HashMap<&str, &PageUrl> = urls.iter().map(|u| (u.as_str(), u)).collect();
        let mut found = HashMap::with_capacity(rows.len());
        for (alias, url, record, fetched_at_ms) in rows {
            let Some(&key) = by_text.get(alias.as_str()) else {
                continue;
            };
            let snapshot = Snapshot {
                url: PageUrl::from_canonical(&url).map_err(backend)?,
                record: serde_json::from_str(&record).map_err(backend)?,
                fetched_at: jiff::Timestamp::from_millisecond(fetched_at_ms).map_err(backend)?,
            };
            found.insert(key.clone(), snapshot);
        }
        Ok(found)
    }

    async fn put(&self, snapshot: &Snapshot, aliases: &[PageUrl]) -> Result<(), CacheError> {
        let url = snapshot.url.as_str().to_owned();
        let record = serde_json::to_string(&snapshot.record).map_err(backend)?;
        let fetched_at_ms = snapshot.fetched_at.as_millisecond();
        let mut alias_texts: Vec<String> = aliases.iter().map(|a| a.as_str().to_owned()).collect();
        alias_texts.push(url.clone());
        self.pool
            .run(move |conn| {
                let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                // Keep the newer snapshot when two fetches of one page finish out of order.
                tx.execute(
                    "INSERT INTO snapshots (url, record, fetched_at_ms) VALUES (?1, ?2, ?3)
                     ON CONFLICT (url) DO UPDATE SET record = excluded.record, fetched_at_ms = excluded.fetched_at_ms
                     WHERE excluded.fetched_at_ms >= snapshots.fetched_at_ms",
                    rusqlite::params![url, record, fetched_at_ms],
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
            .map_err(backend)
    }
}
