//! An account's own webhook endpoints: the events they may subscribe to, the body that registers one, and the
//! envelope every account event is sent in. (A watch's `company.changed` events are in `watch_request.rs`.)

use serde_json::Value;

use crate::InvalidRequest;
use crate::validation::{self, Body, ServerChecks};

/// The most webhook endpoints one account may register.
pub const MAX_ENDPOINTS: usize = 10;

/// The account events an endpoint can subscribe to, by their wire names (Stripe's `noun.verb` style).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
pub enum AccountEventType {
    /// A bulk job finished: every input has its answer.
    #[serde(rename = "job.finished")]
    JobFinished,
    /// A bulk job paused because the account ran out of credits.
    #[serde(rename = "job.paused")]
    JobPaused,
    /// A bulk job was cancelled.
    #[serde(rename = "job.cancelled")]
    JobCancelled,
    /// The account's balance fell below its alert threshold (once per crossing).
    #[serde(rename = "account.balance_low")]
    AccountBalanceLow,
    /// A watched page changed (the event its watch sends to its own `webhookUrl`, with the same id; `data`
    /// holds its `watch_id`, `final_li_url`, `changes` and `record`).
    #[serde(rename = "company.changed")]
    CompanyChanged,
}

impl AccountEventType {
    /// Every type, in the order the documentation lists them.
    pub const ALL: [Self; 5] = [
        Self::JobFinished,
        Self::JobPaused,
        Self::JobCancelled,
        Self::AccountBalanceLow,
        Self::CompanyChanged,
    ];

    /// The wire name, e.g. `job.finished`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::JobFinished => "job.finished",
            Self::JobPaused => "job.paused",
            Self::JobCancelled => "job.cancelled",
            Self::AccountBalanceLow => "account.balance_low",
            Self::CompanyChanged => "company.changed",
        }
    }

    /// The type named `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|kind| kind.as_str() == name)
    }
}

/// The type of the test event an endpoint can be sent on demand; not one to subscribe to.
pub const PING_EVENT: &str = "ping";

/// A validated request to register a webhook endpoint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EndpointRequest {
    /// Where events are POSTed: an absolute `https` URL (or `http` where allowed), as a watch's `webhookUrl`.
    pub url: String,
    /// The events it receives, distinct, in the order sent.
    pub events: Vec<AccountEventType>,
}

impl EndpointRequest {
    /// Checks a body `{"url": "https://…", "events": ["job.finished", …]}` against [`EndpointBody`]'s schema:
    /// `url` under the rule of a watch's `webhookUrl` ([`crate::webhook_url_pattern`], at most
    /// [`crate::MAX_WEBHOOK_URL_LEN`] bytes, `http` too when `allow_http`); `events` a non-empty list of
    /// distinct [`AccountEventType`] names.
    ///
    /// # Errors
    /// [`InvalidRequest`] naming every problem found.
    pub fn from_json(body: &[u8], allow_http: bool) -> Result<Self, InvalidRequest> {
        let mut checks = ServerChecks::without_pages(allow_http);
        let sent: EndpointBody =
            validation::read(body, &mut |mark, at, text| checks.check(mark, at, text))?;
        Ok(Self {
            url: sent.url.strip_suffix('\n').unwrap_or(&sent.url).to_owned(),
            events: sent.events,
        })
    }
}

impl Body for EndpointBody {
    const EXAMPLE: &str = r#"send a JSON object such as {"url": "https://example.com/hooks/company-data", "events": ["job.finished"]}"#;
    validation::rules!(EndpointBody);
}

/// The body that registers a webhook endpoint: where the account's events are POSTed and which ones. The server
/// checks a body against this schema (`EndpointRequest::from_json`) and names every problem.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[derive(schemars::JsonSchema)]
#[schemars(rename = "WebhookEndpointRequest")]
pub struct EndpointBody {
    /// Where events are POSTed: an https URL on a public address, without user name or password.
    #[schemars(
        length(max = crate::MAX_WEBHOOK_URL_LEN),
        transform = crate::schema::webhook_url,
        extend("examples" = ["https://example.com/hooks/company-data"])
    )]
    pub url: String,
    /// The events it receives: at least one, each once.
    #[schemars(length(min = 1, max = AccountEventType::ALL.len()), extend("uniqueItems" = true))]
    pub events: Vec<AccountEventType>,
}

/// Whether an endpoint is sent events.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(schemars::JsonSchema)]
pub enum EndpointStatus {
    /// Sent the events it wants.
    Enabled,
    /// Sent nothing more: an event failed for the whole retry window (see `disabled_reason`).
    Disabled,
}

/// A webhook endpoint as the API shows it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[schemars(rename = "WebhookEndpoint")]
pub struct EndpointInfo {
    /// Its id (a whole number above 0, as a string).
    pub id: String,
    /// Where events are POSTed.
    pub url: String,
    /// The events it receives.
    pub events: Vec<AccountEventType>,
    /// Whether it is sent events.
    pub status: EndpointStatus,
    /// When it was registered.
    pub created_at: jiff::Timestamp,
    /// The last delivery attempt to it.
    pub last_delivery: Option<crate::DeliveryInfo>,
    /// Why it was disabled.
    pub disabled_reason: Option<String>,
}

/// The account's endpoints, by id (`GET /v1/webhook-endpoints`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[schemars(rename = "WebhookEndpointList")]
pub struct EndpointList {
    /// At most `MAX_ENDPOINTS` (10) unless the account's quota says otherwise.
    #[schemars(length(max = MAX_ENDPOINTS))]
    pub endpoints: Vec<EndpointInfo>,
}

