//! `POST /mcp`: the MCP tools over Streamable HTTP. The API authenticates the request as every keyed route does
//! (the same key headers, failed-authentication limit; 401 before anything is read) and hands it, its body read,
//! to the endpoint the host set ([`Api::with_mcp`]); each tool call is then one request of the API, counted
//! against the key's rate, made idempotent and billed where it is made.

use api_contract::paths;
use http::{Method, Request};
use http_serve::Response;

use crate::api::Api;
use crate::auth::presented_key;
use crate::endpoint::{Access, Call, Endpoint, Part, Reads};
use crate::error::ApiError;

/// Largest MCP message, in bytes: a tool call carries at most one API request body.
pub const MAX_MCP_BODY_BYTES: usize = api_contract::MAX_BODY_BYTES + 16 * 1024;

/// Who made an MCP request, as the API verified it: put in the request's extensions for the endpoint, so that
/// the tool calls it makes are made with the same key.
#[derive(Clone, Debug)]
pub struct McpCaller {
    /// The API key as presented (in whichever of the key headers).
    pub key: String,
    /// The API to call the tools' routes on.
    pub api: Api,
}

/// `POST /mcp`.
pub(crate) const MCP: Endpoint = Endpoint {
    method: Method::POST,
    path: paths::MCP,
    operation_id: "mcp",
    part: Part::Mcp,
    access: Access::KeyUncounted,
    reads: Reads::Bytes(MAX_MCP_BODY_BYTES),
    idempotent: false,
    doc: None,
    run: |api, call| Box::pin(api.mcp(call)),
};

impl Api {
    /// `POST /mcp`: the key verified by dispatch (not counted against its rate: the tool calls are), the body
    /// read, the endpoint's answer.
    async fn mcp(&self, call: Call) -> Result<Response, ApiError> {
        let Some(endpoint) = self.mcp_endpoint() else {
            return Err(ApiError::NotFound);
        };
        let key = presented_key(&call.head.headers)?;
        let mut head = call.head;
        head.extensions.insert(McpCaller {
            key,
            api: self.clone(),
        });
        Ok(endpoint.serve(Request::from_parts(head, call.body)).await)
    }
}
