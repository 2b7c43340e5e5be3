//! The dashboard under `/dashboard`: server-rendered pages where people sign in, create and revoke API keys,
//! read their credits, ledger and usage, and try the API (issue 6; docs/dashboard.md).
//!
//! Pages are HTML from [`pages`] (maud escapes every value), with one stylesheet and one small script shipped in
//! the binary. Every state-changing request is a POST carrying the session's CSRF token (the sign-in form: a
//! double-submit cookie), and the session cookie is `HttpOnly; SameSite=Strict` (and `Secure` behind TLS).
//! People and sessions come from `dashboard-auth`; keys, credits and lookups from the same parts the API uses.

mod chart;
mod pages;

use std::collections::HashMap;

use api_keys::{KeyId, KeyRecord};
use bytes::Bytes;
use company_lookup::{Caller, LookupError};
use company_model::{AccountId, CompanyRequest};
use credit_ledger::{Account, Credits, LedgerEntry};
use dashboard_auth::{AuthError, Session, User};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use subtle::ConstantTimeEq;

use crate::App;
use crate::server::read_body;

/// The session cookie's name.
const SESSION_COOKIE: &str = "cd_session";
/// The sign-in form's double-submit cookie (protects the sign-in form itself from cross-site posts).
const SIGN_IN_COOKIE: &str = "cd_sign_in";
/// Ledger rows per page.
const LEDGER_PAGE: u32 = 50;
/// Days the usage chart covers.
const USAGE_DAYS: i64 = 30;
/// Freshness windows offered on the Try it page, in hours (0: live).
const TRY_WINDOWS: [u32; 4] = [0, 24, 168, 720];

const CSS: &str = include_str!("assets/app.css");
const JS: &str = include_str!("assets/app.js");

/// Who is signed in, for one request.
#[derive(Clone)]
struct Visitor {
    user: User,
    session: Session,
    /// The account shown: the user's own, or for an admin any account picked with `?account=`.
    account: Account,
    /// Every account, for an admin's account picker; empty for others.
    all_accounts: Vec<Account>,
}

/// Why a dashboard request failed; rendered as an HTML page with the status.
#[derive(Debug, thiserror::Error)]
enum PageError {
    #[error("This page does not exist.")]
    NotFound,
    #[error(
        "This form has expired or did not come from this dashboard. Go back, reload the page and try again."
    )]
    Csrf,
    #[error("Only an admin can do this.")]
    Forbidden,
    #[error("{0}")]
    BadRequest(String),
    #[error("Use {allow} for this page.")]
    MethodNotAllowed { allow: &'static str },
    #[error("Something went wrong on our side ({0}). Try again in a moment.")]
    Internal(String),
}

