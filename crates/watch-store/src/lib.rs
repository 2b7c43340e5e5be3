//! Watches' durable state: which pages each account watches, how often, where changes are sent; the record
//! each watch compares the next fetch with; the events waiting for delivery; each account's webhook secret.
//! Beside the watches, each account's own webhook endpoints and the account events queued for them (a job
//! finished, the balance ran low, a watched page changed): one copy of an event per endpoint that wants its
//! type, delivered and retried the same way ([`WatchStore::claim_endpoint_deliveries`]); and each account's
//! *feed*, every one of its events once, in the order they were recorded ([`WatchStore::account_events`]),
//! written in the same transaction as the copies.
//!
//! Work is handed out in *claims* that last a while (`lease`): a due refresh ([`WatchStore::claim_due`]) or a
//! due delivery ([`WatchStore::claim_deliveries`]) is given to one caller until it finishes it or the claim
//! lapses (its server stopped), so of several servers on one database each due refresh and each delivery
//! happens once. Finishing names the claim ([`DueRefresh::claim`]); a claim that lapsed and was given to
//! another caller finishes nothing. Every time comes from the caller, so a test can move time on.
//!
//! [`WatchStore`] is the backend-neutral interface; `SqliteWatchStore` the embedded backend (feature `sqlite`,
//! the default), `PgWatchStore` the backend for several servers on one PostgreSQL database (feature `postgres`;
//! claims are taken with `FOR UPDATE SKIP LOCKED`).
//!
//! Not here: fetching, comparing (company-watch), signing, sending, the retry schedule (account-webhooks
//! decides; this crate records).
#![deny(missing_docs)]

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod rows;
#[cfg(feature = "sqlite")]
mod sqlite;

use company_model::{RecordJson, Tenant};
use page_url::PageUrl;

#[cfg(feature = "postgres")]
pub use postgres::PgWatchStore;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteWatchStore;

/// A watch's id, unique in its database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct WatchId(pub i64);

impl std::fmt::Display for WatchId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A watch to create.
#[derive(Clone, Debug, PartialEq)]
pub struct NewWatch {
    /// The tenant (account and mode) that owns it and pays for its refreshes.
    pub tenant: Tenant,
    /// The page, normalized.
    pub url: PageUrl,
    /// Hours between refreshes.
    pub every_hours: u32,
    /// Where change events are POSTed.
    pub webhook_url: String,
    /// The record members whose change is an event.
    pub fields: Vec<String>,
    /// The parts of the record each refresh fetches beyond the page: their names joined with `,` as
    /// `api_contract::Includes::to_names` writes them (`job_count`), `""` for none. Kept as the caller wrote it.
    pub include: String,
    /// What the first refresh compares with: the page's newest stored record, if any.
    pub baseline: Option<RecordJson>,
}

/// A watch as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Watch {
    /// Its id.
    pub id: WatchId,
    /// Its tenant (account and mode).
    pub tenant: Tenant,
    /// The page.
    pub url: PageUrl,
    /// Hours between refreshes.
    pub every_hours: u32,
    /// Where change events are POSTed.
    pub webhook_url: String,
    /// The record members whose change is an event.
    pub fields: Vec<String>,
    /// The parts of the record each refresh fetches beyond the page, as [`NewWatch::include`] gave them.
    pub include: String,
    /// When it was created.
    pub created_at: jiff::Timestamp,
    /// When its next refresh is due.
    pub next_check_at: jiff::Timestamp,
    /// When its page was last refreshed (successfully or not).
    pub last_checked_at: Option<jiff::Timestamp>,
    /// What the last refresh found wrong (e.g. `insufficient_credits`, `not_found`); `None` after a success.
    pub last_check_error: Option<String>,
    /// When a refresh last found a change.
    pub last_change_at: Option<jiff::Timestamp>,
    /// The last delivery attempt of its events, if any.
    pub last_delivery: Option<DeliveryStatus>,
    /// When it was disabled (its webhook failed for the whole retry window), if it was.
    pub disabled_at: Option<jiff::Timestamp>,
    /// Why it was disabled.
    pub disabled_reason: Option<String>,
}

