//! `/v1/network/company-data/watches`: watches over HTTP (docs/api.md, "Watches and webhooks").

use std::sync::Arc;

use company_model::{MAX_BODY_BYTES, WatchRequest};
use company_watch::{Watches, watch_json};
use http::{Method, Request, StatusCode};
use http_serve::Response;
use watch_store::WatchId;

use crate::error::ApiError;
use crate::idempotent::idempotency_key;
use crate::jobs::query_number;
use crate::routes::{Api, bytes_response, json_response, require_json};

/// The watches collection's path; a watch is `<WATCHES_PATH>/<id>`.
pub(crate) const WATCHES_PATH: &str = "/v1/network/company-data/watches";

/// Most watches in one page of the list, and the default.
pub(crate) const MOST_WATCHES_PER_PAGE: u32 = 100;
const DEFAULT_WATCHES_PER_PAGE: u32 = 20;

/// Which watches resource a path names.
enum Resource {
    Collection,
    Watch(WatchId),
    /// A watch's place with something that cannot be a watch id in it.
    BadId(String),
}

fn resource(path: &str) -> Option<Resource> {
    let rest = path.strip_prefix(WATCHES_PATH)?;
    match rest {
        "" | "/" => Some(Resource::Collection),
        _ => {
            let id = rest.strip_prefix('/')?;
            if id.contains('/') {
                return None;
            }
            Some(id.parse().ok().filter(|n: &i64| *n > 0).map_or_else(
                || Resource::BadId(id.to_owned()),
                |n| Resource::Watch(WatchId(n)),
            ))
        }
    }
}

impl Api {
    /// Routes a request under [`WATCHES_PATH`]; `None` when the path is not a watches resource.
    pub(crate) async fn watches_route<B>(
        &self,
        watches: &Arc<Watches>,
        request: Request<B>,
    ) -> Option<Result<Response, ApiError>>
    where
        B: hyper::body::Body + Unpin,
    {
        let resource = resource(request.uri().path())?;
        let method = request.method().clone();
        Some(match (resource, method) {
            (Resource::BadId(id), _) => Err(ApiError::InvalidQuery(format!(
                "`{id}` in the path is not a watch id; send the `id` of a watch (a whole number above 0)"
            ))),
            (Resource::Collection, Method::POST) => self.create_watches(watches, request).await,
            (Resource::Collection, Method::GET | Method::HEAD) => {
                self.list_watches(watches, &request).await
            }
            (Resource::Collection, _) => Err(ApiError::MethodNotAllowed {
                allow: "GET, HEAD, POST",
            }),
            (Resource::Watch(id), Method::GET | Method::HEAD) => {
                self.one_watch(watches, &request, id, false).await
            }
            (Resource::Watch(id), Method::DELETE) => {
                self.one_watch(watches, &request, id, true).await
            }
            (Resource::Watch(_), _) => Err(ApiError::MethodNotAllowed {
                allow: "GET, HEAD, DELETE",
            }),
        })
    }

    /// `GET /watches/{id}` (200 with the watch) or `DELETE /watches/{id}` (204).
    async fn one_watch<B>(
        &self,
        watches: &Arc<Watches>,
        request: &Request<B>,
        id: WatchId,
        delete: bool,
    ) -> Result<Response, ApiError> {
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        if delete {
            watches
                .delete(caller.account, id)
                .await?
                .ok_or(ApiError::WatchNotFound)?;
            Ok(bytes_response(
                StatusCode::NO_CONTENT,
                bytes::Bytes::new(),
                "application/json",
            ))
        } else {
            let watch = watches
                .get(caller.account, id)
                .await?
                .ok_or(ApiError::WatchNotFound)?;
            Ok(json_response(StatusCode::OK, &watch_json(&watch)))
        }
    }

    /// `POST /watches`: 201 `{"watches": [...]}`, one per distinct page.
    async fn create_watches<B>(
        &self,
        watches: &Arc<Watches>,
        request: Request<B>,
    ) -> Result<Response, ApiError>
    where
        B: hyper::body::Body + Unpin,
    {
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        require_json(request.headers())?;
        let key = idempotency_key(request.headers())?;
        let body = http_serve::read_body(request, MAX_BODY_BYTES, self.body_timeout()).await?;
        let parsed =
            WatchRequest::from_json(&body, self.domain(), watches.settings().allow_private)?;
        let fingerprint = idempotency::fingerprint("POST", WATCHES_PATH, &body);
        let watches = Arc::clone(watches);
        self.idempotent(caller.account, key, fingerprint, move |_| async move {
            let created = watches.create(caller.account, &parsed).await?;
            let listed: Vec<serde_json::Value> = created.iter().map(watch_json).collect();
            Ok(json_response(
                StatusCode::CREATED,
                &serde_json::json!({ "watches": listed }),
            ))
        })
        .await
    }

    /// `GET /watches?after=<id>&limit=<n>`: `{watches: [...], next}`, by id.
    async fn list_watches<B>(
        &self,
        watches: &Arc<Watches>,
        request: &Request<B>,
    ) -> Result<Response, ApiError> {
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        let query = request.uri().query();
        let limit = query_number(query, "limit", 1..=u64::from(MOST_WATCHES_PER_PAGE))?
            .map_or(DEFAULT_WATCHES_PER_PAGE, |n| n as u32);
        let after = query_number(query, "after", 1..=i64::MAX.unsigned_abs())?
            .and_then(|n| i64::try_from(n).ok())
            .map(WatchId);
        let page = watches.list(caller.account, after, limit).await?;
        let next = (page.len() == limit as usize)
            .then(|| page.last())
            .flatten()
            .map(|last| format!("{WATCHES_PATH}?after={}&limit={limit}", last.id));
        let listed: Vec<serde_json::Value> = page.iter().map(watch_json).collect();
        Ok(json_response(
            StatusCode::OK,
            &serde_json::json!({"watches": listed, "next": next}),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_name_watches_by_positive_ids() {
        assert!(matches!(resource(WATCHES_PATH), Some(Resource::Collection)));
        assert!(matches!(
            resource(&format!("{WATCHES_PATH}/7")),
            Some(Resource::Watch(WatchId(7)))
        ));
        assert!(matches!(
            resource(&format!("{WATCHES_PATH}/0")),
            Some(Resource::BadId(_))
        ));
        assert!(resource(&format!("{WATCHES_PATH}/7/more")).is_none());
        assert!(resource("/v1/network/company-data/watchesx").is_none());
    }
}
