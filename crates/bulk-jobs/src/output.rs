//! A job's results as the API, the dashboard and `company-data enrich` write them: one NDJSON line or one CSV row
//! per input position.
//!
//! An NDJSON line is [`company_model::InputRow::ndjson_line`]: the object the synchronous endpoint gives for that
//! URL, with the input's 0-based `position` first. A CSV row has [`csv_columns`]: the position, the URL as submitted,
//! `status` (`resolved` or `unresolved`), `error` and `message` for an unresolved one, `source` and `fetched_at`,
//! then the record's scalar members ([`CompanyRecord::FLAT_COLUMNS`]).

use std::sync::Arc;

use bytes::Bytes;
use company_model::{AccountId, CompanyRecord};
use futures::Stream;

use crate::{BulkError, BulkJobs, JobId};

use crate::{Answer, InputRow};

/// The columns of [`csv_row`], in order.
pub fn csv_columns() -> Vec<&'static str> {
    let mut columns = vec![
        "position",
        "original_li_url",
        "status",
        "error",
        "message",
        "source",
        "fetched_at",
    ];
    columns.extend(CompanyRecord::FLAT_COLUMNS);
    columns
}

/// The CSV row of an answered input, in [`csv_columns`] order; `None` while its page is not done.
pub fn csv_row(row: &InputRow) -> Option<Vec<String>> {
    let mut cells = vec![row.position.to_string(), row.original.clone()];
    match row.answer.as_ref()? {
        Answer::Found {
            record,
            source,
            fetched_at,
        } => {
            cells.extend([
                "resolved".to_owned(),
                String::new(),
                String::new(),
                source.as_str().to_owned(),
                fetched_at.to_string(),
            ]);
            // A stored record always parses; one that does not is written with empty fields rather than lost.
            let record = record.to_record().unwrap_or_default();
            cells.extend(record.flat());
        }
        Answer::Unresolved { code, message } => {
            cells.extend([
                "unresolved".to_owned(),
                code.as_str().to_owned(),
                message.clone(),
                String::new(),
                String::new(),
            ]);
            cells.extend(std::iter::repeat_n(
                String::new(),
                CompanyRecord::FLAT_COLUMNS.len(),
            ));
        }
    }
    Some(cells)
}

/// Writes rows as CSV (RFC 4180) into a buffer: the header when `header` is true, then each answered row.
///
/// # Errors
/// Only if writing into memory fails, which it does not.
pub fn csv_bytes(rows: &[InputRow], header: bool) -> Result<Vec<u8>, csv::Error> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    if header {
        writer.write_record(csv_columns())?;
    }
    for row in rows {
        if let Some(cells) = csv_row(row) {
            writer.write_record(&cells)?;
        }
    }
    writer
        .into_inner()
        .map_err(|e| csv::Error::from(std::io::Error::other(e.to_string())))
}

/// How a job's results are written: NDJSON lines or CSV rows (header first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultFormat {
    /// One [`InputRow::ndjson_line`] per answered position (`application/x-ndjson`).
    Ndjson,
    /// [`csv_columns`] as a header row, then one [`csv_row`] per answered position (`text/csv`).
    Csv,
}

/// Input rows read from the store at a time while results stream: one chunk of full records (up to ~50 KB
/// each) is what the server holds of a download of any size.
pub const ROWS_PER_CHUNK: u32 = 32;

/// The answered positions `from..until` of the job `id` of `account` (the caller has read the job, so it
/// exists) written as `format`, chunk by chunk: each item is the encoding of up to [`ROWS_PER_CHUNK`] rows, read
/// from the store when the previous one has been sent, so a response body that streams it holds one chunk in
/// memory whatever the job's size. Positions not answered yet are left out; a job deleted meanwhile ends the
/// stream.
///
/// # Errors
/// [`BulkError::Store`] as an item when a read fails (the body ends early).
pub fn results(
    jobs: Arc<BulkJobs>,
    account: AccountId,
    id: JobId,
    (from, until): (u64, u64),
    format: ResultFormat,
) -> impl Stream<Item = Result<Bytes, BulkError>> + Send + 'static {
    let header = match format {
        ResultFormat::Csv => Some(Bytes::from(csv_bytes(&[], true).unwrap_or_default())),
        ResultFormat::Ndjson => None,
    };
    let rows = futures::stream::try_unfold(from, move |next| {
        let jobs = Arc::clone(&jobs);
        async move {
            if next >= until {
                return Ok(None);
            }
            let asked = u32::try_from((until - next).min(u64::from(ROWS_PER_CHUNK))).unwrap_or(1);
            let rows = jobs
                .inputs(account, id, next, asked)
                .await?
                .unwrap_or_default();
            let Some(last) = rows.last() else {
                return Ok(None);
            };
            // Past the last position read; the end when the store had fewer rows than asked.
            let after = if rows.len() < asked as usize {
                until
            } else {
                last.position + 1
            };
            let chunk: Vec<u8> = match format {
                ResultFormat::Ndjson => rows
                    .iter()
                    .filter_map(InputRow::ndjson_line)
                    .flatten()
                    .collect(),
                ResultFormat::Csv => csv_bytes(&rows, false).unwrap_or_default(),
            };
            Ok(Some((Bytes::from(chunk), after)))
        }
    });
    futures::StreamExt::chain(futures::stream::iter(header.map(Ok)), rows)
}