/// How a delivery attempt went.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryStatus {
    /// When.
    pub at: jiff::Timestamp,
    /// The receiver's HTTP status, if it answered.
    pub status: Option<u16>,
    /// What went wrong (`None` when it was delivered: a 2xx).
    pub error: Option<String>,
}

/// A refresh handed to one caller by [`WatchStore::claim_due`].
#[derive(Clone, Debug, PartialEq)]
pub struct DueRefresh {
    /// The watch.
    pub watch: Watch,
    /// The record this refresh compares with (`None` before the first successful refresh of a page never
    /// stored).
    pub baseline: Option<RecordJson>,
    /// Names this claim: pass it back to [`WatchStore::finish_refresh`]. It is also the due time in Unix
    /// milliseconds, unique per refresh of a watch (the charge reference and the event id use it).
    pub claim: i64,
}

/// What a refresh found, recorded by [`WatchStore::finish_refresh`].
#[derive(Clone, Debug, PartialEq)]
pub enum Refreshed {
    /// The page was fetched: `record` becomes the baseline, and `event` is queued for delivery when the fetch
    /// changed a watched member.
    Fetched {
        /// The record fetched.
        record: RecordJson,
        /// The change event to deliver.
        event: Option<ChangeEvent>,
    },
    /// The page could not be fetched or paid for; the baseline stays. `error` is a stable code.
    Failed {
        /// e.g. `insufficient_credits`, `not_found`, `blocked`.
        error: String,
    },
}

/// A watch's change event, queued by [`WatchStore::finish_refresh`] in the same transaction that moves the
/// watch on: once to the watch's own webhook URL, and as an account event (`company.changed`) in the account's
/// feed and to each of its endpoints that wants the type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangeEvent {
    /// The JSON body POSTed to the watch's webhook URL.
    pub body: String,
    /// The same change as an account event: its id (the watch event's too), type and body.
    pub account: AccountEvent,
}

/// An event handed to one caller by [`WatchStore::claim_deliveries`].
#[derive(Clone, Debug, PartialEq)]
pub struct Delivery {
    /// The event's id (`evt_…`), the same on every attempt.
    pub event_id: String,
    /// Its watch.
    pub watch_id: WatchId,
    /// The tenant (account and mode), whose webhook secret signs it.
    pub tenant: Tenant,
    /// Where it goes.
    pub webhook_url: String,
    /// The JSON body, exactly as sent on every attempt.
    pub body: String,
    /// When the event was made (the retry window counts from then).
    pub created_at: jiff::Timestamp,
    /// Attempts before this one.
    pub attempts: u32,
    /// Names this claim: pass it back to [`WatchStore::finish_delivery`].
    pub claim: i64,
}

/// What a delivery attempt did, recorded by [`WatchStore::finish_delivery`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivered {
    /// The receiver answered 2xx.
    Yes {
        /// Its status.
        status: u16,
    },
    /// It did not; try again at `retry_at`.
    Retry {
        /// Its status, if it answered.
        status: Option<u16>,
        /// What went wrong.
        error: String,
        /// When to try again.
        retry_at: jiff::Timestamp,
    },
    /// It did not, and the retry window is over: the event is dropped and its watch disabled.
    GaveUp {
        /// Its status, if it answered.
        status: Option<u16>,
        /// What went wrong.
        error: String,
    },
}

/// A webhook endpoint's id, unique in its database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EndpointId(pub i64);

impl std::fmt::Display for EndpointId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// A webhook endpoint to register for an account's events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewEndpoint {
    /// The tenant (account and mode) whose events it receives.
    pub tenant: Tenant,
    /// Where events are POSTed.
    pub url: String,
    /// The event types it receives (e.g. `job.finished`); the caller checks them, the store keeps them.
    pub events: Vec<String>,
}

