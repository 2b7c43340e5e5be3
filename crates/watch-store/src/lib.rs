//! Watches' durable state: which pages each account watches, how often, where changes are sent; the record
//! each watch compares the next fetch with; the events waiting for delivery; each account's webhook secret.
//! Beside the watches, each account's own webhook endpoints and the account events queued for them (a job
//! finished, the balance ran low): one copy of an event per endpoint that wants its type, delivered and
//! retried the same way ([`WatchStore::claim_endpoint_deliveries`]).
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
//! Not here: fetching, comparing, signing, sending, the retry schedule (the company-watch service decides;
//! this crate records).
#![deny(missing_docs)]

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

use company_model::{AccountId, RecordJson};
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
    /// The account that owns it and pays for its refreshes.
    pub account: AccountId,
    /// The page, normalized.
    pub url: PageUrl,
    /// Hours between refreshes.
    pub every_hours: u32,
    /// Where change events are POSTed.
    pub webhook_url: String,
    /// The record members whose change is an event.
    pub fields: Vec<String>,
    /// What the first refresh compares with: the page's newest stored record, if any.
    pub baseline: Option<RecordJson>,
}

/// A watch as stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Watch {
    /// Its id.
    pub id: WatchId,
    /// Its account.
    pub account: AccountId,
    /// The page.
    pub url: PageUrl,
    /// Hours between refreshes.
    pub every_hours: u32,
    /// Where change events are POSTed.
    pub webhook_url: String,
    /// The record members whose change is an event.
    pub fields: Vec<String>,
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
    /// The page was fetched: `record` becomes the baseline, and `event` (the body of a change event, with its
    /// id) is queued for delivery when the fetch changed a watched member.
    Fetched {
        /// The record fetched.
        record: RecordJson,
        /// The change event to deliver: its id and its JSON body.
        event: Option<(String, String)>,
    },
    /// The page could not be fetched or paid for; the baseline stays. `error` is a stable code.
    Failed {
        /// e.g. `insufficient_credits`, `not_found`, `blocked`.
        error: String,
    },
}

/// An event handed to one caller by [`WatchStore::claim_deliveries`].
#[derive(Clone, Debug, PartialEq)]
pub struct Delivery {
    /// The event's id (`evt_…`), the same on every attempt.
    pub event_id: String,
    /// Its watch.
    pub watch_id: WatchId,
    /// The account (whose webhook secret signs it).
    pub account: AccountId,
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
    /// The account whose events it receives.
    pub account: AccountId,
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
    /// Its account.
    pub account: AccountId,
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

/// An account event to queue with [`WatchStore::queue_event`]: one copy per endpoint that wants its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccountEvent {
    /// Its id (`evt_…`): made from what happened, so the same event queued twice (two servers noticing one job
    /// finish) is queued once per endpoint.
    pub id: String,
    /// The account it is about.
    pub account: AccountId,
    /// Its type, e.g. `job.finished`, `account.balance_low`, `ping`.
    pub kind: String,
    /// The JSON body, exactly as sent on every attempt.
    pub body: String,
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
    /// The account (whose webhook secret signs it).
    pub account: AccountId,
    /// The endpoint's URL.
    pub url: String,
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
        account: AccountId,
        after: Option<WatchId>,
        limit: u32,
    ) -> Result<Vec<Watch>, WatchStoreError>;

    /// The account's watch `id`, if it has one.
    async fn get(&self, account: AccountId, id: WatchId) -> Result<Option<Watch>, WatchStoreError>;

    /// Deletes the account's watch `id` and its undelivered events; false when it had none.
    async fn delete(&self, account: AccountId, id: WatchId) -> Result<bool, WatchStoreError>;

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
    /// becomes the baseline and the event, if any, is queued (its id unique: the same event is queued once).
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
    async fn endpoints(&self, account: AccountId) -> Result<Vec<Endpoint>, WatchStoreError>;

    /// Deletes the account's endpoint `id` and its events; false when it had none.
    async fn delete_endpoint(
        &self,
        account: AccountId,
        id: EndpointId,
    ) -> Result<bool, WatchStoreError>;

    /// Queues `event`, due now, for each enabled endpoint of its account that wants its type, or with `to`
    /// for that one endpoint whatever it wants (a test `ping`). A copy already queued (same event id and
    /// endpoint) is left as it is. Returns how many copies this call queued.
    async fn queue_event(
        &self,
        event: &AccountEvent,
        to: Option<EndpointId>,
        now: jiff::Timestamp,
    ) -> Result<u64, WatchStoreError>;

    /// Up to `limit` of the account's event copies, newest first, those of endpoint `of` only when given.
    async fn endpoint_events(
        &self,
        account: AccountId,
        of: Option<EndpointId>,
        limit: u32,
    ) -> Result<Vec<EndpointEvent>, WatchStoreError>;

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
    /// so that what one account's events leave behind does not grow without end; returns how many.
    async fn forget_done_before(&self, before: jiff::Timestamp) -> Result<u64, WatchStoreError>;

    /// The account's webhook secret, if it has one.
    async fn secret(&self, account: AccountId) -> Result<Option<String>, WatchStoreError>;

    /// Sets the account's webhook secret to `secret` if it has none (`replace` false) or in any case
    /// (`replace` true: a rotation); returns the secret in force.
    async fn set_secret(
        &self,
        account: AccountId,
        secret: &str,
        replace: bool,
    ) -> Result<String, WatchStoreError>;
}

