use std::time::Duration;

use company_model::{RecordJson, Tenant};
use pg_pool::PgPool;
use pg_pool::tokio_postgres::Row;

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
    include_str!("../migrations/postgres/0001_create_table_watches.sql"),
    include_str!("../migrations/postgres/0002_create_table_webhook_endpoints.sql"),
    include_str!("../migrations/postgres/0003_create_index_watch_events_claimed.sql"),
    include_str!("../migrations/postgres/0004_alter_table_watches_include_parts.sql"),
    include_str!("../migrations/postgres/0005_create_table_account_events.sql"),
    include_str!("../migrations/postgres/0006_create_index_account_events_kind.sql"),
    include_str!("../migrations/postgres/0007_alter_table_webhook_endpoints_job_callbacks.sql"),
];

/// Watches in a PostgreSQL database (tables `watches`, `watch_events`, `webhook_secrets`, `webhook_endpoints`,
/// `endpoint_events`, `account_events`), shared by every server
/// on it: due refreshes and deliveries are claimed with `FOR UPDATE SKIP LOCKED`, so each is one server's.
#[derive(Clone, Debug)]
pub struct PgWatchStore {
    pool: PgPool,
}

/// Records `event` in its account's feed (unless it goes `to` one endpoint: a ping) and queues a copy for each
/// endpoint that wants it, in the caller's transaction. The feed's entry is numbered under a lock on the account
/// held until the transaction ends, so the account's numbers are taken in the order its events commit, and a
/// reader paging by the last one it saw skips none. Returns how many copies it queued.
async fn record_account_event(
    tx: &pg_pool::Transaction<'_>,
    event: &AccountEvent,
    to: Option<EndpointId>,
    now_ms: i64,
) -> Result<u64, WatchStoreError> {
    let account = event.tenant.key();
    if to.is_none() {
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('account_events:' || $1::BIGINT::TEXT, 0))",
            &[&account],
        )
        .await
        .map_err(backend)?;
        tx.execute(
            "INSERT INTO account_events (account_id, id, kind, body, created_at_ms)
             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            &[&account, &event.id, &event.kind, &event.body, &now_ms],
        )
        .await
        .map_err(backend)?;
    }
    tx.execute(
        "INSERT INTO endpoint_events (id, endpoint_id, account_id, kind, body, created_at_ms, next_attempt_ms)
         SELECT $1::TEXT, e.id, e.account_id, $3::TEXT, $4::TEXT, $5::BIGINT, $5::BIGINT
         FROM webhook_endpoints e
         WHERE e.account_id = $2 AND e.disabled_ms IS NULL
           AND CASE WHEN $6::BIGINT IS NULL THEN e.job_id IS NULL AND e.events::jsonb ? $3 ELSE e.id = $6 END
         ON CONFLICT DO NOTHING",
        &[
            &event.id,
            &account,
            &event.kind,
            &event.body,
            &now_ms,
            &to.map(|endpoint| endpoint.0),
        ],
    )
    .await
    .map_err(backend)
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
        include: row.get(16),
    }
}

fn endpoint_row(row: &Row) -> EndpointRow {
    EndpointRow {
        id: row.get(0),
        account: row.get(1),
        url: row.get(2),
        events: row.get(3),
        created_ms: row.get(4),
        last_delivery_ms: row.get(5),
        last_delivery_status: row.get(6),
        last_delivery_error: row.get(7),
        disabled_ms: row.get(8),
        disabled_reason: row.get(9),
    }
}

