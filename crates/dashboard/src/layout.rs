//! What every page shares: the frame with its tabs, the CSRF field, the admin's account picker, the error page
//! and how times and keys are written. maud escapes every spliced value, so names, emails and notes typed by
//! users cannot inject markup.

use api_contract::{Include, Includes};
use api_keys::KeyRecord;
use maud::{DOCTYPE, Markup, html};

use http::{HeaderValue, header};
use http_serve::Response;

use crate::error::PageError;
use crate::respond;
use crate::visitor::Visitor;

/// How pages write a time: `2026-11-23 10:12 UTC`.
pub(crate) fn time(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%d %H:%M UTC").to_string()
}

/// How lists name a key: `name (cdk_AbCd1234…wxyz)`.
pub(crate) fn key_label(key: &KeyRecord) -> String {
    match &key.name {
        Some(name) => format!("{name} ({})", key.masked()),
        None => key.masked(),
    }
}

/// The hidden field every form of a session carries.
pub(crate) fn csrf(visitor: &Visitor) -> Markup {
    html! { input type="hidden" name="csrf" value=(visitor.session.csrf_token); }
}

/// One checkbox per part a request may include ([`Include::ALL`]), named `include_<part>`, `chosen` ones ticked;
/// `id` prefixes their element ids.
pub(crate) fn include_choices(id: &str, chosen: Includes) -> Markup {
    html! {
        @for part in Include::ALL {
            @let box_id = format!("{id}-include-{}", part.as_str());
            div.check {
                input #(box_id) type="checkbox" name=(format!("include_{}", part.as_str()))
                    checked[chosen.contains(part)];
                label for=(box_id) { (include_label(part)) }
            }
        }
    }
}

/// The parts a form's [`include_choices`] ticked.
pub(crate) fn chosen_includes(form: &std::collections::HashMap<String, String>) -> Includes {
    let parts: Vec<Include> = Include::ALL
        .into_iter()
        .filter(|part| form.contains_key(&format!("include_{}", part.as_str())))
        .collect();
    Includes::of(&parts)
}

/// How the forms name a part, with what it costs.
fn include_label(part: Include) -> &'static str {
    match part {
        Include::JobCount => {
            "Open-jobs count (one more request to the network per company fetched live; no extra credits)"
        }
    }
}

/// The page frame: head, tabs (for a signed-in visitor), the admin's account picker, then `body`.
pub(crate) fn layout(
    title: &str,
    visitor: Option<&Visitor>,
    current: &str,
    body: &Markup,
) -> Markup {
    let tabs = [
        ("Keys", "/dashboard/keys"),
        ("Credits", "/dashboard/credits"),
        ("Usage", "/dashboard/usage"),
        ("Try it", "/dashboard/try"),
        ("Jobs", "/dashboard/jobs"),
        ("Search", "/dashboard/search"),
        ("Watches", "/dashboard/watches"),
        ("Webhooks", "/dashboard/webhooks"),
    ];
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · company-data" }
                link rel="stylesheet" href="/dashboard/assets/app.css";
                script src="/dashboard/assets/app.js" defer {}
            }
            body {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    div.bar {
                        a.brand href="/dashboard" { "company-data" }
                        @if let Some(visitor) = visitor {
                            nav aria-label="Dashboard" {
                                @for (label, path) in tabs {
                                    a href=(visitor.link(path)) aria-current=[(path == current).then_some("page")] { (label) }
                                }
                                @if visitor.user.admin {
                                    a href="/dashboard/admin" aria-current=[("/dashboard/admin" == current).then_some("page")] { "Admin" }
                                }
                            }
                            span.who { (visitor.user.email) }
                            form method="post" action="/dashboard/sign-out" {
                                (csrf(visitor))
                                button.link type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main #main {
                    @if let Some(visitor) = visitor {
                        @if visitor.user.admin && current != "/dashboard/admin" {
                            (account_picker(visitor, current))
                        }
                    }
                    (body)
                }
            }
        }
    }
}

/// An admin's choice of the account the page shows (a GET form: no state changes).
fn account_picker(visitor: &Visitor, current: &str) -> Markup {
    html! {
        form.row method="get" action=(current) {
            div {
                label for="account-picker" { "Account" }
                select #account-picker name="account" {
                    @for account in &visitor.all_accounts {
                        option value=(account.id.0) selected[account.id == visitor.account.id] {
                            (account.name) " (" (account.balance) " credits)"
                        }
                    }
                }
            }
            button.secondary type="submit" { "Show" }
        }
    }
}

/// The page shown for any failure; `signed_in_area` links back into the dashboard.
pub(crate) fn error_page(message: &str, signed_in_area: bool) -> Markup {
    let body = html! {
        div.card.narrow {
            h1 { "That did not work" }
            p { (message) }
            @if signed_in_area {
                p { a href="/dashboard" { "Back to the dashboard" } }
            }
        }
    };
    layout("Error", None, "", &body)
}

/// Gives a response to a failure that asks the client to wait (429, 503) its `Retry-After`
/// ([`respond::retry_after`]), whether it shows the error page or a form.
pub(crate) fn tell_when_to_retry(response: &mut Response, error: &PageError) {
    if let Some(wait) = error.retry_after() {
        respond::retry_after(response, wait);
    }
}

/// A failure as its error page, with its status (and `Allow` on a 405); `in_dashboard` offers a link back into
/// the dashboard. The one place where the dashboard's failures become responses.
pub(crate) fn error_response(error: PageError, in_dashboard: bool) -> Response {
    if let PageError::Internal(source) = &error {
        tracing::error!(error = %source, "dashboard request failed");
    }
    let mut response = respond::html(error.status(), error_page(&error.to_string(), in_dashboard));
    tell_when_to_retry(&mut response, &error);
    if let PageError::MethodNotAllowed { allow } = error
        && let Ok(allow) = HeaderValue::from_str(&allow)
    {
        response.headers_mut().insert(header::ALLOW, allow);
    }
    response
}
