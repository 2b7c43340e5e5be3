//! Delivering events: a claimed copy of a watch's change event or of an account event, POSTed signed to its
//! receiver, and what the answer means (delivered, retried after a backoff, or given up when the window ends).

use std::time::Duration;

use company_model::Tenant;
use tracing::{debug, warn};
use watch_store::{Delivered, Delivery, EndpointDelivery};

use crate::{Webhooks, signature};

/// A delivery claimed from one of the two queues.
pub(crate) enum Claimed {
    /// A watch's change event.
    Watch(Delivery),
    /// An account event's copy for one endpoint.
    Endpoint(EndpointDelivery),
}

/// One delivery attempt's parts, whatever subscribed to the event (a watch, or an account's endpoint).
struct Outgoing<'a> {
    event_id: &'a str,
    tenant: Tenant,
    url: &'a str,
    /// Headers sent besides the server's own (a job callback's).
    headers: &'a [(String, String)],
    body: &'a str,
    /// When the event was made: the retry window counts from then.
    created_at: jiff::Timestamp,
    /// Attempts before this one.
    attempts: u32,
}

impl Webhooks {
    /// One claimed delivery, of a watch's event or of an account event to an endpoint; true when the receiver
    /// answered 2xx.
    pub(crate) async fn deliver(&self, claimed: Claimed) -> bool {
        let out = match &claimed {
            Claimed::Watch(d) => Outgoing {
                event_id: &d.event_id,
                tenant: d.tenant,
                url: &d.webhook_url,
                headers: &[],
                body: &d.body,
                created_at: d.created_at,
                attempts: d.attempts,
            },
            Claimed::Endpoint(d) => Outgoing {
                event_id: &d.event_id,
                tenant: d.tenant,
                url: &d.url,
                headers: &d.headers,
                body: &d.body,
                created_at: d.created_at,
                attempts: d.attempts,
            },
        };
        let delivered = self.attempt(out).await;
        let yes = matches!(delivered, Delivered::Yes { .. });
        let now = self.clock.now();
        let recorded = match &claimed {
            Claimed::Watch(d) => {
                self.store
                    .finish_delivery(&d.event_id, d.claim, now, delivered)
                    .await
            }
            Claimed::Endpoint(d) => {
                self.store
                    .finish_endpoint_delivery(&d.event_id, d.endpoint, d.claim, now, delivered)
                    .await
            }
        };
        if let Err(error) = recorded {
            // The claim lapses and the attempt is made again: receivers drop the duplicate by its id.
            warn!(%error, "could not record a webhook delivery");
        }
        yes
    }

    /// Sends one attempt, signed with the account's secret, and says what it did: delivered, to be retried
    /// (when), or given up (the retry window from the event's creation is over).
    async fn attempt(&self, out: Outgoing<'_>) -> Delivered {
        let outcome = match self.secret(out.tenant).await {
            Ok(secret) => self.send(&out, &secret).await,
            Err(error) => Err((
                None,
                format!("the webhook secret could not be read: {error}"),
            )),
        };
        let now = self.clock.now();
        match outcome {
            Ok(status) => Delivered::Yes { status },
            Err((status, error)) => {
                debug!(event = out.event_id, error, "a webhook delivery failed");
                let wait = self.backoff(out.attempts);
                let retry_at = now
                    .checked_add(
                        jiff::SignedDuration::try_from(wait).unwrap_or(jiff::SignedDuration::MAX),
                    )
                    .unwrap_or(jiff::Timestamp::MAX);
                let window_ends = out
                    .created_at
                    .checked_add(
                        jiff::SignedDuration::try_from(self.settings.retry_window)
                            .unwrap_or(jiff::SignedDuration::MAX),
                    )
                    .unwrap_or(jiff::Timestamp::MAX);
                if retry_at > window_ends {
                    warn!(
                        event = out.event_id,
                        url = out.url,
                        error,
                        "a webhook failed for its whole retry window; its watch or endpoint is disabled"
                    );
                    Delivered::GaveUp { status, error }
                } else {
                    Delivered::Retry {
                        status,
                        error,
                        retry_at,
                    }
                }
            }
        }
    }

    /// The wait after a failed attempt that had `attempts` failed attempts before it.
    fn backoff(&self, attempts: u32) -> Duration {
        let doubled = self
            .settings
            .first_retry
            .checked_mul(1u32.checked_shl(attempts.min(31)).unwrap_or(u32::MAX))
            .unwrap_or(Duration::MAX);
        doubled.min(self.settings.longest_retry)
    }

    /// POSTs the event: the receiver's 2xx status, or its status (if it answered) and what went wrong.
    async fn send(&self, out: &Outgoing<'_>, secret: &str) -> Result<u16, (Option<u16>, String)> {
        let url = url::Url::parse(out.url)
            .map_err(|e| (None, format!("the webhook URL is not valid: {e}")))?;
        let scheme_allowed =
            api_contract::webhook_scheme_allowed(url.scheme(), self.settings.allow_private);
        if !scheme_allowed {
            return Err((
                None,
                format!("webhooks are sent over https only, not `{}`", url.scheme()),
            ));
        }
        public_address::check_literal_host(&url, self.settings.allow_private).map_err(|address| {
            (
                None,
                format!(
                    "{address} is an address that is not public; webhooks are sent to public addresses only"
                ),
            )
        })?;
        let t = self.clock.now().as_second();
        let mut request = self.client.post(url);
        // The caller's own first; a callback's names are none of the server's (`RESERVED_CALLBACK_HEADERS`, checked
        // when the job was submitted), so each header below is sent once.
        for (name, value) in out.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        let response = request
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::USER_AGENT, "company-data-webhooks/1")
            .header(
                signature::SIGNATURE_HEADER,
                signature::sign(secret, t, out.body.as_bytes()),
            )
            .header("Company-Data-Event-Id", out.event_id)
            .body(out.body.to_owned())
            .send()
            .await
            .map_err(
                |error| match public_address::private_address_refused(&error) {
                    Some(host) => (
                        None,
                        format!("{host} resolves only to addresses that are not public"),
                    ),
                    None if error.is_timeout() => (
                        None,
                        "the receiver did not answer within the time-out".to_owned(),
                    ),
                    None => (None, format!("the receiver could not be reached: {error}")),
                },
            )?;
        let status = response.status();
        if status.is_success() {
            Ok(status.as_u16())
        } else if status.is_redirection() {
            Err((
                Some(status.as_u16()),
                format!("HTTP {status}: redirects are not followed"),
            ))
        } else {
            Err((Some(status.as_u16()), format!("HTTP {status}")))
        }
    }
}
