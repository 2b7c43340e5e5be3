use std::path::Path;
use std::time::Duration;

use company_model::Tenant;
use sqlite_pool::SqlitePool;
use sqlite_pool::rusqlite::{self, OptionalExtension, params};

use crate::{
    Begin, IdempotencyError, IdempotencyStore, KEEP_FOR, StoredAnswer, headers_from_text,
    headers_text,
};

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/sqlite/0001_create_table_idempotency_keys.sql"),
    include_str!("../migrations/sqlite/0002_create_table_idempotency_usage.sql"),
];

/// Idempotency records in the service's SQLite file (table `idempotency_keys`).
#[derive(Clone, Debug)]
pub struct SqliteIdempotencyStore {
    pool: SqlitePool,
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> IdempotencyError {
    IdempotencyError(Box::new(error))
}

fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

impl SqliteIdempotencyStore {
    /// Opens the store in the SQLite file at `path` (created if missing) and migrates its table.
    ///
    /// # Errors
    /// [`IdempotencyError`] when the file cannot be opened or migrated.
    pub async fn open(path: &Path) -> Result<Self, IdempotencyError> {
        Self::with_pool(SqlitePool::open(path).await.map_err(backend)?).await
    }

    /// Uses an already open pool (the service opens one per file and shares it).
    ///
    /// # Errors
    /// [`IdempotencyError`] when the table cannot be migrated.
    pub async fn with_pool(pool: SqlitePool) -> Result<Self, IdempotencyError> {
        pool.migrate("idempotency", MIGRATIONS)
            .await
            .map_err(backend)?;
        Ok(Self { pool })
    }
}

type Row = (
    String,
    i64,
    i64,
    Option<u16>,
    Option<String>,
    Option<Vec<u8>>,
);

#[async_trait::async_trait]
impl IdempotencyStore for SqliteIdempotencyStore {
    async fn begin(
        &self,
        tenant: Tenant,
        key: &str,
        fingerprint: &str,
        now: jiff::Timestamp,
        lease: Duration,
    ) -> Result<Begin, IdempotencyError> {
        let (key, fingerprint) = (key.to_owned(), fingerprint.to_owned());
        let now = now.as_millisecond();
        self.pool
            .write(move |conn| {
                let tx =
                    conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
                let found: Option<Row> = tx
                    .query_row(
                        "SELECT fingerprint, created_at_ms, lease_until_ms, status, headers, body
                         FROM idempotency_keys WHERE account_id = ?1 AND key = ?2",
                        params![tenant.key(), key],
                        |r| {
                            Ok((
                                r.get(0)?,
                                r.get(1)?,
                                r.get(2)?,
                                r.get(3)?,
                                r.get(4)?,
                                r.get(5)?,
                            ))
                        },
                    )
                    .optional()?;
                let begin = match found {
                    Some((_, created, _, _, _, _)) if created < now - millis(KEEP_FOR) => None,
                    Some((_, _, lease_until, None, _, _)) if lease_until <= now => None,
                    Some((stored, ..)) if stored != fingerprint => Some(Begin::Mismatch),
                    Some((_, _, _, Some(status), headers, body)) => {
                        Some(Begin::Done(StoredAnswer {
                            status,
                            headers: headers
                                .as_deref()
                                .map(headers_from_text)
                                .unwrap_or_default(),
                            body: body.unwrap_or_default(),
                        }))
                    }
                    Some(_) => Some(Begin::Running),
                    None => None,
                };
                let begin = if let Some(begin) = begin {
                    begin
                } else {
                    tx.execute(
                        "INSERT OR REPLACE INTO idempotency_keys
                             (account_id, key, fingerprint, created_at_ms, lease_until_ms)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                        params![tenant.key(), key, fingerprint, now, now + millis(lease)],
                    )?;
                    Begin::Started
                };
                tx.commit()?;
                Ok(begin)
            })
            .await
            .map_err(backend)
    }

    async fn finish(
        &self,
        tenant: Tenant,
        key: &str,
        answer: &StoredAnswer,
    ) -> Result<(), IdempotencyError> {
        let key = key.to_owned();
        let (status, headers, body) = (
            answer.status,
            headers_text(&answer.headers),
            answer.body.clone(),
        );
        let bytes = i64::try_from(body.len()).unwrap_or(i64::MAX);
        self.pool
            .write(move |conn| {
                let tx = conn.transaction()?;
                let stored = tx.execute(
                    "UPDATE idempotency_keys SET status = ?3, headers = ?4, body = ?5
                     WHERE account_id = ?1 AND key = ?2",
                    params![tenant.key(), key, status, headers, body],
                )?;
                if stored > 0 {
                    tx.execute(
                        "INSERT INTO idempotency_usage (account_id, bytes) VALUES (?1, ?2)
                         ON CONFLICT (account_id) DO UPDATE SET bytes = bytes + excluded.bytes",
                        params![tenant.key(), bytes],
                    )?;
                }
                tx.commit()
            })
            .await
            .map_err(backend)
    }

    async fn stored_bytes(&self, tenant: Tenant) -> Result<u64, IdempotencyError> {
        self.pool
            .run(move |conn| {
                conn.query_row(
                    "SELECT bytes FROM idempotency_usage WHERE account_id = ?1",
                    [tenant.key()],
                    |row| row.get::<_, i64>(0),
                )
                .optional()
            })
            .await
            .map(|bytes| u64::try_from(bytes.unwrap_or(0)).unwrap_or(0))
            .map_err(backend)
    }

    async fn renew(
        &self,
        tenant: Tenant,
        key: &str,
        now: jiff::Timestamp,
        lease: Duration,
    ) -> Result<bool, IdempotencyError> {
        let key = key.to_owned();
        let until = now.as_millisecond() + millis(lease);
        self.pool
            .write(move |conn| {
                conn.execute(
                    "UPDATE idempotency_keys SET lease_until_ms = max(lease_until_ms, ?3)
                     WHERE account_id = ?1 AND key = ?2 AND status IS NULL",
                    params![tenant.key(), key, until],
                )
            })
            .await
            .map(|updated| updated > 0)
            .map_err(backend)
    }

    async fn abandon(&self, tenant: Tenant, key: &str) -> Result<(), IdempotencyError> {
        let key = key.to_owned();
        self.pool
            .write(move |conn| {
                conn.execute(
                    "DELETE FROM idempotency_keys WHERE account_id = ?1 AND key = ?2 AND status IS NULL",
                    params![tenant.key(), key],
                )
            })
            .await
            .map(|_| ())
            .map_err(backend)
    }

    async fn forget_before(&self, cutoff: jiff::Timestamp) -> Result<u64, IdempotencyError> {
        let cutoff = cutoff.as_millisecond();
        self.pool
            .write(move |conn| {
                let tx = conn.transaction()?;
                let forgotten = tx.execute(
                    "DELETE FROM idempotency_keys WHERE created_at_ms < ?1",
                    [cutoff],
                )?;
                tx.execute("DELETE FROM idempotency_usage", [])?;
                tx.execute(
                    "INSERT INTO idempotency_usage (account_id, bytes)
                     SELECT account_id, sum(length(body)) FROM idempotency_keys
                     WHERE body IS NOT NULL GROUP BY account_id",
                    [],
                )?;
                tx.commit()?;
                Ok(forgotten as u64)
            })
            .await
            .map_err(backend)
    }
}
