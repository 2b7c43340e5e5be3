//! The dashboard under `/dashboard`: server-rendered pages where people sign in, create and revoke API keys,
//! read their credits, ledger and usage, and try the API (docs/dashboard.md).
//!
//! [`Dashboard::handle`] answers every path under [`PATH_PREFIX`]. Pages are HTML written with maud (which
//! escapes every value), with one stylesheet and one small script compiled in; every page works without the
//! script. Every state-changing request is a POST carrying the session's CSRF token (the sign-in form: a
//! double-submit cookie), and the session cookie is `HttpOnly; SameSite=Strict` (and `Secure` behind TLS).
//!
//! One module per page or page group under `routes/`. The pages call the crates' façades only: people and
//! sessions from `dashboard-auth`, accounts, keys and credits through `accounts`, lookups through
//! `company-lookup`; prices, freshness windows and key ownership are asked of the crates that own them. Not
//! here: the JSON API (`http-api`), serving connections (`http-serve`).
#![deny(missing_docs)]

mod chart;
mod error;
mod layout;
mod respond;
mod routes;
mod visitor;

use std::sync::Arc;
use std::time::Duration;

use accounts::Accounts;
use bulk_jobs::BulkJobs;
use company_lookup::LookupService;
use http::{Method, Request};
use http_serve::Response;
use page_url::NetworkDomain;

/// The path every dashboard page lives under.
pub const PATH_PREFIX: &str = "/dashboard";

/// What the dashboard needs to know besides its parts.
#[derive(Clone, Copy, Debug)]
pub struct DashboardSettings {
    /// Mark cookies `Secure` on every response (set it when a TLS proxy is in front; cookies are marked
    /// `Secure` anyway on any request whose `X-Forwarded-Proto` is `https`).
    pub secure_cookies: bool,
    /// Time for a form's body to arrive.
    pub body_timeout: Duration,
}

impl Default for DashboardSettings {
    fn default() -> Self {
        Self {
            secure_cookies: false,
            body_timeout: Duration::from_secs(30),
        }
    }
}

/// The dashboard: a cheap handle (an `Arc` inside) to clone into each connection.
#[derive(Clone, Debug)]
pub struct Dashboard(Arc<Parts>);

/// What the pages use.
#[derive(Clone, Debug)]
pub(crate) struct Parts {
    pub(crate) accounts: Arc<Accounts>,
    pub(crate) lookup: Arc<LookupService>,
    pub(crate) domain: NetworkDomain,
    pub(crate) settings: DashboardSettings,
    /// Bulk jobs for the Jobs page; without them the page is 404.
    pub(crate) jobs: Option<Arc<BulkJobs>>,
    /// Watches for the Watches page; without them the page is 404.
    pub(crate) watches: Option<Arc<company_watch::Watches>>,
}

impl Dashboard {
    /// The dashboard over these parts; Try it runs lookups on `lookup` for URLs on `domain`.
    pub fn new(
        accounts: Arc<Accounts>,
        lookup: Arc<LookupService>,
        domain: NetworkDomain,
        settings: DashboardSettings,
    ) -> Self {
        Self(Arc::new(Parts {
            accounts,
            lookup,
            domain,
            settings,
            jobs: None,
            watches: None,
        }))
    }

    /// Shows the Jobs page over `jobs` (start, follow, cancel and download bulk jobs).
    #[must_use]
    pub fn with_jobs(self, jobs: Arc<BulkJobs>) -> Self {
        let mut parts = Arc::unwrap_or_clone(self.0);
        parts.jobs = Some(jobs);
        Self(Arc::new(parts))
    }

    /// Shows the Watches page over `watches` (add, remove, follow watches; the webhook secret).
    #[must_use]
    pub fn with_watches(self, watches: Arc<company_watch::Watches>) -> Self {
        let mut parts = Arc::unwrap_or_clone(self.0);
        parts.watches = Some(watches);
        Self(Arc::new(parts))
    }

    /// Whether `path` is the dashboard's: [`PATH_PREFIX`] or anything below it.
    pub fn owns(path: &str) -> bool {
        path.strip_prefix(PATH_PREFIX)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    }

    /// Answers a request for a path under [`PATH_PREFIX`] with a page, a redirect or an error page.
    pub async fn handle<B>(&self, request: Request<B>) -> Response
    where
        B: hyper::body::Body + Unpin,
    {
        let secure = respond::is_secure(&self.0, request.headers());
        // Error pages outside the assets offer a way back into the dashboard.
        let in_dashboard = request
            .uri()
            .path()
            .strip_prefix(PATH_PREFIX)
            .is_some_and(|rest| !rest.starts_with("/assets/"));
        dispatch(&self.0, request, secure)
            .await
            .unwrap_or_else(|error| error.into_response(in_dashboard))
    }
}

