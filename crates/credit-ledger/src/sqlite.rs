use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use store_base::time;

use sqlite_pool::SqlitePool;
use sqlite_pool::rusqlite::{self, OptionalExtension, TransactionBehavior, params};
use tokio::sync::{mpsc, oneshot};

use crate::{
    Account, AccountId, BalanceAlert, Charge, Credits, DailyUsage, EntryKind, Ledger, LedgerEntry,
    LedgerError, QuotaOverrides, Reservation, Tenant, UsageCounts,
};

const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/sqlite/0001_create_table_accounts.sql"),
    include_str!("../migrations/sqlite/0002_drop_table_credit_holds.sql"),
    include_str!("../migrations/sqlite/0003_alter_table_ledger_entries.sql"),
    include_str!("../migrations/sqlite/0004_alter_table_accounts.sql"),
    include_str!("../migrations/sqlite/0005_alter_table_accounts.sql"),
];

/// Accounts and ledger rows in the service's SQLite file (tables `accounts`, `ledger_entries`); credit holds in
/// this value's memory.
///
/// Holds are not written to the file: a hold only matters while its request runs in this process, and one
/// process serves a SQLite file at a time (the server enforces it with a lock file), so a stored hold would
/// only ever be read back to be deleted after a crash. Keeping them in memory makes [`Ledger::reserve`] a read
/// and [`Ledger::settle`] the request's one write. Other processes on the same file may grant credits and read
/// (the CLI does while a server runs); they must not reserve, since they would not see this process's holds.
///
/// A reserve reads the balance and books its hold, and a settle commits its charge and drops its hold, each
/// under one lock, so every reserve sees a balance and a set of holds that agree: concurrent requests on one
/// account never overdraw it.
///
/// The balance a reserve reads is kept in memory too, for [`BALANCE_REUSE`] after it was read from the file:
/// only this process charges, and each of its charges updates the kept balance to the one the file returned,
/// so the kept balance is never above the file's (grants by other processes only raise the file's). A reserve
/// that the kept balance would refuse reads the file again before refusing, so a grant counts at once for a
/// request that needs it, and within [`BALANCE_REUSE`] for the rest.
///
/// Charges are written by one task that commits every charge waiting for it in one transaction (group
/// commit): under load a write transaction costs the same for one charge or a hundred, and [`Ledger::settle`]
/// still returns only once its own charge is committed. Clones share the holds and the writer.
#[derive(Clone, Debug)]
pub struct SqliteLedger {
    pool: SqlitePool,
    holds: Arc<Mutex<HoldBook>>,
    charges: mpsc::UnboundedSender<PendingCharge>,
}

/// The most charges committed in one transaction.
const MAX_CHARGES_PER_COMMIT: usize = 256;

/// A settle waiting for the charge writer.
#[derive(Debug)]
struct PendingCharge {
    hold: i64,
    account: AccountId,
    charge: Charge,
    done: oneshot::Sender<Result<Result<i64, Refusal>, Arc<rusqlite::Error>>>,
}

/// How long a balance read from the file (or returned by a charge) is used by reserves before being read again.
pub const BALANCE_REUSE: std::time::Duration = std::time::Duration::from_secs(2);

/// The holds of requests in flight, and the balances they are checked against.
#[derive(Debug, Default)]
struct HoldBook {
    last_id: i64,
    /// Hold id → (account, millis, when it was made).
    holds: HashMap<i64, (AccountId, i64, jiff::Timestamp)>,
    /// Account → the sum of its holds, in millis.
    held: HashMap<AccountId, i64>,
    /// Account → its balance in millis as last read or charged here, and when.
    balances: HashMap<AccountId, (i64, std::time::Instant)>,
}

impl HoldBook {
    fn add(&mut self, account: AccountId, millis: i64) -> i64 {
        self.last_id += 1;
        self.holds
            .insert(self.last_id, (account, millis, jiff::Timestamp::now()));
        *self.held.entry(account).or_default() += millis;
        self.last_id
    }

