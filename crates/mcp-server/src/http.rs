//! The tools over MCP's Streamable HTTP transport, as a tower service the host mounts behind its own
//! authentication (`/mcp` on the service's listener).

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use crate::backend::Backend;
use crate::tools::CompanyDataTools;

/// The Streamable HTTP service of `tools`: stateless (no session is kept, so any server behind a load balancer
/// answers any request), plain JSON answers where the protocol allows, requests up to `max_body_bytes`. Every
/// `Host` is accepted: the host mounts it behind API-key authentication, which a DNS-rebinding page cannot
/// pass. A tool call reaches the backend with the HTTP request's extensions ([`crate::ApiCall::context`]).
pub fn streamable_http<B: Backend>(
    tools: CompanyDataTools<B>,
    max_body_bytes: usize,
) -> StreamableHttpService<CompanyDataTools<B>, NeverSessionManager> {
    let mut config = StreamableHttpServerConfig::default().disable_allowed_hosts();
    config.legacy_session_mode = false;
    config.json_response = true;
    config.max_request_body_bytes = max_body_bytes;
    StreamableHttpService::new(
        move || Ok(tools.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    )
}
