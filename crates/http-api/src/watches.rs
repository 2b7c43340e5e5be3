//! `/v1/network/company-data/watches`: watches over HTTP (docs/api.md, "Watches and webhooks").

use std::sync::Arc;

use api_contract::paths::{self, WATCHES};
use api_contract::{MAX_BODY_BYTES, WatchRequest};
use company_lookup::Caller;
use company_watch::{Watches, watch_info};
use credit_ledger::LIVE_PRICE;
use http::{Method, StatusCode};
use http_serve::Response;
use serde_json::{Value, json};
use watch_store::WatchId;

use crate::api::Api;
use crate::doc::{Context, bad_id, delivery_terms, error_response, json_content};
use crate::endpoint::{Access, Call, Endpoint, Part, Reads};
use crate::error::ApiError;
use crate::paging::{DEFAULT_WATCHES_PER_PAGE, MOST_WATCHES_PER_PAGE};
use crate::request::{number, path_id, query};
use crate::respond::{json_response, no_content};

/// `POST …/watches`.
pub(crate) const CREATE_WATCHES: Endpoint = Endpoint {
    method: Method::POST,
    path: paths::WATCHES,
    operation_id: "createCompanyWatches",
    part: Part::Watches,
    access: Access::Key,
    reads: Reads::Json(MAX_BODY_BYTES),
    idempotent: true,
    doc: Some(create_watches_doc),
    run: |api, call| Box::pin(api.create_watches(call)),
};

/// `GET …/watches`.
pub(crate) const LIST_WATCHES: Endpoint = Endpoint {
    method: Method::GET,
    path: paths::WATCHES,
    operation_id: "listCompanyWatches",
    part: Part::Watches,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(list_watches_doc),
    run: |api, call| Box::pin(api.list_watches(call)),
};

/// `GET …/watches/{id}`.
pub(crate) const GET_WATCH: Endpoint = Endpoint {
    method: Method::GET,
    path: paths::WATCH,
    operation_id: "getCompanyWatch",
    part: Part::Watches,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(get_watch_doc),
    run: |api, call| Box::pin(api.show_watch(call)),
};

/// `DELETE …/watches/{id}`.
pub(crate) const DELETE_WATCH: Endpoint = Endpoint {
    method: Method::DELETE,
    path: paths::WATCH,
    operation_id: "deleteCompanyWatch",
    part: Part::Watches,
    access: Access::Key,
    reads: Reads::Nothing,
    idempotent: false,
    doc: Some(delete_watch_doc),
    run: |api, call| Box::pin(api.delete_watch(call)),
};

impl Api {
    /// The watches; routes of a part that is not set are 404 before their handler runs.
    fn watch_service(&self) -> Result<&Arc<Watches>, ApiError> {
        self.watches().ok_or(ApiError::NotFound)
    }

    /// The watches, the caller and the watch the path names.
    fn one_watch(&self, call: &Call) -> Result<(&Arc<Watches>, Caller, WatchId), ApiError> {
        let watches = self.watch_service()?;
        Ok((
            watches,
            call.caller()?,
            WatchId(path_id(call.id.as_deref(), "watch")?),
        ))
    }

    /// `GET /watches/{id}`: 200 with the watch.
    async fn show_watch(&self, call: Call) -> Result<Response, ApiError> {
        let (watches, caller, id) = self.one_watch(&call)?;
        let watch = watches.get(caller.tenant, id).await?;
        Ok(json_response(
            StatusCode::OK,
            &watch_info(&watch.ok_or(ApiError::WatchNotFound)?),
        ))
    }

    /// `DELETE /watches/{id}`: 204.
    async fn delete_watch(&self, call: Call) -> Result<Response, ApiError> {
        let (watches, caller, id) = self.one_watch(&call)?;
        watches
            .delete(caller.tenant, id)
            .await?
            .ok_or(ApiError::WatchNotFound)?;
        Ok(no_content())
    }

    /// `POST /watches`: 201 `{"watches": [...]}`, one per distinct page.
    async fn create_watches(&self, call: Call) -> Result<Response, ApiError> {
        let watches = Arc::clone(self.watch_service()?);
        let parsed = WatchRequest::from_json(&call.body, self.domain(), watches.allow_private())?;
        let (caller, fingerprint) = (call.caller()?, call.fingerprint());
        self.idempotent(
            caller.tenant,
            call.idempotency_key,
            fingerprint,
            move |_| async move {
                let created = watches.create(caller.tenant, &parsed).await?;
                let created = api_contract::CreatedWatches {
                    watches: created.iter().map(watch_info).collect(),
                };
                Ok(json_response(StatusCode::CREATED, &created))
            },
        )
        .await
    }

