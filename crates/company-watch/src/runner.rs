//! The watches' runner: refreshes claimed when due (accounts taking turns), each a live lookup charged once,
//! compared with the baseline into a change event; and the loop that runs them until stopped.

use std::sync::Arc;
use std::time::Duration;

use api_contract::{AccountEventType, CompanyRequest, FreshnessWindow, SubmittedUrl};
use company_lookup::{Caller, LookupError};
use company_model::{RecordJson, changed_members};
use credit_ledger::LedgerError;
use tracing::warn;
use watch_store::{AccountEvent, ChangeEvent, DueRefresh, Refreshed};

use crate::{WatchError, Watches, WorkDone};

/// How long a failed refresh waits before it is tried again (at most its period).
const FAILED_REFRESH_RETRY: Duration = Duration::from_hours(1);

impl Watches {
    /// Runs what is due now: the due refreshes (up to [`WatchSettings::refreshes_at_once`]), then the due
    /// deliveries ([`account_webhooks::Webhooks::deliver_once`]), and waits for them. The running service does
    /// the same in loops of their own ([`Watches::start`], [`account_webhooks::Webhooks::start`]); this is for a
    /// caller that drives the clock, such as a test.
    ///
    /// # Errors
    /// [`WatchError::Store`] when claiming fails (what was claimed before still finishes).
    ///
    /// [`WatchSettings::refreshes_at_once`]: crate::WatchSettings::refreshes_at_once
    pub async fn work_once(&self) -> Result<WorkDone, WatchError> {
        let mut done = self.refresh_due().await?;
        let sent = self.webhooks.deliver_once().await?;
        done.delivered = sent.delivered;
        done.failed = sent.failed;
        Ok(done)
    }

    /// Claims the due refreshes (accounts taking turns) and runs them.
    async fn refresh_due(&self) -> Result<WorkDone, WatchError> {
        let mut done = WorkDone::default();
        let lease = self.lookup.longest_request() + Duration::from_secs(30);
        let due = self
            .store
            .claim_due(self.clock().now(), lease, self.settings.refreshes_at_once)
            .await?;
        for queued in futures::future::join_all(due.into_iter().map(|due| self.refresh(due))).await
        {
            done.refreshed += 1;
            done.events += usize::from(queued);
        }
        Ok(done)
    }

    /// Runs the refreshes in a loop until stopped, claimed every [`WatchSettings::poll`] (sooner while work
    /// remains). Their events are sent by the webhooks' own loop ([`account_webhooks::Webhooks::start`]), so a
    /// slow refresh never holds an event back.
    ///
    /// [`WatchSettings::poll`]: crate::WatchSettings::poll
    pub fn start(self: &Arc<Self>) -> Runner {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(Arc::clone(self).refresh_loop(stopped));
        Runner { stop, task }
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
            include: api_contract::Includes::from_names(&watch.include),
            callback: None,
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
        let now = self.clock().now();
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
    /// the body for the watch's URL, and the same change as the account event `company.changed` (its `data`
    /// the watch event's members but the envelope: `watch_id`, `final_li_url`, `changes`, `record`).
    fn event(
        &self,
        due: &DueRefresh,
        record: &RecordJson,
        fetched_at: jiff::Timestamp,
    ) -> Option<ChangeEvent> {
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
        let created_at = self.clock().now();
        let event = api_contract::WebhookEvent {
            id: id.clone(),
            kind: api_contract::WebhookEventType::CompanyChanged,
            created_at,
            watch_id: due.watch.id.to_string(),
            final_li_url,
            changes,
            record: serde_json::value::RawValue::from_string(record.as_str().to_owned()).ok()?,
        };
        let body = serde_json::to_string(&event).ok()?;
        let serde_json::Value::Object(mut data) = serde_json::from_str(&body).ok()? else {
            return None;
        };
        for envelope in ["id", "type", "created_at"] {
            data.remove(envelope);
        }
        let kind = AccountEventType::CompanyChanged.as_str().to_owned();
        let account_body = api_contract::AccountEventBody {
            id: id.clone(),
            kind: kind.clone(),
            created_at,
            data: serde_json::Value::Object(data),
        };
        Some(ChangeEvent {
            body,
            account: AccountEvent {
                id,
                tenant: due.watch.tenant,
                kind,
                body: serde_json::to_string(&account_body).ok()?,
            },
        })
    }
}

/// The running refresh loop ([`Watches::start`]).
#[derive(Debug)]
pub struct Runner {
    stop: tokio::sync::watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Runner {
    /// Stops the loop after the refreshes in hand finish.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = self.task.await;
    }
}
