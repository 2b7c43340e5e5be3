//! `GET /healthz`: whether the service can serve.

use http::{HeaderValue, StatusCode, header};
use http_serve::Response;

use crate::api::Api;
use crate::respond::json_response;

impl Api {
    /// `GET /healthz`: 200 `{"status": "ok"}`, or 503 `{"status": "unavailable", "message": …}` with
    /// `Retry-After` when the health check fails.
    pub(crate) async fn health(&self) -> Response {
        let checked = match self.health_check() {
            Some(check) => check.check().await,
            None => Ok(()),
        };
        match checked {
            Ok(()) => json_response(StatusCode::OK, &serde_json::json!({"status": "ok"})),
            Err(reason) => {
                let mut response = json_response(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &serde_json::json!({"status": "unavailable", "message": reason}),
                );
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from(5u64));
                response
            }
        }
    }
}