    /// `GET /watches?after=<id>&limit=<n>`: `{watches: [...], next}`, by id.
    async fn list_watches(&self, call: Call) -> Result<Response, ApiError> {
        let watches = self.watch_service()?;
        let caller = call.caller()?;
        let asked: api_contract::WatchListQuery = query(call.query())?;
        let limit = number(
            "limit",
            asked.limit.as_deref(),
            1..=u64::from(MOST_WATCHES_PER_PAGE),
        )?
        .map_or(DEFAULT_WATCHES_PER_PAGE, |n| n as u32);
        let after = number("after", asked.after.as_deref(), 1..=i64::MAX.unsigned_abs())?
            .and_then(|n| i64::try_from(n).ok())
            .map(WatchId);
        let page = watches.list(caller.tenant, after, limit).await?;
        let next = (page.len() == limit as usize)
            .then(|| page.last())
            .flatten()
            .map(|last| format!("{WATCHES}?after={}&limit={limit}", last.id));
        let listed = api_contract::WatchList {
            watches: page.iter().map(watch_info).collect(),
            next,
        };
        Ok(json_response(StatusCode::OK, &listed))
    }
}

/// 404 of a watch the account does not have.
fn watch_not_found() -> Value {
    error_response("`watch_not_found`: the account has no watch with this id.")
}

/// The OpenAPI operation of `POST …/watches`.
fn create_watches_doc(_context: &Context<'_>) -> Value {
    let (window_hours, timeout_seconds) = delivery_terms();
    json!({
        "summary": "Watch pages for changes",
        "description": format!("One watch per distinct page. Each refreshes its page every `everyHours` (a live lookup, {LIVE_PRICE} credit each time it resolves), compares the record with the one it saw before over `fields`, and on a change POSTs a `company.changed` event (schema `WebhookEvent`) to `webhookUrl`, signed in the `Company-Data-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\">` with the account's webhook secret. Delivered at least once: retried with exponential backoff for {window_hours} h on a non-2xx answer or a {timeout_seconds} s time-out, then the watch is disabled. Redirects are not followed; addresses that are not public are refused."),
        "tags": ["Company Data"],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WatchRequest"}}}},
        "responses": {
            "201": {"description": "Created; nothing is fetched or charged until the first refresh.",
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CreatedWatches"}}}},
            "400": error_response("Invalid body; `details` lists every problem."),
            "408": error_response("The request body did not arrive within the body time-out."),
            "413": error_response(&format!("Request body larger than {MAX_BODY_BYTES} bytes.")),
            "409": error_response("`too_many_watches`: this request's watches would take the account past its quota of watches; none was created."),
            "415": error_response("The body is not sent as `application/json`."),
        }
    })
}

/// The OpenAPI operation of `GET …/watches`.
fn list_watches_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "List the account's watches, oldest first",
        "tags": ["Company Data"],
        "parameters": [
            {"name": "after", "in": "query", "description": "Only watches with ids above this one (the next page).",
             "schema": {"type": "integer", "minimum": 1, "maximum": i64::MAX}},
            {"name": "limit", "in": "query", "description": "Watches per page.",
             "schema": {"type": "integer", "minimum": 1, "maximum": MOST_WATCHES_PER_PAGE, "default": DEFAULT_WATCHES_PER_PAGE}}
        ],
        "responses": {
            "200": {"description": "A page of watches.", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/WatchList"}}}},
            "400": error_response("`invalid_query`: `after` or `limit` is not a number in range."),
        }
    })
}

/// The OpenAPI operation of `GET …/watches/{id}`.
fn get_watch_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "A watch, its last check and its last delivery",
        "tags": ["Company Data"],
        "responses": {
            "200": {"description": "The watch.", "content": json_content("Watch")},
            "400": bad_id(), "404": watch_not_found(),
        }
    })
}

/// The OpenAPI operation of `DELETE …/watches/{id}`.
fn delete_watch_doc(_context: &Context<'_>) -> Value {
    json!({
        "summary": "Stop watching: no more refreshes, charges or deliveries",
        "tags": ["Company Data"],
        "responses": {
            "204": {"description": "Deleted, with its undelivered events."},
            "400": bad_id(), "404": watch_not_found(),
        }
    })
}
