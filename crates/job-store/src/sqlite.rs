use std::path::Path;
use std::time::Duration;
use store_base::time;

use api_contract::{Includes, InputMetadata, RecordFields};
use company_model::Tenant;
use page_url::PageUrl;
use sqlite_pool::SqlitePool;
use sqlite_pool::rusqlite::{self, OptionalExtension, TransactionBehavior, params};

use crate::{
    Answer, Created, InputRow, Job, JobId, JobStatus, JobStore, JobStoreError, Lease, NewJob,
    QueueBound, answer_columns, answer_from_columns, distinct_pages, metadata_columns,
    metadata_columns_from, window_from_millis, window_millis,
};

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/sqlite/0001_create_table_jobs.sql"),
    crate::FIELDS_AND_METADATA,
    crate::ENDINGS,
    crate::INCLUDE_PARTS,
    crate::CALLBACK,
];

const JOB_COLUMNS: &str = "id, account_id, key_id, status, paused_reason, window_ms, total, done, resolved, \
                           unresolved, pages, pages_done, charged_millis, created_at_ms, started_at_ms, \
                           finished_at_ms, fields, metadata_columns, include_parts, callback";
/// How many columns [`JOB_COLUMNS`] names: the index of a column read after them.
const JOB_COLUMN_COUNT: usize = 20;

/// Statuses whose pages may be leased.
const RUNNABLE: &str = "('queued', 'running')";

/// Jobs in the service's SQLite file (tables `jobs`, `job_pages`, `job_inputs`, `job_leases`).
#[derive(Clone, Debug)]
pub struct SqliteJobStore {
    pool: SqlitePool,
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> JobStoreError {
    JobStoreError(Box::new(error))
}

fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or_default()
}

fn job_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Job> {
    Ok(Job {
        id: JobId(row.get(0)?),
        tenant: Tenant::from_key(row.get(1)?),
        key_id: row.get(2)?,
        status: JobStatus::parse(&row.get::<_, String>(3)?).unwrap_or(JobStatus::Running),
        paused_reason: row.get(4)?,
        window: window_from_millis(row.get(5)?),
        total: count(row.get(6)?),
        done: count(row.get(7)?),
        resolved: count(row.get(8)?),
        unresolved: count(row.get(9)?),
        pages: count(row.get(10)?),
        pages_done: count(row.get(11)?),
        charged_millis: row.get(12)?,
        created_at: time::from_millis(row.get(13)?),
        started_at: row.get::<_, Option<i64>>(14)?.map(time::from_millis),
        finished_at: row.get::<_, Option<i64>>(15)?.map(time::from_millis),
        fields: row
            .get::<_, Option<String>>(16)?
            .map(|text| RecordFields::from_stored(&text)),
        metadata_columns: metadata_columns_from(row.get::<_, Option<String>>(17)?.as_deref()),
        include: Includes::from_names(
            row.get::<_, Option<String>>(18)?
                .as_deref()
                .unwrap_or_default(),
        ),
        callback: crate::callback_from(row.get::<_, Option<String>>(19)?.as_deref()),
    })
}

