//! `/v1/webhook-endpoints`: an account's webhook endpoints over HTTP, for its account events (docs/api.md,
//! "Webhooks").

use std::sync::Arc;

use account_webhooks::{Webhooks, delivery_info, endpoint_info};
use api_contract::paths::{self, WEBHOOK_ENDPOINTS};
use api_contract::{EndpointRequest, MAX_BODY_BYTES, MAX_ENDPOINTS};
use company_lookup::Caller;
use http::{Method, StatusCode};
use http_serve::Response;
use serde_json::{Value, json};
use watch_store::EndpointId;

use crate::api::Api;
use crate::doc::{Context, bad_id, delivery_terms, error_response};
use crate::endpoint::{Access, Call, Endpoint, Part, Reads};
use crate::error::ApiError;
use crate::paging::{DEFAULT_DELIVERIES_PER_PAGE, MOST_DELIVERIES_PER_PAGE};
use crate::request::{number, path_id, query};
use crate::respond::{json_response, no_content};

/// `GET /v1/webhook-endpoints`.
pub(crate) const LIST_WEBHOOK_ENDPOINTS: Endpoint = Endpoint {
    method: Method::GET,
    path: paths::WEBHOOK_ENDPOINTS,
    operation_id: "listWebhookEndpoints",
    part: Part::Webhooks,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(list_endpoints_doc),
    run: |api, call| Box::pin(api.list_endpoints(call)),
};

/// `POST /v1/webhook-endpoints`.
pub(crate) const CREATE_WEBHOOK_ENDPOINT: Endpoint = Endpoint {
    method: Method::POST,
    path: paths::WEBHOOK_ENDPOINTS,
    operation_id: "createWebhookEndpoint",
    part: Part::Webhooks,
    access: Access::Key,
    reads: Reads::Json(MAX_BODY_BYTES),
    idempotent: true,
    doc: Some(create_endpoint_doc),
    run: |api, call| Box::pin(api.create_endpoint(call)),
};

/// `DELETE /v1/webhook-endpoints/{id}`.
pub(crate) const DELETE_WEBHOOK_ENDPOINT: Endpoint = Endpoint {
    method: Method::DELETE,
    path: paths::WEBHOOK_ENDPOINT,
    operation_id: "deleteWebhookEndpoint",
    part: Part::Webhooks,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(delete_endpoint_doc),
    run: |api, call| Box::pin(api.delete_endpoint(call)),
};

/// `POST /v1/webhook-endpoints/{id}/ping`.
pub(crate) const PING_WEBHOOK_ENDPOINT: Endpoint = Endpoint {
    method: Method::POST,
    path: paths::WEBHOOK_ENDPOINT_PING,
    operation_id: "pingWebhookEndpoint",
    part: Part::Webhooks,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(ping_endpoint_doc),
    run: |api, call| Box::pin(api.ping_endpoint(call)),
};

/// `GET /v1/webhook-endpoints/{id}/deliveries`.
pub(crate) const LIST_WEBHOOK_DELIVERIES: Endpoint = Endpoint {
    method: Method::GET,
    path: paths::WEBHOOK_ENDPOINT_DELIVERIES,
    operation_id: "listWebhookDeliveries",
    part: Part::Webhooks,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(list_deliveries_doc),
    run: |api, call| Box::pin(api.list_deliveries(call)),
};

/// The query of `GET /v1/webhook-endpoints/{id}/deliveries`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DeliveriesQuery {
    limit: Option<String>,
}

impl Api {
    /// The endpoints' service (the accounts' webhooks, which also keep the event feed); its routes are 404 when
    /// it is not set.
    pub(crate) fn endpoint_service(&self) -> Result<&Arc<Webhooks>, ApiError> {
        self.webhooks().ok_or(ApiError::NotFound)
    }

    /// The service, the caller and the endpoint the path names.
    fn one_endpoint(&self, call: &Call) -> Result<(&Arc<Webhooks>, Caller, EndpointId), ApiError> {
        let webhooks = self.endpoint_service()?;
        Ok((
            webhooks,
            call.caller()?,
            EndpointId(path_id(call.id.as_deref(), "webhook endpoint")?),
        ))
    }

    /// `GET /webhook-endpoints`: `{endpoints: [...]}`, by id.
    async fn list_endpoints(&self, call: Call) -> Result<Response, ApiError> {
        let webhooks = self.endpoint_service()?;
        let caller = call.caller()?;
        let endpoints = webhooks.endpoints(caller.tenant).await?;
        Ok(json_response(
            StatusCode::OK,
            &api_contract::EndpointList {
                endpoints: endpoints.iter().map(endpoint_info).collect(),
            },
        ))
    }

    /// `POST /webhook-endpoints`: 201 with the endpoint and its `Location`.
    async fn create_endpoint(&self, call: Call) -> Result<Response, ApiError> {
        let webhooks = Arc::clone(self.endpoint_service()?);
        let parsed = EndpointRequest::from_json(&call.body, webhooks.settings().allow_private)?;
        let (caller, fingerprint) = (call.caller()?, call.fingerprint());
        self.idempotent(
            caller.tenant,
            call.idempotency_key,
            fingerprint,
            move |_| async move {
                let created = webhooks.create_endpoint(caller.tenant, &parsed).await?;
                let mut response = json_response(StatusCode::CREATED, &endpoint_info(&created));
                if let Ok(location) =
                    http::HeaderValue::from_str(&format!("{WEBHOOK_ENDPOINTS}/{}", created.id))
                {
                    response
                        .headers_mut()
                        .insert(http::header::LOCATION, location);
                }
                Ok(response)
            },
        )
        .await
    }

