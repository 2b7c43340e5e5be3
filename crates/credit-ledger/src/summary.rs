//! What `GET /v1/account` answers: an account's balance, what is held, and its usage this month.

#[cfg(doc)]
use api_contract::MAX_LOW_BALANCE_THRESHOLD;
use api_contract::{AccountUpdate, InvalidRequest};
use company_model::Tenant;

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
    /// Below this balance the account's endpoints that want `account.balance_low` are told, once per fall;
    /// `null` when no threshold is set. Set with `PATCH /v1/account`.
    pub low_balance_threshold: Option<Credits>,
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

/// The summary of `tenant`'s account at `now` (a test tenant's as [`account_of`](crate::account_of) shows it);
/// `None` when there is no such account.
///
/// # Errors
/// [`LedgerError::Backend`] when the ledger cannot be read.
pub async fn account_summary(
    ledger: &dyn Ledger,
    tenant: Tenant,
    now: jiff::Timestamp,
) -> Result<Option<AccountSummary>, LedgerError> {
    let Some(found) = crate::account_of(ledger, tenant).await? else {
        return Ok(None);
    };
    let held = ledger.held(tenant).await?;
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
    for day in ledger.daily_usage(tenant, month_start).await? {
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
        low_balance_threshold: found.low_balance_threshold,
        usage_this_month: usage,
    }))
}

/// The settings an account's owner may change (`PATCH /v1/account`, a JSON Merge Patch, RFC 7396): each member
/// sent replaces the setting, `null` removes it, a member left out leaves it as it is. The body is
/// `api_contract::AccountUpdate`; this is it in the ledger's units.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccountSettings {
    /// `low_balance_threshold`: credits, from 0 to [`MAX_LOW_BALANCE_THRESHOLD`] (rounded to a thousandth), or
    /// `null` for none. `None`: unchanged.
    pub low_balance_threshold: Option<Option<Credits>>,
}

impl AccountSettings {
    /// Reads a body such as `{"low_balance_threshold": 25}` (`AccountUpdate::from_json`), the threshold
    /// rounded to the ledger's thousandth of a credit.
    ///
    /// # Errors
    /// [`InvalidRequest`] naming every problem: a member that is not a setting, a threshold that is not a
    /// number from 0 to [`MAX_LOW_BALANCE_THRESHOLD`] or `null`.
    pub fn from_json(body: &[u8]) -> Result<Self, InvalidRequest> {
        let update = AccountUpdate::from_json(body)?;
        // In range (the body's schema bounds it), so the product fits an i64: a thousandth is the ledger's unit.
        #[allow(clippy::cast_possible_truncation)]
        let credits = |number: f64| Credits::from_millis((number * 1000.0).round() as i64);
        Ok(Self {
            low_balance_threshold: update.low_balance_threshold.map(|sent| sent.map(credits)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_threshold_is_set_removed_or_left_alone() {
        let set = AccountSettings::from_json(br#"{"low_balance_threshold": 2.5}"#).expect("valid");
        assert_eq!(
            set.low_balance_threshold,
            Some(Some(Credits::from_millis(2500)))
        );
        let removed =
            AccountSettings::from_json(br#"{"low_balance_threshold": null}"#).expect("valid");
        assert_eq!(removed.low_balance_threshold, Some(None));
        assert_eq!(
            AccountSettings::from_json(b"{}").expect("valid"),
            AccountSettings::default()
        );
    }

    #[test]
    fn every_problem_is_named() {
        let refused =
            AccountSettings::from_json(br#"{"low_balance_threshold": -1, "balance": 100}"#)
                .expect_err("refused");
        let pointers: Vec<_> = refused
            .problems
            .iter()
            .map(|p| p.pointer.as_str())
            .collect();
        assert_eq!(
            pointers,
            ["/low_balance_threshold", "/balance"],
            "{refused}"
        );
        let tiny =
            AccountSettings::from_json(br#"{"low_balance_threshold": 0.0004}"#).expect("valid");
        assert_eq!(
            tiny.low_balance_threshold,
            Some(Some(Credits::ZERO)),
            "rounded to a thousandth"
        );
        for body in [
            r#"{"low_balance_threshold": "10"}"#,
            r#"{"low_balance_threshold": 1e10}"#,
            "[]",
        ] {
            assert!(
                AccountSettings::from_json(body.as_bytes()).is_err(),
                "{body}"
            );
        }
    }
}
