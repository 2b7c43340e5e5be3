//! Signing in (`/dashboard/sign-in`) and out (`/dashboard/sign-out`).

use dashboard_auth::{AuthError, Secret};
use http::{HeaderMap, Request, StatusCode, header};
use http_serve::Response;
use maud::{Markup, html};
use subtle::ConstantTimeEq;

use crate::Parts;
use crate::error::{Page, PageError};
use crate::forms::{read_public_form, read_session_form};
use crate::layout::layout;
use crate::respond::{SESSION_COOKIE, SIGN_IN_COOKIE, cookie, html, redirect, set_cookie};
use crate::visitor::Visitor;

/// `GET /dashboard/sign-in`: the form, reusing the browser's double-submit token when it has one.
pub(crate) fn form(headers: &HeaderMap, secure: bool) -> Response {
    let existing = cookie(headers, SIGN_IN_COOKIE);
    sign_in_form(existing, None, None, StatusCode::OK, secure)
}

/// The sign-in page with its double-submit token: the browser's current one when it has one (so that sign-in
/// pages open in two tabs both work), else a new one.
fn sign_in_form(
    existing_token: Option<&str>,
    email: Option<&str>,
    error: Option<&str>,
    status: StatusCode,
    secure: bool,
) -> Response {
    let token = existing_token
        .filter(|t| t.len() == 43 && t.bytes().all(|b| b.is_ascii_alphanumeric()))
        .map_or_else(|| Secret::random().expose().to_owned(), str::to_owned);
    let mut response = html(status, sign_in_page(email, error, &token));
    response.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(SIGN_IN_COOKIE, &token, 3600, secure),
    );
    response
}

/// `POST /dashboard/sign-in`.
pub(crate) async fn submit<B>(parts: &Parts, request: Request<B>, secure: bool) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let double_submit = cookie(request.headers(), SIGN_IN_COOKIE).map(str::to_owned);
    let client = parts.client_address(&request);
    let form = read_public_form(parts, request).await?;
    let presented = form.get("csrf").map(String::as_bytes).unwrap_or_default();
    let matches = double_submit
        .as_deref()
        .is_some_and(|c| !c.is_empty() && bool::from(c.as_bytes().ct_eq(presented)));
    if !matches {
        return Err(PageError::Csrf);
    }
    let email = form.get("email").map(String::as_str).unwrap_or_default();
    let password = form.get("password").map(String::as_str).unwrap_or_default();
    match parts
        .accounts
        .users()
        .sign_in(email, password, client)
        .await
    {
        Ok((token, _)) => Ok(signed_in(&token, secure)),
        Err(error @ AuthError::WrongCredentials) => Ok(sign_in_form(
            double_submit.as_deref(),
            Some(email),
            Some(&crate::error::sentence(&error)),
            StatusCode::UNAUTHORIZED,
            secure,
        )),
        Err(error @ AuthError::TooManyAttempts { retry_after }) => {
            let mut response = sign_in_form(
                double_submit.as_deref(),
                Some(email),
                Some(&crate::error::sentence(&error)),
                StatusCode::TOO_MANY_REQUESTS,
                secure,
            );
            crate::respond::retry_after(&mut response, retry_after);
            Ok(response)
        }
        Err(other) => Err(other.into()),
    }
}

/// Sets the session cookie and sends the browser to its keys.
pub(crate) fn signed_in(token: &Secret, secure: bool) -> Response {
    let mut response = redirect("/dashboard/keys");
    let headers = response.headers_mut();
    headers.append(
        header::SET_COOKIE,
        set_cookie(
            SESSION_COOKIE,
            token.expose(),
            dashboard_auth::SESSION_LIFETIME.as_secs(),
            secure,
        ),
    );
    headers.append(
        header::SET_COOKIE,
        set_cookie(SIGN_IN_COOKIE, "", 0, secure),
    );
    response
}

/// `POST /dashboard/sign-out`: ends the session on the server, then forgets the cookie.
pub(crate) async fn sign_out<B>(
    parts: &Parts,
    visitor: &Visitor,
    request: Request<B>,
    secure: bool,
) -> Page
where
    B: hyper::body::Body + Unpin,
{
    let token = cookie(request.headers(), SESSION_COOKIE).map(str::to_owned);
    read_session_form(parts, visitor, request).await?;
    if let Some(token) = token {
        parts.accounts.users().sign_out(&token).await?;
    }
    let mut response = redirect("/dashboard/sign-in");
    response.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(SESSION_COOKIE, "", 0, secure),
    );
    Ok(response)
}

fn sign_in_page(email: Option<&str>, error: Option<&str>, csrf: &str) -> Markup {
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
