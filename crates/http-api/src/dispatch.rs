//! Answering a request: its route found in the table ([`crate::table`]), 404 or 405 (with `Allow`) when there is
//! none, else the operation's handler; then the `RateLimit-*` headers and the request's metrics.

use http::{Request, StatusCode};
use http_serve::Response;

use crate::api::{Api, RateCell, rate_limit_headers};
use crate::error::ApiError;
use crate::respond::bytes_response;
use crate::table::{Operation, Part, route};

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
                Some(operation) => self.run(operation, request, id.as_deref()).await,
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
            Part::Resolve => self.resolver().is_some(),
            Part::Mcp => self.mcp_endpoint().is_some(),
        }
    }

    /// The handler of each operation: the one place an operation becomes code.
    async fn run<B>(
        &self,
        operation: Operation,
        request: Request<B>,
        id: Option<&str>,
    ) -> Result<Response, ApiError>
    where
        B: hyper::body::Body + Unpin,
    {
        match operation {
            Operation::GetCompanyData => self.company_data(request).await,
            Operation::ResolveCompanyPages => self.resolve(request).await,
            Operation::GetOpenApiDocument => Ok(bytes_response(
                StatusCode::OK,
                self.openapi(),
                "application/json",
            )),
            Operation::GetHealth => Ok(self.health().await),
            Operation::GetLlmsTxt => Ok(bytes_response(
                StatusCode::OK,
                self.llms_txt(),
                "text/markdown; charset=utf-8",
            )),
            Operation::GetCompanyHistory => self.history(&request).await,
            Operation::GetAccount => self.account(&request).await,
            Operation::UpdateAccount => self.update_account(request).await,
            Operation::CreateJob => self.submit_job(request).await,
            Operation::ListJobs => self.list_jobs(&request).await,
            Operation::GetJob => self.show_job(&request, id).await,
            Operation::DeleteJob => self.delete_job(&request, id).await,
            Operation::CancelJob => self.cancel_job(&request, id).await,
            Operation::GetJobResults => self.job_results(&request, id).await,
            Operation::CreateWatches => self.create_watches(request).await,
            Operation::ListWatches => self.list_watches(&request).await,
            Operation::GetWatch => self.show_watch(&request, id).await,
            Operation::DeleteWatch => self.delete_watch(&request, id).await,
            Operation::ListWebhookEndpoints => self.list_endpoints(&request).await,
            Operation::CreateWebhookEndpoint => self.create_endpoint(request).await,
            Operation::DeleteWebhookEndpoint => self.delete_endpoint(&request, id).await,
            Operation::PingWebhookEndpoint => self.ping_endpoint(&request, id).await,
            Operation::ListWebhookDeliveries => self.list_deliveries(&request, id).await,
            Operation::Mcp => self.mcp(request).await,
        }
    }
}
