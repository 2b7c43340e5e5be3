//! `/v1/webhook-endpoints`: an account's webhook endpoints over HTTP, for its account events (docs/api.md,
//! "Webhooks").

use std::sync::Arc;

use company_lookup::Caller;
use company_model::paths::WEBHOOK_ENDPOINTS;
use company_model::{EndpointRequest, MAX_BODY_BYTES};
use company_watch::{Watches, delivery_info, endpoint_info};
use http::{Request, StatusCode};
use http_serve::Response;
use watch_store::EndpointId;

use crate::api::Api;
use crate::error::ApiError;
use crate::paging::{DEFAULT_DELIVERIES_PER_PAGE, MOST_DELIVERIES_PER_PAGE};
use crate::request::{number, path_id, query};
use crate::respond::{json_response, no_content};

/// The query of `GET /v1/webhook-endpoints/{id}/deliveries`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct DeliveriesQuery {
    limit: Option<String>,
}

impl Api {
    /// The endpoints' service (the watches'); its routes are 404 when it is not set.
    fn endpoint_service(&self) -> Result<&Arc<Watches>, ApiError> {
        self.watches().ok_or(ApiError::NotFound)
    }

    /// The service, the caller (key checked first) and the endpoint the path names.
    async fn one_endpoint<B>(
        &self,
        request: &Request<B>,
        id: Option<&str>,
    ) -> Result<(&Arc<Watches>, Caller, EndpointId), ApiError> {
        let watches = self.endpoint_service()?;
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        Ok((
            watches,
            caller,
            EndpointId(path_id(id, "webhook endpoint")?),
        ))
    }

    /// `GET /webhook-endpoints`: `{endpoints: [...]}`, by id.
    pub(crate) async fn list_endpoints<B>(
        &self,
        request: &Request<B>,
    ) -> Result<Response, ApiError> {
        let watches = self.endpoint_service()?;
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        let endpoints = watches.endpoints(caller.account).await?;
        Ok(json_response(
            StatusCode::OK,
            &company_model::EndpointList {
                endpoints: endpoints.iter().map(endpoint_info).collect(),
            },
        ))
    }

    /// `POST /webhook-endpoints`: 201 with the endpoint and its `Location`.
    pub(crate) async fn create_endpoint<B>(&self, request: Request<B>) -> Result<Response, ApiError>
    where
        B: hyper::body::Body + Unpin,
    {
        let watches = Arc::clone(self.endpoint_service()?);
        let post = self.charged_post(request, MAX_BODY_BYTES).await?;
        let parsed = EndpointRequest::from_json(&post.body, watches.settings().allow_private)?;
        let (caller, fingerprint) = (post.caller, post.fingerprint());
        self.idempotent(caller.account, post.key, fingerprint, move |_| async move {
            let created = watches.create_endpoint(caller.account, &parsed).await?;
            let mut response = json_response(StatusCode::CREATED, &endpoint_info(&created));
            if let Ok(location) =
                http::HeaderValue::from_str(&format!("{WEBHOOK_ENDPOINTS}/{}", created.id))
            {
                response
                    .headers_mut()
                    .insert(http::header::LOCATION, location);
            }
            Ok(response)
        })
        .await
    }

    /// `DELETE /webhook-endpoints/{id}`: 204.
    pub(crate) async fn delete_endpoint<B>(
        &self,
        request: &Request<B>,
        id: Option<&str>,
    ) -> Result<Response, ApiError> {
        let (watches, caller, id) = self.one_endpoint(request, id).await?;
        if watches.delete_endpoint(caller.account, id).await? {
            Ok(no_content())
        } else {
            Err(ApiError::EndpointNotFound)
        }
    }

    /// `POST /webhook-endpoints/{id}/ping`: 202 `{event_id}`, a signed `ping` queued for the endpoint.
    pub(crate) async fn ping_endpoint<B>(
        &self,
        request: &Request<B>,
        id: Option<&str>,
    ) -> Result<Response, ApiError> {
        let (watches, caller, id) = self.one_endpoint(request, id).await?;
        let event_id = watches
            .ping(caller.account, id)
            .await?
            .ok_or(ApiError::EndpointNotFound)?;
        Ok(json_response(
            StatusCode::ACCEPTED,
            &company_model::PingAnswer { event_id },
        ))
    }

    /// `GET /webhook-endpoints/{id}/deliveries?limit=<n>`: `{deliveries: [...]}`, newest first.
    pub(crate) async fn list_deliveries<B>(
        &self,
        request: &Request<B>,
        id: Option<&str>,
    ) -> Result<Response, ApiError> {
        let (watches, caller, id) = self.one_endpoint(request, id).await?;
        let asked: DeliveriesQuery = query(request.uri().query())?;
        let limit = number(
            "limit",
            asked.limit.as_deref(),
            1..=u64::from(MOST_DELIVERIES_PER_PAGE),
        )?
        .map_or(DEFAULT_DELIVERIES_PER_PAGE, |n| n as u32);
        let owned = watches
            .endpoints(caller.account)
            .await?
            .iter()
            .any(|endpoint| endpoint.id == id);
        if !owned {
            return Err(ApiError::EndpointNotFound);
        }
        let deliveries = watches
            .endpoint_events(caller.account, Some(id), limit)
            .await?;
        Ok(json_response(
            StatusCode::OK,
            &company_model::DeliveryList {
                deliveries: deliveries.iter().map(delivery_info).collect(),
            },
        ))
    }
}
