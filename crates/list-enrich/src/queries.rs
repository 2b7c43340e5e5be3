//! A list of website domains or company names enriched: each row's query resolved to its page with the
//! evidence, and the page's record beside the row's own fields (`company-data enrich --domain-column`,
//! `--name-column`).
//!
//! The distinct queries go to a [`ResolveTarget`] in requests of [`api_contract::MAX_QUERIES`] with
//! `"enrich": true`, so each resolved row is paid once, at its record's price, and a row that was not resolved
//! costs nothing.

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use api_contract::{
    Answer, InputRow, MAX_DOMAIN_LEN, MAX_NAME_LEN, MAX_QUERIES, Resolution, ResolveBody,
    ResolveQuery, ResolveRequest, UnresolvedQuery,
};
use company_lookup::Caller;
use company_model::UnresolvedCode;
use company_resolve::Resolver;

use bulk_jobs::output::CsvCells;

use crate::lists::{read_records, row_cells};
use crate::{EnrichError, ListError, ListFormat, Remote, Summary};

/// Where queries are resolved.
#[async_trait::async_trait]
pub trait ResolveTarget: Send + Sync {
    /// Resolves `body`'s queries; the answer and the credits charged.
    async fn resolve(
        &self,
        body: &ResolveBody,
    ) -> Result<(api_contract::ResolveResponse, f64), EnrichError>;
}

#[async_trait::async_trait]
impl ResolveTarget for Remote {
    async fn resolve(
        &self,
        body: &ResolveBody,
    ) -> Result<(api_contract::ResolveResponse, f64), EnrichError> {
        let resolved = self.0.resolve(body).await?;
        Ok((resolved.response, resolved.credits_charged.unwrap_or(0.0)))
    }
}

/// The resolver of a service in this process, billing `caller`'s account.
#[derive(Clone, Debug)]
pub struct EmbeddedResolver {
    /// The resolver.
    pub resolver: Arc<Resolver>,
    /// Who pays.
    pub caller: Caller,
}

#[async_trait::async_trait]
impl ResolveTarget for EmbeddedResolver {
    async fn resolve(
        &self,
        body: &ResolveBody,
    ) -> Result<(api_contract::ResolveResponse, f64), EnrichError> {
        // Through the server's own validation, as over HTTP.
        let text = serde_json::to_vec(body).unwrap_or_default();
        let request = ResolveRequest::from_json(&text)?;
        let outcome = self.resolver.resolve(self.caller, &request).await?;
        Ok((outcome.response, outcome.charged.millis() as f64 / 1000.0))
    }
}

/// Which columns (CSV) or members (NDJSON) hold the queries. A row with a domain is resolved by it; a row
/// without one, by its name (with its location, when given).
#[derive(Clone, Debug, Default)]
pub struct QueryColumns {
    /// The website domain (or URL).
    pub domain: Option<String>,
    /// The company name.
    pub name: Option<String>,
    /// The location hint of a name.
    pub location: Option<String>,
}

/// One input row and its query.
#[derive(Clone, Debug)]
pub struct QueryRow {
    /// The row's own fields, in order.
    pub fields: Vec<(String, String)>,
    /// Its query; `None` when the row holds neither a domain nor a name.
    pub query: Option<ResolveQuery>,
}

/// A list of domains or names read from a file.
#[derive(Clone, Debug)]
pub struct QueryList {
    /// Its rows, in order.
    pub rows: Vec<QueryRow>,
    /// The names of the rows' own fields, in order.
    pub columns: Vec<String>,
}

