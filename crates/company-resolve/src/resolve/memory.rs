//! What the resolver remembers between requests: each query's answer, positive or negative, read back (and
//! verified again) before the steps run, and written when a query is decided.

use std::time::Duration;

use api_contract::{Evidence, ResolveMethod, UnresolvedReason};
use page_url::PageUrl;
use serde::{Deserialize, Serialize};

use crate::verify::Expect;

use super::{Found, QueryAnswer, Run};

/// What the resolver keeps per query between requests (positive and negative answers).
#[derive(Serialize, Deserialize)]
struct Remembered {
    /// The page, or `None` when none was found.
    li_url: Option<String>,
    method: Option<ResolveMethod>,
    at: jiff::Timestamp,
}

impl Run<'_> {
    /// A remembered answer for `key`: `None` when there is none, or when the remembered page no longer
    /// verifies (the query is resolved again from the start).
    pub(super) async fn remembered(
        &mut self,
        key: &str,
        expect: &Expect<'_>,
    ) -> Option<QueryAnswer> {
        let text = match self
            .resolver
            .snapshots
            .remembered(key, jiff::Timestamp::now())
            .await
        {
            Ok(text) => text?,
            Err(error) => {
                tracing::warn!(%error, "could not read remembered resolutions; resolving afresh");
                return None;
            }
        };
        let remembered: Remembered = serde_json::from_str(&text).ok()?;
        let Some(li_url) = remembered.li_url else {
            self.evidence.push(Evidence {
                step: "remembered".to_owned(),
                url: None,
                value: None,
                note: format!(
                    "no page was found at {}; not asked again until that answer expires",
                    remembered.at
                ),
            });
            return Some(self.unresolved(
                UnresolvedReason::NoPageFound,
                format!(
                    "No company page was found for this query at {} (remembered for {} hours). Check the query, \
                     or send the page URL to POST /v1/network/company-data if you know it.",
                    remembered.at,
                    self.resolver.settings.remember_not_found.as_secs() / 3600
                ),
            ));
        };
        let page = PageUrl::from_canonical(&li_url).ok()?;
        self.evidence.push(Evidence {
            step: "remembered".to_owned(),
            url: Some(li_url),
            value: None,
            note: format!(
                "resolved to this page at {}; verified again below",
                remembered.at
            ),
        });
        let found = vec![Found {
            page,
            method: remembered.method.unwrap_or(ResolveMethod::StoredDomain),
        }];
        let verified = self.verify(found, expect).await;
        match self.decide(verified) {
            Some(answer @ QueryAnswer::Resolved(..)) => Some(answer),
            _ => None,
        }
    }

    /// The answer when no page passed: the failure that kept pages from being checked, else `no_page_found`
    /// (remembered).
    pub(super) async fn nothing_found(&mut self, key: &str, message: String) -> QueryAnswer {
        if let Some(retry) = self.failures.blocked {
            let mut answer = self.unresolved(
                UnresolvedReason::Blocked,
                format!(
                    "The network refused the candidate pages' fetches, so the query could not be verified; retry \
                     after {} seconds.",
                    shared_limits::wait_seconds(retry)
                ),
            );
            if let QueryAnswer::Unresolved(unresolved) = &mut answer {
                unresolved.retry_after_seconds = Some(shared_limits::wait_seconds(retry));
            }
            return answer;
        }
        if self.failures.timed_out {
            return self.unresolved(
                UnresolvedReason::TimedOut,
                "The candidate pages could not be fetched within the live time-out, so the query could not be \
                 verified; retry, or send a freshness window (maxAgeHours) to accept stored pages."
                    .to_owned(),
            );
        }
        self.remember(key, None, None, self.resolver.settings.remember_not_found)
            .await;
        self.unresolved(UnresolvedReason::NoPageFound, message)
    }

    pub(super) async fn remember(
        &self,
        key: &str,
        li_url: Option<&str>,
        method: Option<ResolveMethod>,
        lifetime: Duration,
    ) {
        let now = jiff::Timestamp::now();
        let remembered = Remembered {
            li_url: li_url.map(str::to_owned),
            method,
            at: now,
        };
        let expires = jiff::SignedDuration::try_from(lifetime)
            .ok()
            .and_then(|d| now.checked_add(d).ok())
            .unwrap_or(now);
        let Ok(text) = serde_json::to_string(&remembered) else {
            return;
        };
        if let Err(error) = self.resolver.snapshots.remember(key, &text, expires).await {
            tracing::warn!(%error, "could not remember a resolution");
        }
    }
}
