//! `/v1/network/company-data/watches`: watches over HTTP (docs/api.md, "Watches and webhooks").

use std::sync::Arc;

use company_lookup::Caller;
use company_model::paths::WATCHES;
use company_model::{MAX_BODY_BYTES, WatchRequest};
use company_watch::{Watches, watch_info};
use http::{Request, StatusCode};
use http_serve::Response;
use watch_store::WatchId;

use crate::api::Api;
use crate::error::ApiError;
use crate::paging::{DEFAULT_WATCHES_PER_PAGE, MOST_WATCHES_PER_PAGE};
use crate::request::{number, path_id, query};
use crate::respond::{json_response, no_content};

impl Api {
    /// The watches; routes of a part that is not set are 404 before their handler runs.
    fn watch_service(&self) -> Result<&Arc<Watches>, ApiError> {
        self.watches().ok_or(ApiError::NotFound)
    }

    /// The watches, the caller (key checked first) and the watch the path names.
    async fn one_watch<B>(
        &self,
        request: &Request<B>,
        id: Option<&str>,
    ) -> Result<(&Arc<Watches>, Caller, WatchId), ApiError> {
        let watches = self.watch_service()?;
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        Ok((watches, caller, WatchId(path_id(id, "watch")?)))
    }

    /// `GET /watches/{id}`: 200 with the watch.
    pub(crate) async fn show_watch<B>(
        &self,
        request: &Request<B>,
        id: Option<&str>,
    ) -> Result<Response, ApiError> {
        let (watches, caller, id) = self.one_watch(request, id).await?;
        let watch = watches.get(caller.account, id).await?;
        Ok(json_response(
            StatusCode::OK,
            &watch_info(&watch.ok_or(ApiError::WatchNotFound)?),
        ))
    }

    /// `DELETE /watches/{id}`: 204.
    pub(crate) async fn delete_watch<B>(
        &self,
        request: &Request<B>,
        id: Option<&str>,
    ) -> Result<Response, ApiError> {
        let (watches, caller, id) = self.one_watch(request, id).await?;
        watches
            .delete(caller.account, id)
            .await?
            .ok_or(ApiError::WatchNotFound)?;
        Ok(no_content())
    }

    /// `POST /watches`: 201 `{"watches": [...]}`, one per distinct page.
    pub(crate) async fn create_watches<B>(&self, request: Request<B>) -> Result<Response, ApiError>
    where
        B: hyper::body::Body + Unpin,
    {
        let watches = Arc::clone(self.watch_service()?);
        let post = self.charged_post(request, MAX_BODY_BYTES).await?;
        let parsed =
            WatchRequest::from_json(&post.body, self.domain(), watches.settings().allow_private)?;
        let (caller, fingerprint) = (post.caller, post.fingerprint());
        self.idempotent(caller.account, post.key, fingerprint, move |_| async move {
            let created = watches.create(caller.account, &parsed).await?;
            let created = company_model::CreatedWatches {
                watches: created.iter().map(watch_info).collect(),
            };
            Ok(json_response(StatusCode::CREATED, &created))
        })
        .await
    }

    /// `GET /watches?after=<id>&limit=<n>`: `{watches: [...], next}`, by id.
    pub(crate) async fn list_watches<B>(&self, request: &Request<B>) -> Result<Response, ApiError> {
        let watches = self.watch_service()?;
        let caller = self
            .authenticate(request.headers(), request.extensions())
            .await?;
        let asked: company_model::WatchListQuery = query(request.uri().query())?;
        let limit = number(
            "limit",
            asked.limit.as_deref(),
            1..=u64::from(MOST_WATCHES_PER_PAGE),
        )?
        .map_or(DEFAULT_WATCHES_PER_PAGE, |n| n as u32);
        let after = number("after", asked.after.as_deref(), 1..=i64::MAX.unsigned_abs())?
            .and_then(|n| i64::try_from(n).ok())
            .map(WatchId);
        let page = watches.list(caller.account, after, limit).await?;
        let next = (page.len() == limit as usize)
            .then(|| page.last())
            .flatten()
            .map(|last| format!("{WATCHES}?after={}&limit={limit}", last.id));
        let listed = company_model::WatchList {
            watches: page.iter().map(watch_info).collect(),
            next,
        };
        Ok(json_response(StatusCode::OK, &listed))
    }
}