impl QueryList {
    /// Reads the list at `path` (CSV, NDJSON or text: a text list is one domain per line) with its queries in
    /// `columns`.
    ///
    /// # Errors
    /// [`ListError`]; [`ListError::NoSuchColumn`] when a named column is not in the list.
    pub fn read(path: &Path, columns: &QueryColumns) -> Result<Self, ListError> {
        let (names, records) = read_records(path)?;
        let column = |wanted: &Option<String>| -> Result<Option<String>, ListError> {
            match wanted {
                None => Ok(None),
                // A text list's one field is its domain or name.
                Some(_) if names == ["url"] && ListFormat::of(path) == ListFormat::Text => {
                    Ok(Some("url".to_owned()))
                }
                Some(name) if names.contains(name) => Ok(Some(name.clone())),
                Some(name) => Err(ListError::NoSuchColumn(name.clone())),
            }
        };
        let (domain, name, location) = (
            column(&columns.domain)?,
            column(&columns.name)?,
            column(&columns.location)?,
        );
        let rows = records
            .into_iter()
            .map(|fields| {
                // A value a query cannot take (empty, or past its length) makes no query: the row is written
                // as `no_query` rather than failing its whole request.
                let value = |column: &Option<String>, most: usize| {
                    column.as_ref().and_then(|c| {
                        fields
                            .iter()
                            .find(|(n, _)| n == c)
                            .map(|(_, v)| v.trim().to_owned())
                            .filter(|v| !v.is_empty() && v.chars().count() <= most)
                    })
                };
                let query = match (value(&domain, MAX_DOMAIN_LEN), value(&name, MAX_NAME_LEN)) {
                    (Some(domain), _) => Some(ResolveQuery {
                        domain: Some(domain),
                        ..ResolveQuery::default()
                    }),
                    (None, Some(name)) => Some(ResolveQuery {
                        name: Some(name),
                        location: value(&location, MAX_NAME_LEN),
                        domain: None,
                    }),
                    (None, None) => None,
                };
                QueryRow { fields, query }
            })
            .collect();
        Ok(Self {
            rows,
            columns: names,
        })
    }
}

/// What became of one row.
#[derive(Clone, Debug)]
enum Outcome {
    Resolved(Box<Resolution>),
    Unresolved(Box<UnresolvedQuery>),
    /// The row held no query (or one too long to send).
    Empty,
    /// The row's request was not answered: the run stopped before it, with this reason.
    NotSent(String),
}

