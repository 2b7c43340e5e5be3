//! `POST /v1/network/company-data/resolve`: website domains and company names in, verified pages out.

use company_lookup::Caller;
use company_model::{MAX_BODY_BYTES, ResolveRequest};
use http::{Request, StatusCode};
use http_serve::Response;

use crate::api::Api;
use crate::error::ApiError;
use crate::respond::{billed, json_response};

impl Api {
    /// `POST /v1/network/company-data/resolve`: auth, body, validation, resolution, billing headers.
    pub(crate) async fn resolve<B>(&self, request: Request<B>) -> Result<Response, ApiError>
    where
        B: hyper::body::Body + Unpin,
    {
        let post = self.charged_post(request, MAX_BODY_BYTES).await?;
        let parsed = ResolveRequest::from_json(&post.body)?;
        let resolver = self.resolver().ok_or(ApiError::NotFound)?;
        // A resolution can outlast a page lookup by far: the key is claimed for as long as this one can run.
        let lease = resolver.longest_request(parsed.queries.len());
        let (caller, fingerprint) = (post.caller, post.fingerprint());
        self.idempotent_for(
            caller.account,
            post.key,
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
