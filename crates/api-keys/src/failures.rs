//! Failed authentications per client address: past the limit, a client is refused before its key is looked at.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::Duration;

// tokio's clock, which tests can pause and advance; outside a runtime it is the system's monotonic clock.
use tokio::time::Instant;

/// How many failed authentications one client address may have in a window. Past it, the address's requests
/// are refused ([`crate::KeyError::TooManyFailures`]) without a digest computed or a row read, until the window
/// ends. IPv6 addresses count per /64 (what one host is normally given). Counted per server, in memory: a
/// flood is refused where it lands, with no database write per attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailureLimit {
    /// Failures allowed per window. Default 20.
    pub max_failures: u32,
    /// The window, counted from an address's first failure in it. Default 60 s.
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

/// Addresses kept before expired windows are swept out.
const SWEEP_ABOVE: usize = 10_000;

#[derive(Clone, Copy)]
struct Window {
    started: Instant,
    failures: u32,
}

/// The failure counts of one server.
#[derive(Debug)]
pub(crate) struct FailedAttempts {
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    limit: FailureLimit,
    by_client: HashMap<IpAddr, WindowDebug>,
}

/// `Window` with a `Debug` that keeps counts out of logs.
#[derive(Clone, Copy)]
struct WindowDebug(Window);

impl std::fmt::Debug for WindowDebug {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} failures", self.0.failures)
    }
}

/// The address failures are counted under: IPv4 as is, IPv6 by its /64, IPv4-mapped IPv6 as IPv4.
fn bucket(client: IpAddr) -> IpAddr {
    match client {
        IpAddr::V4(_) => client,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
        },
    }
}

impl FailedAttempts {
    pub(crate) fn new(limit: FailureLimit) -> Self {
        Self {
            state: Mutex::new(State {
                limit,
                by_client: HashMap::new(),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Single inserts and removes: a panic while holding the lock leaves nothing half-done.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Replaces the limit; counts so far are kept.
    pub(crate) fn set_limit(&self, limit: FailureLimit) {
        self.lock().limit = limit;
    }

    /// How long a failed authentication waits before it is answered.
    pub(crate) fn delay(&self) -> Duration {
        self.lock().limit.delay
    }

    /// `Err(retry after)` when `client` has used up its failures in the current window.
    pub(crate) fn check(&self, client: IpAddr) -> Result<(), Duration> {
        let state = self.lock();
        let Some(window) = state.by_client.get(&bucket(client)).map(|w| w.0) else {
            return Ok(());
        };
        let elapsed = window.started.elapsed();
        if window.failures >= state.limit.max_failures && elapsed < state.limit.window {
            Err(state.limit.window.saturating_sub(elapsed))
        } else {
            Ok(())
        }
    }

    /// Counts one failure of `client`.
    pub(crate) fn record(&self, client: IpAddr) {
        let now = Instant::now();
        let mut state = self.lock();
        let window = state.limit.window;
        let map = &mut state.by_client;
        if map.len() >= SWEEP_ABOVE {
            map.retain(|_, w| now.duration_since(w.0.started) < window);
        }
        let entry = map.entry(bucket(client)).or_insert(WindowDebug(Window {
            started: now,
            failures: 0,
        }));
        if now.duration_since(entry.0.started) >= window {
            entry.0 = Window {
                started: now,
                failures: 0,
            };
        }
        entry.0.failures = entry.0.failures.saturating_add(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_address_is_refused_past_its_failures_until_the_window_ends() {
        let attempts = FailedAttempts::new(FailureLimit {
            max_failures: 3,
            window: Duration::from_millis(200),
            delay: Duration::ZERO,
        });
        let client: IpAddr = "192.0.2.7".parse().expect("address");
        let other: IpAddr = "192.0.2.8".parse().expect("address");
        for _ in 0..3 {
            assert_eq!(attempts.check(client), Ok(()));
            attempts.record(client);
        }
        let retry_after = attempts.check(client).expect_err("refused");
        assert!(retry_after <= Duration::from_millis(200));
        assert_eq!(attempts.check(other), Ok(()), "others are not affected");
        tokio::time::advance(Duration::from_millis(199)).await;
        assert!(
            attempts.check(client).is_err(),
            "the window has a millisecond left"
        );
        tokio::time::advance(Duration::from_millis(1)).await;
        assert_eq!(attempts.check(client), Ok(()), "a new window");
    }

    #[test]
    fn ipv6_counts_per_64_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().expect("address");
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().expect("address");
        let c: IpAddr = "2001:db8:1:3::1".parse().expect("address");
        assert_eq!(bucket(a), bucket(b));
        assert_ne!(bucket(a), bucket(c));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().expect("address");
        assert_eq!(bucket(mapped), "192.0.2.7".parse::<IpAddr>().expect("v4"));
    }
}
