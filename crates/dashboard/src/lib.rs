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

// Modules, each importing only those above it: `respond` and `error` nothing of the crate, `dispatch` every page.
mod chart;
mod dispatch;
mod error;
mod forms;
mod layout;
mod respond;
mod routes;
mod table;
mod visitor;

use std::sync::Arc;
use std::time::Duration;

use accounts::Accounts;
use bulk_jobs::BulkJobs;
use company_lookup::LookupService;
use http::Request;
use http_serve::Response;
use page_url::NetworkDomain;

/// The path every dashboard page lives under.
pub const PATH_PREFIX: &str = "/dashboard";

/// Paths whose rest is a secret (an invitation link's token): a server logs them without it
/// (`http_serve::ConnectionLimits::secret_path_prefixes`).
pub const SECRET_PATH_PREFIXES: &[&str] = &["/dashboard/invitations/"];

/// The most searches one CSV download of the Search page runs, each for a page of the API's largest
/// (`api_contract::MAX_SEARCH_ROWS` rows): at most 10,000 rows a download.
pub const CSV_SEARCHES: usize = 100;

/// What the dashboard needs to know besides its parts.
#[derive(Clone, Debug)]
pub struct DashboardSettings {
    /// Mark cookies `Secure` on every response (set it when a TLS proxy is in front; cookies are marked
    /// `Secure` anyway on any request whose `X-Forwarded-Proto` is `https`).
    pub secure_cookies: bool,
    /// Time for a form's body to arrive.
    pub body_timeout: Duration,
    /// The header a trusted reverse proxy puts the client's address in, as the API's
    /// (`http_api::ApiSettings::client_address_header`, the same rule: [`http_serve::client_address`]);
    /// `None`: the connection's peer. Password forms are limited per this address.
    pub client_address_header: Option<http::HeaderName>,
}

impl Default for DashboardSettings {
    fn default() -> Self {
        Self {
            secure_cookies: false,
            body_timeout: Duration::from_secs(30),
            client_address_header: None,
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
    /// The accounts' webhooks for the Webhooks page and the webhook secret; without them those are 404.
    pub(crate) webhooks: Option<Arc<account_webhooks::Webhooks>>,
    /// The resolver Try it sends domains and names to; without it Try it takes page URLs only.
    pub(crate) resolver: Option<Arc<company_resolve::Resolver>>,
    /// The accounts whose search CSV is being written (one at a time each).
    pub(crate) downloads: Arc<routes::search::Downloads>,
}

impl Parts {
    /// The client's address, by http-serve's one rule with the configured trusted proxy header.
    pub(crate) fn client_address<B>(&self, request: &Request<B>) -> Option<std::net::IpAddr> {
        http_serve::client_address(
            request.headers(),
            request.extensions(),
            self.settings.client_address_header.as_ref(),
        )
    }
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
            webhooks: None,
            resolver: None,
            downloads: Arc::default(),
        }))
    }

    /// Lets Try it resolve website domains and company names with `resolver`.
    #[must_use]
    pub fn with_resolver(self, resolver: Arc<company_resolve::Resolver>) -> Self {
        let mut parts = Arc::unwrap_or_clone(self.0);
        parts.resolver = Some(resolver);
        Self(Arc::new(parts))
    }

    /// Shows the Jobs page over `jobs` (start, follow, cancel and download bulk jobs).
    #[must_use]
    pub fn with_jobs(self, jobs: Arc<BulkJobs>) -> Self {
        let mut parts = Arc::unwrap_or_clone(self.0);
        parts.jobs = Some(jobs);
        Self(Arc::new(parts))
    }

    /// Shows the Watches page over `watches` (add, remove, follow watches; its webhook secret needs
    /// [`Dashboard::with_webhooks`]).
    #[must_use]
    pub fn with_watches(self, watches: Arc<company_watch::Watches>) -> Self {
        let mut parts = Arc::unwrap_or_clone(self.0);
        parts.watches = Some(watches);
        Self(Arc::new(parts))
    }

    /// Shows the Webhooks page over `webhooks` (the account's endpoints, pings, deliveries) and the webhook
    /// secret on the Watches page.
    #[must_use]
    pub fn with_webhooks(self, webhooks: Arc<account_webhooks::Webhooks>) -> Self {
        let mut parts = Arc::unwrap_or_clone(self.0);
        parts.webhooks = Some(webhooks);
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
        dispatch::dispatch(&self.0, request, secure)
            .await
            .unwrap_or_else(|error| layout::error_response(error, in_dashboard))
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
