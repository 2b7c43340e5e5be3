//! Bulk jobs as the API shows them: a job's state ([`JobInfo`]), each input position's answer ([`InputRow`]) and
//! the NDJSON line a results page holds for it. The server writes these, the Rust client reads them.

use serde::{Deserialize, Serialize};

use crate::{CompanyResult, InputMetadata, UnresolvedUrl, paths};
use company_model::{RecordJson, RecordSource, UnresolvedCode};

/// The path of job `id`'s results (NDJSON or CSV, `GET`): [`paths::JOB_RESULTS`] filled.
pub fn job_results_path(id: &str) -> String {
    paths::with_id(paths::JOB_RESULTS, id)
}

/// Where a job is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(schemars::JsonSchema)]
pub enum JobStatus {
    /// Accepted; no page leased yet.
    Queued,
    /// Pages are being looked up.
    Running,
    /// Waiting for something outside the service (see `paused_reason`); resumes by itself.
    Paused,
    /// Every page has an answer.
    Done,
    /// Cancelled by its account: nothing more is leased.
    Cancelled,
}

impl JobStatus {
    /// Every status, in life order.
    pub const ALL: [JobStatus; 5] = [
        JobStatus::Queued,
        JobStatus::Running,
        JobStatus::Paused,
        JobStatus::Done,
        JobStatus::Cancelled,
    ];

    /// The status as the API writes it: `queued`, `running`, `paused`, `done`, `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Queued => "queued",
            JobStatus::Running => "running",
            JobStatus::Paused => "paused",
            JobStatus::Done => "done",
            JobStatus::Cancelled => "cancelled",
        }
    }

    /// The status written by [`JobStatus::as_str`].
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|status| status.as_str() == text)
    }

    /// True for `done` and `cancelled`: nothing more will happen.
    pub fn is_final(self) -> bool {
        matches!(self, JobStatus::Done | JobStatus::Cancelled)
    }
}

/// A job as `GET /v1/network/company-data/jobs/{id}` answers it. Counts are of input positions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Job")]
pub struct JobInfo {
    /// The job's id (a whole number above 0, written as a string).
    pub id: String,
    /// Where it is.
    pub status: JobStatus,
    /// Why a paused job waits, e.g. `insufficient_credits`; null otherwise.
    pub paused_reason: Option<String>,
    /// Input positions.
    pub total: u64,
    /// Positions answered, resolved or not.
    pub done: u64,
    /// Positions answered with a record.
    pub resolved: u64,
    /// Positions answered without one.
    pub unresolved: u64,
    /// Credits charged so far.
    pub credits_charged: f64,
    /// The job's freshness window in seconds (0: live).
    pub max_age_seconds: f64,
    /// When it was submitted (RFC 3339, UTC).
    pub created_at: jiff::Timestamp,
    /// When its first pages were leased.
    pub started_at: Option<jiff::Timestamp>,
    /// When it became `done` or `cancelled`.
    pub finished_at: Option<jiff::Timestamp>,
    /// While running: when it should end at its pace so far.
    pub estimated_finish_at: Option<jiff::Timestamp>,
    /// The record members its answers keep (`fields` as submitted, with `final_li_url`); absent for whole
    /// records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fields: Option<Vec<String>>,
    /// The parts of each record it fetches beyond the page (`include` as submitted); absent for none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<crate::Include>,
    /// Where its end is POSTed too (`callbackUrl` as submitted); absent when none was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callback: Option<JobCallbackInfo>,
}

/// A job's callback as the API shows it: its URL and the names of the headers sent with it (their values, which
/// may be the receiver's secrets, are never shown).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "JobCallback")]
pub struct JobCallbackInfo {
    /// `callbackUrl` as submitted.
    pub url: String,
    /// The names of `callbackHeaders`, in lower case and sorted.
    #[schemars(length(max = crate::MAX_CALLBACK_HEADERS))]
    pub header_names: Vec<String>,
}

impl From<&crate::JobCallback> for JobCallbackInfo {
    fn from(callback: &crate::JobCallback) -> Self {
        Self {
            url: callback.url.clone(),
            header_names: callback.headers.keys().cloned().collect(),
        }
    }
}

/// A page of the account's jobs, as `GET /v1/network/company-data/jobs` answers it: newest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct JobList {
    /// Up to the page's `limit` jobs, newest first.
    #[schemars(length(max = crate::paging::MOST_JOBS_PER_PAGE))]
    pub jobs: Vec<JobInfo>,
    /// The next page's path (with its `before` and `limit`), or null on the last page.
    pub next: Option<String>,
}

/// How one page of a job was answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// A record.
    Found {
        /// The record as JSON.
        record: RecordJson,
        /// Fetched for this job, or a stored snapshot.
        source: RecordSource,
        /// When the page was fetched from the network.
        fetched_at: jiff::Timestamp,
    },
    /// No record.
    Unresolved {
        /// Why, as the synchronous endpoint's code.
        code: UnresolvedCode,
        /// What happened and what to do.
        message: String,
    },
}

