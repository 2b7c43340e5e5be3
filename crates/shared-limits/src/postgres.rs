use std::time::Duration;

use pg_pool::PgPool;

use crate::{Admission, LimitError, LimitStore, Rate, Taken, Ticket};

/// Tables `limit_buckets` (a theoretical arrival time per rate or pace) and `limit_admissions` (units in flight
/// per cap), and the functions that change them in one round trip each. Times are the database's clock in
/// microseconds, so every server reads the same one. `limit_take` is [`crate::gcra`] in SQL.
const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/postgres/0001_create_table_limit_buckets.sql"),
    include_str!("../migrations/postgres/0002_drop_function_limit_take.sql"),
];

/// Limits counted in the PostgreSQL database every server shares (tables `limit_buckets`, `limit_admissions`):
/// each question is one statement, so one round trip, atomic among all servers. An admission of a server that
/// died stops counting at its end time.
#[derive(Clone, Debug)]
pub struct PgLimits {
    pool: PgPool,
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> LimitError {
    LimitError::Backend(pg_pool::boxed_error(error))
}

fn micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

fn duration(micros: i64) -> Duration {
    Duration::from_micros(u64::try_from(micros).unwrap_or(0))
}

impl PgLimits {
    /// Uses a pool on the database (the service shares one between its stores) and migrates the tables.
    ///
    /// # Errors
    /// [`LimitError::Backend`] when the tables cannot be migrated.
    pub async fn with_pool(pool: PgPool) -> Result<Self, LimitError> {
        pool.migrate("shared-limits", MIGRATIONS)
            .await
            .map_err(backend)?;
        Ok(Self { pool })
    }
}

#[async_trait::async_trait]
impl LimitStore for PgLimits {
    async fn take(&self, name: &str, rate: Rate, wanted: u32) -> Result<Taken, LimitError> {
        let Some(interval) = rate.interval() else {
            return Ok(Taken::Granted {
                tokens: wanted.max(1),
                backlog: Duration::ZERO,
            });
        };
        let burst = i32::try_from(rate.burst()).unwrap_or(i32::MAX);
        let wanted = i32::try_from(wanted.max(1)).unwrap_or(i32::MAX);
        let row = self
            .pool
            .query_one(
                "SELECT granted, wait_us, backlog_us FROM limit_take($1, $2, $3, $4)",
                &[&name, &micros(interval), &burst, &wanted],
            )
            .await
            .map_err(backend)?;
        let granted: i32 = row.get(0);
        Ok(match u32::try_from(granted) {
            Ok(tokens) if tokens >= 1 => Taken::Granted {
                tokens,
                backlog: duration(row.get(2)),
            },
            _ => Taken::Wait(duration(row.get(1))),
        })
    }

    async fn give_back(&self, name: &str, rate: Rate, tokens: u32) -> Result<(), LimitError> {
        let Some(interval) = rate.interval() else {
            return Ok(());
        };
        self.pool
            .execute(
                "UPDATE limit_buckets SET tat_us = tat_us - $2 WHERE name = $1",
                &[&name, &(i64::from(tokens) * micros(interval))],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn next_start(&self, name: &str, interval: Duration) -> Result<Duration, LimitError> {
        let row = self
            .pool
            .query_one(
                "SELECT limit_next_start($1, $2)",
                &[&name, &micros(interval)],
            )
            .await
            .map_err(backend)?;
        Ok(duration(row.get(0)))
    }

    async fn defer(&self, name: &str, delay: Duration) -> Result<(), LimitError> {
        self.pool
            .execute(
                "INSERT INTO limit_buckets (name, tat_us) VALUES ($1, limit_now_us() + $2)
                 ON CONFLICT (name) DO UPDATE SET tat_us = greatest(limit_buckets.tat_us, EXCLUDED.tat_us)",
                &[&name, &micros(delay)],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn admit(
        &self,
        name: &str,
        units: u32,
        most: u32,
        lasting: Duration,
    ) -> Result<Admission, LimitError> {
        let units = i32::try_from(units).unwrap_or(i32::MAX);
        let most = i32::try_from(most).unwrap_or(i32::MAX);
        let row = self
            .pool
            .query_one(
                "SELECT ticket, in_flight, retry_us FROM limit_admit($1, $2, $3, $4)",
                &[&name, &units, &most, &micros(lasting)],
            )
            .await
            .map_err(backend)?;
        Ok(match row.get::<_, Option<i64>>(0) {
            Some(ticket) => Admission::Admitted(Ticket(ticket)),
            None => Admission::AtCap {
                in_flight: u32::try_from(row.get::<_, i64>(1)).unwrap_or(u32::MAX),
                retry_after: duration(row.get(2)),
            },
        })
    }

    async fn leave(&self, ticket: Ticket) -> Result<(), LimitError> {
        self.pool
            .execute("DELETE FROM limit_admissions WHERE id = $1", &[&ticket.0])
            .await
            .map_err(backend)?;
        Ok(())
    }

    fn is_shared(&self) -> bool {
        true
    }
}
