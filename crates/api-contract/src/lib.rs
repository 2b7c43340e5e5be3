//! The wire contract of the company-data HTTP API: every request body as one type (its JSON Schema derived from
//! the type, and its validation read from that schema, naming every problem at once), every answer and error body, the
//! bounds of each (`MAX_URLS`, `MAX_BODY_BYTES`, …), and the names of the wire, each written once: the API's
//! [`paths`] and its [`headers`]. The server, the MCP tools, the Rust client and the dashboard all read them
//! from here.
//!
//! Plain data and rules, no I/O. The records inside the answers are the domain model's (`company-model`, below
//! this crate). Not here: how pages are fetched, prices, storage, HTTP serving.
//!
//! ```
//! use api_contract::{CompanyRequest, FreshnessWindow};
//! use page_url::NetworkDomain;
//!
//! let body = br#"{"liUrls": ["https://uk.linkedin.com/company/audiense/"], "maxAgeHours": 24}"#;
//! let request = CompanyRequest::from_json(body, &NetworkDomain::default()).expect("valid");
//! assert_eq!(request.urls[0].page.as_str(), "https://www.linkedin.com/company/audiense");
//! assert_eq!(request.window, FreshnessWindow::from_seconds(86_400.0).expect("in range"));
//! ```
#![deny(missing_docs)]

mod account;
mod account_events;
mod api;
mod fields;
mod history;
mod include;
mod job_request;
mod jobs;
pub mod paging;
mod problems;
mod queries;
mod request;
mod resolve;
pub mod schema;
mod search;
mod validation;
mod watch_request;
mod webhook_url;
mod wire;

pub use wire::{headers, paths};

pub use account::{AccountUpdate, MAX_LOW_BALANCE_THRESHOLD, MAX_SETTINGS_BYTES};
pub use account_events::{
    AccountEventBody, AccountEventType, DeliveryList, DeliveryState, EndpointBody,
    EndpointDeliveryInfo, EndpointInfo, EndpointList, EndpointRequest, EndpointStatus, EventList,
    MAX_ENDPOINTS, PING_EVENT, PingAnswer,
};
pub use api::{CompanyDataResponse, CompanyResult, ErrorBody, Problem, UnresolvedUrl};
/// What a search body and answer are made of, from the domain model: its ranges, its orders, its rows.
pub use company_model::{CompanyRow, GROWTH_DAYS, Range, SearchSort};
pub use fields::{
    IDENTITY_MEMBERS, InputMetadata, MAX_FIELD_NAMES, MAX_METADATA_MEMBERS,
    MAX_METADATA_NAME_CHARS, MAX_METADATA_TEXT_CHARS, RESULT_MEMBERS, RecordFields, UnknownField,
};
pub use history::HistoryResponse;
pub use include::{Include, Includes};
pub use job_request::{
    JobBody, JobCallback, JobInput, MAX_CALLBACK_HEADER_NAME_LEN, MAX_CALLBACK_HEADER_VALUE_LEN,
    MAX_CALLBACK_HEADERS, RESERVED_CALLBACK_HEADERS,
};
pub use jobs::{Answer, InputRow, JobCallbackInfo, JobInfo, JobList, JobStatus, job_results_path};
pub use problems::{InvalidRequest, MAX_PROBLEMS, json_object};
pub use queries::{
    EventsQuery, HistoryQuery, ID_PATTERN, MAX_EVENT_ID_LENGTH, WatchListQuery, WatchPath,
};
pub use request::{
    CompanyRequest, FreshnessWindow, MAX_AGE_HOURS, MAX_AGE_SECONDS, MAX_BODY_BYTES,
    MAX_COPIES_PER_PAGE, MAX_JOB_BODY_BYTES, MAX_JOB_URLS, MAX_URLS, RequestBody, SubmittedUrl,
};
pub use resolve::{
    Candidate, DEFAULT_RESOLVE_WINDOW, Evidence, MAX_DOMAIN_LEN, MAX_NAME_LEN, MAX_QUERIES,
    Resolution, ResolveBody, ResolveMethod, ResolveQuery, ResolveRequest, ResolveResponse,
    UnresolvedQuery, UnresolvedReason,
};
pub use search::{
    CURSOR_PATTERN, DEFAULT_SEARCH_ROWS, MAX_CURSOR_LEN, MAX_FILTER_VALUE_LEN, MAX_FILTER_VALUES,
    MAX_SEARCH_ROWS, MAX_SEARCH_TEXT_LEN, SearchBody, SearchRequest, SearchResponse,
    SearchScopeName, SpecialtiesMatch, search_cursor,
};
pub use watch_request::{
    CreatedWatches, DeliveryInfo, WATCH_EVERY_HOURS, WatchBody, WatchInfo, WatchList, WatchRequest,
    WatchStatus, WebhookEvent, WebhookEventType,
};
pub use webhook_url::{MAX_WEBHOOK_URL_LEN, webhook_scheme_allowed, webhook_url_pattern};