/// A registered webhook endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    /// Its id.
    pub id: EndpointId,
    /// Its tenant (account and mode).
    pub tenant: Tenant,
    /// Where events are POSTed.
    pub url: String,
    /// The event types it receives.
    pub events: Vec<String>,
    /// When it was registered.
    pub created_at: jiff::Timestamp,
    /// The last delivery attempt to it, if any.
    pub last_delivery: Option<DeliveryStatus>,
    /// When it was disabled (an event failed for the whole retry window), if it was; it is then sent nothing.
    pub disabled_at: Option<jiff::Timestamp>,
    /// Why it was disabled.
    pub disabled_reason: Option<String>,
}

/// An account event to queue with [`WatchStore::queue_event`]: one copy per endpoint that wants its type, and
/// one entry in the account's feed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountEvent {
    /// Its id (`evt_…`): made from what happened, so the same event queued twice (two servers noticing one job
    /// finish) is queued once per endpoint.
    pub id: String,
    /// The tenant (account and mode) it is about.
    pub tenant: Tenant,
    /// Its type, e.g. `job.finished`, `account.balance_low`, `ping`.
    pub kind: String,
    /// The JSON body, exactly as sent on every attempt.
    pub body: String,
}

/// An account event as the account's feed keeps it ([`WatchStore::account_events`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FeedEvent {
    /// Its id, as delivered to the account's endpoints.
    pub id: String,
    /// Its type.
    pub kind: String,
    /// Its JSON body, exactly as delivered to the account's endpoints.
    pub body: String,
    /// When it was recorded.
    pub created_at: jiff::Timestamp,
}

/// A job's callback, where the job's events go besides the account's endpoints ([`WatchStore::queue_job_event`]).
/// The store keeps it as an endpoint of the account that only that job's events go to: never listed, counted
/// against the account's endpoints, pinged or deleted through the endpoint methods, and forgotten with its
/// events ([`WatchStore::forget_done_before`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobCallbackTarget {
    /// The job, as the job store names it.
    pub job: String,
    /// Where its events are POSTed.
    pub url: String,
    /// Headers sent with each of them, `(name, value)`.
    pub headers: Vec<(String, String)>,
}

/// One endpoint's copy of an event, as listed by [`WatchStore::endpoint_events`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointEvent {
    /// The event's id, the same at every endpoint it went to.
    pub event_id: String,
    /// The endpoint.
    pub endpoint: EndpointId,
    /// The event's type.
    pub kind: String,
    /// When it was queued.
    pub created_at: jiff::Timestamp,
    /// Attempts made so far.
    pub attempts: u32,
    /// When the endpoint answered 2xx, if it has.
    pub delivered_at: Option<jiff::Timestamp>,
    /// When the next attempt is due; `None` once delivered or given up.
    pub next_attempt_at: Option<jiff::Timestamp>,
    /// The endpoint's status on the last attempt, if it answered.
    pub last_status: Option<u16>,
    /// What went wrong on the last attempt.
    pub last_error: Option<String>,
}

/// An event copy handed to one caller by [`WatchStore::claim_endpoint_deliveries`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointDelivery {
    /// The event's id, the same on every attempt.
    pub event_id: String,
    /// The endpoint it goes to.
    pub endpoint: EndpointId,
    /// The tenant (account and mode), whose webhook secret signs it.
    pub tenant: Tenant,
    /// The endpoint's URL.
    pub url: String,
    /// Headers sent with it besides the server's own: a job callback's (`callbackHeaders`); none for an
    /// endpoint the account registered.
    pub headers: Vec<(String, String)>,
    /// The JSON body.
    pub body: String,
    /// When the event was queued (the retry window counts from then).
    pub created_at: jiff::Timestamp,
    /// Attempts before this one.
    pub attempts: u32,
    /// Names this claim: pass it back to [`WatchStore::finish_endpoint_delivery`].
    pub claim: i64,
}

