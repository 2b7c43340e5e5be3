use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;
use tracing::warn;

use crate::{Admission, LimitStore, Rate, Taken, Ticket};

/// A rate per name (e.g. per API key) over a store, refusing what goes over it.
///
/// On a shared store each check would be a round trip; instead the gate takes a lease of tokens worth 50 ms of
/// the rate (at least 1, at most a quarter of the burst) and spends it locally, giving back what it did not
/// spend once the lease's time is up. Deployment-wide totals stay exact to within one lease per server; a
/// high-rate name costs one round trip per lease, a rate of a few per second one per request.
#[derive(Debug)]
pub struct RateGate {
    store: Arc<dyn LimitStore>,
    rate: Rate,
    interval: Duration,
    lease: u32,
    leases: Mutex<HashMap<String, Lease>>,
}

#[derive(Clone, Copy, Debug)]
struct Lease {
    left: u32,
    until: Instant,
    /// What the store had left of the burst when the lease was taken (the lease excluded).
    store_left: u32,
    /// When the bucket would be full again, as the store said then.
    full_at: Instant,
}

/// Where a name stands against its rate after a check, for `RateLimit-*` headers: exact on one server, within a
/// lease per server on a shared store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateStatus {
    /// The burst: requests that may go at once when the bucket is full.
    pub limit: u32,
    /// Requests that may go now without waiting.
    pub remaining: u32,
    /// Until the whole burst is available again.
    pub reset: Duration,
}

/// A check that was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateRefused {
    /// Until the next event may go.
    pub retry_after: Duration,
    /// Where the name stands (nothing remaining).
    pub status: RateStatus,
}

impl RateGate {
    /// A gate of `rate` on `store`; `None` when the rate is not a positive number (no limit).
    pub fn new(store: Arc<dyn LimitStore>, rate: Rate) -> Option<Self> {
        let interval = rate.interval()?;
        let lease = if store.is_shared() {
            ((rate.per_second / 20.0).floor() as u32).clamp(1, (rate.burst() / 4).max(1))
        } else {
            1
        };
        Some(Self {
            store,
            rate,
            interval,
            lease,
            leases: Mutex::default(),
        })
    }

    /// The rate.
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// Tokens taken from the store at a time.
    pub fn lease_size(&self) -> u32 {
        self.lease
    }

    /// Lets one event of `name` through and says what is left, or says how long until the next may go.
    ///
    /// # Errors
    /// [`RateRefused`] when `name` is over its rate. A store that cannot be asked lets the event through (and
    /// logs), reporting the whole burst as remaining.
    pub async fn check(&self, name: &str) -> Result<RateStatus, RateRefused> {
        let now = Instant::now();
        let limit = self.rate.burst();
        let unused = {
            let mut leases = self.leases.lock().unwrap_or_else(PoisonError::into_inner);
            match leases.get_mut(name) {
                Some(lease) if lease.until > now && lease.left > 0 => {
                    lease.left -= 1;
                    return Ok(RateStatus {
                        limit,
                        remaining: (lease.store_left + lease.left).min(limit),
                        reset: lease.full_at.saturating_duration_since(now),
                    });
                }
                Some(lease) if lease.until <= now => {
                    let unused = lease.left;
                    leases.remove(name);
                    unused
                }
                _ => 0,
            }
        };
        if unused > 0
            && let Err(error) = self.store.give_back(name, self.rate, unused).await
        {
            warn!(%error, "could not give back unused rate tokens");
        }
        match self.store.take(name, self.rate, self.lease).await {
            Ok(Taken::Granted { tokens, backlog }) => {
                let store_left = limit.saturating_sub(
                    u32::try_from(
                        backlog
                            .as_micros()
                            .div_ceil(self.interval.as_micros().max(1)),
                    )
                    .unwrap_or(u32::MAX),
                );
                let full_at = now + backlog;
                if tokens > 1 {
                    let until = now + self.interval * tokens;
                    let mut leases = self.leases.lock().unwrap_or_else(PoisonError::into_inner);
                    let lease = leases.entry(name.to_owned()).or_insert(Lease {
                        left: 0,
                        until,
                        store_left,
                        full_at,
                    });
                    // Two checks that missed the lease together both took one: keep both.
                    lease.left += tokens - 1;
                    lease.until = lease.until.max(until);
                    lease.store_left = store_left;
                    lease.full_at = full_at;
                }
                Ok(RateStatus {
                    limit,
                    remaining: (store_left + tokens - 1).min(limit),
                    reset: backlog,
                })
            }
            Ok(Taken::Wait(wait)) => Err(RateRefused {
                retry_after: wait,
                status: RateStatus {
                    limit,
                    remaining: 0,
                    reset: wait + self.interval * (limit - 1),
                },
            }),
            Err(error) => {
                warn!(%error, "rate limit store unavailable; letting the request through");
                Ok(RateStatus {
                    limit,
                    remaining: limit,
                    reset: Duration::ZERO,
                })
            }
        }
    }
}

