//! Admin (`/dashboard/admin`): every account, granting credits, inviting people, each account's quotas, the
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
use crate::error::{Page, capitalized, refusal};
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
    Ok(html(
        status,
        admin_markup(
            visitor,
            &users,
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
        (_, Some(Err(error))) => Notice::Error(capitalized(&error.to_string())),
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
                        th.num { "Endpoints" } th.num { "Keys" }
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
    users: &[User],
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
        (quotas_markup(visitor, deployment))
        (routes_markup(routes))
        (coverage_markup(coverage))
    };
    layout("Admin", Some(visitor), "/dashboard/admin", &body)
}
