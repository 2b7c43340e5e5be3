//! Billing: accounts, their credit balances, and a ledger row for every grant and charge.
//!
//! A request is billed in two steps so that concurrent requests never overdraw an account and nothing is
//! charged that was not returned:
//! 1. [`Ledger::reserve`] holds the most the request can cost (every requested company at its price), or fails
//!    with [`LedgerError::InsufficientCredits`] before any work is done;
//! 2. [`Ledger::settle`] charges what was actually returned, writes the ledger row and frees the hold, in one
//!    transaction.
//!
//! A hold never touches the balance, so a crash between the steps loses nothing: [`Ledger::release_own`] frees a
//! restarted server's holds at once, [`Ledger::release_stale`] those of a server that does not come back (a
//! backend that stores holds; `SqliteLedger` keeps them in memory). A request whose answers are all known before
//! it is billed takes both steps at once ([`Ledger::charge`]). Prices are in [`price_per_company`] (spec 4.3, 4.4, 8).
//!
//! [`Ledger`] is the backend-neutral interface; `SqliteLedger` the embedded backend (feature `sqlite`, the
//! default; holds in the serving process's memory), `PgLedger` the backend for several servers on one
//! PostgreSQL database (feature `postgres`; holds are rows every server counts).
//! [`WithTestMode`] wraps either for test-mode keys: a test [`Tenant`] spends nothing.
//! Not here: who may spend (API keys), what a request returned.
//!
//! ```
//! # #[cfg(feature = "sqlite")]
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use credit_ledger::{Charge, Credits, Ledger, SqliteLedger, Tenant};
//! let dir = tempfile::tempdir()?;
//! let ledger = SqliteLedger::open(&dir.path().join("billing.db")).await?;
//! let account = ledger.ensure_account("acme").await?;
//! ledger.grant(account.id, Credits::parse("10")?, "welcome").await?;
//! let hold = ledger.reserve(Tenant::live(account.id), Credits::parse("3")?).await?;
//! let remaining = ledger.settle(hold, Charge { amount: Credits::parse("1.5")?, ..Charge::default() }).await?;
//! assert_eq!(remaining.to_string(), "8.5");
//! # Ok::<(), Box<dyn std::error::Error>>(()) }).unwrap();
//! ```
#![deny(missing_docs)]

mod credits;
#[cfg(feature = "postgres")]
mod postgres;
mod quotas;
#[cfg(feature = "sqlite")]
mod sqlite;
mod summary;
mod test_mode;

use api_contract::FreshnessWindow;
use company_model::RecordSource;
pub use company_model::{AccountId, Mode, Tenant};
pub use credits::{Credits, CreditsError};
#[cfg(feature = "postgres")]
pub use postgres::PgLedger;
pub use quotas::{QuotaOverrides, Quotas, quotas_of};
#[cfg(feature = "sqlite")]
pub use sqlite::{BALANCE_REUSE, SqliteLedger};
pub use summary::{AccountSettings, AccountSummary, MonthUsage, account_summary};
pub use test_mode::{TEST_BALANCE, WithTestMode, account_of, billed};

/// The price of one company returned from a live fetch (spec 4.3, 8): 1 credit.
pub const LIVE_PRICE: Credits = Credits::from_millis(1000);
/// The price of one company returned when the request sent a freshness window above zero (spec 4.4, 8): 0.5
/// credit, whether the page came from a stored snapshot or had to be fetched.
pub const STORED_PRICE: Credits = Credits::from_millis(500);

/// The price of a page's history (`GET /v1/network/company-data/history`) when it returns points or changes:
/// that of one stored record. Nothing when the range holds none.
pub const HISTORY_PRICE: Credits = STORED_PRICE;

/// The price of one returned company: [`LIVE_PRICE`] with a zero (live) window, [`STORED_PRICE`] with a window
/// above zero. Every text that states a price (the OpenAPI document, error messages, the dashboard) asks here.
pub fn price_per_company(window: FreshnessWindow) -> Credits {
    if window.is_live() {
        LIVE_PRICE
    } else {
        STORED_PRICE
    }
}

/// The price of one record served from `source` to a request with `window`: [`price_per_company`], except a
/// stale snapshot (`staleIfError` after a failed live fetch), which is [`STORED_PRICE`] whatever the window.
pub fn price_per_record(window: FreshnessWindow, source: RecordSource) -> Credits {
    match source {
        RecordSource::Stale => STORED_PRICE,
        RecordSource::Live | RecordSource::Stored => price_per_company(window),
    }
}

/// The price of one query resolved to a page (`POST /v1/network/company-data/resolve`): that of the page's
/// record as the resolution verified it, [`price_per_record`] (a live page at [`LIVE_PRICE`] with a zero window,
/// else [`STORED_PRICE`]); the record itself, with `"enrich": true`, costs nothing more. A query left unresolved
/// costs nothing.
pub fn price_per_resolution(window: FreshnessWindow, source: RecordSource) -> Credits {
    price_per_record(window, source)
}

