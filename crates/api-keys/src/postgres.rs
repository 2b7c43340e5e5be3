use std::time::SystemTime;
use store_base::time;

use company_model::AccountId;
use pg_pool::PgPool;
use pg_pool::tokio_postgres::Row;

use crate::{KeyError, KeyId, KeyRecord, KeyStore, NewKey};

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/postgres/0001_create_table_api_keys.sql"),
    include_str!("../migrations/postgres/0002_alter_table_api_keys.sql"),
];

const COLUMNS: &str =
    "id, account_id, name, prefix, suffix, digest, hash, created_at, last_used_at, revoked_at";

/// Keys in a PostgreSQL database (table `api_keys`), shared by every server on it.
#[derive(Clone, Debug)]
pub struct PgKeyStore {
    pool: PgPool,
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> KeyError {
    KeyError::Backend(pg_pool::boxed_error(error))
}

fn key_row(row: &Row) -> KeyRecord {
    KeyRecord {
        id: KeyId(row.get(0)),
        account: AccountId(row.get(1)),
        name: row.get(2),
        prefix: row.get(3),
        suffix: row.get(4),
        digest: row.get(5),
        legacy_hash: Some(row.get::<_, String>(6)).filter(|h| !h.is_empty()),
        created_at: time::from_system(row.get(7)),
        last_used_at: row.get::<_, Option<SystemTime>>(8).map(time::from_system),
        revoked_at: row.get::<_, Option<SystemTime>>(9).map(time::from_system),
    }
}

impl PgKeyStore {
    /// Uses a pool on the database (the service opens one and shares it between its stores) and migrates the
    /// table.
    ///
    /// # Errors
    /// [`KeyError::Backend`] when the table cannot be migrated.
    pub async fn with_pool(pool: PgPool) -> Result<Self, KeyError> {
        pool.migrate("api-keys", MIGRATIONS)
            .await
            .map_err(backend)?;
        Ok(Self { pool })
    }

    async fn query(
        &self,
        sql: &str,
        params: &[&(dyn pg_pool::tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Vec<KeyRecord>, KeyError> {
        let client = self.pool.client().await.map_err(backend)?;
        let statement = client.prepare_cached(sql).await.map_err(backend)?;
        let rows = client.query(&statement, params).await.map_err(backend)?;
        Ok(rows.iter().map(key_row).collect())
    }

    async fn execute(
        &self,
        sql: &str,
        params: &[&(dyn pg_pool::tokio_postgres::types::ToSql + Sync)],
    ) -> Result<u64, KeyError> {
        let client = self.pool.client().await.map_err(backend)?;
        let statement = client.prepare_cached(sql).await.map_err(backend)?;
        client.execute(&statement, params).await.map_err(backend)
    }
}

#[async_trait::async_trait]
impl KeyStore for PgKeyStore {
    async fn insert(&self, key: NewKey, at_most: u32) -> Result<Option<KeyRecord>, KeyError> {
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client.transaction().await.map_err(backend)?;
        // One creation per account at a time, so the count below is the count the insert adds to.
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('api_keys:' || $1::BIGINT::TEXT, 0))",
            &[&key.account.0],
        )
        .await
        .map_err(backend)?;
        let row = tx
            .query_opt(
                &format!(
                    "INSERT INTO api_keys (account_id, name, prefix, suffix, digest, hash)
                     SELECT $1, $2, $3, $4, $5, ''
                     WHERE (SELECT count(*) FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL) < $6
                     RETURNING {COLUMNS}"
                ),
                &[
                    &key.account.0,
                    &key.name,
                    &key.prefix,
                    &key.suffix,
                    &key.digest,
                    &i64::from(at_most),
                ],
            )
            .await
            .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(row.as_ref().map(key_row))
    }

    async fn by_digest(&self, digest: &str) -> Result<Option<KeyRecord>, KeyError> {
        let sql = format!("SELECT {COLUMNS} FROM api_keys WHERE digest = $1");
        Ok(self.query(&sql, &[&digest]).await?.pop())
    }

    async fn by_prefix(&self, prefix: &str) -> Result<Vec<KeyRecord>, KeyError> {
        let sql = format!("SELECT {COLUMNS} FROM api_keys WHERE prefix = $1");
        self.query(&sql, &[&prefix]).await
    }

    async fn by_id(&self, id: KeyId) -> Result<Option<KeyRecord>, KeyError> {
        let sql = format!("SELECT {COLUMNS} FROM api_keys WHERE id = $1");
        Ok(self.query(&sql, &[&id.0]).await?.pop())
    }

    async fn list(&self) -> Result<Vec<KeyRecord>, KeyError> {
        let sql = format!("SELECT {COLUMNS} FROM api_keys ORDER BY id");
        self.query(&sql, &[]).await
    }

    async fn revoke(&self, id: KeyId) -> Result<bool, KeyError> {
        let changed = self
            .execute(
                "UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL",
                &[&id.0],
            )
            .await?;
        Ok(changed > 0)
    }

    async fn touch(&self, id: KeyId, at: jiff::Timestamp) -> Result<(), KeyError> {
        let at = SystemTime::from(at);
        self.execute(
            "UPDATE api_keys SET last_used_at = $1 WHERE id = $2",
            &[&at, &id.0],
        )
        .await
        .map(|_| ())
    }

    async fn set_digest(&self, id: KeyId, digest: &str) -> Result<(), KeyError> {
        self.execute(
            "UPDATE api_keys SET digest = $1, hash = '' WHERE id = $2",
            &[&digest, &id.0],
        )
        .await
        .map(|_| ())
    }

    async fn digest_key(&self, proposed: &str) -> Result<String, KeyError> {
        // Two servers starting at once: one insert wins, and both read the winner's key.
        self.execute(
            "INSERT INTO api_key_settings (name, value) VALUES ('digest_key', $1)
             ON CONFLICT (name) DO NOTHING",
            &[&proposed],
        )
        .await?;
        let client = self.pool.client().await.map_err(backend)?;
        let row = client
            .query_one(
                "SELECT value FROM api_key_settings WHERE name = 'digest_key'",
                &[],
            )
            .await
            .map_err(backend)?;
        Ok(row.get(0))
    }
}