/// Resolves every row's query on `target` (distinct queries once, [`MAX_QUERIES`] per request, each resolved
/// page's record with it), calls `progress` with the distinct queries done and their total after each request,
/// and writes one
/// output row per input row to `out` in `format`: the row's own fields, the resolution (`resolved_li_url`,
/// `confidence`, `method`, `evidence` as JSON), then the record's columns as `enrich` writes them. In NDJSON:
/// `input`, then `resolution` or `unresolved`, then the record's members at the top level.
///
/// # Errors
/// [`EnrichError`]: a refused request (e.g. insufficient credits) stops the run; the output is still written,
/// with what was resolved (and paid for) before it, and the rows not sent as `not_looked_up`.
pub async fn enrich_queries(
    target: &dyn ResolveTarget,
    list: &QueryList,
    max_age_hours: f64,
    out: &Path,
    (format, cells): (ListFormat, CsvCells),
    mut progress: impl FnMut(usize, usize),
) -> Result<Summary, EnrichError> {
    let mut distinct: Vec<ResolveQuery> = Vec::new();
    let mut index_of: HashMap<&ResolveQuery, usize> = HashMap::new();
    for query in list.rows.iter().filter_map(|row| row.query.as_ref()) {
        index_of.entry(query).or_insert_with(|| {
            distinct.push(query.clone());
            distinct.len() - 1
        });
    }
    let mut outcomes: Vec<Option<Outcome>> = vec![None; distinct.len()];
    let mut summary = Summary::default();
    let mut done = 0;
    let mut stopped: Option<EnrichError> = None;
    for (batch, queries) in distinct.chunks(MAX_QUERIES).enumerate() {
        let body = ResolveBody {
            queries: queries.to_vec(),
            enrich: Some(true),
            max_age_hours: Some(max_age_hours),
            max_age_seconds: None,
            fields: None,
            include: None,
        };
        let (response, credits) = match target.resolve(&body).await {
            Ok(answer) => answer,
            Err(error) => {
                stopped = Some(error);
                break;
            }
        };
        summary.credits += credits;
        let first = batch * MAX_QUERIES;
        // Each answer names its query; queries of one batch are distinct.
        let position: HashMap<&ResolveQuery, usize> = queries
            .iter()
            .enumerate()
            .map(|(i, q)| (q, first + i))
            .collect();
        for resolution in response.results {
            if let Some(&at) = position.get(&resolution.query) {
                outcomes[at] = Some(Outcome::Resolved(Box::new(resolution)));
            }
        }
        for unresolved in response.unresolved {
            if let Some(&at) = position.get(&unresolved.query) {
                outcomes[at] = Some(Outcome::Unresolved(Box::new(unresolved)));
            }
        }
        done += queries.len();
        progress(done, distinct.len());
    }
    let per_row: Vec<Outcome> = list
        .rows
        .iter()
        .map(|row| {
            let Some(&i) = row.query.as_ref().and_then(|q| index_of.get(q)) else {
                return Outcome::Empty;
            };
            outcomes[i].clone().unwrap_or_else(|| {
                let reason = stopped.as_ref().map_or_else(
                    || "no answer for this query".to_owned(),
                    ToString::to_string,
                );
                Outcome::NotSent(reason)
            })
        })
        .collect();
    for outcome in &per_row {
        match outcome {
            Outcome::Resolved(_) => summary.resolved += 1,
            Outcome::Unresolved(u) => {
                *summary
                    .unresolved
                    .entry(u.error.as_str().to_owned())
                    .or_default() += 1;
            }
            Outcome::Empty => *summary.unresolved.entry("no_query".to_owned()).or_default() += 1,
            Outcome::NotSent(_) => {
                *summary
                    .unresolved
                    .entry("not_looked_up".to_owned())
                    .or_default() += 1;
            }
        }
    }
    let partial = std::path::PathBuf::from(format!("{}.partial", out.display()));
    let write = || -> std::io::Result<()> {
        let mut file = std::io::BufWriter::new(std::fs::File::create(&partial)?);
        write_rows(list, &per_row, (format, cells), &mut file)?;
        file.flush()?;
        drop(file);
        std::fs::rename(&partial, out)
    };
    write().map_err(|source| EnrichError::Write {
        path: out.display().to_string(),
        source,
    })?;
    match stopped {
        Some(error) => Err(error),
        None => Ok(summary),
    }
}

/// The columns the resolution adds before the record's.
const RESOLUTION_COLUMNS: [&str; 4] = ["resolved_li_url", "confidence", "method", "evidence"];

