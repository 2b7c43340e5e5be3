//! The company-data HTTP API as a library: what the server binary serves, and what another Rust service can
//! mount beside its own routes.
//!
//! [`Api::handle`] answers one request:
//! - `POST /v1/network/company-data`: the API key from one of the four headers of spec 5 ([`presented_key`]),
//!   checked by an [`Authenticator`] (normally [`api_keys::ApiKeys`]) and the per-key request rate; a JSON body
//!   of at most [`api_contract::MAX_BODY_BYTES`], validated by [`api_contract::CompanyRequest::from_json`];
//!   then [`company_lookup::LookupService::run`], with the charge in `X-Credits-Charged` and
//!   `X-Credits-Remaining`;
//! - `GET /v1/account`: the caller's account, balance, credits held and usage this month
//!   ([`credit_ledger::AccountSummary`]), free;
//! - `GET /openapi.json`: the OpenAPI 3.1 document of the API as configured ([`openapi_document`]);
//! - `GET /healthz`: whether the service can serve: 200, or 503 when its [`HealthCheck`] fails (the database
//!   is down).
//!
//! Every failure is an [`ApiError`], and [`ApiError::into_response`] is the one place where failures become
//! HTTP statuses and `{error, message, status_code, request_id}` bodies (the id that `http-serve` gave the
//! request). Key verification is limited per client address: the connection's peer, or the trusted proxy's
//! header ([`ApiSettings::client_address_header`]). Serving connections is `http-serve`'s job; the
//! dashboard is another crate.
//!
//! ```no_run
//! # async fn run(lookup: std::sync::Arc<company_lookup::LookupService>, keys: std::sync::Arc<api_keys::ApiKeys>)
//! # -> std::io::Result<()> {
//! use http_api::{Api, ApiSettings};
//! let api = Api::new(lookup, keys, page_url::NetworkDomain::default(), ApiSettings::default());
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
//! let handler = move |request| {
//!     let api = api.clone();
//!     async move { api.handle(request).await }
//! };
//! http_serve::serve(listener, Default::default(), handler, std::future::pending()).await
//! # }
//! ```
#![deny(missing_docs)]

// Modules, each importing only those above it: the table, responses, auth and metrics import nothing of the
// crate; `dispatch` is the only one that knows every operation's handler.
mod account;
mod api;
mod auth;
mod company_data;
mod discovery;
mod dispatch;
mod doc;
mod endpoint;
mod endpoints;
mod error;
mod events;
mod health;
mod history;
mod idempotent;
mod jobs;
mod llms;
mod mcp;
mod mcp_endpoint;
mod metrics;
mod openapi;
mod paging;
mod request;
mod resolve;
mod respond;
mod search;
mod table;
mod watches;

pub use api::{Api, ApiSettings, HealthCheck};
pub use auth::{Authenticator, CredentialsError, presented_key};
pub use error::ApiError;
pub use mcp::{MAX_MCP_BODY_BYTES, McpCaller};
pub use mcp_endpoint::McpEndpoint;
pub use openapi::openapi_document;
pub use request::strip_path_prefix;
/// How many requests each API key may make: `per_second` on average, `burst` at once (GCRA).
pub use shared_limits::Rate as KeyRate;
