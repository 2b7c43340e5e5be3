//! Search (`/dashboard/search`): the account's stored companies by words and filters, a page at a time, and all of
//! them as CSV (`/dashboard/search.csv`). The form's fields are the search body's members; the body is checked
//! by the API's own rule (`SearchRequest::from_json`), so the page refuses what the API refuses, in its words.

use bytes::Bytes;
use std::sync::Arc;

use company_lookup::{Caller, LookupError, LookupService};
use company_model::Tenant;
use http::{HeaderValue, StatusCode, header};
use http_serve::Response;
use maud::{Markup, html};
use serde_json::{Value, json};

use api_contract::{CompanyRow, SearchRequest, SearchResponse};

use crate::Parts;
use crate::error::{Page, PageError, internal, sentence};
use crate::layout::{layout, tell_when_to_retry};
use crate::respond::{html, query_param};
use crate::visitor::Visitor;

/// How many rows each search of a CSV download asks for: the API's largest page.
const CSV_PAGE_ROWS: u32 = api_contract::MAX_SEARCH_ROWS;

/// The most rows one CSV download holds: [`crate::CSV_SEARCHES`] of its pages (10,000).
const CSV_ROWS: usize = crate::CSV_SEARCHES * CSV_PAGE_ROWS as usize;

/// The form's fields: (query parameter, label, body member, kind).
const FIELDS: [(&str, &str, &str, Kind); 11] = [
    ("q", "Words", "q", Kind::Text),
    ("industry", "Industry", "industries", Kind::List),
    ("size", "Size band", "companySizes", Kind::List),
    ("country", "Country (two letters)", "countries", Kind::List),
    ("locality", "City", "localities", Kind::List),
    ("specialty", "Specialty", "specialties", Kind::List),
    (
        "min_employees",
        "Employees, at least",
        "employeeCount.min",
        Kind::Number,
    ),
    (
        "max_employees",
        "Employees, at most",
        "employeeCount.max",
        Kind::Number,
    ),
    (
        "min_growth",
        "Employee growth in 90 days, %, at least",
        "employeeGrowth.min",
        Kind::Percent,
    ),
    (
        "min_followers",
        "Followers, at least",
        "followerCount.min",
        Kind::Number,
    ),
    ("sort", "Order", "sort", Kind::Sort),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    List,
    Number,
    Percent,
    Sort,
}

