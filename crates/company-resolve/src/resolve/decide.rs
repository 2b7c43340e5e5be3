//! Deciding a query: the candidate pages fetched (or read stored) and checked against what the query expects,
//! then the answer: the best page when it stands out, else unresolved with the candidates.

use api_contract::{Candidate, Evidence, Resolution, ResolveMethod, UnresolvedReason};
use company_lookup::{LookupError, PageOutcome};
use company_model::{CompanyRecord, RecordSource, Tenant, UnresolvedCode};
use page_url::{PageKind, PageUrl};
use snapshot_cache::Snapshot;

use crate::verify::{Expect, verdict};

use super::{Found, QueryAnswer, Run};

/// A page that passed verification, with what it is worth.
pub(super) struct Verified {
    page: PageUrl,
    method: ResolveMethod,
    confidence: f64,
    source: RecordSource,
    snapshot: Snapshot,
}

impl Run<'_> {
    /// Verifies `found` and, when a page passes, the answer (which is remembered).
    pub(super) async fn verify_and_decide(
        &mut self,
        found: Vec<Found>,
        expect: &Expect<'_>,
        key: &str,
    ) -> Option<QueryAnswer> {
        let verified = self.verify(found, expect).await;
        let answer = self.decide(verified)?;
        if let QueryAnswer::Resolved(resolution, _) = &answer {
            self.remember(
                key,
                Some(&resolution.li_url),
                Some(resolution.method),
                self.resolver.settings.remember_found,
            )
            .await;
        }
        Some(answer)
    }

    /// Fetches (or reads stored) each new page of `found`, at most the per-query limit, and checks it.
    pub(super) async fn verify(&mut self, found: Vec<Found>, expect: &Expect<'_>) -> Vec<Verified> {
        let mut fresh: Vec<Found> = Vec::new();
        for candidate in found {
            if fresh.len() >= self.resolver.settings.candidates_per_query {
                self.evidence.push(Evidence {
                    step: "link".to_owned(),
                    url: Some(candidate.page.as_str().to_owned()),
                    value: None,
                    note: format!(
                        "not checked: at most {} pages are checked per query",
                        self.resolver.settings.candidates_per_query
                    ),
                });
                continue;
            }
            if self.tried.insert(candidate.page.clone()) {
                fresh.push(candidate);
            }
        }
        if fresh.is_empty() {
            return Vec::new();
        }
        let urls: Vec<PageUrl> = fresh.iter().map(|f| f.page.clone()).collect();
        let mut pages = match self
            .resolver
            .lookup
            .pages(
                Tenant::live(self.account),
                &urls,
                self.window,
                api_contract::Includes::NONE,
            )
            .await
        {
            Ok(pages) => pages,
            Err(LookupError::TooManyLiveLookups { retry_after, .. }) => {
                self.evidence.push(Evidence {
                    step: "page".to_owned(),
                    url: None,
                    value: None,
                    note: "not checked: the account's live lookups in flight are at their cap"
                        .to_owned(),
                });
                self.failures.pushed_back(Some(retry_after));
                return Vec::new();
            }
            Err(error) => {
                self.evidence.push(Evidence {
                    step: "page".to_owned(),
                    url: None,
                    value: None,
                    note: format!("not checked: {error}"),
                });
                self.failures.timed_out = true;
                return Vec::new();
            }
        };
        let mut verified: Vec<Verified> = Vec::new();
        for candidate in fresh {
            let Some(outcome) = pages.remove(&candidate.page) else {
                continue;
            };
            match outcome {
                PageOutcome::Found { snapshot, source } => {
                    // A page that redirected (`/company/1441` → `/company/google`) is its canonical page.
                    if snapshot.url != candidate.page
                        && !self.tried.insert(snapshot.url.clone())
                        && verified.iter().any(|v| v.page == snapshot.url)
                    {
                        continue;
                    }
                    let Ok(record) = snapshot.record.to_record() else {
                        continue;
                    };
                    if let Some(confidence) = self.check(&candidate, &snapshot.url, &record, expect)
                    {
                        verified.push(Verified {
                            page: snapshot.url.clone(),
                            method: candidate.method,
                            confidence,
                            source,
                            snapshot: *snapshot,
                        });
                    }
                }
                PageOutcome::Failed {
                    code,
                    message,
                    retry_after,
                } => {
                    self.evidence.push(Evidence {
                        step: "page".to_owned(),
                        url: Some(candidate.page.as_str().to_owned()),
                        value: Some(code.as_str().to_owned()),
                        note: if code == UnresolvedCode::NotFound {
                            "no such page".to_owned()
                        } else {
                            format!("not checked: {message}")
                        },
                    });
                    match code {
                        UnresolvedCode::Blocked | UnresolvedCode::Authwall => {
                            self.failures.pushed_back(retry_after);
                        }
                        UnresolvedCode::TimedOut | UnresolvedCode::FetchFailed => {
                            self.failures.timed_out = true;
                        }
                        _ => {}
                    }
                }
            }
        }
        verified
    }

    /// Checks `page` (found as `candidate` says, its record `record`) against the query ([`verdict`]), keeping
    /// the evidence and, when it fails, the page among the candidates of an unresolved answer; its confidence
    /// when it passes.
    pub(super) fn check(
        &mut self,
        candidate: &Found,
        page: &PageUrl,
        record: &CompanyRecord,
        expect: &Expect<'_>,
    ) -> Option<f64> {
        let verdict = verdict(page, record, candidate.method, expect);
        self.evidence.push(verdict.evidence);
        if verdict.passed {
            return Some(verdict.confidence);
        }
        self.rejected.push(Candidate {
            li_url: page.as_str().to_owned(),
            confidence: verdict.confidence,
            method: candidate.method,
        });
        None
    }

    /// The best of `verified`: resolved, or ambiguous when two pages of one kind are equally good; `None`
    /// when none passed.
    pub(super) fn decide(&mut self, mut verified: Vec<Verified>) -> Option<QueryAnswer> {
        if verified.is_empty() {
            return None;
        }
        // Best first; among equals a company page before a school, a school before a showcase, then as found.
        verified.sort_by(|a, b| {
            b.confidence
                .total_cmp(&a.confidence)
                .then(kind_rank(a.page.kind()).cmp(&kind_rank(b.page.kind())))
        });
        let candidates = |pages: &[Verified]| -> Vec<Candidate> {
            pages
                .iter()
                .map(|v| Candidate {
                    li_url: v.page.as_str().to_owned(),
                    confidence: v.confidence,
                    method: v.method,
                })
                .collect()
        };
        if let [first, second, ..] = verified.as_slice()
            && same(first.confidence, second.confidence)
            && first.page.kind() == second.page.kind()
        {
            let all = candidates(&verified);
            let mut answer = self.unresolved(
                UnresolvedReason::Ambiguous,
                format!(
                    "{} {} pages fit equally well ({}); pick one from `candidates`, or send a `location` or \
                     `domain` hint with the name",
                    all.iter().filter(|c| same(c.confidence, first.confidence)).count(),
                    first.page.kind().as_str(),
                    first.confidence
                ),
            );
            if let QueryAnswer::Unresolved(unresolved) = &mut answer {
                unresolved.candidates = all;
            }
            return Some(answer);
        }
        let rest = candidates(&verified[1..]);
        let best = verified.swap_remove(0);
        Some(QueryAnswer::Resolved(
            Box::new(Resolution {
                query: self.query.clone(),
                li_url: best.page.as_str().to_owned(),
                confidence: best.confidence,
                method: best.method,
                evidence: std::mem::take(&mut self.evidence),
                candidates: rest,
                source: best.source,
                record: None,
            }),
            Box::new(best.snapshot),
        ))
    }

    /// Whether a page could not be checked (then "nothing found" is not known, and not remembered).
    pub(super) fn any_failure(&self) -> bool {
        self.failures.blocked.is_some() || self.failures.timed_out
    }
}

/// Whether two confidences are the same figure (they are sums of two-decimal constants).
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn kind_rank(kind: PageKind) -> u8 {
    match kind {
        PageKind::Company => 0,
        PageKind::School => 1,
        PageKind::Showcase => 2,
    }
}
