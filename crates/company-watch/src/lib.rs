//! Watches on company pages: each refreshes its page on schedule (a live lookup, charged as one), compares the
//! record with the one it saw before, and on a change sends a signed `company.changed` event to the account's
//! webhook, at least once.
//!
//! - **Refreshes** are claimed from the [`WatchStore`] when due, so with several servers on one database each
//!   happens once; each is charged through [`LookupService::run_bulk`] under the reference
//!   `watch:<id>:<due ms>`, so a refresh run again after a crash is paid once. A refresh that fails (no credits,
//!   the page blocked) keeps the baseline and tries again within the hour.
//! - **Events** (`evt_<watch>_<due ms>`, one per refresh at most) are POSTed with
//!   [`signature::SIGNATURE_HEADER`] to the watch's `webhookUrl`, 10 s per attempt, no redirects followed, and
//!   only to public addresses unless [`WatchSettings::allow_private`]. A failure (no 2xx, a time-out) is tried
//!   again after 30 s, 1 min, 2 min, … up to an hour apart, for 24 h from the event; then the event is dropped
//!   and the watch disabled (it says why).
//! - **Account events** (a job finished or paused, the balance ran low, a test `ping`) go to the endpoints
//!   an account registers for them ([`Watches::create_endpoint`], [`Watches::announce`]): one copy per
//!   endpoint that wants the type, sent and retried as a watch's events are; an endpoint that fails for the
//!   whole window is disabled.
//! - **Time** comes from a [`Clock`], so a test runs a day of schedules and retries without sleeping.
//!
//! Not here: HTTP routes, validation of a watch request ([`api_contract::WatchRequest`]), storage (watch-store).
#![deny(missing_docs)]

mod clock;
mod delivery;
mod endpoints;
mod runner;
pub mod signature;

use std::sync::Arc;
use std::time::Duration;

use api_contract::WatchRequest;
use company_lookup::LookupService;
use company_model::Tenant;
use credit_ledger::{Quotas, quotas_of};
use watch_store::{NewWatch, Watch, WatchId, WatchStore, WatchStoreError};

pub use clock::{Clock, ManualClock, SystemClock};
pub use endpoints::{PING_BURST, PING_REFILL, delivery_info, endpoint_info};
pub use runner::Runner;

/// Knobs of the watch service.
#[derive(Clone, Copy, Debug)]
pub struct WatchSettings {
    /// Deliver to loopback, private and link-local addresses, and accept `http` webhook URLs (tests and local
    /// receivers only). Default false.
    pub allow_private: bool,
    /// How often the runner looks for due refreshes and deliveries. Default 1 s.
    pub poll: Duration,
    /// How long a failing event is retried before it is dropped and its watch disabled. Default 24 h.
    pub retry_window: Duration,
    /// One delivery attempt's time-out. Default 10 s.
    pub delivery_timeout: Duration,
    /// The wait before the first retry; each next one waits twice as long, up to `longest_retry`.
    /// Default 30 s.
    pub first_retry: Duration,
    /// The longest wait between two attempts. Default 1 h.
    pub longest_retry: Duration,
    /// Refreshes this server runs at once. Default 4.
    pub refreshes_at_once: u32,
    /// Deliveries this server attempts at once, of both queues together (watches' events, account events'
    /// copies). Default 16.
    pub deliveries_at_once: u32,
    /// Of those, the most one account may have in flight at once (its test mode's counted with its live data's, both
    /// queues together), however many webhooks and endpoints it has: a tenant whose receivers never answer
    /// holds this many places, never all. Default 4.
    pub deliveries_per_account: u32,
    /// Time to open a connection to a receiver; within `delivery_timeout`. Default 3 s.
    pub connect_timeout: Duration,
    /// The deployment's quotas ([`Quotas::watches`], [`Quotas::endpoints`]); an account's own replace them.
    pub quotas: Quotas,
    /// How long an event that is done (delivered, or given up after `retry_window`) stays listed among its
    /// endpoint's deliveries before [`Watches::forget_done_events`] deletes it. Default 7 days.
    pub done_event_retention: Duration,
}

impl Default for WatchSettings {
    fn default() -> Self {
        Self {
            allow_private: false,
            poll: Duration::from_secs(1),
            retry_window: Duration::from_hours(24),
            delivery_timeout: Duration::from_secs(10),
            first_retry: Duration::from_secs(30),
            longest_retry: Duration::from_hours(1),
            refreshes_at_once: 4,
            deliveries_at_once: 16,
            deliveries_per_account: 4,
            connect_timeout: Duration::from_secs(3),
            quotas: Quotas::default(),
            done_event_retention: Duration::from_hours(7 * 24),
        }
    }
}

