use std::path::Path;
use std::time::Duration;

use company_model::{RecordJson, Tenant};
use sqlite_pool::SqlitePool;
use sqlite_pool::rusqlite::{self, OptionalExtension, TransactionBehavior, params};

use crate::rows::{
    Attempt, Claimed, ENDPOINT_COLUMNS, ENDPOINT_EVENT_COLUMNS, ENDPOINT_EVENTS, EndpointEventRow,
    EndpointRow, FEED_AFTER, FEED_OF_KIND_AFTER, Queue, WATCH_COLUMN_COUNT, WATCH_COLUMNS,
    WATCH_EVENTS, WatchRow, at, fair_due_watches, fields_column, forgetting, headers_column,
    merge_feed, millis,
};
use crate::{
    AccountEvent, Delivered, Delivery, DueRefresh, Endpoint, EndpointDelivery, EndpointEvent,
    EndpointId, FeedEvent, JobCallbackTarget, NewEndpoint, NewWatch, Refreshed, Watch, WatchId,
    WatchStore, WatchStoreError,
};

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/sqlite/0001_create_table_watches.sql"),
    include_str!("../migrations/sqlite/0002_create_table_webhook_endpoints.sql"),
    include_str!("../migrations/sqlite/0003_create_index_watch_events_claimed.sql"),
    include_str!("../migrations/sqlite/0004_alter_table_watches_include_parts.sql"),
    include_str!("../migrations/sqlite/0005_create_table_account_events.sql"),
    include_str!("../migrations/sqlite/0006_create_index_account_events_kind.sql"),
    include_str!("../migrations/sqlite/0007_alter_table_webhook_endpoints_job_callbacks.sql"),
];

/// Watches in the service's SQLite file (tables `watches`, `watch_events`, `webhook_secrets`,
/// `webhook_endpoints`, `endpoint_events`, `account_events`).
#[derive(Clone, Debug)]
pub struct SqliteWatchStore {
    pool: SqlitePool,
}

/// Records `event` in its account's feed (unless it goes `to` one endpoint: a ping) and queues a copy for each
/// endpoint that wants it, in the caller's transaction (SQLite's writes are one at a time, so the feed's order
/// is the order of commits). Returns how many copies it queued.
fn record_account_event(
    tx: &rusqlite::Transaction<'_>,
    event: &AccountEvent,
    to: Option<EndpointId>,
    now_ms: i64,
) -> rusqlite::Result<u64> {
    let account = event.tenant.key();
    if to.is_none() {
        tx.prepare_cached(
            "INSERT INTO account_events (account_id, id, kind, body, created_at_ms) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT DO NOTHING",
        )?
        .execute(params![account, event.id, event.kind, event.body, now_ms])?;
    }
    let queued = tx
        .prepare_cached(
            "INSERT INTO endpoint_events (id, endpoint_id, account_id, kind, body, created_at_ms, next_attempt_ms)
             SELECT ?1, e.id, e.account_id, ?3, ?4, ?5, ?5 FROM webhook_endpoints e
             WHERE e.account_id = ?2 AND e.disabled_ms IS NULL
               AND CASE WHEN ?6 IS NULL
                        THEN e.job_id IS NULL AND EXISTS (SELECT 1 FROM json_each(e.events) WHERE value = ?3)
                        ELSE e.id = ?6 END
             ON CONFLICT DO NOTHING",
        )?
        .execute(params![
            event.id,
            account,
            event.kind,
            event.body,
            now_ms,
            to.map(|endpoint| endpoint.0)
        ])?;
    Ok(u64::try_from(queued).unwrap_or(0))
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> WatchStoreError {
    WatchStoreError(Box::new(error))
}

fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX)
}

fn watch_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<WatchRow> {
    Ok(WatchRow {
        id: row.get(0)?,
        account: row.get(1)?,
        url: row.get(2)?,
        every_hours: row.get(3)?,
        webhook_url: row.get(4)?,
        fields: row.get(5)?,
        created_ms: row.get(6)?,
        next_check_ms: row.get(7)?,
        last_checked_ms: row.get(8)?,
        last_check_error: row.get(9)?,
        last_change_ms: row.get(10)?,
        last_delivery_ms: row.get(11)?,
        last_delivery_status: row.get(12)?,
        last_delivery_error: row.get(13)?,
        disabled_ms: row.get(14)?,
        disabled_reason: row.get(15)?,
        include: row.get(16)?,
    })
}

