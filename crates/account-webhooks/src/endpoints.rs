//! An account's own webhook endpoints: registering, listing and deleting them, a test `ping`, queuing the
//! account's events (a job finished, the balance ran low) for the endpoints that want them and a job's events for
//! its own callback, and the account's feed of every event, for clients that poll. Endpoints' events are sent by the same runner, with the same
//! signature, time-out, address guard, retries and 24 h give-up as a watch's events ([`crate::Webhooks::start`]).

use api_contract::{AccountEventBody, AccountEventType, EndpointRequest, JobCallback, PING_EVENT};
use company_model::Tenant;
use rand::RngCore;
use watch_store::{
    AccountEvent, Endpoint, EndpointEvent, EndpointId, FeedEvent, JobCallbackTarget, NewEndpoint,
};

use crate::{WebhookError, Webhooks, delivery_info_of};

/// Pings one endpoint may be sent at once.
pub const PING_BURST: u32 = 5;
/// After the burst, one more ping per this interval.
pub const PING_REFILL: std::time::Duration = std::time::Duration::from_secs(12);

/// The limit on pings per endpoint, counted in this process's memory.
pub(crate) fn ping_gate() -> Option<shared_limits::RateGate> {
    shared_limits::RateGate::new(
        std::sync::Arc::new(shared_limits::MemoryLimits::new()),
        shared_limits::Rate {
            per_second: 1.0 / PING_REFILL.as_secs_f64(),
            burst: PING_BURST,
        },
    )
}

impl Webhooks {
    /// Registers an endpoint for `tenant`'s events; makes the account's webhook secret (the one its watches
    /// sign with) if it has none. Nothing is sent now.
    ///
    /// # Errors
    /// [`WebhookError::TooManyEndpoints`] when the account has as many as its quota allows
    /// ([`credit_ledger::Quotas::endpoints`], [`api_contract::MAX_ENDPOINTS`] by default);
    /// [`WebhookError::Store`].
    pub async fn create_endpoint(
        &self,
        tenant: Tenant,
        request: &EndpointRequest,
    ) -> Result<Endpoint, WebhookError> {
        let quota =
            credit_ledger::quotas_of(self.ledger.as_ref(), tenant.account, &self.settings.quotas)
                .await?
                .endpoints as usize;
        self.secret(tenant).await?;
        let endpoint = NewEndpoint {
            tenant,
            url: request.url.clone(),
            events: request
                .events
                .iter()
                .map(|kind| kind.as_str().to_owned())
                .collect(),
        };
        self.store
            .create_endpoint(&endpoint, quota, self.clock.now())
            .await?
            .ok_or(WebhookError::TooManyEndpoints { max: quota })
    }

    /// The account's endpoints, by id.
    ///
    /// # Errors
    /// [`WebhookError::Store`].
    pub async fn endpoints(&self, tenant: Tenant) -> Result<Vec<Endpoint>, WebhookError> {
        Ok(self.store.endpoints(tenant).await?)
    }

    /// Deletes the account's endpoint `id` and its events; false when the account has no such endpoint.
    ///
    /// # Errors
    /// [`WebhookError::Store`].
    pub async fn delete_endpoint(
        &self,
        tenant: Tenant,
        id: EndpointId,
    ) -> Result<bool, WebhookError> {
        Ok(self.store.delete_endpoint(tenant, id).await?)
    }

    /// Queues a signed `ping` event for the account's endpoint `id`, whatever events it wants; returns the
    /// event's id, or `None` when the account has no such endpoint or it is disabled (a disabled endpoint is
    /// sent nothing). Pings are free, so each endpoint may have [`PING_BURST`] at once and then one per
    /// [`PING_REFILL`] (counted in this server's memory).
    ///
    /// # Errors
    /// [`WebhookError::TooManyPings`] past that (nothing queued);
    /// [`WebhookError::Store`].
    pub async fn ping(
        &self,
        tenant: Tenant,
        id: EndpointId,
    ) -> Result<Option<String>, WebhookError> {
        if let Some(gate) = &self.pings
            // Counted per account and endpoint: another tenant pinging this id (its 404) uses its own count.
            && let Err(refused) = gate.check(&format!("ping:{tenant}:{id}")).await
        {
            return Err(WebhookError::TooManyPings {
                retry_after: refused.retry_after,
            });
        }
        // Only an endpoint the account registered: not a job's callback, which the store keeps as one.
        if !self
            .store
            .endpoints(tenant)
            .await?
            .iter()
            .any(|e| e.id == id)
        {
            return Ok(None);
        }
        // Each ping is its own event (two in one millisecond too), so the id is random, not a time.
        let mut nonce = [0u8; 8];
        rand::rngs::OsRng.fill_bytes(&mut nonce);
        let event_id = format!("evt_ping_{id}_{}", hex::encode(nonce));
        let data = serde_json::json!({ "endpoint_id": id.to_string() });
        let queued = self
            .queue(tenant, PING_EVENT, event_id.clone(), data, To::Endpoint(id))
            .await?;
        Ok((queued > 0).then_some(event_id))
    }

    /// Queues an account event for each of the account's enabled endpoints that wants `kind`; `event_id` names
    /// what happened (the same happening queued again, by this server or another, is queued once). Returns how
    /// many endpoints it was queued for.
    ///
    /// # Errors
    /// [`WebhookError::Store`].
    pub async fn announce(
        &self,
        tenant: Tenant,
        kind: AccountEventType,
        event_id: String,
        data: serde_json::Value,
    ) -> Result<u64, WebhookError> {
        self.queue(tenant, kind.as_str(), event_id, data, To::Account)
            .await
    }

