//! Watches (`/dashboard/watches`): add and remove watches, see each one's last check and delivery, reveal or
//! rotate the webhook secret; and a page's history (`/dashboard/history?liUrl=…`) as a chart of followers and
//! employees over time with its changes marked.
//!
//! Validation, bounds and prices are the API's: the form goes through [`WatchRequest::from_json`], the periods
//! offered are within [`WATCH_EVERY_HOURS`], a history is billed by [`company_lookup::LookupService::history`].

use api_contract::{MAX_BODY_BYTES, WATCH_EVERY_HOURS, WatchRequest};
use company_lookup::Caller;
use company_model::CompanyHistory;
use company_watch::Watches;
use credit_ledger::HISTORY_PRICE;
use http::{Request, StatusCode};
use maud::{Markup, html};
use page_url::PageUrl;
use watch_store::{Watch, WatchId};

use crate::Parts;
use crate::chart::history_chart;
use crate::error::{Page, PageError, lookup_refusal};
use crate::forms::read_session_form_up_to;
use crate::layout::{csrf, layout, tell_when_to_retry, time};
use crate::respond::{html, query_param, redirect};
use crate::visitor::Visitor;

/// Watches listed on the page.
const LISTED: u32 = 100;
/// The periods the form offers, in hours (each inside [`WATCH_EVERY_HOURS`]).
const PERIODS: [u32; 4] = [24, 72, 168, 720];

fn watches(parts: &Parts) -> Result<&std::sync::Arc<Watches>, PageError> {
    parts.watches.as_ref().ok_or(PageError::NotFound)
}

/// What the page says besides the list: a refusal, or a secret shown once.
enum Notice {
    Refused(String),
    Secret(String),
}

/// `GET /dashboard/watches`.
pub(crate) async fn page(parts: &Parts, visitor: &Visitor) -> Page {
    render(parts, visitor, StatusCode::OK, None).await
}

async fn render(
    parts: &Parts,
    visitor: &Visitor,
    status: StatusCode,
    notice: Option<Notice>,
) -> Page {
    let listed = watches(parts)?
        .list(visitor.live(), None, LISTED)
        .await
        .map_err(crate::error::internal)?;
    Ok(html(
        status,
        watches_markup(visitor, &listed, notice.as_ref()),
    ))
}

/// `POST /dashboard/watches`: watches the pages in the form's text.
pub(crate) async fn add<B>(parts: &Parts, visitor: &Visitor, request: Request<B>) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let watches = watches(parts)?;
    let form = read_session_form_up_to(parts, visitor, request, MAX_BODY_BYTES).await?;
    let urls: Vec<&str> = form
        .get("urls")
        .map_or("", String::as_str)
        .split_whitespace()
        .collect();
    let every_hours: f64 = form
        .get("every_hours")
        .and_then(|h| h.trim().parse().ok())
        .unwrap_or(f64::NAN);
    let body = serde_json::json!({
        "liUrls": urls,
        "everyHours": every_hours,
        "webhookUrl": form.get("webhook_url").map_or("", |u| u.trim()),
    });
    // The same validation, and so the same messages, as a watch sent to the API.
    let parsed = match WatchRequest::from_json(
        body.to_string().as_bytes(),
        &parts.domain,
        watches.allow_private(),
    ) {
        Ok(parsed) => parsed,
        Err(invalid) => {
            return render(
                parts,
                visitor,
                StatusCode::BAD_REQUEST,
                Some(Notice::Refused(invalid.to_string())),
            )
            .await;
        }
    };
    match watches.create(visitor.live(), &parsed).await {
        Ok(_) => Ok(redirect(&visitor.link("/dashboard/watches"))),
        // The account's quota: 409, as the API answers; none was created.
        Err(at_quota @ company_watch::WatchError::TooManyWatches { .. }) => {
            let message = crate::error::sentence(&at_quota);
            render(
                parts,
                visitor,
                StatusCode::CONFLICT,
                Some(Notice::Refused(message)),
            )
            .await
        }
        Err(other) => Err(crate::error::internal(other)),
    }
}