fn endpoint_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<EndpointRow> {
    Ok(EndpointRow {
        id: row.get(0)?,
        account: row.get(1)?,
        url: row.get(2)?,
        events: row.get(3)?,
        created_ms: row.get(4)?,
        last_delivery_ms: row.get(5)?,
        last_delivery_status: row.get(6)?,
        last_delivery_error: row.get(7)?,
        disabled_ms: row.get(8)?,
        disabled_reason: row.get(9)?,
    })
}

fn endpoint_event_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<EndpointEventRow> {
    Ok(EndpointEventRow {
        id: row.get(0)?,
        endpoint: row.get(1)?,
        kind: row.get(2)?,
        created_ms: row.get(3)?,
        attempts: row.get(4)?,
        delivered_ms: row.get(5)?,
        next_attempt_ms: row.get(6)?,
        last_status: row.get(7)?,
        last_error: row.get(8)?,
    })
}

impl SqliteWatchStore {
    /// Opens the store in the SQLite file at `path` (created if missing) and migrates its tables.
    ///
    /// # Errors
    /// [`WatchStoreError`] when the file cannot be opened or migrated.
    pub async fn open(path: &Path) -> Result<Self, WatchStoreError> {
        Self::with_pool(SqlitePool::open(path).await.map_err(backend)?).await
    }

    /// Uses an already open pool (the service opens one per file and shares it).
    ///
    /// # Errors
    /// [`WatchStoreError`] when the tables cannot be migrated.
    pub async fn with_pool(pool: SqlitePool) -> Result<Self, WatchStoreError> {
        pool.migrate("watch-store", MIGRATIONS)
            .await
            .map_err(backend)?;
        Ok(Self { pool })
    }