/// One input position of a job, with its page's answer when there is one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputRow {
    /// 0-based position in the submitted list.
    pub position: u64,
    /// The URL exactly as submitted.
    pub original: String,
    /// The answer of its page; `None` while the page is not done.
    pub answer: Option<Answer>,
    /// The caller's metadata sent with this input, given back beside its answer.
    pub metadata: Option<InputMetadata>,
}

impl InputRow {
    /// The row's line of a results page (with its `\n`): the object the synchronous endpoint gives for that URL
    /// — a [`CompanyResult`] or an [`UnresolvedUrl`] — with the 0-based `position` first and, when the input
    /// carried metadata, `metadata` (the caller's object as sent) next. `None` while the row's page is not done.
    pub fn ndjson_line(&self) -> Option<Vec<u8>> {
        let object = match self.answer.as_ref()? {
            Answer::Found {
                record,
                source,
                fetched_at,
            } => serde_json::to_vec(&CompanyResult {
                original_li_url: self.original.clone(),
                record: record.clone(),
                source: *source,
                fetched_at: *fetched_at,
            }),
            Answer::Unresolved { code, message } => serde_json::to_vec(&UnresolvedUrl {
                original_li_url: self.original.clone(),
                error: *code,
                message: message.clone(),
                retry_after_seconds: None,
            }),
        }
        .ok()?;
        // `{"position":N,` then the object's members: both objects serialize with at least one member.
        let mut line = format!("{{\"position\":{},", self.position).into_bytes();
        if let Some(metadata) = &self.metadata {
            line.extend_from_slice(b"\"metadata\":");
            line.extend_from_slice(metadata.as_str().as_bytes());
            line.push(b',');
        }
        line.extend_from_slice(object.get(1..)?);
        line.push(b'\n');
        Some(line)
    }

    /// A line of a results page ([`InputRow::ndjson_line`]) read back; `None` when it is not one.
    pub fn from_ndjson_line(line: &str) -> Option<Self> {
        let mut object: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(line).ok()?;
        let position = object.remove("position")?.as_u64()?;
        let metadata = match object.remove("metadata") {
            Some(value) => Some(InputMetadata::from_stored(value.to_string())?),
            None => None,
        };
        let original = object.remove("original_li_url")?.as_str()?.to_owned();
        let answer = if let Some(code) = object.get("error").and_then(|v| v.as_str()) {
            Answer::Unresolved {
                code: UnresolvedCode::ALL
                    .into_iter()
                    .find(|c| c.as_str() == code)
                    .unwrap_or(UnresolvedCode::FetchFailed),
                message: object
                    .get("message")
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned(),
            }
        } else {
            let source = RecordSource::from_name(object.remove("source")?.as_str()?);
            let fetched_at = object.remove("fetched_at")?.as_str()?.parse().ok()?;
            let record = RecordJson::from_stored(serde_json::to_string(&object).ok()?).ok()?;
            Answer::Found {
                record,
                source,
                fetched_at,
            }
        };
        Some(InputRow {
            position,
            original,
            answer: Some(answer),
            metadata,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_back_as_written() {
        let rows = [
            InputRow {
                position: 3,
                original: "https://linkedin.com/company/acme/".into(),
                answer: Some(Answer::Found {
                    record: RecordJson::from_stored(
                        r#"{"company_name":"Acme","follower_count":5}"#.into(),
                    )
                    .expect("record"),
                    source: RecordSource::Stored,
                    fetched_at: "2026-11-24T03:00:00Z".parse().expect("time"),
                }),
                metadata: InputMetadata::from_stored(r#"{"crmId":"0012","rank":3}"#.into()),
            },
            InputRow {
                position: 4,
                original: "https://www.linkedin.com/company/gone".into(),
                answer: Some(Answer::Unresolved {
                    code: UnresolvedCode::NotFound,
                    message: "no such page".into(),
                }),
                metadata: None,
            },
        ];
        for row in rows {
            let line = row.ndjson_line().expect("answered");
            let text = String::from_utf8(line).expect("UTF-8");
            assert!(
                text.starts_with(&format!("{{\"position\":{},", row.position)),
                "{text}"
            );
            assert_eq!(InputRow::from_ndjson_line(text.trim_end()), Some(row));
        }
        let waiting = InputRow {
            position: 0,
            original: "x".into(),
            answer: None,
            metadata: None,
        };
        assert!(waiting.ndjson_line().is_none());
        assert!(InputRow::from_ndjson_line("{\"position\":1}").is_none());
    }

    #[test]
    fn statuses_round_trip_through_their_names_and_json() {
        for status in JobStatus::ALL {
            assert_eq!(JobStatus::parse(status.as_str()), Some(status));
            assert_eq!(
                serde_json::to_value(status).expect("json"),
                serde_json::Value::from(status.as_str())
            );
        }
    }
}
