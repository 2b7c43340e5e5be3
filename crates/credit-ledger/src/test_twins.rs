//! Test twins ([`AccountId::test_twin`]): the accounts test-mode keys act for, which spend nothing.

use std::sync::Arc;

use company_model::AccountId;

use crate::{
    Account, BalanceAlert, Charge, Credits, DailyUsage, Ledger, LedgerEntry, LedgerError,
    QuotaOverrides, Reservation,
};

/// The balance a test twin always has: 1,000,000 credits. Test-mode requests are never refused for credits and
/// never lower it.
pub const TEST_BALANCE: Credits = Credits::from_millis(1_000_000_000);

/// What `account` is charged for an answer priced `amount`: `amount`, or nothing for a test twin. Whoever builds
/// a [`Charge`] asks here, so the `X-Credits-Charged` a test key sees is what it spent: nothing, and its balance,
/// [`TEST_BALANCE`], never moves.
pub fn billed(account: AccountId, amount: Credits) -> Credits {
    if account.is_test() {
        Credits::ZERO
    } else {
        amount
    }
}

/// A ledger that answers for test twins itself and hands every live account to the ledger it wraps.
///
/// A test twin (a negative [`AccountId`]) has [`TEST_BALANCE`]; its holds and charges are checked as a live
/// account's are (a charge above its hold is still refused) and then written nowhere: nothing is spent, no
/// ledger row is kept, the live account's balance never moves. It has no rows, usage, holds or low-balance
/// threshold, and takes no grants. [`Ledger::account`] of a twin is its live account's, named `<name> (test)`.
#[derive(Debug)]
pub struct WithTestTwins(Arc<dyn Ledger>);

impl WithTestTwins {
    /// `live` for live accounts; test twins answered here.
    pub fn new(live: Arc<dyn Ledger>) -> Self {
        Self(live)
    }
}

#[async_trait::async_trait]
impl Ledger for WithTestTwins {
    async fn ensure_account(&self, name: &str) -> Result<Account, LedgerError> {
        self.0.ensure_account(name).await
    }

    async fn account_by_name(&self, name: &str) -> Result<Option<Account>, LedgerError> {
        self.0.account_by_name(name).await
    }

    async fn account(&self, id: AccountId) -> Result<Option<Account>, LedgerError> {
        if !id.is_test() {
            return self.0.account(id).await;
        }
        Ok(self.0.account(id.live()).await?.map(|live| Account {
            id,
            name: format!("{} (test)", live.name),
            balance: TEST_BALANCE,
            created_at: live.created_at,
            low_balance_threshold: None,
            quotas: live.quotas,
        }))
    }

    async fn accounts(&self) -> Result<Vec<Account>, LedgerError> {
        self.0.accounts().await
    }

    async fn set_low_balance_threshold(
        &self,
        account: AccountId,
        threshold: Option<Credits>,
    ) -> Result<Account, LedgerError> {
        if !account.is_test() {
            return self.0.set_low_balance_threshold(account, threshold).await;
        }
        crate::check_threshold(threshold)?;
        // A twin's balance never moves, so it can never fall below a threshold: none is kept.
        self.account(account)
            .await?
            .ok_or_else(|| LedgerError::UnknownAccount(account.to_string()))
    }

    async fn set_quotas(
        &self,
        account: AccountId,
        quotas: QuotaOverrides,
    ) -> Result<Account, LedgerError> {
        // A twin has its live account's quotas: they are set there.
        self.0.set_quotas(account.live(), quotas).await?;
        self.account(account)
            .await?
            .ok_or_else(|| LedgerError::UnknownAccount(account.to_string()))
    }

    async fn balance_alerts(&self, limit: u32) -> Result<Vec<BalanceAlert>, LedgerError> {
        self.0.balance_alerts(limit).await
    }

    async fn balance_alert_announced(&self, alert: &BalanceAlert) -> Result<(), LedgerError> {
        self.0.balance_alert_announced(alert).await
    }

    async fn grant(
        &self,
        account: AccountId,
        amount: Credits,
        note: &str,
    ) -> Result<Credits, LedgerError> {
        if account.is_test() {
            return Err(LedgerError::InvalidAmount(format!(
                "account {account} is a test account: it spends nothing, so it takes no grants"
            )));
        }
        self.0.grant(account, amount, note).await
    }

    async fn reserve(
        &self,
        account: AccountId,
        amount: Credits,
    ) -> Result<Reservation, LedgerError> {
        if !account.is_test() {
            return self.0.reserve(account, amount).await;
        }
        crate::check_hold(amount)?;
        Ok(Reservation {
            id: 0,
            account,
            amount,
        })
    }

    async fn settle(
        &self,
        reservation: Reservation,
        charge: Charge,
    ) -> Result<Credits, LedgerError> {
        if !reservation.account.is_test() {
            return self.0.settle(reservation, charge).await;
        }
        crate::check_charge(reservation.amount, &charge)?;
        Ok(TEST_BALANCE)
    }

    async fn charge(
        &self,
        account: AccountId,
        required: Credits,
        charge: Charge,
    ) -> Result<Credits, LedgerError> {
        if !account.is_test() {
            return self.0.charge(account, required, charge).await;
        }
        crate::check_charge(required, &charge)?;
        Ok(TEST_BALANCE)
    }

    async fn release(&self, reservation: Reservation) -> Result<(), LedgerError> {
        if reservation.account.is_test() {
            return Ok(());
        }
        self.0.release(reservation).await
    }

    async fn renew(&self, reservation: &Reservation) -> Result<(), LedgerError> {
        if reservation.account.is_test() {
            return Ok(());
        }
        self.0.renew(reservation).await
    }

    async fn release_stale(&self, made_before: jiff::Timestamp) -> Result<u64, LedgerError> {
        self.0.release_stale(made_before).await
    }

    async fn release_own(&self) -> Result<u64, LedgerError> {
        self.0.release_own().await
    }

    async fn entries(
        &self,
        account: AccountId,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<LedgerEntry>, LedgerError> {
        if account.is_test() {
            return Ok(Vec::new());
        }
        self.0.entries(account, before, limit).await
    }

    async fn held(&self, account: AccountId) -> Result<Credits, LedgerError> {
        if account.is_test() {
            return Ok(Credits::ZERO);
        }
        self.0.held(account).await
    }

    async fn daily_usage(
        &self,
        account: AccountId,
        since: jiff::Timestamp,
    ) -> Result<Vec<DailyUsage>, LedgerError> {
        if account.is_test() {
            return Ok(Vec::new());
        }
        self.0.daily_usage(account, since).await
    }
}
