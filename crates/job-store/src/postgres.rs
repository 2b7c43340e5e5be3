use std::time::{Duration, SystemTime};
use store_base::time;

use api_contract::{Includes, InputMetadata, RecordFields};
use company_model::Tenant;
use page_url::PageUrl;
use pg_pool::PgPool;
use pg_pool::tokio_postgres::{GenericClient, Row};

use crate::{
    Answer, Created, InputRow, Job, JobId, JobStatus, JobStore, JobStoreError, Lease, NewJob,
    QueueBound, answer_columns, answer_from_columns, distinct_pages, metadata_columns,
    metadata_columns_from, window_from_millis, window_millis,
};

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/postgres/0001_create_table_jobs.sql"),
    crate::FIELDS_AND_METADATA,
    crate::ENDINGS,
    crate::INCLUDE_PARTS,
    crate::CALLBACK,
];

const JOB_COLUMNS: &str = "id, account_id, key_id, status, paused_reason, window_ms, total, done, resolved, \
                           unresolved, pages, pages_done, charged_millis, created_at, started_at, finished_at, \
                           fields, metadata_columns, include_parts, callback";
/// How many columns [`JOB_COLUMNS`] names: the index of a column read after them.
const JOB_COLUMN_COUNT: usize = 20;

/// Statuses whose pages may be leased.
const RUNNABLE: &str = "('queued', 'running')";

/// Rows written per statement when a job is created.
const ROWS_PER_INSERT: usize = 10_000;

