//! Lists of page URLs as people keep them: a CSV (a CRM export), a text file of URLs, or NDJSON; and the results
//! written beside each input row's own columns.
//!
//! Every input row gets one output row, in input order. A row whose URL the API would refuse (not a page URL,
//! empty) is not sent and comes out unresolved with the error `invalid_url`, so one bad row never stops a list.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use company_model::UnresolvedCode;
use page_url::{NetworkDomain, PageUrl};

use api_contract::{Answer, InputRow, RecordFields};
use bulk_jobs::output;

/// How a list file is written, from its extension: `.csv`, `.ndjson`/`.jsonl`, anything else one URL per line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ListFormat {
    /// RFC 4180 with a header row.
    Csv,
    /// One JSON object per line.
    Ndjson,
    /// One URL per line; blank lines and lines starting with `#` are skipped.
    Text,
}

impl ListFormat {
    /// The format a file's extension names.
    pub fn of(path: &Path) -> Self {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("csv") => Self::Csv,
            Some("ndjson" | "jsonl") => Self::Ndjson,
            _ => Self::Text,
        }
    }
}

/// One input row: its own fields, in order, and the URL taken from them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListRow {
    /// `(name, value)` of each of the row's own fields: a CSV row's columns, an NDJSON object's members (strings
    /// as they are, other values as JSON), or `url` for a text line.
    pub fields: Vec<(String, String)>,
    /// The URL as the row holds it.
    pub url: String,
    /// The page it normalizes to, or why it cannot be sent.
    pub page: Result<PageUrl, String>,
}

/// A list read from a file.
#[derive(Clone, Debug)]
pub struct List {
    /// Its rows, in order.
    pub rows: Vec<ListRow>,
    /// The names of the rows' own fields, in order (a CSV's header; the members seen in NDJSON).
    pub columns: Vec<String>,
    /// Which field holds the URL.
    pub url_column: String,
}

