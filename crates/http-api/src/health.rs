//! `GET /healthz`: whether the service can serve.

use api_contract::paths;
use http::{HeaderValue, Method, StatusCode, header};
use http_serve::Response;
use serde_json::{Value, json};

use crate::api::Api;
use crate::doc::Context;
use crate::endpoint::{Access, Call, Endpoint, Part, Reads};
use crate::error::ApiError;
use crate::respond::json_response;

/// `GET /healthz`.
pub(crate) const GET_HEALTH: Endpoint = Endpoint {
    method: Method::GET,
    path: paths::HEALTH,
    operation_id: "getHealth",
    part: Part::Core,
    access: Access::Public,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(health_doc),
    run: |api, call| Box::pin(api.health(call)),
};

impl Api {
    /// `GET /healthz`: 200 `{"status": "ok"}`, or 503 `{"status": "unavailable", "message": …}` with
    /// `Retry-After` when the health check fails.
    async fn health(&self, _call: Call) -> Result<Response, ApiError> {
        let checked = match self.health_check() {
            Some(check) => check.check().await,
            None => Ok(()),
        };
        match checked {
            Ok(()) => Ok(json_response(StatusCode::OK, &json!({"status": "ok"}))),
            Err(reason) => {
                let mut response = json_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &json!({"status": "unavailable", "message": reason}),
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(5u64));
                Ok(response)
            }
        }
    }
}

/// The OpenAPI operation of `GET /healthz`.
fn health_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "Health",
        "security": [],
        "responses": {
            "200": {"description": "The server is up and its database answers.", "content": {"application/json": {"schema": {
                "type": "object", "required": ["status"], "properties": {"status": {"const": "ok"}}
            }}}},
            "503": {
                "description": "The server cannot serve requests: its database does not answer.",
                "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer", "minimum": 1}}},
                "content": {"application/json": {"schema": {
                    "type": "object", "required": ["status", "message"],
                    "properties": {"status": {"const": "unavailable"}, "message": {"type": "string"}}
                }}}
            }
        }
    })
}
