//! Failed authentications per client address: past the limit, a client is refused before its key is looked at.
//!
//! The counting is the project's one rate limiter ([`shared_limits::RateGate`], GCRA): each failure takes a
//! token of the address's bucket. What is kept here is only the answer to "is this address refused now?", so a
//! refused request costs one map read and no token.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use shared_limits::{LimitStore, MemoryLimits, Rate, RateGate, address_bucket as bucket};
// tokio's clock, which tests can pause and advance; outside a runtime it is the system's monotonic clock.
use tokio::time::Instant;

/// How many failed authentications one client address may have. An address may fail `max_failures` times at
/// once; after that it earns one more try every `window / max_failures` (3 s by default), so over any long
/// stretch it gets at most `max_failures` failures per `window`. While it has none left, its requests are
/// refused ([`crate::KeyError::TooManyFailures`]) without a digest computed or a row read. IPv6 addresses
/// count per /64 (what one host is normally given). Counted per server, in memory: a flood is refused where it
/// lands, with no database write per attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailureLimit {
    /// Failures allowed at once, and per `window` on average. Default 20; 0 counts as 1.
    pub max_failures: u32,
    /// The time over which `max_failures` failures are earned back. Default 60 s.
    pub window: Duration,
    /// How long every failed authentication (a key that is not valid, or a refusal past the limit) waits before
    /// it is answered. It costs the server no CPU (the request sleeps) and caps what a flood gets per connection:
    /// 64 connections of made-up keys get at most 64 / delay answers a second, however fast they send, so they
    /// cannot take the server's cores from the keys that are valid. Default 250 ms.
    pub delay: Duration,
}

impl Default for FailureLimit {
    fn default() -> Self {
        Self {
            max_failures: 20,
            window: Duration::from_mins(1),
            delay: Duration::from_millis(250),
        }
    }
}

impl FailureLimit {
    /// The limit as a rate: `max_failures` per `window`, all of them at once.
    fn rate(self) -> Rate {
        Rate {
            per_second: f64::from(self.max_failures.max(1)) / self.window.as_secs_f64(),
            burst: self.max_failures,
        }
    }
}

/// Refusals kept before the lapsed ones are swept out.
const SWEEP_ABOVE: usize = 10_000;

/// The failure counts of one server.
#[derive(Debug)]
pub(crate) struct FailedAttempts {
    /// Where the buckets live: this process's memory (see [`FailureLimit`] for why not the shared store).
    store: Arc<dyn LimitStore>,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    limit: FailureLimit,
    /// `None` when the limit's window is zero: no limit.
    gate: Option<Arc<RateGate>>,
    /// Addresses with no failure left, until when.
    refused_until: HashMap<IpAddr, Instant>,
}

impl FailedAttempts {
    pub(crate) fn new(limit: FailureLimit) -> Self {
        let store: Arc<dyn LimitStore> = Arc::new(MemoryLimits::new());
        Self {
            state: Mutex::new(State {
                limit,
                gate: RateGate::new(Arc::clone(&store), limit.rate()).map(Arc::new),
                refused_until: HashMap::new(),
            }),
            store,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Single inserts and removes: a panic while holding the lock leaves nothing half-done.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Replaces the limit. The buckets are kept (the new rate applies to them from now on); refusals already
    /// given run their course.
    pub(crate) fn set_limit(&self, limit: FailureLimit) {
        let gate = RateGate::new(Arc::clone(&self.store), limit.rate()).map(Arc::new);
        let mut state = self.lock();
        state.limit = limit;
        state.gate = gate;
    }

    /// How long a failed authentication waits before it is answered.
    pub(crate) fn delay(&self) -> Duration {
        self.lock().limit.delay
    }

    /// `Err(retry after)` when `client` has no failure left.
    pub(crate) fn check(&self, client: IpAddr) -> Result<(), Duration> {
        let now = Instant::now();
        let mut state = self.lock();
        let key = bucket(client);
        match state.refused_until.get(&key) {
            Some(&until) if until > now => Err(until - now),
            Some(_) => {
                state.refused_until.remove(&key);
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Counts one failure of `client`; when that was its last, refuses it until it earns one back.
    pub(crate) async fn record(&self, client: IpAddr) {
        let key = bucket(client);
        let Some(gate) = self.lock().gate.clone() else {
            return;
        };
        let refused_for = match gate.check(&format!("auth-failures:{key}")).await {
            // The last failure left: the next is earned back when the bucket is one token short of full.
            Ok(status) if status.remaining == 0 => {
                let per_token = gate.rate().interval().unwrap_or(Duration::ZERO);
                status
                    .reset
                    .saturating_sub(per_token * status.limit.saturating_sub(1))
            }
            Ok(_) => return,
            // Failures that passed `check` together before the first of them was refused.
            Err(refused) => refused.retry_after,
        };
        let now = Instant::now();
        let mut state = self.lock();
        if state.refused_until.len() >= SWEEP_ABOVE {
            state.refused_until.retain(|_, until| *until > now);
        }
        let until = state.refused_until.entry(key).or_insert(now);
        *until = (*until).max(now + refused_for);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_address_is_refused_past_its_failures_and_earns_them_back_one_at_a_time() {
        let attempts = FailedAttempts::new(FailureLimit {
            max_failures: 3,
            window: Duration::from_millis(300),
            delay: Duration::ZERO,
        });
        let client: IpAddr = "192.0.2.7".parse().expect("address");
        let other: IpAddr = "192.0.2.8".parse().expect("address");
        for _ in 0..3 {
            assert_eq!(attempts.check(client), Ok(()));
            attempts.record(client).await;
        }
        let retry_after = attempts.check(client).expect_err("refused");
        assert_eq!(
            retry_after,
            Duration::from_millis(100),
            "one try per 100 ms"
        );
        assert_eq!(attempts.check(other), Ok(()), "others are not affected");
        tokio::time::advance(Duration::from_millis(99)).await;
        assert!(attempts.check(client).is_err(), "a millisecond left");
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(attempts.check(client), Ok(()), "one try earned back");
        attempts.record(client).await;
        assert!(attempts.check(client).is_err(), "and used");
        // A quiet address earns all its tries back.
        tokio::time::advance(Duration::from_millis(300)).await;
        for _ in 0..3 {
            assert_eq!(attempts.check(client), Ok(()));
            attempts.record(client).await;
        }
        assert!(attempts.check(client).is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn a_new_limit_applies_to_the_next_failure() {
        let attempts = FailedAttempts::new(FailureLimit::default());
        let client: IpAddr = "192.0.2.7".parse().expect("address");
        attempts.record(client).await;
        assert_eq!(attempts.check(client), Ok(()));
        attempts.set_limit(FailureLimit {
            max_failures: 2,
            window: Duration::from_secs(2),
            delay: Duration::ZERO,
        });
        attempts.record(client).await;
        assert!(
            attempts.check(client).is_err(),
            "the earlier failure counts"
        );
    }
}
