//! Watches' durable state: which pages each account watches, how often, where changes are sent; the record
//! each watch compares the next fetch with; the events waiting for delivery; each account's webhook secret.
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

/// A failure of the store's backend. The backend's own error is kept as the source, never exposed in the type.
#[derive(Debug, thiserror::Error)]
#[error("the watch store failed: {0}")]
pub struct WatchStoreError(#[source] pub Box<dyn std::error::Error + Send + Sync>);

/// Where watches live. Implementations must be safe to share between tasks and servers.
#[async_trait::async_trait]
pub trait WatchStore: Send + Sync + std::fmt::Debug {
    /// Creates `watches` in one transaction, each first due `every_hours` after `now`; returns them in order.
    async fn create(
        &self,
        watches: &[NewWatch],
        now: jiff::Timestamp,
    ) -> Result<Vec<Watch>, WatchStoreError>;

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

    /// Claims up to `limit` enabled watches due at `now` (oldest due first) whose claim, if any, lapsed; each
    /// stays claimed until `now + lease`.
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

    /// Claims up to `limit` undelivered events due at `now` (oldest first); each stays claimed until
    /// `now + lease`.
    async fn claim_deliveries(
        &self,
        now: jiff::Timestamp,
        lease: std::time::Duration,
        limit: u32,
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

/// Milliseconds since the Unix epoch, as both backends store times.
pub(crate) fn millis(at: jiff::Timestamp) -> i64 {
    at.as_millisecond()
}

/// A stored time.
pub(crate) fn at(ms: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_millisecond(ms).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

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
            last_delivery: self.last_delivery_ms.map(|ms| DeliveryStatus {
                at: at(ms),
                status: self
                    .last_delivery_status
                    .and_then(|s| u16::try_from(s).ok()),
                error: self.last_delivery_error,
            }),
            disabled_at: self.disabled_ms.map(at),
            disabled_reason: self.disabled_reason,
        })
    }
}

/// The (status, error) columns of a delivery attempt.
pub(crate) fn delivery_columns(delivered: &Delivered) -> (Option<i64>, Option<String>) {
    match delivered {
        Delivered::Yes { status } => (Some(i64::from(*status)), None),
        Delivered::Retry { status, error, .. } | Delivered::GaveUp { status, error } => {
            (status.map(i64::from), Some(error.clone()))
        }
    }
}