impl PageError {
    fn status(&self) -> StatusCode {
        match self {
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Csrf | Self::Forbidden => StatusCode::FORBIDDEN,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

fn internal(error: impl std::fmt::Display) -> PageError {
    tracing::error!(%error, "dashboard request failed");
    PageError::Internal("a store did not answer".to_owned())
}

type Page = Result<Response<Full<Bytes>>, PageError>;

/// Serves every path under `/dashboard`.
pub(crate) async fn route(app: &App, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let secure = is_secure(app, request.headers());
    // Error pages outside the assets offer a way back into the dashboard.
    let in_dashboard = request
        .uri()
        .path()
        .strip_prefix("/dashboard")
        .is_some_and(|rest| !rest.starts_with("/assets/"));
    let outcome = dispatch(app, request, secure).await;
    outcome.unwrap_or_else(|error| {
        let mut response = html(
            error.status(),
            pages::error_page(&error.to_string(), in_dashboard),
        );
        if let PageError::MethodNotAllowed { allow } = error {
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static(allow));
        }
        response
    })
}

async fn dispatch(app: &App, request: Request<Incoming>, secure: bool) -> Page {
    let path = request.uri().path().to_owned();
    let rest = path.strip_prefix("/dashboard").unwrap_or_default();
    let method = request.method().clone();
    let get = matches!(method, Method::GET | Method::HEAD);
    let post = method == Method::POST;
    // Pages anyone may open.
    match rest {
        "/assets/app.css" if get => return Ok(asset(CSS, "text/css; charset=utf-8")),
        "/assets/app.js" if get => return Ok(asset(JS, "text/javascript; charset=utf-8")),
        "/sign-in" if get => {
            let existing = cookie(request.headers(), SIGN_IN_COOKIE);
            return Ok(sign_in_form(existing, None, None, StatusCode::OK, secure));
        }
        "/sign-in" if post => return sign_in(app, request, secure).await,
        "/sign-in" => return Err(PageError::MethodNotAllowed { allow: "GET, POST" }),
        _ => {}
    }
    if let Some(token) = rest.strip_prefix("/invitations/") {
        let token = token.to_owned();
        return match (get, post) {
            (true, _) => invitation_form(app, &token, None).await,
            (_, true) => accept_invitation(app, request, &token, secure).await,
            _ => Err(PageError::MethodNotAllowed { allow: "GET, POST" }),
        };
    }
    // Everything else needs a session; without one, the browser goes to the sign-in page.
    let Some(visitor) = visitor(app, request.uri().query(), request.headers()).await? else {
        return if get {
            Ok(redirect("/dashboard/sign-in"))
        } else {
            Err(PageError::Csrf)
        };
    };
    let query = request.uri().query().map(str::to_owned);
    match rest {
        "" | "/" if get => Ok(redirect("/dashboard/keys")),
        "/keys" if get => keys_page(app, &visitor, None, StatusCode::OK).await,
        "/keys" if post => create_key(app, &visitor, request).await,
        "/credits" if get => credits_page(app, &visitor, query.as_deref()).await,
        "/credits.csv" if get => ledger_csv(app, &visitor).await,
        "/usage" if get => usage_page(app, &visitor).await,
        "/try" if get => Ok(html(
            StatusCode::OK,
            pages::try_page(&visitor, &active_keys(app, &visitor).await?, None, None),
        )),
        "/try" if post => try_it(app, &visitor, request).await,
        "/admin" if get => admin_page(app, &visitor, None).await,
        "/admin/grant" if post => grant(app, &visitor, request).await,
        "/admin/invite" if post => invite(app, &visitor, request).await,
        "/sign-out" if post => sign_out(app, &visitor, request, secure).await,
        _ => {
            if let Some(id) = rest
                .strip_prefix("/keys/")
                .and_then(|r| r.strip_suffix("/revoke"))
            {
                let id = id.parse().map(KeyId).map_err(|_| PageError::NotFound)?;
                let key = own_key(app, &visitor, id).await?;
                return match (get, post) {
                    (true, _) => Ok(html(StatusCode::OK, pages::revoke_page(&visitor, &key))),
                    (_, true) => revoke_key(app, &visitor, request, key).await,
                    _ => Err(PageError::MethodNotAllowed { allow: "GET, POST" }),
                };
            }
            match rest {
                "" | "/" | "/keys" | "/credits" | "/credits.csv" | "/usage" | "/try" | "/admin" => {
                    Err(PageError::MethodNotAllowed {
                        allow: if matches!(rest, "/keys" | "/try") {
                            "GET, POST"
                        } else {
                            "GET"
                        },
                    })
                }
                "/admin/grant" | "/admin/invite" | "/sign-out" => {
                    Err(PageError::MethodNotAllowed { allow: "POST" })
                }
                _ => Err(PageError::NotFound),
            }
        }
    }
}

/// Whether cookies get `Secure`: when configured, or when a TLS-terminating proxy says the browser used https.
fn is_secure(app: &App, headers: &HeaderMap) -> bool {
    app.dashboard.secure_cookies
        || headers
            .get("x-forwarded-proto")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"))
}

fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find_map(|(n, v)| (n == name).then_some(v))
}

/// A `Set-Cookie` value: `HttpOnly; SameSite=Strict; Path=/dashboard`, `Secure` when served over TLS; `max_age`
/// 0 deletes it.
fn set_cookie(name: &str, value: &str, max_age_secs: u64, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    HeaderValue::from_str(&format!(
        "{name}={value}; Path=/dashboard; Max-Age={max_age_secs}; HttpOnly; SameSite=Strict{secure}"
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("invalid=; Max-Age=0"))
}

async fn visitor(
    app: &App,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Result<Option<Visitor>, PageError> {
    let Some(token) = cookie(headers, SESSION_COOKIE) else {
        return Ok(None);
    };
    let Some((session, user)) = app.users.session(token).await.map_err(internal)? else {
        return Ok(None);
    };
    let all_accounts = if user.admin {
        app.ledger.accounts().await.map_err(internal)?
    } else {
        Vec::new()
    };
    let picked = query_param(query, "account")
        .and_then(|id| id.parse().ok())
        .map(AccountId)
        .filter(|_| user.admin)
        .unwrap_or(user.account);
    let account = app
        .ledger
        .account(picked)
        .await
        .map_err(internal)?
        .ok_or(PageError::NotFound)?;
    Ok(Some(Visitor {
        user,
        session,
        account,
        all_accounts,
    }))
}

fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// A posted form's fields, after checking its media type.
async fn read_form(
    app: &App,
    request: Request<Incoming>,
) -> Result<HashMap<String, String>, PageError> {
    let is_form = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"));
    if !is_form {
        return Err(PageError::BadRequest(
            "Send this form from the dashboard page.".to_owned(),
        ));
    }
    let body = read_body(request, app.connections.body_timeout)
        .await
        .map_err(|error| {
            PageError::BadRequest(match error {
                crate::api_error::ApiError::BodyTooLarge => {
                    "The form is larger than 100 KB: send fewer URLs at once.".to_owned()
                }
                _ => "The form did not arrive whole. Send it again.".to_owned(),
            })
        })?;
    Ok(form_urlencoded::parse(&body).into_owned().collect())
}

/// The form's fields, if it carries this session's CSRF token.
async fn read_session_form(
    app: &App,
    visitor: &Visitor,
    request: Request<Incoming>,
) -> Result<HashMap<String, String>, PageError> {
    let form = read_form(app, request).await?;
    let presented = form.get("csrf").map(String::as_bytes).unwrap_or_default();
    if bool::from(presented.ct_eq(visitor.session.csrf_token.as_bytes())) {
        Ok(form)
    } else {
        Err(PageError::Csrf)
    }
}

fn html(status: StatusCode, markup: maud::Markup) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(markup.into_string())));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    security_headers(headers);
    response
}

