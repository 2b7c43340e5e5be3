//! Admin (`/dashboard/admin`): every account, granting credits, inviting people and offboarding them (removing a
//! person, setting a password, ending sessions, withdrawing an invitation), each account's quotas, the
//! fetcher's routes (each
//! proxy's state and learned pace) and the layout-change alarm (each record field's share of live company-page
//! parses that filled it). Admins only.

use accounts::AccountId;
use credit_ledger::Credits;
use dashboard_auth::User;
use http::{Request, StatusCode};
use maud::{Markup, html};
use page_scraper::{CoverageReport, RouteStatus};

use crate::Parts;
use crate::error::{Page, refusal, sentence};
use crate::forms::read_session_form;
use crate::layout::{csrf, layout, time};
use crate::respond::html;
use crate::visitor::Visitor;

/// A message shown at the top of the page.
pub(crate) enum Notice {
    Ok(String),
    Error(String),
    /// An invitation link, shown once.
    Invited {
        email: String,
        path: String,
    },
}

/// `GET /dashboard/admin`, or the page after a form with its notice.
pub(crate) async fn page(parts: &Parts, visitor: &Visitor, notice: Option<Notice>) -> Page {
    visitor.require_admin()?;
    let users = parts.accounts.users().list().await?;
    let status = match &notice {
        Some(Notice::Error(_)) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    };
    let coverage = parts.lookup.field_coverage().report();
    let routes = parts.lookup.routes();
    let deployment = parts.accounts.deployment_quotas();
    let invitations = parts.accounts.users().invitations().await?;
    Ok(html(
        status,
        admin_markup(
            visitor,
            (&users, &invitations),
            notice.as_ref(),
            (&routes, &coverage),
            &deployment,
        ),
    ))
}

/// A share as a whole percentage, or a dash before any parse.
fn percent(share: Option<f64>) -> String {
    share.map_or_else(|| "–".to_owned(), |s| format!("{:.0} %", s * 100.0))
}