/// Where one event's delivery to one endpoint is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(schemars::JsonSchema)]
pub enum DeliveryState {
    /// The endpoint answered 2xx.
    Delivered,
    /// Not yet delivered; tried again at `next_attempt_at`.
    Pending,
    /// Given up: it failed for the whole retry window.
    Failed,
}

/// One event's delivery to one endpoint (`GET /v1/webhook-endpoints/{id}/deliveries`).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[schemars(rename = "WebhookDelivery")]
pub struct EndpointDeliveryInfo {
    /// The event's id, as sent in the body and the `Company-Data-Event-Id` header.
    pub event_id: String,
    /// The event's type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Where it is.
    pub status: DeliveryState,
    /// When the event was made.
    pub created_at: jiff::Timestamp,
    /// Attempts so far.
    pub attempts: u32,
    /// When the endpoint answered 2xx.
    pub delivered_at: Option<jiff::Timestamp>,
    /// When it is tried next (pending only).
    pub next_attempt_at: Option<jiff::Timestamp>,
    /// The endpoint's HTTP status on the last attempt, if it answered.
    pub last_status: Option<u16>,
    /// What went wrong on the last attempt.
    pub last_error: Option<String>,
}

/// An endpoint's deliveries, newest first.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[schemars(rename = "WebhookDeliveryList")]
pub struct DeliveryList {
    /// Up to the request's `limit`.
    #[schemars(length(max = crate::paging::MOST_DELIVERIES_PER_PAGE))]
    pub deliveries: Vec<EndpointDeliveryInfo>,
}

/// The answer to a test `ping`: the event queued for the endpoint.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[schemars(rename = "WebhookPing")]
pub struct PingAnswer {
    /// The `ping` event's id: find it in the endpoint's deliveries.
    pub event_id: String,
}

/// The body POSTed to an account's endpoints for each account event, signed as a watch's events are. The
/// `id` is the same on every attempt and at every endpoint: drop duplicates by it.
#[derive(Clone, Debug, serde::Serialize, schemars::JsonSchema)]
#[schemars(rename = "AccountEvent")]
pub struct AccountEventBody {
    /// The event's id, `evt_…`, made from what happened (the same job finishing is one event).
    pub id: String,
    /// The event's type: one an endpoint subscribes to (`job.finished`, …), or `ping` for a test event.
    #[serde(rename = "type")]
    pub kind: String,
    /// When the event was made: when the service noticed what it reports (for a job's ending, within about a
    /// second while a server runs).
    pub created_at: jiff::Timestamp,
    /// What it is about; its members depend on the type (docs/api.md, "Webhooks").
    pub data: Value,
}

/// A page of the account's events, oldest first (`GET /v1/events`): each exactly as its endpoints are sent it
/// (the same id and body), so a client can switch between receiving webhooks and polling without joining the
/// two.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[schemars(rename = "AccountEventList")]
pub struct EventList {
    /// Up to the request's `limit` events, oldest first.
    #[schemars(
        with = "Vec<AccountEventBody>",
        length(max = crate::paging::MOST_EVENTS_PER_PAGE)
    )]
    pub events: Vec<Box<serde_json::value::RawValue>>,
    /// Whether more events follow this page now.
    pub has_more: bool,
    /// The path to ask next: `after` the last event of this page (or the request's own `after` when the page is
    /// empty), with the same `limit` and `type`. Poll it for the events recorded from now on.
    pub next: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(body: &str) -> Vec<(String, String)> {
        EndpointRequest::from_json(body.as_bytes(), false)
            .expect_err("refused")
            .problems
            .into_iter()
            .map(|p| (p.pointer, p.reason))
            .collect()
    }

    #[test]
    fn an_endpoint_names_an_https_url_and_events_it_can_receive() {
        let request = EndpointRequest::from_json(
            br#"{"url": "https://hooks.example/cd", "events": ["job.finished", "account.balance_low"]}"#,
            false,
        )
        .expect("valid");
        assert_eq!(request.url, "https://hooks.example/cd");
        assert_eq!(
            request.events,
            [
                AccountEventType::JobFinished,
                AccountEventType::AccountBalanceLow
            ]
        );
        let refused = problems(
            r#"{"url": "http://hooks.example/cd", "events": ["job.finished", "ping", "job.finished", 3], "x": 1}"#,
        );
        let pointers: Vec<_> = refused.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            pointers,
            ["/url", "/events/1", "/events/2", "/events/3", "/x"],
            "{refused:?}"
        );
        assert!(refused[0].1.contains("https only"), "{refused:?}");
        assert!(
            refused[1].1.contains("`ping` is not one of the values"),
            "{refused:?}"
        );
        assert_eq!(
            problems(r#"{"url": "https://a.example", "events": []}"#)[0].0,
            "/events"
        );
        assert_eq!(problems(r#"{"events": ["job.paused"]}"#)[0].0, "/url");
    }

    #[test]
    fn types_read_back_from_their_wire_names() {
        for kind in AccountEventType::ALL {
            assert_eq!(AccountEventType::from_name(kind.as_str()), Some(kind));
            assert_eq!(
                serde_json::to_value(kind).expect("serializes"),
                kind.as_str()
            );
        }
        assert_eq!(AccountEventType::from_name(PING_EVENT), None);
    }
}