/// Pages are never cached (they show balances and, once, secrets), never framed, and run only this
/// dashboard's own script and style.
fn security_headers(headers: &mut HeaderMap) {
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
             connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // Invitation links carry their token in the path.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}

fn asset(body: &'static str, content_type: &'static str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

/// 303 See Other: after a POST, the browser GETs the next page.
fn redirect(to: &str) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(location) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    security_headers(response.headers_mut());
    response
}

/// The sign-in page with its double-submit token: the browser's current one when it has one (so that sign-in
/// pages open in two tabs both work), else a new one.
fn sign_in_form(
    existing_token: Option<&str>,
    email: Option<&str>,
    error: Option<&str>,
    status: StatusCode,
    secure: bool,
) -> Response<Full<Bytes>> {
    let token = existing_token
        .filter(|t| t.len() == 43 && t.bytes().all(|b| b.is_ascii_alphanumeric()))
        .map_or_else(
            || dashboard_auth::Secret::random().expose().to_owned(),
            str::to_owned,
        );
    let mut response = html(status, pages::sign_in_page(email, error, &token));
    response.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(SIGN_IN_COOKIE, &token, 3600, secure),
    );
    response
}

async fn sign_in(app: &App, request: Request<Incoming>, secure: bool) -> Page {
    let double_submit = cookie(request.headers(), SIGN_IN_COOKIE).map(str::to_owned);
    let form = read_form(app, request).await?;
    let presented = form.get("csrf").map(String::as_bytes).unwrap_or_default();
    let matches = double_submit
        .as_deref()
        .is_some_and(|c| !c.is_empty() && bool::from(c.as_bytes().ct_eq(presented)));
    if !matches {
        return Err(PageError::Csrf);
    }
    let email = form.get("email").map(String::as_str).unwrap_or_default();
    let password = form.get("password").map(String::as_str).unwrap_or_default();
    match app.users.sign_in(email, password).await {
        Ok((token, _)) => Ok(signed_in(&token, secure)),
        Err(error @ AuthError::WrongCredentials) => Ok(sign_in_form(
            double_submit.as_deref(),
            Some(email),
            Some(&error.to_string()),
            StatusCode::UNAUTHORIZED,
            secure,
        )),
        Err(error @ AuthError::TooManyAttempts { retry_after }) => {
            let mut response = sign_in_form(
                double_submit.as_deref(),
                Some(email),
                Some(&error.to_string()),
                StatusCode::TOO_MANY_REQUESTS,
                secure,
            );
            if let Ok(value) = HeaderValue::from_str(&retry_after.as_secs().max(1).to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
            Ok(response)
        }
        Err(other) => Err(internal(other)),
    }
}

/// Sets the session cookie and sends the browser to its keys.
fn signed_in(token: &dashboard_auth::Secret, secure: bool) -> Response<Full<Bytes>> {
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

async fn sign_out(app: &App, visitor: &Visitor, request: Request<Incoming>, secure: bool) -> Page {
    let token = cookie(request.headers(), SESSION_COOKIE).map(str::to_owned);
    read_session_form(app, visitor, request).await?;
    if let Some(token) = token {
        app.users.sign_out(&token).await.map_err(internal)?;
    }
    let mut response = redirect("/dashboard/sign-in");
    response.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(SESSION_COOKIE, "", 0, secure),
    );
    Ok(response)
}

async fn invitation_form(app: &App, token: &str, error: Option<&str>) -> Page {
    let invitation = app.users.invitation(token).await.map_err(internal)?;
    let status = match (&invitation, error) {
        (None, _) => StatusCode::NOT_FOUND,
        (Some(_), Some(_)) => StatusCode::BAD_REQUEST,
        (Some(_), None) => StatusCode::OK,
    };
    Ok(html(
        status,
        pages::invitation_page(invitation.as_ref(), error),
    ))
}

async fn accept_invitation(
    app: &App,
    request: Request<Incoming>,
    token: &str,
    secure: bool,
) -> Page {
    // The link's secret token is the proof here, as a CSRF token is elsewhere: a cross-site form cannot know it.
    let form = read_form(app, request).await?;
    let password = form.get("password").map(String::as_str).unwrap_or_default();
    if form.get("confirm").map(String::as_str) != Some(password) {
        return invitation_form(app, token, Some("The two passwords differ.")).await;
    }
    match app.users.accept_invitation(token, password).await {
        Ok(user) => match app.users.sign_in(&user.email, password).await {
            Ok((session, _)) => Ok(signed_in(&session, secure)),
            Err(_) => Ok(redirect("/dashboard/sign-in")),
        },
        Err(error @ (AuthError::WeakPassword | AuthError::EmailTaken(_))) => {
            invitation_form(app, token, Some(&error.to_string())).await
        }
        Err(AuthError::InvitationInvalid) => invitation_form(app, token, None).await,
        Err(other) => Err(internal(other)),
    }
}

/// The shown account's keys, oldest first.
async fn account_keys(app: &App, visitor: &Visitor) -> Result<Vec<KeyRecord>, PageError> {
    let mut keys = app.keys.list().await.map_err(internal)?;
    keys.retain(|k| k.account == visitor.account.id);
    Ok(keys)
}

async fn active_keys(app: &App, visitor: &Visitor) -> Result<Vec<KeyRecord>, PageError> {
    let mut keys = account_keys(app, visitor).await?;
    keys.retain(|k| k.revoked_at.is_none());
    Ok(keys)
}

/// A key of the visitor's own account (an admin: of any account); anything else is "not found".
async fn own_key(app: &App, visitor: &Visitor, id: KeyId) -> Result<KeyRecord, PageError> {
    app.keys
        .store()
        .by_id(id)
        .await
        .map_err(internal)?
        .filter(|k| k.account == visitor.user.account || visitor.user.admin)
        .ok_or(PageError::NotFound)
}

async fn keys_page(
    app: &App,
    visitor: &Visitor,
    created: Option<(&str, &KeyRecord)>,
    status: StatusCode,
) -> Page {
    let keys = account_keys(app, visitor).await?;
    Ok(html(status, pages::keys_page(visitor, &keys, created)))
}

async fn create_key(app: &App, visitor: &Visitor, request: Request<Incoming>) -> Page {
    let form = read_session_form(app, visitor, request).await?;
    let name = form.get("name").map(|n| n.trim()).unwrap_or_default();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(PageError::BadRequest(
            "Give the key a name of 1 to 100 characters, e.g. the system that will use it."
                .to_owned(),
        ));
    }
    let (key, record) = app
        .keys
        .create(visitor.account.id, Some(name))
        .await
        .map_err(internal)?;
    // Shown in this response only: the page is not cached and the key is not kept.
    keys_page(
        app,
        visitor,
        Some((key.expose(), &record)),
        StatusCode::CREATED,
    )
    .await
}

