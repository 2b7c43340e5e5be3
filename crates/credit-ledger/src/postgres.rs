use std::time::SystemTime;
use store_base::time;

use pg_pool::PgPool;
use pg_pool::tokio_postgres::Row;

use crate::{
    Account, AccountId, BalanceAlert, Charge, Credits, DailyUsage, EntryKind, Ledger, LedgerEntry,
    LedgerError, QuotaOverrides, Reservation, Tenant, UsageCounts,
};

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/postgres/0001_create_table_accounts.sql"),
    include_str!("../migrations/postgres/0002_alter_table_accounts.sql"),
    include_str!("../migrations/postgres/0003_create_function_ledger_charge_batch.sql"),
    include_str!("../migrations/postgres/0004_alter_table_ledger_entries.sql"),
    include_str!("../migrations/postgres/0005_alter_table_accounts.sql"),
    include_str!("../migrations/postgres/0006_alter_table_accounts.sql"),
];

const ACCOUNT_COLUMNS: &str = "id, name, balance_millis, created_at, low_balance_millis, quotas";

/// Accounts, credit holds and ledger rows in a PostgreSQL database (tables `accounts`, `credit_holds`,
/// `ledger_entries`), shared by every server on it.
///
/// Holds are rows, so a reserve on one server counts the holds of requests in flight on every other; their sum
/// is kept on the account's row (`held_millis`). Every billing step is one statement, so one round trip:
/// - a reserve raises `held_millis` only where `balance_millis - held_millis` covers the amount, and inserts
///   the hold;
/// - a settle deletes the hold, lowers `held_millis` and the balance, and writes the ledger row;
/// - [`Ledger::charge`] (every answer known before billing) checks and charges without a hold.
///
/// The update of the account's row is the lock: PostgreSQL re-checks the condition on the newest row when two
/// statements meet, so concurrent requests on one account, on any number of servers, never overdraw it, and a
/// charge is written once or not at all (a hold is deleted by exactly one settle, release or sweep).
///
/// Each hold records the server that made it ([`PgLedger::for_server`]), so a restarted server frees its own at
/// once ([`Ledger::release_own`]); a server that never comes back has its holds freed by the stale sweep.
///
/// Immediate charges ([`Ledger::charge`], the stored path) go through one writer per `PgLedger` (and its
/// clones): the charges that arrive while one batch is being written are written together, in one call and
/// one commit. Every request on an account updates the account's row, and each commit waits for its write-ahead
/// log flush, so one charge per commit would cap an account at roughly one charge per flush; batching keeps the
/// rules (each charge checked and applied alone, in order) and shares the flush. Nothing waits to fill a batch.
#[derive(Clone, Debug)]
pub struct PgLedger {
    pool: PgPool,
    server: String,
    charges: tokio::sync::mpsc::UnboundedSender<PendingCharge>,
}

/// An immediate charge waiting for the writer.
struct PendingCharge {
    account: AccountId,
    required: Credits,
    charge: Charge,
    done: tokio::sync::oneshot::Sender<Result<Credits, LedgerError>>,
}

impl std::fmt::Debug for PendingCharge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "charge of {} on {}", self.charge.amount, self.account)
    }
}

/// The most charges written in one call.
const MOST_PER_BATCH: usize = 256;