/// An account that holds credits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    /// Its id.
    pub id: AccountId,
    /// Its unique name, e.g. `default` or a customer's name.
    pub name: String,
    /// Settled balance (holds not subtracted).
    pub balance: Credits,
    /// When it was created.
    pub created_at: jiff::Timestamp,
    /// Below this balance the account is told once (`account.balance_low`, [`BalanceAlert`]); `None` for never.
    pub low_balance_threshold: Option<Credits>,
    /// Its own quotas, where the operator set them ([`quotas_of`] applies them over the deployment's).
    pub quotas: QuotaOverrides,
}

/// The balance of an account went below its [`Account::low_balance_threshold`]: one crossing, raised by the
/// statement that lowered the balance (or set the threshold above it) and announced once
/// ([`Ledger::balance_alerts`], [`Ledger::balance_alert_announced`]).
///
/// The rule, kept by each backend's schema so that every statement that changes a balance obeys it: an account
/// is *low* while a threshold is set and its balance is below it. Becoming low raises the next alert; nothing
/// more is raised while it stays low, however many charges follow, and a grant (or a lower threshold, or none)
/// that ends it lets the next fall raise another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BalanceAlert {
    /// The account.
    pub account: AccountId,
    /// Which of the account's crossings it is: 1 for its first.
    pub crossing: i64,
    /// The balance just after the crossing.
    pub balance: Credits,
    /// The threshold it went below.
    pub threshold: Credits,
    /// When it crossed.
    pub at: jiff::Timestamp,
}

impl BalanceAlert {
    /// The event's id, `evt_balance_low_<account>_<crossing>`: the same whichever server announces it.
    pub fn event_id(&self) -> String {
        format!("evt_balance_low_{}_{}", self.account, self.crossing)
    }

    /// The event's `data`.
    pub fn data(&self) -> BalanceLowData {
        BalanceLowData {
            account_id: self.account.0,
            balance: self.balance,
            threshold: self.threshold,
            crossed_at: self.at.to_string(),
        }
    }
}

/// The `data` of an `account.balance_low` event.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct BalanceLowData {
    /// The account's id.
    pub account_id: i64,
    /// Its balance just after the charge that took it below the threshold, in credits.
    pub balance: Credits,
    /// The threshold it went below, in credits.
    pub threshold: Credits,
    /// When (RFC 3339).
    pub crossed_at: String,
}

/// Credits held for one request between [`Ledger::reserve`] and [`Ledger::settle`].
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a reservation holds credits until it is settled or released"]
pub struct Reservation {
    /// Its id.
    pub id: i64,
    /// Whose credits it holds.
    pub tenant: Tenant,
    /// How much it holds: the most the request may be charged.
    pub amount: Credits,
}

/// What a settled request is charged, and what it did (kept in the ledger row).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Charge {
    /// The charge; at most the reservation's amount.
    pub amount: Credits,
    /// The API key that made the request, if any.
    pub key_id: Option<i64>,
    /// URLs in the request.
    pub urls_requested: u32,
    /// Records returned.
    pub urls_returned: u32,
    /// True for a live (zero window) request, false for stored.
    pub live: bool,
    /// A name for what is paid, unique per account (e.g. `job:12:lease:345`), for work that may be billed again
    /// after a crash: the ledger charges a reference once. A second [`Ledger::settle`] or [`Ledger::charge`]
    /// with a reference the account's ledger already holds charges nothing, writes no row, frees its hold and
    /// returns the balance; `None` (every synchronous request) is never matched.
    pub reference: Option<String>,
}

/// One ledger row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerEntry {
    /// Its id (increasing).
    pub id: i64,
    /// The account.
    pub account: AccountId,
    /// When it was written.
    pub at: jiff::Timestamp,
    /// `grant` or `charge`.
    pub kind: EntryKind,
    /// Signed change of the balance: positive for grants, zero or negative for charges.
    pub delta: Credits,
    /// The balance after this row.
    pub balance_after: Credits,
    /// For charges: the key, URLs requested and returned, live or stored.
    pub charge: Option<Charge>,
    /// For grants: the reason given.
    pub note: Option<String>,
}

/// The kind of a ledger row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// Credits added.
    Grant,
    /// A request billed.
    Charge,
}