fn read_job(conn: &rusqlite::Connection, id: i64) -> rusqlite::Result<Option<Job>> {
    conn.prepare_cached(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"))?
        .query_row([id], job_row)
        .optional()
}

/// The pages of lease `lease`, in page order.
fn lease_pages(conn: &rusqlite::Connection, lease: i64) -> rusqlite::Result<Vec<String>> {
    conn.prepare_cached("SELECT page FROM job_pages WHERE lease_id = ?1 ORDER BY job_id, page_no")?
        .query_map([lease], |r| r.get(0))?
        .collect()
}

impl SqliteJobStore {
    /// Opens the store in the SQLite file at `path` (created if missing) and migrates its tables.
    ///
    /// # Errors
    /// [`JobStoreError`] when the file cannot be opened or migrated.
    pub async fn open(path: &Path) -> Result<Self, JobStoreError> {
        Self::with_pool(SqlitePool::open(path).await.map_err(backend)?).await
    }

    /// Uses an already open pool (the service opens one per file and shares it).
    ///
    /// # Errors
    /// [`JobStoreError`] when the tables cannot be migrated.
    pub async fn with_pool(pool: SqlitePool) -> Result<Self, JobStoreError> {
        pool.migrate("job-store", MIGRATIONS)
            .await
            .map_err(backend)?;
        Ok(Self { pool })
    }
}

/// A lease's rows turned into a [`Lease`]; pages that no longer parse are left out (they stay leased and are
/// answered by nobody, which cannot happen for pages this store wrote).
fn lease_of(id: i64, job: &Job, pages: &[String]) -> Lease {
    Lease {
        id,
        job: job.id,
        tenant: job.tenant,
        key_id: job.key_id,
        window: job.window,
        pages: pages
            .iter()
            .filter_map(|page| PageUrl::from_canonical(page).ok())
            .collect(),
        fields: job.fields.clone(),
        include: job.include,
    }
}

#[async_trait::async_trait]
impl JobStore for SqliteJobStore {
    async fn create(&self, job: NewJob, bound: QueueBound) -> Result<Created, JobStoreError> {
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let held: (i64, i64) = tx.query_row(&crate::open_counts_sql("?1"), [job.tenant.key()], |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?;
                if let Some(refused) = crate::admit(bound, held, job.urls.len()) {
                    return Ok(refused);
                }
                let (pages, page_of) = distinct_pages(&job.urls);
                let id: i64 = tx.query_row(
                    "INSERT INTO jobs (account_id, key_id, status, window_ms, total, pages, created_at_ms, fields,
                                       metadata_columns, include_parts, callback)
                     VALUES (?1, ?2, 'queued', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) RETURNING id",
                    params![
                        job.tenant.key(),
                        job.key_id,
                        window_millis(job.window),
                        crate::int(job.urls.len()),
                        crate::int(pages.len()),
                        time::now_millis(),
                        job.fields.as_ref().map(RecordFields::to_stored),
                        metadata_columns(&job.metadata),
                        job.include.to_names(),
                        crate::callback_column(job.callback.as_ref()),
                    ],
                    |r| r.get(0),
                )?;
                {
                    let mut insert = tx.prepare_cached(
                        "INSERT INTO job_pages (job_id, page_no, page, inputs) VALUES (?1, ?2, ?3, ?4)",
                    )?;
                    for (number, (page, inputs)) in pages.iter().enumerate() {
                        insert.execute(params![id, crate::int(number), page.as_str(), inputs])?;
                    }
                    let mut insert = tx.prepare_cached(
                        "INSERT INTO job_inputs (job_id, position, original, page_no, metadata)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                    )?;
                    for (position, ((original, _), page_no)) in
                        job.urls.iter().zip(&page_of).enumerate()
                    {
                        let metadata = job.metadata.get(position).cloned().flatten();
                        insert.execute(params![
                            id,
                            crate::int(position),
                            original,
                            page_no,
                            metadata.as_ref().map(InputMetadata::as_str)
                        ])?;
                    }
                }
                let created = read_job(&tx, id)?;
                tx.commit()?;
                created
                    .map(|job| Created::Job(Box::new(job)))
                    .ok_or(rusqlite::Error::QueryReturnedNoRows)
            })
            .await
            .map_err(backend)
    }

    async fn job(&self, tenant: Tenant, id: JobId) -> Result<Option<Job>, JobStoreError> {
        let job = self
            .pool
            .run(move |conn| read_job(conn, id.0))
            .await
            .map_err(backend)?;
        Ok(job.filter(|job| job.tenant == tenant))
    }

    async fn jobs(
        &self,
        tenant: Tenant,
        before: Option<JobId>,
        limit: u32,
    ) -> Result<Vec<Job>, JobStoreError> {
        self.pool
            .run(move |conn| {
                conn.prepare_cached(&format!(
                    "SELECT {JOB_COLUMNS} FROM jobs WHERE account_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3"
                ))?
                .query_map(
                    params![tenant.key(), before.map_or(i64::MAX, |b| b.0), limit],
                    job_row,
                )?
                .collect()
            })
            .await
            .map_err(backend)
    }

    async fn cancel(&self, tenant: Tenant, id: JobId) -> Result<Option<Job>, JobStoreError> {
        self.pool
            .write(move |conn| {
                conn.execute(
                    "UPDATE jobs SET status = 'cancelled', paused_reason = NULL, finished_at_ms = ?3,
                         endings = endings + 1
                     WHERE id = ?1 AND account_id = ?2 AND status NOT IN ('done', 'cancelled')",
                    params![id.0, tenant.key(), time::now_millis()],
                )?;
                Ok(read_job(conn, id.0)?.filter(|job| job.tenant == tenant))
            })
            .await
            .map_err(backend)
    }

    async fn delete(&self, tenant: Tenant, id: JobId) -> Result<bool, JobStoreError> {
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let deleted = tx.execute(
                    "DELETE FROM jobs WHERE id = ?1 AND account_id = ?2",
                    params![id.0, tenant.key()],
                )?;
                if deleted > 0 {
                    for table in ["job_inputs", "job_pages", "job_leases"] {
                        tx.execute(&format!("DELETE FROM {table} WHERE job_id = ?1"), [id.0])?;
                    }
                }
                tx.commit()?;
                Ok(deleted > 0)
            })
            .await
            .map_err(backend)
    }

    async fn lease(
        &self,
        server: &str,
        most: usize,
        lasting: Duration,
    ) -> Result<Option<Lease>, JobStoreError> {
        let server = server.to_owned();
        let lasting_ms = i64::try_from(lasting.as_millis()).unwrap_or(i64::MAX);
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let now = time::now_millis();
                let expires = now.saturating_add(lasting_ms);
                // An abandoned lease first, whole and under its id.
                let abandoned: Option<(i64, i64)> = tx
                    .query_row(
                        &format!(
                            "SELECT l.id, l.job_id FROM job_leases l JOIN jobs j ON j.id = l.job_id
                             WHERE l.expires_at_ms < ?1 AND j.status IN {RUNNABLE} ORDER BY l.id LIMIT 1"
                        ),
                        [now],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .optional()?;
                let (lease, job_id, pages) = if let Some((lease, job_id)) = abandoned {
                    tx.execute(
                        "UPDATE job_leases SET server = ?2, expires_at_ms = ?3 WHERE id = ?1",
                        params![lease, server, expires],
                    )?;
                    (lease, job_id, lease_pages(&tx, lease)?)
                } else {
                    // The account served longest ago, then its job served longest ago.
                    let next: Option<i64> = tx
                        .query_row(
                            &format!(
                                "SELECT j.id FROM jobs j
                                 WHERE j.status IN {RUNNABLE} AND EXISTS (
                                     SELECT 1 FROM job_pages p
                                     WHERE p.job_id = j.id AND p.done = 0 AND p.lease_id IS NULL)
                                 ORDER BY (SELECT max(k.last_leased_at_ms) FROM jobs k
                                           WHERE k.account_id = j.account_id AND k.status IN {RUNNABLE}),
                                          j.last_leased_at_ms, j.id
                                 LIMIT 1"
                            ),
                            [],
                            |r| r.get(0),
                        )
                        .optional()?;
                    let Some(job_id) = next else {
                        return Ok(None);
                    };
                    let lease: i64 = tx.query_row(
                        "INSERT INTO job_leases (job_id, server, expires_at_ms) VALUES (?1, ?2, ?3) RETURNING id",
                        params![job_id, server, expires],
                        |r| r.get(0),
                    )?;
                    tx.execute(
                        "UPDATE job_pages SET lease_id = ?1 WHERE job_id = ?2 AND page_no IN (
                             SELECT page_no FROM job_pages WHERE job_id = ?2 AND done = 0 AND lease_id IS NULL
                             ORDER BY page_no LIMIT ?3)",
                        params![lease, job_id, crate::int(most)],
                    )?;
                    (lease, job_id, lease_pages(&tx, lease)?)
                };
                tx.execute(
                    "UPDATE jobs SET status = 'running', started_at_ms = coalesce(started_at_ms, ?2),
                                     last_leased_at_ms = ?2
                     WHERE id = ?1",
                    params![job_id, now],
                )?;
                let job = read_job(&tx, job_id)?.ok_or(rusqlite::Error::QueryReturnedNoRows)?;
                tx.commit()?;
                Ok(Some(lease_of(lease, &job, &pages)))
            })
            .await
            .map_err(backend)
    }

    async fn give_back(&self, lease: i64) -> Result<(), JobStoreError> {
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                tx.execute("DELETE FROM job_leases WHERE id = ?1", [lease])?;
                tx.execute(
                    "UPDATE job_pages SET lease_id = NULL WHERE lease_id = ?1",
                    [lease],
                )?;
                tx.commit()
            })
            .await
            .map_err(backend)
    }

    async fn finish(
        &self,
        lease: i64,
        answers: Vec<(PageUrl, Answer)>,
        charged_millis: i64,
    ) -> Result<bool, JobStoreError> {
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let ended: Option<(i64, String)> = tx
                    .query_row(
                        "DELETE FROM job_leases WHERE id = ?1 RETURNING job_id, server",
                        [lease],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .optional()?;
                let Some((job_id, server)) = ended else {
                    return Ok(false);
                };
                let (mut pages, mut inputs, mut resolved) = (0_i64, 0_i64, 0_i64);
                {
                    let mut record = tx.prepare_cached(
                        "UPDATE job_pages SET done = 1, lease_id = NULL, found = ?3, record = ?4, source = ?5,
                                              fetched_at_ms = ?6, code = ?7, message = ?8, answered_by = ?9
                         WHERE lease_id = ?1 AND page = ?2 RETURNING inputs",
                    )?;
                    for (page, answer) in &answers {
                        let (found, text, source, fetched_at, code, message) = answer_columns(answer);
                        let named: Option<i64> = record
                            .query_row(
                                params![
                                    lease,
                                    page.as_str(),
                                    found,
                                    text,
                                    source,
                                    fetched_at,
                                    code,
                                    message,
                                    server
                                ],
                                |r| r.get(0),
                            )
                            .optional()?;
                        if let Some(named) = named {
                            pages += 1;
                            inputs += named;
                            if found {
                                resolved += named;
                            }
                        }
                    }
                }
                tx.execute(
                    "UPDATE job_pages SET lease_id = NULL WHERE lease_id = ?1",
                    [lease],
                )?;
                tx.execute(
                    "UPDATE jobs SET done = done + ?2, resolved = resolved + ?3, unresolved = unresolved + ?4,
                                     pages_done = pages_done + ?5, charged_millis = charged_millis + ?6
                     WHERE id = ?1",
                    params![job_id, inputs, resolved, inputs - resolved, pages, charged_millis],
                )?;
                tx.execute(
                    "UPDATE jobs SET status = 'done', paused_reason = NULL, finished_at_ms = ?2,
                         endings = endings + 1
                     WHERE id = ?1 AND pages_done >= pages AND status NOT IN ('done', 'cancelled')",
                    params![job_id, time::now_millis()],
                )?;
                tx.commit()?;
                Ok(true)
            })
            .await
            .map_err(backend)
    }

    async fn pause(&self, id: JobId, reason: &str) -> Result<(), JobStoreError> {
        let reason = reason.to_owned();
        self.pool
            .write(move |conn| {
                conn.execute(
                    &format!(
                        "UPDATE jobs SET status = 'paused', paused_reason = ?2, endings = endings + 1
                         WHERE id = ?1 AND status IN {RUNNABLE}"
                    ),
                    params![id.0, reason],
                )
            })
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn paused(&self) -> Result<Vec<(JobId, Tenant)>, JobStoreError> {
        self.pool
            .run(|conn| {
                conn.prepare_cached(
                    "SELECT id, account_id FROM jobs WHERE status = 'paused' ORDER BY id",
                )?
                .query_map([], |r| Ok((JobId(r.get(0)?), Tenant::from_key(r.get(1)?))))?
                .collect()
            })
            .await
            .map_err(backend)
    }

    async fn resume(&self, id: JobId) -> Result<(), JobStoreError> {
        self.pool
            .write(move |conn| {
                conn.execute(
                    "UPDATE jobs SET status = 'running', paused_reason = NULL WHERE id = ?1 AND status = 'paused'",
                    [id.0],
                )
            })
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn release_own(&self, server: &str) -> Result<u64, JobStoreError> {
        let server = server.to_owned();
        self.pool
            .write(move |conn| {
                // One process serves a SQLite file: every lease in it was this server's, whatever its name then.
                let _ = server;
                conn.execute(
                    "UPDATE job_leases SET expires_at_ms = 0 WHERE expires_at_ms > 0",
                    [],
                )
            })
            .await
            .map(|n| n as u64)
            .map_err(backend)
    }

    async fn inputs(
        &self,
        id: JobId,
        from: u64,
        limit: u32,
    ) -> Result<Vec<InputRow>, JobStoreError> {
        self.pool
            .run(move |conn| {
                conn.prepare_cached(
                    "SELECT i.position, i.original, p.done, p.found, p.record, p.source, p.fetched_at_ms,
                            p.code, p.message, i.metadata
                     FROM job_inputs i JOIN job_pages p ON p.job_id = i.job_id AND p.page_no = i.page_no
                     WHERE i.job_id = ?1 AND i.position >= ?2 ORDER BY i.position LIMIT ?3",
                )?
                .query_map(
                    params![id.0, i64::try_from(from).unwrap_or(i64::MAX), limit],
                    |r| {
                        Ok(InputRow {
                            position: count(r.get(0)?),
                            original: r.get(1)?,
                            answer: answer_from_columns(
                                r.get(2)?,
                                r.get(3)?,
                                r.get(4)?,
                                r.get::<_, Option<String>>(5)?.as_deref(),
                                r.get(6)?,
                                r.get::<_, Option<String>>(7)?.as_deref(),
                                r.get(8)?,
                            ),
                            metadata: r
                                .get::<_, Option<String>>(9)?
                                .and_then(InputMetadata::from_stored),
                        })
                    },
                )?
                .collect()
            })
            .await
            .map_err(backend)
    }

    async fn purge(&self, finished_before: jiff::Timestamp) -> Result<u64, JobStoreError> {
        let before = finished_before.as_millisecond();
        self.pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let old = "SELECT id FROM jobs WHERE finished_at_ms < ?1";
                for table in ["job_inputs", "job_pages", "job_leases"] {
                    tx.execute(
                        &format!("DELETE FROM {table} WHERE job_id IN ({old})"),
                        [before],
                    )?;
                }
                let purged = tx.execute("DELETE FROM jobs WHERE finished_at_ms < ?1", [before])?;
                tx.commit()?;
                Ok(purged as u64)
            })
            .await
            .map_err(backend)
    }

    async fn unannounced(&self, limit: u32) -> Result<Vec<(Job, i64)>, JobStoreError> {
        self.pool
            .run(move |conn| {
                conn.prepare_cached(&format!(
                    "SELECT {JOB_COLUMNS}, endings FROM jobs WHERE endings > announced ORDER BY id LIMIT ?1"
                ))?
                .query_map([limit], |row| Ok((job_row(row)?, row.get(JOB_COLUMN_COUNT)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()
            })
            .await
            .map_err(backend)
    }

    async fn announced(&self, id: JobId, ending: i64) -> Result<(), JobStoreError> {
        self.pool
            .write(move |conn| {
                conn.execute(
                    "UPDATE jobs SET announced = max(announced, ?2) WHERE id = ?1",
                    params![id.0, ending],
                )
            })
            .await
            .map_err(backend)?;
        Ok(())
    }
}