/// Times as both backends store them: milliseconds since the Unix epoch ([`store_base::time`]).
pub(crate) use store_base::time::{from_millis as at, millis};

/// `fields` as stored: a JSON array.
pub(crate) fn fields_column(fields: &[String]) -> String {
    serde_json::to_string(fields).unwrap_or_else(|_| "[]".to_owned())
}

/// Stored `fields`.
pub(crate) fn fields_from_column(text: &str) -> Vec<String> {
    serde_json::from_str(text).unwrap_or_default()
}

/// The watch columns every read selects, in this order (both backends).
pub(crate) const WATCH_COLUMNS: &str = "id, account_id, url, every_hours, webhook_url, fields, created_at_ms, \
     next_check_ms, last_checked_ms, last_check_error, last_change_ms, last_delivery_ms, last_delivery_status, \
     last_delivery_error, disabled_ms, disabled_reason";

/// A watch's columns as read, in [`WATCH_COLUMNS`] order.
pub(crate) struct WatchRow {
    pub(crate) id: i64,
    pub(crate) account: i64,
    pub(crate) url: String,
    pub(crate) every_hours: i64,
    pub(crate) webhook_url: String,
    pub(crate) fields: String,
    pub(crate) created_ms: i64,
    pub(crate) next_check_ms: i64,
    pub(crate) last_checked_ms: Option<i64>,
    pub(crate) last_check_error: Option<String>,
    pub(crate) last_change_ms: Option<i64>,
    pub(crate) last_delivery_ms: Option<i64>,
    pub(crate) last_delivery_status: Option<i64>,
    pub(crate) last_delivery_error: Option<String>,
    pub(crate) disabled_ms: Option<i64>,
    pub(crate) disabled_reason: Option<String>,
}

impl WatchRow {
    pub(crate) fn into_watch(self) -> Result<Watch, WatchStoreError> {
        Ok(Watch {
            id: WatchId(self.id),
            account: AccountId(self.account),
            url: PageUrl::from_canonical(&self.url).map_err(|e| WatchStoreError(Box::new(e)))?,
            every_hours: u32::try_from(self.every_hours).unwrap_or(u32::MAX),
            webhook_url: self.webhook_url,
            fields: fields_from_column(&self.fields),
            created_at: at(self.created_ms),
            next_check_at: at(self.next_check_ms),
            last_checked_at: self.last_checked_ms.map(at),
            last_check_error: self.last_check_error,
            last_change_at: self.last_change_ms.map(at),
            last_delivery: delivery_status(
                self.last_delivery_ms,
                self.last_delivery_status,
                self.last_delivery_error,
            ),
            disabled_at: self.disabled_ms.map(at),
            disabled_reason: self.disabled_reason,
        })
    }
}

/// The last delivery an owner's columns record, if any attempt was made.
fn delivery_status(
    at_ms: Option<i64>,
    status: Option<i64>,
    error: Option<String>,
) -> Option<DeliveryStatus> {
    at_ms.map(|ms| DeliveryStatus {
        at: at(ms),
        status: status.and_then(|s| u16::try_from(s).ok()),
        error,
    })
}

/// The endpoint columns every read selects, in this order (both backends).
pub(crate) const ENDPOINT_COLUMNS: &str = "id, account_id, url, events, created_at_ms, last_delivery_ms, \
     last_delivery_status, last_delivery_error, disabled_ms, disabled_reason";

/// An endpoint's columns as read, in [`ENDPOINT_COLUMNS`] order.
pub(crate) struct EndpointRow {
    pub(crate) id: i64,
    pub(crate) account: i64,
    pub(crate) url: String,
    pub(crate) events: String,
    pub(crate) created_ms: i64,
    pub(crate) last_delivery_ms: Option<i64>,
    pub(crate) last_delivery_status: Option<i64>,
    pub(crate) last_delivery_error: Option<String>,
    pub(crate) disabled_ms: Option<i64>,
    pub(crate) disabled_reason: Option<String>,
}