async fn dispatch<B>(parts: &Parts, request: Request<B>, secure: bool) -> error::Page
where
    B: hyper::body::Body + Unpin,
{
    use error::PageError;
    use routes::{admin, credits, invitations, jobs, keys, sign_in, try_it, usage, watches};

    let path = request.uri().path().to_owned();
    let rest = path.strip_prefix(PATH_PREFIX).unwrap_or_default();
    let method = request.method().clone();
    let get = matches!(method, Method::GET | Method::HEAD);
    let post = method == Method::POST;
    // Pages anyone may open.
    match rest {
        "/assets/app.css" if get => {
            return Ok(respond::asset(respond::CSS, "text/css; charset=utf-8"));
        }
        "/assets/app.js" if get => {
            return Ok(respond::asset(
                respond::JS,
                "text/javascript; charset=utf-8",
            ));
        }
        "/sign-in" if get => return Ok(sign_in::form(request.headers(), secure)),
        "/sign-in" if post => return sign_in::submit(parts, request, secure).await,
        "/sign-in" => return Err(PageError::MethodNotAllowed { allow: "GET, POST" }),
        _ => {}
    }
    if let Some(token) = rest.strip_prefix("/invitations/") {
        let token = token.to_owned();
        return match (get, post) {
            (true, _) => invitations::form(parts, &token, None).await,
            (_, true) => invitations::accept(parts, request, &token, secure).await,
            _ => Err(PageError::MethodNotAllowed { allow: "GET, POST" }),
        };
    }
    // Everything else needs a session; without one, the browser goes to the sign-in page.
    let Some(visitor) =
        visitor::Visitor::of(parts, request.uri().query(), request.headers()).await?
    else {
        return if get {
            Ok(respond::redirect("/dashboard/sign-in"))
        } else {
            Err(PageError::Csrf)
        };
    };
    let query = request.uri().query().map(str::to_owned);
    match rest {
        "" | "/" if get => Ok(respond::redirect("/dashboard/keys")),
        "/keys" if get => keys::page(parts, &visitor).await,
        "/keys" if post => keys::create(parts, &visitor, request).await,
        "/credits" if get => credits::page(parts, &visitor, query.as_deref()).await,
        "/credits.csv" if get => credits::csv(parts, &visitor).await,
        "/usage" if get => usage::page(parts, &visitor).await,
        "/try" if get => try_it::page(parts, &visitor).await,
        "/try" if post => try_it::run(parts, &visitor, request).await,
        "/jobs" if get => jobs::page(parts, &visitor).await,
        "/jobs" if post => jobs::start(parts, &visitor, request).await,
        "/watches" if get => watches::page(parts, &visitor).await,
        "/watches" if post => watches::add(parts, &visitor, request).await,
        "/watches/secret" if post => watches::secret(parts, &visitor, request, false).await,
        "/watches/secret/rotate" if post => watches::secret(parts, &visitor, request, true).await,
        "/history" if get => watches::history(parts, &visitor, query.as_deref()).await,
        "/admin" if get => admin::page(parts, &visitor, None).await,
        "/admin/grant" if post => admin::grant(parts, &visitor, request).await,
        "/admin/invite" if post => admin::invite(parts, &visitor, request).await,
        "/sign-out" if post => sign_in::sign_out(parts, &visitor, request, secure).await,
        _ => {
            if let Some(job) = rest.strip_prefix("/jobs/") {
                return match (job.split_once('/'), get, post) {
                    (Some((id, "results.csv")), true, _) => {
                        jobs::download(parts, &visitor, id, true).await
                    }
                    (Some((id, "results.ndjson")), true, _) => {
                        jobs::download(parts, &visitor, id, false).await
                    }
                    (Some((id, "cancel")), _, true) => {
                        jobs::cancel(parts, &visitor, request, id).await
                    }
                    (Some((_, "cancel")), _, _) => {
                        Err(PageError::MethodNotAllowed { allow: "POST" })
                    }
                    (Some((_, "results.csv" | "results.ndjson")), _, _) => {
                        Err(PageError::MethodNotAllowed { allow: "GET" })
                    }
                    _ => Err(PageError::NotFound),
                };
            }
            if let Some(id) = rest
                .strip_prefix("/watches/")
                .and_then(|r| r.strip_suffix("/remove"))
            {
                return if post {
                    watches::remove(parts, &visitor, request, id).await
                } else {
                    Err(PageError::MethodNotAllowed { allow: "POST" })
                };
            }
            if let Some(id) = rest
                .strip_prefix("/keys/")
                .and_then(|r| r.strip_suffix("/revoke"))
            {
                let key = keys::revocable(parts, &visitor, id).await?;
                return match (get, post) {
                    (true, _) => Ok(keys::revoke_page(&visitor, &key)),
                    (_, true) => keys::revoke(parts, &visitor, request, key).await,
                    _ => Err(PageError::MethodNotAllowed { allow: "GET, POST" }),
                };
            }
            match rest {
                "" | "/" | "/credits" | "/credits.csv" | "/usage" | "/admin" | "/history" => {
                    Err(PageError::MethodNotAllowed { allow: "GET" })
                }
                "/keys" | "/try" | "/jobs" | "/watches" => {
                    Err(PageError::MethodNotAllowed { allow: "GET, POST" })
                }
                "/admin/grant"
                | "/admin/invite"
                | "/sign-out"
                | "/watches/secret"
                | "/watches/secret/rotate" => Err(PageError::MethodNotAllowed { allow: "POST" }),
                _ => Err(PageError::NotFound),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dashboard_owns_its_prefix_and_nothing_else() {
        for path in [
            "/dashboard",
            "/dashboard/",
            "/dashboard/keys",
            "/dashboard/assets/app.js",
        ] {
            assert!(Dashboard::owns(path), "{path}");
        }
        for path in ["/dashboardx", "/", "/v1/network/company-data", "/dash"] {
            assert!(!Dashboard::owns(path), "{path}");
        }
    }
}
