//! The queries and path parameters of the API's `GET` and `DELETE` routes, as types: what the server parses
//! them into and what the MCP tools that call those routes take as arguments (one type, one schema).

use serde::{Deserialize, Serialize};

/// The form of an id in a path (`/watches/{id}`, `/jobs/{id}`): a whole number above 0, at most 18 digits.
pub const ID_PATTERN: &str = "^[1-9][0-9]{0,17}$";

/// The query of `GET /v1/network/company-data/history`: the page and the range of fetches (inclusive). Every
/// other parameter is refused, so that a misspelt one is not silently ignored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[derive(schemars::JsonSchema)]
pub struct HistoryQuery {
    /// The page's URL, as the company-data endpoint takes it (required: a missing one is answered with how to
    /// send it).
    #[serde(rename = "liUrl", default, skip_serializing_if = "Option::is_none")]
    #[schemars(required, with = "String")]
    pub li_url: Option<String>,
    /// Only fetches at or after this time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub from: Option<String>,
    /// Only fetches at or before this time (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub to: Option<String>,
}

/// The query of `GET /v1/network/company-data/watches`: a page of the account's watches, by id.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[derive(schemars::JsonSchema)]
pub struct WatchListQuery {
    /// Only watches with ids above this one (the next page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1))]
    pub after: Option<String>,
    /// Watches per page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1))]
    pub limit: Option<String>,
}

/// The most characters of an event id `GET /v1/events` takes as `after` (the service's ids are far shorter).
pub const MAX_EVENT_ID_LENGTH: u32 = 200;

/// The query of `GET /v1/events`: a page of the account's events, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[derive(schemars::JsonSchema)]
pub struct EventsQuery {
    /// Only events recorded after this one: the id (`evt_…`) of the last event seen, as the previous page's
    /// `next` carries it. From the oldest kept when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(min = 1, max = MAX_EVENT_ID_LENGTH))]
    pub after: Option<String>,
    /// Events per page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1))]
    pub limit: Option<String>,
    /// Only events of these types, separated by commas (`job.finished,company.changed`).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
}

/// A watch named by its id (`/v1/network/company-data/watches/{id}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[derive(schemars::JsonSchema)]
pub struct WatchPath {
    /// The watch's id, as `create_watch` and `list_watches` give it.
    #[schemars(regex(pattern = ID_PATTERN))]
    pub id: String,
}
