use std::path::Path;

use sqlite_pool::SqlitePool;
use sqlite_pool::rusqlite::{self, OptionalExtension, TransactionBehavior, params};

use crate::{
    Account, AccountId, Charge, Credits, EntryKind, Ledger, LedgerEntry, LedgerError, Reservation,
};

const MIGRATIONS: &[&str] = &["
    CREATE TABLE accounts (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        balance_millis INTEGER NOT NULL DEFAULT 0,   -- settled balance in thousandths of a credit
        created_at_ms INTEGER NOT NULL
    );
    CREATE TABLE credit_holds (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts (id),
        amount_millis INTEGER NOT NULL CHECK (amount_millis >= 0),
        created_at_ms INTEGER NOT NULL
    );
    CREATE INDEX credit_holds_account ON credit_holds (account_id);
    CREATE TABLE ledger_entries (
        id INTEGER PRIMARY KEY,
        account_id INTEGER NOT NULL REFERENCES accounts (id),
        at_ms INTEGER NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('grant', 'charge')),
        delta_millis INTEGER NOT NULL,
        balance_after_millis INTEGER NOT NULL,
        key_id INTEGER,
        urls_requested INTEGER,
        urls_returned INTEGER,
        live INTEGER,
        note TEXT
    );
    CREATE INDEX ledger_entries_account ON ledger_entries (account_id, id);
"];

/// Accounts, holds and ledger rows in the service's SQLite file (tables `accounts`, `credit_holds`,
/// `ledger_entries`). Money-moving statements run in `BEGIN IMMEDIATE` transactions, so concurrent requests
/// on one account are serialized by SQLite's write lock.
#[derive(Clone, Debug)]
pub struct SqliteLedger {
    pool: SqlitePool,
}

fn backend(error: impl std::error::Error + Send + Sync + 'static) -> LedgerError {
    LedgerError::Backend(Box::new(error))
}

fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