/// What the form asked: each field's text as sent.
struct Asked(Vec<(&'static str, String)>);

impl Asked {
    fn of(query: Option<&str>) -> Self {
        Self(
            FIELDS
                .iter()
                .filter_map(|(name, ..)| {
                    query_param(query, name)
                        .map(|value| (*name, value.trim().to_owned()))
                        .filter(|(_, value)| !value.is_empty())
                })
                .collect(),
        )
    }

    fn value(&self, name: &str) -> &str {
        self.0
            .iter()
            .find(|(field, _)| *field == name)
            .map_or("", |(_, value)| value.as_str())
    }

    /// The search body the form asks for (a number that is not one is sent as text, for the API to name).
    fn body(&self, limit: u32, cursor: Option<&str>) -> Value {
        let mut body = json!({ "limit": limit });
        for (name, _, member, kind) in FIELDS {
            let value = self.value(name);
            if value.is_empty() {
                continue;
            }
            let sent = match kind {
                Kind::Text | Kind::Sort => json!(value),
                Kind::List => json!([value]),
                Kind::Number => value
                    .parse::<u64>()
                    .map_or_else(|_| json!(value), |n| json!(n)),
                Kind::Percent => value
                    .trim_end_matches('%')
                    .parse::<f64>()
                    .map_or_else(|_| json!(value), |n| json!(n)),
            };
            match member.split_once('.') {
                Some((range, end)) => body[range][end] = sent,
                None => body[member] = sent,
            }
        }
        if let Some(cursor) = cursor {
            body["cursor"] = json!(cursor);
        }
        body
    }

    /// The query string of this search (the `account` of an admin's view kept by `Visitor::link`).
    fn query(&self) -> String {
        serde_urlencoded::to_string(&self.0).unwrap_or_default()
    }
}

/// The search `body` asks for, on the visitor's account; an inner `Err` the person can act on, in the API's
/// words: [`PageError::BadRequest`] when it is not valid or ran past the search time limit,
/// [`PageError::TooMany`] when it is one search too many of the account's at once (`in_turn`: after waiting for
/// a place, as an export does, `LookupService::search_in_turn`).
async fn searched(
    lookup: &LookupService,
    tenant: Tenant,
    body: &Value,
    in_turn: bool,
) -> Result<Result<SearchResponse, PageError>, PageError> {
    let request = match SearchRequest::from_json(body.to_string().as_bytes()) {
        Ok(request) => request,
        Err(invalid) => return Ok(Err(PageError::BadRequest(invalid.to_string()))),
    };
    let caller = Caller {
        tenant,
        key_id: None,
    };
    let answer = if in_turn {
        lookup.search_in_turn(caller, &request).await
    } else {
        lookup.search(caller, &request).await
    };
    match answer {
        Ok(found) => Ok(Ok(found)),
        Err(timed_out @ LookupError::SearchTimedOut { .. }) => {
            Ok(Err(PageError::BadRequest(sentence(&timed_out))))
        }
        Err(at_cap @ LookupError::TooManySearches { retry_after, .. }) => {
            Ok(Err(PageError::TooMany {
                message: sentence(&at_cap),
                retry_after,
            }))
        }
        // Otherwise a search fails only when the store does: the service's failure, not the person's.
        Err(other) => Err(internal(other)),
    }
}

/// `GET /dashboard/search`: the form, and a page of rows when it was sent.
pub(crate) async fn page(parts: &Parts, visitor: &Visitor, query: Option<&str>) -> Page {
    let asked = Asked::of(query);
    let cursor = query_param(query, "cursor");
    let found = searched(
        &parts.lookup,
        visitor.live(),
        &asked.body(50, cursor.as_deref()),
        false,
    )
    .await?;
    let status = found
        .as_ref()
        .map_or_else(PageError::status, |_| StatusCode::OK);
    let mut response = html(status, search_markup(visitor, &asked, &found));
    if let Err(refused) = &found {
        tell_when_to_retry(&mut response, refused);
    }
    Ok(response)
}

/// The accounts whose search CSV this server is writing. A download runs up to [`crate::CSV_SEARCHES`] searches, so an
/// account has one at a time: a person (or a script with their session) cannot run many at once beside the
/// other accounts' searches.
#[derive(Debug, Default)]
pub(crate) struct Downloads(std::sync::Mutex<std::collections::HashSet<i64>>);

/// An account's running download; dropping it (once its last search has answered, or the client went away) ends
/// it.
struct Running {
    of: Arc<Downloads>,
    account: i64,
}

impl Downloads {
    /// Starts `account`'s download; `None` while it has one running.
    fn start(self: &Arc<Self>, account: i64) -> Option<Running> {
        let mut running = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Made only when inserted: a `Running` made and dropped here would end the download that runs.
        if running.insert(account) {
            Some(Running {
                of: Arc::clone(self),
                account,
            })
        } else {
            None
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut running = self
            .of
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        running.remove(&self.account);
    }
}

/// How long a person is asked to wait before downloading again while a download of theirs runs.
const DOWNLOAD_RETRY: std::time::Duration = std::time::Duration::from_secs(5);

/// `GET /dashboard/search.csv`: every row of the search (up to [`CSV_ROWS`]), spreadsheet-safe; one download
/// at a time per account (429 while another runs). The first page is searched before the response starts, so a
/// search refused gets its status; the rest are streamed a page at a time as they are searched, so a proxy that
/// waits for the first byte never waits for a hundred searches. A later page that fails ends the body early (the
/// client sees the download cut off, never a short file that looks whole).
pub(crate) async fn csv(parts: &Parts, visitor: &Visitor, query: Option<&str>) -> Page {
    let Some(running) = parts.downloads.start(visitor.live().key()) else {
        return Err(PageError::TooMany {
            message: "A CSV of this account's search is being written already. Download again when it is done."
                .to_owned(),
            retry_after: DOWNLOAD_RETRY,
        });
    };
    let asked = Asked::of(query);
    let first = searched(
        &parts.lookup,
        visitor.live(),
        &asked.body(CSV_PAGE_ROWS, None),
        true,
    )
    .await??;
    let export = Export {
        lookup: Arc::clone(&parts.lookup),
        tenant: visitor.live(),
        asked,
        page: Some(first),
        cursor: None,
        written: None,
        running: Some(running),
    };
    // The pages are searched as the body is read, outside the handler: in its span, so their log lines say
    // which request they belong to.
    let span = tracing::Span::current();
    let chunks = futures::stream::unfold(export, move |export| {
        tracing::Instrument::instrument(export.next_chunk(), span.clone())
    });
    let mut response = Response::new(http_serve::streamed(chunks));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    headers.insert(
        header::CONTENT_DISPOSITION,
        HeaderValue::from_static("attachment; filename=\"companies.csv\""),
    );
    Ok(response)
}

/// A CSV download under way: the search's pages, written as they come.
struct Export {
    lookup: Arc<LookupService>,
    tenant: Tenant,
    asked: Asked,
    /// The page to write next, when it has been searched already (the first).
    page: Option<SearchResponse>,
    /// Where the next page starts; `None` once the search or [`CSV_ROWS`] has ended.
    cursor: Option<String>,
    /// Rows written so far; `None` before the header row.
    written: Option<usize>,
    /// The account's download, ended once the last page has been searched (pages are searched as the body is
    /// read, so a slow reader holds it until then, and only its connection after) or when the body is dropped.
    running: Option<Running>,
}

impl Export {
    /// The next chunk of the body (the header row with the first page, then a page's rows), and the export
    /// after it; `None` at the end.
    async fn next_chunk(mut self) -> Option<(Result<Bytes, std::io::Error>, Self)> {
        let chunk = match self.next_page().await? {
            Ok(page) => {
                let chunk = self.written_out(&page).map_err(std::io::Error::other);
                if chunk.is_ok() && self.written.is_some_and(|written| written < CSV_ROWS) {
                    self.cursor = page.next_cursor;
                }
                chunk.map(Bytes::from)
            }
            // The status has been sent: a failure can only cut the body off (`cursor` is gone, so this is the
            // last chunk).
            Err(failed) => Err(failed),
        };
        if self.cursor.is_none() {
            // The last search has answered: the account may download again while this body is still read.
            self.running = None;
        }
        Some((chunk, self))
    }

    /// The page to write next: the first, searched already, or the one at `cursor`; `None` after the last.
    async fn next_page(&mut self) -> Option<Result<SearchResponse, std::io::Error>> {
        if let Some(page) = self.page.take() {
            return Some(Ok(page));
        }
        let body = self.asked.body(CSV_PAGE_ROWS, Some(&self.cursor.take()?));
        Some(
            match searched(&self.lookup, self.tenant, &body, true).await {
                Ok(Ok(page)) => Ok(page),
                Ok(Err(refused)) => {
                    tracing::warn!(reason = %refused, "search CSV cut off: a page's search was refused");
                    Err(std::io::Error::other(refused.to_string()))
                }
                Err(failed) => {
                    let failed = match failed {
                        PageError::Internal(source) => source,
                        other => Box::new(other),
                    };
                    tracing::error!(error = %failed, "search CSV cut off: a page's search failed");
                    Err(std::io::Error::other(failed))
                }
            },
        )
    }

    /// `page`'s rows as CSV (after the header row, for the first), up to [`CSV_ROWS`] in all.
    fn written_out(&mut self, page: &SearchResponse) -> Result<Vec<u8>, csv::Error> {
        let mut writer = csv::Writer::from_writer(Vec::new());
        let written = if let Some(written) = self.written {
            written
        } else {
            writer.write_record(CompanyRow::CSV_COLUMNS)?;
            0
        };
        let rows = page.results.iter().take(CSV_ROWS - written);
        self.written = Some(written + rows.len());
        for row in rows {
            let mut cells = row.csv_cells();
            // A page's text is someone else's: it opens as text in a spreadsheet, never as a formula.
            bulk_jobs::output::CsvCells::SpreadsheetSafe.apply(&mut cells);
            writer.write_record(&cells)?;
        }
        writer.into_inner().map_err(|e| e.into_error().into())
    }
}

fn search_markup(
    visitor: &Visitor,
    asked: &Asked,
    found: &Result<SearchResponse, PageError>,
) -> Markup {
    let query = asked.query();
    let with_query = |path: &str| {
        if query.is_empty() {
            visitor.link(path)
        } else {
            visitor.link(&format!("{path}?{query}"))
        }
    };
    let body = html! {
        h1 { "Search" }
        p.hint { "The companies this account was answered (looked up, in jobs, resolved, watched), from their \
                  stored snapshots: nothing is fetched and nothing is charged. Every field given must match; \
                  text is compared without case or accents." }
        form.card method="get" action=(visitor.link("/dashboard/search")) {
            // A form sent by GET replaces its action's query: the account an admin is looking at goes along.
            @if visitor.account.id != visitor.user.account {
                input type="hidden" name="account" value=(visitor.account.id.0);
            }
            div.row {
                @for (name, label, _, kind) in FIELDS {
                    div {
                        label for=(format!("search-{name}")) { (label) }
                        @match kind {
                            Kind::Sort => select id=(format!("search-{name}")) name=(name) {
                                option value="" selected[asked.value(name).is_empty()] { "Best first" }
                                @for order in ["relevance", "followers", "employees", "freshness"] {
                                    option value=(order) selected[asked.value(name) == order] { (order) }
                                }
                            },
                            _ => input id=(format!("search-{name}")) name=(name) value=(asked.value(name));
                        }
                    }
                }
            }
            button type="submit" { "Search" }
        }
        @match found {
            Err(refused) => p.notice.error role="alert" data-testid="search-refused" { (refused) },
            Ok(page) if page.results.is_empty() => p data-testid="search-empty" { "No company matches." },
            Ok(page) => {
                p { a href=(with_query("/dashboard/search.csv")) data-testid="search-csv" { "Download every match as CSV" } }
                div.table-wrap {
                    table data-testid="search-results" {
                        thead { tr {
                            th { "Company" } th { "Industry" } th { "Size" } th.num { "Employees" }
                            th.num { "Followers" } th { "Headquarters" } th { "Fetched" }
                        } }
                        tbody {
                            @for row in &page.results {
                                tr {
                                    td { a href=(row.final_li_url) rel="noopener noreferrer" {
                                        (row.company_name.as_deref().unwrap_or(&row.final_li_url)) } }
                                    td { (row.industries.as_deref().unwrap_or_default()) }
                                    td { (row.company_size.as_deref().unwrap_or_default()) }
                                    td.num { (row.employee_count_on_li.map(|n| n.to_string()).unwrap_or_default()) }
                                    td.num { (row.follower_count.map(|n| n.to_string()).unwrap_or_default()) }
                                    td { (place(row)) }
                                    td { (row.fetched_at.map(|at| at.to_string()).unwrap_or_default()) }
                                }
                            }
                        }
                    }
                }
                @if let Some(next) = &page.next_cursor {
                    p { a data-testid="search-next" href=(next_link(visitor, asked, next)) { "Next page" } }
                }
            }
        }
    };
    layout("Search", Some(visitor), "/dashboard/search", &body)
}

/// `City, Region, CC` of a row's headquarters, what it has of them.
fn place(row: &CompanyRow) -> String {
    let Some(hq) = &row.headquarters else {
        return String::new();
    };
    [&hq.locality, &hq.region, &hq.country]
        .into_iter()
        .flatten()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

fn next_link(visitor: &Visitor, asked: &Asked, cursor: &str) -> String {
    let mut pairs: Vec<(&str, &str)> = asked.0.iter().map(|(n, v)| (*n, v.as_str())).collect();
    pairs.push(("cursor", cursor));
    visitor.link(&format!(
        "/dashboard/search?{}",
        serde_urlencoded::to_string(&pairs).unwrap_or_default()
    ))
}

#[cfg(test)]
mod tests {
    use super::Downloads;

    #[test]
    fn an_account_has_one_download_at_a_time_and_others_are_not_held_up() {
        let downloads = std::sync::Arc::new(Downloads::default());
        let first = downloads.start(1).expect("none running");
        assert!(downloads.start(1).is_none(), "one at a time");
        let other = downloads.start(2).expect("another account's own");
        drop(first);
        assert!(downloads.start(1).is_some(), "free again once it ended");
        drop(other);
    }
}
