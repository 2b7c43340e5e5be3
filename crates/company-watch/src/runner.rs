//! The watches' runner: refreshes claimed when due (accounts taking turns), each a live lookup charged once,
//! compared with the baseline into a change event; and the loops that run refreshes and deliveries until stopped.

use std::sync::Arc;
use std::time::Duration;

use api_contract::{CompanyRequest, FreshnessWindow, SubmittedUrl};
use company_lookup::{Caller, LookupError};
use company_model::{RecordJson, changed_members};
use credit_ledger::LedgerError;
use tracing::warn;
use watch_store::{DueRefresh, Refreshed};

use crate::delivery::Claimed;
use crate::{WatchError, Watches, WorkDone};

/// How long a failed refresh waits before it is tried again (at most its period).
const FAILED_REFRESH_RETRY: Duration = Duration::from_hours(1);

impl Watches {
    /// Runs what is due now: the due refreshes (up to [`WatchSettings::refreshes_at_once`]), then the due
    /// deliveries (up to [`WatchSettings::deliveries_at_once`] of each queue, claimed fairly), and waits for them.
    /// The running service does the same in two loops of its own ([`Watches::start`]); this is for a caller that
    /// drives the clock, such as a test.
    ///
    /// # Errors
    /// [`WatchError::Store`] when claiming fails (what was claimed before still finishes).
    ///
    /// [`WatchSettings::refreshes_at_once`]: crate::WatchSettings::refreshes_at_once
    /// [`WatchSettings::deliveries_at_once`]: crate::WatchSettings::deliveries_at_once
    pub async fn work_once(&self) -> Result<WorkDone, WatchError> {
        let mut done = self.refresh_due().await?;
        let claimed = self
            .claim_deliveries(self.settings.deliveries_at_once)
            .await?;
        let attempts =
            futures::future::join_all(claimed.into_iter().map(|c| self.deliver(c))).await;
        for delivered in attempts {
            if delivered {
                done.delivered += 1;
            } else {
                done.failed += 1;
            }
        }
        Ok(done)
    }

    /// Claims the due refreshes (accounts taking turns) and runs them.
    async fn refresh_due(&self) -> Result<WorkDone, WatchError> {
        let mut done = WorkDone::default();
        let lease = self.lookup.longest_request() + Duration::from_secs(30);
        let due = self
            .store
            .claim_due(self.clock.now(), lease, self.settings.refreshes_at_once)
            .await?;
        for queued in futures::future::join_all(due.into_iter().map(|due| self.refresh(due))).await
        {
            done.refreshed += 1;
            done.events += usize::from(queued);
        }
        Ok(done)
    }

