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
mod endpoints;
pub mod signature;

use std::sync::Arc;
use std::time::Duration;

use api_contract::{CompanyRequest, FreshnessWindow, SubmittedUrl, WatchRequest};
use company_lookup::{Caller, LookupError, LookupService};
use company_model::{AccountId, RecordJson, changed_members};
use credit_ledger::{LedgerError, Quotas, quotas_of};
use tracing::{debug, warn};
use watch_store::{
    Delivered, Delivery, DueRefresh, EndpointDelivery, NewWatch, Refreshed, Watch, WatchId,
    WatchStore, WatchStoreError,
};

pub use clock::{Clock, ManualClock, SystemClock};
pub use endpoints::{PING_BURST, PING_REFILL, delivery_info, endpoint_info};

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
    /// Of those, the most one account may have in flight at once (its test twin's counted with its own, both
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

/// How long a failed refresh waits before it is tried again (at most its period).
const FAILED_REFRESH_RETRY: Duration = Duration::from_hours(1);

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
    /// A test twin's watch on a service that does not serve test-mode keys.
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

    /// Creates one watch per page of `request` for `account`, first due `everyHours` from now, each comparing
    /// its first refresh with the page's newest stored record (if any); makes the account's webhook secret if it
    /// has none. Nothing is fetched or charged now.
    ///
    /// # Errors
    /// [`WatchError`] when a store fails (nothing is created).
    pub async fn create(
        &self,
        account: AccountId,
        request: &WatchRequest,
    ) -> Result<Vec<Watch>, WatchError> {
        let pages: Vec<_> = request.urls.iter().map(|u| u.page.clone()).collect();
        // The account's own store: a test twin's watch starts from the sandbox's snapshots, never live ones.
        let stored = self
            .lookup
            .snapshots_for(account)
            .map_err(|_| WatchError::TestModeUnavailable)?
            .fresh_many(&pages, jiff::Timestamp::MIN)
            .await?;
        let new: Vec<NewWatch> = pages
            .into_iter()
            .map(|url| NewWatch {
                baseline: stored.get(&url).map(|s| s.record.clone()),
                account,
                url,
                every_hours: request.every_hours,
                webhook_url: request.webhook_url.clone(),
                fields: request.fields.clone(),
            })
            .collect();
        let quota = self.quotas(account).await?.watches;
        // Receivers need the secret from the first event on.
        account_secret(self.store.as_ref(), account, false).await?;
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

    /// The quotas in force for `account`: its own over the deployment's ([`WatchSettings::quotas`]).
    async fn quotas(&self, account: AccountId) -> Result<Quotas, WatchError> {
        Ok(quotas_of(
            self.lookup.ledger().as_ref(),
            account,
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
        account: AccountId,
        after: Option<WatchId>,
        limit: u32,
    ) -> Result<Vec<Watch>, WatchError> {
        Ok(self.store.list(account, after, limit).await?)
    }

    /// The account's watch `id`.
    ///
    /// # Errors
    /// [`WatchError::Store`].
    pub async fn get(&self, account: AccountId, id: WatchId) -> Result<Option<Watch>, WatchError> {
        Ok(self.store.get(account, id).await?)
    }

    /// Deletes the account's watch `id` and its undelivered events; `None` when it had none, else the watch as
    /// it was.
    ///
    /// # Errors
    /// [`WatchError::Store`].
    pub async fn delete(
        &self,
        account: AccountId,
        id: WatchId,
    ) -> Result<Option<Watch>, WatchError> {
        let Some(watch) = self.store.get(account, id).await? else {
            return Ok(None);
        };
        Ok(self.store.delete(account, id).await?.then_some(watch))
    }

    /// The account's webhook secret, made now if it has none ([`account_secret`]).
    ///
    /// # Errors
    /// [`WatchError::Store`].
    pub async fn secret(&self, account: AccountId) -> Result<String, WatchError> {
        account_secret(self.store.as_ref(), account, false).await
    }

    /// Replaces the account's webhook secret with a new one and returns it ([`account_secret`]).
    ///
    /// # Errors
    /// [`WatchError::Store`].
    pub async fn rotate_secret(&self, account: AccountId) -> Result<String, WatchError> {
        account_secret(self.store.as_ref(), account, true).await
    }

    /// Runs what is due now: the due refreshes (up to [`WatchSettings::refreshes_at_once`]), then the due
    /// deliveries (up to [`WatchSettings::deliveries_at_once`] of each queue, claimed fairly), and waits for them.
    /// The running service does the same in two loops of its own ([`Watches::start`]); this is for a caller that
    /// drives the clock, such as a test.
    ///
    /// # Errors
    /// [`WatchError::Store`] when claiming fails (what was claimed before still finishes).
    pub async fn work_once(&self) -> Result<WorkDone, WatchError> {
        let mut done = self.refresh_due().await?;
        let claimed = self
            .claim_deliveries(self.settings.deliveries_at_once)
            .await?;
        let attempts =
            futures::future::join_all(claimed.into_iter().map(|c| self.deliver(c))).await;
        for delivered in attempts {
            if delivered {
                done.delivered += 1;
            } else {
                done.failed += 1;
            }
        }
        Ok(done)
    }

    /// Claims the due refreshes (accounts taking turns) and runs them.
    async fn refresh_due(&self) -> Result<WorkDone, WatchError> {
        let mut done = WorkDone::default();
        let lease = self.lookup.longest_request() + Duration::from_secs(30);
        let due = self
            .store
            .claim_due(self.clock.now(), lease, self.settings.refreshes_at_once)
            .await?;
        for queued in futures::future::join_all(due.into_iter().map(|due| self.refresh(due))).await
        {
            done.refreshed += 1;
            done.events += usize::from(queued);
        }
        Ok(done)
    }

    /// Claims up to `room` due deliveries of both queues together, fairly between accounts and one per receiver
    /// at a time ([`WatchStore::claim_endpoint_deliveries`]).
    async fn claim_deliveries(&self, room: u32) -> Result<Vec<Claimed>, WatchError> {
        if room == 0 {
            return Ok(Vec::new());
        }
        let lease = self.settings.delivery_timeout + Duration::from_secs(20);
        let per_account = self.settings.deliveries_per_account.max(1);
        let now = self.clock.now();
        let deliveries = self
            .store
            .claim_deliveries(now, lease, room, per_account)
            .await?;
        // The two queues share the room: together they never pass it.
        let left = room.saturating_sub(u32::try_from(deliveries.len()).unwrap_or(room));
        let to_endpoints = if left == 0 {
            Vec::new()
        } else {
            self.store
                .claim_endpoint_deliveries(now, lease, left, per_account)
                .await?
        };
        Ok(deliveries
            .into_iter()
            .map(Claimed::Watch)
            .chain(to_endpoints.into_iter().map(Claimed::Endpoint))
            .collect())
    }

    /// Runs the watches in two loops until stopped: refreshes, claimed every [`WatchSettings::poll`] (sooner
    /// while work remains), and deliveries, claimed as places free up, so a slow refresh never holds an event
    /// back and a receiver that never answers holds one place ([`WatchSettings::deliveries_per_account`] at
    /// most for its account), not a whole batch.
    pub fn start(self: &Arc<Self>) -> Runner {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let refreshes = tokio::spawn(Arc::clone(self).refresh_loop(stopped.clone()));
        let deliveries = tokio::spawn(Arc::clone(self).delivery_loop(stopped));
        Runner {
            stop,
            tasks: vec![refreshes, deliveries],
        }
    }

    async fn refresh_loop(self: Arc<Self>, mut stopped: tokio::sync::watch::Receiver<bool>) {
        loop {
            let busy = match self.refresh_due().await {
                Ok(done) => done != WorkDone::default(),
                Err(error) => {
                    warn!(%error, "the watch runner could not claim refreshes");
                    false
                }
            };
            let pause = if busy {
                Duration::ZERO
            } else {
                self.settings.poll
            };
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                _ = stopped.changed() => return,
            }
        }
    }

    async fn delivery_loop(self: Arc<Self>, mut stopped: tokio::sync::watch::Receiver<bool>) {
        let places = self.settings.deliveries_at_once.max(1);
        let mut in_flight = tokio::task::JoinSet::new();
        loop {
            let room = places.saturating_sub(u32::try_from(in_flight.len()).unwrap_or(u32::MAX));
            match self.claim_deliveries(room).await {
                Ok(claimed) => {
                    for claimed in claimed {
                        let this = Arc::clone(&self);
                        in_flight.spawn(async move { this.deliver(claimed).await });
                    }
                }
                Err(error) => warn!(%error, "the watch runner could not claim deliveries"),
            }
            // Claim again when a delivery ends (its place is free), or at the next poll.
            tokio::select! {
                Some(_) = in_flight.join_next(), if !in_flight.is_empty() => {}
                () = tokio::time::sleep(self.settings.poll) => {}
                _ = stopped.changed() => break,
            }
        }
        // Deliveries in flight end and record what they did; the rest stay queued for the next start.
        while in_flight.join_next().await.is_some() {}
    }

    /// One claimed refresh; true when it queued an event.
    async fn refresh(&self, due: DueRefresh) -> bool {
        let watch = &due.watch;
        let request = CompanyRequest {
            urls: vec![SubmittedUrl {
                original: watch.url.as_str().to_owned(),
                page: watch.url.clone(),
                metadata: None,
            }],
            window: FreshnessWindow::LIVE,
            stale_if_error: false,
            fields: None,
        };
        let caller = Caller {
            account: watch.account,
            key_id: None,
        };
        let reference = format!("watch:{}:{}", watch.id, due.claim);
        let refreshed = match self.lookup.run_bulk(caller, &request, reference).await {
            Ok(outcome) => match (
                outcome.response.results.first(),
                outcome.response.unresolved.first(),
            ) {
                (Some(result), _) => Refreshed::Fetched {
                    event: self.event(&due, &result.record, result.fetched_at),
                    record: result.record.clone(),
                },
                (None, Some(unresolved)) => Refreshed::Failed {
                    error: unresolved.error.as_str().to_owned(),
                },
                (None, None) => Refreshed::Failed {
                    error: "fetch_failed".to_owned(),
                },
            },
            Err(LookupError::Ledger(LedgerError::InsufficientCredits { .. })) => {
                Refreshed::Failed {
                    error: "insufficient_credits".to_owned(),
                }
            }
            Err(LookupError::TooManyLiveLookups { .. }) => Refreshed::Failed {
                error: "too_many_live_lookups".to_owned(),
            },
            Err(error) => {
                warn!(%error, watch = %watch.id, "a watch's refresh failed");
                Refreshed::Failed {
                    error: "service_unavailable".to_owned(),
                }
            }
        };
        let now = self.clock.now();
        let period = Duration::from_hours(u64::from(watch.every_hours));
        let wait = match refreshed {
            Refreshed::Fetched { .. } => period,
            Refreshed::Failed { .. } => period.min(FAILED_REFRESH_RETRY),
        };
        let next = now
            .checked_add(jiff::SignedDuration::try_from(wait).unwrap_or(jiff::SignedDuration::MAX))
            .unwrap_or(jiff::Timestamp::MAX);
        let queued = matches!(&refreshed, Refreshed::Fetched { event: Some(_), .. });
        match self
            .store
            .finish_refresh(watch.id, due.claim, now, next, refreshed)
            .await
        {
            Ok(finished) => queued && finished,
            Err(error) => {
                // The claim lapses and the refresh runs again; its charge reference is paid once.
                warn!(%error, watch = %watch.id, "could not record a watch's refresh");
                false
            }
        }
    }

    /// The change event of a refresh that fetched `record`, if a watched member changed since the baseline:
    /// its id and its JSON body.
    fn event(
        &self,
        due: &DueRefresh,
        record: &RecordJson,
        fetched_at: jiff::Timestamp,
    ) -> Option<(String, String)> {
        let baseline = due.baseline.as_ref()?;
        let fields: Vec<&str> = due.watch.fields.iter().map(String::as_str).collect();
        let changes = changed_members(baseline, record, &fields, fetched_at);
        if changes.is_empty() {
            return None;
        }
        let id = format!("evt_{}_{}", due.watch.id, due.claim);
        let final_li_url = record
            .to_record()
            .ok()
            .and_then(|r| r.final_li_url)
            .unwrap_or_else(|| due.watch.url.as_str().to_owned());
        let event = api_contract::WebhookEvent {
            id: id.clone(),
            kind: api_contract::WebhookEventType::CompanyChanged,
            created_at: self.clock.now(),
            watch_id: due.watch.id.to_string(),
            final_li_url,
            changes,
            record: serde_json::value::RawValue::from_string(record.as_str().to_owned()).ok()?,
        };
        Some((id, serde_json::to_string(&event).ok()?))
    }

    /// One claimed delivery, of a watch's event or of an account event to an endpoint; true when the receiver
    /// answered 2xx.
    async fn deliver(&self, claimed: Claimed) -> bool {
        let out = match &claimed {
            Claimed::Watch(d) => Outgoing {
                event_id: &d.event_id,
                account: d.account,
                url: &d.webhook_url,
                body: &d.body,
                created_at: d.created_at,
                attempts: d.attempts,
            },
            Claimed::Endpoint(d) => Outgoing {
                event_id: &d.event_id,
                account: d.account,
                url: &d.url,
                body: &d.body,
                created_at: d.created_at,
                attempts: d.attempts,
            },
        };
        let delivered = self.attempt(out).await;
        let yes = matches!(delivered, Delivered::Yes { .. });
        let now = self.clock.now();
        let recorded = match &claimed {
            Claimed::Watch(d) => {
                self.store
                    .finish_delivery(&d.event_id, d.claim, now, delivered)
                    .await
            }
            Claimed::Endpoint(d) => {
                self.store
                    .finish_endpoint_delivery(&d.event_id, d.endpoint, d.claim, now, delivered)
                    .await
            }
        };
        if let Err(error) = recorded {
            // The claim lapses and the attempt is made again: receivers drop the duplicate by its id.
            warn!(%error, "could not record a webhook delivery");
        }
        yes
    }

    /// Sends one attempt, signed with the account's secret, and says what it did: delivered, to be retried
    /// (when), or given up (the retry window from the event's creation is over).
    async fn attempt(&self, out: Outgoing<'_>) -> Delivered {
        let outcome = match self.secret(out.account).await {
            Ok(secret) => self.send(&out, &secret).await,
            Err(error) => Err((
                None,
                format!("the webhook secret could not be read: {error}"),
            )),
        };
        let now = self.clock.now();
        match outcome {
            Ok(status) => Delivered::Yes { status },
            Err((status, error)) => {
                debug!(event = out.event_id, error, "a webhook delivery failed");
                let wait = self.backoff(out.attempts);
                let retry_at = now
                    .checked_add(
                        jiff::SignedDuration::try_from(wait).unwrap_or(jiff::SignedDuration::MAX),
                    )
                    .unwrap_or(jiff::Timestamp::MAX);
                let window_ends = out
                    .created_at
                    .checked_add(
                        jiff::SignedDuration::try_from(self.settings.retry_window)
                            .unwrap_or(jiff::SignedDuration::MAX),
                    )
                    .unwrap_or(jiff::Timestamp::MAX);
                if retry_at > window_ends {
                    warn!(
                        event = out.event_id,
                        url = out.url,
                        error,
                        "a webhook failed for its whole retry window; its watch or endpoint is disabled"
                    );
                    Delivered::GaveUp { status, error }
                } else {
                    Delivered::Retry {
                        status,
                        error,
                        retry_at,
                    }
                }
            }
        }
    }

    /// The wait after a failed attempt that had `attempts` failed attempts before it.
    fn backoff(&self, attempts: u32) -> Duration {
        let doubled = self
            .settings
            .first_retry
            .checked_mul(1u32.checked_shl(attempts.min(31)).unwrap_or(u32::MAX))
            .unwrap_or(Duration::MAX);
        doubled.min(self.settings.longest_retry)
    }

    /// POSTs the event: the receiver's 2xx status, or its status (if it answered) and what went wrong.
    async fn send(&self, out: &Outgoing<'_>, secret: &str) -> Result<u16, (Option<u16>, String)> {
        let url = url::Url::parse(out.url)
            .map_err(|e| (None, format!("the webhook URL is not valid: {e}")))?;
        let scheme_allowed =
            api_contract::webhook_scheme_allowed(url.scheme(), self.settings.allow_private);
        if !scheme_allowed {
            return Err((
                None,
                format!("webhooks are sent over https only, not `{}`", url.scheme()),
            ));
        }
        public_address::check_literal_host(&url, self.settings.allow_private).map_err(|address| {
            (
                None,
                format!(
                    "{address} is an address that is not public; webhooks are sent to public addresses only"
                ),
            )
        })?;
        let t = self.clock.now().as_second();
        let response = self
            .client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::USER_AGENT, "company-data-webhooks/1")
            .header(
                signature::SIGNATURE_HEADER,
                signature::sign(secret, t, out.body.as_bytes()),
            )
            .header("Company-Data-Event-Id", out.event_id)
            .body(out.body.to_owned())
            .send()
            .await
            .map_err(
                |error| match public_address::private_address_refused(&error) {
                    Some(host) => (
                        None,
                        format!("{host} resolves only to addresses that are not public"),
                    ),
                    None if error.is_timeout() => (
                        None,
                        "the receiver did not answer within the time-out".to_owned(),
                    ),
                    None => (None, format!("the receiver could not be reached: {error}")),
                },
            )?;
        let status = response.status();
        if status.is_success() {
            Ok(status.as_u16())
        } else if status.is_redirection() {
            Err((
                Some(status.as_u16()),
                format!("HTTP {status}: redirects are not followed"),
            ))
        } else {
            Err((Some(status.as_u16()), format!("HTTP {status}")))
        }
    }
}

