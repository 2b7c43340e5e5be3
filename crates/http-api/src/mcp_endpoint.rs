//! What the API hands `/mcp` to: the host's MCP transport, behind a trait so that this crate knows no MCP
//! library.

use std::fmt::Debug;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use http::Request;
use http_serve::Response;

/// What answers `/mcp` once the request is authenticated: the host's MCP transport (the `mcp-server` crate's
/// Streamable HTTP service, in the assembly).
pub trait McpEndpoint: Send + Sync + Debug {
    /// Answers one MCP request; its extensions hold the [`McpCaller`](crate::McpCaller).
    fn serve(&self, request: Request<Bytes>) -> Pin<Box<dyn Future<Output = Response> + Send>>;

    /// The tools it serves, each its name and description (what `/llms.txt` lists).
    fn tools(&self) -> Vec<(String, String)>;
}
