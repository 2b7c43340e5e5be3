//! Credits (`/dashboard/credits`): the balance, the ledger 50 rows a page, and every row as CSV.

use std::collections::HashMap;

use api_keys::KeyRecord;
use bytes::Bytes;
use credit_ledger::{EntryKind, LIVE_PRICE, LedgerEntry, STORED_PRICE};
use http::{HeaderValue, StatusCode, header};
use http_serve::Response;
use maud::{Markup, html};

use crate::Parts;
use crate::error::{Page, internal};
use crate::layout::{key_label, layout, time};
use crate::respond::{html, query_param, security_headers};
use crate::visitor::Visitor;

/// Ledger rows per page.
const LEDGER_PAGE: u32 = 50;
/// Ledger rows read per round trip for the CSV.
const CSV_BATCH: u32 = 1000;

/// `GET /dashboard/credits[?before=<id>]`.
pub(crate) async fn page(parts: &Parts, visitor: &Visitor, query: Option<&str>) -> Page {
    let before = query_param(query, "before").and_then(|b| b.parse().ok());
    let entries: Vec<LedgerEntry> = parts
        .accounts
        .ledger()
        .entries(visitor.live(), before, LEDGER_PAGE + 1)
        .await?;
    let more = entries.len() > LEDGER_PAGE as usize;
    let entries = &entries[..entries.len().min(LEDGER_PAGE as usize)];
    let keys = key_names(parts, visitor).await?;
    Ok(html(
        StatusCode::OK,
        credits_markup(visitor, entries, &keys, before.is_some(), more),
    ))
}

/// The account's keys by id, to name the key of each charge.
async fn key_names(
    parts: &Parts,
    visitor: &Visitor,
) -> Result<HashMap<i64, KeyRecord>, crate::error::PageError> {
    Ok(parts
        .accounts
        .keys()
        .of_account(visitor.account.id)
        .await?
        .into_iter()
        .map(|k| (k.id.0, k))
        .collect())
}

fn kind_label(entry: &LedgerEntry) -> &'static str {
    match entry.kind {
        EntryKind::Grant => "grant",
        EntryKind::Charge => "charge",
    }
}

/// `GET /dashboard/credits.csv`: every ledger row of the account, newest first.
pub(crate) async fn csv(parts: &Parts, visitor: &Visitor) -> Page {
    let keys = key_names(parts, visitor).await?;
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    writer
        .write_record([
            "id",
            "time",
            "kind",
            "key_id",
            "key",
            "urls_requested",
            "urls_returned",
            "mode",
            "amount",
            "balance_after",
            "note",
        ])
        .map_err(internal)?;
    let mut before = None;
    loop {
        let page = parts
            .accounts
            .ledger()
            .entries(visitor.live(), before, CSV_BATCH)
            .await?;
        for entry in &page {
            let charge = entry.charge.as_ref();
            let key_id = charge.and_then(|c| c.key_id);
            let mut cells = [
                entry.id.to_string(),
                entry.at.to_string(),
                kind_label(entry).to_owned(),
                key_id.map(|id| id.to_string()).unwrap_or_default(),
                key_id
                    .and_then(|id| keys.get(&id))
                    .map(key_label)
                    .unwrap_or_default(),
                charge
                    .map(|c| c.urls_requested.to_string())
                    .unwrap_or_default(),
                charge
                    .map(|c| c.urls_returned.to_string())
                    .unwrap_or_default(),
                charge
                    .map(|c| if c.live { "live" } else { "stored" }.to_owned())
                    .unwrap_or_default(),
                entry.delta.to_string(),
                entry.balance_after.to_string(),
                entry.note.clone().unwrap_or_default(),
            ];
            // A note or a key's name is someone's text: it opens as text in a spreadsheet, never as a formula.
            bulk_jobs::output::CsvCells::SpreadsheetSafe.apply(&mut cells);
            writer.write_record(&cells).map_err(internal)?;
        }
        match page.last() {
            Some(last) if page.len() == CSV_BATCH as usize => before = Some(last.id),
            _ => break,
        }
    }
    let body = writer.into_inner().map_err(|e| internal(e.into_error()))?;
    let mut response = Response::new(http_serve::full(Bytes::from(body)));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    let filename = format!(
        "attachment; filename=\"ledger-account-{}.csv\"",
        visitor.account.id.0
    );
    if let Ok(value) = HeaderValue::from_str(&filename) {
        headers.insert(header::CONTENT_DISPOSITION, value);
    }
    security_headers(headers);
    Ok(response)
}

fn credits_markup(
    visitor: &Visitor,
    entries: &[LedgerEntry],
    keys: &HashMap<i64, KeyRecord>,
    older_page: bool,
    more: bool,
) -> Markup {
    let body = html! {
        h1 { "Credits" }
        section.card {
            h2 { "Balance of " (visitor.account.name) }
            p.balance data-testid="balance" { (visitor.account.balance) " credits" }
            p.hint {
                @if let Some(threshold) = visitor.account.low_balance_threshold {
                    "Your webhook endpoints are told when the balance falls below " (threshold) " credits. "
                }
                a href=(visitor.link("/dashboard/webhooks")) { "Set the low-balance alert" } "."
            }
            p.hint { (LIVE_PRICE) " credit per company fetched live, " (STORED_PRICE) " per company served with a freshness window; URLs that cannot be resolved cost nothing." }
        }
        div.row {
            h2 { "Ledger" }
            a.button.secondary href=(visitor.link("/dashboard/credits.csv")) download { "Download CSV" }
        }
        @if entries.is_empty() {
            p { "No entries." }
        } @else {
            div.table-wrap {
                table data-testid="ledger" {
                    thead { tr {
                        th { "Time" } th { "Entry" } th { "Key" } th.num { "URLs requested" } th.num { "Returned" }
                        th { "Live or stored" } th.num { "Amount" } th.num { "Balance after" }
                    } }
                    tbody {
                        @for entry in entries {
                            tr {
                                td { (time(entry.at)) }
                                @if let Some(charge) = &entry.charge {
                                    td { (kind_label(entry)) }
                                    td { (charge.key_id.and_then(|id| keys.get(&id)).map_or_else(|| "—".to_owned(), key_label)) }
                                    td.num { (charge.urls_requested) }
                                    td.num { (charge.urls_returned) }
                                    td { (if charge.live { "live" } else { "stored" }) }
                                } @else {
                                    td { (kind_label(entry)) }
                                    td colspan="4" { (entry.note.as_deref().unwrap_or_default()) }
                                }
                                td.num { (entry.delta) }
                                td.num { (entry.balance_after) }
                            }
                        }
                    }
                }
            }
            nav.pager aria-label="Ledger pages" {
                @if older_page { a href=(visitor.link("/dashboard/credits")) { "← Newest" } }
                @if more {
                    @if let Some(last) = entries.last() {
                        a href=(visitor.link(&format!("/dashboard/credits?before={}", last.id))) { "Older →" }
                    }
                }
            }
        }
    };
    layout("Credits", Some(visitor), "/dashboard/credits", &body)
}