async fn revoke_key(
    app: &App,
    visitor: &Visitor,
    request: Request<Incoming>,
    key: KeyRecord,
) -> Page {
    read_session_form(app, visitor, request).await?;
    app.keys.revoke(key.id).await.map_err(internal)?;
    Ok(redirect(&account_link(
        "/dashboard/keys",
        visitor,
        key.account,
    )))
}

/// `path`, with `?account=` when an admin looks at an account not their own.
fn account_link(path: &str, visitor: &Visitor, account: AccountId) -> String {
    if account == visitor.user.account {
        path.to_owned()
    } else {
        format!("{path}?account={}", account.0)
    }
}

async fn key_names(app: &App, visitor: &Visitor) -> Result<HashMap<i64, KeyRecord>, PageError> {
    Ok(account_keys(app, visitor)
        .await?
        .into_iter()
        .map(|k| (k.id.0, k))
        .collect())
}

async fn credits_page(app: &App, visitor: &Visitor, query: Option<&str>) -> Page {
    let before = query_param(query, "before").and_then(|b| b.parse().ok());
    let entries: Vec<LedgerEntry> = app
        .ledger
        .entries(visitor.account.id, before, LEDGER_PAGE + 1)
        .await
        .map_err(internal)?;
    let more = entries.len() > LEDGER_PAGE as usize;
    let entries = &entries[..entries.len().min(LEDGER_PAGE as usize)];
    let keys = key_names(app, visitor).await?;
    Ok(html(
        StatusCode::OK,
        pages::credits_page(visitor, entries, &keys, before.is_some(), more),
    ))
}

