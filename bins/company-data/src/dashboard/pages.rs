//! The dashboard's HTML. maud escapes every spliced value, so names, emails and notes typed by users cannot
//! inject markup.

use std::collections::HashMap;

use api_keys::KeyRecord;
use credit_ledger::{Credits, DailyUsage, EntryKind, LedgerEntry};
use dashboard_auth::{Invitation, User};
use maud::{DOCTYPE, Markup, html};

use super::{TRY_WINDOWS, Visitor, chart};

/// A message shown at the top of the admin page.
pub(super) enum Notice {
    Ok(String),
    Error(String),
    /// An invitation link, shown once.
    Invited {
        email: String,
        path: String,
    },
}

/// What the Try it form was sent with.
pub(super) struct TryInput<'a> {
    pub(super) urls: &'a [String],
    pub(super) window: u32,
    /// The key picked, if it is one of the account's active keys.
    pub(super) key: Option<i64>,
}

/// What a Try it request returned.
pub(super) struct TryResult {
    pub(super) json: String,
    pub(super) charged: Credits,
    pub(super) remaining: Credits,
}

fn time(at: jiff::Timestamp) -> String {
    at.strftime("%Y-%m-%d %H:%M UTC").to_string()
}

/// How lists name a key: `name (cdk_AbCd1234…wxyz)`.
pub(super) fn key_label(key: &KeyRecord) -> String {
    match &key.name {
        Some(name) => format!("{name} ({})", key.masked()),
        None => key.masked(),
    }
}

pub(super) fn kind_label(entry: &LedgerEntry) -> &'static str {
    match entry.kind {
        EntryKind::Grant => "grant",
        EntryKind::Charge => "charge",
    }
}

/// `path` for the account the visitor is looking at (`?account=` only when an admin looks at another one).
fn link(visitor: &Visitor, path: &str) -> String {
    if visitor.account.id == visitor.user.account {
        path.to_owned()
    } else {
        let separator = if path.contains('?') { '&' } else { '?' };
        format!("{path}{separator}account={}", visitor.account.id.0)
    }
}

fn csrf(visitor: &Visitor) -> Markup {
    html! { input type="hidden" name="csrf" value=(visitor.session.csrf_token); }
}