/// Why a watch operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WatchError {
    /// The watch store failed.
    #[error(transparent)]
    Store(#[from] WatchStoreError),
    /// The snapshot store failed while reading a new watch's baseline.
    #[error(transparent)]
    Snapshots(#[from] snapshot_cache::CacheError),
    /// The webhook HTTP client could not be built.
    #[error("the webhook client could not be built: {0}")]
    Client(String),
    /// The account has as many webhook endpoints as its quota allows ([`Quotas::endpoints`]).
    #[error("the account has {max} webhook endpoints, the most its quota allows; delete one first")]
    TooManyEndpoints {
        /// The quota.
        max: usize,
    },
    /// The request's watches would take the account past its quota ([`Quotas::watches`]); none was created.
    #[error(
        "this request's {adding} watches would take the account past its quota of {quota} watches; delete some first, or ask the operator to raise the quota"
    )]
    TooManyWatches {
        /// The watches the request would add.
        adding: usize,
        /// The quota.
        quota: u32,
    },
    /// The ledger failed while reading the account's quotas.
    #[error(transparent)]
    Ledger(#[from] credit_ledger::LedgerError),
    /// The endpoint was pinged [`PING_BURST`] times in quick succession; the next ping may go after this long.
    #[error("this endpoint was pinged too often; ping it again in {} s", retry_after.as_secs().max(1))]
    TooManyPings {
        /// When the next ping may go.
        retry_after: Duration,
    },
    /// A test-mode watch on a service that does not serve test-mode keys.
    #[error("this server does not serve test-mode keys; use a live key")]
    TestModeUnavailable,
    /// An event's body could not be written as JSON.
    #[error("the event body could not be written: {0}")]
    Body(String),
}

/// What one [`Watches::work_once`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WorkDone {
    /// Refreshes run (fetched or failed).
    pub refreshed: usize,
    /// Change events queued.
    pub events: usize,
    /// Delivery attempts that got a 2xx.
    pub delivered: usize,
    /// Delivery attempts that did not.
    pub failed: usize,
}

/// The watch service. Share it behind an `Arc`.
#[derive(Debug)]
pub struct Watches {
    store: Arc<dyn WatchStore>,
    lookup: Arc<LookupService>,
    settings: WatchSettings,
    clock: Arc<dyn Clock>,
    client: reqwest::Client,
    /// Pings per endpoint ([`PING_BURST`], then one per [`PING_REFILL`]).
    pings: Option<shared_limits::RateGate>,
}