/// A failure of the store's backend. The backend's own error is kept as the source, never exposed in the type.
#[derive(Debug, thiserror::Error)]
#[error("the watch store failed: {0}")]
pub struct WatchStoreError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

/// Where watches live. Implementations must be safe to share between tasks and servers.
#[async_trait::async_trait]
pub trait WatchStore: Send + Sync + std::fmt::Debug {
    /// Creates `watches` (all of one account) in one transaction, each first due `every_hours` after `now`, unless
    /// the account would then have more than `at_most` watches (then `None`, nothing created: the count and the
    /// inserts are one step, so concurrent requests cannot pass the bound); returns them in order.
    async fn create(
        &self,
        watches: &[NewWatch],
        at_most: usize,
        now: jiff::Timestamp,
    ) -> Result<Option<Vec<Watch>>, WatchStoreError>;

    /// Up to `limit` of the account's watches with ids above `after` (from the first when `None`), by id.
    async fn list(
        &self,
        tenant: Tenant,
        after: Option<WatchId>,
        limit: u32,
    ) -> Result<Vec<Watch>, WatchStoreError>;

    /// The account's watch `id`, if it has one.
    async fn get(&self, tenant: Tenant, id: WatchId) -> Result<Option<Watch>, WatchStoreError>;

    /// Deletes the account's watch `id` and its undelivered events; false when it had none.
    async fn delete(&self, tenant: Tenant, id: WatchId) -> Result<bool, WatchStoreError>;

    /// Claims up to `limit` enabled watches due at `now` whose claim, if any, lapsed, accounts taking turns
    /// (every account's oldest due watch before any account's second, so one account's thousands of due
    /// watches delay another's by one claim at most); each stays claimed until `now + lease`.
    async fn claim_due(
        &self,
        now: jiff::Timestamp,
        lease: std::time::Duration,
        limit: u32,
    ) -> Result<Vec<DueRefresh>, WatchStoreError>;

    /// Records a claimed refresh: the next one is due at `next_check_at`; on [`Refreshed::Fetched`] the record
    /// becomes the baseline and the event, if any, is queued (its id unique: the same event is queued once) for
    /// the watch's URL and, as with [`WatchStore::queue_event`], in the account's feed and for its endpoints.
    /// Returns false, changing nothing, when the claim is no longer this caller's.
    async fn finish_refresh(
        &self,
        watch: WatchId,
        claim: i64,
        now: jiff::Timestamp,
        next_check_at: jiff::Timestamp,
        refreshed: Refreshed,
    ) -> Result<bool, WatchStoreError>;

    /// Claims up to `limit` undelivered events due at `now`, fairly: at most one per watch in flight, at most
    /// `per_account` of one account's in flight (counting those claimed already), accounts taking turns; each
    /// stays claimed until `now + lease`.
    async fn claim_deliveries(
        &self,
        now: jiff::Timestamp,
        lease: std::time::Duration,
        limit: u32,
        per_account: u32,
    ) -> Result<Vec<Delivery>, WatchStoreError>;

    /// Records a delivery attempt on the event and its watch's last delivery; [`Delivered::GaveUp`] also
    /// disables the watch. Returns false, changing nothing, when the claim is no longer this caller's.
    async fn finish_delivery(
        &self,
        event_id: &str,
        claim: i64,
        now: jiff::Timestamp,
        delivered: Delivered,
    ) -> Result<bool, WatchStoreError>;

    /// Registers an endpoint unless its account has `at_most` already (then `None`: the count and the insert
    /// are one step, so concurrent registrations cannot pass the bound); returns it as stored.
    async fn create_endpoint(
        &self,
        endpoint: &NewEndpoint,
        at_most: usize,
        now: jiff::Timestamp,
    ) -> Result<Option<Endpoint>, WatchStoreError>;

    /// The account's endpoints, by id (an account has a few: the service bounds how many).
    async fn endpoints(&self, tenant: Tenant) -> Result<Vec<Endpoint>, WatchStoreError>;

