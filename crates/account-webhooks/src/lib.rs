//! An account's webhooks: the endpoints it registers for account events, the secret its events are signed
//! with, and the delivery of every event the service sends (account events and watches' `company.changed`
//! alike), signed, at least once.
//!
//! - **Endpoints** ([`Webhooks::create_endpoint`]) receive the account events they ask for: a job finished or
//!   paused, the balance ran low, a watched page changed, a test `ping` ([`Webhooks::announce`],
//!   [`Webhooks::ping`]); one copy per endpoint that wants the type. An endpoint that fails for the whole retry
//!   window is disabled.
//! - **The feed** ([`Webhooks::events`]): every account event but pings, once, oldest first, with the same id
//!   and body as its deliveries, for clients that poll; kept as long as done deliveries are.
//! - **Signatures** ([`signature`]): `Company-Data-Signature`, an HMAC-SHA256 keyed with the account's secret
//!   ([`account_secret`]), one per tenant (an account's test mode has its own).
//! - **Delivery** ([`Webhooks::start`], [`Webhooks::deliver_once`]): events are claimed from both queues of
//!   the [`WatchStore`] (watches' events and endpoints' copies), fairly between accounts, and POSTed with the
//!   signature, 10 s per attempt, no redirects followed, only to public addresses unless
//!   [`WebhookSettings::allow_private`]. A failure (no 2xx, a time-out) is tried again after 30 s, 1 min, 2 min,
//!   … up to an hour apart, for 24 h from the event; then the event is dropped and its watch or endpoint
//!   disabled (it says why).
//! - **Time** comes from a [`Clock`], so a test runs a day of retries without sleeping.
//!
//! Not here: watches and their refreshes (the company-watch crate, which queues its events for this one to
//! send), HTTP routes, validation of an endpoint request ([`api_contract::EndpointRequest`]), storage
//! (watch-store, which keeps both queues so that one account's share of deliveries counts both).
#![deny(missing_docs)]

mod clock;
mod delivery;
mod endpoints;
mod runner;
pub mod signature;

use std::sync::Arc;
use std::time::Duration;

use company_model::Tenant;
use credit_ledger::{Ledger, Quotas};
use watch_store::{WatchStore, WatchStoreError};

pub use clock::{Clock, ManualClock, SystemClock};
pub use endpoints::{PING_BURST, PING_REFILL, delivery_info, endpoint_info};
pub use runner::{DeliveriesDone, DeliveryRunner};

/// Knobs of webhook delivery and of the accounts' endpoints.
#[derive(Clone, Copy, Debug)]
pub struct WebhookSettings {
    /// Deliver to loopback, private and link-local addresses, and accept `http` webhook URLs (tests and local
    /// receivers only). Default false.
    pub allow_private: bool,
    /// How often the delivery runner looks for due deliveries when none ended. Default 1 s.
    pub poll: Duration,
    /// How long a failing event is retried before it is dropped and its watch or endpoint disabled. Default
    /// 24 h.
    pub retry_window: Duration,
    /// One delivery attempt's time-out. Default 10 s.
    pub delivery_timeout: Duration,
    /// The wait before the first retry; each next one waits twice as long, up to `longest_retry`.
    /// Default 30 s.
    pub first_retry: Duration,
    /// The longest wait between two attempts. Default 1 h.
    pub longest_retry: Duration,
    /// Deliveries this server attempts at once, of both queues together (watches' events, account events'
    /// copies). Default 16.
    pub deliveries_at_once: u32,
    /// Of those, the most one account may have in flight at once (its test mode's counted with its live
    /// data's, both queues together), however many webhooks and endpoints it has: a tenant whose receivers
    /// never answer holds this many places, never all. Default 4.
    pub deliveries_per_account: u32,
    /// Time to open a connection to a receiver; within `delivery_timeout`. Default 3 s.
    pub connect_timeout: Duration,
    /// The deployment's quotas ([`Quotas::endpoints`]); an account's own replace them.
    pub quotas: Quotas,
    /// How long an event that is done (delivered, or given up after `retry_window`) stays listed among its
    /// endpoint's deliveries before [`Webhooks::forget_done_events`] deletes it. Default 7 days.
    pub done_event_retention: Duration,
}

impl Default for WebhookSettings {
    fn default() -> Self {
        Self {
            allow_private: false,
            poll: Duration::from_secs(1),
            retry_window: Duration::from_hours(24),
            delivery_timeout: Duration::from_secs(10),
            first_retry: Duration::from_secs(30),
            longest_retry: Duration::from_hours(1),
            deliveries_at_once: 16,
            deliveries_per_account: 4,
            connect_timeout: Duration::from_secs(3),
            quotas: Quotas::default(),
            done_event_retention: Duration::from_hours(7 * 24),
        }
    }
}

