//! What a password costs, bounded: argon2 runs on threads of its own (never on the blocking pool the database's
//! statements use), a full queue is refused at once, and the forms that lead to it are limited per client
//! address and per email before any of it runs.

use std::net::IpAddr;
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use shared_limits::{LimitStore, MemoryLimits, Rate, RateGate, address_bucket, network_bucket};

use crate::AuthError;

/// How much password work the dashboard's forms may cause, and where it runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PasswordLimits {
    /// Password forms (sign-in, accepting an invitation) one client address may send at once; after that one
    /// more per `per_address_window / per_address_burst`. Counted before anything else is read, so a refused
    /// form costs one map look-up. IPv6 counts per /64. Default 10; 0 counts as 1.
    pub per_address_burst: u32,
    /// The time over which an address earns its whole burst back. Default 60 s (one form per 6 s after the
    /// burst).
    pub per_address_window: Duration,
    /// Password forms one client network (an IPv4 /24, an IPv6 /48: [`shared_limits::network_bucket`]) may send at
    /// once, over all its addresses; then one more per `per_address_window / per_network_burst`. Counted beside the
    /// per-address limit, so a client with a whole IPv6 /48 cannot keep the hashing threads busy. Default 50.
    pub per_network_burst: u32,
    /// Sign-in attempts one email may make at once ([`crate::SIGN_IN_BURST`] by default); after that one per
    /// `per_email_refill`.
    pub per_email_burst: u32,
    /// After the email's burst, one more attempt per this interval ([`crate::SIGN_IN_REFILL`] by default).
    pub per_email_refill: Duration,
    /// Threads that hash and verify passwords. Default: half the machine's cores, at least one, so that
    /// hashing can never take every core from the API.
    pub hashing_threads: usize,
    /// Passwords that may wait for a hashing thread; one more is refused at once ([`AuthError::Busy`]).
    /// Default: 4 per thread (with argon2's default parameters, well under a second of waiting).
    pub hashing_queue: usize,
    /// How long a form refused for a limit ([`AuthError::AddressLimited`], [`AuthError::TooManyAttempts`]) waits
    /// before it is answered. It costs no CPU (the request sleeps) and caps what a flood gets per connection:
    /// without it, refusals answered at once let one address's connections take a core away from everyone
    /// else. Default 250 ms, as the API's failed keys.
    pub refusal_delay: Duration,
}

impl Default for PasswordLimits {
    fn default() -> Self {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
        let hashing_threads = (cores / 2).max(1);
        Self {
            per_address_burst: 10,
            per_address_window: Duration::from_mins(1),
            per_network_burst: 50,
            per_email_burst: crate::SIGN_IN_BURST,
            per_email_refill: crate::SIGN_IN_REFILL,
            hashing_threads,
            hashing_queue: hashing_threads * 4,
            refusal_delay: Duration::from_millis(250),
        }
    }
}

/// How long a refusal of [`AuthError::Busy`] asks the client to wait.
const BUSY_RETRY_AFTER: Duration = Duration::from_secs(1);

/// The threads argon2 runs on, with their bounded queue.
#[derive(Debug)]
pub(crate) struct HashingPool {
    sender: SyncSender<Job>,
}

type Job = Box<dyn FnOnce() + Send>;