/// `POST /dashboard/watches/{id}/remove`.
pub(crate) async fn remove<B>(
    parts: &Parts,
    visitor: &Visitor,
    request: Request<B>,
    id: &str,
) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let watches = watches(parts)?;
    read_session_form_up_to(parts, visitor, request, 4096).await?;
    let id = id
        .parse()
        .ok()
        .filter(|n: &i64| *n > 0)
        .map(WatchId)
        .ok_or(PageError::NotFound)?;
    watches
        .delete(visitor.live(), id)
        .await
        .map_err(crate::error::internal)?
        .ok_or(PageError::NotFound)?;
    Ok(redirect(&visitor.link("/dashboard/watches")))
}

/// `POST /dashboard/watches/secret` (`rotate` false) or `/secret/rotate`: the page with the secret shown.
pub(crate) async fn secret<B>(
    parts: &Parts,
    visitor: &Visitor,
    request: Request<B>,
    rotate: bool,
) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let webhooks = parts.webhooks.as_ref().ok_or(PageError::NotFound)?;
    read_session_form_up_to(parts, visitor, request, 4096).await?;
    let secret = if rotate {
        webhooks.rotate_secret(visitor.live()).await
    } else {
        webhooks.secret(visitor.live()).await
    }
    .map_err(crate::error::internal)?;
    render(parts, visitor, StatusCode::OK, Some(Notice::Secret(secret))).await
}

/// `GET /dashboard/history?liUrl=…`: the form, and with a URL the page's history (billed as the API bills it).
pub(crate) async fn history(parts: &Parts, visitor: &Visitor, query: Option<&str>) -> Page {
    let asked = query_param(query, "liUrl").filter(|u| !u.trim().is_empty());
    let Some(asked) = asked else {
        return Ok(html(StatusCode::OK, history_markup(visitor, "", None)));
    };
    let page = match PageUrl::parse_submitted(asked.trim(), &parts.domain) {
        Ok(page) => page,
        Err(error) => {
            let told = Err(format!(
                "{}: {}",
                crate::error::capitalized(&error.to_string()),
                error.fix()
            ));
            return Ok(html(
                StatusCode::BAD_REQUEST,
                history_markup(visitor, &asked, Some(told)),
            ));
        }
    };
    let caller = Caller {
        tenant: visitor.live(),
        key_id: None,
    };
    let found = parts
        .lookup
        .history(caller, &page, jiff::Timestamp::MIN, jiff::Timestamp::MAX)
        .await;
    let refused = match found {
        Ok(Some(outcome)) => {
            let shown = Some(Ok(outcome.history));
            return Ok(html(StatusCode::OK, history_markup(visitor, &asked, shown)));
        }
        Ok(None) => {
            let shown = Some(Err(
                "No snapshot of this page is stored yet, so it has no history: look it up \
                                  once (Try it) or watch it, and its history starts then."
                    .to_owned(),
            ));
            return Ok(html(
                StatusCode::NOT_FOUND,
                history_markup(visitor, &asked, shown),
            ));
        }
        Err(refused) => lookup_refusal(refused, "Ask an admin to grant credits (Admin page).")?,
    };
    let mut response = html(
        refused.status(),
        history_markup(visitor, &asked, Some(Err(refused.to_string()))),
    );
    tell_when_to_retry(&mut response, &refused);
    Ok(response)
}

