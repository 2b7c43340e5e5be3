//! Answering a request: its route found in the table ([`crate::table`]), 404 or 405 (with `Allow`) when there is
//! none, else what its endpoint declares, then the endpoint's handler; then the `RateLimit-*` headers and the
//! request's metrics.

use bytes::Bytes;
use http::Request;
use http_serve::Response;

use crate::api::{Api, RateCell, rate_limit_headers};
use crate::endpoint::{Access, Call, Endpoint, Part, Reads};
use crate::error::ApiError;
use crate::request::{idempotency_key, require_json};
use crate::table::route;

/// The metric label of a path no route matches, so that made-up paths cannot grow the number of series.
const OTHER: &str = "other";

impl Api {
    /// Answers one request; paths outside the API are 404 `not_found`. To mount the API under a prefix, strip
    /// it first ([`crate::strip_path_prefix`]).
    pub async fn handle<B>(&self, mut request: Request<B>) -> Response
    where
        B: hyper::body::Body + Unpin,
    {
        let started = std::time::Instant::now();
        let rate = RateCell::default();
        request.extensions_mut().insert(rate.clone());
        let method = request.method().clone();
        let request_id = request
            .extensions()
            .get::<http_serve::RequestId>()
            .map(|id| id.0.clone());
        let found = route(request.uri().path()).filter(|(route, _)| self.serves(route.tag));
        let label = found.as_ref().map_or(OTHER, |(route, _)| route.path);
        let answer = match found {
            None => Err(ApiError::NotFound),
            Some((route, id)) => match route.operation(&method) {
                Some(endpoint) => self.run(endpoint, request, id).await,
                None => Err(ApiError::MethodNotAllowed {
                    allow: route.allow(),
                }),
            },
        };
        let mut response =
            answer.unwrap_or_else(|error| error.into_response_for(request_id.as_deref()));
        if let Some(status) = rate.0.get() {
            rate_limit_headers(response.headers_mut(), status);
        }
        crate::metrics::record_request(
            label,
            &method,
            response.status().as_u16(),
            started.elapsed(),
        );
        response
    }

    /// Whether the part of the API a route belongs to is set.
    fn serves(&self, part: Part) -> bool {
        match part {
            Part::Core => true,
            Part::Jobs => self.jobs().is_some(),
            Part::Watches => self.watches().is_some(),
            Part::Webhooks => self.webhooks().is_some(),
            Part::Resolve => self.resolver().is_some(),
            Part::Mcp => self.mcp_endpoint().is_some(),
        }
    }

    /// Does what `endpoint` declares before its handler runs, in the order every endpoint answers: the key
    /// (401, 429), the media type (415), the `Idempotency-Key`'s form (400), the body within its bound (413,
    /// 408); then the handler, with the [`Call`].
    async fn run<B>(
        &self,
        endpoint: &'static Endpoint,
        request: Request<B>,
        id: Option<String>,
    ) -> Result<Response, ApiError>
    where
        B: hyper::body::Body + Unpin,
    {
        let caller = match endpoint.access {
            Access::Public => None,
            Access::Key => Some(
                self.authenticate(request.headers(), request.extensions())
                    .await?,
            ),
            Access::KeyUncounted => {
                self.verify_key(request.headers(), request.extensions())
                    .await?;
                None
            }
        };
        let limit = match endpoint.reads {
            Reads::Nothing => None,
            Reads::Json(limit) => {
                require_json(request.headers())?;
                Some(limit)
            }
            Reads::Bytes(limit) => Some(limit),
        };
        let idempotency_key = if endpoint.idempotent {
            idempotency_key(request.headers())?
        } else {
            None
        };
        let (head, body) = request.into_parts();
        let body = match limit {
            Some(limit) => {
                http_serve::read_body_of(&head.headers, body, limit, self.body_timeout()).await?
            }
            None => Bytes::new(),
        };
        let call = Call {
            head,
            id,
            route: endpoint.path,
            caller,
            idempotency_key,
            body,
        };
        (endpoint.run)(self, call).await
    }
}
