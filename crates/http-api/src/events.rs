//! `GET /v1/events`: the account's events, oldest first, for clients that poll rather than receive webhooks
//! (docs/api.md, "The event feed").

use api_contract::paths::EVENTS;
use api_contract::{AccountEventType, EventList, EventsQuery};
use http::{Method, StatusCode};
use http_serve::Response;
use serde_json::{Value, json};

use crate::api::Api;
use crate::doc::{Context, error_response};
use crate::endpoint::{Access, Call, Endpoint, Part, Reads};
use crate::error::ApiError;
use crate::paging::{DEFAULT_EVENTS_PER_PAGE, MOST_EVENTS_PER_PAGE};
use crate::request::{number, query};
use crate::respond::json_response;

/// `GET /v1/events`.
pub(crate) const LIST_EVENTS: Endpoint = Endpoint {
    method: Method::GET,
    path: EVENTS,
    operation_id: "listEvents",
    part: Part::Webhooks,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(list_events_doc),
    run: |api, call| Box::pin(api.list_events(call)),
};

/// The types `type` names, comma-separated; every type when absent.
///
/// # Errors
/// [`ApiError::InvalidQuery`] naming the type it does not know and the ones it does.
fn kinds(asked: Option<&str>) -> Result<Vec<AccountEventType>, ApiError> {
    let Some(asked) = asked else {
        return Ok(Vec::new());
    };
    // `$` before one final newline, as Python reads the published pattern.
    let asked = asked.strip_suffix('\n').unwrap_or(asked);
    let mut kinds = Vec::new();
    for name in asked.split(',') {
        let kind = AccountEventType::from_name(name).ok_or_else(|| {
            let known: Vec<&str> = AccountEventType::ALL.iter().map(|k| k.as_str()).collect();
            ApiError::InvalidQuery(format!(
                "`type` names `{name}`; send one or more of {} separated by commas",
                known.join(", ")
            ))
        })?;
        if !kinds.contains(&kind) {
            kinds.push(kind);
        }
    }
    Ok(kinds)
}

impl Api {
    /// `GET /events?after=<event id>&limit=<n>&type=<types>`: `{events: [...], has_more, next}`, oldest first.
    async fn list_events(&self, call: Call) -> Result<Response, ApiError> {
        let webhooks = self.endpoint_service()?;
        let caller = call.caller()?;
        let asked: EventsQuery = query(call.query())?;
        let limit = number(
            "limit",
            asked.limit.as_deref(),
            1..=u64::from(MOST_EVENTS_PER_PAGE),
        )?
        .map_or(DEFAULT_EVENTS_PER_PAGE, |n| n as u32);
        let kinds = kinds(asked.kind.as_deref())?;
        let after = asked.after.as_deref();
        if after.is_some_and(|id| {
            id.is_empty() || id.chars().count() > api_contract::MAX_EVENT_ID_LENGTH as usize
        }) {
            return Err(ApiError::InvalidQuery(format!(
                "`after` is an event's id, 1 to {} characters; send the id of the last event you saw",
                api_contract::MAX_EVENT_ID_LENGTH
            )));
        }
        // One more than the page, to say whether more follow.
        let mut events = webhooks
            .events(caller.tenant, after, &kinds, limit + 1)
            .await?
            .ok_or(ApiError::EventNotFound {
                kept_days: webhooks.settings().retention_days(),
            })?;
        let has_more = events.len() > limit as usize;
        events.truncate(limit as usize);
        let last = events
            .last()
            .map(|event| event.id.clone())
            .or(asked.after.clone());
        let limit_text = limit.to_string();
        let mut pairs = vec![("limit", limit_text.as_str())];
        pairs.extend(last.as_deref().map(|last| ("after", last)));
        pairs.extend(asked.kind.as_deref().map(|kind| ("type", kind)));
        let next = format!(
            "{EVENTS}?{}",
            serde_urlencoded::to_string(&pairs).unwrap_or_default()
        );
        let events = events
            .into_iter()
            .filter_map(|event| serde_json::value::RawValue::from_string(event.body).ok())
            .collect();
        Ok(json_response(
            StatusCode::OK,
            &EventList {
                events,
                has_more,
                next,
            },
        ))
    }
}

/// The form of `type`: one or more of the types, separated by commas.
fn types_pattern() -> String {
    let one = AccountEventType::ALL
        .iter()
        .map(|kind| kind.as_str().replace('.', "\\."))
        .collect::<Vec<_>>()
        .join("|");
    format!("^({one})(,({one}))*$")
}

/// The OpenAPI operation of `GET /v1/events`.
fn list_events_doc(_context: &Context<'_>) -> Value {
    let retention_days = account_webhooks::WebhookSettings::default().retention_days();
    let types: Vec<&str> = AccountEventType::ALL.iter().map(|k| k.as_str()).collect();
    json!({
        "summary": "The account's events, oldest first: the feed for clients that poll",
        "description": format!("Every account event (`{}`), oldest first, each exactly as the account's webhook endpoints are sent it: the same `id` and body (schema `AccountEvent`), whether or not an endpoint wants it, so a client can switch between receiving webhooks and polling without joining the two. Page with `next` (`after` the last event seen); poll `next` for the events recorded since. Events are kept {retention_days} days. Test pings are not listed. Nothing is charged.", types.join("`, `")),
        "tags": ["Webhooks"],
        "parameters": [
            {"name": "after", "in": "query", "description": "Only events recorded after this one: the id of the last event seen (`next` carries it). From the oldest kept when absent.",
             "schema": {"type": "string", "minLength": 1, "maxLength": api_contract::MAX_EVENT_ID_LENGTH}},
            {"name": "limit", "in": "query", "description": "Events per page.",
             "schema": {"type": "integer", "minimum": 1, "maximum": MOST_EVENTS_PER_PAGE, "default": DEFAULT_EVENTS_PER_PAGE}},
            {"name": "type", "in": "query", "description": "Only events of these types, separated by commas.",
             "schema": {"type": "string", "pattern": types_pattern()}}
        ],
        "responses": {
            "200": {"description": "A page of events.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AccountEventList"}}}},
            "400": error_response("`invalid_query`: `limit` is not a number in range, `after` is empty or too long, or `type` names a type there is none of."),
            "404": error_response(&format!("`event_not_found`: the account has no event with the id `after` names (events are kept {retention_days} days); omit `after` to start from the oldest kept.")),
        }
    })
}
