//! Watches on company pages: each refreshes its page on schedule (a live lookup, charged as one), compares the
//! record with the one it saw before, and on a change queues a `company.changed` event for the watch's
//! webhook, which the account's webhooks ([`account_webhooks::Webhooks`]) sign and deliver at least once.
//!
//! - **Refreshes** are claimed from the [`WatchStore`] when due, so with several servers on one database each
//!   happens once; each is charged through [`LookupService::run_bulk`] under the reference
//!   `watch:<id>:<due ms>`, so a refresh run again after a crash is paid once. A refresh that fails (no credits,
//!   the page blocked) keeps the baseline and tries again within the hour.
//! - **Events** (`evt_<watch>_<due ms>`, one per refresh at most) go to the watch's `webhookUrl`, signed with the
//!   account's webhook secret and retried by [`account_webhooks`]; an event that fails for the whole retry window
//!   disables its watch (it says why).
//! - **Time** comes from the webhooks' [`Clock`], so a test runs a day of schedules without sleeping.
//!
//! Not here: delivering, signing and the accounts' own endpoints (account-webhooks), HTTP routes, validation of
//! a watch request ([`api_contract::WatchRequest`]), storage (watch-store).
#![deny(missing_docs)]

mod runner;

use std::sync::Arc;
use std::time::Duration;

use api_contract::WatchRequest;
use company_lookup::LookupService;
use company_model::Tenant;
use credit_ledger::{Quotas, quotas_of};
use watch_store::{NewWatch, Watch, WatchId, WatchStore, WatchStoreError};

use account_webhooks::{Clock, WebhookError, Webhooks, delivery_info_of};
pub use runner::Runner;

/// Knobs of the watch service. Delivering its events is the webhooks' ([`account_webhooks::WebhookSettings`]).
#[derive(Clone, Copy, Debug)]
pub struct WatchSettings {
    /// How often the runner looks for due refreshes. Default 1 s.
    pub poll: Duration,
    /// Refreshes this server runs at once. Default 4.
    pub refreshes_at_once: u32,
    /// The deployment's quotas ([`Quotas::watches`]); an account's own replace them.
    pub quotas: Quotas,
}

impl Default for WatchSettings {
    fn default() -> Self {
        Self {
            poll: Duration::from_secs(1),
            refreshes_at_once: 4,
            quotas: Quotas::default(),
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
    /// The account's webhook secret could not be made.
    #[error(transparent)]
    Webhooks(#[from] WebhookError),
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
    /// A test-mode watch on a service that does not serve test-mode keys.
    #[error("this server does not serve test-mode keys; use a live key")]
    TestModeUnavailable,
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
    /// Who signs and sends the watches' events, and whose clock they read.
    webhooks: Arc<Webhooks>,
}

impl Watches {
    /// The service over these parts; `webhooks` delivers its events (over the same store).
    pub fn new(
        store: Arc<dyn WatchStore>,
        lookup: Arc<LookupService>,
        settings: WatchSettings,
        webhooks: Arc<Webhooks>,
    ) -> Self {
        Self {
            store,
            lookup,
            settings,
            webhooks,
        }
    }

    /// The settings in force.
    pub fn settings(&self) -> WatchSettings {
        self.settings
    }

    /// Whether `http` and private webhook URLs are accepted ([`account_webhooks::WebhookSettings::allow_private`]):
    /// the rule a watch request's `webhookUrl` is read by.
    pub fn allow_private(&self) -> bool {
        self.webhooks.settings().allow_private
    }

    fn clock(&self) -> &dyn Clock {
        self.webhooks.clock().as_ref()
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
                include: request.include.to_names(),
            })
            .collect();
        let quota = self.quotas(tenant).await?.watches;
        // Receivers need the secret from the first event on.
        self.webhooks.secret(tenant).await?;
        self.store
            .create(&new, quota as usize, self.clock().now())
            .await?
            .ok_or(WatchError::TooManyWatches {
                adding: new.len(),
                quota,
            })
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
}

/// A watch as the API shows it ([`api_contract::WatchInfo`]).
pub fn watch_info(watch: &Watch) -> api_contract::WatchInfo {
    api_contract::WatchInfo {
        id: watch.id.to_string(),
        li_url: watch.url.as_str().to_owned(),
        every_hours: watch.every_hours,
        webhook_url: watch.webhook_url.clone(),
        fields: watch.fields.clone(),
        include: api_contract::Includes::from_names(&watch.include).parts(),
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
