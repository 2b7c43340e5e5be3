//! API keys (`/dashboard/keys`): list, create (the full key shown once), revoke after a confirmation page.

use api_keys::{KeyId, KeyMode, KeyRecord};
use http::{Request, StatusCode};
use http_serve::Response;
use maud::{Markup, html};

use crate::Parts;
use crate::error::{Page, PageError};
use crate::forms::read_session_form;
use crate::layout::{csrf, key_label, layout, time};
use crate::respond::{html, redirect};
use crate::visitor::Visitor;

/// Longest key name, in characters.
const MAX_NAME_CHARS: usize = 100;

/// `GET /dashboard/keys`.
pub(crate) async fn page(parts: &Parts, visitor: &Visitor) -> Page {
    keys_page(parts, visitor, None, StatusCode::OK).await
}

async fn keys_page(
    parts: &Parts,
    visitor: &Visitor,
    created: Option<(&str, &KeyRecord)>,
    status: StatusCode,
) -> Page {
    let keys = parts.accounts.keys().of_account(visitor.account.id).await?;
    Ok(html(status, keys_markup(visitor, &keys, created)))
}

/// `POST /dashboard/keys`: a new key for the account shown, its secret in this response only (the page is not
/// cached and the key is not kept).
pub(crate) async fn create<B>(parts: &Parts, visitor: &Visitor, request: Request<B>) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let form = read_session_form(parts, visitor, request).await?;
    let name = form.get("name").map(|n| n.trim()).unwrap_or_default();
    if name.is_empty() || name.chars().count() > MAX_NAME_CHARS {
        return Err(PageError::BadRequest(format!(
            "Give the key a name of 1 to {MAX_NAME_CHARS} characters, e.g. the system that will use it."
        )));
    }
    let mode = if form.contains_key("test") {
        KeyMode::Test
    } else {
        KeyMode::Live
    };
    let created = parts
        .accounts
        .new_key(visitor.account.id, Some(name), mode)
        .await;
    let (key, record) = match created {
        Ok(created) => created,
        Err(accounts::AccountsError::Keys(refused @ api_keys::KeyError::TooManyKeys { .. })) => {
            return Err(PageError::Conflict(crate::error::sentence(&refused)));
        }
        Err(other) => return Err(other.into()),
    };
    keys_page(
        parts,
        visitor,
        Some((key.expose(), &record)),
        StatusCode::CREATED,
    )
    .await
}

/// The key `/dashboard/keys/<id>/revoke` names, if it belongs to the account shown; anything else is "not
/// found", so nobody learns of other accounts' keys.
pub(crate) async fn revocable(
    parts: &Parts,
    visitor: &Visitor,
    id: &str,
) -> Result<KeyRecord, PageError> {
    let id = id.parse().map(KeyId).map_err(|_| PageError::NotFound)?;
    parts
        .accounts
        .keys()
        .of_account_by_id(visitor.account.id, id)
        .await?
        .ok_or(PageError::NotFound)
}

/// `GET /dashboard/keys/<id>/revoke`: the confirmation page.
pub(crate) fn revoke_page(visitor: &Visitor, key: &KeyRecord) -> Response {
    let body = html! {
        div.card.narrow {
            h1 { "Revoke " (key_label(key)) "?" }
            @if key.revoked_at.is_some() {
                p { "This key is revoked already." }
                a href=(visitor.link("/dashboard/keys")) { "Back to the keys" }
            } @else {
                p { "Requests with this key will be refused (401) within seconds, on every server. This cannot be undone." }
                form method="post" action=(visitor.link(&format!("/dashboard/keys/{}/revoke", key.id.0))) {
                    (csrf(visitor))
                    button.danger type="submit" { "Revoke the key" }
                    " "
                    a.button.secondary href=(visitor.link("/dashboard/keys")) { "Cancel" }
                }
            }
        }
    };
    html(
        StatusCode::OK,
        layout("Revoke key", Some(visitor), "/dashboard/keys", &body),
    )
}

/// `POST /dashboard/keys/<id>/revoke`.
pub(crate) async fn revoke<B>(
    parts: &Parts,
    visitor: &Visitor,
    request: Request<B>,
    key: KeyRecord,
) -> Page
where
    B: hyper::body::Body + Unpin,
{
    read_session_form(parts, visitor, request).await?;
    parts.accounts.keys().revoke(key.id).await?;
    Ok(redirect(&visitor.link_for("/dashboard/keys", key.account)))
}

fn keys_markup(
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
            form.row method="post" action=(visitor.link("/dashboard/keys")) {
                (csrf(visitor))
                div {
                    label for="key-name" { "Name" }
                    input #key-name type="text" name="name" required maxlength=(MAX_NAME_CHARS) placeholder="e.g. CRM sync";
                }
                label.check {
                    input type="checkbox" name="test";
                    " Test mode"
                }
                button type="submit" { "Create key" }
            }
            p.hint data-testid="test-mode" {
                "A test-mode key (" code { "cdk_test_…" } ") works like a live one, with the same answers, errors and "
                "headers, but never reaches the network and never spends credits: it is answered from the sample "
                "pages the service ships ("
                @for (n, path) in sandbox_pages::paths().iter().enumerate() {
                    @if n > 0 { ", " } code { (path) }
                }
                "). Its jobs, watches and webhook endpoints are its own, apart from the live key's. Build against "
                "it, then switch to a live key."
            }
        }
        h2 { "Keys of " (visitor.account.name) }
        @if keys.is_empty() {
            p { "No keys yet." }
        } @else {
            div.table-wrap {
                table {
                    thead { tr { th { "Name" } th { "Key" } th { "Mode" } th { "Created" } th { "Last used" } th { "Status" } th { span.visually-hidden { "Actions" } } } }
                    tbody {
                        @for key in keys.iter().rev() {
                            tr {
                                td { (key.name.as_deref().unwrap_or("—")) }
                                td { code { (key.masked()) } }
                                td { @match key.mode() { KeyMode::Live => (KeyMode::Live.label()), KeyMode::Test => strong.test-mode { (KeyMode::Test.label()) } } }
                                td { (time(key.created_at)) }
                                td { (key.last_used_at.map_or_else(|| "never".to_owned(), time)) }
                                @if let Some(revoked) = key.revoked_at {
                                    td.status-revoked { "revoked " (time(revoked)) }
                                    td {}
                                } @else {
                                    td.status-active { "active" }
                                    td { a href=(visitor.link(&format!("/dashboard/keys/{}/revoke", key.id.0))) aria-label=(format!("Revoke {}", key_label(key))) { "Revoke…" } }
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
