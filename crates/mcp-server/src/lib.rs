//! The company-data API for LLM agents, as Model Context Protocol tools.
//!
//! Each tool is one call of the HTTP API — the same route, body, key, rate limit, idempotency and billing — made
//! through a [`Backend`] the host provides: in process (the service's own request handler, `company-data mcp
//! --db`) or over HTTP to a running server (`company-data mcp --server URL --key KEY`). No rule of the API is
//! restated here: a tool's input schema is the JSON Schema of the API's own body type (the one the OpenAPI
//! document publishes), its prices are `credit-ledger`'s, and what the API refuses comes back as a tool error
//! carrying the API's `error` code, message and fix.
//!
//! [`CompanyDataTools`] is an `rmcp` server handler; serve it on any of `rmcp`'s transports:
//!
//! ```no_run
//! # async fn run(backend: impl mcp_server::Backend) -> Result<(), Box<dyn std::error::Error>> {
//! use rmcp::ServiceExt;
//! let running = mcp_server::CompanyDataTools::new(backend)
//!     .serve(rmcp::transport::stdio())
//!     .await?;
//! running.waiting().await?;
//! # Ok(()) }
//! ```
//!
//! Not here: keys, billing, page lookups (the API's crates do them), and the HTTP server (the host mounts it).
#![deny(missing_docs)]

mod backend;
mod http;
mod tools;

pub use backend::{ApiAnswer, ApiCall, Backend, BackendError};
pub use http::streamable_http;
pub use rmcp::transport::streamable_http_server::StreamableHttpService;
pub use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
pub use tools::{CompanyDataTools, IDEMPOTENCY_META, KeyRefused, TOOLS, ToolSpec, tools};
