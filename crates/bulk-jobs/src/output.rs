//! A job's results as the API, the dashboard and `company-data enrich` write them: one NDJSON line or one CSV row
//! per input position.
//!
//! An NDJSON line is [`api_contract::InputRow::ndjson_line`]: the object the synchronous endpoint gives for that
//! URL, with the input's 0-based `position` first (and the input's `metadata`, when it carried some). A CSV row has
//! the columns of its job's [`CsvLayout`]: the position, the URL as submitted, a `metadata.<name>` column per
//! member name of the job's metadata, `status` (`resolved` or `unresolved`), `error` and `message` for an
//! unresolved one, `source` and `fetched_at`, then the record's scalar members ([`CompanyRecord::FLAT_COLUMNS`],
//! only those of the members the job's `fields` keeps).
//!
//! CSV cells are spreadsheet-safe by default ([`CsvCells`]): a page's text (a company's name, tagline,
//! description) is someone else's, and a cell that starts like a formula must open as text, not run.

use std::borrow::Cow;
use std::sync::Arc;

use api_contract::{InputMetadata, RecordFields};
use bytes::Bytes;
use company_model::{CompanyRecord, Tenant};
use futures::Stream;

use crate::{BulkError, BulkJobs, Job, JobId};

use crate::{Answer, InputRow};

/// The columns before the metadata's and the record's.
const LEADING: [&str; 2] = ["position", "original_li_url"];
/// The columns between the metadata's and the record's.
const ANSWER: [&str; 5] = ["status", "error", "message", "source", "fetched_at"];

/// How CSV cells are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CsvCells {
    /// OWASP's rule against CSV injection: a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage
    /// return gets a leading `'`, so that a spreadsheet shows it as text instead of running it as a formula
    /// ([`spreadsheet_safe`]). A plain number (`-12`, `+3.5`) is left as it is. The default.
    #[default]
    SpreadsheetSafe,
    /// Every cell exactly as the data has it, for programs that read the CSV (not spreadsheets).
    Raw,
}

impl CsvCells {
    /// The query parameter of a job's results that chooses the mode (`?csv_cells=raw`).
    pub const QUERY: &'static str = "csv_cells";
    /// Every mode, the default first.
    pub const ALL: [Self; 2] = [Self::SpreadsheetSafe, Self::Raw];

    /// The mode as [`CsvCells::QUERY`] names it: `safe` or `raw`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SpreadsheetSafe => "safe",
            Self::Raw => "raw",
        }
    }

    /// The mode [`CsvCells::QUERY`]'s value names; `None` for any other text.
    pub fn from_query(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|mode| mode.as_str() == value)
    }

    /// `cell` as this mode writes it.
    pub fn cell(self, cell: &str) -> Cow<'_, str> {
        match self {
            Self::SpreadsheetSafe => spreadsheet_safe(cell),
            Self::Raw => Cow::Borrowed(cell),
        }
    }

    /// Writes every cell of `cells` in this mode, in place.
    pub fn apply(self, cells: &mut [String]) {
        if self == Self::SpreadsheetSafe {
            for cell in cells {
                if let Cow::Owned(safe) = spreadsheet_safe(cell) {
                    *cell = safe;
                }
            }
        }
    }
}

/// `cell` as a spreadsheet will show it as text: with a leading `'` when it starts with `=`, `+`, `-`, `@`, a
/// tab or a carriage return (which Excel, LibreOffice and Google Sheets read as the start of a formula or
/// strip before one) and is not a plain decimal number; otherwise unchanged.
pub fn spreadsheet_safe(cell: &str) -> Cow<'_, str> {
    let starts_like_a_formula = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if starts_like_a_formula && !is_plain_number(cell) {
        Cow::Owned(format!("'{cell}"))
    } else {
        Cow::Borrowed(cell)
    }
}