/// The writer: takes what is queued (at least one charge), writes it in one call, answers each, repeats; ends
/// when every `PgLedger` clone is gone.
async fn write_charges(
    pool: PgPool,
    mut queue: tokio::sync::mpsc::UnboundedReceiver<PendingCharge>,
) {
    while let Some(first) = queue.recv().await {
        let mut batch = vec![first];
        while batch.len() < MOST_PER_BATCH {
            match queue.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        // One lock order for every server's batches: by account.
        batch.sort_by_key(|pending| pending.account.0);
        let column = |f: &dyn Fn(&PendingCharge) -> i64| batch.iter().map(f).collect::<Vec<i64>>();
        let accounts = column(&|p| p.account.0);
        let required = column(&|p| p.required.millis());
        let amounts = column(&|p| p.charge.amount.millis());
        let requested = column(&|p| i64::from(p.charge.urls_requested));
        let returned = column(&|p| i64::from(p.charge.urls_returned));
        let keys: Vec<Option<i64>> = batch.iter().map(|p| p.charge.key_id).collect();
        let live: Vec<bool> = batch.iter().map(|p| p.charge.live).collect();
        let references: Vec<Option<&str>> = batch
            .iter()
            .map(|p| p.charge.reference.as_deref())
            .collect();
        let written = pool
            .query(
                "SELECT balance, available FROM ledger_charge_batch($1, $2, $3, $4, $5, $6, $7, $8)",
                &[
                    &accounts,
                    &required,
                    &amounts,
                    &keys,
                    &requested,
                    &returned,
                    &live,
                    &references,
                ],
            )
            .await;
        match written {
            Ok(rows) if rows.len() == batch.len() => {
                for (pending, row) in batch.into_iter().zip(rows) {
                    let outcome = match (row.get::<_, Option<i64>>(0), row.get::<_, Option<i64>>(1))
                    {
                        (Some(balance), _) => Ok(Credits::from_millis(balance)),
                        (None, Some(available)) => Err(LedgerError::InsufficientCredits {
                            available: Credits::from_millis(available),
                            required: pending.required,
                        }),
                        (None, None) => {
                            Err(LedgerError::UnknownAccount(pending.account.to_string()))
                        }
                    };
                    let _ = pending.done.send(outcome);
                }
            }
            // The call is one transaction: nothing of the batch was written. Each caller gets the failure, marked
            // unavailable when the database is (an answer of 503 `database_unavailable`).
            failed => {
                let (text, unavailable) = match &failed {
                    Ok(rows) => (
                        format!("{} rows for {} charges", rows.len(), batch.len()),
                        false,
                    ),
                    Err(error) => (error.to_string(), error.is_unavailable()),
                };
                for pending in batch {
                    let error = if unavailable {
                        backend(pg_pool::PgError::Unavailable(text.clone()))
                    } else {
                        LedgerError::Backend(text.clone().into())
                    };
                    let _ = pending.done.send(Err(error));
                }
            }
        }
    }
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> LedgerError {
    LedgerError::Backend(pg_pool::boxed_error(error))
}

fn account_row(row: &Row) -> Account {
    Account {
        id: AccountId(row.get(0)),
        name: row.get(1),
        balance: Credits::from_millis(row.get(2)),
        created_at: time::from_system(row.get(3)),
        low_balance_threshold: row.get::<_, Option<i64>>(4).map(Credits::from_millis),
        quotas: QuotaOverrides::from_stored(row.get::<_, Option<String>>(5).as_deref()),
    }
}

fn count(value: i64) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

impl PgLedger {
    /// Uses a pool on the database (the service opens one and shares it between its stores) and migrates the
    /// tables.
    ///
    /// # Errors
    /// [`LedgerError::Backend`] when the tables cannot be migrated.
    pub async fn with_pool(pool: PgPool) -> Result<Self, LedgerError> {
        pool.migrate("credit-ledger", MIGRATIONS)
            .await
            .map_err(backend)?;
        let (charges, queue) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(write_charges(pool.clone(), queue));
        Ok(Self {
            pool,
            server: String::new(),
            charges,
        })
    }

    /// Tags the holds this ledger makes with `server`, a name unique among the servers on the database and
    /// stable across restarts of the same server (e.g. host and port). Without it holds carry an empty name,
    /// and [`Ledger::release_own`] frees nothing.
    #[must_use]
    pub fn for_server(mut self, server: &str) -> Self {
        server.clone_into(&mut self.server);
        self
    }

    async fn client(&self) -> Result<pg_pool::Object, LedgerError> {
        self.pool.client().await.map_err(backend)
    }

    /// Deletes the holds that match `condition` (on `$1`) and takes them off their accounts' `held_millis`, in
    /// one statement; returns how many.
    async fn free_holds(
        &self,
        condition: &str,
        value: &(dyn pg_pool::tokio_postgres::types::ToSql + Sync),
    ) -> Result<u64, LedgerError> {
        let row = self
            .pool
            .query_one(
                &format!(
                    "WITH freed AS (
                         DELETE FROM credit_holds WHERE {condition} RETURNING account_id, amount_millis
                     ), per_account AS (
                         SELECT account_id, sum(amount_millis) AS millis, count(*) AS holds
                         FROM freed GROUP BY account_id
                     ), lowered AS (
                         UPDATE accounts SET held_millis = held_millis - per_account.millis
                         FROM per_account WHERE accounts.id = per_account.account_id
                     )
                     SELECT coalesce(sum(holds), 0)::BIGINT FROM per_account"
                ),
                &[value],
            )
            .await
            .map_err(backend)?;
        Ok(u64::try_from(row.get::<_, i64>(0)).unwrap_or_default())
    }

    async fn one_account(
        &self,
        sql: &str,
        key: &(dyn pg_pool::tokio_postgres::types::ToSql + Sync),
    ) -> Result<Option<Account>, LedgerError> {
        let row = self.pool.query_opt(sql, &[key]).await.map_err(backend)?;
        Ok(row.as_ref().map(account_row))
    }
}

#[async_trait::async_trait]
impl Ledger for PgLedger {
    async fn ensure_account(&self, name: &str) -> Result<Account, LedgerError> {
        let client = self.client().await?;
        client
            .execute(
                "INSERT INTO accounts (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
                &[&name],
            )
            .await
            .map_err(backend)?;
        let row = client
            .query_one(
                &format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE name = $1"),
                &[&name],
            )
            .await
            .map_err(backend)?;
        Ok(account_row(&row))
    }

    async fn account_by_name(&self, name: &str) -> Result<Option<Account>, LedgerError> {
        self.one_account(
            &format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE name = $1"),
            &name,
        )
        .await
    }

    async fn account(&self, id: AccountId) -> Result<Option<Account>, LedgerError> {
        self.one_account(
            &format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE id = $1"),
            &id.0,
        )
        .await
    }

    async fn accounts(&self) -> Result<Vec<Account>, LedgerError> {
        let client = self.client().await?;
        let rows = client
            .query(
                &format!("SELECT {ACCOUNT_COLUMNS} FROM accounts ORDER BY name"),
                &[],
            )
            .await
            .map_err(backend)?;
        Ok(rows.iter().map(account_row).collect())
    }

    async fn set_low_balance_threshold(
        &self,
        tenant: Tenant,
        threshold: Option<Credits>,
    ) -> Result<Account, LedgerError> {
        let account = crate::live_only(tenant)?;
        crate::check_threshold(threshold)?;
        let row = self
            .pool
            .query_opt(
                &format!(
                    "UPDATE accounts SET low_balance_millis = $1 WHERE id = $2 RETURNING {ACCOUNT_COLUMNS}"
                ),
                &[&threshold.map(Credits::millis), &account.0],
            )
            .await
            .map_err(backend)?;
        row.as_ref()
            .map(account_row)
            .ok_or_else(|| LedgerError::UnknownAccount(account.to_string()))
    }

    async fn set_quotas(
        &self,
        account: AccountId,
        quotas: QuotaOverrides,
    ) -> Result<Account, LedgerError> {
        let row = self
            .pool
            .query_opt(
                &format!(
                    "UPDATE accounts SET quotas = $1 WHERE id = $2 RETURNING {ACCOUNT_COLUMNS}"
                ),
                &[&quotas.to_stored(), &account.0],
            )
            .await
            .map_err(backend)?;
        row.as_ref()
            .map(account_row)
            .ok_or_else(|| LedgerError::UnknownAccount(account.to_string()))
    }

    async fn balance_alerts(&self, limit: u32) -> Result<Vec<BalanceAlert>, LedgerError> {
        let rows = self
            .pool
            .query(
                "SELECT id, low_alerts, low_alert_balance_millis, low_alert_threshold_millis, low_alert_at
                 FROM accounts WHERE low_alerts > low_alerts_announced ORDER BY low_alert_at LIMIT $1",
                &[&i64::from(limit)],
            )
            .await
            .map_err(backend)?;
        Ok(rows
            .iter()
            .map(|row| BalanceAlert {
                account: AccountId(row.get(0)),
                crossing: row.get(1),
                balance: Credits::from_millis(row.get::<_, Option<i64>>(2).unwrap_or_default()),
                threshold: Credits::from_millis(row.get::<_, Option<i64>>(3).unwrap_or_default()),
                at: row
                    .get::<_, Option<SystemTime>>(4)
                    .map_or(jiff::Timestamp::UNIX_EPOCH, time::from_system),
            })
            .collect())
    }

    async fn balance_alert_announced(&self, alert: &BalanceAlert) -> Result<(), LedgerError> {
        self.pool
            .execute(
                "UPDATE accounts SET low_alerts_announced = greatest(low_alerts_announced, $1) WHERE id = $2",
                &[&alert.crossing, &alert.account.0],
            )
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn grant(
        &self,
        account: AccountId,
        amount: Credits,
        note: &str,
    ) -> Result<Credits, LedgerError> {
        if amount.millis() <= 0 {
            return Err(LedgerError::InvalidAmount(format!(
                "a grant must be positive, not {amount}"
            )));
        }
        let mut client = self.client().await?;
        let transaction = client.transaction().await.map_err(backend)?;
        let balance: i64 = transaction
            .query_opt(
                "UPDATE accounts SET balance_millis = balance_millis + $1 WHERE id = $2 RETURNING balance_millis",
                &[&amount.millis(), &account.0],
            )
            .await
            .map_err(backend)?
            .ok_or_else(|| LedgerError::UnknownAccount(account.to_string()))?
            .get(0);
        transaction
            .execute(
                "INSERT INTO ledger_entries (account_id, kind, delta_millis, balance_after_millis, note)
                 VALUES ($1, 'grant', $2, $3, $4)",
                &[&account.0, &amount.millis(), &balance, &note],
            )
            .await
            .map_err(backend)?;
        transaction.commit().await.map_err(backend)?;
        Ok(Credits::from_millis(balance))
    }

    async fn reserve(&self, tenant: Tenant, amount: Credits) -> Result<Reservation, LedgerError> {
        let account = crate::live_only(tenant)?;
        crate::check_hold(amount)?;
        // The last column reads the row as it was before this statement: what was available when refused.
        let row = self
            .pool
            .query_opt(
                "WITH held AS (
                     UPDATE accounts SET held_millis = held_millis + $2
                     WHERE id = $1 AND balance_millis - held_millis >= $2
                     RETURNING id
                 ), hold AS (
                     INSERT INTO credit_holds (account_id, amount_millis, server)
                     SELECT id, $2, $3::TEXT FROM held RETURNING id
                 )
                 SELECT (SELECT id FROM hold), balance_millis - held_millis FROM accounts WHERE id = $1",
                &[&account.0, &amount.millis(), &self.server],
            )
            .await
            .map_err(backend)?
            .ok_or_else(|| LedgerError::UnknownAccount(account.to_string()))?;
        match row.get::<_, Option<i64>>(0) {
            Some(id) => Ok(Reservation { id, tenant, amount }),
            None => Err(LedgerError::InsufficientCredits {
                available: Credits::from_millis(row.get(1)),
                required: amount,
            }),
        }
    }

    async fn settle(
        &self,
        reservation: Reservation,
        charge: Charge,
    ) -> Result<Credits, LedgerError> {
        crate::check_charge(reservation.amount, &charge)?;
        crate::live_only(reservation.tenant)?;
        let row = self
            .pool
            .query_opt(
                "WITH hold AS (
                     DELETE FROM credit_holds WHERE id = $1 RETURNING account_id, amount_millis
                 ), paid_before AS (
                     SELECT 1 FROM ledger_entries e JOIN hold ON e.account_id = hold.account_id
                     WHERE e.reference = $7::TEXT
                 ), charged AS (
                     UPDATE accounts SET
                         balance_millis = balance_millis
                             - CASE WHEN EXISTS (SELECT 1 FROM paid_before) THEN 0 ELSE $2::BIGINT END,
                         held_millis = held_millis - hold.amount_millis
                     FROM hold WHERE accounts.id = hold.account_id
                     RETURNING accounts.id, balance_millis
                 ), entry AS (
                     INSERT INTO ledger_entries (account_id, kind, delta_millis, balance_after_millis, key_id,
                                                 urls_requested, urls_returned, live, reference)
                     SELECT id, 'charge', -$2, balance_millis, $3::BIGINT, $4::BIGINT, $5::BIGINT, $6::BOOLEAN,
                            $7::TEXT
                     FROM charged WHERE NOT EXISTS (SELECT 1 FROM paid_before)
                 )
                 SELECT balance_millis FROM charged",
                &[
                    &reservation.id,
                    &charge.amount.millis(),
                    &charge.key_id,
                    &i64::from(charge.urls_requested),
                    &i64::from(charge.urls_returned),
                    &charge.live,
                    &charge.reference,
                ],
            )
            .await
            .map_err(backend)?
            .ok_or(LedgerError::ReservationGone(reservation.id))?;
        Ok(Credits::from_millis(row.get(0)))
    }

    async fn charge(
        &self,
        tenant: Tenant,
        required: Credits,
        charge: Charge,
    ) -> Result<Credits, LedgerError> {
        let account = crate::live_only(tenant)?;
        crate::check_charge(required, &charge)?;
        let (done, outcome) = tokio::sync::oneshot::channel();
        let stopped = || LedgerError::Backend("the ledger's charge writer stopped".into());
        self.charges
            .send(PendingCharge {
                account,
                required,
                charge,
                done,
            })
            .map_err(|_| stopped())?;
        outcome.await.map_err(|_| stopped())?
    }

    async fn release(&self, reservation: Reservation) -> Result<(), LedgerError> {
        crate::live_only(reservation.tenant)?;
        let freed = self.free_holds("id = $1", &reservation.id).await?;
        if freed == 0 {
            return Err(LedgerError::ReservationGone(reservation.id));
        }
        Ok(())
    }

    async fn renew(&self, reservation: &Reservation) -> Result<(), LedgerError> {
        crate::live_only(reservation.tenant)?;
        let client = self.pool.client().await.map_err(backend)?;
        let renewed = client
            .execute(
                "UPDATE credit_holds SET created_at = now() WHERE id = $1",
                &[&reservation.id],
            )
            .await
            .map_err(backend)?;
        if renewed == 0 {
            return Err(LedgerError::ReservationGone(reservation.id));
        }
        Ok(())
    }

    async fn release_stale(&self, made_before: jiff::Timestamp) -> Result<u64, LedgerError> {
        self.free_holds("created_at < $1", &SystemTime::from(made_before))
            .await
    }

    async fn release_own(&self) -> Result<u64, LedgerError> {
        if self.server.is_empty() {
            return Ok(0);
        }
        self.free_holds("server = $1", &self.server).await
    }

    async fn held(&self, tenant: Tenant) -> Result<Credits, LedgerError> {
        let account = crate::live_only(tenant)?;
        let client = self.client().await?;
        let row = client
            .query_opt(
                "SELECT held_millis FROM accounts WHERE id = $1",
                &[&account.0],
            )
            .await
            .map_err(backend)?;
        Ok(Credits::from_millis(row.map_or(0, |row| row.get(0))))
    }

    async fn entries(
        &self,
        tenant: Tenant,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<LedgerEntry>, LedgerError> {
        let account = crate::live_only(tenant)?;
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT id, account_id, at, kind, delta_millis, balance_after_millis, key_id,
                        urls_requested, urls_returned, live, note, reference
                 FROM ledger_entries WHERE account_id = $1 AND id < $2 ORDER BY id DESC LIMIT $3",
                &[&account.0, &before.unwrap_or(i64::MAX), &i64::from(limit)],
            )
            .await
            .map_err(backend)?;
        Ok(rows
            .iter()
            .map(|row| {
                let kind = if row.get::<_, String>(3) == "grant" {
                    EntryKind::Grant
                } else {
                    EntryKind::Charge
                };
                let delta = Credits::from_millis(row.get(4));
                LedgerEntry {
                    id: row.get(0),
                    account: AccountId(row.get(1)),
                    at: time::from_system(row.get(2)),
                    kind,
                    delta,
                    balance_after: Credits::from_millis(row.get(5)),
                    charge: (kind == EntryKind::Charge).then(|| Charge {
                        amount: Credits::from_millis(-delta.millis()),
                        key_id: row.get(6),
                        urls_requested: count(row.get::<_, Option<i64>>(7).unwrap_or_default()),
                        urls_returned: count(row.get::<_, Option<i64>>(8).unwrap_or_default()),
                        live: row.get::<_, Option<bool>>(9).unwrap_or_default(),
                        reference: row.get(11),
                    }),
                    note: row.get(10),
                }
            })
            .collect())
    }

    async fn daily_usage(
        &self,
        tenant: Tenant,
        since: jiff::Timestamp,
    ) -> Result<Vec<DailyUsage>, LedgerError> {
        let account = crate::live_only(tenant)?;
        let client = self.client().await?;
        let since = SystemTime::from(since);
        let rows = client
            .query(
                "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, coalesce(live, false), count(*),
                        coalesce(sum(coalesce(urls_returned, 0)), 0)::BIGINT,
                        coalesce(sum(greatest(coalesce(urls_requested, 0) - coalesce(urls_returned, 0), 0)), 0)::BIGINT,
                        coalesce(-sum(delta_millis), 0)::BIGINT
                 FROM ledger_entries
                 WHERE account_id = $1 AND kind = 'charge' AND at >= $2
                 GROUP BY day, coalesce(live, false) ORDER BY day",
                &[&account.0, &since],
            )
            .await
            .map_err(backend)?;
        crate::usage_days(rows.iter().map(|row| {
            (
                row.get::<_, String>(0),
                row.get::<_, bool>(1),
                UsageCounts {
                    requests: u64::try_from(row.get::<_, i64>(2)).unwrap_or_default(),
                    returned: u64::try_from(row.get::<_, i64>(3)).unwrap_or_default(),
                    unresolved: u64::try_from(row.get::<_, i64>(4)).unwrap_or_default(),
                    credits: Credits::from_millis(row.get(5)),
                },
            )
        }))
    }
}
