//! Rates and caps counted for a whole deployment: by one process on its own, or by every server on one
//! PostgreSQL database together.
//!
//! Three kinds of limit, each a question a [`LimitStore`] answers atomically:
//! - a **rate** that refuses ([`LimitStore::take`]): GCRA, `per_second` on average and `burst` at once.
//!   [`RateGate`] asks for tokens in leases, so a shared store is asked once per lease rather than once per
//!   request, and gives back what a lease did not use;
//! - a **pace** that never refuses but spaces starts evenly ([`LimitStore::next_start`]); [`Pacer`] waits for
//!   its slot;
//! - a **cap** on units in flight at once ([`LimitStore::admit`], [`LimitStore::leave`]); [`Cap`] hands out a
//!   [`Permit`] that leaves when dropped. An admission lasts at most the time it was admitted for, so the units
//!   of a process that died stop counting by themselves.
//!
//! Backends: [`MemoryLimits`] counts for the one process (the embedded default, on SQLite); `PgLimits`
//! (feature `postgres`) counts in tables of the PostgreSQL database every server shares, with the database's
//! clock, so servers whose clocks differ still agree.
//!
//! When a shared store cannot be asked, the helpers let the request through and log a warning: a limit is not
//! worth an outage, and a request that needs the database fails on its own when the database is away.
//!
//! Not here: which limits a service has or their values (the API's per-key rate, the fetcher's origin pace, the
//! lookup's per-account caps on live lookups and on searches are set where they are used), nor what a refusal
//! answers.
//!
//! ```
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! use std::sync::Arc;
//! use shared_limits::{MemoryLimits, Rate, RateGate};
//! let gate = RateGate::new(Arc::new(MemoryLimits::new()), Rate { per_second: 1.0, burst: 2 }).unwrap();
//! assert_eq!(gate.check("key:7").await.unwrap().remaining, 1);
//! assert_eq!(gate.check("key:7").await.unwrap().remaining, 0);
//! let wait = gate.check("key:7").await.unwrap_err().retry_after; // over the burst: about a second to wait
//! assert!(wait.as_secs_f64() <= 1.0);
//! # });
//! ```
#![deny(missing_docs)]

mod helpers;
mod memory;
#[cfg(feature = "postgres")]
mod postgres;

use std::time::Duration;

pub use helpers::{AtCap, Cap, Pacer, Permit, RateGate, RateRefused, RateStatus};
pub use memory::MemoryLimits;
#[cfg(feature = "postgres")]
pub use postgres::PgLimits;

/// A wait as a refusal tells it, in a message or in `Retry-After` (RFC 9110's delay-seconds): whole seconds,
/// rounded up, at least one, so a client told to wait never comes back early or at once. The one rule for every
/// wait this service tells.
pub fn wait_seconds(wait: Duration) -> u64 {
    (wait.as_secs() + u64::from(wait.subsec_nanos() > 0)).max(1)
}

/// The name a client address is counted under in a per-address limit: IPv4 as is, an IPv4-mapped IPv6
/// address as its IPv4 address, any other IPv6 address by its /64 (what one host is normally given, so a host
/// cannot mint itself fresh buckets from its own prefix).
pub fn address_bucket(client: std::net::IpAddr) -> std::net::IpAddr {
    use std::net::IpAddr;
    match client {
        IpAddr::V4(_) => client,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
        },
    }
}

/// The network a client address is counted under in a limit per network, coarser than [`address_bucket`]: an
/// IPv4 address's /24, an IPv6 address's /48 (what one site is normally given: a client with a whole /48
/// would otherwise have 65,536 address buckets), an IPv4-mapped IPv6 address's IPv4 /24.
pub fn network_bucket(client: std::net::IpAddr) -> std::net::IpAddr {
    use std::net::IpAddr;
    match address_bucket(client) {
        IpAddr::V4(v4) => IpAddr::V4((u32::from(v4) & 0xffff_ff00).into()),
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !((1u128 << 80) - 1)).into()),
    }
}

/// A rate: `per_second` on average, `burst` at once before the average applies (GCRA).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    /// Events per second, on average; a positive, finite number (fractions allowed).
    pub per_second: f64,
    /// Events at once before the rate applies; at least 1 (0 counts as 1).
    pub burst: u32,
}

impl Rate {
    /// The time one event is worth, in whole microseconds (at least 1); `None` when `per_second` is not a
    /// positive, finite number.
    pub fn interval(self) -> Option<Duration> {
        (self.per_second.is_finite() && self.per_second > 0.0)
            .then(|| Duration::from_micros(((1e6 / self.per_second).round() as u64).max(1)))
    }

    /// `burst`, at least 1.
    pub fn burst(self) -> u32 {
        self.burst.max(1)
    }
}

/// What [`LimitStore::take`] gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    /// Some tokens.
    Granted {
        /// How many: at least 1 and at most the number asked for.
        tokens: u32,
        /// How long until the bucket is full again after this take (its theoretical arrival time minus now):
        /// what is left of the burst is `burst - ceil(backlog / interval)`.
        backlog: Duration,
    },
    /// None: the next token is free after this long.
    Wait(Duration),
}

impl Taken {
    /// The tokens granted; 0 for [`Taken::Wait`].
    pub fn tokens(self) -> u32 {
        match self {
            Self::Granted { tokens, .. } => tokens,
            Self::Wait(_) => 0,
        }
    }
}