fn endpoint_event_row(row: &Row) -> EndpointEventRow {
    EndpointEventRow {
        id: row.get(0),
        endpoint: row.get(1),
        kind: row.get(2),
        created_ms: row.get(3),
        attempts: row.get(4),
        delivered_ms: row.get(5),
        next_attempt_ms: row.get(6),
        last_status: row.get(7),
        last_error: row.get(8),
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

    /// Claims up to `limit` due events of `queue` until `now + lease` (`SKIP LOCKED`: another server's claim
    /// in progress is passed over), with their owners' URLs.
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
        let turns = queue.fair_turns("$1", "$4");
        let rows = self
            .pool
            .query(
                &format!(
                    "{turns},
                     claimed AS (
                         UPDATE {events} SET claim_until_ms = $2, attempts = attempts + 1
                         WHERE (id, {owner}) IN (
                             SELECT e.id, e.{owner} FROM {events} e
                             JOIN turns t ON t.id = e.id AND t.owner = e.{owner}
                             -- Checked again on the row as it is once locked: a server that finished it
                             -- meanwhile leaves nothing due here (the CTEs read the statement's snapshot).
                             WHERE coalesce(e.claim_until_ms, 0) <= $1 AND e.next_attempt_ms <= $1
                             ORDER BY t.turn, t.next_attempt_ms, t.id LIMIT $3
                             FOR UPDATE OF e SKIP LOCKED)
                         RETURNING id, {owner}, account_id, body, created_at_ms, attempts
                     )
                     SELECT c.id, c.{owner}, c.account_id, c.body, c.created_at_ms, c.attempts, o.{url},
                            {headers}
                     FROM claimed c LEFT JOIN {owners} o ON o.id = c.{owner}"
                ),
                &[
                    &now_ms,
                    &until_ms,
                    &i64::from(limit),
                    &i64::from(per_account),
                ],
            )
            .await
            .map_err(backend)?;
        Ok(rows
            .iter()
            .map(|row| Claimed {
                id: row.get(0),
                owner: row.get(1),
                account: row.get(2),
                body: row.get(3),
                created_ms: row.get(4),
                attempts: row.get(5),
                url: row.get(6),
                headers: row.get(7),
            })
            .collect())
    }

    /// Records `attempt` on the claimed event `event_id` of `queue` (of that `owner`, where an event's copies
    /// share its id) and on its owner, in one statement; false when the claim is no longer this caller's.
    async fn finish(
        &self,
        queue: &Queue,
        event_id: &str,
        owner: Option<i64>,
        claim: i64,
        attempt: Attempt,
    ) -> Result<bool, WatchStoreError> {
        let Queue {
            events,
            owner: owner_column,
            owners,
            ..
        } = queue;
        let row = self
            .pool
            .query_opt(
                &format!(
                    "WITH attempt AS (
                         UPDATE {events} SET next_attempt_ms = $4, claim_until_ms = NULL, delivered_ms = $5,
                             last_status = $6, last_error = $7
                         WHERE id = $1 AND ($2::BIGINT IS NULL OR {owner_column} = $2) AND attempts = $3
                           AND claim_until_ms IS NOT NULL
                         RETURNING {owner_column} AS owner
                     ), owner AS (
                         UPDATE {owners} SET last_delivery_ms = $8, last_delivery_status = $6,
                             last_delivery_error = $7,
                             disabled_ms = CASE WHEN $9 THEN $8 ELSE disabled_ms END,
                             disabled_reason = CASE WHEN $9 THEN $10 ELSE disabled_reason END
                         WHERE id IN (SELECT owner FROM attempt)
                     )
                     SELECT owner FROM attempt"
                ),
                &[
                    &event_id,
                    &owner,
                    &claim,
                    &attempt.next_attempt_ms,
                    &attempt.delivered_ms,
                    &attempt.status,
                    &attempt.error,
                    &attempt.now_ms,
                    &attempt.gave_up,
                    &attempt.reason,
                ],
            )
            .await
            .map_err(backend)?;
        Ok(row.is_some())
    }
}

