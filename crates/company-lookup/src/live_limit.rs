//! The per-account cap on live lookups in flight at once, in this process's memory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use company_model::AccountId;
use tokio::time::Instant;

/// Live lookups each account has in flight: one entry per admitted request, `(id, deadline, lookups)`.
#[derive(Debug, Default)]
struct InFlight {
    next_id: u64,
    accounts: HashMap<AccountId, Vec<(u64, Instant, usize)>>,
}

/// Caps the live lookups one account runs at once, so that one customer cannot take every origin connection.
#[derive(Clone, Debug)]
pub(crate) struct LiveLookupLimit {
    limit: usize,
    in_flight: Arc<Mutex<InFlight>>,
}

/// Refusal: the account is at its cap; `retry_after` is when its earliest admitted request reaches its deadline.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AtLimit {
    pub(crate) in_flight: usize,
    /// The cap that refused.
    pub(crate) limit: usize,
    pub(crate) retry_after: Duration,
}

/// An admitted request's share of the cap; dropping it gives the share back.
#[derive(Debug)]
pub(crate) struct LivePermit {
    limit: LiveLookupLimit,
    account: AccountId,
    id: u64,
}

impl LiveLookupLimit {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            in_flight: Arc::default(),
        }
    }

    /// Admits `lookups` live lookups that end by `deadline`, or refuses. A request larger than the cap is admitted
    /// when the account has nothing else in flight, so every valid request can run on its own.
    pub(crate) fn try_admit(
        &self,
        account: AccountId,
        lookups: usize,
        deadline: Instant,
    ) -> Result<LivePermit, AtLimit> {
        let mut state = self
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let id = state.next_id;
        state.next_id += 1;
        let entries = state.accounts.entry(account).or_default();
        let in_flight: usize = entries.iter().map(|(_, _, n)| n).sum();
        if in_flight > 0 && in_flight + lookups > self.limit {
            let earliest = entries.iter().map(|(_, d, _)| *d).min().unwrap_or(deadline);
            return Err(AtLimit {
                in_flight,
                limit: self.limit,
                retry_after: earliest.saturating_duration_since(Instant::now()),
            });
        }
        entries.push((id, deadline, lookups));
        Ok(LivePermit {
            limit: self.clone(),
            account,
            id,
        })
    }
}

impl Drop for LivePermit {
    fn drop(&mut self) {
        let mut state = self
            .limit
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(entries) = state.accounts.get_mut(&self.account) {
            entries.retain(|(id, _, _)| *id != self.id);
            if entries.is_empty() {
                state.accounts.remove(&self.account);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn admits_up_to_the_cap_and_frees_on_drop() {
        let limit = LiveLookupLimit::new(10);
        let account = AccountId(1);
        let deadline = Instant::now() + Duration::from_secs(5);
        let first = limit
            .try_admit(account, 6, deadline)
            .expect("under the cap");
        let refused = limit
            .try_admit(account, 5, deadline)
            .expect_err("6 + 5 > 10");
        assert_eq!(refused.in_flight, 6);
        assert_eq!(refused.limit, 10);
        assert!(refused.retry_after <= Duration::from_secs(5));
        assert!(refused.retry_after > Duration::from_secs(4));
        // Another account is not affected.
        let _other = limit
            .try_admit(AccountId(2), 10, deadline)
            .expect("own cap");
        let second = limit.try_admit(account, 4, deadline).expect("6 + 4 = 10");
        drop(first);
        drop(second);
        let _big = limit
            .try_admit(account, 50, deadline)
            .expect("alone, a request above the cap runs");
        assert!(limit.try_admit(account, 1, deadline).is_err());
    }
}
