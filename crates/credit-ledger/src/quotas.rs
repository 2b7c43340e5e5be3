//! How much of the shared service one account may hold at once: set for the deployment (`serve` flags), and
//! per account where the operator raised or lowered it (`company-data accounts quotas`, the dashboard's Admin
//! page). Kept on the account's row beside its other settings; each store that holds what a quota counts
//! checks it in the step that adds to it (so concurrent requests cannot pass it together).

use serde::{Deserialize, Serialize};

use crate::{AccountId, Ledger, LedgerError};

/// The quotas in force for an account.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Quotas {
    /// Bulk jobs not yet ended (queued, running or paused) at once. Default 10.
    pub open_jobs: u32,
    /// Inputs of those jobs not yet answered, all together (a paused job's too). Default 200,000: two full
    /// jobs of 100,000 URLs each.
    pub queued_urls: u64,
    /// Watches. Default 1,000.
    pub watches: u32,
    /// Webhook endpoints. Default [`api_contract::MAX_ENDPOINTS`] (10).
    pub endpoints: u32,
    /// API keys not revoked, live and test-mode together. Default 100.
    pub keys: u32,
    /// Megabytes of answers kept for `Idempotency-Key` retries (each kept 24 hours). Default 1,024.
    pub idempotency_mb: u32,
}

impl Default for Quotas {
    fn default() -> Self {
        Self {
            open_jobs: 10,
            queued_urls: 200_000,
            watches: 1_000,
            endpoints: u32::try_from(api_contract::MAX_ENDPOINTS).unwrap_or(u32::MAX),
            keys: 100,
            idempotency_mb: 1024,
        }
    }
}

/// An account's own quotas: each set one replaces the deployment's ([`Quotas`]), each `None` leaves it.
/// Stored on the account's row as JSON (`{"open_jobs": 50}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuotaOverrides {
    /// [`Quotas::open_jobs`] for this account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_jobs: Option<u32>,
    /// [`Quotas::queued_urls`] for this account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued_urls: Option<u64>,
    /// [`Quotas::watches`] for this account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watches: Option<u32>,
    /// [`Quotas::endpoints`] for this account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoints: Option<u32>,
    /// [`Quotas::keys`] for this account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keys: Option<u32>,
    /// [`Quotas::idempotency_mb`] for this account.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_mb: Option<u32>,
}

impl QuotaOverrides {
    /// The quotas in force: each override set, else the deployment's.
    pub fn over(&self, deployment: &Quotas) -> Quotas {
        Quotas {
            open_jobs: self.open_jobs.unwrap_or(deployment.open_jobs),
            queued_urls: self.queued_urls.unwrap_or(deployment.queued_urls),
            watches: self.watches.unwrap_or(deployment.watches),
            endpoints: self.endpoints.unwrap_or(deployment.endpoints),
            keys: self.keys.unwrap_or(deployment.keys),
            idempotency_mb: self.idempotency_mb.unwrap_or(deployment.idempotency_mb),
        }
    }

    /// `self` with every override `newer` sets replacing this one's.
    #[must_use]
    pub fn merged(self, newer: Self) -> Self {
        Self {
            open_jobs: newer.open_jobs.or(self.open_jobs),
            queued_urls: newer.queued_urls.or(self.queued_urls),
            watches: newer.watches.or(self.watches),
            endpoints: newer.endpoints.or(self.endpoints),
            keys: newer.keys.or(self.keys),
            idempotency_mb: newer.idempotency_mb.or(self.idempotency_mb),
        }
    }

    /// As stored: JSON, `None` when nothing is overridden.
    pub(crate) fn to_stored(self) -> Option<String> {
        (self != Self::default()).then(|| serde_json::to_string(&self).unwrap_or_default())
    }

    /// Read back; text that does not parse overrides nothing.
    pub(crate) fn from_stored(text: Option<&str>) -> Self {
        text.and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_default()
    }
}

/// The quotas in force for `account` under the deployment's `deployment`: its own overrides applied. Both of
/// its tenants have them; what each holds is counted apart.
///
/// # Errors
/// [`LedgerError::UnknownAccount`]; [`LedgerError::Backend`].
pub async fn quotas_of(
    ledger: &dyn Ledger,
    account: AccountId,
    deployment: &Quotas,
) -> Result<Quotas, LedgerError> {
    let found = ledger
        .account(account)
        .await?
        .ok_or_else(|| LedgerError::UnknownAccount(account.to_string()))?;
    Ok(found.quotas.over(deployment))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_only_what_they_set() {
        let deployment = Quotas::default();
        let own = QuotaOverrides {
            open_jobs: Some(50),
            ..QuotaOverrides::default()
        };
        assert_eq!(
            own.over(&deployment),
            Quotas {
                open_jobs: 50,
                ..deployment
            }
        );
        let raised = own.merged(QuotaOverrides {
            keys: Some(3),
            ..QuotaOverrides::default()
        });
        assert_eq!((raised.open_jobs, raised.keys), (Some(50), Some(3)));
        assert_eq!(QuotaOverrides::default().to_stored(), None);
        assert_eq!(QuotaOverrides::from_stored(own.to_stored().as_deref()), own);
        assert_eq!(own.to_stored().as_deref(), Some(r#"{"open_jobs":50}"#));
        assert_eq!(
            QuotaOverrides::from_stored(Some("not json")),
            QuotaOverrides::default()
        );
    }
}