    fn remove(&mut self, id: i64) -> bool {
        let Some((account, millis, _)) = self.holds.remove(&id) else {
            return false;
        };
        if let Some(held) = self.held.get_mut(&account) {
            *held -= millis;
            if *held == 0 {
                self.held.remove(&account);
            }
        }
        true
    }

    /// Balance minus holds, from the balance kept in memory if it is recent.
    fn available(&self, account: AccountId) -> Option<i64> {
        let (balance, at) = self.balances.get(&account)?;
        (at.elapsed() < BALANCE_REUSE)
            .then(|| balance - self.held.get(&account).copied().unwrap_or(0))
    }

    fn set_balance(&mut self, account: AccountId, balance: i64) {
        self.balances
            .insert(account, (balance, std::time::Instant::now()));
    }
}

/// The book stays consistent even if a holder panicked: every change to it is a single step.
fn lock(holds: &Mutex<HoldBook>) -> MutexGuard<'_, HoldBook> {
    holds.lock().unwrap_or_else(PoisonError::into_inner)
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> LedgerError {
    LedgerError::Backend(Box::new(error))
}

const ACCOUNT_COLUMNS: &str = "id, name, balance_millis, created_at_ms, low_balance_millis, quotas";

fn account_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Account> {
    Ok(Account {
        id: AccountId(row.get(0)?),
        name: row.get(1)?,
        balance: Credits::from_millis(row.get(2)?),
        created_at: time::from_millis(row.get(3)?),
        low_balance_threshold: row.get::<_, Option<i64>>(4)?.map(Credits::from_millis),
        quotas: QuotaOverrides::from_stored(row.get::<_, Option<String>>(5)?.as_deref()),
    })
}

/// What a transaction decided, for outcomes that are not SQLite errors.
#[derive(Debug)]
enum Refusal {
    UnknownAccount,
    Insufficient { available: i64 },
    ReservationGone,
}

impl SqliteLedger {
    /// Opens the ledger in the SQLite file at `path` (created if missing) and migrates its tables.
    ///
    /// # Errors
    /// [`LedgerError::Backend`] when the file cannot be opened or migrated.
    pub async fn open(path: &Path) -> Result<Self, LedgerError> {
        Self::with_pool(SqlitePool::open(path).await.map_err(backend)?).await
    }

    /// Uses an already open pool (the service opens one per file and shares it).
    ///
    /// # Errors
    /// [`LedgerError::Backend`] when the tables cannot be migrated.
    pub async fn with_pool(pool: SqlitePool) -> Result<Self, LedgerError> {
        pool.migrate("credit-ledger", MIGRATIONS)
            .await
            .map_err(backend)?;
        let holds = Arc::<Mutex<HoldBook>>::default();
        let (charges, queue) = mpsc::unbounded_channel();
        tokio::spawn(write_charges(pool.clone(), Arc::clone(&holds), queue));
        Ok(Self {
            pool,
            holds,
            charges,
        })
    }

    /// The account where `condition` (on `?1`, the key) holds.
    async fn one_account(
        &self,
        condition: &'static str,
        key: rusqlite::types::Value,
    ) -> Result<Option<Account>, LedgerError> {
        self.pool
            .run(move |conn| {
                conn.prepare_cached(&format!(
                    "SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE {condition}"
                ))?
                .query_row([key], account_row)
                .optional()
            })
            .await
            .map_err(backend)
    }
}

