//! `Idempotency-Key` on the POSTs that create or charge: the same key with the same request within a day
//! gets the first answer again, charged once (docs/api.md, "Idempotent retries").
//!
//! The request is validated first (a refused body is not a use of the key), then the key is claimed in the
//! [`IdempotencyStore`] and the work runs in a task of its own, so that a client that disconnects does not
//! cancel it: its retry finds the answer stored. Only successful answers are kept; after any other answer the
//! claim is dropped, so a retry runs again (nothing was charged for those).

use api_contract::headers;
use bytes::Bytes;
use company_model::Tenant;
use http::{HeaderValue, StatusCode};
use http_serve::Response;
use idempotency::{Begin, IdempotencyStore, StoredAnswer};
use std::future::Future;
use std::time::Duration;
use tracing::Instrument;

use crate::api::Api;
use crate::error::ApiError;

/// The headers a stored answer keeps.
const KEPT_HEADERS: [&str; 4] = [
    "content-type",
    headers::X_CREDITS_CHARGED,
    headers::X_CREDITS_REMAINING,
    "location",
];

/// A stored answer as a response, marked `Idempotent-Replayed: true`.
fn replay(answer: StoredAnswer) -> Response {
    let mut response = Response::new(http_serve::full(Bytes::from(answer.body)));
    *response.status_mut() = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::OK);
    let headers = response.headers_mut();
    for (name, value) in answer.headers {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            headers.insert(name, value);
        }
    }
    headers.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-store"),
    );
    headers.insert(
        api_contract::headers::IDEMPOTENT_REPLAYED,
        HeaderValue::from_static("true"),
    );
    response
}

/// What is kept of `response`: its status, the headers a replay needs, its body.
async fn stored(response: Response) -> (StoredAnswer, Response) {
    use http_body_util::BodyExt;
    let (parts, body) = response.into_parts();
    // The answers kept (POSTs that create or charge) are whole bodies in memory: collecting cannot fail.
    let bytes = body
        .collect()
        .await
        .map(http_body_util::Collected::to_bytes)
        .unwrap_or_default();
    let answer = StoredAnswer {
        status: parts.status.as_u16(),
        headers: KEPT_HEADERS
            .iter()
            .filter_map(|name| {
                let value = parts.headers.get(*name)?.to_str().ok()?;
                Some(((*name).to_owned(), value.to_owned()))
            })
            .collect(),
        body: bytes.to_vec(),
    };
    (answer, Response::from_parts(parts, http_serve::full(bytes)))
}

impl Api {
    /// Runs `work` once per `key` of `tenant` for the request `fingerprint` when the client sent a key and the
    /// API has a store; otherwise simply runs it. The key is claimed for as long as a page lookup can run
    /// ([`company_lookup::LookupService::longest_request`]); [`Api::idempotent_for`] names another time.
    ///
    /// # Errors
    /// [`ApiError::IdempotencyKeyInUse`] while the key's first request runs, [`ApiError::IdempotencyKeyReused`]
    /// for another request with the key, [`ApiError::Idempotency`] when the store fails, or `work`'s own error.
    pub(crate) async fn idempotent<F, Fut>(
        &self,
        tenant: Tenant,
        key: Option<String>,
        fingerprint: String,
        work: F,
    ) -> Result<Response, ApiError>
    where
        F: FnOnce(Api) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Response, ApiError>> + Send + 'static,
    {
        let lease = self.lookup().longest_request();
        self.idempotent_for(tenant, key, fingerprint, lease, work)
            .await
    }

