//! `POST /v1/network/company-data`: page URLs in, company records out (spec 2).

use company_lookup::Caller;
use company_model::{CompanyRequest, MAX_BODY_BYTES};
use http::{Request, StatusCode};
use http_serve::Response;

use crate::api::Api;
use crate::error::ApiError;
use crate::respond::{billed, json_bytes_response};

impl Api {
    /// `POST /v1/network/company-data`: auth, body, validation, lookup, billing headers.
    pub(crate) async fn company_data<B>(&self, request: Request<B>) -> Result<Response, ApiError>
    where
        B: hyper::body::Body + Unpin,
    {
        let post = self.charged_post(request, MAX_BODY_BYTES).await?;
        let parsed = CompanyRequest::from_json(&post.body, self.domain())?;
        let (caller, fingerprint) = (post.caller, post.fingerprint());
        self.idempotent(
            caller.account,
            post.key,
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