/// A signed decimal number such as `-12` or `+3.5`: digits, at most one point, at least one digit.
fn is_plain_number(cell: &str) -> bool {
    let unsigned = cell.strip_prefix(['-', '+']).unwrap_or(cell);
    unsigned.bytes().any(|b| b.is_ascii_digit())
        && unsigned.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && unsigned.bytes().filter(|&b| b == b'.').count() <= 1
}

/// Which columns a job's CSV has: its metadata's member names and the record columns its field selection keeps;
/// and how its cells are written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CsvLayout {
    /// Member names of the inputs' metadata, a column each.
    metadata: Vec<String>,
    /// The record's columns kept, in [`CompanyRecord::FLAT_COLUMNS`] order, by index.
    record: Vec<usize>,
    /// Spreadsheet-safe (the default) or raw.
    cells: CsvCells,
}

impl CsvLayout {
    /// Whole records, no metadata: [`csv_columns`].
    pub fn whole() -> Self {
        Self::new(None, Vec::new())
    }

    /// The layout of `job`'s results.
    pub fn of(job: &Job) -> Self {
        Self::new(job.fields.as_ref(), job.metadata_columns.clone())
    }

    /// Rows with the record columns `fields` keeps (all with `None`) and a column per metadata member name.
    pub fn new(fields: Option<&RecordFields>, metadata: Vec<String>) -> Self {
        let record = CompanyRecord::FLAT_COLUMNS
            .iter()
            .enumerate()
            .filter(|(_, column)| {
                fields.is_none_or(|f| f.keeps(CompanyRecord::flat_column_member(column)))
            })
            .map(|(index, _)| index)
            .collect();
        Self {
            metadata,
            record,
            cells: CsvCells::default(),
        }
    }

    /// The same layout writing its cells as `cells` says.
    #[must_use]
    pub fn with_cells(self, cells: CsvCells) -> Self {
        Self { cells, ..self }
    }

    /// The header, in order.
    pub fn columns(&self) -> Vec<String> {
        let mut columns: Vec<String> = LEADING.iter().map(|c| (*c).to_owned()).collect();
        columns.extend(
            self.metadata
                .iter()
                .map(|name| format!("{}{name}", InputMetadata::COLUMN_PREFIX)),
        );
        columns.extend(ANSWER.iter().map(|c| (*c).to_owned()));
        columns.extend(
            self.record
                .iter()
                .map(|&i| CompanyRecord::FLAT_COLUMNS[i].to_owned()),
        );
        columns
    }

    /// The row of an answered input, in [`CsvLayout::columns`] order, its cells written as the layout's
    /// [`CsvCells`] say; `None` while its page is not done.
    pub fn row(&self, row: &InputRow) -> Option<Vec<String>> {
        let mut cells = self.raw_row(row)?;
        self.cells.apply(&mut cells);
        Some(cells)
    }

    fn raw_row(&self, row: &InputRow) -> Option<Vec<String>> {
        let mut cells = vec![row.position.to_string(), row.original.clone()];
        match &row.metadata {
            Some(metadata) => cells.extend(metadata.cells(&self.metadata)),
            None => cells.extend(std::iter::repeat_n(String::new(), self.metadata.len())),
        }
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
                let flat = record.to_record().unwrap_or_default().flat();
                cells.extend(self.record.iter().map(|&i| flat[i].clone()));
            }
            Answer::Unresolved { code, message } => {
                cells.extend([
                    "unresolved".to_owned(),
                    code.as_str().to_owned(),
                    message.clone(),
                    String::new(),
                    String::new(),
                ]);
                cells.extend(std::iter::repeat_n(String::new(), self.record.len()));
            }
        }
        Some(cells)
    }

    /// Writes rows as CSV (RFC 4180) into a buffer: the header when `header` is true, then each answered row.
    ///
    /// # Errors
    /// Only if writing into memory fails, which it does not.
    pub fn csv_bytes(&self, rows: &[InputRow], header: bool) -> Result<Vec<u8>, csv::Error> {
        let mut writer = csv::Writer::from_writer(Vec::new());
        if header {
            writer.write_record(self.columns())?;
        }
        for row in rows {
            if let Some(cells) = self.row(row) {
                writer.write_record(&cells)?;
            }
        }
        writer
            .into_inner()
            .map_err(|e| csv::Error::from(std::io::Error::other(e.to_string())))
    }
}

