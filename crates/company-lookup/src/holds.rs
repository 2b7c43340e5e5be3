//! A credit hold that is released if nobody settles it ([`HoldGuard`]).

use std::sync::Arc;

use credit_ledger::{Ledger, Reservation};
use tracing::warn;

/// Releases a hold that was neither settled nor released, e.g. when the caller disconnected and the request
/// future was dropped mid-way.
pub(crate) struct HoldGuard {
    ledger: Arc<dyn Ledger>,
    hold: Option<Reservation>,
}

impl HoldGuard {
    /// Guards `hold`, counted in `company_data_credit_holds_in_flight` until it is taken or dropped.
    pub(crate) fn new(ledger: Arc<dyn Ledger>, hold: Reservation) -> Self {
        metrics::gauge!("company_data_credit_holds_in_flight").increment(1.0);
        Self {
            ledger,
            hold: Some(hold),
        }
    }

    pub(crate) fn take(&mut self) -> Option<Reservation> {
        let hold = self.hold.take();
        if hold.is_some() {
            metrics::gauge!("company_data_credit_holds_in_flight").decrement(1.0);
        }
        hold
    }
}

impl Drop for HoldGuard {
    fn drop(&mut self) {
        if let Some(hold) = self.take() {
            let ledger = Arc::clone(&self.ledger);
            // Dropping happens in async context (a request future); without a runtime the stale-hold sweep
            // frees it instead.
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                runtime.spawn(async move {
                    if let Err(error) = ledger.release(hold).await {
                        warn!(%error, "could not release an abandoned credit hold");
                    }
                });
            }
        }
    }
}