    /// Queues a job's event as [`Webhooks::announce`] does and, when the job has a callback (`callbackUrl`),
    /// for it too: the same id and body, signed with the same secret, with the callback's headers. The copies
    /// are queued together (an event is never in the feed without its callback's copy). Returns how many copies
    /// it queued.
    ///
    /// # Errors
    /// [`WebhookError::Store`].
    pub async fn announce_job(
        &self,
        tenant: Tenant,
        job: &str,
        callback: Option<&JobCallback>,
        (kind, event_id, data): (AccountEventType, String, serde_json::Value),
    ) -> Result<u64, WebhookError> {
        let to = match callback {
            None => To::Account,
            Some(callback) => To::AccountAndCallback(JobCallbackTarget {
                job: job.to_owned(),
                url: callback.url.clone(),
                headers: callback
                    .headers
                    .iter()
                    .map(|(name, value)| (name.clone(), value.clone()))
                    .collect(),
            }),
        };
        self.queue(tenant, kind.as_str(), event_id, data, to).await
    }

    /// Up to `limit` of the account's deliveries (one per event and endpoint), newest first; those to endpoint
    /// `of` only when given.
    ///
    /// # Errors
    /// [`WebhookError::Store`].
    pub async fn endpoint_events(
        &self,
        tenant: Tenant,
        of: Option<EndpointId>,
        limit: u32,
    ) -> Result<Vec<EndpointEvent>, WebhookError> {
        Ok(self.store.endpoint_events(tenant, of, limit).await?)
    }

    /// Up to `limit` of the account's events, oldest first: those recorded after the event `after` (from the
    /// oldest kept when `None`), of the types `kinds` only (any when empty); each with the id and body its
    /// endpoints are sent. `None` when the account has no event `after` (never, or no longer: events are kept
    /// for [`crate::WebhookSettings::done_event_retention`]). Pings are not in it.
    ///
    /// # Errors
    /// [`WebhookError::Store`].
    pub async fn events(
        &self,
        tenant: Tenant,
        after: Option<&str>,
        kinds: &[AccountEventType],
        limit: u32,
    ) -> Result<Option<Vec<FeedEvent>>, WebhookError> {
        let kinds: Vec<String> = kinds.iter().map(|kind| kind.as_str().to_owned()).collect();
        Ok(self
            .store
            .account_events(tenant, after, &kinds, limit)
            .await?)
    }

    async fn queue(
        &self,
        tenant: Tenant,
        kind: &str,
        event_id: String,
        data: serde_json::Value,
        to: To,
    ) -> Result<u64, WebhookError> {
        let now = self.clock.now();
        let body = AccountEventBody {
            id: event_id.clone(),
            kind: kind.to_owned(),
            created_at: now,
            data,
        };
        let event = AccountEvent {
            id: event_id,
            tenant,
            kind: kind.to_owned(),
            body: serde_json::to_string(&body).map_err(|e| WebhookError::Body(e.to_string()))?,
        };
        Ok(match to {
            To::Account => self.store.queue_event(&event, None, now).await?,
            To::Endpoint(id) => self.store.queue_event(&event, Some(id), now).await?,
            To::AccountAndCallback(callback) => {
                self.store.queue_job_event(&event, &callback, now).await?
            }
        })
    }
}

/// Who an event is queued for.
enum To {
    /// The account's feed and its endpoints that want the event's type.
    Account,
    /// That endpoint alone (a ping), not the feed.
    Endpoint(EndpointId),
    /// As [`To::Account`], and a job's callback.
    AccountAndCallback(JobCallbackTarget),
}

/// An endpoint as the API shows it ([`api_contract::EndpointInfo`]).
pub fn endpoint_info(endpoint: &Endpoint) -> api_contract::EndpointInfo {
    api_contract::EndpointInfo {
        id: endpoint.id.to_string(),
        url: endpoint.url.clone(),
        events: endpoint
            .events
            .iter()
            .filter_map(|name| AccountEventType::from_name(name))
            .collect(),
        status: if endpoint.disabled_at.is_some() {
            api_contract::EndpointStatus::Disabled
        } else {
            api_contract::EndpointStatus::Enabled
        },
        created_at: endpoint.created_at,
        last_delivery: endpoint.last_delivery.as_ref().map(delivery_info_of),
        disabled_reason: endpoint.disabled_reason.clone(),
    }
}

/// An event's delivery to an endpoint as the API shows it ([`api_contract::EndpointDeliveryInfo`]).
pub fn delivery_info(event: &EndpointEvent) -> api_contract::EndpointDeliveryInfo {
    let status = if event.delivered_at.is_some() {
        api_contract::DeliveryState::Delivered
    } else if event.next_attempt_at.is_some() {
        api_contract::DeliveryState::Pending
    } else {
        api_contract::DeliveryState::Failed
    };
    api_contract::EndpointDeliveryInfo {
        event_id: event.event_id.clone(),
        kind: event.kind.clone(),
        status,
        created_at: event.created_at,
        attempts: event.attempts,
        delivered_at: event.delivered_at,
        next_attempt_at: event.next_attempt_at,
        last_status: event.last_status,
        last_error: event.last_error.clone(),
    }
}