impl EndpointRow {
    pub(crate) fn into_endpoint(self) -> Endpoint {
        Endpoint {
            id: EndpointId(self.id),
            account: AccountId(self.account),
            url: self.url,
            events: fields_from_column(&self.events),
            created_at: at(self.created_ms),
            last_delivery: delivery_status(
                self.last_delivery_ms,
                self.last_delivery_status,
                self.last_delivery_error,
            ),
            disabled_at: self.disabled_ms.map(at),
            disabled_reason: self.disabled_reason,
        }
    }
}

/// The event-copy columns [`WatchStore::endpoint_events`] selects, in this order (both backends).
pub(crate) const ENDPOINT_EVENT_COLUMNS: &str = "id, endpoint_id, kind, created_at_ms, attempts, delivered_ms, \
     next_attempt_ms, last_status, last_error";

/// An event copy's columns as read, in [`ENDPOINT_EVENT_COLUMNS`] order.
pub(crate) struct EndpointEventRow {
    pub(crate) id: String,
    pub(crate) endpoint: i64,
    pub(crate) kind: String,
    pub(crate) created_ms: i64,
    pub(crate) attempts: i64,
    pub(crate) delivered_ms: Option<i64>,
    pub(crate) next_attempt_ms: Option<i64>,
    pub(crate) last_status: Option<i64>,
    pub(crate) last_error: Option<String>,
}

impl EndpointEventRow {
    pub(crate) fn into_event(self) -> EndpointEvent {
        EndpointEvent {
            event_id: self.id,
            endpoint: EndpointId(self.endpoint),
            kind: self.kind,
            created_at: at(self.created_ms),
            attempts: u32::try_from(self.attempts).unwrap_or(0),
            delivered_at: self.delivered_ms.map(at),
            next_attempt_at: self.next_attempt_ms.map(at),
            last_status: self.last_status.and_then(|s| u16::try_from(s).ok()),
            last_error: self.last_error,
        }
    }
}

/// One of the two delivery queues: a watch's change events, or the copies of account events for endpoints.
/// Their tables have the same delivery columns, and their owners (`watches`, `webhook_endpoints`) the same
/// last-delivery and disabled columns, so both engines claim and finish both with one statement each.
pub(crate) struct Queue {
    /// The events' table.
    pub(crate) events: &'static str,
    /// Its column naming the owner.
    pub(crate) owner: &'static str,
    /// The owners' table.
    pub(crate) owners: &'static str,
    /// The owners' column with the URL the events go to.
    pub(crate) url: &'static str,
    /// The other queue's events' table: an account's deliveries in flight are counted across both.
    pub(crate) other_events: &'static str,
}

impl Queue {
    /// The common table expressions (ending with `turns (id, owner, next_attempt_ms, turn)`) that rank the events
    /// that may be claimed next, fairly, in the SQL both engines speak; `now` and `per_account` are the engine's
    /// placeholders. Each engine then takes them by `turn, next_attempt_ms, id` up to its limit (PostgreSQL
    /// skipping the rows another server is claiming before it limits). The rules:
    /// - an owner (an endpoint, a watch) has at most one event in flight: none of an owner with one claimed, and
    ///   of the others only their oldest due event;
    /// - an account has at most `per_account` in flight, counting those claimed already in both queues and its
    ///   test twin's with its own, however many owners it has (a thousand watches pointing at one receiver that
    ///   never answers hold `per_account` places, not all);
    /// - accounts take turns: every account's first event comes before any account's second, so one account's
    ///   queue of thousands delays another's event by one claim at most.
    pub(crate) fn fair_turns(&self, now: &str, per_account: &str) -> String {
        let Queue {
            events,
            owner,
            other_events,
            ..
        } = self;
        // An account is counted with its test twin (`abs`), and across both queues: a tenant's share is one.
        format!(
            "WITH busy AS (
                 SELECT {owner} AS owner, abs(account_id) AS account FROM {events} WHERE claim_until_ms > {now}),
             busy_accounts AS (
                 SELECT account FROM busy
                 UNION ALL
                 SELECT abs(account_id) FROM {other_events} WHERE claim_until_ms > {now}),
             due AS (
                 SELECT e.id, e.{owner} AS owner, abs(e.account_id) AS account, e.next_attempt_ms,
                        row_number() OVER (PARTITION BY e.{owner} ORDER BY e.next_attempt_ms, e.id) AS nth
                 FROM {events} e
                 WHERE e.next_attempt_ms <= {now} AND coalesce(e.claim_until_ms, 0) <= {now}
                   AND e.{owner} NOT IN (SELECT owner FROM busy)),
             ranked AS (
                 SELECT d.id, d.owner, d.next_attempt_ms,
                        row_number() OVER (PARTITION BY d.account ORDER BY d.next_attempt_ms, d.id)
                          + (SELECT count(*) FROM busy_accounts b WHERE b.account = d.account) AS turn
                 FROM due d WHERE d.nth = 1),
             turns AS (SELECT id, owner, next_attempt_ms, turn FROM ranked WHERE turn <= {per_account})"
        )
    }
}