impl WebhookSettings {
    /// [`WebhookSettings::done_event_retention`] in whole days: how long done deliveries are listed and the
    /// account's feed keeps its events, as the API states it.
    pub fn retention_days(&self) -> u64 {
        self.done_event_retention.as_secs() / 86_400
    }
}

/// Why a webhook operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] WatchStoreError),
    /// The webhook HTTP client could not be built.
    #[error("the webhook client could not be built: {0}")]
    Client(String),
    /// The account has as many webhook endpoints as its quota allows ([`Quotas::endpoints`]).
    #[error("the account has {max} webhook endpoints, the most its quota allows; delete one first")]
    TooManyEndpoints {
        /// The quota.
        max: usize,
    },
    /// The ledger failed while reading the account's quotas.
    #[error(transparent)]
    Ledger(#[from] credit_ledger::LedgerError),
    /// The endpoint was pinged [`PING_BURST`] times in quick succession; the next ping may go after this long.
    #[error("this endpoint was pinged too often; ping it again in {} s", shared_limits::wait_seconds(*retry_after))]
    TooManyPings {
        /// When the next ping may go.
        retry_after: Duration,
    },
    /// An event's body could not be written as JSON.
    #[error("the event body could not be written: {0}")]
    Body(String),
}

/// The accounts' webhooks: endpoints, secrets and delivery. Share it behind an `Arc`.
#[derive(Debug)]
pub struct Webhooks {
    store: Arc<dyn WatchStore>,
    ledger: Arc<dyn Ledger>,
    settings: WebhookSettings,
    clock: Arc<dyn Clock>,
    client: reqwest::Client,
    /// Pings per endpoint ([`PING_BURST`], then one per [`PING_REFILL`]).
    pings: Option<shared_limits::RateGate>,
}

impl Webhooks {
    /// The webhooks over `store`, reading accounts' quotas from `ledger`.
    ///
    /// # Errors
    /// [`WebhookError::Client`] when the webhook client cannot be built.
    pub fn new(
        store: Arc<dyn WatchStore>,
        ledger: Arc<dyn Ledger>,
        settings: WebhookSettings,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, WebhookError> {
        let client = public_address::guarded_builder(settings.allow_private, Vec::new())
            .timeout(settings.delivery_timeout)
            .connect_timeout(settings.connect_timeout.min(settings.delivery_timeout))
            .build()
            .map_err(|e| WebhookError::Client(e.to_string()))?;
        Ok(Self {
            store,
            ledger,
            settings,
            clock,
            client,
            pings: endpoints::ping_gate(),
        })
    }

    /// The settings in force ([`WebhookSettings::allow_private`] decides whether `http` webhook URLs are
    /// valid).
    pub fn settings(&self) -> WebhookSettings {
        self.settings
    }

    /// The clock the webhooks read.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// The tenant's webhook secret, made now if it has none ([`account_secret`]).
    ///
    /// # Errors
    /// [`WebhookError::Store`].
    pub async fn secret(&self, tenant: Tenant) -> Result<String, WebhookError> {
        account_secret(self.store.as_ref(), tenant, false).await
    }

    /// Replaces the tenant's webhook secret with a new one and returns it ([`account_secret`]).
    ///
    /// # Errors
    /// [`WebhookError::Store`].
    pub async fn rotate_secret(&self, tenant: Tenant) -> Result<String, WebhookError> {
        account_secret(self.store.as_ref(), tenant, true).await
    }

    /// Deletes the events that are done (delivered or given up) and older than
    /// [`WebhookSettings::done_event_retention`]; returns how many. The service runs it every hour.
    ///
    /// # Errors
    /// [`WebhookError::Store`].
    pub async fn forget_done_events(&self) -> Result<u64, WebhookError> {
        let keep = jiff::SignedDuration::try_from(self.settings.done_event_retention)
            .unwrap_or(jiff::SignedDuration::MAX);
        let before = self
            .clock
            .now()
            .checked_sub(keep)
            .unwrap_or(jiff::Timestamp::MIN);
        Ok(self.store.forget_done_before(before).await?)
    }
}

/// The tenant's webhook secret in `store`: the one it has, made now if it has none; with `rotate`, a new one
/// that replaces it (events sent from then on are signed with it). For the command line, which has the store but
/// no running service.
///
/// # Errors
/// [`WebhookError::Store`].
pub async fn account_secret(
    store: &dyn WatchStore,
    tenant: Tenant,
    rotate: bool,
) -> Result<String, WebhookError> {
    if !rotate && let Some(secret) = store.secret(tenant).await? {
        return Ok(secret);
    }
    Ok(store
        .set_secret(tenant, &signature::new_secret(), rotate)
        .await?)
}

/// A watch's or an endpoint's last delivery attempt as the API shows it.
pub fn delivery_info_of(delivery: &watch_store::DeliveryStatus) -> api_contract::DeliveryInfo {
    api_contract::DeliveryInfo {
        at: delivery.at,
        status: delivery.status,
        error: delivery.error.clone(),
    }
}