/// Why a billing operation did not happen.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// The account's available credits (balance minus holds) do not cover the amount.
    #[error("insufficient credits: {available} available, {required} required")]
    InsufficientCredits {
        /// Balance minus the holds of requests in flight.
        available: Credits,
        /// What the operation needed.
        required: Credits,
    },
    /// No account has that id or name.
    #[error("no account `{0}`")]
    UnknownAccount(String),
    /// The reservation was already settled or released (or dropped as stale).
    #[error("reservation {0} is no longer held")]
    ReservationGone(i64),
    /// A charge larger than its reservation, or a negative amount.
    #[error("invalid amount: {0}")]
    InvalidAmount(String),
    /// A test-mode tenant reached a ledger that keeps live accounts only: the engines
    /// (`SqliteLedger`, `PgLedger`) are served test mode by
    /// [`WithTestMode`], which answers for test tenants itself.
    #[error(
        "{0} is a test-mode tenant: this ledger keeps live accounts only (wrap it in WithTestMode)"
    )]
    NotLive(Tenant),
    /// The backend failed; its error is the source.
    #[error("the ledger store failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Where accounts, holds and ledger rows live. Every method is atomic; implementations must be safe to share
/// between tasks, and say which processes may share their database (a backend for several servers keeps holds
/// where every server sees them; `SqliteLedger` keeps them in the one serving process).
#[async_trait::async_trait]
pub trait Ledger: Send + Sync + std::fmt::Debug {
    /// The account called `name`, created with a zero balance if it does not exist.
    async fn ensure_account(&self, name: &str) -> Result<Account, LedgerError>;
    /// The account called `name`.
    async fn account_by_name(&self, name: &str) -> Result<Option<Account>, LedgerError>;
    /// The account with this id.
    async fn account(&self, id: AccountId) -> Result<Option<Account>, LedgerError>;
    /// All accounts, by name.
    async fn accounts(&self) -> Result<Vec<Account>, LedgerError>;
    /// Sets (or with `None` removes) the account's [`Account::low_balance_threshold`]; returns the account. A
    /// threshold above the balance makes the account low at once, and raises its [`BalanceAlert`] if it was not.
    ///
    /// # Errors
    /// [`LedgerError::UnknownAccount`]; [`LedgerError::InvalidAmount`] for a negative threshold.
    async fn set_low_balance_threshold(
        &self,
        tenant: Tenant,
        threshold: Option<Credits>,
    ) -> Result<Account, LedgerError>;
    /// Replaces the account's own quotas with `quotas` (all `None`: the deployment's again); returns the account.
    ///
    /// # Errors
    /// [`LedgerError::UnknownAccount`].
    async fn set_quotas(
        &self,
        account: AccountId,
        quotas: QuotaOverrides,
    ) -> Result<Account, LedgerError>;
    /// Up to `limit` alerts not yet announced, the latest crossing of each account (one raised and overtaken
    /// before it was announced is not told apart: the account is low either way), oldest first.
    async fn balance_alerts(&self, limit: u32) -> Result<Vec<BalanceAlert>, LedgerError>;
    /// Records `alert` as announced, so [`Ledger::balance_alerts`] no longer lists it (nor any earlier crossing).
    async fn balance_alert_announced(&self, alert: &BalanceAlert) -> Result<(), LedgerError>;
    /// Adds `amount` (positive) to the balance with a `grant` row; returns the new balance.
    async fn grant(
        &self,
        account: AccountId,
        amount: Credits,
        note: &str,
    ) -> Result<Credits, LedgerError>;
    /// Holds `amount` if the balance minus existing holds covers it.
    async fn reserve(&self, tenant: Tenant, amount: Credits) -> Result<Reservation, LedgerError>;
    /// Charges `charge.amount` (at most the hold), writes the `charge` row and frees the hold; returns the new
    /// balance. A zero charge still writes its row: the ledger doubles as the usage log.
    async fn settle(
        &self,
        reservation: Reservation,
        charge: Charge,
    ) -> Result<Credits, LedgerError>;
    /// Charges at once, without a hold, for a request whose answers are all known before it is billed (every
    /// page from a stored snapshot): when the balance minus every hold covers `required` (what the request could
    /// have cost), takes `charge.amount` (at most `required`) and writes the `charge` row in one atomic step;
    /// otherwise [`LedgerError::InsufficientCredits`] and nothing changes. The same rules as [`Ledger::reserve`]
    /// then [`Ledger::settle`], which is what this default does; a backend on a shared database does it in one
    /// round trip. Returns the new balance.
    async fn charge(
        &self,
        tenant: Tenant,
        required: Credits,
        charge: Charge,
    ) -> Result<Credits, LedgerError> {
        check_charge(required, &charge)?;
        let hold = self.reserve(tenant, required).await?;
        self.settle(hold, charge).await
    }
    /// Frees a hold without charging or writing a row (the request failed before it did anything).
    async fn release(&self, reservation: Reservation) -> Result<(), LedgerError>;
    /// Counts a hold as made now, for [`Ledger::release_stale`]: a request that may run longer than the sweep's
    /// age (resolving many domains) renews its hold while it runs, so the hold stands until it settles.
    /// [`LedgerError::ReservationGone`] when the hold was freed already.
    async fn renew(&self, reservation: &Reservation) -> Result<(), LedgerError>;
    /// Frees holds made before `made_before` (left by a server that stopped mid-request); returns how many.
    async fn release_stale(&self, made_before: jiff::Timestamp) -> Result<u64, LedgerError>;
    /// Frees the holds this server made before it started (it stopped mid-request): on a backend only one server
    /// uses, every hold; on a shared one, the holds tagged with this server's name. Call it at start; returns how
    /// many.
    async fn release_own(&self) -> Result<u64, LedgerError>;
    /// Up to `limit` ledger rows of an account, newest first; with `before`, only rows whose id is below it (the
    /// next page after a page whose last row had that id).
    async fn entries(
        &self,
        tenant: Tenant,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<LedgerEntry>, LedgerError>;
    /// The credits held for the account's requests in flight (on SQLite this server's; on PostgreSQL every
    /// server's).
    async fn held(&self, tenant: Tenant) -> Result<Credits, LedgerError>;
    /// The account's charges per UTC day from `since` on, oldest day first; days without charges are left out.
    async fn daily_usage(
        &self,
        tenant: Tenant,
        since: jiff::Timestamp,
    ) -> Result<Vec<DailyUsage>, LedgerError>;
}

/// The live account a ledger engine bills for `tenant`, or [`LedgerError::NotLive`] for a test tenant (every
/// engine's caller-facing methods ask here, so test mode can never reach a real balance).
pub(crate) fn live_only(tenant: Tenant) -> Result<AccountId, LedgerError> {
    match tenant.mode {
        Mode::Live => Ok(tenant.account),
        Mode::Test => Err(LedgerError::NotLive(tenant)),
    }
}

/// [`LedgerError::InvalidAmount`] for a negative hold (every backend's [`Ledger::reserve`] asks here).
pub(crate) fn check_hold(amount: Credits) -> Result<(), LedgerError> {
    if amount.millis() < 0 {
        return Err(LedgerError::InvalidAmount(format!(
            "a hold cannot be negative: {amount}"
        )));
    }
    Ok(())
}

/// [`LedgerError::InvalidAmount`] for a negative threshold.
pub(crate) fn check_threshold(threshold: Option<Credits>) -> Result<(), LedgerError> {
    match threshold {
        Some(t) if t.millis() < 0 => Err(LedgerError::InvalidAmount(format!(
            "a low-balance threshold cannot be negative: {t}"
        ))),
        _ => Ok(()),
    }
}

/// [`LedgerError::InvalidAmount`] unless `charge` is between zero and `most` (its hold, or what an immediate
/// charge was checked against).
pub(crate) fn check_charge(most: Credits, charge: &Charge) -> Result<(), LedgerError> {
    if charge.amount.millis() < 0 || charge.amount > most {
        return Err(LedgerError::InvalidAmount(format!(
            "a charge of {} does not fit the {most} it was checked against",
            charge.amount
        )));
    }
    Ok(())
}

/// One UTC day of an account's charges, split by live and stored requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DailyUsage {
    /// The day (UTC).
    pub day: jiff::civil::Date,
    /// Requests with a zero freshness window.
    pub live: UsageCounts,
    /// Requests that accepted stored snapshots.
    pub stored: UsageCounts,
}

