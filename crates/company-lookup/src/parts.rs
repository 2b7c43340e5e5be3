//! The parts of a record fetched apart from its page when a request includes them (`include`): the job count,
//! from the network's guest job search. A part is fetched after its page, under the page's deadline and through
//! the same route pool, and stored in the page's snapshot; when it cannot be read, the record comes without it
//! and its `provenance` entry says why.

use api_contract::{Include, Includes};
use company_model::{CompanyRecord, PartProvenance, Provenance, RecordJson, UnresolvedCode};
use page_scraper::{Priority, ScrapeError};
use tracing::debug;

use crate::service::LookupService;

impl LookupService {
    /// Fetches the parts of `include` into `record` (its `job_count`, `job_count_is_lower_bound` and
    /// `provenance`), giving up at `deadline`.
    pub(crate) async fn fetch_parts(
        &self,
        record: &mut CompanyRecord,
        include: Includes,
        deadline: tokio::time::Instant,
        priority: Priority,
    ) {
        if include.contains(Include::JobCount) {
            let entry = self.fetch_job_count(record, deadline, priority).await;
            record
                .provenance
                .get_or_insert_with(Provenance::default)
                .job_count = Some(entry);
        }
    }

    /// The job count of `record`'s company from the guest job search filtered by its `company_id`, set on
    /// `record`; returns how it went.
    async fn fetch_job_count(
        &self,
        record: &mut CompanyRecord,
        deadline: tokio::time::Instant,
        priority: Priority,
    ) -> PartProvenance {
        let Some(company_id) = record.company_id else {
            return PartProvenance {
                error: Some(UnresolvedCode::NotFound),
                message: Some(
                    "The page shows no company id (`company_id`), which the job search is filtered by, so there \
                     is no job count to fetch."
                        .to_owned(),
                ),
                ..PartProvenance::default()
            };
        };
        let source_url = self.fetcher.settings().domain.guest_job_search(company_id);
        let read = tokio::time::timeout_at(
            deadline,
            self.fetcher.job_count(company_id, deadline, priority),
        )
        .await;
        let fetched_at = Some(now_to_the_millisecond());
        let failed = |error: UnresolvedCode, message: String| PartProvenance {
            source_url: Some(source_url.clone()),
            fetched_at,
            error: Some(error),
            message: Some(message),
        };
        match read {
            Ok(Ok(count)) => {
                record.job_count = Some(count.count);
                record.job_count_is_lower_bound = Some(count.lower_bound);
                PartProvenance {
                    source_url: Some(source_url.clone()),
                    fetched_at,
                    ..PartProvenance::default()
                }
            }
            Ok(Err(error)) => {
                debug!(%error, company_id, "the job count was not read");
                failed(error.code(), job_count_advice(&error))
            }
            Err(_) => failed(
                UnresolvedCode::TimedOut,
                "The job search did not answer before the live time-out (the page took most of it). The record \
                 is answered without `job_count`; ask again to fetch it."
                    .to_owned(),
            ),
        }
    }
}

/// Whether a stored record carries every part of `include`: for each, a `provenance` entry that read it, or
/// whose failure will not pass by asking again (no `company_id` to search by, a search the parser does not
/// read). A part never asked for, or that failed for a reason that may pass (the network refused or walled it,
/// it timed out, it could not be fetched), is not carried: the page is fetched again with it.
pub(crate) fn carries(record: &RecordJson, include: Includes) -> bool {
    if include.is_empty() {
        return true;
    }
    let Ok(record) = record.to_record() else {
        return false;
    };
    let provenance = record.provenance.unwrap_or_default();
    include.parts().into_iter().all(|part| match part {
        Include::JobCount => provenance
            .job_count
            .as_ref()
            .is_some_and(|entry| !entry.error.is_some_and(may_pass)),
    })
}

/// Whether a fetch that failed with `error` may succeed if asked again: the network's push-back (`blocked`,
/// `authwall`), a time-out, or no way there (`fetch_failed`). The one rule for a part fetched again, a snapshot
/// kept as the answer when its re-fetch fails, and `staleIfError`.
pub(crate) fn may_pass(error: UnresolvedCode) -> bool {
    matches!(
        error,
        UnresolvedCode::Blocked
            | UnresolvedCode::Authwall
            | UnresolvedCode::TimedOut
            | UnresolvedCode::FetchFailed
    )
}

/// The `provenance.job_count` entry of a record answered from its stored snapshot because fetching it again
/// with the count failed (`error`, as the page's fetch met it).
pub(crate) fn not_fetched_again(record: &RecordJson, error: UnresolvedCode) -> RecordJson {
    let Ok(mut parsed) = record.to_record() else {
        return record.clone();
    };
    parsed
        .provenance
        .get_or_insert_with(Provenance::default)
        .job_count = Some(PartProvenance {
        error: Some(error),
        message: Some(
            "The stored snapshot has no job count, and fetching the page again with it failed; the stored record \
             is answered without `job_count`. Ask again later to fetch it."
                .to_owned(),
        ),
        ..PartProvenance::default()
    });
    RecordJson::from_record(&parsed)
}

/// The `provenance.job_count.message` of a job search that failed: what happened and what to do.
fn job_count_advice(error: &ScrapeError) -> String {
    let what_to_do = match error {
        ScrapeError::Authwall | ScrapeError::Blocked { .. } => {
            "The network is limiting access; ask again later to fetch it."
        }
        ScrapeError::Unparseable | ScrapeError::WrongPageKind { .. } => {
            "The search's layout was not recognised; report the company so the parser can learn it."
        }
        _ => "Ask again later to fetch it.",
    };
    format!(
        "The job search failed: {error}. The record is answered without `job_count`. {what_to_do}"
    )
}

/// Now, to the millisecond (as snapshots keep their times).
pub(crate) fn now_to_the_millisecond() -> jiff::Timestamp {
    jiff::Timestamp::now()
        .round(jiff::Unit::Millisecond)
        .unwrap_or_else(|_| jiff::Timestamp::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(provenance: &str) -> RecordJson {
        RecordJson::from_stored(format!(r#"{{"company_name":"Google"{provenance}}}"#))
            .expect("a record")
    }

    #[test]
    fn a_stored_record_carries_a_part_it_read_or_had_nothing_to_search_by() {
        let jobs = Includes::of(&[Include::JobCount]);
        let read = record(
            r#","job_count":2000,"provenance":{"job_count":{"source_url":"https://www.linkedin.com/jobs/search?f_C=1441"}}"#,
        );
        let banned = record(
            r#","provenance":{"job_count":{"source_url":"https://www.linkedin.com/jobs/search?f_C=1441","error":"blocked"}}"#,
        );
        let unread = record(
            r#","provenance":{"job_count":{"source_url":"https://www.linkedin.com/jobs/search?f_C=1441","error":"unparseable"}}"#,
        );
        let no_id = record(r#","provenance":{"job_count":{"error":"not_found"}}"#);
        let never_asked = record("");
        assert!(carries(&read, jobs));
        assert!(!carries(&banned, jobs), "a ban may pass: fetched again");
        assert!(carries(&unread, jobs), "asking again reads it no better");
        assert!(
            carries(&no_id, jobs),
            "nothing to search by: not fetched again"
        );
        assert!(!carries(&never_asked, jobs));
        assert!(carries(&never_asked, Includes::NONE));
    }
}
