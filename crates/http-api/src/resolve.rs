//! `POST /v1/network/company-data/resolve`: website domains and company names in, verified pages out.

use api_contract::{DEFAULT_RESOLVE_WINDOW, MAX_BODY_BYTES, ResolveRequest, paths};
use company_lookup::Caller;
use company_resolve::MIN_CONFIDENCE;
use credit_ledger::{LIVE_PRICE, STORED_PRICE};
use http::{Method, StatusCode};
use http_serve::Response;
use serde_json::{Value, json};

use crate::api::Api;
use crate::doc::{Context, credits_header, error_response};
use crate::endpoint::{Access, Call, Endpoint, Part, Reads};
use crate::error::ApiError;
use crate::respond::{billed, json_response};

/// `POST /v1/network/company-data/resolve`.
pub(crate) const RESOLVE: Endpoint = Endpoint {
    method: Method::POST,
    path: paths::RESOLVE,
    operation_id: "resolveCompanyPages",
    part: Part::Resolve,
    access: Access::Key,
    reads: Reads::Json(MAX_BODY_BYTES),
    idempotent: true,
    doc: Some(resolve_doc),
    run: |api, call| Box::pin(api.resolve(call)),
};

impl Api {
    /// `POST /v1/network/company-data/resolve`: validation, resolution, billing headers.
    async fn resolve(&self, call: Call) -> Result<Response, ApiError> {
        let parsed = ResolveRequest::from_json(&call.body)?;
        let resolver = self.resolver().ok_or(ApiError::NotFound)?;
        // A resolution can outlast a page lookup by far: the key is claimed for as long as this one can run.
        let lease = resolver.longest_request(parsed.queries.len());
        let (caller, fingerprint) = (call.caller()?, call.fingerprint());
        self.idempotent_for(
            caller.tenant,
            call.idempotency_key,
            fingerprint,
            lease,
            move |api| async move { api.resolved(caller, &parsed).await },
        )
        .await
    }

    async fn resolved(
        &self,
        caller: Caller,
        parsed: &ResolveRequest,
    ) -> Result<Response, ApiError> {
        let outcome = self
            .resolver()
            .ok_or(ApiError::NotFound)?
            .resolve(caller, parsed)
            .await?;
        let response = json_response(StatusCode::OK, &outcome.response);
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

/// The OpenAPI operation of `POST /v1/network/company-data/resolve`.
fn resolve_doc(context: &Context<'_>) -> Value {
    let body_seconds = context.body_seconds;
    json!({
        "summary": "Resolve website domains and company names to company pages",
        "description": format!(
            "Each query is a website `domain` (or a URL on it) or a company `name` (with optional `location` \
             and `domain` hints). A domain is resolved from the stored pages whose website is on it, then the \
             links on the company's own home page (`<a href>`, `rel=\"me\"`, JSON-LD `sameAs`), then the pages \
             named after it; a name from the stored pages of that name and the pages named after it. Every page \
             is verified by its own website (or name) before it is returned, with `confidence` at least \
             {MIN_CONFIDENCE}; each step is listed in `evidence`. A resolved query costs what its page's record \
             costs ({LIVE_PRICE} credit verified live with `maxAgeHours: 0`, {STORED_PRICE} credit with a \
             window above 0, the default here being {default_hours} hours); `\"enrich\": true` adds the record \
             at no extra cost; unresolved queries cost nothing.",
            default_hours = DEFAULT_RESOLVE_WINDOW.seconds() / 3600.0
        ),
        "tags": ["Company Data"],
        "requestBody": {
            "required": true,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ResolveRequest"}}}
        },
        "responses": {
            "200": {
                "description": "One result per resolved query and one entry per unresolved query, in query order.",
                "headers": {
                    "X-Credits-Charged": credits_header("Credits charged for this request."),
                    "X-Credits-Remaining": credits_header("The account's balance after the charge."),
                    "Retry-After": {
                        "description": "When some queries are unresolved as `blocked`: seconds until the network \
                            may be asked again (the largest of their `retry_after_seconds`).",
                        "schema": {"type": "integer", "minimum": 1}
                    },
                },
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ResolveResponse"}}}
            },
            "400": error_response("Invalid request body; `details` lists every problem."),
            "402": error_response("Insufficient credits to pay for every query; nothing was done, or (rarely, when the balance was spent meanwhile) nothing was charged."),
            "403": error_response("`not_in_test_mode`: a test-mode key (`cdk_test_…`) cannot resolve domains and names, which needs the network; nothing was done."),
            "408": error_response(&format!("The request body did not arrive within the body time-out ({body_seconds} s on this server).")),
            "413": error_response(&format!("Request body larger than {MAX_BODY_BYTES} bytes.")),
            "415": error_response("The body is not sent as `application/json`."),
        }
    })
}