/// A delivery claimed from one of the two queues.
enum Claimed {
    /// A watch's change event.
    Watch(Delivery),
    /// An account event's copy for one endpoint.
    Endpoint(EndpointDelivery),
}

/// One delivery attempt's parts, whatever subscribed to the event (a watch, or an account's endpoint).
struct Outgoing<'a> {
    event_id: &'a str,
    account: AccountId,
    url: &'a str,
    body: &'a str,
    /// When the event was made: the retry window counts from then.
    created_at: jiff::Timestamp,
    /// Attempts before this one.
    attempts: u32,
}

/// The account's webhook secret in `store`: the one it has, made now if it has none; with `rotate`, a new one
/// that replaces it (events sent from then on are signed with it). For the command line, which has the store but
/// no running service.
///
/// # Errors
/// [`WatchError::Store`].
pub async fn account_secret(
    store: &dyn WatchStore,
    account: AccountId,
    rotate: bool,
) -> Result<String, WatchError> {
    if !rotate && let Some(secret) = store.secret(account).await? {
        return Ok(secret);
    }
    Ok(store
        .set_secret(account, &signature::new_secret(), rotate)
        .await?)
}

/// The running watch loops ([`Watches::start`]).
#[derive(Debug)]
pub struct Runner {
    stop: tokio::sync::watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Runner {
    /// Stops the loops after the work in hand finishes.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
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