    async fn read_watches(
        &self,
        sql: String,
        values: Vec<i64>,
    ) -> Result<Vec<Watch>, WatchStoreError> {
        let rows = self
            .pool
            .run(move |conn| {
                conn.prepare_cached(&sql)?
                    .query_map(rusqlite::params_from_iter(values), watch_row)?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .await
            .map_err(backend)?;
        rows.into_iter().map(WatchRow::into_watch).collect()
    }

    /// Claims up to `limit` due events of `queue` until `now + lease`, with their owners' URLs.
    async fn claim(
        &self,
        queue: &Queue,
        now: jiff::Timestamp,
        lease: Duration,
        (limit, per_account): (u32, u32),
    ) -> Result<Vec<Claimed>, WatchStoreError> {
        let (now_ms, until_ms) = (millis(now), millis(now).saturating_add(lease_ms(lease)));
        let Queue {
            events,
            owner,
            owners,
            url,
            headers,
            ..
        } = queue;
        let turns = queue.fair_turns("?1", "?4");
        let sql = format!(
            "{turns}
             UPDATE {events} SET claim_until_ms = ?2, attempts = attempts + 1
             WHERE (id, {owner}) IN (SELECT id, owner FROM turns
                                     ORDER BY turn, next_attempt_ms, id LIMIT ?3)
             RETURNING id, {owner}, account_id, body, created_at_ms, attempts,
                       (SELECT o.{url} FROM {owners} o WHERE o.id = {owner}),
                       (SELECT {headers} FROM {owners} o WHERE o.id = {owner})"
        );
        self.pool
            .write(move |conn| {
                conn.prepare_cached(&sql)?
                    .query_map(params![now_ms, until_ms, limit, per_account], |row| {
                        Ok(Claimed {
                            id: row.get(0)?,
                            owner: row.get(1)?,
                            account: row.get(2)?,
                            body: row.get(3)?,
                            created_ms: row.get(4)?,
                            attempts: row.get(5)?,
                            url: row.get(6)?,
                            headers: row.get(7)?,
                        })
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .await
            .map_err(backend)
    }

    /// Records `attempt` on the claimed event `event_id` of `queue` (of that `owner`, where an event's copies
    /// share its id) and on its owner; false when the claim is no longer this caller's.
    async fn finish(
        &self,
        queue: &Queue,
        event_id: &str,
        owner: Option<i64>,
        claim: i64,
        attempt: Attempt,
    ) -> Result<bool, WatchStoreError> {
        let event_id = event_id.to_owned();
        let Queue {
            events,
            owner: owner_column,
            owners,
            ..
        } = queue;
        let on_event = format!(
            "UPDATE {events} SET next_attempt_ms = ?4, claim_until_ms = NULL, delivered_ms = ?5,
                 last_status = ?6, last_error = ?7
             WHERE id = ?1 AND (?2 IS NULL OR {owner_column} = ?2) AND attempts = ?3
               AND claim_until_ms IS NOT NULL
             RETURNING {owner_column}"
        );
        let on_owner = format!(
            "UPDATE {owners} SET last_delivery_ms = ?2, last_delivery_status = ?3, last_delivery_error = ?4,
                 disabled_ms = CASE WHEN ?5 THEN ?2 ELSE disabled_ms END,
                 disabled_reason = CASE WHEN ?5 THEN ?6 ELSE disabled_reason END
             WHERE id = ?1"
        );
        let Attempt {
            now_ms,
            next_attempt_ms,
            delivered_ms,
            status,
            error,
            gave_up,
            reason,
        } = attempt;
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let found: Option<i64> = tx
                    .query_row(
                        &on_event,
                        params![
                            event_id,
                            owner,
                            claim,
                            next_attempt_ms,
                            delivered_ms,
                            status,
                            error
                        ],
                        |row| row.get(0),
                    )
                    .optional()?;
                let Some(found) = found else {
                    return Ok(false);
                };
                tx.execute(
                    &on_owner,
                    params![found, now_ms, status, error, gave_up, reason],
                )?;
                tx.commit()?;
                Ok(true)
            })
            .await
            .map_err(backend)
    }
}

#[async_trait::async_trait]
impl WatchStore for SqliteWatchStore {
    async fn create(
        &self,
        watches: &[NewWatch],
        at_most: usize,
        now: jiff::Timestamp,
    ) -> Result<Option<Vec<Watch>>, WatchStoreError> {
        let now_ms = millis(now);
        let account = watches.first().map_or(0, |w| w.tenant.key());
        let most = i64::try_from(at_most).unwrap_or(i64::MAX);
        let adding = i64::try_from(watches.len()).unwrap_or(i64::MAX);
        let rows: Vec<_> = watches
            .iter()
            .map(|w| {
                (
                    w.tenant.key(),
                    w.url.as_str().to_owned(),
                    i64::from(w.every_hours),
                    w.webhook_url.clone(),
                    fields_column(&w.fields),
                    w.baseline.as_ref().map(|r| r.as_str().to_owned()),
                    w.include.clone(),
                )
            })
            .collect();
        let ids = self
            .pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let have: i64 = tx.query_row(
                    "SELECT count(*) FROM watches WHERE account_id = ?1",
                    [account],
                    |r| r.get(0),
                )?;
                if have.saturating_add(adding) > most {
                    return Ok(None);
                }
                let mut ids = Vec::with_capacity(rows.len());
                for (account, url, every, webhook, fields, baseline, include) in rows {
                    tx.execute(
                        "INSERT INTO watches (account_id, url, every_hours, webhook_url, fields, baseline,
                                              created_at_ms, next_check_ms, include_parts)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7 + ?3 * 3600000, ?8)",
                        params![account, url, every, webhook, fields, baseline, now_ms, include],
                    )?;
                    ids.push(tx.last_insert_rowid());
                }
                tx.commit()?;
                Ok(Some(ids))
            })
            .await
            .map_err(backend)?;
        let Some(ids) = ids else {
            return Ok(None);
        };
        let mut created = Vec::with_capacity(ids.len());
        for (id, watch) in ids.into_iter().zip(watches) {
            if let Some(found) = self.get(watch.tenant, WatchId(id)).await? {
                created.push(found);
            }
        }
        Ok(Some(created))
    }

    async fn list(
        &self,
        tenant: Tenant,
        after: Option<WatchId>,
        limit: u32,
    ) -> Result<Vec<Watch>, WatchStoreError> {
        self.read_watches(
            format!(
                "SELECT {WATCH_COLUMNS} FROM watches WHERE account_id = ?1 AND id > ?2 ORDER BY id LIMIT ?3"
            ),
            vec![tenant.key(), after.map_or(0, |a| a.0), i64::from(limit)],
        )
        .await
    }

    async fn get(&self, tenant: Tenant, id: WatchId) -> Result<Option<Watch>, WatchStoreError> {
        Ok(self
            .read_watches(
                format!("SELECT {WATCH_COLUMNS} FROM watches WHERE account_id = ?1 AND id = ?2"),
                vec![tenant.key(), id.0],
            )
            .await?
            .pop())
    }