#[async_trait::async_trait]
impl WatchStore for PgWatchStore {
    async fn create(
        &self,
        watches: &[NewWatch],
        at_most: usize,
        now: jiff::Timestamp,
    ) -> Result<Option<Vec<Watch>>, WatchStoreError> {
        let now_ms = millis(now);
        let account = watches.first().map_or(0, |w| w.tenant.key());
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client.transaction().await.map_err(backend)?;
        // One creation per account at a time, so the count below is the count the inserts add to.
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('watches:' || $1::BIGINT::TEXT, 0))",
            &[&account],
        )
        .await
        .map_err(backend)?;
        let have: i64 = tx
            .query_one(
                "SELECT count(*) FROM watches WHERE account_id = $1",
                &[&account],
            )
            .await
            .map_err(backend)?
            .get(0);
        let adding = i64::try_from(watches.len()).unwrap_or(i64::MAX);
        if have.saturating_add(adding) > i64::try_from(at_most).unwrap_or(i64::MAX) {
            return Ok(None);
        }
        let statement = tx
            .prepare_cached(&format!(
                "INSERT INTO watches (account_id, url, every_hours, webhook_url, fields, baseline, created_at_ms,
                                      next_check_ms, include_parts)
                 VALUES ($1, $2, $3::BIGINT, $4, $5, $6, $7::BIGINT, $7::BIGINT + $3::BIGINT * 3600000, $8)
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
                        &watch.tenant.key(),
                        &watch.url.as_str(),
                        &i64::from(watch.every_hours),
                        &watch.webhook_url,
                        &fields_column(&watch.fields),
                        &watch.baseline.as_ref().map(RecordJson::as_str),
                        &now_ms,
                        &watch.include,
                    ],
                )
                .await
                .map_err(backend)?;
            created.push(watch_row(&row).into_watch()?);
        }
        tx.commit().await.map_err(backend)?;
        Ok(Some(created))
    }

    async fn list(
        &self,
        tenant: Tenant,
        after: Option<WatchId>,
        limit: u32,
    ) -> Result<Vec<Watch>, WatchStoreError> {
        let rows = self
            .pool
            .query(
                &format!(
                    "SELECT {WATCH_COLUMNS} FROM watches WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3"
                ),
                &[&tenant.key(), &after.map_or(0, |a| a.0), &i64::from(limit)],
            )
            .await
            .map_err(backend)?;
        rows.iter().map(|row| watch_row(row).into_watch()).collect()
    }

    async fn get(&self, tenant: Tenant, id: WatchId) -> Result<Option<Watch>, WatchStoreError> {
        self.pool
            .query_opt(
                &format!("SELECT {WATCH_COLUMNS} FROM watches WHERE account_id = $1 AND id = $2"),
                &[&tenant.key(), &id.0],
            )
            .await
            .map_err(backend)?
            .map(|row| watch_row(&row).into_watch())
            .transpose()
    }

    async fn delete(&self, tenant: Tenant, id: WatchId) -> Result<bool, WatchStoreError> {
        let deleted = self
            .pool
            .execute(
                "WITH gone AS (DELETE FROM watches WHERE account_id = $1 AND id = $2 RETURNING id),
                      events AS (DELETE FROM watch_events WHERE watch_id IN (SELECT id FROM gone))
                 SELECT 1 FROM gone",
                &[&tenant.key(), &id.0],
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
                    "{turns}
                     UPDATE watches SET claim_until_ms = $2
                     WHERE id IN (SELECT w.id FROM watches w JOIN turns t ON t.id = w.id
                                  WHERE coalesce(w.claim_until_ms, 0) <= $1
                                    AND w.disabled_ms IS NULL AND w.next_check_ms <= $1
                                  ORDER BY t.turn, t.next_check_ms, t.id LIMIT $3
                                  FOR UPDATE OF w SKIP LOCKED)
                     RETURNING {WATCH_COLUMNS}, baseline",
                    turns = fair_due_watches("$1")
                ),
                &[&now_ms, &until_ms, &i64::from(limit)],
            )
            .await
            .map_err(backend)?;
        rows.iter()
            .map(|row| {
                let baseline: Option<String> = row.get(WATCH_COLUMN_COUNT);
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
        let changed = event.is_some();
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client.transaction().await.map_err(backend)?;
        // The watch moves on only if the claim is still this caller's, and the event is queued only then, in
        // the same transaction.
        let moved = tx
            .query_opt(
                "UPDATE watches SET next_check_ms = $3, claim_until_ms = NULL, last_checked_ms = $4,
                     last_check_error = $5, baseline = coalesce($6, baseline),
                     last_change_ms = CASE WHEN $7 THEN $4 ELSE last_change_ms END
                 WHERE id = $1 AND next_check_ms = $2
                 RETURNING account_id",
                &[
                    &watch.0,
                    &claim,
                    &next_ms,
                    &now_ms,
                    &error,
                    &record.as_ref().map(RecordJson::as_str),
                    &changed,
                ],
            )
            .await
            .map_err(backend)?;
        let Some(moved) = moved else {
            return Ok(false);
        };
        if let Some(event) = event {
            let account: i64 = moved.get(0);
            tx.execute(
                "INSERT INTO watch_events (id, watch_id, account_id, body, created_at_ms, next_attempt_ms)
                 VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT DO NOTHING",
                &[&event.account.id, &watch.0, &account, &event.body, &now_ms],
            )
            .await
            .map_err(backend)?;
            record_account_event(&tx, &event.account, None, now_ms).await?;
        }
        tx.commit().await.map_err(backend)?;
        Ok(true)
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
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client.transaction().await.map_err(backend)?;
        // One registration per account at a time, so the count below is the count the insert sees.
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('webhook_endpoints:' || $1::BIGINT::TEXT, 0))",
            &[&endpoint.tenant.key()],
        )
        .await
        .map_err(backend)?;
        let row = tx
            .query_opt(
                &format!(
                    "INSERT INTO webhook_endpoints (account_id, url, events, created_at_ms)
                     SELECT $1::BIGINT, $2::TEXT, $3::TEXT, $4::BIGINT
                     WHERE (SELECT count(*) FROM webhook_endpoints WHERE account_id = $1 AND job_id IS NULL)
                           < $5::BIGINT
                     RETURNING {ENDPOINT_COLUMNS}"
                ),
                &[
                    &endpoint.tenant.key(),
                    &endpoint.url,
                    &fields_column(&endpoint.events),
                    &millis(now),
                    &i64::try_from(at_most).unwrap_or(i64::MAX),
                ],
            )
            .await
            .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(row.map(|row| endpoint_row(&row).into_endpoint()))
    }

    async fn endpoints(&self, tenant: Tenant) -> Result<Vec<Endpoint>, WatchStoreError> {
        let rows = self
            .pool
            .query(
                &format!(
                    "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE account_id = $1 AND job_id IS NULL
                     ORDER BY id"
                ),
                &[&tenant.key()],
            )
            .await
            .map_err(backend)?;
        Ok(rows
            .iter()
            .map(|row| endpoint_row(row).into_endpoint())
            .collect())
    }

    async fn delete_endpoint(
        &self,
        tenant: Tenant,
        id: EndpointId,
    ) -> Result<bool, WatchStoreError> {
        let deleted = self
            .pool
            .execute(
                "WITH gone AS (DELETE FROM webhook_endpoints
                               WHERE account_id = $1 AND id = $2 AND job_id IS NULL RETURNING id),
                      events AS (DELETE FROM endpoint_events WHERE endpoint_id IN (SELECT id FROM gone))
                 SELECT 1 FROM gone",
                &[&tenant.key(), &id.0],
            )
            .await
            .map_err(backend)?;
        Ok(deleted > 0)
    }

    async fn queue_event(
        &self,
        event: &AccountEvent,
        to: Option<EndpointId>,
        now: jiff::Timestamp,
    ) -> Result<u64, WatchStoreError> {
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client.transaction().await.map_err(backend)?;
        let queued = record_account_event(&tx, event, to, millis(now)).await?;
        tx.commit().await.map_err(backend)?;
        Ok(queued)
    }

    async fn queue_job_event(
        &self,
        event: &AccountEvent,
        callback: &JobCallbackTarget,
        now: jiff::Timestamp,
    ) -> Result<u64, WatchStoreError> {
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client.transaction().await.map_err(backend)?;
        let (account, now_ms) = (event.tenant.key(), millis(now));
        let mut queued = record_account_event(&tx, event, None, now_ms).await?;
        // Made on the job's first event; each later one marks it used now and locks its row, so the sweep, which
        // forgets callbacks unused for the retention, never deletes it under this event's copy.
        let target: i64 = tx
            .query_one(
                "INSERT INTO webhook_endpoints (account_id, url, events, created_at_ms, job_id, headers)
                 VALUES ($1, $2, '[]', $3, $4, $5)
                 ON CONFLICT (account_id, job_id) WHERE job_id IS NOT NULL
                 DO UPDATE SET created_at_ms = EXCLUDED.created_at_ms
                 RETURNING id",
                &[
                    &account,
                    &callback.url,
                    &now_ms,
                    &callback.job,
                    &headers_column(&callback.headers),
                ],
            )
            .await
            .map_err(backend)?
            .get(0);
        queued += record_account_event(&tx, event, Some(EndpointId(target)), now_ms).await?;
        tx.commit().await.map_err(backend)?;
        Ok(queued)
    }

    async fn account_events(
        &self,
        tenant: Tenant,
        after: Option<&str>,
        kinds: &[String],
        limit: u32,
    ) -> Result<Option<Vec<FeedEvent>>, WatchStoreError> {
        let account = tenant.key();
        let from = match after {
            None => 0,
            Some(id) => {
                let row = self
                    .pool
                    .query_opt(
                        "SELECT seq FROM account_events WHERE account_id = $1 AND id = $2",
                        &[&account, &id],
                    )
                    .await
                    .map_err(backend)?;
                let Some(row) = row else { return Ok(None) };
                row.get::<_, i64>(0)
            }
        };
        let most = i64::from(limit);
        let mut pages = Vec::new();
        if kinds.is_empty() {
            pages = self
                .pool
                .query(FEED_AFTER, &[&account, &from, &most])
                .await
                .map_err(backend)?;
        }
        for kind in kinds {
            pages.extend(
                self.pool
                    .query(FEED_OF_KIND_AFTER, &[&account, &from, kind, &most])
                    .await
                    .map_err(backend)?,
            );
        }
        let pages = pages
            .iter()
            .map(|row| {
                (
                    row.get(0),
                    FeedEvent {
                        id: row.get(1),
                        kind: row.get(2),
                        body: row.get(3),
                        created_at: at(row.get(4)),
                    },
                )
            })
            .collect();
        Ok(Some(merge_feed(pages, limit)))
    }

    async fn endpoint_events(
        &self,
        tenant: Tenant,
        of: Option<EndpointId>,
        limit: u32,
    ) -> Result<Vec<EndpointEvent>, WatchStoreError> {
        let rows = self
            .pool
            .query(
                &format!(
                    "SELECT {ENDPOINT_EVENT_COLUMNS} FROM endpoint_events
                     WHERE account_id = $1 AND ($2::BIGINT IS NULL OR endpoint_id = $2)
                     ORDER BY created_at_ms DESC, id DESC, endpoint_id LIMIT $3"
                ),
                &[
                    &tenant.key(),
                    &of.map(|endpoint| endpoint.0),
                    &i64::from(limit),
                ],
            )
            .await
            .map_err(backend)?;
        Ok(rows
            .iter()
            .map(|row| endpoint_event_row(row).into_event())
            .collect())
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
        let mut forgotten = 0;
        for forget in forgetting("$1") {
            let deleted = if forget.cutoff {
                self.pool.execute(&forget.sql, &[&before]).await
            } else {
                self.pool.execute(&forget.sql, &[]).await
            }
            .map_err(backend)?;
            if forget.counted {
                forgotten += deleted;
            }
        }
        Ok(forgotten)
    }

    async fn secret(&self, tenant: Tenant) -> Result<Option<String>, WatchStoreError> {
        Ok(self
            .pool
            .query_opt(
                "SELECT secret FROM webhook_secrets WHERE account_id = $1",
                &[&tenant.key()],
            )
            .await
            .map_err(backend)?
            .map(|row| row.get(0)))
    }

    async fn set_secret(
        &self,
        tenant: Tenant,
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
                &[&tenant.key(), &secret, &now_ms, &replace],
            )
            .await
            .map_err(backend)?;
        Ok(row.get(0))
    }
}