#[async_trait::async_trait]
impl Ledger for SqliteLedger {
    async fn ensure_account(&self, name: &str) -> Result<Account, LedgerError> {
        let name = name.to_owned();
        self.pool
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO accounts (name, created_at_ms) VALUES (?1, ?2) ON CONFLICT (name) DO NOTHING",
                    params![name, time::now_millis()],
                )?;
                conn.query_row(&format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE name = ?1"), [name], account_row)
            })
            .await
            .map_err(backend)
    }

    async fn account_by_name(&self, name: &str) -> Result<Option<Account>, LedgerError> {
        self.one_account("name = ?1", name.to_owned().into()).await
    }

    async fn account(&self, id: AccountId) -> Result<Option<Account>, LedgerError> {
        self.one_account("id = ?1", id.0.into()).await
    }

    async fn accounts(&self) -> Result<Vec<Account>, LedgerError> {
        self.pool
            .run(|conn| {
                conn.prepare(&format!(
                    "SELECT {ACCOUNT_COLUMNS} FROM accounts ORDER BY name"
                ))?
                .query_map([], account_row)?
                .collect()
            })
            .await
            .map_err(backend)
    }

    async fn set_low_balance_threshold(
        &self,
        tenant: Tenant,
        threshold: Option<Credits>,
    ) -> Result<Account, LedgerError> {
        let account = crate::live_only(tenant)?;
        crate::check_threshold(threshold)?;
        self.pool
            .write(move |conn| {
                conn.prepare_cached(&format!(
                    "UPDATE accounts SET low_balance_millis = ?1 WHERE id = ?2 RETURNING {ACCOUNT_COLUMNS}"
                ))?
                .query_row(params![threshold.map(Credits::millis), account.0], account_row)
                .optional()
            })
            .await
            .map_err(backend)?
            .ok_or_else(|| LedgerError::UnknownAccount(account.to_string()))
    }

    async fn set_quotas(
        &self,
        account: AccountId,
        quotas: QuotaOverrides,
    ) -> Result<Account, LedgerError> {
        self.pool
            .write(move |conn| {
                conn.prepare_cached(&format!(
                    "UPDATE accounts SET quotas = ?1 WHERE id = ?2 RETURNING {ACCOUNT_COLUMNS}"
                ))?
                .query_row(params![quotas.to_stored(), account.0], account_row)
                .optional()
            })
            .await
            .map_err(backend)?
            .ok_or_else(|| LedgerError::UnknownAccount(account.to_string()))
    }

    async fn balance_alerts(&self, limit: u32) -> Result<Vec<BalanceAlert>, LedgerError> {
        self.pool
            .run(move |conn| {
                conn.prepare_cached(
                    "SELECT id, low_alerts, low_alert_balance_millis, low_alert_threshold_millis, low_alert_at_ms
                     FROM accounts WHERE low_alerts > low_alerts_announced ORDER BY low_alert_at_ms LIMIT ?1",
                )?
                .query_map([limit], |row| {
                    Ok(BalanceAlert {
                        account: AccountId(row.get(0)?),
                        crossing: row.get(1)?,
                        balance: Credits::from_millis(row.get::<_, Option<i64>>(2)?.unwrap_or_default()),
                        threshold: Credits::from_millis(row.get::<_, Option<i64>>(3)?.unwrap_or_default()),
                        at: time::from_millis(row.get::<_, Option<i64>>(4)?.unwrap_or_default()),
                    })
                })?
                .collect()
            })
            .await
            .map_err(backend)
    }

    async fn balance_alert_announced(&self, alert: &BalanceAlert) -> Result<(), LedgerError> {
        let (account, crossing) = (alert.account, alert.crossing);
        self.pool
            .write(move |conn| {
                conn.prepare_cached(
                    "UPDATE accounts SET low_alerts_announced = max(low_alerts_announced, ?1) WHERE id = ?2",
                )?
                .execute(params![crossing, account.0])
            })
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
        let note = note.to_owned();
        let outcome = self
            .pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let updated: Option<i64> = tx
                    .query_row(
                        "UPDATE accounts SET balance_millis = balance_millis + ?1 WHERE id = ?2 RETURNING balance_millis",
                        params![amount.millis(), account.0],
                        |r| r.get(0),
                    )
                    .optional()?;
                let Some(balance) = updated else { return Ok(Err(Refusal::UnknownAccount)) };
                tx.execute(
                    "INSERT INTO ledger_entries (account_id, at_ms, kind, delta_millis, balance_after_millis, note)
                     VALUES (?1, ?2, 'grant', ?3, ?4, ?5)",
                    params![account.0, time::now_millis(), amount.millis(), balance, note],
                )?;
                tx.commit()?;
                Ok(Ok(balance))
            })
            .await
            .map_err(backend)?;
        // The next reserve reads the raised balance from the file (setting it here could race a charge).
        lock(&self.holds).balances.remove(&account);
        outcome
            .map(Credits::from_millis)
            .map_err(|_| LedgerError::UnknownAccount(account.to_string()))
    }

    async fn reserve(&self, tenant: Tenant, amount: Credits) -> Result<Reservation, LedgerError> {
        let account = crate::live_only(tenant)?;
        crate::check_hold(amount)?;
        {
            let mut book = lock(&self.holds);
            if book
                .available(account)
                .is_some_and(|available| available >= amount.millis())
            {
                return Ok(Reservation {
                    id: book.add(account, amount.millis()),
                    tenant,
                    amount,
                });
            }
        }
        let holds = Arc::clone(&self.holds);
        let outcome = self
            .pool
            .run(move |conn| {
                // Locked across the read so that no settle can commit a charge and drop its hold in between.
                let mut book = lock(&holds);
                let balance: Option<i64> = conn
                    .prepare_cached("SELECT balance_millis FROM accounts WHERE id = ?1")?
                    .query_row([account.0], |r| r.get(0))
                    .optional()?;
                let Some(balance) = balance else {
                    return Ok(Err(Refusal::UnknownAccount));
                };
                book.set_balance(account, balance);
                let available = balance - book.held.get(&account).copied().unwrap_or(0);
                if available < amount.millis() {
                    return Ok(Err(Refusal::Insufficient { available }));
                }
                Ok(Ok(book.add(account, amount.millis())))
            })
            .await
            .map_err(backend)?;
        match outcome {
            Ok(id) => Ok(Reservation { id, tenant, amount }),
            Err(Refusal::Insufficient { available }) => Err(LedgerError::InsufficientCredits {
                available: Credits::from_millis(available),
                required: amount,
            }),
            Err(_) => Err(LedgerError::UnknownAccount(account.to_string())),
        }
    }

    async fn settle(
        &self,
        reservation: Reservation,
        charge: Charge,
    ) -> Result<Credits, LedgerError> {
        crate::check_charge(reservation.amount, &charge)?;
        let Reservation { id, tenant, .. } = reservation;
        let account = crate::live_only(tenant)?;
        let (done, outcome) = oneshot::channel();
        self.charges
            .send(PendingCharge {
                hold: id,
                account,
                charge,
                done,
            })
            .map_err(|_| backend(WriterStopped))?;
        let outcome = outcome
            .await
            .map_err(|_| backend(WriterStopped))?
            .map_err(backend)?;
        outcome
            .map(Credits::from_millis)
            .map_err(|_| LedgerError::ReservationGone(id))
    }

    async fn release(&self, reservation: Reservation) -> Result<(), LedgerError> {
        crate::live_only(reservation.tenant)?;
        if lock(&self.holds).remove(reservation.id) {
            Ok(())
        } else {
            Err(LedgerError::ReservationGone(reservation.id))
        }
    }

    async fn renew(&self, reservation: &Reservation) -> Result<(), LedgerError> {
        crate::live_only(reservation.tenant)?;
        match lock(&self.holds).holds.get_mut(&reservation.id) {
            Some((_, _, made)) => {
                *made = jiff::Timestamp::now();
                Ok(())
            }
            None => Err(LedgerError::ReservationGone(reservation.id)),
        }
    }

    async fn release_stale(&self, made_before: jiff::Timestamp) -> Result<u64, LedgerError> {
        let mut book = lock(&self.holds);
        let stale: Vec<i64> = book
            .holds
            .iter()
            .filter(|(_, (_, _, made))| *made < made_before)
            .map(|(id, _)| *id)
            .collect();
        for id in &stale {
            book.remove(*id);
        }
        Ok(stale.len() as u64)
    }

    async fn release_own(&self) -> Result<u64, LedgerError> {
        // One process serves the file (the caller holds its server lock): every hold is this server's.
        let mut book = lock(&self.holds);
        let all: Vec<i64> = book.holds.keys().copied().collect();
        for id in &all {
            book.remove(*id);
        }
        Ok(all.len() as u64)
    }

    async fn held(&self, tenant: Tenant) -> Result<Credits, LedgerError> {
        let account = crate::live_only(tenant)?;
        Ok(Credits::from_millis(
            lock(&self.holds).held.get(&account).copied().unwrap_or(0),
        ))
    }

    async fn entries(
        &self,
        tenant: Tenant,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<LedgerEntry>, LedgerError> {
        let account = crate::live_only(tenant)?;
        self.pool
            .run(move |conn| {
                conn.prepare_cached(
                    "SELECT id, account_id, at_ms, kind, delta_millis, balance_after_millis, key_id,
                            urls_requested, urls_returned, live, note, reference
                     FROM ledger_entries WHERE account_id = ?1 AND id < ?2 ORDER BY id DESC LIMIT ?3",
                )?
                .query_map(params![account.0, before.unwrap_or(i64::MAX), limit], |row| {
                    let kind = if row.get::<_, String>(3)? == "grant" { EntryKind::Grant } else { EntryKind::Charge };
                    let delta = Credits::from_millis(row.get(4)?);
                    Ok(LedgerEntry {
                        id: row.get(0)?,
                        account: AccountId(row.get(1)?),
                        at: time::from_millis(row.get(2)?),
                        kind,
                        delta,
                        balance_after: Credits::from_millis(row.get(5)?),
                        charge: (kind == EntryKind::Charge).then(|| -> rusqlite::Result<Charge> {
                            Ok(Charge {
                                amount: Credits::from_millis(-delta.millis()),
                                key_id: row.get(6)?,
                                urls_requested: row.get::<_, Option<u32>>(7)?.unwrap_or_default(),
                                urls_returned: row.get::<_, Option<u32>>(8)?.unwrap_or_default(),
                                live: row.get::<_, Option<bool>>(9)?.unwrap_or_default(),
                                reference: row.get(11)?,
                            })
                        }).transpose()?,
                        note: row.get(10)?,
                    })
                })?
                .collect()
            })
            .await
            .map_err(backend)
    }

    async fn daily_usage(
        &self,
        tenant: Tenant,
        since: jiff::Timestamp,
    ) -> Result<Vec<DailyUsage>, LedgerError> {
        let account = crate::live_only(tenant)?;
        let rows: Vec<(String, bool, UsageCounts)> = self
            .pool
            .run(move |conn| {
                conn.prepare_cached(
                    "SELECT date(at_ms / 1000, 'unixepoch') AS day, coalesce(live, 0), count(*),
                            sum(coalesce(urls_returned, 0)),
                            sum(max(coalesce(urls_requested, 0) - coalesce(urls_returned, 0), 0)),
                            -sum(delta_millis)
                     FROM ledger_entries
                     WHERE account_id = ?1 AND kind = 'charge' AND at_ms >= ?2
                     GROUP BY day, coalesce(live, 0) ORDER BY day",
                )?
                .query_map(params![account.0, since.as_millisecond()], |row| {
                    Ok((
                        row.get(0)?,
                        row.get(1)?,
                        UsageCounts {
                            requests: row.get::<_, i64>(2)?.max(0) as u64,
                            returned: row.get::<_, i64>(3)?.max(0) as u64,
                            unresolved: row.get::<_, i64>(4)?.max(0) as u64,
                            credits: Credits::from_millis(row.get(5)?),
                        },
                    ))
                })?
                .collect()
            })
            .await
            .map_err(backend)?;
        crate::usage_days(rows)
    }
}