    /// `DELETE /webhook-endpoints/{id}`: 204.
    async fn delete_endpoint(&self, call: Call) -> Result<Response, ApiError> {
        let (webhooks, caller, id) = self.one_endpoint(&call)?;
        if webhooks.delete_endpoint(caller.tenant, id).await? {
            Ok(no_content())
        } else {
            Err(ApiError::EndpointNotFound)
        }
    }

    /// `POST /webhook-endpoints/{id}/ping`: 202 `{event_id}`, a signed `ping` queued for the endpoint.
    async fn ping_endpoint(&self, call: Call) -> Result<Response, ApiError> {
        let (webhooks, caller, id) = self.one_endpoint(&call)?;
        let event_id = webhooks
            .ping(caller.tenant, id)
            .await?
            .ok_or(ApiError::EndpointNotFound)?;
        Ok(json_response(
            StatusCode::ACCEPTED,
            &api_contract::PingAnswer { event_id },
        ))
    }

    /// `GET /webhook-endpoints/{id}/deliveries?limit=<n>`: `{deliveries: [...]}`, newest first.
    async fn list_deliveries(&self, call: Call) -> Result<Response, ApiError> {
        let (webhooks, caller, id) = self.one_endpoint(&call)?;
        let asked: DeliveriesQuery = query(call.query())?;
        let limit = number(
            "limit",
            asked.limit.as_deref(),
            1..=u64::from(MOST_DELIVERIES_PER_PAGE),
        )?
        .map_or(DEFAULT_DELIVERIES_PER_PAGE, |n| n as u32);
        let owned = webhooks
            .endpoints(caller.tenant)
            .await?
            .iter()
            .any(|endpoint| endpoint.id == id);
        if !owned {
            return Err(ApiError::EndpointNotFound);
        }
        let deliveries = webhooks
            .endpoint_events(caller.tenant, Some(id), limit)
            .await?;
        Ok(json_response(
            StatusCode::OK,
            &api_contract::DeliveryList {
                deliveries: deliveries.iter().map(delivery_info).collect(),
            },
        ))
    }
}

/// 404 of an endpoint the account does not have.
fn endpoint_not_found() -> Value {
    error_response("`endpoint_not_found`: the account has no webhook endpoint with this id.")
}

/// The OpenAPI operation of `GET /v1/webhook-endpoints`.
fn list_endpoints_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "List the account's webhook endpoints",
        "tags": ["Webhooks"],
        "responses": {
            "200": {"description": "Every endpoint of the account, by id.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WebhookEndpointList"}}}},
        }
    })
}

/// The OpenAPI operation of `POST /v1/webhook-endpoints`.
fn create_endpoint_doc(_context: &Context<'_>) -> Value {
    let (window_hours, timeout_seconds) = delivery_terms();
    json!({
        "summary": "Register a webhook endpoint for the account's events",
        "description": format!("The endpoint receives the account events it names (schema `AccountEvent`: `job.finished`, `job.paused`, `job.cancelled`, `account.balance_low`, `company.changed` from the account's watches, with the watch event's id), signed as watch events are (`Company-Data-Signature` with the account's webhook secret), retried with backoff for {window_hours} h on a non-2xx answer or a {timeout_seconds} s time-out; then the endpoint is disabled. At most {MAX_ENDPOINTS} per account. Nothing is charged."),
        "tags": ["Webhooks"],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WebhookEndpointRequest"}}}},
        "responses": {
            "201": {"description": "Registered.",
                    "headers": {"Location": {"description": "The endpoint's path.", "schema": {"type": "string"}}},
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WebhookEndpoint"}}}},
            "400": error_response("Invalid body; `details` lists every problem."),
            "408": error_response("The request body did not arrive within the body time-out."),
            "409": error_response(&format!("`too_many_endpoints`: the account has as many endpoints as its quota allows ({MAX_ENDPOINTS} unless the operator set another).")),
            "413": error_response(&format!("Request body larger than {MAX_BODY_BYTES} bytes.")),
            "415": error_response("The body is not sent as `application/json`."),
        }
    })
}

/// The OpenAPI operation of `DELETE /v1/webhook-endpoints/{id}`.
fn delete_endpoint_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "Delete a webhook endpoint: nothing more is sent to it",
        "tags": ["Webhooks"],
        "responses": {
            "204": {"description": "Deleted, with its deliveries."},
            "400": bad_id(), "404": endpoint_not_found(),
        }
    })
}

/// The OpenAPI operation of `POST /v1/webhook-endpoints/{id}/ping`.
fn ping_endpoint_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "Send the endpoint a signed test event",
        "description": "Queues a `ping` event (schema `AccountEvent`, `data.endpoint_id`) for the endpoint, whatever events it receives; it is sent within about a second and retried like any event. Follow it in the endpoint's deliveries.",
        "tags": ["Webhooks"],
        "responses": {
            "202": {"description": "Queued.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WebhookPing"}}}},
            "400": bad_id(), "404": error_response("`endpoint_not_found`: the account has no enabled webhook endpoint with this id."),
        }
    })
}

/// The OpenAPI operation of `GET /v1/webhook-endpoints/{id}/deliveries`.
fn list_deliveries_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "An endpoint's deliveries, newest first, each with its status",
        "tags": ["Webhooks"],
        "parameters": [
            {"name": "limit", "in": "query", "description": "Deliveries per page.",
             "schema": {"type": "integer", "minimum": 1, "maximum": MOST_DELIVERIES_PER_PAGE, "default": DEFAULT_DELIVERIES_PER_PAGE}}
        ],
        "responses": {
            "200": {"description": "The newest deliveries.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WebhookDeliveryList"}}}},
            "400": error_response("`invalid_query`: the id, or `limit`, is not a number in range."),
            "404": endpoint_not_found(),
        }
    })
}