async fn ledger_csv(app: &App, visitor: &Visitor) -> Page {
    let keys = key_names(app, visitor).await?;
    let mut writer = csv::Writer::from_writer(Vec::new());
    let header = [
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
    ];
    writer.write_record(header).map_err(internal)?;
    let mut before = None;
    loop {
        let page = app
            .ledger
            .entries(visitor.account.id, before, 1000)
            .await
            .map_err(internal)?;
        for entry in &page {
            let charge = entry.charge.as_ref();
            let key = charge.and_then(|c| c.key_id).and_then(|id| keys.get(&id));
            writer
                .write_record([
                    entry.id.to_string(),
                    entry.at.to_string(),
                    pages::kind_label(entry).to_owned(),
                    charge
                        .and_then(|c| c.key_id)
                        .map(|id| id.to_string())
                        .unwrap_or_default(),
                    key.map(pages::key_label).unwrap_or_default(),
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
                ])
                .map_err(internal)?;
        }
        match page.last() {
            Some(last) if page.len() == 1000 => before = Some(last.id),
            _ => break,
        }
    }
    let body = writer.into_inner().map_err(internal)?;
    let mut response = Response::new(Full::new(Bytes::from(body)));
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

async fn usage_page(app: &App, visitor: &Visitor) -> Page {
    let today = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date();
    let first = today
        .checked_sub(jiff::Span::new().days(USAGE_DAYS - 1))
        .map_err(internal)?;
    let since = first
        .to_zoned(jiff::tz::TimeZone::UTC)
        .map_err(internal)?
        .timestamp();
    let days = app
        .ledger
        .daily_usage(visitor.account.id, since)
        .await
        .map_err(internal)?;
    Ok(html(
        StatusCode::OK,
        pages::usage_page(visitor, first, today, &days),
    ))
}

async fn try_it(app: &App, visitor: &Visitor, request: Request<Incoming>) -> Page {
    let form = read_session_form(app, visitor, request).await?;
    let keys = active_keys(app, visitor).await?;
    let urls: Vec<String> = form
        .get("urls")
        .map(|u| u.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default();
    let window: u32 = form
        .get("max_age_hours")
        .and_then(|w| w.parse().ok())
        .filter(|w| TRY_WINDOWS.contains(w))
        .unwrap_or(0);
    let key = form
        .get("key")
        .and_then(|k| k.parse().ok())
        .and_then(|id: i64| keys.iter().find(|k| k.id.0 == id));
    let Some(key) = key else {
        return Ok(html(
            StatusCode::BAD_REQUEST,
            pages::try_page(
                visitor,
                &keys,
                Some(&pages::TryInput {
                    urls: &urls,
                    window,
                    key: None,
                }),
                Some(Err(
                    "Pick an active key: create one on the Keys page first.".to_owned(),
                )),
            ),
        ));
    };
    let body = serde_json::json!({ "liUrls": urls, "maxAgeHours": window });
    let input = pages::TryInput {
        urls: &urls,
        window,
        key: Some(key.id.0),
    };
    let outcome = match CompanyRequest::from_json(body.to_string().as_bytes(), &app.domain) {
        Err(error) => Err(error.to_string()),
        Ok(parsed) => {
            let caller = Caller {
                account: visitor.account.id,
                key_id: Some(key.id.0),
            };
            match app.lookup.run(caller, &parsed).await {
                Ok(outcome) => {
                    let json = outcome.response.to_json().map_err(internal)?;
                    // Indented, in the API's own member order (a `Value` would sort the members).
                    let mut pretty = Vec::new();
                    serde_transcode::transcode(
                        &mut serde_json::Deserializer::from_slice(&json),
                        &mut serde_json::Serializer::pretty(&mut pretty),
                    )
                    .map_err(internal)?;
                    let pretty = String::from_utf8(pretty).map_err(internal)?;
                    Ok(pages::TryResult {
                        json: pretty,
                        charged: outcome.charged,
                        remaining: outcome.remaining,
                    })
                }
                Err(
                    error @ (LookupError::InsufficientCredits { .. }
                    | LookupError::TooManyLiveLookups { .. }
                    | LookupError::TimedOut { .. }),
                ) => Err(error.to_string()),
                Err(other) => return Err(internal(other)),
            }
        }
    };
    let status = if outcome.is_ok() {
        StatusCode::OK
    } else {
        StatusCode::BAD_REQUEST
    };
    Ok(html(
        status,
        pages::try_page(visitor, &keys, Some(&input), Some(outcome)),
    ))
}

async fn admin_page(app: &App, visitor: &Visitor, notice: Option<pages::Notice>) -> Page {
    if !visitor.user.admin {
        return Err(PageError::Forbidden);
    }
    let users = app.users.store().users().await.map_err(internal)?;
    let status = match &notice {
        Some(pages::Notice::Error(_)) => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    };
    Ok(html(
        status,
        pages::admin_page(visitor, &users, notice.as_ref()),
    ))
}

async fn grant(app: &App, visitor: &Visitor, request: Request<Incoming>) -> Page {
    if !visitor.user.admin {
        return Err(PageError::Forbidden);
    }
    let form = read_session_form(app, visitor, request).await?;
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
        (Some(account), Some(Ok(amount))) if amount > Credits::ZERO => {
            match app.ledger.grant(account, amount, note).await {
                Ok(balance) => pages::Notice::Ok(format!(
                    "Granted {amount} credits; the balance is now {balance}."
                )),
                Err(credit_ledger::LedgerError::UnknownAccount(name)) => {
                    pages::Notice::Error(format!("There is no account {name}."))
                }
                Err(other) => return Err(internal(other)),
            }
        }
        (None, _) => pages::Notice::Error("Pick an account.".to_owned()),
        (_, Some(Err(error))) => pages::Notice::Error(error.to_string()),
        _ => pages::Notice::Error("Write an amount above zero, e.g. 100 or 0.5.".to_owned()),
    };
    // Re-read the accounts so that the table shows the new balance.
    let refreshed = Visitor {
        all_accounts: app.ledger.accounts().await.map_err(internal)?,
        ..visitor.clone()
    };
    admin_page(app, &refreshed, Some(notice)).await
}

async fn invite(app: &App, visitor: &Visitor, request: Request<Incoming>) -> Page {
    if !visitor.user.admin {
        return Err(PageError::Forbidden);
    }
    let form = read_session_form(app, visitor, request).await?;
    let email = form.get("email").map(String::as_str).unwrap_or_default();
    let admin = form.get("admin").is_some_and(|v| v == "on");
    let refuse = |error: AuthError| Some(pages::Notice::Error(error.to_string()));
    let email = match dashboard_auth::normalize_email(email) {
        Ok(email) => email,
        Err(error) => return admin_page(app, visitor, refuse(error)).await,
    };
    // Checked before a new account is made for the email, so a refused invitation leaves nothing behind.
    if app
        .users
        .store()
        .user_by_email(&email)
        .await
        .map_err(internal)?
        .is_some()
    {
        return admin_page(app, visitor, refuse(AuthError::EmailTaken(email))).await;
    }
    // A new customer gets an account of their own, named by their email; or joins an existing one.
    let account = match form
        .get("account")
        .and_then(|a| a.parse().ok())
        .map(AccountId)
    {
        Some(id) => id,
        None => {
            app.ledger
                .ensure_account(&email)
                .await
                .map_err(internal)?
                .id
        }
    };
    let notice = match app.users.invite(&email, account, admin).await {
        Ok((token, invitation)) => pages::Notice::Invited {
            email: invitation.email,
            path: format!("/dashboard/invitations/{}", token.expose()),
        },
        Err(error @ (AuthError::InvalidEmail(_) | AuthError::EmailTaken(_))) => {
            pages::Notice::Error(error.to_string())
        }
        Err(other) => return Err(internal(other)),
    };
    let refreshed = Visitor {
        all_accounts: app.ledger.accounts().await.map_err(internal)?,
        ..visitor.clone()
    };
    admin_page(app, &refreshed, Some(notice)).await
}