fn watches_markup(visitor: &Visitor, listed: &[Watch], notice: Option<&Notice>) -> Markup {
    let body = html! {
        h1 { "Watches" }
        p { "A watch looks its page up live on a schedule (1 credit each time it resolves, billed to "
            (visitor.account.name) ") and, when the page changed, POSTs a signed " code { "company.changed" }
            " event to your webhook. See docs/api.md, \"Watches and webhooks\", to verify the signature." }
        @match notice {
            Some(Notice::Refused(message)) => p.notice.error role="alert" { (message) },
            Some(Notice::Secret(secret)) => div.notice.ok role="status" {
                p { "Webhook secret (keep it on your receiver; it signs every event):" }
                code data-testid="secret" { (secret) }
            },
            None => {},
        }
        form.card method="post" action=(visitor.link("/dashboard/watches")) {
            (csrf(visitor))
            label for="watch-urls" { "Page URLs, one per line" }
            textarea #watch-urls name="urls" required placeholder="https://www.linkedin.com/company/google" {}
            div.row {
                div {
                    label for="watch-every" { "Check every" }
                    select #watch-every name="every_hours" {
                        @for hours in PERIODS.into_iter().filter(|h| WATCH_EVERY_HOURS.contains(h)) {
                            option value=(hours) { (period(hours)) }
                        }
                    }
                }
                div {
                    label for="watch-webhook" { "Webhook URL (https)" }
                    input #watch-webhook type="url" name="webhook_url" required placeholder="https://example.com/hooks/company";
                }
                button type="submit" { "Watch" }
            }
        }
        div.row {
            form.inline method="post" action=(visitor.link("/dashboard/watches/secret")) {
                (csrf(visitor)) button.link type="submit" { "Show the webhook secret" }
            }
            form.inline method="post" action=(visitor.link("/dashboard/watches/secret/rotate")) {
                (csrf(visitor)) button.link type="submit" { "Rotate the secret" }
            }
        }
        @if listed.is_empty() {
            p { "No watches yet." }
        } @else {
            table data-testid="watches" {
                thead { tr { th { "Page" } th { "Every" } th { "Webhook" } th { "Status" } th { "Last check" } th { "Last change" } th { "Last delivery" } th {} } }
                tbody {
                    @for watch in listed {
                        tr {
                            td { a href=(visitor.link(&format!("/dashboard/history?liUrl={}", form_urlencoded::byte_serialize(watch.url.as_str().as_bytes()).collect::<String>()))) { (watch.url) } }
                            td { (period(watch.every_hours)) }
                            td { (watch.webhook_url) }
                            td {
                                @if let Some(reason) = &watch.disabled_reason {
                                    span.notice.error { "disabled: " (reason) }
                                } @else { "active" }
                            }
                            td {
                                @if let Some(at) = watch.last_checked_at { (time(at)) } @else { "next " (time(watch.next_check_at)) }
                                @if let Some(error) = &watch.last_check_error { " (" (error.replace('_', " ")) ")" }
                            }
                            td { @if let Some(at) = watch.last_change_at { (time(at)) } }
                            td {
                                @if let Some(delivery) = &watch.last_delivery {
                                    (time(delivery.at)) " · "
                                    @match (&delivery.error, delivery.status) {
                                        (None, Some(status)) => { "delivered (" (status) ")" },
                                        (Some(error), _) => { "failed: " (error) },
                                        (None, None) => { "delivered" },
                                    }
                                }
                            }
                            td {
                                form.inline method="post" action=(visitor.link(&format!("/dashboard/watches/{}/remove", watch.id))) {
                                    (csrf(visitor)) button.link type="submit" { "Remove" }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    layout("Watches", Some(visitor), "/dashboard/watches", &body)
}

fn period(hours: u32) -> String {
    match hours {
        24 => "day".to_owned(),
        168 => "week".to_owned(),
        h if h % 24 == 0 => format!("{} days", h / 24),
        h => format!("{h} hours"),
    }
}

fn history_markup(
    visitor: &Visitor,
    asked: &str,
    shown: Option<Result<CompanyHistory, String>>,
) -> Markup {
    let body = html! {
        h1 { "History" }
        p { "Followers and employees of a page over every fetch the service stored, with its changes marked. "
            "Showing one costs " (HISTORY_PRICE) " credits, as the API's history does (nothing when there is none)." }
        form.card method="get" action="/dashboard/history" {
            @if visitor.account.id != visitor.user.account { input type="hidden" name="account" value=(visitor.account.id.0); }
            label for="history-url" { "Page URL" }
            div.row {
                input #history-url type="text" name="liUrl" required value=(asked) placeholder="https://www.linkedin.com/company/google";
                button type="submit" { "Show" }
            }
        }
        @match shown {
            Some(Err(message)) => p.notice.error role="alert" { (message) },
            Some(Ok(history)) => {
                h2 { (history.final_li_url) }
                @if history.points.is_empty() { p { "No fetches stored yet." } } @else {
                    (history_chart(&history))
                }
                @if history.changes.is_empty() { p { "No changes seen." } } @else {
                    table data-testid="changes" {
                        thead { tr { th { "When" } th { "Field" } th { "Before" } th { "After" } } }
                        tbody {
                            @for change in &history.changes {
                                tr { td { (time(change.fetched_at)) } td { (change.field) } td { (shown_value(&change.before)) } td { (shown_value(&change.after)) } }
                            }
                        }
                    }
                }
            },
            None => {},
        }
    };
    layout("History", Some(visitor), "/dashboard/watches", &body)
}

/// A changed member's value, short: strings as they are, other JSON as text, cut to 200 characters.
fn shown_value(value: &serde_json::Value) -> String {
    let text = match value {
        serde_json::Value::Null => "—".to_owned(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}
