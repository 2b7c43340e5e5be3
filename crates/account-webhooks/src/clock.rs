//! Where the service reads the time: the system's, or one a test moves by hand.

use std::sync::Mutex;

/// A source of the current time.
pub trait Clock: Send + Sync + std::fmt::Debug {
    /// Now.
    fn now(&self) -> jiff::Timestamp;
}

/// The system's clock, at millisecond precision (as stores keep times).
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> jiff::Timestamp {
        let now = jiff::Timestamp::now();
        now.round(jiff::Unit::Millisecond).unwrap_or(now)
    }
}

/// A clock that stands still until moved: tests run a day of schedules and a retry window in milliseconds.
#[derive(Debug)]
pub struct ManualClock(Mutex<jiff::Timestamp>);

impl ManualClock {
    /// A clock showing `at`.
    pub fn new(at: jiff::Timestamp) -> Self {
        Self(Mutex::new(at))
    }

    /// Moves it on by `by`.
    pub fn advance(&self, by: std::time::Duration) {
        let by = jiff::SignedDuration::try_from(by).unwrap_or(jiff::SignedDuration::MAX);
        let mut now = self.lock();
        *now = now.checked_add(by).unwrap_or(jiff::Timestamp::MAX);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, jiff::Timestamp> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Clock for ManualClock {
    fn now(&self) -> jiff::Timestamp {
        *self.lock()
    }
}