    async fn delete(&self, tenant: Tenant, id: WatchId) -> Result<bool, WatchStoreError> {
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let deleted = tx.execute(
                    "DELETE FROM watches WHERE account_id = ?1 AND id = ?2",
                    params![tenant.key(), id.0],
                )?;
                // Only the tenant's own watch takes its events with it: another tenant naming this id deletes
                // nothing.
                if deleted > 0 {
                    tx.execute("DELETE FROM watch_events WHERE watch_id = ?1", [id.0])?;
                }
                tx.commit()?;
                Ok(deleted > 0)
            })
            .await
            .map_err(backend)
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
            .write(move |conn| {
                let turns = fair_due_watches("?1");
                let sql = format!(
                    "{turns}
                     UPDATE watches SET claim_until_ms = ?2
                     WHERE id IN (SELECT id FROM turns ORDER BY turn, next_check_ms, id LIMIT ?3)
                     RETURNING {WATCH_COLUMNS}, baseline"
                );
                conn.prepare_cached(&sql)?
                    .query_map(params![now_ms, until_ms, limit], |row| {
                        Ok((
                            watch_row(row)?,
                            row.get::<_, Option<String>>(WATCH_COLUMN_COUNT)?,
                        ))
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .await
            .map_err(backend)?;
        rows.into_iter()
            .map(|(row, baseline)| {
                let claim = row.next_check_ms;
                Ok(DueRefresh {
                    watch: row.into_watch()?,
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
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let (record, error, event) = match refreshed {
                    Refreshed::Fetched { record, event } => {
                        (Some(record.as_str().to_owned()), None, event)
                    }
                    Refreshed::Failed { error } => (None, Some(error), None),
                };
                let changed = event.is_some();
                let updated = tx.execute(
                    "UPDATE watches SET next_check_ms = ?3, claim_until_ms = NULL, last_checked_ms = ?4,
                         last_check_error = ?5, baseline = coalesce(?6, baseline),
                         last_change_ms = CASE WHEN ?7 THEN ?4 ELSE last_change_ms END
                     WHERE id = ?1 AND next_check_ms = ?2",
                    params![watch.0, claim, next_ms, now_ms, error, record, changed],
                )?;
                if updated == 0 {
                    return Ok(false);
                }
                if let Some(event) = event {
                    tx.execute(
                        "INSERT INTO watch_events (id, watch_id, account_id, body, created_at_ms, next_attempt_ms)
                         SELECT ?1, id, account_id, ?2, ?3, ?3 FROM watches WHERE id = ?4
                         ON CONFLICT DO NOTHING",
                        params![event.account.id, event.body, now_ms, watch.0],
                    )?;
                    record_account_event(&tx, &event.account, None, now_ms)?;
                }
                tx.commit()?;
                Ok(true)
            })
            .await
            .map_err(backend)
    }

    async fn claim_deliveries(
        &self,
        now: jiff::Timestamp,
        lease: Duration,
        limit: u32,
        per_account: u32,
    ) -> Result<Vec<Delivery>, WatchStoreError> {
        let claimed = self
            .claim(&WATCH_EVENTS, now, lease, (limit, per_account))
            .await?;
        Ok(claimed
            .into_iter()
            .filter_map(Claimed::into_delivery)
            .collect())
    }

    async fn finish_delivery(
        &self,
        event_id: &str,
        claim: i64,
        now: jiff::Timestamp,
        delivered: Delivered,
    ) -> Result<bool, WatchStoreError> {
        self.finish(
            &WATCH_EVENTS,
            event_id,
            None,
            claim,
            Attempt::new(&delivered, now),
        )
        .await
    }

    async fn create_endpoint(
        &self,
        endpoint: &NewEndpoint,
        at_most: usize,
        now: jiff::Timestamp,
    ) -> Result<Option<Endpoint>, WatchStoreError> {
        let (account, url, events) = (
            endpoint.tenant.key(),
            endpoint.url.clone(),
            fields_column(&endpoint.events),
        );
        let (now_ms, at_most) = (millis(now), i64::try_from(at_most).unwrap_or(i64::MAX));
        let row = self
            .pool
            .write(move |conn| {
                conn.query_row(
                    &format!(
                        "INSERT INTO webhook_endpoints (account_id, url, events, created_at_ms)
                         SELECT ?1, ?2, ?3, ?4
                         WHERE (SELECT count(*) FROM webhook_endpoints WHERE account_id = ?1 AND job_id IS NULL) < ?5
                         RETURNING {ENDPOINT_COLUMNS}"
                    ),
                    params![account, url, events, now_ms, at_most],
                    endpoint_row,
                )
                .optional()
            })
            .await
            .map_err(backend)?;
        Ok(row.map(EndpointRow::into_endpoint))
    }

    async fn endpoints(&self, tenant: Tenant) -> Result<Vec<Endpoint>, WatchStoreError> {
        let rows = self
            .pool
            .run(move |conn| {
                conn.prepare_cached(&format!(
                    "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE account_id = ?1 AND job_id IS NULL
                     ORDER BY id"
                ))?
                .query_map([tenant.key()], endpoint_row)?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .await
            .map_err(backend)?;
        Ok(rows.into_iter().map(EndpointRow::into_endpoint).collect())
    }

    async fn delete_endpoint(
        &self,
        tenant: Tenant,
        id: EndpointId,
    ) -> Result<bool, WatchStoreError> {
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let deleted = tx.execute(
                    "DELETE FROM webhook_endpoints WHERE account_id = ?1 AND id = ?2 AND job_id IS NULL",
                    params![tenant.key(), id.0],
                )?;
                // Only the tenant's own endpoint takes its events with it: another tenant naming this id
                // deletes nothing.
                if deleted > 0 {
                    tx.execute("DELETE FROM endpoint_events WHERE endpoint_id = ?1", [id.0])?;
                }
                tx.commit()?;
                Ok(deleted > 0)
            })
            .await
            .map_err(backend)
    }

    async fn queue_event(
        &self,
        event: &AccountEvent,
        to: Option<EndpointId>,
        now: jiff::Timestamp,
    ) -> Result<u64, WatchStoreError> {
        let event = event.clone();
        let now_ms = millis(now);
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let queued = record_account_event(&tx, &event, to, now_ms)?;
                tx.commit()?;
                Ok(queued)
            })
            .await
            .map_err(backend)
    }

    async fn queue_job_event(
        &self,
        event: &AccountEvent,
        callback: &JobCallbackTarget,
        now: jiff::Timestamp,
    ) -> Result<u64, WatchStoreError> {
        let (event, callback) = (event.clone(), callback.clone());
        let now_ms = millis(now);
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let account = event.tenant.key();
                let mut queued = record_account_event(&tx, &event, None, now_ms)?;
                // Made on the job's first event; each later one marks it used now, so the sweep, which forgets
                // callbacks unused for the retention, never takes it from under this event's copy.
                let target: i64 = tx
                    .prepare_cached(
                        "INSERT INTO webhook_endpoints (account_id, url, events, created_at_ms, job_id, headers)
                         VALUES (?1, ?2, '[]', ?3, ?4, ?5)
                         ON CONFLICT (account_id, job_id) WHERE job_id IS NOT NULL
                         DO UPDATE SET created_at_ms = excluded.created_at_ms
                         RETURNING id",
                    )?
                    .query_row(
                        params![
                            account,
                            callback.url,
                            now_ms,
                            callback.job,
                            headers_column(&callback.headers)
                        ],
                        |row| row.get(0),
                    )?;
                queued += record_account_event(&tx, &event, Some(EndpointId(target)), now_ms)?;
                tx.commit()?;
                Ok(queued)
            })
            .await
            .map_err(backend)
    }

    async fn account_events(
        &self,
        tenant: Tenant,
        after: Option<&str>,
        kinds: &[String],
        limit: u32,
    ) -> Result<Option<Vec<FeedEvent>>, WatchStoreError> {
        let after = after.map(str::to_owned);
        let kinds = kinds.to_vec();
        self.pool
            .run(move |conn| {
                let account = tenant.key();
                let from = match &after {
                    None => 0,
                    Some(id) => {
                        let seq = conn
                            .prepare_cached(
                                "SELECT seq FROM account_events WHERE account_id = ?1 AND id = ?2",
                            )?
                            .query_row(params![account, id], |row| row.get::<_, i64>(0))
                            .optional()?;
                        let Some(seq) = seq else { return Ok(None) };
                        seq
                    }
                };
                let read =
                    |sql: &str, kind: Option<&str>| -> rusqlite::Result<Vec<(i64, FeedEvent)>> {
                        let mut statement = conn.prepare_cached(sql)?;
                        let rows = match kind {
                            None => statement.query(params![account, from, limit])?,
                            Some(kind) => statement.query(params![account, from, kind, limit])?,
                        };
                        rows.mapped(|row| {
                            Ok((
                                row.get(0)?,
                                FeedEvent {
                                    id: row.get(1)?,
                                    kind: row.get(2)?,
                                    body: row.get(3)?,
                                    created_at: at(row.get(4)?),
                                },
                            ))
                        })
                        .collect()
                    };
                let mut pages = Vec::new();
                if kinds.is_empty() {
                    pages = read(FEED_AFTER, None)?;
                }
                for kind in &kinds {
                    pages.extend(read(FEED_OF_KIND_AFTER, Some(kind))?);
                }
                Ok(Some(merge_feed(pages, limit)))
            })
            .await
            .map_err(backend)
    }

    async fn endpoint_events(
        &self,
        tenant: Tenant,
        of: Option<EndpointId>,
        limit: u32,
    ) -> Result<Vec<EndpointEvent>, WatchStoreError> {
        let of = of.map(|endpoint| endpoint.0);
        let rows = self
            .pool
            .run(move |conn| {
                conn.prepare_cached(&format!(
                    "SELECT {ENDPOINT_EVENT_COLUMNS} FROM endpoint_events
                     WHERE account_id = ?1 AND (?2 IS NULL OR endpoint_id = ?2)
                     ORDER BY created_at_ms DESC, id DESC, endpoint_id LIMIT ?3"
                ))?
                .query_map(params![tenant.key(), of, limit], endpoint_event_row)?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .await
            .map_err(backend)?;
        Ok(rows.into_iter().map(EndpointEventRow::into_event).collect())
    }

    async fn claim_endpoint_deliveries(
        &self,
        now: jiff::Timestamp,
        lease: Duration,
        limit: u32,
        per_account: u32,
    ) -> Result<Vec<EndpointDelivery>, WatchStoreError> {
        let claimed = self
            .claim(&ENDPOINT_EVENTS, now, lease, (limit, per_account))
            .await?;
        Ok(claimed
            .into_iter()
            .filter_map(Claimed::into_endpoint_delivery)
            .collect())
    }

    async fn finish_endpoint_delivery(
        &self,
        event_id: &str,
        endpoint: EndpointId,
        claim: i64,
        now: jiff::Timestamp,
        delivered: Delivered,
    ) -> Result<bool, WatchStoreError> {
        self.finish(
            &ENDPOINT_EVENTS,
            event_id,
            Some(endpoint.0),
            claim,
            Attempt::new(&delivered, now),
        )
        .await
    }

    async fn forget_done_before(&self, before: jiff::Timestamp) -> Result<u64, WatchStoreError> {
        let before = millis(before);
        self.pool
            .write(move |conn| {
                let mut forgotten = 0;
                for forget in forgetting("?1") {
                    let deleted = if forget.cutoff {
                        conn.execute(&forget.sql, [before])?
                    } else {
                        conn.execute(&forget.sql, [])?
                    };
                    if forget.counted {
                        forgotten += deleted;
                    }
                }
                Ok(forgotten as u64)
            })
            .await
            .map_err(backend)
    }

    async fn secret(&self, tenant: Tenant) -> Result<Option<String>, WatchStoreError> {
        self.pool
            .run(move |conn| {
                conn.prepare_cached("SELECT secret FROM webhook_secrets WHERE account_id = ?1")?
                    .query_row([tenant.key()], |row| row.get(0))
                    .optional()
            })
            .await
            .map_err(backend)
    }

    async fn set_secret(
        &self,
        tenant: Tenant,
        secret: &str,
        replace: bool,
    ) -> Result<String, WatchStoreError> {
        let secret = secret.to_owned();
        let now_ms = millis(jiff::Timestamp::now());
        self.pool
            .write(move |conn| {
                let sql = if replace {
                    "INSERT INTO webhook_secrets (account_id, secret, created_at_ms) VALUES (?1, ?2, ?3)
                     ON CONFLICT (account_id) DO UPDATE SET secret = excluded.secret,
                                                            created_at_ms = excluded.created_at_ms"
                } else {
                    "INSERT INTO webhook_secrets (account_id, secret, created_at_ms) VALUES (?1, ?2, ?3)
                     ON CONFLICT (account_id) DO NOTHING"
                };
                conn.execute(sql, params![tenant.key(), secret, now_ms])?;
                conn.query_row(
                    "SELECT secret FROM webhook_secrets WHERE account_id = ?1",
                    [tenant.key()],
                    |row| row.get(0),
                )
            })
            .await
            .map_err(backend)
    }
}
