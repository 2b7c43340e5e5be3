use std::time::Duration;

use company_model::{AccountId, RecordJson};
use pg_pool::PgPool;
use pg_pool::tokio_postgres::Row;

use crate::{
    Delivered, Delivery, DueRefresh, NewWatch, Refreshed, WATCH_COLUMNS, Watch, WatchId, WatchRow,
    WatchStore, WatchStoreError, at, delivery_columns, fields_column, millis,
};

const MIGRATIONS: &[&str] = &["
    CREATE TABLE watches (
        id BIGSERIAL PRIMARY KEY,
        account_id BIGINT NOT NULL,
        url TEXT NOT NULL,                  -- the normalized page URL
        every_hours BIGINT NOT NULL,
        webhook_url TEXT NOT NULL,
        fields TEXT NOT NULL,               -- JSON array of record members
        baseline TEXT,                      -- the record the next refresh compares with
        created_at_ms BIGINT NOT NULL,
        next_check_ms BIGINT NOT NULL,      -- due then; also the token of a claim on that refresh
        claim_until_ms BIGINT,              -- a refresh claimed until then
        last_checked_ms BIGINT,
        last_check_error TEXT,
        last_change_ms BIGINT,
        last_delivery_ms BIGINT,
        last_delivery_status BIGINT,
        last_delivery_error TEXT,
        disabled_ms BIGINT,
        disabled_reason TEXT
    );
    CREATE INDEX watches_account ON watches (account_id, id);
    CREATE INDEX watches_due ON watches (next_check_ms) WHERE disabled_ms IS NULL;
    CREATE TABLE watch_events (
        id TEXT PRIMARY KEY,                -- evt_<watch>_<due ms>: one event per refresh
        watch_id BIGINT NOT NULL,
        account_id BIGINT NOT NULL,
        body TEXT NOT NULL,
        created_at_ms BIGINT NOT NULL,
        attempts BIGINT NOT NULL DEFAULT 0, -- also the token of a claim on the latest attempt
        next_attempt_ms BIGINT,             -- NULL once delivered or given up
        claim_until_ms BIGINT,
        delivered_ms BIGINT,
        last_status BIGINT,
        last_error TEXT
    );
    CREATE INDEX watch_events_due ON watch_events (next_attempt_ms) WHERE next_attempt_ms IS NOT NULL;
    CREATE INDEX watch_events_watch ON watch_events (watch_id);
    CREATE TABLE webhook_secrets (
        account_id BIGINT PRIMARY KEY,
        secret TEXT NOT NULL,
        created_at_ms BIGINT NOT NULL
    );
"];

/// Watches in a PostgreSQL database (tables `watches`, `watch_events`, `webhook_secrets`), shared by every server
/// on it: due refreshes and deliveries are claimed with `FOR UPDATE SKIP LOCKED`, so each is one server's.
#[derive(Clone, Debug)]
pub struct PgWatchStore {
    pool: PgPool,
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> WatchStoreError {
    WatchStoreError(pg_pool::boxed_error(error))
}

fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX)
}

fn watch_row(row: &Row) -> WatchRow {
    WatchRow {
        id: row.get(0),
        account: row.get(1),
        url: row.get(2),
        every_hours: row.get(3),
        webhook_url: row.get(4),
        fields: row.get(5),
        created_ms: row.get(6),
        next_check_ms: row.get(7),
        last_checked_ms: row.get(8),
        last_check_error: row.get(9),
        last_change_ms: row.get(10),
        last_delivery_ms: row.get(11),
        last_delivery_status: row.get(12),
        last_delivery_error: row.get(13),
        disabled_ms: row.get(14),
        disabled_reason: row.get(15),
    }
}

impl PgWatchStore {
    /// Uses a pool on the database (the service opens one and shares it between its stores) and migrates the
    /// tables.
    ///
    /// # Errors
    /// [`WatchStoreError`] when the tables cannot be migrated.
    pub async fn with_pool(pool: PgPool) -> Result<Self, WatchStoreError> {
        pool.migrate("watch-store", MIGRATIONS)
            .await
            .map_err(backend)?;
        Ok(Self { pool })
    }
}

