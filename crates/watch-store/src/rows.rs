//! What both engines share: the columns every read selects and the rows they are read into, times and `fields`
//! as columns hold them, the fair claim's SQL, and what a claim or an attempt writes.

use company_model::Tenant;
use page_url::PageUrl;

use crate::{
    Delivered, Delivery, DeliveryStatus, Endpoint, EndpointDelivery, EndpointEvent, EndpointId,
    FeedEvent, Watch, WatchId, WatchStoreError,
};

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
     last_delivery_error, disabled_ms, disabled_reason, include_parts";
/// How many columns [`WATCH_COLUMNS`] names: the index of a column read after them.
pub(crate) const WATCH_COLUMN_COUNT: usize = 17;

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
    pub(crate) include: String,
}

impl WatchRow {
    pub(crate) fn into_watch(self) -> Result<Watch, WatchStoreError> {
        Ok(Watch {
            id: WatchId(self.id),
            tenant: Tenant::from_key(self.account),
            url: PageUrl::from_canonical(&self.url).map_err(|e| WatchStoreError(Box::new(e)))?,
            every_hours: u32::try_from(self.every_hours).unwrap_or(u32::MAX),
            webhook_url: self.webhook_url,
            fields: fields_from_column(&self.fields),
            include: self.include,
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
            tenant: Tenant::from_key(self.account),
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
    /// The SQL of the headers sent with the events, of the owners' row `o` (a JSON object, or NULL).
    pub(crate) headers: &'static str,
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
    /// - an account has at most `per_account` in flight, counting those claimed already in both queues and both
    ///   its tenants' (live and test mode), however many owners it has (a thousand watches pointing at one receiver that
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
        // An account is counted with both its tenants (`abs` of the key, `Tenant::key`), and across both queues:
        // an account's share is one.
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
    headers: "CAST(NULL AS TEXT)",
    other_events: "endpoint_events",
};

/// Account events' copies, one per endpoint.
pub(crate) const ENDPOINT_EVENTS: Queue = Queue {
    events: "endpoint_events",
    owner: "endpoint_id",
    owners: "webhook_endpoints",
    url: "url",
    headers: "o.headers",
    other_events: "watch_events",
};

/// A claimed event as both queues return it: id, owner, account, body, created, attempts (with this one),
/// the owner's URL (`None` if the owner is gone) and headers (a JSON object, if any).
pub(crate) struct Claimed {
    pub(crate) id: String,
    pub(crate) owner: i64,
    pub(crate) account: i64,
    pub(crate) body: String,
    pub(crate) created_ms: i64,
    pub(crate) attempts: i64,
    pub(crate) url: Option<String>,
    pub(crate) headers: Option<String>,
}

impl Claimed {
    pub(crate) fn into_delivery(self) -> Option<Delivery> {
        Some(Delivery {
            event_id: self.id,
            watch_id: WatchId(self.owner),
            tenant: Tenant::from_key(self.account),
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
            tenant: Tenant::from_key(self.account),
            url: self.url?,
            headers: headers_from(self.headers.as_deref()),
            body: self.body,
            created_at: at(self.created_ms),
            attempts: u32::try_from(self.attempts - 1).unwrap_or(0),
            claim: self.attempts,
        })
    }
}

/// A job callback's headers as `webhook_endpoints.headers` keeps them: a JSON object of names to values; `None`
/// for none.
pub(crate) fn headers_column(headers: &[(String, String)]) -> Option<String> {
    if headers.is_empty() {
        return None;
    }
    let object: serde_json::Map<String, serde_json::Value> = headers
        .iter()
        .map(|(name, value)| (name.clone(), serde_json::Value::String(value.clone())))
        .collect();
    Some(serde_json::Value::Object(object).to_string())
}

/// The headers [`headers_column`] wrote (none for text it did not write).
fn headers_from(stored: Option<&str>) -> Vec<(String, String)> {
    stored
        .and_then(|text| {
            serde_json::from_str::<std::collections::BTreeMap<String, String>>(text).ok()
        })
        .map(|headers| headers.into_iter().collect())
        .unwrap_or_default()
}

/// One statement of [`forgetting`].
pub(crate) struct Forget {
    /// The SQL.
    pub(crate) sql: String,
    /// Whether it takes the cutoff (milliseconds) as its one parameter.
    pub(crate) cutoff: bool,
    /// Whether the rows it deletes count as forgotten events.
    pub(crate) counted: bool,
}

/// What `forget_done_before` deletes, in order, in the SQL both engines speak (`before`: the engine's placeholder
/// of the cutoff): both queues' copies done before the cutoff, the feed's events made before it, the job callbacks
/// last used before it with nothing queued (a callback goes with its last event), and the copies whose endpoint is
/// gone (deleted while another server queued to it: sent to nobody, they would hold a delivery place).
pub(crate) fn forgetting(before: &str) -> [Forget; 5] {
    let done = |events: &str| Forget {
        sql: format!(
            "DELETE FROM {events}
             WHERE next_attempt_ms IS NULL AND claim_until_ms IS NULL AND created_at_ms < {before}"
        ),
        cutoff: true,
        counted: true,
    };
    [
        done(WATCH_EVENTS.events),
        done(ENDPOINT_EVENTS.events),
        Forget {
            sql: format!("DELETE FROM account_events WHERE created_at_ms < {before}"),
            cutoff: true,
            counted: true,
        },
        Forget {
            sql: format!(
                "DELETE FROM webhook_endpoints
                 WHERE job_id IS NOT NULL AND created_at_ms < {before}
                   AND NOT EXISTS (SELECT 1 FROM endpoint_events v WHERE v.endpoint_id = webhook_endpoints.id)"
            ),
            cutoff: true,
            counted: false,
        },
        Forget {
            sql: "DELETE FROM endpoint_events
                  WHERE NOT EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = endpoint_events.endpoint_id)"
                .to_owned(),
            cutoff: false,
            counted: true,
        },
    ]
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

/// The feed's reads, `(seq, event)` rows: the account's events after a position (`$1` account, `$2` seq, `$3`
/// limit), on the `(account_id, seq)` index. Parameters are numbered in order of appearance, so SQLite numbers
/// them as PostgreSQL does.
pub(crate) const FEED_AFTER: &str = "SELECT seq, id, kind, body, created_at_ms FROM account_events
     WHERE account_id = $1 AND seq > $2 ORDER BY seq LIMIT $3";
/// [`FEED_AFTER`] for one type (`$3`; `$4` the limit): a bounded range of the `(account_id, kind, seq)` index,
/// whatever the account's other events.
pub(crate) const FEED_OF_KIND_AFTER: &str =
    "SELECT seq, id, kind, body, created_at_ms FROM account_events
     WHERE account_id = $1 AND seq > $2 AND kind = $3 ORDER BY seq LIMIT $4";

/// The first `limit` of the types' pages merged in feed order (each page is in `seq` order already).
pub(crate) fn merge_feed(mut pages: Vec<(i64, FeedEvent)>, limit: u32) -> Vec<FeedEvent> {
    pages.sort_by_key(|(seq, _)| *seq);
    pages
        .into_iter()
        .take(limit as usize)
        .map(|(_, event)| event)
        .collect()
}
