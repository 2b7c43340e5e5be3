//! A page's history as an account asks for it: read from the snapshot store, billed like one stored record.

use company_model::CompanyHistory;
use credit_ledger::{Charge, Credits, HISTORY_PRICE};
use page_url::PageUrl;

use crate::{Caller, LookupError, LookupService};

/// A history served ([`LookupService::history`]).
#[derive(Clone, Debug)]
pub struct HistoryOutcome {
    /// The points and changes in the range asked for.
    pub history: CompanyHistory,
    /// What was charged: [`HISTORY_PRICE`], or nothing when the range holds no point and no change.
    pub charged: Credits,
    /// The account's balance after the charge; `None` when nothing was charged (the balance was not read).
    pub remaining: Option<Credits>,
}

impl LookupService {
    /// The history of the page `url` (as requested or as resolved) fetched between `from` and `to` inclusive:
    /// `None` when no snapshot of the page was ever stored (nothing charged; look the page up first). A range
    /// with points or changes is charged [`HISTORY_PRICE`] in one ledger step; an empty one nothing.
    ///
    /// # Errors
    /// [`LookupError::Ledger`] with `InsufficientCredits` when the account cannot pay (nothing returned),
    /// [`LookupError::Snapshots`] or [`LookupError::Ledger`] when a store fails.
    pub async fn history(
        &self,
        caller: Caller,
        url: &PageUrl,
        from: jiff::Timestamp,
        to: jiff::Timestamp,
    ) -> Result<Option<HistoryOutcome>, LookupError> {
        let this = self.serving(caller.tenant)?;
        let Some(stored) = this.snapshots.history(url, from, to).await? else {
            return Ok(None);
        };
        let history = CompanyHistory::new(
            stored.url.as_str().to_owned(),
            stored.points,
            &stored.states,
            from,
            to,
        );
        if history.is_empty() {
            return Ok(Some(HistoryOutcome {
                history,
                charged: Credits::ZERO,
                remaining: None,
            }));
        }
        let charged = credit_ledger::billed(caller.tenant, HISTORY_PRICE);
        let charge = Charge {
            amount: charged,
            key_id: caller.key_id,
            urls_requested: 1,
            urls_returned: 1,
            live: false,
            reference: None,
        };
        let remaining = self
            .ledger
            .charge(caller.tenant, HISTORY_PRICE, charge)
            .await?;
        Ok(Some(HistoryOutcome {
            history,
            charged,
            remaining: Some(remaining),
        }))
    }

    /// Forgets history fetched longer ago than [`crate::LookupSettings::history_retention`] (the snapshots
    /// themselves stay). Run it now and then; returns the rows removed.
    ///
    /// # Errors
    /// [`LookupError::Snapshots`] when the store fails.
    pub async fn forget_old_history(&self) -> Result<u64, LookupError> {
        let keep = jiff::SignedDuration::try_from(self.settings.history_retention)
            .unwrap_or(jiff::SignedDuration::MAX);
        let cutoff = jiff::Timestamp::now()
            .checked_sub(keep)
            .unwrap_or(jiff::Timestamp::MIN);
        Ok(self.snapshots.forget_history_before(cutoff).await?)
    }
}
