//! The domain model of the company-data service: the company record (spec 2.3) and the request, response and
//! error bodies of `POST /v1/network/company-data` (spec 2.1, 2.2, 2.4).
//!
//! Plain data with serde, no I/O: the scraper fills [`CompanyRecord`], the snapshot cache stores it as
//! [`RecordJson`] text, the server wraps that text in a [`CompanyResult`] without parsing it again. Request validation lives here too ([`CompanyRequest::from_json`]), so that
//! an embedder that takes requests some other way gets the same rules and the same error texts.
//!
//! The wire's names are here as well, each once: the API's [`paths`] and its [`headers`].
//!
//! Not here: how pages are fetched or parsed, prices, storage, HTTP.
//!
//! ```
//! use company_model::{CompanyRequest, FreshnessWindow};
//! use page_url::NetworkDomain;
//!
//! let body = br#"{"liUrls": ["https://uk.linkedin.com/company/audiense/"], "maxAgeHours": 24}"#;
//! let request = CompanyRequest::from_json(body, &NetworkDomain::default()).expect("valid");
//! assert_eq!(request.urls[0].page.as_str(), "https://www.linkedin.com/company/audiense");
//! assert_eq!(request.window, FreshnessWindow::from_seconds(86_400.0).expect("in range"));
//! ```
#![deny(missing_docs)]

mod account_events;
mod api;
mod fields;
mod history;
mod jobs;
mod names;
mod problems;
mod queries;
mod record;
mod record_json;
mod request;
mod resolve;
mod watch_request;
mod wire;

pub use wire::{headers, paths};

pub use account_events::{
    AccountEventBody, AccountEventType, DeliveryList, DeliveryState, EndpointBody,
    EndpointDeliveryInfo, EndpointInfo, EndpointList, EndpointRequest, EndpointStatus,
    MAX_ENDPOINTS, PING_EVENT, PingAnswer,
};
pub use api::{
    CompanyDataResponse, CompanyResult, ErrorBody, Problem, RecordSource, UnresolvedCode,
    UnresolvedUrl,
};
pub use fields::{
    IDENTITY_MEMBERS, InputMetadata, MAX_METADATA_MEMBERS, MAX_METADATA_NAME_CHARS,
    MAX_METADATA_TEXT_CHARS, RESULT_MEMBERS, RecordFields, UnknownField,
};
pub use history::{
    CHANGE_FIELDS, CompanyHistory, FieldChange, HistoryPoint, HistoryResponse, WATCH_FIELDS,
    change_fields_text, changed_members,
};
pub use jobs::{Answer, InputRow, JobInfo, JobList, JobStatus, job_results_path};
pub use names::{LEGAL_SUFFIXES, name_key, name_slugs};
pub use problems::{InvalidRequest, json_object};
pub use queries::{HistoryQuery, ID_PATTERN, WatchListQuery, WatchPath};
pub use record::{
    Address, CompanyRecord, Employee, FundingInfo, FundingRound, Location, OpenMembers, PageCard,
    PostAuthor, Product, Update,
};
pub use record_json::{NotARecord, RECORD_FORMAT, RecordJson};
#[cfg(feature = "schema")]
pub use request::job_input_schema;
pub use request::{
    CompanyRequest, FreshnessWindow, MAX_AGE_HOURS, MAX_AGE_SECONDS, MAX_BODY_BYTES,
    MAX_COPIES_PER_PAGE, MAX_JOB_BODY_BYTES, MAX_JOB_URLS, MAX_URLS, RequestBody, SubmittedUrl,
};
pub use resolve::{
    Candidate, DEFAULT_RESOLVE_WINDOW, Evidence, MAX_DOMAIN_LEN, MAX_NAME_LEN, MAX_QUERIES,
    Resolution, ResolveBody, ResolveMethod, ResolveQuery, ResolveRequest, ResolveResponse,
    UnresolvedQuery, UnresolvedReason,
};
pub use watch_request::{
    CreatedWatches, DeliveryInfo, MAX_WEBHOOK_URL_LEN, WATCH_EVERY_HOURS, WatchBody, WatchInfo,
    WatchList, WatchRequest, WatchStatus, WebhookEvent, WebhookEventType, webhook_scheme_allowed,
    webhook_url_pattern,
};

/// The id of a customer account: the owner of API keys and of a credit balance.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct AccountId(pub i64);

impl AccountId {
    /// The account's test twin: the account a test-mode key (`cdk_test_…`) acts for. Its id is the live
    /// account's negated, so every store keyed by account (jobs, watches, webhook endpoints, idempotency
    /// records) keeps test data apart from live data without a column of its own, and the ledger can tell a
    /// test account by its id alone.
    #[must_use]
    pub fn test_twin(self) -> Self {
        Self(-self.0.abs())
    }

    /// Whether this is a test twin ([`AccountId::test_twin`]).
    pub fn is_test(self) -> bool {
        self.0 < 0
    }

    /// The live account: itself, or the account a test twin belongs to.
    #[must_use]
    pub fn live(self) -> Self {
        Self(self.0.abs())
    }
}

impl std::fmt::Display for AccountId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}