/// Totals of one kind of request over one day.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UsageCounts {
    /// Requests billed (each writes one charge row, even at zero).
    pub requests: u64,
    /// Companies returned.
    pub returned: u64,
    /// URLs requested but not returned (unresolved).
    pub unresolved: u64,
    /// Credits charged.
    pub credits: Credits,
}

/// Days of usage from per-day, per-kind rows ordered by day: `(day as YYYY-MM-DD, live, counts)`. Both backends'
/// `daily_usage` queries end here.
#[cfg_attr(not(any(feature = "sqlite", feature = "postgres")), allow(dead_code))]
pub(crate) fn usage_days(
    rows: impl IntoIterator<Item = (String, bool, UsageCounts)>,
) -> Result<Vec<DailyUsage>, LedgerError> {
    let mut days: Vec<DailyUsage> = Vec::new();
    for (day, live, counts) in rows {
        let day: jiff::civil::Date = day.parse().map_err(|e| LedgerError::Backend(Box::new(e)))?;
        if days.last().is_none_or(|last| last.day != day) {
            days.push(DailyUsage {
                day,
                live: UsageCounts::default(),
                stored: UsageCounts::default(),
            });
        }
        if let Some(last) = days.last_mut() {
            *(if live {
                &mut last.live
            } else {
                &mut last.stored
            }) = counts;
        }
    }
    Ok(days)
}
