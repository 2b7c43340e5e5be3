//! `POST /v1/network/company-data/resolve`: website domains and company names in, verified pages out.

use company_lookup::Caller;
use company_model::{MAX_BODY_BYTES, ResolveRequest};
use http::{Request, StatusCode};
use http_serve::Response;

use crate::api::Api;
use crate::error::ApiError;
use crate::request::{idempotency_key, require_json};
use crate::respond::{billed, json_response};

impl Api {
    /// `POST /v1/network/company-data/resolve`: auth, body, validation, resolution, billing headers.
    pub(crate) async fn resolve<B>(&self, request: Request<B>) -> Result<Response, ApiError>
    where
        B: hyper::body::Body + Unpin,
    {
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        require_json(request.headers())?;
        let key = idempotency_key(request.headers())?;
        let path = request.uri().path().to_owned();
        let body = http_serve::read_body(request, MAX_BODY_BYTES, self.body_timeout()).await?;
        let parsed = ResolveRequest::from_json(&body)?;
        let resolver = self.resolver().ok_or(ApiError::NotFound)?;
        // A resolution can outlast a page lookup by far: the key is claimed for as long as this one can run.
        let lease = resolver.longest_request(parsed.queries.len());
        let fingerprint = idempotency::fingerprint("POST", &path, &body);
        self.idempotent_for(
            caller.account,
            key,
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