    /// Deletes the account's endpoint `id` and its events; false when it had none.
    async fn delete_endpoint(
        &self,
        tenant: Tenant,
        id: EndpointId,
    ) -> Result<bool, WatchStoreError>;

    /// Queues `event`, due now, for each enabled endpoint of its account that wants its type, and records it in
    /// the account's feed; or with `to`, for that one endpoint whatever it wants, and not in the feed (a test
    /// `ping`). A copy already queued (same event id and endpoint), or an event already in the feed, is left as
    /// it is. Returns how many copies this call queued.
    async fn queue_event(
        &self,
        event: &AccountEvent,
        to: Option<EndpointId>,
        now: jiff::Timestamp,
    ) -> Result<u64, WatchStoreError>;

    /// Does what [`WatchStore::queue_event`] does without `to`, and queues the event for the job's callback
    /// `callback` too (made on the job's first event, the same on the next), in one transaction: an event is never
    /// in the feed without its callback copy. Returns how many copies this call queued.
    async fn queue_job_event(
        &self,
        event: &AccountEvent,
        callback: &JobCallbackTarget,
        now: jiff::Timestamp,
    ) -> Result<u64, WatchStoreError>;

    /// Up to `limit` of the account's event copies, newest first, those of endpoint `of` only when given.
    async fn endpoint_events(
        &self,
        tenant: Tenant,
        of: Option<EndpointId>,
        limit: u32,
    ) -> Result<Vec<EndpointEvent>, WatchStoreError>;

    /// Up to `limit` of the account's feed, oldest first: the events recorded after the event `after` (from the
    /// oldest kept when `None`), of the types in `kinds` only (any type when empty). `None` when the account has
    /// no event `after` (it never had, or it was forgotten: [`WatchStore::forget_done_before`]). Events are
    /// listed in the order they were committed, on PostgreSQL too, so a reader that pages with the last id it
    /// saw misses none. Each read is bounded: at most `limit` rows of one index range per type asked (or one
    /// range when none), however many other events the account has.
    async fn account_events(
        &self,
        tenant: Tenant,
        after: Option<&str>,
        kinds: &[String],
        limit: u32,
    ) -> Result<Option<Vec<FeedEvent>>, WatchStoreError>;

    /// Claims up to `limit` undelivered event copies due at `now`, fairly: at most one per endpoint in flight
    /// (so an endpoint that never answers holds one slot), at most `per_account` of one account's in flight
    /// (counting those claimed already), accounts taking turns; each stays claimed until `now + lease`.
    async fn claim_endpoint_deliveries(
        &self,
        now: jiff::Timestamp,
        lease: std::time::Duration,
        limit: u32,
        per_account: u32,
    ) -> Result<Vec<EndpointDelivery>, WatchStoreError>;

    /// Records a delivery attempt on the copy and its endpoint's last delivery; [`Delivered::GaveUp`] also
    /// disables the endpoint. Returns false, changing nothing, when the claim is no longer this caller's.
    async fn finish_endpoint_delivery(
        &self,
        event_id: &str,
        endpoint: EndpointId,
        claim: i64,
        now: jiff::Timestamp,
        delivered: Delivered,
    ) -> Result<bool, WatchStoreError>;

    /// Deletes the events and event copies that are done (delivered or given up) and were made before `before`,
    /// and the feed's events made before it, so that what one account's events leave behind does not grow
    /// without end; returns how many.
    async fn forget_done_before(&self, before: jiff::Timestamp) -> Result<u64, WatchStoreError>;

    /// The account's webhook secret, if it has one.
    async fn secret(&self, tenant: Tenant) -> Result<Option<String>, WatchStoreError>;

    /// Sets the account's webhook secret to `secret` if it has none (`replace` false) or in any case
    /// (`replace` true: a rotation); returns the secret in force.
    async fn set_secret(
        &self,
        tenant: Tenant,
        secret: &str,
        replace: bool,
    ) -> Result<String, WatchStoreError>;
}