    /// [`Api::idempotent`] for work that can run up to `lease` (the key's claim lasts that long, so a retry
    /// while it runs is refused rather than run twice).
    ///
    /// # Errors
    /// As [`Api::idempotent`].
    pub(crate) async fn idempotent_for<F, Fut>(
        &self,
        tenant: Tenant,
        key: Option<String>,
        fingerprint: String,
        lease: Duration,
        work: F,
    ) -> Result<Response, ApiError>
    where
        F: FnOnce(Api) -> Fut + Send + 'static,
        Fut: Future<Output = Result<Response, ApiError>> + Send + 'static,
    {
        let (Some(key), Some(store)) = (key, self.idempotency()) else {
            return work(self.clone()).await;
        };

        match store
            .begin(tenant, &key, &fingerprint, jiff::Timestamp::now(), lease)
            .await?
        {
            Begin::Done(answer) => return Ok(replay(answer)),
            Begin::Running => return Err(ApiError::IdempotencyKeyInUse),
            Begin::Mismatch => return Err(ApiError::IdempotencyKeyReused),
            Begin::Started => {}
        }
        // A new key will keep an answer: the account's quota on what it keeps is checked now (a replay above
        // keeps nothing more). Answers in flight may pass it by their size.
        if let Err(refused) = self.room_to_keep(store.as_ref(), tenant).await {
            if let Err(error) = store.abandon(tenant, &key).await {
                tracing::warn!(%error, "could not drop an idempotency claim; it lapses with its lease");
            }
            return Err(refused);
        }
        let api = self.clone();
        // A task of its own: a client that disconnects does not cancel the work, and its retry finds the answer.
        let task = tokio::spawn(
            async move {
                let result = renewing(store.as_ref(), tenant, &key, lease, work(api)).await;
                finish(store.as_ref(), tenant, &key, result).await
            }
            .instrument(tracing::Span::current()),
        );
        task.await
            .map_err(|error| ApiError::Internal(format!("the request's task failed: {error}")))?
    }
}

impl Api {
    /// `Ok` while the account's kept answers are under its quota ([`credit_ledger::Quotas::idempotency_mb`]).
    async fn room_to_keep(
        &self,
        store: &dyn IdempotencyStore,
        tenant: Tenant,
    ) -> Result<(), ApiError> {
        let quota_mb = credit_ledger::quotas_of(
            self.lookup().ledger().as_ref(),
            tenant.account,
            self.quotas(),
        )
        .await
        .map_err(|error| ApiError::Lookup(error.into()))?
        .idempotency_mb;
        if store.stored_bytes(tenant).await? >= u64::from(quota_mb) << 20 {
            return Err(ApiError::IdempotencyStorageFull { quota_mb });
        }
        Ok(())
    }
}

/// Runs `work` while renewing the key's claim every third of its lease, so the claim lapses only if this server
/// stops (then a retry may run), never because the work took longer than one lease (a retry would run it twice).
async fn renewing<T>(
    store: &dyn IdempotencyStore,
    tenant: Tenant,
    key: &str,
    lease: Duration,
    work: impl Future<Output = T>,
) -> T {
    tokio::pin!(work);
    let mut renew = tokio::time::interval((lease / 3).max(Duration::from_millis(100)));
    renew.tick().await; // the first tick is now: the claim was just made
    loop {
        tokio::select! {
            done = &mut work => return done,
            _ = renew.tick() => {
                if let Err(error) = store.renew(tenant, key, jiff::Timestamp::now(), lease).await {
                    tracing::warn!(%error, "could not renew an idempotency claim; it lapses with its lease");
                }
            }
        }
    }
}

/// Stores a successful answer under the key, or drops the claim after any other.
async fn finish(
    store: &dyn IdempotencyStore,
    tenant: Tenant,
    key: &str,
    result: Result<Response, ApiError>,
) -> Result<Response, ApiError> {
    match result {
        Ok(response) if response.status().is_success() => {
            let (answer, response) = stored(response).await;
            if let Err(error) = store.finish(tenant, key, &answer).await {
                // The answer stands; a retry will run again and may be charged again, so say so in the log.
                tracing::error!(%error, "could not store the answer of an idempotent request");
            }
            Ok(response)
        }
        other => {
            if let Err(error) = store.abandon(tenant, key).await {
                tracing::warn!(%error, "could not drop an idempotency claim; it lapses with its lease");
            }
            other
        }
    }
}