/// Starts spaced evenly at a rate over a store: a pace that never refuses, it makes each start wait its turn.
#[derive(Debug)]
pub struct Pacer {
    store: Arc<dyn LimitStore>,
    name: String,
    interval: Duration,
}

impl Pacer {
    /// `per_second` starts under `name`; `None` when that is not a positive number (no pacing).
    pub fn new(store: Arc<dyn LimitStore>, name: &str, per_second: f64) -> Option<Self> {
        let interval = Rate {
            per_second,
            burst: 1,
        }
        .interval()?;
        Some(Self {
            store,
            name: name.to_owned(),
            interval,
        })
    }

    /// Books the next start and waits for it. A store that cannot be asked lets the start go at once (and logs).
    pub async fn wait(&self) {
        match self.store.next_start(&self.name, self.interval).await {
            Ok(wait) if !wait.is_zero() => tokio::time::sleep(wait).await,
            Ok(_) => {}
            Err(error) => warn!(%error, "pace store unavailable; starting without waiting"),
        }
    }
}

/// At most `most` units in flight at once per name, over a store.
#[derive(Clone, Debug)]
pub struct Cap {
    store: Arc<dyn LimitStore>,
    most: u32,
}

/// A refusal of [`Cap::admit`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtCap {
    /// Units in flight under the name now.
    pub in_flight: u32,
    /// The cap.
    pub most: u32,
    /// When the earliest admission in flight lapses.
    pub retry_after: Duration,
}

/// Units admitted by a [`Cap`]; [`Permit::leave`] ends the admission, and dropping the permit ends it in the
/// background (it lapses by itself at its end time if even that cannot run).
#[derive(Debug)]
#[must_use = "the admission ends when the permit is dropped"]
pub struct Permit {
    store: Arc<dyn LimitStore>,
    ticket: Option<Ticket>,
}

impl Cap {
    /// `most` units at once per name on `store`.
    pub fn new(store: Arc<dyn LimitStore>, most: u32) -> Self {
        Self { store, most }
    }

    /// The cap.
    pub fn most(&self) -> u32 {
        self.most
    }

    /// Admits `units` under `name` for at most `lasting`, or refuses. A store that cannot be asked admits (and
    /// logs).
    ///
    /// # Errors
    /// [`AtCap`] when `name` already has units in flight and these would take it over the cap.
    pub async fn admit(&self, name: &str, units: u32, lasting: Duration) -> Result<Permit, AtCap> {
        let ticket = match self.store.admit(name, units, self.most, lasting).await {
            Ok(Admission::Admitted(ticket)) => Some(ticket),
            Ok(Admission::AtCap {
                in_flight,
                retry_after,
            }) => {
                return Err(AtCap {
                    in_flight,
                    most: self.most,
                    retry_after,
                });
            }
            Err(error) => {
                warn!(%error, "cap store unavailable; admitting");
                None
            }
        };
        Ok(Permit {
            store: Arc::clone(&self.store),
            ticket,
        })
    }
}

impl Permit {
    /// Ends the admission now, so that the next [`Cap::admit`] counts without it.
    pub async fn leave(mut self) {
        if let Some(ticket) = self.ticket.take()
            && let Err(error) = self.store.leave(ticket).await
        {
            warn!(%error, "could not end an admission; it lapses at its end time");
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let store = Arc::clone(&self.store);
            runtime.spawn(async move {
                if let Err(error) = store.leave(ticket).await {
                    warn!(%error, "could not end an admission; it lapses at its end time");
                }
            });
        }
    }
}