/// Jobs in a PostgreSQL database (tables `jobs`, `job_pages`, `job_inputs`, `job_leases`), shared by every server
/// on it: leases are taken with `FOR UPDATE SKIP LOCKED`, so two servers never take the same pages, and an
/// abandoned lease is taken by one server only (its expiry is re-checked on the row it locks).
#[derive(Clone, Debug)]
pub struct PgJobStore {
    pool: PgPool,
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> JobStoreError {
    JobStoreError(pg_pool::boxed_error(error))
}

fn count(value: i64) -> u64 {
    u64::try_from(value).unwrap_or_default()
}

fn job_row(row: &Row) -> Job {
    Job {
        id: JobId(row.get(0)),
        tenant: Tenant::from_key(row.get(1)),
        key_id: row.get(2),
        status: JobStatus::parse(row.get(3)).unwrap_or(JobStatus::Running),
        paused_reason: row.get(4),
        window: window_from_millis(row.get(5)),
        total: count(row.get(6)),
        done: count(row.get(7)),
        resolved: count(row.get(8)),
        unresolved: count(row.get(9)),
        pages: count(row.get(10)),
        pages_done: count(row.get(11)),
        charged_millis: row.get(12),
        created_at: time::from_system(row.get(13)),
        started_at: row.get::<_, Option<SystemTime>>(14).map(time::from_system),
        finished_at: row.get::<_, Option<SystemTime>>(15).map(time::from_system),
        fields: row
            .get::<_, Option<&str>>(16)
            .map(RecordFields::from_stored),
        metadata_columns: metadata_columns_from(row.get(17)),
        include: Includes::from_names(row.get::<_, Option<&str>>(18).unwrap_or_default()),
        callback: crate::callback_from(row.get(19)),
    }
}

async fn read_job(
    client: &impl GenericClient,
    id: i64,
) -> Result<Option<Job>, pg_pool::tokio_postgres::Error> {
    Ok(client
        .query_opt(
            &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = $1"),
            &[&id],
        )
        .await?
        .as_ref()
        .map(job_row))
}

impl PgJobStore {
    /// Uses a pool on the database (the service opens one and shares it between its stores) and migrates the
    /// tables.
    ///
    /// # Errors
    /// [`JobStoreError`] when the tables cannot be migrated.
    pub async fn with_pool(pool: PgPool) -> Result<Self, JobStoreError> {
        pool.migrate("job-store", MIGRATIONS)
            .await
            .map_err(backend)?;
        Ok(Self { pool })
    }
}

#[async_trait::async_trait]
impl JobStore for PgJobStore {
    async fn create(&self, job: NewJob, bound: QueueBound) -> Result<Created, JobStoreError> {
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client.transaction().await.map_err(backend)?;
        // One submission per account at a time, so the counts below are the counts the insert adds to.
        tx.execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('jobs:' || $1::BIGINT::TEXT, 0))",
            &[&job.tenant.key()],
        )
        .await
        .map_err(backend)?;
        let held = tx
            .query_one(&crate::open_counts_sql("$1"), &[&job.tenant.key()])
            .await
            .map_err(backend)?;
        let held: (i64, i64) = (held.get(0), held.get(1));
        if let Some(refused) = crate::admit(bound, held, job.urls.len()) {
            return Ok(refused);
        }
        let (pages, page_of) = distinct_pages(&job.urls);
        let id: i64 = tx
            .query_one(
                "INSERT INTO jobs (account_id, key_id, status, window_ms, total, pages, fields, metadata_columns,
                                   include_parts, callback)
                 VALUES ($1, $2, 'queued', $3, $4, $5, $6, $7, $8, $9) RETURNING id",
                &[
                    &job.tenant.key(),
                    &job.key_id,
                    &window_millis(job.window),
                    &(crate::int(job.urls.len())),
                    &(crate::int(pages.len())),
                    &job.fields.as_ref().map(RecordFields::to_stored),
                    &metadata_columns(&job.metadata),
                    &job.include.to_names(),
                    &crate::callback_column(job.callback.as_ref()),
                ],
            )
            .await
            .map_err(backend)?
            .get(0);
        for (first, chunk) in pages.chunks(ROWS_PER_INSERT).enumerate() {
            let numbers: Vec<i64> = (0..chunk.len())
                .map(|n| crate::int(first * ROWS_PER_INSERT + n))
                .collect();
            let urls: Vec<&str> = chunk.iter().map(|(page, _)| page.as_str()).collect();
            let inputs: Vec<i64> = chunk.iter().map(|(_, inputs)| *inputs).collect();
            tx.execute(
                "INSERT INTO job_pages (job_id, page_no, page, inputs)
                 SELECT $1, * FROM unnest($2::BIGINT[], $3::TEXT[], $4::BIGINT[])",
                &[&id, &numbers, &urls, &inputs],
            )
            .await
            .map_err(backend)?;
        }
        for (first, chunk) in job.urls.chunks(ROWS_PER_INSERT).enumerate() {
            let start = first * ROWS_PER_INSERT;
            let positions: Vec<i64> = (0..chunk.len()).map(|n| crate::int(start + n)).collect();
            let originals: Vec<&str> = chunk
                .iter()
                .map(|(original, _)| original.as_str())
                .collect();
            let page_nos = &page_of[start..start + chunk.len()];
            let metadata: Vec<Option<&str>> = (start..start + chunk.len())
                .map(|position| {
                    job.metadata
                        .get(position)
                        .and_then(Option::as_ref)
                        .map(InputMetadata::as_str)
                })
                .collect();
            tx.execute(
                "INSERT INTO job_inputs (job_id, position, original, page_no, metadata)
                 SELECT $1, * FROM unnest($2::BIGINT[], $3::TEXT[], $4::BIGINT[], $5::TEXT[])",
                &[&id, &positions, &originals, &page_nos, &metadata],
            )
            .await
            .map_err(backend)?;
        }
        let created = read_job(&*tx, id).await.map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        created
            .map(|job| Created::Job(Box::new(job)))
            .ok_or_else(|| JobStoreError("the new job was not read back".into()))
    }

    async fn job(&self, tenant: Tenant, id: JobId) -> Result<Option<Job>, JobStoreError> {
        let row = self
            .pool
            .query_opt(
                &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = $1 AND account_id = $2"),
                &[&id.0, &tenant.key()],
            )
            .await
            .map_err(backend)?;
        Ok(row.as_ref().map(job_row))
    }

    async fn jobs(
        &self,
        tenant: Tenant,
        before: Option<JobId>,
        limit: u32,
    ) -> Result<Vec<Job>, JobStoreError> {
        let rows = self
            .pool
            .query(
                &format!(
                    "SELECT {JOB_COLUMNS} FROM jobs WHERE account_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3"
                ),
                &[
                    &tenant.key(),
                    &before.map_or(i64::MAX, |b| b.0),
                    &i64::from(limit),
                ],
            )
            .await
            .map_err(backend)?;
        Ok(rows.iter().map(job_row).collect())
    }

    async fn cancel(&self, tenant: Tenant, id: JobId) -> Result<Option<Job>, JobStoreError> {
        self.pool
            .execute(
                "UPDATE jobs SET status = 'cancelled', paused_reason = NULL, finished_at = now(),
                     endings = endings + 1
                 WHERE id = $1 AND account_id = $2 AND status NOT IN ('done', 'cancelled')",
                &[&id.0, &tenant.key()],
            )
            .await
            .map_err(backend)?;
        self.job(tenant, id).await
    }

    async fn delete(&self, tenant: Tenant, id: JobId) -> Result<bool, JobStoreError> {
        let row = self
            .pool
            .query_one(
                "WITH gone AS (DELETE FROM jobs WHERE id = $1 AND account_id = $2 RETURNING id),
                      inputs AS (DELETE FROM job_inputs WHERE job_id IN (SELECT id FROM gone)),
                      pages AS (DELETE FROM job_pages WHERE job_id IN (SELECT id FROM gone)),
                      leases AS (DELETE FROM job_leases WHERE job_id IN (SELECT id FROM gone))
                 SELECT count(*)::BIGINT FROM gone",
                &[&id.0, &tenant.key()],
            )
            .await
            .map_err(backend)?;
        Ok(count(row.get(0)) > 0)
    }

    async fn lease(
        &self,
        server: &str,
        most: usize,
        lasting: Duration,
    ) -> Result<Option<Lease>, JobStoreError> {
        let lasting_ms = i64::try_from(lasting.as_millis()).unwrap_or(i64::MAX);
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client.transaction().await.map_err(backend)?;
        // An abandoned lease first, whole and under its id; the row lock makes one server its taker.
        let abandoned = tx
            .query_opt(
                &format!(
                    "UPDATE job_leases SET server = $1, expires_at = now() + $2 * interval '1 millisecond'
                     WHERE id = (
                         SELECT l.id FROM job_leases l JOIN jobs j ON j.id = l.job_id
                         WHERE l.expires_at < now() AND j.status IN {RUNNABLE}
                         ORDER BY l.id LIMIT 1 FOR UPDATE OF l SKIP LOCKED)
                     AND expires_at < now()
                     RETURNING id, job_id"
                ),
                &[&server, &(lasting_ms as f64)],
            )
            .await
            .map_err(backend)?;
        let (lease, job_id) = if let Some(row) = abandoned {
            (row.get::<_, i64>(0), row.get::<_, i64>(1))
        } else {
            // The account served longest ago, then its job served longest ago.
            let next = tx
                .query_opt(
                    &format!(
                        "SELECT j.id FROM jobs j
                         WHERE j.status IN {RUNNABLE} AND EXISTS (
                             SELECT 1 FROM job_pages p WHERE p.job_id = j.id AND NOT p.done AND p.lease_id IS NULL)
                         ORDER BY (SELECT max(k.last_leased_at) FROM jobs k
                                   WHERE k.account_id = j.account_id AND k.status IN {RUNNABLE}),
                                  j.last_leased_at, j.id
                         LIMIT 1"
                    ),
                    &[],
                )
                .await
                .map_err(backend)?;
            let Some(next) = next else {
                return Ok(None);
            };
            let job_id: i64 = next.get(0);
            let lease: i64 = tx
                .query_one(
                    "INSERT INTO job_leases (job_id, server, expires_at)
                     VALUES ($1, $2, now() + $3 * interval '1 millisecond') RETURNING id",
                    &[&job_id, &server, &(lasting_ms as f64)],
                )
                .await
                .map_err(backend)?
                .get(0);
            let taken = tx
                .execute(
                    "UPDATE job_pages SET lease_id = $1 WHERE job_id = $2 AND page_no IN (
                         SELECT page_no FROM job_pages WHERE job_id = $2 AND NOT done AND lease_id IS NULL
                         ORDER BY page_no LIMIT $3 FOR UPDATE SKIP LOCKED)",
                    &[&lease, &job_id, &(crate::int(most))],
                )
                .await
                .map_err(backend)?;
            if taken == 0 {
                // Another server took the last pages first.
                return Ok(None);
            }
            (lease, job_id)
        };
        let pages: Vec<String> = tx
            .query(
                "SELECT page FROM job_pages WHERE lease_id = $1 ORDER BY page_no",
                &[&lease],
            )
            .await
            .map_err(backend)?
            .iter()
            .map(|row| row.get(0))
            .collect();
        tx.execute(
            "UPDATE jobs SET status = 'running', started_at = coalesce(started_at, now()), last_leased_at = now()
             WHERE id = $1 AND status IN ('queued', 'running')",
            &[&job_id],
        )
        .await
        .map_err(backend)?;
        let job = read_job(&*tx, job_id)
            .await
            .map_err(backend)?
            .ok_or_else(|| JobStoreError("a leased job disappeared".into()))?;
        tx.commit().await.map_err(backend)?;
        Ok(Some(Lease {
            id: lease,
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
        }))
    }

    async fn give_back(&self, lease: i64) -> Result<(), JobStoreError> {
        self.pool
            .execute(
                "WITH ended AS (DELETE FROM job_leases WHERE id = $1)
                 UPDATE job_pages SET lease_id = NULL WHERE lease_id = $1",
                &[&lease],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn finish(
        &self,
        lease: i64,
        answers: Vec<(PageUrl, Answer)>,
        charged_millis: i64,
    ) -> Result<bool, JobStoreError> {
        let mut client = self.pool.client().await.map_err(backend)?;
        let tx = client.transaction().await.map_err(backend)?;
        let Some(ended) = tx
            .query_opt(
                "DELETE FROM job_leases WHERE id = $1 RETURNING job_id, server",
                &[&lease],
            )
            .await
            .map_err(backend)?
        else {
            return Ok(false);
        };
        let (job_id, server): (i64, String) = (ended.get(0), ended.get(1));
        let columns: Vec<_> = answers
            .iter()
            .map(|(page, answer)| (page.as_str(), answer_columns(answer)))
            .collect();
        let pages: Vec<&str> = columns.iter().map(|(page, _)| *page).collect();
        let found: Vec<bool> = columns.iter().map(|(_, c)| c.0).collect();
        let records: Vec<Option<&str>> = columns.iter().map(|(_, c)| c.1.as_deref()).collect();
        let sources: Vec<Option<&str>> = columns.iter().map(|(_, c)| c.2).collect();
        let fetched: Vec<Option<i64>> = columns.iter().map(|(_, c)| c.3).collect();
        let codes: Vec<Option<&str>> = columns.iter().map(|(_, c)| c.4).collect();
        let messages: Vec<Option<&str>> = columns.iter().map(|(_, c)| c.5.as_deref()).collect();
        let counted = tx
            .query_one(
                "WITH answered AS (
                     UPDATE job_pages p SET done = true, lease_id = NULL, found = a.found, record = a.record,
                                            source = a.source, fetched_at_ms = a.fetched_at_ms, code = a.code,
                                            message = a.message, answered_by = $9
                     FROM unnest($2::TEXT[], $3::BOOLEAN[], $4::TEXT[], $5::TEXT[], $6::BIGINT[], $7::TEXT[],
                                 $8::TEXT[])
                          AS a(page, found, record, source, fetched_at_ms, code, message)
                     WHERE p.lease_id = $1 AND p.page = a.page
                     RETURNING p.inputs, a.found
                 )
                 SELECT count(*)::BIGINT, coalesce(sum(inputs), 0)::BIGINT,
                        coalesce(sum(inputs) FILTER (WHERE found), 0)::BIGINT
                 FROM answered",
                &[
                    &lease, &pages, &found, &records, &sources, &fetched, &codes, &messages, &server,
                ],
            )
            .await
            .map_err(backend)?;
        let (pages_done, inputs, resolved): (i64, i64, i64) =
            (counted.get(0), counted.get(1), counted.get(2));
        tx.execute(
            "UPDATE job_pages SET lease_id = NULL WHERE lease_id = $1",
            &[&lease],
        )
        .await
        .map_err(backend)?;
        tx.execute(
            "UPDATE jobs SET done = done + $2, resolved = resolved + $3, unresolved = unresolved + $4,
                             pages_done = pages_done + $5, charged_millis = charged_millis + $6,
                             status = CASE WHEN pages_done + $5 >= pages AND status NOT IN ('done', 'cancelled')
                                           THEN 'done' ELSE status END,
                             endings = CASE WHEN pages_done + $5 >= pages AND status NOT IN ('done', 'cancelled')
                                            THEN endings + 1 ELSE endings END,
                             paused_reason = CASE WHEN pages_done + $5 >= pages THEN NULL ELSE paused_reason END,
                             finished_at = CASE WHEN pages_done + $5 >= pages AND finished_at IS NULL
                                                THEN now() ELSE finished_at END
             WHERE id = $1",
            &[
                &job_id,
                &inputs,
                &resolved,
                &(inputs - resolved),
                &pages_done,
                &charged_millis,
            ],
        )
        .await
        .map_err(backend)?;
        tx.commit().await.map_err(backend)?;
        Ok(true)
    }

    async fn pause(&self, id: JobId, reason: &str) -> Result<(), JobStoreError> {
        self.pool
            .execute(
                &format!(
                    "UPDATE jobs SET status = 'paused', paused_reason = $2, endings = endings + 1
                     WHERE id = $1 AND status IN {RUNNABLE}"
                ),
                &[&id.0, &reason],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn paused(&self) -> Result<Vec<(JobId, Tenant)>, JobStoreError> {
        let rows = self
            .pool
            .query(
                "SELECT id, account_id FROM jobs WHERE status = 'paused' ORDER BY id",
                &[],
            )
            .await
            .map_err(backend)?;
        Ok(rows
            .iter()
            .map(|row| (JobId(row.get(0)), Tenant::from_key(row.get(1))))
            .collect())
    }

    async fn resume(&self, id: JobId) -> Result<(), JobStoreError> {
        self.pool
            .execute(
                "UPDATE jobs SET status = 'running', paused_reason = NULL WHERE id = $1 AND status = 'paused'",
                &[&id.0],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn release_own(&self, server: &str) -> Result<u64, JobStoreError> {
        if server.is_empty() {
            return Ok(0);
        }
        self.pool
            .execute(
                "UPDATE job_leases SET expires_at = '-infinity' WHERE server = $1",
                &[&server],
            )
            .await
            .map_err(backend)
    }

    async fn inputs(
        &self,
        id: JobId,
        from: u64,
        limit: u32,
    ) -> Result<Vec<InputRow>, JobStoreError> {
        let rows = self
            .pool
            .query(
                "SELECT i.position, i.original, p.done, p.found, p.record, p.source, p.fetched_at_ms, p.code,
                        p.message, i.metadata
                 FROM job_inputs i JOIN job_pages p ON p.job_id = i.job_id AND p.page_no = i.page_no
                 WHERE i.job_id = $1 AND i.position >= $2 ORDER BY i.position LIMIT $3",
                &[
                    &id.0,
                    &i64::try_from(from).unwrap_or(i64::MAX),
                    &i64::from(limit),
                ],
            )
            .await
            .map_err(backend)?;
        Ok(rows
            .iter()
            .map(|row| InputRow {
                position: count(row.get(0)),
                original: row.get(1),
                answer: answer_from_columns(
                    row.get(2),
                    row.get(3),
                    row.get(4),
                    row.get(5),
                    row.get(6),
                    row.get(7),
                    row.get(8),
                ),
                metadata: row
                    .get::<_, Option<String>>(9)
                    .and_then(InputMetadata::from_stored),
            })
            .collect())
    }

    async fn purge(&self, finished_before: jiff::Timestamp) -> Result<u64, JobStoreError> {
        let before = SystemTime::from(finished_before);
        let row = self
            .pool
            .query_one(
                "WITH old AS (DELETE FROM jobs WHERE finished_at < $1 RETURNING id),
                      inputs AS (DELETE FROM job_inputs WHERE job_id IN (SELECT id FROM old)),
                      pages AS (DELETE FROM job_pages WHERE job_id IN (SELECT id FROM old)),
                      leases AS (DELETE FROM job_leases WHERE job_id IN (SELECT id FROM old))
                 SELECT count(*)::BIGINT FROM old",
                &[&before],
            )
            .await
            .map_err(backend)?;
        Ok(count(row.get(0)))
    }

    async fn unannounced(&self, limit: u32) -> Result<Vec<(Job, i64)>, JobStoreError> {
        let rows = self
            .pool
            .query(
                &format!(
                    "SELECT {JOB_COLUMNS}, endings FROM jobs WHERE endings > announced ORDER BY id LIMIT $1"
                ),
                &[&i64::from(limit)],
            )
            .await
            .map_err(backend)?;
        Ok(rows
            .iter()
            .map(|row| (job_row(row), row.get::<_, i64>(JOB_COLUMN_COUNT)))
            .collect())
    }

    async fn announced(&self, id: JobId, ending: i64) -> Result<(), JobStoreError> {
        self.pool
            .execute(
                "UPDATE jobs SET announced = greatest(announced, $2) WHERE id = $1",
                &[&id.0, &ending],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }
}
