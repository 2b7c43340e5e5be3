use std::path::Path;
use store_base::time;

use company_model::AccountId;
use sqlite_pool::SqlitePool;
use sqlite_pool::rusqlite::{self, OptionalExtension, params};

use crate::{KeyError, KeyId, KeyRecord, KeyStore, NewKey};

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/sqlite/0001_create_table_api_keys.sql"),
    include_str!("../migrations/sqlite/0002_alter_table_api_keys.sql"),
];

const COLUMNS: &str = "id, account_id, name, prefix, suffix, digest, hash, created_at_ms, last_used_at_ms, \
     revoked_at_ms";

/// Keys in the service's SQLite file (table `api_keys`).
#[derive(Clone, Debug)]
pub struct SqliteKeyStore {
    pool: SqlitePool,
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> KeyError {
    KeyError::Backend(Box::new(error))
}

fn key_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<KeyRecord> {
    Ok(KeyRecord {
        id: KeyId(row.get(0)?),
        account: AccountId(row.get(1)?),
        name: row.get(2)?,
        prefix: row.get(3)?,
        suffix: row.get(4)?,
        digest: row.get(5)?,
        legacy_hash: Some(row.get::<_, String>(6)?).filter(|h| !h.is_empty()),
        created_at: time::from_millis(row.get(7)?),
        last_used_at: row.get::<_, Option<i64>>(8)?.map(time::from_millis),
        revoked_at: row.get::<_, Option<i64>>(9)?.map(time::from_millis),
    })
}

impl SqliteKeyStore {
    /// Opens the store in the SQLite file at `path` (created if missing) and migrates its table.
    ///
    /// # Errors
    /// [`KeyError::Backend`] when the file cannot be opened or migrated.
    pub async fn open(path: &Path) -> Result<Self, KeyError> {
        Self::with_pool(SqlitePool::open(path).await.map_err(backend)?).await
    }

    /// Uses an already open pool (the service opens one per file and shares it).
    ///
    /// # Errors
    /// [`KeyError::Backend`] when the table cannot be migrated.
    pub async fn with_pool(pool: SqlitePool) -> Result<Self, KeyError> {
        pool.migrate("api-keys", MIGRATIONS)
            .await
            .map_err(backend)?;
        Ok(Self { pool })
    }
}

#[async_trait::async_trait]
impl KeyStore for SqliteKeyStore {
    async fn insert(&self, key: NewKey, at_most: u32) -> Result<Option<KeyRecord>, KeyError> {
        self.pool
            .write(move |conn| {
                conn.query_row(
                    &format!(
                        "INSERT INTO api_keys (account_id, name, prefix, suffix, digest, hash, created_at_ms)
                         SELECT ?1, ?2, ?3, ?4, ?5, '', ?6
                         WHERE (SELECT count(*) FROM api_keys WHERE account_id = ?1 AND revoked_at_ms IS NULL) < ?7
                         RETURNING {COLUMNS}"
                    ),
                    params![key.account.0, key.name, key.prefix, key.suffix, key.digest, jiff::Timestamp::now().as_millisecond(), at_most],
                    key_row,
                )
                .optional()
            })
            .await
            .map_err(backend)
    }

    async fn by_digest(&self, digest: &str) -> Result<Option<KeyRecord>, KeyError> {
        let digest = digest.to_owned();
        self.pool
            .run(move |conn| {
                conn.prepare_cached(&format!("SELECT {COLUMNS} FROM api_keys WHERE digest = ?1"))?
                    .query_row([digest], key_row)
                    .optional()
            })
            .await
            .map_err(backend)
    }

    async fn by_prefix(&self, prefix: &str) -> Result<Vec<KeyRecord>, KeyError> {
        let prefix = prefix.to_owned();
        self.pool
            .run(move |conn| {
                conn.prepare_cached(&format!("SELECT {COLUMNS} FROM api_keys WHERE prefix = ?1"))?
                    .query_map([prefix], key_row)?
                    .collect()
            })
            .await
            .map_err(backend)
    }

    async fn by_id(&self, id: KeyId) -> Result<Option<KeyRecord>, KeyError> {
        self.pool
            .run(move |conn| {
                conn.prepare_cached(&format!("SELECT {COLUMNS} FROM api_keys WHERE id = ?1"))?
                    .query_row([id.0], key_row)
                    .optional()
            })
            .await
            .map_err(backend)
    }

    async fn list(&self) -> Result<Vec<KeyRecord>, KeyError> {
        self.pool
            .run(|conn| {
                conn.prepare(&format!("SELECT {COLUMNS} FROM api_keys ORDER BY id"))?
                    .query_map([], key_row)?
                    .collect()
            })
            .await
            .map_err(backend)
    }

    async fn revoke(&self, id: KeyId) -> Result<bool, KeyError> {
        let changed = self
            .pool
            .write(move |conn| {
                conn.execute(
                    "UPDATE api_keys SET revoked_at_ms = ?1 WHERE id = ?2 AND revoked_at_ms IS NULL",
                    params![jiff::Timestamp::now().as_millisecond(), id.0],
                )
            })
            .await
            .map_err(backend)?;
        Ok(changed > 0)
    }

    async fn touch(&self, id: KeyId, at: jiff::Timestamp) -> Result<(), KeyError> {
        self.pool
            .write(move |conn| {
                conn.execute(
                    "UPDATE api_keys SET last_used_at_ms = ?1 WHERE id = ?2",
                    params![at.as_millisecond(), id.0],
                )
            })
            .await
            .map(|_| ())
            .map_err(backend)
    }

    async fn set_digest(&self, id: KeyId, digest: &str) -> Result<(), KeyError> {
        let digest = digest.to_owned();
        self.pool
            .write(move |conn| {
                conn.execute(
                    "UPDATE api_keys SET digest = ?1, hash = '' WHERE id = ?2",
                    params![digest, id.0],
                )
            })
            .await
            .map(|_| ())
            .map_err(backend)
    }

    async fn digest_key(&self, proposed: &str) -> Result<String, KeyError> {
        let proposed = proposed.to_owned();
        self.pool
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO api_key_settings (name, value) VALUES ('digest_key', ?1)
                     ON CONFLICT (name) DO NOTHING",
                    [proposed],
                )?;
                conn.query_row(
                    "SELECT value FROM api_key_settings WHERE name = 'digest_key'",
                    [],
                    |row| row.get(0),
                )
            })
            .await
            .map_err(backend)
    }
}