/// The fetcher's routes: the direct connection or each proxy, where it stands and the pace it learned.
fn routes_markup(routes: &[RouteStatus]) -> Markup {
    html! {
        section.card #routes {
            h2 { "Fetching" }
            p.hint {
                "Each route (the direct connection, or one per proxy) learns from the network's push-back how fast "
                "it may go, and cools down after a block (this server's view; docs/operations.md, \"Proxies\")."
            }
            div.table-wrap {
                table {
                    thead { tr {
                        th { "Route" } th { "State" } th.num { "Pace" } th.num { "Requests" }
                        th.num { "Pushed back" } th.num { "Free in" }
                    } }
                    tbody {
                        @for route in routes {
                            tr {
                                td { code { (route.name) } }
                                td { (route.state.as_str().replace('_', " ")) }
                                td.num {
                                    @match route.pace_per_second {
                                        Some(pace) => { (format!("{pace:.2}/s")) }
                                        None => { "unpaced" }
                                    }
                                }
                                td.num { (route.attempts) }
                                td.num { (route.blocks) }
                                td.num { (format!("{} s", route.ready_in.as_secs())) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The layout-change alarm: each record field's share of live company-page parses that filled it.
fn coverage_markup(coverage: &CoverageReport) -> Markup {
    html! {
        section.card #parsing {
            h2 { "Parsing" }
            @for alarm in coverage.alarms() {
                div.notice.error role="alert" {
                    p {
                        "Layout change? " code { (alarm.field) } " is filled on " (percent(alarm.recent))
                        " of the last " (coverage.recent_parses) " live company pages, against "
                        (percent(alarm.baseline)) " over the past week. Pages that lacked it:"
                    }
                    ul { @for page in &alarm.lacking { li { a href=(page) rel="noreferrer" { (page) } } } }
                }
            }
            p.hint {
                "Share of live parses of company pages that filled each field: the last "
                (coverage.recent_parses) " parses, and the " (coverage.baseline_parses)
                " before them over the past week (this server, since it started)."
            }
            div.table-wrap {
                table {
                    thead { tr { th { "Field" } th.num { "Recent" } th.num { "Past week" } th { "State" } } }
                    tbody {
                        @for field in &coverage.fields {
                            tr {
                                td { code { (field.field) } }
                                td.num { (percent(field.recent)) }
                                td.num { (percent(field.baseline)) }
                                td { @if field.alarmed { strong { "alarm" } } @else { "ok" } }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `POST /dashboard/admin/grant`.
pub(crate) async fn grant<B>(parts: &Parts, visitor: &Visitor, request: Request<B>) -> Page
where
    B: hyper::body::Body + Unpin,
{
    visitor.require_admin()?;
    let form = read_session_form(parts, visitor, request).await?;
    let account = form
        .get("account")
        .and_then(|a| a.parse().ok())
        .map(AccountId);
    let amount = form.get("amount").map(|a| Credits::parse(a));
    let note = form
        .get("note")
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
        .unwrap_or("granted in the dashboard");
    let notice = match (account, amount) {
        (None, _) => Notice::Error("Pick an account.".to_owned()),
        (_, None) => Notice::Error("Write an amount above zero, e.g. 100 or 0.5.".to_owned()),
        (_, Some(Err(error))) => Notice::Error(sentence(&error)),
        (Some(account), Some(Ok(amount))) => {
            match parts.accounts.grant(account, amount, note).await {
                Ok(balance) => Notice::Ok(format!(
                    "Granted {amount} credits; the balance is now {balance}."
                )),
                Err(refused) => Notice::Error(refusal(refused)?),
            }
        }
    };
    page(parts, &visitor.refreshed(parts).await?, Some(notice)).await
}

/// What an offboarding form does to a person.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Offboard {
    /// Removes the sign-in and ends its sessions.
    Remove,
    /// Ends every session of the sign-in (signs it out everywhere).
    EndSessions,
    /// Sets a new password, which ends every session.
    SetPassword,
}

/// `POST /dashboard/admin/users/{id}/remove|sign-out|password`.
pub(crate) async fn offboard<B>(
    parts: &Parts,
    visitor: &Visitor,
    request: Request<B>,
    id: &str,
    what: Offboard,
) -> Page
where
    B: hyper::body::Body + Unpin,
{
    visitor.require_admin()?;
    let form = read_session_form(parts, visitor, request).await?;
    let users = parts.accounts.users();
    let person = match id.parse().ok().map(dashboard_auth::UserId) {
        Some(id) => users.list().await?.into_iter().find(|u| u.id == id),
        None => None,
    };
    let Some(person) = person else {
        return Err(crate::error::PageError::NotFound);
    };
    let notice = match what {
        Offboard::Remove if person.id == visitor.user.id => Notice::Error(
            "You cannot remove your own sign-in: ask another admin, or run `company-data accounts` on the server."
                .to_owned(),
        ),
        Offboard::Remove => {
            users.remove(person.id).await?;
            Notice::Ok(format!("Removed {}; their sessions ended.", person.email))
        }
        Offboard::EndSessions => {
            let ended = users.end_sessions(person.id).await?;
            Notice::Ok(format!("Signed {} out everywhere ({ended} sessions ended).", person.email))
        }
        Offboard::SetPassword => {
            let password = form.get("password").map(String::as_str).unwrap_or_default();
            if form.get("confirm").map(String::as_str) == Some(password) {
                match users.set_password(person.id, password).await {
                    Ok(_) => Notice::Ok(format!(
                        "Set a new password for {}; their sessions ended.",
                        person.email
                    )),
                    Err(refused @ dashboard_auth::AuthError::WeakPassword) => {
                        Notice::Error(sentence(&refused))
                    }
                    Err(other) => return Err(other.into()),
                }
            } else {
                Notice::Error("The two passwords differ.".to_owned())
            }
        }
    };
    // Ending one's own sessions (or password) signs the admin out too.
    if person.id == visitor.user.id && what != Offboard::Remove && matches!(notice, Notice::Ok(_)) {
        return Ok(crate::respond::redirect("/dashboard/sign-in"));
    }
    page(parts, &visitor.refreshed(parts).await?, Some(notice)).await
}

/// `POST /dashboard/admin/invitations/withdraw`: the pending invitations for an email stop working.
pub(crate) async fn withdraw<B>(parts: &Parts, visitor: &Visitor, request: Request<B>) -> Page
where
    B: hyper::body::Body + Unpin,
{
    visitor.require_admin()?;
    let form = read_session_form(parts, visitor, request).await?;
    let email = form.get("email").map(String::as_str).unwrap_or_default();
    let notice = match parts.accounts.users().withdraw_invitation(email).await {
        Ok(0) => Notice::Error(format!("No invitation for {email} is pending.")),
        Ok(_) => Notice::Ok(format!(
            "Withdrew the invitation for {email}: its link no longer works."
        )),
        Err(refused) => Notice::Error(refusal(accounts::AccountsError::Users(refused))?),
    };
    page(parts, &visitor.refreshed(parts).await?, Some(notice)).await
}

/// The people who sign in, with the admin's offboarding forms, and the invitations not yet used.
fn people_markup(
    visitor: &Visitor,
    users: &[User],
    invitations: &[dashboard_auth::Invitation],
) -> Markup {
    let account_name = |id: AccountId| {
        visitor
            .all_accounts
            .iter()
            .find(|a| a.id == id)
            .map_or_else(|| id.to_string(), |a| a.name.clone())
    };
    html! {
        section.card #people {
            h2 { "People" }
            div.table-wrap {
                table {
                    thead { tr { th { "Email" } th { "Account" } th { "Admin" } th { "Created" } th { "Offboarding" } } }
                    tbody {
                        @for person in users {
                            tr {
                                td { (person.email) }
                                td { (account_name(person.account)) }
                                td { @if person.admin { "yes" } @else { "no" } }
                                td { (time(person.created_at)) }
                                td {
                                    form.inline method="post" action=(format!("/dashboard/admin/users/{}/sign-out", person.id.0)) {
                                        (csrf(visitor))
                                        button type="submit" { "End sessions" }
                                    }
                                    @if person.id != visitor.user.id {
                                        form.inline method="post" action=(format!("/dashboard/admin/users/{}/remove", person.id.0)) {
                                            (csrf(visitor))
                                            button.danger type="submit" { "Remove" }
                                        }
                                    }
                                    details {
                                        summary { "Set a password" }
                                        form method="post" action=(format!("/dashboard/admin/users/{}/password", person.id.0)) {
                                            (csrf(visitor))
                                            label for=(format!("password-{}", person.id.0)) { "New password" }
                                            input id=(format!("password-{}", person.id.0)) type="password" name="password" autocomplete="new-password" minlength=(dashboard_auth::MIN_PASSWORD_CHARS) required;
                                            label for=(format!("confirm-{}", person.id.0)) { "The same again" }
                                            input id=(format!("confirm-{}", person.id.0)) type="password" name="confirm" autocomplete="new-password" required;
                                            button type="submit" { "Set password (ends their sessions)" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if !invitations.is_empty() {
                h3 { "Invitations not yet used" }
                div.table-wrap {
                    table {
                        thead { tr { th { "Email" } th { "Account" } th { "Expires" } th {} } }
                        tbody {
                            @for invitation in invitations {
                                tr {
                                    td { (invitation.email) }
                                    td { (account_name(invitation.account)) }
                                    td { (time(invitation.expires_at)) }
                                    td {
                                        form.inline method="post" action="/dashboard/admin/invitations/withdraw" {
                                            (csrf(visitor))
                                            input type="hidden" name="email" value=(invitation.email);
                                            button type="submit" { "Withdraw" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// `POST /dashboard/admin/quotas`: sets an account's own quotas (a blank field keeps the account's; "reset" drops
/// them all first, so the deployment's apply).
pub(crate) async fn quotas<B>(parts: &Parts, visitor: &Visitor, request: Request<B>) -> Page
where
    B: hyper::body::Body + Unpin,
{
    visitor.require_admin()?;
    let form = read_session_form(parts, visitor, request).await?;
    let account = form
        .get("account")
        .and_then(|a| a.parse().ok())
        .map(AccountId);
    let field = |name: &str| -> Result<Option<u64>, String> {
        match form.get(name).map(|v| v.trim()).filter(|v| !v.is_empty()) {
            None => Ok(None),
            Some(text) => text.parse::<u64>().map(Some).map_err(|_| {
                format!(
                    "Write a whole number for {}, e.g. 10, or leave it blank.",
                    name.replace('_', " ")
                )
            }),
        }
    };
    let small = |value: Option<u64>| value.map(|v| u32::try_from(v).unwrap_or(u32::MAX));
    let parsed = (|| {
        Ok::<_, String>(accounts::QuotaOverrides {
            open_jobs: small(field("open_jobs")?),
            queued_urls: field("queued_urls")?,
            watches: small(field("watches")?),
            endpoints: small(field("endpoints")?),
            keys: small(field("keys")?),
            idempotency_mb: small(field("idempotency_mb")?),
        })
    })();
    let reset = form.get("reset").is_some_and(|v| v == "on");
    let notice = match (account, parsed) {
        (None, _) => Notice::Error("Pick an account.".to_owned()),
        (_, Err(message)) => Notice::Error(message),
        (Some(account), Ok(changes)) => {
            match parts.accounts.set_quotas(account, changes, reset).await {
                Ok(now) => Notice::Ok(format!(
                    "Quotas set: {} open jobs, {} queued URLs, {} watches, {} webhook endpoints, {} keys.",
                    now.open_jobs, now.queued_urls, now.watches, now.endpoints, now.keys
                )),
                Err(refused) => Notice::Error(refusal(refused)?),
            }
        }
    };
    page(parts, &visitor.refreshed(parts).await?, Some(notice)).await
}

/// An account's quotas in force, each marked when it is the account's own.
fn quotas_markup(visitor: &Visitor, deployment: &accounts::Quotas) -> Markup {
    let cell = |value: u64, own: bool| {
        html! { td.num { (value) @if own { " " abbr title="the account's own quota" { "*" } } } }
    };
    html! {
        section.card #quotas {
            h2 { "Quotas" }
            p.hint {
                "What one account may hold at once; an account's own (*) replaces the deployment's "
                "(`serve --quota-*`). Test-mode keys count apart, under the same quotas."
            }
            div.table-wrap {
                table {
                    thead { tr {
                        th { "Account" } th.num { "Open jobs" } th.num { "Queued URLs" } th.num { "Watches" }
                        th.num { "Endpoints" } th.num { "Keys" } th.num { "Idempotency MB" }
                    } }
                    tbody {
                        @for account in &visitor.all_accounts {
                            @let own = account.quotas;
                            @let now = own.over(deployment);
                            tr {
                                td { (account.name) }
                                (cell(u64::from(now.open_jobs), own.open_jobs.is_some()))
                                (cell(now.queued_urls, own.queued_urls.is_some()))
                                (cell(u64::from(now.watches), own.watches.is_some()))
                                (cell(u64::from(now.endpoints), own.endpoints.is_some()))
                                (cell(u64::from(now.keys), own.keys.is_some()))
                                (cell(u64::from(now.idempotency_mb), own.idempotency_mb.is_some()))
                            }
                        }
                    }
                }
            }
            form method="post" action="/dashboard/admin/quotas" {
                (csrf(visitor))
                div.row {
                    div {
                        label for="quota-account" { "Account" }
                        select #quota-account name="account" required {
                            @for account in &visitor.all_accounts { option value=(account.id.0) { (account.name) } }
                        }
                    }
                    @for (name, label, example) in [
                        ("open_jobs", "Open jobs", deployment.open_jobs.to_string()),
                        ("queued_urls", "Queued URLs", deployment.queued_urls.to_string()),
                        ("watches", "Watches", deployment.watches.to_string()),
                        ("endpoints", "Endpoints", deployment.endpoints.to_string()),
                        ("keys", "Keys", deployment.keys.to_string()),
                        ("idempotency_mb", "Idempotency MB", deployment.idempotency_mb.to_string()),
                    ] {
                        div {
                            label for=(format!("quota-{name}")) { (label) }
                            input id=(format!("quota-{name}")) type="text" inputmode="numeric" name=(name) placeholder=(example);
                        }
                    }
                }
                label { input type="checkbox" name="reset"; " Reset to the deployment's first (blank fields then keep the deployment's)" }
                button type="submit" { "Set quotas" }
            }
        }
    }
}

/// `POST /dashboard/admin/invite`: a one-time link for a new person, into a new account named by their email
/// or an existing one.
pub(crate) async fn invite<B>(parts: &Parts, visitor: &Visitor, request: Request<B>) -> Page
where
    B: hyper::body::Body + Unpin,
{
    visitor.require_admin()?;
    let form = read_session_form(parts, visitor, request).await?;
    let email = form.get("email").map(String::as_str).unwrap_or_default();
    let admin = form.get("admin").is_some_and(|v| v == "on");
    let account = form
        .get("account")
        .and_then(|a| a.parse().ok())
        .map(AccountId);
    let notice = match parts.accounts.invite(email, account, admin).await {
        Ok((token, invitation)) => Notice::Invited {
            email: invitation.email,
            path: format!("/dashboard/invitations/{}", token.expose()),
        },
        Err(refused) => Notice::Error(refusal(refused)?),
    };
    page(parts, &visitor.refreshed(parts).await?, Some(notice)).await
}

fn admin_markup(
    visitor: &Visitor,
    (users, invitations): (&[User], &[dashboard_auth::Invitation]),
    notice: Option<&Notice>,
    (routes, coverage): (&[RouteStatus], &CoverageReport),
    deployment: &accounts::Quotas,
) -> Markup {
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
        (people_markup(visitor, users, invitations))
        (quotas_markup(visitor, deployment))
        (routes_markup(routes))
        (coverage_markup(coverage))
    };
    layout("Admin", Some(visitor), "/dashboard/admin", &body)
}
