//! What `GET /v1/account` answers: an account's balance, what is held, and its usage this month.

use company_model::AccountId;

use crate::{Credits, Ledger, LedgerError};

/// An account as its owner sees it: the balance, the credits held for requests in flight, what is left to
/// spend, and the usage of the current UTC calendar month.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schema", schemars(rename = "Account"))]
pub struct AccountSummary {
    /// The account's id.
    pub account_id: i64,
    /// The account's name.
    pub name: String,
    /// Settled balance, in credits (holds not subtracted).
    pub balance: Credits,
    /// Credits held for requests in flight, charged or freed when they finish.
    pub held: Credits,
    /// What a new request may spend: balance minus held.
    pub available: Credits,
    /// Charges since the start of the current month (UTC).
    pub usage_this_month: MonthUsage,
}

/// An account's charges since the start of a UTC month, from its ledger rows.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct MonthUsage {
    /// The first instant counted: midnight UTC on the first of the month (RFC 3339).
    pub since: String,
    /// Requests billed (each writes one charge row, even at zero).
    pub requests: u64,
    /// Companies returned.
    pub records: u64,
    /// URLs requested that did not resolve (not billed).
    pub unresolved: u64,
    /// Credits charged.
    pub credits: Credits,
}

/// The summary of `account` at `now`; `None` when there is no such account.
///
/// # Errors
/// [`LedgerError::Backend`] when the ledger cannot be read.
pub async fn account_summary(
    ledger: &dyn Ledger,
    account: AccountId,
    now: jiff::Timestamp,
) -> Result<Option<AccountSummary>, LedgerError> {
    let Some(found) = ledger.account(account).await? else {
        return Ok(None);
    };
    let held = ledger.held(account).await?;
    let month_start = now
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
        .first_of_month()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .map_err(|e| LedgerError::Backend(Box::new(e)))?
        .timestamp();
    let mut usage = MonthUsage {
        since: month_start.to_string(),
        requests: 0,
        records: 0,
        unresolved: 0,
        credits: Credits::from_millis(0),
    };
    for day in ledger.daily_usage(account, month_start).await? {
        for counts in [day.live, day.stored] {
            usage.requests += counts.requests;
            usage.records += counts.returned;
            usage.unresolved += counts.unresolved;
            usage.credits = Credits::from_millis(usage.credits.millis() + counts.credits.millis());
        }
    }
    Ok(Some(AccountSummary {
        account_id: found.id.0,
        name: found.name,
        balance: found.balance,
        held,
        available: Credits::from_millis(found.balance.millis() - held.millis()),
        usage_this_month: usage,
    }))
}
