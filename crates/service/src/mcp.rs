//! The MCP tools' way into the API in this process: each tool call becomes one request to [`App::handle`], with
//! the API key in `Authorization: Bearer`, so it is authenticated, rate-limited, made idempotent and billed as
//! the same request over HTTP would be.

use std::sync::Arc;

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use mcp_server::{ApiAnswer, ApiCall, Backend, BackendError};

use crate::App;

/// API calls made in process on behalf of one API key (`company-data mcp --db`).
pub struct InProcess {
    app: Arc<App>,
    key: String,
}

impl InProcess {
    /// Calls into `app` with `key`; the key is checked on each call, as over HTTP.
    pub fn new(app: Arc<App>, key: String) -> Self {
        Self { app, key }
    }
}

impl Backend for InProcess {
    async fn send(&self, call: ApiCall) -> Result<ApiAnswer, BackendError> {
        let body = match &call.body {
            Some(json) => {
                serde_json::to_vec(json).map_err(|error| BackendError::Body(error.to_string()))?
            }
            None => Vec::new(),
        };
        let mut request = Request::builder()
            .method(call.method)
            .uri(call.path_and_query)
            .header(http::header::AUTHORIZATION, format!("Bearer {}", self.key))
            .header(http::header::CONTENT_TYPE, "application/json");
        if let Some(key) = call.idempotency_key {
            request = request.header("idempotency-key", key);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|error| BackendError::Body(error.to_string()))?;
        let (parts, body) = self.app.handle(request).await.into_parts();
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
}