impl Watches {
    /// The service over these parts.
    ///
    /// # Errors
    /// [`WatchError::Client`] when the webhook client cannot be built.
    pub fn new(
        store: Arc<dyn WatchStore>,
        lookup: Arc<LookupService>,
        settings: WatchSettings,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, WatchError> {
        let client = public_address::guarded_builder(settings.allow_private, Vec::new())
            .timeout(settings.delivery_timeout)
            .connect_timeout(settings.connect_timeout.min(settings.delivery_timeout))
            .build()
            .map_err(|e| WatchError::Client(e.to_string()))?;
        Ok(Self {
            store,
            lookup,
            settings,
            clock,
            client,
            pings: endpoints::ping_gate(),
        })
    }

    /// The settings in force ([`WatchSettings::allow_private`] decides whether `http` webhook URLs are valid).
    pub fn settings(&self) -> WatchSettings {
        self.settings
    }

    /// Creates one watch per page of `request` for `tenant`, first due `everyHours` from now, each comparing
    /// its first refresh with the page's newest stored record (if any); makes the account's webhook secret if it
    /// has none. Nothing is fetched or charged now.
    ///
    /// # Errors
    /// [`WatchError`] when a store fails (nothing is created).
    pub async fn create(
        &self,
        tenant: Tenant,
        request: &WatchRequest,
    ) -> Result<Vec<Watch>, WatchError> {
        let pages: Vec<_> = request.urls.iter().map(|u| u.page.clone()).collect();
        // The tenant's own store: a test-mode watch starts from the sandbox's snapshots, never live ones.
        let stored = self
            .lookup
            .snapshots_for(tenant)
            .map_err(|_| WatchError::TestModeUnavailable)?
            .fresh_many(&pages, jiff::Timestamp::MIN)
            .await?;
        let new: Vec<NewWatch> = pages
            .into_iter()
            .map(|url| NewWatch {
                baseline: stored.get(&url).map(|s| s.record.clone()),
                tenant,
                url,
                every_hours: request.every_hours,
                webhook_url: request.webhook_url.clone(),
                fields: request.fields.clone(),
            })
            .collect();
        let quota = self.quotas(tenant).await?.watches;
        // Receivers need the secret from the first event on.
        account_secret(self.store.as_ref(), tenant, false).await?;
        self.store
            .create(&new, quota as usize, self.clock.now())
            .await?
            .ok_or(WatchError::TooManyWatches {
                adding: new.len(),
                quota,
            })
    }

    /// Deletes the events that are done (delivered or given up) and older than
    /// [`WatchSettings::done_event_retention`]; returns how many. The service runs it every hour.
    ///
    /// # Errors
    /// [`WatchError::Store`].
    pub async fn forget_done_events(&self) -> Result<u64, WatchError> {
        let keep = jiff::SignedDuration::try_from(self.settings.done_event_retention)
            .unwrap_or(jiff::SignedDuration::MAX);
        let before = self
            .clock
            .now()
            .checked_sub(keep)
            .unwrap_or(jiff::Timestamp::MIN);
        Ok(self.store.forget_done_before(before).await?)
    }

    /// The quotas in force for `tenant`'s account: its own over the deployment's ([`WatchSettings::quotas`]).
    async fn quotas(&self, tenant: Tenant) -> Result<Quotas, WatchError> {
        Ok(quotas_of(
            self.lookup.ledger().as_ref(),
            tenant.account,
            &self.settings.quotas,
        )
        .await?)
    }

    /// Up to `limit` of the account's watches after `after`, by id.
    ///
    /// # Errors
    /// [`WatchError::Store`].
    pub async fn list(
        &self,
        tenant: Tenant,
        after: Option<WatchId>,
        limit: u32,
    ) -> Result<Vec<Watch>, WatchError> {
        Ok(self.store.list(tenant, after, limit).await?)
    }

    /// The account's watch `id`.
    ///
    /// # Errors
    /// [`WatchError::Store`].
    pub async fn get(&self, tenant: Tenant, id: WatchId) -> Result<Option<Watch>, WatchError> {
        Ok(self.store.get(tenant, id).await?)
    }

    /// Deletes the account's watch `id` and its undelivered events; `None` when it had none, else the watch as
    /// it was.
    ///
    /// # Errors
    /// [`WatchError::Store`].
    pub async fn delete(&self, tenant: Tenant, id: WatchId) -> Result<Option<Watch>, WatchError> {
        let Some(watch) = self.store.get(tenant, id).await? else {
            return Ok(None);
        };
        Ok(self.store.delete(tenant, id).await?.then_some(watch))
    }

    /// The account's webhook secret, made now if it has none ([`account_secret`]).
    ///
    /// # Errors
    /// [`WatchError::Store`].
    pub async fn secret(&self, tenant: Tenant) -> Result<String, WatchError> {
        account_secret(self.store.as_ref(), tenant, false).await
    }

    /// Replaces the account's webhook secret with a new one and returns it ([`account_secret`]).
    ///
    /// # Errors
    /// [`WatchError::Store`].
    pub async fn rotate_secret(&self, tenant: Tenant) -> Result<String, WatchError> {
        account_secret(self.store.as_ref(), tenant, true).await
    }
}

/// The account's webhook secret in `store`: the one it has, made now if it has none; with `rotate`, a new one
/// that replaces it (events sent from then on are signed with it). For the command line, which has the store but
/// no running service.
///
/// # Errors
/// [`WatchError::Store`].
pub async fn account_secret(
    store: &dyn WatchStore,
    tenant: Tenant,
    rotate: bool,
) -> Result<String, WatchError> {
    if !rotate && let Some(secret) = store.secret(tenant).await? {
        return Ok(secret);
    }
    Ok(store
        .set_secret(tenant, &signature::new_secret(), rotate)
        .await?)
}

/// A watch as the API shows it ([`api_contract::WatchInfo`]).
pub fn watch_info(watch: &Watch) -> api_contract::WatchInfo {
    api_contract::WatchInfo {
        id: watch.id.to_string(),
        li_url: watch.url.as_str().to_owned(),
        every_hours: watch.every_hours,
        webhook_url: watch.webhook_url.clone(),
        fields: watch.fields.clone(),
        status: if watch.disabled_at.is_some() {
            api_contract::WatchStatus::Disabled
        } else {
            api_contract::WatchStatus::Active
        },
        created_at: watch.created_at,
        next_check_at: watch.next_check_at,
        last_checked_at: watch.last_checked_at,
        last_check_error: watch.last_check_error.clone(),
        last_change_at: watch.last_change_at,
        last_delivery: watch.last_delivery.as_ref().map(delivery_info_of),
        disabled_reason: watch.disabled_reason.clone(),
    }
}

/// A watch's or an endpoint's last delivery attempt as the API shows it.
pub(crate) fn delivery_info_of(
    delivery: &watch_store::DeliveryStatus,
) -> api_contract::DeliveryInfo {
    api_contract::DeliveryInfo {
        at: delivery.at,
        status: delivery.status,
        error: delivery.error.clone(),
    }
}