/// The common table expression `turns (id, next_check_ms, turn)` that ranks the watches that may be refreshed
/// next: due, enabled, not claimed, accounts taking turns (every account's oldest due watch before any account's
/// second); each engine takes them by `turn, next_check_ms, id` up to its limit. `now` is the engine's
/// placeholder.
pub(crate) fn fair_due_watches(now: &str) -> String {
    format!(
        "WITH turns AS (
             SELECT id, next_check_ms,
                    row_number() OVER (PARTITION BY account_id ORDER BY next_check_ms, id) AS turn
             FROM watches
             WHERE disabled_ms IS NULL AND next_check_ms <= {now} AND coalesce(claim_until_ms, 0) <= {now})"
    )
}

/// Watches' change events.
pub(crate) const WATCH_EVENTS: Queue = Queue {
    events: "watch_events",
    owner: "watch_id",
    owners: "watches",
    url: "webhook_url",
    other_events: "endpoint_events",
};

/// Account events' copies, one per endpoint.
pub(crate) const ENDPOINT_EVENTS: Queue = Queue {
    events: "endpoint_events",
    owner: "endpoint_id",
    owners: "webhook_endpoints",
    url: "url",
    other_events: "watch_events",
};

/// A claimed event as both queues return it: id, owner, account, body, created, attempts (with this one),
/// the owner's URL (`None` if the owner is gone).
pub(crate) struct Claimed {
    pub(crate) id: String,
    pub(crate) owner: i64,
    pub(crate) account: i64,
    pub(crate) body: String,
    pub(crate) created_ms: i64,
    pub(crate) attempts: i64,
    pub(crate) url: Option<String>,
}

impl Claimed {
    pub(crate) fn into_delivery(self) -> Option<Delivery> {
        Some(Delivery {
            event_id: self.id,
            watch_id: WatchId(self.owner),
            account: AccountId(self.account),
            webhook_url: self.url?,
            body: self.body,
            created_at: at(self.created_ms),
            attempts: u32::try_from(self.attempts - 1).unwrap_or(0),
            claim: self.attempts,
        })
    }

    pub(crate) fn into_endpoint_delivery(self) -> Option<EndpointDelivery> {
        Some(EndpointDelivery {
            event_id: self.id,
            endpoint: EndpointId(self.owner),
            account: AccountId(self.account),
            url: self.url?,
            body: self.body,
            created_at: at(self.created_ms),
            attempts: u32::try_from(self.attempts - 1).unwrap_or(0),
            claim: self.attempts,
        })
    }
}

/// What an attempt writes: on the event (next attempt, delivered at, status, error) and on its owner (given up,
/// and why).
pub(crate) struct Attempt {
    pub(crate) now_ms: i64,
    pub(crate) next_attempt_ms: Option<i64>,
    pub(crate) delivered_ms: Option<i64>,
    pub(crate) status: Option<i64>,
    pub(crate) error: Option<String>,
    pub(crate) gave_up: bool,
    pub(crate) reason: Option<String>,
}

impl Attempt {
    pub(crate) fn new(delivered: &Delivered, now: jiff::Timestamp) -> Self {
        let now_ms = millis(now);
        let (status, error) = delivery_columns(delivered);
        let (next_attempt_ms, delivered_ms, gave_up) = match delivered {
            Delivered::Yes { .. } => (None, Some(now_ms), false),
            Delivered::Retry { retry_at, .. } => (Some(millis(*retry_at)), None, false),
            Delivered::GaveUp { .. } => (None, None, true),
        };
        let reason = gave_up.then(|| {
            format!(
                "its webhook failed for the whole retry window: {}",
                error.as_deref().unwrap_or("no 2xx answer")
            )
        });
        Self {
            now_ms,
            next_attempt_ms,
            delivered_ms,
            status,
            error,
            gave_up,
            reason,
        }
    }
}

/// The (status, error) columns of a delivery attempt.
fn delivery_columns(delivered: &Delivered) -> (Option<i64>, Option<String>) {
    match delivered {
        Delivered::Yes { status } => (Some(i64::from(*status)), None),
        Delivered::Retry { status, error, .. } | Delivered::GaveUp { status, error } => {
            (status.map(i64::from), Some(error.clone()))
        }
    }
}
