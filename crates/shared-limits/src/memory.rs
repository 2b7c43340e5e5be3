use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use crate::{Admission, LimitError, LimitStore, Rate, Taken, Ticket, gcra};

/// Limits counted in this process's memory: right for one server (the embedded default), where they cost no
/// round trip. Share it behind an `Arc`.
#[derive(Debug)]
pub struct MemoryLimits {
    started: Instant,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Bucket or pace name → theoretical arrival time, in µs since `started`.
    arrivals: HashMap<String, i64>,
    /// Cap name → its admissions in flight: `(ticket, lapses at µs, units)`.
    admitted: HashMap<String, Vec<(i64, i64, u32)>>,
    next_ticket: i64,
}

/// Above this many names, arrival times already in the past (full buckets) are dropped.
const PRUNE_ABOVE: usize = 10_000;

impl MemoryLimits {
    /// Empty: every bucket full, nothing admitted.
    pub fn new() -> Self {
        Self {
            started: Instant::now(),
            state: Mutex::default(),
        }
    }

    fn now_us(&self) -> i64 {
        i64::try_from(self.started.elapsed().as_micros()).unwrap_or(i64::MAX)
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for MemoryLimits {
    fn default() -> Self {
        Self::new()
    }
}

fn micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

#[async_trait::async_trait]
impl LimitStore for MemoryLimits {
    async fn take(&self, name: &str, rate: Rate, wanted: u32) -> Result<Taken, LimitError> {
        let Some(interval) = rate.interval() else {
            return Ok(Taken::Granted {
                tokens: wanted.max(1),
                backlog: Duration::ZERO,
            });
        };
        let now = self.now_us();
        let mut state = self.state();
        if state.arrivals.len() > PRUNE_ABOVE {
            state.arrivals.retain(|_, tat| *tat > now);
        }
        let tat = state.arrivals.get(name).copied().unwrap_or(now);
        let (tat, taken) = gcra(tat, now, micros(interval), rate.burst(), wanted);
        state.arrivals.insert(name.to_owned(), tat);
        Ok(taken)
    }

    async fn give_back(&self, name: &str, rate: Rate, tokens: u32) -> Result<(), LimitError> {
        if let Some(interval) = rate.interval()
            && let Some(tat) = self.state().arrivals.get_mut(name)
        {
            *tat -= i64::from(tokens) * micros(interval);
        }
        Ok(())
    }

    async fn next_start(&self, name: &str, interval: Duration) -> Result<Duration, LimitError> {
        let now = self.now_us();
        let mut state = self.state();
        let slot = state.arrivals.get(name).copied().unwrap_or(now).max(now);
        state
            .arrivals
            .insert(name.to_owned(), slot + micros(interval));
        Ok(Duration::from_micros(
            u64::try_from(slot - now).unwrap_or(0),
        ))
    }

    async fn defer(&self, name: &str, delay: Duration) -> Result<(), LimitError> {
        let until = self.now_us().saturating_add(micros(delay));
        let mut state = self.state();
        let slot = state.arrivals.entry(name.to_owned()).or_insert(until);
        *slot = (*slot).max(until);
        Ok(())
    }

    async fn admit(
        &self,
        name: &str,
        units: u32,
        most: u32,
        lasting: Duration,
    ) -> Result<Admission, LimitError> {
        let now = self.now_us();
        let mut state = self.state();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        let entries = state.admitted.entry(name.to_owned()).or_default();
        entries.retain(|(_, lapses, _)| *lapses > now);
        let in_flight: u32 = entries.iter().map(|(_, _, n)| n).sum();
        if in_flight > 0 && in_flight.saturating_add(units) > most {
            let earliest = entries.iter().map(|(_, l, _)| *l).min().unwrap_or(now);
            return Ok(Admission::AtCap {
                in_flight,
                retry_after: Duration::from_micros(u64::try_from(earliest - now).unwrap_or(0)),
            });
        }
        entries.push((ticket, now.saturating_add(micros(lasting)), units));
        Ok(Admission::Admitted(Ticket(ticket)))
    }

    async fn leave(&self, ticket: Ticket) -> Result<(), LimitError> {
        let mut state = self.state();
        for entries in state.admitted.values_mut() {
            entries.retain(|(id, _, _)| *id != ticket.0);
        }
        state.admitted.retain(|_, entries| !entries.is_empty());
        Ok(())
    }

    fn is_shared(&self) -> bool {
        false
    }
}