/// The columns of [`csv_row`] (whole records, no metadata), in order.
pub fn csv_columns() -> Vec<String> {
    CsvLayout::whole().columns()
}

/// The CSV row of an answered input with whole records and no metadata columns, in [`csv_columns`] order; `None`
/// while its page is not done.
pub fn csv_row(row: &InputRow) -> Option<Vec<String>> {
    CsvLayout::whole().row(row)
}

/// How a job's results are written: NDJSON lines or CSV rows (header first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultFormat {
    /// One [`InputRow::ndjson_line`] per answered position (`application/x-ndjson`).
    Ndjson,
    /// The job's [`CsvLayout::columns`] as a header row, then one [`CsvLayout::row`] per answered position
    /// (`text/csv`), its cells written as [`CsvCells`] says.
    Csv(CsvCells),
}

/// Input rows read from the store at a time while results stream: one chunk of full records (up to ~50 KB
/// each) is what the server holds of a download of any size.
pub const ROWS_PER_CHUNK: u32 = 32;

/// The answered positions `from..until` of `job` (read by the caller for its account) written as `format`, chunk
/// by chunk: each item is the encoding of up to [`ROWS_PER_CHUNK`] rows, read
/// from the store when the previous one has been sent, so a response body that streams it holds one chunk in
/// memory whatever the job's size. Positions not answered yet are left out; a job deleted meanwhile ends the
/// stream.
///
/// # Errors
/// [`BulkError::Store`] as an item when a read fails (the body ends early).
pub fn results(
    jobs: Arc<BulkJobs>,
    job: &Job,
    (from, until): (u64, u64),
    format: ResultFormat,
) -> impl Stream<Item = Result<Bytes, BulkError>> + Send + 'static {
    let (tenant, id): (Tenant, JobId) = (job.tenant, job.id);
    let cells = match format {
        ResultFormat::Csv(cells) => cells,
        ResultFormat::Ndjson => CsvCells::default(),
    };
    let layout = Arc::new(CsvLayout::of(job).with_cells(cells));
    let header = match format {
        ResultFormat::Csv(_) => Some(Bytes::from(layout.csv_bytes(&[], true).unwrap_or_default())),
        ResultFormat::Ndjson => None,
    };
    let rows = futures::stream::try_unfold(from, move |next| {
        let jobs = Arc::clone(&jobs);
        let layout = Arc::clone(&layout);
        async move {
            if next >= until {
                return Ok(None);
            }
            let asked = u32::try_from((until - next).min(u64::from(ROWS_PER_CHUNK))).unwrap_or(1);
            let rows = jobs
                .inputs(tenant, id, next, asked)
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
                ResultFormat::Csv(_) => layout.csv_bytes(&rows, false).unwrap_or_default(),
            };
            Ok(Some((Bytes::from(chunk), after)))
        }
    });
    futures::StreamExt::chain(futures::stream::iter(header.map(Ok)), rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_that_start_like_formulas_open_as_text() {
        for (cell, safe) in [
            (
                "=HYPERLINK(\"http://evil.example\",\"Acme\")",
                "'=HYPERLINK(\"http://evil.example\",\"Acme\")",
            ),
            ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
            // Numbers stay numbers; text that merely contains the characters stays as it is.
            ("-12", "-12"),
            ("+3.5", "+3.5"),
            ("-0.5", "-0.5"),
            ("Acme = Widgets", "Acme = Widgets"),
            ("", ""),
            ("-", "'-"),
            ("-1.2.3", "'-1.2.3"),
        ] {
            assert_eq!(spreadsheet_safe(cell), safe, "{cell:?}");
            assert_eq!(CsvCells::Raw.cell(cell), cell, "raw keeps {cell:?}");
        }
    }
}
