//! Test mode ([`company_model::Mode::Test`]): a test-mode key's [`Tenant`] spends nothing.

use std::sync::Arc;

use company_model::{AccountId, Mode, Tenant};

use crate::{
    Account, BalanceAlert, Charge, Credits, DailyUsage, Ledger, LedgerEntry, LedgerError,
    QuotaOverrides, Reservation,
};

/// The balance a test tenant always has: 1,000,000 credits. Test-mode requests are never refused for credits and
/// never lower it.
pub const TEST_BALANCE: Credits = Credits::from_millis(1_000_000_000);

/// What `tenant` is charged for an answer priced `amount`: `amount`, or nothing in test mode. Whoever builds a
/// [`Charge`] asks here, so the `X-Credits-Charged` a test key sees is what it spent: nothing, and its balance,
/// [`TEST_BALANCE`], never moves.
pub fn billed(tenant: Tenant, amount: Credits) -> Credits {
    match tenant.mode {
        Mode::Live => amount,
        Mode::Test => Credits::ZERO,
    }
}

/// `tenant`'s account as its keys see it: the live account itself, or in test mode the live account named
/// `<name> (test)` with [`TEST_BALANCE`], no low-balance threshold and the live account's quotas. `None` when no
/// account has the id.
///
/// # Errors
/// [`LedgerError::Backend`].
pub async fn account_of(
    ledger: &dyn Ledger,
    tenant: Tenant,
) -> Result<Option<Account>, LedgerError> {
    let found = ledger.account(tenant.account).await?;
    Ok(match tenant.mode {
        Mode::Live => found,
        Mode::Test => found.map(|live| Account {
            name: format!("{} (test)", live.name),
            balance: TEST_BALANCE,
            low_balance_threshold: None,
            ..live
        }),
    })
}

/// A ledger that answers for test tenants itself and hands every live one to the ledger it wraps.
///
/// A test tenant has [`TEST_BALANCE`]; its holds and charges are checked as a live account's are (a charge
/// above its hold is still refused) and then written nowhere: nothing is spent, no ledger row is kept, the live
/// account's balance never moves. It has no rows, usage, holds or low-balance threshold. Grants and quotas
/// name an [`AccountId`], the live account, so a test tenant cannot take either.
#[derive(Debug)]
pub struct WithTestMode(Arc<dyn Ledger>);

impl WithTestMode {
    /// `live` for live tenants; test tenants answered here.
    pub fn new(live: Arc<dyn Ledger>) -> Self {
        Self(live)
    }
}

#[async_trait::async_trait]
impl Ledger for WithTestMode {
    async fn ensure_account(&self, name: &str) -> Result<Account, LedgerError> {
        self.0.ensure_account(name).await
    }

    async fn account_by_name(&self, name: &str) -> Result<Option<Account>, LedgerError> {
        self.0.account_by_name(name).await
    }

    async fn account(&self, id: AccountId) -> Result<Option<Account>, LedgerError> {
        self.0.account(id).await
    }

    async fn accounts(&self) -> Result<Vec<Account>, LedgerError> {
        self.0.accounts().await
    }

    async fn set_low_balance_threshold(
        &self,
        tenant: Tenant,
        threshold: Option<Credits>,
    ) -> Result<Account, LedgerError> {
        if tenant.mode == Mode::Live {
            return self.0.set_low_balance_threshold(tenant, threshold).await;
        }
        crate::check_threshold(threshold)?;
        // A test tenant's balance never moves, so it can never fall below a threshold: none is kept.
        account_of(self.0.as_ref(), tenant)
            .await?
            .ok_or_else(|| LedgerError::UnknownAccount(tenant.account.to_string()))
    }

    async fn set_quotas(
        &self,
        account: AccountId,
        quotas: QuotaOverrides,
    ) -> Result<Account, LedgerError> {
        self.0.set_quotas(account, quotas).await
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
        self.0.grant(account, amount, note).await
    }

    async fn reserve(&self, tenant: Tenant, amount: Credits) -> Result<Reservation, LedgerError> {
        if tenant.mode == Mode::Live {
            return self.0.reserve(tenant, amount).await;
        }
        crate::check_hold(amount)?;
        Ok(Reservation {
            id: 0,
            tenant,
            amount,
        })
    }

    async fn settle(
        &self,
        reservation: Reservation,
        charge: Charge,
    ) -> Result<Credits, LedgerError> {
        if reservation.tenant.mode == Mode::Live {
            return self.0.settle(reservation, charge).await;
        }
        crate::check_charge(reservation.amount, &charge)?;
        Ok(TEST_BALANCE)
    }

    async fn charge(
        &self,
        tenant: Tenant,
        required: Credits,
        charge: Charge,
    ) -> Result<Credits, LedgerError> {
        if tenant.mode == Mode::Live {
            return self.0.charge(tenant, required, charge).await;
        }
        crate::check_charge(required, &charge)?;
        Ok(TEST_BALANCE)
    }

    async fn release(&self, reservation: Reservation) -> Result<(), LedgerError> {
        if reservation.tenant.mode == Mode::Test {
            return Ok(());
        }
        self.0.release(reservation).await
    }

    async fn renew(&self, reservation: &Reservation) -> Result<(), LedgerError> {
        if reservation.tenant.mode == Mode::Test {
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
        tenant: Tenant,
        before: Option<i64>,
        limit: u32,
    ) -> Result<Vec<LedgerEntry>, LedgerError> {
        if tenant.mode == Mode::Test {
            return Ok(Vec::new());
        }
        self.0.entries(tenant, before, limit).await
    }

    async fn held(&self, tenant: Tenant) -> Result<Credits, LedgerError> {
        if tenant.mode == Mode::Test {
            return Ok(Credits::ZERO);
        }
        self.0.held(tenant).await
    }

    async fn daily_usage(
        &self,
        tenant: Tenant,
        since: jiff::Timestamp,
    ) -> Result<Vec<DailyUsage>, LedgerError> {
        if tenant.mode == Mode::Test {
            return Ok(Vec::new());
        }
        self.0.daily_usage(tenant, since).await
    }
}
