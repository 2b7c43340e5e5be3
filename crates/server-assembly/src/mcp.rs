//! The MCP tools' way into the API in this process. Each tool call becomes one request to [`Api::handle`] with
//! the API key in `Authorization: Bearer`, so it is authenticated, rate-limited, made idempotent and billed as
//! the same request over HTTP would be: [`Embedded`] with the key given to `company-data mcp --db` (stdio),
//! [`McpOverHttp`] with the key of the `/mcp` request that carried the call.

use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use http::Request;
use http_api::{Api, McpCaller, McpEndpoint};
use http_body_util::{BodyExt, Full};
use mcp_server::{ApiAnswer, ApiCall, Backend, BackendError, CompanyDataTools};

/// API calls made in process on behalf of one API key (`company-data mcp --db`).
pub struct Embedded {
    api: Api,
    key: String,
}

impl Embedded {
    /// Calls into `api` with `key`; the key is checked on each call, as over HTTP.
    pub fn new(api: Api, key: String) -> Self {
        Self { api, key }
    }
}

impl Backend for Embedded {
    async fn send(&self, call: ApiCall) -> Result<ApiAnswer, BackendError> {
        call_api(&self.api, &self.key, call).await
    }
}

/// API calls made with the key of the `/mcp` request they came in ([`McpCaller`], which the API puts in the
/// request's extensions once it has verified the key).
struct Forwarded;

impl Backend for Forwarded {
    async fn send(&self, call: ApiCall) -> Result<ApiAnswer, BackendError> {
        let Some(caller) = call.context.get::<McpCaller>().cloned() else {
            return Err(BackendError::Unreachable(
                "the tool call came without the /mcp request's verified caller".to_owned(),
            ));
        };
        call_api(&caller.api, &caller.key, call).await
    }
}

/// One request of the API.
async fn call_api(api: &Api, key: &str, call: ApiCall) -> Result<ApiAnswer, BackendError> {
    let body = match &call.body {
        Some(json) => {
            serde_json::to_vec(json).map_err(|error| BackendError::Body(error.to_string()))?
        }
        None => Vec::new(),
    };
    let mut request = Request::builder()
        .method(call.method)
        .uri(call.path_and_query)
        .header(http::header::AUTHORIZATION, format!("Bearer {key}"))
        .header(http::header::CONTENT_TYPE, "application/json");
    if let Some(idempotency_key) = call.idempotency_key {
        request = request.header(api_contract::headers::IDEMPOTENCY_KEY, idempotency_key);
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .map_err(|error| BackendError::Body(error.to_string()))?;
    let (parts, body) = api.handle(request).await.into_parts();
    let body = body
        .collect()
        .await
        .map_err(|error| BackendError::Body(error.to_string()))?
        .to_bytes();
    Ok(ApiAnswer {
        status: parts.status,
        headers: parts.headers,
        body: body.to_vec(),
    })
}

/// `/mcp`: the tools over Streamable HTTP, each call made with the key the request was verified with.
pub struct McpOverHttp(
    mcp_server::StreamableHttpService<CompanyDataTools<Forwarded>, mcp_server::NeverSessionManager>,
);

impl McpOverHttp {
    /// The endpoint, ready for [`Api::with_mcp`].
    pub fn new() -> Self {
        Self(mcp_server::streamable_http(
            CompanyDataTools::new(Forwarded),
            http_api::MAX_MCP_BODY_BYTES,
        ))
    }
}

impl Default for McpOverHttp {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for McpOverHttp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("McpOverHttp")
    }
}

impl McpEndpoint for McpOverHttp {
    fn tools(&self) -> Vec<(String, String)> {
        mcp_server::tools()
            .iter()
            .map(|tool| {
                (
                    tool.name.to_string(),
                    tool.description.as_deref().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    fn serve(
        &self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = http_serve::Response> + Send>> {
        let service = self.0.clone();
        Box::pin(async move {
            let request = request.map(Full::new);
            service
                .handle(request)
                .await
                .map(|body| body.map_err(|never| match never {}).boxed_unsync())
        })
    }
}
