//! `POST /v1/network/company-data`: page URLs in, company records out (spec 2).

use api_contract::{CompanyRequest, MAX_BODY_BYTES, paths};
use company_lookup::Caller;
use http::{Method, StatusCode};
use http_serve::Response;
use serde_json::{Value, json};

use crate::api::Api;
use crate::doc::{Context, credits_header, error_response, refused_429};
use crate::endpoint::{Access, Call, Endpoint, Part, Reads};
use crate::error::ApiError;
use crate::respond::{billed, json_bytes_response};

/// `POST /v1/network/company-data`.
pub(crate) const COMPANY_DATA: Endpoint = Endpoint {
    method: Method::POST,
    path: paths::COMPANY_DATA,
    operation_id: "getLinkedInCompanyData",
    part: Part::Core,
    access: Access::Key,
    reads: Reads::Json(MAX_BODY_BYTES),
    idempotent: true,
    doc: Some(company_data_doc),
    run: |api, call| Box::pin(api.company_data(call)),
};

impl Api {
    /// `POST /v1/network/company-data`: validation, lookup, billing headers.
    async fn company_data(&self, call: Call) -> Result<Response, ApiError> {
        let parsed = CompanyRequest::from_json(&call.body, self.domain())?;
        let (caller, fingerprint) = (call.caller()?, call.fingerprint());
        self.idempotent(
            caller.tenant,
            call.idempotency_key,
            fingerprint,
            move |api| async move { api.look_up(caller, &parsed).await },
        )
        .await
    }

    /// The company-data answer to a valid request: the lookup, and the billing headers.
    async fn look_up(&self, caller: Caller, parsed: &CompanyRequest) -> Result<Response, ApiError> {
        let outcome = self.lookup().run(caller, parsed).await?;
        // Written by copying each record's stored text, not through serde (see `CompanyDataResponse::to_json`).
        let response = json_bytes_response(StatusCode::OK, outcome.response.to_json());
        // URLs the network pushed back on: when to send them again (the latest of their routes' free times).
        let retry = outcome
            .response
            .unresolved
            .iter()
            .filter_map(|u| u.retry_after_seconds);
        Ok(billed(
            response,
            outcome.response.results.len(),
            outcome.charged,
            outcome.remaining,
            retry,
        ))
    }
}

/// The OpenAPI operation of `POST /v1/network/company-data`.
fn company_data_doc(context: &Context<'_>) -> Value {
    let body_seconds = context.body_seconds;
    json!({
        "summary": "Get company data",
        "tags": ["Company Data"],
        "requestBody": {
            "required": true,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CompanyRequest"}}}
        },
        "responses": {
            "200": {
                "description": "Records of the resolved URLs, in input order, and the unresolved ones.",
                "headers": {
                    "X-Credits-Charged": credits_header("Credits charged for this request."),
                    "X-Credits-Remaining": credits_header("The account's balance after the charge."),
                    "Retry-After": {
                        "description": "When some URLs are unresolved as `blocked` or `authwall`: seconds until \
                            the service has a route to the network free again (the largest of their \
                            `retry_after_seconds`); send those URLs again then.",
                        "schema": {"type": "integer", "minimum": 1}
                    },
                },
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/CompanyResponse"}}}
            },
            "400": error_response("Invalid request body or unsupported URL; `details` lists every problem."),
            "402": error_response("Insufficient credits for every requested company; nothing was fetched."),
            "408": error_response(&format!("The request body did not arrive within the body time-out ({body_seconds} s on this server).")),
            "413": error_response(&format!("Request body larger than {MAX_BODY_BYTES} bytes.")),
            "415": error_response("The body is not sent as `application/json`."),
            "429": {
                "description": format!("{} `too_many_live_lookups`: the account already has as many live lookups in flight as it may (`serve --account-live-lookups`); nothing was fetched or charged.", refused_429()),
                "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer", "minimum": 1}}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
            },
            "503": {
                "description": "`database_unavailable`: the database is down or restarting; `service_unavailable`: another store failed. Nothing was charged. Retry.",
                "headers": {"Retry-After": {"description": "Seconds to wait.", "schema": {"type": "integer", "minimum": 1}}},
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
            },
            "504": error_response("No URL resolved and a live lookup timed out; nothing was charged."),
        }
    })
}