    /// Claims up to `room` due deliveries of both queues together, fairly between accounts and one per receiver
    /// at a time ([`WatchStore::claim_endpoint_deliveries`]).
    async fn claim_deliveries(&self, room: u32) -> Result<Vec<Claimed>, WatchError> {
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

    /// Runs the watches in two loops until stopped: refreshes, claimed every [`WatchSettings::poll`] (sooner
    /// while work remains), and deliveries, claimed as places free up, so a slow refresh never holds an event
    /// back and a receiver that never answers holds one place ([`WatchSettings::deliveries_per_account`] at
    /// most for its account), not a whole batch.
    ///
    /// [`WatchSettings::poll`]: crate::WatchSettings::poll
    /// [`WatchSettings::deliveries_per_account`]: crate::WatchSettings::deliveries_per_account
    pub fn start(self: &Arc<Self>) -> Runner {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let refreshes = tokio::spawn(Arc::clone(self).refresh_loop(stopped.clone()));
        let deliveries = tokio::spawn(Arc::clone(self).delivery_loop(stopped));
        Runner {
            stop,
            tasks: vec![refreshes, deliveries],
        }
    }

    async fn refresh_loop(self: Arc<Self>, mut stopped: tokio::sync::watch::Receiver<bool>) {
        loop {
            let busy = match self.refresh_due().await {
                Ok(done) => done != WorkDone::default(),
                Err(error) => {
                    warn!(%error, "the watch runner could not claim refreshes");
                    false
                }
            };
            let pause = if busy {
                Duration::ZERO
            } else {
                self.settings.poll
            };
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                _ = stopped.changed() => return,
            }
        }
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
                Err(error) => warn!(%error, "the watch runner could not claim deliveries"),
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

    /// One claimed refresh; true when it queued an event.
    async fn refresh(&self, due: DueRefresh) -> bool {
        let watch = &due.watch;
        let request = CompanyRequest {
            urls: vec![SubmittedUrl {
                original: watch.url.as_str().to_owned(),
                page: watch.url.clone(),
                metadata: None,
            }],
            window: FreshnessWindow::LIVE,
            stale_if_error: false,
            fields: None,
        };
        let caller = Caller {
            tenant: watch.tenant,
            key_id: None,
        };
        let reference = format!("watch:{}:{}", watch.id, due.claim);
        let refreshed = match self.lookup.run_bulk(caller, &request, reference).await {
            Ok(outcome) => match (
                outcome.response.results.first(),
                outcome.response.unresolved.first(),
            ) {
                (Some(result), _) => Refreshed::Fetched {
                    event: self.event(&due, &result.record, result.fetched_at),
                    record: result.record.clone(),
                },
                (None, Some(unresolved)) => Refreshed::Failed {
                    error: unresolved.error.as_str().to_owned(),
                },
                (None, None) => Refreshed::Failed {
                    error: "fetch_failed".to_owned(),
                },
            },
            Err(LookupError::Ledger(LedgerError::InsufficientCredits { .. })) => {
                Refreshed::Failed {
                    error: "insufficient_credits".to_owned(),
                }
            }
            Err(LookupError::TooManyLiveLookups { .. }) => Refreshed::Failed {
                error: "too_many_live_lookups".to_owned(),
            },
            Err(error) => {
                warn!(%error, watch = %watch.id, "a watch's refresh failed");
                Refreshed::Failed {
                    error: "service_unavailable".to_owned(),
                }
            }
        };
        let now = self.clock.now();
        let period = Duration::from_hours(u64::from(watch.every_hours));
        let wait = match refreshed {
            Refreshed::Fetched { .. } => period,
            Refreshed::Failed { .. } => period.min(FAILED_REFRESH_RETRY),
        };
        let next = now
            .checked_add(jiff::SignedDuration::try_from(wait).unwrap_or(jiff::SignedDuration::MAX))
            .unwrap_or(jiff::Timestamp::MAX);
        let queued = matches!(&refreshed, Refreshed::Fetched { event: Some(_), .. });
        match self
            .store
            .finish_refresh(watch.id, due.claim, now, next, refreshed)
            .await
        {
            Ok(finished) => queued && finished,
            Err(error) => {
                // The claim lapses and the refresh runs again; its charge reference is paid once.
                warn!(%error, watch = %watch.id, "could not record a watch's refresh");
                false
            }
        }
    }

    /// The change event of a refresh that fetched `record`, if a watched member changed since the baseline:
    /// its id and its JSON body.
    fn event(
        &self,
        due: &DueRefresh,
        record: &RecordJson,
        fetched_at: jiff::Timestamp,
    ) -> Option<(String, String)> {
        let baseline = due.baseline.as_ref()?;
        let fields: Vec<&str> = due.watch.fields.iter().map(String::as_str).collect();
        let changes = changed_members(baseline, record, &fields, fetched_at);
        if changes.is_empty() {
            return None;
        }
        let id = format!("evt_{}_{}", due.watch.id, due.claim);
        let final_li_url = record
            .to_record()
            .ok()
            .and_then(|r| r.final_li_url)
            .unwrap_or_else(|| due.watch.url.as_str().to_owned());
        let event = api_contract::WebhookEvent {
            id: id.clone(),
            kind: api_contract::WebhookEventType::CompanyChanged,
            created_at: self.clock.now(),
            watch_id: due.watch.id.to_string(),
            final_li_url,
            changes,
            record: serde_json::value::RawValue::from_string(record.as_str().to_owned()).ok()?,
        };
        Some((id, serde_json::to_string(&event).ok()?))
    }
}

/// The running watch loops ([`Watches::start`]).
#[derive(Debug)]
pub struct Runner {
    stop: tokio::sync::watch::Sender<bool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Runner {
    /// Stops the loops after the work in hand finishes.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        for task in self.tasks {
            let _ = task.await;
        }
    }
}
