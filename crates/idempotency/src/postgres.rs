use std::time::{Duration, SystemTime};

use company_model::Tenant;
use pg_pool::PgPool;

use crate::{
    Begin, IdempotencyError, IdempotencyStore, KEEP_FOR, StoredAnswer, headers_from_text,
    headers_text,
};

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/postgres/0001_create_table_idempotency_keys.sql"),
    include_str!("../migrations/postgres/0002_create_table_idempotency_usage.sql"),
];

/// Idempotency records in a PostgreSQL database (table `idempotency_keys`), shared by every server on it.
#[derive(Clone, Debug)]
pub struct PgIdempotencyStore {
    pool: PgPool,
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> IdempotencyError {
    IdempotencyError(pg_pool::boxed_error(error))
}

impl PgIdempotencyStore {
    /// Uses a pool on the database (the service opens one and shares it between its stores) and migrates the
    /// table.
    ///
    /// # Errors
    /// [`IdempotencyError`] when the table cannot be migrated.
    pub async fn with_pool(pool: PgPool) -> Result<Self, IdempotencyError> {
        pool.migrate("idempotency", MIGRATIONS)
            .await
            .map_err(backend)?;
        Ok(Self { pool })
    }
}

#[async_trait::async_trait]
impl IdempotencyStore for PgIdempotencyStore {
    async fn begin(
        &self,
        tenant: Tenant,
        key: &str,
        fingerprint: &str,
        now: jiff::Timestamp,
        lease: Duration,
    ) -> Result<Begin, IdempotencyError> {
        let now = SystemTime::from(now);
        let lease_until = now + lease;
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client.transaction().await.map_err(backend)?;
        // Of two servers inserting at once, one inserts and the other waits for it, then reads its row.
        let inserted = tx
            .execute(
                "INSERT INTO idempotency_keys (account_id, key, fingerprint, created_at, lease_until)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                &[&tenant.key(), &key, &fingerprint, &now, &lease_until],
            )
            .await
            .map_err(backend)?;
        let begin = if inserted == 1 {
            Begin::Started
        } else {
            let row = tx
                .query_one(
                    "SELECT fingerprint, created_at, lease_until, status, headers, body
                     FROM idempotency_keys WHERE account_id = $1 AND key = $2 FOR UPDATE",
                    &[&tenant.key(), &key],
                )
                .await
                .map_err(backend)?;
            let (stored, created, lapses): (String, SystemTime, SystemTime) =
                (row.get(0), row.get(1), row.get(2));
            let status: Option<i32> = row.get(3);
            let expired = created + KEEP_FOR < now;
            if expired || (status.is_none() && lapses <= now) {
                tx.execute(
                    "UPDATE idempotency_keys SET fingerprint = $3, created_at = $4, lease_until = $5,
                         status = NULL, headers = NULL, body = NULL
                     WHERE account_id = $1 AND key = $2",
                    &[&tenant.key(), &key, &fingerprint, &now, &lease_until],
                )
                .await
                .map_err(backend)?;
                Begin::Started
            } else if stored != fingerprint {
                Begin::Mismatch
            } else if let Some(status) = status {
                Begin::Done(StoredAnswer {
                    status: u16::try_from(status).unwrap_or(500),
                    headers: row
                        .get::<_, Option<String>>(4)
                        .as_deref()
                        .map(headers_from_text)
                        .unwrap_or_default(),
                    body: row.get::<_, Option<Vec<u8>>>(5).unwrap_or_default(),
                })
            } else {
                Begin::Running
            }
        };
        tx.commit().await.map_err(backend)?;
        Ok(begin)
    }

    async fn finish(
        &self,
        tenant: Tenant,
        key: &str,
        answer: &StoredAnswer,
    ) -> Result<(), IdempotencyError> {
        let client = self.pool.client().await.map_err(backend)?;
        let bytes = i64::try_from(answer.body.len()).unwrap_or(i64::MAX);
        // One statement: the answer stored and the account's bytes counted together.
        client
            .execute(
                "WITH stored AS (
                     UPDATE idempotency_keys SET status = $3, headers = $4, body = $5
                     WHERE account_id = $1 AND key = $2 RETURNING account_id)
                 INSERT INTO idempotency_usage (account_id, bytes)
                 SELECT account_id, $6 FROM stored
                 ON CONFLICT (account_id) DO UPDATE SET bytes = idempotency_usage.bytes + excluded.bytes",
                &[
                    &tenant.key(),
                    &key,
                    &i32::from(answer.status),
                    &headers_text(&answer.headers),
                    &answer.body,
                    &bytes,
                ],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn stored_bytes(&self, tenant: Tenant) -> Result<u64, IdempotencyError> {
        let client = self.pool.client().await.map_err(backend)?;
        let row = client
            .query_opt(
                "SELECT bytes FROM idempotency_usage WHERE account_id = $1",
                &[&tenant.key()],
            )
            .await
            .map_err(backend)?;
        Ok(row.map_or(0, |row| u64::try_from(row.get::<_, i64>(0)).unwrap_or(0)))
    }

    async fn renew(
        &self,
        tenant: Tenant,
        key: &str,
        now: jiff::Timestamp,
        lease: Duration,
    ) -> Result<bool, IdempotencyError> {
        let until = SystemTime::from(now) + lease;
        let client = self.pool.client().await.map_err(backend)?;
        let updated = client
            .execute(
                "UPDATE idempotency_keys SET lease_until = greatest(lease_until, $3)
                 WHERE account_id = $1 AND key = $2 AND status IS NULL",
                &[&tenant.key(), &key, &until],
            )
            .await
            .map_err(backend)?;
        Ok(updated > 0)
    }

    async fn abandon(&self, tenant: Tenant, key: &str) -> Result<(), IdempotencyError> {
        let client = self.pool.client().await.map_err(backend)?;
        client
            .execute(
                "DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND status IS NULL",
                &[&tenant.key(), &key],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn forget_before(&self, cutoff: jiff::Timestamp) -> Result<u64, IdempotencyError> {
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client.transaction().await.map_err(backend)?;
        let forgotten = tx
            .execute(
                "DELETE FROM idempotency_keys WHERE created_at < $1",
                &[&SystemTime::from(cutoff)],
            )
            .await
            .map_err(backend)?;
        // Recounted from what is kept (a record taken over by a new request drops its old answer's bytes).
        tx.batch_execute(
            "DELETE FROM idempotency_usage;
             INSERT INTO idempotency_usage (account_id, bytes)
             SELECT account_id, sum(octet_length(body)) FROM idempotency_keys
             WHERE body IS NOT NULL GROUP BY account_id;",
        )
        .await
        .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(forgotten)
    }
}
