//! How a tool reaches the API: one HTTP call, made by whatever the host has (its request handler in process, or
//! an HTTP client to a server), on behalf of one API key.

use std::future::Future;

/// One call of the HTTP API, as a tool makes it.
#[derive(Clone, Debug)]
pub struct ApiCall {
    /// The method, e.g. `POST`.
    pub method: http::Method,
    /// The path and query, e.g. `/v1/network/company-data` or `/v1/account`.
    pub path_and_query: String,
    /// The JSON body, for a `POST`.
    pub body: Option<serde_json::Value>,
    /// The `Idempotency-Key` to send, when the caller gave one.
    pub idempotency_key: Option<String>,
    /// Over Streamable HTTP, the extensions of the HTTP request that carried the tool call: what the host put
    /// there for its backend (the caller's key, the API to call); empty over stdio.
    pub context: http::Extensions,
}

/// The API's answer to an [`ApiCall`].
#[derive(Clone, Debug, PartialEq)]
pub struct ApiAnswer {
    /// The HTTP status.
    pub status: http::StatusCode,
    /// The response headers (the billing headers among them).
    pub headers: http::HeaderMap,
    /// The body: JSON on every route a tool calls.
    pub body: Vec<u8>,
}

/// Why a call did not reach the API or its answer could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The server could not be reached or the connection failed (relay mode).
    #[error("the company-data server could not be reached: {0}")]
    Unreachable(String),
    /// The answer's body could not be read.
    #[error("the company-data answer could not be read: {0}")]
    Body(String),
}

/// Makes API calls on behalf of one API key: the host decides how (in process or over HTTP) and which key (the
/// one given to `company-data mcp`, or the one an HTTP client of `/mcp` authenticated with).
pub trait Backend: Send + Sync + 'static {
    /// Sends one call and returns the API's answer, whatever its status.
    ///
    /// # Errors
    /// [`BackendError`] when the API could not be asked or its answer not read.
    fn send(&self, call: ApiCall) -> impl Future<Output = Result<ApiAnswer, BackendError>> + Send;
}
