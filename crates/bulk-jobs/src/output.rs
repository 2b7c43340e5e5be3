//! A job's results as the API, the dashboard and `company-data enrich` write them: one NDJSON line or one CSV row
//! per input position.
//!
//! An NDJSON line is [`company_model::InputRow::ndjson_line`]: the object the synchronous endpoint gives for that
//! URL, with the input's 0-based `position` first. A CSV row has [`csv_columns`]: the position, the URL as submitted,
//! `status` (`resolved` or `unresolved`), `error` and `message` for an unresolved one, `source` and `fetched_at`,
//! then the record's scalar members ([`CompanyRecord::FLAT_COLUMNS`]).

use company_model::CompanyRecord;

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
                match source {
                    company_model::RecordSource::Live => "live".to_owned(),
                    company_model::RecordSource::Stored => "stored".to_owned(),
                },
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