#[async_trait::async_trait]
impl WatchStore for PgWatchStore {
    async fn create(
        &self,
        watches: &[NewWatch],
        now: jiff::Timestamp,
    ) -> Result<Vec<Watch>, WatchStoreError> {
        let now_ms = millis(now);
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client.transaction().await.map_err(backend)?;
        let statement = tx
            .prepare_cached(&format!(
                "INSERT INTO watches (account_id, url, every_hours, webhook_url, fields, baseline, created_at_ms,
                                      next_check_ms)
                 VALUES ($1, $2, $3::BIGINT, $4, $5, $6, $7::BIGINT, $7::BIGINT + $3::BIGINT * 3600000)
                 RETURNING {WATCH_COLUMNS}"
            ))
            .await
            .map_err(backend)?;
        let mut created = Vec::with_capacity(watches.len());
        for watch in watches {
            let row = tx
                .query_one(
                    &statement,
                    &[
                        &watch.account.0,
                        &watch.url.as_str(),
                        &i64::from(watch.every_hours),
                        &watch.webhook_url,
                        &fields_column(&watch.fields),
                        &watch.baseline.as_ref().map(RecordJson::as_str),
                        &now_ms,
                    ],
                )
                .await
                .map_err(backend)?;
            created.push(watch_row(&row).into_watch()?);
        }
        tx.commit().await.map_err(backend)?;
        Ok(created)
    }

    async fn list(
        &self,
        account: AccountId,
        after: Option<WatchId>,
        limit: u32,
    ) -> Result<Vec<Watch>, WatchStoreError> {
        let rows = self
            .pool
            .query(
                &format!(
                    "SELECT {WATCH_COLUMNS} FROM watches WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3"
                ),
                &[&account.0, &after.map_or(0, |a| a.0), &i64::from(limit)],
            )
            .await
            .map_err(backend)?;
        rows.iter().map(|row| watch_row(row).into_watch()).collect()
    }

    async fn get(&self, account: AccountId, id: WatchId) -> Result<Option<Watch>, WatchStoreError> {
        self.pool
            .query_opt(
                &format!("SELECT {WATCH_COLUMNS} FROM watches WHERE account_id = $1 AND id = $2"),
                &[&account.0, &id.0],
            )
            .await
            .map_err(backend)?
            .map(|row| watch_row(&row).into_watch())
            .transpose()
    }

    async fn delete(&self, account: AccountId, id: WatchId) -> Result<bool, WatchStoreError> {
        let deleted = self
            .pool
            .execute(
                "WITH gone AS (DELETE FROM watches WHERE account_id = $1 AND id = $2 RETURNING id),
                      events AS (DELETE FROM watch_events WHERE watch_id IN (SELECT id FROM gone))
                 SELECT 1 FROM gone",
                &[&account.0, &id.0],
            )
            .await
            .map_err(backend)?;
        Ok(deleted > 0)
    }

    async fn claim_due(
        &self,
        now: jiff::Timestamp,
        lease: Duration,
        limit: u32,
    ) -> Result<Vec<DueRefresh>, WatchStoreError> {
        let (now_ms, until_ms) = (millis(now), millis(now).saturating_add(lease_ms(lease)));
        let rows = self
            .pool
            .query(
                &format!(
                    "UPDATE watches SET claim_until_ms = $2
                     WHERE id IN (SELECT id FROM watches
                                  WHERE disabled_ms IS NULL AND next_check_ms <= $1
                                    AND coalesce(claim_until_ms, 0) <= $1
                                  ORDER BY next_check_ms LIMIT $3 FOR UPDATE SKIP LOCKED)
                     RETURNING {WATCH_COLUMNS}, baseline"
                ),
                &[&now_ms, &until_ms, &i64::from(limit)],
            )
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|row| {
                let baseline: Option<String> = row.get(16);
                let watch = watch_row(row);
                let claim = watch.next_check_ms;
                Ok(DueRefresh {
                    watch: watch.into_watch()?,
                    baseline: baseline.and_then(|text| RecordJson::from_stored(text).ok()),
                    claim,
                })
            })
            .collect()
    }

    async fn finish_refresh(
        &self,
        watch: WatchId,
        claim: i64,
        now: jiff::Timestamp,
        next_check_at: jiff::Timestamp,
        refreshed: Refreshed,
    ) -> Result<bool, WatchStoreError> {
        let (now_ms, next_ms) = (millis(now), millis(next_check_at));
        let (record, error, event) = match refreshed {
            Refreshed::Fetched { record, event } => (Some(record), None, event),
            Refreshed::Failed { error } => (None, Some(error), None),
        };
        let (event_id, body) = event.unzip();
        let changed = event_id.is_some();
        // One statement: the watch moves on only if the claim is still this caller's, and the event is queued
        // only then.
        let row = self
            .pool
            .query_opt(
                "WITH moved AS (
                     UPDATE watches SET next_check_ms = $3, claim_until_ms = NULL, last_checked_ms = $4,
                         last_check_error = $5, baseline = coalesce($6, baseline),
                         last_change_ms = CASE WHEN $7 THEN $4 ELSE last_change_ms END
                     WHERE id = $1 AND next_check_ms = $2
                     RETURNING id, account_id
                 ), queued AS (
                     INSERT INTO watch_events (id, watch_id, account_id, body, created_at_ms, next_attempt_ms)
                     SELECT $8, id, account_id, $9, $4, $4 FROM moved WHERE $8::TEXT IS NOT NULL
                     ON CONFLICT DO NOTHING
                 )
                 SELECT id FROM moved",
                &[
                    &watch.0,
                    &claim,
                    &next_ms,
                    &now_ms,
                    &error,
                    &record.as_ref().map(RecordJson::as_str),
                    &changed,
                    &event_id,
                    &body,
                ],
            )
            .await
            .map_err(backend)?;
        Ok(row.is_some())
    }

    async fn claim_deliveries(
        &self,
        now: jiff::Timestamp,
        lease: Duration,
        limit: u32,
    ) -> Result<Vec<Delivery>, WatchStoreError> {
        let (now_ms, until_ms) = (millis(now), millis(now).saturating_add(lease_ms(lease)));
        let rows = self
            .pool
            .query(
                "WITH claimed AS (
                     UPDATE watch_events SET claim_until_ms = $2, attempts = attempts + 1
                     WHERE id IN (SELECT id FROM watch_events
                                  WHERE next_attempt_ms <= $1 AND coalesce(claim_until_ms, 0) <= $1
                                  ORDER BY next_attempt_ms LIMIT $3 FOR UPDATE SKIP LOCKED)
                     RETURNING id, watch_id, account_id, body, created_at_ms, attempts
                 )
                 SELECT c.id, c.watch_id, c.account_id, c.body, c.created_at_ms, c.attempts, w.webhook_url
                 FROM claimed c JOIN watches w ON w.id = c.watch_id",
                &[&now_ms, &until_ms, &i64::from(limit)],
            )
            .await
            .map_err(backend)?;
        Ok(rows
            .iter()
            .map(|row| {
                let attempts: i64 = row.get(5);
                Delivery {
                    event_id: row.get(0),
                    watch_id: WatchId(row.get(1)),
                    account: AccountId(row.get(2)),
                    body: row.get(3),
                    created_at: at(row.get(4)),
                    attempts: u32::try_from(attempts - 1).unwrap_or(0),
                    claim: attempts,
                    webhook_url: row.get(6),
                }
            })
            .collect())
    }

    async fn finish_delivery(
        &self,
        event_id: &str,
        claim: i64,
        now: jiff::Timestamp,
        delivered: Delivered,
    ) -> Result<bool, WatchStoreError> {
        let now_ms = millis(now);
        let (status, error) = delivery_columns(&delivered);
        let (next_attempt, delivered_ms, gave_up) = match &delivered {
            Delivered::Yes { .. } => (None, Some(now_ms), false),
            Delivered::Retry { retry_at, .. } => (Some(millis(*retry_at)), None, false),
            Delivered::GaveUp { .. } => (None, None, true),
        };
        let reason = gave_up.then(|| {
            format!(
                "its webhook failed for the whole retry window: {}",
                error.as_deref().unwrap_or("no 2xx answer")
            )
        });
        let row = self
            .pool
            .query_opt(
                "WITH attempt AS (
                     UPDATE watch_events SET next_attempt_ms = $3, claim_until_ms = NULL, delivered_ms = $4,
                         last_status = $5, last_error = $6
                     WHERE id = $1 AND attempts = $2 AND claim_until_ms IS NOT NULL
                     RETURNING watch_id
                 ), watch AS (
                     UPDATE watches SET last_delivery_ms = $7, last_delivery_status = $5, last_delivery_error = $6,
                         disabled_ms = CASE WHEN $8 THEN $7 ELSE disabled_ms END,
                         disabled_reason = CASE WHEN $8 THEN $9 ELSE disabled_reason END
                     WHERE id IN (SELECT watch_id FROM attempt)
                 )
                 SELECT watch_id FROM attempt",
                &[
                    &event_id,
                    &claim,
                    &next_attempt,
                    &delivered_ms,
                    &status,
                    &error,
                    &now_ms,
                    &gave_up,
                    &reason,
                ],
            )
            .await
            .map_err(backend)?;
        Ok(row.is_some())
    }

    async fn secret(&self, account: AccountId) -> Result<Option<String>, WatchStoreError> {
        Ok(self
            .pool
            .query_opt(
                "SELECT secret FROM webhook_secrets WHERE account_id = $1",
                &[&account.0],
            )
            .await
            .map_err(backend)?
            .map(|row| row.get(0)))
    }

    async fn set_secret(
        &self,
        account: AccountId,
        secret: &str,
        replace: bool,
    ) -> Result<String, WatchStoreError> {
        let now_ms = millis(jiff::Timestamp::now());
        // Either way one statement returns the secret in force (an unchanged row is read by the second branch).
        let row = self
            .pool
            .query_one(
                "WITH put AS (
                     INSERT INTO webhook_secrets (account_id, secret, created_at_ms) VALUES ($1, $2, $3)
                     ON CONFLICT (account_id) DO UPDATE SET secret = excluded.secret,
                                                            created_at_ms = excluded.created_at_ms
                     WHERE $4
                     RETURNING secret
                 )
                 SELECT secret FROM put
                 UNION ALL
                 SELECT secret FROM webhook_secrets WHERE account_id = $1 AND NOT EXISTS (SELECT 1 FROM put)",
                &[&account.0, &secret, &now_ms, &replace],
            )
            .await
            .map_err(backend)?;
        Ok(row.get(0))
    }
}