fn write_rows(
    list: &QueryList,
    outcomes: &[Outcome],
    (format, mode): (ListFormat, CsvCells),
    out: &mut dyn Write,
) -> std::io::Result<()> {
    if format == ListFormat::Csv {
        let mut writer = csv::Writer::from_writer(out);
        let mut header = list.columns.clone();
        header.extend(RESOLUTION_COLUMNS.iter().map(|c| (*c).to_owned()));
        header.extend(bulk_jobs::output::csv_columns());
        writer.write_record(header)?;
        for (index, (row, outcome)) in list.rows.iter().zip(outcomes).enumerate() {
            let mut cells = row_cells(&list.columns, &row.fields);
            let (mut resolution, answer, error) = answer_of(index, outcome);
            mode.apply(&mut resolution);
            cells.extend(resolution);
            let mut answer_cells = bulk_jobs::output::CsvLayout::whole()
                .with_cells(mode)
                .row(&answer)
                .unwrap_or_default();
            // The record's error cell says why the query was not resolved, in the resolver's words.
            if let (Some(error), Some(cell)) = (error, answer_cells.get_mut(3)) {
                *cell = error;
            }
            cells.extend(answer_cells);
            writer.write_record(cells)?;
        }
        return writer.flush();
    }
    for (row, outcome) in list.rows.iter().zip(outcomes) {
        let input: serde_json::Map<String, serde_json::Value> = row
            .fields
            .iter()
            .map(|(name, value)| (name.clone(), value.clone().into()))
            .collect();
        let mut line = serde_json::Map::new();
        line.insert("input".into(), input.into());
        match outcome {
            Outcome::Resolved(resolution) => {
                let mut resolution = (**resolution).clone();
                let record = resolution.record.take();
                line.insert("resolution".into(), serde_json::to_value(&resolution)?);
                // The record's members at the top level, as `enrich` writes a job's rows.
                if let Some(serde_json::Value::Object(members)) =
                    record.map(|r| serde_json::to_value(&r)).transpose()?
                {
                    line.extend(members);
                }
            }
            Outcome::Unresolved(unresolved) => {
                line.insert("unresolved".into(), serde_json::to_value(unresolved)?);
            }
            Outcome::Empty => {
                line.insert("unresolved".into(), no_query_json());
            }
            Outcome::NotSent(reason) => {
                line.insert(
                    "unresolved".into(),
                    serde_json::json!({"error": "not_looked_up", "message": not_sent(reason)}),
                );
            }
        }
        serde_json::to_writer(&mut *out, &line)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

fn no_query_json() -> serde_json::Value {
    serde_json::json!({"error": "no_query", "message": NO_QUERY})
}

const NO_QUERY: &str =
    "Not sent: the row holds neither a domain nor a name (or one longer than a query takes).";

/// The message of a row whose request was never answered.
fn not_sent(reason: &str) -> String {
    format!(
        "Not looked up: the run stopped before this row ({reason}); run the command again to finish it."
    )
}

/// A row's resolution cells, its answer as a job row (for the record's columns), and the error to show.
fn answer_of(index: usize, outcome: &Outcome) -> ([String; 4], InputRow, Option<String>) {
    let position = index as u64;
    match outcome {
        Outcome::Resolved(resolution) => {
            let evidence = serde_json::to_string(&resolution.evidence).unwrap_or_default();
            let answer = match &resolution.record {
                Some(record) => Answer::Found {
                    record: record.record.clone(),
                    source: record.source,
                    fetched_at: record.fetched_at,
                },
                None => Answer::Unresolved {
                    code: UnresolvedCode::FetchFailed,
                    message: "resolved without its record".to_owned(),
                },
            };
            (
                [
                    resolution.li_url.clone(),
                    resolution.confidence.to_string(),
                    resolution.method.as_str().to_owned(),
                    evidence,
                ],
                InputRow {
                    position,
                    original: resolution.li_url.clone(),
                    answer: Some(answer),
                    metadata: None,
                },
                None,
            )
        }
        Outcome::Unresolved(unresolved) => (
            [
                String::new(),
                String::new(),
                String::new(),
                serde_json::to_string(&unresolved.evidence).unwrap_or_default(),
            ],
            unanswered(position, unresolved.message.clone()),
            Some(unresolved.error.as_str().to_owned()),
        ),
        Outcome::NotSent(reason) => (
            Default::default(),
            unanswered(position, not_sent(reason)),
            Some("not_looked_up".to_owned()),
        ),
        Outcome::Empty => (
            Default::default(),
            unanswered(position, NO_QUERY.to_owned()),
            Some("no_query".to_owned()),
        ),
    }
}

/// A row without a record, as a job row for the record's columns (its `error` cell is set by the caller).
fn unanswered(position: u64, message: String) -> InputRow {
    InputRow {
        position,
        original: String::new(),
        answer: Some(Answer::Unresolved {
            code: UnresolvedCode::NotFound,
            message,
        }),
        metadata: None,
    }
}