/// The charge writer could not run the charge's transaction (no database connection) or has stopped.
#[derive(Debug, thiserror::Error)]
#[error("the charge was not written: no database connection, or the runtime is shutting down")]
struct WriterStopped;

/// The charge writer: takes every charge waiting, commits them in one transaction, answers each.
async fn write_charges(
    pool: SqlitePool,
    holds: Arc<Mutex<HoldBook>>,
    mut queue: mpsc::UnboundedReceiver<PendingCharge>,
) {
    let mut batch = Vec::with_capacity(MAX_CHARGES_PER_COMMIT);
    while queue.recv_many(&mut batch, MAX_CHARGES_PER_COMMIT).await > 0 {
        let pending = std::mem::take(&mut batch);
        let hold_ids: Vec<i64> = pending.iter().map(|p| p.hold).collect();
        let book = Arc::clone(&holds);
        // When no connection can be had the batch's answer channels are dropped: each settle reports it.
        let written = pool
            .write(move |conn| {
                commit_charges(conn, &book, pending);
                Ok(())
            })
            .await;
        if let Err(error) = written {
            tracing::warn!(%error, "could not commit a batch of charges");
            // Nothing was charged: free the holds now rather than at the next sweep.
            let mut book = lock(&holds);
            for id in hold_ids {
                book.remove(id);
            }
        }
    }
}