fn layout(title: &str, visitor: Option<&Visitor>, current: &str, body: &Markup) -> Markup {
    let tabs = [
        ("Keys", "/dashboard/keys"),
        ("Credits", "/dashboard/credits"),
        ("Usage", "/dashboard/usage"),
        ("Try it", "/dashboard/try"),
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
                                    a href=(link(visitor, path)) aria-current=[(path == current).then_some("page")] { (label) }
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

pub(super) fn error_page(message: &str, signed_in_area: bool) -> Markup {
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

pub(super) fn sign_in_page(email: Option<&str>, error: Option<&str>, csrf: &str) -> Markup {
    let body = html! {
        div.card.narrow {
            h1 { "Sign in" }
            @if let Some(error) = error {
                p.notice.error role="alert" { (error) }
            }
            form method="post" action="/dashboard/sign-in" {
                input type="hidden" name="csrf" value=(csrf);
                label for="email" { "Email" }
                input #email type="email" name="email" autocomplete="username" required value=[email];
                label for="password" { "Password" }
                input #password type="password" name="password" autocomplete="current-password" required;
                button type="submit" { "Sign in" }
            }
            p.hint { "No account? Ask your admin for an invitation, or run "
                code { "company-data accounts create --email you@example.com" } " on the server." }
        }
    };
    layout("Sign in", None, "", &body)
}

pub(super) fn invitation_page(invitation: Option<&Invitation>, error: Option<&str>) -> Markup {
    let body = html! {
        div.card.narrow {
            @if let Some(invitation) = invitation {
                h1 { "Choose a password" }
                p { "You were invited to manage an account as " strong { (invitation.email) } "." }
                @if let Some(error) = error {
                    p.notice.error role="alert" { (error) }
                }
                form method="post" {
                    label for="password" { "Password" }
                    input #password type="password" name="password" autocomplete="new-password"
                        minlength=(dashboard_auth::MIN_PASSWORD_CHARS) required aria-describedby="password-hint";
                    p.hint #password-hint { "At least " (dashboard_auth::MIN_PASSWORD_CHARS) " characters." }
                    label for="confirm" { "The same password again" }
                    input #confirm type="password" name="confirm" autocomplete="new-password" required;
                    button type="submit" { "Create my sign-in" }
                }
            } @else {
                h1 { "This invitation is not valid any more" }
                p { "It was used already or it expired. Ask your admin for a new one." }
            }
        }
    };
    layout("Invitation", None, "", &body)
}

pub(super) fn keys_page(
    visitor: &Visitor,
    keys: &[KeyRecord],
    created: Option<(&str, &KeyRecord)>,
) -> Markup {
    let body = html! {
        h1 { "API keys" }
        @if let Some((secret, record)) = created {
            div.notice.warn role="status" {
                p { strong { "Copy the key " (record.name.as_deref().unwrap_or_default()) " now." }
                    " It is shown this once: the service keeps only a hash of it and cannot show it again." }
                div.secret {
                    label.visually-hidden for="new-key" { "New API key" }
                    input #new-key type="text" readonly value=(secret) data-testid="new-key";
                    button type="button" data-copy="new-key" hidden { "Copy" }
                }
                p.hint { "Send it as " code { "Authorization: Bearer <key>" } "." }
            }
        }
        section.card aria-labelledby="create-heading" {
            h2 #create-heading { "Create a key" }
            form.row method="post" action=(link(visitor, "/dashboard/keys")) {
                (csrf(visitor))
                div {
                    label for="key-name" { "Name" }
                    input #key-name type="text" name="name" required maxlength="100" placeholder="e.g. CRM sync";
                }
                button type="submit" { "Create key" }
            }
        }
        h2 { "Keys of " (visitor.account.name) }
        @if keys.is_empty() {
            p { "No keys yet." }
        } @else {
            div.table-wrap {
                table {
                    thead { tr { th { "Name" } th { "Key" } th { "Created" } th { "Last used" } th { "Status" } th { span.visually-hidden { "Actions" } } } }
                    tbody {
                        @for key in keys.iter().rev() {
                            tr {
                                td { (key.name.as_deref().unwrap_or("—")) }
                                td { code { (key.masked()) } }
                                td { (time(key.created_at)) }
                                td { (key.last_used_at.map_or_else(|| "never".to_owned(), time)) }
                                @if let Some(revoked) = key.revoked_at {
                                    td.status-revoked { "revoked " (time(revoked)) }
                                    td {}
                                } @else {
                                    td.status-active { "active" }
                                    td { a href=(link(visitor, &format!("/dashboard/keys/{}/revoke", key.id.0))) aria-label=(format!("Revoke {}", key_label(key))) { "Revoke…" } }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    layout("Keys", Some(visitor), "/dashboard/keys", &body)
}

pub(super) fn revoke_page(visitor: &Visitor, key: &KeyRecord) -> Markup {
    let body = html! {
        div.card.narrow {
            h1 { "Revoke " (key_label(key)) "?" }
            @if key.revoked_at.is_some() {
                p { "This key is revoked already." }
                a href=(link(visitor, "/dashboard/keys")) { "Back to the keys" }
            } @else {
                p { "Requests with this key will be refused (401) within seconds, on every server. This cannot be undone." }
                form method="post" action=(link(visitor, &format!("/dashboard/keys/{}/revoke", key.id.0))) {
                    (csrf(visitor))
                    button.danger type="submit" { "Revoke the key" }
                    " "
                    a.button.secondary href=(link(visitor, "/dashboard/keys")) { "Cancel" }
                }
            }
        }
    };
    layout("Revoke key", Some(visitor), "/dashboard/keys", &body)
}

pub(super) fn credits_page(
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
            p.hint { "1 credit per company fetched live, 0.5 per company served from a stored snapshot; URLs that cannot be resolved cost nothing." }
        }
        div.row {
            h2 { "Ledger" }
            a.button.secondary href=(link(visitor, "/dashboard/credits.csv")) download { "Download CSV" }
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
                                    td { "charge" }
                                    td { (charge.key_id.and_then(|id| keys.get(&id)).map_or_else(|| "—".to_owned(), key_label)) }
                                    td.num { (charge.urls_requested) }
                                    td.num { (charge.urls_returned) }
                                    td { (if charge.live { "live" } else { "stored" }) }
                                } @else {
                                    td { "grant" }
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
                @if older_page { a href=(link(visitor, "/dashboard/credits")) { "← Newest" } }
                @if more {
                    @if let Some(last) = entries.last() {
                        a href=(link(visitor, &format!("/dashboard/credits?before={}", last.id))) { "Older →" }
                    }
                }
            }
        }
    };
    layout("Credits", Some(visitor), "/dashboard/credits", &body)
}

pub(super) fn usage_page(
    visitor: &Visitor,
    first: jiff::civil::Date,
    today: jiff::civil::Date,
    days: &[DailyUsage],
) -> Markup {
    let series = chart::Series::fill(first, today, days);
    // live requests, stored requests, live companies, stored companies, unresolved URLs
    let totals = days.iter().fold([0u64; 5], |t, d| {
        [
            t[0] + d.live.requests,
            t[1] + d.stored.requests,
            t[2] + d.live.returned,
            t[3] + d.stored.returned,
            t[4] + d.live.unresolved + d.stored.unresolved,
        ]
    });
    let credits = days
        .iter()
        .map(|d| d.live.credits.millis() + d.stored.credits.millis())
        .sum::<i64>();
    let body = html! {
        h1 { "Usage, last 30 days" }
        p.hint { "Per UTC day, from the ledger." }
        p data-testid="usage-totals" {
            (totals[0] + totals[1]) " requests (" (totals[0]) " live, " (totals[1]) " stored), "
            (totals[2] + totals[3]) " companies returned, " (totals[4]) " unresolved, "
            (Credits::from_millis(credits)) " credits."
        }
        ul.legend {
            li { span.swatch.live {} "live" }
            li { span.swatch.stored {} "stored" }
            li { span.swatch.unresolved {} "unresolved" }
        }
        div.charts {
            (chart::bars("Requests", &series, chart::Measure::Requests))
            (chart::bars("Companies returned, and unresolved URLs", &series, chart::Measure::Companies))
            (chart::bars("Credits charged", &series, chart::Measure::Credits))
        }
        details {
            summary { "The numbers, day by day" }
            div.table-wrap {
                table {
                    thead { tr {
                        th { "Day (UTC)" } th.num { "Live requests" } th.num { "Stored requests" }
                        th.num { "Live companies" } th.num { "Stored companies" } th.num { "Unresolved" } th.num { "Credits" }
                    } }
                    tbody {
                        @for day in days.iter().rev() {
                            tr {
                                td { (day.day) }
                                td.num { (day.live.requests) } td.num { (day.stored.requests) }
                                td.num { (day.live.returned) } td.num { (day.stored.returned) }
                                td.num { (day.live.unresolved + day.stored.unresolved) }
                                td.num { (Credits::from_millis(day.live.credits.millis() + day.stored.credits.millis())) }
                            }
                        }
                    }
                }
            }
        }
    };
    layout("Usage", Some(visitor), "/dashboard/usage", &body)
}

pub(super) fn try_page(
    visitor: &Visitor,
    keys: &[KeyRecord],
    input: Option<&TryInput<'_>>,
    outcome: Option<Result<TryResult, String>>,
) -> Markup {
    let window = input.map_or(24, |i| i.window);
    let urls = input.map(|i| i.urls.join("\n")).unwrap_or_default();
    let body = html! {
        h1 { "Try it" }
        p { "Runs a real request as the key you pick: it is billed to " (visitor.account.name) " and shows in the ledger." }
        form.card method="post" action=(link(visitor, "/dashboard/try")) {
            (csrf(visitor))
            label for="try-urls" { "Page URLs, one per line (at most 200)" }
            textarea #try-urls name="urls" required aria-describedby="try-estimate" placeholder="https://www.linkedin.com/company/google" { (urls) }
            p.hint #try-estimate aria-live="polite" { "1 credit per company fetched live, 0.5 per stored one; nothing for URLs that cannot be resolved." }
            div.row {
                div {
                    label for="try-key" { "Key" }
                    select #try-key name="key" required {
                        @for key in keys { option value=(key.id.0) selected[Some(key.id.0) == input.and_then(|i| i.key)] { (key_label(key)) } }
                    }
                }
                div {
                    label for="try-window" { "Freshness" }
                    select #try-window name="max_age_hours" {
                        @for hours in TRY_WINDOWS {
                            option value=(hours) selected[hours == window] {
                                @match hours {
                                    0 => "live (fetch now)",
                                    24 => "stored up to 1 day old",
                                    168 => "stored up to 7 days old",
                                    _ => "stored up to 30 days old",
                                }
                            }
                        }
                    }
                }
                button type="submit" { "Run" }
            }
            @if keys.is_empty() {
                p.notice.warn { "This account has no active key. " a href=(link(visitor, "/dashboard/keys")) { "Create one" } " first." }
            }
        }
        @match outcome {
            Some(Ok(result)) => {
                p.notice.ok role="status" data-testid="try-cost" {
                    "Charged " (result.charged) " credits; " (result.remaining) " remaining."
                }
                pre data-testid="try-json" { code { (result.json) } }
            }
            Some(Err(message)) => { p.notice.error role="alert" { (message) } }
            None => {}
        }
    };
    layout("Try it", Some(visitor), "/dashboard/try", &body)
}

pub(super) fn admin_page(visitor: &Visitor, users: &[User], notice: Option<&Notice>) -> Markup {
    let body = html! {
        h1 { "Admin" }
        @match notice {
            Some(Notice::Ok(message)) => { p.notice.ok role="status" { (message) } }
            Some(Notice::Error(message)) => { p.notice.error role="alert" { (message) } }
            Some(Notice::Invited { email, path }) => {
                div.notice.warn role="status" {
                    p { "Send this link to " strong { (email) } ". It works once, for 7 days, and is shown only now." }
                    div.secret {
                        input #invite-link type="text" readonly value=(path) aria-label="Invitation link (path on this server)";
                        button type="button" data-copy="invite-link" hidden { "Copy" }
                    }
                }
            }
            None => {}
        }
        section.card {
            h2 { "Accounts" }
            div.table-wrap {
                table {
                    thead { tr { th { "Account" } th.num { "Balance" } th { "People" } th { "Created" } } }
                    tbody {
                        @for account in &visitor.all_accounts {
                            tr {
                                td { a href=(format!("/dashboard/credits?account={}", account.id.0)) { (account.name) } }
                                td.num { (account.balance) }
                                td { (users.iter().filter(|u| u.account == account.id).map(|u| u.email.as_str()).collect::<Vec<_>>().join(", ")) }
                                td { (time(account.created_at)) }
                            }
                        }
                    }
                }
            }
        }
        section.card {
            h2 { "Grant credits" }
            form.row method="post" action="/dashboard/admin/grant" {
                (csrf(visitor))
                div {
                    label for="grant-account" { "Account" }
                    select #grant-account name="account" required {
                        @for account in &visitor.all_accounts { option value=(account.id.0) { (account.name) } }
                    }
                }
                div {
                    label for="grant-amount" { "Credits" }
                    input #grant-amount type="text" inputmode="decimal" name="amount" required placeholder="100";
                }
                div {
                    label for="grant-note" { "Note (in the ledger)" }
                    input #grant-note type="text" name="note" maxlength="200" placeholder="e.g. invoice 2026-118";
                }
                button type="submit" { "Grant" }
            }
        }
        section.card {
            h2 { "Invite someone" }
            form method="post" action="/dashboard/admin/invite" {
                (csrf(visitor))
                div.row {
                    div {
                        label for="invite-email" { "Email" }
                        input #invite-email type="email" name="email" required;
                    }
                    div {
                        label for="invite-account" { "Account" }
                        select #invite-account name="account" {
                            option value="" { "A new account named by the email" }
                            @for account in &visitor.all_accounts { option value=(account.id.0) { (account.name) } }
                        }
                    }
                }
                label { input type="checkbox" name="admin"; " Admin (sees every account, grants credits, invites)" }
                button type="submit" { "Make invitation link" }
            }
        }
    };
    layout("Admin", Some(visitor), "/dashboard/admin", &body)
}