/// Why a list cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ListError {
    /// The file cannot be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// A CSV record is malformed.
    #[error("{0}")]
    Csv(#[from] csv::Error),
    /// An NDJSON line is not a JSON object.
    #[error("line {line} is not a JSON object: {reason}")]
    Ndjson {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// `--column` names no field of the list.
    #[error("the list has no column `{0}`; name one of its columns with --column")]
    NoSuchColumn(String),
    /// No field holds page URLs.
    #[error("no column holds page URLs; name the column with --column")]
    NoUrlColumn,
}

impl List {
    /// Reads the list at `path` in its extension's [`ListFormat`]. The URL column is `column` when given,
    /// else the first whose value in the first row that has one is a page URL on `domain`.
    ///
    /// # Errors
    /// [`ListError`].
    pub fn read(
        path: &Path,
        column: Option<&str>,
        domain: &NetworkDomain,
    ) -> Result<Self, ListError> {
        let (columns, records) = read_records(path)?;
        let url_column = match column {
            Some(name) if columns.iter().any(|c| c == name) => name.to_owned(),
            Some(name) => return Err(ListError::NoSuchColumn(name.to_owned())),
            None => columns
                .iter()
                .find(|name| {
                    records
                        .iter()
                        .find_map(|fields| {
                            fields
                                .iter()
                                .find(|(n, v)| n == *name && !v.trim().is_empty())
                        })
                        .is_some_and(|(_, value)| {
                            PageUrl::parse_submitted(value.trim(), domain).is_ok()
                        })
                })
                .cloned()
                .ok_or(ListError::NoUrlColumn)?,
        };
        let rows = records
            .into_iter()
            .map(|fields| {
                let url = fields
                    .iter()
                    .find(|(name, _)| *name == url_column)
                    .map(|(_, value)| value.trim().to_owned())
                    .unwrap_or_default();
                let page = if url.is_empty() {
                    Err("the row has no URL".to_owned())
                } else {
                    PageUrl::parse_submitted(&url, domain).map_err(|e| e.to_string())
                };
                ListRow { fields, url, page }
            })
            .collect();
        Ok(Self {
            rows,
            columns,
            url_column,
        })
    }

    /// The URLs to send, in order, and for each the index of its row (rows with an invalid URL are left out).
    pub fn to_send(&self) -> (Vec<String>, Vec<usize>) {
        self.rows
            .iter()
            .enumerate()
            .filter(|(_, row)| row.page.is_ok())
            .map(|(index, row)| (row.url.clone(), index))
            .unzip()
    }

    /// Writes one output row per input row, in order: the row's own fields, then its answer. `answers` holds
    /// the job's answers by job position (the order of [`List::to_send`]); a row whose URL was invalid comes
    /// out unresolved with `invalid_url`, a row without an answer (a cancelled job) unresolved with
    /// `not_looked_up`.
    ///
    /// CSV: the list's columns then the columns of [`output::CsvLayout`] for `fields` (every record column with
    /// `None`). NDJSON: the answer's object (as the results endpoint writes it) with the row's own fields as
    /// `input` first.
    ///
    /// # Errors
    /// When writing fails.
    pub fn write_results(
        &self,
        answers: &BTreeMap<u64, InputRow>,
        (format, cells): (ListFormat, output::CsvCells),
        fields: Option<&RecordFields>,
        out: &mut dyn Write,
    ) -> std::io::Result<()> {
        let (_, rows_of) = self.to_send();
        let position_of: BTreeMap<usize, u64> = rows_of
            .iter()
            .enumerate()
            .map(|(position, row)| (*row, position as u64))
            .collect();
        // Each row's answer, and the error to show instead of the answer's for rows never looked up.
        let answered = self.rows.iter().enumerate().map(|(index, row)| {
            let position = position_of.get(&index).copied();
            match (position.and_then(|p| answers.get(&p)), &row.page) {
                (Some(answer), _) => (answer.clone(), None),
                (None, page) => {
                    let (error, message) = match page {
                        Err(reason) => ("invalid_url", format!("Not sent: {reason}.")),
                        Ok(_) => (
                            "not_looked_up",
                            "Not looked up: the job ended before this row.".to_owned(),
                        ),
                    };
                    let row = InputRow {
                        position: position.unwrap_or(index as u64),
                        original: row.url.clone(),
                        answer: Some(Answer::Unresolved {
                            code: UnresolvedCode::FetchFailed,
                            message,
                        }),
                        metadata: None,
                    };
                    (row, Some(error))
                }
            }
        });
        if format == ListFormat::Csv {
            let mut writer = csv::Writer::from_writer(out);
            let layout = output::CsvLayout::new(fields, Vec::new()).with_cells(cells);
            let mut header = self.columns.clone();
            header.extend(layout.columns());
            writer.write_record(header)?;
            for (row, (answer, error)) in self.rows.iter().zip(answered) {
                let mut cells = row_cells(&self.columns, &row.fields);
                let mut answer_cells = layout.row(&answer).unwrap_or_default();
                if let (Some(error), Some(cell)) = (error, answer_cells.get_mut(3)) {
                    error.clone_into(cell);
                }
                cells.extend(answer_cells);
                writer.write_record(cells)?;
            }
            return writer.flush();
        }
        let mut line = Vec::new();
        for (row, (answer, error)) in self.rows.iter().zip(answered) {
            let object: serde_json::Map<String, serde_json::Value> = answer
                .ndjson_line()
                .and_then(|text| serde_json::from_slice(&text).ok())
                .unwrap_or_default();
            let input: serde_json::Map<String, serde_json::Value> = row
                .fields
                .iter()
                .map(|(name, value)| (name.clone(), value.clone().into()))
                .collect();
            let mut with_input = serde_json::Map::new();
            with_input.insert("input".into(), input.into());
            with_input.extend(object);
            if let Some(error) = error {
                with_input.insert("error".into(), error.into());
            }
            line.clear();
            serde_json::to_writer(&mut line, &with_input)?;
            line.push(b'\n');
            out.write_all(&line)?;
        }
        Ok(())
    }
}

/// A list's field names, in order, and each record's `(name, value)` fields.
type Records = (Vec<String>, Vec<Vec<(String, String)>>);

/// The fields of every record of the list at `path`, in its extension's [`ListFormat`].
pub(crate) fn read_records(path: &Path) -> Result<Records, ListError> {
    let io = |source| ListError::Io {
        path: path.display().to_string(),
        source,
    };
    let read: Records = match ListFormat::of(path) {
        ListFormat::Csv => {
            let mut reader = csv::ReaderBuilder::new()
                .flexible(true)
                .from_path(path)
                .map_err(|e| match e.into_kind() {
                    csv::ErrorKind::Io(e) => io(e),
                    other => ListError::Csv(csv::Error::from(std::io::Error::other(format!(
                        "{other:?}"
                    )))),
                })?;
            let header: Vec<String> = reader.headers()?.iter().map(str::to_owned).collect();
            let mut records = Vec::new();
            for record in reader.records() {
                let record = record?;
                records.push(
                    header
                        .iter()
                        .enumerate()
                        .map(|(i, name)| {
                            (name.clone(), record.get(i).unwrap_or_default().to_owned())
                        })
                        .collect(),
                );
            }
            (header, records)
        }
        ListFormat::Ndjson => {
            let text = std::fs::read_to_string(path).map_err(io)?;
            let mut columns: Vec<String> = Vec::new();
            let mut records = Vec::new();
            for (n, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let object: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line)
                    .map_err(|e| ListError::Ndjson {
                        line: n + 1,
                        reason: e.to_string(),
                    })?;
                let fields: Vec<(String, String)> = object
                    .into_iter()
                    .map(|(name, value)| {
                        let text = match value {
                            serde_json::Value::String(text) => text,
                            other => other.to_string(),
                        };
                        (name, text)
                    })
                    .collect();
                for (name, _) in &fields {
                    if !columns.contains(name) {
                        columns.push(name.clone());
                    }
                }
                records.push(fields);
            }
            (columns, records)
        }
        ListFormat::Text => {
            let text = std::fs::read_to_string(path).map_err(io)?;
            let records = text
                .lines()
                .map(str::trim)
                .filter(|line| !line.is_empty() && !line.starts_with('#'))
                .map(|line| vec![("url".to_owned(), line.to_owned())])
                .collect();
            (vec!["url".to_owned()], records)
        }
    };
    Ok(read)
}

/// A row's own cells in the list's column order (empty where the row lacks a column).
pub(crate) fn row_cells(columns: &[String], fields: &[(String, String)]) -> Vec<String> {
    columns
        .iter()
        .map(|column| {
            fields
                .iter()
                .find(|(name, _)| name == column)
                .map(|(_, value)| value.clone())
                .unwrap_or_default()
        })
        .collect()
}