fn timestamp(ms: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_millisecond(ms).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

const ACCOUNT_COLUMNS: &str = "id, name, balance_millis, created_at_ms";

fn account_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Account> {
    Ok(Account {
        id: AccountId(row.get(0)?),
        name: row.get(1)?,
        balance: Credits::from_millis(row.get(2)?),
        created_at: timestamp(row.get(3)?),
    })
}

/// What a transaction decided, for outcomes that are not SQLite errors.
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
        Ok(Self { pool })
    }

    async fn one_account(
        &self,
        sql: &'static str,
        key: rusqlite::types::Value,
    ) -> Result<Option<Account>, LedgerError> {
        self.pool
            .run(move |conn| conn.query_row(sql, [key], account_row).optional())
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
                    params![name, now_ms()],
                )?;
                conn.query_row(&format!("SELECT {ACCOUNT_COLUMNS} FROM accounts WHERE name = ?1"), [name], account_row)
            })
            .await
            .map_err(backend)
    }

    async fn account_by_name(&self, name: &str) -> Result<Option<Account>, LedgerError> {
        self.one_account(
            "SELECT id, name, balance_millis, created_at_ms FROM accounts WHERE name = ?1",
            name.to_owned().into(),
        )
        .await
    }

    async fn account(&self, id: AccountId) -> Result<Option<Account>, LedgerError> {
        self.one_account(
            "SELECT id, name, balance_millis, created_at_ms FROM accounts WHERE id = ?1",
            id.0.into(),
        )
        .await
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
                    params![account.0, now_ms(), amount.millis(), balance, note],
                )?;
                tx.commit()?;
                Ok(Ok(balance))
            })
            .await
            .map_err(backend)?;
        outcome
            .map(Credits::from_millis)
            .map_err(|_| LedgerError::UnknownAccount(account.to_string()))
    }

    async fn reserve(
        &self,
        account: AccountId,
        amount: Credits,
    ) -> Result<Reservation, LedgerError> {
        if amount.millis() < 0 {
            return Err(LedgerError::InvalidAmount(format!(
                "a hold cannot be negative: {amount}"
            )));
        }
        let outcome = self
            .pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let available: Option<i64> = tx
                    .query_row(
                        "SELECT a.balance_millis - COALESCE((SELECT SUM(amount_millis) FROM credit_holds h
                                                             WHERE h.account_id = a.id), 0)
                         FROM accounts a WHERE a.id = ?1",
                        [account.0],
                        |r| r.get(0),
                    )
                    .optional()?;
                let Some(available) = available else { return Ok(Err(Refusal::UnknownAccount)) };
                if available < amount.millis() {
                    return Ok(Err(Refusal::Insufficient { available }));
                }
                let id = tx.query_row(
                    "INSERT INTO credit_holds (account_id, amount_millis, created_at_ms) VALUES (?1, ?2, ?3) RETURNING id",
                    params![account.0, amount.millis(), now_ms()],
                    |r| r.get(0),
                )?;
                tx.commit()?;
                Ok(Ok(id))
            })
            .await
            .map_err(backend)?;
        match outcome {
            Ok(id) => Ok(Reservation {
                id,
                account,
                amount,
            }),
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
        if charge.amount.millis() < 0 || charge.amount > reservation.amount {
            return Err(LedgerError::InvalidAmount(format!(
                "a charge of {} does not fit its hold of {}",
                charge.amount, reservation.amount
            )));
        }
        let Reservation { id, account, .. } = reservation;
        let outcome = self
            .pool
            .write(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                if tx.execute("DELETE FROM credit_holds WHERE id = ?1", [id])? == 0 {
                    return Ok(Err(Refusal::ReservationGone));
                }
                let balance: i64 = tx.query_row(
                    "UPDATE accounts SET balance_millis = balance_millis - ?1 WHERE id = ?2 RETURNING balance_millis",
                    params![charge.amount.millis(), account.0],
                    |r| r.get(0),
                )?;
                tx.execute(
                    "INSERT INTO ledger_entries (account_id, at_ms, kind, delta_millis, balance_after_millis,
                                                 key_id, urls_requested, urls_returned, live)
                     VALUES (?1, ?2, 'charge', ?3, ?4, ?5, ?6, ?7, ?8)",
                    params![
                        account.0,
                        now_ms(),
                        -charge.amount.millis(),
                        balance,
                        charge.key_id,
                        charge.urls_requested,
                        charge.urls_returned,
                        charge.live
                    ],
                )?;
                tx.commit()?;
                Ok(Ok(balance))
            })
            .await
            .map_err(backend)?;
        outcome
            .map(Credits::from_millis)
            .map_err(|_| LedgerError::ReservationGone(id))
    }

    async fn release(&self, reservation: Reservation) -> Result<(), LedgerError> {
        let id = reservation.id;
        let deleted = self
            .pool
            .write(move |conn| conn.execute("DELETE FROM credit_holds WHERE id = ?1", [id]))
            .await
            .map_err(backend)?;
        if deleted == 0 {
            Err(LedgerError::ReservationGone(id))
        } else {
            Ok(())
        }
    }

    async fn release_stale(&self, made_before: jiff::Timestamp) -> Result<u64, LedgerError> {
        let cutoff = made_before.as_millisecond();
        let deleted = self
            .pool
            .write(move |conn| {
                conn.execute(
                    "DELETE FROM credit_holds WHERE created_at_ms < ?1",
                    [cutoff],
                )
            })
            .await
            .map_err(backend)?;
        Ok(deleted as u64)
    }

    async fn entries(
        &self,
        account: AccountId,
        limit: u32,
    ) -> Result<Vec<LedgerEntry>, LedgerError> {
        self.pool
            .run(move |conn| {
                conn.prepare(
                    "SELECT id, account_id, at_ms, kind, delta_millis, balance_after_millis, key_id,
                            urls_requested, urls_returned, live, note
                     FROM ledger_entries WHERE account_id = ?1 ORDER BY id DESC LIMIT ?2",
                )?
                .query_map(params![account.0, limit], |row| {
                    let kind = if row.get::<_, String>(3)? == "grant" { EntryKind::Grant } else { EntryKind::Charge };
                    let delta = Credits::from_millis(row.get(4)?);
                    Ok(LedgerEntry {
                        id: row.get(0)?,
                        account: AccountId(row.get(1)?),
                        at: timestamp(row.get(2)?),
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
}