/// One transaction for a batch of charges; answers each charge once it is committed, or all with the error.
fn commit_charges(
    conn: &mut rusqlite::Connection,
    holds: &Mutex<HoldBook>,
    pending: Vec<PendingCharge>,
) {
    let (answers, charges): (Vec<_>, Vec<_>) = pending
        .into_iter()
        .map(|p| (p.done, (p.hold, p.account, p.charge)))
        .unzip();
    match write_charges_once(conn, holds, &charges) {
        Ok(outcomes) => {
            for (done, outcome) in answers.into_iter().zip(outcomes) {
                // A settle whose caller went away is still charged: the request was served.
                let _ = done.send(Ok(outcome));
            }
        }
        Err(error) => {
            // Nothing of the batch was charged: free its holds at once rather than at the next sweep.
            let mut book = lock(holds);
            for (hold, _, _) in &charges {
                book.remove(*hold);
            }
            drop(book);
            let error = Arc::new(error);
            for done in answers {
                let _ = done.send(Err(Arc::clone(&error)));
            }
        }
    }
}

fn write_charges_once(
    conn: &mut rusqlite::Connection,
    holds: &Mutex<HoldBook>,
    charges: &[(i64, AccountId, Charge)],
) -> rusqlite::Result<Vec<Result<i64, Refusal>>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    // Held through the commit, so that no reserve sees the new balances with the old holds or the reverse.
    let mut book = lock(holds);
    let mut outcomes = Vec::with_capacity(charges.len());
    for (hold, account, charge) in charges {
        if !book.holds.contains_key(hold) {
            outcomes.push(Err(Refusal::ReservationGone));
            continue;
        }
        if let Some(reference) = &charge.reference {
            // Paid before (e.g. by a run that stopped before it recorded what it did): nothing more to charge.
            let paid: Option<i64> = tx
                .prepare_cached(
                    "SELECT balance_millis FROM accounts WHERE id = ?1 AND EXISTS (
                         SELECT 1 FROM ledger_entries WHERE account_id = ?1 AND reference = ?2)",
                )?
                .query_row(params![account.0, reference], |r| r.get(0))
                .optional()?;
            if let Some(balance) = paid {
                outcomes.push(Ok(balance));
                continue;
            }
        }
        let balance: i64 = tx
            .prepare_cached(
                "UPDATE accounts SET balance_millis = balance_millis - ?1 WHERE id = ?2 RETURNING balance_millis",
            )?
            .query_row(params![charge.amount.millis(), account.0], |r| r.get(0))?;
        tx.prepare_cached(
            "INSERT INTO ledger_entries (account_id, at_ms, kind, delta_millis, balance_after_millis,
                                         key_id, urls_requested, urls_returned, live, reference)
             VALUES (?1, ?2, 'charge', ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        )?
        .execute(params![
            account.0,
            time::now_millis(),
            -charge.amount.millis(),
            balance,
            charge.key_id,
            charge.urls_requested,
            charge.urls_returned,
            charge.live,
            charge.reference
        ])?;
        outcomes.push(Ok(balance));
    }
    tx.commit()?;
    for ((hold, account, _), outcome) in charges.iter().zip(&outcomes) {
        if let Ok(balance) = outcome {
            book.remove(*hold);
            // In commit order, so the last one set is the file's balance now.
            book.set_balance(*account, *balance);
        }
    }
    Ok(outcomes)
}
