//! The delivery runner: due deliveries of both queues claimed fairly (accounts taking turns, one event in
//! flight per receiver) and sent, in a loop that claims again as places free up.

use std::sync::Arc;
use std::time::Duration;

use tracing::warn;

use crate::delivery::Claimed;
use crate::{WebhookError, Webhooks};

/// What one [`Webhooks::deliver_once`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeliveriesDone {
    /// Delivery attempts that got a 2xx.
    pub delivered: usize,
    /// Delivery attempts that did not.
    pub failed: usize,
}

impl Webhooks {
    /// Sends what is due now (up to [`WebhookSettings::deliveries_at_once`] of both queues together, claimed
    /// fairly) and waits for the attempts. The running service does the same in a loop ([`Webhooks::start`]);
    /// this is for a caller that drives the clock, such as a test.
    ///
    /// # Errors
    /// [`WebhookError::Store`] when claiming fails.
    ///
    /// [`WebhookSettings::deliveries_at_once`]: crate::WebhookSettings::deliveries_at_once
    pub async fn deliver_once(&self) -> Result<DeliveriesDone, WebhookError> {
        let claimed = self
            .claim_deliveries(self.settings.deliveries_at_once)
            .await?;
        let mut done = DeliveriesDone::default();
        for delivered in
            futures::future::join_all(claimed.into_iter().map(|c| self.deliver(c))).await
        {
            if delivered {
                done.delivered += 1;
            } else {
                done.failed += 1;
            }
        }
        Ok(done)
    }

    /// Claims up to `room` due deliveries of both queues together, fairly between accounts and one per receiver
    /// at a time ([`watch_store::WatchStore::claim_endpoint_deliveries`]).
    async fn claim_deliveries(&self, room: u32) -> Result<Vec<Claimed>, WebhookError> {
        if room == 0 {
            return Ok(Vec::new());
        }
        let lease = self.settings.delivery_timeout + Duration::from_secs(20);
        let per_account = self.settings.deliveries_per_account.max(1);
        let now = self.clock.now();
        let deliveries = self
            .store
            .claim_deliveries(now, lease, room, per_account)
            .await?;
        // The two queues share the room: together they never pass it.
        let left = room.saturating_sub(u32::try_from(deliveries.len()).unwrap_or(room));
        let to_endpoints = if left == 0 {
            Vec::new()
        } else {
            self.store
                .claim_endpoint_deliveries(now, lease, left, per_account)
                .await?
        };
        Ok(deliveries
            .into_iter()
            .map(Claimed::Watch)
            .chain(to_endpoints.into_iter().map(Claimed::Endpoint))
            .collect())
    }

    /// Runs deliveries in a loop until stopped, claimed as places free up (and every
    /// [`WebhookSettings::poll`]), so a receiver that never answers holds one place
    /// ([`WebhookSettings::deliveries_per_account`] at most for its account), not a whole batch.
    ///
    /// [`WebhookSettings::poll`]: crate::WebhookSettings::poll
    /// [`WebhookSettings::deliveries_per_account`]: crate::WebhookSettings::deliveries_per_account
    pub fn start(self: &Arc<Self>) -> DeliveryRunner {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(Arc::clone(self).delivery_loop(stopped));
        DeliveryRunner { stop, task }
    }

    async fn delivery_loop(self: Arc<Self>, mut stopped: tokio::sync::watch::Receiver<bool>) {
        let places = self.settings.deliveries_at_once.max(1);
        let mut in_flight = tokio::task::JoinSet::new();
        loop {
            let room = places.saturating_sub(u32::try_from(in_flight.len()).unwrap_or(u32::MAX));
            match self.claim_deliveries(room).await {
                Ok(claimed) => {
                    for claimed in claimed {
                        let this = Arc::clone(&self);
                        in_flight.spawn(async move { this.deliver(claimed).await });
                    }
                }
                Err(error) => warn!(%error, "the webhook runner could not claim deliveries"),
            }
            // Claim again when a delivery ends (its place is free), or at the next poll.
            tokio::select! {
                Some(_) = in_flight.join_next(), if !in_flight.is_empty() => {}
                () = tokio::time::sleep(self.settings.poll) => {}
                _ = stopped.changed() => break,
            }
        }
        // Deliveries in flight end and record what they did; the rest stay queued for the next start.
        while in_flight.join_next().await.is_some() {}
    }
}

/// The running delivery loop ([`Webhooks::start`]).
#[derive(Debug)]
pub struct DeliveryRunner {
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl DeliveryRunner {
    /// Stops the loop after the deliveries in flight finish.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}