/// What [`LimitStore::admit`] answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Admitted; give the ticket to [`LimitStore::leave`] when done.
    Admitted(Ticket),
    /// Refused: the cap is reached.
    AtCap {
        /// Units in flight now, under this cap.
        in_flight: u32,
        /// When the earliest admission in flight lapses (an upper bound on the wait for room).
        retry_after: Duration,
    },
}

/// An admission's id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ticket(pub i64);

/// Why a store could not answer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LimitError {
    /// The backend failed; its error is the source.
    #[error("the limit store failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Where limits are counted. Every method is atomic among all the processes that share the store. Names are
/// free text chosen by the caller (e.g. `key:42`, `origin`, `live:7`); rates, paces and caps have separate
/// names.
#[async_trait::async_trait]
pub trait LimitStore: Send + Sync + std::fmt::Debug {
    /// Takes up to `wanted` (at least 1) tokens of the bucket `name` filling at `rate`: as many as are there,
    /// or the wait for the next one. A rate whose [`Rate::interval`] is `None` grants everything asked.
    async fn take(&self, name: &str, rate: Rate, wanted: u32) -> Result<Taken, LimitError>;
    /// Puts back `tokens` taken from `name` and not used.
    async fn give_back(&self, name: &str, rate: Rate, tokens: u32) -> Result<(), LimitError>;
    /// Books the next start of the pace `name`, one every `interval`: how long from now until it.
    async fn next_start(&self, name: &str, interval: Duration) -> Result<Duration, LimitError>;
    /// Pushes the pace `name`'s next start to at least `delay` from now (a start booked later waits for it):
    /// how a route quarantined by one process waits on all.
    async fn defer(&self, name: &str, delay: Duration) -> Result<(), LimitError>;
    /// Admits `units` under the cap `name` of `most` units in flight at once, for at most `lasting`. A
    /// request larger than the cap is admitted when nothing else is in flight under it, so it can run alone.
    async fn admit(
        &self,
        name: &str,
        units: u32,
        most: u32,
        lasting: Duration,
    ) -> Result<Admission, LimitError>;
    /// Ends an admission (one that lapsed already is no error).
    async fn leave(&self, ticket: Ticket) -> Result<(), LimitError>;
    /// True when other processes count in the same store (then asking costs a round trip, and
    /// [`RateGate`] takes tokens in leases).
    fn is_shared(&self) -> bool;
}

/// GCRA in whole microseconds, the one rule both backends follow (`PgLimits` runs the same steps in SQL):
/// from the bucket's theoretical arrival time `tat` at `now`, the new `tat` and what was taken.
fn gcra(tat: i64, now: i64, interval: i64, burst: u32, wanted: u32) -> (i64, Taken) {
    let tat = tat.max(now);
    let room = (i64::from(burst) * interval - (tat - now)) / interval;
    let granted = room.min(i64::from(wanted.max(1)));
    if granted >= 1 {
        let tat = tat + granted * interval;
        (
            tat,
            Taken::Granted {
                tokens: u32::try_from(granted).unwrap_or(1),
                backlog: Duration::from_micros(u64::try_from(tat - now).unwrap_or(0)),
            },
        )
    } else {
        let wait = tat + interval - i64::from(burst) * interval - now;
        (
            tat,
            Taken::Wait(Duration::from_micros(u64::try_from(wait).unwrap_or(0))),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_is_told_in_whole_seconds_rounded_up() {
        assert_eq!(wait_seconds(Duration::ZERO), 1, "never at once");
        assert_eq!(wait_seconds(Duration::from_millis(1)), 1);
        assert_eq!(wait_seconds(Duration::from_secs(29)), 29);
        assert_eq!(
            wait_seconds(Duration::from_millis(29_001)),
            30,
            "never early"
        );
    }

    #[test]
    fn ipv6_counts_per_64_and_mapped_ipv4_as_ipv4() {
        use std::net::IpAddr;
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().expect("address");
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().expect("address");
        let c: IpAddr = "2001:db8:1:3::1".parse().expect("address");
        assert_eq!(address_bucket(a), address_bucket(b));
        assert_ne!(address_bucket(a), address_bucket(c));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().expect("address");
        assert_eq!(
            address_bucket(mapped),
            "192.0.2.7".parse::<IpAddr>().expect("v4")
        );
    }

    #[test]
    fn gcra_grants_the_burst_then_one_per_interval() {
        let (tat, taken) = gcra(0, 1_000, 100, 3, 5);
        assert_eq!(
            taken,
            Taken::Granted {
                tokens: 3,
                backlog: Duration::from_micros(300)
            },
            "a full bucket gives its burst"
        );
        let (tat, taken) = gcra(tat, 1_000, 100, 3, 1);
        assert_eq!(taken, Taken::Wait(Duration::from_micros(100)));
        let (_, taken) = gcra(tat, 1_100, 100, 3, 5);
        assert_eq!(
            taken,
            Taken::Granted {
                tokens: 1,
                backlog: Duration::from_micros(300)
            },
            "one interval later, one token, and the bucket empty again"
        );
        assert_eq!(
            Rate {
                per_second: 4.0,
                burst: 0
            }
            .interval(),
            Some(Duration::from_millis(250))
        );
        for no_rate in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let rate = Rate {
                per_second: no_rate,
                burst: 1,
            };
            assert_eq!(rate.interval(), None, "{no_rate}");
        }
    }
}