impl HashingPool {
    /// `threads` (at least one) threads taking from a queue of `queue` places. They end when the pool is
    /// dropped.
    pub(crate) fn new(threads: usize, queue: usize) -> Self {
        let (sender, receiver) = std::sync::mpsc::sync_channel::<Job>(queue);
        let receiver = Arc::new(Mutex::new(receiver));
        for n in 0..threads.max(1) {
            let receiver = Arc::clone(&receiver);
            let spawned = std::thread::Builder::new()
                .name(format!("password-{n}"))
                .spawn(move || {
                    loop {
                        // The lock is held only while waiting for the next job, not while running it.
                        let job = receiver
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .recv();
                        let Ok(job) = job else { break };
                        // A job that panics loses its answer (its caller sees an error), not the thread.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                });
            if let Err(error) = spawned {
                tracing::error!(%error, "could not start a password hashing thread");
            }
        }
        Self { sender }
    }

    /// Runs `work` on a hashing thread and waits for it without holding an async worker.
    ///
    /// # Errors
    /// As [`HashingPool::submit`]; [`AuthError::Hashing`] when the work did not finish (its thread is gone).
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<T, AuthError> {
        self.submit(work)?
            .await
            .map_err(|_| AuthError::Hashing("the hashing thread stopped".into()))
    }

    /// Queues `work` for a hashing thread: its answer arrives on the receiver.
    ///
    /// # Errors
    /// [`AuthError::Busy`] at once when every thread is busy and the queue full; [`AuthError::Hashing`] when no
    /// thread runs.
    fn submit<T: Send + 'static>(
        &self,
        work: impl FnOnce() -> T + Send + 'static,
    ) -> Result<tokio::sync::oneshot::Receiver<T>, AuthError> {
        let (done, answer) = tokio::sync::oneshot::channel();
        let span = tracing::Span::current();
        let job: Job = Box::new(move || {
            let _ = done.send(span.in_scope(work));
        });
        match self.sender.try_send(job) {
            Ok(()) => Ok(answer),
            Err(TrySendError::Full(_)) => {
                metrics::counter!("company_data_password_work_refused_total", "why" => "busy")
                    .increment(1);
                Err(AuthError::Busy {
                    retry_after: BUSY_RETRY_AFTER,
                })
            }
            Err(TrySendError::Disconnected(_)) => {
                Err(AuthError::Hashing("no hashing thread is running".into()))
            }
        }
    }
}

/// The per-address and per-email limits, counted in this process's memory: a flood is refused where it lands,
/// with no database write per attempt (as the API's failed-key limit). State is bounded: buckets that are full
/// again are dropped once there are many (`shared-limits`' memory store).
#[derive(Debug)]
pub(crate) struct FormLimits {
    per_address: Option<RateGate>,
    per_network: Option<RateGate>,
    per_email: Option<RateGate>,
    refusal_delay: Duration,
}

impl FormLimits {
    pub(crate) fn new(limits: &PasswordLimits) -> Self {
        let store: Arc<dyn LimitStore> = Arc::new(MemoryLimits::new());
        let per_address = Rate {
            per_second: f64::from(limits.per_address_burst.max(1))
                / limits.per_address_window.as_secs_f64(),
            burst: limits.per_address_burst,
        };
        let per_network = Rate {
            per_second: f64::from(limits.per_network_burst.max(1))
                / limits.per_address_window.as_secs_f64(),
            burst: limits.per_network_burst,
        };
        let per_email = Rate {
            per_second: 1.0 / limits.per_email_refill.as_secs_f64(),
            burst: limits.per_email_burst,
        };
        Self {
            per_address: RateGate::new(Arc::clone(&store), per_address),
            per_network: RateGate::new(Arc::clone(&store), per_network),
            per_email: RateGate::new(store, per_email),
            refusal_delay: limits.refusal_delay,
        }
    }

    /// Counts one password form from `client` (none: a caller with no address, such as the command line), for
    /// its address and for its network.
    ///
    /// # Errors
    /// [`AuthError::AddressLimited`] when the address, or its network, has no form left.
    pub(crate) async fn address(&self, client: Option<IpAddr>) -> Result<(), AuthError> {
        let Some(client) = client else {
            return Ok(());
        };
        for (gate, name) in [
            (
                &self.per_address,
                format!("password-forms:{}", address_bucket(client)),
            ),
            (
                &self.per_network,
                format!("password-forms-net:{}", network_bucket(client)),
            ),
        ] {
            let Some(gate) = gate else { continue };
            if let Err(refused) = gate.check(&name).await {
                metrics::counter!("company_data_password_work_refused_total", "why" => "address")
                    .increment(1);
                tokio::time::sleep(self.refusal_delay).await;
                return Err(AuthError::AddressLimited {
                    retry_after: refused.retry_after,
                });
            }
        }
        Ok(())
    }

    /// Counts one sign-in attempt for the (lower-cased) `email`.
    ///
    /// # Errors
    /// [`AuthError::TooManyAttempts`] when the email has no attempt left.
    pub(crate) async fn email(&self, email: &str) -> Result<(), AuthError> {
        let Some(gate) = &self.per_email else {
            return Ok(());
        };
        match gate.check(&format!("sign-in:{email}")).await {
            Ok(_) => Ok(()),
            Err(refused) => {
                tokio::time::sleep(self.refusal_delay).await;
                Err(AuthError::TooManyAttempts {
                    retry_after: refused.retry_after,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_full_queue_is_refused_at_once_and_the_pool_goes_on() {
        let pool = HashingPool::new(1, 1);
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let (started, running) = tokio::sync::oneshot::channel();
        // One job holds the thread, one waits in the queue: the third is refused without waiting.
        let holding = pool
            .submit(move || {
                let _ = started.send(());
                let _ = wait.recv();
                1
            })
            .expect("a thread is free");
        running.await.expect("the first job runs");
        let queued = pool.submit(|| 2).expect("the queue has a place");
        assert!(matches!(pool.submit(|| 3), Err(AuthError::Busy { .. })));
        release.send(()).expect("release");
        assert_eq!(holding.await.expect("ran"), 1);
        assert_eq!(queued.await.expect("ran"), 2);
        assert_eq!(pool.run(|| 4).await.expect("room again"), 4);
    }

    #[tokio::test]
    async fn a_panicking_job_loses_its_answer_not_the_thread() {
        let pool = HashingPool::new(1, 4);
        assert!(matches!(
            pool.run(|| panic!("argon2 exploded")).await,
            Err::<(), _>(AuthError::Hashing(_))
        ));
        assert_eq!(pool.run(|| 5).await.expect("still running"), 5);
    }
}
